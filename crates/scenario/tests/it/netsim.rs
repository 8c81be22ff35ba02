//! The regression net (smoltcp's `netsim` style): grids of whole runs over the real models,
//! each printed as a table and compared with a committed `insta` snapshot. A change anywhere
//! in the links, the split bearer, the transports, the schedulers or the wiring that moves a
//! single byte of a result shows up here as a readable diff.
//!
//! Each row carries the headline numbers and a digest of the run's whole summary (wall time
//! and the event count, which measure its cost, removed), time series and message table, so "the table is unchanged" means "every output
//! is unchanged". The digest covers the outputs as they were when the net was first committed:
//! the time series' flow and link rows in their first 19 columns, and the summary without the
//! keys added since ([`ADDED_SUMMARY_KEYS`]); so it also proves that later additions left
//! those untouched. A second digest per run, listed under the table, covers what was added:
//! the path, leg and bearer rows, the columns after the first 19, and the added summary keys.
//!
//! To accept an intended change: `INSTA_UPDATE=always cargo test --release -p
//! multiconn-scenario --test it netsim`, then review the diff of `tests/it/snapshots/` and
//! say why in the commit.

use crate::common;

use common::load_str;
use multiconn_scenario::{Column, Simulation};
use serde_json::Value;
use std::fmt::Write;

/// FNV-1a, 64 bits: a stable digest of the run's outputs.
fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The time-series columns the net was first committed with, in order.
const BASE_COLUMNS: [&str; 19] = [
    "time_s",
    "kind",
    "name",
    "direction",
    "bytes_delivered",
    "throughput_mbps",
    "drops_queue",
    "drops_random_loss",
    "drops_link_down",
    "drops_udp_buffer",
    "drops_pdcp_late",
    "drops_pdcp_window",
    "queue_packets",
    "queue_bytes",
    "cwnd_bytes",
    "bytes_in_flight",
    "srtt_ms",
    "retransmissions",
    "spurious_retransmissions",
];

/// The time-series row kinds the net was first committed with.
const BASE_KINDS: [&str; 2] = ["flow", "link"];

/// Summary keys added since the net was first committed (wherever they occur).
const ADDED_SUMMARY_KEYS: [&str; 13] = ["per_leg", "drops_data", "drops_ack", "fair_share_mbps", "normalised", "fairness", "disabled_flows", "sender", "receiver", "endpoints", "warnings", "timely_efficiency", "received_mbps"];

/// `value` without the keys of [`ADDED_SUMMARY_KEYS`], at any depth.
fn without_added_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in ADDED_SUMMARY_KEYS {
                map.shift_remove(key);
            }
            map.values_mut().for_each(without_added_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(without_added_keys),
        _ => {}
    }
}

/// The rows of `column` where `keep` is true.
fn rows_of(column: &Column, keep: &[bool]) -> Column {
    fn pick<T: Clone>(values: &[T], keep: &[bool]) -> Vec<T> {
        values.iter().zip(keep).filter(|(_, k)| **k).map(|(v, _)| v.clone()).collect()
    }
    match column {
        Column::F64(v) => Column::F64(pick(v, keep)),
        Column::I64(v) => Column::I64(pick(v, keep)),
        Column::Str(v) => Column::Str(pick(v, keep)),
        other => rows_of(&other.clone().expand(), keep),
    }
}

/// The values of the keys of [`ADDED_SUMMARY_KEYS`] in `value`, in document order.
fn added_values<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if ADDED_SUMMARY_KEYS.contains(&key.as_str()) {
                    out.push(v);
                } else {
                    added_values(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| added_values(v, out)),
        _ => {}
    }
}

/// What one run gives: its summary, the digest of the outputs the net was first committed
/// with, and the digest of what was added since (see the module's documentation).
struct Digests {
    summary: Value,
    base: String,
    added: String,
}

