//! DualPI2 as the discipline of a cell's per-UE RLC buffer (`[[cell]] aqm`): one UE with a
//! Prague (L4S) and a CUBIC (Classic, ECN) TCP flow down through a DualPI2 cell keeps the L4S
//! packets' wait in the cell low while the Classic ones wait near PI2's target, where a
//! drop-tail RLC buffer makes both wait alike; `aqm = "none"` is the drop-tail cell exactly;
//! every cell of a layout runs it and a handover forwards what it holds with the invariant
//! checker on; an EN-DC split steering on its DualPI2 cells' delivery status runs with the
//! PDCP order checked; bad settings give one line naming `cell.<name>.aqm`, and the other
//! disciplines run on a cell too.

use crate::common::{refusal, run};
use serde_json::Value;

/// A server, a 10 ms core link, a cell with one UE at 50 m (about 75 Mbit/s at the RLC), and
/// a Prague and a CUBIC (ECN) TCP download to it.
const CELL: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "core"
between = ["server", "enb"]
rate = "10 Gbit/s"
delay = "10 ms"
queue = "10000 packets"

[[cell]]
name = "lte"
enb = "enb"
ues = [{ node = "ue", distance_m = 50 }]
fading = "none"
aqm = "dualpi2"

[[flow]]
name = "l4s"
from = "server"
to = "ue"
transport = "tcp"
app = "bulk"
cc = "prague"
route = ["core", "lte"]

[[flow]]
name = "classic"
from = "server"
to = "ue"
transport = "tcp"
app = "bulk"
cc = "cubic"
ecn = true
route = ["core", "lte"]
"#;

fn without_wall_time(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("wall_time_s");
    v
}

fn goodput(summary: &Value, flow: usize) -> f64 {
    summary["flows"][flow]["goodput_mbps"].as_f64().unwrap()
}

fn final_srtt(summary: &Value, flow: usize) -> f64 {
    summary["flows"][flow]["final_srtt_ms"].as_f64().unwrap()
}

#[test]
fn an_l4s_flow_waits_little_in_a_dualpi2_cell_and_a_classic_one_near_the_target() {
    let (summary, _) = run(CELL, Some(1));
    let ue = &summary["cells"][0]["ues"][0];
    let aqm = &ue["aqm"]["downlink"];
    assert_eq!(aqm["discipline"], "dualpi2");
    let (l, c) = (&aqm["dualpi2"]["l4s_sojourn"], &aqm["dualpi2"]["classic_sojourn"]);
    let ms = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let (l_p99, c_mean, c_p99) = (ms(l, "p99_ms"), ms(c, "mean_ms"), ms(c, "p99_ms"));
    let (g_l, g_c) = (goodput(&summary, 0), goodput(&summary, 1));
    let (tail, _) = run(&CELL.replace("aqm = \"dualpi2\"\n", ""), Some(1));
    println!(
        "DualPI2 cell: L sojourn p99 {l_p99} ms, C mean {c_mean} ms p99 {c_p99} ms; goodput Prague {g_l} CUBIC {g_c} Mbit/s; final srtt {} / {} ms; drop-tail: goodput {} / {} Mbit/s, final srtt {} / {} ms",
        final_srtt(&summary, 0),
        final_srtt(&summary, 1),
        goodput(&tail, 0),
        goodput(&tail, 1),
        final_srtt(&tail, 0),
        final_srtt(&tail, 1)
    );
    // Each queue forwarded tens of thousands of packets: both flows ran all along.
    assert!(l["packets"].as_u64().unwrap() > 20_000 && c["packets"].as_u64().unwrap() > 20_000, "{aqm}");
    // Prague's packets wait at most about a slot above RLC; CUBIC's near PI2's 15 ms target.
    assert!(l_p99 < 3.0, "L4S sojourn p99 {l_p99} ms");
    assert!((8.0..22.0).contains(&c_mean) && c_p99 < 40.0, "Classic sojourn mean {c_mean} ms, p99 {c_p99} ms");
    // The marks reached the senders: Prague's CE as the cell counted them.
    let coupled = aqm["dualpi2"]["coupled_marks"].as_u64().unwrap() + aqm["dualpi2"]["native_marks"].as_u64().unwrap();
    assert!(coupled > 100, "{aqm}");
    assert_eq!(summary["flows"][0]["ecn"]["client"]["ce_packets_received"].as_u64(), Some(coupled));
    assert_eq!(ue["drops"]["aqm"].as_u64(), Some(aqm["early_drops"].as_u64().unwrap()));
    // Neither starves the other.
    assert!(g_l > g_c / 2.0 && g_c > g_l / 2.0, "{g_l} / {g_c} Mbit/s");
    assert!(g_l + g_c > 60.0, "the cell's 75 Mbit/s mostly used: {g_l} + {g_c}");
    // Prague's RTT is the path's (about 21 ms) plus a slot or two; CUBIC's has the C queue.
    assert!(final_srtt(&summary, 0) < 27.0 && final_srtt(&summary, 0) < final_srtt(&summary, 1), "{} / {} ms", final_srtt(&summary, 0), final_srtt(&summary, 1));
    // Drop-tail: one FIFO per UE, both flows see the same standing queue, far above.
    let (a, b) = (final_srtt(&tail, 0), final_srtt(&tail, 1));
    assert!(a > 40.0 && b > 40.0 && (a - b).abs() < 0.1 * b, "drop-tail srtt {a} / {b} ms");
    assert!(tail["cells"][0]["ues"][0].get("aqm").is_none() && tail["cells"][0]["ues"][0]["drops"].get("aqm").is_none());
}

