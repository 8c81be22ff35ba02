//! A library's own qlog of one end (JSON-SEQ records, RFC 7464, as quinn's and noq's qlog
//! streamers write them), kept in memory and handed to the run as event records. The library
//! stamps each event with the instant it was given, relative to the start time the adapter
//! sets, the end's virtual time 0, so the events carry virtual times. Its own header record is
//! left out: the run writes multiconn's header before the events, as for the model.

use std::io;
use std::sync::{Arc, Mutex};

/// JSON-SEQ's record separator (RFC 7464 §2.2).
const RECORD_SEPARATOR: u8 = 0x1e;

/// The bytes the library's streamer wrote, shared with it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Shared(Arc<Mutex<Vec<u8>>>);

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
#[derive(Debug, Default)]
pub(crate) struct QlogBuffer {
    shared: Shared,
    /// The library's header record was passed over.
    past_header: bool,
}

impl QlogBuffer {
    /// The writer to hand the library's qlog configuration.
    pub(crate) fn writer(&self) -> Shared {
        self.shared.clone()
    }

    /// The complete event records written since the last call, without their separators.
    pub(crate) fn drain(&mut self, out: &mut Vec<String>) {
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
