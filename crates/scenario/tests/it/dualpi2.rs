//! DualPI2 (RFC 9332, Linux `sch_dualpi2`) on a scenario's link: Classic TCP flows, with and
//! without ECN, settle near the PI2 target of 15 ms at 100 Mbit/s; the summary's `aqm` block
//! counts the drops and marks the flows see; runs are reproducible from the seed; bad
//! parameters are refused in one line naming the field.

use crate::common::{load_str, run, run_with};
use multiconn_scenario::{Column, RunOutput};
use serde_json::Value;

const CLASSIC: &str = r#"
[run]
duration = "30 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "100 Mbit/s"
delay = "10 ms"
queue = "10000 packets"
aqm = "dualpi2"

[[flow]]
name = "cubic"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "cubic"

[[flow]]
name = "newreno"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "newreno"
start = "1 s"

[[flow]]
name = "cubic-ecn"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "cubic"
ecn = true
start = "2 s"

[[flow]]
name = "newreno-ecn"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "newreno"
ecn = true
start = "3 s"
"#;

fn strs<'a>(out: &'a RunOutput, name: &str) -> &'a [String] {
    match &out.columns.iter().find(|(n, _)| n == name).unwrap().1 {
        Column::Str(v) => v,
        _ => panic!("{name} is not text"),
    }
}

fn f64s<'a>(out: &'a RunOutput, name: &str) -> &'a [f64] {
    match &out.columns.iter().find(|(n, _)| n == name).unwrap().1 {
        Column::F64(v) => v,
        _ => panic!("{name} is not float"),
    }
}

/// The forward bottleneck's mean queueing delay in seconds over the bins from `from_s` on:
/// the time-weighted mean queue in bytes at 100 Mbit/s.
fn queue_delay_after(out: &RunOutput, from_s: f64) -> f64 {
    let (kind, name, dir) = (strs(out, "kind"), strs(out, "name"), strs(out, "direction"));
    let (time, bytes) = (f64s(out, "time_s"), f64s(out, "queue_bytes"));
    let rows: Vec<usize> = (0..kind.len()).filter(|&i| kind[i] == "link" && name[i] == "bottleneck" && dir[i] == "forward" && time[i] >= from_s).collect();
    assert!(rows.len() > 10, "{} bins", rows.len());
    rows.iter().map(|&i| bytes[i] * 8.0 / 100e6).sum::<f64>() / rows.len() as f64
}

