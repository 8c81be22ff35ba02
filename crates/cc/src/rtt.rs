//! RTT estimation per RFC 9002 §5, with the update-order variants real stacks use.
//!
//! * `latest_rtt` is the raw sample; `min_rtt` the minimum of raw samples (no ack-delay
//!   adjustment).
//! * Before the first sample: `smoothed_rtt = initial_rtt`, `rttvar = initial_rtt / 2`. The
//!   first sample sets `smoothed_rtt = latest`, `rttvar = latest / 2`.
//! * Later samples: `ack_delay` is capped at `max_ack_delay` (once the handshake is confirmed),
//!   `adjusted = latest − ack_delay` if that is still ≥ `min_rtt`, then
//!   `smoothed = 7/8·smoothed + 1/8·adjusted` and `rttvar = 3/4·rttvar + 1/4·|smoothed − adjusted|`.
//!
//! [`RttVarRule`] chooses which `smoothed` the rttvar update sees: RFC 9002 §5.3 pseudocode
//! updates rttvar with the *previous* smoothed RTT (as RFC 6298 does and ngtcp2 and Linux do);
//! aioquic uses |min_rtt − latest_rtt|. All arithmetic is integer nanoseconds with truncating
//! division, so timer values are reproducible bit for bit.

use multiconn_core::Dur;

/// RFC 9002 kGranularity.
pub const GRANULARITY: Dur = Dur::from_millis(1);
/// RFC 9002 kInitialRtt.
pub const INITIAL_RTT: Dur = Dur::from_millis(333);

/// How rttvar is updated from a sample (see the module header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RttVarRule {
    /// `rttvar = 3/4·rttvar + 1/4·|smoothed_prev − adjusted|`, then smoothed (RFC 9002 §5.3
    /// pseudocode, RFC 6298 §2.3, ngtcp2, Linux).
    Rfc9002,
    /// aioquic: `rttvar = 3/4·rttvar + 1/4·|min_rtt − latest_rtt|` with latest floored at 1 ms
    /// and reduced by the ack delay (see `update_aioquic`).
    Aioquic,
}

/// The RTT estimate of one path (see the module header).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    latest: Dur,
    smoothed: Dur,
    rttvar: Dur,
    min: Dur,
    has_sample: bool,
    /// Samples taken so far.
    samples: u64,
    initial: Dur,
    rule: RttVarRule,
}

impl RttEstimator {
    /// No sample yet: smoothed RTT `initial_rtt`, rttvar `initial_rtt / 2`, updated by `rule`.
    pub fn new(initial_rtt: Dur, rule: RttVarRule) -> RttEstimator {
        RttEstimator {
            latest: Dur::ZERO,
            smoothed: initial_rtt,
            rttvar: Dur(initial_rtt.0 / 2),
            min: Dur::MAX,
            has_sample: false,
            samples: 0,
            initial: initial_rtt,
            rule,
        }
    }

    /// Takes one RTT sample. `ack_delay` is the peer's reported delay, already capped by the
    /// caller at its max_ack_delay when the handshake is confirmed (zero for TCP).
    pub fn update(&mut self, latest_rtt: Dur, ack_delay: Dur) {
        self.samples += 1;
        if self.rule == RttVarRule::Aioquic {
            return self.update_aioquic(latest_rtt, ack_delay);
        }
        self.latest = latest_rtt;
        self.min = self.min.min(latest_rtt);
        if !self.has_sample {
            self.has_sample = true;
            self.smoothed = latest_rtt;
            self.rttvar = Dur(latest_rtt.0 / 2);
            return;
        }
        let adjusted = if latest_rtt.0 >= self.min.0.saturating_add(ack_delay.0) { Dur(latest_rtt.0 - ack_delay.0) } else { latest_rtt };
        self.rttvar = Dur((3 * self.rttvar.0 + self.smoothed.0.abs_diff(adjusted.0)) / 4);
        self.smoothed = Dur((7 * self.smoothed.0 + adjusted.0) / 8);
    }

    /// aioquic's `QuicPacketRecovery.on_ack_received`: the sample is floored at 1 ms for
    /// min_rtt and the later samples, the ack delay is subtracted from `latest` itself when it
    /// stays above min_rtt (strictly), the first sample is taken unfloored, and rttvar follows
    /// |min_rtt − latest|.
    fn update_aioquic(&mut self, latest_rtt: Dur, ack_delay: Dur) {
        let mut latest = latest_rtt.max(GRANULARITY);
        self.min = self.min.min(latest);
        if latest.0 > self.min.0.saturating_add(ack_delay.0) {
            latest = Dur(latest.0 - ack_delay.0);
        }
        self.latest = latest;
        if !self.has_sample {
            self.has_sample = true;
            self.smoothed = latest_rtt;
            self.rttvar = Dur(latest_rtt.0 / 2);
            return;
        }
        self.rttvar = Dur((3 * self.rttvar.0 + self.min.0.abs_diff(latest.0)) / 4);
        self.smoothed = Dur((7 * self.smoothed.0 + latest.0) / 8);
    }

