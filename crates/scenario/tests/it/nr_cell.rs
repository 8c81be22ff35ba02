//! An NR cell in a scenario (`[[cell]] rat = "nr"`): a TCP download close to the gNB tracks the
//! carrier's TBS-procedure capacity, the summary says what the grid is, the cell's rows count
//! RBs per slot and fill four slots in five of a DDDSU pattern, the example scenario runs the
//! same for a seed, and bad NR fields give one line naming the field and what is allowed.

use crate::common::{floats, refusal, run, texts};
use serde_json::Value;

/// A server, a 10 ms core link to the gNB, and a 100 MHz DDDSU cell with one UE at 50 m.
const NR: &str = r#"
[run]
duration = "4 s"

[[link]]
name = "core"
between = ["server", "gnb"]
rate = "10 Gbit/s"
delay = "10 ms"
queue = "4000 packets"

[[cell]]
name = "nr"
rat = "nr"
enb = "gnb"
ues = [{ node = "ue", distance_m = 50 }]
fading = "none"

[[flow]]
name = "dl"
from = "server"
to = "ue"
transport = "tcp"
app = "bulk"
route = ["core", "nr"]
"#;

fn error(text: &str) -> String {
    refusal(text)
}

#[test]
fn a_tcp_download_close_to_the_gnb_tracks_the_carriers_capacity() {
    let (summary, out) = run(NR, Some(1));
    let cell = &summary["cells"][0];
    assert_eq!((cell["rat"].as_str(), cell["numerology"].as_u64(), cell["slot_ms"].as_f64()), (Some("nr"), Some(1), Some(0.5)));
    assert_eq!((cell["duplex"].as_str(), cell["mcs_table"].as_str(), cell["bandwidth_rb"].as_u64()), (Some("DDDSU"), Some("qam256"), Some(273)));
    assert_eq!(cell["ues"][0]["downlink"]["last_mcs"], 27);
    // (3 × 270 576 + 167 976) bits per 2.5 ms = 391.9 Mbit/s of TBs (TS 38.214 §5.1.3.2); less
    // the RLC, IP and TCP headers and the first second's slow start.
    let g = summary["flows"][0]["goodput_mbps"].as_f64().unwrap();
    assert!(g > 300.0 && g < 391.9, "goodput {g} Mbit/s");
    // A downlink row never carries more than 273 PRBs in four slots of five (218.4 a slot: the
    // U slot has no PDSCH), and past slow start TCP keeps the RLC buffer busy nearly always.
    let (kind, dir) = (texts(&out, "kind"), texts(&out, "direction"));
    let rbs = floats(&out, "rbs_per_tti");
    let down: Vec<usize> = (0..kind.len()).filter(|&i| kind[i] == "cell" && dir[i] == "downlink").collect();
    assert_eq!(down.len(), 40);
    assert!(down.iter().all(|&i| rbs[i] <= 273.0 * 0.8 + 1e-9), "{:?}", down.iter().map(|&i| rbs[i]).collect::<Vec<_>>());
    let late = down[15..].iter().map(|&i| rbs[i]).sum::<f64>() / 25.0;
    assert!(late > 0.97 * 273.0 * 0.8, "{late} RBs per slot");
}

#[test]
fn the_example_runs_the_same_for_a_seed_and_both_ues_get_a_share() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/nr_cell.toml")).unwrap();
    let text = text.replace("duration = \"10 s\"", "duration = \"3 s\"");
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("wall_time_s");
        v
    };
    let a = strip(run(&text, Some(2)).0);
    let b = strip(run(&text, Some(2)).0);
    assert_eq!(a, b);
    let c = strip(run(&text, Some(3)).0);
    assert_ne!(a["cells"], c["cells"]);
    let flows = a["flows"].as_array().unwrap();
    let total: f64 = flows.iter().map(|f| f["goodput_mbps"].as_f64().unwrap()).sum();
    assert!(flows.iter().all(|f| f["goodput_mbps"].as_f64().unwrap() > 50.0), "{flows:?}");
    assert!(total < 391.9, "{total}");
}

