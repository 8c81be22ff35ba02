//! Loss detection and congestion-control glue per RFC 9002 §5–§7 and appendix A; the sending
//! side of ECN (validation and CE reactions) is its part `recovery/ecn.rs`.
//!
//! * Per packet-number space, sent-packet records live in a `VecDeque` indexed by packet
//!   number − base: O(1) lookup, popped from the front once acknowledged or declared lost.
//! * ACK processing only visits packet numbers not acknowledged before (a [`RangeSet`] of
//!   processed numbers is subtracted from each ACK range), so its cost does not grow with
//!   the window.
//! * Loss detection (§6.1, A.10) scans from a cursor at the oldest outstanding packet and stops
//!   at the first packet not (yet) lost: packets are numbered and sent in order, so every
//!   later one is not lost either and this one sets the loss timer.
//! * RTT samples (§5.1): only when the ACK's Largest Acknowledged is newly acknowledged and a
//!   newly acknowledged packet was ack-eliciting; ack delay ignored for Initial/Handshake and
//!   capped at max_ack_delay once the handshake is confirmed (§5.3).
//! * PTO (§6.2, A.8): `(srtt + max(4·rttvar, kGranularity) + max_ack_delay)·2^pto_count`, with
//!   max_ack_delay = 0 for Initial and Handshake, from the last ack-eliciting send; no
//!   application-data PTO before handshake confirmation; the client's anti-deadlock PTO.
//! * Persistent congestion (§7.6.2): within one detection run, two ack-eliciting lost packets
//!   sent after the first RTT sample, with no acknowledged packet between them, sent more than
//!   `pto_base·kPersistentCongestionThreshold` apart.
//! * Spurious losses: packets declared lost are kept for a while; if one is acknowledged later,
//!   it counts as a spurious retransmission and, once every packet of the latest congestion
//!   event has been acknowledged, the controller is told to undo it.
//! * Each packet declared lost is reported to the controller on its own
//!   (`Controller::on_packet_lost`) before the detection run's congestion event.
//! * The retransmission timers of the stacks the studies ran (`retransmit_timer` =
//!   `"picoquic-2022"`, `"aioquic-1.7"`, `"mpquic-2018"`) are its part
//!   `recovery/stack_timers.rs`; `on_timeout` and `set_loss_detection_timer` choose among them.

mod ecn;
mod stack_timers;

use std::collections::VecDeque;

use multiconn_cc::{AckEvent, Controller, DeliveryRateEstimator, EcnFeedback, LossEvent, RttEstimator, SentRateState};
use multiconn_core::{Dur, Ecn, Payload, Time};
use multiconn_transport::profile::{RecoveryKnobs, RetransmitTimer, SpuriousUndo};

use crate::ack_ranges::EcnCounts;
use crate::packet::Space;
use crate::range_set::RangeSet;
use ecn::EcnSender;
pub use ecn::{EcnSenderStats, EcnValidation, ECN_TESTING_PACKETS};

/// How long a lost packet's record is kept for spurious-loss detection, in units of the base
/// PTO (without backoff).
const LOST_RETENTION_PTOS: u64 = 3;
/// At most this many lost records are kept per space.
const LOST_RETENTION_MAX: usize = 4096;
/// The congestion-event id of packets declared lost outside any congestion event (the
/// `aioquic-1.7` probe timeout). Event ids start at 1.
const NO_CONGESTION_EVENT: u32 = 0;

/// Loss recovery constants (from a profile's `[recovery]` and `[ack]`).
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveryConfig {
    /// kPacketThreshold (RFC 9002 §6.1.1): packets acknowledged after one before it is lost;
    /// 0: no packet threshold (only the time threshold declares losses).
    pub packet_threshold: u64,
    /// kTimeThreshold as a fraction `[num, den]` of the RTT (RFC 9002 §6.1.2: `[9, 8]`).
    pub time_threshold: [u64; 2],
    /// Floor the time-threshold loss delay at kGranularity (RFC 9002 §6.1.2).
    pub time_threshold_floor: bool,
    /// Declare persistent congestion (RFC 9002 §7.6).
    pub persistent_congestion: bool,
    /// kPersistentCongestionThreshold: the persistent-congestion period in base PTOs
    /// (RFC 9002 §7.6.1).
    pub persistent_congestion_threshold: u32,
    /// The peer's max_ack_delay.
    pub max_ack_delay: Dur,
    /// What the 1-RTT retransmission timer does.
    pub retransmit_timer: RetransmitTimer,
    /// Floor of the `picoquic-2022` and `mpquic-2018` retransmission timers.
    pub min_rto: Dur,
    /// Ceiling of the `mpquic-2018` retransmission timeout.
    pub max_rto: Dur,
    /// The `mpquic-2018` retransmission timeout before any RTT sample.
    pub initial_rto: Dur,
    /// Mark packets ECT(0), validate and react to CE counts (RFC 9000 §13.4, RFC 9002 §7.1).
    pub ecn: bool,
    /// How the controller hears of losses found spurious.
    pub spurious_undo: SpuriousUndo,
}

/// The most a `picoquic-2022` retransmission timer is doubled (×4).
pub const PICOQUIC_2022_MAX_BACKOFF_EXPONENT: u32 = 2;
/// `mpquic-2018`: tail-loss probes before a retransmission timeout (`maxTailLossProbes`).
pub const MPQUIC_2018_MAX_TAIL_LOSS_PROBES: u32 = 2;
/// `mpquic-2018`: the least tail-loss probe timeout with one packet outstanding
/// (`minTailLossProbeTimeout`).
pub const MPQUIC_2018_MIN_TLP_TIMEOUT: Dur = Dur::from_millis(10);
/// `mpquic-2018`: packets a retransmission timeout declares lost (`retransmitOldestTwoPackets`).
pub const MPQUIC_2018_RTO_PACKETS: usize = 2;

