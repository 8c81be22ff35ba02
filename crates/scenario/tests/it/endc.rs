//! Dual connectivity over cells (`[[split]] legs = ["lte", "nr"]` where both are cells): the
//! split's legs are a UE's bearers in an LTE cell and an NR cell, so both legs have their own
//! scheduling, HARQ and RLC; together they carry more than either; the uplink leg is a cell's
//! uplink; the leg rows and the summary name the cells; a split over cells the route cannot
//! join through one UE is refused with one line naming the field.

use crate::common::{floats, ints, refusal, run, texts};
use serde_json::Value;

fn example() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/endc_cells.toml")).unwrap().replace("duration = \"10 s\"", "duration = \"4 s\"")
}

fn goodput(summary: &Value) -> f64 {
    summary["flows"][0]["goodput_mbps"].as_f64().unwrap()
}

fn error(text: &str) -> String {
    refusal(text)
}

/// The same download over one of the cells alone.
fn alone(cell: &str) -> String {
    example().replace("route = [\"core\", \"endc\"]", &format!("route = [\"core\", \"{cell}\"]"))
}

#[test]
fn an_endc_split_over_an_lte_and_an_nr_cell_carries_more_than_either_alone() {
    let (both, out) = run(&example(), Some(1));
    let lte = goodput(&run(&alone("lte"), Some(1)).0);
    let nr = goodput(&run(&alone("nr"), Some(1)).0);
    let g = goodput(&both);
    // More than the LTE cell alone. Not more than the NR cell alone with this blind batch
    // split: the legs' RLC buffers overflow (QUIC's window is not held back by either) and
    // every gap holds the receiving PDCP entity (docs/nr-cell.md#en-dc-over-cells).
    assert!(g > 2.0 * lte && g < nr, "EN-DC {g}, NR alone {nr}, LTE alone {lte} Mbit/s");
    // The batch policy puts 20 % of the PDUs on the LTE leg.
    let sent = &both["flows"][0]["pdcp"]["endc"]["pdus_sent"];
    let (a, b) = (sent[0].as_f64().unwrap(), sent[1].as_f64().unwrap());
    assert!((a / (a + b) - 0.2).abs() < 0.005, "{sent}");
    assert!(both["flows"][0]["drops"]["queue"].as_u64().unwrap() > 0, "the buffers overflow: {}", both["flows"][0]["drops"]);
    // Both cells carried the flow's data down; its ACKs went up the LTE cell (uplink = "lte").
    let cells = both["cells"].as_array().unwrap();
    let ue = |c: usize| &cells[c]["ues"][0];
    assert!(ue(0)["downlink"]["tbs"].as_u64().unwrap() > 1000 && ue(1)["downlink"]["tbs"].as_u64().unwrap() > 1000, "{cells:?}");
    assert!(ue(0)["uplink"]["tbs"].as_u64().unwrap() > 100);
    assert_eq!(ue(1)["uplink"]["tbs"].as_u64(), Some(0), "nothing goes up the NR leg");
    // The split reports its legs by the cells' names, and so do its leg rows.
    let legs = &both["flows"][0]["pdcp"]["endc"]["legs"];
    assert_eq!(legs, &serde_json::json!(["lte", "nr"]));
    let (kind, name) = (texts(&out, "kind"), texts(&out, "leg"));
    let mut leg_names: Vec<&str> = (0..kind.len()).filter(|&i| kind[i] == "leg").map(|i| name[i].as_str()).collect();
    leg_names.dedup();
    assert_eq!(leg_names, vec!["lte", "nr"]);
    // The same seed gives the same run.
    let mut again = run(&example(), Some(1)).0;
    let mut first = both.clone();
    first.as_object_mut().unwrap().remove("wall_time_s");
    again.as_object_mut().unwrap().remove("wall_time_s");
    assert_eq!(first, again);
}

