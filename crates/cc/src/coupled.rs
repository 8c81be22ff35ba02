//! Congestion control for a connection with several paths (Multipath QUIC) or subflows
//! (MPTCP): one [`MultipathController`] per connection, keyed by a path index.
//!
//! * [`UncoupledCc`] runs an independent single-path [`Controller`] per path (what modern QUIC
//!   stacks and upstream Linux MPTCP do).
//! * [`CoupledCc`] couples the congestion-avoidance increase of Reno-style paths:
//!   - LIA, linked increases (RFC 6356 §3, byte form):
//!     `alpha = cwnd_total · max_r(cwnd_r/rtt_r²) / (Σ_r cwnd_r/rtt_r)²` and, per ACK of
//!     `acked` bytes on path i, `cwnd_i += min(alpha·acked·MSS_i/cwnd_total, acked·MSS_i/cwnd_i)`;
//!   - OLIA (Khalili, Gast, Popovic, Upadhyay, Le Boudec, CoNEXT 2012 and IEEE/ACM ToN 2013):
//!     `cwnd_r += acked·MSS_r·[(cwnd_r/rtt_r²)/(Σ_p cwnd_p/rtt_p)² + α_r/cwnd_r]`, where α_r
//!     moves window from the largest-window paths to the best paths (largest ℓ_r/rtt_r², ℓ_r
//!     the bytes acknowledged between losses) that are not among them;
//!   - BALIA (Peng, Walid, Hwang, Low, IEEE/ACM ToN 2016): with `x_r = cwnd_r/rtt_r` and
//!     `α_r = max_k x_k / x_r`, `cwnd_r += acked·MSS_r·x_r/(rtt_r·(Σ_k x_k)²)·(1+α_r)/2·(4+α_r)/5`,
//!     and a loss takes `cwnd_r·min(α_r, 1.5)/2` off the window.
//!
//!   The packet-count formulas of the papers are multiplied through by MSS so that windows stay
//!   in bytes; with one path each reduces to NewReno. Slow start is per path and uncoupled
//!   (RFC 6356 §3 couples only congestion avoidance); recovery periods are per path as in
//!   RFC 9002 §7.3.2 (one reduction per round trip: no further reduction for the loss of a
//!   packet sent before the period started). LIA and OLIA reduce to `cwnd·β` (β =
//!   `reno_beta`, 0.5). Persistent congestion collapses a path to its loss window.
//!
//! Only active paths with an RTT sample that are not suspended take part in the coupling; a
//! path outside it grows like NewReno. The controller keeps each path's smoothed RTT from the estimator passed with
//! its last ACK or loss (or [`MultipathController::on_rtt_sample`]). Arithmetic is `f64` in a
//! fixed order (deterministic); fractional bytes of increase are carried per path. OLIA
//! compares windows in whole MSS (as packet-counting implementations do) and loss intervals
//! exactly in integers, so that ties are ties.
//!
//! Two further coupled algorithms have their own types, built by [`build_multipath`] like the
//! others: [`crate::wvegas::Wvegas`] (delay-based weighted Vegas, Cao et al., ICNP 2012) and
//! [`crate::westwood::CoupledWestwood`] (this module's LIA increase with Westwood+'s
//! bandwidth-based decrease per path).
//!
//! A transport that keeps one [`Controller`] per path (one loss recovery per path, as Multipath
//! QUIC does) runs a coupled controller through [`PathController`]s: views of one
//! [`SharedMultipath`], one per path, that forward each event with their path index.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::hystart::{HyStart, SlowStartStep};
use crate::recovery_period::RecoveryPeriod;
use crate::{build, AckEvent, CcConfig, CcKind, CcState, Controller, LossEvent, RttEstimator};
use multiconn_core::{Dur, Rate, Time};
use serde::Deserialize;

/// Which coupled algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoupledKind {
    /// Linux's module name for LIA is `coupled`.
    #[serde(alias = "coupled")]
    Lia,
    /// OLIA (Khalili, Gast, Popovic, Upadhyay, Le Boudec, CoNEXT 2012).
    Olia,
    /// BALIA (Peng, Walid, Hwang, Low, IEEE/ACM ToN 2016).
    Balia,
    /// Weighted Vegas (delay-based, [`crate::wvegas`]).
    Wvegas,
    /// LIA's increase with Westwood+'s bandwidth-based decrease ([`crate::westwood`]).
    Westwood,
}

