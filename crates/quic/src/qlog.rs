//! qlog output (draft-ietf-quic-qlog-main-schema, draft-ietf-quic-qlog-quic-events and
//! -recovery-events), serialised as JSON-SEQ (RFC 7464) the way qvis reads it: a header record
//! ([`header_line`]) then one record per event, each preceded by the record separator 0x1E.
//!
//! Events carry `time` in milliseconds relative to the connection start, a `name` and `data`,
//! named as qlog 0.3 names them (quiche and qvis use these): `transport:packet_sent` /
//! `transport:packet_received` (header, raw length, frames),
//! `recovery:packet_lost`, `recovery:metrics_updated` (only the fields that changed) and
//! `recovery:congestion_state_updated`.

use multiconn_cc::RttEstimator;
use multiconn_core::{Dur, Time};
use multiconn_transport::Role;
use serde_json::{json, Value};

use crate::frame::Frame;
use crate::packet::{PacketType, QuicPacket};

/// The JSON-SEQ record separator written before every record.
pub const RECORD_SEPARATOR: char = '\u{1e}';

/// The first record of a JSON-SEQ qlog file (without the separator): format, version and the
/// trace's vantage point.
pub fn header_line(role: Role, title: &str) -> String {
    let vantage = match role {
        Role::Client => "client",
        Role::Server => "server",
    };
    json!({
        "qlog_version": "0.3",
        "qlog_format": "JSON-SEQ",
        "title": title,
        "trace": {
            "vantage_point": { "type": vantage, "name": format!("multiconn {vantage}") },
            "common_fields": { "time_format": "relative", "reference_time": 0, "protocol_type": ["QUIC"] }
        }
    })
    .to_string()
}

