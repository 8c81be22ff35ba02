//! QUIC datagrams (RFC 9221) in scenarios: app = "datagrams" and message sources with
//! `datagram = true`. Every datagram is delivered or declared lost, never both, never twice;
//! V2X messages over datagrams against the same messages on a stream; the same seed gives the
//! same summary; and what the model cannot do is refused at the field.

use crate::common;
use common::*;
use serde_json::Value;

/// A 10 Mbit/s path, 30 ms each way, losing 2 % of the packets in each direction; a
/// datagram source of 1000 B every 20 ms for 10 s (0.4 Mbit/s, well within what the loss
/// leaves the congestion controller).
const LOSSY: &str = r#"
[run]
duration = "14 s"
seed = 7

[[link]]
name = "path"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "30 ms"
queue = "200 packets"
loss = "2 %"

[[flow]]
name = "dg"
from = "server"
to = "client"
transport = "quic"
app = "datagrams"
datagrams = { size = "1000 B", interval = "20 ms", duration = "10 s", deadline = "100 ms" }
"#;

fn source<'a>(summary: &'a Value, flow: &str, source: &str) -> &'a Value {
    let flows = summary["flows"].as_array().expect("flows");
    &flows.iter().find(|f| f["name"] == flow).unwrap_or_else(|| panic!("no flow {flow}"))["messages"][source]
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The invariant of docs/invariants.md: every datagram sent is delivered or declared lost,
/// never both and never twice (on a link that does not reorder, no loss is declared
/// spuriously), and what the application received is what was delivered.
#[test]
fn every_datagram_is_delivered_or_lost_once() {
    let (summary, _) = run(LOSSY, None);
    let s = source(&summary, "dg", "datagrams");
    let d = &s["datagrams"];
    assert_eq!(n(&s["messages"]), 500, "{s}");
    assert_eq!(n(&d["sent"]), 500, "{d}");
    assert!(n(&d["lost"]) > 3, "a lossy path loses some: {d}");
    assert_eq!(n(&d["delivered"]) + n(&d["lost"]), n(&d["sent"]), "delivered + lost = sent: {d}");
    // The run ends once the last datagram is in: the acknowledgements of the last few may
    // still be on their way, but only what arrived is acknowledged.
    assert!(n(&d["acked"]) <= n(&d["delivered"]), "{d}");
    assert_eq!(n(&s["received"]), n(&d["delivered"]));
    // The datagrams' payload is the flow's delivered bytes (its goodput), as a stream's would be.
    let flow = summary["flows"].as_array().unwrap().iter().find(|f| f["name"] == "dg").unwrap();
    assert_eq!(n(&flow["bytes_delivered"]), 1000 * n(&d["delivered"]), "{flow}");
    assert_eq!((n(&d["refused_too_large"]), n(&d["dropped_send_buffer"])), (0, 0));
    // What was never received counts against the deadline, as a message never received does.
    let misses = n(&s["deadline_misses"]);
    assert!(misses >= n(&d["lost"]), "{s}");
    let reliability = s["reliability"].as_f64().unwrap();
    assert!((reliability - (500 - misses) as f64 / 500.0).abs() < 1e-9, "{s}");
    // A lost datagram is not repaired: the ones received took one trip, never a retransmission's.
    assert!(s["owd_median_ms"].as_f64().unwrap() < 35.0, "{s}");
}

/// A source five times faster than the link: the sender holds what its window cannot take in
/// `datagram_send_buffer` and drops the oldest; every message is delivered, lost or dropped.
#[test]
fn a_source_faster_than_the_link_is_dropped_at_the_sender() {
    let text = flow("app = \"datagrams\"\ndatagram_send_buffer = \"12 kB\"\ndatagrams = { size = \"1000 B\", rate = \"10 Mbit/s\", duration = \"5 s\" }\n")
        .replace("rate = \"10 Mbit/s\"\ndelay", "rate = \"2 Mbit/s\"\ndelay")
        .replace("loss = \"2 %\"\n", "");
    let (summary, _) = run(&text, None);
    let s = source(&summary, "dg", "datagrams");
    let d = &s["datagrams"];
    let written = n(&s["messages"]);
    assert_eq!(written, 6250, "{s}");
    assert!(n(&d["dropped_send_buffer"]) > written / 2, "{d}");
    assert_eq!(n(&d["delivered"]) + n(&d["lost"]) + n(&d["dropped_send_buffer"]), written, "{d}");
    // The link's 2 Mbit/s over the 5 s (and the drain after) is the most that gets through.
    assert!(n(&d["delivered"]) < 1500, "{d}");
    // What got through waited for at most the buffer's 12 datagrams at the sender, then the
    // link's queue (200 packets, 0.8 s at 2 Mbit/s); quinn's default 1 MiB buffer holds 4 s.
    let latest = |summary: &Value| source(summary, "dg", "datagrams")["owd_max_ms"].as_f64().unwrap();
    assert!(latest(&summary) < 1200.0, "{s}");
    let (deep, _) = run(&text.replace("datagram_send_buffer = \"12 kB\"\n", ""), None);
    assert!(latest(&deep) > 2000.0, "{}", source(&deep, "dg", "datagrams"));
}

#[test]
fn the_same_seed_gives_the_same_summary() {
    let (a, _) = run(LOSSY, Some(3));
    let (b, _) = run(LOSSY, Some(3));
    assert_eq!(a, b);
    let (c, _) = run(LOSSY, Some(4));
    assert_ne!(source(&a, "dg", "datagrams")["datagrams"], source(&c, "dg", "datagrams")["datagrams"], "another seed loses other packets");
}