impl CoupledKind {
    /// Every coupled algorithm, in declaration order.
    pub const ALL: [CoupledKind; 5] = [CoupledKind::Lia, CoupledKind::Olia, CoupledKind::Balia, CoupledKind::Wvegas, CoupledKind::Westwood];
    /// The linked-increase algorithms that [`CoupledCc`] runs (Reno-style windows: additive
    /// increase, multiplicative decrease).
    pub const LINKED: [CoupledKind; 3] = [CoupledKind::Lia, CoupledKind::Olia, CoupledKind::Balia];

    /// Its name in scenarios (`lia`, `olia`, `balia`, `wvegas`, `westwood`).
    pub fn name(self) -> &'static str {
        match self {
            CoupledKind::Lia => "lia",
            CoupledKind::Olia => "olia",
            CoupledKind::Balia => "balia",
            CoupledKind::Wvegas => "wvegas",
            CoupledKind::Westwood => "westwood",
        }
    }

}

/// A coupled controller name that is not one of [`CoupledKind::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown coupled congestion control \"{0}\"; available: {}", CoupledKind::ALL.map(CoupledKind::name).join(", "))]
pub struct UnknownCoupled(pub String);

impl std::str::FromStr for CoupledKind {
    type Err = UnknownCoupled;

    /// A name of [`CoupledKind::ALL`]; "coupled" (RFC 6356's name) is taken for LIA.
    fn from_str(s: &str) -> Result<CoupledKind, UnknownCoupled> {
        match s {
            "coupled" => Ok(CoupledKind::Lia),
            _ => CoupledKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| UnknownCoupled(s.to_string())),
        }
    }
}

/// Congestion control of all the paths of one connection. Paths are numbered by
/// [`add_path`](MultipathController::add_path) from 0 and never renumbered; events for a removed
/// path are ignored and its window reads 0. An index that was never added panics.
pub trait MultipathController: Send + std::fmt::Debug {
    /// A new path with its own parameters (MSS, initial and minimum windows); returns its index.
    fn add_path(&mut self, cfg: &CcConfig) -> usize;
    /// The path was abandoned or closed: its window no longer counts in the coupling.
    fn remove_path(&mut self, path: usize);
    /// The path is suspected broken (`true`, e.g. potentially failed) or works again (`false`):
    /// while suspended it keeps its state but leaves the coupling, as Linux MPTCP leaves
    /// potentially-failed subflows out of its coupled controllers' sums. Independent
    /// controllers ignore it.
    fn set_suspended(&mut self, _path: usize, _suspended: bool) {}
    /// `path` was added and not removed (a suspended path is still active).
    fn is_active(&self, path: usize) -> bool;
    /// Paths ever added (active or not).
    fn path_count(&self) -> usize;
    /// A packet of `bytes` counting in flight was sent on `path`; `bytes_in_flight` is the
    /// path's and includes it.
    fn on_packet_sent(&mut self, path: usize, now: Time, bytes: u64, bytes_in_flight: u64);
    /// An ACK newly acknowledged packets sent on `path`; `rtt` is that path's estimator, already
    /// updated with the ACK's sample.
    fn on_ack(&mut self, path: usize, now: Time, ack: &AckEvent, rtt: &RttEstimator);
    /// Loss detection declared packets of `path` lost.
    fn on_congestion_event(&mut self, path: usize, now: Time, loss: &LossEvent, rtt: &RttEstimator);
    /// Persistent congestion (RFC 9002 §7.6) or a retransmission timeout on `path`.
    fn on_persistent_congestion(&mut self, path: usize, now: Time);
    /// gQUIC's retransmission timeout on `path` ([`Controller::on_retransmission_timeout`]);
    /// by default as persistent congestion.
    fn on_retransmission_timeout(&mut self, path: usize, now: Time) {
        self.on_persistent_congestion(path, now);
    }
    /// The last congestion event of `path` was spurious: restore the state from before it.
    fn on_spurious_congestion(&mut self, _path: usize, _now: Time) {}
    /// A packet of `path` declared lost was acknowledged ([`Controller::on_spurious_loss`]).
    fn on_spurious_loss(&mut self, _path: usize, _now: Time, _largest_acked_sent: Time, _srtt: Dur) {}
    /// `path`'s RTT estimate changed outside an ACK or loss of that path.
    fn on_rtt_sample(&mut self, _path: usize, _rtt: &RttEstimator) {}
    /// Congestion window of `path` in bytes (0 once removed).
    fn window(&self, path: usize) -> u64;
    /// Slow-start threshold of `path` in bytes; `None` while infinite or once removed.
    fn ssthresh(&self, path: usize) -> Option<u64>;
    /// Where `path`'s controller is, for time series and qlog.
    fn state(&self, path: usize) -> CcState;
    /// A pacing rate the path's controller wants; `None` = pace from cwnd / smoothed RTT.
    fn pacing_rate(&self, _path: usize) -> Option<Rate> {
        None
    }
    /// `path`'s controller only works paced ([`Controller::needs_pacing`]).
    fn needs_pacing(&self, _path: usize) -> bool {
        false
    }
    /// `path`'s controller sets its window in recovery ([`Controller::sets_recovery_window`]).
    fn sets_recovery_window(&self, _path: usize) -> bool {
        false
    }
    /// The coupled algorithm, or `None` for independent per-path controllers.
    fn coupling(&self) -> Option<CoupledKind>;
    /// The single-path algorithm `path` follows outside the coupling (the coupled algorithms
    /// are Reno-based).
    fn kind(&self, path: usize) -> CcKind;
    /// Sum of the windows of the active paths.
    fn total_window(&self) -> u64 {
        (0..self.path_count()).filter(|&i| self.is_active(i)).map(|i| self.window(i)).sum()
    }
}

