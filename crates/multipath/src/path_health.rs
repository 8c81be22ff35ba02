//! Per-path failure detection: a pure state machine fed with what happens on one path (packets
//! sent and received, acknowledgements, retransmission-timer expiries, optional link hints)
//! that says whether the path is `Active`, `PotentiallyFailed` or `Failed`, and what the
//! transport should do about it (requeue the path's in-flight data elsewhere, probe the path).
//!
//! The rules differ between implementations, so they come as [`FailoverProfile`]s
//! (`reference/mpquic-and-transport.md` §2.1, §2.2, §2.4, §2.7 and the summary table §2.8):
//!
//! * **mp-quic** (§2.1, `path.go`): at a retransmission timeout (RTO, after the tail-loss
//!   probes), if nothing was received on the path since the last packet was sent on it, the
//!   path is *potentially failed*: no new data, all its outstanding packets requeued for other
//!   paths, PINGs sent on it. Any packet received on the path makes it active again. The path
//!   is never declared failed by this rule.
//! * **picoquic** (§2.2): every timer-based retransmission (PTO) increments `nb_retransmit`;
//!   with another live path, all packets in flight on the path are declared lost and requeued.
//!   `nb_retransmit > 0` makes the path potentially failed (the scheduler avoids it; a probe is
//!   sent when nothing is in flight); an acknowledgement of a packet sent on it resets the count.
//!   More than 9 repeats while another path is active (`nb_retransmit == 0`) fail the path.
//! * **xquic** (§2.4, `xqc_path_get_perf_class`): a PTO count of 2 or more puts the path in the
//!   LOW performance class, modelled as potentially failed: used only when no active path is
//!   left. The PTO count resets on an acknowledgement (RFC 9002 §6.2.1). XQUIC never fails a
//!   path by itself (its reinjection controllers are off by default, so nothing is requeued).
//! * **linux-mptcp** (§2.7, upstream `stale_loss_cnt`): after 4 consecutive retransmission
//!   timeouts without progress a subflow is *stale* (potentially failed) and its data is
//!   reinjected on the other subflows; progress clears it.
//! * **picoquic-2022** (picoquic at commit 48525d89ef4d, the multi-operator study's; reference
//!   `multi-operator.md` §6.1, `sender.c` `picoquic_retransmit_needed_packet`): each
//!   timer-based loss episode on a path raises `nb_retransmit`; the path's data is declared
//!   lost by its own retransmission timer (the profile's `retransmit_timer = "picoquic-2022"`),
//!   so nothing is requeued here; the path is avoided while another has fewer repeats, probed,
//!   and fails after more than 7 repeats (whatever the other paths' counts). An
//!   acknowledgement of a packet sent on it resets the count.
//! * **linux-mptcp-5.15** (Linux 5.15, reference `multi-operator.md` §6.2; `net/mptcp/pm.c`
//!   `mptcp_pm_subflow_chk_stale`, `pm_netlink.c` `mptcp_pm_nl_subflow_chk_stale`,
//!   `protocol.c` `mptcp_subflow_get_retrans` and `mptcp_subflow_active`): each
//!   retransmission timeout of a subflow with data outstanding and nothing received on it since
//!   the count began raises its stale count; when the count *exceeds* `stale_loss_cnt` (4) and
//!   another active subflow's count is below `max(stale_loss_cnt − 1, 1)`, the subflow is
//!   stale (potentially failed): the scheduler skips it and its data is reinjected. Anything
//!   received on the subflow makes it active again and restarts the count.
//!
//! Choices where the reference is silent: an acknowledgement means "newly acknowledges a packet
//! sent on this path" (RFC 9002 resets `pto_count` only then); a link-down hint from the lower
//! layer makes any profile potentially failed at once with its in-flight data requeued, a
//! link-up hint only asks for a probe (the path turns active on the next reception or
//! acknowledgement); the optional idle timeout (picoquic's idle demotion, noq's per-path idle
//! timeout) fails a path on which nothing was received for that long; `Failed` is final and
//! also reached by [`PathHealth::abandon`]. [`PathHealthSet`] holds the paths of one connection
//! and supplies the cross-path conditions picoquic needs.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use multiconn_core::{Dur, Time};
use serde::{Deserialize, Serialize};

