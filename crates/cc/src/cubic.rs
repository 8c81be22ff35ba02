//! CUBIC per RFC 9438, with byte-counted windows and RFC 9002's recovery periods.
//!
//! * Slow start as [`crate::newreno`] (optionally HyStart++, RFC 9406, see [`crate::hystart`]).
//! * Congestion avoidance follows `W_cubic(t) = C·(t − K)³ + W_max` in segments of
//!   `max_datagram_size`, with `K = cbrt((W_max − cwnd_epoch)/C)`. The epoch starts at the
//!   first ACK that may grow the window in congestion avoidance (after the recovery period, as
//!   Linux does); if `cwnd_epoch ≥ W_max` then `K = 0` and `W_max = cwnd_epoch` (the RFC's rule
//!   after a timeout, and what a slow start that ends without loss needs).
//! * Per ACK: `target = W_cubic(t + smoothed_rtt)` clamped to `[cwnd, 1.5·cwnd]`, and cwnd grows
//!   by `(target − cwnd)·acked/cwnd` bytes (§4.4, §4.5). The Reno-friendly estimate `W_est`
//!   grows by `α·MDS·acked/cwnd` with `α = 3(1 − β)/(1 + β)` until it reaches `cwnd_prior`,
//!   then `α = 1`; while `W_cubic(t) < W_est`, cwnd follows `W_est` (§4.3). Both growths keep
//!   their remainders, so no byte is lost to integer division.
//! * `t` excludes application-limited time: an app-limited ACK (with `app_limited_check`) does
//!   not grow the window and moves the epoch start forward by the time since the previous ACK.
//! * Congestion event (at most one per recovery period, as in [`crate::newreno`]): fast
//!   convergence `W_max = cwnd·(1 + β)/2` if `cwnd < W_max`, else `W_max = cwnd`;
//!   `cwnd_prior = cwnd`; `ssthresh = max(β·cwnd, minimum_window)` (β·bytes in flight with
//!   `reduce_from_flight`); `cwnd = ssthresh`; a new epoch begins at the end of recovery.
//! * Persistent congestion / RTO: `cwnd = loss_window`; `ssthresh = β·cwnd` unless the current
//!   recovery period already reduced it; `W_max` is forgotten, so the next epoch uses `K = 0`,
//!   `W_max = cwnd_epoch` (§4.8).
//! * A spurious congestion event restores the whole state saved before it (§4.9).
//! * With `loss_filter` (picoquic of early 2022, `cubic.c` at 48525d89ef4d) a congestion event
//!   reduces the window only if one of its lost packets passed the smoothed-loss-rate filter
//!   of [`crate::loss_filter`] (rate above 20 %); otherwise it is ignored altogether.
//!   Timeouts are not filtered.
//!
//! * With `cubic_rule = ngtcp2-0.12`, congestion avoidance and the reactions follow ngtcp2 0.12
//!   instead ([`CubicRule::Ngtcp2V012`]); with `delivery_rate_cap`, ngtcp2 0.12's
//!   [`crate::delivery::DeliveryRateCap`] stops all growth above its target.
//! * With `cubic_rule = linux-segments`, the window, ssthresh and congestion avoidance are
//!   Linux's in whole segments ([`CubicRule::LinuxSegments`], [`crate::bictcp`]); slow start
//!   stops at ssthresh and passes the rest of the ACK on (`tcp_slow_start`).
//!
//! Floating point is used only to evaluate `W_cubic` and `K` (the cube root is computed with
//! Newton steps on basic IEEE operations so it is the same on every platform).

use crate::bictcp::BicTcp;
use crate::delivery::DeliveryRateCap;
use crate::hystart::{HyStart, SlowStartStep};
use crate::recovery_period::RecoveryPeriod;
use crate::loss_filter::SmoothedLoss;
use crate::{AckEvent, CcConfig, CcKind, CcState, Controller, LossEvent, RttEstimator};
use multiconn_core::{Dur, Time};
use serde::Deserialize;

/// Whose CUBIC congestion avoidance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
pub enum CubicRule {
    /// RFC 9438 (the module notes).
    #[default]
    #[serde(rename = "rfc9438")]
    Rfc9438,
    /// ngtcp2 0.12 (`lib/ngtcp2_cc.c` at v0.12.1, `ngtcp2_cc_cubic_cc_on_pkt_acked` and
    /// `_congestion_event`), in its integer arithmetic, per acknowledged datagram:
    ///
    /// * The epoch starts at the first congestion-avoidance ACK: `K = icbrt((w_last_max −
    ///   cwnd)·10/4/MDS)` in whole seconds (`ngtcp2_cbrt`, an integer cube root) and origin
    ///   `w_last_max` if `cwnd < w_last_max`, else `K = 0` and origin `cwnd`; `w_tcp = cwnd`.
    /// * Per packet: `target = origin ± MDS·0.4·|t − K|³` (time in 1/1024 s), then
    ///   `cwnd_thres = target × (t + srtt)` with `t + srtt` in seconds (1/1024 s steps): below
    ///   `cwnd` the target is `cwnd`, above `1.5·cwnd` it is `1.5·cwnd`. cwnd grows by
    ///   `MDS·(target − cwnd)/cwnd`, or by `MDS/(100·cwnd)` when the target is `cwnd`;
    ///   `w_tcp` grows by `MDS·pktlen/cwnd` (Reno's one datagram per window) and, when above
    ///   `cwnd`, the growth is at least `MDS·(w_tcp − cwnd)/cwnd`. So for the first second of
    ///   an epoch (less the smoothed RTT) the window grows like Reno's, then by up to half a
    ///   datagram per acknowledged datagram.
    /// * Congestion event: `w_last_max = cwnd·17/10/2` if `cwnd < w_last_max` else `cwnd`;
    ///   `ssthresh = cwnd = max(cwnd·7/10, minimum_window)`.
    /// * Persistent congestion (`_on_persistent_congestion`) only sets `cwnd = loss_window` and
    ///   ends the recovery period: `ssthresh`, `w_last_max` and the epoch stay.
    /// * Application-limited ACKs grow the window (0.12 does not check) and the epoch is not
    ///   shifted over them (ngtcp2 shifts it only over idle time with nothing in flight, which
    ///   a bulk sender does not have).
    #[serde(rename = "ngtcp2-0.12")]
    Ngtcp2V012,
    /// Linux (`net/ipv4/tcp_cubic.c` `bictcp_update`): RFC 9438's curve and Reno-friendly
    /// estimate, with two of Linux's departures:
    ///
    /// * the target is `W_cubic(t + min RTT)` (`t += usecs_to_jiffies(ca->delay_min)`), not
    ///   `W_cubic(t + srtt)`;
    /// * until the first congestion event, and again after a timeout (`last_max_cwnd == 0`,
    ///   which `bictcp_reset` restores), the window grows by at least one segment per 20
    ///   acknowledged (`if (ca->last_max_cwnd == 0 && ca->cnt > 20) ca->cnt = 20`: 5 % per
    ///   round trip), the faster of that and the Reno-friendly estimate.
    ///
    /// Linux's `delay_min` leaves out samples taken within a second of an epoch's start and
    /// is forgotten at a timeout; the model uses the estimator's minimum RTT.
    #[serde(rename = "linux")]
    Linux,
    /// Linux 6.11+ in whole segments ([`crate::bictcp`]): `bictcp_update`'s `cnt`, recomputed
    /// only when the window changed or 1/32 s passed, its TCP-friendliness estimate counted in
    /// acknowledged segments and a step behind, `tcp_cong_avoid_ai`; the window and ssthresh
    /// whole segments, slow start stopping at ssthresh with the rest of the ACK going to
    /// congestion avoidance (`tcp_slow_start`), nothing counted from application-limited ACKs
    /// (`tcp_is_cwnd_limited`), the epoch moved forward over idle time (`CA_EVENT_TX_START`).
    /// HyStart as the other rules (`hystart_rule`).
    #[serde(rename = "linux-segments")]
    LinuxSegments,
}

