//! The single place where values with units are parsed and printed.
//!
//! Scenario files write quantities as strings with a unit: rates (`"20 Mbit/s"`), durations
//! (`"10 ms"`), sizes (`"100 MB"`), queue limits (`"100 packets"` or `"150 kB"`), speeds
//! (`"10 m/s"` or `"36 km/h"`) and probabilities (`"1 %"` or a bare number in [0, 1]). Decimal prefixes are powers of 1000
//! (k, M, G), binary prefixes (KiB, MiB, GiB) powers of 1024, as in IEC 80000-13.
//! A number without a unit is rejected rather than given a silent default unit.

use crate::time::Dur;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// A bit rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rate(pub u64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

/// A drop-tail queue limit: a number of packets or a number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(u64),
    /// At most this many bytes.
    Bytes(u64),
}

/// A probability in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Probability(pub f64);

/// A speed in metres per second.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Speed(pub f64);

/// Why a value could not be parsed; the message names the value and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnitError(pub String);

/// The units a rate may be written in, for messages.
pub const RATE_UNITS: &str = "bit/s, kbit/s, Mbit/s, Gbit/s (or bps, kbps, Mbps, Gbps), B/s, kB/s, MB/s, GB/s";
/// The units a duration may be written in, for messages.
pub const DURATION_UNITS: &str = "ns, us, ms, s, min, h";
/// Every unit a duration may be written in (those of [`DURATION_UNITS`] and their other
/// spellings) and its length in seconds.
pub const DURATION_UNIT_SECONDS: [(&str, f64); 8] =
    [("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0), ("sec", 1.0), ("min", 60.0), ("h", 3600.0)];
/// The units a speed may be written in, for messages.
pub const SPEED_UNITS: &str = "m/s, km/h";
/// The units a size may be written in, for messages.
pub const SIZE_UNITS: &str = "B, kB, MB, GB, KiB, MiB, GiB";

/// The highest rate accepted: a 40-byte packet (an IPv4 + TCP header alone) then takes
/// 1 ns, the clock's resolution, to serialize; faster links would send packets in no time.
pub const MAX_RATE: Rate = Rate(320_000_000_000);
/// The longest duration accepted, 2^62 ns (about 146 years): times and the sums a run makes
/// of them stay far inside the integer-nanosecond clock.
pub const MAX_DURATION: Dur = Dur(1 << 62);
/// The largest size accepted, 2^62 bytes (4 EiB): sizes and their sums stay inside 64 bits.
pub const MAX_SIZE: Bytes = Bytes(1 << 62);

/// `v` (already scaled to the base unit) if it is at most `max`, else the error naming the
/// limit.
fn at_most(what: &str, input: &str, v: f64, max: u64, limit: &str) -> Result<f64, UnitError> {
    if v > max as f64 {
        Err(UnitError(format!("{what} must be at most {limit}, got \"{input}\"")))
    } else {
        Ok(v)
    }
}

impl Rate {
    /// A rate of `m` Mbit/s, rounded to the bit per second.
    pub fn from_mbps(m: f64) -> Rate {
        Rate((m * 1e6).round() as u64)
    }
    /// The rate in bit/s.
    pub fn bps(self) -> u64 {
        self.0
    }
    /// The rate in Mbit/s.
    pub fn mbps(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Time to serialize `bytes` at this rate, rounded up to the next nanosecond.
    /// A zero rate never finishes.
    pub fn tx_time(self, bytes: u64) -> Dur {
        if self.0 == 0 {
            return Dur::MAX;
        }
        let ns = (bytes as u128 * 8 * 1_000_000_000).div_ceil(self.0 as u128);
        Dur(ns.min(u64::MAX as u128) as u64)
    }
}

/// Splits `"20 Mbit/s"` into `(20.0, "Mbit/s")`; the space is optional.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let bytes = s.as_bytes();
    let mut end = 0;
    while end < bytes.len() {
        let c = bytes[end];
        let after_exponent = end > 0 && matches!(bytes[end - 1], b'e' | b'E');
        let exponent = matches!(c, b'e' | b'E')
            && end > 0
            && bytes.get(end + 1).is_some_and(|d| d.is_ascii_digit() || *d == b'-' || *d == b'+');
        let ok = c.is_ascii_digit()
            || c == b'.'
            || c == b'_'
            || ((c == b'-' || c == b'+') && (end == 0 || after_exponent))
            || exponent;
        if !ok {
            break;
        }
        end += 1;
    }
    let num: String = s[..end].chars().filter(|&c| c != '_').collect();
    let value: f64 = num.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    Some((value, s[end..].trim()))
}

fn non_negative(what: &str, input: &str, v: f64) -> Result<f64, UnitError> {
    if v < 0.0 {
        Err(UnitError(format!("{what} must not be negative, got \"{input}\"")))
    } else {
        Ok(v)
    }
}

/// Parses a rate such as `"20 Mbit/s"` or `"2.5 MB/s"` (decimal prefixes; bytes are 8 bits).
pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    let err = || UnitError(format!("invalid rate \"{s}\": expected a number and a unit, one of {RATE_UNITS}"));
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let factor = match unit {
        "bit/s" | "bps" | "b/s" => 1.0,
        "kbit/s" | "kbps" | "Kbit/s" | "Kbps" | "kb/s" => 1e3,
        "Mbit/s" | "Mbps" | "Mb/s" => 1e6,
        "Gbit/s" | "Gbps" | "Gb/s" => 1e9,
        "B/s" => 8.0,
        "kB/s" | "KB/s" => 8e3,
        "MB/s" => 8e6,
        "GB/s" => 8e9,
        _ => return Err(err()),
    };
    let v = non_negative("a rate", s, v)?;
    let bps = at_most("a rate", s, v * factor, MAX_RATE.0, "320 Gbit/s (a 40-byte packet then serializes in the clock's 1 ns)")?;
    Ok(Rate(bps.round() as u64))
}

/// Parses a duration such as `"10 ms"` or `"1.5 s"`, to the nearest nanosecond.
pub fn parse_duration(s: &str) -> Result<Dur, UnitError> {
    let err = || UnitError(format!("invalid duration \"{s}\": expected a number and a unit, one of {DURATION_UNITS}"));
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let (_, seconds) = DURATION_UNIT_SECONDS.iter().find(|(u, _)| *u == unit).ok_or_else(err)?;
    let v = non_negative("a duration", s, v)?;
    let ns = at_most("a duration", s, v * seconds * 1e9, MAX_DURATION.0, "146 years (2^62 ns, the clock's range with room for sums)")?;
    let d = Dur::from_secs_f64(ns / 1e9);
    // Durations are rounded to the clock's 1 ns; one that is not 0 must not round to it.
    if d.0 == 0 && v > 0.0 {
        return Err(UnitError(format!("a duration must be 0 or at least 1 ns (the clock's resolution; shorter ones would round to 0), got \"{s}\"")));
    }
    Ok(d)
}

fn size_factor(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" | "bytes" | "byte" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// Parses a size such as `"100 MB"` or `"64 KiB"` (decimal or binary prefixes), to the byte.
pub fn parse_size(s: &str) -> Result<Bytes, UnitError> {
    let err = || UnitError(format!("invalid size \"{s}\": expected a number and a unit, one of {SIZE_UNITS}"));
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let factor = size_factor(unit).ok_or_else(err)?;
    let v = non_negative("a size", s, v)?;
    let bytes = at_most("a size", s, v * factor, MAX_SIZE.0, "4 EiB (2^62 B)")?;
    Ok(Bytes(bytes.round() as u64))
}

/// Parses a speed such as `"10 m/s"` or `"3 km/h"`, in m/s (at most the speed of light).
pub fn parse_speed(s: &str) -> Result<Speed, UnitError> {
    let err = || UnitError(format!("invalid speed \"{s}\": expected a number and a unit, one of {SPEED_UNITS}"));
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let factor = match unit {
        "m/s" | "mps" => 1.0,
        "km/h" | "kmh" | "kph" => 1.0 / 3.6,
        _ => return Err(err()),
    };
    let v = non_negative("a speed", s, v)?;
    if v * factor > 299_792_458.0 {
        return Err(UnitError(format!("a speed must be at most the speed of light, got \"{s}\"")));
    }
    Ok(Speed(v * factor))
}

/// Parses a queue limit: `"100 packets"` (a whole number) or a size such as `"150 kB"`.
pub fn parse_queue_limit(s: &str) -> Result<QueueLimit, UnitError> {
    let err = || {
        UnitError(format!(
            "invalid queue limit \"{s}\": expected a number of packets (\"100 packets\") or a size in {SIZE_UNITS}"
        ))
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let v = non_negative("a queue limit", s, v)?;
    match unit {
        "packets" | "packet" | "pkts" | "p" => {
            if v.fract() != 0.0 {
                return Err(UnitError(format!("a queue limit in packets must be a whole number, got \"{s}\"")));
            }
            let v = at_most("a queue limit", s, v, MAX_SIZE.0, "2^62 packets")?;
            Ok(QueueLimit::Packets(v as u64))
        }
        u => {
            let f = size_factor(u).ok_or_else(err)?;
            let bytes = at_most("a queue limit", s, v * f, MAX_SIZE.0, "4 EiB (2^62 B)")?;
            Ok(QueueLimit::Bytes(bytes.round() as u64))
        }
    }
}

/// `"1.5 %"` or a bare number such as `"0.015"`.
pub fn parse_probability(s: &str) -> Result<Probability, UnitError> {
    let err = || UnitError(format!("invalid probability \"{s}\": expected a number in [0, 1] or a percentage such as \"1.5 %\""));
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let p = match unit {
        "%" => v / 100.0,
        "" => v,
        _ => return Err(err()),
    };
    match unit {
        "" => check_probability(p),
        _ => check_probability(p).map_err(|_| err()),
    }
}

/// `p` as a probability, if it lies in [0, 1].
pub fn check_probability(p: f64) -> Result<Probability, UnitError> {
    if (0.0..=1.0).contains(&p) {
        Ok(Probability(p))
    } else {
        let hint = if p > 1.0 && p <= 100.0 { format!(" (for {p} %, write {} or \"{p} %\")", p / 100.0) } else { String::new() };
        Err(UnitError(format!("a probability must lie in [0, 1], got {p}{hint}")))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} Mbit/s", self.mbps())
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", self.0)
    }
}

/// Implements `Deserialize` from a string with a unit. Bare numbers are refused with a hint,
/// except for probabilities, where a bare number in [0, 1] is the natural spelling.
macro_rules! deserialize_with_unit {
    ($ty:ty, $parse:ident, $expecting:expr, $example:expr, $from_number:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map_err(|e| E::custom(e.0))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        let from: fn(f64) -> Result<$ty, UnitError> = $from_number;
                        from(v).map_err(|e| E::custom(e.0))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_f64(v as f64)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

fn needs_unit<T>(what: &'static str, example: &'static str) -> impl Fn(f64) -> Result<T, UnitError> {
    move |v| Err(UnitError(format!("{what} needs a unit: write it as a string such as \"{v} {example}\"")))
}

deserialize_with_unit!(Rate, parse_rate, "a rate such as \"20 Mbit/s\"", "Mbit/s", |v| needs_unit("a rate", "Mbit/s")(v));
deserialize_with_unit!(Dur, parse_duration, "a duration such as \"10 ms\"", "ms", |v| needs_unit("a duration", "ms")(v));
deserialize_with_unit!(Bytes, parse_size, "a size such as \"100 MB\"", "MB", |v| needs_unit("a size", "MB")(v));
deserialize_with_unit!(QueueLimit, parse_queue_limit, "a queue limit such as \"100 packets\" or \"150 kB\"", "packets", |v| needs_unit("a queue limit", "packets")(v));
deserialize_with_unit!(Speed, parse_speed, "a speed such as \"10 m/s\"", "m/s", |v| needs_unit("a speed", "m/s")(v));
deserialize_with_unit!(Probability, parse_probability, "a probability such as 0.01 or \"1 %\"", "%", check_probability);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn speeds() {
        assert_eq!(parse_speed("10 m/s").unwrap(), Speed(10.0));
        assert_eq!(parse_speed("36 km/h").unwrap(), Speed(10.0));
        assert_eq!(parse_speed("0 m/s").unwrap(), Speed(0.0));
        assert!(parse_speed("10").unwrap_err().0.contains("m/s, km/h"));
        assert!(parse_speed("10 mph").unwrap_err().0.contains("invalid speed"));
        assert!(parse_speed("-3 m/s").unwrap_err().0.contains("negative"));
        assert!(parse_speed("1e9 m/s").unwrap_err().0.contains("speed of light"));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("20 Mbit/s").unwrap(), Rate(20_000_000));
        assert_eq!(parse_rate("20Mbps").unwrap(), Rate(20_000_000));
        assert_eq!(parse_rate("4.5 Mbit/s").unwrap(), Rate(4_500_000));
        assert_eq!(parse_rate("1 MB/s").unwrap(), Rate(8_000_000));
        assert_eq!(parse_rate("300 kbit/s").unwrap(), Rate(300_000));
        assert!(parse_rate("20").unwrap_err().0.contains("Mbit/s"));
        assert!(parse_rate("-1 Mbit/s").unwrap_err().0.contains("negative"));
        assert!(parse_rate("20 Mbit").is_err());
        assert!(parse_rate("").is_err());
    }

    #[test]
    fn durations_sizes_and_limits() {
        assert_eq!(parse_duration("10 ms").unwrap(), Dur::from_millis(10));
        assert_eq!(parse_duration("2.5 s").unwrap(), Dur::from_millis(2500));
        assert_eq!(parse_duration("1e-3 s").unwrap(), Dur::from_millis(1));
        assert_eq!(parse_duration("250 us").unwrap(), Dur::from_micros(250));
        assert_eq!(parse_size("100 MB").unwrap(), Bytes(100_000_000));
        assert_eq!(parse_size("1 MiB").unwrap(), Bytes(1 << 20));
        assert_eq!(parse_size("1_500 B").unwrap(), Bytes(1500));
        assert_eq!(parse_queue_limit("100 packets").unwrap(), QueueLimit::Packets(100));
        assert_eq!(parse_queue_limit("150 kB").unwrap(), QueueLimit::Bytes(150_000));
        assert!(parse_queue_limit("1.5 packets").is_err());
        assert!(parse_duration("10 parsecs").unwrap_err().0.contains("ms"));
    }

    #[test]
    fn quantities_beyond_what_the_models_hold_are_refused_with_the_limit() {
        assert_eq!(parse_rate("320 Gbit/s").unwrap(), MAX_RATE);
        let e = parse_rate("1e30bit/s").unwrap_err().0;
        assert!(e.starts_with("a rate must be at most 320 Gbit/s") && e.ends_with("got \"1e30bit/s\""), "{e}");
        assert!(parse_rate("321 Gbit/s").is_err());
        let e = parse_duration("1e30s").unwrap_err().0;
        assert!(e.starts_with("a duration must be at most 146 years (2^62 ns"), "{e}");
        assert!(parse_duration("147 h").is_ok());
        assert!(parse_duration("1300000 h").is_err()); // 148 years
        assert!(parse_duration("1200000 h").is_ok()); // 137 years
        assert!(parse_size("5 GB").is_ok());
        assert!(parse_size("1e19 B").unwrap_err().0.contains("at most 4 EiB"));
        assert!(parse_queue_limit("1e19 packets").unwrap_err().0.contains("at most 2^62 packets"));
        assert!(parse_queue_limit("1e19 kB").is_err());
    }

    #[test]
    fn probabilities() {
        assert_eq!(parse_probability("1 %").unwrap(), Probability(0.01));
        assert_eq!(parse_probability("0.25").unwrap(), Probability(0.25));
        assert!(parse_probability("150 %").is_err());
        assert!(parse_probability("-0.1").is_err());
    }

    #[test]
    fn a_duration_that_would_round_to_zero_is_refused() {
        assert_eq!(parse_duration("0.5 ns").unwrap(), Dur(1));
        assert_eq!(parse_duration("0 ms").unwrap(), Dur(0));
        let e = parse_duration("1e-30 ms").unwrap_err();
        assert_eq!(e.0, "a duration must be 0 or at least 1 ns (the clock's resolution; shorter ones would round to 0), got \"1e-30 ms\"");
        assert!(parse_duration("0.4 ns").is_err());
    }

    #[test]
    fn tx_time_rounds_up() {
        assert_eq!(Rate(40_000_000).tx_time(1500), Dur(300_000));
        assert_eq!(Rate(3).tx_time(1), Dur(2_666_666_667));
        assert_eq!(Rate(0).tx_time(1), Dur::MAX);
    }

    proptest! {
        #[test]
        fn parsers_never_panic(s in ".{0,24}") {
            let _ = parse_rate(&s);
            let _ = parse_duration(&s);
            let _ = parse_size(&s);
            let _ = parse_queue_limit(&s);
            let _ = parse_probability(&s);
        }

        #[test]
        fn rate_round_trips(mbit in 0u64..100_000) {
            prop_assert_eq!(parse_rate(&format!("{mbit} kbit/s")).unwrap(), Rate(mbit * 1000));
        }
    }
}
