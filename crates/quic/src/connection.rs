//! One QUIC connection endpoint, sans-IO (RFC 9000, RFC 9001 handshake timing, RFC 9002
//! recovery): it turns received datagrams and timer expiries into frames processed, and
//! assembles outgoing datagrams under the congestion window, pacing, flow control and the
//! anti-amplification limit (RFC 9000 §8.1).
//!
//! Sending (one datagram per `poll_transmit`): Initial, Handshake and 1-RTT (or 0-RTT)
//! packets are coalesced in that order (§12.2); ACK frames go in every packet of a space with
//! something new to acknowledge and alone only when due; ACK-only packets are neither paced nor
//! congestion controlled (RFC 9002 §7); PTO probes ignore the window and pacing (§6.2.4);
//! datagrams with ack-eliciting Initial packets are padded to 1200 bytes (§14.1).
//!
//! Paths: every path, path 0 included, is a [`PathState`] in one table, with its own 1-RTT
//! packet numbers, recovery, pacer, ACK state and PTO probes; a single-path connection has a
//! table of one. The handshake runs on path 0, whose recovery also holds the Initial and
//! Handshake spaces; the connection keeps only what belongs to those two spaces (their ACK
//! state and PTO probes). With several paths (draft-ietf-quic-multipath-21), once this end has
//! confirmed the handshake, 1-RTT packets go through the `multipath` submodule: ACKs per path
//! (PATH_ACK) and a scheduler choosing the path of each packet.

use std::collections::VecDeque;

use multiconn_cc::{Controller, PacerConfig, PathController};
use multiconn_core::{Dur, Ecn, FlowId, Packet, Payload, Time, TransportSample};
use multiconn_transport::{AppError, AppEvent, ConnectionParams, EcnStats, Endpoint, Observation, Observations, PathAction, ProfileError, Role, StreamOptions, StreamProgress, Workload};

use crate::ack_state::{AckPolicy, AckState};
use crate::flow_control::{FlowControlRule, RecvWindow, SendCredit};
use crate::frame::{crypto_overhead, fit_data, stream_overhead, Frame};
use crate::handshake::{Handshake, HandshakeEvent, HandshakeSizes};
use crate::packet::{
    header_size, overhead_estimate, pn_len, Datagram, PacketType, QuicPacket, Space, AEAD_TAG, IP_UDP_OVERHEAD, MIN_INITIAL_DATAGRAM,
    MIN_PN_AND_PAYLOAD,
};
use crate::path::{Multipath, PathPhase, PathState, PathTemplate};
use crate::qlog::QlogSink;
use crate::recovery::{Outcome, PacketOutcome, Recovery, RecoveryConfig, SentContent, SentPacketInfo, TimeoutAction};
use crate::streams::{self, SendBuffer, Streams};

mod multipath;

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
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    pub packets_sent: u64,
    pub packets_received: u64,
    /// UDP payload bytes.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Packets carrying retransmitted STREAM or CRYPTO data.
    pub retransmissions: u64,
    pub ack_only_packets: u64,
    pub probes_sent: u64,
    /// Received packets dropped: duplicates, no keys (yet or any more), no payload.
    pub duplicates: u64,
    pub undecryptable: u64,
    /// Frames ignored as invalid (bad ACK ranges, flow-control violations, unknown streams).
    pub invalid_frames: u64,
    /// Stream bytes delivered to the application.
    pub delivered: u64,
    /// Paths whose validation was given up (no PATH_RESPONSE in time; multipath client).
    pub path_validation_failures: u64,
    /// ECN (RFC 9000 §13.4): datagrams sent ECT(0), datagrams that arrived CE-marked, ACK and
    /// PATH_ACK frames sent with ECN counts.
    pub ect_datagrams_sent: u64,
    pub ce_datagrams_received: u64,
    pub ack_ecn_frames_sent: u64,
    /// Streams this end reset (RESET_STREAM sent, RFC 9000 §19.4) and streams the peer reset
    /// before their data was all delivered here.
    pub streams_reset: u64,
    pub resets_received: u64,
}

/// What the application at this end does.
#[derive(Clone, Debug)]
struct App {
    workload: Workload,
    started: bool,
    next_request: u32,
    open: u32,
    completed: u32,
    finished: bool,
}

