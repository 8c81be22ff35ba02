//! Packet-timed round trips for the BBR controllers ([`crate::bbr`] v1 and [`crate::bbr3`]),
//! counted by send times: a round ends when a packet sent after it began is acknowledged.
//! This is the same as the drafts' `P.delivered ≥ next_round_delivered` rule (and Linux's
//! `prior_delivered ≥ next_rtt_delivered`), but works on ACKs that bring no rate sample.

use multiconn_core::Time;

/// A round-trip counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundCounter {
    /// Send time of the first packet sent in the current round (`None`: none sent yet).
    first_sent: Option<Time>,
    count: u64,
}

impl RoundCounter {
    /// A packet was sent at `now`: the first one after a round began marks it.
    pub fn on_sent(&mut self, now: Time) {
        if self.first_sent.is_none() {
            self.first_sent = Some(now);
        }
    }

    /// An ACK whose newest acknowledged packet was sent at `largest_acked_sent`: `true` if it
    /// ends the round (the count then grows by one and a new round begins).
    pub fn on_ack(&mut self, largest_acked_sent: Time) -> bool {
        if self.first_sent.is_some_and(|first| largest_acked_sent >= first) {
            self.count += 1;
            self.first_sent = None;
            return true;
        }
        false
    }

    /// Starts a new round from the next packet sent (the drafts' `StartRound()`), without
    /// counting one.
    pub fn restart(&mut self) {
        self.first_sent = None;
    }

    /// Rounds ended so far.
    pub fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_ends_when_a_packet_sent_after_it_began_is_acked() {
        let mut r = RoundCounter::default();
        r.on_sent(Time(10));
        r.on_sent(Time(20));
        assert!(!r.on_ack(Time(5)));
        assert!(r.on_ack(Time(10)));
        assert_eq!(r.count(), 1);
        // Nothing sent since: no round can end.
        assert!(!r.on_ack(Time(20)));
        r.on_sent(Time(30));
        r.restart();
        r.on_sent(Time(40));
        assert!(!r.on_ack(Time(30)));
        assert!(r.on_ack(Time(40)));
        assert_eq!(r.count(), 2);
    }
}
