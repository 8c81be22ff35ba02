//! The message workload's outputs (app = "messages" or "datagrams"): each flow's summary by
//! source and the message table, one row per message. A datagram source's summary adds what
//! became of its datagrams (sent, acknowledged, declared lost, delivered, refused as too
//! large, dropped from the send buffer) and its deadline misses. The workload itself, its sources and what became of
//! every message, is `multiconn_app::messages`, over any transport that lets the application
//! open its own streams.

pub use multiconn_app::messages::{Expiry, KindDefaults, MessageKind, MessageLog, MessageSource, RunningSource, StreamChoices, UnknownMessageKind, BACKGROUND_SIZE, PRIORITY_DEADLINE, PRIORITY_INTERVAL, PRIORITY_SIZE};
use multiconn_app::messages::owd_quantile;
use multiconn_core::{Dur, Time};
use serde_json::{json, Value};

use crate::format::{named_columns, tidy, Column, ColumnType};

/// By source name: counts, OWD percentiles (ms; `null` when infinite: too many messages never
/// arrived) and, with a deadline, the reliability P(OWD < deadline).
pub fn summary(log: &MessageLog) -> Value {
    let sources: serde_json::Map<String, Value> = log
        .sources()
        .iter()
        .map(|s| {
            let mut owd: Vec<Option<Dur>> = s.messages().iter().map(|m| m.received().map(|r| r.since(m.sent()))).collect();
            owd.sort_by_key(|d| d.unwrap_or(Dur::MAX));
            let ms = |d: Option<Dur>| d.map(|d| tidy(d.as_millis_f64()));
            let received = s.received();
            let mut v = json!({
                "kind": s.spec().kind.name(),
                "stream": s.stream(),
                "messages": s.messages().len(),
                "received": received,
                "bytes_written": s.written(),
                "owd_median_ms": ms(owd_quantile(&owd, 0.5)),
                "owd_p99_ms": ms(owd_quantile(&owd, 0.99)),
                "owd_p999_ms": ms(owd_quantile(&owd, 0.999)),
                "owd_max_ms": ms(owd.iter().rev().find_map(|d| *d)),
            });
            v.as_object_mut().expect("an object").insert("received_mbps".into(), json!(s.received_mbps().map(tidy)));
            if s.per_message() {
                let expired = s.messages().iter().filter(|m| m.expired().is_some()).count();
                v.as_object_mut().expect("an object").insert("expired".into(), json!(expired));
            }
            if let Some(deadline) = s.spec().deadline {
                let within = owd.iter().filter(|d| d.is_some_and(|d| d < deadline)).count();
                let m = v.as_object_mut().expect("an object");
                m.insert("deadline_ms".into(), json!(tidy(deadline.as_millis_f64())));
                m.insert("reliability".into(), json!(if owd.is_empty() { None } else { Some(tidy(within as f64 / owd.len() as f64)) }));
                if s.spec().datagram {
                    m.insert("deadline_misses".into(), json!(owd.len() - within));
                }
            }
            if let Some(c) = s.datagram_counts() {
                let d = json!({
                    "sent": c.sent,
                    "acked": c.acked,
                    "lost": c.lost,
                    "delivered": c.delivered,
                    "refused_too_large": c.refused_too_large,
                    "dropped_send_buffer": c.dropped_send_buffer,
                });
                v.as_object_mut().expect("an object").insert("datagrams".into(), d);
            }
            (s.spec().name.clone(), v)
        })
        .collect();
    Value::Object(sources)
}

/// The message table: one row per message of every message flow.
#[derive(Debug, Clone, Default)]
pub struct MessageTable {
    flow: Vec<String>,
    source: Vec<String>,
    kind: Vec<String>,
    stream: Vec<i64>,
    msg_id: Vec<i64>,
    size: Vec<i64>,
    sent_s: Vec<f64>,
    received_s: Vec<f64>,
    path_owd_min_s: Vec<f64>,
    expired_s: Vec<f64>,
}

/// The message table's columns, in order. `path_owd_min_s` is seed 004's "ideal" reference
/// (its "Combined" curve): per message, the smallest one-way delay over the paths at its send
/// time, as the network alone would give it (see `report::ideal_owd`); NaN where a path
/// crosses a split, whose two legs have no single delay.
///
/// `stream` is -1 for a message sent as a datagram.
///
/// `expired_s`: when the sender abandoned a message that never arrived whole (its lifetime
/// ran out, or the next message superseded it): expired, not lost; NaN otherwise.
pub const TABLE_COLUMNS: [(&str, ColumnType); 10] = [
    ("flow", ColumnType::Str),
    ("source", ColumnType::Str),
    ("kind", ColumnType::Str),
    ("stream", ColumnType::I64),
    ("msg_id", ColumnType::I64),
    ("size", ColumnType::I64),
    ("sent_s", ColumnType::F64),
    ("received_s", ColumnType::F64),
    ("path_owd_min_s", ColumnType::F64),
    ("expired_s", ColumnType::F64),
];

impl MessageTable {
    /// Appends one row per message to the message table's columns (see [`TABLE_COLUMNS`]).
    /// `ideal(sent, size)`: the smallest one-way delay over the flow's paths for a message
    /// of `size` bytes sent at `sent`, if known.
    pub fn append_rows(&mut self, flow: &str, log: &MessageLog, ideal: &dyn Fn(Time, u64) -> Option<Dur>) {
        for s in log.sources() {
            for i in 0..s.messages().len() {
                self.push(flow, s, i, ideal);
            }
        }
    }

    /// Appends the rows of the messages received after the first `n` arrivals, in order of
    /// arrival (as [`MessageTable::append_rows`]).
    pub fn append_arrivals(&mut self, flow: &str, log: &MessageLog, n: usize, ideal: &dyn Fn(Time, u64) -> Option<Dur>) {
        for &(source, i) in log.arrivals().get(n..).unwrap_or_default() {
            self.push(flow, &log.sources()[source], i, ideal);
        }
    }

    /// Appends the row of message `i` of source `s`.
    fn push(&mut self, flow: &str, s: &RunningSource, i: usize, ideal: &dyn Fn(Time, u64) -> Option<Dur>) {
        let m = &s.messages()[i];
        let size = s.size_of(i);
        self.flow.push(flow.to_string());
        self.source.push(s.spec().name.clone());
        self.kind.push(s.spec().kind.name().to_string());
        self.stream.push(m.stream() as i64);
        self.msg_id.push(i as i64);
        self.size.push(size as i64);
        self.path_owd_min_s.push(ideal(m.sent(), size).map_or(f64::NAN, |d| d.as_secs_f64()));
        self.sent_s.push(m.sent().as_secs_f64());
        self.received_s.push(m.received().map_or(f64::NAN, Time::as_secs_f64));
        self.expired_s.push(m.expired().map_or(f64::NAN, Time::as_secs_f64));
    }

    /// The table as named columns, in the order of [`TABLE_COLUMNS`].
    pub fn into_columns(self) -> Vec<(String, Column)> {
        let columns = [
            Column::Str(self.flow),
            Column::Str(self.source),
            Column::Str(self.kind),
            Column::I64(self.stream),
            Column::I64(self.msg_id),
            Column::I64(self.size),
            Column::F64(self.sent_s),
            Column::F64(self.received_s),
            Column::F64(self.path_owd_min_s),
            Column::F64(self.expired_s),
        ];
        named_columns(&TABLE_COLUMNS, columns)
    }
}
