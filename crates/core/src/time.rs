//! Virtual time as integer nanoseconds.
//!
//! [`Time`] is an instant since the start of a run, [`Dur`] a span. Both are `u64` nanoseconds
//! (584 years of range), so event ordering never depends on floating-point rounding. Conversions
//! from seconds round to the nearest nanosecond; arithmetic saturates instead of wrapping.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of virtual time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of virtual time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

/// Nanoseconds in a second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

impl Time {
    /// The start of the run.
    pub const ZERO: Time = Time(0);
    /// The latest representable instant ("never").
    pub const MAX: Time = Time(u64::MAX);

    /// The earlier of two optional deadlines, `None` meaning "none wanted" (the `min` of two
    /// `poll_timeout` answers).
    pub fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }

    /// The instant `s` seconds after the start, rounded to the nanosecond (see
    /// [`Dur::from_secs_f64`]).
    pub fn from_secs_f64(s: f64) -> Time {
        Time(Dur::from_secs_f64(s).0)
    }
    /// Nanoseconds since the start of the run.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the start of the run.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// Span since `earlier`, or zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    /// No time.
    pub const ZERO: Dur = Dur(0);
    /// The longest representable span ("forever").
    pub const MAX: Dur = Dur(u64::MAX);

    /// `n` nanoseconds.
    pub const fn from_nanos(n: u64) -> Dur {
        Dur(n)
    }
    /// `us` microseconds.
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    /// `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    /// `s` seconds.
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * NANOS_PER_SEC)
    }
    /// Rounds to the nearest nanosecond; negative and NaN become zero, huge values saturate.
    pub fn from_secs_f64(s: f64) -> Dur {
        if s.is_nan() || s <= 0.0 {
            Dur(0)
        } else {
            let ns = (s * NANOS_PER_SEC as f64).round();
            if ns >= u64::MAX as f64 {
                Dur(u64::MAX)
            } else {
                Dur(ns as u64)
            }
        }
    }
    /// The span in nanoseconds.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// The span in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// The span in milliseconds.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, rhs: Time) -> Dur {
        self.since(rhs)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, d: Dur) -> Dur {
        Dur(self.0.saturating_sub(d.0))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.as_secs_f64())
    }
}
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ms", self.as_millis_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_trip_to_the_nanosecond() {
        assert_eq!(Dur::from_secs_f64(0.010), Dur::from_millis(10));
        assert_eq!(Dur::from_secs_f64(1e-9), Dur(1));
        assert_eq!(Dur::from_secs_f64(-3.0), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(f64::NAN), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(1e30), Dur::MAX);
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Time::MAX + Dur(5), Time::MAX);
        assert_eq!(Time(3) - Time(7), Dur::ZERO);
        assert_eq!(Time(7) - Time(3), Dur(4));
    }
}
