//! One end of an MPTCP connection (RFC 8684) as a [`multiconn_transport::Endpoint`]: the
//! subflows, the data-level sender and receiver, the scheduler, failure detection and the
//! application (TLS 1.3 and the workload, as over single-path TCP).
//!
//! * Opening: the client opens subflow 0 (MP_CAPABLE) at the flow's start and, once it is
//!   established, one MP_JOIN subflow on every other path whose interface is up (Linux
//!   in-kernel path manager with one `subflow` endpoint per path). The server accepts a join
//!   once the initial subflow's SYN has arrived (its token exists from then on).
//! * Sending order at each poll: SYN / SYN-ACK of any subflow; then work a subflow already has
//!   (a retransmission, a tail loss probe, data handed to it and held by pacing); then a new
//!   chunk (a reinjection first, else new data inside the connection-level window) on the
//!   subflow the scheduler picks, with copies for the redundant scheduler; then pure ACKs.
//!   A subflow whose host interface is down sends nothing.
//! * Scheduling uses the shared [`Scheduler`]: min-RTT is the Linux default (lowest smoothed
//!   RTT among subflows with window space; a subflow's bytes in flight include data handed to
//!   it and not yet sent), round-robin, redundant, BLEST and ECF as in `crates/multipath`.
//!   `selective_redundant` is refused: it duplicates flagged streams, and an MPTCP connection
//!   carries one byte stream.
//! * Congestion control: one shared [`multiconn_cc::MultipathController`], coupled (LIA, OLIA,
//!   BALIA) when `coupled` is set, else one controller per subflow of the flow's `cc` (what
//!   upstream Linux does).
//! * Failure: the failover profile (`linux-mptcp` by default for TCP: stale after 4 RTOs
//!   without progress) watches each data-carrying subflow: RTOs, acknowledgements of its data,
//!   receptions and interface events. When it says so (potentially failed, or the interface
//!   went down) the subflow's unacknowledged mappings are reinjected on the others (§3.3.6).
//!   The failed subflow keeps its own reliability and retransmits on its path when it can. An
//!   idle subflow (nothing in flight) whose interface comes back is taken back at once, since
//!   no acknowledgement could ever show its progress.
//! * ACKs travel on the subflow they acknowledge; every segment also carries the DATA_ACK and
//!   the connection-level window.
//! * A profile with `link_events = "ignore"` (`linux-mptcp-5.15`: Linux's in-kernel path
//!   manager follows addresses, not link state, reference `multi-operator.md` §6.2) hides the
//!   interface events: a subflow whose link is down keeps sending into it, backs its RTO off,
//!   goes stale by the failover rules and comes back when a retransmission gets through.

use std::collections::VecDeque;

use multiconn_cc::coupled::lock;
use multiconn_cc::{build_paths, CcConfig, PacerConfig, RttEstimator, SharedMultipath};
use multiconn_core::{Dur, FlowId, Packet, Payload, Time, TransportSample};
use multiconn_multipath::{new_scheduler, Content, Decision, HealthConfig, PathHealthSet, PathStatus, PathView, Reaction, Request, Scheduler, SchedulerKind};
use multiconn_transport::profile::{LinkEvents, RtoRule, TcpKnobs, TransportKind};
use multiconn_transport::{AckPath, AppEvent, ConnectionParams, EcnStats, Endpoint, Knob, MultipathParams, Observation, Observations, PathStats, Profile, ProfileError, Role, TransportError};

use super::data_recv::DataReceiver;
use super::data_send::{DataChunk, DataSender};
use super::option::{MptcpSegment, DSS_FULL};
use super::subflow::{Subflow, SubflowConfig};
use crate::app::App;
use crate::autotune::RcvBuf;
use crate::connection::wscale_for;
use crate::handshake::State;
use crate::receiver::ReceiverConfig;
use crate::rto::RtoTimer;
use crate::segment::mss_for;
use crate::sender::SenderConfig;

/// Most subflows a connection opens (the scenario's path limit).
pub const MAX_SUBFLOWS: u8 = 8;