impl RecoveryConfig {
    /// The constants of a profile's `[recovery]`, the peer's `max_ack_delay`, ECN off.
    pub fn from_knobs(r: &RecoveryKnobs, max_ack_delay: Dur) -> RecoveryConfig {
        RecoveryConfig {
            retransmit_timer: r.retransmit_timer,
            min_rto: r.min_rto,
            max_rto: r.max_rto,
            initial_rto: r.initial_rto,
            packet_threshold: r.packet_threshold,
            time_threshold: [r.time_threshold[0].max(1), r.time_threshold[1].max(1)],
            time_threshold_floor: r.time_threshold_floor,
            persistent_congestion: r.persistent_congestion,
            persistent_congestion_threshold: r.persistent_congestion_threshold,
            max_ack_delay,
            ecn: false,
            spurious_undo: r.spurious_undo,
        }
    }
}

/// Where the content of a sent packet can be found again: the datagram it went out in and the
/// packet's index inside it. Kept by reference count, never copied.
#[derive(Clone, Debug)]
pub struct SentContent {
    /// The datagram the packet went out in.
    pub payload: Payload,
    /// Index of the packet in the datagram (0: the first).
    pub index: u8,
}

/// What the caller tells recovery about a packet it sent.
#[derive(Clone, Debug)]
pub struct SentPacketInfo {
    /// Packet number.
    pub pn: u64,
    /// When the packet was sent.
    pub time_sent: Time,
    /// Bytes of the packet (counted in bytes in flight if `in_flight`).
    pub size: u32,
    /// The packet is ack-eliciting.
    pub ack_eliciting: bool,
    /// The packet counts in bytes in flight (RFC 9002 §2).
    pub in_flight: bool,
    /// The sender was application- or flow-control-limited when sending it.
    pub app_limited: bool,
    /// Sent ECT(0).
    pub ect: bool,
    /// Where to find the packet's frames again.
    pub content: Option<SentContent>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Outstanding,
    Acked,
    Lost,
}

#[derive(Clone, Debug)]
struct SentPacket {
    time_sent: Time,
    size: u32,
    ack_eliciting: bool,
    in_flight: bool,
    app_limited: bool,
    ect: bool,
    state: State,
    lost_event: u32,
    rate: SentRateState,
    content: Option<SentContent>,
}

#[derive(Clone, Debug)]
struct LostRecord {
    pn: u64,
    expires: Time,
    event: u32,
    acked: bool,
    content: Option<SentContent>,
}

#[derive(Clone, Debug, Default)]
struct PnSpace {
    sent: VecDeque<SentPacket>,
    /// Packet number of `sent[0]`.
    base: u64,
    /// No outstanding packet below this number.
    cursor: u64,
    largest_acked: Option<u64>,
    /// Packet numbers already processed as acknowledged (above `floor`).
    processed: RangeSet,
    lost: VecDeque<LostRecord>,
    loss_time: Option<Time>,
    last_ack_eliciting: Option<Time>,
    ack_eliciting_in_flight: u64,
    bytes_in_flight: u64,
    discarded: bool,
}

impl PnSpace {
    fn next_pn(&self) -> u64 {
        self.base + self.sent.len() as u64
    }
    fn floor(&self) -> u64 {
        self.lost.front().map_or(self.base, |l| l.pn.min(self.base))
    }
}

/// A packet newly acknowledged or newly found lost, for the caller to act on its frames.
#[derive(Clone, Debug)]
pub struct PacketOutcome {
    /// Packet number space of the packet.
    pub space: Space,
    /// Packet number.
    pub pn: u64,
    /// Where to find the packet's frames.
    pub content: Option<SentContent>,
}

/// What processing one ACK frame or one timeout produced.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Packets newly acknowledged (their frames were delivered).
    pub acked: Vec<PacketOutcome>,
    /// Packets declared lost now (their frames must be sent again).
    pub lost: Vec<PacketOutcome>,
    /// Packets declared lost earlier and acknowledged now (their frames were delivered after
    /// all; retransmissions not yet sent can be cancelled).
    pub spurious: Vec<PacketOutcome>,
    /// An RTT sample was taken.
    pub rtt_updated: bool,
    /// Persistent congestion was declared.
    pub persistent_congestion: bool,
}

impl Outcome {
    /// Empties the outcome for reuse.
    pub fn clear(&mut self) {
        self.acked.clear();
        self.lost.clear();
        self.spurious.clear();
        self.rtt_updated = false;
        self.persistent_congestion = false;
    }
}

/// What a loss-detection timeout asks the caller to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutAction {
    /// Nothing (the timer was not due).
    None,
    /// Time-threshold loss detection ran; see the outcome.
    LossDetected,
    /// Send `count` ack-eliciting probe packets in `space`, ignoring the congestion window.
    Probe {
        /// Packet number space of the probes.
        space: Space,
        /// Probes to send (1 or 2).
        count: u8,
    },
    /// The `picoquic-2022` retransmission timer declared 1-RTT packets lost (see the outcome);
    /// `episode`: a new timer-based loss episode began (the path's repeat count grew);
    /// `ack_lost`: ACK-only packets were lost too (the next ACK on the path carries a PING).
    TimerLoss {
        /// A new timer-based loss episode began.
        episode: bool,
        /// ACK-only packets were declared lost too.
        ack_lost: bool,
    },
    /// The `mpquic-2018` tail-loss probe: the newest outstanding 1-RTT packet was declared lost
    /// (see the outcome, no congestion event); send one probe on the path, window ignored.
    TailLossProbe,
    /// The `mpquic-2018` retransmission timeout: the two oldest outstanding 1-RTT packets were
    /// declared lost (see the outcome) and the window collapsed; send them again on the path,
    /// window ignored, and let the failover rules judge the path.
    Rto,
    /// Client anti-deadlock: send one ack-eliciting packet in `space` (Initial: padded).
    AntiDeadlock {
        /// Initial, or Handshake once its keys are available.
        space: Space,
    },
}

