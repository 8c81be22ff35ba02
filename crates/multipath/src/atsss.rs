//! ATSSS steering modes (TS 23.501 §5.32.8, TS 24.193 §5.2; N4 Steering Mode values of TS
//! 29.244 §8.2.125) as schedulers of a multipath transport: the MPTCP and MPQUIC steering
//! functionalities, where 3GPP runs them, steer one MA PDU session over its two accesses, here
//! the connection's two paths. The access that [`AtsssParams::active`] names is the 3GPP
//! access of the rules (the active, high-priority or primary one, or the first share); the
//! other is the non-3GPP one.
//!
//! * [`AtsssActiveStandby`] (Steering Mode 0): everything on the active path while it is
//!   usable, on the standby path only when it is not, and back when it returns. A full window
//!   on the active path is a wait (`Blocked`), not a reason to use the standby: unlike a
//!   backup path under [`crate::scheduler::MinRtt`], which is also unused while the active one
//!   is usable, but unlike min-RTT's spill-over to any path with window space.
//! * [`AtsssSmallestDelay`] (1): the usable path with the smallest smoothed RTT (a path without
//!   an RTT sample first, to measure it); its full window is a wait, never a spill to the other
//!   path (what distinguishes it from min-RTT).
//! * [`AtsssLoadBalancing`] (2): fixed shares of the stream bytes, `share_percent` on the
//!   active path and the rest on the other, by stride scheduling (the path furthest below its
//!   share sends next; a full window there is a wait, so the split holds whatever the paths'
//!   rates). With `rtt_max_ms` (Rel-17 thresholds) a path above it gets no new traffic while
//!   the other is below it.
//! * [`AtsssPriority`] (3): the high-priority path while its window has room, the excess to the
//!   other ("congested": window-limited): min-RTT with a fixed order instead of the RTTs.
//! * [`AtsssRedundant`] (Rel-18): stream content on the primary and a copy on the other path
//!   when its window has room; with `rtt_max_ms`, copied only while the primary's smoothed RTT
//!   exceeds it (the threshold-gated duplication).
//!
//! Control content goes where the mode sends stream content (never duplicated). The modes read
//! no path status (backup): the mode is the steering. Not modelled:
//! packet-loss-rate thresholds, the PMF's own RTT probes (the transport's smoothed RTT stands
//! in) and the autonomous and UE-assisted load-balancing variants.

use serde::{Deserialize, Serialize};

use crate::scheduler::{Content, CopyDelivery, CopyScope, Decision, PathView, Request, Scheduler, SchedulerKind};

/// The parameters of the ATSSS steering modes (`[flow.multipath.options.atsss]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AtsssParams {
    /// The 3GPP access: active-standby's active path, priority-based's high-priority one,
    /// redundant's primary, load-balancing's `share_percent` (path id, 0).
    pub active: usize,
    /// Load-balancing: the share of stream bytes on the active path, % (50).
    pub share_percent: u8,
    /// Rel-17 RTT threshold, ms: load-balancing gives a path above it no new traffic while
    /// the other is below it; redundant copies only while the primary is above it (none).
    pub rtt_max_ms: Option<u32>,
}

impl Default for AtsssParams {
    fn default() -> AtsssParams {
        AtsssParams { active: 0, share_percent: 50, rtt_max_ms: None }
    }
}

impl AtsssParams {
    /// Checks what a scenario may get wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.share_percent > 100 {
            return Err(format!("atsss.share_percent: {} is not a share: 0 to 100", self.share_percent));
        }
        if self.active > 1 {
            return Err(format!("atsss.active: path {} is not one of an MA PDU session's two accesses (0 or 1)", self.active));
        }
        if self.rtt_max_ms == Some(0) {
            return Err("atsss.rtt_max_ms: must be at least 1 ms".into());
        }
        Ok(())
    }
}