/// Why an MPTCP connection cannot be built from its parameters.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MptcpError {
    /// The profile does not offer the congestion controller.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The connection has no multipath parameters.
    #[error("the connection has no multipath parameters; build a single-path TcpEndpoint instead")]
    NotMultipath,
    /// The number of paths is 0 or above [`MAX_SUBFLOWS`].
    #[error("an MPTCP connection has 1 to {MAX_SUBFLOWS} subflows (one per path), got {0} paths")]
    Paths(u8),
    /// A stream-redundant scheduler, which has no meaning for one byte stream.
    #[error("\"{}\" duplicates the streams flagged redundant, and an MPTCP connection carries one byte stream; use \"redundant\" to duplicate everything, or \"minrtt\", \"roundrobin\", \"blest\", \"ecf\"", .0.name())]
    Scheduler(SchedulerKind),
    /// `ack_path` is not `same`: subflows acknowledge their own segments.
    #[error("an MPTCP subflow acknowledges its own segments (only the DATA_ACK is connection-level): ack_path must be \"same\" for a tcp flow")]
    AckPath,
    /// A scheduler that only a Multipath QUIC stack runs.
    #[error("\"{}\" is {}'s Multipath QUIC scheduler; an MPTCP connection takes \"minrtt\", \"roundrobin\", \"redundant\", \"blest\" or \"ecf\"", .0.name(), .0.quic_stack().unwrap_or("a"))]
    QuicScheduler(SchedulerKind),
    /// The packet size leaves no room for data after the IP, TCP and MPTCP headers.
    #[error("packets of {0} bytes leave no room for data after the IP, TCP and MPTCP headers")]
    PacketSize(u32),
    /// A scalable controller (Prague), which needs Accurate ECN; the subflows negotiate
    /// RFC 3168 at most.
    #[error("\"{0}\" needs Accurate ECN (RFC 9768), which MPTCP subflows do not negotiate (RFC 3168 at most); give another controller")]
    ScalableCc(&'static str),
}

impl From<MptcpError> for TransportError {
    fn from(e: MptcpError) -> TransportError {
        let knob = match e {
            MptcpError::Profile(_) | MptcpError::ScalableCc(_) => Knob::Cc,
            MptcpError::NotMultipath | MptcpError::Paths(_) => Knob::Paths,
            MptcpError::Scheduler(_) | MptcpError::QuicScheduler(_) => Knob::Scheduler,
            MptcpError::AckPath => Knob::AckPath,
            MptcpError::PacketSize(_) => Knob::PacketSize,
        };
        TransportError::new(knob, e.to_string())
    }
}

/// Connection-level counters (see [`MptcpEndpoint::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MptcpStats {
    /// Chunks handed to a subflow as reinjections.
    pub reinjected_chunks: u64,
    /// Reinjection events (a subflow failed or its interface went down with data outstanding).
    pub reinjection_events: u64,
    /// Copies sent by the redundant scheduler.
    pub redundant_copies: u64,
    /// Scheduler answers that held data back (`Wait`, `Blocked`, `NoPath`) while data waited.
    pub scheduler_holds: u64,
    /// Packets for a path the connection does not have, or without an MPTCP segment.
    pub invalid_packets: u64,
}

/// One end of a Multipath TCP connection (RFC 8684): one subflow per path, a scheduler, a
/// multipath congestion controller and the connection-level data sequence space, as a
/// [`multiconn_transport::Endpoint`].
pub struct MptcpEndpoint {
    role: Role,
    flow: FlowId,
    start: Time,
    mss: u64,
    subflows: Vec<Subflow>,
    cc: SharedMultipath,
    scheduler: Box<dyn Scheduler>,
    health: PathHealthSet,
    dsend: DataSender,
    drecv: DataReceiver,
    app: App,
    /// Bytes the application still wants to write (saturates for an endless download).
    pending_write: u64,
    /// Copies of the redundant scheduler, sent by the next polls.
    pending: VecDeque<Packet>,
    /// MP_CAPABLE completed at this end.
    established: bool,
    /// The profile asked for ECN (the summary reports ECN only then).
    ecn: bool,
    pkt_seq: u64,
    stats: MptcpStats,
    scratch: Vec<(u64, u64)>,
    /// Redundant scheduler: per subflow, the data sequence number up to which it has carried
    /// the stream.
    cursors: Vec<u64>,
    /// Whether interface events reach the subflows (the profile's `multipath.link_events`).
    link_events: LinkEvents,
    /// What an invariant checker watching this end sees (the bytes handed to the application).
    observations: Observations,
}

impl std::fmt::Debug for MptcpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MptcpEndpoint")
            .field("role", &self.role)
            .field("subflows", &self.subflows.len())
            .field("data_una", &self.dsend.una())
            .field("data_nxt", &self.dsend.nxt())
            .field("data_rcv_nxt", &self.drecv.rcv_nxt())
            .finish()
    }
}