/// Cumulative counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryStats {
    /// In-flight packets declared lost.
    pub lost_packets: u64,
    /// Of those, acknowledged later.
    pub spurious_losses: u64,
    /// Congestion events (one per loss episode reported to the controller).
    pub congestion_events: u64,
    /// Persistent congestion declared (RFC 9002 §7.6).
    pub persistent_congestion: u64,
    /// Congestion events undone because every loss in them proved spurious.
    pub spurious_congestion_events: u64,
    /// PTO expirations (RFC 9002 §6.2): probes, anti-deadlock packets and `picoquic-2022`
    /// timer-based losses.
    pub pto_expirations: u64,
    /// ACK frames ignored because they acknowledged packets never sent or were malformed.
    pub invalid_acks: u64,
    /// `picoquic-2022` timer-based loss episodes.
    pub timer_loss_episodes: u64,
    /// `mpquic-2018` tail-loss probes.
    pub tail_loss_probes: u64,
    /// `mpquic-2018` retransmission timeouts.
    pub retransmission_timeouts: u64,
}

/// Loss recovery for one connection (three packet-number spaces, one path).
#[derive(Debug)]
pub struct Recovery {
    cfg: RecoveryConfig,
    spaces: [PnSpace; 3],
    rtt: RttEstimator,
    controller: Box<dyn Controller>,
    delivery: DeliveryRateEstimator,
    pto_count: u32,
    timer: Option<Time>,
    first_rtt_sample: Option<Time>,
    // Context the connection keeps up to date.
    is_server: bool,
    handshake_confirmed: bool,
    peer_completed_address_validation: bool,
    at_amplification_limit: bool,
    has_handshake_keys: bool,
    // Congestion events for spurious-loss undo.
    event_id: u32,
    event_lost: u32,
    event_spurious: u32,
    event_undone: bool,
    /// Send time of the most recently sent packet acknowledged so far (picoquic's
    /// `path_packet_acked_time_sent`), for `spurious_undo = "picoquic-2022"`.
    latest_acked_sent: Time,
    stats: RecoveryStats,
    scratch: Vec<(u64, u64)>,
    /// `picoquic-2022`: when the last timer-based loss episode began.
    last_timer_episode: Option<Time>,
    /// ECN on this path; `None` when off.
    ecn: Option<EcnSender>,
    /// `mpquic-2018`: tail-loss probes and retransmission timeouts since the last
    /// acknowledgement of a new ack-eliciting packet (`tlpCount`, `rtoCount`).
    tlp_count: u32,
    rto_count: u32,
    /// `mpquic-2018`: when the last 1-RTT packet was sent, ACK-only ones included
    /// (`lastSentTime`).
    last_sent_data: Option<Time>,
}

impl Recovery {
    /// Loss recovery with no packet sent, `rtt` and `controller`; `is_server` for the
    /// anti-amplification and address-validation rules (RFC 9002 §6.2.2.1).
    pub fn new(cfg: RecoveryConfig, rtt: RttEstimator, controller: Box<dyn Controller>, is_server: bool) -> Recovery {
        // A scalable (L4S) controller marks ECT(1) (RFC 9331 §4), any other ECT(0).
        let codepoint = if controller.scalable_ecn() { Ecn::Ect1 } else { Ecn::Ect0 };
        Recovery {
            spaces: Default::default(),
            rtt,
            controller,
            delivery: DeliveryRateEstimator::new(),
            pto_count: 0,
            timer: None,
            first_rtt_sample: None,
            is_server,
            handshake_confirmed: false,
            peer_completed_address_validation: is_server,
            at_amplification_limit: false,
            has_handshake_keys: false,
            event_id: 0,
            event_lost: 0,
            event_spurious: 0,
            event_undone: true,
            latest_acked_sent: Time::ZERO,
            stats: RecoveryStats::default(),
            scratch: Vec::new(),
            last_timer_episode: None,
            ecn: cfg.ecn.then(|| EcnSender::new(codepoint)),
            tlp_count: 0,
            rto_count: 0,
            last_sent_data: None,
            cfg,
        }
    }

    /// The ECN codepoint of the next datagram (RFC 9000 §13.4.2, appendix A.4): ECT(0), ECT(1)
    /// for a scalable controller, or `None` (not-ECT) while ECN is off, validation waits or
    /// failed.
    pub fn ecn_mark(&self) -> Option<Ecn> {
        self.ecn.as_ref().filter(|e| e.marks()).map(EcnSender::codepoint)
    }

    /// ECN validation and counters; `None` when ECN is off.
    pub fn ecn_stats(&self) -> Option<EcnSenderStats> {
        self.ecn.as_ref().map(|e| EcnSenderStats {
            state: e.state,
            ce_reported: e.ce_reported(),
            responses: e.responses,
        })
    }

    // ---- accessors ----

