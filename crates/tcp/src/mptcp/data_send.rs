//! The connection-level sending side of MPTCP (RFC 8684 §3.3): the one data sequence space,
//! the send buffer, the peer's connection-level window and the reinjection queue.
//!
//! * The application writes into the data sequence space; the connection cuts it into chunks of
//!   at most one segment and the scheduler hands each chunk to a subflow ([`DataSender::peek`],
//!   then [`DataSender::commit`]).
//! * DATA_ACKs arriving on any subflow move `una` forward (§3.3.2); the window they carry is
//!   relative to the DATA_ACK (§3.3.4). Acknowledgements travel on several subflows and arrive
//!   out of order, so the right edge only moves forward. New data never goes beyond it.
//! * When a subflow fails, the data it still owes is queued for reinjection (§3.3.6): those
//!   ranges go out again, on another subflow, before any new data. Parts acknowledged at the
//!   data level meanwhile are skipped.
//! * The send buffer is the sum of the subflows' send buffers, as Linux sizes the MPTCP socket's
//!   (`mptcp_propagate_sndbuf`); the application may hold that many bytes unacknowledged.

use std::collections::VecDeque;

/// A piece of the data sequence space about to be handed to a subflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataChunk {
    /// Data sequence number of the first byte.
    pub dsn: u64,
    /// Length in bytes (at most one segment).
    pub len: u64,
    /// Resent because the subflow that carried it failed.
    pub reinjection: bool,
}

/// The connection-level sending side of MPTCP (see the module header).
#[derive(Clone, Debug)]
pub struct DataSender {
    una: u64,
    nxt: u64,
    end: u64,
    right_edge: u64,
    /// Data-level ranges `[start, end)` to send again, oldest first.
    reinject: VecDeque<(u64, u64)>,
    reinjected_bytes: u64,
    invalid_acks: u64,
}

impl DataSender {
    /// Nothing written yet; data sequence numbers start at 0.
    pub fn new() -> DataSender {
        DataSender {
            una: 0,
            nxt: 0,
            end: 0,
            right_edge: 0,
            reinject: VecDeque::new(),
            reinjected_bytes: 0,
            invalid_acks: 0,
        }
    }

    /// Lowest data sequence number not acknowledged by a DATA_ACK.
    pub fn una(&self) -> u64 {
        self.una
    }
    /// Next new data sequence number.
    pub fn nxt(&self) -> u64 {
        self.nxt
    }
    /// End of what the application has written.
    pub fn end(&self) -> u64 {
        self.end
    }
    /// Right edge of the peer's connection-level window: data sequence numbers at or above it may
    /// not be sent yet.
    pub fn right_edge(&self) -> u64 {
        self.right_edge
    }
    /// The connection-level send window left, counted from `una` (BLEST's `|MPTCP_SW|`).
    pub fn send_window(&self) -> u64 {
        self.right_edge.saturating_sub(self.una)
    }
    /// Bytes handed to reinjection so far.
    pub fn reinjected_bytes(&self) -> u64 {
        self.reinjected_bytes
    }
    /// DATA_ACKs that acknowledged data never sent (ignored).
    pub fn invalid_acks(&self) -> u64 {
        self.invalid_acks
    }
    /// Bytes waiting to go out: new data and reinjections.
    pub fn queued(&self) -> u64 {
        let re: u64 = self.reinject.iter().map(|&(a, b)| b.saturating_sub(a.max(self.una))).sum();
        (self.end - self.nxt) + re
    }
    /// Reinjections still waiting.
    pub fn reinjection_pending(&self) -> bool {
        self.reinject.iter().any(|&(_, b)| b > self.una)
    }

    /// The peer's SYN or SYN-ACK offered `window` bytes from the start of the data sequence
    /// space.
    pub fn set_initial_window(&mut self, window: u64) {
        self.right_edge = self.right_edge.max(self.una + window);
    }

    /// Bytes the application may add with a send buffer of `sndbuf` bytes.
    pub fn writable(&self, sndbuf: u64) -> u64 {
        sndbuf.saturating_sub(self.end - self.una)
    }
    /// The application adds `bytes` to the data sequence space.
    pub fn write(&mut self, bytes: u64) {
        self.end += bytes;
    }

    /// A DATA_ACK arrived. Returns true if it acknowledged new data.
    pub fn on_data_ack(&mut self, ack: u64, window: u64) -> bool {
        if ack > self.nxt {
            self.invalid_acks += 1;
            return false;
        }
        let advanced = ack > self.una;
        self.una = self.una.max(ack);
        self.right_edge = self.right_edge.max(ack.saturating_add(window));
        while self.reinject.front().is_some_and(|&(_, b)| b <= self.una) {
            self.reinject.pop_front();
        }
        advanced
    }