/// Runs `text` with `seed`; returns its summary and both digests, wall time and the event
/// count excluded.
fn run_digests(text: &str, seed: u64) -> Digests {
    let scenario = load_str(text).unwrap_or_else(|e| panic!("scenario should load: {e}\n{text}"));
    let mut sim = Simulation::new(&scenario, Some(seed)).unwrap();
    sim.run_to_end();
    let out = sim.finish();
    let mut summary: Value = serde_json::from_str(&out.summary_json).unwrap();
    summary.as_object_mut().unwrap().remove("wall_time_s");
    // The event count measures the cost of a run, as wall time does, not its result: the
    // tables show it, the digests leave it out.
    let mut base_summary = summary.clone();
    base_summary.as_object_mut().unwrap().remove("events");
    without_added_keys(&mut base_summary);
    let mut h = fnv(base_summary.to_string().as_bytes(), 0xcbf2_9ce4_8422_2325);
    let kinds = out.columns.iter().find(|(name, _)| name == "kind").map(|(_, c)| c);
    let Some(Column::Str(kinds)) = kinds else { panic!("the time series has a text column `kind`") };
    let base_rows: Vec<bool> = kinds.iter().map(|k| BASE_KINDS.contains(&k.as_str())).collect();
    for (name, column) in out.columns.iter().filter(|(name, _)| BASE_COLUMNS.contains(&name.as_str())) {
        h = fnv(name.as_bytes(), h);
        h = fnv(format!("{:?}", rows_of(column, &base_rows)).as_bytes(), h);
    }
    for (name, column) in &out.messages {
        h = fnv(name.as_bytes(), h);
        h = fnv(format!("{column:?}").as_bytes(), h);
    }
    // The rows and columns added since, and the summary's added keys.
    let mut added = Vec::new();
    added_values(&summary, &mut added);
    let mut a = fnv(serde_json::to_string(&added).unwrap().as_bytes(), 0xcbf2_9ce4_8422_2325);
    let added_rows: Vec<bool> = base_rows.iter().map(|b| !b).collect();
    for (name, column) in &out.columns {
        a = fnv(name.as_bytes(), a);
        let values = if BASE_COLUMNS.contains(&name.as_str()) { rows_of(column, &added_rows) } else { column.clone() };
        a = fnv(format!("{values:?}").as_bytes(), a);
    }
    Digests { summary, base: format!("{h:016x}"), added: format!("{a:016x}") }
}

/// The heading of the list of added-output digests under a grid's table.
const ADDED_HEADING: &str = "\nadded outputs (path, leg and bearer rows; columns after the first 19; per_leg, drops_data, drops_ack; fairness) | digest\n";

fn num(v: &Value) -> String {
    match v.as_f64() {
        Some(x) => format!("{x:.3}"),
        None => "-".into(),
    }
}

fn drops(flow: &Value) -> u64 {
    flow["drops"].as_object().map_or(0, |d| d.values().filter_map(Value::as_u64).sum())
}

/// TCP and QUIC × NewReno/CUBIC/BBR × random loss × bottleneck buffer, one bulk download.
#[test]
fn transport_grid() {
    let mut table = String::from("transport cc      loss  buffer | goodput completion drops events | digest\n");
    let mut added = String::from(ADDED_HEADING);
    for transport in ["tcp", "quic"] {
        for cc in ["newreno", "cubic", "bbr"] {
            for loss in ["0 %", "0.1 %", "1 %", "5 %"] {
                for buffer in [20, 200] {
                    let text = format!(
                        r#"
[run]
duration = "6 s"
[[link]]
name = "path"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "20 ms"
queue = "{buffer} packets"
[link.forward]
loss = "{loss}"
[[flow]]
name = "f"
from = "server"
to = "client"
transport = "{transport}"
app = "bulk"
cc = "{cc}"
size = "8 MB"
"#
                    );
                    let Digests { summary: s, base: digest, added: added_digest } = run_digests(&text, 3);
                    writeln!(added, "{transport:9} {cc:7} {loss:5} {buffer:6} | {added_digest}").unwrap();
                    let f = &s["flows"][0];
                    writeln!(
                        table,
                        "{transport:9} {cc:7} {loss:5} {buffer:6} | {:>7} {:>10} {:>5} {:>6} | {digest}",
                        num(&f["goodput_mbps"]),
                        num(&f["completion_s"]),
                        drops(f),
                        s["events"]
                    )
                    .unwrap();
                }
            }
        }
    }
    table.push_str(&added);
    insta::assert_snapshot!(table);
}