impl MptcpEndpoint {
    /// One end of the MPTCP connection `params` describes (`params.multipath` must be set).
    /// Whether `params` make an MPTCP connection (the rules [`new`](Self::new) applies),
    /// without building it.
    pub fn check(params: &ConnectionParams) -> Result<(), MptcpError> {
        Self::settings(params).map(|_| ())
    }

    /// The rules of an MPTCP connection: one subflow per path, a scheduler and an ACK path
    /// that fit one byte stream, room for data after the headers, a controller the profile
    /// offers. Returns the multipath parameters, TCP knobs, subflow MSS and controller settings.
    fn settings(params: &ConnectionParams) -> Result<(&MultipathParams, TcpKnobs, u64, CcConfig), MptcpError> {
        let mp = params.multipath.as_ref().ok_or(MptcpError::NotMultipath)?;
        if mp.paths == 0 || mp.paths > MAX_SUBFLOWS {
            return Err(MptcpError::Paths(mp.paths));
        }
        if mp.scheduler == SchedulerKind::SelectiveRedundant {
            return Err(MptcpError::Scheduler(mp.scheduler));
        }
        if mp.scheduler.quic_stack().is_some() {
            return Err(MptcpError::QuicScheduler(mp.scheduler));
        }
        if mp.ack_path != AckPath::Same {
            return Err(MptcpError::AckPath);
        }
        let profile = &params.profile;
        let knobs: TcpKnobs = match &profile.tcp {
            Some(k) => k.clone(),
            None => Profile::default_for(TransportKind::Tcp).tcp.expect("the default TCP profile has TCP knobs"),
        };
        let tcp_mss = u64::from(mss_for(params.max_packet_size, knobs.timestamps, profile.packet.max_payload));
        let mss = tcp_mss.saturating_sub(u64::from(DSS_FULL));
        if mss == 0 {
            return Err(MptcpError::PacketSize(params.max_packet_size));
        }
        let cc_cfg: CcConfig = params.cc_config(mss)?;
        if multiconn_cc::build(&cc_cfg).scalable_ecn() {
            return Err(MptcpError::ScalableCc(cc_cfg.kind.name()));
        }
        Ok((mp, knobs, mss, cc_cfg))
    }

    /// One end of the connection `params` describes, with one subflow per path; fails if the
    /// parameters are not those of an MPTCP connection the model can build.
    pub fn new(role: Role, params: &ConnectionParams) -> Result<MptcpEndpoint, MptcpError> {
        let (mp, knobs, mss, cc_cfg) = Self::settings(params)?;
        let profile = &params.profile;
        let rec = &profile.recovery;
        let timer = match rec.rto_rule {
            RtoRule::Rfc6298 => RtoTimer::new(rec.granularity, rec.min_rto, rec.max_rto, rec.initial_rto),
            // As the TCP model: Linux floors the variance term at min_rto.
            RtoRule::Linux => RtoTimer::new(rec.min_rto.max(rec.granularity), Dur::ZERO, rec.max_rto, rec.initial_rto),
        };
        let coupled = mp.coupled;
        let cfg = SubflowConfig {
            role,
            mss,
            sack: knobs.sack,
            timestamps: knobs.timestamps,
            sender: SenderConfig::from_profile(mss, &knobs, rec),
            receiver: ReceiverConfig {
                mss,
                ack_threshold: profile.ack.ack_eliciting_threshold,
                max_ack_delay: profile.ack.max_ack_delay,
                immediate_ack_on_reorder: profile.ack.immediate_ack_on_reorder,
                sack: knobs.sack,
                timestamps: knobs.timestamps,
                wscale: 0,
            },
            rtt: RttEstimator::new(rec.initial_rtt, rec.rttvar_rule),
            timer,
            ecn: profile.ecn,
            pacer: PacerConfig {
                enabled: profile.pacing.enabled,
                factor: profile.pacing.factor,
                burst: profile.pacing.burst,
                max_datagram_size: mss,
                initial_window: cc_cfg.initial_window,
            },
        };
        let (cc, views) = build_paths(coupled, &vec![cc_cfg.clone(); usize::from(mp.paths)]);
        let subflows = views.into_iter().enumerate().map(|(id, view)| Subflow::new(id, &cfg, view)).collect();
        let conn_wscale = wscale_for(knobs.rmem[2].max(knobs.rmem[1]));
        let buf = RcvBuf::new(knobs.rmem, knobs.autotune, knobs.adv_win_fraction, mss);
        Ok(MptcpEndpoint {
            role,
            flow: params.flow,
            start: params.start,
            mss,
            subflows,
            cc,
            scheduler: new_scheduler(mp.scheduler, mp.options),
            health: PathHealthSet::new(HealthConfig::new(mp.failover)),
            dsend: DataSender::new(),
            drecv: DataReceiver::new(buf, conn_wscale),
            app: App::new(role, params.exchanges()),
            pending_write: 0,
            pending: VecDeque::new(),
            established: false,
            ecn: profile.ecn,
            pkt_seq: 0,
            stats: MptcpStats::default(),
            scratch: Vec::new(),
            cursors: vec![0; usize::from(mp.paths)],
            link_events: profile.multipath.as_ref().map_or_else(Default::default, |k| k.link_events),
            observations: Observations::default(),
        })
    }