/// ngtcp2 0.12's congestion-avoidance state (`ngtcp2_cubic_cc`); `w_last_max` is
/// [`Cubic::w_max`].
#[derive(Debug, Clone, Default, PartialEq)]
struct Ng012 {
    epoch_start: Option<Time>,
    /// Whole seconds.
    k: u64,
    origin: u64,
    w_tcp: u64,
    pending_add: u64,
    pending_w_add: u64,
}

/// `ngtcp2_cbrt` of v0.12.1, wrapping like its `uint64_t` arithmetic.
pub fn ngtcp2_cbrt(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let d = n.leading_zeros() as u64;
    let mut a: u64 = 1 << ((64 - d) / 3 + 1);
    while a.wrapping_mul(a).wrapping_mul(a) > n {
        a = (2 * a + n / a / a) / 3;
    }
    a
}

/// Fixed-point scale of α in the Reno-friendly estimate.
const ALPHA_ONE: u64 = 1 << 16;

/// The current congestion-avoidance epoch.
#[derive(Debug, Clone, PartialEq)]
struct Epoch {
    /// Epoch start, moved forward over application-limited time.
    start: Time,
    /// K in seconds.
    k: f64,
    /// The curve's plateau, bytes (W_max, or cwnd_epoch when that is larger).
    origin: u64,
    cwnd_epoch: u64,
}

/// Everything a spurious congestion event must restore.
#[derive(Debug, Clone, PartialEq)]
struct Saved {
    cwnd: u64,
    ssthresh: u64,
    w_max: u64,
    cwnd_prior: u64,
    w_est: u64,
    epoch: Option<Epoch>,
    ng: Ng012,
    bic: BicTcp,
}

/// CUBIC (RFC 9438) with the variants the config selects (see the module header).
#[derive(Debug, Clone)]
pub struct Cubic {
    cfg: CcConfig,
    cwnd: u64,
    ssthresh: u64,
    recovery: RecoveryPeriod,
    hystart: Option<HyStart>,
    /// Window before the last reduction after fast convergence, bytes; 0 = none yet.
    w_max: u64,
    /// cwnd just before the last reduction, bytes.
    cwnd_prior: u64,
    /// Reno-friendly estimate W_est, bytes.
    w_est: u64,
    epoch: Option<Epoch>,
    /// α·2^16 for β = cfg.cubic_beta.
    alpha_reno: u64,
    /// Remainder numerators of the two congestion-avoidance growths (units: 1/cwnd bytes for
    /// the curve, 1/(cwnd·2^16) bytes for W_est) and of slow-start growth under CSS.
    curve_rem: u128,
    est_rem: u128,
    ss_rem: u64,
    last_ack: Option<Time>,
    saved: Option<Saved>,
    /// picoquic's loss filter (`loss_filter`), and whether a loss passed it since the last
    /// congestion event.
    loss: Option<SmoothedLoss>,
    loss_passed: bool,
    /// ngtcp2 0.12's `target_cwnd` (`delivery_rate_cap`).
    cap: Option<DeliveryRateCap>,
    /// ngtcp2 0.12's congestion avoidance (`cubic_rule`).
    ng: Ng012,
    /// Linux: a congestion event has set `last_max_cwnd` since the start or the last timeout.
    linux_max_set: bool,
    /// Linux's congestion avoidance in segments (`cubic_rule = "linux-segments"`), and the
    /// acknowledged bytes short of a whole segment.
    bic: BicTcp,
    bic_rem: u64,
    /// When the last packet was sent (Linux `lsndtime`, for `CA_EVENT_TX_START`).
    last_send: Option<Time>,
}

impl Cubic {
    /// Slow start from the initial window, ssthresh infinite, no W_max yet.
    pub fn new(cfg: CcConfig) -> Cubic {
        let hystart = cfg.hystart.then(|| HyStart::with_rule(cfg.max_datagram_size, cfg.hystart_rule));
        let beta = cfg.cubic_beta;
        let alpha_reno = ((3.0 * (1.0 - beta) / (1.0 + beta)) * ALPHA_ONE as f64).round().max(0.0) as u64;
        Cubic {
            cwnd: cfg.initial_window,
            ssthresh: u64::MAX,
            recovery: RecoveryPeriod::default(),
            hystart,
            w_max: 0,
            cwnd_prior: 0,
            w_est: 0,
            epoch: None,
            alpha_reno,
            curve_rem: 0,
            est_rem: 0,
            ss_rem: 0,
            last_ack: None,
            saved: None,
            loss: cfg.loss_filter.then(SmoothedLoss::new),
            loss_passed: false,
            cap: cfg.delivery_rate_cap.then(|| DeliveryRateCap::new(cfg.max_datagram_size)),
            ng: Ng012::default(),
            linux_max_set: false,
            bic: BicTcp::new(cfg.cubic_beta, cfg.cubic_c, cfg.fast_convergence),
            bic_rem: 0,
            last_send: None,
            cfg,
        }
    }

    /// ngtcp2 0.12's cap, when the configuration has it.
    pub fn delivery_rate_cap(&self) -> Option<&DeliveryRateCap> {
        self.cap.as_ref()
    }

    fn ngtcp2_012(&self) -> bool {
        self.cfg.cubic_rule == CubicRule::Ngtcp2V012
    }

    /// ngtcp2 0.12's congestion avoidance over the datagrams of one ACK (`acked` bytes).
    fn congestion_avoidance_ngtcp2_012(&mut self, now: Time, acked: u64, srtt: Dur) {
        const SEC: u64 = 1_000_000_000;
        let mss = self.mds();
        let mut left = acked;
        while left > 0 {
            let pktlen = left.min(mss);
            left -= pktlen;
            if self.cap.as_ref().is_some_and(|c| c.blocks(self.cwnd)) {
                continue;
            }
            if self.ng.epoch_start.is_none() {
                self.start_epoch_ngtcp2_012(now);
            }
            let ng = &mut self.ng;
            let start = ng.epoch_start.expect("epoch started above");
            let t = now.since(start).0;
            let tx = (t << 10) / SEC;
            let kx = ng.k << 10;
            let time_delta = tx.abs_diff(kx);
            let cube = (((time_delta.wrapping_mul(time_delta)) >> 10).wrapping_mul(time_delta)) >> 10;
            let delta = (mss.wrapping_mul(cube).wrapping_mul(4) / 10) >> 10;
            let mut target = if tx > kx { ng.origin.wrapping_add(delta) } else { ng.origin.wrapping_sub(delta) };
            let cwnd = self.cwnd;
            let cwnd_thres = target.wrapping_mul(((t + srtt.0) << 10) / SEC) >> 10;
            target = if cwnd_thres < cwnd {
                cwnd
            } else if 2 * cwnd_thres > 3 * cwnd {
                cwnd * 3 / 2
            } else {
                cwnd_thres
            };
            let mut add;
            if target > cwnd {
                let m = ng.pending_add + mss * (target - cwnd);
                add = m / cwnd;
                ng.pending_add = m % cwnd;
            } else {
                let m = ng.pending_add + mss;
                add = m / (100 * cwnd);
                ng.pending_add = m % (100 * cwnd);
            }
            let m = ng.pending_w_add + mss * pktlen;
            ng.w_tcp += m / cwnd;
            ng.pending_w_add = m % cwnd;
            if ng.w_tcp > cwnd {
                add = add.max(mss * (ng.w_tcp - cwnd) / cwnd);
            }
            self.cwnd += add;
        }
    }

    /// ngtcp2 0.12: the first congestion-avoidance packet starts the epoch.
    fn start_epoch_ngtcp2_012(&mut self, now: Time) {
        let mss = self.mds();
        let ng = &mut self.ng;
        ng.epoch_start = Some(now);
        if self.cwnd < self.w_max {
            ng.k = ngtcp2_cbrt((self.w_max - self.cwnd) * 10 / 4 / mss);
            ng.origin = self.w_max;
        } else {
            ng.k = 0;
            ng.origin = self.cwnd;
        }
        ng.w_tcp = self.cwnd;
        ng.pending_add = 0;
        ng.pending_w_add = 0;
    }

