//! Prague over QUIC in whole scenarios: ECT(1) on the wire, the L4S queue of a DualPI2
//! bottleneck shared with a Classic flow (RFC 9332's coexistence: throughput within a factor
//! of 2, the L4S packets' p99 sojourn below 2 ms at 100 Mbit/s), and a single-queue classic
//! ECN AQM where Prague without its fallback starves CUBIC and with it shares.

use crate::common::run;
use serde_json::Value;

const DUALQ: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "100 Mbit/s"
delay = "10 ms"
queue = "10000 packets"
aqm = "dualpi2"

[[flow]]
name = "prague"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
cc = "prague"

[[flow]]
name = "cubic"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
cc = "cubic"
ecn = true
"#;

fn flow<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["flows"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("no flow {name}"))
}

fn goodput(s: &Value, name: &str) -> f64 {
    flow(s, name)["goodput_mbps"].as_f64().unwrap()
}

#[test]
fn an_l4s_and_a_classic_flow_share_a_dualpi2_bottleneck_with_the_l4s_queue_below_2_ms() {
    let (s, _) = run(DUALQ, Some(1));
    let (l, c) = (goodput(&s, "prague"), goodput(&s, "cubic"));
    let link = &s["links"][0];
    let by = &link["aqm"]["dualpi2"];
    eprintln!("Prague {l:.1} Mbit/s, CUBIC {c:.1} Mbit/s, utilisation {}, {by}", link["utilization"]);
    assert!(l / c < 2.0 && c / l < 2.0, "Prague {l} vs CUBIC {c} Mbit/s: not within a factor of 2");
    assert!(link["utilization"].as_f64().unwrap() > 0.95);
    // The Prague flow's packets are the L queue's: ECT(1) on the wire (the receiver's CE count is
    // the L queue's coupled and native marks), the Classic flow's the C queue's.
    let l_sojourn = &by["l4s_sojourn"];
    let sent = flow(&s, "prague")["ecn"]["server"]["ect_packets_sent"].as_u64().unwrap();
    // The receiver's ACK-carrying packets go ECT(1) too and take the reverse direction.
    assert!(l_sojourn["packets"].as_u64().unwrap() <= sent && l_sojourn["packets"].as_u64().unwrap() + 100 >= sent, "{l_sojourn} vs {sent} sent");
    let p99 = l_sojourn["p99_ms"].as_f64().unwrap();
    assert!(p99 < 2.0, "L4S p99 sojourn {p99} ms");
    let classic_mean = by["classic_sojourn"]["mean_ms"].as_f64().unwrap();
    assert!((8.0..20.0).contains(&classic_mean), "the Classic queue stays near the 15 ms target: {classic_mean} ms");
    let l_marks = by["coupled_marks"].as_u64().unwrap() + by["native_marks"].as_u64().unwrap();
    let seen = flow(&s, "prague")["ecn"]["client"]["ce_packets_received"].as_u64().unwrap();
    assert_eq!(seen, l_marks, "every L mark reached the Prague receiver");
    assert_eq!(flow(&s, "cubic")["ecn"]["client"]["ce_packets_received"], by["classic_marks"]);
    // Prague answers its marks without losses: nothing dropped, no retransmission.
    assert_eq!(flow(&s, "prague")["retransmissions"], 0);
    assert_eq!(flow(&s, "prague")["ecn"]["server"]["validation"], "capable");
}

#[test]
fn prague_runs_are_reproducible() {
    let (a, _) = run(DUALQ, Some(7));
    let (b, _) = run(DUALQ, Some(7));
    assert_eq!(a, b);
}

const SINGLE_QUEUE: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "40 Mbit/s"
delay = "10 ms"
queue = "2000 packets"
aqm = { model = "codel", ecn = true }

[[flow]]
name = "prague"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
cc = "prague"
PROFILE

[[flow]]
name = "cubic"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
cc = "cubic"
ecn = true
"#;

#[test]
fn against_a_classic_ecn_queue_prague_starves_cubic_unless_its_fallback_is_on() {
    let (off, _) = run(&SINGLE_QUEUE.replace("PROFILE", ""), Some(1));
    let (on, _) = run(&SINGLE_QUEUE.replace("PROFILE", "profile = \"data/rfc9002-prague-fallback.toml\""), Some(1));
    let ratio = |s: &Value| goodput(s, "prague") / goodput(s, "cubic");
    eprintln!("CoDel with ECN, 40 Mbit/s: Prague/CUBIC {:.2} without the fallback, {:.2} with it", ratio(&off), ratio(&on));
    // Classic CoDel marks at its own pace; a scalable response to those marks is far too weak.
    assert!(ratio(&off) > 4.0, "without the fallback: {}", ratio(&off));
    assert!(ratio(&on) < 2.0 && ratio(&on) > 0.5, "with the fallback: {}", ratio(&on));
}

/// Multipath QUIC runs Prague on each path (ECT(1), each path's ECN counts its own feedback);
/// a coupled controller would replace it, so the two together are refused in one line.
#[test]
fn multipath_quic_runs_prague_per_path_and_refuses_a_coupled_controller() {
    let two = include_str!("../../../../bench/scenarios/two_paths.toml");
    let sets = [("flow.dc.transport", "\"quic\""), ("flow.dc.profile", "\"rfc9002\""), ("flow.dc.cc", "\"prague\""), ("link.a.forward.aqm", "\"dualpi2\""), ("link.b.forward.aqm", "\"dualpi2\"")];
    let s = crate::common::run_with(two, &sets, 1);
    let flow = &s["flows"][0];
    assert_eq!(flow["bytes_delivered"], 20_000_000u64, "{flow}");
    assert_eq!(flow["retransmissions"], 0);
    for link in s["links"].as_array().unwrap().iter().filter(|l| l["direction"] == "forward") {
        // Every data packet took the L queue of its path's bottleneck.
        let by = &link["aqm"]["dualpi2"];
        assert!(by["l4s_sojourn"]["packets"].as_u64().unwrap() > 1000 && by["classic_sojourn"]["packets"] == 0, "{link}");
    }
    let mut coupled = sets.to_vec();
    coupled.push(("flow.dc.multipath.coupled", "\"lia\""));
    let e = crate::common::load_with(two, &coupled).unwrap_err().to_string();
    assert!(e.contains("flow.dc.multipath.coupled") && e.contains("prague"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}
