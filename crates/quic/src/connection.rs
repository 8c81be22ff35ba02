//! One QUIC connection endpoint, sans-IO (RFC 9000, RFC 9001 handshake timing, RFC 9002
//! recovery): it turns received datagrams and timer expiries into frames processed, and
//! assembles outgoing datagrams under the congestion window, pacing, flow control and the
//! anti-amplification limit (RFC 9000 §8.1).
//!
//! Sending (one datagram per `poll_transmit`): Initial, Handshake and 1-RTT (or 0-RTT)
//! packets are coalesced in that order (§12.2); ACK frames go in every packet of a space with
//! something new to acknowledge and alone only when due; ACK-only packets are neither paced nor
//! congestion controlled (RFC 9002 §7); PTO probes ignore the window and pacing (§6.2.4);
//! datagrams with ack-eliciting Initial packets are padded to 1200 bytes (§14.1). DATAGRAM
//! frames (RFC 9221) are the [`crate::datagram`] module's: queued by the application, put in
//! 0-RTT and 1-RTT packets like stream data, settled when their packets are acknowledged or
//! lost, never queued again.
//!
//! Paths: every path, path 0 included, is a [`PathState`] in one table, with its own 1-RTT
//! packet numbers, recovery, pacer, ACK state and PTO probes; a single-path connection has a
//! table of one. The handshake runs on path 0, whose recovery also holds the Initial and
//! Handshake spaces; the connection keeps only what belongs to those two spaces (their ACK
//! state and PTO probes). With several paths (draft-ietf-quic-multipath-21), once this end has
//! confirmed the handshake, 1-RTT packets go through the `multipath` submodule: ACKs per path
//! (PATH_ACK) and a scheduler choosing the path of each packet.
//!
//! Child modules, each an `impl Connection` of its own:
//! * `receive`: datagrams, packets and frames in (RFC 9000, RFC 9001 key discarding);
//! * `packet_builder`: datagrams out, coalesced and padded, under the window, pacing, flow
//!   control and the anti-amplification limit (RFC 9000 §8.1, §12.2, §13; RFC 9002 §6.2.4, §7);
//! * `multipath`: paths beyond the first (draft-ietf-quic-multipath-21).

use std::collections::VecDeque;

use multiconn_app::workload::{Application, Response, Streams as AppStreams};
use multiconn_cc::{Controller, PacerConfig, PathController};
use multiconn_core::{Dur, FlowId, Packet, Payload, Time, TransportSample};
use multiconn_transport::{AppError, AppEvent, ConnectionParams, DatagramEvent, DatagramOptions, EcnStats, Endpoint, Observation, Observations, PathAction, ProfileError, Role, StreamOptions, StreamProgress};

use crate::ack_state::{AckPolicy, AckState};
use crate::datagram::{DatagramStats, Datagrams};
use crate::flow_control::{FlowControlRule, RecvWindow, SendCredit};
use crate::frame::Frame;
use crate::handshake::{Handshake, HandshakeEvent, HandshakeSizes};
use crate::packet::{header_size, Datagram, PacketType, QuicPacket, Space, AEAD_TAG, IP_UDP_OVERHEAD};
use crate::path::{Multipath, PathPhase, PathState, PathTemplate};
use crate::qlog::QlogSink;
use crate::recovery::{Outcome, PacketOutcome, Recovery, RecoveryConfig, SentContent, TimeoutAction};
use crate::streams::{self, SendBuffer, Streams};

mod multipath;
mod packet_builder;
mod receive;

/// Flow-control and connection-ID defaults for profiles without a `[quic]` table.
const DEFAULT_WINDOW: u64 = 16 << 20;
const DEFAULT_DCID_LEN: usize = 8;
/// Smallest room worth starting a STREAM or CRYPTO frame in.
const MIN_FRAME_ROOM: usize = 8;
/// The path the handshake runs on (with multipath: the initial path, path ID 0 at the start,
/// draft-ietf-quic-multipath-21 §2). Its recovery also holds the Initial and Handshake spaces.
const HANDSHAKE_PATH: usize = 0;

/// Cumulative counters of one endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// UDP datagrams sent.
    pub datagrams_sent: u64,
    /// UDP datagrams received and accepted (on a known path and path ID).
    pub datagrams_received: u64,
    /// QUIC packets sent (coalesced ones counted one by one).
    pub packets_sent: u64,
    /// QUIC packets received and processed (not duplicates, keys available).
    pub packets_received: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// UDP payload bytes received.
    pub bytes_received: u64,
    /// Packets carrying retransmitted STREAM or CRYPTO data.
    pub retransmissions: u64,
    /// Packets sent that were not ack-eliciting (ACK-only).
    pub ack_only_packets: u64,
    /// Datagrams sent carrying a PTO probe or an anti-deadlock packet (RFC 9002 §6.2.4).
    pub probes_sent: u64,
    /// Received packets dropped as duplicates.
    pub duplicates: u64,
    /// Received datagrams or packets dropped as undecryptable: no QUIC payload, an unknown path or
    /// retired path ID, or no keys for their packet type.
    pub undecryptable: u64,
    /// Frames ignored as invalid (bad ACK ranges, flow-control violations, unknown streams).
    pub invalid_frames: u64,
    /// Stream bytes delivered to the application.
    pub delivered: u64,
    /// Paths whose validation was given up (no PATH_RESPONSE in time; multipath client).
    pub path_validation_failures: u64,
    /// Datagrams sent ECT(0) (ECN, RFC 9000 §13.4).
    pub ect_datagrams_sent: u64,
    /// Datagrams that arrived CE-marked.
    pub ce_datagrams_received: u64,
    /// ACK and PATH_ACK frames sent with ECN counts.
    pub ack_ecn_frames_sent: u64,
    /// Streams this end reset (RESET_STREAM sent, RFC 9000 §19.4).
    pub streams_reset: u64,
    /// Streams the peer reset before their data was all delivered here.
    pub resets_received: u64,
}

