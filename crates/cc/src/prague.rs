//! Prague, the scalable congestion control of L4S (RFC 9331 §4, draft-briscoe-iccrg-prague-
//! congestion-control-04), with the choices of Linux's `tcp_prague.c` (L4STeam, module 0.6)
//! where the draft leaves room; picoquic's `prague.c` agrees on everything modelled here.
//!
//! * It sends ECT(1) ([`Controller::scalable_ecn`]) and hears the extent of CE marking per
//!   ACK ([`Controller::on_ecn_feedback`]: the packets the peer newly reports CE and the ECT
//!   packets it newly reports at all — TCP's AccECN ACE counter, QUIC's ECN counts), never a
//!   once-per-RTT ECN congestion event.
//! * α, the EWMA of the marked fraction: 1 at the start (so the first CE halves the window, as
//!   a classic sender would); once a CE has been seen, at the end of every round trip
//!   `α ← α·(1 − g) + g·F` with g = 1/16 and F the round's CE packets over its ECT packets.
//!   A round ends when an ACK acknowledges a packet sent after the round began.
//! * CE response at most once per round trip (TCP's CWR state: until a packet sent after the
//!   reduction is acknowledged): `cwnd ← cwnd − cwnd·α/2`, rounded, floored at the minimum
//!   window (2 segments); slow start ends there (`ssthresh = cwnd`).
//! * Additive increase on every ACK outside loss recovery, even within a CE response, counting
//!   only the bytes *not* CE-marked: slow start `cwnd += unmarked`, congestion avoidance one
//!   segment per window of unmarked bytes — growth ∝ (1 − p).
//! * RTT independence (`rtt_scaling = Rate`, Linux's default `RTT_CONTROL_RATE`): 500 rounds
//!   after slow start, a flow whose smoothed RTT is below the target (25 ms) and at most 100 ms
//!   grows by `(srtt/target)²` segments per window instead of 1, and updates α and reduces at
//!   most once per target RTT, so its *rate* grows like a 25 ms flow's.
//! * Loss: Reno's halving once per recovery period (`ssthresh = cwnd = cwnd/2`), no growth
//!   until a packet sent after it is acknowledged; an undo restores the window; persistent
//!   congestion or an RTO collapses it to the loss window.
//! * Pacing always ([`Controller::needs_pacing`]): cwnd/srtt, twice that while
//!   `cwnd < ssthresh/2` (slow start), in bursts of at most 2⁻¹² s at that rate (one datagram
//!   at least; Linux's GSO burst, [`crate::pacer::BurstRule::RateSlice`]).
//! * Classic-ECN fallback (`ecn_fallback`, off by default as in Linux): a single-queue RFC 3168
//!   AQM marks only once its queue is standing, where an L4S queue marks at about a
//!   millisecond. With the fallback on, a round that saw CE while the smoothed queue delay
//!   (srtt − min RTT) exceeded [`CLASSIC_QUEUE_DELAY`] raises a score, any other round with CE
//!   lowers it; from [`CLASSIC_SCORE`] rounds in a row the flow answers CE as Reno does
//!   (α held at 1: every response halves) until the score falls back to 0. Linux scores the
//!   RTT's deviation and the queue delay logarithmically; this keeps the queue-delay test and
//!   its effect, not the exact score.

use crate::recovery_period::RecoveryPeriod;
use crate::{AckEvent, CcConfig, CcKind, CcState, Controller, EcnFeedback, LossEvent, RttEstimator};
use multiconn_core::{Dur, Rate, Time};

/// The α gain g (Linux `PRAGUE_SHIFT_G` = 4: 1/16).
pub const ALPHA_GAIN: f64 = 1.0 / 16.0;
/// Rounds after slow start before RTT independence applies (`prague_rtt_transition`).
pub const RTT_TRANSITION_ROUNDS: u64 = 500;
/// The RTT a flow behaves as if it had under RTT independence (`prague_rtt_target`).
pub const RTT_TARGET: Dur = Dur::from_millis(25);
/// RTT independence applies only to flows whose smoothed RTT is at most this.
pub const RTT_INDEPENDENCE_MAX: Dur = Dur::from_millis(100);
/// Smoothed queue delay above which a round with CE counts towards a classic bottleneck.
pub const CLASSIC_QUEUE_DELAY: Dur = Dur::from_millis(2);
/// Rounds of classic evidence in a row before the fallback to Reno's response.
pub const CLASSIC_SCORE: u32 = 4;

/// How Prague makes its increase independent of its RTT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PragueRttScaling {
    /// Linux's default `RTT_CONTROL_RATE`: after [`RTT_TRANSITION_ROUNDS`], rate growth of a
    /// [`RTT_TARGET`] flow.
    #[default]
    Rate,
    /// No scaling: one segment per round trip (DCTCP's increase).
    None,
}

