//! Per-path, per-leg and per-bearer rows of the time series: they add up to the summary's
//! per-path and per-split totals, flows with one path get no path rows, the rows of flows and
//! links carry the empty values of the new columns, and two runs give the same table.

use crate::common;
use common::run;
use multiconn_scenario::{Column, RunOutput};
use serde_json::Value;

/// One MP-QUIC download over a plain link (path 0) and a split whose second leg is slower and
/// lossy (path 1), next to a single-path UDP flow through the same split.
const MIXED: &str = r#"
[run]
duration = "4 s"
bin = "50 ms"

[[link]]
name = "wifi"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "40 packets"

[[link]]
name = "leg1"
between = ["server", "client"]
rate = "15 Mbit/s"
delay = { model = "normal", mean = "10 ms", cv = 0.2 }
queue = "60 packets"

[[link]]
name = "leg2"
between = ["server", "client"]
rate = "15 Mbit/s"
delay = "40 ms"
queue = "60 packets"
[link.forward]
loss = "0.5 %"

[[split]]
name = "dc"
legs = ["leg1", "leg2"]
policy = { model = "batch", size = 20, share = 0.5 }
t_reordering = "50 ms"

[[flow]]
name = "mp"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "3 MB"
paths = [["wifi"], ["dc"]]

[[flow]]
name = "cbr"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "4 Mbit/s"
route = ["dc"]
"#;

/// The time-series table, read by column name.
struct Table<'a>(&'a RunOutput);

impl<'a> Table<'a> {
    fn column(&self, name: &str) -> &'a Column {
        &self.0.columns.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no column {name}")).1
    }
    fn f64s(&self, name: &str) -> &'a [f64] {
        match self.column(name) {
            Column::F64(v) => v,
            other => panic!("{name} is {:?}, not float", other.column_type()),
        }
    }
    fn i64s(&self, name: &str) -> &'a [i64] {
        match self.column(name) {
            Column::I64(v) => v,
            other => panic!("{name} is {:?}, not int", other.column_type()),
        }
    }
    fn strs(&self, name: &str) -> &'a [String] {
        match self.column(name) {
            Column::Str(v) => v,
            other => panic!("{name} is {:?}, not text", other.column_type()),
        }
    }
    /// Indices of the rows of `kind` about flow or link `name`.
    fn rows(&self, kind: &str, name: &str) -> Vec<usize> {
        let (kinds, names) = (self.strs("kind"), self.strs("name"));
        (0..kinds.len()).filter(|&i| kinds[i] == kind && names[i] == name).collect()
    }
    fn sum_i(&self, column: &str, rows: &[usize]) -> i64 {
        let v = self.i64s(column);
        rows.iter().map(|&i| v[i]).sum()
    }
}

fn at(rows: &[usize], column: &[i64], value: i64) -> Vec<usize> {
    rows.iter().copied().filter(|&i| column[i] == value).collect()
}

fn u(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("an integer, not {v}"))
}

const DROP_COLUMNS: [&str; 6] = ["drops_queue", "drops_random_loss", "drops_link_down", "drops_udp_buffer", "drops_pdcp_late", "drops_pdcp_window"];

#[test]
fn path_rows_add_up_to_the_network_totals_of_each_path() {
    let (s, out) = run(MIXED, Some(2));
    let t = Table(&out);
    let flow = &s["flows"][0];
    assert!(flow["completion_s"].is_number(), "the download finishes: {flow}");
    let rows = t.rows("path", "mp");
    let paths = t.i64s("path");
    let mut total = 0;
    for p in 0..2 {
        let mine = at(&rows, paths, p);
        assert!(!mine.is_empty(), "path {p} has rows");
        let network = &flow["paths"][p as usize]["network"]["forward"];
        let bytes = t.sum_i("bytes_delivered", &mine);
        assert_eq!(bytes, u(&network["bytes_arrived"]), "path {p}: bytes that reached the client");
        let drops: i64 = DROP_COLUMNS.iter().map(|c| t.sum_i(c, &mine)).sum();
        assert_eq!(drops, u(&network["packets_dropped"]), "path {p}: drops on its forward route");
        assert_eq!(t.sum_i("drops_udp_buffer", &mine), 0, "socket drops are the flow's, after the arrival");
        total += bytes;
    }
    // Path 0 is the only traffic on wifi: the link delivered exactly what the path carried.
    let wifi: Vec<usize> = t.rows("link", "wifi").into_iter().filter(|&i| t.strs("direction")[i] == "forward").collect();
    assert_eq!(t.sum_i("bytes_delivered", &wifi), t.sum_i("bytes_delivered", &at(&rows, paths, 0)));
    let arrived: i64 = (0..2).map(|p| u(&flow["paths"][p]["network"]["forward"]["bytes_arrived"])).sum();
    assert_eq!(total, arrived);
    // A path series has the flow's bins, in time order.
    let (times, flow_rows) = (t.f64s("time_s"), t.rows("flow", "mp"));
    for p in 0..2 {
        let mine: Vec<f64> = at(&rows, paths, p).iter().map(|&i| times[i]).collect();
        assert_eq!(mine, flow_rows.iter().map(|&i| times[i]).collect::<Vec<_>>());
    }
}