/// The workload's view of the connection's streams while one call of its [`Application`]
/// runs: request `k` goes on the client's bidirectional stream `4k` (RFC 9000 §2.1), ended by
/// a FIN, and its response comes back on the same stream, also ended by a FIN; an unanswered
/// request (an upload) gets an empty one.
struct RequestStreams<'a> {
    streams: &'a mut Streams,
    events: &'a mut VecDeque<AppEvent>,
}

impl AppStreams for RequestStreams<'_> {
    fn send_request(&mut self, index: u32, bytes: Option<u64>) {
        let id = 4 * index as u64;
        if let Some(s) = self.streams.get_or_open(id) {
            s.send = SendBuffer::new(bytes, true);
        }
        self.streams.schedule(id);
    }
    fn send_response(&mut self, index: u32, response: Response) {
        let id = 4 * index as u64;
        let size = match response {
            Response::Bytes(size) => size,
            Response::Nothing => Some(0),
        };
        if let Some(s) = self.streams.get_mut(id) {
            s.send = SendBuffer::new(size, true);
        }
        self.streams.schedule(id);
    }
    fn emit(&mut self, event: AppEvent) {
        self.events.push_back(event);
    }
}

/// A QUIC endpoint (client or server) implementing [`Endpoint`].
#[derive(Debug)]
pub struct Connection {
    role: Role,
    flow: FlowId,
    start: Time,
    started: bool,
    /// Largest UDP payload.
    mds: usize,
    dcid_len: usize,
    hs: Handshake,
    /// Every path, the handshake's first; never empty.
    paths: Vec<PathState>,
    /// ACK state of the Initial and Handshake spaces (indexed by [`Space::index`]); the 1-RTT
    /// ACK state is each path's.
    handshake_rx: [AckState; 2],
    streams: Streams,
    conn_send: SendCredit,
    conn_recv: RecvWindow,
    max_data_pending: bool,
    msd_pending: Vec<u64>,
    /// Streams whose RESET_STREAM is to be sent (again).
    resets_pending: Vec<u64>,
    handshake_done_pending: bool,
    /// PTO probes to send in the Initial and Handshake spaces (indexed by [`Space::index`]).
    handshake_probes: [u8; 2],
    anti_deadlock: Option<Space>,
    app_limited: bool,
    address_validated: bool,
    app: Application,
    events: VecDeque<AppEvent>,
    qlog: Option<QlogSink>,
    seq: u64,
    stats: ConnectionStats,
    // Scratch buffers reused across calls.
    outcome: Outcome,
    hs_events: Vec<HandshakeEvent>,
    probe_contents: Vec<SentContent>,
    /// The scheduler, the paths' health and coupling; `None` for a single-path connection.
    mp: Option<Box<Multipath>>,
    /// While a packet is filled under a decision with `hold_new` (sequential redundancy checks):
    /// the streams within this scope give only their retransmitted data.
    hold_new: Option<multiconn_multipath::CopyScope>,
    /// Server-initiated unidirectional streams opened so far (the messages workload).
    uni_opened: u64,
    /// In-order progress of the peer's unidirectional streams, not yet drained.
    progress: Vec<StreamProgress>,
    /// What an invariant checker watching this end sees (deliveries, path IDs opened).
    observations: Observations,
    /// DATAGRAM frames (RFC 9221): the transport parameters, queue, in flight and received.
    dgram: Datagrams,
}

fn mds_for(params: &ConnectionParams) -> usize {
    let path = params.max_packet_size.saturating_sub(IP_UDP_OVERHEAD);
    let cap = params.profile.packet.max_payload.unwrap_or(u32::MAX);
    path.min(cap).max(64) as usize
}

/// The largest datagram `role`'s end of a connection built from `params` sends (what
/// [`Connection::max_datagram_payload`] will say once the handshake is done); `None` when the
/// peer takes no datagrams.
pub fn max_datagram_payload_for(params: &ConnectionParams, role: Role) -> Option<u64> {
    let d = Datagrams::new(params.datagrams.as_ref(), role);
    if !d.enabled() {
        return None;
    }
    let dcid_len = params.profile.quic.as_ref().map_or(DEFAULT_DCID_LEN, |q| q.dcid_len as usize).min(20);
    let room = mds_for(params).saturating_sub(header_size(PacketType::OneRtt, dcid_len, dcid_len, 4, 0) + AEAD_TAG);
    Some(d.max_size(room))
}

