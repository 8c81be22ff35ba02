//! L4S marking in the RAN (`[[cell]] l4s_marking`): a UDP source that sends ECT(1)
//! (`ecn_codepoint = "ect1"`) through a cell it overloads has its packets arrive CE, as many
//! as the cell's summary says it marked; below the cell's rate nothing is marked; ECT(0)
//! traffic is never marked and runs exactly as without marking; the predicted rule marks too;
//! a split over two cells marks on both legs; the same seed gives the same marks; a cell
//! without marking and a UDP flow without a codepoint read as before; bad settings give one
//! line naming the field.

use crate::common::{refusal, run};
use serde_json::Value;

/// A server, a 10 ms core link, a cell with one UE at 50 m (75 Mbit/s at the RLC), and a CBR
/// UDP flow of ECT(1) packets down to it.
const CELL: &str = r#"
[run]
duration = "1 s"

[[link]]
name = "core"
between = ["server", "enb"]
rate = "10 Gbit/s"
delay = "10 ms"
queue = "1000 packets"

[[cell]]
name = "lte"
enb = "enb"
ues = [{ node = "ue", distance_m = 50 }]
fading = "none"
l4s_marking = { model = "sojourn" }

[[flow]]
name = "dl"
from = "server"
to = "ue"
transport = "udp"
app = "cbr"
rate = "100 Mbit/s"
stop = "0.5 s"
ecn_codepoint = "ect1"
route = ["core", "lte"]
"#;

fn without_wall_time(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("wall_time_s");
    v
}

fn ce_received(summary: &Value) -> u64 {
    summary["flows"][0]["ecn"]["ce_packets_received"].as_u64().unwrap()
}

fn cell_l4s(summary: &Value) -> &Value {
    &summary["cells"][0]["ues"][0]["l4s_marking"]
}

#[test]
fn ect1_packets_through_an_overloaded_cell_arrive_ce_as_the_cell_counts_them() {
    let (summary, _) = run(CELL, Some(1));
    let flow = &summary["flows"][0];
    assert_eq!(flow["ecn"]["codepoint"], "ect1");
    let delivered = flow["packets_delivered"].as_u64().unwrap();
    let ce = ce_received(&summary);
    let l4s = cell_l4s(&summary);
    // 100 Mbit/s into 75: the queue passes 1 ms within a few ms and keeps growing until the
    // source stops; almost every packet is marked.
    assert!(ce > delivered * 9 / 10 && ce < delivered, "{ce} CE of {delivered}");
    assert_eq!(l4s["downlink"]["ce_marks"].as_u64(), Some(ce), "{l4s}");
    assert_eq!(l4s["downlink"]["arrived_ce"].as_u64(), Some(0));
    assert_eq!(l4s["uplink"]["l4s_packets"].as_u64(), Some(0));
    // Below the cell's rate every packet is served in the TTI after it arrives: none waits
    // 1 ms.
    let light = CELL.replace("rate = \"100 Mbit/s\"", "rate = \"20 Mbit/s\"");
    let (summary, _) = run(&light, Some(1));
    assert!(summary["flows"][0]["packets_delivered"].as_u64().unwrap() > 800);
    assert_eq!(ce_received(&summary), 0);
    assert_eq!(cell_l4s(&summary)["downlink"]["ce_marks"].as_u64(), Some(0));
    // The same seed, the same marks (and the same run).
    assert_eq!(without_wall_time(run(CELL, Some(1)).0), without_wall_time(run(CELL, Some(1)).0));
}

