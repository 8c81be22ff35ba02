//! `fast`: picoquic's delay-based congestion controller, as the multi-operator study ran it
//! (`picoquic/fastcc.c` at commit 48525d89ef4d, 3 January 2022; reference
//! `multi-operator.md` §6.1). Written from that description and a reading of the file; the
//! names below are ours.
//!
//! Three phases: *initial*, *eval* and *freeze*.
//!
//! * **Minimum RTT.** Each RTT sample goes into a window of the last 7 samples; once 7 were
//!   taken, the window's maximum is the candidate for the minimum (it filters jitter). Time is
//!   cut into epochs of 1 s: within an epoch a candidate below the epoch's rolling minimum
//!   replaces it (and the minimum RTT if lower still); at the end of an epoch the minimum RTT
//!   becomes the smallest non-zero rolling minimum of the 5 epochs before the one ending (none
//!   yet: no minimum, so every sample is below it until the rolling minimum lowers it again),
//!   the ending epoch's rolling minimum is remembered and the new epoch's starts at the
//!   current candidate. The minimum starts at the path's smoothed RTT (the initial RTT) and is
//!   not *trusted* until a sample at or above it arrives, which then sets it.
//! * **Delay threshold** `min(rtt_min/8, 25 ms)`, recomputed at each epoch end and whenever a
//!   sample falls below the minimum.
//! * **Per RTT sample outside freeze**, with `δ = rtt − rtt_min` (0 for a sample below the
//!   minimum or while it is not trusted): if `δ <` threshold the window grows by
//!   `α ×` the bytes acknowledged since the previous sample, `α = 1` in *initial* (the window
//!   doubles per round trip) and `α = 0.25·(1 − δ/threshold)` in *eval*, and the count of
//!   samples above the threshold resets; else that count grows, and at 4 the window is cut by
//!   1/8 (delay congestion). The window grows only when the acknowledged packets were not
//!   sent application-limited (`app_limited_check`).
//! * **Congestion**: a delay cut, a loss that passes the smoothed-loss-rate filter
//!   ([`crate::loss_filter`], 20 %) halves the window, a retransmission timeout sets it to the
//!   minimum window; the window never goes below the minimum. Each enters *freeze* for one
//!   minimum RTT, or until a packet sent since is acknowledged; nothing grows during freeze and
//!   further signals are ignored, except a delay signal after a loss freeze and a timeout after
//!   a timeout freeze. Freeze ends in *initial* after a timeout, else in *eval*. Without a
//!   minimum RTT (see above) picoquic's end-of-freeze sum wraps around, so such a freeze ends
//!   at the next event; the model does the same.
//! * A spurious loss takes one off the count of samples above the threshold.
//!
//! Not modelled: ECN-CE (the simulator marks no packets), picoquic's `seed_cwin` from a
//! session ticket and the `reset` notification. The state is reported as `slow_start`
//! (*initial*), `congestion_avoidance` (*eval*) and `recovery` (*freeze*).

use crate::loss_filter::SmoothedLoss;
use crate::{AckEvent, CcConfig, CcKind, CcState, Controller, LossEvent, RttEstimator};
use multiconn_core::{Dur, Time};

/// Length of a minimum-RTT epoch (picoquic `FASTCC_PERIOD`).
pub const EPOCH: Dur = Dur::from_secs(1);
/// Epochs whose rolling minimum is remembered (`FASTCC_NB_PERIOD`).
pub const EPOCHS: usize = 6;
/// Consecutive samples above the threshold that make a delay congestion signal
/// (`FASTCC_REPEAT_THRESHOLD`).
pub const REPEAT_THRESHOLD: u32 = 4;
/// Cap of the delay threshold (`FASTCC_DELAY_THRESHOLD_MAX`, 25 ms).
pub const DELAY_THRESHOLD_MAX: Dur = Dur::from_millis(25);
/// Growth factor in *eval* at zero extra delay (`FASTCC_EVAL_ALPHA`).
pub const EVAL_ALPHA: f64 = 0.25;
/// RTT samples in the jitter filter (`PICOQUIC_MIN_MAX_RTT_SCOPE`).
pub const RTT_WINDOW: usize = 7;

/// Where the controller is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The window doubles per round trip while the delay stays below the threshold
    /// (reported as `slow_start`).
    Initial,
    /// Growth `α = 0.25·(1 − δ/threshold)` per acknowledged byte (reported as
    /// `congestion_avoidance`).
    Eval,
    /// After a congestion signal: no growth for one minimum RTT or until a packet sent since is
    /// acknowledged (reported as `recovery`).
    Freeze,
}

