//! A test-only hop kind (feature `test-elements`, turned on for this process): a fixed-delay
//! `[[wire]]` is named in routes like a link, and a packet crossing it takes exactly its delay
//! on top of the links'.

use crate::common::{load_str, run};

/// server -(access: 8 Mbit/s, 5 ms)- a -(wire: 7 ms)- b -(radio: 8 Mbit/s, 3 ms)- client.
fn scenario(flow: &str) -> String {
    multiconn_scenario::resolve::allow_test_elements();
    format!(
        r#"
[run]
duration = "1 s"

[[link]]
name = "access"
between = ["server", "a"]
rate = "8 Mbit/s"
delay = "5 ms"
queue = "10 packets"

[[wire]]
name = "backhaul"
between = ["a", "b"]
delay = "7 ms"

[[link]]
name = "radio"
between = ["b", "client"]
rate = "8 Mbit/s"
delay = "3 ms"
queue = "10 packets"

[[flow]]
name = "one"
from = "server"
to = "client"
route = ["access", "backhaul", "radio"]
{flow}
"#
    )
}

#[test]
fn a_datagram_crosses_the_wire_in_exactly_its_delay() {
    // One 1000 B datagram (972 B of payload): 1 ms at each link's 8 Mbit/s, then 5 + 7 + 3 ms.
    let (summary, _) = run(&scenario("transport = \"udp\"\napp = \"cbr\"\nrate = \"1 Mbit/s\"\npacket_size = \"1000 B\"\nsize = \"972 B\""), Some(1));
    let flow = &summary["flows"][0];
    assert_eq!(flow["packets_delivered"], 1, "{flow}");
    let one_way_ms = flow["completion_s"].as_f64().expect("the flow completed") * 1e3;
    assert!((one_way_ms - (1.0 + 5.0 + 7.0 + 1.0 + 3.0)).abs() < 1e-9, "one-way delay {one_way_ms} ms");
    // The wire is reported beside the links, with no rate to measure it against.
    let wire: Vec<&serde_json::Value> = summary["links"].as_array().unwrap().iter().filter(|l| l["name"] == "backhaul").collect();
    assert_eq!(wire.len(), 2);
    assert_eq!((wire[0]["from"].as_str(), wire[0]["to"].as_str(), wire[0]["bytes_delivered"].as_u64()), (Some("a"), Some("b"), Some(1000)));
    assert_eq!(wire[0]["utilization"], serde_json::Value::Null);
}

#[test]
fn a_connection_round_trip_crosses_the_wire_both_ways() {
    // The same transfer with a 7 ms wire and with a 1 ms one: every RTT sample, and so the
    // smoothed RTT, is 2 × 6 ms longer.
    let srtt = |wire: &str| {
        let text = scenario("transport = \"quic\"\napp = \"bulk\"\nsize = \"10 kB\"").replace("delay = \"7 ms\"", &format!("delay = \"{wire}\""));
        run(&text, Some(1)).0["flows"][0]["final_srtt_ms"].as_f64().unwrap()
    };
    let (long, short) = (srtt("7 ms"), srtt("1 ms"));
    assert!((long - short - 12.0).abs() < 1e-6, "srtt {long} ms with the 7 ms wire, {short} ms with the 1 ms one");
}

#[test]
fn wires_take_names_of_their_own_and_do_not_pace_a_bulk_sender() {
    let text = scenario("transport = \"udp\"\napp = \"bulk\"").replace("name = \"backhaul\"", "name = \"radio\"");
    let e = load_str(&text).map(drop).expect_err("refused").to_string();
    assert!(e.contains("wire.radio.name: a link or wire is already named \"radio\""), "{e}");
    let text = scenario("transport = \"udp\"\napp = \"bulk\"").replace("route = [\"access\", \"backhaul\", \"radio\"]", "route = [\"backhaul\", \"radio\"]").replace("from = \"server\"", "from = \"a\"");
    let e = load_str(&text).map(drop).expect_err("refused").to_string();
    assert!(e.contains("flow.one.route: a bulk udp flow is paced by its first link's queue, and \"backhaul\" has none"), "{e}");
}