#[test]
fn aqm_none_is_the_drop_tail_cell_exactly() {
    let text = CELL.replace("duration = \"20 s\"", "duration = \"3 s\"");
    let (none, _) = run(&text.replace("aqm = \"dualpi2\"", "aqm = \"none\""), Some(2));
    let (absent, _) = run(&text.replace("aqm = \"dualpi2\"\n", ""), Some(2));
    assert_eq!(without_wall_time(none), without_wall_time(absent));
}

#[test]
fn every_cell_of_a_layout_runs_it_and_a_handover_forwards_what_it_holds() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/handover_route.toml"))
        .unwrap()
        .replace("duration = \"66 s\"", "duration = \"20 s\"")
        .replace("fading = \"none\"\n", "fading = \"none\"\naqm = \"dualpi2\"\n")
        .replace("transport = \"quic\"\napp = \"bulk\"", "transport = \"tcp\"\napp = \"bulk\"\ncc = \"cubic\"\necn = true")
        + "\n[[flow]]\nname = \"l4s\"\nfrom = \"server\"\nto = \"ue\"\ntransport = \"tcp\"\napp = \"bulk\"\ncc = \"prague\"\nroute = [\"core\", \"ran\"]\n";
    // The invariant checker is on (in-order delivery of both TCP streams across the handovers).
    let (summary, _) = run(&text, Some(1));
    let ran = &summary["cells"][0];
    let handovers = ran["ues"][0]["handovers"].as_u64().unwrap();
    assert!(handovers >= 1, "{}", ran["ues"][0]);
    let served: Vec<(u64, u64)> = ran["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let d = &c["ues"][0]["aqm"]["downlink"]["dualpi2"];
            (d["l4s_sojourn"]["packets"].as_u64().unwrap(), d["classic_sojourn"]["packets"].as_u64().unwrap())
        })
        .collect();
    println!("{handovers} handovers; per cell (L, C) packets through DualPI2: {served:?}; flows {} / {} Mbit/s", goodput(&summary, 0), goodput(&summary, 1));
    assert!(served.iter().filter(|(l, c)| *l > 100 && *c > 100).count() >= 2, "{served:?}");
    for f in 0..2 {
        assert!(goodput(&summary, f) > 1.0, "{}", summary["flows"][f]);
    }
}

