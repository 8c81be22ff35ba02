//! ATSSS steering modes as multipath schedulers (`crates/multipath/src/atsss.rs`) in scenarios:
//! a Multipath QUIC and an MPTCP download over a 3GPP access (20 Mbit/s, 25 ms) and a
//! non-3GPP one (10 Mbit/s, 40 ms) — load balancing holds its fixed shares of the bytes on the
//! wire, active-standby uses the standby only while the active access is down, priority-based
//! sends the excess to the other access, redundant copies onto it; a mode over other than two
//! paths and bad parameters are refused naming the field.

use crate::common::{floats, ints, refusal, run, texts};
use serde_json::Value;

fn two_accesses(transport: &str, scheduler: &str, options: &str, down: &str) -> String {
    format!(
        r#"
[run]
duration = "20 s"
seed = 1
[[link]]
name = "nr"
between = ["server", "ue"]
rate = "20 Mbit/s"
delay = "25 ms"
queue = "100 packets"
{down}
[[link]]
name = "wifi"
between = ["server", "ue"]
rate = "10 Mbit/s"
delay = "40 ms"
queue = "100 packets"
[[flow]]
name = "dl"
from = "server"
to = "ue"
transport = "{transport}"
app = "bulk"
cc = "cubic"
paths = [["nr"], ["wifi"]]
[flow.multipath]
scheduler = "{scheduler}"
{options}
"#
    )
}

/// Bytes each link carried from server to ue.
fn forward_bytes(s: &Value) -> [f64; 2] {
    let of = |name: &str| {
        s["links"].as_array().unwrap().iter().find(|l| l["name"] == name && l["direction"] == "forward").unwrap()["bytes_delivered"].as_f64().unwrap()
    };
    [of("nr"), of("wifi")]
}

#[test]
fn load_balancing_holds_its_shares_of_the_bytes_whatever_the_paths_rates() {
    for transport in ["quic", "tcp"] {
        for share in [80u32, 50, 20] {
            let (s, _) = run(&two_accesses(transport, "atsss_load_balancing", &format!("options = {{ atsss = {{ share_percent = {share} }} }}"), ""), Some(1));
            let [a, b] = forward_bytes(&s);
            let got = 100.0 * a / (a + b);
            assert!((got - f64::from(share)).abs() < 2.0, "{transport} share {share} %: {got:.1} % of the bytes on the 3GPP access");
            // The split holds, so the slower share caps the rate: at 20 % on the 3GPP access the
            // 10 Mbit/s access carries 80 %, at most 12.5 Mbit/s in all.
            if share == 20 {
                let g = s["flows"][0]["goodput_mbps"].as_f64().unwrap();
                assert!(g < 12.6, "{transport}: {g} Mbit/s");
            }
        }
    }
}

#[test]
fn active_standby_uses_the_standby_only_while_the_active_access_is_down() {
    // Active = the non-3GPP access (path 1), down from 5 to 10 s; the path manager abandons it
    // 200 ms after it goes and opens it again 200 ms after it returns.
    let text = two_accesses("quic", "atsss_active_standby", "options = { atsss = { active = 1 } }\non_link_down = \"abandon_reopen\"\ndetect_delay = \"200 ms\"", "")
        .replace("delay = \"40 ms\"\nqueue = \"100 packets\"", "delay = \"40 ms\"\nqueue = \"100 packets\"\ndown = [[\"5 s\", \"10 s\"]]");
    let (s, out) = run(&text, Some(1));
    let (kind, name, dir, t, bytes) = (texts(&out, "kind"), texts(&out, "name"), texts(&out, "direction"), floats(&out, "time_s"), ints(&out, "bytes_delivered"));
    // The bytes link `link` carried towards the UE in the bins wholly inside [from, to).
    let on = |link: &str, from: f64, to: f64| -> i64 {
        (0..t.len()).filter(|&i| kind[i] == "link" && name[i] == link && dir[i] == "forward" && t[i] >= from && t[i] + 0.1 <= to + 1e-9).map(|i| bytes[i]).sum()
    };
    // Before the outage and a second after it the standby carries nothing; during it, all.
    assert_eq!(on("nr", 1.0, 5.0), 0);
    assert_eq!(on("nr", 11.5, 20.0), 0);
    assert!(on("nr", 5.5, 10.0) > 5_000_000, "the standby carried {} B during the outage", on("nr", 5.5, 10.0));
    assert!(on("wifi", 11.5, 20.0) > 8_000_000);
    assert!(s["flows"][0]["goodput_mbps"].as_f64().unwrap() > 9.0);
}

#[test]
fn priority_sends_the_excess_to_the_other_access_and_redundant_copies_onto_it() {
    let (s, _) = run(&two_accesses("quic", "atsss_priority", "", ""), Some(1));
    let [nr, wifi] = forward_bytes(&s);
    assert!(nr > 2.0 * wifi && wifi > 1e6, "priority: {nr} B on the 3GPP access, {wifi} B on the other");
    let (s, _) = run(&two_accesses("quic", "atsss_redundant", "", ""), Some(1));
    let [nr, wifi] = forward_bytes(&s);
    let delivered = s["flows"][0]["bytes_delivered"].as_f64().unwrap();
    // Every byte on the primary, copies of as much as the other access carries.
    assert!(nr > delivered && wifi > 0.3 * delivered, "redundant: {nr} B and {wifi} B for {delivered} B delivered");
}

#[test]
fn modes_over_other_than_two_paths_and_bad_parameters_are_refused() {
    let three = two_accesses("quic", "atsss_priority", "", "")
        .replace("[[flow]]", "[[link]]\nname = \"lte\"\nbetween = [\"server\", \"ue\"]\nrate = \"5 Mbit/s\"\ndelay = \"30 ms\"\nqueue = \"100 packets\"\n[[flow]]")
        .replace("paths = [[\"nr\"], [\"wifi\"]]", "paths = [[\"nr\"], [\"wifi\"], [\"lte\"]]");
    let e = refusal(&three);
    assert!(e.contains("flow.dl.multipath.scheduler") && e.contains("two paths"), "{e}");
    let e = refusal(&two_accesses("quic", "atsss_load_balancing", "options = { atsss = { share_percent = 120 } }", ""));
    assert!(e.contains("flow.dl.multipath.options.atsss") && e.contains("share_percent"), "{e}");
    let e = refusal(&two_accesses("quic", "atsss_priority", "options = { atsss = { active = 2 } }", ""));
    assert!(e.contains("atsss.active"), "{e}");
    let e = refusal(&two_accesses("tcp", "atsss_redundant", "", ""));
    assert!(e.contains("flow.dl.multipath.scheduler") && e.contains("quic"), "{e}");
}
