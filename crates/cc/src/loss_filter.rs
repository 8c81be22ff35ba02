//! A smoothed loss rate over packet numbers, the filter picoquic of early 2022 puts in front of
//! its loss reactions (`picoquic_hystart_loss_test` in `cc_common.c` at commit 48525d89ef4d,
//! used by `cubic.c`, `bbr.c` and `fastcc.c`; `newreno.c` does not use it).
//!
//! Each lost packet first decays the rate once per packet number since the previous loss (at
//! most [`SCOPE`] times), `rate ·= 1 − 1/16`, then adds itself, `rate += (1 − rate)/16`. A
//! loss found by the packet or time threshold passes the filter only when the rate then
//! exceeds [`THRESHOLD`] (20 %): isolated losses do not reduce the window, a burst of about
//! four consecutive ones does. A retransmission timeout always passes. A packet number not
//! above the last one counted is ignored (and does not pass, timeout or not), as in picoquic.
//!
//! The filter is fed per lost packet ([`crate::Controller::on_packet_lost`]); only the QUIC
//! model reports lost packets one by one, so only QUIC profiles may turn it on.

/// Smoothing factor of the rate (picoquic `PICOQUIC_SMOOTHED_LOSS_FACTOR`).
pub const FACTOR: f64 = 1.0 / 16.0;
/// At most this many decay steps between two losses (`PICOQUIC_SMOOTHED_LOSS_SCOPE`).
pub const SCOPE: u64 = 32;
/// A loss passes when the rate exceeds this (`PICOQUIC_SMOOTHED_LOSS_THRESHOLD`).
pub const THRESHOLD: f64 = 0.2;

/// The smoothed loss rate of one path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SmoothedLoss {
    rate: f64,
    /// The last packet number counted (0 before any, as picoquic starts).
    last: u64,
}

impl SmoothedLoss {
    /// Rate 0, no packet counted.
    pub fn new() -> SmoothedLoss {
        SmoothedLoss::default()
    }

    /// The current rate, 0 to 1.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Counts lost packet `pn`; true if it passes the filter as a loss found by the packet or
    /// time threshold (rate above 20 %).
    pub fn on_lost(&mut self, pn: u64) -> bool {
        self.count(pn) && self.rate > THRESHOLD
    }

    /// Counts packet `pn` lost to a retransmission timeout; true if it was counted at all
    /// (a timeout passes whatever the rate).
    pub fn on_timeout(&mut self, pn: u64) -> bool {
        self.count(pn)
    }

    fn count(&mut self, pn: u64) -> bool {
        if pn <= self.last {
            return false;
        }
        let mut next = self.last.max(pn.saturating_sub(SCOPE));
        while next < pn {
            self.rate *= 1.0 - FACTOR;
            next += 1;
        }
        self.rate += (1.0 - self.rate) * FACTOR;
        self.last = pn;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_isolated_loss_does_not_pass_four_in_a_row_do() {
        let mut f = SmoothedLoss::new();
        assert!(!f.on_lost(100));
        assert!((f.rate() - 1.0 / 16.0).abs() < 1e-12);
        // Consecutive packet numbers: 0.117, 0.166, 0.208 > 0.2.
        assert!(!f.on_lost(101));
        assert!(!f.on_lost(102));
        assert!(f.on_lost(103), "{}", f.rate());
    }

    #[test]
    fn the_rate_decays_over_at_most_32_packet_numbers() {
        let mut a = SmoothedLoss::new();
        let mut b = SmoothedLoss::new();
        for pn in 1..=10 {
            a.on_lost(pn);
            b.on_lost(pn);
        }
        a.on_lost(10 + 40);
        b.on_lost(10 + 400);
        assert_eq!(a.rate(), b.rate());
        let expected = {
            let mut r = SmoothedLoss::new();
            for pn in 1..=10 {
                r.on_lost(pn);
            }
            let mut x = r.rate();
            for _ in 0..SCOPE {
                x *= 1.0 - FACTOR;
            }
            x + (1.0 - x) * FACTOR
        };
        assert_eq!(a.rate(), expected);
    }

    #[test]
    fn old_packet_numbers_are_ignored_and_timeouts_always_pass() {
        let mut f = SmoothedLoss::new();
        assert!(f.on_timeout(5));
        assert!(!f.on_timeout(5));
        assert!(!f.on_lost(3));
        // Packet number 0 is never counted (picoquic starts its last number at 0).
        assert!(!SmoothedLoss::new().on_timeout(0));
    }
}
