//! Multipath: the `[flow.multipath]` table of a flow with several paths — scheduler, ACK
//! path, failover, coupling — and the client's path manager (its schedule and link-down
//! reaction). The schedule's rules are the manager's own
//! ([`PathManager::new`](multiconn_multipath::PathManager::new)); this module adds what only the
//! scenario knows (how many paths the flow has, path 0 carries the handshake) and maps the
//! manager's errors to the entry's field path.

use super::errors::{err, FieldError};
use crate::schema::{FlowSection, MultipathSection, Transport};
use multiconn_core::Dur;
use multiconn_multipath::{LinkReaction, ManagerConfig, PathEvent, PathManager, ScheduledAction};
use multiconn_transport::{AckPath, FailoverProfile, MultipathParams, Profile, SchedulerKind};

/// The client's path manager of a multipath QUIC flow.
#[derive(Debug, Clone, PartialEq)]
pub struct PathManagerSpec {
    /// The schedule as the manager runs it: an opening at 0 s of every path open from the
    /// start, in path order (the connection opens those itself, with path IDs 0, 1, ...), then
    /// the scenario's entries.
    pub schedule: Vec<PathEvent>,
    /// The reaction to links going down, and its detection delay.
    pub config: ManagerConfig,
    /// How many of the schedule's first entries are those openings.
    pub opened_with_connection: usize,
}

/// The `multipath` table of a flow with `paths` paths, and its path manager if it has a
/// schedule or a link-down reaction. What the table leaves out comes from the stack profile's
/// `[multipath]` table, else from the transport's defaults.
pub(super) fn resolve_multipath(f: &FlowSection, paths: usize, profile: &Profile) -> Result<(MultipathParams, Option<PathManagerSpec>), FieldError> {
    let m = f.multipath.clone().unwrap_or_default();
    let options = m.options.unwrap_or_default();
    options.validate().map_err(|e| {
        // The message starts with the field it is about ("rr_packets_per_turn must ...").
        let fields = ["redundant_min_paths", "rr_packets_per_turn", "blest", "ecf_beta_permille", "atsss"];
        let mut at = vec!["flow", f.name.as_str(), "multipath", "options"];
        if let Some(field) = fields.iter().find(|k| e.0.starts_with(*k)) {
            at.push(field);
        }
        err(&at, e.0)
    })?;
    let at = |field: &'static str| vec!["flow", f.name.as_str(), "multipath", field];
    match f.transport {
        Transport::Quic => {}
        Transport::Tcp => {
            for (field, set) in [("schedule", m.schedule.is_some()), ("on_link_down", m.on_link_down.is_some()), ("detect_delay", m.detect_delay.is_some())] {
                if set {
                    return Err(err(
                        &at(field),
                        "the path manager (path IDs opened, abandoned, set to backup) is modelled for quic flows; an MPTCP connection keeps one subflow per path, which follows its link's down windows",
                    ));
                }
            }
        }
        Transport::Udp => {}
    }
    // A coupled controller replaces the paths' own; Prague has no coupled form, and running the
    // coupling instead of it would be a substitution the flow did not ask for.
    if m.coupled.is_some() && f.cc.as_deref() == Some("prague") {
        return Err(err(&at("coupled"), "replaces each path's controller with a coupled one, and Prague (cc = \"prague\") has none: leave coupled out to run Prague on every path"));
    }
    // ATSSS steers one MA PDU session over its two accesses.
    if let Some(kind) = m.scheduler.filter(|k| k.is_atsss()) {
        if paths != 2 {
            return Err(err(&at("scheduler"), format!("\"{kind}\" is an ATSSS steering mode, which steers over two accesses: give the flow two paths, not {paths}")));
        }
        if kind == SchedulerKind::AtsssRedundant && f.transport == Transport::Tcp {
            return Err(err(&at("scheduler"), "\"atsss_redundant\" is modelled for quic flows; an MPTCP connection duplicates with \"redundant\""));
        }
    }
    // MPTCP follows Linux: subflows go stale after 4 retransmission timeouts.
    let failover_default = if f.transport == Transport::Tcp { FailoverProfile::LinuxMptcp } else { FailoverProfile::MpQuic };
    let stack = profile.multipath.as_ref();
    let path_manager = resolve_path_manager(f, &m, paths)?;
    let opened_later = path_manager
        .as_ref()
        .map(|pm| (0..paths as u8).filter(|&p| !pm.schedule[..pm.opened_with_connection].iter().any(|e| e.path == usize::from(p))).collect())
        .unwrap_or_default();
    let params = MultipathParams {
        paths: u8::try_from(paths).expect("validated: at most 8 paths"),
        scheduler: m.scheduler.or(stack.map(|k| k.scheduler)).unwrap_or(SchedulerKind::MinRtt),
        options,
        ack_path: m.ack_path.or(stack.map(|k| k.ack_path)).unwrap_or(AckPath::Same),
        failover: m.failover.or(stack.map(|k| k.failover)).unwrap_or(failover_default),
        coupled: m.coupled,
        opened_later,
    };
    Ok((params, path_manager))
}