    /// Client or server.
    pub fn role(&self) -> Role {
        self.role
    }
    /// Payload bytes per segment.
    pub fn mss(&self) -> u64 {
        self.mss
    }
    /// The subflows, indexed by path.
    pub fn subflows(&self) -> &[Subflow] {
        &self.subflows
    }
    /// The connection-level sending side.
    pub fn data_sender(&self) -> &DataSender {
        &self.dsend
    }
    /// The connection-level receiving side.
    pub fn data_receiver(&self) -> &DataReceiver {
        &self.drecv
    }
    /// Connection-level counters so far.
    pub fn stats(&self) -> MptcpStats {
        self.stats
    }
    /// The failover profile's verdict on subflow `id` (`None` before it carries data).
    pub fn health(&self, id: usize) -> Option<PathStatus> {
        self.health.status(id)
    }
    /// Congestion window of subflow `id` (its sender's: the controller's, or a proportional
    /// rate reduction's).
    pub fn cwnd(&self, id: usize) -> u64 {
        self.subflows[id].sender().window()
    }
    /// MP_CAPABLE completed at this end.
    pub fn established(&self) -> bool {
        self.established
    }

    /// Bytes held out of order on the subflows (they occupy the shared receive buffer too).
    fn held_on_subflows(&self) -> u64 {
        self.subflows.iter().map(|s| s.receiver().ooo_bytes()).sum()
    }

    fn open_due(&mut self, now: Time) {
        if self.role == Role::Client && now >= self.start && self.subflows[0].state() == State::Idle {
            self.subflows[0].handshake_mut().open();
        }
    }

    /// Client: opens the joins whose interface is up once the initial subflow is established.
    fn open_joins(&mut self) {
        if self.role != Role::Client || !self.established {
            return;
        }
        for s in self.subflows.iter_mut().skip(1) {
            if s.interface_up() && s.state() == State::Idle {
                s.handshake_mut().open();
            }
        }
    }

    fn fill_send_buffer(&mut self) {
        let sndbuf: u64 = self.subflows.iter().filter(|s| s.established()).map(|s| s.sender().sndbuf()).sum();
        let n = self.pending_write.min(self.dsend.writable(sndbuf));
        if n > 0 {
            self.dsend.write(n);
            self.pending_write -= n;
        }
    }

    fn react(&mut self, id: usize, r: Reaction) {
        if r.requeue_in_flight {
            self.reinject_from(id);
        }
    }

    /// Queues the data subflow `id` still owes for the other subflows.
    fn reinject_from(&mut self, id: usize) {
        let ranges = self.subflows[id].unacknowledged(self.dsend.una());
        if !ranges.is_empty() {
            self.stats.reinjection_events += 1;
        }
        for (a, b) in ranges {
            self.dsend.queue_reinjection(a, b);
        }
    }

    /// Subflow `id`'s handshake completed at this end.
    fn on_subflow_established(&mut self, now: Time, id: usize) {
        self.subflows[id].on_established(now);
        let joined = self.subflows[id].is_join();
        if !joined && !self.established {
            self.established = true;
            self.drecv.start(now);
            let w = self.app.on_established();
            self.pending_write = self.pending_write.saturating_add(w);
            self.fill_send_buffer();
            self.open_joins();
        }
        match (self.role, joined) {
            // The initiator of a join waits for the fourth ACK.
            (Role::Client, true) => {}
            (Role::Server, true) => {
                // The fourth ACK acknowledges the third one (RFC 8684 §3.2).
                self.subflows[id].receiver_mut().force_ack();
                self.make_ready(now, id);
            }
            _ => self.make_ready(now, id),
        }
    }

