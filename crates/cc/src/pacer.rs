//! Pacing per RFC 9002 §7.7: a token bucket refilled at `factor · cwnd / smoothed_rtt` (or at
//! the controller's own pacing rate, for BBR), whose depth bounds bursts.
//!
//! Profiles differ in the factor and the depth: RFC 9002 suggests N = 1.25 and bursts no
//! larger than the initial window; aioquic uses N = 1 and a depth of
//! max(2·MDS, min(cwnd/4, 16·MDS)); ngtcp2 uses N = 1.25 with a send quantum of
//! max(10·MDS, min(64 KiB, 1 ms worth of bytes)).
//!
//! ngtcp2 0.12.1's example server is no bucket: it writes up to 64 KiB at once, then the next
//! send time is that write's bytes at the pacing rate later, and a packet may leave up to 1 ms
//! before it (`ngtcp2-0.12-writes`).
//!
//! Before the first RTT sample the two implementations do not pace at all (aioquic has no rate
//! until a sample; ngtcp2 takes 1 ms as the RTT), while RFC 9002 paces with kInitialRtt:
//! [`Pacer::earliest_send_rtt`] applies that per burst rule.

use crate::{Controller, RttEstimator};
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
    /// 64 KiB (ngtcp2 0.12's send quantum outside BBR, `cstat->send_quantum = 64 * 1024`).
    #[serde(rename = "64k")]
    Fixed64k,
    /// Not a bucket: ngtcp2 0.12.1's example server writes (`examples/server.cc`
    /// `Handler::write_streams`, `lib/ngtcp2_conn.c` `ngtcp2_conn_update_pkt_tx_time`,
    /// `conn_pacing_pkt_tx_allowed`). One write sends up to 64 KiB / MDS datagrams at one
    /// instant; when it ends, the next send time is that instant plus its bytes at the pacing
    /// rate, and a packet may leave once that time is within 1 ms
    /// (`NGTCP2_PKT_PACING_OVERHEAD`) of now, else at that time.
    #[serde(rename = "ngtcp2-0.12-writes")]
    Ngtcp2V012Writes,
    /// 2⁻¹² s (244 µs) at the pacing rate, at least one datagram: Linux TCP Prague's largest
    /// GSO burst (`tcp_prague.c` `prague_tso_segs`); taken by a controller that asks for it
    /// ([`Controller::pacing_burst`]), whatever the profile says.
    #[serde(rename = "rate-slice")]
    RateSlice,
}

/// The pacing time a [`BurstRule::RateSlice`] bucket holds: 2⁻¹² s.
pub const RATE_SLICE_S: f64 = 1.0 / 4096.0;

/// ngtcp2 0.12's send quantum.
const NGTCP2_V012_SEND_QUANTUM: u64 = 64 * 1024;
/// `NGTCP2_PKT_PACING_OVERHEAD`: how early a paced packet may leave.
const NGTCP2_PACING_OVERHEAD: Dur = Dur(1_000_000);

/// How a sender paces: the profile's `[pacing]` and the sizes the bucket depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacerConfig {
    /// Off: packets leave as soon as the window allows.
    pub enabled: bool,
    /// N in N·cwnd/smoothed_rtt.
    pub factor: f64,
    /// How deep the bucket is.
    pub burst: BurstRule,
    /// Largest datagram (QUIC) or segment (TCP) in bytes.
    pub max_datagram_size: u64,
    /// Initial window in bytes: the bucket's content at the start and its `initial-window`
    /// depth.
    pub initial_window: u64,
}

/// The pacer of one path: a token bucket in bytes, or ngtcp2 0.12's writes.
#[derive(Clone, Debug)]
pub struct Pacer {
    cfg: PacerConfig,
    /// Bucket content in bytes (may be fractional between refills).
    tokens: f64,
    last: Time,
    /// `ngtcp2-0.12-writes`: the write in progress and the next send time.
    write: QuantumWrite,
}

/// One write of the `ngtcp2-0.12-writes` rule.
#[derive(Clone, Copy, Debug, Default)]
struct QuantumWrite {
    /// Datagrams and bytes sent by the write in progress, at `at`.
    packets: u64,
    bytes: u64,
    at: Time,
    /// The pacing rate when its last packet was allowed, bytes per second.
    rate: f64,
    /// `pacing.next_ts` once a write ended.
    next: Option<Time>,
}