/// The last [`RTT_WINDOW`] RTT samples and their maximum.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct RttWindow {
    samples: [u64; RTT_WINDOW],
    next: usize,
    full: bool,
    max: u64,
}

impl RttWindow {
    fn push(&mut self, rtt: u64) {
        self.samples[self.next] = rtt;
        self.next += 1;
        if self.next == RTT_WINDOW {
            self.full = true;
            self.next = 0;
        }
        let filled = if self.full { RTT_WINDOW } else { self.next };
        self.max = self.samples[..filled].iter().copied().max().unwrap_or(0);
    }
}

/// The delay threshold for minimum RTT `rtt_min` (nanoseconds).
pub fn delay_threshold(rtt_min: u64) -> u64 {
    (rtt_min / 8).min(DELAY_THRESHOLD_MAX.0)
}

/// picoquic's `fast` (see the module header).
#[derive(Clone, Debug)]
pub struct Fast {
    cfg: CcConfig,
    cwnd: u64,
    phase: Phase,
    /// Freeze ends after this instant ...
    freeze_until: Time,
    /// ... or when a packet sent at or after this one is acknowledged.
    freeze_start: Time,
    freeze_was_timeout: bool,
    freeze_was_not_delay: bool,
    /// Bytes acknowledged since the last RTT sample (outside freeze).
    acked_since_sample: u64,
    /// End of the current minimum-RTT epoch; `None` before the first packet.
    epoch_end: Option<Time>,
    /// Minimum RTT, nanoseconds (`u64::MAX`: none after an epoch end without history).
    rtt_min: u64,
    rtt_min_trusted: bool,
    threshold: u64,
    /// This epoch's rolling minimum and the previous epochs', newest first (0 = none).
    rolling_min: u64,
    epoch_mins: [u64; EPOCHS],
    /// Consecutive samples above the threshold.
    above: u32,
    window: RttWindow,
    loss: SmoothedLoss,
    /// RTT samples already seen (the estimator's count).
    samples_seen: u64,
    /// A congestion signal has been acted on (picoquic `is_ssthresh_initialized`).
    congested: bool,
}

impl Fast {
    /// *Initial* with the initial window; the minimum RTT starts at `initial_rtt`, not trusted.
    pub fn new(cfg: CcConfig) -> Fast {
        let rtt_min = cfg.initial_rtt.0;
        Fast {
            cwnd: cfg.initial_window,
            phase: Phase::Initial,
            freeze_until: Time::ZERO,
            freeze_start: Time::ZERO,
            freeze_was_timeout: false,
            freeze_was_not_delay: false,
            acked_since_sample: 0,
            epoch_end: None,
            rtt_min,
            rtt_min_trusted: false,
            threshold: delay_threshold(rtt_min),
            rolling_min: rtt_min,
            epoch_mins: [0; EPOCHS],
            above: 0,
            window: RttWindow::default(),
            loss: SmoothedLoss::new(),
            samples_seen: 0,
            congested: false,
            cfg,
        }
    }

    /// Current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// The minimum RTT in use (`None` while there is none).
    pub fn rtt_min(&self) -> Option<Dur> {
        (self.rtt_min != u64::MAX).then_some(Dur(self.rtt_min))
    }
    /// The delay threshold in use.
    pub fn threshold(&self) -> Dur {
        Dur(self.threshold)
    }
    /// Consecutive RTT samples above the threshold.
    pub fn samples_above(&self) -> u32 {
        self.above
    }

    fn start_epochs(&mut self, now: Time) {
        if self.epoch_end.is_none() {
            self.epoch_end = Some(now + EPOCH);
        }
    }

    /// Leaves freeze once its time is over or a packet sent since it began is acknowledged.
    fn thaw(&mut self, now: Time, acked_sent: Option<Time>) {
        if self.phase != Phase::Freeze || !(now > self.freeze_until || acked_sent.is_some_and(|s| s >= self.freeze_start)) {
            return;
        }
        self.phase = if self.freeze_was_timeout { Phase::Initial } else { Phase::Eval };
        self.freeze_was_timeout = false;
        self.freeze_was_not_delay = false;
        self.above = 0;
        self.acked_since_sample = 0;
    }

