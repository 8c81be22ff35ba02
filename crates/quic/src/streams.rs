//! Streams (RFC 9000 §2–§3): send buffers with retransmission of lost ranges (§13.3) and the
//! application's reset (§3.1: nothing more is sent, lost data included), receive
//! reassembly delivering in order, per-stream flow control (§4) and the sender's stream
//! scheduler: strict priority between levels (lower number first), round-robin among the
//! streams of one level, one frame per turn.
//!
//! Data is not stored, only offsets: what was sent, acknowledged and must be sent again. The
//! same [`SendBuffer`] / [`RecvBuffer`] serve CRYPTO data (RFC 9000 §19.6), without FIN.

use std::collections::VecDeque;

use crate::flow_control::{FlowControlRule, RecvWindow, SendCredit};
use crate::range_set::RangeSet;

/// One chunk chosen for a STREAM or CRYPTO frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Stream offset of the first byte.
    pub offset: u64,
    /// Bytes in the chunk.
    pub len: u64,
    /// The FIN goes with it.
    pub fin: bool,
    /// The bytes were sent before (retransmission after loss or for a probe).
    pub retransmit: bool,
}

/// The sending half: offsets only.
#[derive(Clone, Debug, Default)]
pub struct SendBuffer {
    /// Bytes written by the application; `None`: the stream never ends.
    end: Option<u64>,
    /// The application closed the stream: a FIN follows the last byte.
    fin: bool,
    /// New data sent up to here.
    next: u64,
    retransmit: RangeSet,
    acked: RangeSet,
    fin_sent: bool,
    fin_acked: bool,
    fin_retransmit: bool,
    /// The application reset the stream (RFC 9000 §3.1 "Reset Sent"): nothing more of it is
    /// sent; `Some(true)` once the peer acknowledged the RESET_STREAM ("Reset Recvd").
    reset: Option<bool>,
}

impl SendBuffer {
    /// A buffer holding `len` bytes (`None`: unbounded), closed with FIN if `fin`.
    pub fn new(len: Option<u64>, fin: bool) -> SendBuffer {
        SendBuffer { end: len, fin: fin && len.is_some(), ..SendBuffer::default() }
    }

    /// The application writes `n` more bytes.
    pub fn write(&mut self, n: u64) {
        if let Some(e) = &mut self.end {
            *e += n;
        }
    }

    /// The application abandons the stream (RFC 9000 §3.1): data never sent stays unsent and
    /// lost data is not sent again. Returns the stream's final size, the bytes sent so far
    /// (the RESET_STREAM frame's Final Size, §4.5).
    pub fn reset(&mut self) -> u64 {
        self.reset = Some(false);
        self.end = Some(self.next);
        self.fin = false;
        self.fin_retransmit = false;
        self.retransmit = RangeSet::default();
        self.next
    }

    /// The peer acknowledged the RESET_STREAM.
    pub fn on_reset_acked(&mut self) {
        if self.reset.is_some() {
            self.reset = Some(true);
        }
    }

    /// The application reset the stream.
    pub fn is_reset(&self) -> bool {
        self.reset.is_some()
    }

    /// The application closes the stream after what it wrote.
    pub fn finish(&mut self) {
        if self.end.is_some() {
            self.fin = true;
        }
    }

    /// End of what the application wrote, in bytes; `None` for an endless stream.
    pub fn end(&self) -> Option<u64> {
        self.end
    }
    /// The application closed (or reset) the stream: nothing more can be written.
    pub fn is_finished(&self) -> bool {
        self.fin || self.reset.is_some()
    }
    /// New data sent up to here.
    pub fn sent_offset(&self) -> u64 {
        self.next
    }

    /// Lost data waits to be sent again.
    pub fn has_retransmit(&self) -> bool {
        !self.retransmit.is_empty() || (self.fin_retransmit && !self.fin_acked)
    }

    /// Unsent new data (or an unsent FIN) exists, ignoring flow control.
    pub fn has_new(&self) -> bool {
        match self.end {
            None => true,
            Some(e) => self.next < e || (self.fin && !self.fin_sent),
        }
    }