/// Seed 004's V2X messages (1200 B every 100 ms, 100 ms deadline) beside 2 Mbit/s of
/// background data on one lossy path: on a stream a lost message is repaired a round trip or
/// more later (and holds back the messages behind it); as datagrams it is simply lost. Both
/// wait for the congestion window alike.
const V2X: &str = r#"
[run]
duration = "33 s"
seed = 11

[[link]]
name = "path"
between = ["vehicle", "server"]
rate = "20 Mbit/s"
delay = "50 ms"
queue = "200 packets"
loss = "5 %"

[[flow]]
name = "v2x"
from = "vehicle"
to = "server"
transport = "quic"
app = "messages"

[[flow.messages]]
name = "priority"
kind = "priority"
start = "1 s"
duration = "30 s"

[[flow.messages]]
name = "background"
kind = "background"
rate = "2 Mbit/s"
start = "1 s"
duration = "30 s"
"#;

#[test]
fn v2x_messages_over_datagrams_are_lost_rather_than_repaired_late() {
    let stream = run_with(V2X, &[], 11);
    let dgram = run_with(V2X, &[("flow.v2x.messages.priority.datagram", "true")], 11);
    let (s, d) = (source(&stream, "v2x", "priority"), source(&dgram, "v2x", "priority"));
    assert_eq!(n(&s["messages"]), 300);
    assert_eq!(n(&d["messages"]), 300);
    // On the stream every message arrives, some very late; as datagrams some never do, and
    // none waits for a repair: the latest is far earlier than the stream's latest.
    assert_eq!(n(&s["received"]), 300, "{s}");
    let c = &d["datagrams"];
    assert!(n(&c["lost"]) > 0, "{d}");
    assert_eq!(n(&c["delivered"]) + n(&c["lost"]), 300, "{d}");
    assert_eq!(n(&d["received"]), n(&c["delivered"]));
    let (late_s, late_d) = (s["owd_max_ms"].as_f64().unwrap(), d["owd_max_ms"].as_f64().unwrap());
    assert!(late_s > 100.0, "a repaired loss misses the deadline: {s}");
    assert!(late_d < 0.75 * late_s, "datagrams {late_d} ms, stream {late_s} ms");
    assert!(s.get("datagrams").is_none(), "a stream source has no datagram counts");
    // The background stream carries on beside the datagrams.
    assert!(n(&source(&dgram, "v2x", "background")["received"]) > 50);
}

fn flow(extra: &str) -> String {
    LOSSY.replace("app = \"datagrams\"\ndatagrams = { size = \"1000 B\", interval = \"20 ms\", duration = \"10 s\", deadline = \"100 ms\" }\n", extra)
}

#[test]
fn datagram_settings_are_refused_where_they_do_not_apply() {
    let cases: [(String, &[&str]); 9] = [
        (flow("app = \"datagrams\"\ndatagrams = { interval = \"10 ms\", count = 5 }\n").replace("transport = \"quic\"", "transport = \"tcp\""), &["flow.dg.app", "quic", "tcp"]),
        (flow("app = \"bulk\"\nsize = \"1 MB\"\nmax_datagram_frame_size = \"1200 B\"\n").replace("transport = \"quic\"", "transport = \"tcp\""), &["flow.dg.max_datagram_frame_size", "quic"]),
        (flow("app = \"cbr\"\nrate = \"1 Mbit/s\"\ndatagram_priority = \"round_robin\"\n").replace("transport = \"quic\"", "transport = \"udp\""), &["flow.dg.datagram_priority", "quic", "udp"]),
        (flow("app = \"datagrams\"\ndatagrams = { size = \"1500 B\", interval = \"10 ms\", count = 5 }\n"), &["flow.dg.datagrams.size", "1500 B", "at most 1442 B"]),
        (flow("app = \"datagrams\"\nmax_datagram_frame_size = \"600 B\"\ndatagrams = { size = \"1000 B\", interval = \"10 ms\", count = 5 }\n"), &["flow.dg.datagrams.size", "at most 597 B", "max_datagram_frame_size"]),
        (flow("app = \"datagrams\"\nmax_datagram_frame_size = \"0 B\"\ndatagrams = { interval = \"10 ms\", count = 5 }\n"), &["flow.dg.max_datagram_frame_size", "absence"]),
        (flow("app = \"datagrams\"\ndatagrams = { count = 5 }\n"), &["flow.dg.datagrams.rate", "interval"]),
        (flow("app = \"datagrams\"\n"), &["flow.dg.datagrams", "[flow.datagrams]"]),
        (flow("app = \"bulk\"\nsize = \"1 MB\"\ndatagram_send_buffer = \"10 kB\"\n"), &["flow.dg.datagram_send_buffer", "sends datagrams"]),
    ];
    for (text, wanted) in cases {
        let e = refusal(&text);
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(e.starts_with("test.toml"), "names the file: {e}");
        for w in wanted {
            assert!(e.contains(w), "{w:?} missing from: {e}");
        }
    }
    // A message source with datagram = true on a stream-only setting.
    let text = V2X.replace("kind = \"priority\"\n", "kind = \"priority\"\ndatagram = true\nlifetime = \"100 ms\"\n");
    let e = refusal(&text);
    assert!(e.contains("flow.v2x.messages[0].lifetime") && e.contains("datagram"), "{e}");
}

#[test]
fn a_real_stack_refuses_datagrams_at_the_field() {
    let text = flow("app = \"datagrams\"\nstack = \"quinn\"\ndatagrams = { interval = \"10 ms\", count = 5 }\n");
    let e = refusal(&text);
    assert!(e.contains("flow.dg.app") && e.contains("stack quinn does not carry the model's QUIC datagrams") && !e.contains('\n'), "{e}");
}