#[test]
fn path_rows_carry_the_sender_state_of_each_path() {
    let (s, out) = run(MIXED, Some(2));
    let t = Table(&out);
    let rows = t.rows("path", "mp");
    let retx = t.f64s("retransmissions");
    let cwnd = t.f64s("cwnd_bytes");
    let srtt = t.f64s("srtt_ms");
    // Retransmissions per bin over both paths add up to the flow's.
    let path_retx: f64 = rows.iter().map(|&i| retx[i]).filter(|x| !x.is_nan()).sum();
    assert_eq!(path_retx as i64, u(&s["flows"][0]["retransmissions"]));
    let flow_retx: f64 = t.rows("flow", "mp").iter().map(|&i| retx[i]).filter(|x| !x.is_nan()).sum();
    assert_eq!(path_retx, flow_retx);
    for p in 0..2 {
        let mine = at(&rows, t.i64s("path"), p);
        // Once the path has a state, every later bin has one (carried over).
        let first = mine.iter().position(|&i| !cwnd[i].is_nan()).unwrap_or_else(|| panic!("path {p} reports a window"));
        assert!(mine[first..].iter().all(|&i| cwnd[i] > 0.0 && !srtt[i].is_nan()));
        let last = *mine.last().unwrap();
        let server = &s["flows"][0]["paths"][p as usize]["server"];
        assert_eq!(cwnd[last] as i64, u(&server["cwnd_bytes"]), "path {p}: the last window is the summary's");
    }
    for column in ["queue_packets", "queue_bytes", "reorder_delay_ms", "reorder_buffer_pdus"] {
        assert!(rows.iter().all(|&i| t.f64s(column)[i].is_nan()), "{column} is NaN on path rows");
    }
    assert!(rows.iter().all(|&i| t.strs("direction")[i].is_empty() && t.strs("leg")[i].is_empty()));
}

#[test]
fn a_flow_with_one_path_has_no_path_rows_and_flows_and_links_keep_the_empty_values() {
    let (_, out) = run(MIXED, Some(2));
    let t = Table(&out);
    assert!(t.rows("path", "cbr").is_empty(), "one path: no path rows");
    let (kinds, paths, legs) = (t.strs("kind"), t.i64s("path"), t.strs("leg"));
    for i in 0..kinds.len() {
        if kinds[i] == "flow" || kinds[i] == "link" {
            assert_eq!((paths[i], legs[i].as_str()), (-1, ""), "row {i}");
            assert!(t.f64s("reorder_delay_ms")[i].is_nan() && t.f64s("reorder_buffer_pdus")[i].is_nan(), "row {i}");
        }
    }
    // Row order: flows, links, then paths, legs and bearers.
    let order = ["flow", "link", "path", "leg", "bearer"];
    let rank: Vec<usize> = kinds.iter().map(|k| order.iter().position(|o| o == k).unwrap()).collect();
    assert!(rank.windows(2).all(|w| w[0] <= w[1]), "kinds in order");
    // The cbr flow still gets its split's leg and bearer rows, on path 0.
    assert!(!t.rows("bearer", "cbr").is_empty());
    assert!(t.rows("leg", "cbr").iter().all(|&i| paths[i] == 0));
}

/// Split entry `split` of flow `f`'s path `p` (`None`: a single-path flow's).
fn split<'a>(s: &'a Value, f: usize, p: Option<usize>, split: &str) -> &'a Value {
    match p {
        Some(p) => &s["flows"][f]["paths"][p]["pdcp"][split],
        None => &s["flows"][f]["pdcp"][split],
    }
}

