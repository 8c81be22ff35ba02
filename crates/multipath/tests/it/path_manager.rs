//! The path manager's timeline: scheduled actions and reactions to links going down and up.

use multiconn_core::{Dur, Time};
use multiconn_multipath::path_manager::*;

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}
fn t(x: u64) -> Time {
    Time(ms(x).0)
}
fn ev(at_ms: u64, path: usize, action: ScheduledAction) -> PathEvent {
    PathEvent { at: ms(at_ms), path, action }
}
fn down(at_ms: u64, path: usize) -> LinkChange {
    LinkChange { at: t(at_ms), path, up: false }
}
fn up(at_ms: u64, path: usize) -> LinkChange {
    LinkChange { at: t(at_ms), path, up: true }
}
fn planned(at_ms: u64, path: usize, action: Action) -> Planned {
    Planned { at: t(at_ms), path, action }
}

use ScheduledAction::{Abandon, Available, Backup, Open};

fn two_paths() -> Vec<PathEvent> {
    vec![ev(0, 0, Open), ev(0, 1, Open)]
}

fn cfg(on_link_down: LinkReaction, detect_ms: u64) -> ManagerConfig {
    ManagerConfig { on_link_down, detect_delay: ms(detect_ms) }
}

#[test]
fn the_schedule_runs_in_time_order_with_path_ids_in_opening_order() {
    let schedule = [ev(5000, 1, Abandon), ev(1000, 1, Open), ev(0, 0, Open), ev(2000, 1, Backup), ev(3000, 1, Available)];
    let p = plan(ManagerConfig::default(), &schedule, &[]).unwrap();
    assert_eq!(
        p,
        [
            planned(0, 0, Action::Open { path_id: 0, backup: false }),
            planned(1000, 1, Action::Open { path_id: 1, backup: false }),
            planned(2000, 1, Action::SetStatus { path_id: 1, backup: true }),
            planned(3000, 1, Action::SetStatus { path_id: 1, backup: false }),
            planned(5000, 1, Action::Abandon { path_id: 1 }),
        ]
    );
}

#[test]
fn reopening_after_an_abandon_gets_a_new_path_id_and_keeps_the_status() {
    let schedule = [ev(0, 0, Open), ev(0, 1, Open), ev(100, 1, Backup), ev(1000, 1, Abandon), ev(2000, 1, Open)];
    let p = plan(ManagerConfig::default(), &schedule, &[]).unwrap();
    assert_eq!(p.last(), Some(&planned(2000, 1, Action::Open { path_id: 2, backup: true })));
}

#[test]
fn abandon_reopen_abandons_after_detection_and_opens_a_new_path_when_the_link_is_back() {
    let links = [down(2000, 1), up(3000, 1)];
    let p = plan(cfg(LinkReaction::AbandonReopen, 100), &two_paths(), &links).unwrap();
    assert_eq!(&p[2..], [planned(2100, 1, Action::Abandon { path_id: 1 }), planned(3100, 1, Action::Open { path_id: 2, backup: false })]);
}

#[test]
fn a_link_back_before_detection_causes_nothing() {
    let links = [down(2000, 1), up(2050, 1)];
    for reaction in [LinkReaction::AbandonReopen, LinkReaction::Standby] {
        let p = plan(cfg(reaction, 100), &two_paths(), &links).unwrap();
        assert_eq!(p.len(), 2, "{reaction:?}: {p:?}");
    }
}

#[test]
fn standby_marks_the_path_backup_while_its_link_is_down() {
    let links = [down(2000, 0), up(3000, 0)];
    let p = plan(cfg(LinkReaction::Standby, 0), &two_paths(), &links).unwrap();
    assert_eq!(
        &p[2..],
        [
            planned(2000, 0, Action::SetStatus { path_id: 0, backup: true }),
            planned(3000, 0, Action::SetStatus { path_id: 0, backup: false })
        ]
    );
}

#[test]
fn standby_does_not_undo_a_backup_status_from_the_schedule() {
    let mut schedule = two_paths();
    schedule.push(ev(2500, 0, Backup));
    let links = [down(2000, 0), up(3000, 0)];
    let p = plan(cfg(LinkReaction::Standby, 0), &schedule, &links).unwrap();
    // Down: backup. The schedule's backup changes nothing visible. Up: stays backup.
    assert_eq!(&p[2..], [planned(2000, 0, Action::SetStatus { path_id: 0, backup: true })]);
}

#[test]
fn a_scheduled_abandon_while_the_link_is_down_cancels_the_reopen() {
    let mut schedule = two_paths();
    schedule.push(ev(2500, 1, Abandon));
    let links = [down(2000, 1), up(3000, 1)];
    let p = plan(cfg(LinkReaction::AbandonReopen, 0), &schedule, &links).unwrap();
    assert_eq!(&p[2..], [planned(2000, 1, Action::Abandon { path_id: 1 })]);
}

#[test]
fn no_reaction_leaves_link_changes_to_failure_detection() {
    let links = [down(2000, 1), up(3000, 1)];
    let p = plan(ManagerConfig::default(), &two_paths(), &links).unwrap();
    assert_eq!(p.len(), 2);
}

#[test]
fn links_of_paths_not_open_cause_nothing() {
    let links = [down(2000, 5), up(3000, 5)];
    let p = plan(cfg(LinkReaction::AbandonReopen, 0), &two_paths(), &links).unwrap();
    assert_eq!(p.len(), 2);
}