    /// The path's RTT estimator (RFC 9002 §5).
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The path's congestion controller.
    pub fn controller(&self) -> &dyn Controller {
        self.controller.as_ref()
    }
    /// Congestion window in bytes.
    pub fn cwnd(&self) -> u64 {
        self.controller.window()
    }
    /// Bytes in flight over the three spaces (RFC 9002 §2).
    pub fn bytes_in_flight(&self) -> u64 {
        self.spaces.iter().map(|s| s.bytes_in_flight).sum()
    }
    /// Cumulative counters so far.
    pub fn stats(&self) -> RecoveryStats {
        self.stats
    }
    /// PTO backoff: PTOs since the last acknowledgement reset it (RFC 9002 §6.2.1 `pto_count`).
    pub fn pto_count(&self) -> u32 {
        self.pto_count
    }
    /// The constants recovery runs with.
    pub fn config(&self) -> &RecoveryConfig {
        &self.cfg
    }
    /// When `on_timeout` must next be called.
    pub fn loss_detection_timer(&self) -> Option<Time> {
        self.timer
    }
    /// The pending time-threshold loss time of a space.
    pub fn loss_time(&self, space: Space) -> Option<Time> {
        self.spaces[space.index()].loss_time
    }
    /// Packet number of the next packet sent in `space`.
    pub fn next_pn(&self, space: Space) -> u64 {
        self.spaces[space.index()].next_pn()
    }
    /// Largest packet number acknowledged in `space`.
    pub fn largest_acked(&self, space: Space) -> Option<u64> {
        self.spaces[space.index()].largest_acked
    }
    /// Ack-eliciting packets in flight in `space`.
    pub fn ack_eliciting_in_flight(&self, space: Space) -> u64 {
        self.spaces[space.index()].ack_eliciting_in_flight
    }
    /// The keys of `space` were discarded: nothing is sent or tracked there any more.
    pub fn is_discarded(&self, space: Space) -> bool {
        self.spaces[space.index()].discarded
    }

    // ---- context ----

    /// The handshake is confirmed (RFC 9001 §4.1.2): the peer has completed address validation
    /// too; rearms the timer.
    pub fn set_handshake_confirmed(&mut self, now: Time) {
        self.handshake_confirmed = true;
        self.peer_completed_address_validation = true;
        self.set_loss_detection_timer(now);
    }
    /// Handshake keys are available (the anti-deadlock probe goes in Handshake, RFC 9002 §6.2.2.1).
    pub fn set_has_handshake_keys(&mut self) {
        self.has_handshake_keys = true;
    }
    /// Client: an ACK for a Handshake packet arrived (RFC 9002 A.6 PeerCompletedAddressValidation).
    pub fn set_peer_completed_address_validation(&mut self, now: Time) {
        if !self.peer_completed_address_validation {
            self.peer_completed_address_validation = true;
            self.set_loss_detection_timer(now);
        }
    }
    /// Server: whether the anti-amplification limit blocks sending.
    pub fn set_at_amplification_limit(&mut self, now: Time, at_limit: bool) {
        if self.at_amplification_limit != at_limit {
            self.at_amplification_limit = at_limit;
            self.set_loss_detection_timer(now);
        }
    }

    /// The sender found nothing to send although the window had room (RFC 9002 §7.8).
    pub fn on_app_limited(&mut self) {
        self.delivery.on_app_limited(self.bytes_in_flight());
    }

    // ---- sending ----

    /// Records a sent packet (RFC 9002 A.5). `info.pn` must be `next_pn(space)`; otherwise
    /// the call is ignored and `false` returned.
    pub fn on_packet_sent(&mut self, space: Space, info: SentPacketInfo) -> bool {
        let bif = self.bytes_in_flight();
        let sp = &mut self.spaces[space.index()];
        if sp.discarded || info.pn != sp.next_pn() {
            return false;
        }
        if sp.sent.is_empty() {
            sp.base = info.pn;
            sp.cursor = sp.cursor.max(info.pn);
        }
        let rate = if info.in_flight { self.delivery.on_packet_sent(info.time_sent, bif) } else { SentRateState::default() };
        let sp = &mut self.spaces[space.index()];
        if info.in_flight {
            if info.ack_eliciting {
                sp.last_ack_eliciting = Some(info.time_sent);
                sp.ack_eliciting_in_flight += 1;
            }
            sp.bytes_in_flight += info.size as u64;
        }
        if let Some(e) = self.ecn.as_mut().filter(|_| info.ect) {
            e.on_ect_sent(space.index());
        }
        if space == Space::Data {
            self.last_sent_data = Some(info.time_sent);
        }
        let sp = &mut self.spaces[space.index()];
        sp.sent.push_back(SentPacket {
            time_sent: info.time_sent,
            size: info.size,
            ack_eliciting: info.ack_eliciting,
            in_flight: info.in_flight,
            app_limited: info.app_limited,
            ect: info.ect,
            state: State::Outstanding,
            lost_event: 0,
            rate,
            content: info.content,
        });
        if info.in_flight {
            let bif = self.bytes_in_flight();
            self.controller.on_packet_sent(info.time_sent, info.size as u64, bif);
            self.set_loss_detection_timer(info.time_sent);
        } else if space == Space::Data && self.cfg.retransmit_timer == RetransmitTimer::Mpquic2018 {
            // mp-quic's alarm runs from the last packet sent, whatever it carried.
            self.set_loss_detection_timer(info.time_sent);
        }
        true
    }

