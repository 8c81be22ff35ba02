//! Dual connectivity end to end: TCP and QUIC over a PDCP split bearer (two 20 Mbit/s legs),
//! checked against what the legs can carry, and the split policies of pdcp-dc.md TV20.

use crate::common;

use common::{load_with, run, run_with};
use multiconn_scenario::Simulation;
use serde_json::Value;

/// The seed study's default testbed: two 20 Mbit/s legs, normal delay (10 ms, CV 10 %),
/// batches of 100 split 1:1, t-Reordering 200 ms, 1 ms per proxy.
const DC: &str = r#"
[run]
duration = "120 s"

[[link]]
name = "leg1"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = { model = "normal", mean = "10 ms", cv = 0.1 }
queue = "100 packets"

[[link]]
name = "leg2"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = { model = "normal", mean = "10 ms", cv = 0.1 }
queue = "100 packets"

[[split]]
name = "dc"
legs = ["leg1", "leg2"]
policy = { model = "batch", size = 100, share = 0.5 }
sn_length = 12
t_reordering = "200 ms"
processing_delay = "1 ms"

[[flow]]
name = "dc"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "30 MB"
route = ["dc"]
receiver = { udp_rcvbuf = "25 MB", rmem_max = "25 MB" }
"#;

fn goodput(summary: &Value, flow: usize) -> f64 {
    summary["flows"][flow]["goodput_mbps"].as_f64().unwrap()
}

fn pdcp(summary: &Value, flow: usize) -> &Value {
    &summary["flows"][flow]["pdcp"]["dc"]
}

#[test]
fn quic_and_tcp_over_equal_legs_use_most_of_the_aggregate() {
    let quic = run_with(DC, &[], 1);
    let tcp = run_with(DC, &[("flow.dc.transport", "tcp"), ("flow.dc.receiver", "{}")], 1);
    for (name, s) in [("quic", &quic), ("tcp", &tcp)] {
        let g = goodput(s, 0);
        assert!(g >= 0.8 * 40.0, "{name} over DC: {g} Mbit/s, want at least 80 % of 40");
        assert!(g <= 40.0, "{name}: {g} Mbit/s exceeds the two legs");
        let p = pdcp(s, 0);
        let sent = p["pdus_sent"].as_array().unwrap();
        let (a, b) = (sent[0].as_f64().unwrap(), sent[1].as_f64().unwrap());
        assert!((a - b).abs() <= 100.0, "{name}: a 1:1 batch split sent {a} and {b} PDUs");
    }
}

/// With per-leg jitter that reorders (netem's delay jitter without a rate), QUIC relies on
/// PDCP to restore the order: without reordering its goodput falls (spurious losses; 35.4 ->
/// 15.0, 34.7 -> 27.6, 35.4 -> 30.4, 35.5 -> 30.0 Mbit/s for seeds 1 to 4).
#[test]
fn without_reordering_quic_goodput_falls() {
    let jitter = [("link.leg1.delay.reorder", "true"), ("link.leg2.delay.reorder", "true")];
    let with_summary = run_with(DC, &jitter, 2);
    let with = goodput(&with_summary, 0);
    assert!(pdcp(&with_summary, 0)["out_of_order"].as_u64().unwrap() > 1000, "the legs reorder");
    let mut off = jitter.to_vec();
    off.push(("split.dc.reordering", "false"));
    let without_summary = run_with(DC, &off, 2);
    let without = goodput(&without_summary, 0);
    assert!(with >= 0.8 * 40.0, "with reordering: {with} Mbit/s");
    assert!(without < 0.85 * with, "reordering off: {without} Mbit/s vs {with} with it");
    // The transmitter hears of the receiver's window when a gap is given up with nothing
    // released (reordering off passes everything up on arrival): without it the window stayed
    // full from 2.2 s on and this run carried 0.48 Mbit/s.
    assert!(without > 0.5 * with, "reordering off stalled the split's window: {without} Mbit/s");
    assert!(without_summary["flows"][0]["spurious_retransmissions"].as_u64().unwrap() > 100);
    assert_eq!(pdcp(&without_summary, 0)["out_of_order"], 0, "nothing waits when reordering is off");
}

