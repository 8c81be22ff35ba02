//! Coupled Westwood+: LIA's coupled increase with Westwood+'s bandwidth-based decrease per
//! path, for the paths of one multipath connection.
//!
//! * Increase: LIA exactly as [`crate::coupled::CoupledCc`] runs it (RFC 6356 §3:
//!   `cwnd_i += min(alpha·acked·MSS/cwnd_total, acked·MSS/cwnd_i)` in congestion avoidance,
//!   per-path uncoupled slow start, per-path recovery periods of RFC 9002 §7.3.2).
//! * Bandwidth estimate per path (Mascolo, Grieco, Ferorelli, Casetti, Gerla, Westwood+, as
//!   Linux `tcp_westwood.c` computes it): bytes acknowledged are counted over an interval that
//!   the first ACK of the path opens; an ACK that finds the interval longer than
//!   `max(latest RTT sample, 50 ms)` closes it with the sample `b = bytes/interval` and opens
//!   the next one. The sample is filtered twice by the 7/8 EWMA:
//!   `bw_ns = 7/8·bw_ns + 1/8·b`, `BWE = 7/8·BWE + 1/8·bw_ns`; the first sample sets both.
//! * Decrease: a congestion event sets `ssthresh = max(2·MSS, BWE·RTT_min)` (RTT_min the
//!   path's smallest RTT sample), never above the window it reduces (cwnd, or the bytes in
//!   flight with `reduce_from_flight`), and `cwnd = ssthresh`. Until the first estimate the
//!   reduction is Reno's (`reno_beta`). Persistent congestion collapses the window to the loss
//!   window with ssthresh as above (floored at `minimum_window`).
//!
//! Linux Westwood+ halves at the loss and sets `cwnd = ssthresh = BWE·RTT_min` when recovery
//! completes; here both happen at the congestion event, as the other coupled controllers
//! reduce. Arithmetic is `f64` (bytes per nanosecond) in a fixed order.

use crate::coupled::{CoupledCc, CoupledKind};
use crate::{AckEvent, CcConfig, CcKind, CcState, LossEvent, MultipathController, RttEstimator};
use multiconn_core::{Dur, Time};

/// The shortest bandwidth-sampling interval (Linux `TCP_WESTWOOD_RTT_MIN`, HZ/20).
pub const MIN_INTERVAL: Dur = Dur::from_millis(50);

/// The bandwidth estimator of one path.
#[derive(Debug, Clone, Default)]
pub struct BandwidthEstimator {
    interval_start: Option<Time>,
    bytes: u64,
    /// Once-filtered samples and the estimate, bytes per ns; `None` before the first sample.
    bw_ns: Option<f64>,
    bwe: Option<f64>,
}

impl BandwidthEstimator {
    /// Counts an ACK of `bytes` at `now`; `latest_rtt` is the path's latest RTT sample.
    pub fn on_ack(&mut self, now: Time, bytes: u64, latest_rtt: Dur) {
        let Some(start) = self.interval_start else {
            self.interval_start = Some(now);
            self.bytes = bytes;
            return;
        };
        self.bytes += bytes;
        let delta = now.since(start);
        if latest_rtt.0 > 0 && delta.0 > latest_rtt.0.max(MIN_INTERVAL.0) {
            let sample = self.bytes as f64 / delta.0 as f64;
            let (bw_ns, bwe) = match (self.bw_ns, self.bwe) {
                (Some(n), Some(e)) => {
                    let n = (7.0 * n + sample) / 8.0;
                    (n, (7.0 * e + n) / 8.0)
                }
                _ => (sample, sample),
            };
            self.bw_ns = Some(bw_ns);
            self.bwe = Some(bwe);
            self.bytes = 0;
            self.interval_start = Some(now);
        }
    }

    /// The estimate BWE, bytes per ns.
    pub fn estimate(&self) -> Option<f64> {
        self.bwe
    }

    /// The once-filtered samples, bytes per ns.
    pub fn once_filtered(&self) -> Option<f64> {
        self.bw_ns
    }
}

/// Coupled Westwood+ over the paths of one connection (see the module header).
#[derive(Debug, Clone)]
pub struct CoupledWestwood {
    lia: CoupledCc,
    bwe: Vec<BandwidthEstimator>,
    rtt_min: Vec<Option<Dur>>,
}