    /// Bytes of new data not yet sent (`u64::MAX` if unbounded).
    pub fn new_bytes(&self) -> u64 {
        self.end.map_or(u64::MAX, |e| e - self.next)
    }

    /// Everything was acknowledged (for a reset stream: the RESET_STREAM).
    pub fn is_done(&self) -> bool {
        if let Some(acked) = self.reset {
            return acked;
        }
        match self.end {
            None => false,
            Some(e) => self.acked.contains_range(0, e) && (!self.fin || self.fin_acked),
        }
    }

    /// The next chunk to send: lost data first, then new data within `credit` bytes of flow
    /// control. `fit(offset, want)` says how many bytes fit in the frame (`None`: not even an
    /// empty frame). Returns `None` when nothing can be sent.
    pub fn next_chunk(&mut self, credit: u64, fit: impl Fn(u64, u64) -> Option<u64>) -> Option<Chunk> {
        while let Some((s, e)) = self.retransmit.first() {
            let Some((s2, e2)) = self.acked.first_uncovered(s, e) else {
                self.retransmit.remove(s, e);
                continue;
            };
            let len = fit(s2, e2 - s2)?;
            if len == 0 {
                return None;
            }
            self.retransmit.remove(s2, s2 + len);
            let fin = self.fin && Some(s2 + len) == self.end;
            if fin {
                self.fin_retransmit = false;
            }
            return Some(Chunk { offset: s2, len, fin, retransmit: true });
        }
        if self.fin_retransmit && !self.fin_acked {
            let end = self.end.unwrap_or(self.next);
            fit(end, 0)?;
            self.fin_retransmit = false;
            return Some(Chunk { offset: end, len: 0, fin: true, retransmit: true });
        }
        let avail = self.new_bytes().min(credit);
        let fin_possible = self.fin && !self.fin_sent;
        if avail == 0 && !(fin_possible && self.end == Some(self.next)) {
            return None;
        }
        let len = fit(self.next, avail)?;
        let fin = fin_possible && Some(self.next + len) == self.end;
        if len == 0 && !fin {
            return None;
        }
        let chunk = Chunk { offset: self.next, len, fin, retransmit: false };
        self.next += len;
        if fin {
            self.fin_sent = true;
        }
        Some(chunk)
    }

    /// The first range within `[start, end)` not acknowledged yet.
    pub fn first_unacked(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        self.acked.first_uncovered(start, end)
    }

    /// A frame carrying `[offset, offset + len)` (and FIN) was acknowledged.
    pub fn on_acked(&mut self, offset: u64, len: u64, fin: bool) {
        if len > 0 {
            self.acked.insert(offset, offset + len);
            if !self.retransmit.is_empty() {
                self.retransmit.remove(offset, offset + len);
            }
        }
        if fin {
            self.fin_acked = true;
            self.fin_retransmit = false;
        }
    }

    /// A frame carrying `[offset, offset + len)` (and FIN) was lost: send it again unless
    /// acknowledged meanwhile.
    pub fn on_lost(&mut self, offset: u64, len: u64, fin: bool) {
        if self.reset.is_some() {
            return;
        }
        let end = offset.saturating_add(len).min(self.next);
        if end > offset {
            let mut s = offset;
            while let Some((a, b)) = self.acked.first_uncovered(s, end) {
                self.retransmit.insert(a, b);
                s = b;
            }
        }
        if fin && !self.fin_acked {
            self.fin_retransmit = true;
        }
    }
}

/// The receiving half: reassembly and in-order delivery.
#[derive(Clone, Debug, Default)]
pub struct RecvBuffer {
    received: RangeSet,
    delivered: u64,
    final_size: Option<u64>,
}

impl RecvBuffer {
    /// Nothing received.
    pub fn new() -> RecvBuffer {
        RecvBuffer::default()
    }