/// Writes a whole JSON-SEQ file: header and events, each record preceded by 0x1E and followed
/// by a newline.
pub fn write_json_seq(out: &mut impl std::io::Write, role: Role, title: &str, events: &[String]) -> std::io::Result<()> {
    writeln!(out, "{RECORD_SEPARATOR}{}", header_line(role, title))?;
    for e in events {
        writeln!(out, "{RECORD_SEPARATOR}{e}")?;
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Metrics {
    cwnd: u64,
    bytes_in_flight: u64,
    smoothed_rtt: Dur,
    min_rtt: Dur,
    latest_rtt: Dur,
    rtt_variance: Dur,
}

/// Collects qlog events of one endpoint.
#[derive(Clone, Debug)]
pub struct QlogSink {
    start: Time,
    events: Vec<String>,
    last: Option<Metrics>,
    state: Option<&'static str>,
}

fn ms(d: Dur) -> f64 {
    d.as_millis_f64()
}

fn frame_json(f: &Frame) -> Value {
    let name = f.qlog_name();
    match f {
        Frame::Padding(n) => json!({ "frame_type": name, "raw": { "length": n, "payload_length": n } }),
        Frame::Ping | Frame::HandshakeDone => json!({ "frame_type": name }),
        Frame::Ack(a) => {
            let ranges: Vec<[u64; 2]> = a.ranges().map_while(Result::ok).map(|(lo, hi)| [lo, hi]).collect();
            json!({ "frame_type": name, "ack_delay": ms(a.delay()), "acked_ranges": ranges })
        }
        Frame::Crypto { offset, len } => json!({ "frame_type": name, "offset": offset, "length": len }),
        Frame::Stream { id, offset, len, fin } => {
            json!({ "frame_type": name, "stream_id": id, "offset": offset, "length": len, "fin": fin })
        }
        Frame::ResetStream { id, final_size } => json!({ "frame_type": name, "stream_id": id, "error_code": 0, "final_size": final_size }),
        Frame::MaxData(v) => json!({ "frame_type": name, "maximum": v }),
        Frame::MaxStreamData { id, max } => json!({ "frame_type": name, "stream_id": id, "maximum": max }),
        Frame::PathAck { path, ack } => {
            let ranges: Vec<[u64; 2]> = ack.ranges().map_while(Result::ok).map(|(lo, hi)| [lo, hi]).collect();
            json!({ "frame_type": name, "path_id": path, "ack_delay": ms(ack.delay()), "acked_ranges": ranges })
        }
        Frame::PathChallenge | Frame::PathResponse => json!({ "frame_type": name }),
        Frame::PathAbandon { path } => json!({ "frame_type": name, "path_id": path }),
        Frame::PathStatus { path, seq, .. } => json!({ "frame_type": name, "path_id": path, "sequence_number": seq }),
        Frame::Datagram { len, .. } => json!({ "frame_type": name, "length": len }),
    }
}

impl QlogSink {
    /// No events yet; times count from `start`.
    pub fn new(start: Time) -> QlogSink {
        QlogSink { start, events: Vec::new(), last: None, state: None }
    }

    fn push(&mut self, now: Time, name: &str, data: Value) {
        let t = now.since(self.start).as_millis_f64();
        self.events.push(json!({ "time": t, "name": name, "data": data }).to_string());
    }

    fn packet(&mut self, now: Time, name: &str, p: &QuicPacket) {
        let frames: Vec<Value> = p.frames.iter().map(frame_json).collect();
        let data = json!({
            "header": { "packet_type": p.ptype.qlog_name(), "packet_number": p.pn },
            "raw": { "length": p.size },
            "frames": frames,
        });
        self.push(now, name, data);
    }

    /// Records `transport:packet_sent` for `p`.
    pub fn packet_sent(&mut self, now: Time, p: &QuicPacket) {
        self.packet(now, "transport:packet_sent", p);
    }

    /// Records `transport:packet_received` for `p`.
    pub fn packet_received(&mut self, now: Time, p: &QuicPacket) {
        self.packet(now, "transport:packet_received", p);
    }

    /// Records `recovery:packet_lost` for packet `pn` of type `ptype`.
    pub fn packet_lost(&mut self, now: Time, ptype: PacketType, pn: u64) {
        self.push(now, "recovery:packet_lost", json!({ "header": { "packet_type": ptype.qlog_name(), "packet_number": pn } }));
    }

    /// Emits `recovery:metrics_updated` with the fields that changed since the last one.
    pub fn metrics(&mut self, now: Time, rtt: &RttEstimator, cwnd: u64, bytes_in_flight: u64) {
        let m =
            Metrics { cwnd, bytes_in_flight, smoothed_rtt: rtt.smoothed(), min_rtt: rtt.min(), latest_rtt: rtt.latest(), rtt_variance: rtt.rttvar() };
        let old = self.last;
        if old == Some(m) {
            return;
        }
        let mut data = serde_json::Map::new();
        let changed = |f: fn(&Metrics) -> u64| old.map_or(true, |o| f(&o) != f(&m));
        if changed(|x| x.cwnd) {
            data.insert("congestion_window".into(), json!(m.cwnd));
        }
        if changed(|x| x.bytes_in_flight) {
            data.insert("bytes_in_flight".into(), json!(m.bytes_in_flight));
        }
        if rtt.has_sample() {
            if changed(|x| x.smoothed_rtt.0) {
                data.insert("smoothed_rtt".into(), json!(ms(m.smoothed_rtt)));
            }
            if changed(|x| x.min_rtt.0) {
                data.insert("min_rtt".into(), json!(ms(m.min_rtt)));
            }
            if changed(|x| x.latest_rtt.0) {
                data.insert("latest_rtt".into(), json!(ms(m.latest_rtt)));
            }
            if changed(|x| x.rtt_variance.0) {
                data.insert("rtt_variance".into(), json!(ms(m.rtt_variance)));
            }
        }
        self.last = Some(m);
        if !data.is_empty() {
            self.push(now, "recovery:metrics_updated", Value::Object(data));
        }
    }

    /// Emits `recovery:congestion_state_updated` if the state changed.
    pub fn congestion_state(&mut self, now: Time, state: &'static str) {
        if self.state == Some(state) {
            return;
        }
        let data = match self.state {
            Some(old) => json!({ "old": old, "new": state }),
            None => json!({ "new": state }),
        };
        self.state = Some(state);
        self.push(now, "recovery:congestion_state_updated", data);
    }

    /// Moves the collected events to `out`.
    pub fn drain(&mut self, out: &mut Vec<String>) {
        out.append(&mut self.events);
    }
}
