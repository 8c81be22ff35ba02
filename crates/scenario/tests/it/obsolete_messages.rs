//! Obsolete priority data (seed 004's "could" requirement C1, §9.3): a message source with a
//! `lifetime` (or `superseded = true`) sends each message on a stream of its own and resets
//! that stream (RESET_STREAM) once the message is obsolete. Read from the sender's qlog and
//! the message table: nothing of an abandoned message is sent again, no message waits for an
//! earlier one, abandoned messages count as expired (not lost), and the bytes not sent again
//! show in the timely efficiency.

use crate::common;
use common::*;
use multiconn_scenario::{Column, RunOutput};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// One path, 50 ms one way, 5 % loss each way; 150 priority messages from the car. The sender
/// cannot detect a loss before an RTT (100 ms) has passed, so a 60 ms lifetime ends every lost
/// message before its retransmission.
const LOSSY_PATH: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "radio"
between = ["car", "server"]
rate = "10 Mbit/s"
delay = "50 ms"
queue = "100 packets"
loss = "5 %"

[[flow]]
name = "v2x"
from = "car"
to = "server"
transport = "quic"
app = "messages"
qlog = true

[[flow.messages]]
name = "priority"
kind = "priority"
count = 150
start = "300 ms"
"#;

fn run_lossy(sets: &[(&str, &str)], seed: u64) -> (Value, RunOutput) {
    let scenario = load_with(LOSSY_PATH, sets).unwrap_or_else(|e| panic!("{e}"));
    let out = run_checked(&scenario, Some(seed));
    (serde_json::from_str(&out.summary_json).unwrap(), out)
}

/// The sender's qlog (the car is the connection's server) as (stream id, offset, length)
/// of every STREAM frame and the stream ids of RESET_STREAM frames, in the order sent.
enum Sent {
    Stream(u64, u64, u64),
    Reset(u64),
}

fn sent_frames(out: &RunOutput) -> Vec<Sent> {
    let file = out.qlog.iter().find(|q| q.file_name == "v2x_server.sqlog").expect("the sender's qlog");
    let mut sent = Vec::new();
    for record in file.text.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
        let event: Value = serde_json::from_str(record.trim()).unwrap();
        if event["name"] != "transport:packet_sent" {
            continue;
        }
        for f in event["data"]["frames"].as_array().into_iter().flatten() {
            let id = || f["stream_id"].as_u64().unwrap();
            match f["frame_type"].as_str() {
                Some("stream") => sent.push(Sent::Stream(id(), f["offset"].as_u64().unwrap(), f["length"].as_u64().unwrap())),
                Some("reset_stream") => sent.push(Sent::Reset(id())),
                _ => {}
            }
        }
    }
    sent
}

/// STREAM frames that carry bytes sent before (retransmissions), and those sent after their
/// stream's RESET_STREAM.
fn resent_and_after_reset(sent: &[Sent]) -> (usize, usize) {
    let mut seen: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    let mut reset: HashSet<u64> = HashSet::new();
    let (mut resent, mut after_reset) = (0, 0);
    for s in sent {
        match *s {
            Sent::Stream(id, offset, len) => {
                let ranges = seen.entry(id).or_default();
                resent += usize::from(ranges.iter().any(|&(a, b)| offset < b && a < offset + len.max(1)));
                ranges.push((offset, offset + len.max(1)));
                after_reset += usize::from(reset.contains(&id));
            }
            Sent::Reset(id) => {
                reset.insert(id);
            }
        }
    }
    (resent, after_reset)
}

fn column<'a>(out: &'a RunOutput, name: &str) -> &'a Column {
    &out.messages.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("column {name}")).1
}

fn f64s<'a>(out: &'a RunOutput, name: &str) -> &'a [f64] {
    match column(out, name) {
        Column::F64(v) => v,
        other => panic!("not f64: {other:?}"),
    }
}

fn i64s<'a>(out: &'a RunOutput, name: &str) -> &'a [i64] {
    match column(out, name) {
        Column::I64(v) => v,
        other => panic!("not i64: {other:?}"),
    }
}

