//! The sending half of a connection: send buffer, segmentation, ACK processing, loss
//! recovery and the congestion controller.
//!
//! * ACK processing per RFC 9293 §3.10.7.4 (window update) and RFC 6675 §5 (SACK
//!   scoreboard update, DupAcks); RTT samples per RFC 6298 §3 with Karn's rule, or from the
//!   timestamps echo (RFC 7323 §4) when every newly acknowledged segment was retransmitted.
//! * Loss detection: RACK (RFC 8985 §6) when enabled, else RFC 6675 `IsLost` and DupThresh
//!   duplicate ACKs (RFC 5681 §3.2; RFC 6582 partial ACKs without SACK).
//! * Recovery (RFC 6675 §5, RFC 6582 §3.2): one congestion event per episode, recovery point
//!   = snd_nxt at entry, sending while `pipe + segment ≤ cwnd` with NextSeg rule 1 (lost
//!   segments first) then new data. The window is the controller's target from entry on, or,
//!   with `rate_reduction = "prr"`, the one Linux's proportional rate reduction sets per ACK
//!   ([`crate::prr`]) until the episode ends, the controller growing nothing meanwhile.
//! * Tail loss probe (RFC 8985 §7): PTO = 2·SRTT (+ WCDelAckT = 200 ms when one segment is
//!   outstanding), capped by the RTO; the probe sends new data or retransmits the last
//!   segment; `tlp_high_seq` decides afterwards whether a loss was repaired (Linux
//!   `tcp_process_tlp_ack`).
//! * RTO (RFC 6298 §5), restarted by ACKs that advance and, with `rto_restart =
//!   "head-retransmit"`, also when the segment at `snd_una` is retransmitted (Linux
//!   `tcp_xmit_retransmit_queue`). On expiry everything not SACKed is marked lost and sent
//!   again from `snd_una` (go-back-N through the scoreboard), the controller collapses to the
//!   loss window.
//! * Spurious retransmissions (RFC 2883 §5, RFC 3522 Eifel): counted from D-SACK blocks when
//!   SACK is on, from the timestamps echo of the ACK that advances past a retransmitted head
//!   segment otherwise. When every retransmission of a recovery episode proved spurious, the
//!   controller's reduction is undone.
//! * Window growth only while cwnd-limited, as Linux's `tcp_is_cwnd_limited` decides it: cwnd
//!   blocked a send in the current window (`tcp_cwnd_validate`, run at every send of new data
//!   and every send cwnd blocks; a window ends once `snd_una` passes what was sent by its
//!   start), or, in slow start, cwnd is below twice the most bytes outstanding in the window
//!   (`max_packets_out`). An ACK that fails it reaches the controller as application-limited
//!   (`AckEvent::app_limited`), whatever the delivery-rate samples say.
//! * Send buffer: Linux autotunes `sk_sndbuf` to about twice the congestion window
//!   (`tcp_sndbuf_expand`); modelled as `max(wmem[1], min(wmem[2], 2·cwnd))` in payload bytes,
//!   never shrinking. The application may hold that many bytes unacknowledged and unsent.
//! * ECN (RFC 3168 §6.1.2, §6.1.5), when agreed in the handshake: new data segments go out
//!   ECT(0), retransmissions (and TLP retransmissions) not-ECT. An ACK with ECE outside
//!   recovery puts the sender in CWR as Linux does (`tcp_enter_cwr`): the controller's
//!   congestion response is applied once (no retransmission), CWR goes on the next new data
//!   segment, and further ECE is ignored until something above `snd_nxt` at entry is
//!   acknowledged (so that the CWR reached the receiver): one reduction per window of data.
//!   Entering loss recovery or an RTO also queues CWR (Linux `tcp_init_cwnd_reduction`,
//!   `tcp_enter_loss`). The window drops to the controller's target at once, as it does for a
//!   loss, or comes down by PRR until CWR ends.
//! * Accurate ECN (RFC 9768 §3.2.2.3), when agreed instead: the sender keeps the count of
//!   CE-marked packets the peer has reported (`s.cep`, less its initial 5) and turns the ACE
//!   field of every ACK that acknowledges something new (Linux: `FLAG_FORWARD_PROGRESS`) into
//!   the packets newly marked: the increase modulo 8, or, when the ACK newly acknowledges 8
//!   segments or more so that the field may have wrapped, the largest count up to that number
//!   of segments with the same remainder (the RFC's safety rule as Linux's
//!   `__tcp_accecn_process` applies it without the AccECN option): exact when no ACK is lost,
//!   never less than the truth when some are. A scalable controller
//!   ([`Controller::scalable_ecn`], Prague) hears every ACK's count by
//!   [`Controller::on_ecn_feedback`] before its [`Controller::on_ack`] and never gets a
//!   congestion event for CE; any other controller gets RFC 3168's response when the count
//!   grew (CWR state, one reduction per window of data), without the CWR flag, which is part
//!   of the ACE field now. ECT on new data only, as with RFC 3168 (Linux's AccECN also marks
//!   retransmissions; not modelled).

use std::collections::VecDeque;

use multiconn_cc::{AckEvent, Controller, DeliveryRateEstimator, EcnFeedback, LossEvent, Pacer, RttEstimator};
use multiconn_core::{Dur, Time};
use multiconn_transport::profile::{RateReduction, RtoRestart};

use crate::prr::Prr;
use crate::rack::Rack;
use crate::rto::RtoTimer;
use crate::scoreboard::{Scoreboard, SentSegment};
use crate::segment::{ts_to_time, Segment};

/// RFC 8985 §7.2 WCDelAckT: worst-case delayed-ACK timer.
pub const WORST_CASE_DELAYED_ACK: Dur = Dur::from_millis(200);
/// Retransmissions remembered for D-SACK matching.
const RETX_LOG: usize = 4096;

/// Settings of a [`Sender`].
#[derive(Clone, Debug)]
pub struct SenderConfig {
    /// Payload bytes per segment (SMSS).
    pub mss: u64,
    /// DupThresh (RFC 5681, RFC 6675; profile `packet_threshold`): duplicate ACKs, or
    /// segments' worth of bytes SACKed above a segment, that deem it lost.
    pub dup_thresh: u64,
    /// RACK-TLP loss detection (RFC 8985) instead of DupThresh alone.
    pub rack_tlp: bool,
    /// SACK negotiated with the peer.
    pub sack: bool,
    /// Timestamps negotiated with the peer.
    pub timestamps: bool,
    /// RACK's time threshold as a fraction `[num, den]` of min_rtt (see [`Rack::new`]).
    pub time_threshold: [u64; 2],
    /// tcp_wmem (min, default, max) in bytes: bounds of the autotuned send buffer.
    pub wmem: [u64; 3],
    /// Clock granularity: the floor of the tail loss probe timeout.
    pub granularity: Dur,
    /// Whether retransmitting the head segment restarts the RTO (Linux) or only ACKs that
    /// advance do.
    pub rto_restart: RtoRestart,
    /// How the window comes down in fast recovery and CWR: at once, or by Linux's PRR.
    pub rate_reduction: RateReduction,
}