impl Connection {
    /// The endpoint of `role` for `params`, with default handshake message sizes; refused
    /// when the profile does not offer the controller.
    pub fn new(params: &ConnectionParams, role: Role) -> Result<Connection, ProfileError> {
        Connection::with_handshake(params, role, HandshakeSizes::default())
    }

    /// The endpoint of `role` with the given handshake message sizes; refused when the
    /// profile does not offer the controller (nothing is substituted for it).
    pub fn with_handshake(params: &ConnectionParams, role: Role, sizes: HandshakeSizes) -> Result<Connection, ProfileError> {
        let profile = &params.profile;
        let mds = mds_for(params);
        let cc_cfg = params.cc_config(mds as u64)?;
        // Coupled congestion control: one shared controller, a view of it per path.
        let coupling = params.multipath.as_ref().and_then(|m| m.coupled.map(|kind| (kind, m.paths.max(1)))).map(|(kind, n)| {
            let shared = multiconn_cc::share(multiconn_cc::build_multipath(Some(kind)));
            for _ in 0..n {
                multiconn_cc::coupled::lock(&shared).add_path(&cc_cfg);
            }
            shared
        });
        let controller_of = |p: usize| -> Box<dyn Controller> {
            match &coupling {
                Some(shared) => Box::new(PathController::new(shared.clone(), p)),
                None => multiconn_cc::build(&cc_cfg),
            }
        };
        let max_ack_delay = profile.ack.max_ack_delay;
        let (max_data, max_stream_data, fraction, dcid_len) = match &profile.quic {
            Some(q) => (q.initial_max_data, q.initial_max_stream_data, q.flow_control_update_fraction, q.dcid_len as usize),
            None => (DEFAULT_WINDOW, DEFAULT_WINDOW, 0.5, DEFAULT_DCID_LEN),
        };
        let flow_rule = profile.quic.as_ref().map_or(FlowControlRule::Sliding, |q| q.flow_control_rule);
        // A scalable (L4S) controller needs ECN whatever the profile says (RFC 9331 §4: it
        // sends ECT(1) and reads the CE counts); both endpoints of the flow run it.
        let ecn = profile.ecn || multiconn_cc::build(&cc_cfg).scalable_ecn();
        let recovery_cfg = RecoveryConfig { ecn, ..RecoveryConfig::from_knobs(&profile.recovery, max_ack_delay) };
        let immediate = AckPolicy { delay_acks: false, threshold: 1, max_ack_delay: Dur::ZERO, immediate_on_reorder: true, ecn };
        let data_policy = AckPolicy {
            delay_acks: true,
            // 0: no count, the timer alone.
            threshold: match profile.ack.ack_eliciting_threshold {
                0 => u32::MAX,
                n => n,
            },
            max_ack_delay: profile.ack.ack_delay.unwrap_or(max_ack_delay),
            immediate_on_reorder: profile.ack.immediate_ack_on_reorder,
            ecn,
        };
        let pacer_cfg = PacerConfig {
            enabled: profile.pacing.enabled,
            factor: profile.pacing.factor,
            burst: profile.pacing.burst,
            max_datagram_size: mds as u64,
            initial_window: cc_cfg.initial_window,
        };
        let template = PathTemplate {
            recovery: recovery_cfg,
            initial_rtt: profile.recovery.initial_rtt,
            rttvar_rule: profile.recovery.rttvar_rule,
            cc: cc_cfg.clone(),
            pacer: pacer_cfg,
            ack_policy: data_policy,
            is_server: role == Role::Server,
        };
        let mut paths = vec![template.handshake_path(controller_of(0))];
        let mp = params.multipath.as_ref().map(|m| {
            paths.extend((1..m.paths.max(1) as usize).map(|p| template.new_path(controller_of(p))));
            let mut health = multiconn_multipath::PathHealthSet::new(multiconn_multipath::HealthConfig::new(m.failover));
            let mut next_path_id = 0;
            for (p, path) in paths.iter_mut().enumerate() {
                path.cc_slot = p;
                // Path 0 carries the handshake: it is always open from the start.
                if p != HANDSHAKE_PATH && m.opened_later.contains(&(p as u8)) {
                    path.phase = PathPhase::Closed;
                } else {
                    health.add_path(p, Time::ZERO);
                    path.path_id = Some(next_path_id);
                    path.path_ids_opened = 1;
                    next_path_id += 1;
                }
            }
            let mp = Box::new(Multipath {
                params: m.clone(),
                scheduler: multiconn_multipath::new_scheduler(m.scheduler, m.options),
                health,
                pending: VecDeque::new(),
                ready: false,
                coupling: coupling.clone(),
                template,
                next_path_id,
                abandon: profile.multipath.as_ref().map_or_else(Default::default, |k| k.abandon),
                link_events: profile.multipath.as_ref().map_or_else(Default::default, |k| k.link_events),
            });
            for (p, path) in paths.iter().enumerate() {
                mp.sync_coupling(p, path);
            }
            mp
        });
        Ok(Connection {
            role,
            flow: params.flow,
            start: params.start,
            started: false,
            mds,
            dcid_len: dcid_len.min(20),
            hs: Handshake::new(role, params.resume, sizes),
            paths,
            handshake_rx: [AckState::new(immediate), AckState::new(immediate)],
            streams: Streams::new(max_stream_data, max_stream_data, fraction).with_flow_rule(flow_rule),
            conn_send: SendCredit::new(max_data),
            conn_recv: RecvWindow::with_rule(max_data, fraction, flow_rule),
            max_data_pending: false,
            msd_pending: Vec::new(),
            resets_pending: Vec::new(),
            handshake_done_pending: false,
            handshake_probes: [0; 2],
            anti_deadlock: None,
            app_limited: false,
            // A server validates a client that presents a token on its first Initial (RFC 9000
            // §8.1.3); the server sends nothing before that Initial, so it is valid from here.
            address_validated: role == Role::Client || params.address_token,
            app: match role {
                Role::Client => Application::client(params.exchanges()),
                Role::Server => Application::server(params.exchanges()),
            },
            events: VecDeque::new(),
            qlog: params.qlog.then(|| QlogSink::new(params.start)),
            seq: 0,
            stats: ConnectionStats::default(),
            outcome: Outcome::default(),
            hs_events: Vec::new(),
            probe_contents: Vec::new(),
            mp,
            hold_new: None,
            uni_opened: 0,
            progress: Vec::new(),
            observations: Observations::default(),
            dgram: Datagrams::new(params.datagrams.as_ref(), role),
        })
    }

