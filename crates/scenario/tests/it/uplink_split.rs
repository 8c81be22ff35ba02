//! Uplink dual connectivity: a UE's data crosses a split bearer from the UE side, its PDCP
//! entity the transmitter (TS 38.323 §5.2.1): the primary path alone while the data pending
//! is below `ul-DataSplitThreshold`, both legs above it, the receiver reordering; duplication
//! on the uplink as on the downlink.

use crate::common;
use common::*;
use serde_json::Value;

/// A UE with an LTE leg (10 Mbit/s, 20 ms) and an NR leg (30 Mbit/s, 10 ms) up to a server;
/// the links' forward direction is the uplink.
const UL: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "lte"
between = ["ue", "server"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "200 packets"

[[link]]
name = "nr"
between = ["ue", "server"]
rate = "30 Mbit/s"
delay = "10 ms"
queue = "200 packets"

[[split]]
name = "dc"
legs = ["lte", "nr"]
policy = POLICY
t_reordering = "100 ms"

[[flow]]
name = "up"
from = "ue"
to = "server"
direction = "up"
transport = "TRANSPORT"
app = "bulk"
size = "10 MB"
route = ["dc"]
"#;

fn ul(policy: &str, transport: &str) -> String {
    UL.replace("POLICY", policy).replace("TRANSPORT", transport)
}

fn flow(s: &Value) -> &Value {
    &s["flows"][0]
}

fn pdus_sent(s: &Value) -> [u64; 2] {
    let sent = flow(s)["pdcp"]["dc"]["pdus_sent"].as_array().unwrap_or_else(|| panic!("pdcp block: {}", flow(s)));
    [sent[0].as_u64().unwrap(), sent[1].as_u64().unwrap()]
}

#[test]
fn below_the_threshold_everything_takes_the_primary_path() {
    // V2X-sized messages: 1200 B every 100 ms never build up 20 kB in the UE's buffers.
    let text = ul(r#"{ model = "threshold", primary = "nr", threshold = "20 kB" }"#, "quic")
        .replace(r#"app = "bulk""#, r#"app = "messages""#)
        .replace("size = \"10 MB\"\n", "")
        + "\n[[flow.messages]]\nkind = \"priority\"\ncount = 100\n";
    let (s, _) = run(&text, Some(1));
    let [lte, nr] = pdus_sent(&s);
    assert!(nr >= 100, "every message went up: {nr} PDUs on the primary path");
    assert_eq!(lte, 0, "nothing on the secondary leg below the threshold");
    assert_eq!(flow(&s)["messages"]["priority"]["received"], 100);
    assert_eq!(flow(&s)["pdcp"]["dc"]["out_of_order"], 0, "one leg: nothing to reorder");
}

#[test]
fn above_the_threshold_both_legs_carry_the_upload_and_the_receiver_reorders() {
    for transport in ["tcp", "quic"] {
        let (s, _) = run(&ul(r#"{ model = "threshold", primary = "lte", threshold = "30 kB" }"#, transport), Some(1));
        let f = flow(&s);
        assert_eq!(f["bytes_delivered"], 10_000_000u64, "{transport}: {f}");
        let [lte, nr] = pdus_sent(&s);
        assert!(lte > 500 && nr > 500, "{transport}: both legs carry the upload: lte {lte}, nr {nr}");
        // Above one leg's 10 Mbit/s: the secondary leg adds its capacity.
        let g = f["goodput_mbps"].as_f64().unwrap();
        assert!(g > 15.0, "{transport}: {g} Mbit/s");
        let p = &f["pdcp"]["dc"];
        assert!(p["out_of_order"].as_u64().unwrap() > 0, "{transport}: legs of 20 and 10 ms reorder: {p}");
        // The PDU goes to the leg that sends it first, so the legs' delays stay close and only
        // what a leg's queue dropped is given up (TCP's slow start overflows a queue).
        let lost_on_legs: u64 = (0..2).map(|l| p["pdus_sent"][l].as_u64().unwrap() - p["pdus_arrived"][l].as_u64().unwrap()).sum();
        assert!(p["given_up"].as_u64().unwrap() <= lost_on_legs, "{transport}: {p}");
        assert_eq!(p["late_discards"], 0, "{transport}: {p}");
        // The legs' shares follow their rates (10 and 30 Mbit/s).
        let share = lte as f64 / (lte + nr) as f64;
        assert!((0.15..0.4).contains(&share), "{transport}: LTE carried {share} of the PDUs");
    }
}

#[test]
fn without_a_threshold_the_primary_path_carries_everything() {
    // ul-DataSplitThreshold absent: infinity (TS 38.331), the primary path only.
    let (s, _) = run(&ul(r#"{ model = "threshold", primary = "lte" }"#, "tcp"), Some(1));
    let [lte, nr] = pdus_sent(&s);
    assert!(lte > 6000, "{lte}");
    assert_eq!(nr, 0);
    let g = flow(&s)["goodput_mbps"].as_f64().unwrap();
    assert!(g < 10.0, "one 10 Mbit/s leg: {g} Mbit/s");
    // A low threshold with the same primary lets the upload use both legs.
    let (both, _) = run(&ul(r#"{ model = "threshold", primary = "lte", threshold = "10 kB" }"#, "tcp"), Some(1));
    assert!(flow(&both)["goodput_mbps"].as_f64().unwrap() > 1.5 * g);
}

#[test]
fn uplink_duplication_halves_loss_as_on_the_downlink() {
    // 5 % loss on each leg's uplink: duplication makes a PDU lost only when both copies are
    // (p² = 0.25 %), against p = 5 % split over the legs.
    let lossy = |policy: &str| {
        ul(policy, "quic")
            .replace("queue = \"200 packets\"", "queue = \"200 packets\"\nforward = { loss = \"5 %\" }")
            .replace("t_reordering = \"100 ms\"", "t_reordering = \"60 ms\"")
    };
    let split = run_with(&lossy(r#"{ model = "threshold", primary = "lte", threshold = "10 kB" }"#), &[], 4);
    let dup = run_with(&lossy(r#"{ model = "duplicate" }"#), &[], 4);
    let rate = |s: &Value| {
        let p = &flow(s)["pdcp"]["dc"];
        p["given_up"].as_f64().unwrap() / p["delivered"].as_f64().unwrap()
    };
    let (loss_split, loss_dup) = (rate(&split), rate(&dup));
    eprintln!("uplink, 5 % per leg: PDCP gaps split {loss_split:.4}, duplicated {loss_dup:.4}");
    assert!(loss_split > 0.03, "split: {loss_split}");
    assert!(loss_dup < 0.01, "duplicated: {loss_dup}");
}

#[test]
fn threshold_settings_are_checked_at_the_field() {
    let e = load_str(&ul(r#"{ model = "threshold", primary = "wifi" }"#, "quic")).expect_err("no such leg").to_string();
    assert!(e.contains("split.dc.policy.primary") && e.contains("\"lte\" or \"nr\""), "{e}");
    let e = load_str(&ul(r#"{ model = "threshold", threshold = "0 B" }"#, "quic")).expect_err("zero").to_string();
    assert!(e.contains("split.dc.policy.threshold"), "{e}");
}

/// A download from the server to the UE over the same two legs (their reverse directions are
/// the downlink): the ACKs go up.
fn download(reverse: &str) -> String {
    UL.replace("POLICY", r#"{ model = "batch", size = 4, share = 0.25 }"#)
        .replace("t_reordering = \"100 ms\"", &format!("t_reordering = \"100 ms\"\n{reverse}"))
        .replace("from = \"ue\"\nto = \"server\"\ndirection = \"up\"", "from = \"server\"\nto = \"ue\"")
        .replace("TRANSPORT", "tcp")
}

#[test]
fn a_split_serves_both_directions_of_a_flow_at_once() {
    // The data down split 1:3, the ACKs up through PDCP entities of their own: the primary
    // path (LTE) while the UE holds less than 50 kB, which ACKs alone never reach (a burst
    // of a few hundred ACKs after a reordering release is about 10 kB: a 5 kB threshold
    // does send some of them over NR).
    let (s, _) = run(&download(r#"reverse_policy = { model = "threshold", primary = "lte", threshold = "50 kB" }"#), Some(1));
    let f = flow(&s);
    assert_eq!(f["bytes_delivered"], 10_000_000u64, "{f}");
    let down = &f["pdcp"]["dc"];
    let up = &f["pdcp_reverse"]["dc"];
    let sent = |p: &Value, leg: usize| p["pdus_sent"][leg].as_u64().unwrap();
    assert!(sent(down, 0) > 1000 && sent(down, 1) > 3 * sent(down, 0) - 100, "the data: {down}");
    assert!(sent(up, 0) > 1000, "the ACKs went up through the split: {up}");
    assert_eq!(sent(up, 1), 0, "below the threshold the ACKs keep to the primary path: {up}");
    assert_eq!(up["delivered"], up["pdus_arrived"][0], "every ACK that arrived was delivered: {up}");
    assert_eq!(up["out_of_order"], 0, "one leg: nothing to reorder: {up}");
    // The time series carry the return direction's bearer, marked as such.
    let (_, out) = run(&download(r#"reverse_policy = { model = "threshold", primary = "lte", threshold = "50 kB" }"#), Some(1));
    let col = |name: &str| out.columns.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let (multiconn_scenario::Column::Str(kind), multiconn_scenario::Column::Str(dir)) = (col("kind"), col("direction")) else { panic!() };
    let reverse_bearer_rows = kind.iter().zip(&dir).filter(|(k, d)| k.as_str() == "bearer" && d.as_str() == "reverse").count();
    let forward_bearer_rows = kind.iter().zip(&dir).filter(|(k, d)| k.as_str() == "bearer" && d.is_empty()).count();
    assert!(reverse_bearer_rows > 0 && reverse_bearer_rows == forward_bearer_rows, "{reverse_bearer_rows} {forward_bearer_rows}");
}

#[test]
fn duplicated_acks_survive_a_lossy_uplink() {
    // 10 % loss on both legs' uplinks, which only ACKs cross.
    let lossy = |reverse: &str| download(reverse).replace("queue = \"200 packets\"", "queue = \"200 packets\"\nforward = { loss = \"10 %\" }");
    let (single, _) = run(&lossy(""), Some(2));
    let (dup, _) = run(&lossy(r#"reverse_policy = { model = "duplicate" }"#), Some(2));
    let up = &flow(&dup)["pdcp_reverse"]["dc"];
    let gaps = up["given_up"].as_f64().unwrap() / up["delivered"].as_f64().unwrap();
    // An ACK is lost only when both copies are: 1 %, against 10 % on one leg.
    assert!(gaps < 0.025, "duplicated ACKs lost: {gaps} ({up})");
    let ack_losses = |s: &Value| flow(s)["drops_ack"]["random_loss"].as_f64().unwrap();
    let acks_single = flow(&single)["drops_ack"]["random_loss"].as_f64().unwrap();
    assert!(acks_single > 100.0, "{}", flow(&single));
    eprintln!("ACKs lost on one 10 % leg: {acks_single}; duplicated: {} copies lost, {gaps:.4} of ACKs gone", ack_losses(&dup));
    assert!(flow(&single)["pdcp_reverse"].is_null());
}

#[test]
fn the_reverse_split_is_checked_at_its_field() {
    let e = load_str(&download(r#"reverse_policy = { model = "threshold", primary = "wifi" }"#)).expect_err("no such leg").to_string();
    assert!(e.contains("split.dc.reverse_policy.primary"), "{e}");
    let e = load_str(&download("uplink = \"lte\"\nreverse_policy = { model = \"duplicate\" }")).expect_err("both").to_string();
    assert!(e.contains("split.dc.reverse_policy") && e.contains("not both"), "{e}");
}

#[test]
fn a_reverse_split_is_deterministic() {
    let text = download(r#"reverse_policy = { model = "threshold", primary = "nr", threshold = "3 kB" }"#);
    let s = load_str(&text).unwrap();
    assert_eq!(run_checked(&s, Some(5)).summary_json, run_checked(&s, Some(5)).summary_json);
}
