//! One MPTCP subflow (RFC 8684 §2.2): a TCP connection on one path with its own sequence space,
//! three-way handshake, SACK/RACK-TLP loss recovery, RTO and RTT estimator — the single-path
//! model's [`Handshake`], [`Sender`] and [`Receiver`] — plus the DSS mappings of its data
//! ([`TxMap`], [`RxMap`]) and the MPTCP option each of its segments carries.
//!
//! * Handshake options: subflow 0 opens with MP_CAPABLE (§3.1), the others with MP_JOIN (§3.2).
//!   The initiator's third ACK carries the MP_CAPABLE or MP_JOIN ACK option; a repeated SYN-ACK
//!   makes it go again.
//! * Readiness: the initial subflow carries data once established at either end. A joined
//!   subflow carries data at the responder once the third ACK arrived, at the initiator once the
//!   responder acknowledged that third ACK (the "fourth ACK", §3.2), so its HMAC was accepted.
//! * Reliability stays on the subflow: a lost segment is retransmitted on it with the same
//!   mapping. The subflow's own receive window never binds (see [`super::option`]): the
//!   connection-level window decides what is sent.
//! * ECN (RFC 3168 §6.1, as single-path TCP): each subflow's handshake agrees on it, its data
//!   segments go ECT(0) and its sender reacts to ECE on its own window (RFC 8684 leaves ECN
//!   to the subflows).

use multiconn_cc::{Controller, Pacer, PacerConfig, RttEstimator};
use multiconn_core::{Dur, Ecn, Time};
use multiconn_transport::Role;

use super::dss::{RxMap, TxMap};
use super::option::{mptcp_options_size, sack_blocks_that_fit, DataAck, HandshakeOption, MptcpSegment};
use crate::autotune::RcvBuf;
use crate::handshake::{Handshake, PeerOptions, State};
use crate::receiver::{Receiver, ReceiverConfig};
use crate::rto::RtoTimer;
use crate::segment::{ts_from_time, Flags, SackBlocks, Segment, Timestamps};
use crate::sender::{DataSend, Sender, SenderConfig};

/// Window scale a subflow offers: its own window is left open (14 with a buffer that never
/// fills), the connection-level window travels in the DATA_ACK.
pub const SUBFLOW_WSCALE: u8 = 14;
/// The subflow receive buffer: large enough never to limit (data moves to the connection-level
/// buffer as soon as it is in order on the subflow).
const SUBFLOW_RCVBUF: u64 = 1 << 40;

/// What every subflow of a connection shares.
#[derive(Clone, Debug)]
pub struct SubflowConfig {
    /// Client (initiator) or server.
    pub role: Role,
    /// Payload bytes per segment: the TCP MSS minus the DSS option.
    pub mss: u64,
    /// Offer SACK in the handshake (profile `sack`).
    pub sack: bool,
    /// Offer timestamps in the handshake (profile `timestamps`).
    pub timestamps: bool,
    /// Settings of each subflow's sender.
    pub sender: SenderConfig,
    /// Settings of each subflow's receiver (its window scale is replaced by [`SUBFLOW_WSCALE`]).
    pub receiver: ReceiverConfig,
    /// Each subflow's RTT estimator before its first sample.
    pub rtt: RttEstimator,
    /// The RTO timer (also the handshake's retransmission timer).
    pub timer: RtoTimer,
    /// Each subflow's pacer, adjusted to its controller.
    pub pacer: PacerConfig,
    /// Ask for ECN in the handshake, agree to it (profile `ecn`).
    pub ecn: bool,
}

/// Per-subflow counters for [`multiconn_transport::PathStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets sent on the subflow.
    pub packets_sent: u64,
    /// Bytes sent on the wire (IP and TCP headers included).
    pub bytes_sent: u64,
    /// Packets received on the subflow.
    pub packets_received: u64,
    /// Bytes received on the wire (IP and TCP headers included).
    pub bytes_received: u64,
    /// Data segments sent (first transmissions and retransmissions).
    pub data_segments_sent: u64,
    /// Segments sent ECT(0).
    pub ect_sent: u64,
    /// Segments that arrived CE-marked.
    pub ce_received: u64,
    /// Segments whose DSS mapping could not be built or did not match the segment.
    pub mapping_errors: u64,
}