#[test]
fn every_split_policy_runs_over_cells_and_reverse_entities_use_the_cells_uplinks() {
    for policy in [
        "{ model = \"alternate\" }",
        "{ model = \"ratio\", share = 0.3 }",
        "{ model = \"duplicate\" }",
        "{ model = \"adaptive\", signal = \"queue\" }",
        "{ model = \"threshold\", primary = \"nr\", threshold = \"100 kB\" }",
    ] {
        let text = example().replace("{ model = \"batch\", size = 20, share = 0.2 }", policy);
        let (summary, _) = run(&text, Some(1));
        assert!(goodput(&summary) > 20.0, "{policy}: {}", goodput(&summary));
    }
    // An upload through PDCP entities of its own in the reverse direction: both cells' uplinks.
    let up = example()
        .replace("uplink = \"lte\"", "reverse_policy = { model = \"alternate\" }")
        .replace("from = \"server\"\nto = \"ue\"", "from = \"ue\"\nto = \"server\"")
        .replace("route = [\"core\", \"endc\"]", "route = [\"endc\", \"core\"]");
    let (summary, _) = run(&up, Some(1));
    let cells = summary["cells"].as_array().unwrap();
    assert!(goodput(&summary) > 1.0);
    for c in cells {
        assert!(c["ues"][0]["uplink"]["tbs"].as_u64().unwrap() > 100, "{c}");
    }
}