impl SenderConfig {
    /// The sender settings a profile gives for segments of `mss` bytes.
    pub fn from_profile(mss: u64, knobs: &multiconn_transport::profile::TcpKnobs, rec: &multiconn_transport::profile::RecoveryKnobs) -> SenderConfig {
        SenderConfig {
            mss,
            dup_thresh: rec.packet_threshold.max(1),
            rack_tlp: knobs.rack_tlp,
            sack: knobs.sack,
            timestamps: knobs.timestamps,
            time_threshold: rec.time_threshold,
            wmem: knobs.wmem,
            granularity: rec.granularity,
            rto_restart: rec.rto_restart,
            rate_reduction: rec.rate_reduction,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EpisodeKind {
    /// Fast recovery (SACK/RACK/dupacks).
    Fast,
    /// After a retransmission timeout.
    Loss,
}

#[derive(Clone, Copy, Debug)]
struct Episode {
    kind: EpisodeKind,
    point: u64,
    start: Time,
    retrans: u32,
    spurious: u32,
    undone: bool,
}

#[derive(Clone, Copy, Debug)]
struct Retx {
    start: u64,
    end: u64,
    time: Time,
    counted: bool,
}

/// A data segment to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSend {
    /// Sequence number of the first byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Resends data sent before, not new data.
    pub retransmission: bool,
    /// Send the segment ECT(0) (RFC 3168 §6.1.2: new data only, ECN agreed).
    pub ect: bool,
    /// Set CWR on the segment (RFC 3168 §6.1.2).
    pub cwr: bool,
}

/// The sending half of one connection (see the module header).
pub struct Sender {
    cfg: SenderConfig,
    sb: Scoreboard,
    rack: Rack,
    rto: RtoTimer,
    rtt: RttEstimator,
    cc: Box<dyn Controller>,
    pacer: Pacer,
    delivery: DeliveryRateEstimator,
    /// Peer's window in bytes and its scale shift.
    snd_wnd: u64,
    peer_wscale: u8,
    /// End of the data the application has written (sequence number).
    stream_end: u64,
    sndbuf: u64,
    episode: Option<Episode>,
    /// The episode that ended last, still open to an undo.
    last_episode: Option<Episode>,
    dupacks: u64,
    tlp_deadline: Option<Time>,
    /// (TLP.end_seq, the probe was a retransmission)
    tlp_high: Option<(u64, bool)>,
    probe_pending: bool,
    rack_deadline: Option<Time>,
    pacing_deadline: Option<Time>,
    retx_log: VecDeque<Retx>,
    retransmissions: u64,
    spurious: u64,
    lost: u64,
    timeouts: u64,
    congestion_events: u64,
    undos: u64,
    more_pending: bool,
    /// Entering recovery: one retransmission may ignore cwnd.
    fast_retransmit: bool,
    /// End of the last sub-MSS segment sent (Minshall's Nagle check).
    small_end: Option<u64>,
    /// ECN agreed in the handshake.
    ecn: bool,
    /// In CWR state: `snd_nxt` when it began (Linux `high_seq`).
    cwr_point: Option<u64>,
    /// CWR goes on the next new data segment (Linux `TCP_ECN_QUEUE_CWR`).
    cwr_pending: bool,
    ece_acks: u64,
    ecn_responses: u64,
    /// AccECN agreed in the handshake (RFC 9768).
    accecn: bool,
    /// CE-marked packets the peer has reported by AccECN so far (`s.cep` less its initial 5).
    delivered_ce: u64,
    /// Linux `tcp_cwnd_validate` state: the current window was cwnd-limited
    /// (`is_cwnd_limited`), the most bytes outstanding in it (`max_packets_out`), and where it
    /// ends (`cwnd_usage_seq`).
    cwnd_limited: bool,
    max_outstanding: u64,
    cwnd_usage_seq: u64,
    /// The proportional rate reduction in force (with `rate_reduction = "prr"`) and when it
    /// began; meaningful only while in fast recovery or CWR.
    prr: Option<(Prr, Time)>,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("snd_una", &self.sb.snd_una())
            .field("snd_nxt", &self.sb.snd_nxt())
            .field("cc", &self.cc)
            .finish()
    }
}

impl Sender {
    /// `start`: the first data sequence number (ISN + 1).
    pub fn new(
        cfg: SenderConfig,
        start: u64,
        rtt: RttEstimator,
        rto: RtoTimer,
        cc: Box<dyn Controller>,
        pacer: Pacer,
    ) -> Sender {
        let sndbuf = cfg.wmem[1].max(cfg.wmem[0]);
        let mut s = Sender {
            rack: Rack::new(cfg.time_threshold),
            sb: Scoreboard::new(start),
            rto,
            rtt,
            cc,
            pacer,
            delivery: DeliveryRateEstimator::new(),
            snd_wnd: 65535,
            peer_wscale: 0,
            stream_end: start,
            sndbuf,
            episode: None,
            last_episode: None,
            dupacks: 0,
            tlp_deadline: None,
            tlp_high: None,
            probe_pending: false,
            rack_deadline: None,
            pacing_deadline: None,
            retx_log: VecDeque::new(),
            retransmissions: 0,
            spurious: 0,
            lost: 0,
            timeouts: 0,
            congestion_events: 0,
            undos: 0,
            more_pending: false,
            fast_retransmit: false,
            small_end: None,
            ecn: false,
            cwr_point: None,
            cwr_pending: false,
            ece_acks: 0,
            ecn_responses: 0,
            accecn: false,
            delivered_ce: 0,
            cwnd_limited: false,
            max_outstanding: 0,
            cwnd_usage_seq: 0,
            prr: None,
            cfg,
        };
        s.grow_sndbuf();
        s
    }

