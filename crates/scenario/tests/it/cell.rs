//! An LTE cell in a scenario (`[[cell]]`): routes cross it between the eNB and a UE, a TCP
//! download close to the eNB tracks the cell's capacity, goodput falls with distance, the
//! summary reports the cell's UEs, and bad cells give one line naming the field.

use crate::common::{load_str, run, run_with};
use serde_json::Value;

/// A server, a 10 ms core link to the eNB, and a cell with one UE (the study's set-up, §2).
const CELL: &str = r#"
[run]
duration = "6 s"

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

[[flow]]
name = "dl"
from = "server"
to = "ue"
transport = "tcp"
app = "bulk"
route = ["core", "lte"]
"#;

fn goodput(summary: &Value) -> f64 {
    summary["flows"][0]["goodput_mbps"].as_f64().unwrap()
}

fn error(text: &str) -> String {
    match load_str(text) {
        Ok(_) => panic!("should be refused:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_tcp_download_close_to_the_enb_tracks_the_cells_capacity() {
    let (summary, _) = run(CELL, Some(1));
    // 75 376 bits a TTI at MCS 28 over 100 PRBs: 75.4 Mbit/s at the RLC, less the RLC, IP and
    // TCP headers and slow start.
    let g = goodput(&summary);
    assert!(g > 62.0 && g < 75.4, "goodput {g} Mbit/s");
    let ue = &summary["cells"][0]["ues"][0];
    assert_eq!(ue["node"], "ue");
    assert_eq!(ue["downlink"]["last_mcs"], 28);
    assert!(ue["uplink"]["tbs"].as_u64().unwrap() > 1000, "the ACKs go up: {ue}");
    // Routes through the cell are named like links.
    assert_eq!(summary["cells"][0]["name"], "lte");
}

#[test]
fn goodput_falls_with_distance_and_the_summary_says_why() {
    let at = |d: &str| run_with(CELL, &[("cell.lte.ues", &format!("[{{ node = \"ue\", distance_m = {d} }}]"))], 1);
    let near = at("250");
    let far = at("1200");
    assert!(goodput(&near) > goodput(&far), "{} vs {}", goodput(&near), goodput(&far));
    let edge = at("6000");
    assert!(goodput(&edge) < 0.1, "{}", goodput(&edge));
    let ue = &edge["cells"][0]["ues"][0];
    let out = ue["uplink"]["out_of_range_ttis"].as_u64().unwrap() + ue["downlink"]["out_of_range_ttis"].as_u64().unwrap();
    assert!(out > 0, "{ue}");
}

#[test]
fn the_same_seed_gives_the_same_run_with_fading() {
    let faded = CELL.replace("fading = \"none\"", "fading = \"rayleigh\"");
    let a = run(&faded, Some(3)).0;
    let b = run(&faded, Some(3)).0;
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("wall_time_s");
        v
    };
    assert_eq!(strip(a.clone()), strip(b));
    let c = run(&faded, Some(4)).0;
    assert_ne!(strip(a)["flows"], strip(c)["flows"]);
}

#[test]
fn scenarios_without_a_cell_have_no_cells_in_their_summary() {
    let plain = CELL.replace("route = [\"core\", \"lte\"]", "").replace("[[cell]]", "[[link]]\nname = \"radio\"\nbetween = [\"enb\", \"ue\"]\nrate = \"20 Mbit/s\"\nqueue = \"100 packets\"\n[x]").replace("[x]\nname = \"lte\"\nenb = \"enb\"\nues = [{ node = \"ue\", distance_m = 50 }]\nfading = \"none\"\n", "");
    let plain = plain.replace("app = \"bulk\"", "app = \"bulk\"\nroute = [\"core\", \"radio\"]");
    let (summary, _) = run(&plain, Some(1));
    assert!(summary.get("cells").is_none(), "{}", summary);
}

#[test]
fn bad_cells_give_one_line_naming_the_field() {
    let cases = [
        ("fading = \"none\"", "fading = \"none\"\nscheduler = \"fifo\"", "cell.lte.scheduler: unknown scheduler \"fifo\"; known: pf, rr, maxci"),
        ("fading = \"none\"", "fading = \"none\"\nbandwidth_rb = 30", "cell.lte.bandwidth_rb: 30 is not allowed: must be one of 6, 15, 25, 50, 75, 100 RBs"),
        ("distance_m = 50", "distance_m = -5", "cell.lte.ues[0].distance_m: -5 is not allowed"),
        ("fading = \"none\"", "fading = \"jakes\"", "cell.lte.fading: unknown fading \"jakes\"; known: rayleigh, rayleigh_per_rb, none"),
        ("fading = \"none\"", "fading = \"none\"\nenb_power_dbm = 90", "cell.lte.enb_power_dbm: 90 is not allowed"),
        ("route = [\"core\", \"lte\"]", "route = [\"lte\"]", "flow.dl.route: cell \"lte\" joins its eNB \"enb\" and its UEs (ue), but the route is at \"server\" there"),
        ("route = [\"core\", \"lte\"]", "route = [\"core\", \"lte5\"]", "there is no link, split or cell named \"lte5\""),
        ("name = \"lte\"", "name = \"core\"", "cell.core.name: a link, split or cell is already named \"core\""),
    ];
    for (from, to, expected) in cases {
        let e = error(&CELL.replace(from, to));
        assert!(e.contains(expected), "{to}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
