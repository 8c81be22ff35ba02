//! noq's own qlog of one end (noq-proto's `qlog` feature: the `n0-qlog` crate's streamer,
//! JSON-SEQ), written into a [`QlogBuffer`] with times relative to the end's virtual time 0.
//! noq asks a factory for each connection's configuration; the factory here hands out the
//! buffer's writer, so no file is named (the file factory's name would read the wall clock,
//! noq-proto 1.4.0 `config/qlog.rs:151`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use noq_proto::{ConnectionId, QlogConfig, QlogFactory, Side, TransportConfig};

use crate::common::qlog::{QlogBuffer, Shared};

/// Each connection's qlog into one buffer, times relative to `base`.
struct IntoBuffer {
    writer: Shared,
    base: Instant,
    title: String,
}

impl QlogFactory for IntoBuffer {
    fn for_connection(&self, _side: Side, _remote: SocketAddr, _initial_dst_cid: ConnectionId, _now: Instant) -> Option<QlogConfig> {
        let mut config = QlogConfig::new(Box::new(self.writer.clone()));
        config.start_time(self.base).title(Some(self.title.clone()));
        Some(config)
    }
}

/// With `on`, has `transport`'s connections write their qlog into a new buffer, times
/// relative to `base`.
pub(super) fn attach(on: bool, transport: &mut TransportConfig, base: Instant, role: &str) -> Option<QlogBuffer> {
    if !on {
        return None;
    }
    let buffer = QlogBuffer::default();
    transport.qlog_factory(Arc::new(IntoBuffer { writer: buffer.writer(), base, title: format!("noq-proto 1.4.0, {role}") }));
    Some(buffer)
}