    /// A congestion signal: cut the window and freeze.
    fn congestion(&mut self, now: Time, delay: bool, timeout: bool) {
        if self.phase == Phase::Freeze && !(timeout && self.freeze_was_timeout) && !(delay && self.freeze_was_not_delay) {
            return;
        }
        self.freeze_was_not_delay = !delay;
        self.freeze_was_timeout = timeout;
        self.phase = Phase::Freeze;
        // Without a minimum (after an epoch end with no history) picoquic's unsigned sum
        // wraps to just before now: the freeze ends at the next event. The same here.
        self.freeze_until = Time(now.0.wrapping_add(self.rtt_min));
        self.freeze_start = now;
        self.above = 0;
        self.congested = true;
        if delay {
            self.cwnd -= self.cwnd / 8;
        } else {
            self.cwnd /= 2;
        }
        if timeout || self.cwnd < self.cfg.minimum_window {
            self.cwnd = self.cfg.minimum_window;
        }
    }

    /// One RTT sample `rtt` (nanoseconds) at `now`; `grow` is false when the acknowledged
    /// packets were sent application-limited.
    fn on_rtt_sample(&mut self, now: Time, rtt: u64, grow: bool) {
        self.window.push(rtt);
        if self.window.full {
            let candidate = self.window.max;
            if self.epoch_end.is_some_and(|end| now > end) {
                // Roll the epochs: the minimum of the five before the one ending.
                self.rtt_min = u64::MAX;
                for i in (1..EPOCHS).rev() {
                    self.epoch_mins[i] = self.epoch_mins[i - 1];
                    if self.epoch_mins[i] > 0 && self.epoch_mins[i] < self.rtt_min {
                        self.rtt_min = self.epoch_mins[i];
                    }
                }
                self.threshold = delay_threshold(self.rtt_min);
                self.epoch_mins[0] = self.rolling_min;
                self.rolling_min = candidate;
                self.epoch_end = Some(now + EPOCH);
            } else if candidate < self.rolling_min || self.rolling_min == 0 {
                self.rolling_min = candidate;
                self.rtt_min = self.rtt_min.min(candidate);
            }
        }
        if self.phase == Phase::Freeze {
            return;
        }
        let mut delta = 0;
        if rtt < self.rtt_min {
            self.threshold = delay_threshold(self.rtt_min);
        } else if self.rtt_min_trusted {
            delta = rtt - self.rtt_min;
        } else {
            self.rtt_min = rtt;
            self.rolling_min = rtt;
            self.rtt_min_trusted = true;
        }
        if delta < self.threshold {
            self.above = 0;
            let alpha = match self.phase {
                Phase::Initial => 1.0,
                _ => EVAL_ALPHA * (1.0 - delta as f64 / self.threshold as f64),
            };
            if grow {
                self.cwnd = self.cwnd.saturating_add((alpha * self.acked_since_sample as f64) as u64);
            }
            self.acked_since_sample = 0;
        } else {
            self.above += 1;
            if self.above >= REPEAT_THRESHOLD {
                self.congestion(now, true, false);
            }
        }
    }
}

impl Controller for Fast {
    fn on_packet_sent(&mut self, now: Time, _bytes: u64, _bytes_in_flight: u64) {
        self.start_epochs(now);
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        self.start_epochs(now);
        self.thaw(now, Some(ack.largest_acked_sent));
        if self.phase != Phase::Freeze {
            self.acked_since_sample = self.acked_since_sample.saturating_add(ack.bytes_acked);
        }
        if rtt.samples() != self.samples_seen {
            self.samples_seen = rtt.samples();
            let grow = !(self.cfg.app_limited_check && ack.app_limited);
            self.on_rtt_sample(now, rtt.latest().0, grow);
        }
    }

    fn on_packet_lost(&mut self, now: Time, pn: u64, _bytes: u64) {
        self.thaw(now, None);
        if self.loss.on_lost(pn) {
            self.congestion(now, false, false);
        }
    }

    /// The reaction is per lost packet ([`Controller::on_packet_lost`]).
    fn on_congestion_event(&mut self, _now: Time, _loss: &LossEvent, _rtt: &RttEstimator) {}

    fn on_packet_timed_out(&mut self, now: Time, pn: u64, _bytes: u64) {
        self.thaw(now, None);
        if self.loss.on_timeout(pn) {
            self.congestion(now, false, true);
        }
    }

    fn on_persistent_congestion(&mut self, now: Time) {
        self.thaw(now, None);
        self.congestion(now, false, true);
    }