/// Prague (see the module header).
#[derive(Debug, Clone)]
pub struct Prague {
    cfg: CcConfig,
    cwnd: u64,
    ssthresh: u64,
    alpha: f64,
    saw_ce: bool,
    /// Loss recovery (Reno's halving).
    loss: RecoveryPeriod,
    /// The last CE response: packets sent up to it do not trigger another.
    cwr: RecoveryPeriod,
    /// Congestion-avoidance increase accumulated in bytes of window (fractional segments).
    ai_acc: f64,
    /// The newest send time when the current round began; an ACK of a later packet ends it.
    round_end: Time,
    last_sent: Time,
    /// When α was last updated and the window last cut for CE (RTT independence limits each
    /// to one per target RTT).
    last_alpha_update: Time,
    last_response: Time,
    round_packets: u64,
    round_ce: u64,
    /// CE bytes of the ACK being processed, kept from its feedback for its growth.
    pending_ce_bytes: u64,
    rounds_after_slow_start: u64,
    srtt: Dur,
    min_rtt: Dur,
    classic_score: u32,
    classic: bool,
    before_reduction: Option<(u64, u64)>,
    responses: u64,
}

impl Prague {
    /// Slow start from the initial window, α = 1.
    pub fn new(cfg: CcConfig) -> Prague {
        Prague {
            cwnd: cfg.initial_window,
            ssthresh: u64::MAX,
            alpha: 1.0,
            saw_ce: false,
            loss: RecoveryPeriod::default(),
            cwr: RecoveryPeriod::default(),
            ai_acc: 0.0,
            round_end: Time::ZERO,
            last_sent: Time::ZERO,
            last_alpha_update: Time::ZERO,
            last_response: Time::ZERO,
            round_packets: 0,
            round_ce: 0,
            pending_ce_bytes: 0,
            rounds_after_slow_start: 0,
            srtt: Dur::ZERO,
            min_rtt: Dur::MAX,
            classic_score: 0,
            classic: false,
            before_reduction: None,
            responses: 0,
            cfg,
        }
    }

    /// The marked-fraction estimate α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// CE responses (window reductions for marks) so far.
    pub fn ce_responses(&self) -> u64 {
        self.responses
    }

    /// Whether the classic-ECN fallback is answering CE as Reno does.
    pub fn in_classic_fallback(&self) -> bool {
        self.classic
    }

    fn mss(&self) -> u64 {
        self.cfg.max_datagram_size
    }

    /// RTT independence in force: the flow is old enough and its RTT below the target.
    fn rtt_independent(&self) -> bool {
        self.cfg.prague_rtt_scaling == PragueRttScaling::Rate
            && self.rounds_after_slow_start >= RTT_TRANSITION_ROUNDS
            && self.srtt < RTT_TARGET
            && self.srtt <= RTT_INDEPENDENCE_MAX
    }

    /// Segments of increase per window of unmarked bytes.
    fn ai_per_window(&self) -> f64 {
        if self.rtt_independent() {
            let r = self.srtt.as_secs_f64() / RTT_TARGET.as_secs_f64();
            r * r
        } else {
            1.0
        }
    }

    /// Whether a per-round action may happen now (always, or once per target RTT under RTT
    /// independence).
    fn round_action_due(&self, now: Time, last: Time) -> bool {
        !self.rtt_independent() || now.since(last) >= RTT_TARGET
    }

    /// The end of a round trip: α's EWMA, the classic-bottleneck score.
    fn end_round(&mut self, now: Time) {
        if self.ssthresh != u64::MAX {
            self.rounds_after_slow_start += 1;
        }
        if self.cfg.prague_ecn_fallback && self.round_ce > 0 {
            let queue = self.srtt.0.saturating_sub(self.min_rtt.0);
            if queue > CLASSIC_QUEUE_DELAY.0 {
                self.classic_score = (self.classic_score + 1).min(CLASSIC_SCORE);
            } else {
                self.classic_score = self.classic_score.saturating_sub(1);
            }
            if self.classic_score >= CLASSIC_SCORE {
                self.classic = true;
            } else if self.classic_score == 0 {
                self.classic = false;
            }
        }
        if self.saw_ce && self.round_action_due(now, self.last_alpha_update) {
            let f = if self.round_packets > 0 { self.round_ce as f64 / self.round_packets as f64 } else { 0.0 };
            self.alpha = (self.alpha * (1.0 - ALPHA_GAIN) + ALPHA_GAIN * f.min(1.0)).clamp(0.0, 1.0);
            if self.classic {
                self.alpha = 1.0;
            }
            self.last_alpha_update = now;
        }
        self.round_packets = 0;
        self.round_ce = 0;
        self.round_end = self.last_sent;
    }

