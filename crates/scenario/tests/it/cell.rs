//! An LTE cell in a scenario (`[[cell]]`): routes cross it between the eNB and a UE, a TCP
//! download close to the eNB tracks the cell's capacity, goodput falls with distance, the
//! summary reports the cell's UEs, the time series has a row per UE, direction and bin with the
//! radio's columns, and bad cells give one line naming the field.

use crate::common::{floats, ints, refusal, run, run_with, texts};
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
    refusal(text)
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
fn a_tapped_delay_line_cell_runs_the_same_for_a_seed_and_differs_from_flat_fading() {
    // At 400 m the fades decide the MCS; ETU's frequency selectivity changes what the cell
    // carries, and a seed gives the same run.
    let at = |fading: &str| CELL.replace("distance_m = 50", "distance_m = 400").replace("fading = \"none\"", &format!("fading = \"{fading}\""));
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("wall_time_s");
        v
    };
    let (etu, etu_rows) = run(&at("etu"), Some(3));
    let (again, again_rows) = run(&at("etu"), Some(3));
    assert_eq!(strip(etu.clone()), strip(again));
    assert_eq!(format!("{:?}", etu_rows.columns), format!("{:?}", again_rows.columns));
    assert!(goodput(&etu) > 1.0, "{}", goodput(&etu));
    let flat = run(&at("rayleigh"), Some(3)).0;
    assert_ne!(strip(etu.clone())["cells"], strip(flat)["cells"]);
    let other_seed = run(&at("etu"), Some(4)).0;
    assert_ne!(strip(etu)["cells"], strip(other_seed)["cells"]);
    // EPA and EVA load too, with a Doppler shift of their own.
    for name in ["epa", "eva"] {
        let text = at(name).replace(&format!("fading = \"{name}\""), &format!("fading = \"{name}\"\ndoppler_hz = 70"));
        assert!(goodput(&run(&text, Some(1)).0) > 1.0, "{name}");
    }
}

#[test]
fn the_time_series_has_a_row_per_ue_direction_and_bin_that_adds_up_to_the_summary() {
    let (summary, out) = run(CELL, Some(1));
    let kind = texts(&out, "kind");
    let dir = texts(&out, "direction");
    let ue = texts(&out, "ue");
    let (sinr, mcs, rbs) = (floats(&out, "sinr_db"), floats(&out, "mcs"), floats(&out, "rbs_per_tti"));
    let (tbs, errors) = (ints(&out, "tbs"), ints(&out, "tb_errors"));
    let rlc = floats(&out, "rlc_buffer_max_bytes");
    let bytes = ints(&out, "bytes_delivered");
    let rows = |d: &str| (0..kind.len()).filter(|&i| kind[i] == "cell" && dir[i] == d).collect::<Vec<_>>();
    let (down, up) = (rows("downlink"), rows("uplink"));
    // 6 s in the default bins of 100 ms, for the one UE, each way.
    assert_eq!((down.len(), up.len()), (60, 60));
    assert!(down.iter().chain(&up).all(|&i| ue[i] == "ue" && texts(&out, "name")[i] == "lte"));
    // The other rows leave the radio's columns empty.
    assert!((0..kind.len()).filter(|&i| kind[i] != "cell").all(|i| ue[i].is_empty() && sinr[i].is_nan() && tbs[i] == 0 && rlc[i].is_nan()));
    let k = &summary["cells"][0]["ues"][0];
    let total = |idx: &[usize], col: &[i64]| idx.iter().map(|&i| col[i]).sum::<i64>() as u64;
    // The bins cover [0, 6 s); the summary also counts a TTI that starts at 6 s (at most one
    // TB per UE and direction).
    let within_one = |rows: u64, summary: &Value| {
        let s = summary.as_u64().unwrap();
        assert!(rows <= s && s <= rows + 1, "rows {rows}, summary {s}");
    };
    within_one(total(&down, &tbs), &k["downlink"]["tbs"]);
    within_one(total(&down, &errors), &k["downlink"]["tb_errors"]);
    within_one(total(&up, &tbs), &k["uplink"]["tbs"]);
    // What the cell delivered down covers the flow's payload (plus TCP/IP headers).
    let delivered = summary["flows"][0]["bytes_delivered"].as_u64().unwrap();
    assert!(total(&down, &bytes) > delivered && (total(&down, &bytes) as f64) < 1.1 * delivered as f64);
    // Past slow start the download fills the band at the top MCS, 40.8 dB SNR at 50 m
    // (reference §2), and keeps a queue in the RLC buffer.
    for &i in &down[20..] {
        assert!((sinr[i] - 40.8).abs() < 0.1 && mcs[i] == 28.0 && rbs[i] > 95.0, "row {i}: {} {} {}", sinr[i], mcs[i], rbs[i]);
    }
    assert!(down[20..].iter().any(|&i| rlc[i] > 10_000.0));
    // The ACKs go up; a lone UE gets the whole uplink band in each TTI it has data (reference §3.6).
    assert!(up[20..].iter().all(|&i| tbs[i] > 0 && rbs[i] > 0.0 && rbs[i] <= 100.0 && (rbs[i] * 100.0).round() as i64 == tbs[i] * 100), "{:?}", up.iter().map(|&i| rbs[i]).collect::<Vec<_>>());
}