#[test]
fn bad_schedules_are_refused_with_the_entry_named() {
    let e = PathManager::new(ManagerConfig::default(), &[ev(0, 0, Open), ev(10, 0, Open)]).unwrap_err();
    assert_eq!(e, PlanError::AlreadyOpen { index: 1, at: ms(10), path: 0, action: Open });
    assert_eq!(e.index(), 1);
    assert_eq!(e.to_string(), "\"open\" at 0.01 s but path 0 is already open then");
    let e = PathManager::new(ManagerConfig::default(), &[ev(10, 0, Open), ev(0, 0, Abandon)]).unwrap_err();
    assert_eq!(e, PlanError::NotOpen { index: 1, at: ms(0), path: 0, action: Abandon });
    assert!(PathManager::new(ManagerConfig::default(), &[ev(0, 3, Backup)]).is_err());
    // Same time: file order.
    assert!(PathManager::new(ManagerConfig::default(), &[ev(0, 0, Open), ev(0, 1, Open), ev(0, 0, Abandon), ev(0, 0, Open)]).is_ok());
    // The connection keeps a path.
    let e = PathManager::new(ManagerConfig::default(), &[ev(0, 0, Open), ev(0, 1, Open), ev(5, 1, Abandon), ev(10, 0, Abandon)]).unwrap_err();
    assert_eq!(e, PlanError::NoPathLeft { index: 3, at: ms(10), path: 0 });
}

#[test]
fn sans_io_use_polls_due_actions_one_by_one() {
    let mut m = PathManager::new(cfg(LinkReaction::AbandonReopen, 100), &two_paths()).unwrap();
    assert_eq!(m.poll_timeout(), Some(t(0)));
    assert_eq!(m.poll_action(t(0)).map(|p| p.action), Some(Action::Open { path_id: 0, backup: false }));
    assert_eq!(m.poll_action(t(0)).map(|p| p.action), Some(Action::Open { path_id: 1, backup: false }));
    assert_eq!(m.poll_action(t(0)), None);
    assert_eq!(m.poll_timeout(), None);
    m.on_link_down(t(500), 0);
    assert_eq!(m.poll_timeout(), Some(t(600)));
    assert_eq!(m.poll_action(t(599)), None);
    assert_eq!(m.poll_action(t(600)), Some(planned(600, 0, Action::Abandon { path_id: 0 })));
    assert_eq!(m.path_id(0), None);
    m.on_link_up(t(700), 0);
    assert_eq!(m.poll_action(t(800)), Some(planned(800, 0, Action::Open { path_id: 2, backup: false })));
    assert_eq!(m.path_id(0), Some(2));
}

#[test]
fn reaction_and_action_names_for_scenario_files() {
    use serde::de::value::{Error, StrDeserializer};
    use serde::Deserialize;
    let r = |s| LinkReaction::deserialize(StrDeserializer::<Error>::new(s));
    assert_eq!(r("none"), Ok(LinkReaction::None));
    assert_eq!(r("abandon_reopen"), Ok(LinkReaction::AbandonReopen));
    assert_eq!(r("standby"), Ok(LinkReaction::Standby));
    let a = |s| ScheduledAction::deserialize(StrDeserializer::<Error>::new(s));
    assert_eq!(a("open"), Ok(Open));
    assert_eq!(a("abandon"), Ok(Abandon));
    assert_eq!(a("backup"), Ok(Backup));
    assert_eq!(a("available"), Ok(Available));
}

#[test]
fn the_next_action_skips_items_that_cause_none_and_follows_link_changes() {
    let mut m = PathManager::new(cfg(LinkReaction::AbandonReopen, 100), &two_paths()).unwrap();
    assert_eq!(m.next_action(), Some(planned(0, 0, Action::Open { path_id: 0, backup: false })));
    while m.poll_action(t(0)).is_some() {}
    assert_eq!(m.next_action(), None);
    m.on_link_down(t(2000), 1);
    assert_eq!(m.next_action(), Some(planned(2100, 1, Action::Abandon { path_id: 1 })));
    // Back before the reaction was due: the down reaction causes nothing, the up one neither.
    m.on_link_up(t(2050), 1);
    assert_eq!(m.next_action(), None);
    assert_eq!(m.poll_timeout(), Some(t(2100)), "the items are still pending");
}

/// Reference `multi-operator.md` §4.5: a handover away from the handshake's path and back.
/// Path 0 is a path like the others once it has been abandoned: opening it again takes the
/// next path ID, and the same instant may abandon one path and open another (in file order),
/// so the connection always keeps a path.
#[test]
fn path_0_can_be_opened_again_after_it_was_abandoned() {
    let mut schedule = two_paths();
    schedule.extend([ev(2000, 0, Abandon), ev(5000, 0, Open), ev(5000, 1, Abandon), ev(7000, 1, Open)]);
    let p = plan(ManagerConfig::default(), &schedule, &[]).unwrap();
    assert_eq!(
        p[2..],
        [
            planned(2000, 0, Action::Abandon { path_id: 0 }),
            planned(5000, 0, Action::Open { path_id: 2, backup: false }),
            planned(5000, 1, Action::Abandon { path_id: 1 }),
            planned(7000, 1, Action::Open { path_id: 3, backup: false }),
        ]
    );
    // Abandoning path 0 is still refused when it is the last path open.
    let mut lone = two_paths();
    lone.extend([ev(1000, 1, Abandon), ev(2000, 0, Abandon)]);
    assert!(matches!(PathManager::new(ManagerConfig::default(), &lone), Err(PlanError::NoPathLeft { index: 3, .. })));
    // And opening it while it is open.
    let mut twice = two_paths();
    twice.push(ev(1000, 0, Open));
    assert!(matches!(PathManager::new(ManagerConfig::default(), &twice), Err(PlanError::AlreadyOpen { index: 2, .. })));
}
