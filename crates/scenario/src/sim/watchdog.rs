//! The run loop's watchdog: a run whose virtual time stops advancing (an event storm at one
//! instant, as a model that keeps waking itself without progress would cause) is ended with
//! an error naming the instant and the kind of event that kept coming, instead of hanging.
//!
//! It counts events fired at the same virtual time; any advance of the clock resets the count.
//! Legitimate bursts (every flow starting at 0 s, a queue releasing many packets at once) are
//! far below the default limit.

use multiconn_core::Time;

/// Events allowed at one instant before a run is declared stalled.
pub const DEFAULT_STALL_LIMIT: u64 = 20_000_000;

/// Why a run was stopped: virtual time stood still for `events` events at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// The instant time stood still at.
    pub at: Time,
    /// Events fired at that instant.
    pub events: u64,
    /// The kind of the last event (e.g. "a link wake-up", "an endpoint timer").
    pub last_event: &'static str,
}

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the run stalled: {} events at {:.9} s without virtual time advancing (the last was {}); \
             a model keeps scheduling work for the same instant",
            self.events,
            self.at.as_secs_f64(),
            self.last_event
        )
    }
}

/// Counts the events fired at the current instant.
#[derive(Debug, Clone)]
pub struct Watchdog {
    limit: u64,
    at: Time,
    count: u64,
}

impl Watchdog {
    /// A watchdog that trips after `limit` events at one instant.
    pub fn new(limit: u64) -> Watchdog {
        Watchdog { limit: limit.max(1), at: Time::ZERO, count: 0 }
    }

    /// Notes an event at `now`; `Some` when the limit is passed.
    pub fn fired(&mut self, now: Time, kind: &'static str) -> Option<Stall> {
        if now != self.at {
            self.at = now;
            self.count = 0;
        }
        self.count += 1;
        (self.count > self.limit).then_some(Stall { at: now, events: self.count, last_event: kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_only_after_the_limit_at_one_instant_and_resets_when_time_moves() {
        let mut w = Watchdog::new(3);
        for _ in 0..3 {
            assert_eq!(w.fired(Time(5), "x"), None);
        }
        assert_eq!(w.fired(Time(6), "x"), None);
        for _ in 0..2 {
            assert_eq!(w.fired(Time(6), "x"), None);
        }
        let stall = w.fired(Time(6), "a link wake-up").expect("the fourth event at 6 ns trips it");
        assert_eq!((stall.at, stall.events), (Time(6), 4));
        assert!(stall.to_string().starts_with("the run stalled: 4 events at 0.000000006 s"));
    }
}