#[test]
fn classic_packets_are_never_marked_and_run_as_without_marking() {
    for codepoint in ["ect0", "not_ect"] {
        let classic = CELL.replace("ecn_codepoint = \"ect1\"", &format!("ecn_codepoint = \"{codepoint}\""));
        let (marked, _) = run(&classic, Some(1));
        let (plain, _) = run(&classic.replace("l4s_marking = { model = \"sojourn\" }\n", ""), Some(1));
        assert_eq!(cell_l4s(&marked)["downlink"]["ce_marks"].as_u64(), Some(0));
        assert_eq!(cell_l4s(&marked)["downlink"]["l4s_packets"].as_u64(), Some(0));
        assert_eq!(marked["flows"], plain["flows"], "{codepoint}");
        let mut cells = marked["cells"].clone();
        cells[0]["ues"][0].as_object_mut().unwrap().remove("l4s_marking");
        assert_eq!(cells, plain["cells"]);
        assert!(plain["cells"][0]["ues"][0].get("l4s_marking").is_none(), "a cell without marking reads as before");
    }
    // A flow without a codepoint has no ecn block.
    let (summary, _) = run(&CELL.replace("ecn_codepoint = \"ect1\"\n", ""), Some(1));
    assert!(summary["flows"][0].get("ecn").is_none());
    assert_eq!(cell_l4s(&summary)["downlink"]["l4s_packets"].as_u64(), Some(0));
}

#[test]
fn the_predicted_rule_marks_an_overload_and_reports_its_rate_estimate() {
    let text = CELL.replace("l4s_marking = { model = \"sojourn\" }", "l4s_marking = { model = \"predicted\", ramp_min_th = \"1 ms\", ramp_range = \"4 ms\" }");
    let (summary, _) = run(&text, Some(1));
    let delivered = summary["flows"][0]["packets_delivered"].as_u64().unwrap();
    let ce = ce_received(&summary);
    assert!(ce > delivered * 9 / 10, "{ce} CE of {delivered}");
    let l4s = cell_l4s(&summary);
    assert_eq!(l4s["downlink"]["ce_marks"].as_u64(), Some(ce));
    // The UE drains 75.4 Mbit/s (at the RLC) while its buffer holds data.
    let rate = l4s["downlink"]["last_rate_estimate_mbps"].as_f64().unwrap();
    assert!((70.0..76.0).contains(&rate), "{rate} Mbit/s");
    // Below the cell's rate the queue holds at most a packet or two ahead: under 1 ms.
    let (summary, _) = run(&text.replace("rate = \"100 Mbit/s\"", "rate = \"20 Mbit/s\""), Some(1));
    assert_eq!(ce_received(&summary), 0);
}

#[test]
fn a_split_over_two_marking_cells_marks_on_both_legs() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/endc_cells.toml"))
        .unwrap()
        .replace("duration = \"10 s\"", "duration = \"1 s\"")
        .replace("ues = [{ node = \"ue\", distance_m = 300 }]", "ues = [{ node = \"ue\", distance_m = 300 }]\nl4s_marking = { model = \"sojourn\" }")
        .replace("transport = \"quic\"\napp = \"bulk\"", "transport = \"udp\"\napp = \"cbr\"\nrate = \"400 Mbit/s\"\nstop = \"0.5 s\"\necn_codepoint = \"ect1\"");
    let (summary, _) = run(&text, Some(1));
    let marks: Vec<u64> = (0..2).map(|c| summary["cells"][c]["ues"][0]["l4s_marking"]["downlink"]["ce_marks"].as_u64().unwrap()).collect();
    assert!(marks.iter().all(|&m| m > 100), "{marks:?}");
    let ce = ce_received(&summary);
    assert!(ce <= marks.iter().sum::<u64>() && ce > 0, "{ce} CE received, {marks:?} marked");
}

