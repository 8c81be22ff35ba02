//! Flow control (RFC 9000 §4): the credit the peer gives us and the window we give the peer,
//! for the connection (MAX_DATA, §19.9) and each stream (MAX_STREAM_DATA, §19.10).
//!
//! The receiving side raises its limit to `consumed + window` once `update_fraction` of the
//! window has been consumed by the application (the profile's `flow_control_update_fraction`,
//! as quinn, ngtcp2 and aioquic do with their own fractions), or, under picoquic of early
//! 2022's rule ([`FlowControlRule::Picoquic2022`]), grows the limit by
//! [`picoquic_increase`] once twice the bytes counted exceed it.

use multiconn_core::Dur;
pub use multiconn_transport::profile::FlowControlRule;

/// picoquic's `picoquic_cc_increased_window` (48525d89ef4d, `cc_common.c`): what a limit of
/// `previous` grows by: `previous` × 2 while the first path's minimum RTT is at most 100 ms
/// (`PICOQUIC_TARGET_RENO_RTT`), otherwise `previous` × min(RTT, 610 ms) / 100 ms
/// (`PICOQUIC_TARGET_SATELLITE_RTT`). No RTT sample yet counts as a short RTT (picoquic's
/// `rtt_min` starts at 0).
pub fn picoquic_increase(previous: u64, rtt_min: Option<Dur>) -> u64 {
    const TARGET_RENO_RTT: u64 = 100_000_000;
    const TARGET_SATELLITE_RTT: u64 = 610_000_000;
    match rtt_min {
        Some(rtt) if rtt.as_nanos() > TARGET_RENO_RTT => {
            let rtt = rtt.as_nanos().min(TARGET_SATELLITE_RTT);
            ((previous as f64 / TARGET_RENO_RTT as f64) * rtt as f64) as u64
        }
        _ => previous.saturating_mul(2),
    }
}

/// What we may send: the peer's advertised limit and how much of it we used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendCredit {
    /// The limit the peer advertised (MAX_DATA or MAX_STREAM_DATA), in bytes.
    pub max: u64,
    /// Bytes of that limit used so far.
    pub used: u64,
}

impl SendCredit {
    /// Credit up to the peer's initial limit of `max` bytes, none used.
    pub fn new(max: u64) -> SendCredit {
        SendCredit { max, used: 0 }
    }
    /// Bytes that may still be sent.
    pub fn available(&self) -> u64 {
        self.max.saturating_sub(self.used)
    }
    /// A MAX_DATA / MAX_STREAM_DATA frame arrived; limits never decrease (§4.1).
    /// Returns true if the limit grew.
    pub fn raise(&mut self, max: u64) -> bool {
        if max > self.max {
            self.max = max;
            true
        } else {
            false
        }
    }
}

/// What we let the peer send.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecvWindow {
    /// Bytes the peer may send beyond what the application consumed (the initial limit).
    pub window: u64,
    /// The limit advertised so far.
    pub max: u64,
    /// Highest offset (stream) or sum of highest offsets (connection) received.
    pub received: u64,
    /// Bytes delivered to the application.
    pub consumed: u64,
    /// Fraction of the window consumed by the application before the limit is raised (0 to 1).
    pub update_fraction: f64,
    /// How the limit grows: sliding window, or picoquic's rule of early 2022.
    pub rule: FlowControlRule,
}

impl RecvWindow {
    /// A sliding window of `window` bytes, raised once `update_fraction` of it is consumed.
    pub fn new(window: u64, update_fraction: f64) -> RecvWindow {
        RecvWindow::with_rule(window, update_fraction, FlowControlRule::Sliding)
    }

    /// A window of `window` bytes growing by `rule` (`update_fraction` clamped to 0–1, 0.5 if not
    /// finite).
    pub fn with_rule(window: u64, update_fraction: f64, rule: FlowControlRule) -> RecvWindow {
        let f = if update_fraction.is_finite() { update_fraction.clamp(0.0, 1.0) } else { 0.5 };
        RecvWindow { window, max: window, received: 0, consumed: 0, update_fraction: f, rule }
    }

