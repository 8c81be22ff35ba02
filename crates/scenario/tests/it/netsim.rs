//! The regression net (smoltcp's `netsim` style): grids of whole runs over the real models,
//! each printed as a table and compared with a committed `insta` snapshot. A change anywhere
//! in the links, the split bearer, the transports, the schedulers or the wiring that moves a
//! single byte of a result shows up here as a readable diff.
//!
//! Each row carries the headline numbers and a digest of the run's whole summary (wall time
//! removed) and time series, so "the table is unchanged" means "every output is unchanged".
//!
//! To accept an intended change: `INSTA_UPDATE=always cargo test --release -p
//! multiconn-scenario --test it netsim`, then review the diff of `tests/it/snapshots/` and
//! say why in the commit.

use crate::common;

use common::load_str;
use multiconn_scenario::Simulation;
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

/// Runs `text` with `seed`; returns the summary and a digest of every output but wall time.
fn run(text: &str, seed: u64) -> (Value, String) {
    let scenario = load_str(text).unwrap_or_else(|e| panic!("scenario should load: {e}\n{text}"));
    let mut sim = Simulation::new(&scenario, Some(seed)).unwrap();
    sim.run_to_end();
    let out = sim.finish();
    let mut summary: Value = serde_json::from_str(&out.summary_json).unwrap();
    summary.as_object_mut().unwrap().remove("wall_time_s");
    let mut h = fnv(summary.to_string().as_bytes(), 0xcbf2_9ce4_8422_2325);
    for (name, column) in out.columns.iter().chain(&out.messages) {
        h = fnv(name.as_bytes(), h);
        h = fnv(format!("{column:?}").as_bytes(), h);
    }
    (summary, format!("{h:016x}"))
}

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
                    let (s, digest) = run(&text, 3);
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
    insta::assert_snapshot!(table);
}

/// Multipath QUIC schedulers over two paths of growing asymmetry (rate and delay of the
/// second path), one 6 MB download.
#[test]
fn multipath_scheduler_grid() {
    let mut table = String::from("scheduler            path 2          | goodput completion path0_MB path1_MB events | digest\n");
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
            let (s, digest) = run(&text, 5);
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
    insta::assert_snapshot!(table);
}

/// A PDCP split bearer: split policy × ratio of the legs' delays, QUIC and TCP.
#[test]
fn split_bearer_grid() {
    let mut table = String::from("transport policy                 delays    | goodput completion drops reorder_max_ms events | digest\n");
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
                let (s, digest) = run(&text, 9);
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
    insta::assert_snapshot!(table);
}