#[test]
fn leg_rows_add_up_to_the_arrivals_at_the_receiving_entity() {
    let (s, out) = run(MIXED, Some(2));
    let t = Table(&out);
    for (flow, f, p, path) in [("mp", 0, Some(1), 1), ("cbr", 1, None, 0)] {
        let entry = split(&s, f, p, "dc");
        let rows = at(&t.rows("leg", flow), t.i64s("path"), path);
        let legs = t.strs("leg");
        let mut arrived = 0;
        for (i, leg) in ["leg1", "leg2"].iter().enumerate() {
            let mine: Vec<usize> = rows.iter().copied().filter(|&r| legs[r] == *leg).collect();
            assert!(!mine.is_empty(), "{flow}: rows for {leg}");
            let detail = &entry["per_leg"][i];
            assert_eq!(detail["leg"], *leg);
            assert_eq!(u(&detail["pdus_arrived"]), u(&entry["pdus_arrived"][i]), "per_leg repeats the arrays");
            assert_eq!(u(&detail["pdus_sent"]), u(&entry["pdus_sent"][i]));
            assert_eq!(u(&detail["bytes_sent"]), u(&entry["bytes_sent"][i]));
            let bytes = t.sum_i("bytes_delivered", &mine);
            assert_eq!(bytes, u(&detail["bytes_arrived"]), "{flow} {leg}: bytes that came over the leg");
            arrived += bytes;
            for c in ["cwnd_bytes", "queue_packets", "reorder_delay_ms", "reorder_buffer_pdus"] {
                assert!(mine.iter().all(|&r| t.f64s(c)[r].is_nan()), "{c} is NaN on leg rows");
            }
        }
        let per_leg: i64 = (0..2).map(|i| u(&entry["per_leg"][i]["bytes_arrived"])).sum();
        assert_eq!(arrived, per_leg, "{flow}: the legs' bytes are the bearer's arrivals");
    }
    // The MP flow's second leg is the lossy one: its random losses appear on its leg row, and
    // only PDUs of the path cross the split.
    let mp_leg2: Vec<usize> = t.rows("leg", "mp").into_iter().filter(|&r| t.strs("leg")[r] == "leg2").collect();
    let mp_path1 = at(&t.rows("path", "mp"), t.i64s("path"), 1);
    assert_eq!(t.sum_i("drops_random_loss", &mp_leg2), t.sum_i("drops_random_loss", &mp_path1));
}

#[test]
fn bearer_rows_deliver_the_path_and_drop_as_the_summary_counts() {
    let (s, out) = run(MIXED, Some(2));
    let t = Table(&out);
    // The split is the path's last hop and the download finished: what the bearer delivered
    // upwards is what reached the client over path 1.
    let bearer = at(&t.rows("bearer", "mp"), t.i64s("path"), 1);
    assert_eq!(t.sum_i("bytes_delivered", &bearer), u(&s["flows"][0]["paths"][1]["network"]["forward"]["bytes_arrived"]));
    for (flow, f, p) in [("mp", 0, Some(1)), ("cbr", 1, None)] {
        let entry = split(&s, f, p, "dc");
        let rows = t.rows("bearer", flow);
        assert_eq!(t.sum_i("drops_pdcp_late", &rows), u(&entry["late_discards"]), "{flow}");
        assert_eq!(t.sum_i("drops_pdcp_window", &rows), u(&entry["window_full"]), "{flow}");
        for c in ["drops_queue", "drops_random_loss", "drops_link_down", "drops_udp_buffer"] {
            assert_eq!(t.sum_i(c, &rows), 0, "{flow}: {c} is not the bearer's");
        }
        let max = entry["max_buffered"].as_f64().unwrap();
        assert!(rows.iter().all(|&r| (0.0..=max).contains(&t.f64s("reorder_buffer_pdus")[r])), "{flow}: a mean within [0, max]");
        assert!(rows.iter().any(|&r| t.f64s("reorder_buffer_pdus")[r] > 0.0), "{flow}: the buffer held something");
    }
}

/// A constant-bit-rate flow of 1500-byte packets through a split whose legs' delays differ and
/// vary: every SDU has the same size, so a bin's delivered bytes count its SDUs. It stops
/// before the end of the run (an event at the very end is in the totals but in no bin).
const REORDERING: &str = r#"
[run]
duration = "5 s"

[[link]]
name = "near"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = { model = "normal", mean = "5 ms", cv = 0.5, reorder = true }
queue = "100 packets"

[[link]]
name = "far"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = { model = "normal", mean = "60 ms", cv = 0.3, reorder = true }
queue = "100 packets"

[[split]]
name = "dc"
legs = ["near", "far"]
policy = { model = "ratio", share = 0.5 }
rat = "lte"
sn_length = 7
t_reordering = "40 ms"

[[flow]]
name = "v"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "18 Mbit/s"
packet_size = "1500 B"
route = ["dc"]
stop = "4.5 s"
"#;

