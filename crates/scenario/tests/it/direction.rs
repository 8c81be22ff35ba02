//! Data in either direction of a connection (`direction = "up"`): the data always goes from
//! `from` to `to`; with `up` the sender is the connection's client (a vehicle that connects
//! and sends up), with `down` (the default) its server. Uploads (app = "bulk") and message
//! flows; the summary names the nodes; what does not fit is refused at the field.

use crate::common;
use common::*;
use multiconn_scenario::Column;
use serde_json::Value;

/// A vehicle and a server over one symmetric path, 30 ms one way.
const BULK_UP: &str = r#"
[run]
duration = "30 s"

[[link]]
name = "radio"
between = ["vehicle", "server"]
rate = "10 Mbit/s"
delay = "30 ms"
queue = "100 packets"

[[flow]]
name = "up"
from = "vehicle"
to = "server"
transport = "TRANSPORT"
app = "bulk"
size = "3 MB"
direction = "DIRECTION"
"#;

fn flow(summary: &Value) -> &Value {
    &summary["flows"][0]
}

fn secs(v: &Value, field: &str) -> f64 {
    v[field].as_f64().unwrap_or_else(|| panic!("{field} in {v}"))
}

fn error_of(text: &str) -> String {
    let e = load_str(text).expect_err("scenario should be rejected").to_string();
    assert!(!e.contains('\n'), "error must be one line: {e}");
    e
}

#[test]
fn an_upload_delivers_every_byte_to_the_server_in_the_time_a_download_takes() {
    for transport in ["tcp", "quic"] {
        let text = BULK_UP.replace("TRANSPORT", transport);
        let (up, _) = run(&text.replace("DIRECTION", "up"), Some(1));
        let (down, _) = run(&text.replace("DIRECTION", "down"), Some(1));
        let (u, d) = (flow(&up), flow(&down));
        assert_eq!(u["bytes_delivered"], 3_000_000u64, "{transport}: {u}");
        assert_eq!(d["bytes_delivered"], 3_000_000u64, "{transport}: {d}");
        // The data took the vehicle -> server direction both times: only the roles moved.
        assert_eq!(u["sender"], "vehicle");
        assert_eq!(u["receiver"], "server");
        assert_eq!(u["endpoints"]["client"], "vehicle", "{transport}: the vehicle connects");
        assert_eq!(u["endpoints"]["server"], "server");
        assert_eq!(d["endpoints"]["client"], "server", "{transport}: the download's client is `to`");
        // The same transfer over the same symmetric path: the same time, give or take the
        // handshake (the upload's sender is the client, which can send after one round trip;
        // a download's server sends its response after the client's request).
        let (tu, td) = (secs(u, "completion_s"), secs(d, "completion_s"));
        // 3 MB at 10 Mbit/s: 2.4 s of serialization at least.
        assert!(tu > 2.4 && td > 2.4, "{transport}: up {tu} s, down {td} s");
        assert!((tu - td).abs() < 0.15, "{transport}: up {tu} s, down {td} s");
        // The client could send after the handshake in both: TCP + TLS 2 RTT, QUIC 1 RTT.
        let rtts = if transport == "tcp" { 2.0 } else { 1.0 };
        for s in [u, d] {
            let h = secs(s, "handshake_s");
            assert!((h - rtts * 0.06).abs() < 0.01, "{transport}: handshake {h} s");
        }
        // What the sender put on the wire is counted for the vehicle, and the time series
        // show the upload's sender (its window and RTT).
        assert!(u["bytes_sent"].as_u64().unwrap() > 3_000_000, "{transport}: {u}");
        assert!(u["final_srtt_ms"].as_f64().unwrap() >= 60.0, "{transport}: {u}");
        assert!(u["final_cwnd_bytes"].as_u64().unwrap() > 0, "{transport}: {u}");
    }
}

#[test]
fn an_endless_upload_keeps_the_uplink_busy_until_the_run_ends() {
    for transport in ["tcp", "quic"] {
        let text = BULK_UP.replace("TRANSPORT", transport).replace("size = \"3 MB\"\n", "").replace("DIRECTION", "up").replace("30 s", "10 s");
        let (s, _) = run(&text, Some(1));
        let f = flow(&s);
        assert!(f["completion_s"].is_null(), "{transport}: {f}");
        let g = secs(f, "goodput_mbps");
        assert!(g > 8.5 && g < 10.0, "{transport}: {g} Mbit/s on a 10 Mbit/s uplink");
        // The uplink direction (vehicle -> server) carried the data.
        let link = s["links"].as_array().unwrap().iter().find(|l| l["from"] == "vehicle").unwrap();
        assert!(link["utilization"].as_f64().unwrap() > 0.9, "{transport}: {link}");
    }
}