    fn make_ready(&mut self, now: Time, id: usize) {
        if !self.subflows[id].ready() {
            self.subflows[id].set_ready();
            self.health.add_path(id, now);
        }
    }

    fn on_syn(&mut self, now: Time, id: usize, seg: &MptcpSegment) {
        use super::option::HandshakeOption as H;
        let state = self.subflows[id].state();
        let initial_open = self.subflows[0].state() != State::Idle;
        match (self.role, state, seg.tcp.flags.ack, seg.handshake) {
            (Role::Server, State::Idle, false, Some(H::CapableSyn)) if id == 0 => {
                self.accept_syn(id, seg);
                self.dsend.set_initial_window(u64::from(seg.tcp.window));
            }
            (Role::Server, State::Idle, false, Some(H::JoinSyn)) if id > 0 && initial_open => self.accept_syn(id, seg),
            (Role::Server, State::SynReceived, false, _) => self.subflows[id].handshake_mut().on_syn(&seg.tcp),
            (Role::Client, State::SynSent, true, Some(H::CapableSynAck | H::JoinSynAck)) if seg.tcp.ack == 1 => {
                let s = &mut self.subflows[id];
                s.handshake_mut().on_syn_ack(&seg.tcp);
                s.negotiate_with_peer();
                if id == 0 {
                    self.dsend.set_initial_window(u64::from(seg.tcp.window));
                }
                self.subflows[id].on_syn_ack_seen();
                self.on_subflow_established(now, id);
            }
            (Role::Client, State::Established, true, _) => self.subflows[id].on_syn_ack_seen(),
            (_, State::Established, _, _) => self.subflows[id].receiver_mut().force_ack(),
            _ => self.stats.invalid_packets += 1,
        }
    }

    fn accept_syn(&mut self, id: usize, seg: &MptcpSegment) {
        let s = &mut self.subflows[id];
        s.handshake_mut().on_syn(&seg.tcp);
        s.negotiate_with_peer();
    }

    /// An arriving segment of established subflow `id`.
    fn process(&mut self, now: Time, id: usize, seg: &MptcpSegment) {
        if self.role == Role::Client && !self.subflows[id].ready() && seg.tcp.flags.ack {
            // The fourth ACK of a join, or any later segment.
            self.make_ready(now, id);
        }
        let mut ranges = std::mem::take(&mut self.scratch);
        ranges.clear();
        self.subflows[id].receive(now, seg, &mut ranges);
        if let Some(rtt) = self.subflows.iter().filter_map(Subflow::receiver_rtt).max() {
            self.drecv.set_receiver_rtt(rtt);
        }
        let mut in_order = 0;
        for &(dsn, len) in &ranges {
            in_order += self.drecv.on_data(dsn, len).in_order;
        }
        self.scratch = ranges;
        if in_order > 0 {
            let n = self.drecv.read(now, u64::MAX);
            let to = self.drecv.copied();
            self.observations.note(Observation::Delivered { stream: 0, from: to - n, to });
            let w = self.app.on_received(to);
            self.pending_write = self.pending_write.saturating_add(w);
            if self.drecv.window_update_due(self.held_on_subflows()) {
                self.subflows[id].receiver_mut().force_ack();
            }
        }
        if self.subflows[id].on_ack(now, seg) {
            let r = self.health.on_ack_received(id, now);
            self.react(id, r);
        }
        if let Some(da) = seg.data_ack {
            self.dsend.on_data_ack(da.ack, da.window);
        }
        self.fill_send_buffer();
    }

    fn packet(&mut self, now: Time, next_id: &mut u64, id: usize, seg: MptcpSegment) -> Packet {
        let size = seg.wire_size();
        let ecn = seg.tcp.ip_ecn;
        self.subflows[id].on_sent(size, seg.tcp.len > 0, ecn);
        if seg.tcp.len > 0 {
            let r = self.health.on_packet_sent(id, now);
            self.react(id, r);
        }
        let mut p = Packet::new(*next_id, self.flow, size, self.pkt_seq, now).with_payload(Payload::with_header(seg)).with_ecn(ecn);
        p.path = id as u8;
        *next_id += 1;
        self.pkt_seq += 1;
        p
    }

    /// A data segment of subflow `id`, with its mapping and the connection's DATA_ACK.
    fn data_packet(&mut self, now: Time, next_id: &mut u64, id: usize, seq: u64, len: u32) -> Packet {
        let da = self.drecv.data_ack(self.held_on_subflows());
        let seg = self.subflows[id].build(now, seq, len, da);
        self.packet(now, next_id, id, seg)
    }