impl PacerConfig {
    /// These settings for a sender whose controller is `cc`: paced wherever the controller
    /// needs it ([`Controller::needs_pacing`]), with the bursts it asks for
    /// ([`Controller::pacing_burst`]), whatever the profile says.
    pub fn for_controller(self, cc: &dyn Controller) -> PacerConfig {
        PacerConfig { enabled: self.enabled || cc.needs_pacing(), burst: cc.pacing_burst().unwrap_or(self.burst), ..self }
    }
}

impl Pacer {
    /// A bucket holding the initial window.
    pub fn new(cfg: PacerConfig) -> Pacer {
        let tokens = cfg.initial_window as f64;
        Pacer { cfg, tokens, last: Time::ZERO, write: QuantumWrite::default() }
    }

    /// `ngtcp2-0.12-writes`: ends the write in progress if it was at an earlier instant or is
    /// full, then allows a packet now if the next send time is within the overhead.
    fn earliest_write(&mut self, now: Time, r: f64) -> Time {
        let per_write = (NGTCP2_V012_SEND_QUANTUM / self.cfg.max_datagram_size.max(1)).max(1);
        let w = &mut self.write;
        if w.packets > 0 && (now > w.at || w.packets >= per_write) {
            // Packets sent unpaced before the first RTT sample leave no next send time.
            w.next = (w.rate > 0.0).then(|| w.at + Dur::from_secs_f64(w.bytes as f64 / w.rate));
            w.packets = 0;
            w.bytes = 0;
        }
        w.rate = r;
        self.last = self.last.max(now);
        match w.next {
            Some(t) if t > now + NGTCP2_PACING_OVERHEAD => t,
            _ => now,
        }
    }

    fn rate_bytes_per_s(&self, cwnd: u64, srtt: Dur, rate: Option<Rate>) -> f64 {
        match rate {
            Some(r) if r.bps() > 0 => r.bps() as f64 / 8.0,
            // Floor the window at one datagram so a zero window cannot stall the bucket.
            _ => self.cfg.factor * cwnd.max(self.cfg.max_datagram_size) as f64 / srtt.as_secs_f64().max(1e-6),
        }
    }

    fn depth(&self, cwnd: u64, bytes_per_s: f64) -> f64 {
        let mds = self.cfg.max_datagram_size;
        match self.cfg.burst {
            BurstRule::InitialWindow => self.cfg.initial_window as f64,
            BurstRule::Aioquic => (2 * mds).max((cwnd / 4).min(16 * mds)) as f64,
            BurstRule::SendQuantum => ((10 * mds) as f64).max((64.0 * 1024.0f64).min(bytes_per_s / 1000.0)),
            BurstRule::Fixed64k | BurstRule::Ngtcp2V012Writes => NGTCP2_V012_SEND_QUANTUM as f64,
            BurstRule::RateSlice => (bytes_per_s * RATE_SLICE_S).max(mds as f64),
        }
    }