/// The factory: coupled paths for `Some(kind)`, otherwise one controller per path built from
/// each path's [`CcConfig::kind`] (which the coupled algorithms ignore: they are Reno-based).
pub fn build_multipath(coupling: Option<CoupledKind>) -> Box<dyn MultipathController> {
    match coupling {
        Some(CoupledKind::Wvegas) => Box::new(crate::wvegas::Wvegas::new()),
        Some(CoupledKind::Westwood) => Box::new(crate::westwood::CoupledWestwood::new()),
        Some(kind) => Box::new(CoupledCc::new(kind)),
        None => Box::new(UncoupledCc::new()),
    }
}

/// Independent controllers, one per path.
#[derive(Debug, Default)]
pub struct UncoupledCc {
    paths: Vec<Option<Box<dyn Controller>>>,
}

impl UncoupledCc {
    /// No paths yet.
    pub fn new() -> UncoupledCc {
        UncoupledCc::default()
    }

    /// The controller of an active path.
    pub fn controller(&self, path: usize) -> Option<&dyn Controller> {
        self.paths[path].as_deref()
    }

    fn get(&mut self, path: usize) -> Option<&mut Box<dyn Controller>> {
        self.paths[path].as_mut()
    }
}

impl MultipathController for UncoupledCc {
    fn add_path(&mut self, cfg: &CcConfig) -> usize {
        self.paths.push(Some(build(cfg)));
        self.paths.len() - 1
    }
    fn remove_path(&mut self, path: usize) {
        self.paths[path] = None;
    }
    fn is_active(&self, path: usize) -> bool {
        self.paths[path].is_some()
    }
    fn path_count(&self) -> usize {
        self.paths.len()
    }
    fn on_packet_sent(&mut self, path: usize, now: Time, bytes: u64, bytes_in_flight: u64) {
        if let Some(c) = self.get(path) {
            c.on_packet_sent(now, bytes, bytes_in_flight);
        }
    }
    fn on_ack(&mut self, path: usize, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        if let Some(c) = self.get(path) {
            c.on_ack(now, ack, rtt);
        }
    }
    fn on_congestion_event(&mut self, path: usize, now: Time, loss: &LossEvent, rtt: &RttEstimator) {
        if let Some(c) = self.get(path) {
            c.on_congestion_event(now, loss, rtt);
        }
    }
    fn on_persistent_congestion(&mut self, path: usize, now: Time) {
        if let Some(c) = self.get(path) {
            c.on_persistent_congestion(now);
        }
    }
    fn on_retransmission_timeout(&mut self, path: usize, now: Time) {
        if let Some(c) = self.get(path) {
            c.on_retransmission_timeout(now);
        }
    }
    fn on_spurious_congestion(&mut self, path: usize, now: Time) {
        if let Some(c) = self.get(path) {
            c.on_spurious_congestion(now);
        }
    }
    fn on_spurious_loss(&mut self, path: usize, now: Time, largest_acked_sent: Time, srtt: Dur) {
        if let Some(c) = self.get(path) {
            c.on_spurious_loss(now, largest_acked_sent, srtt);
        }
    }
    fn window(&self, path: usize) -> u64 {
        self.controller(path).map_or(0, |c| c.window())
    }
    fn ssthresh(&self, path: usize) -> Option<u64> {
        self.controller(path).and_then(|c| c.ssthresh())
    }
    fn state(&self, path: usize) -> CcState {
        self.controller(path).map_or(CcState::SlowStart, |c| c.state())
    }
    fn pacing_rate(&self, path: usize) -> Option<Rate> {
        self.controller(path).and_then(|c| c.pacing_rate())
    }
    fn needs_pacing(&self, path: usize) -> bool {
        self.controller(path).is_some_and(|c| c.needs_pacing())
    }
    fn sets_recovery_window(&self, path: usize) -> bool {
        self.controller(path).is_some_and(|c| c.sets_recovery_window())
    }
    fn coupling(&self) -> Option<CoupledKind> {
        None
    }
    fn kind(&self, path: usize) -> CcKind {
        self.paths[path].as_ref().map_or(CcKind::NewReno, |c| c.kind())
    }
}