    /// Contents of the oldest outstanding ack-eliciting packets of `space` (up to `n`), for
    /// probes that resend data without declaring it lost.
    pub fn oldest_unacked(&self, space: Space, n: usize, out: &mut Vec<SentContent>) {
        let sp = &self.spaces[space.index()];
        let start = sp.cursor.saturating_sub(sp.base) as usize;
        out.extend(sp.sent.iter().skip(start).filter(|p| p.state == State::Outstanding && p.ack_eliciting).filter_map(|p| p.content.clone()).take(n));
    }

    // ---- acknowledgements ----

    /// Processes an ACK frame's ranges (inclusive, any order) received in `space`
    /// (RFC 9002 A.7). `ack_delay` is the decoded ACK Delay field, `ecn` the frame's ECN
    /// counts (type 0x03).
    pub fn on_ack_received(&mut self, now: Time, space: Space, ranges: impl Iterator<Item = (u64, u64)>, ack_delay: Dur, ecn: Option<EcnCounts>, out: &mut Outcome) {
        let si = space.index();
        if self.spaces[si].discarded {
            return;
        }
        let mut pieces = std::mem::take(&mut self.scratch);
        pieces.clear();
        pieces.extend(ranges);
        let next = self.spaces[si].next_pn();
        if pieces.is_empty() || pieces.iter().any(|&(lo, hi)| lo > hi || hi >= next) {
            self.stats.invalid_acks += 1;
            self.scratch = pieces;
            return;
        }
        let ack_largest = pieces.iter().map(|r| r.1).max().unwrap_or(0);
        let n_ranges = pieces.len();
        {
            let sp = &mut self.spaces[si];
            let floor = sp.floor();
            for k in 0..n_ranges {
                let (lo, hi) = pieces[k];
                let lo = lo.max(floor);
                if lo <= hi {
                    sp.processed.insert_with(lo, hi + 1, |a, b| pieces.push((a, b)));
                }
            }
        }
        pieces.drain(..n_ranges);
        let sp = &mut self.spaces[si];
        // RFC 9000 §13.4.2.1: ECN is validated only on ACKs that raise the largest acknowledged.
        let raises_largest = sp.largest_acked.map_or(true, |l| ack_largest > l);
        sp.largest_acked = Some(sp.largest_acked.map_or(ack_largest, |l| l.max(ack_largest)));

        let prior_in_flight = self.spaces.iter().map(|s| s.bytes_in_flight).sum::<u64>();
        let mut acked_bytes = 0u64;
        let mut newest_sent: Option<Time> = None;
        let mut newest_app_limited = false;
        let mut any_ack_eliciting = false;
        let mut largest_newly: Option<(u64, Time)> = None;
        let mut spurious_in_event = 0u32;
        let mut spurious = 0u32;
        let mut any_new = false;
        let mut newly_ect = 0u64;
        let mut largest_sent: Option<Time> = None;
        let sp = &mut self.spaces[si];
        for &(a, b) in &pieces {
            for pn in a..b {
                if pn < sp.base {
                    // Popped: only lost records can still be here.
                    if let Ok(i) = sp.lost.binary_search_by_key(&pn, |l| l.pn) {
                        let rec = &mut sp.lost[i];
                        if !rec.acked {
                            rec.acked = true;
                            self.stats.spurious_losses += 1;
                            spurious += 1;
                            if rec.event == self.event_id {
                                spurious_in_event += 1;
                            }
                            out.spurious.push(PacketOutcome { space, pn, content: rec.content.take() });
                        }
                    }
                    continue;
                }
                let i = (pn - sp.base) as usize;
                let p = &mut sp.sent[i];
                if p.state != State::Acked {
                    newly_ect += u64::from(p.ect);
                    if pn == ack_largest {
                        largest_sent = Some(p.time_sent);
                    }
                }
                match p.state {
                    State::Acked => {}
                    State::Lost => {
                        p.state = State::Acked;
                        if p.in_flight {
                            self.stats.spurious_losses += 1;
                            spurious += 1;
                            if p.lost_event == self.event_id {
                                spurious_in_event += 1;
                            }
                        }
                        out.spurious.push(PacketOutcome { space, pn, content: p.content.take() });
                    }
                    State::Outstanding => {
                        p.state = State::Acked;
                        any_new = true;
                        if p.in_flight {
                            sp.bytes_in_flight -= p.size as u64;
                            acked_bytes += p.size as u64;
                            if p.ack_eliciting {
                                sp.ack_eliciting_in_flight -= 1;
                            }
                            if newest_sent.map_or(true, |t| p.time_sent >= t) {
                                newest_sent = Some(p.time_sent);
                                newest_app_limited = p.app_limited;
                            }
                            self.delivery.on_packet_acked(now, p.size as u64, &p.rate);
                        }
                        any_ack_eliciting |= p.ack_eliciting;
                        if largest_newly.map_or(true, |(l, _)| pn > l) {
                            largest_newly = Some((pn, p.time_sent));
                        }
                        out.acked.push(PacketOutcome { space, pn, content: p.content.take() });
                    }
                }
            }
        }
        self.scratch = pieces;

        if let Some(t) = newest_sent {
            self.latest_acked_sent = self.latest_acked_sent.max(t);
        }
        if self.cfg.spurious_undo == SpuriousUndo::Picoquic2022 {
            let srtt = self.rtt.smoothed();
            for _ in 0..spurious {
                self.controller.on_spurious_loss(now, self.latest_acked_sent, srtt);
            }
        } else if self.cfg.spurious_undo == SpuriousUndo::None {
            // mp-quic: nothing is undone.
        } else if spurious_in_event > 0 && !self.event_undone {
            self.event_spurious += spurious_in_event;
            if self.event_spurious >= self.event_lost {
                self.event_undone = true;
                self.stats.spurious_congestion_events += 1;
                self.controller.on_spurious_congestion(now);
            }
        }

        if !any_new {
            self.pop_front(si, now);
            return;
        }
        // picoquic (`frames.c` `picoquic_update_path_rtt`) samples the RTT from ACK-only
        // packets too; RFC 9002 §5.1 only from ack-eliciting ones.
        let sampled = any_ack_eliciting || self.cfg.retransmit_timer == RetransmitTimer::Picoquic2022;
        if let Some((pn, sent)) = largest_newly {
            if pn == ack_largest && sampled {
                let latest = now.since(sent);
                let delay = match space {
                    Space::Data if self.handshake_confirmed => ack_delay.min(self.cfg.max_ack_delay),
                    Space::Data => ack_delay,
                    _ => Dur::ZERO,
                };
                self.rtt.update(latest, delay);
                out.rtt_updated = true;
                if self.first_rtt_sample.is_none() {
                    self.first_rtt_sample = Some(now);
                }
            }
        }

        if raises_largest {
            self.process_ecn(now, si, ecn, newly_ect, largest_sent.unwrap_or(now));
        }

        self.detect_lost(now, space, out);

        if acked_bytes > 0 {
            let rate_sample = self.delivery.take_sample(self.rtt.min());
            let ev = AckEvent {
                bytes_acked: acked_bytes,
                largest_acked_sent: newest_sent.unwrap_or(now),
                prior_in_flight,
                bytes_in_flight: self.bytes_in_flight(),
                app_limited: newest_app_limited,
                rate_sample,
            };
            self.controller.on_ack(now, &ev, &self.rtt);
        }
        if space == Space::Handshake && !self.is_server {
            self.peer_completed_address_validation = true;
        }
        if self.peer_completed_address_validation {
            self.pto_count = 0;
        }
        if space == Space::Data && any_ack_eliciting {
            // mp-quic's onPacketAcked.
            self.tlp_count = 0;
            self.rto_count = 0;
        }
        self.pop_front(si, now);
        self.set_loss_detection_timer(now);
    }

