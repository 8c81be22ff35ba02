//! Scripted faults: a decorator that drops, delays or loses chosen packets, for tests.
//!
//! [`Scripted`] wraps any [`Link`] (a bare [`crate::queue::DropTailLink`], a stack built by
//! [`crate::builder::LinkConfig::build`], another decorator) and asks a script what to do with
//! every packet offered to it. The script sees the packet's index on this link (0 for the
//! first packet offered, counting every offer whatever its fate) and the packet, and answers
//! with a [`Verdict`]:
//!
//! * [`Verdict::Pass`]: the packet goes to the inner link untouched;
//! * [`Verdict::Drop`]: refused at the door, before the inner link sees it (it uses no queue
//!   space and no capacity), and handed back from [`Link::enqueue`] with
//!   [`DropCause::RandomLoss`], as [`crate::loss::Lossy`] refuses a packet;
//! * [`Verdict::Lose`]: the packet crosses the inner link (it waits, is serialized and
//!   propagates) and is then reported as `Dropped { cause: RandomLoss }` at the instant it
//!   would have arrived: a loss on the air after the transmission;
//! * [`Verdict::Delay`]: the packet crosses the inner link and is then held for an extra
//!   delay; packets behind it may overtake it (reordering);
//! * [`Verdict::SetEcn`]: the packet goes to the inner link with its ECN field rewritten, as
//!   a marking queue (CE) or a bleaching middlebox (Not-ECT) would (RFC 3168 §5).
//!
//! This is the analogue of smoltcp's `FaultInjector`, with a deterministic script in place of
//! random chances: a test states exactly which packet is hit. The script may keep state (a
//! closure over counters, e.g. "the second transmission of this TCP sequence number").
//! Wrap it outermost so that it sees every packet in the order offered.
//!
//! Delayed and lost packets are recognised on their way out of the inner link by
//! [`Packet::id`], which is unique within a run. Packets the inner link flushes or discards
//! take their marks with them; packets already held for their extra delay are propagating and
//! survive a flush, as in [`crate::delay::Delayed`].

use crate::delay::Pending;
use crate::{Held, Link, LinkOutput, QueueState};
use multiconn_core::{DropCause, Dur, Ecn, Packet, QueueMeter, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a script decides for one offered packet. See the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Offer the packet to the inner link as is.
    Pass,
    /// Refuse it at the door with [`DropCause::RandomLoss`].
    Drop,
    /// Let it cross the inner link, then report it `Dropped` (cause `RandomLoss`) when it
    /// would have arrived.
    Lose,
    /// Let it cross the inner link, then hold it this much longer.
    Delay(Dur),
    /// Offer it to the inner link with this ECN field.
    SetEcn(Ecn),
}

/// A script: (index of the packet on this link, the packet) → what to do with it.
pub type Script = Box<dyn FnMut(u64, &Packet) -> Verdict + Send>;

/// How many packets the script touched, by verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptCounters {
    /// Packets offered to the link (the next packet's index).
    pub offered: u64,
    /// Packets the script dropped at the door.
    pub dropped: u64,
    /// Packets the script had lost inside the link.
    pub lost: u64,
    /// Packets the script held longer.
    pub delayed: u64,
    /// Packets whose ECN field the script rewrote.
    pub ecn_rewritten: u64,
}

/// What happens to a marked packet when it leaves the inner link.
#[derive(Clone, Copy, Debug)]
enum Mark {
    Lose,
    Delay(Dur),
}

/// A link whose packets a script may drop, lose or delay. See the module documentation.
pub struct Scripted<L> {
    /// The link the script acts on.
    pub inner: L,
    script: Script,
    counters: ScriptCounters,
    /// Packets inside the inner link that the script marked, by id (few at a time).
    marked: Vec<(u64, Mark)>,
    /// Outputs taken from the inner link, delayed or not, in (due, order taken) order (the
    /// delay decorator's own heap entry).
    held: BinaryHeap<Reverse<Pending>>,
    order: u64,
}

impl<L: Link> Scripted<L> {
    /// Runs every packet offered to `inner` through `script`.
    pub fn new(inner: L, script: impl FnMut(u64, &Packet) -> Verdict + Send + 'static) -> Scripted<L> {
        Scripted {
            inner,
            script: Box::new(script),
            counters: ScriptCounters::default(),
            marked: Vec::new(),
            held: BinaryHeap::new(),
            order: 0,
        }
    }

    /// A script that passes everything: the link behaves exactly as `inner`.
    pub fn passthrough(inner: L) -> Scripted<L> {
        Scripted::new(inner, |_, _| Verdict::Pass)
    }

    /// Replaces the script from the next offered packet on; the index keeps counting.
    pub fn set_script(&mut self, script: impl FnMut(u64, &Packet) -> Verdict + Send + 'static) {
        self.script = Box::new(script);
    }

    /// What the script did so far.
    pub fn counters(&self) -> ScriptCounters {
        self.counters
    }