    /// Data `[offset, offset + len)` arrived; returns the bytes that became deliverable in
    /// order. A FIN fixes the final size; data beyond a known final size is ignored.
    pub fn on_data(&mut self, offset: u64, len: u64, fin: bool) -> u64 {
        let end = offset.saturating_add(len);
        if let Some(f) = self.final_size {
            if end > f {
                return 0;
            }
        }
        if fin {
            if self.final_size.is_some_and(|f| f != end) || self.received.last().is_some_and(|r| r.1 > end) {
                return 0;
            }
            self.final_size = Some(end);
        }
        if end > self.delivered {
            self.received.insert(offset.max(self.delivered), end);
        }
        match self.received.first() {
            Some((0, e)) if e > self.delivered => {
                let n = e - self.delivered;
                self.delivered = e;
                n
            }
            _ => 0,
        }
    }

    /// Highest offset received.
    pub fn highest(&self) -> u64 {
        self.received.last().map_or(0, |r| r.1)
    }
    /// Bytes delivered in order to the application.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    /// The stream's final size in bytes, once a FIN fixed it.
    pub fn final_size(&self) -> Option<u64> {
        self.final_size
    }
    /// All data up to the FIN was delivered.
    pub fn is_complete(&self) -> bool {
        self.final_size == Some(self.delivered)
    }
}

/// One bidirectional stream.
#[derive(Clone, Debug)]
pub struct Stream {
    /// Stream ID (RFC 9000 §2.1).
    pub id: u64,
    /// Scheduling priority: lower numbers are served first.
    pub priority: u8,
    /// A priority stream in the multipath sense (seed 004 §6.3): packed first, and with the
    /// congestion fix its data may exceed a path's window.
    pub urgent: bool,
    /// Multipath: the selective redundant scheduler sends its data on every usable path.
    pub redundant: bool,
    /// What is sent: offsets written, sent, acknowledged and to retransmit.
    pub send: SendBuffer,
    /// The peer's MAX_STREAM_DATA limit and how much of it is used.
    pub send_credit: SendCredit,
    /// Reassembly of what arrives.
    pub recv: RecvBuffer,
    /// The limit this end gives the peer.
    pub recv_window: RecvWindow,
    /// A MAX_STREAM_DATA frame with `recv_window.max` must be sent.
    pub max_stream_data_pending: bool,
    /// The application has seen the complete incoming data.
    pub recv_reported: bool,
    queued: bool,
}

impl Stream {
    /// Something could be sent now with `conn_credit` bytes of connection credit.
    pub fn can_send(&self, conn_credit: u64) -> bool {
        if self.send.has_retransmit() {
            return true;
        }
        if !self.send.has_new() {
            return false;
        }
        let credit = self.send_credit.available().min(conn_credit);
        credit > 0 && self.send.new_bytes() > 0 || (self.send.fin && !self.send.fin_sent && self.send.new_bytes() == 0)
    }
}

/// The streams of a connection, of all four types (RFC 9000 §2.1), and the send scheduler.
/// The workloads use client-initiated bidirectional streams (ids 0, 4, 8, ...: requests and
/// responses) and server-initiated unidirectional ones (ids 3, 7, 11, ...: messages).
#[derive(Clone, Debug)]
pub struct Streams {
    /// Index: the stream type (the id's two low bits), then `id >> 2`.
    streams: [Vec<Slot>; 4],
    /// (priority, round-robin queue of stream ids), ascending priority.
    levels: Vec<(u8, VecDeque<u64>)>,
    send_window: u64,
    recv_window: u64,
    update_fraction: f64,
    flow_rule: FlowControlRule,
    /// Streams with new data held back only by connection-level flow control.
    conn_blocked: Vec<u64>,
    live: usize,
}

#[derive(Clone, Debug)]
enum Slot {
    Unused,
    Open(Box<Stream>),
    Closed,
}

/// Client-initiated bidirectional stream ids have the two low bits 0 (RFC 9000 §2.1).
pub fn is_client_bidi(id: u64) -> bool {
    id & 0x3 == 0
}

/// Unidirectional stream ids have bit 1 set (RFC 9000 §2.1).
pub fn is_unidirectional(id: u64) -> bool {
    id & 0x2 != 0
}

/// Streams the server opens have bit 0 set (RFC 9000 §2.1).
pub fn is_server_initiated(id: u64) -> bool {
    id & 0x1 != 0
}

