//! The applications of `multiconn_app::workload` on quinn-proto's streams: request `k` is
//! the client's bidirectional stream `4k` (quinn opens them in order), the response comes
//! back on it and its FIN ends it. Data is zeros; what counts is how many bytes, and when.

use std::collections::VecDeque;

use multiconn_app::workload::{AppEvent, Application, Response, Streams};
use multiconn_transport::{Observation, Observations};
use quinn_proto::{Connection, Dir, ReadError, Side, StreamId, WriteError};

/// What is written at a time: up to this many zero bytes per `write` call.
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// One stream's data still to be handed to quinn, then its FIN.
#[derive(Clone, Copy, Debug)]
struct PendingWrite {
    id: StreamId,
    /// Bytes left; `None`: without end.
    left: Option<u64>,
}

/// The streams of one end: what it still has to write, and what it has read of each stream.
#[derive(Debug, Default)]
pub(super) struct AppStreams {
    pending: Vec<PendingWrite>,
    /// (stream, bytes read so far) of the streams being read, in the order they appeared.
    reading: Vec<(StreamId, u64)>,
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
        debug_assert_eq!(id.index(), index as u64, "quinn opens streams in order");
        self.streams.pending.push(PendingWrite { id, left: bytes });
        self.streams.reading.push((id, 0));
    }

    fn send_response(&mut self, index: u32, response: Response) {
        let id = StreamId::new(Side::Client, Dir::Bi, index as u64);
        let left = match response {
            Response::Bytes(n) => n,
            // Ends the stream with an empty FIN, which the client reads as an empty response.
            Response::Nothing => Some(0),
        };
        self.streams.pending.push(PendingWrite { id, left });
    }

    fn emit(&mut self, event: AppEvent) {
        self.events.push_back(event);
    }
}

impl AppStreams {
    /// Server: takes in the streams the client opened since the last call.
    pub(super) fn accept(&mut self, conn: &mut Connection) {
        while let Some(id) = conn.streams().accept(Dir::Bi) {
            self.reading.push((id, 0));
        }
    }

    /// Reads what arrived in order on stream `id`: each read is delivered to the application
    /// ([`AppEvent::Delivered`]); a request (server) or response (client) that arrived whole
    /// goes to `app`.
    /// What reaches the application is noted for an invariant checker in `seen`.
    pub(super) fn read(&mut self, id: StreamId, conn: &mut Connection, app: &mut Application, events: &mut VecDeque<AppEvent>, seen: &mut Observations) {
        let Some(slot) = self.reading.iter().position(|(s, _)| *s == id) else { return };
        let mut recv = conn.recv_stream(id);
        let mut chunks = match recv.read(true) {
            Ok(chunks) => chunks,
            Err(_) => return,
        };
        let mut got = 0u64;
        let mut fin = false;
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
                Err(ReadError::Blocked) | Err(ReadError::Reset(_)) => break,
            }
        }
        // Credit for the bytes read goes out with the next packets.
        let _ = chunks.finalize();
        if got > 0 {
            events.push_back(AppEvent::Delivered { bytes: got });
        }
        self.reading[slot].1 += got;
        if fin {
            let (id, total) = self.reading.remove(slot);
            let index = id.index() as u32;
            let mut glue = Glue { conn, streams: self, events };
            if id.initiator() == Side::Client && conn_side_is_server(&glue) {
                app.on_request(index, &mut glue);
            } else {
                app.on_response(index, total, &mut glue);
            }
        }
    }

    /// Reads every stream being read.
    pub(super) fn read_all(&mut self, conn: &mut Connection, app: &mut Application, events: &mut VecDeque<AppEvent>, seen: &mut Observations) {
        let ids: Vec<StreamId> = self.reading.iter().map(|(id, _)| *id).collect();
        for id in ids {
            self.read(id, conn, app, events, seen);
        }
    }

    /// Hands quinn what it takes of the pending data, in the order the streams were opened,
    /// and finishes each stream once its data is all written.
    pub(super) fn write(&mut self, conn: &mut Connection) {
        self.pending.retain_mut(|w| {
            loop {
                if w.left == Some(0) {
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
}

/// Whether the glue's connection is the server's: a stream the client initiated is a request
/// there, and a response at the client.
fn conn_side_is_server(glue: &Glue<'_>) -> bool {
    glue.conn.side() == Side::Server
}
