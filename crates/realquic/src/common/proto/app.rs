//! The applications on the library's streams, written once against the stream API quinn-proto
//! and noq-proto share (compiled into each adapter; `super::proto` is its crate). The
//! request/response workloads of `multiconn_app::workload`: request `k` is the client's
//! bidirectional stream `4k` (the library opens them in order), the response comes back on it
//! and its FIN ends it. The message workload (`multiconn_app::messages`): unidirectional
//! streams the sending application opens, writes, finishes or resets itself, packed by level
//! (the library's stream priority, higher first: level `l` is priority `-l`), and read at the
//! other end as in-order progress. Data is zeros; what counts is how many bytes, and when.

use std::collections::VecDeque;

use multiconn_app::streams::{AppError, StreamOptions, StreamProgress};
use multiconn_app::workload::{AppEvent, Application, Response, Streams};
use multiconn_core::Time;
use multiconn_transport::{Observation, Observations};
use super::proto::{Connection, Dir, ReadError, Side, StreamId, VarInt, WriteError};

/// What is written at a time: up to this many zero bytes per `write` call.
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// One stream's data still to be handed to the library, then its FIN once `fin` is set.
#[derive(Clone, Copy, Debug)]
struct PendingWrite {
    id: StreamId,
    /// Bytes left; `None`: without end.
    left: Option<u64>,
    /// The application ended the stream: a FIN follows its last byte.
    fin: bool,
}

/// The streams of one end: what it still has to write, and what it has read of each stream.
#[derive(Debug, Default)]
pub(super) struct AppStreams {
    pending: Vec<PendingWrite>,
    /// (stream, bytes read so far) of the streams being read, in the order they appeared.
    reading: Vec<(StreamId, u64)>,
    /// The message workload's streams this end opened (and has not finished or reset).
    opened: Vec<StreamId>,
    /// In-order progress of the peer's unidirectional streams since the last drain.
    progress: Vec<StreamProgress>,
}

/// An application's view of the connection while it runs one step.
pub(super) struct Glue<'a> {
    pub conn: &'a mut Connection,
    pub streams: &'a mut AppStreams,
    pub events: &'a mut VecDeque<AppEvent>,
}

impl Streams for Glue<'_> {
    fn send_request(&mut self, index: u32, bytes: Option<u64>) {
        let id = self.conn.streams().open(Dir::Bi).expect("the server allows as many streams as the workload keeps outstanding");
        debug_assert_eq!(id.index(), index as u64, "the library opens streams in order");
        self.streams.pending.push(PendingWrite { id, left: bytes, fin: true });
        self.streams.reading.push((id, 0));
    }

    fn send_response(&mut self, index: u32, response: Response) {
        let id = StreamId::new(Side::Client, Dir::Bi, index as u64);
        let left = match response {
            Response::Bytes(n) => n,
            // Ends the stream with an empty FIN, which the client reads as an empty response.
            Response::Nothing => Some(0),
        };
        self.streams.pending.push(PendingWrite { id, left, fin: true });
    }

    fn emit(&mut self, event: AppEvent) {
        self.events.push_back(event);
    }
}

impl AppStreams {
    /// Takes in the streams the peer opened since the last call (`dir`: the client's requests
    /// are bidirectional, the message workload's streams unidirectional).
    pub(super) fn accept(&mut self, conn: &mut Connection, dir: Dir) {
        while let Some(id) = conn.streams().accept(dir) {
            self.reading.push((id, 0));
        }
    }