/// The state of one path of a [`CoupledCc`].
#[derive(Debug, Clone)]
struct PathCc {
    cfg: CcConfig,
    active: bool,
    /// Left out of the coupling for now (see [`MultipathController::set_suspended`]).
    suspended: bool,
    cwnd: u64,
    ssthresh: u64,
    recovery: RecoveryPeriod,
    /// Fractional bytes of congestion-avoidance change not yet applied (OLIA's can be negative).
    credit: f64,
    srtt: Dur,
    has_rtt: bool,
    hystart: Option<HyStart>,
    /// OLIA: bytes acknowledged between the two most recent losses, and since the last one.
    l1: u64,
    l2: u64,
    /// State before the last reduction (cwnd, ssthresh, l1, l2), for undo.
    before_reduction: Option<(u64, u64, u64, u64)>,
}

impl PathCc {
    fn in_recovery(&self, sent: Time) -> bool {
        self.recovery.covers(sent)
    }
    fn coupled(&self) -> bool {
        self.active && self.has_rtt && !self.suspended
    }
    fn rtt_ns(&self) -> f64 {
        self.srtt.0.max(1) as f64
    }
    fn mss(&self) -> f64 {
        self.cfg.max_datagram_size as f64
    }
    fn packets(&self) -> u64 {
        self.cwnd / self.cfg.max_datagram_size.max(1)
    }
    fn ell(&self) -> u64 {
        self.l1.max(self.l2)
    }
    /// OLIA registers a loss only if something was acknowledged since the previous one (Linux
    /// `mptcp_olia_set_state`), so a burst of events does not wipe the interval history.
    fn register_loss(&mut self) {
        if self.l2 > 0 {
            self.l1 = self.l2;
            self.l2 = 0;
        }
    }
    fn remember(&mut self) {
        self.before_reduction = Some((self.cwnd, self.ssthresh, self.l1, self.l2));
    }
}

/// LIA, OLIA or BALIA over the paths of one connection. Besides the
/// [`MultipathController`] interface it exposes the coupling terms it currently uses.
#[derive(Debug, Clone)]
pub struct CoupledCc {
    kind: CoupledKind,
    paths: Vec<PathCc>,
}

impl CoupledCc {
    /// A controller for one of [`CoupledKind::LINKED`]; panics for another kind (those have
    /// their own types, see [`build_multipath`]).
    pub fn new(kind: CoupledKind) -> CoupledCc {
        assert!(CoupledKind::LINKED.contains(&kind), "{kind:?} is not a linked-increase algorithm");
        CoupledCc { kind, paths: Vec::new() }
    }

    /// The linked-increase algorithm it runs.
    pub fn kind(&self) -> CoupledKind {
        self.kind
    }

