//! wVegas, weighted Vegas: delay-based coupled congestion control for the paths of one
//! multipath connection (Cao, Xu, Fu, "Delay-based congestion control for multipath TCP",
//! IEEE ICNP 2012), with the round structure of Linux MPTCP's `wvegas` module. Windows are in
//! bytes; the paper's packet counts are windows divided by the path's MSS.
//!
//! Per path: the base RTT (the smallest RTT sample seen) and the RTT samples of the current
//! round. A round ends with the first ACK that acknowledges a packet sent at or after the
//! round began (`AckEvent::largest_acked_sent` against the round's start); the next round
//! starts then. A sample is taken whenever the path's estimator took one
//! (`RttEstimator::samples` moved). Once per round, with at least 3 samples, `rtt` = their mean
//! and `diff = cwnd_pkts·(rtt − base)/rtt` (packets queued at the bottleneck):
//!
//! * slow start: if `diff > γ` (γ = 1) the path leaves slow start with
//!   `cwnd = min(cwnd, (⌊cwnd_pkts·base/rtt⌋ + 1)·MSS)` and `ssthresh = cwnd`; otherwise
//!   (and on every ACK within the round) it grows by the bytes acknowledged;
//! * congestion avoidance: when `diff ≥ α_r` the path's weight is recomputed,
//!   `w_r = (cwnd_r/rtt_r) / Σ_k (cwnd_k/rtt_k)` over the coupled paths (each with its current
//!   window and the mean RTT of its last evaluated round, or its smoothed RTT before it has
//!   one), and `α_r = max(2, w_r·10)` (total α = 10 packets, initial α_r = 2). Then
//!   `cwnd −= MSS` if `diff > α_r`, `cwnd += MSS` if `diff < α_r`. Queue drain: `q = rtt − base`;
//!   the smallest positive `q` seen is kept as `q_min`, and when `q ≥ 2·q_min` the window is
//!   multiplied by `base/(2·rtt)` and `q_min` forgotten. A round without queueing (`q = 0`)
//!   neither sets `q_min` nor drains (Linux treats a zero `q_min` as unset as well).
//!   A decrease also lowers ssthresh to the window, so the path stays in congestion avoidance.
//!
//! `diff`, `α` and the weight are `f64` (not truncated to whole packets). A round with fewer
//! than 3 samples is a Reno round: in slow start the window grows by the bytes acknowledged,
//! in congestion avoidance by `MSS·acked/cwnd` for the round's acknowledged bytes (NewReno's
//! per-ACK increase summed over the round). Within a round, congestion avoidance does not
//! change the window.
//!
//! Losses are Reno's: a congestion event halves the window (`reno_beta`) and starts a per-path
//! recovery period (RFC 9002 §7.3.2: one reduction per round trip; ACKs of packets sent before
//! it do not grow the window); persistent congestion collapses the path to its loss window.
//! The floor is `max(minimum_window, 2·MSS)`. Only active, non-suspended paths with an RTT
//! sample count in the weights.

use crate::coupled::CoupledKind;
use crate::recovery_period::RecoveryPeriod;
use crate::{AckEvent, CcConfig, CcKind, CcState, LossEvent, MultipathController, RttEstimator};
use multiconn_core::{Dur, Time};

/// γ: queued packets above which slow start ends.
pub const GAMMA: f64 = 1.0;
/// The total α shared by a connection's paths, in packets.
pub const TOTAL_ALPHA: f64 = 10.0;
/// The smallest (and initial) per-path α, in packets.
pub const MIN_ALPHA: f64 = 2.0;
/// Samples a round needs for the delay-based rules.
pub const MIN_SAMPLES: u64 = 3;

#[derive(Debug, Clone)]
struct WvPath {
    cfg: CcConfig,
    active: bool,
    suspended: bool,
    cwnd: u64,
    ssthresh: u64,
    recovery: RecoveryPeriod,
    /// Fractional bytes of a Reno round's increase not yet applied.
    credit: f64,
    srtt: Dur,
    has_rtt: bool,
    /// The estimator's sample count at the last ACK (a change means a new sample).
    samples_seen: u64,
    base_rtt: Option<Dur>,
    round_start: Option<Time>,
    round_sum_ns: u128,
    round_samples: u64,
    round_acked: u64,
    /// Mean RTT of the last evaluated round (ns).
    last_rtt: Option<f64>,
    alpha: f64,
    weight: f64,
    q_min: Option<f64>,
    before_reduction: Option<(u64, u64)>,
}

impl WvPath {
    fn mss(&self) -> f64 {
        self.cfg.max_datagram_size as f64
    }
    fn floor(&self) -> u64 {
        self.cfg.minimum_window.max(2 * self.cfg.max_datagram_size)
    }
    fn coupled(&self) -> bool {
        self.active && self.has_rtt && !self.suspended
    }
    fn rate(&self) -> f64 {
        self.cwnd as f64 / self.last_rtt.unwrap_or(self.srtt.0.max(1) as f64)
    }
    /// Keeps the estimator's smoothed RTT once it has a sample.
    fn cache_srtt(&mut self, rtt: &RttEstimator) {
        if rtt.has_sample() {
            self.srtt = rtt.smoothed();
            self.has_rtt = true;
        }
    }
    fn in_recovery(&self, sent: Time) -> bool {
        self.recovery.covers(sent)
    }
}