    /// Client or server.
    pub fn role(&self) -> Role {
        self.role
    }
    /// Cumulative counters so far.
    pub fn stats(&self) -> ConnectionStats {
        self.stats
    }
    /// Loss recovery of path 0, the handshake's (and the only one without multipath).
    pub fn recovery(&self) -> &Recovery {
        &self.handshake_path().recovery
    }
    /// Paths of this connection (1 without multipath).
    pub fn path_count(&self) -> usize {
        self.paths.len()
    }
    /// Loss recovery of path `p`.
    pub fn path_recovery(&self, p: usize) -> &Recovery {
        &self.paths[p].recovery
    }
    /// The TLS handshake's progress: CRYPTO data, keys, completion and confirmation.
    pub fn handshake(&self) -> &Handshake {
        &self.hs
    }
    /// Largest UDP payload this endpoint sends.
    pub fn max_datagram_size(&self) -> usize {
        self.mds
    }
    /// The connection's streams.
    pub fn streams(&self) -> &Streams {
        &self.streams
    }
    /// Sets a stream's scheduling priority (lower numbers are served first).
    pub fn set_stream_priority(&mut self, stream_id: u64, priority: u8) {
        self.streams.set_priority(stream_id, priority);
    }
    /// The DATAGRAM counters of this end (RFC 9221).
    pub fn datagram_stats(&self) -> DatagramStats {
        self.dgram.stats()
    }
    /// The largest datagram the application may send now: a DATAGRAM frame alone in a 1-RTT
    /// packet with the longest packet number (4 bytes), within the peer's limit.
    pub fn max_datagram_payload(&self) -> u64 {
        self.dgram.max_size(self.datagram_room())
    }
    /// Bytes for frames in a 1-RTT packet of the largest size with a 4-byte packet number.
    fn datagram_room(&self) -> usize {
        self.mds.saturating_sub(header_size(PacketType::OneRtt, self.dcid_len, self.dcid_len, 4, 0) + AEAD_TAG)
    }
    /// The server's address is validated (always true at the client).
    pub fn address_validated(&self) -> bool {
        self.address_validated
    }

    fn handshake_path(&self) -> &PathState {
        &self.paths[HANDSHAKE_PATH]
    }

    fn handshake_path_mut(&mut self) -> &mut PathState {
        &mut self.paths[HANDSHAKE_PATH]
    }

    /// ACK state of the packets of `space` received on `path` (Initial and Handshake packets
    /// arrive on the handshake path only).
    fn ack_state(&self, space: Space, path: usize) -> &AckState {
        match space {
            Space::Initial | Space::Handshake => &self.handshake_rx[space.index()],
            Space::Data => &self.paths[path].rx,
        }
    }

    fn ack_state_mut(&mut self, space: Space, path: usize) -> &mut AckState {
        match space {
            Space::Initial | Space::Handshake => &mut self.handshake_rx[space.index()],
            Space::Data => &mut self.paths[path].rx,
        }
    }

    /// PTO probes to send in `space` on the handshake path.
    fn probes_in(&self, space: Space) -> u8 {
        match space {
            Space::Initial | Space::Handshake => self.handshake_probes[space.index()],
            Space::Data => self.handshake_path().probes,
        }
    }

