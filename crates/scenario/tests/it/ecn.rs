//! ECN end to end (RFC 3168 §6.1 for TCP, RFC 9000 §13.4 / RFC 9002 §7.1 for QUIC): a bulk
//! flow through a CoDel bottleneck that marks ECN-capable packets (`ecn = true`) is marked
//! instead of dropped, backs off as it would for the drops, and keeps its goodput.

use crate::common::run_with;
use serde_json::Value;

const SCENARIO: &str = r#"
[run]
duration = "20 s"
seed = 1

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "1000 packets"
aqm = { model = "codel", ecn = true }

[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
"#;

fn forward(summary: &Value) -> &Value {
    summary["links"].as_array().unwrap().iter().find(|l| l["direction"] == "forward").unwrap()
}

fn flow(summary: &Value) -> &Value {
    &summary["flows"][0]
}

#[test]
fn ecn_flows_through_codel_are_marked_not_dropped_and_back_off() {
    for transport in ["tcp", "quic"] {
        let plain = run_with(SCENARIO, &[("flow.bulk.transport", transport)], 1);
        let ecn = run_with(SCENARIO, &[("flow.bulk.transport", transport), ("flow.bulk.ecn", "true")], 1);
        let (lp, le) = (forward(&plain), forward(&ecn));
        // Without ECN CoDel drops; with it CoDel marks and drops nothing.
        assert!(lp["aqm"]["early_drops"].as_u64().unwrap() > 0, "{transport}: {lp}");
        assert_eq!(lp["aqm"]["ecn_marks"], 0);
        let marks = le["aqm"]["ecn_marks"].as_u64().unwrap();
        assert!(marks > 0, "{transport}: {le}");
        assert_eq!(le["aqm"]["early_drops"], 0, "{transport}");
        assert_eq!(le["drops"]["queue"], 0, "{transport}");
        let f = flow(&ecn);
        assert_eq!(f["retransmissions"], 0, "{transport}: no loss, nothing to retransmit");
        assert_eq!(f["lost_packets"], 0, "{transport}");
        // The receiver saw every mark the link made, and the sender reacted.
        let e = &f["ecn"];
        assert_eq!(e["client"]["ce_packets_received"].as_u64(), Some(marks), "{transport}: {e}");
        let responses = e["server"]["ecn_congestion_responses"].as_u64().unwrap();
        assert!(responses > 0 && responses <= marks, "{transport}: {e}");
        if transport == "tcp" {
            assert_eq!(e["server"]["handshake"], "negotiated");
            assert!(e["server"]["ece_acks_received"].as_u64().unwrap() >= responses);
        } else {
            assert_eq!(e["server"]["validation"], "capable");
            // The client's ACK frames report exactly the marks the link made.
            assert_eq!(e["server"]["ce_reported_by_peer"].as_u64(), Some(marks), "{transport}: {e}");
        }
        // The window backs off: the queue stays as short as CoDel keeps it with drops (5 ms at
        // 10 Mbit/s is about 4 packets of 1500 B), and the goodput stays close.
        let (qp, qe) = (lp["mean_queue_packets"].as_f64().unwrap(), le["mean_queue_packets"].as_f64().unwrap());
        assert!(qe < 6.0 && qe < 1.5 * qp, "{transport}: mean queue {qe} with ECN, {qp} without");
        let (gp, ge) = (flow(&plain)["goodput_mbps"].as_f64().unwrap(), f["goodput_mbps"].as_f64().unwrap());
        assert!(ge > 0.95 * gp, "{transport}: goodput {ge} with ECN, {gp} without");
        eprintln!("{transport}: goodput {gp:.3} → {ge:.3} Mbit/s, mean queue {qp:.2} → {qe:.2} packets, drops {} → 0, marks {marks}, responses {responses}", lp["aqm"]["early_drops"]);
    }
}

#[test]
fn ecn_is_off_by_default_and_the_summary_says_nothing_of_it() {
    for transport in ["tcp", "quic"] {
        let s = run_with(SCENARIO, &[("flow.bulk.transport", transport)], 1);
        assert!(flow(&s).get("ecn").is_none(), "{transport}");
    }
}

#[test]
fn mptcp_subflows_negotiate_ecn_each() {
    let text = r#"
[run]
duration = "10 s"

[[link]]
name = "a"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "1000 packets"
aqm = { model = "codel", ecn = true }

[[link]]
name = "b"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "30 ms"
queue = "1000 packets"
aqm = { model = "codel", ecn = true }

[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
paths = [["a"], ["b"]]
ecn = true
"#;
    let s = run_with(text, &[], 1);
    let f = flow(&s);
    let marks: u64 = s["links"].as_array().unwrap().iter().map(|l| l["aqm"]["ecn_marks"].as_u64().unwrap()).sum();
    let drops: u64 = s["links"].as_array().unwrap().iter().map(|l| l["aqm"]["early_drops"].as_u64().unwrap()).sum();
    assert!(marks > 0);
    assert_eq!(drops, 0);
    assert_eq!(f["ecn"]["server"]["handshake"], "negotiated");
    assert_eq!(f["ecn"]["client"]["ce_packets_received"].as_u64(), Some(marks));
    assert!(f["ecn"]["server"]["ecn_congestion_responses"].as_u64().unwrap() > 0);
}

#[test]
fn a_udp_flow_refuses_ecn_and_a_bad_value_is_named() {
    let udp = SCENARIO.replace("transport = \"tcp\"", "transport = \"udp\"\nrate = \"1 Mbit/s\"").replace("app = \"bulk\"", "app = \"cbr\"");
    let e = crate::common::load_with(&udp, &[("flow.bulk.ecn", "true")]).unwrap_err().to_string();
    assert!(e.contains("ecn") && e.contains("only tcp and quic"), "{e}");
    let e = crate::common::load_with(SCENARIO, &[("flow.bulk.ecn", "\"yes\"")]).unwrap_err().to_string();
    assert!(e.contains("ecn"), "{e}");
}