    fn members(&self) -> impl Iterator<Item = &PathCc> + '_ {
        self.paths.iter().filter(|p| p.coupled())
    }

    /// LIA's `alpha` over the coupled paths (RFC 6356 §3); 1 when none is coupled.
    pub fn lia_alpha(&self) -> f64 {
        let total: f64 = self.members().map(|p| p.cwnd as f64).sum();
        let best = self.members().map(|p| p.cwnd as f64 / (p.rtt_ns() * p.rtt_ns())).fold(0.0, f64::max);
        let sum: f64 = self.members().map(|p| p.cwnd as f64 / p.rtt_ns()).sum();
        if sum > 0.0 {
            total * best / (sum * sum)
        } else {
            1.0
        }
    }

    /// OLIA's α_r of `path`: `1/(|R|·|B∖M|)` on a best path that does not have the largest
    /// window, `−1/(|R|·|M|)` on a largest-window path when B∖M is not empty, 0 otherwise.
    pub fn olia_alpha(&self, path: usize) -> f64 {
        let me = &self.paths[path];
        if !me.coupled() {
            return 0.0;
        }
        // Windows are compared in whole MSS, as in the packet-counting implementations (Linux,
        // mp-quic): with byte windows two equal paths would otherwise swap the sign of α on
        // every ACK instead of sharing the window (the paper's fluid model slides along w_a = w_b).
        let max_cwnd = self.members().map(PathCc::packets).max().unwrap_or(0);
        // Best = largest ℓ_r/rtt_r², compared as ℓ_a·rtt_b² vs ℓ_b·rtt_a² in u128 (exact).
        let score = |p: &PathCc| (p.ell() as u128, (p.srtt.0.max(1) as u128).pow(2));
        let better = |a: (u128, u128), b: (u128, u128)| a.0.saturating_mul(b.1).cmp(&b.0.saturating_mul(a.1));
        let best = self.members().map(score).reduce(|a, b| if better(b, a).is_gt() { b } else { a });
        let Some(best) = best else { return 0.0 };
        let is_best = |p: &PathCc| better(score(p), best).is_eq();
        let n = self.members().count() as f64;
        let m = self.members().filter(|p| p.packets() == max_cwnd).count() as f64;
        let collected = self.members().filter(|p| p.packets() != max_cwnd && is_best(p)).count() as f64;
        if collected == 0.0 {
            0.0
        } else if me.packets() != max_cwnd && is_best(me) {
            1.0 / (n * collected)
        } else if me.packets() == max_cwnd {
            -1.0 / (n * m)
        } else {
            0.0
        }
    }

    /// BALIA's α_r of `path`: `max_k x_k / x_r` with `x = cwnd/rtt` (≥ 1; 1 when not coupled).
    pub fn balia_alpha(&self, path: usize) -> f64 {
        let me = &self.paths[path];
        if !me.coupled() {
            return 1.0;
        }
        let x = me.cwnd as f64 / me.rtt_ns();
        let max_x = self.members().map(|p| p.cwnd as f64 / p.rtt_ns()).fold(0.0, f64::max);
        if x > 0.0 {
            max_x / x
        } else {
            1.0
        }
    }

    /// The congestion-avoidance change, in bytes, that an ACK of `bytes_acked` on `path`
    /// would make to its window now (NewReno's `MSS·acked/cwnd` if the path is not coupled).
    pub fn increase(&self, path: usize, bytes_acked: u64) -> f64 {
        let me = &self.paths[path];
        let acked = bytes_acked as f64;
        let w = me.cwnd.max(1) as f64;
        let reno = acked * me.mss() / w;
        if !me.coupled() {
            return reno;
        }
        let rtt = me.rtt_ns();
        let sum_x: f64 = self.members().map(|p| p.cwnd as f64 / p.rtt_ns()).sum();
        match self.kind {
            CoupledKind::Lia => {
                let total: f64 = self.members().map(|p| p.cwnd as f64).sum();
                (self.lia_alpha() * acked * me.mss() / total).min(reno)
            }
            CoupledKind::Olia => {
                let coupled = (w / (rtt * rtt)) / (sum_x * sum_x);
                acked * me.mss() * (coupled + self.olia_alpha(path) / w)
            }
            CoupledKind::Balia => {
                let a = self.balia_alpha(path);
                let x = w / rtt;
                acked * me.mss() * x / (rtt * sum_x * sum_x) * (1.0 + a) / 2.0 * (4.0 + a) / 5.0
            }
            CoupledKind::Wvegas | CoupledKind::Westwood => unreachable!("not a CoupledCc kind"),
        }
    }

    /// The window `base` is reduced to by a congestion event on `path`, before the floor.
    fn reduced(&self, path: usize, base: u64) -> u64 {
        let p = &self.paths[path];
        match self.kind {
            CoupledKind::Lia | CoupledKind::Olia | CoupledKind::Wvegas | CoupledKind::Westwood => (base as f64 * p.cfg.reno_beta) as u64,
            CoupledKind::Balia => (base as f64 * (1.0 - 0.5 * self.balia_alpha(path).min(1.5))) as u64,
        }
    }

    /// OLIA's loss intervals of `path` in bytes: (between the two most recent losses, since
    /// the last one).
    pub fn loss_intervals(&self, path: usize) -> (u64, u64) {
        (self.paths[path].l1, self.paths[path].l2)
    }

    fn cache_rtt(&mut self, path: usize, rtt: &RttEstimator) {
        let p = &mut self.paths[path];
        if rtt.has_sample() {
            p.srtt = rtt.smoothed();
            p.has_rtt = true;
        }
    }

    /// A congestion event on `path`: a new recovery period with the window reduced to
    /// `target(base)` (base = cwnd, or the bytes in flight with `reduce_from_flight`), or by the
    /// algorithm's own rule when `target` is `None`. [`crate::westwood`] passes Westwood+'s.
    pub(crate) fn congestion_event(&mut self, path: usize, now: Time, loss: &LossEvent, rtt: &RttEstimator, target: Option<&dyn Fn(u64) -> u64>) {
        if !self.live(path) {
            return;
        }
        self.cache_rtt(path, rtt);
        if self.paths[path].in_recovery(loss.largest_lost_sent) {
            return;
        }
        let p = &self.paths[path];
        let base = if p.cfg.reduce_from_flight { loss.bytes_in_flight } else { p.cwnd };
        // BALIA's decrease depends on the windows before this one is reduced.
        let reduced = match target {
            Some(f) => f(base),
            None => self.reduced(path, base),
        };
        let p = &mut self.paths[path];
        p.remember();
        p.register_loss();
        p.recovery.begin(now);
        p.ssthresh = reduced.max(p.cfg.minimum_window);
        p.cwnd = p.ssthresh;
        p.credit = 0.0;
        if let Some(h) = &mut p.hystart {
            h.on_congestion_event();
        }
    }

    /// Persistent congestion on `path`; `ssthresh`, if given, replaces the algorithm's
    /// threshold (applied even inside a recovery period).
    pub(crate) fn persistent_congestion(&mut self, path: usize, now: Time, ssthresh: Option<u64>) {
        if !self.live(path) {
            return;
        }
        if let Some(h) = &mut self.paths[path].hystart {
            h.on_timeout(now);
        }
        let outside_recovery = !self.paths[path].recovery.is_open();
        let reduced = self.reduced(path, self.paths[path].cwnd);
        let p = &mut self.paths[path];
        if p.before_reduction.is_none() {
            p.remember();
        }
        // Outside recovery the timeout is itself the congestion signal (RFC 5681 §3.1); inside,
        // the period's loss event already lowered ssthresh and registered the loss.
        if outside_recovery {
            p.ssthresh = reduced.max(p.cfg.minimum_window);
            p.register_loss();
        }
        if let Some(s) = ssthresh {
            p.ssthresh = s.max(p.cfg.minimum_window);
        }
        p.cwnd = p.cfg.loss_window;
        p.recovery.forget();
        p.credit = 0.0;
    }

    pub(crate) fn mss_of(&self, path: usize) -> u64 {
        self.paths[path].cfg.max_datagram_size
    }

    fn live(&self, path: usize) -> bool {
        self.paths[path].active
    }
}