    /// Queues `[start, end)` to be sent again (parts already acknowledged are dropped).
    pub fn queue_reinjection(&mut self, start: u64, end: u64) {
        let start = start.max(self.una);
        let end = end.min(self.nxt);
        if start >= end {
            return;
        }
        if self.reinject.iter().any(|&(a, b)| a <= start && end <= b) {
            return;
        }
        self.reinjected_bytes += end - start;
        self.reinject.push_back((start, end));
    }

    /// Forgets the reinjection queue (the redundant scheduler sends everything everywhere).
    pub fn drop_reinjections(&mut self) {
        self.reinject.clear();
    }

    /// The next chunk of at most `max_len` bytes: a reinjection if one waits, else new data
    /// inside the peer's window. `None` when there is nothing or the window is closed.
    pub fn peek(&mut self, max_len: u64) -> Option<DataChunk> {
        while let Some(&(a, b)) = self.reinject.front() {
            let a = a.max(self.una);
            if a >= b {
                self.reinject.pop_front();
                continue;
            }
            return Some(DataChunk { dsn: a, len: (b - a).min(max_len), reinjection: true });
        }
        let len = (self.end - self.nxt).min(self.right_edge.saturating_sub(self.nxt)).min(max_len);
        (len > 0).then_some(DataChunk { dsn: self.nxt, len, reinjection: false })
    }

    /// `chunk` (from [`peek`](Self::peek)) was handed to a subflow.
    pub fn commit(&mut self, chunk: &DataChunk) {
        if chunk.reinjection {
            if let Some(front) = self.reinject.front_mut() {
                front.0 = chunk.dsn + chunk.len;
                if front.0 >= front.1 {
                    self.reinject.pop_front();
                }
            }
        } else {
            self.nxt = self.nxt.max(chunk.dsn + chunk.len);
        }
    }
}

impl Default for DataSender {
    fn default() -> DataSender {
        DataSender::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_data_stays_inside_the_peer_window() {
        let mut s = DataSender::new();
        s.set_initial_window(2500);
        s.write(10_000);
        let c = s.peek(1000).unwrap();
        assert_eq!(c, DataChunk { dsn: 0, len: 1000, reinjection: false });
        s.commit(&c);
        s.commit(&s.clone().peek(1000).unwrap());
        let c = s.peek(1000).unwrap();
        assert_eq!((c.dsn, c.len), (2000, 500), "cut at the right edge");
        s.commit(&c);
        assert_eq!(s.peek(1000), None, "window full");
        // A DATA_ACK for 1000 with a 4000-byte window moves the edge to 5000.
        assert!(s.on_data_ack(1000, 4000));
        assert_eq!((s.una(), s.right_edge(), s.send_window()), (1000, 5000, 4000));
        // An older DATA_ACK arriving late on a slow subflow does not pull the edge back.
        assert!(!s.on_data_ack(500, 1000));
        assert_eq!((s.una(), s.right_edge()), (1000, 5000));
        // Acknowledging data never sent is ignored.
        assert!(!s.on_data_ack(9000, 1000));
        assert_eq!(s.invalid_acks(), 1);
    }

    #[test]
    fn reinjections_go_first_and_skip_what_was_acknowledged() {
        let mut s = DataSender::new();
        s.set_initial_window(100_000);
        s.write(10_000);
        for _ in 0..6 {
            let c = s.peek(1000).unwrap();
            s.commit(&c);
        }
        // The failed subflow carried 1000..2000 and 3000..5000.
        s.queue_reinjection(1000, 2000);
        s.queue_reinjection(3000, 5000);
        s.queue_reinjection(3000, 4000);
        assert_eq!(s.reinjected_bytes(), 3000, "an already queued range is not queued twice");
        assert_eq!(s.queued(), 4000 + 3000);
        let c = s.peek(1000).unwrap();
        assert_eq!(c, DataChunk { dsn: 1000, len: 1000, reinjection: true });
        s.commit(&c);
        // Meanwhile the data level acknowledged up to 3500.
        s.on_data_ack(3500, 100_000);
        let c = s.peek(1000).unwrap();
        assert_eq!(c, DataChunk { dsn: 3500, len: 1000, reinjection: true });
        s.commit(&c);
        let c = s.peek(1000).unwrap();
        assert_eq!(c, DataChunk { dsn: 4500, len: 500, reinjection: true });
        s.commit(&c);
        assert!(!s.reinjection_pending());
        assert_eq!(s.peek(1000), Some(DataChunk { dsn: 6000, len: 1000, reinjection: false }));
        // Nothing beyond what was sent is ever reinjected.
        s.queue_reinjection(6000, 9000);
        assert!(!s.reinjection_pending());
    }

    #[test]
    fn the_send_buffer_bounds_unacknowledged_data() {
        let mut s = DataSender::new();
        s.write(30_000);
        assert_eq!(s.writable(32_768), 2_768);
        s.set_initial_window(30_000);
        while let Some(c) = s.peek(1000) {
            s.commit(&c);
        }
        s.on_data_ack(20_000, 30_000);
        assert_eq!(s.writable(32_768), 22_768);
    }
}