/// The two accesses as the modes see them: the active (3GPP) path and the other, each if it
/// is usable.
fn accesses<'a>(paths: &'a [PathView], params: &AtsssParams) -> (Option<&'a PathView>, Option<&'a PathView>) {
    let active = paths.iter().find(|p| p.id == params.active && p.usable);
    // (The lowest such id, whatever the slice's order; a session has one other access.)
    let other = paths.iter().filter(|p| p.id != params.active && p.usable).min_by_key(|p| p.id);
    (active, other)
}

/// Send on `p` if its window has room, else wait.
fn on(p: &PathView) -> Decision {
    if p.has_window_space() {
        Decision::single(p.id)
    } else {
        Decision::Blocked
    }
}

fn above(p: &PathView, rtt_max_ms: Option<u32>) -> bool {
    rtt_max_ms.is_some_and(|ms| p.rtt_sampled && p.srtt.0 > u64::from(ms) * 1_000_000)
}

/// Active-standby (Steering Mode 0).
#[derive(Clone, Debug)]
pub struct AtsssActiveStandby {
    params: AtsssParams,
}

impl AtsssActiveStandby {
    /// The mode with `params`.
    pub fn new(params: AtsssParams) -> AtsssActiveStandby {
        AtsssActiveStandby { params }
    }
}

impl Scheduler for AtsssActiveStandby {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::AtsssActiveStandby
    }
    fn decide(&mut self, paths: &[PathView], _req: &Request) -> Decision {
        match accesses(paths, &self.params) {
            (Some(active), _) => on(active),
            (None, Some(standby)) => on(standby),
            (None, None) => Decision::NoPath,
        }
    }
}

/// Smallest delay (Steering Mode 1).
#[derive(Clone, Debug)]
pub struct AtsssSmallestDelay {
    params: AtsssParams,
}

impl AtsssSmallestDelay {
    /// The mode with `params`.
    pub fn new(params: AtsssParams) -> AtsssSmallestDelay {
        AtsssSmallestDelay { params }
    }
}

impl Scheduler for AtsssSmallestDelay {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::AtsssSmallestDelay
    }
    fn decide(&mut self, paths: &[PathView], _req: &Request) -> Decision {
        let (a, b) = accesses(paths, &self.params);
        // A path not yet measured goes first (the first packet measures it); then the lower
        // smoothed RTT, ties to the lower id.
        let key = |p: &PathView| (p.rtt_sampled, p.srtt, p.id);
        match (a, b) {
            (Some(a), Some(b)) => on(if key(b) < key(a) { b } else { a }),
            (Some(p), None) | (None, Some(p)) => on(p),
            (None, None) => Decision::NoPath,
        }
    }
}

/// Load balancing with fixed shares (Steering Mode 2).
#[derive(Clone, Debug)]
pub struct AtsssLoadBalancing {
    params: AtsssParams,
    /// Stream and control bytes decided so far on the active path and on the other.
    sent: [u64; 2],
}

impl AtsssLoadBalancing {
    /// The mode with `params`.
    pub fn new(params: AtsssParams) -> AtsssLoadBalancing {
        AtsssLoadBalancing { params, sent: [0; 2] }
    }

    /// The bytes decided so far on the active path and the other.
    pub fn sent(&self) -> [u64; 2] {
        self.sent
    }
}

impl Scheduler for AtsssLoadBalancing {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::AtsssLoadBalancing
    }
    fn decide(&mut self, paths: &[PathView], _req: &Request) -> Decision {
        let (a, b) = accesses(paths, &self.params);
        let mut shares = [u64::from(self.params.share_percent), 100 - u64::from(self.params.share_percent)];
        // A path over the RTT threshold gets no new traffic while the other is under it.
        if let (Some(a), Some(b)) = (a, b) {
            let (over_a, over_b) = (above(a, self.params.rtt_max_ms), above(b, self.params.rtt_max_ms));
            if over_a && !over_b {
                shares = [0, 100];
            } else if over_b && !over_a {
                shares = [100, 0];
            }
        }
        let pick = match (a, b) {
            (Some(a), Some(b)) => {
                // Stride scheduling: the path whose bytes after this packet are the smallest
                // multiple of its share (a share of 0 never sends; ties to the active path).
                let after = |k: usize, p: &PathView| (self.sent[k] + p.mss) as u128 * 100 / shares[k].max(1) as u128;
                match shares {
                    [0, _] => (1, b),
                    [_, 0] => (0, a),
                    _ if after(1, b) < after(0, a) => (1, b),
                    _ => (0, a),
                }
            }
            (Some(a), None) => (0, a),
            (None, Some(b)) => (1, b),
            (None, None) => return Decision::NoPath,
        };
        let decision = on(pick.1);
        if decision.path().is_some() {
            self.sent[pick.0] += pick.1.mss;
        }
        decision
    }
}

