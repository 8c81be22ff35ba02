//! A cell with a layout (`[[cell]] layout = ...`, docs/mobility.md): the example's QUIC download
//! past four cells is handed over three times, each leaving its 40 ms interruption, and
//! completes the run; DAPS leaves none; conditional handover prepares each target before it
//! executes; the same seed gives the same run; bad routes, a time-to-trigger outside TS
//! 38.331's list, a cell outside the layout and conditional handover with DAPS or prepared
//! after it executes are refused naming the field.

use crate::common::{refusal, run};
use serde_json::Value;

fn example() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/handover_route.toml")).unwrap()
}

fn ue(summary: &Value) -> &Value {
    &summary["cells"][0]["ues"][0]
}

#[test]
fn the_example_hands_the_ue_over_three_times_leaving_each_interruption() {
    let (s, _) = run(&example(), Some(1));
    let u = ue(&s);
    assert_eq!(u["handovers"], 3, "{u}");
    assert_eq!(u["interruptions_ms"], serde_json::json!([40.0, 40.0, 40.0]));
    assert_eq!(u["serving_cell"], 3);
    // Each handover starts about 50 m past the border (A3 needs 4 dB, then TTT and filtering).
    let starts: Vec<f64> = u["events"].as_array().unwrap().iter().filter(|e| e["event"] == "handover_start").map(|e| e["x_m"].as_f64().unwrap()).collect();
    for (x, border) in starts.iter().zip([250.0, 750.0, 1250.0]) {
        assert!(*x > border + 20.0 && *x < border + 120.0, "handover at {x} m, border {border}");
    }
    // The download goes on through them.
    let g = s["flows"][0]["goodput_mbps"].as_f64().unwrap();
    assert!(g > 15.0, "{g} Mbit/s");
    let mut again = run(&example(), Some(1)).0;
    let mut first = s.clone();
    first.as_object_mut().unwrap().remove("wall_time_s");
    again.as_object_mut().unwrap().remove("wall_time_s");
    assert_eq!(first, again, "the same seed gives the same run");
    // With DAPS there is no interruption.
    let daps = run(&example().replace("x2_delay = \"5 ms\" }", "x2_delay = \"5 ms\", daps = true }"), Some(1)).0;
    assert_eq!(ue(&daps)["interruptions_ms"], serde_json::json!([0.0, 0.0, 0.0]));
    // Conditional handover: each target reported (prepared), ready, then executed, with the
    // interruption of the classic procedure.
    let cho = run(&example().replace("x2_delay = \"5 ms\" }", "x2_delay = \"5 ms\", conditional = true }"), Some(1)).0;
    let u = ue(&cho);
    assert_eq!(u["interruptions_ms"], serde_json::json!([40.0, 40.0, 40.0]), "{u}");
    let kinds: Vec<&str> = u["events"].as_array().unwrap().iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "candidate_ready").count(), 3, "{kinds:?}");
    for w in kinds.chunks(4) {
        assert_eq!(w, ["report", "candidate_ready", "handover_start", "handover_end"], "{kinds:?}");
    }
    // Without forwarding the source's buffer is lost at each handover: the flow loses more.
    let lossy = run(&example().replace("x2_delay = \"5 ms\" }", "x2_delay = \"5 ms\", forwarding = false }"), Some(1)).0;
    let down = |s: &Value| s["flows"][0]["drops"]["link_down"].as_u64().unwrap();
    assert!(down(&lossy) > down(&s), "{} vs {}", down(&lossy), down(&s));
}

#[test]
fn a_layout_without_traffic_still_measures_and_hands_over() {
    // A second operator's cells on another carrier that no flow crosses: its UE is measured
    // and handed over all the same (the RAN asks for its first wake-up at the start).
    let idle = format!(
        "{}\n[[cell]]\nname = \"op_b\"\nenb = \"gw_b\"\ncarrier_mhz = 1850\nfading = \"none\"\nlayout = {{ sites = [[250, 100], [750, 100], [1250, 100]] }}\nues = [{{ node = \"ue\", initial_cell = 0, route = [{{ x_m = 100, y_m = 50 }}, {{ x_m = 1400, y_m = 50, speed = \"72 km/h\" }}] }}]\n",
        example()
    );
    let (s, _) = run(&idle, Some(1));
    let b = &s["cells"][1]["ues"][0];
    assert_eq!(b["handovers"], 2, "{b}");
}