/// Whose failure-detection rules to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FailoverProfile {
    /// mp-quic (`path.go`): potentially failed at an RTO with nothing received since the last
    /// send, its packets requeued; never failed.
    #[serde(rename = "mp-quic")]
    MpQuic,
    /// picoquic: each PTO makes the path potentially failed and, with another live path,
    /// requeues its packets; failed after more than [`PICOQUIC_MAX_TIMER_REPEATS`] repeats while
    /// another path is active.
    #[serde(rename = "picoquic")]
    Picoquic,
    /// XQUIC (`xqc_path_get_perf_class`): [`XQUIC_PTO_THRESHOLD`] PTOs put the path in the LOW
    /// class (potentially failed); never failed, nothing requeued.
    #[serde(rename = "xquic")]
    Xquic,
    /// Linux MPTCP (upstream `stale_loss_cnt`): stale after [`MPTCP_STALE_LOSS_CNT`]
    /// retransmission timeouts without progress, its data reinjected.
    #[serde(rename = "linux-mptcp")]
    LinuxMptcp,
    /// picoquic at 48525d89ef4d: the path's own timer declares its packets lost; failed after
    /// more than [`PICOQUIC_2022_MAX_TIMER_REPEATS`] loss episodes.
    #[serde(rename = "picoquic-2022")]
    Picoquic2022,
    /// Linux 5.15 MPTCP (`mptcp_pm_subflow_chk_stale`): stale once its timeout count exceeds
    /// `stale_loss_cnt` while another active subflow's is below `max(stale_loss_cnt − 1, 1)`;
    /// any reception clears it.
    #[serde(rename = "linux-mptcp-5.15")]
    LinuxMptcp515,
}

impl FailoverProfile {
    /// Every profile, in declaration order.
    pub const ALL: [FailoverProfile; 6] = [
        FailoverProfile::MpQuic,
        FailoverProfile::Picoquic,
        FailoverProfile::Xquic,
        FailoverProfile::LinuxMptcp,
        FailoverProfile::Picoquic2022,
        FailoverProfile::LinuxMptcp515,
    ];

    /// The name used in scenario files (same as the serde name).
    pub fn name(self) -> &'static str {
        match self {
            FailoverProfile::MpQuic => "mp-quic",
            FailoverProfile::Picoquic => "picoquic",
            FailoverProfile::Xquic => "xquic",
            FailoverProfile::LinuxMptcp => "linux-mptcp",
            FailoverProfile::Picoquic2022 => "picoquic-2022",
            FailoverProfile::LinuxMptcp515 => "linux-mptcp-5.15",
        }
    }
}

impl fmt::Display for FailoverProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown failover profile name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown failover profile \"{0}\"; expected one of mp-quic, picoquic, xquic, linux-mptcp, picoquic-2022, linux-mptcp-5.15")]
pub struct UnknownProfile(pub String);

impl FromStr for FailoverProfile {
    type Err = UnknownProfile;
    fn from_str(s: &str) -> Result<FailoverProfile, UnknownProfile> {
        FailoverProfile::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| UnknownProfile(s.to_string()))
    }
}

/// Health of one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathStatus {
    /// Working: carries new data.
    Active,
    /// Suspected broken: avoided by the scheduler (see [`PathHealthSet::usable`]), probed.
    PotentiallyFailed,
    /// Failed or abandoned; final.
    Failed,
}