#[test]
fn bad_marking_settings_give_one_line_naming_the_field() {
    let cases = [
        ("l4s_marking = { model = \"sojourn\" }", "l4s_marking = { model = \"sojourn\", step_threshold = \"20 s\" }", "cell.lte.l4s_marking.step_threshold: 20000 is not allowed: must be at most 10000 ms"),
        ("l4s_marking = { model = \"sojourn\" }", "l4s_marking = { model = \"predicted\", rate_window = \"0 s\" }", "cell.lte.l4s_marking.rate_window: 0 is not allowed"),
        ("l4s_marking = { model = \"sojourn\" }", "l4s_marking = { model = \"predicted\", rate_floor = \"0 bit/s\" }", "cell.lte.l4s_marking.rate_floor: 0 is not allowed"),
        ("l4s_marking = { model = \"sojourn\" }", "l4s_marking = { model = \"codel\" }", "cell.lte.l4s_marking"),
        ("l4s_marking = { model = \"sojourn\" }", "l4s_marking = { model = \"sojourn\", ramp_min_th = \"1 ms\" }", "unknown field `ramp_min_th`"),
        ("ecn_codepoint = \"ect1\"", "ecn_codepoint = \"l4s\"", "flow.dl.ecn_codepoint: unknown ECN codepoint \"l4s\"; known: not_ect, ect0, ect1"),
        ("transport = \"udp\"\napp = \"cbr\"\nrate = \"100 Mbit/s\"\nstop = \"0.5 s\"", "transport = \"tcp\"\napp = \"bulk\"", "flow.dl.ecn_codepoint: a tcp flow's ECN follows its `ecn` setting"),
    ];
    for (from, to, want) in cases {
        assert!(CELL.contains(from), "{from}");
        let e = refusal(&CELL.replace(from, to));
        assert!(e.contains(want), "{to}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn every_cell_of_a_layout_marks_and_a_handover_keeps_the_counts() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/handover_route.toml"))
        .unwrap()
        .replace("duration = \"66 s\"", "duration = \"20 s\"")
        .replace("fading = \"none\"\n", "fading = \"none\"\nl4s_marking = { model = \"predicted\" }\n")
        .replace("transport = \"quic\"\napp = \"bulk\"", "transport = \"udp\"\napp = \"cbr\"\nrate = \"40 Mbit/s\"\necn_codepoint = \"ect1\"");
    let (summary, _) = run(&text, Some(1));
    let ran = &summary["cells"][0];
    assert!(ran["ues"][0]["handovers"].as_u64().unwrap() >= 1, "{}", ran["ues"][0]["handovers"]);
    let marks: Vec<u64> = ran["cells"].as_array().unwrap().iter().map(|c| c["ues"][0]["l4s_marking"]["downlink"]["ce_marks"].as_u64().unwrap()).collect();
    // 40 Mbit/s into a 50-RB cell: the queue builds in the first cell and in the next.
    assert!(marks.iter().filter(|&&m| m > 0).count() >= 2, "{marks:?}");
    let ce = ce_received(&summary);
    assert!(ce > 0 && ce <= marks.iter().sum::<u64>(), "{ce} CE received, {marks:?} marked");
}

/// A split over a 10 ms and a 40 ms link, one PDU per leg in turn, carrying a CBR UDP flow of
/// ECT(1) packets well below either link's rate (one every 6 ms): what comes over the fast leg
/// waits 24 ms in reordering for the slow leg's packet before it (30 ms more of delay, less
/// the 6 ms between them), what comes over the slow leg not at all.
const SPLIT: &str = r#"
[run]
duration = "2 s"

[[link]]
name = "fast"
between = ["server", "ue"]
rate = "50 Mbit/s"
delay = "10 ms"
queue = "1000 packets"

[[link]]
name = "slow"
between = ["server", "ue"]
rate = "50 Mbit/s"
delay = "40 ms"
queue = "1000 packets"

[[split]]
name = "dc"
legs = ["fast", "slow"]
policy = { model = "alternate" }
t_reordering = "200 ms"
l4s_reorder_threshold = "5 ms"

[[flow]]
name = "dl"
from = "server"
to = "ue"
transport = "udp"
app = "cbr"
rate = "2 Mbit/s"
stop = "1 s"
ecn_codepoint = "ect1"
route = ["dc"]
"#;

/// The flow's PDCP block for split `dc` (the summary's `flows[].pdcp`).
fn split_block(summary: &Value) -> &Value {
    let block = &summary["flows"][0]["pdcp"]["dc"];
    assert!(block.is_object(), "no pdcp block for dc: {}", summary["flows"][0]);
    block
}