    fn in_recovery(&self, sent: Time) -> bool {
        self.recovery.covers(sent)
    }

    fn mds(&self) -> u64 {
        self.cfg.max_datagram_size.max(1)
    }

    /// W_max of the last congestion event in bytes (after fast convergence); 0 before any.
    pub fn w_max(&self) -> u64 {
        self.w_max
    }
    /// cwnd just before the last reduction, bytes.
    pub fn cwnd_prior(&self) -> u64 {
        self.cwnd_prior
    }
    /// The Reno-friendly estimate W_est, bytes.
    pub fn w_est(&self) -> u64 {
        self.w_est
    }
    /// K of the current epoch in seconds; `None` outside an epoch.
    pub fn k(&self) -> Option<f64> {
        self.epoch.as_ref().map(|e| e.k)
    }
    /// Start of the current epoch (shifted over application-limited time).
    pub fn epoch_start(&self) -> Option<Time> {
        self.epoch.as_ref().map(|e| e.start)
    }
    /// The α currently applied to W_est.
    pub fn alpha(&self) -> f64 {
        self.current_alpha() as f64 / ALPHA_ONE as f64
    }
    /// `W_cubic(t)` of the current epoch in bytes, `t` since the epoch start.
    pub fn w_cubic(&self, t: Dur) -> Option<u64> {
        self.epoch.as_ref().map(|e| w_cubic_bytes(e, t, self.cfg.cubic_c, self.mds()))
    }

    fn current_alpha(&self) -> u64 {
        if self.w_est >= self.cwnd_prior {
            ALPHA_ONE
        } else {
            self.alpha_reno
        }
    }

    fn start_epoch(&mut self, now: Time) {
        let cwnd = self.cwnd;
        let (k, origin) = if self.w_max > cwnd {
            let segs = (self.w_max - cwnd) as f64 / self.mds() as f64;
            (cbrt(segs / self.cfg.cubic_c), self.w_max)
        } else {
            self.w_max = cwnd;
            (0.0, cwnd)
        };
        self.epoch = Some(Epoch { start: now, k, origin, cwnd_epoch: cwnd });
        self.w_est = cwnd;
        self.curve_rem = 0;
        self.est_rem = 0;
    }

    /// RFC 9438 §4.2 (or Linux's variant): `ahead` is the time the target looks ahead, the
    /// smoothed RTT (Linux: the minimum RTT).
    fn congestion_avoidance(&mut self, now: Time, acked: u64, ahead: Dur) {
        if self.epoch.is_none() {
            self.start_epoch(now);
        }
        let epoch = self.epoch.as_ref().expect("epoch started above");
        let mds = self.mds();
        let t = now.since(epoch.start);
        let w_cubic_now = w_cubic_bytes(epoch, t, self.cfg.cubic_c, mds);
        let w_cubic_next = w_cubic_bytes(epoch, t + ahead, self.cfg.cubic_c, mds);
        let cwnd = self.cwnd.max(1);

        // Reno-friendly estimate: α·MDS per window of ACKs.
        let num = self.est_rem + self.current_alpha() as u128 * acked as u128 * mds as u128;
        let den = cwnd as u128 * ALPHA_ONE as u128;
        self.w_est = self.w_est.saturating_add((num / den).min(u64::MAX as u128) as u64);
        self.est_rem = num % den;

        let reno = w_cubic_now < self.w_est;
        // Linux before a congestion event: at least 5 % per round trip (cnt ≤ 20).
        let floor = self.cfg.cubic_rule == CubicRule::Linux && !self.linux_max_set;
        if reno && !floor {
            self.cwnd = self.cwnd.max(self.w_est);
            return;
        }
        let mut target = if reno { cwnd } else { w_cubic_next };
        if floor {
            target = target.max(cwnd.saturating_add(cwnd / 20));
        }
        let target = target.clamp(cwnd, cwnd.saturating_add(cwnd / 2));
        let num = self.curve_rem + (target - cwnd) as u128 * acked as u128;
        let inc = (num / cwnd as u128).min(u64::MAX as u128) as u64;
        self.curve_rem = num % cwnd as u128;
        self.cwnd = self.cwnd.saturating_add(inc);
        if reno {
            self.cwnd = self.cwnd.max(self.w_est);
        }
    }

    fn save(&mut self) {
        self.saved = Some(Saved {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            w_max: self.w_max,
            cwnd_prior: self.cwnd_prior,
            w_est: self.w_est,
            epoch: self.epoch.clone(),
            ng: self.ng.clone(),
            bic: self.bic.clone(),
        });
    }
}

impl Cubic {
    /// Linux's `cubictcp_acked` and `cubictcp_cong_avoid` in whole segments: HyStart's exit
    /// sets ssthresh to the window first; then, unless the ACK is application-limited (Linux
    /// counts nothing then), slow start up to ssthresh (`tcp_slow_start`) and the rest of the
    /// ACK's segments to congestion avoidance ([`crate::bictcp`]).
    fn on_ack_linux_segments(&mut self, now: Time, bytes_acked: u64, rtt: &RttEstimator, app_limited: bool, hystart_exit: bool) {
        let mss = self.mds();
        if hystart_exit {
            self.ssthresh = self.cwnd / mss * mss;
        }
        if app_limited {
            return;
        }
        let bytes = self.bic_rem + bytes_acked;
        self.bic_rem = bytes % mss;
        let mut acked = bytes / mss;
        let mut cwnd = self.cwnd / mss;
        let ssthresh = self.ssthresh / mss;
        if cwnd < ssthresh {
            let grown = cwnd.saturating_add(acked).min(ssthresh);
            acked -= grown - cwnd;
            cwnd = grown;
        }
        if acked > 0 {
            cwnd = self.bic.cong_avoid(now, cwnd, acked, rtt.min());
        }
        self.cwnd = cwnd * mss;
    }

    fn on_ack_growth(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator, since_last: Dur) {
        if self.in_recovery(ack.largest_acked_sent) {
            // ngtcp2 0.12 counts RTT samples and closes rounds in recovery too, Linux keeps
            // its minimum RTT.
            if let Some(h) = self.hystart.as_mut().filter(|h| h.sees_recovery_acks()) {
                h.on_ack_event(now, ack.largest_acked_sent, rtt, false, false, self.cwnd);
            }
            return;
        }
        self.recovery.end();
        let app_limited = self.cfg.app_limited_check && ack.app_limited;
        let in_slow_start = self.cwnd < self.ssthresh;
        let step = match &mut self.hystart {
            Some(h) => h.on_ack_event(now, ack.largest_acked_sent, rtt, in_slow_start, app_limited, self.cwnd),
            None => SlowStartStep::GROW,
        };
        if self.cfg.cubic_rule == CubicRule::LinuxSegments {
            return self.on_ack_linux_segments(now, ack.bytes_acked, rtt, app_limited, in_slow_start && step.exit);
        }
        if app_limited {
            // Application-limited time does not count towards t.
            if let Some(e) = &mut self.epoch {
                e.start = (e.start + since_last).min(now);
            }
        } else if in_slow_start && step.divisor > 0 {
            let grow = self.ss_rem + ack.bytes_acked;
            let mut add = grow / step.divisor;
            self.ss_rem = grow % step.divisor;
            if let Some(cap) = &self.cap {
                add = cap.slow_start_growth(self.cwnd, add, self.mds());
            }
            self.cwnd = self.cwnd.saturating_add(add);
            if add > 0 && self.hystart.as_ref().is_some_and(|h| h.exits_after_growth(self.cwnd)) {
                // ngtcp2 0.12: ssthresh = cwnd and w_last_max = cwnd.
                self.ssthresh = self.cwnd;
                self.w_max = self.cwnd;
            }
        }
        if in_slow_start && step.exit {
            self.ssthresh = self.cwnd;
        }
        if app_limited || in_slow_start {
            return;
        }
        if self.ngtcp2_012() {
            return self.congestion_avoidance_ngtcp2_012(now, ack.bytes_acked, rtt.smoothed());
        }
        if self.cap.as_ref().is_some_and(|c| c.blocks(self.cwnd)) {
            return;
        }
        let ahead = if self.cfg.cubic_rule == CubicRule::Linux { rtt.min() } else { rtt.smoothed() };
        self.congestion_avoidance(now, ack.bytes_acked, ahead);
    }
}