impl App {
    fn total_requests(&self) -> u32 {
        match self.workload {
            Workload::Download { .. } | Workload::Upload { .. } => 1,
            Workload::Requests { count, .. } => count,
            Workload::Messages => 0,
        }
    }
    fn parallel(&self) -> u32 {
        match self.workload {
            Workload::Download { .. } | Workload::Upload { .. } | Workload::Messages => 1,
            Workload::Requests { parallel, .. } => parallel.max(1),
        }
    }
    /// `None`: an endless upload.
    fn request_size(&self) -> Option<u64> {
        match self.workload {
            Workload::Download { request_size, .. } | Workload::Requests { request_size, .. } => Some(request_size),
            Workload::Upload { size } => size,
            Workload::Messages => Some(0),
        }
    }
    /// An upload is answered with an empty response (a FIN), as an HTTP PUT with no body.
    fn response_size(&self) -> Option<u64> {
        match self.workload {
            Workload::Download { size, .. } => size,
            Workload::Requests { response_size, .. } => Some(response_size),
            Workload::Upload { .. } | Workload::Messages => Some(0),
        }
    }
    fn is_upload(&self) -> bool {
        matches!(self.workload, Workload::Upload { .. })
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
    app: App,
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
}

fn mds_for(params: &ConnectionParams) -> usize {
    let path = params.max_packet_size.saturating_sub(IP_UDP_OVERHEAD);
    let cap = params.profile.packet.max_payload.unwrap_or(u32::MAX);
    path.min(cap).max(64) as usize
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
        let recovery_cfg = RecoveryConfig { ecn: profile.ecn, ..RecoveryConfig::from_knobs(&profile.recovery, max_ack_delay) };
        let immediate = AckPolicy { delay_acks: false, threshold: 1, max_ack_delay: Dur::ZERO, immediate_on_reorder: true, ecn: profile.ecn };
        let data_policy = AckPolicy {
            delay_acks: true,
            // 0: no count, the timer alone.
            threshold: match profile.ack.ack_eliciting_threshold {
                0 => u32::MAX,
                n => n,
            },
            max_ack_delay: profile.ack.ack_delay.unwrap_or(max_ack_delay),
            immediate_on_reorder: profile.ack.immediate_ack_on_reorder,
            ecn: profile.ecn,
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
            app: App { workload: params.workload, started: false, next_request: 0, open: 0, completed: 0, finished: false },
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
        })
    }

    pub fn role(&self) -> Role {
        self.role
    }
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
    pub fn handshake(&self) -> &Handshake {
        &self.hs
    }
    /// Largest UDP payload this endpoint sends.
    pub fn max_datagram_size(&self) -> usize {
        self.mds
    }
    pub fn streams(&self) -> &Streams {
        &self.streams
    }
    /// Sets a stream's scheduling priority (lower numbers are served first).
    pub fn set_stream_priority(&mut self, stream_id: u64, priority: u8) {
        self.streams.set_priority(stream_id, priority);
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
            self.app_can_send();
        }
    }

    fn app_can_send(&mut self) {
        if self.app.started {
            return;
        }
        self.app.started = true;
        self.events.push_back(AppEvent::CanSend);
        if self.role == Role::Client {
            self.open_requests();
        }
    }

    fn open_requests(&mut self) {
        while self.app.next_request < self.app.total_requests() && self.app.open < self.app.parallel() {
            let id = 4 * self.app.next_request as u64;
            let size = self.app.request_size();
            if let Some(s) = self.streams.get_or_open(id) {
                s.send = SendBuffer::new(size, true);
            }
            self.streams.schedule(id);
            self.app.next_request += 1;
            self.app.open += 1;
        }
    }

    /// All incoming data of stream `id` was delivered.
    fn on_stream_received(&mut self, id: u64) {
        if streams::is_unidirectional(id) {
            // A message stream: nothing to answer.
            self.maybe_close(id);
            return;
        }
        match self.role {
            Role::Server => {
                if self.app.is_upload() && !self.app.finished {
                    self.app.finished = true;
                    self.events.push_back(AppEvent::Finished);
                }
                let size = self.app.response_size();
                if let Some(s) = self.streams.get_mut(id) {
                    s.send = SendBuffer::new(size, true);
                }
                self.streams.schedule(id);
            }
            Role::Client => {
                let bytes = self.streams.get(id).and_then(|s| s.recv.final_size()).unwrap_or(0);
                self.events.push_back(AppEvent::ResponseComplete { index: (id / 4) as u32, bytes });
                self.app.completed += 1;
                self.app.open = self.app.open.saturating_sub(1);
                if self.app.completed >= self.app.total_requests() && !self.app.finished {
                    self.app.finished = true;
                    self.events.push_back(AppEvent::Finished);
                }
                self.open_requests();
            }
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

    // ---------------------------------------------------------------- receiving

    fn on_datagram(&mut self, now: Time, pkt: &Packet) {
        let Some(payload) = pkt.payload.as_ref() else {
            self.stats.undecryptable += 1;
            return;
        };
        let Some(dg) = payload.get::<Datagram>() else {
            self.stats.undecryptable += 1;
            return;
        };
        let path = usize::from(pkt.path);
        if path >= self.paths.len() {
            // No such path: nothing to decrypt it with.
            self.stats.undecryptable += 1;
            return;
        }
        if !self.accept_path_id(now, path, dg.path_id) {
            // A late packet of a path ID this end has replaced: its CIDs are retired.
            self.stats.undecryptable += 1;
            return;
        }
        self.stats.datagrams_received += 1;
        let bytes = pkt.size.saturating_sub(IP_UDP_OVERHEAD) as u64;
        self.stats.bytes_received += bytes;
        if let Some(mp) = &mut self.mp {
            let state = &mut self.paths[path];
            state.counters.packets_received += 1;
            state.counters.bytes_received += bytes;
            mp.health.on_packet_received(path, now);
            mp.sync_coupling(path, state);
        }
        self.stats.ce_datagrams_received += u64::from(pkt.ecn == Ecn::Ce);
        for p in dg.packets() {
            self.on_packet(now, p, path, pkt.ecn);
        }
        self.update_amplification(now);
    }

    fn keys_for_receiving(&self, ptype: PacketType) -> bool {
        match ptype {
            PacketType::Initial => !self.handshake_path().recovery.is_discarded(Space::Initial),
            PacketType::Handshake => self.hs.has_handshake_keys() && !self.handshake_path().recovery.is_discarded(Space::Handshake),
            PacketType::ZeroRtt => self.role == Role::Server && self.hs.has_zero_rtt_keys(),
            PacketType::OneRtt => match self.role {
                Role::Client => self.hs.has_one_rtt_keys(),
                Role::Server => self.hs.is_complete(),
            },
        }
    }

    fn on_packet(&mut self, now: Time, p: &QuicPacket, path: usize, ecn: Ecn) {
        if !self.keys_for_receiving(p.ptype) || path > 0 && p.ptype != PacketType::OneRtt {
            self.stats.undecryptable += 1;
            return;
        }
        let space = p.ptype.space();
        let rx = self.ack_state_mut(space, path);
        if !rx.on_packet(now, p.pn, p.is_ack_eliciting()) {
            self.stats.duplicates += 1;
            return;
        }
        rx.on_ecn(ecn);
        self.stats.packets_received += 1;
        if let Some(q) = &mut self.qlog {
            q.packet_received(now, p);
        }
        if self.role == Role::Server && p.ptype == PacketType::Handshake {
            // RFC 9000 §8.1: a Handshake packet proves the address; RFC 9001 §4.9.1.
            self.address_validated = true;
            self.discard(now, Space::Initial);
        }
        for f in &p.frames {
            self.on_frame(now, space, f, path);
        }
    }

    fn on_frame(&mut self, now: Time, space: Space, f: &Frame, path: usize) {
        match f {
            Frame::Padding(_) | Frame::Ping => {}
            Frame::Ack(a) => {
                if a.ranges().any(|r| r.is_err()) {
                    self.stats.invalid_frames += 1;
                    return;
                }
                let mut out = std::mem::take(&mut self.outcome);
                out.clear();
                // ACK frames are the handshake path's (the multipath sender sends PATH_ACKs).
                let rec = &mut self.handshake_path_mut().recovery;
                let before = rec.stats().invalid_acks;
                rec.on_ack_received(now, space, a.ranges().map_while(Result::ok), a.delay(), a.ecn, &mut out);
                if rec.stats().invalid_acks != before {
                    self.stats.invalid_frames += 1;
                }
                self.apply_outcome(now, &out);
                self.outcome = out;
            }
            Frame::Crypto { offset, len } => {
                let mut evs = std::mem::take(&mut self.hs_events);
                evs.clear();
                self.hs.on_crypto(space, *offset, *len as u64, &mut evs);
                for ev in &evs {
                    self.on_handshake_event(now, *ev);
                }
                self.hs_events = evs;
            }
            Frame::Stream { id, offset, len, fin } => self.on_stream_frame(now, *id, *offset, *len as u64, *fin),
            Frame::ResetStream { id, final_size } => self.on_reset_stream(now, *id, *final_size),
            Frame::MaxData(v) => {
                if self.conn_send.raise(*v) {
                    self.streams.unblock_connection();
                }
            }
            Frame::MaxStreamData { id, max } => {
                if let Some(s) = self.streams.get_mut(*id) {
                    if s.send_credit.raise(*max) {
                        self.streams.schedule(*id);
                    }
                }
            }
            Frame::HandshakeDone => {
                if space == Space::Data && self.hs.on_handshake_done() {
                    self.on_handshake_confirmed(now);
                }
            }
            Frame::PathAck { path: acked, ack } => self.on_path_ack(now, *acked, ack),
            Frame::PathChallenge => self.on_path_challenge(path),
            Frame::PathResponse => self.on_path_response(path),
            Frame::PathAbandon { path: gone } => self.on_path_abandon_frame(now, *gone),
            Frame::PathStatus { path: id, backup, seq } => self.on_path_status_frame(*id, *backup, *seq),
        }
    }

    fn on_handshake_event(&mut self, now: Time, ev: HandshakeEvent) {
        match ev {
            HandshakeEvent::HandshakeKeys => self.handshake_path_mut().recovery.set_has_handshake_keys(),
            HandshakeEvent::OneRttKeys => self.app_can_send(),
            HandshakeEvent::Complete => {
                if self.role == Role::Server {
                    self.handshake_done_pending = true;
                    self.on_handshake_confirmed(now);
                }
            }
        }
    }

    /// This end confirmed the handshake (RFC 9001 §4.1.2: the server when it completes, the
    /// client on HANDSHAKE_DONE): the Initial and Handshake keys go (§4.9.2) and, with
    /// multipath, the other paths open.
    fn on_handshake_confirmed(&mut self, now: Time) {
        self.handshake_path_mut().recovery.set_handshake_confirmed(now);
        self.discard(now, Space::Initial);
        self.discard(now, Space::Handshake);
        self.start_multipath(now);
    }

    /// Whether a STREAM or RESET_STREAM frame for stream `id` is taken. Only the peer opens
    /// streams by sending on them (RFC 9000 §2.1: bit 0 names the initiator), and nobody
    /// receives on a unidirectional stream it opened. A late frame for a finished stream is
    /// ignored; a frame for a stream this end never opened is counted invalid.
    fn takes_peer_stream_frame(&mut self, id: u64) -> bool {
        let exists = self.streams.get(id).is_some();
        let opened_here = streams::is_server_initiated(id) == (self.role == Role::Server);
        let receivable = !(opened_here && streams::is_unidirectional(id));
        if !receivable || (!exists && (opened_here || self.streams.is_closed(id))) {
            if !self.streams.is_closed(id) {
                self.stats.invalid_frames += 1;
            }
            return false;
        }
        true
    }

    /// The first path's minimum RTT, which picoquic's flow-control growth reads
    /// (`picoquic_cc_increased_window`); `None` before a sample.
    fn flow_control_rtt_min(&self) -> Option<Dur> {
        let rtt = self.handshake_path().recovery.rtt();
        rtt.has_sample().then(|| rtt.min())
    }

    fn on_stream_frame(&mut self, now: Time, id: u64, offset: u64, len: u64, fin: bool) {
        if !self.takes_peer_stream_frame(id) {
            return;
        }
        let rtt_min = self.flow_control_rtt_min();
        let conn_received = self.conn_recv.received;
        let Some(s) = self.streams.get_or_open(id) else {
            self.stats.invalid_frames += 1;
            return;
        };
        let end = offset.saturating_add(len);
        let before = s.recv.highest();
        let grow = end.saturating_sub(before);
        if !s.recv_window.on_received(end) || !self.conn_recv.on_received(conn_received + grow) {
            self.stats.invalid_frames += 1;
            return;
        }
        if self.conn_recv.picoquic_grow(self.conn_recv.received, rtt_min).is_some() {
            self.max_data_pending = true;
        }
        let delivered = s.recv.on_data(offset, len, fin);
        let mut msd = None;
        if delivered > 0 && s.recv.final_size().is_none() {
            msd = s.recv_window.on_consumed(delivered).or_else(|| s.recv_window.picoquic_grow(s.recv_window.consumed, rtt_min));
        } else if delivered > 0 {
            s.recv_window.consumed += delivered;
        }
        if msd.is_some() && !s.max_stream_data_pending {
            s.max_stream_data_pending = true;
            self.msd_pending.push(id);
        }
        let complete = s.recv.is_complete() && !s.recv_reported;
        if complete {
            s.recv_reported = true;
        }
        if delivered > 0 {
            let to = s.recv.delivered();
            self.observations.note(Observation::Delivered { stream: id, from: to - delivered, to });
        }
        if delivered > 0 && streams::is_unidirectional(id) {
            self.progress.push(StreamProgress { stream: id, delivered: s.recv.delivered(), at: now, reset: false });
        }
        if delivered > 0 {
            self.stats.delivered += delivered;
            self.events.push_back(AppEvent::Delivered { bytes: delivered });
            if self.conn_recv.on_consumed(delivered).is_some() {
                self.max_data_pending = true;
            }
        }
        if complete {
            self.on_stream_received(id);
        }
    }

    /// RESET_STREAM from the peer (RFC 9000 §3.2, §19.4): unless all of the stream's data was
    /// already delivered ("Data Recvd": the reset changes nothing), what has not been
    /// delivered is discarded, the stream is closed (later STREAM frames for it are ignored)
    /// and its bytes up to the final size count as consumed for connection flow control
    /// (§4.5). A final size below what arrived, or other than a FIN's, is invalid.
    fn on_reset_stream(&mut self, now: Time, id: u64, final_size: u64) {
        if !self.takes_peer_stream_frame(id) {
            return;
        }
        let conn_received = self.conn_recv.received;
        let Some(s) = self.streams.get_or_open(id) else {
            self.stats.invalid_frames += 1;
            return;
        };
        if s.recv.is_complete() {
            return;
        }
        if final_size < s.recv.highest() || s.recv.final_size().is_some_and(|f| f != final_size) {
            self.stats.invalid_frames += 1;
            return;
        }
        let grow = final_size - s.recv.highest();
        if !s.recv_window.on_received(final_size) || !self.conn_recv.on_received(conn_received + grow) {
            self.stats.invalid_frames += 1;
            return;
        }
        let delivered = s.recv.delivered();
        let unread = final_size - delivered;
        self.streams.close(id);
        self.stats.resets_received += 1;
        if unread > 0 && self.conn_recv.on_consumed(unread).is_some() {
            self.max_data_pending = true;
        }
        if streams::is_unidirectional(id) {
            self.progress.push(StreamProgress { stream: id, delivered, at: now, reset: true });
        }
    }

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
                Frame::Padding(_) | Frame::Ping | Frame::Ack(_) | Frame::PathAck { .. } => {}
            }
        }
    }

    fn update_amplification(&mut self, now: Time) {
        if self.role == Role::Server {
            let at_limit = !self.address_validated && self.amplification_allowance() < MIN_INITIAL_DATAGRAM as u64 / 4;
            self.handshake_path_mut().recovery.set_at_amplification_limit(now, at_limit);
        }
    }

    /// Bytes the server may still send before its client's address is validated.
    fn amplification_allowance(&self) -> u64 {
        if self.address_validated {
            u64::MAX
        } else {
            (3 * self.stats.bytes_received).saturating_sub(self.stats.bytes_sent)
        }
    }

    // ---------------------------------------------------------------- sending

    fn data_packet_type(&self) -> Option<PacketType> {
        if self.hs.has_one_rtt_keys() {
            Some(PacketType::OneRtt)
        } else if self.role == Role::Client && self.hs.has_zero_rtt_keys() && self.started {
            Some(PacketType::ZeroRtt)
        } else {
            None
        }
    }

    fn packet_type(&self, space: Space) -> Option<PacketType> {
        match space {
            Space::Initial if !self.handshake_path().recovery.is_discarded(Space::Initial) && self.hs.started() => Some(PacketType::Initial),
            Space::Handshake if self.hs.has_handshake_keys() && !self.handshake_path().recovery.is_discarded(Space::Handshake) => {
                Some(PacketType::Handshake)
            }
            Space::Data => self.data_packet_type(),
            _ => None,
        }
    }

    /// Ack-eliciting data waits in `space` (ignoring the window and pacing).
    fn has_data(&self, space: Space) -> bool {
        match space {
            Space::Initial | Space::Handshake => self.hs.has_crypto_to_send(space),
            Space::Data => {
                self.handshake_done_pending
                    || self.max_data_pending
                    || !self.msd_pending.is_empty()
                    || !self.resets_pending.is_empty()
                    || self.streams.front().is_some()
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn build_packet(&mut self, now: Time, space: Space, ptype: PacketType, room: usize, eliciting: bool, probe: bool, path: usize) -> Option<QuicPacket> {
        let path_acks = space == Space::Data && self.multipath_ready();
        if !eliciting && !path_acks && !self.ack_state(space, path).ack_due(now) {
            // Only an ACK could go, and it is not due: nothing to build.
            return None;
        }
        let pn = self.paths[path].recovery.next_pn(space);
        let pn_len = pn_len(pn, self.paths[path].recovery.largest_acked(space));
        let overhead = overhead_estimate(ptype, self.dcid_len, self.dcid_len, pn_len);
        if room < overhead + MIN_PN_AND_PAYLOAD {
            return None;
        }
        let mut avail = room - overhead;
        let mut frames = Vec::with_capacity(3);
        let ack_due = if path_acks {
            self.push_path_acks(now, path, &mut frames, &mut avail)
        } else {
            let rx = self.ack_state(space, path);
            let ack = if ptype != PacketType::ZeroRtt && rx.has_new() { rx.build(now) } else { None };
            let ack_due = ack.is_some() && rx.ack_due(now);
            if let Some(a) = ack {
                let sz = a.wire_size();
                if sz <= avail {
                    avail -= sz;
                    frames.push(Frame::Ack(a));
                }
            }
            ack_due
        };
        let mut retransmit = false;
        if eliciting {
            retransmit = self.fill(space, ptype, &mut frames, &mut avail, path);
            if probe && !frames.iter().any(Frame::is_ack_eliciting) {
                // Probe without new data: resend the oldest unacknowledged data (RFC 9002 §6.2.4).
                let mut contents = std::mem::take(&mut self.probe_contents);
                contents.clear();
                self.paths[path].recovery.oldest_unacked(space, 1, &mut contents);
                for c in &contents {
                    if let Some(pkt) = c.payload.get::<Datagram>().and_then(|d| d.get(c.index as usize)) {
                        self.requeue(pkt);
                    }
                }
                contents.clear();
                self.probe_contents = contents;
                retransmit |= self.fill(space, ptype, &mut frames, &mut avail, path);
            }
            if probe && !frames.iter().any(Frame::is_ack_eliciting) && avail >= 1 {
                frames.push(Frame::Ping);
            }
        }
        let has_ack = matches!(frames.first(), Some(Frame::Ack(_) | Frame::PathAck { .. }));
        let eliciting_frames = frames.iter().any(Frame::is_ack_eliciting);
        if !(eliciting_frames || has_ack && ack_due) {
            // Put back nothing: fill() added nothing ack-eliciting and an ACK alone is not due.
            return None;
        }
        if space == Space::Data && !eliciting_frames && self.paths[path].ping_on_ack && avail >= 1 {
            // ACK-only packets of this path were lost (`picoquic-2022`): this ACK asks for one.
            frames.push(Frame::Ping);
        }
        if retransmit {
            self.stats.retransmissions += 1;
            self.paths[path].counters.retransmissions += 1;
        }
        Some(sealed_packet(ptype, pn, pn_len, frames, self.dcid_len))
    }

    /// Adds ack-eliciting frames of `space` while they fit, for a packet on `path`: control
    /// frames, then (1-RTT) the copies queued on the path, then stream data; true if any carries
    /// retransmitted data.
    fn fill(&mut self, space: Space, ptype: PacketType, frames: &mut Vec<Frame>, avail: &mut usize, path: usize) -> bool {
        let mut retransmit = false;
        match space {
            Space::Initial | Space::Handshake => {
                let Some(buf) = self.hs.send_buffer(space) else { return false };
                while *avail >= MIN_FRAME_ROOM {
                    let room = *avail;
                    let Some(c) = buf.next_chunk(u64::MAX, |off, want| fit_data(room, want, |l| crypto_overhead(off, l))) else {
                        break;
                    };
                    let f = Frame::Crypto { offset: c.offset, len: c.len as u32 };
                    *avail -= f.wire_size();
                    retransmit |= c.retransmit;
                    frames.push(f);
                }
            }
            Space::Data => {
                if self.handshake_done_pending && ptype == PacketType::OneRtt && self.role == Role::Server && *avail >= 1 {
                    self.handshake_done_pending = false;
                    frames.push(Frame::HandshakeDone);
                    *avail -= 1;
                }
                if self.max_data_pending {
                    let f = Frame::MaxData(self.conn_recv.max);
                    if f.wire_size() <= *avail {
                        *avail -= f.wire_size();
                        frames.push(f);
                        self.max_data_pending = false;
                    }
                }
                while let Some(&id) = self.resets_pending.first() {
                    let Some(final_size) = self.streams.get(id).filter(|s| !s.send.is_done()).and_then(|s| s.send.end()) else {
                        self.resets_pending.remove(0);
                        continue;
                    };
                    let f = Frame::ResetStream { id, final_size };
                    if f.wire_size() > *avail {
                        break;
                    }
                    *avail -= f.wire_size();
                    frames.push(f);
                    self.resets_pending.remove(0);
                }
                while let Some(&id) = self.msd_pending.last() {
                    let Some(s) = self.streams.get_mut(id) else {
                        self.msd_pending.pop();
                        continue;
                    };
                    let f = Frame::MaxStreamData { id, max: s.recv_window.max };
                    if f.wire_size() > *avail {
                        break;
                    }
                    s.max_stream_data_pending = false;
                    *avail -= f.wire_size();
                    frames.push(f);
                    self.msd_pending.pop();
                }
                if ptype == PacketType::OneRtt {
                    self.fill_queued_copies(path, frames, avail);
                }
                retransmit |= self.fill_streams(frames, avail);
            }
        }
        retransmit
    }

    /// The copies queued on `path` (tquic's redundant scheduler), oldest first, while they fit:
    /// of each, only what is not acknowledged yet, one unacknowledged range per frame; a range
    /// cut short leaves its tail at the front of the queue, without the FIN. Ranges of streams
    /// reset or gone, and ranges fully acknowledged, are dropped. A packet that carries a copy
    /// counts in the path's `copies_sent`.
    fn fill_queued_copies(&mut self, path: usize, frames: &mut Vec<Frame>, avail: &mut usize) {
        let mut carried = false;
        while *avail >= MIN_FRAME_ROOM {
            let Some(c) = self.paths[path].queued_copies.front().copied() else { break };
            let end = c.offset.saturating_add(c.len);
            let unacked = self.streams.get(c.stream).filter(|s| !s.send.is_reset()).and_then(|s| s.send.first_unacked(c.offset, end));
            let Some((a, b)) = unacked else {
                self.paths[path].queued_copies.pop_front();
                continue;
            };
            let room = *avail;
            let Some(len) = fit_data(room, b - a, |l| stream_overhead(c.stream, a, l)).filter(|&l| l > 0) else { break };
            let queue = &mut self.paths[path].queued_copies;
            if a + len < end {
                queue[0] = crate::path::QueuedCopy { offset: a + len, len: end - (a + len), ..c };
            } else {
                queue.pop_front();
            }
            let f = Frame::Stream { id: c.stream, offset: a, len: len as u32, fin: c.fin && a + len == end };
            *avail -= f.wire_size();
            frames.push(f);
            carried = true;
        }
        if carried {
            self.paths[path].counters.copies_sent += 1;
        }
    }

    fn fill_streams(&mut self, frames: &mut Vec<Frame>, avail: &mut usize) -> bool {
        let mut retransmit = false;
        while *avail >= MIN_FRAME_ROOM {
            let Some(id) = self.streams.front() else { break };
            let conn_credit = self.conn_send.available();
            let Some(s) = self.streams.get_mut(id) else {
                self.streams.rotate(false);
                continue;
            };
            let held = self.hold_new.is_some_and(|scope| scope == multiconn_multipath::CopyScope::AllStreams || s.redundant);
            if held && !s.send.has_retransmit() {
                // Sequential redundancy checks: this stream's new data waits for a packet that
                // can be copied.
                break;
            }
            let credit = s.send_credit.available().min(conn_credit);
            let room = *avail;
            match s.send.next_chunk(credit, |off, want| fit_data(room, want, |l| stream_overhead(id, off, l))) {
                Some(c) => {
                    if !c.retransmit {
                        s.send_credit.used += c.len;
                        self.conn_send.used += c.len;
                    }
                    retransmit |= c.retransmit;
                    let again = s.can_send(self.conn_send.available());
                    let blocked_on_conn = !again && s.send.has_new() && s.send.new_bytes() > 0 && s.send_credit.available() > 0;
                    let f = Frame::Stream { id, offset: c.offset, len: c.len as u32, fin: c.fin };
                    *avail -= f.wire_size();
                    frames.push(f);
                    self.streams.rotate(again);
                    if blocked_on_conn {
                        self.streams.block_on_connection(id);
                    }
                }
                None => {
                    if s.can_send(conn_credit) {
                        // Data waits but did not fit in what is left of this packet.
                        break;
                    }
                    let blocked_on_conn = s.send.has_new() && s.send.new_bytes() > 0 && s.send_credit.available() > 0;
                    self.streams.rotate(false);
                    if blocked_on_conn {
                        self.streams.block_on_connection(id);
                    }
                }
            }
        }
        retransmit
    }

    /// The next datagram to send. Until this end has confirmed a multipath handshake (and
    /// always without multipath) the packets of the three spaces go coalesced on the
    /// handshake path; then the multipath sender takes over.
    fn transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if self.multipath_ready() {
            return self.transmit_multipath(now, next_id);
        }
        let mds = self.mds as u64;
        self.maybe_start(now);
        if !self.started && self.role == Role::Client {
            return None;
        }
        // The packet type each space can send now (None: no keys, or the space is discarded).
        let spaces: [Option<PacketType>; 3] = [self.packet_type(Space::Initial), self.packet_type(Space::Handshake), self.packet_type(Space::Data)];
        // Fast exits when only ack-eliciting data could go out and something holds it back.
        let probe_pending = Space::ALL.iter().any(|s| self.probes_in(*s) > 0) || self.anti_deadlock.is_some();
        if !probe_pending && !Space::ALL.iter().any(|s| self.ack_state(*s, HANDSHAKE_PATH).ack_due(now)) {
            if self.handshake_path().pacing_release.is_some_and(|t| t > now) {
                return None;
            }
            if !Space::ALL.iter().any(|s| spaces[s.index()].is_some() && self.has_data(*s)) {
                if self.handshake_path().has_window_room(mds) {
                    self.app_limited = true;
                    self.handshake_path_mut().recovery.on_app_limited();
                }
                return None;
            }
        }
        let allowance = self.amplification_allowance();
        if allowance < MIN_INITIAL_DATAGRAM as u64 / 4 {
            self.update_amplification(now);
            return None;
        }
        let budget = mds.min(allowance) as usize;

        // Probes first: they ignore the congestion window and pacing.
        let probe_space = Space::ALL
            .into_iter()
            .find(|s| spaces[s.index()].is_some() && (self.probes_in(*s) > 0 || self.anti_deadlock == Some(*s)));
        for s in Space::ALL {
            if spaces[s.index()].is_none() {
                self.set_probes_in(s, 0);
                if self.anti_deadlock == Some(s) {
                    self.anti_deadlock = None;
                }
            }
        }

        let has_data = Space::ALL.iter().any(|s| spaces[s.index()].is_some() && self.has_data(*s));
        let cwnd_room = self.handshake_path().has_window_room(mds);
        let mut eliciting_ok = probe_space.is_some();
        // CRYPTO data of the Initial and Handshake spaces is not held back by the congestion
        // window (the pacer still applies). 0.5-RTT (or 0-RTT) packets can fill the window,
        // and they cannot be acknowledged until the handshake completes. RFC 9002's PTO does
        // not cover this case: the space has nothing in flight once its lost packet is declared
        // lost, and the Application Data PTO waits for the handshake. A lost CRYPTO frame would
        // then never be sent again (quicwg/base-drafts#2886: "It was not intended for crypto
        // timeout retransmissions to be blocked by the congestion controller"). ngtcp2 does the
        // same (ngtcp2/ngtcp2#663); the anti-amplification limit still applies.
        let crypto_pending = [Space::Initial, Space::Handshake].into_iter().any(|s| spaces[s.index()].is_some() && self.has_data(s));
        let mut crypto_over_window = false;
        if probe_space.is_none() {
            if !has_data {
                if cwnd_room {
                    self.app_limited = true;
                    self.handshake_path_mut().recovery.on_app_limited();
                }
            } else if !cwnd_room {
                self.app_limited = false;
                crypto_over_window = crypto_pending && self.handshake_path_mut().paced_until(now, mds).is_none();
            } else {
                self.app_limited = false;
                eliciting_ok = self.handshake_path_mut().paced_until(now, mds).is_none();
            }
        }

        let mut packets: [Option<QuicPacket>; 3] = [None, None, None];
        let mut count = 0;
        let mut remaining = budget;
        let mut probe_used = None;
        for space in Space::ALL {
            let Some(ptype) = spaces[space.index()] else { continue };
            let probe = probe_space == Some(space);
            let crypto = crypto_over_window && space != Space::Data;
            let eliciting = if probe_space.is_some() { probe } else { eliciting_ok || crypto };
            if let Some(p) = self.build_packet(now, space, ptype, remaining, eliciting, probe, HANDSHAKE_PATH) {
                if probe {
                    probe_used = Some(space);
                }
                remaining = remaining.saturating_sub(p.size as usize);
                packets[count] = Some(p);
                count += 1;
            }
        }
        if count == 0 {
            return None;
        }
        let packets = &mut packets[..count];

        // RFC 9000 §14.1: pad datagrams with ack-eliciting Initial packets to 1200 bytes.
        let needs_padding = packets.iter().flatten().any(|p| p.ptype == PacketType::Initial && p.is_ack_eliciting());
        let total: usize = packets.iter().flatten().map(|p| p.size as usize).sum();
        let target = MIN_INITIAL_DATAGRAM.min(budget);
        if needs_padding && total < target {
            let dcid = self.dcid_len;
            if let Some(Some(last)) = packets.last_mut() {
                pad_packet(last, target - total, dcid);
            }
        }

        if let Some(space) = probe_used {
            self.stats.probes_sent += 1;
            if self.anti_deadlock == Some(space) {
                self.anti_deadlock = None;
            } else {
                self.set_probes_in(space, self.probes_in(space).saturating_sub(1));
            }
        }
        let sent_handshake = packets.iter().flatten().any(|p| p.ptype == PacketType::Handshake);
        let mut it = packets.iter_mut().filter_map(Option::take);
        let first = it.next()?;
        // The handshake path's ID is 0 (draft-ietf-quic-multipath-21 §2); 0 without multipath.
        let dg = Datagram { first, coalesced: it.collect(), path_id: 0 };
        let pkt = self.register_datagram(now, HANDSHAKE_PATH, dg, next_id);
        if self.role == Role::Client && sent_handshake {
            // RFC 9001 §4.9.1: the client discards Initial keys when it first sends a
            // Handshake packet.
            self.discard(now, Space::Initial);
        }
        self.update_amplification(now);
        Some(pkt)
    }

    /// Registers a datagram going out on `path` and wraps it for the network: qlog, the ACK
    /// states whose ACK frames it carries, the statistics, each packet in the path's recovery,
    /// the path's pacer and, once the multipath sender runs, the path's counters and health
    /// (the datagrams of the handshake phase are not counted there).
    fn register_datagram(&mut self, now: Time, path: usize, dg: Datagram, next_id: &mut u64) -> Packet {
        if let Some(q) = &mut self.qlog {
            for p in dg.packets() {
                q.packet_sent(now, p);
            }
        }
        let udp_size = dg.size();
        let payload = Payload::new(dg);
        let dg = payload.get::<Datagram>().expect("just built");
        let app_limited = self.app_limited;
        // The datagram's IP ECN field (RFC 9000 §13.4.2: per path, while validation allows).
        let ect = self.paths[path].recovery.ecn_mark();
        let (mut in_flight_any, mut ack_eliciting_any) = (false, false);
        for (i, p) in dg.packets().enumerate() {
            let space = p.ptype.space();
            let in_flight = p.counts_in_flight();
            let ack_eliciting = p.is_ack_eliciting();
            for f in &p.frames {
                match f {
                    Frame::Ack(a) | Frame::PathAck { ack: a, .. } if a.ecn.is_some() => self.stats.ack_ecn_frames_sent += 1,
                    _ => {}
                }
                match f {
                    Frame::Ack(_) => self.ack_state_mut(space, path).on_ack_sent(),
                    Frame::PathAck { path: id, .. } => {
                        if let Some(q) = self.route_of(*id) {
                            self.paths[q].rx.on_ack_sent();
                        }
                    }
                    _ => {}
                }
            }
            self.stats.packets_sent += 1;
            if !ack_eliciting {
                self.stats.ack_only_packets += 1;
            }
            self.paths[path].recovery.on_packet_sent(
                space,
                SentPacketInfo {
                    pn: p.pn,
                    time_sent: now,
                    size: p.size,
                    ack_eliciting,
                    in_flight,
                    app_limited,
                    ect,
                    content: Some(SentContent { payload: payload.clone(), index: i as u8 }),
                },
            );
            in_flight_any |= in_flight;
            ack_eliciting_any |= ack_eliciting;
        }
        if in_flight_any {
            self.paths[path].pacer.on_sent(udp_size as u64);
        }
        if ack_eliciting_any {
            self.paths[path].ping_on_ack = false;
        }
        if let Some(mp) = self.mp.as_mut().filter(|mp| mp.ready) {
            self.paths[path].last_sent = Some(now);
            let c = &mut self.paths[path].counters;
            c.packets_sent += 1;
            c.bytes_sent += udp_size as u64;
            if ack_eliciting_any {
                mp.health.on_packet_sent(path, now);
            }
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += udp_size as u64;
        self.seq += 1;
        let id = *next_id;
        *next_id += 1;
        let mut pkt = Packet::new(id, self.flow, udp_size + IP_UDP_OVERHEAD, self.seq, now).with_payload(payload);
        pkt.path = path as u8;
        if ect {
            pkt.ecn = Ecn::Ect0;
            self.stats.ect_datagrams_sent += 1;
        }
        pkt
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
        fn earlier(a: Option<Time>, b: Option<Time>) -> Option<Time> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            }
        }
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

/// Grows a packet by about `extra` bytes of PADDING, keeping its size exact (the Length field
/// of a long header may grow with it).
fn pad_packet(p: &mut QuicPacket, extra: usize, dcid_len: usize) {
    let target = p.size as usize + extra;
    let payload: usize = p.frames.iter().map(Frame::wire_size).sum();
    let mut pad = extra;
    for _ in 0..3 {
        let size = header_size(p.ptype, dcid_len, dcid_len, p.pn_len, payload + pad) + payload + pad + AEAD_TAG;
        if size == target || (size < target && pad == extra) {
            break;
        }
        if size > target {
            pad -= (size - target).min(pad);
        } else {
            pad += target - size;
        }
    }
    match p.frames.last_mut() {
        Some(Frame::Padding(n)) => *n += pad as u32,
        _ => p.frames.push(Frame::Padding(pad as u32)),
    }
    let payload: usize = p.frames.iter().map(Frame::wire_size).sum();
    p.size = (header_size(p.ptype, dcid_len, dcid_len, p.pn_len, payload) + payload + AEAD_TAG) as u32;
}

/// The packet with `frames`, padded so that the packet number and payload give the header
/// protection sample its bytes (RFC 9001 §5.4.2), and its size on the wire.
fn sealed_packet(ptype: PacketType, pn: u64, pn_len: u8, mut frames: Vec<Frame>, dcid_len: usize) -> QuicPacket {
    let mut payload: usize = frames.iter().map(Frame::wire_size).sum();
    if payload + (pn_len as usize) < MIN_PN_AND_PAYLOAD {
        let pad = MIN_PN_AND_PAYLOAD - payload - pn_len as usize;
        frames.push(Frame::Padding(pad as u32));
        payload += pad;
    }
    let size = header_size(ptype, dcid_len, dcid_len, pn_len, payload) + payload + AEAD_TAG;
    QuicPacket { ptype, pn, pn_len, frames, size: size as u32 }
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