#[test]
fn the_same_seed_gives_the_same_cell_rows() {
    let faded = CELL.replace("fading = \"none\"", "fading = \"rayleigh\"");
    let a = run(&faded, Some(3)).1.columns;
    let b = run(&faded, Some(3)).1.columns;
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let c = run(&faded, Some(4)).1.columns;
    assert_ne!(format!("{a:?}"), format!("{c:?}"));
}

#[test]
fn a_download_slows_down_along_a_trajectory_moving_away() {
    // 100 m → 1600 m at 50 m/s (30 s), with fading: the Doppler follows the speed.
    let moving = CELL
        .replace("{ node = \"ue\", distance_m = 50 }", "{ node = \"ue\", trajectory = { start_m = 100, end_m = 1600, speed = \"180 km/h\" } }")
        .replace("fading = \"none\"", "fading = \"rayleigh\"")
        .replace("duration = \"6 s\"", "duration = \"32 s\"\nbin = \"1 s\"");
    let (summary, out) = run(&moving, Some(2));
    let t = &summary["cells"][0]["ues"][0]["trajectory"];
    assert_eq!((t["start_m"].as_f64(), t["end_m"].as_f64(), t["speed_mps"].as_f64()), (Some(100.0), Some(1600.0), Some(50.0)));
    // f_d = v·f_c / c at 2120 MHz.
    assert!((t["doppler_hz"].as_f64().unwrap() - 50.0 * 2.12e9 / 299_792_458.0).abs() < 1e-6, "{t}");
    let kind = texts(&out, "kind");
    let dir = texts(&out, "direction");
    let mbps = floats(&out, "throughput_mbps");
    let sinr = floats(&out, "sinr_db");
    let flow: Vec<f64> = (0..kind.len()).filter(|&i| kind[i] == "flow").map(|i| mbps[i]).collect();
    let down: Vec<f64> = (0..kind.len()).filter(|&i| kind[i] == "cell" && dir[i] == "downlink").map(|i| sinr[i]).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (early, mid, late) = (mean(&flow[2..7]), mean(&flow[8..13]), mean(&flow[26..31]));
    assert!(early > mid && mid > late, "{early} {mid} {late}\n{flow:?}\n{down:?}");
    // Past about 900 m the ACKs no longer get up (the uplink ends the cell first, reference
    // §2: its SNR per RB over the whole band is 19 dB below the downlink's) and the download
    // stalls.
    assert!(late < 0.01 * early, "{late} vs {early}");
    // The mean downlink SINR follows 138.45 − PL(d(t)) (reference §2), fading averaged out
    // over 5 s.
    let pl = |d: f64| 46.6777 + 30.0 * d.log10();
    for (bins, d) in [(2..7, 100.0 + 50.0 * 4.5), (8..13, 100.0 + 50.0 * 10.5)] {
        let measured = mean(&down[bins]);
        assert!((measured - (138.45 - pl(d))).abs() < 3.0, "{measured} at {d} m\n{flow:?}\n{down:?}");
    }
}