    /// Packets that left the inner link and wait out an extra delay.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    fn take_mark(&mut self, id: u64) -> Option<Mark> {
        let i = self.marked.iter().position(|&(m, _)| m == id)?;
        Some(self.marked.swap_remove(i).1)
    }

    fn hold(&mut self, due: Time, output: LinkOutput) {
        self.held.push(Reverse(Pending { due, arrival: self.order, output }));
        self.order += 1;
    }

    /// Takes every inner output due by `now`, applying the marks.
    fn drain_inner(&mut self, now: Time) {
        while let Some(output) = self.inner.poll(now) {
            match output {
                LinkOutput::Delivered { at, pkt } => match self.take_mark(pkt.id) {
                    None => self.hold(at, LinkOutput::Delivered { at, pkt }),
                    Some(Mark::Lose) => self.hold(at, LinkOutput::Dropped { at, pkt, cause: DropCause::RandomLoss }),
                    Some(Mark::Delay(extra)) => {
                        let due = at + extra;
                        self.hold(due, LinkOutput::Delivered { at: due, pkt })
                    }
                },
                LinkOutput::Dropped { at, pkt, cause } => {
                    self.take_mark(pkt.id);
                    self.hold(at, LinkOutput::Dropped { at, pkt, cause });
                }
            }
        }
    }

    /// Forgets the marks of packets the inner link handed back.
    fn unmark(&mut self, handed_back: &[Packet]) {
        for pkt in handed_back {
            self.take_mark(pkt.id);
        }
    }
}

impl<L: Link> Link for Scripted<L> {
    fn enqueue(&mut self, now: Time, mut pkt: Packet) -> Result<(), (Packet, DropCause)> {
        let index = self.counters.offered;
        self.counters.offered += 1;
        let mark = match (self.script)(index, &pkt) {
            Verdict::Pass => None,
            Verdict::Drop => {
                self.counters.dropped += 1;
                return Err((pkt, DropCause::RandomLoss));
            }
            Verdict::Lose => Some(Mark::Lose),
            Verdict::Delay(extra) => Some(Mark::Delay(extra)),
            Verdict::SetEcn(ecn) => {
                self.counters.ecn_rewritten += 1;
                pkt.ecn = ecn;
                None
            }
        };
        let id = pkt.id;
        self.inner.enqueue(now, pkt)?;
        if let Some(mark) = mark {
            match mark {
                Mark::Lose => self.counters.lost += 1,
                Mark::Delay(_) => self.counters.delayed += 1,
            }
            self.marked.push((id, mark));
        }
        Ok(())
    }

    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        self.drain_inner(now);
        if self.held.peek()?.0.due > now {
            return None;
        }
        self.held.pop().map(|Reverse(h)| h.output)
    }

    fn poll_timeout(&self) -> Option<Time> {
        let held = self.held.peek().map(|Reverse(h)| h.due);
        match (self.inner.poll_timeout(), held) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn next_departure(&self) -> Option<Time> {
        let held = self.held.peek().map(|Reverse(h)| h.due);
        match (self.inner.next_departure(), held) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn catch_up(&mut self, now: Time) {
        self.inner.catch_up(now)
    }

    fn take_queue_changes(&mut self, out: &mut Vec<(Time, QueueState)>) {
        self.inner.take_queue_changes(out)
    }
    fn keep_queue_meter(&mut self, width: Dur) -> bool {
        self.inner.keep_queue_meter(width)
    }
    fn queue_meter(&mut self) -> Option<&mut QueueMeter> {
        self.inner.queue_meter()
    }

    fn queue(&self) -> QueueState {
        self.inner.queue()
    }

    fn has_room(&self, size: u32) -> bool {
        self.inner.has_room(size)
    }

    /// Flushes the inner link; packets held for an extra delay are propagating and stay.
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        let start = out.len();
        self.inner.flush(now, out);
        self.unmark(&out[start..]);
    }

    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        let start = out.len();
        self.inner.discard_waiting(discard, out);
        self.unmark(&out[start..]);
    }
    /// Passes on to the inner link; packets held here for an extra delay stay.
    fn flush_propagating(&mut self, now: Time, out: &mut Vec<Packet>) {
        let start = out.len();
        self.inner.flush_propagating(now, out);
        self.unmark(&out[start..]);
    }
    fn is_up(&self, now: Time) -> bool {
        self.inner.is_up(now)
    }
    fn next_change(&self, from: Time) -> Option<Time> {
        self.inner.next_change(from)
    }
    /// The inner link's packets and the outputs held for their due time.
    fn held(&self) -> Option<Held> {
        let mut held = self.inner.held()?;
        for Reverse(h) in &self.held {
            held.add(h.output.packet().size);
        }
        Some(held)
    }
    fn aqm_stats(&self) -> Option<crate::aqm::AqmStats> {
        self.inner.aqm_stats()
    }
}
