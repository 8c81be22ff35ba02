//! The path manager's plan: when each path of a multipath connection is opened, abandoned or
//! has its status changed, from the scenario's schedule (`{at, path, action}`) and from the
//! reaction to links going down and up.
//!
//! `path` here is a scenario path — a pair of attachments the connection can use, e.g. "LTE" —
//! while the transport's path IDs (draft-ietf-quic-multipath-21 §1.3 of the reference: path
//! IDs are never reused; MPTCP subflows likewise start afresh on a rejoin) are allocated here,
//! one per opening, in the order the openings happen: the first path opened gets path ID 0 (the
//! handshake path). Re-opening a scenario path after an abandonment therefore yields a new
//! path ID.
//!
//! Reaction to a link going down ([`LinkReaction`], after `detect_delay`):
//! * `none`: nothing — the transport's own failure detection ([`crate::path_health`]) acts;
//! * `abandon_reopen`: abandon the path (PATH_ABANDON, reference §1.7); when the link is up
//!   again (after `detect_delay`), open a new path ID on it (§1.5);
//! * `standby`: mark the path backup (PATH_STATUS_BACKUP, §1.6) and available again when the
//!   link is back (unless the schedule made it backup).
//!
//! A reaction is decided when it falls due, on the state at that moment: a link that came back
//! before the down-reaction was due causes nothing. Scheduled actions run as written; a
//! scheduled `abandon` of a path the reaction already abandoned cancels the pending re-open.
//!
//! Sans-IO: feed link events with [`PathManager::on_link_down`] / [`PathManager::on_link_up`],
//! ask [`PathManager::poll_timeout`] when something is due (or [`PathManager::next_action`]
//! for the next item that causes an action) and take due actions with
//! [`PathManager::poll_action`]. [`plan`] does all of it for a known list of link events.
//! Ties: actions due at the same time run in the order they were queued (scheduled actions in
//! file order first, since they are queued at creation).

use std::collections::BTreeMap;

use multiconn_core::{Dur, Time};
use serde::{Deserialize, Serialize};

/// What the schedule can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduledAction {
    /// Open the path (a new path ID).
    Open,
    /// Abandon the path.
    Abandon,
    /// Set its status to backup.
    Backup,
    /// Set its status to available.
    Available,
}

impl ScheduledAction {
    /// Its name in a schedule (`"open"`, `"abandon"`, `"backup"`, `"available"`).
    pub fn name(self) -> &'static str {
        match self {
            ScheduledAction::Open => "open",
            ScheduledAction::Abandon => "abandon",
            ScheduledAction::Backup => "backup",
            ScheduledAction::Available => "available",
        }
    }
}

/// One entry of the scenario's path schedule: `{ at = "2 s", path = 1, action = "abandon" }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathEvent {
    /// Time since the start of the run.
    pub at: Dur,
    /// Scenario path index.
    pub path: usize,
    /// What is done to it.
    pub action: ScheduledAction,
}

/// What to do when the link under a path goes down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkReaction {
    /// Nothing: the transport's own failure detection ([`crate::path_health`]) acts.
    #[default]
    None,
    /// Abandon the path (PATH_ABANDON); open a new path ID on it when the link is back.
    AbandonReopen,
    /// Mark the path backup (PATH_STATUS_BACKUP); available again when the link is back.
    Standby,
}

/// The reaction policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ManagerConfig {
    /// What to do when the link under a path goes down.
    pub on_link_down: LinkReaction,
    /// Time from a link change to the reaction (detection by the lower layer).
    pub detect_delay: Dur,
}

/// An action for the transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Open path `path_id` on the scenario path, with this initial status.
    Open {
        /// The new path ID (never reused).
        path_id: u64,
        /// Backup (PATH_STATUS_BACKUP) rather than available.
        backup: bool,
    },
    /// Abandon path `path_id`.
    Abandon {
        /// The path ID abandoned.
        path_id: u64,
    },
    /// Announce the status of path `path_id`.
    SetStatus {
        /// The path ID whose status changes.
        path_id: u64,
        /// Backup (PATH_STATUS_BACKUP) rather than available (PATH_STATUS_AVAILABLE).
        backup: bool,
    },
}

/// An action due at `at` on scenario path `path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Planned {
    /// When it is due.
    pub at: Time,
    /// Scenario path index.
    pub path: usize,
    /// What the transport does.
    pub action: Action,
}