/// picoquic: a path fails after more than this many consecutive timer-based repeats
/// (`nb_retransmit > 9`, reference §2.2).
pub const PICOQUIC_MAX_TIMER_REPEATS: u32 = 9;
/// picoquic of early 2022: a path fails after more than this many timer-based loss episodes
/// (`nb_retransmit > 7` in `sender.c` at 48525d89ef4d).
pub const PICOQUIC_2022_MAX_TIMER_REPEATS: u32 = 7;
/// XQUIC: `pto_cnt_thr`, the PTO count that puts a path in the LOW class (reference §2.4).
pub const XQUIC_PTO_THRESHOLD: u32 = 2;
/// Linux MPTCP: `net.mptcp.stale_loss_cnt` default (reference §2.7).
pub const MPTCP_STALE_LOSS_CNT: u32 = 4;

/// A profile and its thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HealthConfig {
    /// Whose rules apply.
    pub profile: FailoverProfile,
    /// picoquic: fail after more than this many repeats.
    pub max_timer_repeats: u32,
    /// xquic: timeouts that make the path potentially failed.
    pub pto_threshold: u32,
    /// linux-mptcp: timeouts that make the subflow stale.
    pub stale_loss_cnt: u32,
    /// Fail a path on which nothing was received for this long (off when `None`).
    pub idle_timeout: Option<Dur>,
}

impl HealthConfig {
    /// The profile with its published thresholds and no idle timeout.
    pub fn new(profile: FailoverProfile) -> HealthConfig {
        HealthConfig {
            profile,
            max_timer_repeats: if profile == FailoverProfile::Picoquic2022 { PICOQUIC_2022_MAX_TIMER_REPEATS } else { PICOQUIC_MAX_TIMER_REPEATS },
            pto_threshold: XQUIC_PTO_THRESHOLD,
            stale_loss_cnt: MPTCP_STALE_LOSS_CNT,
            idle_timeout: None,
        }
    }
}

/// What the transport should do after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Reaction {
    /// `(before, after)` when the status changed.
    pub transition: Option<(PathStatus, PathStatus)>,
    /// Declare every packet in flight on this path lost and requeue its frames so that other
    /// paths can carry them.
    pub requeue_in_flight: bool,
    /// Send a probe (PING) on this path.
    pub probe: bool,
}

/// The other paths of the connection, as seen when a timer fires (picoquic's conditions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Peers {
    /// Other paths that are `Active`.
    pub active: usize,
    /// Other paths that are not `Failed`.
    pub alive: usize,
    /// Other paths that are `Active` with fewer than `max(stale_loss_cnt − 1, 1)` consecutive
    /// timeouts (Linux 5.15's alternative to a stale subflow).
    pub fresh: usize,
}

/// Failure detection for one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathHealth {
    cfg: HealthConfig,
    status: PathStatus,
    /// Consecutive timeouts without progress (picoquic `nb_retransmit`, XQUIC `pto_count`,
    /// MPTCP retransmission intervals).
    timeouts: u32,
    last_sent: Option<Time>,
    last_received: Option<Time>,
    /// Something arrived on the path since the last packet was sent on it (mp-quic).
    received_since_send: bool,
    /// Start of the idle clock when nothing was received yet.
    created: Time,
}

impl PathHealth {
    /// A path `Active` from `now`, when its idle clock starts.
    pub fn new(cfg: HealthConfig, now: Time) -> PathHealth {
        PathHealth {
            cfg,
            status: PathStatus::Active,
            timeouts: 0,
            last_sent: None,
            last_received: None,
            received_since_send: false,
            created: now,
        }
    }

    /// Current health.
    pub fn status(&self) -> PathStatus {
        self.status
    }
    /// The profile and thresholds it follows.
    pub fn config(&self) -> &HealthConfig {
        &self.cfg
    }
    /// Consecutive timeouts without progress.
    pub fn consecutive_timeouts(&self) -> u32 {
        self.timeouts
    }
    /// When a packet last arrived on the path (`None`: never).
    pub fn last_received(&self) -> Option<Time> {
        self.last_received
    }

