//! Pacing per RFC 9002 §7.7: a token bucket refilled at `factor · cwnd / smoothed_rtt` (or at
//! the controller's own pacing rate, for BBR), whose depth bounds bursts.
//!
//! Profiles differ in the factor and the depth: RFC 9002 suggests N = 1.25 and bursts no
//! larger than the initial window; aioquic uses N = 1 and a depth of
//! max(2·MDS, min(cwnd/4, 16·MDS)); ngtcp2 uses N = 1.25 with a send quantum of
//! max(10·MDS, min(64 KiB, 1 ms worth of bytes)).

use multiconn_core::{Dur, Rate, Time};
use serde::Deserialize;

/// How deep the bucket is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BurstRule {
    /// The initial window (RFC 9002 §7.7).
    InitialWindow,
    /// max(2·MDS, min(cwnd/4, 16·MDS)) (aioquic).
    Aioquic,
    /// max(10·MDS, min(64 KiB, 1 ms at the pacing rate)) (ngtcp2's send quantum).
    SendQuantum,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacerConfig {
    /// Off: packets leave as soon as the window allows.
    pub enabled: bool,
    /// N in N·cwnd/smoothed_rtt.
    pub factor: f64,
    pub burst: BurstRule,
    pub max_datagram_size: u64,
    pub initial_window: u64,
}

#[derive(Clone, Debug)]
pub struct Pacer {
    cfg: PacerConfig,
    /// Bucket content in bytes (may be fractional between refills).
    tokens: f64,
    last: Time,
}

impl Pacer {
    pub fn new(cfg: PacerConfig) -> Pacer {
        let tokens = cfg.initial_window as f64;
        Pacer { cfg, tokens, last: Time::ZERO }
    }

    fn rate_bytes_per_s(&self, cwnd: u64, srtt: Dur, rate: Option<Rate>) -> f64 {
        match rate {
            Some(r) => r.bps() as f64 / 8.0,
            None => self.cfg.factor * cwnd as f64 / srtt.as_secs_f64().max(1e-6),
        }
    }

    fn depth(&self, cwnd: u64, bytes_per_s: f64) -> f64 {
        let mds = self.cfg.max_datagram_size;
        match self.cfg.burst {
            BurstRule::InitialWindow => self.cfg.initial_window as f64,
            BurstRule::Aioquic => (2 * mds).max((cwnd / 4).min(16 * mds)) as f64,
            BurstRule::SendQuantum => ((10 * mds) as f64).max((64.0 * 1024.0f64).min(bytes_per_s / 1000.0)),
        }
    }

    fn refill(&mut self, now: Time, cwnd: u64, srtt: Dur, rate: Option<Rate>) {
        let r = self.rate_bytes_per_s(cwnd, srtt, rate);
        let elapsed = now.since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * r).min(self.depth(cwnd, r).max(self.cfg.max_datagram_size as f64));
    }

    /// When a packet of `bytes` may leave: `now` if the bucket holds enough, else the instant
    /// it will. `rate` overrides the window-derived rate (BBR).
    pub fn earliest_send(&mut self, now: Time, bytes: u64, cwnd: u64, srtt: Dur, rate: Option<Rate>) -> Time {
        if !self.cfg.enabled {
            return now;
        }
        self.refill(now, cwnd, srtt, rate);
        if self.tokens >= bytes as f64 {
            return now;
        }
        let r = self.rate_bytes_per_s(cwnd, srtt, rate);
        let wait = Dur::from_secs_f64((bytes as f64 - self.tokens) / r).max(Dur(1));
        now + wait
    }

    /// A packet of `bytes` left (pure ACKs are not paced and should not be reported).
    pub fn on_sent(&mut self, bytes: u64) {
        if self.cfg.enabled {
            self.tokens -= bytes as f64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paces_at_factor_times_cwnd_over_rtt_after_the_burst() {
        let cfg = PacerConfig { enabled: true, factor: 1.25, burst: BurstRule::InitialWindow, max_datagram_size: 1200, initial_window: 12000 };
        let mut p = Pacer::new(cfg);
        let (cwnd, srtt) = (120_000, Dur::from_millis(100));
        let mut now = Time::ZERO;
        let mut sent = 0u64;
        // 10 packets leave at once (the initial-window burst) ...
        while p.earliest_send(now, 1200, cwnd, srtt, None) == now && sent < 100 {
            p.on_sent(1200);
            sent += 1;
        }
        assert_eq!(sent, 10);
        // ... then 1000 more take 1000·1200 / (1.25·120000/0.1) s = 0.8 s.
        for _ in 0..1000 {
            now = p.earliest_send(now, 1200, cwnd, srtt, None);
            p.on_sent(1200);
        }
        let expect = 1000.0 * 1200.0 / (1.25 * 120_000.0 / 0.1);
        assert!((now.as_secs_f64() - expect).abs() < 0.002, "{}", now.as_secs_f64());
    }
}