/// One MPTCP subflow (see the module header).
#[derive(Debug)]
pub struct Subflow {
    id: usize,
    role: Role,
    join: bool,
    mss: u64,
    sack: bool,
    timestamps: bool,
    hs: Handshake,
    sender: Sender,
    receiver: Receiver,
    tx_map: TxMap,
    rx_map: RxMap,
    /// Initiator: the next segment carries the third-ACK handshake option.
    third_ack_pending: bool,
    ready: bool,
    interface_up: bool,
    /// ECN wanted until the handshake, then agreed.
    ecn: bool,
    /// ECN marks (ECT, CWR) of the data segment the sender handed out last.
    marks: (bool, bool),
    /// Packet, byte and ECN counters.
    pub counters: Counters,
}

impl Subflow {
    /// Subflow `id` (0: the initial, MP_CAPABLE subflow) with the controller handle `cc`.
    pub fn new(id: usize, cfg: &SubflowConfig, cc: Box<dyn Controller>) -> Subflow {
        let buf = RcvBuf::new([SUBFLOW_RCVBUF; 3], false, 0.5, cfg.mss);
        let rcv_cfg = ReceiverConfig { wscale: SUBFLOW_WSCALE, ..cfg.receiver.clone() };
        let pacer = Pacer::new(cfg.pacer.for_controller(cc.as_ref()));
        Subflow {
            id,
            role: cfg.role,
            join: id > 0,
            mss: cfg.mss,
            sack: cfg.sack,
            timestamps: cfg.timestamps,
            hs: Handshake::new(cfg.role, cfg.timer.clone()),
            sender: Sender::new(cfg.sender.clone(), 1, cfg.rtt.clone(), cfg.timer.clone(), cc, pacer),
            receiver: Receiver::new(rcv_cfg, buf, 1),
            tx_map: TxMap::new(),
            rx_map: RxMap::new(),
            third_ack_pending: false,
            ready: false,
            interface_up: true,
            ecn: cfg.ecn,
            marks: (false, false),
            counters: Counters::default(),
        }
    }

    /// Its index, the path it runs on.
    pub fn id(&self) -> usize {
        self.id
    }
    /// Joined with MP_JOIN (not the initial subflow).
    pub fn is_join(&self) -> bool {
        self.join
    }
    /// Payload bytes per segment: the TCP MSS minus the DSS option.
    pub fn mss(&self) -> u64 {
        self.mss
    }
    /// Where its handshake is.
    pub fn state(&self) -> State {
        self.hs.state()
    }
    /// The SYN or SYN-ACK should go (again) now.
    pub fn control_due(&self) -> bool {
        self.hs.control_due()
    }
    /// When the SYN or SYN-ACK is retransmitted.
    pub fn handshake_deadline(&self) -> Option<Time> {
        self.hs.deadline()
    }
    /// Its handshake is complete.
    pub fn established(&self) -> bool {
        self.hs.established()
    }
    /// May carry data (see the module notes).
    pub fn ready(&self) -> bool {
        self.ready
    }
    /// The subflow may carry data from now on.
    pub fn set_ready(&mut self) {
        self.ready = true;
    }
    /// The interface of its path is up (link events).
    pub fn interface_up(&self) -> bool {
        self.interface_up
    }
    /// The interface of its path went up or down.
    pub fn set_interface_up(&mut self, up: bool) {
        self.interface_up = up;
    }
    /// The subflow's sender.
    pub fn sender(&self) -> &Sender {
        &self.sender
    }
    /// The subflow's sender, to change.
    pub fn sender_mut(&mut self) -> &mut Sender {
        &mut self.sender
    }
    /// The subflow's receiver.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }
    /// The subflow's receiver, to change.
    pub fn receiver_mut(&mut self) -> &mut Receiver {
        &mut self.receiver
    }
    /// The subflow's handshake, to change.
    pub fn handshake_mut(&mut self) -> &mut Handshake {
        &mut self.hs
    }
    /// Sender-side data sequence mappings.
    pub fn tx_map(&self) -> &TxMap {
        &self.tx_map
    }
    /// Initiator: the next segment carries the third-ACK handshake option.
    pub fn third_ack_pending(&self) -> bool {
        self.third_ack_pending
    }
    /// Initiator: a SYN-ACK arrived (first or repeated); the next segment carries the
    /// third-ACK option.
    pub fn on_syn_ack_seen(&mut self) {
        self.third_ack_pending = true;
        self.receiver.force_ack();
    }
    /// An ACK, data or a handshake option is waiting to go out without new data.
    pub fn ack_due(&self) -> bool {
        self.receiver.ack_due() || self.third_ack_pending
    }
    /// Bytes in flight for the scheduler: the sender's pipe plus bytes handed to the subflow
    /// and not sent yet.
    pub fn bytes_in_flight(&self) -> u64 {
        self.sender.scoreboard().pipe() + self.sender.unsent()
    }