    fn set(&mut self, to: PathStatus) -> Option<(PathStatus, PathStatus)> {
        let from = self.status;
        if from == to {
            None
        } else {
            self.status = to;
            Some((from, to))
        }
    }

    /// An ack-eliciting packet left on this path.
    pub fn on_packet_sent(&mut self, now: Time) -> Reaction {
        if self.status == PathStatus::Failed {
            return Reaction::default();
        }
        self.last_sent = Some(now);
        self.received_since_send = false;
        Reaction::default()
    }

    /// A packet arrived on this path (whatever it carried).
    pub fn on_packet_received(&mut self, now: Time) -> Reaction {
        if self.status == PathStatus::Failed {
            return Reaction::default();
        }
        self.last_received = Some(now);
        self.received_since_send = true;
        let mut r = Reaction::default();
        if matches!(self.cfg.profile, FailoverProfile::MpQuic | FailoverProfile::LinuxMptcp515) {
            self.timeouts = 0;
            r.transition = self.set(PathStatus::Active);
        }
        r
    }

    /// An acknowledgement (arriving on any path) newly acknowledged at least one packet sent on
    /// this path: the path makes progress.
    pub fn on_ack_received(&mut self, _now: Time) -> Reaction {
        if self.status == PathStatus::Failed {
            return Reaction::default();
        }
        let mut r = Reaction::default();
        if !matches!(self.cfg.profile, FailoverProfile::MpQuic | FailoverProfile::LinuxMptcp515) {
            // mp-quic clears the flag on reception on the path itself, not on acknowledgements
            // that may come back over another path; Linux 5.15 on any reception on the
            // subflow.
            self.timeouts = 0;
            r.transition = self.set(PathStatus::Active);
        }
        r
    }

    /// The path's retransmission timer fired: the RTO for mp-quic (report it only after the
    /// tail-loss probes) and Linux MPTCP, the PTO for picoquic and XQUIC. `peers` describes the
    /// connection's other paths.
    pub fn on_timeout(&mut self, _now: Time, peers: Peers) -> Reaction {
        if self.status == PathStatus::Failed {
            return Reaction::default();
        }
        self.timeouts = self.timeouts.saturating_add(1);
        let mut r = Reaction::default();
        match self.cfg.profile {
            FailoverProfile::MpQuic => {
                if self.last_sent.is_some() && !self.received_since_send {
                    r.transition = self.set(PathStatus::PotentiallyFailed);
                    r.requeue_in_flight = true;
                    r.probe = true;
                }
            }
            FailoverProfile::Picoquic => {
                r.requeue_in_flight = peers.alive > 0;
                r.probe = true;
                if self.timeouts > self.cfg.max_timer_repeats && peers.active > 0 {
                    r.transition = self.set(PathStatus::Failed);
                    r.probe = false;
                } else {
                    r.transition = self.set(PathStatus::PotentiallyFailed);
                }
            }
            FailoverProfile::Xquic => {
                if self.timeouts >= self.cfg.pto_threshold {
                    r.transition = self.set(PathStatus::PotentiallyFailed);
                }
            }
            FailoverProfile::LinuxMptcp => {
                if self.timeouts >= self.cfg.stale_loss_cnt {
                    r.transition = self.set(PathStatus::PotentiallyFailed);
                    r.requeue_in_flight = true;
                }
            }
            FailoverProfile::Picoquic2022 => {
                // The timer declared the path's packets lost itself: nothing to requeue.
                r.probe = true;
                if self.timeouts > self.cfg.max_timer_repeats && peers.alive > 0 {
                    r.transition = self.set(PathStatus::Failed);
                    r.probe = false;
                } else {
                    r.transition = self.set(PathStatus::PotentiallyFailed);
                }
            }
            FailoverProfile::LinuxMptcp515 => {
                if self.status == PathStatus::Active && self.timeouts > self.cfg.stale_loss_cnt && peers.fresh > 0 {
                    r.transition = self.set(PathStatus::PotentiallyFailed);
                    r.requeue_in_flight = true;
                }
            }
        }
        r
    }