    fn can_send_on(&self, id: usize) -> bool {
        let s = &self.subflows[id];
        s.established() && s.interface_up()
    }

    fn path_views(&self) -> Vec<PathView> {
        self.subflows
            .iter()
            .map(|s| {
                let id = s.id();
                let rtt = s.sender().rtt();
                let sampled = rtt.has_sample();
                PathView {
                    id,
                    usable: s.ready() && s.interface_up() && self.health.usable(id),
                    backup: false,
                    srtt: rtt.smoothed(),
                    rttvar: rtt.rttvar(),
                    min_rtt: if sampled { rtt.min() } else { rtt.smoothed() },
                    cwnd: s.sender().window(),
                    bytes_in_flight: s.bytes_in_flight(),
                    mss: s.mss(),
                    has_sent_anything: s.counters.packets_sent > 0,
                    rtt_sampled: sampled,
                    packets_sent: s.counters.packets_sent,
                    in_slow_start: s.sender().controller().ssthresh().is_none(),
                    retransmissions_outstanding: s.sender().in_recovery(),
                    // Read only by picoquic's scheduler, which MPTCP refuses.
                    last_sent: None,
                    pacing_ready: true,
                }
            })
            .collect()
    }

    /// Nothing to send, or the connection-level window is closed: the idle subflows are not
    /// limited by their congestion windows (their senders note it for the controllers).
    fn mark_app_limited(&mut self, now: Time) {
        for id in 0..self.subflows.len() {
            if self.can_send_on(id) && self.subflows[id].ready() && !self.subflows[id].sender().has_pending_work() {
                let _ = self.subflows[id].poll_data(now);
            }
        }
    }

    /// New data or a reinjection on the subflow the scheduler picks.
    fn schedule(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if self.scheduler.kind() == SchedulerKind::Redundant {
            return self.schedule_redundant(now, next_id);
        }
        let Some(chunk) = self.dsend.peek(self.mss) else {
            self.mark_app_limited(now);
            return None;
        };
        let views = self.path_views();
        let req = Request {
            now,
            content: Content::STREAM,
            queued_bytes: self.dsend.queued(),
            send_window: self.dsend.send_window(),
            retransmission: false,
        };
        let (path, copies) = match self.scheduler.decide(&views, &req) {
            Decision::Send { path, copies, .. } => (path, copies),
            Decision::Wait { .. } | Decision::Blocked | Decision::NoPath => {
                self.stats.scheduler_holds += 1;
                return None;
            }
        };
        if path >= self.subflows.len() || self.subflows[path].sender().has_pending_work() {
            // The chosen subflow still holds data back (pacing): ask again when it sends.
            return None;
        }
        self.dsend.commit(&chunk);
        if chunk.reinjection {
            self.stats.reinjected_chunks += 1;
        }
        self.subflows[path].assign(chunk.dsn, chunk.len);
        let first = self.subflows[path].poll_data(now).map(|d| self.data_packet(now, next_id, path, d.seq, d.len));
        // The copies follow the original, one per poll.
        for c in copies {
            if c < self.subflows.len() && c != path && !self.subflows[c].sender().has_pending_work() {
                self.subflows[c].assign(chunk.dsn, chunk.len);
                if let Some(d) = self.subflows[c].poll_data(now) {
                    let p = self.data_packet(now, next_id, c, d.seq, d.len);
                    self.pending.push_back(p);
                    self.stats.redundant_copies += 1;
                }
            }
        }
        first.or_else(|| self.pending.pop_front())
    }

    /// The redundant scheduler as Linux runs it (`mptcp_redundant.c`): every usable subflow
    /// with window space sends the oldest data it has not carried yet, fastest subflow first;
    /// data already acknowledged at the data level is skipped. Copies therefore do not need
    /// two windows open at the same instant, and a slow subflow never owes more than the
    /// unacknowledged data. Reinjection is moot: every subflow carries everything.
    fn schedule_redundant(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        self.dsend.drop_reinjections();
        let mut order: Vec<(Dur, usize)> =
            self.path_views().iter().filter(|v| v.usable && v.has_window_space()).map(|v| (v.srtt, v.id)).collect();
        order.sort();
        for (_, id) in order {
            if self.subflows[id].sender().has_pending_work() {
                continue;
            }
            let from = self.cursors[id].max(self.dsend.una());
            let chunk = if from < self.dsend.nxt() {
                self.stats.redundant_copies += 1;
                DataChunk { dsn: from, len: (self.dsend.nxt() - from).min(self.mss), reinjection: false }
            } else {
                let Some(c) = self.dsend.peek(self.mss) else { continue };
                self.dsend.commit(&c);
                c
            };
            self.cursors[id] = chunk.dsn + chunk.len;
            self.subflows[id].assign(chunk.dsn, chunk.len);
            if let Some(d) = self.subflows[id].poll_data(now) {
                return Some(self.data_packet(now, next_id, id, d.seq, d.len));
            }
        }
        if self.dsend.queued() == 0 {
            self.mark_app_limited(now);
        }
        None
    }
}