    /// The CE response: `cwnd − cwnd·α/2`, once per round trip.
    fn respond_to_ce(&mut self, now: Time) {
        let cut = (self.cwnd as f64 * self.alpha / 2.0).round() as u64;
        self.before_reduction = Some((self.cwnd, self.ssthresh));
        self.cwnd = self.cwnd.saturating_sub(cut).max(self.cfg.minimum_window);
        self.ssthresh = self.cwnd;
        self.ai_acc = 0.0;
        self.cwr.begin(now);
        self.last_response = now;
        self.responses += 1;
    }
}

impl Controller for Prague {
    fn on_packet_sent(&mut self, now: Time, _bytes: u64, _bytes_in_flight: u64) {
        self.last_sent = now;
    }

    fn on_ecn_feedback(&mut self, now: Time, fb: &EcnFeedback, rtt: &RttEstimator) {
        // The ACK that ends a round ends it before its own counts go into the next one.
        self.srtt = rtt.smoothed();
        self.min_rtt = self.min_rtt.min(rtt.min());
        if fb.largest_acked_sent > self.round_end {
            self.end_round(now);
        }
        self.round_packets += fb.ect_packets.max(fb.ce_packets);
        self.round_ce += fb.ce_packets;
        self.pending_ce_bytes += fb.ce_packets * self.mss();
        if fb.ce_packets == 0 {
            return;
        }
        self.saw_ce = true;
        if self.classic {
            self.alpha = 1.0;
        }
        if !self.cwr.covers(fb.largest_acked_sent) && !self.loss.is_open() && self.round_action_due(now, self.last_response) {
            self.respond_to_ce(now);
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        self.srtt = rtt.smoothed();
        self.min_rtt = self.min_rtt.min(rtt.min());
        if ack.largest_acked_sent > self.round_end {
            self.end_round(now);
        }
        let unmarked = ack.bytes_acked.saturating_sub(std::mem::take(&mut self.pending_ce_bytes));
        if self.cwr.open_start().is_some_and(|s| ack.largest_acked_sent > s) {
            self.cwr.end();
        }
        if self.loss.covers(ack.largest_acked_sent) {
            return;
        }
        self.loss.end();
        if unmarked == 0 || (self.cfg.app_limited_check && ack.app_limited) {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += unmarked;
            return;
        }
        self.ai_acc += unmarked as f64 * self.ai_per_window();
        let w = self.cwnd as f64;
        if self.ai_acc >= w {
            let segments = (self.ai_acc / w).floor();
            self.ai_acc -= segments * w;
            self.cwnd += segments as u64 * self.mss();
        }
    }

    fn on_congestion_event(&mut self, now: Time, loss: &LossEvent, _rtt: &RttEstimator) {
        if self.loss.covers(loss.largest_lost_sent) {
            return;
        }
        self.before_reduction = Some((self.cwnd, self.ssthresh));
        self.loss.begin(now);
        self.cwnd = (self.cwnd / 2).max(self.cfg.minimum_window);
        self.ssthresh = self.cwnd;
        self.ai_acc = 0.0;
    }

    /// Prague hears CE through [`Controller::on_ecn_feedback`]; a transport that still sends
    /// the classic event is ignored.
    fn on_ecn_congestion_event(&mut self, _now: Time, _loss: &LossEvent, _rtt: &RttEstimator) {}

    fn on_persistent_congestion(&mut self, _now: Time) {
        self.ssthresh = (self.cwnd / 2).max(self.cfg.minimum_window);
        self.cwnd = self.cfg.loss_window;
        self.loss.forget();
        self.cwr.forget();
        self.ai_acc = 0.0;
    }

    fn on_spurious_congestion(&mut self, _now: Time) {
        if let Some((cwnd, ssthresh)) = self.before_reduction.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = ssthresh;
            self.loss.forget();
        }
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> Option<u64> {
        (self.ssthresh != u64::MAX).then_some(self.ssthresh)
    }

    fn state(&self) -> CcState {
        crate::loss_based_state(self.loss.is_open() || self.cwr.is_open(), self.cwnd, self.ssthresh)
    }

    fn pacing_rate(&self) -> Option<Rate> {
        if self.srtt == Dur::ZERO {
            return None;
        }
        let gain = if self.cwnd < self.ssthresh / 2 { 2.0 } else { 1.0 };
        Some(Rate((gain * self.cwnd as f64 * 8.0 / self.srtt.as_secs_f64()) as u64))
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn pacing_burst(&self) -> Option<crate::pacer::BurstRule> {
        Some(crate::pacer::BurstRule::RateSlice)
    }

    fn scalable_ecn(&self) -> bool {
        true
    }

    fn kind(&self) -> CcKind {
        CcKind::Prague
    }
}