/// Priority-based (Steering Mode 3).
#[derive(Clone, Debug)]
pub struct AtsssPriority {
    params: AtsssParams,
}

impl AtsssPriority {
    /// The mode with `params`.
    pub fn new(params: AtsssParams) -> AtsssPriority {
        AtsssPriority { params }
    }
}

impl Scheduler for AtsssPriority {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::AtsssPriority
    }
    fn decide(&mut self, paths: &[PathView], _req: &Request) -> Decision {
        let (high, low) = accesses(paths, &self.params);
        match (high, low) {
            (None, None) => Decision::NoPath,
            _ => [high, low].into_iter().flatten().find(|p| p.has_window_space()).map_or(Decision::Blocked, |p| Decision::single(p.id)),
        }
    }
}

/// Redundant (Rel-18): the primary, and a copy on the other path.
#[derive(Clone, Debug)]
pub struct AtsssRedundant {
    params: AtsssParams,
}

impl AtsssRedundant {
    /// The mode with `params`.
    pub fn new(params: AtsssParams) -> AtsssRedundant {
        AtsssRedundant { params }
    }
}

impl Scheduler for AtsssRedundant {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::AtsssRedundant
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        let (primary, other) = accesses(paths, &self.params);
        let Some(primary) = primary.or(other) else { return Decision::NoPath };
        if !primary.has_window_space() {
            return Decision::Blocked;
        }
        let copy = other.filter(|o| {
            o.id != primary.id
                && o.has_window_space()
                && matches!(req.content, Content::Stream { .. })
                && (self.params.rtt_max_ms.is_none() || above(primary, self.params.rtt_max_ms))
        });
        match copy {
            Some(o) => Decision::Send { path: primary.id, copies: vec![o.id], scope: CopyScope::AllStreams, hold_new: false, delivery: CopyDelivery::Now },
            None => Decision::single(primary.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use multiconn_core::{Dur, Time};

    const MS: u64 = 1_000_000;

    fn two(srtt_ms: [u64; 2]) -> Vec<PathView> {
        (0..2).map(|i| PathView::new(i, Dur(srtt_ms[i] * MS), 100_000)).collect()
    }

    fn stream() -> Request {
        Request::new(Time::ZERO, Content::STREAM)
    }

    fn full(mut p: PathView) -> PathView {
        p.bytes_in_flight = p.cwnd;
        p
    }

    #[test]
    fn active_standby_waits_for_the_active_path_and_uses_the_standby_only_without_it() {
        let mut s = AtsssActiveStandby::new(AtsssParams { active: 1, ..AtsssParams::default() });
        let mut paths = two([10, 50]);
        assert_eq!(s.decide(&paths, &stream()), Decision::single(1));
        paths[1] = full(paths[1]);
        assert_eq!(s.decide(&paths, &stream()), Decision::Blocked, "a full active window is a wait, not a spill");
        paths[1].usable = false;
        assert_eq!(s.decide(&paths, &stream()), Decision::single(0));
        paths[0].usable = false;
        assert_eq!(s.decide(&paths, &stream()), Decision::NoPath);
    }

    #[test]
    fn smallest_delay_follows_the_rtt_and_never_spills() {
        let mut s = AtsssSmallestDelay::new(AtsssParams::default());
        let mut paths = two([40, 20]);
        assert_eq!(s.decide(&paths, &stream()), Decision::single(1));
        paths[1] = full(paths[1]);
        assert_eq!(s.decide(&paths, &stream()), Decision::Blocked);
        paths[1].srtt = Dur(60 * MS);
        assert_eq!(s.decide(&paths, &stream()), Decision::single(0));
        // A path without a sample is measured first.
        paths[1] = PathView { rtt_sampled: false, ..PathView::new(1, Dur(333 * MS), 100_000) };
        assert_eq!(s.decide(&paths, &stream()), Decision::single(1));
    }

    #[test]
    fn load_balancing_keeps_its_shares_whatever_the_rtts() {
        for share in [0u8, 10, 50, 70, 100] {
            let mut s = AtsssLoadBalancing::new(AtsssParams { share_percent: share, ..AtsssParams::default() });
            let paths = two([10, 80]);
            let mut counts = [0u64; 2];
            for _ in 0..1000 {
                counts[s.decide(&paths, &stream()).path().unwrap()] += 1;
            }
            assert_eq!(counts[0], 10 * u64::from(share), "share {share}: {counts:?}");
        }
        // The path due next is full: wait, do not send on the other.
        let mut s = AtsssLoadBalancing::new(AtsssParams { share_percent: 50, ..AtsssParams::default() });
        let mut paths = two([10, 10]);
        assert_eq!(s.decide(&paths, &stream()), Decision::single(0));
        paths[1] = full(paths[1]);
        assert_eq!(s.decide(&paths, &stream()), Decision::Blocked);
        // Over the RTT threshold while the other is under it: no new traffic.
        let mut s = AtsssLoadBalancing::new(AtsssParams { share_percent: 50, rtt_max_ms: Some(50), ..AtsssParams::default() });
        let paths = two([80, 20]);
        assert!((0..20).all(|_| s.decide(&paths, &stream()) == Decision::single(1)));
        assert_eq!(s.sent(), [0, 20 * 1200]);
    }

    #[test]
    fn priority_sends_the_excess_to_the_low_priority_path() {
        let mut s = AtsssPriority::new(AtsssParams { active: 1, ..AtsssParams::default() });
        let mut paths = two([10, 90]);
        assert_eq!(s.decide(&paths, &stream()), Decision::single(1), "the high-priority path whatever the RTTs");
        paths[1] = full(paths[1]);
        assert_eq!(s.decide(&paths, &stream()), Decision::single(0));
        paths[0] = full(paths[0]);
        assert_eq!(s.decide(&paths, &stream()), Decision::Blocked);
    }

    #[test]
    fn redundant_copies_on_the_other_path_and_with_a_threshold_only_above_it() {
        let mut s = AtsssRedundant::new(AtsssParams::default());
        let paths = two([30, 10]);
        assert_eq!(s.decide(&paths, &stream()).copies(), &[1]);
        assert_eq!(s.decide(&paths, &stream()).path(), Some(0));
        assert!(s.decide(&paths, &Request::new(Time::ZERO, Content::Control)).copies().is_empty());
        let mut gated = AtsssRedundant::new(AtsssParams { rtt_max_ms: Some(50), ..AtsssParams::default() });
        assert!(gated.decide(&paths, &stream()).copies().is_empty());
        assert_eq!(gated.decide(&two([60, 10]), &stream()).copies(), &[1]);
    }

    #[test]
    fn bad_parameters_are_refused_naming_the_field() {
        assert!(AtsssParams { share_percent: 101, ..AtsssParams::default() }.validate().unwrap_err().contains("share_percent"));
        assert!(AtsssParams { active: 2, ..AtsssParams::default() }.validate().unwrap_err().contains("atsss.active"));
        assert!(AtsssParams { rtt_max_ms: Some(0), ..AtsssParams::default() }.validate().unwrap_err().contains("rtt_max_ms"));
        assert!(AtsssParams::default().validate().is_ok());
    }
}