    /// At least one sample was taken.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
    /// How many samples were taken: a controller that reacts to each sample (`fast`) tells a
    /// new one from the count.
    pub fn samples(&self) -> u64 {
        self.samples
    }
    /// latest_rtt, the last sample (aioquic: floored at 1 ms, the ack delay subtracted while
    /// it stays above min_rtt); zero before any.
    pub fn latest(&self) -> Dur {
        self.latest
    }
    /// smoothed_rtt (`initial_rtt` before the first sample).
    pub fn smoothed(&self) -> Dur {
        self.smoothed
    }
    /// rttvar (`initial_rtt / 2` before the first sample).
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }
    /// Minimum RTT seen; `initial_rtt` before the first sample.
    pub fn min(&self) -> Dur {
        if self.has_sample {
            self.min
        } else {
            self.initial
        }
    }
    /// The RTT assumed before the first sample.
    pub fn initial(&self) -> Dur {
        self.initial
    }

    /// RFC 9002 §6.2.1 base probe timeout, before backoff:
    /// `smoothed + max(4·rttvar, kGranularity) + max_ack_delay`.
    pub fn pto_base(&self, max_ack_delay: Dur) -> Dur {
        self.smoothed + Dur((4 * self.rttvar.0).max(GRANULARITY.0)) + max_ack_delay
    }

    /// RFC 9002 §6.1.2 time threshold: `num/den · max(smoothed, latest)`, floored at
    /// kGranularity when `floor` (aioquic omits the floor).
    pub fn loss_delay(&self, num: u64, den: u64, floor: bool) -> Dur {
        let d = Dur(self.smoothed.0.max(self.latest.0) * num / den);
        if floor {
            d.max(GRANULARITY)
        } else {
            d
        }
    }

    /// RFC 6298 §2 retransmission timeout: `smoothed + max(G, 4·rttvar)` clamped to
    /// [`min_rto`, `max_rto`]; `initial_rto` before the first sample.
    pub fn rto(&self, clock_granularity: Dur, min_rto: Dur, max_rto: Dur, initial_rto: Dur) -> Dur {
        if !self.has_sample {
            return initial_rto;
        }
        let rto = self.smoothed + Dur((4 * self.rttvar.0).max(clock_granularity.0));
        rto.max(min_rto).min(max_rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Dur {
        Dur::from_millis(v)
    }

    #[test]
    fn before_any_sample_pto_is_about_one_second() {
        let r = RttEstimator::new(INITIAL_RTT, RttVarRule::Rfc9002);
        // 333 + 4 · 166.5 = 999 ms (RFC 9002 §6.2.2).
        assert_eq!(r.pto_base(Dur::ZERO), Dur(333_000_000 + 4 * 166_500_000));
        assert!(!r.has_sample());
    }

    #[test]
    fn first_sample_sets_smoothed_and_half_variance() {
        let mut r = RttEstimator::new(INITIAL_RTT, RttVarRule::Rfc9002);
        r.update(ms(100), ms(10));
        assert_eq!((r.smoothed(), r.rttvar(), r.min(), r.latest()), (ms(100), ms(50), ms(100), ms(100)));
    }

    #[test]
    fn later_samples_follow_the_ewma_with_ack_delay_adjustment() {
        let mut r = RttEstimator::new(INITIAL_RTT, RttVarRule::Rfc9002);
        r.update(ms(100), Dur::ZERO);
        // adjusted = 120 − 10 = 110 (still ≥ min 100).
        r.update(ms(120), ms(10));
        assert_eq!(r.rttvar(), Dur((3 * 50_000_000 + 10_000_000) / 4));
        assert_eq!(r.smoothed(), Dur((7 * 100_000_000 + 110_000_000) / 8));
        // ack delay that would take the sample below min_rtt is ignored.
        let (s, v) = (r.smoothed(), r.rttvar());
        r.update(ms(105), ms(20));
        assert_eq!(r.rttvar(), Dur((3 * v.0 + s.0.abs_diff(105_000_000)) / 4));
        assert_eq!(r.smoothed(), Dur((7 * s.0 + 105_000_000) / 8));
        assert_eq!(r.min(), ms(100));
    }

    #[test]
    fn aioquic_rule_uses_min_rtt_deviation_and_floors_latest() {
        let mut r = RttEstimator::new(Dur::from_millis(100), RttVarRule::Aioquic);
        r.update(Dur::from_micros(200), Dur::ZERO);
        // min_rtt and latest are floored, the first smoothed value is not.
        assert_eq!((r.latest(), r.min(), r.smoothed(), r.rttvar()), (ms(1), ms(1), Dur::from_micros(200), Dur::from_micros(100)));
        // 41 ms with 5 ms ack delay: latest becomes 36 ms; rttvar uses |min − latest| = 35 ms.
        r.update(ms(41), ms(5));
        assert_eq!(r.latest(), ms(36));
        assert_eq!(r.rttvar(), Dur((3 * 100_000 + 35_000_000) / 4));
        assert_eq!(r.smoothed(), Dur((7 * 200_000 + 36_000_000) / 8));
    }

    #[test]
    fn loss_delay_is_nine_eighths_of_the_larger_rtt_with_a_floor() {
        let mut r = RttEstimator::new(INITIAL_RTT, RttVarRule::Rfc9002);
        r.update(Dur::from_micros(400), Dur::ZERO);
        assert_eq!(r.loss_delay(9, 8, true), GRANULARITY);
        assert_eq!(r.loss_delay(9, 8, false), Dur(450_000));
        r.update(ms(80), Dur::ZERO);
        assert_eq!(r.loss_delay(9, 8, true), Dur(80_000_000 * 9 / 8));
    }

    #[test]
    fn rto_is_clamped_per_rfc6298() {
        let mut r = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
        assert_eq!(r.rto(ms(1), ms(200), ms(120_000), ms(1000)), ms(1000));
        r.update(ms(10), Dur::ZERO);
        assert_eq!(r.rto(ms(1), ms(200), ms(120_000), ms(1000)), ms(200));
        r.update(ms(400), Dur::ZERO);
        let expect = r.smoothed() + Dur(4 * r.rttvar().0);
        assert_eq!(r.rto(ms(1), ms(200), ms(120_000), ms(1000)), expect);
    }
}