    /// Reads what arrived in order on stream `id`: each read is delivered to the application
    /// ([`AppEvent::Delivered`]); a request (server) or response (client) that arrived whole
    /// goes to `app`.
    /// What reaches the application is noted for an invariant checker in `seen`.
    /// The message workload's streams (unidirectional) are reported as in-order progress at
    /// `now` instead ([`AppStreams::drain_progress`]).
    pub(super) fn read(&mut self, now: Time, id: StreamId, conn: &mut Connection, app: &mut Application, events: &mut VecDeque<AppEvent>, seen: &mut Observations) {
        let Some(slot) = self.reading.iter().position(|(s, _)| *s == id) else { return };
        let mut recv = conn.recv_stream(id);
        let mut chunks = match recv.read(true) {
            Ok(chunks) => chunks,
            Err(_) => return,
        };
        let mut got = 0u64;
        let mut fin = false;
        let mut reset = false;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    let len = chunk.bytes.len() as u64;
                    seen.note(Observation::Delivered { stream: u64::from(id), from: chunk.offset, to: chunk.offset + len });
                    got += len;
                }
                Ok(None) => {
                    fin = true;
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(_)) => {
                    reset = true;
                    break;
                }
            }
        }
        // Credit for the bytes read goes out with the next packets.
        let _ = chunks.finalize();
        if got > 0 {
            events.push_back(AppEvent::Delivered { bytes: got });
        }
        self.reading[slot].1 += got;
        if id.dir() == Dir::Uni {
            if got > 0 || reset || fin {
                self.progress.push(StreamProgress { stream: u64::from(id), delivered: self.reading[slot].1, at: now, reset });
            }
            if reset || fin {
                self.reading.remove(slot);
            }
            return;
        }
        if fin {
            let (id, total) = self.reading.remove(slot);
            let index = id.index() as u32;
            let request = conn.side() == Side::Server;
            let mut glue = Glue { conn, streams: self, events };
            if request {
                app.on_request(index, &mut glue);
            } else {
                app.on_response(index, total, &mut glue);
            }
        }
    }

    /// Reads every stream being read.
    pub(super) fn read_all(&mut self, now: Time, conn: &mut Connection, app: &mut Application, events: &mut VecDeque<AppEvent>, seen: &mut Observations) {
        let ids: Vec<StreamId> = self.reading.iter().map(|(id, _)| *id).collect();
        for id in ids {
            self.read(now, id, conn, app, events, seen);
        }
    }

    /// Hands the library what it takes of the pending data, in the order the streams were opened,
    /// and finishes each stream once its data is all written.
    pub(super) fn write(&mut self, conn: &mut Connection) {
        self.pending.retain_mut(|w| {
            loop {
                if w.left == Some(0) {
                    if !w.fin {
                        // A message stream the application may still write on.
                        return true;
                    }
                    // Finished, or stopped by the peer: either way nothing more goes on it.
                    let _ = conn.send_stream(w.id).finish();
                    return false;
                }
                let chunk = w.left.map_or(ZEROS.len(), |left| left.min(ZEROS.len() as u64) as usize);
                match conn.send_stream(w.id).write(&ZEROS[..chunk]) {
                    Ok(0) | Err(WriteError::Blocked) => return true,
                    Ok(n) => {
                        if let Some(left) = &mut w.left {
                            *left -= n as u64;
                        }
                    }
                    Err(WriteError::Stopped(_)) | Err(WriteError::ClosedStream) => return false,
                }
            }
        });
    }

    /// The message workload opens a unidirectional stream, packed at its level.
    pub(super) fn open(&mut self, conn: &mut Connection, options: StreamOptions) -> Result<u64, AppError> {
        let id = conn.streams().open(Dir::Uni).ok_or(AppError::Unsupported)?;
        conn.send_stream(id).set_priority(-i32::from(options.priority)).expect("a stream just opened");
        self.opened.push(id);
        self.pending.push(PendingWrite { id, left: Some(0), fin: false });
        Ok(u64::from(id))
    }

    fn own(&self, stream: u64) -> Result<StreamId, AppError> {
        self.opened.iter().copied().find(|id| u64::from(*id) == stream).ok_or(AppError::UnknownStream(stream))
    }

    /// `bytes` more on an open message stream, written as the library takes them.
    pub(super) fn append(&mut self, stream: u64, bytes: u64) -> Result<(), AppError> {
        let id = self.own(stream)?;
        let w = self.pending.iter_mut().find(|w| w.id == id).ok_or(AppError::Finished(stream))?;
        if w.fin {
            return Err(AppError::Finished(stream));
        }
        w.left = Some(w.left.unwrap_or(0) + bytes);
        Ok(())
    }

    /// Ends a message stream: a FIN after what is still to be written.
    pub(super) fn end(&mut self, stream: u64) -> Result<(), AppError> {
        let id = self.own(stream)?;
        if let Some(w) = self.pending.iter_mut().find(|w| w.id == id) {
            w.fin = true;
        }
        self.opened.retain(|s| *s != id);
        Ok(())
    }

    /// Abandons a message stream (RESET_STREAM): what was not acknowledged is never sent
    /// again; `false` when nothing was left to abandon.
    pub(super) fn abandon(&mut self, conn: &mut Connection, stream: u64) -> Result<bool, AppError> {
        let id = StreamId::from(VarInt::from_u64(stream).map_err(|_| AppError::UnknownStream(stream))?);
        if id.initiator() != conn.side() || id.dir() != Dir::Uni {
            return Err(AppError::UnknownStream(stream));
        }
        self.pending.retain(|w| w.id != id);
        self.opened.retain(|s| *s != id);
        Ok(conn.send_stream(id).reset(VarInt::from_u32(0)).is_ok())
    }

    /// Progress of the peer's message streams since the last call, oldest first.
    pub(super) fn drain_progress(&mut self, out: &mut Vec<StreamProgress>) {
        out.append(&mut self.progress);
    }
}