    fn set_probes_in(&mut self, space: Space, n: u8) {
        match space {
            Space::Initial | Space::Handshake => self.handshake_probes[space.index()] = n,
            Space::Data => self.handshake_path_mut().probes = n,
        }
    }

    // ---------------------------------------------------------------- start and application

    /// A unidirectional stream this endpoint opened and may write on.
    fn local_uni_stream(&mut self, id: u64) -> Result<&mut streams::Stream, AppError> {
        let opened_here = streams::is_server_initiated(id) == (self.role == Role::Server);
        if !(streams::is_unidirectional(id) && opened_here) || id >= 4 * self.uni_opened {
            return Err(AppError::UnknownStream(id));
        }
        // A finished stream whose data was all acknowledged is closed and forgotten.
        if self.streams.is_closed(id) {
            return Err(AppError::Finished(id));
        }
        self.streams.get_mut(id).ok_or(AppError::UnknownStream(id))
    }

    fn maybe_start(&mut self, now: Time) {
        if self.started || self.role != Role::Client || now < self.start {
            return;
        }
        self.started = true;
        self.hs.start();
        if self.hs.has_zero_rtt_keys() {
            // RFC 9221 §3: with 0-RTT the client uses the server's remembered parameters.
            self.dgram.on_peer_parameters();
            self.app_can_send();
        }
    }

    fn app_can_send(&mut self) {
        self.app.on_can_send(&mut RequestStreams { streams: &mut self.streams, events: &mut self.events });
    }

    /// All incoming data of stream `id` was delivered.
    fn on_stream_received(&mut self, id: u64) {
        if streams::is_unidirectional(id) {
            // A message stream: nothing to answer.
            self.maybe_close(id);
            return;
        }
        let index = (id / 4) as u32;
        let bytes = self.streams.get(id).and_then(|s| s.recv.final_size()).unwrap_or(0);
        let mut io = RequestStreams { streams: &mut self.streams, events: &mut self.events };
        match self.role {
            Role::Server => self.app.on_request(index, &mut io),
            Role::Client => self.app.on_response(index, bytes, &mut io),
        }
        self.maybe_close(id);
    }

    fn maybe_close(&mut self, id: u64) {
        if let Some(s) = self.streams.get(id) {
            let done = if streams::is_unidirectional(id) {
                // One half only: the sender's or the receiver's.
                if streams::is_server_initiated(id) == (self.role == Role::Server) {
                    // The application may write more until it finishes the stream.
                    s.send.is_finished() && s.send.is_done()
                } else {
                    s.recv.is_complete() && s.recv_reported
                }
            } else {
                let sent_all = self.role == Role::Client || s.send.end().is_some();
                s.recv.is_complete() && s.recv_reported && sent_all && s.send.is_done()
            };
            if done {
                self.streams.close(id);
            }
        }
    }

    // ---------------------------------------------------------------- acknowledgements and losses

    fn discard(&mut self, now: Time, space: Space) {
        if space == Space::Data || self.handshake_path().recovery.is_discarded(space) {
            return;
        }
        self.handshake_path_mut().recovery.discard_space(now, space);
        self.handshake_probes[space.index()] = 0;
        if self.anti_deadlock == Some(space) {
            self.anti_deadlock = None;
        }
    }

    /// Acts on the frames of acknowledged, lost and spuriously lost packets.
    fn apply_outcome(&mut self, now: Time, out: &Outcome) {
        for p in &out.acked {
            self.on_packet_acked(p);
        }
        for p in &out.spurious {
            self.on_packet_acked(p);
        }
        for p in &out.lost {
            self.on_packet_lost(now, p);
        }
    }

    fn on_packet_acked(&mut self, p: &PacketOutcome) {
        let Some(c) = &p.content else { return };
        let Some(dg) = c.payload.get::<Datagram>() else { return };
        let Some(pkt) = dg.get(c.index as usize) else { return };
        let space = pkt.ptype.space();
        for f in &pkt.frames {
            match f {
                Frame::Crypto { offset, len } => {
                    if let Some(b) = self.hs.send_buffer(space) {
                        b.on_acked(*offset, *len as u64, false);
                    }
                }
                Frame::Stream { id, offset, len, fin } => {
                    if let Some(s) = self.streams.get_mut(*id) {
                        s.send.on_acked(*offset, *len as u64, *fin);
                        self.maybe_close(*id);
                    }
                }
                Frame::ResetStream { id, .. } => {
                    if let Some(s) = self.streams.get_mut(*id) {
                        s.send.on_reset_acked();
                        self.maybe_close(*id);
                    }
                }
                Frame::Ack(a) => self.ack_state_mut(space, HANDSHAKE_PATH).on_ack_acked(a.largest),
                Frame::PathAck { path, ack } => {
                    if let Some(q) = self.route_of(*path) {
                        self.paths[q].rx.on_ack_acked(ack.largest);
                    }
                }
                Frame::Datagram { tag, .. } => {
                    let settled = self.dgram.on_acked(*tag);
                    if settled {
                        self.observations.note(Observation::DatagramSettled { tag: *tag });
                    }
                }
                _ => {}
            }
        }
    }