    /// An ACK frame's ECN counts: validated (RFC 9000 §13.4.2.1, [`EcnSender::on_ack_counts`]),
    /// then RFC 9002 B.7 `ProcessECN`: a larger CE count is a congestion event keyed to the
    /// send time of the largest acknowledged packet (`largest_sent`). A scalable controller
    /// hears every ACK's increases instead ([`Controller::on_ecn_feedback`]).
    fn process_ecn(&mut self, now: Time, si: usize, counts: Option<EcnCounts>, newly_ect: u64, largest_sent: Time) {
        let Some(e) = self.ecn.as_mut() else { return };
        let Some(increase) = e.on_ack_counts(now, si, counts, newly_ect, largest_sent) else { return };
        if e.codepoint() == Ecn::Ect1 {
            if increase.all > 0 {
                let fb = EcnFeedback { ce_packets: increase.ce, ect_packets: increase.all, largest_acked_sent: largest_sent };
                self.controller.on_ecn_feedback(now, &fb, &self.rtt);
            }
            return;
        }
        if increase.congestion_event {
            let bif = self.bytes_in_flight();
            let ev = LossEvent { bytes_lost: 0, largest_lost_sent: largest_sent, bytes_in_flight: bif, prior_in_flight: bif };
            self.controller.on_ecn_congestion_event(now, &ev, &self.rtt);
        }
    }

    /// Drops done records from the front, keeping lost ones aside for spurious detection.
    fn pop_front(&mut self, si: usize, now: Time) {
        let retention = Dur(self.rtt.pto_base(self.cfg.max_ack_delay).0.saturating_mul(LOST_RETENTION_PTOS));
        let sp = &mut self.spaces[si];
        while let Some(front) = sp.sent.front() {
            match front.state {
                State::Outstanding => break,
                State::Acked => {}
                State::Lost => {
                    if front.in_flight {
                        let p = sp.sent.front_mut().expect("front exists");
                        sp.lost.push_back(LostRecord {
                            pn: sp.base,
                            expires: now + retention,
                            event: p.lost_event,
                            acked: false,
                            content: p.content.take(),
                        });
                    }
                }
            }
            sp.sent.pop_front();
            sp.base += 1;
        }
        if sp.sent.is_empty() {
            sp.base = sp.next_pn();
        }
        sp.cursor = sp.cursor.max(sp.base);
        while sp.lost.front().is_some_and(|l| l.expires <= now || l.acked) || sp.lost.len() > LOST_RETENTION_MAX {
            sp.lost.pop_front();
        }
        let floor = sp.floor();
        sp.processed.remove_below(floor);
    }