#[test]
fn the_cells_distance_places_every_ue_without_its_own() {
    let two = CELL.replace("ues = [{ node = \"ue\", distance_m = 50 }]", "distance_m = 400\nues = [{ node = \"ue\" }, { node = \"ue2\", distance_m = 100 }]");
    let summary = run_with(&two, &[("cell.lte.distance_m", "700")], 1);
    let ues = &summary["cells"][0]["ues"];
    assert_eq!((ues[0]["distance_m"].as_f64(), ues[1]["distance_m"].as_f64()), (Some(700.0), Some(100.0)));
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
        ("fading = \"none\"", "fading = \"jakes\"", "cell.lte.fading: unknown fading \"jakes\"; known: rayleigh, rayleigh_per_rb, epa, eva, etu, none"),
        ("fading = \"none\"", "fading = \"ETU\"", "cell.lte.fading: unknown fading \"ETU\"; known: rayleigh, rayleigh_per_rb, epa, eva, etu, none"),
        ("fading = \"none\"", "fading = \"none\"\ndoppler_hz = 10", "cell.lte.doppler_hz: a Doppler shift needs fading = one of rayleigh, rayleigh_per_rb, epa, eva, etu"),
        ("fading = \"none\"", "fading = \"etu\"\ndoppler_hz = 5000", "cell.lte.doppler_hz: 5000 is not allowed"),
        ("fading = \"none\"", "fading = \"none\"\nenb_power_dbm = 90", "cell.lte.enb_power_dbm: 90 is not allowed"),
        ("route = [\"core\", \"lte\"]", "route = [\"lte\"]", "flow.dl.route: cell \"lte\" joins its eNB \"enb\" and its UEs (ue), but the route is at \"server\" there"),
        ("route = [\"core\", \"lte\"]", "route = [\"core\", \"lte5\"]", "there is no link, split or cell named \"lte5\""),
        ("name = \"lte\"", "name = \"core\"", "cell.core.name: a link, split or cell is already named \"core\""),
        ("distance_m = 50", "distance_m = 50, trajectory = { start_m = 50, end_m = 500, speed = \"10 m/s\" }", "cell.lte.ues[0]: give distance_m or trajectory, not both"),
        (", distance_m = 50", "", "cell.lte.ues[0]: needs distance_m = <m> or trajectory"),
        ("ues = [{ node = \"ue\", distance_m = 50 }]", "distance_m = -1\nues = [{ node = \"ue\" }]", "cell.lte.distance_m: -1 is not allowed"),
        ("distance_m = 50", "trajectory = { start_m = -5, end_m = 500, speed = \"10 m/s\" }", "cell.lte.ues[0].trajectory.start_m: -5 is not allowed"),
        ("distance_m = 50", "trajectory = { start_m = 50, end_m = 500, speed = \"0 m/s\" }", "cell.lte.ues[0].trajectory.speed: is 0 but start_m and end_m differ"),
        ("distance_m = 50", "trajectory = { start_m = 50, end_m = 500, speed = 10 }", "a speed needs a unit"),
        // Every named choice fails the one way: what was given, then the known names.
        ("fading = \"none\"", "fading = \"none\"\ntiming = \"fast\"", "cell.lte.timing: unknown timing \"fast\"; known: ideal, lena"),
        ("fading = \"none\"", "fading = \"none\"\nuplink_mcs = \"best\"", "cell.lte.uplink_mcs: unknown uplink MCS rule \"best\"; known: measured, lena"),
        // A cell is named by its name in the schema's errors too, as links, flows and splits are.
        ("fading = \"none\"", "fading = \"none\"\npathloss = { model = \"okumura\" }", "cell.lte.pathloss.model: unknown model \"okumura\"; known: free_space, log_distance, uma, umi, rma, cost231_hata"),
        ("fading = \"none\"", "fading = \"none\"\nantennas = 4", "cell.lte.antennas: unknown field `antennas`"),
        // NR's fields belong to an NR cell.
        ("fading = \"none\"", "fading = \"none\"\nnumerology = 1", "cell.lte.numerology: only an NR cell has it: set rat = \"nr\""),
    ];
    for (from, to, expected) in cases {
        let e = error(&CELL.replace(from, to));
        assert!(e.contains(expected), "{to}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// A line of sight (`rician_k_db`) steadies the UE's SINR: with K = 10 dB the per-bin SINR
/// of a UE 300 m out varies far less than under Rayleigh fading, around the same mean; a
/// K-factor on a tapped delay line, or out of range, is refused at the field.
#[test]
fn a_line_of_sight_steadies_the_sinr_and_is_checked_at_its_field() {
    let at = |fading: &str| {
        CELL.replace("fading = \"none\"", &format!("{fading}\ndoppler_hz = 50"))
            .replace("distance_m = 50", "distance_m = 300")
            .replace("duration = \"6 s\"", "duration = \"6 s\"\nbin = \"10 ms\"")
    };
    let sinr_spread = |text: &str| {
        let (_, out) = run(text, Some(4));
        let (kind, dir) = (texts(&out, "kind"), texts(&out, "direction"));
        let sinr = floats(&out, "sinr_db");
        let down: Vec<f64> = (0..kind.len()).filter(|&i| kind[i] == "cell" && dir[i] == "downlink" && sinr[i].is_finite()).map(|i| sinr[i]).collect();
        let mean = down.iter().sum::<f64>() / down.len() as f64;
        let std = (down.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / down.len() as f64).sqrt();
        (mean, std)
    };
    let (m_ray, s_ray) = sinr_spread(&at("fading = \"rayleigh\""));
    let (m_los, s_los) = sinr_spread(&at("fading = \"rayleigh\"\nrician_k_db = 10"));
    eprintln!("SINR over 10 ms bins at 300 m: Rayleigh {m_ray:.1} ± {s_ray:.1} dB, Rician K = 10 dB {m_los:.1} ± {s_los:.1} dB");
    assert!(s_los < 0.6 * s_ray, "Rayleigh ± {s_ray} dB, Rician ± {s_los} dB");
    // Rayleigh's mean in dB sits below the mean power (E[10 log |h|²] = −2.5 dB); the line of
    // sight pulls it up to near it.
    assert!(m_los > m_ray && m_los - m_ray < 4.0, "means {m_ray} and {m_los} dB");
    let e = error(&at("fading = \"epa\"\nrician_k_db = 10"));
    assert!(e.contains("cell.lte.rician_k_db") && e.contains("rayleigh"), "{e}");
    let e = error(&at("fading = \"rayleigh\"\nrician_k_db = 45"));
    assert!(e.contains("cell.lte.rician_k_db") && e.contains("30 dB"), "{e}");
}

/// `pathloss = { model = ... }` takes any model of the radio crate: without fading the UE's
/// downlink SINR is 138.45 dB − PL(d, 2120 MHz) (reference §2: 46 dBm over 100 RBs, thermal
/// noise over 180 kHz, 9 dB noise figure) for the model's own closed form; a bad parameter or
/// a model beside the log-distance fields is refused at the field.
#[test]
fn a_cell_takes_any_path_loss_model_of_the_radio_crate() {
    use multiconn_radio::pathloss::{umi_nlos_db, uma_los_db, free_space_db};
    let at = |pathloss: &str, d: f64| CELL.replace("fading = \"none\"", &format!("fading = \"none\"\n{pathloss}")).replace("distance_m = 50", &format!("distance_m = {d}"));
    let mean_sinr = |text: &str| {
        let (_, out) = run(text, Some(1));
        let (kind, dir) = (texts(&out, "kind"), texts(&out, "direction"));
        let sinr = floats(&out, "sinr_db");
        let down: Vec<f64> = (0..kind.len()).filter(|&i| kind[i] == "cell" && dir[i] == "downlink" && sinr[i].is_finite()).map(|i| sinr[i]).collect();
        down.iter().sum::<f64>() / down.len() as f64
    };
    for (model, d, pl) in [
        ("pathloss = { model = \"umi\" }", 150.0, umi_nlos_db(150.0, 2120.0, 10.0, 1.5)),
        ("pathloss = { model = \"uma\", sight = \"los\", h_bs_m = 30.0 }", 400.0, uma_los_db(400.0, 2120.0, 30.0, 1.5)),
        ("pathloss = { model = \"free_space\" }", 2000.0, free_space_db(2000.0, 2120.0)),
    ] {
        let measured = mean_sinr(&at(model, d));
        assert!((measured - (138.45 - pl)).abs() < 0.1, "{model} at {d} m: SINR {measured} dB, PL {pl} dB");
    }
    let e = error(&at("pathloss = { model = \"umi\", h_ut_m = 0.5 }", 100.0));
    assert!(e.contains("cell.lte.pathloss.h_ut_m") && e.contains("0.5"), "{e}");
    let e = error(&at("pathloss = { model = \"umi\" }\npathloss_exponent = 3.5", 100.0));
    assert!(e.contains("cell.lte.pathloss_exponent") && e.contains("not both"), "{e}");
    let e = error(&at("pathloss = { model = \"okumura\" }", 100.0));
    assert!(e.contains("pathloss") && e.contains("umi") && e.lines().count() == 1, "{e}");
}

#[test]
fn lenas_control_delays_lengthen_the_round_trip_by_the_downlink_shift_and_the_uplink_grant_cycle() {
    // A short download, so that no queue builds: its smoothed RTT is the path's.
    let srtt = |timing: &str| {
        let s = run_with(CELL, &[("flow.dl.size", "20 kB"), ("cell.lte.timing", &format!("\"{timing}\""))], 1);
        assert!(s["flows"][0]["completion_s"].as_f64().is_some(), "{timing}: the download finishes");
        s["flows"][0]["final_srtt_ms"].as_f64().unwrap()
    };
    let (ideal, lena) = (srtt("ideal"), srtt("lena"));
    // 2 ms more down; up, an ACK waits for its report (5 TTIs) and grant (6 TTIs).
    assert!(ideal > 20.0 && ideal < 25.0, "ideal timing: {ideal} ms over a 20 ms core round trip");
    assert!(lena - ideal > 11.0 && lena - ideal < 16.0, "LENA's timing: {lena} ms against {ideal} ms");
    assert!(error(&CELL.replace("fading = \"none\"", "fading = \"none\"\ntiming = \"fast\"")).contains("cell.lte.timing"));
}

#[test]
fn lenas_uplink_mcs_ends_the_cell_where_lena_does() {
    // One UE spreads 23 dBm over 100 RBs: 119.45 dB minus the path loss per RB, −1.5 dB at
    // 300 m and −3.5 dB at 350 m. LENA's rule (the worst RB of the SRS through a 7.4 dB Shannon
    // gap) grants nothing below −2.2 dB, so the ACKs stop between the two (LENA: the same);
    // the measured rule still carries them at 350 m.
    let goodput_at = |d: u32, rule: &str| {
        let text = CELL.replace("distance_m = 50", &format!("distance_m = {d}"));
        goodput(&run_with(&text, &[("cell.lte.uplink_mcs", &format!("\"{rule}\""))], 1))
    };
    assert!(goodput_at(300, "lena") > 1.0, "300 m, LENA's rule");
    assert_eq!(goodput_at(350, "lena"), 0.0, "350 m, LENA's rule");
    assert!(goodput_at(350, "measured") > 1.0, "350 m, the measured rule");
    assert!(error(&CELL.replace("fading = \"none\"", "fading = \"none\"\nuplink_mcs = \"srs\"")).contains("cell.lte.uplink_mcs"));
}