    fn on_packet_lost(&mut self, now: Time, p: &PacketOutcome) {
        let Some(c) = &p.content else { return };
        let Some(dg) = c.payload.get::<Datagram>() else { return };
        let Some(pkt) = dg.get(c.index as usize) else { return };
        if let Some(q) = &mut self.qlog {
            q.packet_lost(now, pkt.ptype, pkt.pn);
        }
        for f in &pkt.frames {
            if let Frame::Datagram { tag, .. } = f {
                if self.dgram.on_lost(*tag) {
                    self.observations.note(Observation::DatagramSettled { tag: *tag });
                }
            }
        }
        self.requeue(pkt);
    }

    /// Queues a packet's retransmittable frames to be sent again.
    fn requeue(&mut self, pkt: &QuicPacket) {
        let space = pkt.ptype.space();
        for f in &pkt.frames {
            match f {
                Frame::Crypto { offset, len } => {
                    if !self.handshake_path().recovery.is_discarded(space) {
                        if let Some(b) = self.hs.send_buffer(space) {
                            b.on_lost(*offset, *len as u64, false);
                        }
                    }
                }
                Frame::Stream { id, offset, len, fin } => {
                    if let Some(s) = self.streams.get_mut(*id) {
                        s.send.on_lost(*offset, *len as u64, *fin);
                        self.streams.schedule(*id);
                    }
                }
                Frame::ResetStream { id, .. } => {
                    if self.streams.get(*id).is_some_and(|s| !s.send.is_done()) && !self.resets_pending.contains(id) {
                        self.resets_pending.push(*id);
                    }
                }
                Frame::MaxData(v) => {
                    if *v == self.conn_recv.max {
                        self.max_data_pending = true;
                    }
                }
                Frame::MaxStreamData { id, max } => {
                    if let Some(s) = self.streams.get_mut(*id) {
                        if *max == s.recv_window.max && s.recv.final_size().is_none() && !s.max_stream_data_pending {
                            s.max_stream_data_pending = true;
                            self.msd_pending.push(*id);
                        }
                    }
                }
                Frame::HandshakeDone => self.handshake_done_pending = true,
                // Repeated on another path while the ID is still the route's (draft §3.4).
                Frame::PathAbandon { path } => {
                    if let Some(q) = self.route_of(*path) {
                        self.paths[q].on_abandon_lost();
                    }
                }
                // Repeated only while it is the path's latest status (draft §3.3).
                Frame::PathStatus { path, seq, .. } => {
                    if let Some(q) = self.route_of(*path) {
                        let state = &mut self.paths[q];
                        if state.status_seq == *seq && !state.is_abandoned() {
                            state.status_pending = true;
                        }
                    }
                }
                // Not repeated as such: the client's validation timer sends a new challenge
                // when no response came, whether the challenge or the response was lost
                // (RFC 9000 §8.2.2: one response per challenge).
                Frame::PathChallenge | Frame::PathResponse => {}
                // Never sent again (RFC 9221 §5): a loss is reported to the application.
                Frame::Datagram { .. } => {}
                Frame::Padding(_) | Frame::Ping | Frame::Ack(_) | Frame::PathAck { .. } => {}
            }
        }
    }

    fn after_event(&mut self, now: Time) {
        if let Some(q) = &mut self.qlog {
            let rec = &self.paths[HANDSHAKE_PATH].recovery;
            q.metrics(now, rec.rtt(), rec.cwnd(), rec.bytes_in_flight());
            q.congestion_state(now, rec.controller().state().name());
        }
    }
}

/// The timers of a connection, by name (quinn's `Timer`). They are read from the state they
/// belong to ([`Connection::timers`]) rather than kept in a table of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// The client starts the handshake.
    Start,
    /// Loss detection of a path: time-threshold loss or PTO (RFC 9002 §6).
    LossDetection(usize),
    /// The delayed-ACK deadline of a path's 1-RTT packets (RFC 9000 §13.2.1; Initial and
    /// Handshake packets are acknowledged at once).
    AckDelay(usize),
    /// The pacer lets a path send again.
    Pacing(usize),
    /// The client sends a path's PATH_CHALLENGE again or gives its validation up (RFC 9000
    /// §8.2).
    PathValidation(usize),
    /// The failover rules look at the paths' health again.
    PathHealth,
    /// An abandoned path's state is deleted (`abandon = "drain"`).
    PathDelete(usize),
}