#[test]
fn duplication_never_exceeds_one_leg() {
    let s = run_with(DC, &[("split.dc.policy", r#"{ model = "duplicate" }"#)], 3);
    let g = goodput(&s, 0);
    assert!(g <= 20.0, "duplication: {g} Mbit/s, more than one 20 Mbit/s leg");
    assert!(g >= 0.7 * 20.0, "duplication: {g} Mbit/s, far below one leg");
    let p = pdcp(&s, 0);
    let sent = p["pdus_sent"].as_array().unwrap();
    assert_eq!(sent[0], sent[1], "every PDU goes on both legs");
    // Each COUNT arrives twice unless a copy was lost; the second copy is discarded.
    let arrived: u64 = p["pdus_arrived"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
    let discarded = p["duplicate_discards"].as_u64().unwrap() + p["late_discards"].as_u64().unwrap();
    assert_eq!(arrived - discarded, p["delivered"].as_u64().unwrap());
    assert_eq!(s["flows"][0]["drops"]["pdcp_late"], 0, "spare copies are not losses");
}

/// Duplication halves the loss each packet sees (p² instead of p): at 5 % loss per leg, the
/// duplicated flow loses far fewer packets end to end than a split one.
#[test]
fn duplication_protects_against_leg_loss() {
    let lossy = [("link.leg1.forward.loss", "5 %"), ("link.leg2.forward.loss", "5 %")];
    let split = run_with(DC, &lossy, 4);
    let mut dup_sets = lossy.to_vec();
    dup_sets.push(("split.dc.policy", r#"{ model = "duplicate" }"#));
    let dup = run_with(DC, &dup_sets, 4);
    let given_up = |s: &Value| pdcp(s, 0)["given_up"].as_u64().unwrap();
    let delivered = |s: &Value| pdcp(s, 0)["delivered"].as_u64().unwrap();
    let loss_split = given_up(&split) as f64 / delivered(&split) as f64;
    let loss_dup = given_up(&dup) as f64 / delivered(&dup) as f64;
    assert!(loss_split > 0.03, "split at 5 % per leg: end-to-end loss {loss_split}");
    assert!(loss_dup < 0.01, "duplicated at 5 % per leg: end-to-end loss {loss_dup} (p² = 0.25 %)");
    assert!(goodput(&dup, 0) > goodput(&split, 0), "duplication should win at 5 % loss");
}

/// A reordering release shows in a time-series bin as more goodput than the two legs can
/// carry; the summary says it is a burst and names the split, and a run without such a bin
/// does not.
#[test]
fn a_bin_above_the_legs_capacity_is_a_warning_naming_the_burst() {
    // Legs of 10 and 40 ms: batches of 100 packets reorder, and each release comes at once.
    let skewed = [("link.leg2.delay", "40 ms"), ("run.duration", "10 s"), ("run.bin", "10 ms")];
    let s = run_with(DC, &skewed, 1);
    let warnings = s["warnings"].as_array().unwrap_or_else(|| panic!("no warnings: {}", s["flows"][0]["pdcp"]));
    let w = warnings[0].as_str().unwrap();
    assert!(w.starts_with("flow dc: ") && w.contains("above the 40.0 Mbit/s its route could carry then"), "{w}");
    assert!(w.contains("split dc released up to") && w.contains("a burst, not capacity"), "{w}");
    let peak: f64 = w["flow dc: ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(peak > 42.0, "{w}");
    // A 30 Mbit/s constant-rate flow over the same split in 100 ms bins: its releases stay
    // below what the legs carry, nothing to warn of.
    let cbr = [("run.duration", "10 s"), ("run.bin", "100 ms"), ("flow.dc.transport", "udp"), ("flow.dc.app", "cbr"), ("flow.dc.rate", "30 Mbit/s")];
    let calm = run_with(&DC.replace("size = \"30 MB\"\n", "").replace("receiver = { udp_rcvbuf = \"25 MB\", rmem_max = \"25 MB\" }\n", ""), &cbr, 1);
    assert!(calm.get("warnings").is_none(), "{}", calm["warnings"]);
}

const FAIRNESS_FLOWS: &str = r#"
[[flow]]
name = "sc1"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
route = ["leg1"]
receiver = { udp_rcvbuf = "25 MB", rmem_max = "25 MB" }

[[flow]]
name = "sc2"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
route = ["leg2"]
receiver = { udp_rcvbuf = "25 MB", rmem_max = "25 MB" }
"#;

#[test]
fn three_symmetric_flows_share_fairly() {
    // One seed's 60 s of NewReno competition varies (JFI 0.94 to 1.00 over seeds 1 to 5, the
    // DC flow's share set by where its slow start ended): the mean over five seeds is what
    // the legs' symmetry decides.
    let text = format!("{DC}{FAIRNESS_FLOWS}");
    let mut jfis = Vec::new();
    for seed in 1..=5 {
        let s = run_with(&text, &[("run.duration", "60 s"), ("flow.dc.size", "1 GB")], seed);
        let jfi = s["jain_fairness"].as_f64().unwrap();
        assert!(jfi >= 0.9, "seed {seed}: JFI of DC + two SC flows over symmetric legs: {jfi}");
        let total: f64 = (0..3).map(|f| goodput(&s, f)).sum();
        assert!(total > 0.85 * 40.0 && total <= 40.0, "seed {seed}: the three flows carry {total} Mbit/s of 40");
        jfis.push(jfi);
    }
    let mean = jfis.iter().sum::<f64>() / jfis.len() as f64;
    assert!(mean >= 0.95, "mean JFI over seeds 1 to 5: {mean} ({jfis:?})");
}

#[test]
fn same_seed_same_bytes() {
    let text = format!("{DC}{FAIRNESS_FLOWS}");
    let sets = [("run.duration", "10 s"), ("split.dc.policy", r#"{ model = "adaptive" }"#)];
    let a = load_with(&text, &sets).unwrap();
    let run_once = || {
        let mut sim = Simulation::new(&a, Some(9)).unwrap();
        sim.run_to_end();
        sim.finish().summary_json
    };
    assert_eq!(run_once(), run_once());
}

/// TV20 legs: a 10 Mbit/s leg with 10 ms and a 100 Mbit/s leg with 2 ms + 5 ms, a 30 Mbit/s
/// CBR stream over the split.
const UNEQUAL: &str = r#"
[run]
duration = "10 s"

[[link]]
name = "mn"
between = ["core", "ue"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "1000 packets"

[[link]]
name = "sn"
between = ["core", "ue"]
rate = "100 Mbit/s"
delay = "7 ms"
queue = "1000 packets"

[[split]]
name = "dc"
legs = ["mn", "sn"]
t_reordering = "100 ms"

[[flow]]
name = "video"
from = "core"
to = "ue"
transport = "udp"
app = "cbr"
rate = "30 Mbit/s"
route = ["dc"]
"#;

/// TV20(a): a fixed 1:1 split overloads the slow leg; packets behind its growing queue
/// arrive after t-Reordering has given them up.
#[test]
fn fixed_split_over_unequal_legs_hits_the_reordering_timer() {
    let s = run_with(UNEQUAL, &[("split.dc.policy", r#"{ model = "alternate" }"#)], 1);
    let p = &s["flows"][0]["pdcp"]["dc"];
    assert!(p["timer_expiries"].as_u64().unwrap() > 0);
    assert!(p["late_discards"].as_u64().unwrap() > 0, "late MN packets are discarded: {p}");
    assert!(p["reorder_delay_max_ms"].as_f64().unwrap() >= 90.0, "waits reach t-Reordering: {p}");
}

/// TV20(b): the delay-equalising (adaptive) split on the same legs keeps reordering short
/// and loses nothing.
#[test]
fn adaptive_split_over_unequal_legs_keeps_reordering_short() {
    let s = run_with(UNEQUAL, &[("split.dc.policy", r#"{ model = "adaptive", signal = "delay" }"#)], 1);
    let p = &s["flows"][0]["pdcp"]["dc"];
    assert_eq!(p["late_discards"], 0, "{p}");
    assert!(p["reorder_delay_mean_ms"].as_f64().unwrap() < 5.0, "{p}");
    let sent = p["pdus_sent"].as_array().unwrap();
    let (mn, sn) = (sent[0].as_f64().unwrap(), sent[1].as_f64().unwrap());
    assert!(sn > 2.0 * mn, "most traffic should take the fast leg: mn {mn}, sn {sn}");
    let g = goodput(&s, 0);
    assert!(g > 29.0, "30 Mbit/s offered, {g} delivered");
}

/// TV20(c): the fast leg is blocked for 200 ms; the adaptive split moves traffic to the other
/// leg, and what was in flight on the blocked leg is recovered or skipped, never delivered twice.
#[test]
fn blockage_of_one_leg_moves_traffic_to_the_other() {
    let sets = [("split.dc.policy", r#"{ model = "adaptive" }"#), ("link.sn.down", r#"[["2 s", "2.2 s"]]"#), ("flow.video.rate", "8 Mbit/s")];
    let s = run_with(UNEQUAL, &sets, 1);
    let p = &s["flows"][0]["pdcp"]["dc"];
    let delivered = p["delivered"].as_u64().unwrap();
    let sent: u64 = p["pdus_sent"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
    assert!(delivered <= sent);
    assert!(goodput(&s, 0) > 7.5, "an 8 Mbit/s stream survives a 200 ms blockage: {}", goodput(&s, 0));
}

/// TV20(d) legs: every PDU on the SN leg (100 Mbit/s, 10 ms, 2 % Xn transport loss); the MN
/// leg (10 Mbit/s, 50 ms) carries only what is resent. Reports every 10 ms.
const XN_LOSS: &str = r#"
[run]
duration = "10 s"

[[link]]
name = "mn"
between = ["core", "ue"]
rate = "10 Mbit/s"
delay = "50 ms"
queue = "1000 packets"

[[link]]
name = "sn"
between = ["core", "ue"]
rate = "100 Mbit/s"
delay = "10 ms"
queue = "1000 packets"
forward = { loss = "2 %" }

[[split]]
name = "dc"
legs = ["mn", "sn"]
policy = { model = "batch", size = 1, share = 0 }
retransmit_lost = true
ddds_period = "10 ms"
t_reordering = "100 ms"

[[flow]]
name = "video"
from = "core"
to = "ue"
transport = "udp"
app = "cbr"
rate = "8 Mbit/s"
route = ["dc"]
"#;

fn count(p: &Value, field: &str) -> u64 {
    p[field].as_u64().unwrap_or_else(|| panic!("{field} in {p}"))
}

fn per_leg(p: &Value, field: &str) -> [u64; 2] {
    let v = p[field].as_array().unwrap_or_else(|| panic!("{field} in {p}"));
    [v[0].as_u64().unwrap(), v[1].as_u64().unwrap()]
}

/// TV20(d): a PDU lost on the Xn is reported in the next DDDS and resent over the MN leg. With
/// t-Reordering longer than report period + MN delay, every one is accepted and nothing is
/// lost; with a shorter one, every resent PDU arrives after its gap was given up and is
/// dropped as late.
#[test]
fn xn_loss_is_recovered_over_the_other_leg_before_t_reordering_only() {
    let s = run_with(XN_LOSS, &[], 3);
    let p = pdcp(&s, 0);
    let sent = per_leg(p, "pdus_sent");
    assert_eq!(sent[0], 0, "the MN leg carries no first transmissions: {p}");
    let resent = count(p, "retransmitted");
    let share = resent as f64 / sent[1] as f64;
    assert!((0.01..0.03).contains(&share), "2 % Xn loss: {resent} of {} resent", sent[1]);
    // Each resent PDU arrives over the MN leg (but those resent in the last 60 ms).
    let over_mn = per_leg(p, "pdus_arrived")[0];
    assert!(over_mn <= resent && over_mn + 5 >= resent, "{p}");
    assert_eq!((count(p, "given_up"), count(p, "late_discards")), (0, 0), "{p}");
    // Everything sent before the last 100 ms (its sending window) was delivered.
    assert!(count(p, "delivered") + 70 >= sent[1], "{p}");
    assert_eq!(s["flows"][0]["drops"]["random_loss"], 0, "recovered PDUs are not flow losses");
    assert!(goodput(&s, 0) > 7.8, "{}", goodput(&s, 0));

    let late = run_with(XN_LOSS, &[("split.dc.t_reordering", "20 ms")], 3);
    let p = pdcp(&late, 0);
    let resent = count(p, "retransmitted");
    assert!(resent > 0);
    // The gap is given up ~21.5 ms after the loss; the copy over the MN leg needs ≥ 51 ms.
    let given_up = count(p, "given_up");
    assert!(given_up <= resent && given_up + 2 >= resent, "{p}");
    assert_eq!(count(p, "late_discards"), per_leg(p, "pdus_arrived")[0], "{p}");
    assert_eq!(late["flows"][0]["drops"]["pdcp_late"].as_u64().unwrap(), count(p, "late_discards"));

    let off = run_with(&XN_LOSS.replace("retransmit_lost = true\nddds_period = \"10 ms\"\n", ""), &[], 3);
    let p = pdcp(&off, 0);
    assert_eq!(count(p, "retransmitted"), 0);
    assert!(count(p, "given_up") > 0, "without recovery the losses stay: {p}");
}

/// TV20(e): duplication switched off by a MAC CE mid-flow. The slow second leg holds a full
/// queue of copies; at deactivation the waiting ones are discarded, later PDUs take the first
/// leg alone, and no SDU is delivered twice.
#[test]
fn duplication_switched_off_discards_the_queued_copies() {
    let dup = [("split.dc.legs", r#"["sn", "mn"]"#), ("split.dc.policy", r#"{ model = "duplicate", off = [["2 s", "20 s"]] }"#)];
    let s = run_with(UNEQUAL, &dup, 1);
    let p = pdcp(&s, 0);
    let sent = per_leg(p, "pdus_sent");
    let discarded = count(p, "discarded_copies");
    // 30 Mbit/s into a 10 Mbit/s leg with 1000 packets of queue: full at the switch.
    assert!((990..=1000).contains(&discarded), "{p}");
    // The first leg carried every PDU, the second only the first 2 s of them.
    let share = sent[1] as f64 / sent[0] as f64;
    assert!((0.18..0.22).contains(&share), "{p}");
    let mn = s["links"].as_array().unwrap().iter().find(|l| l["name"] == "mn" && l["direction"] == "forward").unwrap();
    let queue_drops = mn["drops"]["queue"].as_u64().unwrap();
    // Every copy handed to the second leg arrived, was discarded at the switch, or overflowed.
    assert_eq!(per_leg(p, "pdus_arrived")[1] + discarded + queue_drops, sent[1], "{p} {mn}");
    let arrived: u64 = per_leg(p, "pdus_arrived").iter().sum();
    assert_eq!(count(p, "delivered") + count(p, "duplicate_discards") + count(p, "late_discards"), arrived, "{p}");
    assert!(count(p, "delivered") <= sent[0], "no SDU twice: {p}");
    assert!(goodput(&s, 0) > 29.0, "{}", goodput(&s, 0));

    // Switched back on at 4 s, the second leg carries 2 + 6 of the 10 seconds.
    let back = run_with(UNEQUAL, &[dup[0], ("split.dc.policy", r#"{ model = "duplicate", off = [["2 s", "4 s"]] }"#)], 1);
    let sent = per_leg(pdcp(&back, 0), "pdus_sent");
    let share = sent[1] as f64 / sent[0] as f64;
    assert!((0.78..0.82).contains(&share), "{}", pdcp(&back, 0));
}

#[test]
fn split_errors_name_the_field() {
    let bad = [
        (("split.dc.legs", r#"["mn", "nope"]"#), "split.dc.legs"),
        (("split.dc.sn_length", "15"), "split.dc.sn_length"),
        (("split.dc.policy", r#"{ model = "batch", size = 0 }"#), "split.dc.policy.size"),
        (("split.dc.policy", r#"{ model = "ratio", share = 1.5 }"#), "split.dc.policy"),
        (("split.dc.uplink", "other"), "split.dc.uplink"),
        (("split.dc.t_reordering", "soon"), "split.dc.t_reordering"),
        (("split.dc.ddds_period", "5 ms"), "split.dc.ddds_period"),
        (("split.dc.policy", r#"{ model = "duplicate", off = [["3 s", "2 s"]] }"#), "split.dc.policy.off"),
        (("split.dc.policy", r#"{ model = "duplicate", off = [["1 s", "3 s"], ["2 s", "4 s"]] }"#), "split.dc.policy.off"),
    ];
    for ((key, value), field) in bad {
        let e = load_with(UNEQUAL, &[(key, value)]).err().unwrap_or_else(|| panic!("{key}={value} should be refused"));
        assert!(e.to_string().contains(field), "{key}={value}: {e}");
    }
    let e = load_with(&UNEQUAL.replace("app = \"cbr\"\nrate = \"30 Mbit/s\"", "app = \"bulk\""), &[]).err().unwrap();
    assert!(e.to_string().contains("flow.video.route"), "{e}");
}

#[test]
fn infinite_t_reordering_is_accepted() {
    let (s, _) = run(&UNEQUAL.replace("t_reordering = \"100 ms\"", "t_reordering = \"infinity\""), Some(1));
    assert_eq!(s["flows"][0]["pdcp"]["dc"]["timer_expiries"], 0);
}

/// The `linux-tcp` profile with GRO switched off, as a profile file in a fresh folder.
fn linux_tcp_without_gro() -> std::path::PathBuf {
    let text = include_str!("../../../transport/profiles/linux-tcp.toml");
    assert!(text.contains("\ngro = true\n"), "the linux-tcp profile turns GRO on");
    let dir = std::env::temp_dir().join(format!("multiconn-gro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("no-gro.toml"), text.replace("\ngro = true\n", "\ngro = false\n").replace("name = \"linux-tcp\"", "name = \"linux-tcp-no-gro\"")).unwrap();
    dir
}

fn run_in(text: &str, dir: &std::path::Path) -> Value {
    let origin = multiconn_scenario::Origin { name: "dc.toml".into(), base_dir: dir.to_path_buf() };
    let scenario = multiconn_scenario::load(text, &origin, &[]).unwrap_or_else(|e| panic!("scenario should load: {e}"));
    let mut sim = Simulation::new(&scenario, Some(1)).unwrap();
    sim.run_to_end();
    serde_json::from_str(&sim.finish().summary_json).unwrap()
}

/// TCP over the split: PDCP releases bursts of up to a few hundred segments at one instant
/// when a batch on the slower leg completes a gap. Without GRO the client acknowledges every
/// second segment of the burst at that instant and the ACK leg's 100-packet queue overflows;
/// with the `linux-tcp` profile's GRO a burst becomes one ACK per coalesced packet (up to 45
/// segments, or the segments of one millisecond of the sender's clock) and the return
/// direction loses (almost) nothing. The summary tells the two directions apart.
#[test]
fn tcp_gro_keeps_pdcp_bursts_from_overflowing_the_ack_queue() {
    let tcp = DC
        .replace("transport = \"quic\"", "transport = \"tcp\"\ncc = \"cubic\"\nPROFILE")
        .replace("receiver = { udp_rcvbuf = \"25 MB\", rmem_max = \"25 MB\" }\n", "")
        .replace("size = \"30 MB\"", "size = \"1000 MB\"")
        .replace("duration = \"120 s\"", "duration = \"30 s\"");
    let dir = linux_tcp_without_gro();
    let with = run_in(&tcp.replace("PROFILE", "profile = \"linux-tcp\""), &dir);
    let without = run_in(&tcp.replace("PROFILE", "profile = \"no-gro.toml\""), &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let f = |s: &Value, k: &str, c: &str| s["flows"][0][k][c].as_u64().unwrap();
    for s in [&with, &without] {
        for cause in ["queue", "random_loss", "link_down", "udp_buffer", "pdcp_late", "pdcp_window"] {
            assert_eq!(f(s, "drops_data", cause) + f(s, "drops_ack", cause), f(s, "drops", cause), "{cause}");
        }
        // The ACKs cross leg1's reverse direction only: its drops are the flow's ACK drops.
        let reverse = s["links"].as_array().unwrap().iter().find(|l| l["name"] == "leg1" && l["direction"] == "reverse").unwrap();
        assert_eq!(reverse["drops"]["queue"].as_u64(), Some(f(s, "drops_ack", "queue")));
        assert!(pdcp(s, 0)["max_burst"].as_u64().unwrap() >= 100, "bursts of at least a batch");
    }
    let (ack_with, ack_without) = (f(&with, "drops_ack", "queue"), f(&without, "drops_ack", "queue"));
    eprintln!(
        "ACK drops without GRO {ack_without}, with {ack_with}; data drops {} and {}; goodput {} and {} Mbit/s",
        f(&without, "drops_data", "queue"),
        f(&with, "drops_data", "queue"),
        goodput(&without, 0),
        goodput(&with, 0)
    );
    assert!(ack_without >= 200, "without GRO the bursts' ACKs overflow the queue: {ack_without}");
    assert!(ack_with * 20 <= ack_without, "with GRO: {ack_with} ACK drops against {ack_without}");
    assert!(goodput(&with, 0) >= 0.97 * goodput(&without, 0));
}
