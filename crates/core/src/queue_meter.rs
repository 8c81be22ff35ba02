//! A queue's length integrated over time, bin by bin.
//!
//! A [`QueueMeter`] is told each change of a queue (packets and bytes waiting) with its
//! instant and keeps the time integral of the length, in packet·ns and byte·ns, for each bin
//! of a fixed width from time zero (the recorder's bins): a bin's mean queue is its integral
//! over its length. A change inside the bin of the change before costs two multiply-adds; a
//! bin is handed out ([`QueueMeter::take_closed`]) once a change falls past its end, and the
//! last, partial one by [`QueueMeter::close`] at the end of a run. Integer arithmetic
//! throughout, so how the changes are grouped never changes a bin's value.
//!
//! The element whose queue it is keeps it (a link that knows its queue's every change), so a
//! change reaches nobody else as it happens.

use crate::time::{Dur, Time};

/// The integral of a queue over (part of) one bin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueBin {
    /// Which bin: it starts at `bin` × the width.
    pub bin: u64,
    /// Packets waiting × nanoseconds.
    pub packet_ns: u128,
    /// Bytes waiting × nanoseconds.
    pub byte_ns: u128,
}

/// A queue's length integrated bin by bin (see the module header).
#[derive(Debug, Clone)]
pub struct QueueMeter {
    width: u64,
    /// The bin of `since` and where it ends.
    bin: u64,
    bin_end: u64,
    /// The queue since `since`.
    since: u64,
    packets: u32,
    bytes: u64,
    /// The current bin's integral up to `since`.
    packet_ns: u128,
    byte_ns: u128,
    closed: Vec<QueueBin>,
}

impl QueueMeter {
    /// An empty queue at time zero, integrated in bins of `width` (positive).
    pub fn new(width: Dur) -> QueueMeter {
        let width = width.0.max(1);
        QueueMeter { width, bin: 0, bin_end: width, since: 0, packets: 0, bytes: 0, packet_ns: 0, byte_ns: 0, closed: Vec::new() }
    }

    /// The queue is `packets` / `bytes` from `at` on (an instant before the last change
    /// counts as that change's).
    pub fn change(&mut self, at: Time, packets: u32, bytes: u64) {
        self.advance(at.0);
        self.packets = packets;
        self.bytes = bytes;
    }

    /// Integrates up to `now` and hands out every bin, the one `now` falls in included (the
    /// end of a run: nothing is integrated past `now`).
    pub fn close(&mut self, now: Time) {
        self.advance(now.0);
        if self.packet_ns != 0 || self.byte_ns != 0 {
            self.closed.push(QueueBin { bin: self.bin, packet_ns: self.packet_ns, byte_ns: self.byte_ns });
            self.packet_ns = 0;
            self.byte_ns = 0;
        }
    }

    /// Whether bins are waiting to be taken.
    pub fn has_closed(&self) -> bool {
        !self.closed.is_empty()
    }

    /// Moves the bins handed out since the last call to `out`, in time order (a bin without
    /// any queue is left out).
    pub fn take_closed(&mut self, out: &mut Vec<QueueBin>) {
        out.append(&mut self.closed);
    }

    fn advance(&mut self, to: u64) {
        if to <= self.since {
            return;
        }
        let (p, b) = (u128::from(self.packets), u128::from(self.bytes));
        if to < self.bin_end {
            let dt = u128::from(to - self.since);
            self.packet_ns += p * dt;
            self.byte_ns += b * dt;
            self.since = to;
            return;
        }
        // The rest of the current bin, whole bins after it, then the start of the bin of `to`.
        let dt = u128::from(self.bin_end - self.since);
        let (packet_ns, byte_ns) = (self.packet_ns + p * dt, self.byte_ns + b * dt);
        if packet_ns != 0 || byte_ns != 0 {
            self.closed.push(QueueBin { bin: self.bin, packet_ns, byte_ns });
        }
        let to_bin = to / self.width;
        if p != 0 || b != 0 {
            let w = u128::from(self.width);
            for bin in self.bin + 1..to_bin {
                self.closed.push(QueueBin { bin, packet_ns: p * w, byte_ns: b * w });
            }
        }
        self.bin = to_bin;
        let start = to_bin * self.width;
        self.bin_end = start.saturating_add(self.width);
        let dt = u128::from(to - start);
        self.packet_ns = p * dt;
        self.byte_ns = b * dt;
        self.since = to;
    }
}