/// What the last evaluated round of a path found (for tests and traces).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WvegasRound {
    /// Mean RTT of the round, ns.
    pub rtt_ns: f64,
    /// Packets queued: `cwnd_pkts·(rtt − base)/rtt`.
    pub diff: f64,
}

/// wVegas over the paths of one connection (see the module header).
#[derive(Debug, Clone, Default)]
pub struct Wvegas {
    paths: Vec<WvPath>,
    last_round: Vec<Option<WvegasRound>>,
}

impl Wvegas {
    /// No paths yet.
    pub fn new() -> Wvegas {
        Wvegas::default()
    }

    /// The path's current α (packets).
    pub fn alpha(&self, path: usize) -> f64 {
        self.paths[path].alpha
    }

    /// The path's weight as last computed (1 before the first computation).
    pub fn weight(&self, path: usize) -> f64 {
        self.paths[path].weight
    }

    /// The path's base RTT (smallest sample).
    pub fn base_rtt(&self, path: usize) -> Option<Dur> {
        self.paths[path].base_rtt
    }

    /// The smallest positive queueing delay remembered for the drain rule, ns.
    pub fn q_min(&self, path: usize) -> Option<f64> {
        self.paths[path].q_min
    }

    /// The last round of `path` evaluated with enough samples.
    pub fn last_round(&self, path: usize) -> Option<WvegasRound> {
        self.last_round[path]
    }

    /// `w_r` of `path` now: its rate over the sum of the coupled paths' rates (1 if it is not
    /// coupled).
    pub fn current_weight(&self, path: usize) -> f64 {
        let me = &self.paths[path];
        if !me.coupled() {
            return 1.0;
        }
        let sum: f64 = self.paths.iter().filter(|p| p.coupled()).map(WvPath::rate).sum();
        if sum > 0.0 {
            me.rate() / sum
        } else {
            1.0
        }
    }

    /// The end of a round of `path` with `n ≥ 3` samples of mean `rtt` ns.
    fn delay_round(&mut self, path: usize, rtt: f64, growth_allowed: bool, bytes_acked: u64) {
        let p = &self.paths[path];
        let base = p.base_rtt.map_or(rtt, |b| b.0 as f64);
        let mss = p.mss();
        let pkts = p.cwnd as f64 / mss;
        let diff = pkts * (rtt - base) / rtt;
        let slow_start = p.cwnd < p.ssthresh;
        self.last_round[path] = Some(WvegasRound { rtt_ns: rtt, diff });
        self.paths[path].last_rtt = Some(rtt);
        if slow_start {
            let p = &mut self.paths[path];
            if diff > GAMMA {
                let target = (pkts * base / rtt).floor() as u64 + 1;
                p.cwnd = p.cwnd.min(target * p.cfg.max_datagram_size).max(p.floor());
                p.ssthresh = p.cwnd;
            } else if growth_allowed {
                p.cwnd += bytes_acked;
            }
            return;
        }
        if diff >= self.paths[path].alpha {
            let w = self.current_weight(path);
            let p = &mut self.paths[path];
            p.weight = w;
            p.alpha = MIN_ALPHA.max(w * TOTAL_ALPHA);
        }
        let p = &mut self.paths[path];
        let mss_b = p.cfg.max_datagram_size;
        if diff > p.alpha {
            p.cwnd = p.cwnd.saturating_sub(mss_b);
        } else if diff < p.alpha && growth_allowed {
            p.cwnd += mss_b;
        }
        let q = rtt - base;
        if q > 0.0 {
            let q_min = p.q_min.map_or(q, |m| m.min(q));
            p.q_min = Some(q_min);
            if q >= 2.0 * q_min {
                p.cwnd = (p.cwnd as f64 * base / (2.0 * rtt)) as u64;
                p.q_min = None;
            }
        }
        p.cwnd = p.cwnd.max(p.floor());
        p.ssthresh = p.ssthresh.min(p.cwnd);
    }
}

impl MultipathController for Wvegas {
    fn add_path(&mut self, cfg: &CcConfig) -> usize {
        self.paths.push(WvPath {
            cfg: cfg.clone(),
            active: true,
            suspended: false,
            cwnd: cfg.initial_window,
            ssthresh: u64::MAX,
            recovery: RecoveryPeriod::default(),
            credit: 0.0,
            srtt: Dur::ZERO,
            has_rtt: false,
            samples_seen: 0,
            base_rtt: None,
            round_start: None,
            round_sum_ns: 0,
            round_samples: 0,
            round_acked: 0,
            last_rtt: None,
            alpha: MIN_ALPHA,
            weight: 1.0,
            q_min: None,
            before_reduction: None,
        });
        self.last_round.push(None);
        self.paths.len() - 1
    }