    /// The retransmission queue and SACK scoreboard.
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }
    /// The RTT estimator (RFC 6298).
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The RTT estimator, to feed samples from outside (the handshake's).
    pub fn rtt_mut(&mut self) -> &mut RttEstimator {
        &mut self.rtt
    }
    /// The congestion controller.
    pub fn controller(&self) -> &dyn Controller {
        self.cc.as_ref()
    }
    /// The congestion window in force, bytes: the controller's, or during a proportional rate
    /// reduction the one it sets.
    pub fn window(&self) -> u64 {
        match &self.prr {
            Some((p, _)) if self.in_cwnd_reduction() => p.cwnd(),
            _ => self.cc.window(),
        }
    }
    /// The proportional rate reduction in force, if any.
    pub fn prr(&self) -> Option<&Prr> {
        self.prr.as_ref().filter(|_| self.in_cwnd_reduction()).map(|(p, _)| p)
    }
    /// In fast recovery or in CWR (Linux `tcp_in_cwnd_reduction`).
    fn in_cwnd_reduction(&self) -> bool {
        self.episode.is_some_and(|e| e.kind == EpisodeKind::Fast) || self.cwr_point.is_some()
    }
    /// The window comes down by PRR: the profile asks for it and the controller leaves the
    /// window in recovery to the sender (Linux BBR sets it itself, `cong_control`).
    fn prr_on(&self) -> bool {
        self.cfg.rate_reduction != RateReduction::Immediate && !self.cc.sets_recovery_window()
    }
    /// Linux `tcp_init_cwnd_reduction`: a reduction from `prior` bytes to the window the
    /// controller has just set, unless one is already under way.
    fn start_prr(&mut self, now: Time, prior: u64, reducing: bool) {
        if !self.prr_on() || (reducing && self.prr.is_some()) {
            return;
        }
        let banks_credit = self.cfg.rate_reduction == RateReduction::Prr;
        self.prr = Some((Prr::new(prior, self.cc.window(), self.cfg.mss, banks_credit), now));
    }
    /// Forgets a reduction that is over (the window is the controller's again).
    fn end_prr_if_over(&mut self) {
        if !self.in_cwnd_reduction() {
            self.prr = None;
        }
    }
    /// The retransmission timer.
    pub fn rto_timer(&self) -> &RtoTimer {
        &self.rto
    }
    /// Segment retransmissions so far.
    pub fn retransmissions(&self) -> u64 {
        self.retransmissions
    }
    /// Retransmissions found spurious so far (by D-SACK or the timestamps echo).
    pub fn spurious_retransmissions(&self) -> u64 {
        self.spurious
    }
    /// Segments deemed lost so far (by SACK, RACK, duplicate ACKs or an RTO).
    pub fn lost(&self) -> u64 {
        self.lost
    }
    /// Retransmission timeouts so far.
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }
    /// Window reductions so far (recovery episodes, TLP-detected losses; RTOs not included).
    pub fn congestion_events(&self) -> u64 {
        self.congestion_events
    }
    /// Reductions undone because every retransmission of their episode was spurious.
    pub fn undos(&self) -> u64 {
        self.undos
    }
    /// ECN as agreed in the handshake (RFC 3168 §6.1.1).
    pub fn set_ecn(&mut self, on: bool) {
        self.ecn = on;
    }
    /// ECN agreed in the handshake.
    pub fn ecn(&self) -> bool {
        self.ecn
    }
    /// AccECN as agreed in the handshake (RFC 9768): ECN on, feedback by the ACE field.
    pub fn set_accecn(&mut self) {
        self.ecn = true;
        self.accecn = true;
    }
    /// AccECN agreed.
    pub fn accecn(&self) -> bool {
        self.accecn
    }
    /// The data segments go ECT(1): AccECN agreed and a scalable controller (RFC 9331 §4).
    pub fn scalable(&self) -> bool {
        self.accecn && self.cc.scalable_ecn()
    }
    /// CE-marked packets the peer has reported by AccECN so far (inferred from the ACE field).
    pub fn delivered_ce(&self) -> u64 {
        self.delivered_ce
    }
    /// Runs another controller from here on (a scalable one whose handshake did not agree on
    /// AccECN gives way to Reno, as Linux's Prague does).
    pub fn replace_controller(&mut self, cc: Box<dyn Controller>) {
        self.cc = cc;
    }
    /// ACKs that arrived with ECE set (ECN agreed); with AccECN, ACKs whose ACE field
    /// reported new CE marks.
    pub fn ece_acks(&self) -> u64 {
        self.ece_acks
    }
    /// Window reductions in response to ECE (entries into CWR); with AccECN and a scalable
    /// controller, ACKs whose feedback brought the window down.
    pub fn ecn_responses(&self) -> u64 {
        self.ecn_responses
    }
    /// In CWR: reduced for ECE, waiting for the window of data to be acknowledged.
    pub fn in_cwr(&self) -> bool {
        self.cwr_point.is_some()
    }
    /// In a recovery episode (fast recovery, or after an RTO) until its recovery point is
    /// acknowledged or its reduction is undone as spurious.
    pub fn in_recovery(&self) -> bool {
        self.episode.is_some()
    }
    /// The peer's receive window in bytes (scaled).
    pub fn peer_window(&self) -> u64 {
        self.snd_wnd
    }
    /// Send buffer size in bytes (autotuned, never shrinking).
    pub fn sndbuf(&self) -> u64 {
        self.sndbuf
    }

    /// Options negotiated in the handshake.
    pub fn negotiate(&mut self, sack: bool, timestamps: bool) {
        self.cfg.sack = sack;
        self.cfg.timestamps = timestamps;
    }

    /// Window information from the peer's SYN or SYN-ACK (unscaled) and its shift for later.
    pub fn set_peer_window(&mut self, syn_window: u16, peer_wscale: u8) {
        self.snd_wnd = syn_window as u64;
        self.peer_wscale = peer_wscale.min(14);
    }

    /// Bytes the application may still write into the send buffer.
    pub fn writable(&self) -> u64 {
        self.sndbuf
            .saturating_sub(self.stream_end - self.sb.snd_una())
    }
    /// The application adds `bytes` to the send buffer.
    pub fn write(&mut self, bytes: u64) {
        self.stream_end += bytes;
    }
    /// Unsent bytes in the send buffer.
    pub fn unsent(&self) -> u64 {
        self.stream_end - self.sb.snd_nxt()
    }
    /// Something waits to be sent without new data from the application: a segment deemed
    /// lost, a tail loss probe, or unsent bytes already in the buffer.
    pub fn has_pending_work(&self) -> bool {
        self.probe_pending || self.unsent() > 0 || self.sb.lost_pending() > 0
    }