    /// RFC 9002 A.10 DetectAndRemoveLostPackets, then OnPacketsLost for what it found.
    fn detect_lost(&mut self, now: Time, space: Space, out: &mut Outcome) {
        let si = space.index();
        let loss_delay = self.rtt.loss_delay(self.cfg.time_threshold[0], self.cfg.time_threshold[1], self.cfg.time_threshold_floor);
        let pc_duration = Dur(self.rtt.pto_base(self.cfg.max_ack_delay).0.saturating_mul(self.cfg.persistent_congestion_threshold as u64));
        let threshold = self.cfg.packet_threshold;
        let first_sample = self.first_rtt_sample;
        let event = self.next_event_id();
        let sp = &mut self.spaces[si];
        sp.loss_time = None;
        let Some(largest) = sp.largest_acked else { return };
        let prior_in_flight_space = sp.bytes_in_flight;
        let mut lost_bytes = 0u64;
        let mut lost_count = 0u32;
        let mut largest_lost_sent = Time::ZERO;
        let mut run_start: Option<Time> = None;
        let mut persistent = false;
        let mut lost_each = std::mem::take(&mut self.scratch);
        lost_each.clear();
        let mut lost_ect = 0u64;
        // Advance the cursor over packets that are no longer outstanding.
        while let Some(p) = sp.cursor.checked_sub(sp.base).and_then(|i| sp.sent.get(i as usize)) {
            if p.state == State::Outstanding {
                break;
            }
            sp.cursor += 1;
        }
        let mut pn = sp.cursor;
        while pn <= largest {
            let Some(p) = pn.checked_sub(sp.base).and_then(|i| sp.sent.get_mut(i as usize)) else { break };
            match p.state {
                State::Acked => run_start = None,
                State::Lost => {}
                State::Outstanding => {
                    let time_lost = now.0 >= loss_delay.0 && p.time_sent <= Time(now.0 - loss_delay.0);
                    if time_lost || (threshold > 0 && largest >= pn + threshold) {
                        p.state = State::Lost;
                        p.lost_event = event;
                        if p.in_flight {
                            sp.bytes_in_flight -= p.size as u64;
                            lost_bytes += p.size as u64;
                            lost_count += 1;
                            largest_lost_sent = largest_lost_sent.max(p.time_sent);
                            if p.ack_eliciting {
                                sp.ack_eliciting_in_flight -= 1;
                            }
                            out.lost.push(PacketOutcome { space, pn, content: p.content.clone() });
                            lost_each.push((pn, p.size as u64));
                            if p.ect {
                                lost_ect += 1;
                            }
                        }
                        if p.ack_eliciting && first_sample.is_some_and(|t| p.time_sent > t) {
                            match run_start {
                                None => run_start = Some(p.time_sent),
                                Some(start) => {
                                    if p.time_sent.since(start) > pc_duration {
                                        persistent = true;
                                    }
                                }
                            }
                        }
                    } else {
                        sp.loss_time = Some(p.time_sent + loss_delay);
                        break;
                    }
                }
            }
            pn += 1;
        }
        for &(pn, bytes) in &lost_each {
            self.delivery.on_packet_lost(bytes);
            self.controller.on_packet_lost(now, pn, bytes);
        }
        self.scratch = lost_each;
        if lost_count == 0 {
            return;
        }
        if let Some(e) = self.ecn.as_mut() {
            e.on_lost(now, lost_ect, largest_lost_sent);
        }
        let others: u64 = self.spaces.iter().enumerate().filter(|(i, _)| *i != si).map(|(_, s)| s.bytes_in_flight).sum();
        self.stats.lost_packets += lost_count as u64;
        self.stats.congestion_events += 1;
        self.event_id = event;
        self.event_lost = lost_count;
        self.event_spurious = 0;
        self.event_undone = false;
        let ev = LossEvent {
            bytes_lost: lost_bytes,
            largest_lost_sent,
            bytes_in_flight: others + self.spaces[si].bytes_in_flight,
            prior_in_flight: others + prior_in_flight_space,
        };
        self.controller.on_congestion_event(now, &ev, &self.rtt);
        if persistent && self.cfg.persistent_congestion {
            self.stats.persistent_congestion += 1;
            out.persistent_congestion = true;
            self.controller.on_persistent_congestion(now);
        }
    }

    // ---- timers ----

    fn loss_time_and_space(&self) -> Option<(Time, Space)> {
        Space::ALL.iter().filter_map(|s| self.spaces[s.index()].loss_time.map(|t| (t, *s))).min_by_key(|(t, _)| *t)
    }

    fn backoff(&self, d: Dur) -> Dur {
        Dur(d.0.saturating_mul(1u64.checked_shl(self.pto_count).unwrap_or(u64::MAX)))
    }

    /// RFC 9002 A.8 GetPtoTimeAndSpace. `now` anchors the anti-deadlock timer.
    fn pto_time_and_space(&self, now: Time) -> Option<(Time, Space)> {
        let any_in_flight = self.spaces.iter().any(|s| s.ack_eliciting_in_flight > 0);
        let picoquic = self.picoquic_deadline();
        if !any_in_flight {
            if let Some(t) = picoquic {
                return Some((t, Space::Data));
            }
            let d = self.backoff(self.rtt.pto_base(Dur::ZERO));
            let space = if self.has_handshake_keys { Space::Handshake } else { Space::Initial };
            return Some((now + d, space));
        }
        let mut best: Option<(Time, Space)> = None;
        for space in Space::ALL {
            let sp = &self.spaces[space.index()];
            let picoquic_data = space == Space::Data && picoquic.is_some();
            if (sp.ack_eliciting_in_flight == 0 && !picoquic_data) || sp.discarded {
                continue;
            }
            let mad = if space == Space::Data {
                if !self.handshake_confirmed {
                    return best;
                }
                self.cfg.max_ack_delay
            } else {
                Dur::ZERO
            };
            let t = if space == Space::Data && self.cfg.retransmit_timer == RetransmitTimer::Picoquic2022 {
                let Some(t) = picoquic else { continue };
                t
            } else if space == Space::Data && self.cfg.retransmit_timer == RetransmitTimer::Mpquic2018 {
                let Some(last) = self.last_sent_data else { continue };
                last + self.mpquic_timeout()
            } else {
                let Some(last) = sp.last_ack_eliciting else { continue };
                last + self.backoff(self.rtt.pto_base(mad))
            };
            if best.map_or(true, |(b, _)| t < b) {
                best = Some((t, space));
            }
        }
        best
    }