impl Default for CoupledWestwood {
    fn default() -> Self {
        CoupledWestwood::new()
    }
}

impl CoupledWestwood {
    /// No paths yet.
    pub fn new() -> CoupledWestwood {
        CoupledWestwood { lia: CoupledCc::new(CoupledKind::Lia), bwe: Vec::new(), rtt_min: Vec::new() }
    }

    /// The LIA controller that runs the increase.
    pub fn lia(&self) -> &CoupledCc {
        &self.lia
    }

    /// `path`'s bandwidth estimator.
    pub fn bandwidth(&self, path: usize) -> &BandwidthEstimator {
        &self.bwe[path]
    }

    /// `BWE·RTT_min` of `path` in bytes, if both are known.
    pub fn bdp(&self, path: usize) -> Option<u64> {
        Some((self.bwe[path].estimate()? * self.rtt_min[path]?.0 as f64) as u64)
    }

    fn note_rtt(&mut self, path: usize, rtt: &RttEstimator) {
        if rtt.has_sample() {
            let m = rtt.min();
            self.rtt_min[path] = Some(self.rtt_min[path].map_or(m, |x| x.min(m)));
        }
    }
}

impl MultipathController for CoupledWestwood {
    fn add_path(&mut self, cfg: &CcConfig) -> usize {
        self.bwe.push(BandwidthEstimator::default());
        self.rtt_min.push(None);
        self.lia.add_path(cfg)
    }
    fn remove_path(&mut self, path: usize) {
        self.lia.remove_path(path);
    }
    fn set_suspended(&mut self, path: usize, suspended: bool) {
        self.lia.set_suspended(path, suspended);
    }
    fn is_active(&self, path: usize) -> bool {
        self.lia.is_active(path)
    }
    fn path_count(&self) -> usize {
        self.lia.path_count()
    }
    fn on_packet_sent(&mut self, path: usize, now: Time, bytes: u64, bytes_in_flight: u64) {
        self.lia.on_packet_sent(path, now, bytes, bytes_in_flight);
    }
    fn on_ack(&mut self, path: usize, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        if self.lia.is_active(path) {
            self.note_rtt(path, rtt);
            if rtt.has_sample() {
                self.bwe[path].on_ack(now, ack.bytes_acked, rtt.latest());
            }
        }
        self.lia.on_ack(path, now, ack, rtt);
    }
    fn on_congestion_event(&mut self, path: usize, now: Time, loss: &LossEvent, rtt: &RttEstimator) {
        if self.lia.is_active(path) {
            self.note_rtt(path, rtt);
        }
        let Some(bdp) = self.bdp(path) else {
            return self.lia.congestion_event(path, now, loss, rtt, None);
        };
        let two_mss = 2 * self.lia_mss(path);
        let target = move |base: u64| bdp.max(two_mss).min(base);
        self.lia.congestion_event(path, now, loss, rtt, Some(&target));
    }
    fn on_persistent_congestion(&mut self, path: usize, now: Time) {
        let ssthresh = self.bdp(path).map(|bdp| bdp.max(2 * self.lia_mss(path)).min(self.lia.window(path)));
        self.lia.persistent_congestion(path, now, ssthresh);
    }
    fn on_spurious_congestion(&mut self, path: usize, now: Time) {
        self.lia.on_spurious_congestion(path, now);
    }
    fn on_rtt_sample(&mut self, path: usize, rtt: &RttEstimator) {
        if self.lia.is_active(path) {
            self.note_rtt(path, rtt);
        }
        self.lia.on_rtt_sample(path, rtt);
    }
    fn window(&self, path: usize) -> u64 {
        self.lia.window(path)
    }
    fn ssthresh(&self, path: usize) -> Option<u64> {
        self.lia.ssthresh(path)
    }
    fn state(&self, path: usize) -> CcState {
        self.lia.state(path)
    }
    fn coupling(&self) -> Option<CoupledKind> {
        Some(CoupledKind::Westwood)
    }
    fn kind(&self, _path: usize) -> CcKind {
        CcKind::NewReno
    }
}

impl CoupledWestwood {
    fn lia_mss(&self, path: usize) -> u64 {
        self.lia.mss_of(path)
    }
}