#[test]
fn expired_messages_are_never_sent_again_and_no_message_waits_for_another() {
    for seed in [1, 2, 3] {
        let (plain, plain_out) = run_lossy(&[], seed);
        let (c1, c1_out) = run_lossy(&[("flow.v2x.messages.priority.lifetime", "60 ms")], seed);
        let (plain_resent, _) = resent_and_after_reset(&sent_frames(&plain_out));
        let (c1_resent, after_reset) = resent_and_after_reset(&sent_frames(&c1_out));
        let p = &c1["flows"][0]["messages"]["priority"];
        let expired = p["expired"].as_u64().unwrap();
        eprintln!(
            "seed {seed}: retransmitted frames {plain_resent} -> {c1_resent}, expired {expired}, received {} -> {}, reliability {} -> {}, \
             timely efficiency {} -> {}, bandwidth efficiency {} -> {}",
            plain["flows"][0]["messages"]["priority"]["received"],
            p["received"],
            plain["flows"][0]["messages"]["priority"]["reliability"],
            p["reliability"],
            plain["flows"][0]["timely_efficiency"],
            c1["flows"][0]["timely_efficiency"],
            plain["flows"][0]["bandwidth_efficiency"],
            c1["flows"][0]["bandwidth_efficiency"],
        );
        // Without a lifetime the losses are repaired; with one nothing is sent twice.
        assert!(plain_resent > 0, "seed {seed}: the test needs retransmissions");
        assert_eq!((c1_resent, after_reset), (0, 0), "seed {seed}");
        assert!(expired > 0);
        assert_eq!(p["messages"].as_u64().unwrap(), p["received"].as_u64().unwrap() + expired, "every message arrived or expired");
        // One stream per message (3, 7, 11, ...), each reset at most once.
        let streams = i64s(&c1_out, "stream");
        assert!(streams.iter().enumerate().all(|(i, &s)| s == 3 + 4 * i as i64), "{:?}", &streams[..5]);
        // Expired rows: NaN received_s, expired_s = sent + 60 ms; received rows: NaN expired_s.
        let (sent, received, expired_s) = (f64s(&c1_out, "sent_s"), f64s(&c1_out, "received_s"), f64s(&c1_out, "expired_s"));
        for i in 0..sent.len() {
            if received[i].is_nan() {
                assert!((expired_s[i] - sent[i] - 0.060).abs() < 1e-9, "row {i}: {} {}", sent[i], expired_s[i]);
            } else {
                assert!(expired_s[i].is_nan());
                // No message waits for an earlier one, nor for a repair of its own (a repair
                // takes an RTT, 100 ms, at least): within its 60 ms lifetime.
                let owd = received[i] - sent[i];
                assert!((0.050..0.060).contains(&owd), "row {i}: OWD {owd}");
            }
        }
        // On one stream a message does wait for a repaired earlier one (or its own repair).
        let late = f64s(&plain_out, "received_s").iter().zip(f64s(&plain_out, "sent_s")).filter(|(r, s)| *r - *s > 0.1).count();
        assert!(late > 0, "seed {seed}");
        assert!(f64s(&plain_out, "expired_s").iter().all(|e| e.is_nan()));
        // The bytes not sent again: in time, per byte sent, C1 does better.
        let timely = |v: &Value| v["flows"][0]["timely_efficiency"].as_f64().unwrap();
        assert!(timely(&c1) > timely(&plain), "seed {seed}");
        assert!(c1["flows"][0]["bytes_sent"].as_u64() < plain["flows"][0]["bytes_sent"].as_u64());
    }
}

#[test]
fn a_superseded_message_is_abandoned_when_the_next_is_written() {
    // The next message is written 100 ms later, before the first one's ACK can return
    // (RTT 100 ms plus the ACK delay): every message but the last is reset. A message whose
    // data all arrived before its RESET_STREAM still counts as received.
    let (s, out) = run_lossy(&[("flow.v2x.messages.priority.superseded", "true")], 4);
    let p = &s["flows"][0]["messages"]["priority"];
    let (resent, after_reset) = resent_and_after_reset(&sent_frames(&out));
    let resets = sent_frames(&out).iter().filter(|f| matches!(f, Sent::Reset(_))).count();
    eprintln!("superseded: received {}, expired {}, RESET_STREAM frames {resets}, retransmitted {resent}", p["received"], p["expired"]);
    assert_eq!((resent, after_reset), (0, 0));
    assert!(p["expired"].as_u64().unwrap() > 0);
    assert_eq!(p["messages"].as_u64().unwrap(), p["received"].as_u64().unwrap() + p["expired"].as_u64().unwrap());
    assert!(resets >= 100, "most messages are still unacknowledged when the next is written: {resets}");
    let (sent, expired_s) = (f64s(&out, "sent_s"), f64s(&out, "expired_s"));
    for i in 0..sent.len() {
        if !expired_s[i].is_nan() {
            assert!((expired_s[i] - sent[i] - 0.1).abs() < 1e-9, "abandoned when the next was written");
        }
    }
}

#[test]
fn stream_per_message_alone_removes_head_of_line_blocking_but_still_repairs() {
    let (s, out) = run_lossy(&[("flow.v2x.messages.priority.stream_per_message", "true")], 1);
    let p = &s["flows"][0]["messages"]["priority"];
    let (resent, _) = resent_and_after_reset(&sent_frames(&out));
    assert!(resent > 0, "lost messages are repaired");
    assert_eq!((p["expired"].as_u64(), p["received"].as_u64()), (Some(0), Some(150)));
}

#[test]
fn obsolete_data_is_deterministic() {
    let sets = [("flow.v2x.messages.priority.lifetime", "60 ms")];
    let (_, a) = run_lossy(&sets, 7);
    let (_, b) = run_lossy(&sets, 7);
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(format!("{:?}", a.messages), format!("{:?}", b.messages));
}

#[test]
fn bad_expiry_settings_are_refused_in_one_line() {
    for (sets, want) in [
        (vec![("flow.v2x.messages.priority.lifetime", "0 s")], "flow.v2x.messages[0].lifetime"),
        (
            vec![("flow.v2x.messages.priority.lifetime", "100 ms"), ("flow.v2x.messages.priority.stream_per_message", "false")],
            "flow.v2x.messages[0].stream_per_message",
        ),
        (vec![("flow.v2x.messages.priority.superseded", "maybe")], "superseded"),
    ] {
        let e = load_with(LOSSY_PATH, &sets).expect_err("refused").to_string();
        assert!(!e.contains('\n') && e.contains(want), "{e}");
    }
}