    /// RFC 9002 A.8 SetLossDetectionTimer.
    pub fn set_loss_detection_timer(&mut self, now: Time) {
        if let Some((t, _)) = self.loss_time_and_space() {
            self.timer = Some(t);
            return;
        }
        if self.is_server && self.at_amplification_limit {
            self.timer = None;
            return;
        }
        let any_in_flight = self.spaces.iter().any(|s| s.ack_eliciting_in_flight > 0);
        if !any_in_flight && self.peer_completed_address_validation && self.picoquic_deadline().is_none() {
            self.timer = None;
            return;
        }
        self.timer = self.pto_time_and_space(now).map(|(t, _)| t);
    }

    /// RFC 9002 A.9 OnLossDetectionTimeout. Does nothing before the timer is due.
    pub fn on_timeout(&mut self, now: Time, out: &mut Outcome) -> TimeoutAction {
        match self.timer {
            Some(t) if t <= now => {}
            _ => return TimeoutAction::None,
        }
        if let Some((_, space)) = self.loss_time_and_space() {
            self.detect_lost(now, space, out);
            self.pop_front(space.index(), now);
            self.set_loss_detection_timer(now);
            return TimeoutAction::LossDetected;
        }
        let any_in_flight = self.spaces.iter().any(|s| s.ack_eliciting_in_flight > 0);
        let action = if !any_in_flight && self.picoquic_deadline().is_none() {
            let space = if self.has_handshake_keys { Space::Handshake } else { Space::Initial };
            TimeoutAction::AntiDeadlock { space }
        } else {
            match self.pto_time_and_space(now) {
                Some((_, Space::Data)) if self.cfg.retransmit_timer == RetransmitTimer::Picoquic2022 => {
                    let (episode, ack_lost) = self.timer_loss(now, out);
                    self.stats.pto_expirations += 1;
                    self.pop_front(Space::Data.index(), now);
                    self.set_loss_detection_timer(now);
                    return TimeoutAction::TimerLoss { episode, ack_lost };
                }
                Some((_, Space::Data)) if self.cfg.retransmit_timer == RetransmitTimer::Mpquic2018 => {
                    self.stats.pto_expirations += 1;
                    let action = if self.mpquic_tlp_due() {
                        self.tlp_count += 1;
                        self.stats.tail_loss_probes += 1;
                        self.expire_newest(now, Space::Data, out);
                        TimeoutAction::TailLossProbe
                    } else {
                        self.rto_count = self.rto_count.saturating_add(1);
                        self.stats.retransmission_timeouts += 1;
                        self.mpquic_rto_loss(now, out);
                        TimeoutAction::Rto
                    };
                    self.set_loss_detection_timer(now);
                    return action;
                }
                Some((_, Space::Data)) if self.cfg.retransmit_timer == RetransmitTimer::Aioquic17 => {
                    self.expire_oldest(now, Space::Data, out);
                    TimeoutAction::Probe { space: Space::Data, count: 1 }
                }
                Some((_, space)) => TimeoutAction::Probe { space, count: 2 },
                None => {
                    self.set_loss_detection_timer(now);
                    return TimeoutAction::None;
                }
            }
        };
        self.stats.pto_expirations += 1;
        self.pto_count = self.pto_count.saturating_add(1);
        self.set_loss_detection_timer(now);
        action
    }

    /// The unbacked-off retransmission timeout of the 1-RTT space: RFC 9002's PTO base, or the
    /// `picoquic-2022` timer.
    pub fn retransmit_timeout(&self) -> Dur {
        match self.cfg.retransmit_timer {
            RetransmitTimer::Rfc9002 | RetransmitTimer::Aioquic17 => self.rtt.pto_base(self.cfg.max_ack_delay),
            RetransmitTimer::Picoquic2022 => self.picoquic_timer_base(),
            RetransmitTimer::Mpquic2018 => self.mpquic_rto_base(),
        }
    }

    /// Declares the packet at index `i` of `space` lost without a congestion event (only the
    /// bytes in flight change) and hands its frames back.
    fn expire(&mut self, now: Time, space: Space, i: usize, out: &mut Outcome) {
        let si = space.index();
        let sp = &mut self.spaces[si];
        let pn = sp.base + i as u64;
        let p = &mut sp.sent[i];
        p.state = State::Lost;
        p.lost_event = NO_CONGESTION_EVENT;
        if p.in_flight {
            sp.bytes_in_flight -= p.size as u64;
        }
        sp.ack_eliciting_in_flight -= 1;
        out.lost.push(PacketOutcome { space, pn, content: p.content.clone() });
        self.stats.lost_packets += 1;
        self.pop_front(si, now);
    }

    /// The id of the next congestion event, never [`NO_CONGESTION_EVENT`].
    fn next_event_id(&self) -> u32 {
        match self.event_id.wrapping_add(1) {
            NO_CONGESTION_EVENT => NO_CONGESTION_EVENT + 1,
            id => id,
        }
    }

    /// RFC 9002 A.11 OnPacketNumberSpaceDiscarded (keys discarded): its packets leave bytes in
    /// flight without a congestion signal.
    pub fn discard_space(&mut self, now: Time, space: Space) {
        let sp = &mut self.spaces[space.index()];
        if sp.discarded {
            return;
        }
        let next = sp.next_pn();
        *sp = PnSpace { discarded: true, base: next, cursor: next, ..PnSpace::default() };
        self.pto_count = 0;
        self.set_loss_detection_timer(now);
    }
}
