//! noq-proto 1.4.0 at both ends (`stack = "noq"`), in virtual time, with draft-ietf-quic-multipath:
//! the same scenario and seed give the same run, both paths of `real_multipath.toml` carry the
//! download and it goes on through one path's outage and back onto it, a single path lands
//! where quinn does, the shared applications run on noq's streams, and what noq cannot do is
//! refused at the field.

use crate::common;
use common::*;
use multiconn_scenario::{Column, RunOutput};
use serde_json::Value;

const EXAMPLE: &str = include_str!("../../../../examples/scenarios/real_multipath.toml");

/// The example's download, bytes.
const SIZE: u64 = 40_000_000;

/// A download over 40 Mbit/s, 10 ms each way, with a queue so deep that nothing drops.
const CLEAN: &str = r#"
[run]
duration = "30 s"

[[link]]
name = "path"
between = ["server", "client"]
rate = "40 Mbit/s"
delay = "10 ms"
queue = "100000 packets"

[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "quic"
stack = "noq"
cc = "cubic"
app = "bulk"
size = "2 MB"
packet_size = "1500 B"
"#;

fn completion(summary: &Value) -> f64 {
    summary["flows"][0]["completion_s"].as_f64().unwrap_or_else(|| panic!("the flow completes: {summary}"))
}

fn column<'a>(out: &'a RunOutput, name: &str) -> &'a Column {
    &out.columns.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no column {name}")).1
}