    /// Applies what the peer's SYN or SYN-ACK offered (see [`negotiate`](Self::negotiate)).
    pub fn negotiate_with_peer(&mut self) {
        if let Some(peer) = self.hs.peer() {
            self.negotiate(peer);
        }
    }

    /// Options agreed in the handshake with `peer` (RFC 7323 §1.3, RFC 2018 §2). The peer's
    /// window in its SYN is the connection's initial window (see [`super::option`]).
    pub fn negotiate(&mut self, peer: PeerOptions) {
        self.sack = self.sack && peer.sack;
        self.timestamps = self.timestamps && peer.timestamps;
        let (ours, theirs) = match peer.wscale {
            Some(w) => (SUBFLOW_WSCALE, w),
            None => (0, 0),
        };
        self.sender.negotiate(self.sack, self.timestamps);
        self.receiver.negotiate(self.sack, self.timestamps, ours);
        self.ecn = self.ecn && peer.ecn;
        self.sender.set_ecn(self.ecn);
        self.receiver.set_ecn(self.ecn);
        self.sender.set_peer_window(peer.window, theirs);
        if self.timestamps {
            self.receiver.set_ts_recent(peer.tsval);
        }
    }

    /// The handshake completed at `now`; returns its RTT sample, if any (Karn's rule).
    pub fn on_established(&mut self, now: Time) -> Option<Dur> {
        let sample = self.hs.on_established(now);
        if let Some(s) = sample {
            self.sender.rtt_mut().update(s, Dur::ZERO);
        }
        self.receiver.start(now);
        sample
    }

    /// Hands data bytes `[dsn, dsn + len)` to this subflow: they take the next `len` bytes of
    /// its sequence space.
    pub fn assign(&mut self, dsn: u64, len: u64) {
        let ssn = self.sender.scoreboard().snd_nxt() + self.sender.unsent();
        self.tx_map.insert(ssn, dsn, len);
        self.sender.write(len);
    }

    /// The next data segment the subflow may send at `now` (retransmission, probe or data
    /// already handed to it).
    pub fn poll_data(&mut self, now: Time) -> Option<DataSend> {
        let d = self.sender.poll_data(now);
        if let Some(d) = &d {
            self.marks = (d.ect, d.cwr);
        }
        d
    }

    /// ECN agreed in the subflow's handshake.
    pub fn ecn(&self) -> bool {
        self.ecn && self.hs.established()
    }

    /// The handshake option for the next segment.
    fn handshake_option(&self, syn: bool) -> Option<HandshakeOption> {
        match (syn, self.role, self.join) {
            (true, Role::Client, false) => Some(HandshakeOption::CapableSyn),
            (true, Role::Server, false) => Some(HandshakeOption::CapableSynAck),
            (true, Role::Client, true) => Some(HandshakeOption::JoinSyn),
            (true, Role::Server, true) => Some(HandshakeOption::JoinSynAck),
            (false, _, false) if self.third_ack_pending => Some(HandshakeOption::CapableAck),
            (false, _, true) if self.third_ack_pending => Some(HandshakeOption::JoinAck),
            _ => None,
        }
    }

    /// The SYN (initiator) or SYN-ACK (responder), offering the connection's initial window
    /// `window`.
    pub fn build_syn(&mut self, now: Time, window: u16) -> MptcpSegment {
        let _ = self.receiver.syn_window();
        let is_ack = self.role == Role::Server;
        let offer_ws = self.role == Role::Client || self.hs.peer().is_some_and(|p| p.wscale.is_some());
        let tsecr = if is_ack { self.receiver.ts_recent() } else { 0 };
        let tcp = Segment {
            seq: 0,
            ack: if is_ack { self.receiver.rcv_nxt() } else { 0 },
            // RFC 3168 §6.1.1 ECN setup (a responder's `ecn` is already the agreement).
            flags: Flags { syn: true, ack: is_ack, ece: self.ecn, cwr: self.ecn && !is_ack, ae: false },
            window,
            wscale: offer_ws.then_some(SUBFLOW_WSCALE),
            sack_permitted: self.sack,
            mss: Some(self.mss as u32),
            ts: self.timestamps.then(|| Timestamps { tsval: ts_from_time(now), tsecr }),
            sack: SackBlocks::new(),
            len: 0,
            ip_ecn: Ecn::NotEct,
            packets: 1,
        };
        MptcpSegment { tcp, handshake: self.handshake_option(true), data_ack: None, mapping: None }
    }