/// A schedule that cannot be run. `index` is the entry's position in the schedule given to
/// [`PathManager::new`]; the message says what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// An opening of a path that is open at that time.
    #[error("\"open\" at {} s but path {path} is already open then", at.as_secs_f64())]
    AlreadyOpen {
        /// The entry's position in the schedule.
        index: usize,
        /// The entry's time since the start of the run.
        at: Dur,
        /// Scenario path index.
        path: usize,
        /// The action asked for.
        action: ScheduledAction,
    },
    /// An action other than opening on a path that is not open at that time.
    #[error("\"{}\" at {} s but path {path} is not open then", action.name(), at.as_secs_f64())]
    NotOpen {
        /// The entry's position in the schedule.
        index: usize,
        /// The entry's time since the start of the run.
        at: Dur,
        /// Scenario path index.
        path: usize,
        /// The action asked for.
        action: ScheduledAction,
    },
    /// An abandonment of the last open path: the connection needs one.
    #[error("\"abandon\" at {} s would leave no path open (the connection needs one; open another path first)", at.as_secs_f64())]
    NoPathLeft {
        /// The entry's position in the schedule.
        index: usize,
        /// The entry's time since the start of the run.
        at: Dur,
        /// Scenario path index.
        path: usize,
    },
}

impl PlanError {
    /// The position of the entry in the schedule.
    pub fn index(&self) -> usize {
        match *self {
            PlanError::AlreadyOpen { index, .. } | PlanError::NotOpen { index, .. } | PlanError::NoPathLeft { index, .. } => index,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Intent {
    Scheduled(ScheduledAction),
    LinkDown,
    LinkUp,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PathState {
    /// The path ID in use, when open.
    open: Option<u64>,
    /// Backup as the schedule wants it.
    configured_backup: bool,
    /// Backup because the link is down (standby reaction).
    forced_standby: bool,
    /// Abandoned by the reaction: open a new path ID when the link is up.
    reopen_on_up: bool,
    link_down: bool,
}

impl PathState {
    fn backup(&self) -> bool {
        self.configured_backup || self.forced_standby
    }
}

/// The path manager of one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathManager {
    cfg: ManagerConfig,
    /// Pending intents by (due time, insertion sequence).
    queue: BTreeMap<(Time, u64), (usize, Intent)>,
    seq: u64,
    paths: BTreeMap<usize, PathState>,
    next_path_id: u64,
}

impl PathManager {
    /// Checks the schedule (per path: open only when closed, the rest only when open; an
    /// abandonment leaves some path open; in time order, entries at the same time in file
    /// order) and queues it.
    pub fn new(cfg: ManagerConfig, schedule: &[PathEvent]) -> Result<PathManager, PlanError> {
        let mut order: Vec<usize> = (0..schedule.len()).collect();
        order.sort_by_key(|&i| (schedule[i].at, i));
        let mut open: BTreeMap<usize, bool> = BTreeMap::new();
        for &i in &order {
            let e = schedule[i];
            let is_open = open.entry(e.path).or_insert(false);
            match (e.action, *is_open) {
                (ScheduledAction::Open, true) => return Err(PlanError::AlreadyOpen { index: i, at: e.at, path: e.path, action: e.action }),
                (ScheduledAction::Open, false) => *is_open = true,
                (_, false) => return Err(PlanError::NotOpen { index: i, at: e.at, path: e.path, action: e.action }),
                (ScheduledAction::Abandon, true) => {
                    *is_open = false;
                    if !open.values().any(|&o| o) {
                        return Err(PlanError::NoPathLeft { index: i, at: e.at, path: e.path });
                    }
                }
                (_, true) => {}
            }
        }
        let mut m = PathManager { cfg, queue: BTreeMap::new(), seq: 0, paths: BTreeMap::new(), next_path_id: 0 };
        for &i in &order {
            let e = schedule[i];
            m.push(Time(e.at.0), e.path, Intent::Scheduled(e.action));
        }
        Ok(m)
    }

    fn push(&mut self, at: Time, path: usize, intent: Intent) {
        self.queue.insert((at, self.seq), (path, intent));
        self.seq += 1;
    }

    /// The path ID currently open on scenario path `path`.
    pub fn path_id(&self, path: usize) -> Option<u64> {
        self.paths.get(&path).and_then(|s| s.open)
    }

    /// The link under scenario path `path` went down at `now`.
    pub fn on_link_down(&mut self, now: Time, path: usize) {
        self.paths.entry(path).or_default().link_down = true;
        if self.cfg.on_link_down != LinkReaction::None {
            self.push(now + self.cfg.detect_delay, path, Intent::LinkDown);
        }
    }

    /// The link under scenario path `path` came back at `now`.
    pub fn on_link_up(&mut self, now: Time, path: usize) {
        self.paths.entry(path).or_default().link_down = false;
        if self.cfg.on_link_down != LinkReaction::None {
            self.push(now + self.cfg.detect_delay, path, Intent::LinkUp);
        }
    }

    /// When the next pending item falls due (it may turn out to cause no action).
    pub fn poll_timeout(&self) -> Option<Time> {
        self.queue.keys().next().map(|(t, _)| *t)
    }

    /// The next action the manager will take if no link changes before it: a driver that
    /// wakes only for actions (not for pending items that turn out to cause none) schedules
    /// its wake-up here, and asks again after feeding a link change.
    pub fn next_action(&self) -> Option<Planned> {
        let mut m = self.clone();
        while let Some(at) = m.poll_timeout() {
            if let Some(p) = m.poll_action(at) {
                return Some(p);
            }
        }
        None
    }

    /// The next action due at or before `now`, applied to the manager's state.
    pub fn poll_action(&mut self, now: Time) -> Option<Planned> {
        while let Some((&(at, seq), _)) = self.queue.iter().next() {
            if at > now {
                return None;
            }
            let (path, intent) = self.queue.remove(&(at, seq)).expect("key just seen");
            if let Some(action) = self.apply(path, intent) {
                return Some(Planned { at, path, action });
            }
        }
        None
    }

    fn open(&mut self, path: usize) -> Action {
        let path_id = self.next_path_id;
        self.next_path_id += 1;
        let s = self.paths.entry(path).or_default();
        s.open = Some(path_id);
        s.reopen_on_up = false;
        Action::Open { path_id, backup: s.backup() }
    }

    fn apply(&mut self, path: usize, intent: Intent) -> Option<Action> {
        let reaction = self.cfg.on_link_down;
        let s = *self.paths.entry(path).or_default();
        match intent {
            Intent::Scheduled(ScheduledAction::Open) => {
                if s.open.is_some() {
                    return None;
                }
                Some(self.open(path))
            }
            Intent::Scheduled(ScheduledAction::Abandon) => {
                let st = self.paths.entry(path).or_default();
                st.reopen_on_up = false;
                let id = st.open.take()?;
                Some(Action::Abandon { path_id: id })
            }
            Intent::Scheduled(a @ (ScheduledAction::Backup | ScheduledAction::Available)) => {
                let st = self.paths.entry(path).or_default();
                let before = st.backup();
                st.configured_backup = a == ScheduledAction::Backup;
                let id = st.open?;
                (st.backup() != before).then_some(Action::SetStatus { path_id: id, backup: st.backup() })
            }
            Intent::LinkDown => {
                if !s.link_down {
                    return None;
                }
                let st = self.paths.entry(path).or_default();
                let id = st.open?;
                match reaction {
                    LinkReaction::None => None,
                    LinkReaction::AbandonReopen => {
                        st.open = None;
                        st.reopen_on_up = true;
                        Some(Action::Abandon { path_id: id })
                    }
                    LinkReaction::Standby => {
                        let before = st.backup();
                        st.forced_standby = true;
                        (st.backup() != before).then_some(Action::SetStatus { path_id: id, backup: true })
                    }
                }
            }
            Intent::LinkUp => {
                if s.link_down {
                    return None;
                }
                match reaction {
                    LinkReaction::None => None,
                    LinkReaction::AbandonReopen => {
                        if s.reopen_on_up && s.open.is_none() {
                            Some(self.open(path))
                        } else {
                            None
                        }
                    }
                    LinkReaction::Standby => {
                        let st = self.paths.entry(path).or_default();
                        if !st.forced_standby {
                            return None;
                        }
                        st.forced_standby = false;
                        let id = st.open?;
                        (!st.backup()).then_some(Action::SetStatus { path_id: id, backup: false })
                    }
                }
            }
        }
    }
}

/// A link change known in advance (from the scenario's up/down windows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkChange {
    /// When the link changes.
    pub at: Time,
    /// Scenario path index.
    pub path: usize,
    /// The link comes up (`true`) or goes down.
    pub up: bool,
}

/// The whole timeline: the schedule plus the reactions to `links` (any order; at equal times
/// a link change is seen before the actions due at that time are taken).
pub fn plan(cfg: ManagerConfig, schedule: &[PathEvent], links: &[LinkChange]) -> Result<Vec<Planned>, PlanError> {
    let mut m = PathManager::new(cfg, schedule)?;
    let mut links = links.to_vec();
    links.sort_by_key(|l| l.at); // stable: equal times keep their order
    let mut out = Vec::new();
    let mut next_link = 0;
    loop {
        let t_link = links.get(next_link).map(|l| l.at);
        let t_action = m.poll_timeout();
        let link_first = match (t_link, t_action) {
            (None, None) => break,
            (Some(tl), Some(ta)) => tl <= ta,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        if link_first {
            let l = links[next_link];
            next_link += 1;
            if l.up {
                m.on_link_up(l.at, l.path);
            } else {
                m.on_link_down(l.at, l.path);
            }
        } else if let Some(ta) = t_action {
            // Everything due at `ta` (a pending item may produce no action).
            while let Some(p) = m.poll_action(ta) {
                out.push(p);
            }
        }
    }
    Ok(out)
}