/// Bytes delivered on path `path` of the flow between `from` and `to` seconds (bins starting
/// in that span), from the time series' path rows.
fn path_bytes(out: &RunOutput, path: i64, from: f64, to: f64) -> i64 {
    let (Column::Str(kinds), Column::I64(paths), Column::F64(times), Column::I64(bytes)) =
        (column(out, "kind"), column(out, "path"), column(out, "time_s"), column(out, "bytes_delivered"))
    else {
        panic!("the series' columns have their types")
    };
    (0..kinds.len()).filter(|&i| kinds[i] == "path" && paths[i] == path && times[i] >= from && times[i] < to).map(|i| bytes[i]).sum()
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another() {
    let scenario = load_str(EXAMPLE).unwrap();
    let a = run_checked(&scenario, Some(1));
    let b = run_checked(&scenario, Some(1));
    assert_eq!(a.summary_json, b.summary_json);
    // NaN marks the cells a series has none of: compared as text, NaN equals NaN.
    assert_eq!(format!("{:?}", a.columns), format!("{:?}", b.columns));
    let summary: Value = serde_json::from_str(&a.summary_json).unwrap();
    let flow = &summary["flows"][0];
    assert_eq!(flow["stack"], "noq-proto 1.4.0");
    assert_eq!(flow["profile"], "noq");
    assert_eq!(flow["bytes_delivered"], SIZE);
    // Another seed: other connection IDs and packet-number skips, so another run.
    let c = run_checked(&scenario, Some(2));
    assert_ne!(a.summary_json, c.summary_json);
    assert_eq!(serde_json::from_str::<Value>(&c.summary_json).unwrap()["flows"][0]["bytes_delivered"], SIZE);
}

#[test]
fn both_paths_carry_the_download_which_goes_on_through_the_outage_and_back_onto_the_path() {
    let (summary, out) = run(EXAMPLE, None);
    let flow = &summary["flows"][0];
    assert_eq!(flow["bytes_delivered"], SIZE, "{flow:#}");
    for p in 0..2 {
        let arrived = flow["paths"][p]["network"]["forward"]["bytes_arrived"].as_u64().unwrap();
        assert!(arrived > 5_000_000, "path {p} carried {arrived} B: {:#}", flow["paths"]);
    }
    // Operator B is down from 5 s to 9 s; the path manager abandons its path at 5.2 s and opens
    // a new path ID on it at 9.2 s.
    let before = path_bytes(&out, 1, 1.0, 5.0);
    let during = path_bytes(&out, 1, 5.3, 9.0);
    let after = path_bytes(&out, 1, 9.5, 12.0);
    assert!(before > 1_000_000, "path 1 before the outage: {before} B");
    assert_eq!(during, 0, "nothing crosses a link that is down");
    assert!(after > 500_000, "path 1 carries again after the outage: {after} B");
    // Operator A carries the transfer meanwhile, at most of its 20 Mbit/s (2.5 MB/s).
    let surviving = path_bytes(&out, 0, 5.3, 9.0);
    assert!(surviving as f64 > 0.8 * 3.7 * 2.5e6, "path 0 during the outage: {surviving} B");
    // noq's path IDs: 0 and 1 from the start, 2 on operator B after the outage.
    let server = &flow["paths"][1]["server"];
    assert_eq!(server["path_ids_opened"], 2, "{server}");
    assert_eq!(server["path_id"], 2, "{server}");
    assert_eq!(flow["paths"][0]["server"]["path_id"], 0);
    let client = &flow["paths"][1]["client"];
    assert_eq!(client["path_ids_opened"], 2, "{client}");
    // What noq sent on each path is what the network carried there, but for the few packets
    // still on their way when the run ended: the adapter puts each datagram on the path noq
    // chose.
    for p in 0..2 {
        let sent = flow["paths"][p]["server"]["packets_sent"].as_u64().unwrap();
        let network = &flow["paths"][p]["network"]["forward"];
        let on_wire = network["packets_arrived"].as_u64().unwrap() + network["packets_dropped"].as_u64().unwrap();
        assert!(on_wire <= sent && sent <= on_wire + 10, "path {p}: noq sent {sent}, the network carried {on_wire}: {:#}", flow["paths"][p]);
    }
}

#[test]
fn a_path_the_client_backs_up_stops_carrying_the_download_until_it_is_available_again() {
    // noq schedules by the sender's own status; the server follows the client's
    // PATH_STATUS_BACKUP / AVAILABLE (draft-ietf-quic-multipath §3.3).
    let text = EXAMPLE.replace("down = [[\"5 s\", \"9 s\"]]\n", "").replace(
        "on_link_down = \"abandon_reopen\"\ndetect_delay = \"200 ms\"",
        "schedule = [\n  { at = \"3 s\", path = 1, action = \"backup\" },\n  { at = \"6 s\", path = 1, action = \"available\" },\n]",
    );
    let (summary, out) = run(&text, None);
    assert_eq!(summary["flows"][0]["bytes_delivered"], SIZE);
    let (before, backup, after) = (path_bytes(&out, 1, 1.0, 3.0), path_bytes(&out, 1, 3.3, 6.0), path_bytes(&out, 1, 6.3, 9.0));
    assert!(before > 1_000_000 && after > 1_000_000, "path 1 carries while available: {before} B, {after} B");
    assert_eq!(backup, 0, "path 1 carries nothing while it is a backup and path 0 works");
    assert_eq!(summary["flows"][0]["paths"][1]["server"]["path_ids_opened"], 1);
}

#[test]
fn on_one_path_noq_lands_where_quinn_does() {
    // The same controller (CUBIC) and datagram size; noq is a fork of quinn, so a clean path
    // must give nearly the same completion time.
    for size in ["300 kB", "2 MB", "20 MB"] {
        let noq = completion(&run_with(CLEAN, &[("flow.dl.size", size)], 1));
        let quinn = completion(&run_with(CLEAN, &[("flow.dl.size", size), ("flow.dl.stack", "quinn")], 1));
        let gap = (noq - quinn).abs() / quinn;
        assert!(gap <= 0.03, "{size}: noq {noq} s, quinn {quinn} s ({:.1} %)", 100.0 * gap);
    }
}

#[test]
fn uploads_and_requests_run_through_the_shared_applications() {
    let up = run_with(CLEAN, &[("flow.dl.direction", "up"), ("flow.dl.size", "1 MB")], 1);
    assert_eq!(up["flows"][0]["bytes_delivered"], 1_000_000, "{up}");
    let requests = run_with(
        &CLEAN.replace("size = \"2 MB\"\n", ""),
        &[("flow.dl.app", "requests"), ("flow.dl.requests", "20"), ("flow.dl.parallel", "4"), ("flow.dl.response_size", "50 kB")],
        1,
    );
    assert_eq!(requests["flows"][0]["bytes_delivered"], 20 * 50_000, "{requests}");
}

#[test]
fn with_qlog_each_end_writes_noqs_own_events_in_virtual_time() {
    let scenario = load_with(CLEAN, &[("flow.dl.qlog", "true"), ("flow.dl.size", "300 kB")]).unwrap();
    let out = run_checked(&scenario, Some(1));
    let names: Vec<&str> = out.qlog.iter().map(|q| q.file_name.as_str()).collect();
    assert_eq!(names, ["dl_client.sqlog", "dl_server.sqlog"]);
    for file in &out.qlog {
        let records: Vec<Value> = file.text.split('\u{1e}').filter(|r| !r.trim().is_empty()).map(|r| serde_json::from_str(r.trim_end()).unwrap()).collect();
        assert!(records.len() > 100, "{}: {} records", file.file_name, records.len());
        let times: Vec<f64> = records[1..].iter().map(|e| e["time"].as_f64().expect("an event time")).collect();
        assert!(times[0] >= 0.0 && *times.last().unwrap() < 200.0, "{}: {:?}..{:?}", file.file_name, times.first(), times.last());
    }
    let again = run_checked(&scenario, Some(1));
    assert_eq!(out.qlog, again.qlog);
}

#[test]
fn what_noq_cannot_do_is_refused_at_the_field_in_one_line() {
    let refused = |text: &str, sets: &[(&str, &str)]| {
        let e = load_with(text, sets).expect_err("should be refused").to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        e
    };
    let e = refused(CLEAN, &[("flow.dl.stack", "quiche")]);
    assert!(e.contains("flow.dl.stack") && e.contains("unknown stack \"quiche\"; known: quinn, noq"), "{e}");
    let e = refused(CLEAN, &[("flow.dl.transport", "tcp")]);
    assert!(e.contains("flow.dl.stack") && e.contains("this flow is tcp"), "{e}");
    let e = refused(CLEAN, &[("flow.dl.cc", "bbr")]);
    assert!(e.contains("flow.dl.cc") && e.contains("stack noq offers newreno and cubic"), "{e}");
    let e = refused(CLEAN, &[("flow.dl.cc", "fast")]);
    assert!(e.contains("flow.dl.cc") && e.contains("newreno and cubic"), "{e}");
    let e = refused(CLEAN, &[("flow.dl.resume", "true")]);
    assert!(e.contains("flow.dl.resume") && e.contains("stack noq"), "{e}");
    let e = refused(CLEAN, &[("flow.dl.packet_size", "1200 B")]);
    assert!(e.contains("flow.dl.packet_size") && e.contains("1228 B"), "{e}");
    // Multipath: noq's own scheduler and failure detection, not the model's.
    let e = refused(EXAMPLE, &[("flow.download.multipath.scheduler", "minrtt")]);
    assert!(e.contains("flow.download.multipath.scheduler") && e.contains("own scheduler") && e.contains("leave scheduler out"), "{e}");
    let e = refused(EXAMPLE, &[("flow.download.multipath.coupled", "lia")]);
    assert!(e.contains("flow.download.multipath.coupled") && e.contains("leave coupled out"), "{e}");
    let e = refused(EXAMPLE, &[("flow.download.multipath.ack_path", "fastest")]);
    assert!(e.contains("flow.download.multipath.ack_path"), "{e}");
    // quinn is single-path.
    let e = refused(EXAMPLE, &[("flow.download.stack", "quinn")]);
    assert!(e.contains("flow.download.paths") && e.contains("single-path"), "{e}");
}