    /// Linux `tcp_cwnd_validate` (net/ipv4/tcp_output.c), after a send of new data or a send
    /// that cwnd blocked: remember whether this window was cwnd-limited, else the most bytes
    /// outstanding in it; a new window starts once `snd_una` passes the end of the last.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let out = self.sb.outstanding();
        if self.sb.snd_una() >= self.cwnd_usage_seq || is_cwnd_limited || (!self.cwnd_limited && out > self.max_outstanding) {
            self.cwnd_limited = is_cwnd_limited;
            self.max_outstanding = out;
            self.cwnd_usage_seq = self.sb.snd_nxt();
        }
    }

    /// Linux `tcp_is_cwnd_limited` (include/net/tcp.h): whether an ACK may grow the window.
    fn is_cwnd_limited(&self) -> bool {
        if self.cwnd_limited {
            return true;
        }
        let cwnd = self.window();
        let in_slow_start = self.cc.ssthresh().map_or(true, |s| cwnd < s);
        in_slow_start && cwnd < 2 * self.max_outstanding
    }

    fn grow_sndbuf(&mut self) {
        let want = (2 * self.window())
            .min(self.cfg.wmem[2])
            .max(self.cfg.wmem[1]);
        self.sndbuf = self.sndbuf.max(want);
    }

    /// When a timer of the sender next fires.
    pub fn next_timeout(&self) -> Option<Time> {
        let earliest = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        earliest(earliest(self.rto.deadline(), self.tlp_deadline), earliest(self.rack_deadline, self.pacing_deadline))
    }

    /// Processes the ACK fields of an arriving segment.
    pub fn on_ack(&mut self, now: Time, seg: &Segment) {
        if !seg.flags.ack || seg.flags.syn {
            return;
        }
        let ack = seg.ack;
        let prior_una = self.sb.snd_una();
        if ack > self.sb.snd_nxt() || ack < prior_una {
            return;
        }
        self.snd_wnd = (seg.window as u64) << self.peer_wscale;
        let prior_in_flight = self.sb.pipe();
        let tsecr = seg
            .ts
            .filter(|_| self.cfg.timestamps)
            .and_then(|t| ts_to_time(t.tsecr));
        let min_rtt = self.rtt.min();

        // D-SACK (RFC 2883 §4): the first block lies below the cumulative ACK or inside the second.
        let blocks: &[(u64, u64)] = if self.cfg.sack {
            seg.sack.as_slice()
        } else {
            &[]
        };
        let mut sack_from = 0;
        if let Some(&(a, b)) = blocks.first() {
            let inside_second = blocks.get(1).is_some_and(|&(c, d)| a >= c && b <= d);
            if a < b && (a < ack || inside_second) {
                self.on_dsack(a, b);
                sack_from = 1;
            }
        }

        let mut newly = 0u64;
        let mut newly_segments = 0u64;
        let mut newest: Option<SentSegment> = None;
        let mut rtt_sample: Option<Dur> = None;
        let mut head_retx: Option<SentSegment> = None;
        {
            let rack = &mut self.rack;
            let delivery = &mut self.delivery;
            let use_rack = self.cfg.rack_tlp;
            let mut on_delivered = |s: &SentSegment| {
                newly += s.len();
                newly_segments += 1;
                if use_rack {
                    rack.on_delivered(now, s, min_rtt, tsecr);
                }
                delivery.on_packet_acked(now, s.len(), &s.rate);
                if newest.map_or(true, |n| s.last_sent >= n.last_sent) {
                    newest = Some(*s);
                }
                if s.tx_count == 1 {
                    let r = now.since(s.last_sent);
                    rtt_sample = Some(rtt_sample.map_or(r, |x: Dur| x.min(r)));
                }
            };
            for &(a, b) in &blocks[sack_from..] {
                if a < b {
                    self.sb.sack(a, b, &mut on_delivered);
                }
            }
            let mut first = true;
            self.sb.ack(ack, |s| {
                if first && s.tx_count > 1 {
                    head_retx = Some(*s);
                }
                first = false;
                on_delivered(s);
            });
        }
        let advanced = ack > prior_una;

        // RTT (Karn; timestamps when only retransmissions were acknowledged).
        let sample = rtt_sample.or_else(|| {
            if newly > 0 {
                tsecr.map(|t| now.since(t))
            } else {
                None
            }
        });
        if let Some(r) = sample {
            self.rtt.update(r, Dur::ZERO);
            self.rto.reset_backoff();
        }

        // Eifel detection without SACK.
        if !self.cfg.sack {
            if let (Some(h), Some(echo)) = (head_retx, tsecr) {
                if echo < h.last_sent {
                    self.count_spurious(h.start, h.end, now);
                }
            }
        }

        // Duplicate ACKs.
        if advanced {
            self.dupacks = 0;
        } else if seg.len == 0 && self.sb.outstanding() > 0 {
            self.dupacks += 1;
        }

        // Episode end.
        if let Some(ep) = self.episode {
            if self.sb.snd_una() >= ep.point {
                self.last_episode = self.episode.take();
            }
        }

        let (lost_bytes, largest_lost_sent) = self.detect_losses(now, advanced);
        if lost_bytes > 0 && self.episode.is_none() {
            self.enter_recovery(now, lost_bytes, largest_lost_sent);
        }

        self.process_tlp_ack(now, ack, advanced, newly > 0);

        let mut ce_packets = 0;
        if self.ecn {
            // Linux holds CWR until something above high_seq is acknowledged, so that the
            // CWR segment has reached the receiver (tcp_fastretrans_alert).
            if self.cwr_point.is_some_and(|p| self.sb.snd_una() > p) {
                self.cwr_point = None;
            }
            if self.accecn {
                if advanced || newly_segments > 0 {
                    ce_packets = self.accecn_delta(seg.flags.ace(), newly_segments);
                }
                if ce_packets > 0 {
                    self.ece_acks += 1;
                    if !self.cc.scalable_ecn() && self.episode.is_none() && self.cwr_point.is_none() {
                        self.enter_cwr(now);
                    }
                }
            } else if seg.flags.ece {
                self.ece_acks += 1;
                if self.episode.is_none() && self.cwr_point.is_none() {
                    self.enter_cwr(now);
                }
            }
        }

        // Linux `tcp_cong_control`: in a reduction the ACK sets the window by PRR and the
        // controller does not grow it; the controller sees the ACK as acknowledging nothing
        // sent after the reduction began, so its recovery period lasts as long.
        let prr_start = self.prr.as_ref().filter(|_| self.in_cwnd_reduction()).map(|&(_, t)| t);
        if self.accecn && (newly > 0 || ce_packets > 0) && self.cc.scalable_ecn() {
            let largest_acked_sent = newest.map_or(now, |n| n.last_sent);
            let fb = EcnFeedback {
                ce_packets,
                ect_packets: newly_segments,
                largest_acked_sent: prr_start.map_or(largest_acked_sent, |t| largest_acked_sent.min(t)),
            };
            let before = self.cc.window();
            self.cc.on_ecn_feedback(now, &fb, &self.rtt);
            self.ecn_responses += u64::from(self.cc.window() < before);
        }
        if newly > 0 {
            let rate_sample = self.delivery.take_sample(self.rtt.min());
            let app_limited = !self.is_cwnd_limited();
            let largest_acked_sent = newest.map_or(now, |n| n.last_sent);
            let ev = AckEvent {
                bytes_acked: newly,
                largest_acked_sent: prr_start.map_or(largest_acked_sent, |t| largest_acked_sent.min(t)),
                prior_in_flight,
                bytes_in_flight: self.sb.pipe(),
                app_limited,
                rate_sample,
            };
            self.cc.on_ack(now, &ev, &self.rtt);
        }
        if prr_start.is_some() {
            let pipe = self.sb.pipe();
            if let Some((p, _)) = self.prr.as_mut() {
                p.on_ack(newly_segments, pipe, advanced, lost_bytes > 0);
            }
        }
        self.end_prr_if_over();
        if newly > 0 {
            self.grow_sndbuf();
        }

        // RFC 6298 §5.2/5.3.
        if advanced {
            if self.sb.outstanding() > 0 {
                self.rto.restart(now, &self.rtt);
            } else {
                self.rto.stop();
            }
        }
        if advanced || newly > 0 {
            self.arm_tlp(now);
        }
    }

    fn on_dsack(&mut self, a: u64, b: u64) {
        if let Some((high, true)) = self.tlp_high {
            if a < high && b >= high {
                self.tlp_high = None;
            }
        }
        let mut hits = Vec::new();
        for e in self.retx_log.iter_mut() {
            if !e.counted && e.start >= a && e.end <= b {
                e.counted = true;
                hits.push(e.time);
            }
        }
        for t in hits {
            self.spurious += 1;
            self.note_spurious_in_episode(t, t);
        }
    }

    fn count_spurious(&mut self, start: u64, end: u64, now: Time) {
        let mut when = None;
        for e in self.retx_log.iter_mut().rev() {
            if !e.counted && e.start == start && e.end == end {
                e.counted = true;
                when = Some(e.time);
                break;
            }
        }
        if let Some(t) = when {
            self.spurious += 1;
            self.note_spurious_in_episode(t, now);
        }
    }

    /// A retransmission sent at `retx_time` proved spurious: it counts against the current
    /// episode, or against the last one after it ended (Linux keeps `undo_marker` until the
    /// next episode), since D-SACKs often arrive after the repair.
    fn note_spurious_in_episode(&mut self, retx_time: Time, now: Time) {
        let in_current = self.episode.is_some();
        let Some(ep) = self.episode.as_mut().or(self.last_episode.as_mut()) else {
            return;
        };
        if retx_time < ep.start || ep.undone {
            return;
        }
        ep.spurious += 1;
        if ep.spurious >= ep.retrans && ep.retrans > 0 {
            ep.undone = true;
            self.undos += 1;
            self.cc.on_spurious_congestion(now);
            if in_current {
                self.last_episode = self.episode.take();
            }
        }
    }

    /// Runs loss detection; returns (bytes newly lost, send time of the newest of them).
    fn detect_losses(&mut self, now: Time, advanced: bool) -> (u64, Time) {
        if self.sb.outstanding() == 0 {
            // Nothing outstanding, nothing to lose (the receiving end of a download, on every
            // data segment): the search below would find every transmission RACK remembers
            // acknowledged and arm nothing. They are dropped when the next search passes them.
            if self.cfg.rack_tlp {
                self.rack_deadline = None;
            }
            return (0, Time::ZERO);
        }
        let mut bytes = 0u64;
        let mut count = 0u64;
        let mut newest = Time::ZERO;
        let mut note = |s: &SentSegment| {
            bytes += s.len();
            count += 1;
            newest = newest.max(s.last_sent);
        };
        if self.cfg.rack_tlp {
            let reo = self.rack.reo_wnd(
                self.episode.is_some(),
                self.sb.sacked_segments(),
                self.cfg.dup_thresh,
                self.rtt.min(),
                self.rtt.smoothed(),
            );
            self.rack_deadline = self.rack.detect_loss(now, &mut self.sb, reo, &mut note);
        }
        if !self.cfg.rack_tlp || !self.cfg.sack {
            if self.cfg.sack {
                self.sb
                    .mark_lost_by_sack(self.cfg.dup_thresh, self.cfg.mss, &mut note);
            }
            let head_lost = match self.episode {
                None => self.dupacks >= self.cfg.dup_thresh,
                // RFC 6582 partial ACK: the next hole is lost too.
                Some(ep) => {
                    !self.cfg.sack
                        && ep.kind == EpisodeKind::Fast
                        && advanced
                        && self.sb.snd_una() < ep.point
                }
            };
            if head_lost && self.sb.mark_lost(0) {
                if let Some(s) = self.sb.get(0) {
                    note(s);
                }
            }
        }
        self.lost += count;
        // The delivery-rate samples carry the losses (BBRv3's RS.lost).
        self.delivery.on_packet_lost(bytes);
        (bytes, newest)
    }

    /// The CE-marked packets an ACK with ACE field `ace` newly reports, `newly_segments`
    /// being the segments it newly acknowledges (RFC 9768 §3.2.2.3 and its safety rule for a
    /// field that may have wrapped; Linux `__tcp_accecn_process`); counted into `s.cep`.
    fn accecn_delta(&mut self, ace: u8, newly_segments: u64) -> u64 {
        let seen = (crate::receiver::ACCECN_CEP_INIT + self.delivered_ce) % 8;
        let delta = (u64::from(ace & 7) + 8 - seen) % 8;
        let d = if newly_segments < 8 { delta } else { newly_segments - ((newly_segments - delta) % 8) };
        self.delivered_ce += d;
        d
    }

    /// RFC 3168 §6.1.2 / Linux `tcp_enter_cwr`: the controller's response to a congestion
    /// event, without retransmitting anything, and CWR on the next new data segment.
    fn enter_cwr(&mut self, now: Time) {
        let (prior, reducing) = (self.window(), self.in_cwnd_reduction());
        self.cwr_point = Some(self.sb.snd_nxt());
        // With AccECN the CWR flag belongs to the ACE field (Linux `tcp_ecn_queue_cwr`).
        self.cwr_pending = !self.accecn;
        // Linux clears undo_marker: a later undo does not restore the window from before.
        self.last_episode = None;
        let pipe = self.sb.pipe();
        let ev = LossEvent { bytes_lost: 0, largest_lost_sent: now, bytes_in_flight: pipe, prior_in_flight: pipe };
        self.cc.on_ecn_congestion_event(now, &ev, &self.rtt);
        self.start_prr(now, prior, reducing);
        self.ecn_responses += 1;
    }

    fn enter_recovery(&mut self, now: Time, lost_bytes: u64, largest_lost_sent: Time) {
        let (prior, reducing) = (self.window(), self.in_cwnd_reduction());
        self.last_episode = None;
        self.cwr_point = None;
        self.cwr_pending |= self.ecn && !self.accecn;
        self.episode = Some(Episode {
            kind: EpisodeKind::Fast,
            point: self.sb.snd_nxt(),
            start: now,
            retrans: 0,
            spurious: 0,
            undone: false,
        });
        let ev = LossEvent {
            bytes_lost: lost_bytes,
            largest_lost_sent,
            bytes_in_flight: self.sb.pipe(),
            prior_in_flight: self.sb.pipe() + lost_bytes,
        };
        self.cc.on_congestion_event(now, &ev, &self.rtt);
        self.congestion_events += 1;
        self.tlp_deadline = None;
        self.start_prr(now, prior, reducing);
        // RFC 6675 §5 step 4.3: the first retransmission goes at once, whatever the window
        // (PRR allows it by itself: at least one segment until something is sent).
        self.fast_retransmit = self.prr.is_none();
    }

    /// Linux `tcp_process_tlp_ack`.
    fn process_tlp_ack(&mut self, now: Time, ack: u64, advanced: bool, new_info: bool) {
        let Some((high, is_retx)) = self.tlp_high else {
            return;
        };
        if ack < high {
            return;
        }
        if !is_retx {
            self.tlp_high = None;
        } else if ack > high {
            self.tlp_high = None;
            if self.episode.is_none() {
                let ev = LossEvent {
                    bytes_lost: self.cfg.mss,
                    largest_lost_sent: now,
                    bytes_in_flight: self.sb.pipe(),
                    prior_in_flight: self.sb.pipe(),
                };
                self.cc.on_congestion_event(now, &ev, &self.rtt);
                self.congestion_events += 1;
                self.cwr_pending |= self.ecn && !self.accecn;
            }
        } else if !advanced && !new_info {
            self.tlp_high = None;
        }
    }

    fn arm_tlp(&mut self, now: Time) {
        self.tlp_deadline = None;
        if !(self.cfg.rack_tlp && self.cfg.sack)
            || self.episode.is_some()
            || self.tlp_high.is_some()
            || self.sb.outstanding() == 0
            || !self.rtt.has_sample()
        {
            return;
        }
        let mut pto = Dur(2 * self.rtt.smoothed().0);
        if self.sb.outstanding() <= self.cfg.mss {
            pto = pto + WORST_CASE_DELAYED_ACK;
        }
        pto = pto.max(self.cfg.granularity);
        let at = now + pto;
        let rto_at = self.rto.deadline().unwrap_or(now + self.rto.rto(&self.rtt));
        self.tlp_deadline = Some(at.min(rto_at));
    }

    /// Timers: RTO, tail loss probe, RACK reorder timer, pacing.
    pub fn on_timeout(&mut self, now: Time) {
        if self.pacing_deadline.is_some_and(|d| d <= now) {
            self.pacing_deadline = None;
        }
        // A probe due no later than the RTO replaces it (Linux arms one timer for both).
        let tlp_first = self
            .tlp_deadline
            .is_some_and(|d| d <= now && self.rto.deadline().map_or(true, |r| d <= r));
        if self.rto.expired(now) && !tlp_first {
            self.on_rto(now);
            return;
        }
        if tlp_first {
            self.tlp_deadline = None;
            if self.sb.outstanding() > 0 && self.episode.is_none() {
                self.probe_pending = true;
            }
            self.rto.restart(now, &self.rtt);
        }
        if self.rack_deadline.is_some_and(|d| d <= now) {
            self.rack_deadline = None;
            let (bytes, newest) = self.detect_losses(now, false);
            if bytes > 0 && self.episode.is_none() {
                self.enter_recovery(now, bytes, newest);
                // Linux `tcp_rack_reo_timeout`: the reduction counts one segment delivered.
                let pipe = self.sb.pipe();
                if let Some((p, _)) = self.prr.as_mut() {
                    p.on_ack(1, pipe, false, true);
                }
            }
        }
    }

    fn on_rto(&mut self, now: Time) {
        self.rto.on_expired();
        if self.sb.outstanding() == 0 {
            return;
        }
        self.timeouts += 1;
        self.cwr_point = None;
        self.cwr_pending |= self.ecn && !self.accecn;
        self.lost += self.sb.mark_all_lost();
        self.rack.clear_sent();
        self.cc.on_persistent_congestion(now);
        self.last_episode = None;
        self.episode = Some(Episode {
            kind: EpisodeKind::Loss,
            point: self.sb.snd_nxt(),
            start: now,
            retrans: 0,
            spurious: 0,
            undone: false,
        });
        self.tlp_high = None;
        self.tlp_deadline = None;
        self.rack_deadline = None;
        self.probe_pending = false;
        self.dupacks = 0;
        self.end_prr_if_over();
    }

    /// The next data segment to send at `now`, if the windows, pacing and data allow.
    pub fn poll_data(&mut self, now: Time) -> Option<DataSend> {
        let probe = self.probe_pending;
        let pipe = self.sb.pipe();
        let cwnd = self.window();
        // What would go next: NextSeg rule 1, then new data.
        let retx = self.sb.next_lost();
        let (seq, len, is_retx, idx) = if let Some(i) = retx.filter(|_| !probe) {
            let s = self.sb.get(i)?;
            (s.start, s.len(), true, Some(i))
        } else if let Some(len) = self.new_data_len() {
            (self.sb.snd_nxt(), len, false, None)
        } else if probe {
            let i = self.sb.last_unsacked()?;
            let s = self.sb.get(i)?;
            (s.start, s.len(), true, Some(i))
        } else {
            if pipe < cwnd {
                self.delivery.on_app_limited(pipe);
            } else {
                self.cwnd_validate(true);
            }
            return None;
        };
        let fast = self.fast_retransmit && is_retx && !probe;
        if !probe && !fast {
            if pipe + len > cwnd {
                self.cwnd_validate(true);
                return None;
            }
            let srtt = self.rtt.smoothed();
            let at = self
                .pacer
                .earliest_send(now, len, cwnd, srtt, self.cc.pacing_rate());
            if at > now {
                self.pacing_deadline = Some(at);
                return None;
            }
        }
        self.probe_pending = false;
        if is_retx {
            self.fast_retransmit = false;
        }
        let rate = self.delivery.on_packet_sent(now, pipe);
        match idx {
            Some(i) => {
                self.sb.on_retransmitted(i, now, rate);
                let tx = self.sb.get(i).map_or(1, |s| s.tx_count);
                self.rack.on_sent(now, seq, tx);
                self.retransmissions += 1;
                if self.retx_log.len() >= RETX_LOG {
                    self.retx_log.pop_front();
                }
                self.retx_log.push_back(Retx {
                    start: seq,
                    end: seq + len,
                    time: now,
                    counted: false,
                });
                if let Some(ep) = self.episode.as_mut() {
                    ep.retrans += 1;
                }
            }
            None => {
                self.sb.on_sent(len, now, rate);
                self.rack.on_sent(now, seq, 1);
            }
        }
        if probe {
            self.tlp_high = Some((self.sb.snd_nxt(), is_retx));
        }
        self.cc.on_packet_sent(now, len, self.sb.pipe());
        if self.in_cwnd_reduction() {
            if let Some((p, _)) = self.prr.as_mut() {
                p.on_sent();
            }
        }
        self.pacer.on_sent(len);
        self.rto.start_if_idle(now, &self.rtt);
        // Linux re-arms the RTO when it retransmits the head of the retransmission queue,
        // unless the RACK reorder timer holds the connection's one timer
        // (`tcp_xmit_retransmit_queue`), so a head retransmission gets a full RTO.
        if is_retx
            && !probe
            && idx == Some(0)
            && self.cfg.rto_restart == RtoRestart::HeadRetransmit
            && self.rack_deadline.is_none()
        {
            self.rto.restart(now, &self.rtt);
        }
        if !is_retx && !probe {
            self.arm_tlp(now);
        }
        if !is_retx {
            self.cwnd_validate(self.sb.pipe() >= cwnd);
        }
        let ect = self.ecn && !is_retx;
        let cwr = ect && std::mem::take(&mut self.cwr_pending);
        Some(DataSend {
            seq,
            len: len as u32,
            retransmission: is_retx,
            ect,
            cwr,
        })
    }

    /// The application has more to write than the send buffer holds now.
    pub fn set_more_pending(&mut self, more: bool) {
        self.more_pending = more;
    }

    /// Length of the next new segment, or `None`. Sender-side silly window avoidance
    /// (RFC 9293 §3.8.6.2.1) with Linux's Nagle variant (Minshall: a sub-MSS segment waits
    /// only while another sub-MSS segment is unacknowledged), and no sub-MSS segment while the
    /// application is still filling the send buffer.
    fn new_data_len(&mut self) -> Option<u64> {
        let avail = self.unsent();
        if avail == 0 {
            return None;
        }
        let right = self.sb.snd_una() + self.snd_wnd;
        let allowed = right.saturating_sub(self.sb.snd_nxt());
        let len = self.cfg.mss.min(avail).min(allowed);
        let outstanding = self.sb.outstanding() > 0;
        let hold = len == 0
            || (len < self.cfg.mss
                && outstanding
                && (len < avail
                    || self.more_pending
                    || self.small_end.is_some_and(|e| e > self.sb.snd_una())));
        if hold {
            self.delivery.on_app_limited(self.sb.pipe());
            return None;
        }
        if len < self.cfg.mss {
            self.small_end = Some(self.sb.snd_nxt() + len);
        }
        Some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Flags, SackBlocks};
    use multiconn_cc::pacer::BurstRule;
    use multiconn_cc::{CcConfig, CcKind, PacerConfig, RttVarRule};
    use multiconn_transport::profile::RateReduction;
    use multiconn_core::Ecn;

    const MSS: u64 = 1000;

    /// A sender of `MSS`-byte segments with SACK and RACK-TLP, unpaced, whose controller is
    /// built from `cc`.
    fn sender_with(cc: CcConfig) -> Sender {
        sender_reducing(cc, RateReduction::Immediate)
    }

    /// As [`sender_with`], reducing its window in recovery by `rate_reduction`.
    fn sender_reducing(cc: CcConfig, rate_reduction: RateReduction) -> Sender {
        let cfg = SenderConfig {
            mss: MSS,
            dup_thresh: 3,
            rack_tlp: true,
            sack: true,
            timestamps: false,
            time_threshold: [9, 8],
            wmem: [4096, 1 << 20, 1 << 22],
            granularity: Dur::from_millis(1),
            rto_restart: RtoRestart::Ack,
            rate_reduction,
        };
        let pacer = Pacer::new(PacerConfig { enabled: false, factor: 1.0, burst: BurstRule::InitialWindow, max_datagram_size: MSS, initial_window: 10 * MSS });
        let rto = RtoTimer::new(Dur::from_millis(1), Dur::from_millis(200), Dur::from_secs(60), Dur::from_secs(1));
        Sender::new(cfg, 1, RttEstimator::new(Dur::from_millis(100), RttVarRule::Rfc9002), rto, multiconn_cc::build(&cc), pacer)
    }

    fn sender() -> Sender {
        let mut s = sender_with(CcConfig::tcp_default(CcKind::NewReno, MSS));
        s.set_ecn(true);
        s.write(1 << 20);
        s
    }

    fn ack(ack: u64, ece: bool) -> Segment {
        Segment {
            seq: 1,
            ack,
            flags: Flags { syn: false, ack: true, ece, cwr: false, ae: false },
            window: u16::MAX,
            wscale: None,
            sack_permitted: false,
            mss: None,
            ts: None,
            sack: SackBlocks::new(),
            len: 0,
            ip_ecn: Ecn::NotEct,
            packets: 1,
        }
    }

    fn send_all(s: &mut Sender, now: Time) -> Vec<DataSend> {
        std::iter::from_fn(|| s.poll_data(now)).collect()
    }

    /// RFC 3168 §6.1.2: many ACKs with ECE in one window of data reduce the window once;
    /// the next new segment carries CWR; an ECE after the window passed reduces it again.
    #[test]
    fn one_reduction_per_window_of_data_however_many_ece_acks() {
        let mut s = sender();
        s.set_peer_window(u16::MAX, 14);
        let t = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        let first = send_all(&mut s, t(0));
        assert_eq!(first.len(), 10);
        assert!(first.iter().all(|d| d.ect && !d.cwr && !d.retransmission));
        let cwnd0 = s.controller().window();
        // Every ACK of the first window echoes CE.
        let mut cwr_seen = 0;
        for i in 1..=10u64 {
            s.on_ack(t(100 + i), &ack(1 + i * MSS, true));
            cwr_seen += send_all(&mut s, t(100 + i)).iter().filter(|d| d.cwr).count();
        }
        assert_eq!(s.ece_acks(), 10);
        assert_eq!(s.ecn_responses(), 1, "one reduction for the window");
        assert_eq!(s.controller().window(), cwnd0 / 2);
        assert_eq!(cwr_seen, 1, "CWR goes once, on the next new data segment");
        assert_eq!(s.retransmissions(), 0);
        assert!(s.in_cwr());
        // The window sent before the reduction is acknowledged, still echoing (the CWR
        // segment has not arrived yet): no second reduction.
        let point = 1 + 10 * MSS;
        s.on_ack(t(200), &ack(point, true));
        assert_eq!(s.ecn_responses(), 1);
        // Data above the CWR point acknowledged: CWR ends; the next ECE is a new signal.
        s.on_ack(t(210), &ack(point + MSS, false));
        assert!(!s.in_cwr());
        s.on_ack(t(220), &ack(point + 2 * MSS, true));
        assert_eq!(s.ecn_responses(), 2);
        assert_eq!(s.retransmissions(), 0);
    }

    /// RFC 3168 §6.1.5: retransmissions go not-ECT.
    #[test]
    fn retransmissions_are_not_ect() {
        let mut s = sender();
        s.set_peer_window(u16::MAX, 14);
        let t = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        assert_eq!(send_all(&mut s, t(0)).len(), 10);
        // Nothing acknowledged: the RTO fires and the head segment goes again.
        s.on_timeout(t(1000));
        let again = send_all(&mut s, t(1000));
        assert!(!again.is_empty());
        assert!(again.iter().all(|d| d.retransmission && !d.ect), "{again:?}");
        // After an RTO the next new data carries CWR (Linux tcp_enter_loss queues it).
        assert!(s.cwr_pending);
    }

    /// A CUBIC sender whose application has written `bytes`, with a 10-segment initial window.
    fn cubic_sender(bytes: u64) -> Sender {
        let mut s = sender_with(CcConfig { app_limited_check: true, ..CcConfig::tcp_default(CcKind::Cubic, MSS) });
        s.set_peer_window(u16::MAX, 14);
        s.write(bytes);
        s
    }

    /// Linux `tcp_is_cwnd_limited` in slow start: the window grows while it is below twice the
    /// most segments outstanding in the window ("ensure cwnd grows to twice what was ACKed"),
    /// even though the application left the send buffer empty (which marks the delivery-rate
    /// samples application-limited).
    #[test]
    fn slow_start_grows_up_to_twice_what_was_outstanding() {
        let t = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        // 6 of 10 segments sent: the ACKs grow the window while it is below 2 · 6.
        let mut s = cubic_sender(6 * MSS);
        assert_eq!(send_all(&mut s, t(0)).len(), 6);
        for i in 1..=6u64 {
            s.on_ack(t(100 + i), &ack(1 + i * MSS, false));
        }
        assert_eq!(s.controller().window(), 12 * MSS);
        // 5 of 10: 10 < 2 · 5 is false, the window stays.
        let mut s = cubic_sender(5 * MSS);
        assert_eq!(send_all(&mut s, t(0)).len(), 5);
        for i in 1..=5u64 {
            s.on_ack(t(100 + i), &ack(1 + i * MSS, false));
        }
        assert_eq!(s.controller().window(), 10 * MSS);
    }

    /// `tcp_cwnd_validate`: once cwnd blocked a send, the window counts as cwnd-limited until a
    /// send after the data sent by then is acknowledged, whatever the application does
    /// meanwhile; a window that then holds less than half of cwnd does not grow it.
    #[test]
    fn a_cwnd_limited_window_grows_until_it_is_acknowledged() {
        let t = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        let mut s = cubic_sender(10 * MSS);
        assert_eq!(send_all(&mut s, t(0)).len(), 10);
        // Blocked by cwnd (the application writes more than the window): cwnd-limited.
        s.write(MSS);
        assert!(send_all(&mut s, t(0)).is_empty());
        // Each ACK of the first window grows it by what it acknowledges; the eleventh segment
        // and two more go out on the first ACK, then the application has nothing left.
        s.on_ack(t(100), &ack(1 + MSS, false));
        assert_eq!(s.controller().window(), 11 * MSS);
        assert_eq!(send_all(&mut s, t(100)).len(), 1);
        for i in 2..=10u64 {
            s.on_ack(t(100 + i), &ack(1 + i * MSS, false));
        }
        assert_eq!(s.controller().window(), 20 * MSS);
        // The first send after that window starts the next one, two segments outstanding:
        // 20 < 2 · 2 is false, no more growth.
        s.write(MSS);
        assert_eq!(send_all(&mut s, t(110)).len(), 1);
        s.on_ack(t(200), &ack(1 + 11 * MSS, false));
        assert_eq!(s.controller().window(), 20 * MSS);
    }

    fn sack_ack(ack: u64, blocks: &[(u64, u64)]) -> Segment {
        let mut seg = self::ack(ack, false);
        for &(a, b) in blocks {
            seg.sack.push(a, b);
        }
        seg
    }

    /// One loss out of 20 segments, CUBIC (ssthresh 14). The first ACK SACKs segments 1 to 3
    /// (RACK marks the hole lost, recovery begins), the next 16 one more each. PRR sends in
    /// proportion to what is delivered (7 for 10) while pipe is above ssthresh, then one for
    /// one: 14 segments in all, as many as the immediate reduction sends, which sends only the
    /// retransmission and then nothing for three ACKs. ACKs that SACK segments sent in recovery
    /// grow CUBIC's window when the reduction is immediate, not under PRR (Linux
    /// `tcp_cong_control`); when recovery ends the window is ssthresh.
    #[test]
    fn prr_spreads_the_reduction_and_holds_growth_until_recovery_ends() {
        let t = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        let run = |rr: RateReduction| {
            let cc = CcConfig { initial_window: 20 * MSS, ..CcConfig::tcp_default(CcKind::Cubic, MSS) };
            let mut s = sender_reducing(cc, rr);
            s.set_peer_window(u16::MAX, 14);
            s.write(1 << 20);
            assert_eq!(send_all(&mut s, t(0)).len(), 20);
            let mut sends = Vec::new();
            for j in 3..=19u64 {
                s.on_ack(t(100 + j), &sack_ack(1, &[(1 + MSS, 1 + (j + 1) * MSS)]));
                let sent = send_all(&mut s, t(100 + j));
                sends.push(sent.len());
                if j == 3 {
                    assert!(s.in_recovery() && sent[0].retransmission && sent[0].seq == 1);
                    assert_eq!(s.controller().window(), 14 * MSS);
                }
            }
            assert_eq!(s.scoreboard().pipe(), 14 * MSS);
            // Five segments sent in recovery are SACKed before the retransmission arrives.
            let grown = {
                s.on_ack(t(120), &sack_ack(1, &[(1 + MSS, 25 * MSS + 1)]));
                s.controller().window() > 14 * MSS
            };
            // The retransmission arrives: recovery ends.
            s.on_ack(t(125), &ack(25 * MSS + 1, false));
            assert!(!s.in_recovery());
            (sends, grown, s.window(), s.prr().is_some())
        };
        let (prr, grown, window, left) = run(RateReduction::Prr);
        assert_eq!(prr, vec![3, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1]);
        assert!(!grown, "no window growth in recovery");
        assert_eq!((window, left), (14 * MSS, false), "the window is ssthresh when recovery ends");
        let (immediate, grown, _, _) = run(RateReduction::Immediate);
        assert_eq!(immediate, vec![1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
        assert!(grown, "the immediate reduction lets ACKs of data sent in recovery grow the window");
        assert_eq!((prr.iter().sum::<usize>(), immediate.iter().sum::<usize>()), (14, 14));
    }

    fn ace_ack(ack: u64, ace: u8) -> Segment {
        let mut seg = self::ack(ack, false);
        seg.flags.set_ace(ace);
        seg
    }

    /// What a scalable test controller heard, in order.
    type Heard = std::sync::Arc<std::sync::Mutex<Vec<(&'static str, u64, u64)>>>;

    /// A controller that asks for ECT(1) and logs its feedback and ACK calls.
    #[derive(Debug)]
    struct Scalable(Heard);

    impl Controller for Scalable {
        fn on_packet_sent(&mut self, _: Time, _: u64, _: u64) {}
        fn on_ack(&mut self, _: Time, ack: &AckEvent, _: &RttEstimator) {
            self.0.lock().unwrap().push(("ack", ack.bytes_acked, 0));
        }
        fn on_congestion_event(&mut self, _: Time, _: &LossEvent, _: &RttEstimator) {
            self.0.lock().unwrap().push(("loss", 0, 0));
        }
        fn on_ecn_congestion_event(&mut self, _: Time, _: &LossEvent, _: &RttEstimator) {
            self.0.lock().unwrap().push(("ecn-event", 0, 0));
        }
        fn scalable_ecn(&self) -> bool {
            true
        }
        fn on_ecn_feedback(&mut self, _: Time, fb: &EcnFeedback, _: &RttEstimator) {
            self.0.lock().unwrap().push(("feedback", fb.ce_packets, fb.ect_packets));
        }
        fn on_persistent_congestion(&mut self, _: Time) {}
        fn window(&self) -> u64 {
            100 * MSS
        }
        fn ssthresh(&self) -> Option<u64> {
            None
        }
        fn state(&self) -> multiconn_cc::CcState {
            multiconn_cc::CcState::CongestionAvoidance
        }
        fn kind(&self) -> CcKind {
            CcKind::Prague
        }
    }

    /// RFC 9768 §3.2.2.3: the sender turns each ACK's ACE into the CE packets it newly reports:
    /// exact while the ACKs come (fewer than 8 segments each); when one ACK covers 8 segments
    /// or more the field may have wrapped and the sender takes the largest count, up to the
    /// segments acknowledged, with the same remainder — never less than the truth. A scalable
    /// controller hears each ACK's counts before the ACK itself and never gets an ECN event.
    #[test]
    fn the_ace_field_becomes_ce_packets_with_the_wrap_rule() {
        let heard = Heard::default();
        let log = heard.clone();
        let cc = CcConfig { external: Some(multiconn_cc::ControllerFactory(std::sync::Arc::new(move |_| Box::new(Scalable(log.clone())) as Box<dyn Controller>))), ..CcConfig::tcp_default(CcKind::Prague, MSS) };
        let mut s = sender_with(cc);
        s.set_accecn();
        s.set_peer_window(u16::MAX, 14);
        s.write(1 << 20);
        assert!(s.scalable());
        let t = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        let sent = send_all(&mut s, t(0));
        assert_eq!(sent.len(), 65, "the peer's 65535-byte window");
        assert!(sent.iter().all(|d| d.ect && !d.cwr));
        // (segments acknowledged, CE among them) per ACK; the truth accumulates in r.cep.
        let acks: [(u64, u64); 7] = [(2, 0), (2, 1), (2, 2), (1, 1), (10, 9), (10, 1), (20, 16)];
        let (mut acked, mut truth) = (0u64, 0u64);
        let mut inferred = Vec::new();
        for (i, &(n, ce)) in acks.iter().enumerate() {
            acked += n;
            truth += ce;
            let before = s.delivered_ce();
            s.on_ack(t(100 + i as u64), &ace_ack(1 + acked * MSS, ((5 + truth) % 8) as u8));
            inferred.push(s.delivered_ce() - before);
        }
        // Exact below 8 segments; 9 of 10 and 16 of 20 are exact too (the largest value with
        // the remainder), 1 of 10 is taken as 9: conservative, never less.
        assert_eq!(inferred, vec![0, 1, 2, 1, 9, 9, 16]);
        assert!(s.delivered_ce() >= truth);
        let h = heard.lock().unwrap();
        assert!(h.iter().all(|e| e.0 != "ecn-event" && e.0 != "loss"), "{h:?}");
        let pairs: Vec<_> = h.chunks(2).map(|c| (c[0].0, c[0].1, c[0].2, c[1].0)).collect();
        assert_eq!(pairs.len(), 7);
        for (k, &(first, ce, ect, second)) in pairs.iter().enumerate() {
            assert_eq!((first, second), ("feedback", "ack"), "feedback before the ACK");
            assert_eq!((ce, ect), (inferred[k], acks[k].0));
        }
        assert_eq!(s.ece_acks(), 6, "ACKs that reported new CE");
    }

    /// A classic controller over AccECN: an ACE that grew gets RFC 3168's response, once per
    /// window, and the CWR flag is never set (it is the ACE field's); an ACK that only
    /// acknowledges the SYN (no forward progress) is not read.
    #[test]
    fn a_classic_controller_over_accecn_reduces_once_per_window_without_cwr() {
        let mut s = sender_with(CcConfig::tcp_default(CcKind::NewReno, MSS));
        s.set_accecn();
        s.set_peer_window(u16::MAX, 14);
        s.write(1 << 20);
        assert!(!s.scalable());
        let t = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        let first = send_all(&mut s, t(0));
        assert_eq!(first.len(), 10);
        s.on_ack(t(50), &ace_ack(1, 0b010));
        assert_eq!(s.delivered_ce(), 0, "the handshake's reflection is not a count");
        let cwnd0 = s.controller().window();
        let mut cwr = 0;
        for i in 1..=10u64 {
            s.on_ack(t(100 + i), &ace_ack(1 + i * MSS, ((5 + i) % 8) as u8));
            cwr += send_all(&mut s, t(100 + i)).iter().filter(|d| d.cwr).count();
        }
        assert_eq!(s.delivered_ce(), 10);
        assert_eq!(s.ecn_responses(), 1);
        assert_eq!(s.controller().window(), cwnd0 / 2);
        assert_eq!(cwr, 0);
    }

    #[test]
    fn without_ecn_nothing_is_marked_and_ece_is_ignored() {
        let mut s = sender();
        s.set_ecn(false);
        s.set_peer_window(u16::MAX, 14);
        let sent = send_all(&mut s, Time::ZERO);
        assert!(sent.iter().all(|d| !d.ect && !d.cwr));
        s.on_ack(Time::ZERO + Dur::from_millis(100), &ack(1 + MSS, true));
        assert_eq!((s.ece_acks(), s.ecn_responses()), (0, 0));
    }
}