#[test]
fn multipath_uploads_use_both_paths() {
    let text = r#"
[run]
duration = "30 s"

[[link]]
name = "op_a"
between = ["vehicle", "server"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "100 packets"

[[link]]
name = "op_b"
between = ["vehicle", "server"]
rate = "10 Mbit/s"
delay = "40 ms"
queue = "100 packets"

[[flow]]
name = "up"
from = "vehicle"
to = "server"
transport = "TRANSPORT"
app = "bulk"
size = "10 MB"
direction = "up"
paths = [["op_a"], ["op_b"]]
"#;
    for transport in ["tcp", "quic"] {
        let (s, _) = run(&text.replace("TRANSPORT", transport), Some(1));
        let f = flow(&s);
        assert_eq!(f["bytes_delivered"], 10_000_000u64, "{transport}: {f}");
        // 10 MB at 20 Mbit/s: 4 s; one path alone would need 8 s.
        let t = secs(f, "completion_s");
        assert!(t > 4.0 && t < 7.0, "{transport}: {t} s");
        for p in 0..2 {
            let path = &f["paths"][p];
            // The client (the vehicle) sent the data on both paths, forward (vehicle -> server).
            let sent = path["client"]["bytes_sent"].as_u64().unwrap();
            assert!(sent > 2_000_000, "{transport} path {p}: {path}");
            assert!(path["network"]["forward"]["bytes_arrived"].as_u64().unwrap() > 2_000_000, "{transport} path {p}: {path}");
            assert!(path["server"]["bytes_sent"].as_u64().unwrap() < sent / 5, "{transport} path {p}: the server only acknowledges: {path}");
        }
    }
}

/// One 50 ms path; V2X priority messages from the vehicle.
const V2X: &str = r#"
[run]
duration = "10 s"

[[link]]
name = "radio"
between = ["vehicle", "server"]
rate = "10 Mbit/s"
delay = "50 ms"
queue = "100 packets"
LOSS

[[flow]]
name = "v2x"
from = "vehicle"
to = "server"
transport = "quic"
app = "messages"
DIRECTION

[[flow.messages]]
kind = "priority"
count = 50
start = "300 ms"

[[flow.messages]]
kind = "background"
rate = "2 Mbit/s"
duration = "5 s"
start = "300 ms"
"#;

fn column<'a>(out: &'a multiconn_scenario::RunOutput, name: &str) -> &'a Column {
    &out.messages.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("column {name}")).1
}

fn owds(out: &multiconn_scenario::RunOutput, stream_kind: &str) -> Vec<f64> {
    let (Column::F64(sent), Column::F64(received), Column::Str(kind)) = (column(out, "sent_s"), column(out, "received_s"), column(out, "kind")) else {
        panic!("message columns")
    };
    sent.iter().zip(received).zip(kind).filter(|(_, k)| k.as_str() == stream_kind).map(|((s, r), _)| r - s).collect()
}