#[test]
fn classic_tcp_flows_settle_near_the_15_ms_target() {
    let (s, out) = run(CLASSIC, Some(1));
    let link = &s["links"][0];
    assert_eq!(link["direction"], "forward");
    let delay = queue_delay_after(&out, 10.0);
    let util = link["utilization"].as_f64().unwrap();
    let block = &link["aqm"];
    eprintln!("DualPI2, 4 Classic TCP flows at 100 Mbit/s: mean queueing delay after 10 s {:.2} ms, utilization {util:.3}, {block}", delay * 1e3);
    // The PI2 controller's integral term rests only where the queue delay it measures equals
    // its target; TCP's sawtooth swings around it.
    assert!((0.010..0.020).contains(&delay), "mean queueing delay {delay} s, target 15 ms");
    assert!(util > 0.9, "utilization {util}");
    assert_eq!(block["discipline"], "dualpi2");
    assert_eq!(block["tail_drops"], 0, "the 10000-packet limit is never reached");
    // Not-ECT packets are dropped with p'², ECT(0) ones marked.
    assert!(block["early_drops"].as_u64().unwrap() > 0, "{block}");
    let marks = block["ecn_marks"].as_u64().unwrap();
    assert!(marks > 0, "{block}");
    let flows = s["flows"].as_array().unwrap();
    let seen: u64 = flows.iter().map(|f| f["ecn"]["client"]["ce_packets_received"].as_u64().unwrap_or(0)).sum();
    assert_eq!(seen, marks, "the receivers saw every mark");
    for f in flows {
        let ecn = f["name"].as_str().unwrap().ends_with("-ecn");
        assert_eq!(f["retransmissions"].as_u64().unwrap() > 0, !ecn, "{}: {}", f["name"], f["retransmissions"]);
    }
    let drops = ["tail_drops", "early_drops", "overflow_drops"].iter().map(|k| block[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(drops, link["drops"]["queue"].as_u64().unwrap());
    // By queue and rule: Classic traffic only, so every early drop and mark is the C queue's.
    let by = &block["dualpi2"];
    assert_eq!(by["classic_drops"], block["early_drops"], "{by}");
    assert_eq!(by["classic_marks"], block["ecn_marks"], "{by}");
    for k in ["l4s_drops", "coupled_marks", "native_marks"] {
        assert_eq!(by[k], 0, "{k}: {by}");
    }
}

fn aqm_block(summary: &Value) -> &Value {
    &summary["links"][0]["aqm"]
}

#[test]
fn dualpi2_runs_are_reproducible_and_depend_on_the_seed() {
    let sets = [("run.duration", "\"8 s\"")];
    let a = run_with(CLASSIC, &sets, 3);
    let b = run_with(CLASSIC, &sets, 3);
    assert_eq!(a, b);
    let c = run_with(CLASSIC, &sets, 4);
    assert_ne!(aqm_block(&a), aqm_block(&c), "DualPI2's drops and marks are random draws");
}

#[test]
fn the_table_form_and_its_variants_load() {
    for aqm in [
        "aqm = { model = \"dualpi2\" }",
        "aqm = { model = \"dualpi2\", target = \"15 ms\", tupdate = \"16 ms\", alpha = 0.16, beta = 3.2, coupling = 2, step_threshold = \"1 ms\" }",
        "aqm = { model = \"dualpi2\", l_aqm = \"ramp\", ramp_min_th = \"800 us\", ramp_range = \"400 us\", scheduler = \"ts_fifo\", tshift = \"50 ms\", pi_input = \"classic\" }",
        "aqm = { model = \"dualpi2\", max_rtt = \"300 ms\", typical_rtt = \"50 ms\", overload = \"overflow\", drop_at = \"enqueue\", ecn_mask = \"any\", classic_protection = \"25 %\", step_packets = 5, min_qlen_step = 2 }",
    ] {
        let text = CLASSIC.replace("aqm = \"dualpi2\"", aqm);
        load_str(&text).unwrap_or_else(|e| panic!("{aqm}: {e}"));
    }
}

#[test]
fn bad_dualpi2_parameters_are_refused_in_one_line_naming_the_field() {
    for (aqm, expected) in [
        ("aqm = { model = \"dualpi2\", coupling = 0 }", "link.bottleneck.aqm.coupling: coupling must be above 0 and at most 255, got 0"),
        ("aqm = { model = \"dualpi2\", coupling = -2 }", "link.bottleneck.aqm.coupling: coupling must be above 0 and at most 255, got -2"),
        ("aqm = { model = \"dualpi2\", coupling = 300 }", "link.bottleneck.aqm.coupling: coupling must be above 0 and at most 255, got 300"),
        ("aqm = { model = \"dualpi2\", alpha = 0 }", "link.bottleneck.aqm.alpha: alpha must be a finite number of Hz above zero, got 0"),
        ("aqm = { model = \"dualpi2\", tupdate = \"0 ms\" }", "link.bottleneck.aqm.tupdate: tupdate must be above zero"),
        ("aqm = { model = \"dualpi2\", l_aqm = \"red\" }", "link.bottleneck.aqm.l_aqm: l_aqm must be \"step\" or \"ramp\", got \"red\""),
        ("aqm = { model = \"dualpi2\", scheduler = \"fifo\" }", "link.bottleneck.aqm.scheduler: scheduler must be \"wrr\" or \"ts_fifo\", got \"fifo\""),
        ("aqm = { model = \"dualpi2\", classic_protection = \"12.5 %\" }", "link.bottleneck.aqm.classic_protection: classic_protection must be a whole percentage from 0 % to 100 %, got 12.5 %"),
        ("aqm = { model = \"dualpi2\", step_threshold = \"1 ms\", step_packets = 4 }", "link.bottleneck.aqm.step_packets: give the step as a sojourn"),
        ("aqm = { model = \"dualpi2\", ramp_range = \"1 ms\" }", "link.bottleneck.aqm.ramp_range: ramp_range is for the ramp"),
        ("aqm = { model = \"dualpi2\", tshift = \"10 ms\" }", "link.bottleneck.aqm.tshift: tshift is for the time-shifted FIFO"),
        ("aqm = { model = \"dualpi2\", max_rtt = \"100 ms\", alpha = 0.2 }", "link.bottleneck.aqm.max_rtt: max_rtt sets target, tupdate, alpha and beta (as tc does), and alpha is given too"),
        ("aqm = { model = \"dualpi2\", overload = \"mark\" }", "link.bottleneck.aqm.overload: overload must be \"drop\" or \"overflow\", got \"mark\""),
        ("aqm = { model = \"dualpi2\", ecn = true }", "unknown field `ecn`"),
        ("[link.reverse]\naqm = { model = \"dualpi2\", coupling = 0 }", "link.bottleneck.reverse.aqm.coupling: coupling must be above 0"),
    ] {
        let text = CLASSIC.replace("aqm = \"dualpi2\"", aqm);
        let e = load_str(&text).unwrap_err().to_string();
        assert!(e.contains(expected) && e.lines().count() == 1, "{aqm}: {e}");
    }
}

#[test]
fn dualpi2_runs_on_a_splits_legs() {
    // The dual-connectivity example with DualPI2 on both legs' 500-packet queues and an ECN
    // flow (ECT(0): the C queue marks it).
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/split_queues.toml")).unwrap();
    let sets = [
        ("link.lte.aqm", "\"dualpi2\""),
        ("link.nr.aqm", "\"dualpi2\""),
        ("link.lte.queue", "\"500 packets\""),
        ("link.nr.queue", "\"500 packets\""),
        ("flow.f.ecn", "true"),
    ];
    let s = run_with(&text, &sets, 1);
    let legs: Vec<&Value> = s["links"].as_array().unwrap().iter().filter(|l| l["direction"] == "forward").collect();
    assert_eq!(legs.len(), 2);
    let mut marks = 0;
    for leg in legs {
        assert_eq!(leg["aqm"]["discipline"], "dualpi2", "{leg}");
        assert_eq!(leg["aqm"]["early_drops"], 0, "ECT(0) is marked, not dropped: {leg}");
        marks += leg["aqm"]["ecn_marks"].as_u64().unwrap();
    }
    assert!(marks > 0, "the legs' standing queues above 15 ms are marked");
    assert_eq!(s["flows"][0]["ecn"]["client"]["ce_packets_received"].as_u64(), Some(marks));
}
