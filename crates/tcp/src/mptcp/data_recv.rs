//! The connection-level receiving side of MPTCP (RFC 8684 §3.3): one receive buffer shared by
//! all subflows, reassembly in the data sequence space, the DATA_ACK and the connection-level
//! receive window.
//!
//! * Data that is in order on its subflow arrives here with its data sequence numbers. Data
//!   above a hole in the data sequence space waits in the out-of-order queue, whichever subflow
//!   brought it: a slow subflow holds back what a fast one delivered (head-of-line blocking
//!   across subflows).
//! * The DATA_ACK is the next expected data sequence number (§3.3.2). The window is relative to
//!   it (§3.3.4) and counts everything held: out of order here, out of order on the subflows
//!   (the caller passes those bytes) and unread, so a small buffer stalls every subflow.
//! * The buffer is the TCP model's [`RcvBuf`] (tcp_rmem, Linux autotuning and
//!   `tcp_adv_win_scale`), fed with the largest receiver RTT estimate of the subflows, as Linux
//!   `mptcp_rcv_space_adjust` does. The window is quantised by the window scale, never retracts
//!   its right edge (RFC 9293 §3.8.6.2.2), and an ACK is due when reading at least doubles the
//!   window that was left (Linux `tcp_cleanup_rbuf`, used by `mptcp_cleanup_rbuf`).
//! * Bytes beyond the advertised right edge are counted and kept (a sender that follows the
//!   window never sends them).

use multiconn_core::{Dur, Time};

use super::option::DataAck;
use crate::autotune::RcvBuf;

/// What one range of arriving data did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataIn {
    /// Bytes that became readable in order.
    pub in_order: u64,
    /// Bytes already received (a reinjected or redundant copy).
    pub duplicate: u64,
}

/// The connection-level receiving side of MPTCP (see the module header).
#[derive(Clone, Debug)]
pub struct DataReceiver {
    rcv_nxt: u64,
    /// Sorted, disjoint, non-adjacent ranges above `rcv_nxt`.
    ooo: Vec<(u64, u64)>,
    ooo_bytes: u64,
    peak_ooo_bytes: u64,
    unread: u64,
    copied: u64,
    buf: RcvBuf,
    wscale: u8,
    right_edge: u64,
    duplicate_bytes: u64,
    beyond_window_bytes: u64,
}

impl DataReceiver {
    /// A receiver whose data sequence space starts at 0, with buffer `buf` and window scale
    /// `wscale`.
    pub fn new(buf: RcvBuf, wscale: u8) -> DataReceiver {
        DataReceiver {
            rcv_nxt: 0,
            ooo: Vec::new(),
            ooo_bytes: 0,
            peak_ooo_bytes: 0,
            unread: 0,
            copied: 0,
            buf,
            wscale: wscale.min(14),
            right_edge: 0,
            duplicate_bytes: 0,
            beyond_window_bytes: 0,
        }
    }

    /// The DATA_ACK: the next expected data sequence number.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    /// Bytes waiting above a hole in the data sequence space.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }
    /// The most bytes ever waiting above a hole.
    pub fn peak_ooo_bytes(&self) -> u64 {
        self.peak_ooo_bytes
    }
    /// Bytes the application has read.
    pub fn copied(&self) -> u64 {
        self.copied
    }
    /// Bytes that arrived again after being received (reinjected or redundant copies).
    pub fn duplicate_bytes(&self) -> u64 {
        self.duplicate_bytes
    }
    /// Bytes that arrived beyond the advertised right edge (counted and kept).
    pub fn beyond_window_bytes(&self) -> u64 {
        self.beyond_window_bytes
    }
    /// The connection-level receive buffer, shared by all subflows.
    pub fn buffer(&self) -> &RcvBuf {
        &self.buf
    }
    /// The right edge of the window last advertised.
    pub fn right_edge(&self) -> u64 {
        self.right_edge
    }

