//! Flow control (RFC 9000 §4): the credit the peer gives us and the window we give the peer,
//! for the connection (MAX_DATA, §19.9) and each stream (MAX_STREAM_DATA, §19.10).
//!
//! The receiving side raises its limit to `consumed + window` once `update_fraction` of the
//! window has been consumed by the application (the profile's `flow_control_update_fraction`,
//! as quinn, ngtcp2 and aioquic do with their own fractions).

/// What we may send: the peer's advertised limit and how much of it we used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendCredit {
    pub max: u64,
    pub used: u64,
}

impl SendCredit {
    pub fn new(max: u64) -> SendCredit {
        SendCredit { max, used: 0 }
    }
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
    pub window: u64,
    /// The limit advertised so far.
    pub max: u64,
    /// Highest offset (stream) or sum of highest offsets (connection) received.
    pub received: u64,
    /// Bytes delivered to the application.
    pub consumed: u64,
    pub update_fraction: f64,
}

impl RecvWindow {
    pub fn new(window: u64, update_fraction: f64) -> RecvWindow {
        let f = if update_fraction.is_finite() { update_fraction.clamp(0.0, 1.0) } else { 0.5 };
        RecvWindow { window, max: window, received: 0, consumed: 0, update_fraction: f }
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
    /// is due.
    pub fn on_consumed(&mut self, n: u64) -> Option<u64> {
        self.consumed += n;
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
}