/// Ids beyond this index (`id >> 2`) are refused as implausible.
const MAX_STREAM_INDEX: u64 = 1 << 24;

impl Streams {
    /// `send_window`: the peer's initial_max_stream_data; `recv_window`: ours.
    pub fn new(send_window: u64, recv_window: u64, update_fraction: f64) -> Streams {
        Streams { streams: Default::default(), levels: Vec::new(), send_window, recv_window, update_fraction, flow_rule: FlowControlRule::Sliding, conn_blocked: Vec::new(), live: 0 }
    }

    /// The rule by which the streams opened from now on raise their receive limits.
    pub fn with_flow_rule(mut self, rule: FlowControlRule) -> Streams {
        self.flow_rule = rule;
        self
    }

    fn slot(&self, id: u64) -> Option<&Slot> {
        self.streams[(id & 0x3) as usize].get((id >> 2) as usize)
    }
    fn slot_mut(&mut self, id: u64) -> Option<&mut Slot> {
        self.streams[(id & 0x3) as usize].get_mut((id >> 2) as usize)
    }

    /// The open stream `id`.
    pub fn get(&self, id: u64) -> Option<&Stream> {
        match self.slot(id) {
            Some(Slot::Open(s)) => Some(s),
            _ => None,
        }
    }
    /// The open stream `id`, to change.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut Stream> {
        match self.slot_mut(id) {
            Some(Slot::Open(s)) => Some(s),
            _ => None,
        }
    }
    /// The stream was opened and closed since.
    pub fn is_closed(&self, id: u64) -> bool {
        matches!(self.slot(id), Some(Slot::Closed))
    }
    /// Number of open streams.
    pub fn live(&self) -> usize {
        self.live
    }

    /// The stream `id`, created (with an empty send side) if it does not exist; `None` for
    /// closed streams and implausibly large ids.
    pub fn get_or_open(&mut self, id: u64) -> Option<&mut Stream> {
        if (id >> 2) > MAX_STREAM_INDEX {
            return None;
        }
        let idx = (id >> 2) as usize;
        let slots = &mut self.streams[(id & 0x3) as usize];
        if slots.len() <= idx {
            slots.resize_with(idx + 1, || Slot::Unused);
        }
        if matches!(slots[idx], Slot::Unused) {
            self.live += 1;
            slots[idx] = Slot::Open(Box::new(Stream {
                id,
                priority: 0,
                urgent: false,
                redundant: false,
                send: SendBuffer::new(Some(0), false),
                send_credit: SendCredit::new(self.send_window),
                recv: RecvBuffer::new(),
                recv_window: RecvWindow::with_rule(self.recv_window, self.update_fraction, self.flow_rule),
                max_stream_data_pending: false,
                recv_reported: false,
                queued: false,
            }));
        }
        self.get_mut(id)
    }

    /// Forgets a stream whose both halves are finished.
    pub fn close(&mut self, id: u64) {
        if let Some(slot) = self.slot_mut(id) {
            if matches!(slot, Slot::Open(_)) {
                *slot = Slot::Closed;
                self.live -= 1;
            }
        }
        for (_, q) in &mut self.levels {
            q.retain(|s| *s != id);
        }
    }

    /// Puts the stream in its priority level's queue if it is not there.
    pub fn schedule(&mut self, id: u64) {
        let Some(s) = self.get_mut(id) else { return };
        if s.queued {
            return;
        }
        s.queued = true;
        let prio = s.priority;
        let pos = self.levels.partition_point(|(p, _)| *p < prio);
        if self.levels.get(pos).map_or(true, |(p, _)| *p != prio) {
            self.levels.insert(pos, (prio, VecDeque::new()));
        }
        self.levels[pos].1.push_back(id);
    }

    /// Takes the stream out of its level's queue (it has nothing more to send).
    pub fn unschedule(&mut self, id: u64) {
        let Some(s) = self.get_mut(id) else { return };
        if !std::mem::take(&mut s.queued) {
            return;
        }
        for (_, q) in &mut self.levels {
            q.retain(|x| *x != id);
        }
        self.conn_blocked.retain(|x| *x != id);
    }

    /// Changes a stream's priority (lower is served first).
    pub fn set_priority(&mut self, id: u64, priority: u8) {
        let Some(s) = self.get_mut(id) else { return };
        let was_queued = s.queued;
        s.priority = priority;
        if was_queued {
            for (_, q) in &mut self.levels {
                q.retain(|x| *x != id);
            }
            if let Some(s) = self.get_mut(id) {
                s.queued = false;
            }
            self.schedule(id);
        }
    }

    /// The stream whose turn it is.
    pub fn front(&self) -> Option<u64> {
        self.levels.iter().find_map(|(_, q)| q.front().copied())
    }

    /// Ends the front stream's turn: to the back of its level if `again`, else out of the
    /// queue.
    pub fn rotate(&mut self, again: bool) {
        let Some((_, q)) = self.levels.iter_mut().find(|(_, q)| !q.is_empty()) else { return };
        let Some(id) = q.pop_front() else { return };
        if again {
            q.push_back(id);
        } else if let Some(s) = self.get_mut(id) {
            s.queued = false;
        }
    }

    /// Remembers a stream waiting for connection credit.
    pub fn block_on_connection(&mut self, id: u64) {
        if !self.conn_blocked.contains(&id) {
            self.conn_blocked.push(id);
        }
    }

    /// Connection credit grew: reschedule the streams that waited for it.
    pub fn unblock_connection(&mut self) {
        let blocked = std::mem::take(&mut self.conn_blocked);
        for id in blocked {
            self.schedule(id);
        }
    }

    /// Ids of live streams: by type, then ascending.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.streams.iter().flatten().filter_map(|s| match s {
            Slot::Open(s) => Some(s.id),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit_all(_: u64, want: u64) -> Option<u64> {
        Some(want.min(100))
    }

    #[test]
    fn lost_ranges_are_resent_before_new_data_and_acked_ones_skipped() {
        let mut b = SendBuffer::new(Some(250), true);
        let c1 = b.next_chunk(1000, fit_all).unwrap();
        let c2 = b.next_chunk(1000, fit_all).unwrap();
        let c3 = b.next_chunk(1000, fit_all).unwrap();
        assert_eq!((c3.offset, c3.len, c3.fin), (200, 50, true));
        b.on_lost(c1.offset, c1.len, false);
        b.on_lost(c3.offset, c3.len, true);
        b.on_acked(0, 30, false);
        b.on_acked(c2.offset, c2.len, false);
        let r = b.next_chunk(1000, fit_all).unwrap();
        assert_eq!((r.offset, r.len, r.retransmit, r.fin), (30, 70, true, false));
        let r = b.next_chunk(1000, fit_all).unwrap();
        assert_eq!((r.offset, r.len, r.retransmit, r.fin), (200, 50, true, true));
        assert_eq!(b.next_chunk(1000, fit_all), None);
        b.on_acked(30, 70, false);
        b.on_acked(200, 50, true);
        assert!(b.is_done());
    }

    #[test]
    fn reassembly_delivers_in_order_once() {
        let mut r = RecvBuffer::new();
        assert_eq!(r.on_data(100, 100, true), 0);
        assert_eq!(r.on_data(0, 50, false), 50);
        assert_eq!(r.on_data(0, 50, false), 0);
        assert_eq!(r.on_data(50, 50, false), 150);
        assert!(r.is_complete());
        assert_eq!(r.on_data(150, 100, false), 0);
    }

    #[test]
    fn scheduler_serves_lower_priority_numbers_first_then_round_robin() {
        let mut s = Streams::new(1000, 1000, 0.5);
        for id in [0, 4, 8] {
            s.get_or_open(id);
        }
        s.set_priority(8, 0);
        s.set_priority(0, 1);
        s.set_priority(4, 1);
        for id in [0, 4, 8] {
            s.schedule(id);
        }
        assert_eq!(s.front(), Some(8));
        s.rotate(false);
        assert_eq!(s.front(), Some(0));
        s.rotate(true);
        assert_eq!(s.front(), Some(4));
        s.rotate(true);
        assert_eq!(s.front(), Some(0));
    }
}