#[test]
fn a_split_marks_the_ect1_packets_it_held_in_reordering_beyond_the_threshold() {
    let (summary, _) = run(SPLIT, Some(1));
    let split = split_block(&summary);
    let marks = split["l4s_reorder_marks"].as_u64().unwrap();
    let delivered = split["delivered"].as_u64().unwrap();
    eprintln!("marks {marks} of {delivered} delivered; reordering mean {} ms, max {} ms", split["reorder_delay_mean_ms"], split["reorder_delay_max_ms"]);
    // The fast leg's half waited 24 ms, the slow leg's none.
    assert!(delivered > 100, "{split}");
    assert!((marks as f64 - delivered as f64 / 2.0).abs() <= 2.0, "{marks} of {delivered}: {split}");
    assert_eq!(ce_received(&summary), marks, "every mark arrives at the receiver");
    // Above the wait nothing is marked; ECT(0) is never marked; without the setting the split
    // reads as before (no count).
    let (high, _) = run(&SPLIT.replace("l4s_reorder_threshold = \"5 ms\"", "l4s_reorder_threshold = \"40 ms\""), Some(1));
    assert_eq!((split_block(&high)["l4s_reorder_marks"].as_u64(), ce_received(&high)), (Some(0), 0));
    let (ect0, _) = run(&SPLIT.replace("ecn_codepoint = \"ect1\"", "ecn_codepoint = \"ect0\""), Some(1));
    assert_eq!((split_block(&ect0)["l4s_reorder_marks"].as_u64(), ce_received(&ect0)), (Some(0), 0));
    let (off, _) = run(&SPLIT.replace("l4s_reorder_threshold = \"5 ms\"\n", ""), Some(1));
    assert!(split_block(&off).get("l4s_reorder_marks").is_none());
    assert_eq!(ce_received(&off), 0);
}

#[test]
fn a_bad_reorder_threshold_is_refused_in_one_line_naming_the_field() {
    for (set, expect) in [
        ("l4s_reorder_threshold = \"0 ms\"", "split.dc.l4s_reorder_threshold"),
        ("l4s_reorder_threshold = \"20 s\"", "at most 10 s"),
        ("l4s_reorder_threshold = \"5 ms\"\nreordering = false", "reordering = false"),
    ] {
        let e = refusal(&SPLIT.replace("l4s_reorder_threshold = \"5 ms\"", set));
        assert!(e.contains(expect) && e.contains("l4s_reorder_threshold"), "{set}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// A batch policy whose share rounds to nothing on one leg is warned about, naming the field;
/// one that rounds to a real split is not.
#[test]
fn a_batch_share_that_rounds_one_leg_away_is_warned_about() {
    let batch = |size: u32, share: &str| SPLIT.replace("policy = { model = \"alternate\" }", &format!("policy = {{ model = \"batch\", size = {size}, share = {share} }}"));
    let warned = crate::common::load_str(&batch(1, "0.3")).unwrap();
    let w: Vec<&String> = warned.warnings().iter().filter(|w| w.starts_with("split.dc.policy")).collect();
    assert_eq!(w.len(), 1, "{:?}", warned.warnings());
    assert!(w[0].contains("round(1 × 0.3) = 0 PDUs of each on \"fast\", so \"fast\" carries none"), "{}", w[0]);
    let all = crate::common::load_str(&batch(2, "0.8")).unwrap();
    assert!(all.warnings().iter().any(|w| w.contains("\"slow\" carries none")), "{:?}", all.warnings());
    for (size, share) in [(10, "0.3"), (1, "0"), (1, "1"), (100, "0.5")] {
        let ok = crate::common::load_str(&batch(size, share)).unwrap();
        assert!(!ok.warnings().iter().any(|w| w.starts_with("split.dc.policy")), "{size} {share}: {:?}", ok.warnings());
    }
}