#[test]
fn bad_nr_fields_are_refused_naming_the_field_and_what_is_allowed() {
    let with = |line: &str| NR.replace("rat = \"nr\"", &format!("rat = \"nr\"\n{line}"));
    let e = error(&with("tdd_pattern = \"DDXSU\""));
    assert!(e.contains("cell.nr.tdd_pattern") && e.contains("'X'") && e.contains("D (downlink)"), "{e}");
    let e = error(&with("numerology = 4"));
    assert!(e.contains("cell.nr.numerology") && e.contains("0, 1, 2 or 3"), "{e}");
    let e = error(&with("bandwidth_mhz = 70"));
    assert!(e.contains("cell.nr.bandwidth_mhz") && e.contains("100"), "{e}");
    let e = error(&with("numerology = 0\nbandwidth_mhz = 100"));
    assert!(e.contains("cell.nr.bandwidth_mhz") && e.contains("50"), "{e}");
    let e = error(&with("special_slot = \"10:2\""));
    assert!(e.contains("cell.nr.special_slot") && e.contains("D:G:U"), "{e}");
    let e = error(&with("special_slot = \"10:2:3\""));
    assert!(e.contains("cell.nr.special_slot") && e.contains("14"), "{e}");
    let e = error(&with("mcs_table = \"qam1024\""));
    assert!(e.contains("cell.nr.mcs_table") && e.contains("qam256"), "{e}");
    let e = error(&with("carrier_mhz = 12000"));
    assert!(e.contains("cell.nr.carrier_mhz") && e.contains("FR2"), "{e}");
    let e = error(&with("n1_symbols = 0"));
    assert!(e.contains("cell.nr.n1_symbols"), "{e}");
    let e = error(&with("k2_slots = 16"));
    assert!(e.contains("cell.nr.k2_slots"), "{e}");
    // In a fade HARQ retransmits; a slower UE (N1 = 20 symbols) acknowledges later, so its
    // retransmissions come later: another run.
    let faded = |extra: &str| with(extra).replace("fading = \"none\"", "fading = \"rayleigh\"\ndoppler_hz = 200").replace("distance_m = 50", "distance_m = 300");
    let (fast, _) = run(&faded(""), Some(1));
    let (slow, _) = run(&faded("n1_symbols = 20"), Some(1));
    assert!(fast["cells"][0]["ues"][0]["downlink"]["tb_errors"].as_u64().unwrap() > 0);
    assert_ne!(fast["cells"][0]["ues"][0]["downlink"], slow["cells"][0]["ues"][0]["downlink"]);
    let e = error(&with("layers = 8"));
    assert!(e.contains("cell.nr.layers"), "{e}");
    let e = error(&with("bandwidth_rb = 100"));
    assert!(e.contains("cell.nr.bandwidth_rb") && e.contains("bandwidth_mhz"), "{e}");
    let e = error(&NR.replace("rat = \"nr\"", "rat = \"6g\""));
    assert!(e.contains("cell.nr.rat") && e.contains("lte, nr"), "{e}");
    let e = error(&with("los = \"sometimes\""));
    assert!(e.contains("cell.nr.los") && e.contains("model, drawn"), "{e}");
    let e = error(&with("los = \"drawn\""));
    assert!(e.contains("cell.nr.los") && e.contains("uma, umi or rma"), "{e}");
    // A drawn line of sight is in the summary.
    let (drawn, _) = run(&with("los = \"drawn\"\npathloss = { model = \"umi\" }"), Some(1));
    assert!(drawn["cells"][0]["ues"][0]["line_of_sight"].is_boolean(), "{}", drawn["cells"][0]);
    // An LTE cell has none of NR's fields.
    let e = error(&NR.replace("rat = \"nr\"", "tdd_pattern = \"DDDSU\""));
    assert!(e.contains("cell.nr.tdd_pattern") && e.contains("rat = \"nr\""), "{e}");
}

#[test]
fn the_code_block_error_model_moves_the_link_adaptation_by_its_gaps() {
    // A UE at 150 m (the 64QAM to 256QAM range): the code-block model with 5G-LENA's gaps
    // (4.7 dB on BG1, 3.6 on BG2: its link-level curves' offsets, docs/nr-cell.md) makes every
    // MCS need more SINR than with 1 dB gaps, so the cell picks lower MCSs and carries less.
    let far = NR.replace("distance_m = 50", "distance_m = 150");
    let with = |line: &str| far.replace("rat = \"nr\"", &format!("rat = \"nr\"\n{line}"));
    let goodput = |s: &Value| s["flows"][0]["goodput_mbps"].as_f64().unwrap();
    let near_gap = run(&with("bler = { model = \"code_blocks\" }"), Some(1)).0;
    let lena_gap = run(&with("bler = { model = \"code_blocks\", gap_bg1_db = 4.7, gap_bg2_db = 3.6 }"), Some(1)).0;
    let (a, b) = (goodput(&near_gap), goodput(&lena_gap));
    assert!(b < 0.9 * a && b > 0.4 * a, "1 dB gaps {a} Mbit/s, LENA's {b}");
    // Bad models are named.
    let e = error(&with("bler = { model = \"code_blocks\", gap_bg1_db = 12 }"));
    assert!(e.contains("cell.nr") && e.contains("bler.gap_bg1_db"), "{e}");
    let e = error(&with("bler = { model = \"turbo\" }"));
    assert!(e.contains("bler") && e.contains("code_blocks"), "{e}");
    let lte = far.replace("rat = \"nr\"\n", "");
    let e = error(&lte.replace("fading = \"none\"", "fading = \"none\"\nbler = { model = \"code_blocks\" }"));
    assert!(e.contains("cell.nr.bler.model") && e.contains("rat = \"nr\""), "{e}");
}