impl Connection {
    /// Every armed timer and when it expires; [`Endpoint::poll_timeout`] is the earliest.
    pub fn timers(&self) -> impl Iterator<Item = (Timer, Time)> + '_ {
        let start = (self.role == Role::Client && !self.started).then_some((Timer::Start, self.start));
        let paths = self.paths.iter().enumerate().flat_map(|(p, path)| {
            let validation = match &path.phase {
                PathPhase::Validating(v) => v.retry_at,
                _ => None,
            };
            [
                path.recovery.loss_detection_timer().map(|t| (Timer::LossDetection(p), t)),
                path.rx.deadline().map(|t| (Timer::AckDelay(p), t)),
                path.pacing_release.map(|t| (Timer::Pacing(p), t)),
                validation.map(|t| (Timer::PathValidation(p), t)),
                path.delete_at.map(|t| (Timer::PathDelete(p), t)),
            ]
            .into_iter()
            .flatten()
        });
        let health = self.mp.as_ref().and_then(|mp| mp.health.poll_timeout()).map(|t| (Timer::PathHealth, t));
        start.into_iter().chain(paths).chain(health)
    }

    /// The earliest of [`Connection::timers`] (tests/it/timers.rs checks that they agree),
    /// read without building the named list: it is asked after every input.
    fn earliest_timer(&self) -> Option<Time> {
        let earlier = Time::earliest;
        let mut t = (self.role == Role::Client && !self.started).then_some(self.start);
        for path in &self.paths {
            let validation = match &path.phase {
                PathPhase::Validating(v) => v.retry_at,
                _ => None,
            };
            t = earlier(t, path.recovery.loss_detection_timer());
            t = earlier(t, path.rx.deadline());
            t = earlier(t, path.pacing_release);
            t = earlier(t, validation);
            t = earlier(t, path.delete_at);
        }
        earlier(t, self.mp.as_ref().and_then(|mp| mp.health.poll_timeout()))
    }
}