/// `schedule`, `on_link_down` and `detect_delay` of `[flow.multipath]`: every entry names one
/// of the flow's paths, path 0 (the handshake's) is open from the start, and the manager
/// accepts the schedule, which it runs with the openings of the paths open from the start
/// put first.
fn resolve_path_manager(f: &FlowSection, m: &MultipathSection, paths: usize) -> Result<Option<PathManagerSpec>, FieldError> {
    let schedule = m.schedule.clone().unwrap_or_default();
    let reaction = m.on_link_down.unwrap_or_default();
    let at = |field: &str| vec!["flow".to_string(), f.name.clone(), "multipath".to_string(), field.to_string()];
    let fail = |path: Vec<String>, message: String| FieldError { path, message };
    if m.detect_delay.is_some() && reaction == LinkReaction::None {
        return Err(fail(at("detect_delay"), "applies to a link-down reaction: set on_link_down = \"abandon_reopen\" or \"standby\" too".into()));
    }
    if m.schedule.is_none() && reaction == LinkReaction::None {
        return Ok(None);
    }
    let entry = |i: usize, field: &str| {
        let mut p = at(&format!("schedule[{i}]"));
        p.push(field.to_string());
        p
    };
    for (i, e) in schedule.iter().enumerate() {
        if e.path >= paths {
            return Err(fail(entry(i, "path"), format!("{} but the flow has {paths} paths (0 to {})", e.path, paths - 1)));
        }
    }
    // A path is open from the start unless the first entry that runs for it (by time, then
    // as written) opens it.
    let first_opening = |p: usize| {
        let first = schedule.iter().enumerate().filter(|(_, e)| e.path == p).min_by_key(|&(i, e)| (e.at, i));
        first.filter(|(_, e)| e.action == ScheduledAction::Open).map(|(i, _)| i)
    };
    if let Some(i) = first_opening(0) {
        return Err(fail(entry(i, "action"), "\"open\" but path 0 carries the handshake and is open from the start".into()));
    }
    let opened_with_connection: Vec<PathEvent> =
        (0..paths).filter(|&p| first_opening(p).is_none()).map(|path| PathEvent { at: Dur::ZERO, path, action: ScheduledAction::Open }).collect();
    let n = opened_with_connection.len();
    let full: Vec<PathEvent> = opened_with_connection.into_iter().chain(schedule).collect();
    let config = ManagerConfig { on_link_down: reaction, detect_delay: m.detect_delay.unwrap_or(Dur::ZERO) };
    PathManager::new(config, &full).map_err(|e| {
        let i = e.index().checked_sub(n).expect("the openings put first run first and are valid: an error is about a scenario entry");
        fail(entry(i, "action"), e.to_string())
    })?;
    Ok(Some(PathManagerSpec { schedule: full, config, opened_with_connection: n }))
}
