//! quinn's own qlog of one end (quinn-proto's `qlog` feature: the `qlog` 0.15 crate's
//! `QlogStreamer`, JSON-SEQ records, RFC 7464), kept in memory and handed to the run as event
//! records. quinn stamps each event with the instant it was given, relative to the start time
//! set here, the end's virtual time 0, so the events carry virtual times. Its own header record
//! is left out: the run writes multiconn's header before the events, as for the model.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use quinn_proto::{QlogConfig, TransportConfig};

/// JSON-SEQ's record separator (RFC 7464 §2.2).
const RECORD_SEPARATOR: u8 = 0x1e;

/// The bytes quinn's streamer wrote, shared with it.
#[derive(Clone, Debug, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("never poisoned: writing cannot panic").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One end's qlog trace, read as it grows.
#[derive(Debug)]
pub(super) struct QlogBuffer {
    shared: Shared,
    /// quinn's header record was passed over.
    past_header: bool,
}

impl QlogBuffer {
    /// With `on`, has `transport`'s connections write their qlog into a new buffer, times
    /// relative to `base`.
    pub(super) fn attach(on: bool, transport: &mut TransportConfig, base: Instant, role: &str) -> Option<QlogBuffer> {
        if !on {
            return None;
        }
        let shared = Shared::default();
        let mut config = QlogConfig::default();
        config.writer(Box::new(shared.clone())).start_time(base).title(Some(format!("quinn-proto 0.11.19, {role}")));
        transport.qlog_stream(config.into_stream());
        Some(QlogBuffer { shared, past_header: false })
    }

    /// The complete event records written since the last call, without their separators.
    pub(super) fn drain(&mut self, out: &mut Vec<String>) {
        let mut bytes = self.shared.0.lock().expect("never poisoned: writing cannot panic");
        // Only whole records: the streamer ends each with a newline, which JSON text never
        // holds unescaped.
        let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else { return };
        let whole: Vec<u8> = bytes.drain(..=end).collect();
        drop(bytes);
        for record in whole.split(|&b| b == RECORD_SEPARATOR).filter(|r| !r.is_empty()) {
            if !self.past_header {
                self.past_header = true;
                continue;
            }
            out.push(String::from_utf8_lossy(record).trim_end().to_string());
        }
    }
}