impl MultipathController for CoupledCc {
    fn add_path(&mut self, cfg: &CcConfig) -> usize {
        self.paths.push(PathCc {
            cwnd: cfg.initial_window,
            ssthresh: u64::MAX,
            recovery: RecoveryPeriod::default(),
            credit: 0.0,
            srtt: Dur::ZERO,
            has_rtt: false,
            active: true,
            suspended: false,
            hystart: cfg.hystart.then(|| HyStart::with_rule(cfg.max_datagram_size, cfg.hystart_rule)),
            l1: 0,
            l2: 0,
            before_reduction: None,
            cfg: cfg.clone(),
        });
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

    fn on_packet_sent(&mut self, path: usize, now: Time, _bytes: u64, _bytes_in_flight: u64) {
        let p = &mut self.paths[path];
        if let (true, Some(h)) = (p.active, p.hystart.as_mut()) {
            h.on_packet_sent(now);
        }
    }

    fn on_ack(&mut self, path: usize, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        if !self.live(path) {
            return;
        }
        self.cache_rtt(path, rtt);
        let p = &mut self.paths[path];
        p.l2 += ack.bytes_acked;
        if p.in_recovery(ack.largest_acked_sent) {
            return;
        }
        p.recovery.end();
        let app_limited = p.cfg.app_limited_check && ack.app_limited;
        let in_slow_start = p.cwnd < p.ssthresh;
        let step = match &mut p.hystart {
            Some(h) => h.on_ack_event(now, ack.largest_acked_sent, rtt, in_slow_start, app_limited, p.cwnd),
            None => SlowStartStep::GROW,
        };
        // Slow start is per path and uncoupled (RFC 6356 §3).
        if in_slow_start && !app_limited && step.divisor > 0 {
            p.cwnd += ack.bytes_acked / step.divisor;
        }
        if in_slow_start && step.exit {
            p.ssthresh = p.cwnd;
        }
        if app_limited || in_slow_start {
            return;
        }
        let inc = self.increase(path, ack.bytes_acked);
        let p = &mut self.paths[path];
        p.credit += inc;
        let whole = p.credit.trunc();
        if whole != 0.0 {
            p.credit -= whole;
            let floor = p.cfg.minimum_window;
            let target = p.cwnd as i128 + whole as i128;
            if target <= floor as i128 {
                p.credit = 0.0;
            }
            p.cwnd = target.max(floor as i128).min(u64::MAX as i128) as u64;
            // OLIA's negative term shrinks a window in congestion avoidance; keep the path
            // there instead of letting it slow-start back up to the old threshold.
            p.ssthresh = p.ssthresh.min(p.cwnd);
        }
    }

    fn on_congestion_event(&mut self, path: usize, now: Time, loss: &LossEvent, rtt: &RttEstimator) {
        self.congestion_event(path, now, loss, rtt, None);
    }

    fn on_persistent_congestion(&mut self, path: usize, now: Time) {
        self.persistent_congestion(path, now, None);
    }

    /// mp-quic's `OliaSender.OnRetransmissionTimeout(true)` (`congestion/olia_sender.go`): the
    /// slow-start threshold is half the window, the window the loss window, the recovery over,
    /// and OLIA's loss intervals start afresh (`olia.Reset`).
    fn on_retransmission_timeout(&mut self, path: usize, now: Time) {
        if !self.live(path) {
            return;
        }
        let p = &mut self.paths[path];
        if let Some(h) = &mut p.hystart {
            h.on_timeout(now);
        }
        if p.before_reduction.is_none() {
            p.remember();
        }
        p.ssthresh = (p.cwnd / 2).max(p.cfg.minimum_window);
        p.cwnd = p.cfg.loss_window;
        p.recovery.forget();
        p.credit = 0.0;
        p.l1 = 0;
        p.l2 = 0;
    }

    fn on_spurious_congestion(&mut self, path: usize, _now: Time) {
        if !self.live(path) {
            return;
        }
        let p = &mut self.paths[path];
        if let Some((cwnd, ssthresh, l1, l2)) = p.before_reduction.take() {
            p.cwnd = p.cwnd.max(cwnd);
            p.ssthresh = ssthresh;
            p.recovery.forget();
            p.l2 += l2;
            p.l1 = l1;
        }
    }

    fn on_rtt_sample(&mut self, path: usize, rtt: &RttEstimator) {
        self.cache_rtt(path, rtt);
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
        Some(self.kind)
    }

    fn kind(&self, _path: usize) -> CcKind {
        CcKind::NewReno
    }
}

/// A [`MultipathController`] shared by the loss recoveries of a connection's paths.
pub type SharedMultipath = Arc<Mutex<Box<dyn MultipathController>>>;

/// Wraps `mp` for sharing between [`PathController`]s.
pub fn share(mp: Box<dyn MultipathController>) -> SharedMultipath {
    Arc::new(Mutex::new(mp))
}

/// One path's view of a [`SharedMultipath`]: a single-path [`Controller`] that forwards every
/// event, tagged with its path index, to the shared controller and reads the path's window back
/// from it. A transport built around one controller per path (a loss recovery per path) thus
/// runs coupled congestion control without knowing it: the coupling sees each path's own RTT
/// estimator with its ACKs and losses.
#[derive(Debug)]
pub struct PathController {
    shared: SharedMultipath,
    path: usize,
}

impl PathController {
    /// The view of path `path`, which must have been added to `shared`.
    pub fn new(shared: SharedMultipath, path: usize) -> PathController {
        assert!(path < lock(&shared).path_count(), "path {path} was never added to the multipath controller");
        PathController { shared, path }
    }