    /// The lower layer reports the link under this path down (optional; e.g. an interface
    /// event). Any profile: potentially failed at once, in-flight data requeued.
    pub fn on_link_down_hint(&mut self, _now: Time) -> Reaction {
        if self.status == PathStatus::Failed {
            return Reaction::default();
        }
        Reaction { transition: self.set(PathStatus::PotentiallyFailed), requeue_in_flight: true, probe: false }
    }

    /// The lower layer reports the link up again: probe it; it turns active on the next
    /// reception (mp-quic) or acknowledgement (the others).
    pub fn on_link_up_hint(&mut self, _now: Time) -> Reaction {
        if self.status == PathStatus::Failed {
            return Reaction::default();
        }
        Reaction { transition: None, requeue_in_flight: false, probe: self.status == PathStatus::PotentiallyFailed }
    }

    /// The path is abandoned (PATH_ABANDON sent or received, subflow closed).
    pub fn abandon(&mut self, _now: Time) -> Reaction {
        if self.status == PathStatus::Failed {
            return Reaction::default();
        }
        Reaction { transition: self.set(PathStatus::Failed), requeue_in_flight: true, probe: false }
    }

    /// When the idle timeout would fail the path.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.status == PathStatus::Failed {
            return None;
        }
        let idle = self.cfg.idle_timeout?;
        Some(self.last_received.unwrap_or(self.created) + idle)
    }

    /// Time passed: applies the idle timeout.
    pub fn on_tick(&mut self, now: Time) -> Reaction {
        match self.poll_timeout() {
            Some(deadline) if now >= deadline => {
                Reaction { transition: self.set(PathStatus::Failed), requeue_in_flight: true, probe: false }
            }
            _ => Reaction::default(),
        }
    }
}

/// The paths of one connection, keyed by path id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathHealthSet {
    cfg: HealthConfig,
    paths: BTreeMap<usize, PathHealth>,
}

impl PathHealthSet {
    /// No paths yet; each path added follows `cfg`.
    pub fn new(cfg: HealthConfig) -> PathHealthSet {
        PathHealthSet { cfg, paths: BTreeMap::new() }
    }