/// `C·(t − K)³ + origin` in bytes for a window unit of `mds` bytes, floored at zero.
fn w_cubic_bytes(e: &Epoch, t: Dur, c: f64, mds: u64) -> u64 {
    // Beyond an hour past K the curve has long left any useful range; cap to stay finite.
    let dt = (t.as_secs_f64() - e.k).min(3600.0);
    let w = c * dt * dt * dt * mds as f64 + e.origin as f64;
    if w <= 0.0 {
        0
    } else if w >= u64::MAX as f64 {
        u64::MAX
    } else {
        w as u64
    }
}

/// Cube root of `x ≥ 0` by Newton's method from a power-of-two guess; only +, −, ×, ÷, so
/// the result does not depend on the platform's libm.
pub fn cbrt(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return 0.0;
    }
    let exp = ((x.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    let mut y = f64::from_bits(((exp / 3 + 1023) as u64) << 52);
    for _ in 0..64 {
        let next = (2.0 * y + x / (y * y)) / 3.0;
        if next == y {
            break;
        }
        y = next;
    }
    y
}

impl Controller for Cubic {
    fn on_packet_sent(&mut self, now: Time, bytes: u64, bytes_in_flight: u64) {
        if let Some(h) = &mut self.hystart {
            h.on_packet_sent(now);
        }
        if self.cfg.cubic_rule == CubicRule::LinuxSegments {
            // Linux `tcp_event_data_sent`: a send with nothing else in flight is CA_EVENT_TX_START.
            if let Some(last) = self.last_send.filter(|_| bytes_in_flight <= bytes) {
                self.bic.on_tx_start(now, now.since(last));
            }
            self.last_send = Some(now);
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        let since_last = self.last_ack.map_or(Dur::ZERO, |last| now.since(last));
        self.last_ack = Some(now);
        self.on_ack_growth(now, ack, rtt, since_last);
        // ngtcp2 0.12 updates its target after the ACK's packets, in recovery or not.
        if let Some(cap) = &mut self.cap {
            cap.on_ack(ack.rate_sample.as_ref(), rtt.has_sample().then(|| rtt.min()));
        }
    }

    fn on_packet_lost(&mut self, _now: Time, pn: u64, _bytes: u64) {
        if let Some(f) = &mut self.loss {
            self.loss_passed |= f.on_lost(pn);
        }
    }

    fn on_packet_timed_out(&mut self, _now: Time, pn: u64, _bytes: u64) {
        if let Some(f) = &mut self.loss {
            f.on_timeout(pn);
        }
    }

    fn on_congestion_event(&mut self, now: Time, loss: &LossEvent, _rtt: &RttEstimator) {
        if self.loss.is_some() && !std::mem::take(&mut self.loss_passed) {
            return;
        }
        if self.in_recovery(loss.largest_lost_sent) {
            return;
        }
        self.save();
        self.recovery.begin(now);
        if let Some(h) = &mut self.hystart {
            h.on_congestion_event();
        }
        if self.ngtcp2_012() {
            // ngtcp2_cc_cubic_cc_congestion_event of v0.12.1, in integers.
            self.w_max = if self.cwnd < self.w_max { self.cwnd * 17 / 10 / 2 } else { self.cwnd };
            self.ssthresh = (self.cwnd * 7 / 10).max(self.cfg.minimum_window);
            self.cwnd = self.ssthresh;
            self.ng.epoch_start = None;
            self.ss_rem = 0;
            return;
        }
        if self.cfg.cubic_rule == CubicRule::LinuxSegments {
            let mss = self.mds();
            self.cwnd_prior = self.cwnd;
            self.ssthresh = (self.bic.on_congestion(self.cwnd / mss) * mss).max(self.cfg.minimum_window);
            self.w_max = self.bic.last_max_cwnd * mss;
            self.cwnd = self.ssthresh;
            self.epoch = None;
            self.ss_rem = 0;
            self.bic_rem = 0;
            return;
        }
        let beta = self.cfg.cubic_beta;
        self.linux_max_set = true;
        self.w_max = if self.cfg.fast_convergence && self.cwnd < self.w_max {
            (self.cwnd as f64 * (1.0 + beta) / 2.0) as u64
        } else {
            self.cwnd
        };
        self.cwnd_prior = self.cwnd;
        let base = if self.cfg.reduce_from_flight { loss.bytes_in_flight } else { self.cwnd };
        self.ssthresh = ((base as f64 * beta) as u64).max(self.cfg.minimum_window);
        self.cwnd = self.ssthresh;
        self.epoch = None;
        self.ss_rem = 0;
    }

    fn on_ecn_congestion_event(&mut self, now: Time, loss: &LossEvent, rtt: &RttEstimator) {
        // An explicit signal: the loss filter has nothing to judge.
        let filter = self.loss.take();
        self.on_congestion_event(now, loss, rtt);
        self.loss = filter;
    }

    fn on_persistent_congestion(&mut self, now: Time) {
        self.loss_passed = false;
        if self.saved.is_none() {
            self.save();
        }
        if self.ngtcp2_012() {
            // ngtcp2_cc_cubic_cc_on_persistent_congestion of v0.12.1: nothing else changes.
            self.cwnd = self.cfg.loss_window;
            self.recovery.forget();
            self.ss_rem = 0;
            return;
        }
        // Inside a recovery period the congestion event has already set ssthresh (Linux does
        // not lower it again when an RTO interrupts fast recovery either).
        if !self.recovery.is_open() {
            let reduced = if self.cfg.cubic_rule == CubicRule::LinuxSegments {
                // cubictcp_recalc_ssthresh from tcp_enter_loss (bictcp_reset follows).
                (self.bic.on_congestion(self.cwnd / self.mds()) * self.mds()).max(self.cfg.minimum_window)
            } else {
                ((self.cwnd as f64 * self.cfg.cubic_beta) as u64).max(self.cfg.minimum_window)
            };
            self.ssthresh = self.ssthresh.min(reduced);
            self.cwnd_prior = self.cwnd;
        }
        self.cwnd = self.cfg.loss_window;
        self.w_max = 0;
        // Linux: bictcp_reset (TCP_CA_Loss) sets last_max_cwnd = 0.
        self.linux_max_set = false;
        self.bic.reset();
        self.bic_rem = 0;
        self.epoch = None;
        self.recovery.forget();
        self.ss_rem = 0;
        if let Some(h) = &mut self.hystart {
            h.on_congestion_event();
            h.on_timeout(now);
        }
    }

    /// picoquic 48525d89's `cubic.c` (`picoquic_cubic_correct_spurious`) restores the state
    /// from before the reduction at any spurious notice; here at the first one after a
    /// reduction (the state is kept once per reduction).
    fn on_spurious_loss(&mut self, now: Time, _largest_acked_sent: Time, _srtt: Dur) {
        self.on_spurious_congestion(now);
    }

    fn on_spurious_congestion(&mut self, _now: Time) {
        let Some(s) = self.saved.take() else { return };
        self.recovery.forget();
        if s.cwnd > self.cwnd {
            self.cwnd = s.cwnd;
            self.ssthresh = s.ssthresh;
            self.w_max = s.w_max;
            self.cwnd_prior = s.cwnd_prior;
            self.w_est = s.w_est;
            self.epoch = s.epoch;
            self.ng = s.ng;
            self.bic = s.bic;
            self.curve_rem = 0;
            self.est_rem = 0;
        }
    }

    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> Option<u64> {
        (self.ssthresh != u64::MAX).then_some(self.ssthresh)
    }
    fn state(&self) -> CcState {
        crate::loss_based_state(self.recovery.is_open(), self.cwnd, self.ssthresh)
    }
    fn kind(&self) -> CcKind {
        CcKind::Cubic
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hystart::HyStartRule;
    use crate::newreno::NewReno;
    use crate::RttVarRule;

    const MDS: u64 = 1200;
    const MS: u64 = 1_000_000;

    fn ack(bytes: u64, sent: Time) -> AckEvent {
        AckEvent { bytes_acked: bytes, largest_acked_sent: sent, prior_in_flight: 0, bytes_in_flight: 0, app_limited: false, rate_sample: None }
    }
    fn loss(sent: Time) -> LossEvent {
        LossEvent { bytes_lost: MDS, largest_lost_sent: sent, bytes_in_flight: 0, prior_in_flight: MDS }
    }
    fn rtt_of(ms: u64) -> RttEstimator {
        let mut r = RttEstimator::new(Dur::from_millis(ms), RttVarRule::Rfc9002);
        r.update(Dur::from_millis(ms), Dur::ZERO);
        r
    }
    fn cfg() -> CcConfig {
        CcConfig::quic_default(CcKind::Cubic, MDS)
    }

    /// Slow start to exactly `pkts` packets, then one loss at `t_loss`.
    fn grown_then_lost(cc: &mut dyn Controller, pkts: u64, t_loss: Time, rtt: &RttEstimator) {
        let start = cc.window();
        cc.on_ack(Time(1), &ack(pkts * MDS - start, Time(0)), rtt);
        assert_eq!(cc.window(), pkts * MDS);
        cc.on_congestion_event(t_loss, &loss(Time(t_loss.0 - 1)), rtt);
    }

    /// One round trip: at `t`, a full window is acknowledged in MDS-sized ACKs spread over the
    /// RTT, every packet sent one RTT earlier.
    fn round(cc: &mut dyn Controller, t: Time, rtt_ms: u64, rtt: &RttEstimator) {
        let n = (cc.window() / MDS).max(1);
        for i in 0..n {
            let now = Time(t.0 + i * rtt_ms * MS / n);
            cc.on_ack(now, &ack(MDS, Time(now.0 - rtt_ms * MS)), rtt);
        }
    }

    fn linux_cfg() -> CcConfig {
        CcConfig { cubic_rule: CubicRule::Linux, ..CcConfig::tcp_default(CcKind::Cubic, MDS) }
    }

    /// In congestion avoidance at `pkts` packets without a congestion event (as after a
    /// HyStart exit).
    fn avoiding_at(cfg: CcConfig, pkts: u64) -> Cubic {
        let mut cc = Cubic::new(cfg);
        cc.cwnd = pkts * MDS;
        cc.ssthresh = pkts * MDS;
        cc
    }

    /// Linux `bictcp_update`: `if (ca->last_max_cwnd == 0 && ca->cnt > 20) ca->cnt = 20`, so
    /// before the first congestion event the window grows by 5 % a round trip, where RFC 9438's
    /// curve from K = 0 and the Reno-friendly estimate give half a packet.
    #[test]
    fn linux_rule_grows_five_percent_a_round_trip_until_the_first_congestion_event() {
        let rtt = rtt_of(100);
        let mut linux = avoiding_at(linux_cfg(), 100);
        let mut rfc = avoiding_at(CcConfig::tcp_default(CcKind::Cubic, MDS), 100);
        for cc in [&mut linux, &mut rfc] {
            round(cc, Time(1000 * MS), 100, &rtt);
        }
        assert_eq!(linux.window(), 105 * MDS);
        assert!(rfc.window() < 101 * MDS, "{}", rfc.window());
        // After a congestion event the floor is gone: both rules follow the same curve (the
        // minimum RTT is the smoothed one here).
        let (mut linux, mut rfc) = (Cubic::new(linux_cfg()), Cubic::new(CcConfig::tcp_default(CcKind::Cubic, MDS)));
        for cc in [&mut linux, &mut rfc] {
            grown_then_lost(cc, 100, Time(1000 * MS), &rtt);
            for r in 0..10 {
                round(cc, Time((1100 + 100 * r) * MS), 100, &rtt);
            }
        }
        assert_eq!(linux.window(), rfc.window());
        assert!(linux.window() < 90 * MDS, "{}", linux.window());
        // A timeout (bictcp_reset) sets last_max_cwnd = 0 again.
        linux.on_persistent_congestion(Time(3000 * MS));
        linux.cwnd = 50 * MDS;
        linux.ssthresh = 50 * MDS;
        round(&mut linux, Time(4000 * MS), 100, &rtt);
        assert_eq!(linux.window(), 50 * MDS + 50 * MDS / 20);
    }

    /// Linux `bictcp_update`: `t += usecs_to_jiffies(ca->delay_min)`: the target looks ahead by
    /// the minimum RTT, RFC 9438 §4.2 by the smoothed one.
    #[test]
    fn linux_rule_aims_the_minimum_rtt_ahead() {
        let mut rtt = rtt_of(20);
        for _ in 0..50 {
            rtt.update(Dur::from_millis(200), Dur::ZERO);
        }
        assert_eq!(rtt.min(), Dur::from_millis(20));
        assert!(rtt.smoothed() > Dur::from_millis(190));
        let (mut linux, mut rfc) = (Cubic::new(linux_cfg()), Cubic::new(CcConfig::tcp_default(CcKind::Cubic, MDS)));
        for cc in [&mut linux, &mut rfc] {
            grown_then_lost(cc, 100, Time(1000 * MS), &rtt);
            // One ACK starts the epoch (and grows the window by a few bytes), the next, 1 s
            // later, moves towards W_cubic(1 s + ahead) (below W_max = 100 packets: K = 4.2 s).
            cc.on_ack(Time(1300 * MS), &ack(MDS, Time(1100 * MS)), &rtt);
            cc.on_ack(Time(2300 * MS), &ack(30 * MDS, Time(2100 * MS)), &rtt);
        }
        let start = 70 * MDS;
        let k = f64::cbrt(30.0 / 0.4);
        let w = |t: f64| (0.4 * (t - k).powi(3) + 100.0) * MDS as f64;
        // cwnd grows by (target − cwnd) · acked / cwnd.
        let expect = |ahead: f64| start as f64 + (w(1.0 + ahead) - start as f64) * 30.0 / 70.0;
        assert!((linux.window() as f64 - expect(0.020)).abs() < 8.0, "{} vs {}", linux.window(), expect(0.020));
        assert!(rfc.window() as f64 > expect(0.190), "{}", rfc.window());
    }

    /// `cubic_rule = "linux-segments"` after a loss at 20 packets (ssthresh 14, K = 2.46 s),
    /// one window of ACKs per 25 ms round trip. The curve's first `cnt` (target 15: 14) gives
    /// one packet in the first round; from then on the target is the window itself and the
    /// Reno estimate, which started at 14, must pass 15 before it raises the window: nothing
    /// for three rounds, then a packet every other round, where the "linux" rule follows RFC
    /// 9438's W_est at once, half a packet a round.
    #[test]
    fn linux_segments_rule_follows_the_reno_estimate_a_step_behind_in_whole_packets() {
        let rtt = rtt_of(25);
        let segs = CcConfig { cubic_rule: CubicRule::LinuxSegments, ..linux_cfg() };
        let (mut fine, mut whole) = (avoiding_at(linux_cfg(), 20), avoiding_at(segs, 20));
        let mut trace = (Vec::new(), Vec::new());
        for (cc, tr) in [(&mut fine, &mut trace.0), (&mut whole, &mut trace.1)] {
            cc.on_congestion_event(Time(1000 * MS), &loss(Time(999 * MS)), &rtt);
            assert_eq!((cc.window(), cc.ssthresh()), (14 * MDS, Some(14 * MDS)));
            for r in 0..12 {
                round(cc, Time((1100 + 25 * r) * MS), 25, &rtt);
                tr.push(cc.window() as f64 / MDS as f64);
            }
        }
        assert_eq!(trace.1, vec![15.0, 15.0, 15.0, 15.0, 16.0, 16.0, 17.0, 17.0, 18.0, 18.0, 19.0, 19.0]);
        assert!(trace.0[3] > 16.0 && trace.0[11] > 20.0, "{:?}", trace.0);
        assert_eq!(whole.bic.last_max_cwnd, 20);
    }

    /// Under "linux-segments" slow start stops at ssthresh and the rest of the ACK goes to
    /// congestion avoidance (`tcp_slow_start`); a timeout forgets `last_max_cwnd`.
    #[test]
    fn linux_segments_slow_start_stops_at_ssthresh() {
        let rtt = rtt_of(25);
        let mut cc = Cubic::new(CcConfig { cubic_rule: CubicRule::LinuxSegments, ..linux_cfg() });
        grown_then_lost(&mut cc, 100, Time(1000 * MS), &rtt);
        assert_eq!((cc.window(), cc.ssthresh()), (70 * MDS, Some(70 * MDS)));
        cc.on_persistent_congestion(Time(2000 * MS));
        assert_eq!((cc.window(), cc.bic.last_max_cwnd), (MDS, 0));
        // ssthresh stays 70; an ACK of 80 packets takes the window from 1 to 70 and gives the
        // other 11 to congestion avoidance (cnt 20 with last_max_cwnd 0: no packet yet).
        cc.on_ack(Time(2100 * MS), &ack(80 * MDS, Time(2050 * MS)), &rtt);
        assert_eq!(cc.window(), 70 * MDS);
        assert_eq!((cc.bic.cwnd_cnt, cc.bic.cnt), (11, 20));
    }

    #[test]
    fn cbrt_matches_the_library_cube_root() {
        for x in [1e-9, 0.5, 1.0, 2.0, 27.0, 75.0, 750.0, 1e6, 1.23e15] {
            assert!((cbrt(x) - f64::cbrt(x)).abs() <= 1e-12 * f64::cbrt(x), "{x}");
        }
        assert_eq!(cbrt(0.0), 0.0);
    }

    #[test]
    fn reduction_k_and_curve_follow_rfc_formulas() {
        let rtt = rtt_of(100);
        let mut cc = Cubic::new(cfg());
        grown_then_lost(&mut cc, 100, Time(1000 * MS), &rtt);
        // β = 0.7: ssthresh = cwnd = 70 packets, W_max = 100 packets, cwnd_prior = 100.
        assert_eq!((cc.window(), cc.ssthresh(), cc.w_max(), cc.cwnd_prior()), (84_000, Some(84_000), 120_000, 120_000));
        assert_eq!(cc.state(), CcState::Recovery);
        assert_eq!(cc.k(), None);
        // The first ACK of a post-recovery packet starts the epoch: K = cbrt((100 − 70)/0.4).
        let t0 = Time(1100 * MS);
        cc.on_ack(t0, &ack(MDS, Time(1001 * MS)), &rtt);
        assert_eq!(cc.state(), CcState::CongestionAvoidance);
        let k = cc.k().unwrap();
        assert!((k - f64::cbrt(30.0 / 0.4)).abs() < 1e-12, "{k}");
        assert_eq!(cc.epoch_start(), Some(t0));
        for t in [0.0, 1.0, 2.5, k, 6.0, 10.0] {
            let expect = (0.4 * (t - k).powi(3) + 100.0) * MDS as f64;
            let got = cc.w_cubic(Dur::from_secs_f64(t)).unwrap() as f64;
            assert!((got - expect).abs() <= 1.0, "t={t}: {got} vs {expect}");
        }
        // Driven by one window of ACKs per RTT, cwnd tracks W_cubic(t) (it aims one RTT ahead and
        // gets there within the round) and plateaus at W_max around t = K.
        let mut t = t0;
        while t.since(t0).as_secs_f64() < 8.0 {
            t += Dur::from_millis(100);
            round(&mut cc, t, 100, &rtt);
            let elapsed = (t.0 + 100 * MS - t0.0) as f64 / 1e9;
            let curve = (0.4 * (elapsed - k).powi(3) + 100.0) * MDS as f64;
            let w = cc.window() as f64;
            assert!((w - curve).abs() / curve < 0.03, "t={elapsed}: cwnd {w} vs W_cubic {curve}");
        }
    }

    #[test]
    fn fast_convergence_lowers_w_max_to_0_85_cwnd() {
        let rtt = rtt_of(100);
        let mut cc = Cubic::new(cfg());
        grown_then_lost(&mut cc, 1000, Time(1000 * MS), &rtt);
        assert_eq!(cc.w_max(), 1000 * MDS);
        // Regrow to 800 packets (below W_max) and lose again.
        let mut t = Time(1100 * MS);
        while cc.window() < 800 * MDS {
            round(&mut cc, t, 100, &rtt);
            t += Dur::from_millis(100);
        }
        let w = cc.window();
        assert!(w < 1000 * MDS);
        cc.on_congestion_event(t, &loss(Time(t.0 - 1)), &rtt);
        assert_eq!(cc.w_max(), (w as f64 * 0.85) as u64);
        assert_eq!(cc.window(), (w as f64 * 0.7) as u64);
        // Without fast convergence W_max is simply the window.
        let mut plain = Cubic::new(CcConfig { fast_convergence: false, ..cfg() });
        grown_then_lost(&mut plain, 1000, Time(1000 * MS), &rtt);
        plain.on_ack(Time(1100 * MS), &ack(MDS, Time(1050 * MS)), &rtt);
        let w = plain.window();
        assert!(w > 700 * MDS && w < 1000 * MDS);
        plain.on_congestion_event(Time(1200 * MS), &loss(Time(1150 * MS)), &rtt);
        assert_eq!(plain.w_max(), w);
    }

    #[test]
    fn reno_friendly_alpha_switches_to_one_at_cwnd_prior() {
        // Small window, short RTT: the Reno estimate beats the curve for many rounds.
        let rtt = rtt_of(10);
        let mut cc = Cubic::new(cfg());
        grown_then_lost(&mut cc, 20, Time(100 * MS), &rtt);
        assert_eq!(cc.cwnd_prior(), 20 * MDS);
        let mut t = Time(110 * MS);
        let (mut below, mut above) = (0, 0);
        for _ in 0..30 {
            let (est_before, alpha_before) = (cc.w_est(), cc.alpha());
            round(&mut cc, t, 10, &rtt);
            t += Dur::from_millis(10);
            if est_before == 0 {
                continue; // the epoch started inside this round
            }
            let grew = (cc.w_est() - est_before) as f64 / MDS as f64;
            if cc.w_est() < cc.cwnd_prior() {
                assert!((alpha_before - 9.0 / 17.0).abs() < 1e-4);
                assert!((0.45..=0.54).contains(&grew), "below cwnd_prior W_est grew {grew}");
                below += 1;
            } else if est_before >= cc.cwnd_prior() {
                assert_eq!(alpha_before, 1.0);
                assert!((0.9..=1.01).contains(&grew), "above cwnd_prior W_est grew {grew}");
                above += 1;
            }
            // In this region the window is the Reno estimate.
            assert_eq!(cc.window(), cc.w_est());
        }
        assert!(below >= 8 && above >= 5, "{below} {above}");
    }

    #[test]
    fn regains_ninety_percent_of_w_max_much_faster_than_newreno() {
        let rtt = rtt_of(100);
        let rounds_to_90 = |cc: &mut dyn Controller| {
            grown_then_lost(cc, 1000, Time(1000 * MS), &rtt);
            let mut t = Time(1101 * MS);
            let mut rounds = 0;
            while cc.window() < 900 * MDS && rounds < 1000 {
                round(cc, t, 100, &rtt);
                t += Dur::from_millis(100);
                rounds += 1;
            }
            rounds
        };
        let cubic = rounds_to_90(&mut Cubic::new(cfg()));
        let reno = rounds_to_90(&mut NewReno::new(CcConfig { kind: CcKind::NewReno, ..cfg() }));
        // NewReno: 500 → 900 packets at one per RTT. CUBIC: W_cubic reaches 900 at
        // t = K − cbrt(100/0.4) ≈ 2.8 s, one RTT earlier because it aims one RTT ahead.
        assert_eq!(reno, 400);
        assert!((26..=30).contains(&cubic), "cubic took {cubic} rounds");
    }

    #[test]
    fn app_limited_acks_freeze_growth_and_shift_the_epoch() {
        let rtt = rtt_of(100);
        let mut cc = Cubic::new(cfg());
        grown_then_lost(&mut cc, 100, Time(1000 * MS), &rtt);
        cc.on_ack(Time(1100 * MS), &ack(MDS, Time(1001 * MS)), &rtt);
        let (w, start) = (cc.window(), cc.epoch_start().unwrap());
        for i in 1..=50 {
            let mut a = ack(MDS, Time((1100 + 100 * i) * MS));
            a.app_limited = true;
            cc.on_ack(Time((1100 + 100 * i) * MS + 100 * MS), &a, &rtt);
        }
        assert_eq!(cc.window(), w);
        // Everything from the last growing ACK to the last app-limited one is excluded.
        assert_eq!(cc.epoch_start(), Some(start + Dur::from_millis(5100)));
        // Without the check the same ACKs grow the window.
        let mut unchecked = Cubic::new(CcConfig { app_limited_check: false, ..cfg() });
        grown_then_lost(&mut unchecked, 100, Time(1000 * MS), &rtt);
        let before = unchecked.window();
        round(&mut unchecked, Time(1100 * MS), 100, &rtt);
        round(&mut unchecked, Time(1200 * MS), 100, &rtt);
        assert!(unchecked.window() > before);
    }

    #[test]
    fn one_reduction_per_recovery_period_and_persistent_congestion() {
        let rtt = rtt_of(100);
        let mut cc = Cubic::new(cfg());
        grown_then_lost(&mut cc, 100, Time(1000 * MS), &rtt);
        cc.on_congestion_event(Time(1050 * MS), &loss(Time(999 * MS)), &rtt);
        assert_eq!(cc.window(), 84_000);
        cc.on_ack(Time(1060 * MS), &ack(MDS, Time(990 * MS)), &rtt);
        assert_eq!((cc.window(), cc.state()), (84_000, CcState::Recovery));
        cc.on_persistent_congestion(Time(2000 * MS));
        assert_eq!(cc.window(), 2 * MDS);
        assert_eq!(cc.state(), CcState::SlowStart);
        assert_eq!(cc.ssthresh(), Some(84_000));
        // Slow start back to ssthresh, then an epoch with K = 0 and W_max = cwnd_epoch.
        cc.on_ack(Time(2100 * MS), &ack(82_000, Time(2001 * MS)), &rtt);
        cc.on_ack(Time(2101 * MS), &ack(MDS, Time(2002 * MS)), &rtt);
        assert_eq!(cc.k(), Some(0.0));
        assert_eq!(cc.w_max(), 84_400);
    }

    #[test]
    fn spurious_event_restores_saved_state() {
        let rtt = rtt_of(100);
        let mut cc = Cubic::new(cfg());
        grown_then_lost(&mut cc, 100, Time(1000 * MS), &rtt);
        cc.on_ack(Time(1100 * MS), &ack(MDS, Time(1001 * MS)), &rtt);
        let (w, wmax, k) = (cc.window(), cc.w_max(), cc.k());
        cc.on_congestion_event(Time(1200 * MS), &loss(Time(1150 * MS)), &rtt);
        assert!(cc.window() < w);
        cc.on_spurious_congestion(Time(1250 * MS));
        assert_eq!((cc.window(), cc.w_max(), cc.k(), cc.ssthresh()), (w, wmax, k, Some(84_000)));
        assert_eq!(cc.state(), CcState::CongestionAvoidance);
    }

    #[test]
    fn linux_hystart_sets_ssthresh_to_the_window_without_growing_on_the_exiting_ack() {
        let mut cc = Cubic::new(CcConfig { hystart: true, hystart_rule: HyStartRule::Linux, ..cfg() });
        let mut rtt = rtt_of(50);
        let mut t = 0u64;
        let mut exit = None;
        // Three rounds at 50 ms, then 70 ms > 50 + 6.25 ms: the ninth sample of the fourth
        // round ends slow start, at 80 + 8 segments.
        for r in 0..6u64 {
            let sample = if r < 3 { 50 } else { 70 };
            let n = cc.window() / MDS;
            for _ in 0..n {
                cc.on_packet_sent(Time(t), MDS, 0);
            }
            for i in 0..n {
                rtt.update(Dur::from_millis(sample), Dur::ZERO);
                let before = cc.window();
                cc.on_ack(Time(t + sample * MS + i), &ack(MDS, Time(t)), &rtt);
                if exit.is_none() && cc.ssthresh().is_some() {
                    exit = Some((r, i, before));
                }
            }
            t += 100 * MS;
        }
        let (r, i, before) = exit.expect("slow start ended");
        assert_eq!((r, i, before), (3, 8, 88 * MDS));
        assert_eq!(cc.ssthresh(), Some(88 * MDS), "ssthresh = cwnd, not grown by that ACK");
        assert_eq!(cc.state(), CcState::CongestionAvoidance);
    }

    #[test]
    fn hystart_ends_slow_start_before_loss() {
        let mut cc = Cubic::new(CcConfig { hystart: true, ..cfg() });
        let mut rtt = rtt_of(50);
        let mut t = 0u64;
        // RTT rises by 20 ms from the fourth round on.
        for r in 0..12u64 {
            let sample = if r < 3 { 50 } else { 70 };
            rtt.update(Dur::from_millis(sample), Dur::ZERO);
            let n = cc.window() / MDS;
            for _ in 0..n {
                cc.on_packet_sent(Time(t), MDS, 0);
            }
            for i in 0..n {
                cc.on_ack(Time(t + sample * MS + i), &ack(MDS, Time(t)), &rtt);
            }
            t += 100 * MS;
        }
        assert_eq!(cc.state(), CcState::CongestionAvoidance);
        assert_eq!(cc.ssthresh(), Some(cc.w_max()));
        assert!(cc.k() == Some(0.0));
    }

    #[test]
    fn picoquic_loss_filter_ignores_isolated_losses_and_beta_seven_eighths_reduces_by_an_eighth() {
        let mut cc = Cubic::new(CcConfig { cubic_beta: 0.875, loss_filter: true, ..cfg() });
        let rtt = rtt_of(50);
        cc.on_ack(Time(1), &ack(100 * MDS - cc.window(), Time(0)), &rtt);
        assert_eq!(cc.window(), 100 * MDS);
        // One lost packet: smoothed loss rate 6 %, no reduction and no recovery period.
        cc.on_packet_lost(Time(100 * MS), 500, MDS);
        cc.on_congestion_event(Time(100 * MS), &loss(Time(99 * MS)), &rtt);
        assert_eq!((cc.window(), cc.state()), (100 * MDS, CcState::SlowStart));
        // Four consecutive lost packets pass the 20 % threshold: cwnd · 7/8.
        for pn in 501..505 {
            cc.on_packet_lost(Time(200 * MS), pn, MDS);
        }
        cc.on_congestion_event(Time(200 * MS), &loss(Time(199 * MS)), &rtt);
        assert_eq!(cc.window(), 100 * MDS * 7 / 8);
        assert_eq!(cc.state(), CcState::Recovery);
        // Without the filter every congestion event reduces.
        let mut plain = Cubic::new(CcConfig { cubic_beta: 0.875, ..cfg() });
        plain.on_ack(Time(1), &ack(100 * MDS - plain.window(), Time(0)), &rtt);
        plain.on_packet_lost(Time(100 * MS), 500, MDS);
        plain.on_congestion_event(Time(100 * MS), &loss(Time(99 * MS)), &rtt);
        assert_eq!(plain.window(), 100 * MDS * 7 / 8);
    }

    fn ngtcp2_012() -> CcConfig {
        CcConfig { hystart: true, hystart_rule: HyStartRule::Ngtcp2V012, cubic_rule: CubicRule::Ngtcp2V012, delivery_rate_cap: true, app_limited_check: false, ..cfg() }
    }

    /// One ACK of `bytes` for packets sent at `sent`, with a delivery-rate sample of
    /// `rate_bytes_per_s` (over 100 ms).
    fn ack_with_rate(bytes: u64, sent: Time, rate_bytes_per_s: u64) -> AckEvent {
        let interval = Dur::from_millis(100);
        let rate_sample = Some(crate::RateSample {
            delivery_rate: multiconn_core::Rate(rate_bytes_per_s * 8),
            delivered: rate_bytes_per_s / 10,
            interval,
            is_app_limited: false,
            prior_delivered: 0,
            rtt: Dur::from_millis(50),
            tx_in_flight: 0,
            lost: 0,
            newly_lost: 0,
        });
        AckEvent { rate_sample, ..ack(bytes, sent) }
    }

    #[test]
    fn ngtcp2_cbrt_is_an_integer_cube_root() {
        assert_eq!([0, 1, 7, 8, 26, 27, 75, 1000, 1_000_000].map(ngtcp2_cbrt), [0, 1, 1, 2, 2, 3, 4, 10, 100]);
    }

    #[test]
    fn delivery_rate_cap_stops_growth_above_2_89_bdp_and_not_below() {
        for rule in [CubicRule::Rfc9438, CubicRule::Ngtcp2V012] {
            let mut cc = Cubic::new(CcConfig { cubic_rule: rule, ..ngtcp2_012() });
            let rtt = rtt_of(50);
            // 1 MB/s × 50 ms = 50 kB; × 2.89 = 144.5 kB. No cap before the first sample.
            assert!(cc.delivery_rate_cap().unwrap().target().is_none());
            cc.on_ack(Time(1), &ack_with_rate(MDS, Time(0), 1_000_000), &rtt);
            assert_eq!(cc.delivery_rate_cap().unwrap().target(), Some(144_500));
            // Slow start grows in full below the cap; the datagram that crosses it still counts.
            let mut t = 2;
            while cc.window() <= 144_500 {
                let before = cc.window();
                cc.on_ack(Time(t), &ack(MDS, Time(0)), &rtt);
                assert_eq!(cc.window(), before + MDS, "{rule:?}");
                t += 1;
            }
            assert_eq!(cc.window(), 145_200);
            for _ in 0..100 {
                cc.on_ack(Time(t), &ack(MDS, Time(0)), &rtt);
                t += 1;
            }
            assert_eq!(cc.window(), 145_200, "{rule:?}: capped in slow start");
            // A higher rate raises the cap (from the next ACK on): growth resumes.
            cc.on_ack(Time(t), &ack_with_rate(MDS, Time(0), 2_000_000), &rtt);
            assert_eq!(cc.window(), 145_200);
            cc.on_ack(Time(t + 1), &ack(MDS, Time(0)), &rtt);
            assert_eq!(cc.window(), 146_400);
            // Congestion avoidance is capped too: a loss, then a target below the window.
            cc.on_congestion_event(Time(t + 2), &loss(Time(t + 1)), &rtt);
            let w = cc.window();
            let mut low = Cubic::new(CcConfig { cubic_rule: rule, ..ngtcp2_012() });
            low.on_ack(Time(1), &ack(300 * MDS, Time(0)), &rtt);
            low.on_ack(Time(2), &ack_with_rate(MDS, Time(0), 1_000_000), &rtt);
            low.on_congestion_event(Time(3), &loss(Time(2)), &rtt);
            let lw = low.window();
            assert!(lw > 144_500);
            for k in 0..2000u64 {
                let now = Time(t + 10 * MS + k * MS);
                cc.on_ack(now, &ack(MDS, Time(t + 5 * MS)), &rtt);
                low.on_ack(now, &ack(MDS, Time(t + 5 * MS)), &rtt);
            }
            assert!(cc.window() > w, "{rule:?}: below the cap, congestion avoidance grows");
            assert_eq!(low.window(), lw, "{rule:?}: above the cap it does not");
        }
    }

    #[test]
    fn ngtcp2_012_hystart_ends_slow_start_at_once_and_sets_w_max() {
        // Per-packet ACKs, window-limited sending; the RTT is 50 ms for packets sent before
        // 300 ms and 70 ms after.
        let mut cc = Cubic::new(ngtcp2_012());
        let mut rtt = RttEstimator::new(Dur::from_millis(333), RttVarRule::Rfc9002);
        let mut in_flight: std::collections::VecDeque<Time> = Default::default();
        let rtt_for = |sent: Time| if sent.0 < 300 * MS { 50 * MS } else { 70 * MS };
        let mut now = Time(0);
        let mut first_rise = None;
        let mut exit = None;
        while now.0 < 2000 * MS && exit.is_none() {
            while (in_flight.len() as u64) * MDS < cc.window() {
                cc.on_packet_sent(now, MDS, 0);
                in_flight.push_back(Time(now.0 + in_flight.len() as u64));
            }
            let sent = in_flight.pop_front().unwrap();
            now = Time(sent.0 + rtt_for(sent)).max(now);
            let sample = Dur(rtt_for(sent));
            rtt.update(sample, Dur::ZERO);
            if sample.0 == 70 * MS && first_rise.is_none() {
                first_rise = Some(now);
            }
            cc.on_ack(now, &ack(MDS, sent), &rtt);
            if cc.state() == CcState::CongestionAvoidance {
                exit = Some(now);
            }
        }
        let (rise, exit) = (first_rise.unwrap(), exit.expect("slow start ended"));
        // Within the round that first saw the rise, without loss and without CSS.
        assert!(exit >= rise && exit.0 < rise.0 + 70 * MS, "rise {rise:?} exit {exit:?}");
        assert_eq!(cc.ssthresh(), Some(cc.window()));
        assert_eq!(cc.w_max(), cc.window());
        assert!(cc.window() >= 16 * MDS);
    }

    #[test]
    fn ngtcp2_012_congestion_avoidance_is_renos_in_the_first_second_then_half_a_datagram_per_datagram() {
        let run = |rule: CubicRule| {
            let mut cc = Cubic::new(CcConfig { cubic_rule: rule, delivery_rate_cap: false, ..ngtcp2_012() });
            let rtt = rtt_of(50);
            cc.on_ack(Time(1), &ack(100 * MDS - cc.window(), Time(0)), &rtt);
            cc.on_congestion_event(Time(2), &loss(Time(1)), &rtt);
            assert_eq!((cc.window(), cc.w_max()), (70 * MDS, 100 * MDS));
            // One window of ACKs in the epoch's first 50 ms.
            let start = 10 * MS;
            for k in 0..70u64 {
                cc.on_ack(Time(start + k * MS / 2), &ack(MDS, Time(5 * MS)), &rtt);
            }
            let first = cc.window() - 70 * MDS;
            // Ten datagrams 1.5 s into the epoch.
            let w = cc.window();
            for k in 0..10u64 {
                cc.on_ack(Time(start + 1500 * MS + k), &ack(MDS, Time(1400 * MS)), &rtt);
            }
            (cc, first, w)
        };
        let (ng, first, w) = run(CubicRule::Ngtcp2V012);
        // K = icbrt(30 · 10 / 4) = icbrt(75) = 4 whole seconds (RFC 9438: 4.22 s).
        assert_eq!(ng.ng.k, 4);
        // Reno's one datagram per window, less the lag of cwnd behind w_tcp.
        assert!(first > 0 && first < MDS, "{first}");
        // target × (t + srtt) exceeds 1.5 · cwnd: half a datagram per datagram.
        let later = ng.window() - w;
        assert!((9 * MDS / 2..=11 * MDS / 2).contains(&later), "{later}");
        // RFC 9438 moves towards W_cubic(1.55 s) ≈ 92 datagrams: (92 − 71)/71 of a datagram
        // per datagram.
        let (rfc, _, w_rfc) = run(CubicRule::Rfc9438);
        let later_rfc = rfc.window() - w_rfc;
        assert!((2 * MDS..4 * MDS).contains(&later_rfc), "{later_rfc}");
    }
}