    /// The path index it forwards events for.
    pub fn path(&self) -> usize {
        self.path
    }

    /// The connection's shared controller.
    pub fn shared(&self) -> &SharedMultipath {
        &self.shared
    }

    fn mp(&self) -> MutexGuard<'_, Box<dyn MultipathController>> {
        lock(&self.shared)
    }
}

/// The controllers of a connection's paths, one per `configs` entry: the shared multipath
/// controller (coupled by `coupling`, or one uncoupled controller per path) and each path's
/// view of it, in path order. MPTCP subflows and multipath QUIC paths are built alike.
pub fn build_paths(coupling: Option<CoupledKind>, configs: &[CcConfig]) -> (SharedMultipath, Vec<Box<dyn Controller>>) {
    let shared = share(build_multipath(coupling));
    let views = configs
        .iter()
        .map(|cfg| {
            let path = lock(&shared).add_path(cfg);
            Box::new(PathController::new(shared.clone(), path)) as Box<dyn Controller>
        })
        .collect();
    (shared, views)
}

/// Locks a shared controller. The simulator is single-threaded: the lock is never contended,
/// and a poisoned one (a panic while it was held) is still consistent enough to read.
pub fn lock(shared: &SharedMultipath) -> MutexGuard<'_, Box<dyn MultipathController>> {
    shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Controller for PathController {
    fn on_packet_sent(&mut self, now: Time, bytes: u64, bytes_in_flight: u64) {
        self.mp().on_packet_sent(self.path, now, bytes, bytes_in_flight);
    }
    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        self.mp().on_ack(self.path, now, ack, rtt);
    }
    fn on_congestion_event(&mut self, now: Time, loss: &LossEvent, rtt: &RttEstimator) {
        self.mp().on_congestion_event(self.path, now, loss, rtt);
    }
    fn on_persistent_congestion(&mut self, now: Time) {
        self.mp().on_persistent_congestion(self.path, now);
    }
    fn on_retransmission_timeout(&mut self, now: Time) {
        self.mp().on_retransmission_timeout(self.path, now);
    }
    fn on_spurious_congestion(&mut self, now: Time) {
        self.mp().on_spurious_congestion(self.path, now);
    }
    fn on_spurious_loss(&mut self, now: Time, largest_acked_sent: Time, srtt: Dur) {
        self.mp().on_spurious_loss(self.path, now, largest_acked_sent, srtt);
    }
    fn window(&self) -> u64 {
        self.mp().window(self.path)
    }
    fn ssthresh(&self) -> Option<u64> {
        self.mp().ssthresh(self.path)
    }
    fn state(&self) -> CcState {
        self.mp().state(self.path)
    }
    fn pacing_rate(&self) -> Option<Rate> {
        self.mp().pacing_rate(self.path)
    }
    fn needs_pacing(&self) -> bool {
        self.mp().needs_pacing(self.path)
    }
    fn sets_recovery_window(&self) -> bool {
        self.mp().sets_recovery_window(self.path)
    }
    fn kind(&self) -> CcKind {
        self.mp().kind(self.path)
    }
}