/// Multipath QUIC schedulers over two paths of growing asymmetry (rate and delay of the
/// second path), one 6 MB download.
#[test]
fn multipath_scheduler_grid() {
    let mut table = String::from("scheduler            path 2          | goodput completion path0_MB path1_MB events | digest\n");
    let mut added = String::from(ADDED_HEADING);
    for scheduler in ["minrtt", "roundrobin", "redundant", "selective_redundant", "blest", "ecf"] {
        for (rate, delay) in [("10 Mbit/s", "10 ms"), ("5 Mbit/s", "30 ms"), ("2 Mbit/s", "80 ms")] {
            let text = format!(
                r#"
[run]
duration = "10 s"
[[link]]
name = "a"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "60 packets"
[[link]]
name = "b"
between = ["server", "client"]
rate = "{rate}"
delay = "{delay}"
queue = "60 packets"
[link.forward]
loss = "0.5 %"
[[flow]]
name = "mp"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "6 MB"
paths = [["a"], ["b"]]
[flow.multipath]
scheduler = "{scheduler}"
"#
            );
            let Digests { summary: s, base: digest, added: added_digest } = run_digests(&text, 5);
            writeln!(added, "{scheduler:20} {rate:9} {delay:5} | {added_digest}").unwrap();
            let f = &s["flows"][0];
            let carried = |p: usize| {
                f["paths"][p]["network"]["forward"]["bytes_arrived"].as_f64().map_or("-".into(), |b| format!("{:.2}", b / 1e6))
            };
            writeln!(
                table,
                "{scheduler:20} {rate:9} {delay:5} | {:>7} {:>10} {:>8} {:>8} {:>6} | {digest}",
                num(&f["goodput_mbps"]),
                num(&f["completion_s"]),
                carried(0),
                carried(1),
                s["events"]
            )
            .unwrap();
        }
    }
    table.push_str(&added);
    insta::assert_snapshot!(table);
}

/// A PDCP split bearer: split policy × ratio of the legs' delays, QUIC and TCP.
#[test]
fn split_bearer_grid() {
    let mut table = String::from("transport policy                 delays    | goodput completion drops reorder_max_ms events | digest\n");
    let mut added = String::from(ADDED_HEADING);
    let policies = [
        ("batch 100 1:1", r#"{ model = "batch", size = 100, share = 0.5 }"#),
        ("batch 10 3:1", r#"{ model = "batch", size = 10, share = 0.75 }"#),
        ("duplicate", r#"{ model = "duplicate" }"#),
        ("adaptive", r#"{ model = "adaptive" }"#),
    ];
    for transport in ["quic", "tcp"] {
        for (label, policy) in policies {
            for (d1, d2) in [("10 ms", "10 ms"), ("10 ms", "30 ms"), ("5 ms", "60 ms")] {
                let text = format!(
                    r#"
[run]
duration = "8 s"
[[link]]
name = "leg1"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = {{ model = "normal", mean = "{d1}", cv = 0.1 }}
queue = "100 packets"
[[link]]
name = "leg2"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = {{ model = "normal", mean = "{d2}", cv = 0.1 }}
queue = "100 packets"
[link.forward]
loss = "0.2 %"
[[split]]
name = "dc"
legs = ["leg1", "leg2"]
policy = {policy}
t_reordering = "200 ms"
processing_delay = "1 ms"
[[flow]]
name = "dc"
from = "server"
to = "client"
transport = "{transport}"
app = "bulk"
size = "10 MB"
route = ["dc"]
"#
                );
                let Digests { summary: s, base: digest, added: added_digest } = run_digests(&text, 9);
                writeln!(added, "{transport:9} {label:22} {d1:>5}/{d2:<5} | {added_digest}").unwrap();
                let f = &s["flows"][0];
                writeln!(
                    table,
                    "{transport:9} {label:22} {d1:>5}/{d2:<5} | {:>7} {:>10} {:>5} {:>13} {:>6} | {digest}",
                    num(&f["goodput_mbps"]),
                    num(&f["completion_s"]),
                    drops(f),
                    num(&f["pdcp"]["dc"]["reorder_delay_max_ms"]),
                    s["events"]
                )
                .unwrap();
            }
        }
    }
    table.push_str(&added);
    insta::assert_snapshot!(table);
}