#[test]
fn messages_sent_up_by_the_client_match_the_same_flow_declared_in_reverse_roles() {
    let up_text = V2X.replace("LOSS", "").replace("DIRECTION", r#"direction = "up""#);
    let down_text = V2X.replace("LOSS", "").replace("DIRECTION", "");
    let (up, up_out) = run(&up_text, Some(1));
    let (down, down_out) = run(&down_text, Some(1));
    let (u, d) = (flow(&up), flow(&down));
    // The summary names the vehicle as the sender and, going up, as the client.
    assert_eq!(u["sender"], "vehicle");
    assert_eq!(u["endpoints"]["client"], "vehicle");
    assert_eq!(d["endpoints"]["server"], "vehicle", "declared the old way, the vehicle had to be the server");
    // Client-initiated unidirectional streams going up (2, 6), server-initiated ones down
    // (3, 7): RFC 9000 §2.1.
    let Column::I64(streams) = column(&up_out, "stream") else { panic!() };
    assert!(streams.iter().all(|&s| s == 2 || s == 6), "{streams:?}");
    let Column::I64(streams) = column(&down_out, "stream") else { panic!() };
    assert!(streams.iter().all(|&s| s == 3 || s == 7), "{streams:?}");
    // Every message arrives with the same one-way delay either way: the path, not the
    // roles, sets it (the sources start at another instant, as the sender can first send
    // after one round trip as a client and half of one as a server).
    for kind in ["priority", "background"] {
        let (ou, od) = (owds(&up_out, kind), owds(&down_out, kind));
        assert_eq!(ou.len(), od.len(), "{kind}");
        assert!(!ou.is_empty());
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let worst = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
        assert!((mean(&ou) - mean(&od)).abs() < 0.001, "{kind}: mean OWD up {} down {}", mean(&ou), mean(&od));
        assert!((worst(&ou) - worst(&od)).abs() < 0.002, "{kind}: worst OWD up {} down {}", worst(&ou), worst(&od));
    }
    assert_eq!(u["messages"]["priority"]["reliability"], 1.0);
    assert_eq!(d["messages"]["priority"]["reliability"], 1.0);
    assert_eq!(u["messages"]["priority"]["received"], 50);
}

#[test]
fn under_loss_messages_sent_up_are_as_reliable_as_declared_in_reverse_roles() {
    // 1 % loss both ways, priority messages alone: the draws differ between the two
    // declarations (packets are sent at other instants), so the comparison is statistical,
    // over several seeds.
    let priority_only = V2X.split("\n[[flow.messages]]\nkind = \"background\"").next().unwrap().to_string();
    let lossy = priority_only.replace("LOSS", r#"loss = "1 %""#).replace("count = 50", "count = 150").replace("duration = \"10 s\"", "duration = \"20 s\"");
    let (mut up_rel, mut down_rel) = (Vec::new(), Vec::new());
    for seed in 1..=8 {
        for (text, into) in [(lossy.replace("DIRECTION", r#"direction = "up""#), &mut up_rel), (lossy.replace("DIRECTION", ""), &mut down_rel)] {
            let s = run_with(&text, &[], seed);
            let p = &flow(&s)["messages"]["priority"];
            assert_eq!(p["received"], 150, "seed {seed}: every message arrives in the end: {p}");
            into.push(p["reliability"].as_f64().unwrap());
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mu, md) = (mean(&up_rel), mean(&down_rel));
    eprintln!("reliability at 100 ms under 1 % loss: up {up_rel:?} (mean {mu:.4}), down {down_rel:?} (mean {md:.4})");
    // A lost message costs one loss-detection delay (well over the 100 ms deadline on a
    // 100 ms RTT) to itself and to the messages behind it on its stream.
    assert!(mu > 0.85 && md > 0.85 && mu < 1.0 && md < 1.0, "up {mu}, down {md}");
    assert!((mu - md).abs() < 0.01, "up {mu}, down {md}");
}

#[test]
fn direction_is_refused_where_it_cannot_apply() {
    let udp = BULK_UP.replace("TRANSPORT", "udp").replace("DIRECTION", "up");
    let e = error_of(&udp);
    assert!(e.contains("flow.up.direction") && e.contains("udp"), "{e}");
    let requests = BULK_UP
        .replace("TRANSPORT", "tcp")
        .replace("DIRECTION", "up")
        .replace(r#"app = "bulk""#, r#"app = "requests""#)
        .replace(r#"size = "3 MB""#, "requests = 3\nresponse_size = \"10 kB\"");
    let e = error_of(&requests);
    assert!(e.contains("flow.up.direction") && e.contains("requests"), "{e}");
    let e = error_of(&BULK_UP.replace("TRANSPORT", "quic").replace("DIRECTION", "up").replace("size = \"3 MB\"", "size = \"3 MB\"\nrequest_size = \"1 kB\""));
    assert!(e.contains("flow.up.request_size"), "{e}");
    let e = error_of(&BULK_UP.replace("TRANSPORT", "quic").replace("DIRECTION", "sideways"));
    assert!(e.contains("direction") && e.contains("up") && e.contains("down"), "{e}");
}

#[test]
fn an_upload_is_deterministic() {
    let text = BULK_UP.replace("TRANSPORT", "quic").replace("DIRECTION", "up");
    let a = load_str(&text).unwrap();
    let (x, y) = (run_checked(&a, Some(3)), run_checked(&a, Some(3)));
    assert_eq!(x.summary_json, y.summary_json);
}