    /// The SYN or SYN-ACK left at `now`.
    pub fn on_syn_sent(&mut self, now: Time) {
        let rtt = self.sender.rtt().clone();
        self.hs.on_control_sent(now, &rtt);
    }

    /// A segment with `len` payload bytes at subflow sequence number `seq` (a pure ACK when
    /// `len` is 0), acknowledging the subflow's data and carrying `data_ack` unless it carries
    /// a handshake option.
    pub fn build(&mut self, now: Time, seq: u64, len: u32, data_ack: DataAck) -> MptcpSegment {
        let handshake = self.handshake_option(false);
        self.third_ack_pending = false;
        let data_ack = handshake.is_none().then_some(data_ack);
        let mapping = if len > 0 {
            match self.tx_map.lookup(seq, len) {
                Ok(m) => Some(m),
                Err(_) => {
                    self.counters.mapping_errors += 1;
                    None
                }
            }
        } else {
            None
        };
        let mptcp = mptcp_options_size(handshake, data_ack.is_some(), len > 0);
        let info = self.receiver.build_ack(sack_blocks_that_fit(self.timestamps, mptcp));
        let (ect, cwr) = if len > 0 { std::mem::take(&mut self.marks) } else { (false, false) };
        let tcp = Segment {
            seq,
            ack: info.ack,
            flags: Flags { syn: false, ack: true, ece: info.ece, cwr, ae: false },
            // The subflow's own window is left open (see `super::option`).
            window: u16::MAX,
            wscale: None,
            sack_permitted: false,
            mss: None,
            ts: self.timestamps.then(|| Timestamps { tsval: ts_from_time(now), tsecr: info.tsecr }),
            sack: info.sack,
            len,
            ip_ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
            packets: 1,
        };
        MptcpSegment { tcp, handshake, data_ack, mapping }
    }

    /// Counts a segment of `wire` bytes leaving on this subflow.
    pub fn on_sent(&mut self, wire: u32, data: bool, ecn: Ecn) {
        self.counters.ect_sent += u64::from(ecn == Ecn::Ect0);
        self.counters.packets_sent += 1;
        self.counters.bytes_sent += u64::from(wire);
        self.counters.data_segments_sent += u64::from(data);
    }

    /// Counts a segment of `wire` bytes arriving on this subflow.
    pub fn on_received(&mut self, wire: u32, ecn: Ecn) {
        self.counters.ce_received += u64::from(ecn == Ecn::Ce);
        self.counters.packets_received += 1;
        self.counters.bytes_received += u64::from(wire);
    }

    /// The receiving half of an arriving segment of an established subflow: subflow-level
    /// reassembly, then the data-level ranges that became in order on the subflow are appended
    /// to `out` as `(dsn, len)`.
    pub fn receive(&mut self, now: Time, seg: &MptcpSegment, out: &mut Vec<(u64, u64)>) {
        if seg.tcp.len > 0 {
            match seg.mapping {
                Some(m) if m.ssn == seg.tcp.seq && m.len == seg.tcp.len => self.rx_map.insert(m, self.receiver.rcv_nxt()),
                _ => self.counters.mapping_errors += 1,
            }
        }
        let o = self.receiver.on_segment(now, &seg.tcp);
        if o.in_order > 0 {
            self.receiver.read(now, u64::MAX);
            self.rx_map.take_in_order(self.receiver.rcv_nxt(), out);
        }
    }

    /// The sending half: processes the subflow-level ACK fields. Returns true if the
    /// subflow's cumulative ACK moved forward.
    pub fn on_ack(&mut self, now: Time, seg: &MptcpSegment) -> bool {
        let before = self.sender.scoreboard().snd_una();
        self.sender.on_ack(now, &seg.tcp);
        let after = self.sender.scoreboard().snd_una();
        if after > before {
            self.tx_map.forget_below(after);
        }
        after > before
    }

    /// Data-level ranges this subflow still owes (unacknowledged on the subflow and at the data
    /// level, `data_una`): what is reinjected when it fails.
    pub fn unacknowledged(&self, data_una: u64) -> Vec<(u64, u64)> {
        self.tx_map.unacknowledged(self.sender.scoreboard().snd_una(), data_una)
    }

    /// The receiver's RTT estimate (from timestamps on full-sized segments).
    pub fn receiver_rtt(&self) -> Option<Dur> {
        self.receiver.buffer().receiver_rtt()
    }
}
