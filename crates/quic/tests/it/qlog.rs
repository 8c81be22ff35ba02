use crate::support;

use std::collections::BTreeSet;

use multiconn_core::{Rate, Time};
use multiconn_quic::qlog::{header_line, write_json_seq, RECORD_SEPARATOR};
use multiconn_transport::{Endpoint, Role};
use serde_json::Value;
use support::*;

#[test]
fn qlog_events_parse_and_carry_the_required_fields() {
    let start = Time::from_secs_f64(3.0);
    let mut p = params(download(300_000), start);
    p.qlog = true;
    let mut h = single_path(&p, ms(10), Some(Rate::from_mbps(20.0)));
    h.script(0, Route::ToClient, lose_when(|i, _| i == 30 || i == 31));
    h.run_until_finished(Time::from_secs_f64(10.0)).expect("finished");
    let mut server = Vec::new();
    h.server.drain_qlog(&mut server);
    let mut client = Vec::new();
    h.client.drain_qlog(&mut client);
    let mut again = Vec::new();
    h.server.drain_qlog(&mut again);
    assert!(again.is_empty(), "drain moves events out");

    let parsed: Vec<Value> = server.iter().map(|s| serde_json::from_str(s).expect("valid JSON")).collect();
    let names: BTreeSet<&str> = parsed.iter().map(|e| e["name"].as_str().unwrap()).collect();
    for n in ["transport:packet_sent", "transport:packet_received", "recovery:packet_lost", "recovery:metrics_updated", "recovery:congestion_state_updated"] {
        assert!(names.contains(n), "{n} missing from {names:?}");
    }
    let mut last = 0.0;
    for e in &parsed {
        let t = e["time"].as_f64().unwrap();
        assert!(t >= last && t >= 0.0, "times relative to the start and ordered");
        last = t;
        let d = &e["data"];
        match e["name"].as_str().unwrap() {
            "transport:packet_sent" | "transport:packet_received" => {
                assert!(d["header"]["packet_type"].is_string());
                assert!(d["header"]["packet_number"].is_u64());
                assert!(d["raw"]["length"].as_u64().unwrap() > 16);
                assert!(d["frames"].as_array().is_some_and(|f| !f.is_empty()));
                for f in d["frames"].as_array().unwrap() {
                    assert!(f["frame_type"].is_string());
                }
            }
            "recovery:packet_lost" => assert!(d["header"]["packet_number"].is_u64()),
            "recovery:metrics_updated" => assert!(d.as_object().is_some_and(|o| !o.is_empty())),
            "recovery:congestion_state_updated" => assert!(d["new"].is_string()),
            other => panic!("unexpected event {other}"),
        }
    }
    // The first server event is the reception of the client's Initial, one delay after start.
    assert_eq!(parsed[0]["name"], "transport:packet_received");
    assert_eq!(parsed[0]["time"].as_f64().unwrap(), 10.0 + 1228.0 * 8.0 / 20e6 * 1000.0);
    let sent_types: BTreeSet<&str> =
        parsed.iter().filter(|e| e["name"] == "transport:packet_sent").map(|e| e["data"]["header"]["packet_type"].as_str().unwrap()).collect();
    assert_eq!(sent_types, ["1RTT", "handshake", "initial"].into_iter().collect());
    // Some metrics event reports an RTT and a window.
    assert!(parsed.iter().any(|e| e["data"]["smoothed_rtt"].is_f64()));
    assert!(parsed.iter().any(|e| e["data"]["congestion_window"].is_u64()));
    let client_first: Value = client.iter().map(|s| serde_json::from_str::<Value>(s).unwrap()).find(|e| e["name"] == "transport:packet_sent").unwrap();
    assert_eq!(client_first["time"].as_f64(), Some(0.0), "the client's Initial leaves at the start");
    assert_eq!(client_first["data"]["raw"]["length"], 1200);

    let header: Value = serde_json::from_str(&header_line(Role::Client, "test")).unwrap();
    assert_eq!(header["qlog_format"], "JSON-SEQ");
    assert_eq!(header["qlog_version"], "0.3");
    assert_eq!(header["trace"]["vantage_point"]["type"], "client");

    let mut file = Vec::new();
    write_json_seq(&mut file, Role::Server, "t", &server).unwrap();
    let text = String::from_utf8(file).unwrap();
    let records: Vec<&str> = text.split(RECORD_SEPARATOR).filter(|r| !r.is_empty()).collect();
    assert_eq!(records.len(), server.len() + 1);
    assert!(records.iter().all(|r| r.ends_with('\n') && serde_json::from_str::<Value>(r.trim()).is_ok()));
}

#[test]
fn qlog_is_empty_when_disabled() {
    let p = params(download(10_000), Time::ZERO);
    let mut h = single_path(&p, ms(10), None);
    h.run_until_finished(Time::from_secs_f64(10.0)).expect("finished");
    let mut out = Vec::new();
    h.server.drain_qlog(&mut out);
    h.client.drain_qlog(&mut out);
    assert!(out.is_empty());
}
