//! The retransmission timer of RFC 6298: RTO = SRTT + max(G, 4·RTTVAR) clamped to
//! [min_rto, max_rto] (§2), initial RTO before the first sample (§2.1), doubled on every
//! expiry and clamped at max_rto (§5.5), backoff cleared by a new RTT sample (§5.7, Karn's
//! rule keeps retransmitted segments out of the sample), restarted when new data is
//! acknowledged (§5.3) and stopped when nothing is outstanding (§5.2).

use multiconn_cc::RttEstimator;
use multiconn_core::{Dur, Time};

/// Largest backoff exponent kept (2^16 · 200 ms is far beyond any max_rto).
const MAX_BACKOFF: u32 = 16;

/// The retransmission timer of RFC 6298 with its backoff (see the module header).
#[derive(Clone, Debug)]
pub struct RtoTimer {
    granularity: Dur,
    min_rto: Dur,
    max_rto: Dur,
    initial_rto: Dur,
    backoff: u32,
    deadline: Option<Time>,
}

impl RtoTimer {
    /// A stopped timer: clock granularity G, RTO bounds and the RTO before the first RTT sample.
    pub fn new(granularity: Dur, min_rto: Dur, max_rto: Dur, initial_rto: Dur) -> RtoTimer {
        RtoTimer {
            granularity,
            min_rto,
            max_rto,
            initial_rto,
            backoff: 0,
            deadline: None,
        }
    }

    /// The current timeout: the RFC 6298 value for `rtt`, times 2^backoff, at most max_rto.
    pub fn rto(&self, rtt: &RttEstimator) -> Dur {
        let base = rtt.rto(
            self.granularity,
            self.min_rto,
            self.max_rto,
            self.initial_rto,
        );
        let factor = 1u64 << self.backoff.min(MAX_BACKOFF);
        Dur(base.0.saturating_mul(factor)).min(self.max_rto.max(base))
    }

    /// Expiries since the last valid RTT sample: the RTO is multiplied by 2^backoff.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// When the timer expires; `None` while stopped.
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }
    /// (Re)starts the timer to expire one RTO from `now`.
    pub fn restart(&mut self, now: Time, rtt: &RttEstimator) {
        self.deadline = Some(now + self.rto(rtt));
    }
    /// Starts the timer unless it is running (RFC 6298 §5.1).
    pub fn start_if_idle(&mut self, now: Time, rtt: &RttEstimator) {
        if self.deadline.is_none() {
            self.restart(now, rtt);
        }
    }
    /// Stops the timer (nothing outstanding, §5.2).
    pub fn stop(&mut self) {
        self.deadline = None;
    }
    /// Whether the timer has expired at `now`.
    pub fn expired(&self, now: Time) -> bool {
        self.deadline.is_some_and(|d| d <= now)
    }
    /// The timer expired: back off (§5.5). The caller retransmits and restarts it.
    pub fn on_expired(&mut self) {
        self.deadline = None;
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
    }
    /// A valid RTT sample arrived (§5.7).
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use multiconn_cc::RttVarRule;

    fn ms(v: u64) -> Dur {
        Dur::from_millis(v)
    }

    fn timer() -> RtoTimer {
        RtoTimer::new(ms(1), ms(200), ms(120_000), ms(1000))
    }

    #[test]
    fn linux_rule_keeps_min_rto_above_the_smoothed_rtt() {
        // Built as the linux-tcp profile builds it: min_rto as the variance floor, no clamp.
        let linux = RtoTimer::new(ms(200), Dur::ZERO, ms(120_000), ms(1000));
        let mut rtt = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
        rtt.update(ms(40), Dur::ZERO);
        for _ in 0..40 {
            rtt.update(ms(40), Dur::ZERO);
        }
        // rttvar has decayed far below 50 ms: Linux gives srtt + 200 ms, RFC 6298 the 200 ms floor.
        assert_eq!(linux.rto(&rtt), rtt.smoothed() + ms(200));
        assert_eq!(timer().rto(&rtt), ms(200));
    }

    #[test]
    fn initial_rto_doubles_until_max() {
        let rtt = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
        let mut t = timer();
        let mut seen = Vec::new();
        for _ in 0..10 {
            seen.push(t.rto(&rtt).0 / 1_000_000);
            t.on_expired();
        }
        assert_eq!(
            seen,
            vec![1000, 2000, 4000, 8000, 16000, 32000, 64000, 120000, 120000, 120000]
        );
    }

    #[test]
    fn scripted_samples_follow_rfc6298_and_clamp() {
        let mut rtt = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
        let mut t = timer();
        // First sample 100 ms: srtt 100, rttvar 50 → 100 + 200 = 300 ms.
        rtt.update(ms(100), Dur::ZERO);
        assert_eq!(t.rto(&rtt), ms(300));
        t.on_expired();
        assert_eq!(t.rto(&rtt), ms(600));
        t.on_expired();
        assert_eq!(t.rto(&rtt), ms(1200));
        // A new sample (Karn: from a segment sent once) clears the backoff.
        t.reset_backoff();
        // Second sample 20 ms: rttvar = 3/4·50 + 1/4·|100 − 20| = 57.5; srtt = 90 → 320 ms.
        rtt.update(ms(20), Dur::ZERO);
        assert_eq!(t.rto(&rtt), Dur(90_000_000 + 4 * 57_500_000));
        // Tiny RTTs clamp to min_rto.
        let mut fast = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
        fast.update(ms(2), Dur::ZERO);
        assert_eq!(t.rto(&fast), ms(200));
        t.on_expired();
        assert_eq!(t.rto(&fast), ms(400));
        // Huge RTTs clamp to max_rto, and so does their backoff.
        let mut slow = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
        slow.update(ms(50_000), Dur::ZERO);
        t.reset_backoff();
        assert_eq!(t.rto(&slow), ms(120_000));
        t.on_expired();
        assert_eq!(t.rto(&slow), ms(120_000));
    }

    #[test]
    fn restart_and_expiry() {
        let rtt = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
        let mut t = timer();
        t.start_if_idle(Time(5), &rtt);
        t.start_if_idle(Time(500), &rtt);
        assert_eq!(t.deadline(), Some(Time(5) + ms(1000)));
        assert!(!t.expired(Time(5) + ms(999)));
        assert!(t.expired(Time(5) + ms(1000)));
        t.on_expired();
        assert_eq!((t.deadline(), t.backoff()), (None, 1));
    }
}