    fn remove_path(&mut self, path: usize) {
        self.paths[path].active = false;
    }

    fn set_suspended(&mut self, path: usize, suspended: bool) {
        self.paths[path].suspended = suspended;
    }

    fn is_active(&self, path: usize) -> bool {
        self.paths[path].active
    }

    fn path_count(&self) -> usize {
        self.paths.len()
    }

    fn on_packet_sent(&mut self, _path: usize, _now: Time, _bytes: u64, _bytes_in_flight: u64) {}

    fn on_ack(&mut self, path: usize, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        let p = &mut self.paths[path];
        if !p.active {
            return;
        }
        p.cache_srtt(rtt);
        if rtt.samples() != p.samples_seen {
            p.samples_seen = rtt.samples();
            if rtt.has_sample() {
                let s = rtt.latest();
                p.base_rtt = Some(p.base_rtt.map_or(s, |b| b.min(s)));
                p.round_sum_ns += s.0 as u128;
                p.round_samples += 1;
            }
        }
        p.round_acked += ack.bytes_acked;
        let round_end = match p.round_start {
            None => {
                p.round_start = Some(now);
                false
            }
            Some(start) => ack.largest_acked_sent >= start,
        };
        let (n, sum, acked) = (p.round_samples, p.round_sum_ns, p.round_acked);
        if round_end {
            p.round_start = Some(now);
            p.round_samples = 0;
            p.round_sum_ns = 0;
            p.round_acked = 0;
        }
        if p.in_recovery(ack.largest_acked_sent) {
            return;
        }
        p.recovery.end();
        let growth_allowed = !(p.cfg.app_limited_check && ack.app_limited);
        let slow_start = p.cwnd < p.ssthresh;
        if !round_end {
            if slow_start && growth_allowed {
                p.cwnd += ack.bytes_acked;
            }
            return;
        }
        if n >= MIN_SAMPLES {
            self.delay_round(path, sum as f64 / n as f64, growth_allowed, ack.bytes_acked);
            return;
        }
        // A Reno round.
        if !growth_allowed {
            return;
        }
        if slow_start {
            p.cwnd += ack.bytes_acked;
        } else {
            p.credit += acked as f64 * p.mss() / p.cwnd.max(1) as f64;
            let whole = p.credit.trunc();
            p.credit -= whole;
            p.cwnd += whole as u64;
        }
    }

    fn on_congestion_event(&mut self, path: usize, now: Time, loss: &LossEvent, rtt: &RttEstimator) {
        let p = &mut self.paths[path];
        if !p.active {
            return;
        }
        p.cache_srtt(rtt);
        if p.in_recovery(loss.largest_lost_sent) {
            return;
        }
        let base = if p.cfg.reduce_from_flight { loss.bytes_in_flight } else { p.cwnd };
        p.before_reduction = Some((p.cwnd, p.ssthresh));
        p.recovery.begin(now);
        p.ssthresh = ((base as f64 * p.cfg.reno_beta) as u64).max(p.floor());
        p.cwnd = p.ssthresh;
        p.credit = 0.0;
    }

    fn on_persistent_congestion(&mut self, path: usize, _now: Time) {
        let p = &mut self.paths[path];
        if !p.active {
            return;
        }
        if p.before_reduction.is_none() {
            p.before_reduction = Some((p.cwnd, p.ssthresh));
        }
        if !p.recovery.is_open() {
            p.ssthresh = ((p.cwnd as f64 * p.cfg.reno_beta) as u64).max(p.floor());
        }
        p.cwnd = p.cfg.loss_window;
        p.recovery.forget();
        p.credit = 0.0;
    }

    fn on_spurious_congestion(&mut self, path: usize, _now: Time) {
        let p = &mut self.paths[path];
        if !p.active {
            return;
        }
        if let Some((cwnd, ssthresh)) = p.before_reduction.take() {
            p.cwnd = p.cwnd.max(cwnd);
            p.ssthresh = ssthresh;
            p.recovery.forget();
        }
    }

    fn on_rtt_sample(&mut self, path: usize, rtt: &RttEstimator) {
        let p = &mut self.paths[path];
        p.cache_srtt(rtt);
    }

    fn window(&self, path: usize) -> u64 {
        let p = &self.paths[path];
        if p.active {
            p.cwnd
        } else {
            0
        }
    }

    fn ssthresh(&self, path: usize) -> Option<u64> {
        let p = &self.paths[path];
        (p.active && p.ssthresh != u64::MAX).then_some(p.ssthresh)
    }

    fn state(&self, path: usize) -> CcState {
        let p = &self.paths[path];
        crate::loss_based_state(p.recovery.is_open(), p.cwnd, p.ssthresh)
    }

    fn coupling(&self) -> Option<CoupledKind> {
        Some(CoupledKind::Wvegas)
    }

    /// wVegas falls back to Reno (for losses and rounds with too few samples).
    fn kind(&self, _path: usize) -> CcKind {
        CcKind::NewReno
    }
}