impl Endpoint for Connection {
    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        self.maybe_start(now);
        if self.role == Role::Server {
            self.started = true;
        }
        self.on_datagram(now, &pkt);
        self.after_event(now);
    }

    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        let p = self.transmit(now, next_id);
        if p.is_some() {
            self.after_event(now);
        }
        p
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.earliest_timer()
    }

    fn handle_timeout(&mut self, now: Time) {
        self.maybe_start(now);
        for rx in &mut self.handshake_rx {
            rx.on_timeout(now);
        }
        for p in 0..self.paths.len() {
            let path = &mut self.paths[p];
            path.on_pacing_timeout(now);
            path.rx.on_timeout(now);
            let mut out = std::mem::take(&mut self.outcome);
            out.clear();
            match self.paths[p].recovery.on_timeout(now, &mut out) {
                TimeoutAction::Probe { space: Space::Data, count } => {
                    self.paths[p].probes = count;
                    self.on_path_pto(now, p);
                }
                // mp-quic's tail-loss probe sends the newest packet's frames again at once,
                // window ignored; the failover rules hear only of retransmission timeouts.
                TimeoutAction::TailLossProbe => self.paths[p].probes = 1,
                // mp-quic's retransmission timeout: the two oldest packets go out again at once,
                // window ignored, unless the failover rules find the path potentially failed
                // (then every packet in flight was declared lost and the path gets a PING).
                TimeoutAction::Rto => {
                    if self.on_path_rto(now, p, &mut out) {
                        self.paths[p].probes = 2;
                    }
                }
                // A timer-based loss episode counts as the path's PTO for the failover rules;
                // the lost packets' frames are queued again below.
                TimeoutAction::TimerLoss { episode, ack_lost } => {
                    self.paths[p].ping_on_ack |= ack_lost;
                    if episode {
                        self.on_path_pto(now, p);
                    }
                }
                // Handshake-space timeouts count on the handshake path only: the others never
                // send in those spaces (before confirmation their recovery may still run an
                // anti-deadlock timer, to no effect).
                TimeoutAction::Probe { space, count } if p == HANDSHAKE_PATH => self.handshake_probes[space.index()] = count,
                TimeoutAction::AntiDeadlock { space } if p == HANDSHAKE_PATH => self.anti_deadlock = Some(space),
                TimeoutAction::None | TimeoutAction::LossDetected | TimeoutAction::Probe { .. } | TimeoutAction::AntiDeadlock { .. } => {}
            }
            self.apply_outcome(now, &out);
            self.outcome = out;
        }
        self.multipath_timers(now);
        self.after_event(now);
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    /// With several paths: windows and bytes in flight summed over the paths, losses counted
    /// on all of them, the RTT of path 0.
    fn sample(&self) -> TransportSample {
        let rtt = self.handshake_path().recovery.rtt();
        let (mut cwnd, mut in_flight, mut spurious, mut lost) = (0, 0, 0, 0);
        for path in &self.paths {
            let r = &path.recovery;
            cwnd += r.cwnd();
            in_flight += r.bytes_in_flight();
            spurious += r.stats().spurious_losses;
            lost += r.stats().lost_packets;
        }
        TransportSample {
            cwnd,
            bytes_in_flight: in_flight,
            srtt: if rtt.has_sample() { rtt.smoothed() } else { Dur::ZERO },
            retransmissions: self.stats.retransmissions,
            spurious_retransmissions: spurious,
            lost,
        }
    }

    fn on_path_status(&mut self, now: Time, path: u8, up: bool) {
        self.on_interface_change(now, usize::from(path), up);
    }

    fn on_path_action(&mut self, now: Time, action: PathAction) {
        self.apply_path_action(now, action);
        self.after_event(now);
    }

    /// With multipath, one entry per path a path ID was opened on; none without.
    fn path_samples(&self, out: &mut Vec<(u8, TransportSample)>) {
        if self.mp.is_some() {
            out.extend(self.paths.iter().enumerate().filter(|(_, path)| path.path_id.is_some()).map(|(p, path)| (p as u8, path.sample())));
        }
    }

    /// One entry per path with multipath; none without.
    fn path_stats(&self, out: &mut Vec<multiconn_transport::PathStats>) {
        if let Some(mp) = &self.mp {
            out.extend(self.paths.iter().enumerate().map(|(p, path)| path.stats(p, mp.health.status(p))));
        }
    }

    fn open_stream(&mut self, options: StreamOptions) -> Result<u64, AppError> {
        // Unidirectional, initiated by this end (RFC 9000 §2.1): the server's ids are 3, 7,
        // 11, ..., the client's 2, 6, 10, ....
        let id = 4 * self.uni_opened + if self.role == Role::Server { 3 } else { 2 };
        let s = self.streams.get_or_open(id).ok_or(AppError::UnknownStream(id))?;
        s.urgent = options.urgent;
        s.redundant = options.redundant;
        self.uni_opened += 1;
        self.streams.set_priority(id, options.priority);
        Ok(id)
    }

    fn write(&mut self, stream: u64, bytes: u64) -> Result<(), AppError> {
        let s = self.local_uni_stream(stream)?;
        if s.send.is_finished() {
            return Err(AppError::Finished(stream));
        }
        s.send.write(bytes);
        self.streams.schedule(stream);
        Ok(())
    }

    fn finish(&mut self, stream: u64) -> Result<(), AppError> {
        let s = self.local_uni_stream(stream)?;
        s.send.finish();
        self.streams.schedule(stream);
        Ok(())
    }

    /// RFC 9000 §3.1: the stream goes to "Reset Sent"; its data not yet acknowledged is never
    /// sent (again), and a RESET_STREAM with the bytes sent so far as the final size follows
    /// (itself sent again if lost). `false` when there is nothing to abandon: every byte and
    /// the FIN were already acknowledged, or the stream was reset before.
    fn reset_stream(&mut self, stream: u64) -> Result<bool, AppError> {
        let s = match self.local_uni_stream(stream) {
            Ok(s) => s,
            Err(AppError::Finished(_)) => return Ok(false),
            Err(e) => return Err(e),
        };
        if s.send.is_reset() || (s.send.is_finished() && s.send.is_done()) {
            return Ok(false);
        }
        s.send.reset();
        self.streams.unschedule(stream);
        self.resets_pending.push(stream);
        self.stats.streams_reset += 1;
        Ok(true)
    }

    fn drain_progress(&mut self, out: &mut Vec<StreamProgress>) {
        out.append(&mut self.progress);
    }

    fn send_datagram(&mut self, tag: u64, bytes: u64, options: DatagramOptions) -> Result<(), AppError> {
        let room = self.datagram_room();
        self.dgram.send(tag, bytes, options, room)
    }

    fn send_datagram_content(&mut self, tag: u64, bytes: u64, options: DatagramOptions, content: Payload) -> Result<(), AppError> {
        let room = self.datagram_room();
        self.dgram.send_content(tag, bytes, options, Some(content), room)
    }

    fn drain_datagram_events(&mut self, out: &mut Vec<DatagramEvent>) {
        self.dgram.drain_events(out);
    }

    fn observe(&mut self, on: bool) {
        self.observations.watch(on);
        if on && self.mp.is_some() {
            for (p, path) in self.paths.iter().enumerate() {
                if let Some(path_id) = path.path_id {
                    self.observations.note(Observation::PathIdOpened { path: p as u8, path_id });
                }
            }
        }
    }

    fn drain_observations(&mut self, out: &mut Vec<Observation>) {
        self.observations.drain(out);
    }

    fn cc_state(&self) -> &'static str {
        self.handshake_path().recovery.controller().state().name()
    }

    fn ecn_stats(&self) -> Option<EcnStats> {
        let single = self.mp.is_none();
        let paths: Vec<_> = self.paths.iter().filter(|p| single || p.path_ids_opened > 0).filter_map(|p| p.recovery.ecn_stats()).collect();
        if paths.is_empty() {
            return None;
        }
        Some(EcnStats {
            state: paths.iter().map(|e| e.state.name()).collect::<Vec<_>>().join(","),
            ect_sent: self.stats.ect_datagrams_sent,
            ce_received: self.stats.ce_datagrams_received,
            echoes_sent: self.stats.ack_ecn_frames_sent,
            echoes_received: paths.iter().map(|e| e.ce_reported).sum(),
            congestion_responses: paths.iter().map(|e| e.responses).sum(),
        })
    }

    fn drain_qlog(&mut self, out: &mut Vec<String>) {
        if let Some(q) = &mut self.qlog {
            q.drain(out);
        }
    }
}
