//! The client's path manager of a multipath QUIC flow, end to end: a `[flow.multipath]`
//! schedule that abandons a path and opens it again under a new path ID, a path opened late,
//! the reactions to a link going down (`abandon_reopen`, `standby`), and the errors for
//! schedules that cannot run.

use crate::common;
use common::*;
use serde_json::{json, Value};

/// Two 10 Mbit/s paths (20 and 30 ms one way), a 20 MB download.
const TWO_PATHS: &str = r#"
[run]
duration = "60 s"

[[link]]
name = "a"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "50 packets"

[[link]]
name = "b"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "30 ms"
queue = "50 packets"
B_DOWN

[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "20 MB"
cc = "newreno"
paths = [["a"], ["b"]]

[flow.multipath]
scheduler = "minrtt"
MANAGER
"#;

const SIZE: u64 = 20_000_000;

fn scenario(manager: &str, b_down: &str) -> String {
    TWO_PATHS.replace("MANAGER", manager).replace("B_DOWN", b_down)
}

/// (summary of flow 0, completion time in seconds)
fn run_flow(manager: &str, b_down: &str) -> (Value, f64) {
    let (summary, _) = run(&scenario(manager, b_down), None);
    let flow = summary["flows"][0].clone();
    assert_eq!(flow["bytes_delivered"], json!(SIZE), "{flow:#}");
    let done = flow["completion_s"].as_f64().expect("the download completes");
    (flow, done)
}

fn path(flow: &Value, p: usize, end: &str) -> Value {
    flow["paths"][p][end].clone()
}

#[test]
fn a_scheduled_abandon_and_reopen_takes_a_new_path_id() {
    let (_, both) = run_flow("", "");
    let (_, abandoned) = run_flow(r#"schedule = [{ at = "2 s", path = 1, action = "abandon" }]"#, "");
    let (flow, reopened) = run_flow(
        r#"schedule = [{ at = "2 s", path = 1, action = "abandon" }, { at = "5 s", path = 1, action = "open" }]"#,
        "",
    );
    assert_eq!(
        flow["path_manager"],
        json!([
            { "at_s": 2.0, "path": 1, "action": "abandon" },
            { "at_s": 5.0, "path": 1, "action": "open", "path_id": 2, "backup": false },
        ])
    );
    for end in ["server", "client"] {
        let p1 = path(&flow, 1, end);
        assert_eq!(p1["status"], "active", "{end}: {p1}");
        assert_eq!(p1["path_id"], 2, "{end}");
        assert_eq!(p1["path_ids_opened"], 2, "{end}");
        assert_eq!(path(&flow, 0, end)["path_id"], 0);
    }
    eprintln!("completion: both paths {both:.2} s, path 1 reopened {reopened:.2} s, path 1 abandoned {abandoned:.2} s");
    // 160 Mbit over 20 Mbit/s takes about 8 s; over path 0 alone after 2 s, about 15 s.
    assert!(both < reopened && reopened < abandoned, "both {both}, reopened {reopened}, abandoned {abandoned}");
    assert!(abandoned > 14.0, "{abandoned}");
    // Path 1 was missing for 3 s of about 8: it costs roughly 1.5 s (half of 3 s) and more
    // for the new path's slow start.
    assert!((1.0..3.0).contains(&(reopened - both)), "both {both}, reopened {reopened}");
}

#[test]
fn a_path_opened_late_joins_the_transfer_when_it_opens() {
    let (_, both) = run_flow("", "");
    let (_, single) = run_flow(r#"schedule = [{ at = "2 s", path = 1, action = "abandon" }]"#, "");
    let (flow, late) = run_flow(r#"schedule = [{ at = "3 s", path = 1, action = "open" }]"#, "");
    assert_eq!(flow["path_manager"], json!([{ "at_s": 3.0, "path": 1, "action": "open", "path_id": 1, "backup": false }]));
    assert_eq!(path(&flow, 1, "server")["path_ids_opened"], 1);
    eprintln!("completion: both paths {both:.2} s, path 1 opened at 3 s {late:.2} s, single {single:.2} s");
    assert!(both < late && late < single, "both {both}, late {late}, single {single}");
    // Nothing goes on path 1 for 3 s: about 1.5 s later than with both paths from the start.
    assert!((1.0..2.5).contains(&(late - both)), "both {both}, late {late}");
}

#[test]
fn abandon_reopen_reacts_to_the_link_after_the_detection_delay() {
    let manager = "on_link_down = \"abandon_reopen\"\ndetect_delay = \"100 ms\"";
    let (flow, _) = run_flow(manager, r#"down = [["2 s", "4 s"]]"#);
    assert_eq!(
        flow["path_manager"],
        json!([
            { "at_s": 2.1, "path": 1, "action": "abandon" },
            { "at_s": 4.1, "path": 1, "action": "open", "path_id": 2, "backup": false },
        ])
    );
    assert_eq!(path(&flow, 1, "server")["path_id"], 2);
    assert_eq!(path(&flow, 1, "client")["status"], "active");
}

#[test]
fn standby_marks_the_path_backup_while_its_link_is_down() {
    let manager = "on_link_down = \"standby\"\ndetect_delay = \"50 ms\"";
    let (flow, _) = run_flow(manager, r#"down = [["2 s", "4 s"]]"#);
    assert_eq!(
        flow["path_manager"],
        json!([
            { "at_s": 2.05, "path": 1, "action": "backup" },
            { "at_s": 4.05, "path": 1, "action": "available" },
        ])
    );
    assert_eq!(path(&flow, 1, "server")["path_ids_opened"], 1);
    assert_eq!(path(&flow, 1, "server")["status"], "active");
}

#[test]
fn same_schedule_same_results() {
    let text = scenario(
        "schedule = [{ at = \"1 s\", path = 1, action = \"backup\" }, { at = \"2 s\", path = 1, action = \"available\" }, { at = \"3 s\", path = 1, action = \"abandon\" }, { at = \"4 s\", path = 1, action = \"open\" }]",
        "",
    );
    let (_, a) = run(&text, Some(7));
    let (_, b) = run(&text, Some(7));
    assert_eq!(a.summary_json, b.summary_json);
}

fn load_error(manager: &str) -> String {
    match load_str(&scenario(manager, "")) {
        Ok(_) => panic!("should be refused: {manager}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn schedules_that_cannot_run_are_refused_with_the_entry() {
    let e = load_error(r#"schedule = [{ at = "1 s", path = 2, action = "abandon" }]"#);
    assert!(e.contains("flow.dl.multipath.schedule[0].path: 2 but the flow has 2 paths (0 to 1)"), "{e}");
    let line = scenario("schedule = []", "").lines().position(|l| l.starts_with("schedule ")).expect("the line") + 1;
    assert!(e.starts_with(&format!("test.toml:{line}:")), "{e}");
    let e = load_error(r#"schedule = [{ at = "1 s", path = 0, action = "open" }]"#);
    assert!(e.contains("schedule[0].action: \"open\" but path 0 carries the handshake"), "{e}");
    let e = load_error(r#"schedule = [{ at = "1 s", path = 1, action = "open" }, { at = "2 s", path = 1, action = "open" }]"#);
    assert!(e.contains("schedule[1].action: \"open\" at 2 s but path 1 is already open then"), "{e}");
    let e = load_error(r#"schedule = [{ at = "2 s", path = 1, action = "abandon" }, { at = "1 s", path = 1, action = "backup" }, { at = "3 s", path = 1, action = "available" }]"#);
    assert!(e.contains("schedule[2].action: \"available\" at 3 s but path 1 is not open then"), "{e}");
    let e = load_error(r#"schedule = [{ at = "1 s", path = 1, action = "abandon" }, { at = "2 s", path = 0, action = "abandon" }]"#);
    assert!(e.contains("schedule[1].action: \"abandon\" at 2 s would leave no path open"), "{e}");
    let e = load_error(r#"schedule = [{ at = "1 s", path = 1, action = "close" }]"#);
    assert!(e.contains("schedule[0].action: unknown action \"close\"; known: ") && e.contains("abandon"), "{e}");
    let e = load_error(r#"detect_delay = "1 s""#);
    assert!(e.contains("flow.dl.multipath.detect_delay: applies to a link-down reaction"), "{e}");
    let e = load_with(&scenario("", ""), &[("flow.dl.multipath.schedule", r#"[{ at = "1 s", path = 0, action = "open" }]"#)]).map(drop).expect_err("refused").to_string();
    assert!(e.starts_with("test.toml (--set flow.dl.multipath.schedule="), "{e}");
    let tcp = scenario(r#"schedule = [{ at = "1 s", path = 1, action = "abandon" }]"#, "").replace("transport = \"quic\"", "transport = \"tcp\"");
    let e = load_str(&tcp).map(drop).expect_err("refused for tcp").to_string();
    assert!(e.contains("flow.dl.multipath.schedule: the path manager") && e.contains("quic flows"), "{e}");
}

/// The manager runs online, fed by the interface events as the network reports them; the
/// actions it takes are those of a plan made in advance from the links' down windows.
#[test]
fn the_online_manager_takes_the_planned_actions_at_the_planned_times() {
    use multiconn_core::Time;
    use multiconn_multipath::Action;
    use multiconn_net::{Hop, Network};
    let downs = [
        r#"down = [["2 s", "3 s"]]"#,
        r#"down = [["0 s", "1 s"], ["1 s", "2 s"], ["4 s", "4.05 s"]]"#,
        "[link.reverse]\ndown = [[\"1.5 s\", \"1.6 s\"], [\"3 s\", \"5 s\"]]",
    ];
    let managers = [
        r#"on_link_down = "abandon_reopen""#,
        "on_link_down = \"standby\"\ndetect_delay = \"100 ms\"",
        "on_link_down = \"abandon_reopen\"\ndetect_delay = \"100 ms\"\nschedule = [{ at = \"1 s\", path = 1, action = \"backup\" }, { at = \"3.5 s\", path = 1, action = \"abandon\" }, { at = \"4 s\", path = 1, action = \"open\" }]",
        "on_link_down = \"standby\"\nschedule = [{ at = \"1.5 s\", path = 1, action = \"backup\" }, { at = \"3 s\", path = 1, action = \"available\" }]",
    ];
    for down in downs {
        for manager in managers {
            let text = scenario(manager, down).replace("size = \"20 MB\"", "size = \"8 MB\"");
            let resolved = load_str(&text).unwrap().resolved().clone();
            let flow = &resolved.flows[0];
            let pm = flow.connection.as_ref().unwrap().path_manager.clone().unwrap();
            // The client's interface on each path (its reverse route's first link), as the
            // network reports it.
            let net = Network::new(&resolved.network_spec(), 1);
            let mut changes = Vec::new();
            for p in 0..flow.path_count() {
                let Hop::Link(l) = flow.hops(p as u8, 1)[0] else { unreachable!() };
                let mut next = net.next_link_change(l, Time::ZERO);
                while let Some(at) = next {
                    changes.push(multiconn_multipath::LinkChange { at, path: p, up: net.link_up(l, at) });
                    next = net.next_link_change(l, Time(at.0 + 1));
                }
            }
            let planned: Vec<(f64, usize, &str)> = multiconn_multipath::plan(pm.config, &pm.schedule, &changes)
                .unwrap()
                .into_iter()
                .skip(pm.opened_with_connection)
                .map(|p| {
                    let action = match p.action {
                        Action::Open { .. } => "open",
                        Action::Abandon { .. } => "abandon",
                        Action::SetStatus { backup: true, .. } => "backup",
                        Action::SetStatus { backup: false, .. } => "available",
                    };
                    (p.at.as_secs_f64(), p.path, action)
                })
                .collect();
            let (summary, _) = run(&text, None);
            let end = summary["sim_time_s"].as_f64().unwrap();
            let planned: Vec<(f64, usize, &str)> = planned.into_iter().filter(|&(at, _, _)| at <= end).collect();
            let taken: Vec<(f64, usize, &str)> = summary["flows"][0]["path_manager"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| (a["at_s"].as_f64().unwrap(), a["path"].as_u64().unwrap() as usize, a["action"].as_str().unwrap()))
                .collect();
            assert!(!taken.is_empty(), "{down} / {manager}");
            assert_eq!(taken, planned, "{down} / {manager}");
        }
    }
}