    /// Under [`FlowControlRule::Picoquic2022`]: the new limit if twice `counted` exceeds the
    /// current one (grown by [`picoquic_increase`]); `None` otherwise and under `Sliding`.
    pub fn picoquic_grow(&mut self, counted: u64, rtt_min: Option<Dur>) -> Option<u64> {
        if self.rule != FlowControlRule::Picoquic2022 || counted.saturating_mul(2) <= self.max {
            return None;
        }
        self.max = self.max.saturating_add(picoquic_increase(self.max, rtt_min));
        Some(self.max)
    }

    /// The peer's data now reaches `received`; false if that violates the limit (§4.5: a
    /// FLOW_CONTROL_ERROR; the model ignores the data instead of closing).
    pub fn on_received(&mut self, received: u64) -> bool {
        if received > self.max {
            return false;
        }
        self.received = self.received.max(received);
        true
    }

    /// The application consumed `n` bytes; returns the new limit to advertise if an update
    /// is due under the sliding rule (the picoquic rule grows through
    /// [`RecvWindow::picoquic_grow`]).
    pub fn on_consumed(&mut self, n: u64) -> Option<u64> {
        self.consumed += n;
        if self.rule != FlowControlRule::Sliding {
            return None;
        }
        let window_start = self.max.saturating_sub(self.window);
        let used = self.consumed.saturating_sub(window_start) as f64;
        if used >= self.update_fraction * self.window as f64 && self.consumed + self.window > self.max {
            self.max = self.consumed + self.window;
            Some(self.max)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_after_the_fraction_is_consumed() {
        let mut w = RecvWindow::new(1000, 0.5);
        assert!(w.on_received(1000));
        assert!(!w.on_received(1001));
        assert_eq!(w.on_consumed(499), None);
        assert_eq!(w.on_consumed(1), Some(1500));
        assert_eq!(w.on_consumed(499), None);
        assert_eq!(w.on_consumed(1), Some(2000));
        let mut c = SendCredit::new(10);
        c.used = 4;
        assert_eq!(c.available(), 6);
        assert!(!c.raise(5));
        assert!(c.raise(20));
    }

    /// The study-testbeds reference's vectors (§1.6): a 1 MiB connection limit becomes 3, 9,
    /// 27, 81 MiB once more than 0.5, 1.5, 4.5, 13.5 MiB have arrived; a 2 MiB stream limit
    /// becomes 6, 18, 54 MiB once more than 1, 3, 9 MiB were delivered in order.
    #[test]
    fn picoquic_limits_grow_threefold_once_half_is_counted() {
        const MIB: u64 = 1 << 20;
        let mut conn = RecvWindow::with_rule(MIB, 0.5, FlowControlRule::Picoquic2022);
        let rtt = Some(Dur::from_millis(40));
        assert_eq!(conn.picoquic_grow(MIB / 2, rtt), None);
        let mut limits = Vec::new();
        for counted in [MIB / 2 + 1, 3 * MIB / 2 + 1, 9 * MIB / 2 + 1, 27 * MIB / 2 + 1] {
            limits.push(conn.picoquic_grow(counted, rtt).unwrap() / MIB);
            assert_eq!(conn.picoquic_grow(counted, rtt), None, "one growth per threshold");
        }
        assert_eq!(limits, [3, 9, 27, 81]);
        let mut stream = RecvWindow::with_rule(2 * MIB, 0.5, FlowControlRule::Picoquic2022);
        assert_eq!(stream.on_consumed(MIB + 1), None, "the sliding rule is off");
        assert_eq!(stream.picoquic_grow(stream.consumed, rtt), Some(6 * MIB));
        assert_eq!(stream.picoquic_grow(3 * MIB + 1, rtt), Some(18 * MIB));
        assert_eq!(stream.picoquic_grow(9 * MIB + 1, rtt), Some(54 * MIB));
        // Long paths grow by RTT / 100 ms, at most 6.1 times.
        assert_eq!(picoquic_increase(1000, Some(Dur::from_millis(250))), 2500);
        assert_eq!(picoquic_increase(1000, Some(Dur::from_secs(2))), 6100);
        assert_eq!(picoquic_increase(1000, None), 2000);
        // The sliding rule never grows this way.
        let mut sliding = RecvWindow::new(MIB, 0.5);
        assert_eq!(sliding.picoquic_grow(MIB, rtt), None);
    }
}