    fn on_spurious_congestion(&mut self, _now: Time) {
        self.above = self.above.saturating_sub(1);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> Option<u64> {
        (self.congested && self.phase != Phase::Initial).then_some(self.cwnd)
    }
    fn state(&self) -> CcState {
        match self.phase {
            Phase::Initial => CcState::SlowStart,
            Phase::Eval => CcState::CongestionAvoidance,
            Phase::Freeze => CcState::Recovery,
        }
    }
    fn kind(&self) -> CcKind {
        CcKind::Fast
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RttVarRule;

    const MDS: u64 = 1440;

    fn cfg() -> CcConfig {
        CcConfig { initial_window: 15_360, minimum_window: 3_072, loss_window: 3_072, initial_rtt: Dur::from_millis(250), ..CcConfig::quic_default(CcKind::Fast, MDS) }
    }

    fn ack(bytes: u64, sent: Time) -> AckEvent {
        AckEvent { bytes_acked: bytes, largest_acked_sent: sent, prior_in_flight: 0, bytes_in_flight: 0, app_limited: false, rate_sample: None }
    }

    /// Feeds one ACK of `bytes` carrying an RTT sample of `rtt_ms`.
    fn sample(cc: &mut Fast, rtt: &mut RttEstimator, now_ms: u64, rtt_ms: u64, bytes: u64) {
        let now = Time::ZERO + Dur::from_millis(now_ms);
        rtt.update(Dur::from_millis(rtt_ms), Dur::ZERO);
        cc.on_ack(now, &ack(bytes, Time::ZERO + Dur::from_millis(now_ms.saturating_sub(rtt_ms))), rtt);
    }

    fn estimator() -> RttEstimator {
        RttEstimator::new(Dur::from_millis(250), RttVarRule::Rfc9002)
    }

    #[test]
    fn initial_phase_doubles_per_round_trip_below_the_threshold() {
        let mut cc = Fast::new(cfg());
        let mut rtt = estimator();
        cc.on_packet_sent(Time::ZERO, 1440, 1440);
        assert_eq!((cc.phase(), cc.threshold()), (Phase::Initial, Dur::from_millis(25)));
        // The first sample is below the initial 250 ms: no trust yet, but no extra delay either.
        sample(&mut cc, &mut rtt, 50, 50, 15_360);
        assert_eq!(cc.window(), 2 * 15_360);
        assert_eq!(cc.state(), CcState::SlowStart);
        assert_eq!(cc.ssthresh(), None);
    }

    #[test]
    fn four_samples_above_the_threshold_cut_by_an_eighth_and_freeze_for_one_min_rtt() {
        let mut cc = Fast::new(cfg());
        let mut rtt = estimator();
        cc.on_packet_sent(Time::ZERO, 1440, 1440);
        // A sample at or above the initial minimum sets and trusts it: 300 ms, threshold 25 ms.
        sample(&mut cc, &mut rtt, 300, 300, 1440);
        assert_eq!(cc.rtt_min(), Some(Dur::from_millis(300)));
        assert_eq!(cc.threshold(), Dur::from_millis(25));
        let before = cc.window();
        for i in 0..3 {
            sample(&mut cc, &mut rtt, 400 + i, 330, 1440);
            assert_eq!(cc.samples_above(), i as u32 + 1);
            assert_eq!(cc.window(), before, "no growth above the threshold");
        }
        sample(&mut cc, &mut rtt, 410, 330, 1440);
        assert_eq!(cc.phase(), Phase::Freeze);
        assert_eq!(cc.window(), before - before / 8);
        // Nothing grows in freeze; it ends one minimum RTT (300 ms) later, in eval.
        let frozen = cc.window();
        sample(&mut cc, &mut rtt, 500, 300, 14_400);
        assert_eq!((cc.phase(), cc.window()), (Phase::Freeze, frozen));
        sample(&mut cc, &mut rtt, 711, 300, 1440);
        assert_eq!(cc.phase(), Phase::Eval);
    }

    #[test]
    fn eval_grows_by_a_quarter_scaled_by_the_extra_delay() {
        let mut cc = Fast::new(cfg());
        let mut rtt = estimator();
        cc.on_packet_sent(Time::ZERO, 1440, 1440);
        sample(&mut cc, &mut rtt, 300, 300, 1440);
        for i in 0..4 {
            sample(&mut cc, &mut rtt, 400 + i, 330, 1440);
        }
        // Thaw by acknowledging a packet sent after the freeze began.
        let w = cc.window();
        rtt.update(Dur::from_millis(300), Dur::ZERO);
        cc.on_ack(Time::ZERO + Dur::from_millis(800), &ack(8000, Time::ZERO + Dur::from_millis(500)), &rtt);
        assert_eq!(cc.phase(), Phase::Eval);
        // The thawing ACK resets the byte count, then counts its own 8000 bytes; at zero extra
        // delay alpha = 0.25.
        assert_eq!(cc.window(), w + 2000);
        // 12.5 ms above the minimum: alpha = 0.25 · (1 − 12.5/25) = 0.125.
        let w = cc.window();
        rtt.update(Dur(312_500_000), Dur::ZERO);
        cc.on_ack(Time::ZERO + Dur::from_millis(900), &ack(8000, Time::ZERO + Dur::from_millis(600)), &rtt);
        assert_eq!(cc.window(), w + 1000);
    }

    #[test]
    fn isolated_losses_are_filtered_a_burst_halves_a_timeout_collapses() {
        let mut cc = Fast::new(cfg());
        let mut rtt = estimator();
        cc.on_packet_sent(Time::ZERO, 1440, 1440);
        sample(&mut cc, &mut rtt, 100, 100, 100_000);
        let w = cc.window();
        cc.on_packet_lost(Time::ZERO + Dur::from_millis(120), 40, 1440);
        assert_eq!(cc.window(), w, "one loss: smoothed rate 6 %");
        for pn in 41..43 {
            cc.on_packet_lost(Time::ZERO + Dur::from_millis(120), pn, 1440);
        }
        assert_eq!(cc.window(), w);
        cc.on_packet_lost(Time::ZERO + Dur::from_millis(120), 43, 1440);
        assert_eq!((cc.phase(), cc.window()), (Phase::Freeze, w / 2));
        // A timeout during a loss freeze is ignored; one after it collapses to the minimum.
        cc.on_packet_timed_out(Time::ZERO + Dur::from_millis(130), 44, 1440);
        assert_eq!(cc.window(), w / 2);
        cc.on_packet_timed_out(Time::ZERO + Dur::from_millis(10_000), 45, 1440);
        assert_eq!((cc.phase(), cc.window()), (Phase::Freeze, 3_072));
        // After a timeout freeze the controller starts again in the initial phase.
        sample(&mut cc, &mut rtt, 20_000, 100, 1440);
        assert_eq!(cc.phase(), Phase::Initial);
    }

    #[test]
    fn app_limited_acks_do_not_grow_the_window() {
        let mut cc = Fast::new(cfg());
        let mut rtt = estimator();
        cc.on_packet_sent(Time::ZERO, 1440, 1440);
        rtt.update(Dur::from_millis(50), Dur::ZERO);
        let mut a = ack(15_360, Time::ZERO);
        a.app_limited = true;
        cc.on_ack(Time::ZERO + Dur::from_millis(50), &a, &rtt);
        assert_eq!(cc.window(), 15_360);
    }

    #[test]
    fn the_minimum_follows_the_epochs() {
        let mut cc = Fast::new(cfg());
        let mut rtt = estimator();
        cc.on_packet_sent(Time::ZERO, 1440, 1440);
        // Seven samples of 260 ms fill the window; the first (≥ 250 ms) trusts 260 ms.
        for i in 0..7 {
            sample(&mut cc, &mut rtt, 300 + 10 * i, 260, 0);
        }
        assert_eq!(cc.rtt_min(), Some(Dur::from_millis(260)));
        // Lower samples inside the epoch lower the rolling minimum once the window's maximum does.
        for i in 0..7 {
            sample(&mut cc, &mut rtt, 400 + 10 * i, 200, 0);
        }
        assert_eq!(cc.rtt_min(), Some(Dur::from_millis(200)));
        // The first epoch end with no history leaves no minimum at all: every sample is below it.
        sample(&mut cc, &mut rtt, 1_200, 200, 0);
        assert_eq!(cc.rtt_min(), None);
        assert_eq!(cc.threshold(), DELAY_THRESHOLD_MAX);
        // Without a minimum a freeze lasts until the next event.
        for pn in 1..5 {
            cc.on_packet_lost(Time::ZERO + Dur::from_millis(1_250), pn, 1440);
        }
        assert_eq!(cc.phase(), Phase::Freeze);
        cc.on_packet_lost(Time::ZERO + Dur::from_millis(1_251), 1000, 1440);
        assert_eq!(cc.phase(), Phase::Eval);
        // A later epoch end takes the smallest remembered rolling minimum.
        sample(&mut cc, &mut rtt, 2_300, 200, 0);
        assert_eq!(cc.rtt_min(), Some(Dur::from_millis(200)));
    }
}