    fn refill(&mut self, now: Time, cwnd: u64, srtt: Dur, rate: Option<Rate>) {
        let r = self.rate_bytes_per_s(cwnd, srtt, rate);
        let elapsed = now.since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + elapsed * r).min(self.depth(cwnd, r).max(self.cfg.max_datagram_size as f64));
    }

    /// When a packet of `bytes` may leave: `now` if the bucket holds enough, else the instant
    /// it will. `rate` overrides the window-derived rate (BBR).
    pub fn earliest_send(&mut self, now: Time, bytes: u64, cwnd: u64, srtt: Dur, rate: Option<Rate>) -> Time {
        if !self.cfg.enabled {
            return now;
        }
        if self.cfg.burst == BurstRule::Ngtcp2V012Writes {
            let r = self.rate_bytes_per_s(cwnd, srtt, rate);
            return self.earliest_write(now, r);
        }
        self.refill(now, cwnd, srtt, rate);
        // A packet larger than the bucket leaves once the bucket is full.
        let r = self.rate_bytes_per_s(cwnd, srtt, rate);
        let need = (bytes as f64).min(self.depth(cwnd, r).max(self.cfg.max_datagram_size as f64));
        if self.tokens >= need {
            return now;
        }
        let wait = Dur::from_secs_f64((need - self.tokens) / r).max(Dur(1));
        now + wait
    }

    /// [`Pacer::earliest_send`] with the smoothed RTT taken from `rtt`, applying each rule's
    /// behaviour before the first RTT sample: the aioquic and ngtcp2 rules do not pace then
    /// (the bucket is left untouched), the RFC 9002 rule paces with the initial RTT. A
    /// controller rate (`rate`) is always used.
    pub fn earliest_send_rtt(&mut self, now: Time, bytes: u64, cwnd: u64, rtt: &RttEstimator, rate: Option<Rate>) -> Time {
        if self.cfg.enabled && rate.is_none() && !rtt.has_sample() && self.cfg.burst != BurstRule::InitialWindow {
            // Unpaced: make sure the packet leaves no debt behind for when pacing starts.
            self.tokens = self.tokens.max(bytes as f64);
            self.last = self.last.max(now);
            return now;
        }
        self.earliest_send(now, bytes, cwnd, rtt.smoothed(), rate)
    }

    /// A packet of `bytes` left (pure ACKs are not paced and should not be reported). Sending
    /// at the time [`Pacer::earliest_send`] named, without asking again, leaves the bucket in
    /// debt until the refill catches up.
    pub fn on_sent(&mut self, bytes: u64) {
        if !self.cfg.enabled {
            return;
        }
        if self.cfg.burst == BurstRule::Ngtcp2V012Writes {
            let w = &mut self.write;
            if w.packets == 0 {
                w.at = self.last;
            }
            w.packets += 1;
            w.bytes += bytes;
            return;
        }
        self.tokens -= bytes as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ngtcp2_0_12_writes_a_quantum_then_waits_its_bytes_at_the_rate_less_1_ms() {
        let cfg = PacerConfig { enabled: true, factor: 1.25, burst: BurstRule::Ngtcp2V012Writes, max_datagram_size: 1452, initial_window: 14520 };
        let mut p = Pacer::new(cfg);
        let (cwnd, srtt) = (120_000, Dur::from_millis(50));
        let rate = 1.25 * 120_000.0 / 0.05; // 3 MB/s
        let t0 = Time(1_000_000_000);
        // One write: 65536 / 1452 = 45 datagrams at once.
        let mut sent = 0;
        while p.earliest_send(t0, 1452, cwnd, srtt, None) == t0 && sent < 100 {
            p.on_sent(1452);
            sent += 1;
        }
        assert_eq!(sent, 45);
        let next = t0 + Dur::from_secs_f64(45.0 * 1452.0 / rate);
        assert_eq!(p.earliest_send(t0, 1452, cwnd, srtt, None), next, "the timer is the next send time itself");
        // Polled within 1 ms of it (say, on an ACK), the next write goes at once.
        let early = Time(next.0 - 900_000);
        assert_eq!(p.earliest_send(Time(next.0 - 1_100_000), 1452, cwnd, srtt, None), next);
        assert_eq!(p.earliest_send(early, 1452, cwnd, srtt, None), early);
        // A write cut short (three datagrams, then nothing until later) sets the next send time
        // by its own bytes.
        for _ in 0..3 {
            p.on_sent(1452);
        }
        let later = early + Dur::from_millis(1);
        let next = early + Dur::from_secs_f64(3.0 * 1452.0 / rate);
        assert!(next > later && next <= later + Dur::from_millis(1));
        assert_eq!(p.earliest_send(later, 1452, cwnd, srtt, None), later, "0.45 ms before its time: within the 1 ms");
    }

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

    /// Sends `n` packets as early as allowed from `start`; returns the departure times.
    fn departures(p: &mut Pacer, start: Time, n: usize, cwnd: u64, srtt: Dur, rate: Option<Rate>) -> Vec<Time> {
        let mut now = start;
        (0..n)
            .map(|_| {
                now = p.earliest_send(now, 1200, cwnd, srtt, rate);
                p.on_sent(1200);
                now
            })
            .collect()
    }

    #[test]
    fn aioquic_rule_rate_and_depth() {
        let cfg = PacerConfig { enabled: true, factor: 1.0, burst: BurstRule::Aioquic, max_datagram_size: 1200, initial_window: 12000 };
        let mut p = Pacer::new(cfg);
        // cwnd 48 000: depth max(2400, min(12 000, 19 200)) = 12 000 bytes = 10 packets.
        let (cwnd, srtt) = (48_000, Dur::from_millis(100));
        let t = departures(&mut p, Time(1_000_000_000), 30, cwnd, srtt, None);
        assert_eq!(t.iter().filter(|x| **x == t[0]).count(), 10);
        // Then one packet per MDS / (cwnd / srtt) = 2.5 ms.
        let gap = t[29].since(t[10]).as_secs_f64() / 19.0;
        assert!((gap - 0.0025).abs() < 1e-6, "{gap}");
        // Small window: the 2·MDS floor.
        let mut p = Pacer::new(cfg);
        let t = departures(&mut p, Time(1_000_000_000), 5, 4800, srtt, None);
        assert_eq!(t.iter().filter(|x| **x == t[0]).count(), 2);
    }

    #[test]
    fn ngtcp2_interval_per_byte_is_srtt_over_1_25_cwnd() {
        let cfg = PacerConfig { enabled: true, factor: 1.25, burst: BurstRule::SendQuantum, max_datagram_size: 1200, initial_window: 12000 };
        let mut p = Pacer::new(cfg);
        let (cwnd, srtt) = (120_000, Dur::from_millis(50));
        let t = departures(&mut p, Time(1_000_000_000), 200, cwnd, srtt, None);
        let per_byte = srtt.as_secs_f64() / (1.25 * cwnd as f64);
        let gap = t[199].since(t[100]).as_secs_f64() / 99.0;
        assert!((gap - 1200.0 * per_byte).abs() < 1e-7, "{gap}");
        // Burst: 3 Mbyte/s → 1 ms = 3000 bytes < 10·MDS, so the quantum is 12 000 bytes.
        assert_eq!(t.iter().filter(|x| **x == t[0]).count(), 10);
    }

    #[test]
    fn a_rate_slice_bucket_holds_244_us_of_the_rate_and_at_least_a_datagram() {
        let cfg = PacerConfig { enabled: true, factor: 1.25, burst: BurstRule::RateSlice, max_datagram_size: 1200, initial_window: 12000 };
        let mut p = Pacer::new(cfg);
        // 100 Mbit/s: 2⁻¹² s is 3051.8 bytes, two datagrams back to back, then one every 96 µs.
        let rate = Some(Rate(100_000_000));
        let t0 = Time::from_secs_f64(1.0);
        let d = departures(&mut p, t0, 12, 12000, Dur::from_millis(20), rate);
        assert_eq!((d[0], d[1]), (t0, t0), "{d:?}");
        assert!(d[2] > t0 && d[3] > d[2]);
        let gap = d[3].since(d[2]).as_secs_f64();
        assert!((gap - 1200.0 * 8.0 / 100e6).abs() < 1e-9, "{gap}");
        // 1 Mbit/s: 30 bytes of slice, so one datagram at a time.
        let mut q = Pacer::new(cfg);
        let d = departures(&mut q, t0, 3, 12000, Dur::from_millis(20), Some(Rate(1_000_000)));
        assert!(d[1] > d[0] && d[2] > d[1], "{d:?}");
    }

    #[test]
    fn controller_rate_overrides_the_window_rate() {
        let cfg = PacerConfig { enabled: true, factor: 1.25, burst: BurstRule::InitialWindow, max_datagram_size: 1200, initial_window: 12000 };
        let mut p = Pacer::new(cfg);
        let t = departures(&mut p, Time(0), 110, 1_000_000, Dur::from_millis(10), Some(Rate(9_600_000)));
        // 1200 bytes at 9.6 Mbit/s = 1 ms apart after the 10-packet burst.
        let gap = t[109].since(t[10]).as_secs_f64() / 99.0;
        assert!((gap - 0.001).abs() < 1e-7, "{gap}");
    }

    #[test]
    fn no_pacing_before_the_first_rtt_sample_for_aioquic_and_ngtcp2() {
        use crate::RttVarRule;
        let mut rtt = RttEstimator::new(Dur::from_millis(333), RttVarRule::Rfc9002);
        for burst in [BurstRule::Aioquic, BurstRule::SendQuantum, BurstRule::InitialWindow] {
            let cfg = PacerConfig { enabled: true, factor: 1.25, burst, max_datagram_size: 1200, initial_window: 12000 };
            let mut p = Pacer::new(cfg);
            let mut unpaced = 0;
            for _ in 0..20 {
                if p.earliest_send_rtt(Time(0), 1200, 12_000, &rtt, None) == Time(0) {
                    p.on_sent(1200);
                    unpaced += 1;
                }
            }
            let expect = if burst == BurstRule::InitialWindow { 10 } else { 20 };
            assert_eq!(unpaced, expect, "{burst:?}");
        }
        rtt.update(Dur::from_millis(50), Dur::ZERO);
        let cfg = PacerConfig { enabled: true, factor: 1.0, burst: BurstRule::Aioquic, max_datagram_size: 1200, initial_window: 12000 };
        let mut p = Pacer::new(cfg);
        p.on_sent(12_000);
        assert!(p.earliest_send_rtt(Time(0), 1200, 12_000, &rtt, None) > Time(0));
    }
}