#[test]
fn bad_routes_and_handover_settings_are_refused_naming_the_field() {
    let e = refusal(&example().replace("{ x_m = 1400, y_m = 50, speed = \"72 km/h\" }", "{ x_m = 1400, y_m = 50 }"));
    assert!(e.contains("cell.ran.ues[0].route[1]") && e.contains("pause"), "{e}");
    let e = refusal(&example().replace("speed = \"72 km/h\"", "speed = \"0 km/h\""));
    assert!(e.contains("route") && e.contains("pause"), "{e}");
    let e = refusal(&example().replace("time_to_trigger = \"256 ms\"", "time_to_trigger = \"300 ms\""));
    assert!(e.contains("cell.ran.handover.time_to_trigger") && e.contains("256"), "{e}");
    let e = refusal(&example().replace("x2_delay = \"5 ms\" }", "x2_delay = \"5 ms\", daps = true, conditional = true }"));
    assert!(e.contains("cell.ran.handover.conditional") && e.contains("daps"), "{e}");
    let e = refusal(&example().replace("x2_delay = \"5 ms\" }", "x2_delay = \"5 ms\", conditional = { preparation_offset_db = 4 } }"));
    assert!(e.contains("cell.ran.handover.conditional.preparation_offset_db") && e.contains("a3_offset_db"), "{e}");
    let e = refusal(&example().replace("x2_delay = \"5 ms\" }", "x2_delay = \"5 ms\", conditional = { preparation_offset = 4 } }"));
    assert!(e.contains("cell.ran.handover.conditional") && e.contains("preparation_offset_db (dB)"), "{e}");
    let a5 = |extra: &str| example().replace("handover = { a3_offset_db = 3, ", &format!("handover = {{ {extra}"));
    let e = refusal(&a5("event = \"a5\", "));
    assert!(e.contains("cell.ran.handover.event") && e.contains("a5_threshold1_dbm"), "{e}");
    let e = refusal(&a5("a5_threshold1_dbm = -100, a5_threshold2_dbm = -95, "));
    assert!(e.contains("cell.ran.handover.a5_threshold1_dbm") && e.contains("event"), "{e}");
    let e = refusal(&a5("event = \"a5\", a5_threshold1_dbm = -100, a5_threshold2_dbm = -95, a3_offset_db = 3, "));
    assert!(e.contains("cell.ran.handover.a3_offset_db"), "{e}");
    let e = refusal(&a5("event = \"a4\", "));
    assert!(e.contains("cell.ran.handover.event") && e.contains("a3 or a5"), "{e}");
    let e = refusal(&a5("event = \"a5\", a5_threshold1_dbm = -100, a5_threshold2_dbm = -95, conditional = true, "));
    assert!(e.contains("cell.ran.handover.conditional") && e.contains("A3"), "{e}");
    let e = refusal(&example().replace("initial_cell = 0", "initial_cell = 4"));
    assert!(e.contains("cell.ran.ues[0].initial_cell") && e.contains("has 4"), "{e}");
    let e = refusal(&example().replace("layout = { sites = [[0, 0], [500, 0], [1000, 0], [1500, 0]], height_m = 30 }\n", ""));
    assert!(e.contains("cell.ran.ues[0]") && e.contains("layout"), "{e}");
    let e = refusal(&example().replace("route = [{ x_m = 100, y_m = 50 }, { x_m = 1400, y_m = 50, speed = \"72 km/h\" }]", "distance_m = 100"));
    assert!(e.contains("cell.ran.ues[0]") && e.contains("route"), "{e}");
}