#[test]
fn bad_cell_aqm_settings_give_one_line_naming_the_field() {
    let cases = [
        ("aqm = { model = \"dualpi2\", coupling = 0 }", "cell.lte.aqm.coupling: coupling must be above 0 and at most 255, got 0"),
        ("aqm = { model = \"dualpi2\", coupling = -1 }", "cell.lte.aqm.coupling: coupling must be above 0 and at most 255, got -1"),
        ("aqm = { model = \"dualpi2\", tshift = \"1 ms\", wrong = 1 }", "unknown field `wrong`"),
        ("aqm = \"red\"", "cell.lte.aqm"),
        ("aqm = \"dualpi2\"\nl4s_marking = { model = \"sojourn\" }", "cell.lte.aqm: a queue discipline and l4s_marking would both mark the same RLC buffer"),
    ];
    for (to, want) in cases {
        let e = refusal(&CELL.replace("aqm = \"dualpi2\"", to));
        assert!(e.contains(want), "{to}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // The other disciplines are queue disciplines like it: a cell takes them.
    let text = CELL.replace("duration = \"20 s\"", "duration = \"2 s\"");
    for model in ["codel", "pie", "fq_codel"] {
        let (summary, _) = run(&text.replace("aqm = \"dualpi2\"", &format!("aqm = \"{model}\"")), Some(1));
        assert_eq!(summary["cells"][0]["ues"][0]["aqm"]["downlink"]["discipline"], model);
        assert!(goodput(&summary, 0) > 1.0 && goodput(&summary, 1) > 1.0, "{model}");
    }
}

#[test]
fn a_split_over_two_dualpi2_cells_flows_on_their_delivery_status() {
    // The EN-DC split steers by each leg's confirmed PDCP SN (`delivery_credit`), which a
    // DualPI2 cell keeps monotone although L4S packets overtake Classic ones; the PDCP
    // receiver's order is checked by the invariant checker.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/endc_cells.toml"))
        .unwrap()
        .replace("duration = \"10 s\"", "duration = \"4 s\"")
        .replace("ues = [{ node = \"ue\", distance_m = 300 }]", "ues = [{ node = \"ue\", distance_m = 300 }]\naqm = \"dualpi2\"")
        .replace("{ model = \"batch\", size = 20, share = 0.2 }", "{ model = \"adaptive\", signal = \"delivery_credit\" }")
        .replace("transport = \"quic\"\napp = \"bulk\"", "transport = \"tcp\"\napp = \"bulk\"\ncc = \"cubic\"\necn = true")
        + "\n[[flow]]\nname = \"l4s\"\nfrom = \"server\"\nto = \"ue\"\ntransport = \"tcp\"\napp = \"bulk\"\ncc = \"prague\"\nroute = [\"core\", \"endc\"]\n";
    let (summary, _) = run(&text, Some(1));
    let legs: Vec<(u64, u64)> = (0..2)
        .map(|c| {
            let d = &summary["cells"][c]["ues"][0]["aqm"]["downlink"]["dualpi2"];
            (d["l4s_sojourn"]["packets"].as_u64().unwrap(), d["classic_sojourn"]["packets"].as_u64().unwrap())
        })
        .collect();
    println!("per leg (L, C) packets through DualPI2: {legs:?}; goodput {} / {} Mbit/s", goodput(&summary, 0), goodput(&summary, 1));
    // Both legs carry traffic, and each queue kind crosses the split (how the policy shares
    // them is its own affair: with seed 1 the Classic PDUs went mostly to LTE, the L4S ones
    // mostly to NR).
    assert!(legs.iter().all(|&(l, c)| l + c > 500), "{legs:?}");
    assert!(legs.iter().map(|l| l.0).sum::<u64>() > 1000 && legs.iter().map(|l| l.1).sum::<u64>() > 1000, "{legs:?}");
    assert!(goodput(&summary, 0) > 5.0 && goodput(&summary, 1) > 5.0);
}