    /// The connection is established at `now`: autotuning measures from here.
    pub fn start(&mut self, now: Time) {
        self.buf.start(now, self.copied);
    }

    /// The subflows' receiver RTT estimate (their largest).
    pub fn set_receiver_rtt(&mut self, rtt: Dur) {
        self.buf.set_receiver_rtt(rtt);
    }

    /// Data bytes `[dsn, dsn + len)` arrived in order on their subflow.
    pub fn on_data(&mut self, dsn: u64, len: u64) -> DataIn {
        let mut out = DataIn::default();
        let end = dsn.saturating_add(len);
        if len == 0 {
            return out;
        }
        if end > self.right_edge.max(self.rcv_nxt) {
            self.beyond_window_bytes += end - self.right_edge.max(self.rcv_nxt).max(dsn);
        }
        if end <= self.rcv_nxt {
            out.duplicate = len;
            self.duplicate_bytes += len;
            return out;
        }
        let start = dsn.max(self.rcv_nxt);
        out.duplicate = start - dsn;
        if start > self.rcv_nxt {
            let before = self.ooo_bytes;
            self.insert_ooo(start, end);
            let new = self.ooo_bytes - before;
            out.duplicate += (end - start) - new;
            self.duplicate_bytes += out.duplicate;
            self.peak_ooo_bytes = self.peak_ooo_bytes.max(self.ooo_bytes);
            return out;
        }
        // In order: bytes of this range already queued above the hole are duplicates.
        for &(a, b) in self.ooo.iter().take_while(|r| r.0 < end) {
            out.duplicate += b.min(end).saturating_sub(a.max(start));
        }
        self.duplicate_bytes += out.duplicate;
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        while let Some(&(a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.ooo.remove(0);
            self.ooo_bytes -= b - a;
            self.rcv_nxt = self.rcv_nxt.max(b);
        }
        out.in_order = self.rcv_nxt - before;
        self.unread += out.in_order;
        out
    }

    fn insert_ooo(&mut self, a: u64, b: u64) {
        let i = self.ooo.partition_point(|r| r.1 < a);
        let j = self.ooo.partition_point(|r| r.0 <= b);
        let removed: u64 = self.ooo[i..j].iter().map(|r| r.1 - r.0).sum();
        let merged = if i < j { (a.min(self.ooo[i].0), b.max(self.ooo[j - 1].1)) } else { (a, b) };
        self.ooo.splice(i..j, std::iter::once(merged));
        self.ooo_bytes = self.ooo_bytes - removed + (merged.1 - merged.0);
    }

    /// The application reads up to `max` bytes at `now`; returns how many it got.
    pub fn read(&mut self, now: Time, max: u64) -> u64 {
        let n = self.unread.min(max);
        self.unread -= n;
        self.copied += n;
        if n > 0 {
            self.buf.on_consumed(now, self.copied);
        }
        n
    }

    fn max_window(&self) -> u64 {
        65535u64 << self.wscale
    }

    /// The window the buffer allows with `elsewhere` more bytes held on the subflows.
    pub fn window_bytes(&self, elsewhere: u64) -> u64 {
        self.buf.window(self.ooo_bytes + self.unread + elsewhere).min(self.max_window())
    }

    /// The window for the SYN or SYN-ACK of the initial subflow (unscaled, at most 65535).
    pub fn syn_window(&mut self, elsewhere: u64) -> u16 {
        let w = self.window_bytes(elsewhere).min(65535);
        self.right_edge = self.right_edge.max(self.rcv_nxt + w);
        w as u16
    }

    /// The DATA_ACK and window for a segment leaving now.
    pub fn data_ack(&mut self, elsewhere: u64) -> DataAck {
        let ws = self.wscale;
        let want = self.window_bytes(elsewhere);
        let keep = self.right_edge.saturating_sub(self.rcv_nxt);
        let field = (want >> ws).max(keep.div_ceil(1u64 << ws)).min(65535);
        let window = field << ws;
        self.right_edge = self.right_edge.max(self.rcv_nxt + window);
        DataAck { ack: self.rcv_nxt, window }
    }

    /// Reading opened the window enough that the sender should hear of it now: the window left
    /// at most half the largest one and the new one at least twice what is left.
    pub fn window_update_due(&self, elsewhere: u64) -> bool {
        let left = self.right_edge.saturating_sub(self.rcv_nxt);
        let max = self.buf.max_window().min(self.max_window());
        if 2 * left > max {
            return false;
        }
        let now = self.window_bytes(elsewhere);
        now > 0 && now >= 2 * left.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(rcvbuf: u64) -> DataReceiver {
        DataReceiver::new(RcvBuf::new([4096, rcvbuf, rcvbuf], false, 0.5, 1000), 2)
    }

    #[test]
    fn data_from_two_subflows_is_reassembled_in_data_order() {
        let mut r = rx(1 << 20);
        // The fast subflow brings 1000..3000 before the slow one brings 0..1000.
        assert_eq!(r.on_data(1000, 1000), DataIn::default());
        assert_eq!(r.on_data(2000, 1000), DataIn::default());
        assert_eq!((r.rcv_nxt(), r.ooo_bytes()), (0, 2000));
        assert_eq!(r.on_data(0, 1000), DataIn { in_order: 3000, duplicate: 0 });
        assert_eq!((r.rcv_nxt(), r.ooo_bytes()), (3000, 0));
        assert_eq!(r.read(Time::ZERO, u64::MAX), 3000);
        // A reinjected copy of delivered data is a duplicate.
        assert_eq!(r.on_data(1000, 1000), DataIn { in_order: 0, duplicate: 1000 });
        assert_eq!(r.duplicate_bytes(), 1000);
        assert_eq!(r.peak_ooo_bytes(), 2000);
    }

    #[test]
    fn data_ack_is_the_next_expected_byte_and_the_window_counts_held_data() {
        let mut r = rx(100_000);
        assert_eq!(r.data_ack(0), DataAck { ack: 0, window: 50_000 });
        r.on_data(10_000, 20_000);
        // 20 000 bytes wait above the hole: the window shrinks but its right edge stays.
        let a = r.data_ack(0);
        assert_eq!(a.ack, 0);
        assert_eq!(a.window, 50_000);
        assert_eq!(r.window_bytes(0), 40_000);
        // Bytes held out of order on a subflow count too.
        assert_eq!(r.window_bytes(10_000), 35_000);
        r.on_data(0, 10_000);
        let a = r.data_ack(0);
        assert_eq!(a.ack, 30_000);
        // 30 000 unread: (100 000 - 30 000) / 2 = 35 000; the old right edge needs 20 000.
        assert_eq!(a.window, 35_000);
        r.read(Time::ZERO, u64::MAX);
        assert_eq!(r.data_ack(0), DataAck { ack: 30_000, window: 50_000 });
    }

    #[test]
    fn a_window_update_is_due_when_reading_doubles_a_small_window() {
        let mut r = rx(100_000);
        r.data_ack(0);
        // The sender filled the window but a hole holds it all.
        r.on_data(1_000, 49_000);
        assert!(!r.window_update_due(0), "nothing readable yet");
        r.on_data(0, 1_000);
        r.read(Time::ZERO, u64::MAX);
        assert!(r.window_update_due(0));
        r.data_ack(0);
        assert!(!r.window_update_due(0));
    }

    #[test]
    fn overlapping_ranges_count_only_new_bytes() {
        let mut r = rx(1 << 20);
        r.on_data(2000, 1000);
        assert_eq!(r.on_data(2500, 1000), DataIn { in_order: 0, duplicate: 500 });
        assert_eq!(r.ooo_bytes(), 1500);
        assert_eq!(r.on_data(0, 2500), DataIn { in_order: 3500, duplicate: 500 });
        assert_eq!(r.rcv_nxt(), 3500);
    }
}
