//! The congestion recovery period of a loss-based controller (RFC 9002 §7.3.2, Appendix B.5
//! to B.8): it begins at a congestion event and covers every packet sent up to that instant.
//! A loss of a covered packet is part of the same event and reduces nothing again, and an
//! acknowledgement of one grows nothing. The controller leaves its Recovery state once a
//! packet sent after the start is acknowledged, but the start keeps covering the older
//! packets: a loss among them declared later (by the time threshold, after a newer packet's
//! ACK) is still that event. RFC 9002's `InCongestionRecovery(sent_time)` compares with
//! `congestion_recovery_start_time`, which no acknowledgement clears; so do ngtcp2
//! (`in_congestion_recovery`), aioquic (`_congestion_recovery_start_time`) and quinn
//! (`recovery_start_time`). Persistent congestion and an undo forget the start (RFC 9002
//! Appendix B.8 sets it to 0).

use multiconn_core::Time;

/// The current or last recovery period (see the module header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecoveryPeriod {
    /// When the last congestion event happened; `None` before any, or once forgotten.
    start: Option<Time>,
    /// Whether no packet sent after `start` has been acknowledged yet (the Recovery state).
    open: bool,
}

impl RecoveryPeriod {
    /// Whether a packet sent at `sent` belongs to the current or last period.
    pub(crate) fn covers(&self, sent: Time) -> bool {
        self.start.is_some_and(|start| sent <= start)
    }

    /// A congestion event at `now` begins a period.
    pub(crate) fn begin(&mut self, now: Time) {
        self.start = Some(now);
        self.open = true;
    }

    /// A packet sent after the start was acknowledged: the Recovery state is over (the start
    /// still covers the older packets).
    pub(crate) fn end(&mut self) {
        self.open = false;
    }

    /// Whether the controller is in its Recovery state.
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// The start of a period still open.
    pub(crate) fn open_start(&self) -> Option<Time> {
        self.start.filter(|_| self.open)
    }

    /// Persistent congestion or an undo: nothing is covered any more.
    pub(crate) fn forget(&mut self) {
        *self = RecoveryPeriod::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_keeps_covering_older_packets_after_the_recovery_state_ends() {
        let t = Time::from_secs_f64;
        let mut p = RecoveryPeriod::default();
        assert!(!p.covers(t(0.0)) && !p.is_open());
        p.begin(t(1.0));
        assert!(p.covers(t(0.9)) && p.covers(t(1.0)) && !p.covers(t(1.1)));
        assert_eq!(p.open_start(), Some(t(1.0)));
        p.end();
        assert!(!p.is_open() && p.open_start().is_none());
        assert!(p.covers(t(0.9)), "a loss of a packet sent before the start stays in the period");
        p.forget();
        assert!(!p.covers(t(0.9)));
    }
}