#[test]
fn the_reordering_delay_weighted_by_delivered_pdus_is_the_summary_mean() {
    let (s, out) = run(REORDERING, Some(4));
    let t = Table(&out);
    let entry = &s["flows"][0]["pdcp"]["dc"];
    let rows = t.rows("bearer", "v");
    let (bytes, delay) = (t.i64s("bytes_delivered"), t.f64s("reorder_delay_ms"));
    let (mut pdus, mut weighted) = (0i64, 0.0);
    for &r in &rows {
        assert_eq!(bytes[r] % 1500, 0, "whole SDUs");
        let n = bytes[r] / 1500;
        assert_eq!(n == 0, delay[r].is_nan(), "a bin without deliveries has no mean delay");
        if n > 0 {
            pdus += n;
            weighted += delay[r] * n as f64;
        }
    }
    assert_eq!(pdus, u(&entry["delivered"]));
    let mean = entry["reorder_delay_mean_ms"].as_f64().unwrap();
    assert!(mean > 1.0, "the legs reorder: {entry}");
    assert!((weighted / pdus as f64 - mean).abs() < 1e-6, "{} vs {mean}", weighted / pdus as f64);
    // Both PDCP drop causes happen here (a 64-PDU window, a 40 ms timer) and land on the bearer.
    let late = t.sum_i("drops_pdcp_late", &rows);
    let window = t.sum_i("drops_pdcp_window", &rows);
    assert!(late > 0 && window > 0, "late {late}, window {window}: {entry}");
    assert_eq!(late, u(&entry["late_discards"]));
    assert_eq!(window, u(&entry["window_full"]));
    let flow = t.rows("flow", "v");
    assert_eq!(t.sum_i("drops_pdcp_late", &flow), late);
    assert_eq!(t.sum_i("drops_pdcp_window", &flow), window);
}

#[test]
fn without_reordering_nothing_waits_in_the_buffer() {
    let text = REORDERING.replace("t_reordering = \"40 ms\"", "reordering = false");
    let (_, out) = run(&text, Some(4));
    let t = Table(&out);
    let rows = t.rows("bearer", "v");
    assert!(rows.iter().all(|&r| t.f64s("reorder_buffer_pdus")[r] == 0.0));
    assert!(rows.iter().all(|&r| t.f64s("reorder_delay_ms")[r] == 0.0 || t.f64s("reorder_delay_ms")[r].is_nan()));
}

#[test]
fn mptcp_flows_get_path_rows_too() {
    let text = MIXED.replace("transport = \"quic\"\napp = \"bulk\"\nsize = \"3 MB\"", "transport = \"tcp\"\napp = \"bulk\"\nsize = \"3 MB\"");
    let (s, out) = run(&text, Some(2));
    assert_eq!(s["flows"][0]["transport"], "tcp");
    let t = Table(&out);
    let rows = t.rows("path", "mp");
    for p in 0..2 {
        let mine = at(&rows, t.i64s("path"), p);
        assert_eq!(t.sum_i("bytes_delivered", &mine), u(&s["flows"][0]["paths"][p as usize]["network"]["forward"]["bytes_arrived"]));
        assert!(mine.iter().any(|&i| t.f64s("cwnd_bytes")[i] > 0.0), "subflow {p} reports its window");
    }
    let retx = t.f64s("retransmissions");
    let path_retx: f64 = rows.iter().map(|&i| retx[i]).filter(|x| !x.is_nan()).sum();
    assert_eq!(path_retx as i64, u(&s["flows"][0]["retransmissions"]));
}

#[test]
fn two_runs_give_the_same_rows() {
    let digest = |out: &RunOutput| format!("{:?}", out.columns);
    let (a, first) = run(MIXED, Some(7));
    let (b, second) = run(MIXED, Some(7));
    assert_eq!(digest(&first), digest(&second));
    let without_wall = |mut v: Value| {
        v.as_object_mut().unwrap().shift_remove("wall_time_s");
        v
    };
    assert_eq!(without_wall(a), without_wall(b));
}

/// A flow row's `drops_ack` is the part of its drops in the return direction: summed over the
/// bins it is the summary's `drops_ack`, and what the reverse direction of the link dropped.
#[test]
fn flow_rows_tell_the_ack_drops_apart() {
    let text = r#"
[run]
duration = "5 s"
[[link]]
name = "l"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "20 ms"
queue = "20 packets"
[link.reverse]
rate = "0.2 Mbit/s"
queue = "3 packets"
[[flow]]
name = "f"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
"#;
    let (s, out) = run(text, Some(1));
    let t = Table(&out);
    let flow = &s["flows"][0];
    let rows = t.rows("flow", "f");
    let sum = |key: &str| -> i64 { flow[key].as_object().unwrap().values().map(u).sum() };
    let ack = t.sum_i("drops_ack", &rows);
    assert!(ack > 0, "the slow return direction drops ACKs");
    assert_eq!(ack, sum("drops_ack"));
    let all: i64 = DROP_COLUMNS.iter().map(|c| t.sum_i(c, &rows)).sum();
    assert_eq!(all, sum("drops"));
    assert_eq!(all - ack, sum("drops_data"));
    let reverse = s["links"].as_array().unwrap().iter().find(|l| l["direction"] == "reverse").unwrap();
    assert_eq!(ack, reverse["drops"].as_object().unwrap().values().map(u).sum::<i64>());
    let links = t.rows("link", "l");
    assert_eq!(t.sum_i("drops_ack", &links), 0, "0 on link rows");
}
