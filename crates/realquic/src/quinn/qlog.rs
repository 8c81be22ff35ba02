//! quinn's own qlog of one end (quinn-proto's `qlog` feature: the `qlog` 0.15 crate's
//! `QlogStreamer`), written into a [`QlogBuffer`] with times relative to the end's virtual
//! time 0.

use std::time::Instant;

use quinn_proto::{QlogConfig, TransportConfig};

use crate::common::qlog::QlogBuffer;

/// With `on`, has `transport`'s connections write their qlog into a new buffer, times
/// relative to `base`.
pub(super) fn attach(on: bool, transport: &mut TransportConfig, base: Instant, role: &str) -> Option<QlogBuffer> {
    if !on {
        return None;
    }
    let buffer = QlogBuffer::default();
    let mut config = QlogConfig::default();
    config.writer(Box::new(buffer.writer())).start_time(base).title(Some(format!("quinn-proto 0.11.19, {role}")));
    transport.qlog_stream(config.into_stream());
    Some(buffer)
}