#[test]
fn splits_over_cells_that_do_not_reach_one_ue_are_refused_naming_the_field() {
    // The NR cell serves another UE: no UE has a bearer in both.
    let other_ue = example().replace("ues = [{ node = \"ue\", distance_m = 300 }]\n\n[[split]]", "ues = [{ node = \"ue2\", distance_m = 300 }]\n\n[[split]]");
    let e = error(&other_ue);
    assert!(e.contains("split.endc.legs") && e.contains("cell \"nr\" joins its eNB site and its UEs (ue2)"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    // The cells' eNBs are different nodes.
    let e = error(&example().replace("rat = \"nr\"\nenb = \"site\"", "rat = \"nr\"\nenb = \"gnb\""));
    assert!(e.contains("split.endc.legs") && e.contains("the same eNB node"), "{e}");
    // A leg that is neither a link nor a cell.
    let e = error(&example().replace("legs = [\"lte\", \"nr\"]", "legs = [\"lte\", \"wifi\"]"));
    assert!(e.contains("split.endc.legs") && e.contains("no link or cell named \"wifi\""), "{e}");
    // Duplication switched off over a cell leg.
    let e = error(&example().replace("{ model = \"batch\", size = 20, share = 0.2 }", "{ model = \"duplicate\", off = [[\"1 s\", \"2 s\"]] }"));
    assert!(e.contains("split.endc.policy.off") && e.contains("keep duplication on"), "{e}");
}

/// The NR leg at its cell's edge, moving (NLOS at 500 m, 200 Hz Doppler: about 60 km/h at
/// 3.5 GHz), so HARQ gives some TBs up; the split follows the legs' delays (`adaptive`).
fn edge(rlc: &str) -> String {
    let text = example().replace("duration = \"4 s\"", "duration = \"6 s\"").replace("{ model = \"batch\", size = 20, share = 0.2 }", "{ model = \"adaptive\" }");
    let i = text.find("name = \"nr\"").unwrap();
    let (lte, nr) = text.split_at(i);
    let nr = nr.replacen("sight = \"los\" }", "sight = \"nlos\" }\ndoppler_hz = 200", 1).replacen("distance_m = 300", "distance_m = 500", 1);
    format!("{lte}{nr}").replace("[[cell]]\nname = \"lte\"", &format!("[[cell]]\nname = \"lte\"\nrlc = \"{rlc}\"")).replace("rat = \"nr\"", &format!("rat = \"nr\"\nrlc = \"{rlc}\""))
}

#[test]
fn rlc_am_repairs_the_nr_legs_harq_losses_below_pdcp() {
    let (um, am) = (run(&edge("um"), Some(1)).0, run(&edge("am"), Some(1)).0);
    let expiries = |s: &Value| s["flows"][0]["pdcp"]["endc"]["timer_expiries"].as_u64().unwrap();
    let radio = |s: &Value| s["flows"][0]["drops"]["random_loss"].as_u64().unwrap();
    // UM: what HARQ gives up is a gap the receiving PDCP entity waits out; AM repairs it below.
    assert!(radio(&um) > 0, "the edge loses TBs: {}", um["flows"][0]["drops"]);
    assert_eq!(radio(&am), 0, "{}", am["flows"][0]["drops"]);
    assert!(expiries(&am) < expiries(&um), "t-Reordering expiries: AM {}, UM {}", expiries(&am), expiries(&um));
    assert!(goodput(&am) > goodput(&um), "goodput: AM {}, UM {}", goodput(&am), goodput(&um));
    // The NR UE's summary shows ARQ at work.
    let nr_ue = &am["cells"][1]["ues"][0];
    assert!(nr_ue["rlc_am"]["downlink"]["retransmitted_pdus"].as_u64().unwrap() > 0, "{nr_ue}");
    assert!(nr_ue["rlc_am"]["downlink"]["status_reports"].as_u64().unwrap() > 0);
    assert!(um["cells"][1]["ues"][0].get("rlc_am").is_none());
}

#[test]
fn rlc_am_fields_are_checked_at_the_cell() {
    let e = error(&edge("am").replace("carrier_mhz = 2600", "carrier_mhz = 2600\nmax_retx = 5"));
    assert!(e.contains("cell.lte.max_retx"), "{e}");
    let e = error(&edge("um").replace("carrier_mhz = 2600", "carrier_mhz = 2600\nt_reassembly = \"35 ms\""));
    assert!(e.contains("cell.lte.t_reassembly") && e.contains("rlc = \"am\""), "{e}");
    let e = error(&edge("tm"));
    assert!(e.contains("cell.lte.rlc") && e.contains("um, am"), "{e}");
}

#[test]
fn a_blocked_nr_leg_sends_the_adaptive_splits_traffic_to_lte() {
    // The NR leg blocked 30 % of the time, 30 dB deep, in blockages of 300 ms on average.
    let adaptive = example().replace("{ model = \"batch\", size = 20, share = 0.2 }", "{ model = \"adaptive\" }");
    let blocked = adaptive.replace("rat = \"nr\"", "rat = \"nr\"\nblockage = { fraction = 0.3, depth_db = 30 }");
    let (clear, hit) = (run(&adaptive, Some(1)).0, run(&blocked, Some(1)).0);
    let nr_ue = &hit["cells"][1]["ues"][0];
    assert!(nr_ue["blocked_periods"].as_u64().unwrap() >= 3, "{nr_ue}");
    assert!(clear["cells"][1]["ues"][0].get("blocked_periods").is_none());
    let lte_share = |s: &Value| {
        let sent = &s["flows"][0]["pdcp"]["endc"]["pdus_sent"];
        sent[0].as_f64().unwrap() / (sent[0].as_f64().unwrap() + sent[1].as_f64().unwrap())
    };
    assert!(lte_share(&hit) > 1.5 * lte_share(&clear), "LTE's share of the PDUs: {} blocked, {} clear", lte_share(&hit), lte_share(&clear));
    assert!(goodput(&hit) < goodput(&clear));
    // A PDU waits at most two t-Reordering periods (100 ms) at the receiving entity.
    assert!(hit["flows"][0]["pdcp"]["endc"]["reorder_delay_max_ms"].as_f64().unwrap() <= 200.0);
    // Bad blockage fields are named.
    let e = error(&blocked.replace("fraction = 0.3", "fraction = 1.5"));
    assert!(e.contains("cell.nr.blockage.fraction"), "{e}");
    let e = error(&blocked.replace("fraction = 0.3", "mean = \"0 ms\""));
    assert!(e.contains("cell.nr.blockage.mean"), "{e}");
}

#[test]
fn the_secondarys_desired_buffer_size_keeps_the_cells_rlc_buffers_from_overflowing() {
    // The batch split pushes PDUs whatever the cells' buffers hold; the adaptive split on the
    // desired buffer size each cell leg reports (its free RLC buffer, TS 38.425) does not.
    let batch = run(&example(), Some(1)).0;
    let flow_control = run(&example().replace("{ model = \"batch\", size = 20, share = 0.2 }", "{ model = \"adaptive\", signal = \"desired_buffer\" }"), Some(1)).0;
    let drops = |s: &Value| s["flows"][0]["drops"]["queue"].as_u64().unwrap();
    let expiries = |s: &Value| s["flows"][0]["pdcp"]["endc"]["timer_expiries"].as_u64().unwrap();
    assert!(drops(&batch) > 100 && drops(&flow_control) * 20 < drops(&batch), "RLC buffer drops: {} batch, {} desired buffer", drops(&batch), drops(&flow_control));
    assert!(expiries(&flow_control) < expiries(&batch), "{} vs {}", expiries(&flow_control), expiries(&batch));
    assert!(goodput(&flow_control) > 200.0, "{}", goodput(&flow_control));
}

/// The example with the secondary (NR) cell `x2` away from the master's PDCP entity and the
/// split's policy `policy`.
fn over_x2(x2: &str, policy: &str) -> String {
    example().replace("{ model = \"batch\", size = 20, share = 0.2 }", &format!("{policy}\nx2u_delay = \"{x2}\""))
}

#[test]
fn the_x2u_delay_holds_the_secondary_legs_pdus_and_the_delivery_credit_counts_them() {
    // Everything on the NR leg: the handshake's data direction crosses X2-U once, so it takes
    // 20 ms longer (the uplink is the LTE cell's).
    let nr_only = "{ model = \"batch\", size = 20, share = 0.0 }";
    let handshake = |s: &Value| s["flows"][0]["handshake_s"].as_f64().unwrap();
    let near = handshake(&run(&over_x2("0 ms", nr_only), Some(1)).0);
    let far = handshake(&run(&over_x2("20 ms", nr_only), Some(1)).0);
    assert!((far - near - 0.020).abs() < 0.002, "handshake {near} s without X2-U delay, {far} s with 20 ms");
    // With 20 ms of X2-U, the desired buffer signal (the free RLC buffer less what was sent
    // since the report) counts none of the PDUs on their way over X2-U nor the report's own
    // 20 ms: the NR cell's RLC buffer overflows. TS 38.425's credit beyond the confirmed SN
    // counts every byte not yet confirmed and keeps it (nearly) from overflowing.
    let drops = |s: &Value| s["flows"][0]["drops"]["queue"].as_u64().unwrap();
    let desired = run(&over_x2("20 ms", "{ model = \"adaptive\", signal = \"desired_buffer\" }"), Some(1)).0;
    let credit = run(&over_x2("20 ms", "{ model = \"adaptive\", signal = \"delivery_credit\" }"), Some(1)).0;
    assert!(drops(&desired) > 200 && drops(&credit) * 5 < drops(&desired), "RLC buffer drops: {} desired buffer, {} delivery credit", drops(&desired), drops(&credit));
    // Without X2-U delay and under UM (the confirmed SN is the transmitted one) the two
    // signals split alike.
    let same = |signal: &str| goodput(&run(&over_x2("0 ms", &format!("{{ model = \"adaptive\", signal = \"{signal}\" }}")), Some(1)).0);
    let (a, b) = (same("desired_buffer"), same("delivery_credit"));
    assert!((a - b).abs() < 0.05 * a, "{a} vs {b} Mbit/s");
}

#[test]
fn an_x2u_delay_needs_a_secondary_cell_crossed_downwards() {
    // Over a link leg.
    let links = "[[link]]\nname = \"core\"\nbetween = [\"a\", \"b\"]\nrate = \"10 Mbit/s\"\ndelay = \"5 ms\"\nqueue = \"100 packets\"\n\n[[link]]\nname = \"other\"\nbetween = [\"a\", \"b\"]\nrate = \"10 Mbit/s\"\ndelay = \"5 ms\"\nqueue = \"100 packets\"\n\n[[split]]\nname = \"s\"\nlegs = [\"core\", \"other\"]\nx2u_delay = \"5 ms\"\n\n[[flow]]\nname = \"f\"\nfrom = \"a\"\nto = \"b\"\ntransport = \"tcp\"\napp = \"bulk\"\nroute = [\"s\"]\n";
    let e = error(links);
    assert!(e.contains("split.s.x2u_delay") && e.contains("\"other\" is a link"), "{e}");
    // Crossed from the UE: an uplink flow.
    let up = over_x2("5 ms", "{ model = \"batch\", size = 20, share = 0.2 }").replace("from = \"server\"\nto = \"ue\"", "from = \"ue\"\nto = \"server\"").replace("route = [\"core\", \"endc\"]", "route = [\"endc\", \"core\"]");
    let e = error(&up);
    assert!(e.contains("x2u_delay") && e.contains("eNB side"), "{e}");
    // The uplink as a plain hop on the secondary leg.
    let e = error(&over_x2("5 ms", "{ model = \"batch\", size = 20, share = 0.2 }").replace("uplink = \"lte\"", "uplink = \"nr\""));
    assert!(e.contains("reverse_policy"), "{e}");
}

/// An EN-DC drive: the LTE master cell static, the NR secondary node two sites 900 m apart
/// with a hole between them, a UE driving from one to the other at 90 km/h with a TCP
/// download over the split; `rlc` for both cells.
fn secondary_drive(rlc: &str) -> String {
    format!(
        r#"
name = "endc_secondary"
[run]
duration = "36 s"
seed = 1
[[link]]
name = "core"
between = ["server", "site"]
rate = "10 Gbit/s"
delay = "10 ms"
queue = "2000 packets"
[[cell]]
name = "lte"
enb = "site"
carrier_mhz = 2600
bandwidth_rb = 100
fading = "none"
rlc = "{rlc}"
pathloss = {{ model = "uma", sight = "los" }}
ues = [{{ node = "ue", distance_m = 300 }}]
[[cell]]
name = "nr"
rat = "nr"
enb = "site"
carrier_mhz = 3500
numerology = 1
bandwidth_mhz = 100
tdd_pattern = "DDDSU"
fading = "none"
rlc = "{rlc}"
pathloss = {{ model = "uma" }}
layout = {{ sites = [[0, 0], [900, 0]], height_m = 25 }}
secondary_node = {{ addition_rsrp_dbm = -106, release_rsrp_dbm = -112 }}
ues = [{{ node = "ue", route = [{{ x_m = 0, y_m = 30 }}, {{ x_m = 900, y_m = 30, speed = "90 km/h" }}] }}]
[[split]]
name = "endc"
legs = ["lte", "nr"]
uplink = "lte"
policy = {{ model = "batch", size = 20, share = 0.5 }}
t_reordering = "100 ms"
[[flow]]
name = "dl"
from = "server"
to = "ue"
transport = "tcp"
app = "bulk"
route = ["core", "endc"]
"#
    )
}

#[test]
fn a_secondary_node_releases_the_scg_in_the_hole_and_adds_it_again_the_master_carrying_on() {
    let (s, out) = run(&secondary_drive("am"), Some(1));
    let u = &s["cells"][1]["ues"][0];
    let events: Vec<&Value> = u["events"].as_array().unwrap().iter().collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["scg_released", "scg_addition_report", "scg_added"], "{u}");
    assert_eq!((events[0]["cause"].as_str(), events[0]["cell"].as_u64(), events[2]["cell"].as_u64()), (Some("a2"), Some(0), Some(1)));
    let (released, added) = (events[0]["t_s"].as_f64().unwrap(), events[2]["t_s"].as_f64().unwrap());
    // Released between the sites, added near the far one; addition = B1 + 20 ms of
    // preparation + 40 ms of random access.
    let (x_released, x_added) = (events[0]["x_m"].as_f64().unwrap(), events[2]["x_m"].as_f64().unwrap());
    assert!(x_released > 150.0 && x_released < 450.0 && x_added > 450.0 && x_added < 850.0, "released at {x_released} m, added at {x_added} m");
    assert!((events[2]["t_s"].as_f64().unwrap() - events[1]["t_s"].as_f64().unwrap() - 0.060).abs() < 1e-9);
    assert!((events[2]["outage_ms"].as_f64().unwrap() - 1e3 * (added - released)).abs() < 1e-6);
    assert_eq!((u["scg_releases"].as_u64(), u["handovers"].as_u64()), (Some(1), Some(0)));
    // Data recovery: what the NR leg had not delivered was resent on the LTE leg, nothing
    // lost with the SCG.
    let pdcp = &s["flows"][0]["pdcp"]["endc"];
    assert!(pdcp["recovered"].as_u64().unwrap() > 0, "{pdcp}");
    assert_eq!(s["flows"][0]["drops"]["link_down"], 0);
    // While released the NR leg carries nothing and the LTE leg everything (half of the
    // PDUs before and after, by the batch policy).
    let (kind, leg, t, bytes) = (texts(&out, "kind"), texts(&out, "leg"), floats(&out, "time_s"), ints(&out, "bytes_delivered"));
    // The bytes over leg `name` in the 100 ms bins wholly inside [from, to).
    let on = |name: &str, from: f64, to: f64| -> i64 {
        (0..t.len()).filter(|&i| kind[i] == "leg" && leg[i] == name && t[i] >= from && t[i] + 0.1 <= to + 1e-9).map(|i| bytes[i]).sum()
    };
    assert_eq!(on("nr", released + 0.5, added), 0);
    assert!(on("lte", released + 0.5, added) > 0);
    assert!(on("nr", added + 0.5, added + 2.5) > on("lte", added + 0.5, added + 2.5) / 5);

    // Under RLC UM there is no data recovery: the SN's packets are lost with it.
    let (um, _) = run(&secondary_drive("um"), Some(1));
    assert!(um["flows"][0]["pdcp"]["endc"].get("recovered").is_none());
    assert!(um["flows"][0]["drops"]["link_down"].as_u64().unwrap() > 0, "{}", um["flows"][0]["drops"]);
}

#[test]
fn a_secondary_node_is_the_second_leg_of_a_split_and_releases_below_where_it_adds() {
    let e = error(&secondary_drive("am").replace("legs = [\"lte\", \"nr\"]", "legs = [\"nr\", \"lte\"]"));
    assert!(e.contains("split.endc.legs") && e.contains("secondary node") && e.contains("second leg"), "{e}");
    let e = error(&secondary_drive("am").replace("route = [\"core\", \"endc\"]", "route = [\"core\", \"lte\"]").replace("[[split]]\nname = \"endc\"\nlegs = [\"lte\", \"nr\"]\nuplink = \"lte\"\npolicy = { model = \"batch\", size = 20, share = 0.5 }\nt_reordering = \"100 ms\"\n", ""));
    assert!(e.contains("cell.nr.secondary_node") && e.contains("[[split]]"), "{e}");
    let e = error(&secondary_drive("am").replace("release_rsrp_dbm = -112", "release_rsrp_dbm = -100"));
    assert!(e.contains("cell.nr.secondary_node.release_rsrp_dbm") && e.contains("addition_rsrp_dbm"), "{e}");
    let e = error(&secondary_drive("am").replace("layout = { sites = [[0, 0], [900, 0]], height_m = 25 }\n", "").replace("route = [{ x_m = 0, y_m = 30 }, { x_m = 900, y_m = 30, speed = \"90 km/h\" }]", "distance_m = 100"));
    assert!(e.contains("cell.nr.secondary_node") && e.contains("layout"), "{e}");
}