impl Endpoint for MptcpEndpoint {
    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        let id = usize::from(pkt.path);
        let Some(seg) = pkt.payload.as_ref().and_then(|p| p.get::<MptcpSegment>()) else {
            self.stats.invalid_packets += 1;
            return;
        };
        if id >= self.subflows.len() {
            self.stats.invalid_packets += 1;
            return;
        }
        self.subflows[id].on_received(pkt.size, pkt.ecn);
        // The segment as the receiver sees it: with the ECN field the network delivered.
        let marked;
        let seg = if seg.tcp.ip_ecn == pkt.ecn {
            seg
        } else {
            let mut m = seg.clone();
            m.tcp.ip_ecn = pkt.ecn;
            marked = m;
            &marked
        };
        let r = self.health.on_packet_received(id, now);
        self.react(id, r);
        if seg.tcp.flags.syn {
            self.on_syn(now, id, seg);
            return;
        }
        match self.subflows[id].state() {
            State::Established => self.process(now, id, seg),
            State::SynReceived if seg.tcp.flags.ack && seg.tcp.ack == 1 => {
                self.on_subflow_established(now, id);
                self.process(now, id, seg);
            }
            _ => self.stats.invalid_packets += 1,
        }
    }

    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if let Some(p) = self.pending.pop_front() {
            return Some(p);
        }
        self.open_due(now);
        let n = self.subflows.len();
        for id in 0..n {
            let s = &self.subflows[id];
            if s.interface_up() && s.control_due() {
                let window = self.drecv.syn_window(0);
                let seg = self.subflows[id].build_syn(now, window);
                self.subflows[id].on_syn_sent(now);
                return Some(self.packet(now, next_id, id, seg));
            }
        }
        if !self.established {
            return None;
        }
        for id in 0..n {
            if self.can_send_on(id) && self.subflows[id].sender().has_pending_work() {
                if let Some(d) = self.subflows[id].poll_data(now) {
                    self.fill_send_buffer();
                    return Some(self.data_packet(now, next_id, id, d.seq, d.len));
                }
            }
        }
        if let Some(p) = self.schedule(now, next_id) {
            self.fill_send_buffer();
            return Some(p);
        }
        for id in 0..n {
            if self.can_send_on(id) && self.subflows[id].ack_due() {
                let seq = self.subflows[id].sender().scoreboard().snd_nxt();
                return Some(self.data_packet(now, next_id, id, seq, 0));
            }
        }
        None
    }

    fn poll_timeout(&self) -> Option<Time> {
        let mut t = (self.role == Role::Client && self.subflows[0].state() == State::Idle).then_some(self.start);
        for s in &self.subflows {
            t = Time::earliest(t, s_deadline(s));
        }
        Time::earliest(t, self.health.poll_timeout())
    }

    fn handle_timeout(&mut self, now: Time) {
        self.open_due(now);
        for id in 0..self.subflows.len() {
            let s = &mut self.subflows[id];
            s.handshake_mut().on_timeout(now);
            if !s.established() {
                continue;
            }
            s.receiver_mut().on_timeout(now);
            let before = s.sender().timeouts();
            s.sender_mut().on_timeout(now);
            if s.sender().timeouts() > before {
                let r = self.health.on_timeout(id, now);
                self.react(id, r);
            }
        }
        for (id, r) in self.health.on_tick(now) {
            self.react(id, r);
        }
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.app.poll_event()
    }

    fn sample(&self) -> TransportSample {
        let mut t = TransportSample::default();
        let mut srtt: Option<Dur> = None;
        for s in self.subflows.iter().filter(|s| s.established()) {
            let snd = s.sender();
            t.cwnd += snd.window();
            t.bytes_in_flight += snd.scoreboard().pipe();
            t.retransmissions += snd.retransmissions();
            t.spurious_retransmissions += snd.spurious_retransmissions();
            t.lost += snd.lost();
            if snd.rtt().has_sample() {
                let r = snd.rtt().smoothed();
                srtt = Some(srtt.map_or(r, |x| x.min(r)));
            }
        }
        t.srtt = srtt.unwrap_or(Dur::ZERO);
        t
    }

    fn cc_state(&self) -> &'static str {
        lock(&self.cc).state(0).name()
    }

    fn on_path_status(&mut self, now: Time, path: u8, up: bool) {
        let id = usize::from(path);
        if self.link_events == LinkEvents::Ignore || id >= self.subflows.len() || self.subflows[id].interface_up() == up {
            return;
        }
        self.subflows[id].set_interface_up(up);
        if up {
            let r = self.health.on_link_up_hint(id, now);
            self.react(id, r);
            if self.health.status(id) == Some(PathStatus::PotentiallyFailed) && self.subflows[id].sender().scoreboard().outstanding() == 0 {
                let r = self.health.on_ack_received(id, now);
                self.react(id, r);
                let r = self.health.on_packet_received(id, now);
                self.react(id, r);
            }
            self.open_joins();
        } else {
            let r = self.health.on_link_down_hint(id, now);
            // Reinjected even before the subflow carries data on its own (nothing to resend).
            self.react(id, Reaction { requeue_in_flight: true, ..r });
        }
    }

    fn observe(&mut self, on: bool) {
        self.observations.watch(on);
    }

    fn ecn_stats(&self) -> Option<EcnStats> {
        if !self.ecn {
            return None;
        }
        // Every subflow that has opened agrees or not on its own; the connection reports
        // "negotiated" if subflow 0 did.
        let state = if self.subflows[0].ecn() { "negotiated" } else { "not_negotiated" }.to_string();
        let mut e = EcnStats { state, ..EcnStats::default() };
        for s in &self.subflows {
            e.ect_sent += s.counters.ect_sent;
            e.ce_received += s.counters.ce_received;
            e.echoes_sent += s.receiver().ece_acks();
            e.echoes_received += s.sender().ece_acks();
            e.congestion_responses += s.sender().ecn_responses();
        }
        Some(e)
    }

    fn drain_observations(&mut self, out: &mut Vec<Observation>) {
        self.observations.drain(out);
    }

    /// One entry per established subflow (the path's sender state).
    fn path_samples(&self, out: &mut Vec<(u8, TransportSample)>) {
        for s in self.subflows.iter().filter(|s| s.established()) {
            let snd = s.sender();
            let rtt = snd.rtt();
            let sample = TransportSample {
                cwnd: snd.window(),
                bytes_in_flight: snd.scoreboard().pipe(),
                srtt: if rtt.has_sample() { rtt.smoothed() } else { Dur::ZERO },
                retransmissions: snd.retransmissions(),
                spurious_retransmissions: snd.spurious_retransmissions(),
                lost: snd.lost(),
            };
            out.push((s.id() as u8, sample));
        }
    }

    fn path_stats(&self, out: &mut Vec<PathStats>) {
        for s in &self.subflows {
            if s.state() == State::Idle && s.counters.packets_received == 0 {
                continue;
            }
            let status = if !s.interface_up() {
                "down"
            } else if !s.established() {
                "connecting"
            } else if !s.ready() {
                "joining"
            } else {
                match self.health.status(s.id()) {
                    Some(PathStatus::Active) | None => "active",
                    Some(PathStatus::PotentiallyFailed) => "potentially_failed",
                    Some(PathStatus::Failed) => "failed",
                }
            };
            let rtt = s.sender().rtt();
            out.push(PathStats {
                path: s.id() as u8,
                // One subflow per path for the whole connection; subflows have no path IDs.
                path_id: None,
                path_ids_opened: 1,
                packets_sent: s.counters.packets_sent,
                bytes_sent: s.counters.bytes_sent,
                packets_received: s.counters.packets_received,
                bytes_received: s.counters.bytes_received,
                lost: s.sender().lost(),
                srtt: if rtt.has_sample() { rtt.smoothed() } else { Dur::ZERO },
                cwnd: s.sender().window(),
                status,
            });
        }
    }
}

/// The earliest deadline of a subflow: handshake retransmission, delayed ACK, its sender's
/// timers.
fn s_deadline(s: &Subflow) -> Option<Time> {
    let hs = s.handshake_deadline();
    if !s.established() {
        return hs;
    }
    Time::earliest(hs, Time::earliest(s.receiver().delack_deadline(), s.sender().next_timeout()))
}