    /// Starts watching path `id` (validated and open). Replaces any earlier state.
    pub fn add_path(&mut self, id: usize, now: Time) {
        self.paths.insert(id, PathHealth::new(self.cfg, now));
    }
    /// Forgets path `id` (its state was deleted).
    pub fn remove_path(&mut self, id: usize) {
        self.paths.remove(&id);
    }
    /// Path `id`'s state, if watched.
    pub fn get(&self, id: usize) -> Option<&PathHealth> {
        self.paths.get(&id)
    }
    /// Path `id`'s health, if watched.
    pub fn status(&self, id: usize) -> Option<PathStatus> {
        self.paths.get(&id).map(|p| p.status)
    }
    /// Path ids, ascending.
    pub fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.paths.keys().copied()
    }

    fn peers_of(&self, id: usize) -> Peers {
        let mut peers = Peers::default();
        let fresh_below = self.cfg.stale_loss_cnt.saturating_sub(1).max(1);
        for (_, p) in self.paths.iter().filter(|(k, _)| **k != id) {
            peers.active += usize::from(p.status == PathStatus::Active);
            peers.alive += usize::from(p.status != PathStatus::Failed);
            peers.fresh += usize::from(p.status == PathStatus::Active && p.timeouts < fresh_below);
        }
        peers
    }

    fn with(&mut self, id: usize, f: impl FnOnce(&mut PathHealth) -> Reaction) -> Reaction {
        self.paths.get_mut(&id).map(f).unwrap_or_default()
    }

    /// An ack-eliciting packet left on path `id` ([`PathHealth::on_packet_sent`]). Here and
    /// below, an unwatched path gets no reaction.
    pub fn on_packet_sent(&mut self, id: usize, now: Time) -> Reaction {
        self.with(id, |p| p.on_packet_sent(now))
    }
    /// A packet arrived on path `id` ([`PathHealth::on_packet_received`]).
    pub fn on_packet_received(&mut self, id: usize, now: Time) -> Reaction {
        self.with(id, |p| p.on_packet_received(now))
    }
    /// A packet sent on path `id` was newly acknowledged ([`PathHealth::on_ack_received`]).
    pub fn on_ack_received(&mut self, id: usize, now: Time) -> Reaction {
        self.with(id, |p| p.on_ack_received(now))
    }
    /// Path `id`'s retransmission timer fired ([`PathHealth::on_timeout`], the other paths
    /// being its [`Peers`]).
    pub fn on_timeout(&mut self, id: usize, now: Time) -> Reaction {
        let peers = self.peers_of(id);
        self.with(id, |p| p.on_timeout(now, peers))
    }
    /// The link under path `id` went down ([`PathHealth::on_link_down_hint`]).
    pub fn on_link_down_hint(&mut self, id: usize, now: Time) -> Reaction {
        self.with(id, |p| p.on_link_down_hint(now))
    }
    /// The link under path `id` came back ([`PathHealth::on_link_up_hint`]).
    pub fn on_link_up_hint(&mut self, id: usize, now: Time) -> Reaction {
        self.with(id, |p| p.on_link_up_hint(now))
    }
    /// Path `id` is abandoned ([`PathHealth::abandon`]).
    pub fn abandon(&mut self, id: usize, now: Time) -> Reaction {
        self.with(id, |p| p.abandon(now))
    }

    /// May the scheduler put new data on path `id` (its [`crate::scheduler::PathView::usable`]
    /// as far as health goes)?
    ///
    /// * mp-quic: only when `Active` (when every path is potentially failed nothing but probes
    ///   is sent, as in mp-quic).
    /// * picoquic, picoquic-2022: not `Failed`, and no other live path has fewer consecutive timeouts
    ///   (picoquic keeps the candidates with the minimal `nb_retransmit`).
    /// * xquic, linux-mptcp, linux-mptcp-5.15: `Active`, or potentially failed when no path is `Active` (LOW class
    ///   searched last; stale subflows used when nothing else is left).
    pub fn usable(&self, id: usize) -> bool {
        let Some(p) = self.paths.get(&id) else { return false };
        match p.status {
            PathStatus::Failed => false,
            PathStatus::Active => true,
            PathStatus::PotentiallyFailed => match self.cfg.profile {
                FailoverProfile::MpQuic => false,
                FailoverProfile::Picoquic | FailoverProfile::Picoquic2022 => {
                    self.paths.values().filter(|q| q.status != PathStatus::Failed).all(|q| q.timeouts >= p.timeouts)
                }
                FailoverProfile::Xquic | FailoverProfile::LinuxMptcp | FailoverProfile::LinuxMptcp515 => {
                    !self.paths.values().any(|q| q.status == PathStatus::Active)
                }
            },
        }
    }

    /// Every path has failed (picoquic then closes the connection).
    pub fn all_failed(&self) -> bool {
        self.paths.values().all(|p| p.status == PathStatus::Failed)
    }

    /// The earliest idle deadline.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.paths.values().filter_map(|p| p.poll_timeout()).min()
    }

    /// Time passed: the paths whose idle timeout expired, ascending ids.
    pub fn on_tick(&mut self, now: Time) -> Vec<(usize, Reaction)> {
        let mut out = Vec::new();
        for (id, p) in self.paths.iter_mut() {
            let r = p.on_tick(now);
            if r != Reaction::default() {
                out.push((*id, r));
            }
        }
        out
    }
}
