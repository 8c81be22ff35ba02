//! multiconn-link: sans-IO models of one direction of a network link.
//!
//! A link never reads a clock: packets go in with [`Link::enqueue`] at a given `now`, results
//! come out of [`Link::poll`], and [`Link::poll_timeout`] says when the next result is due.
//! The base link is a drop-tail queue in front of a rate server ([`queue::DropTailLink`], rate
//! from [`rate`]); impairments wrap any link as decorators, in the spirit of smoltcp's
//! `FaultInjector`:
//!
//! ```text
//! Intermittent( Lossy( Delayed( DropTailLink ) ) )
//!   up/down      loss    propagation  queue + serialization
//! ```
//!
//! [`builder::LinkConfig`] holds one direction's models and is the one place that stacks them
//! in this order; for the commonest link (fixed rate, constant delay, drop-tail FIFO) it builds
//! [`fifo::FifoLink`] instead, one element that gives exactly what that stack gives. [`scripted::Scripted`] wraps any link, such a stack included, to drop, lose
//! or delay chosen packets in tests.
//!
//! Trace files (Mahimahi, bitrate CSVs, delay histograms, delay series, loss traces) are parsed
//! from text by [`trace`], [`delay`] and [`loss`]; reading files is the caller's business.
//! [`start`] reads any of the traces from a start other than its beginning.

pub mod aqm;
pub mod availability;
pub mod builder;
pub mod delay;
pub mod fifo;
pub mod loss;
pub mod queue;
pub mod rate;
pub mod scripted;
pub mod start;
pub mod trace;

use multiconn_core::{DropCause, Dur, Packet, QueueMeter, Time};

/// What a link hands back when polled.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkOutput {
    /// The packet reached the far end of the link at `at`.
    Delivered {
        /// When its last bit arrived (serialization and propagation done).
        at: Time,
        /// The packet.
        pkt: Packet,
    },
    /// The packet was discarded inside the link at `at` (e.g. flushed when the link went down).
    Dropped {
        /// When it was discarded.
        at: Time,
        /// The packet.
        pkt: Packet,
        /// Why.
        cause: DropCause,
    },
}

/// Packets and bytes waiting in a queue, not counting the one being transmitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueState {
    /// Packets waiting.
    pub packets: u32,
    /// Bytes waiting, headers included.
    pub bytes: u64,
}

/// Everything a link holds at one instant: waiting, in transmission and propagating (drops it
/// has decided but not yet reported included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Packets inside the link.
    pub packets: u64,
    /// Their bytes, headers included.
    pub bytes: u64,
}

impl Held {
    /// One more packet of `size` bytes.
    pub fn add(&mut self, size: u32) {
        self.packets += 1;
        self.bytes += u64::from(size);
    }

    /// The sum of two tallies.
    pub fn plus(self, other: Held) -> Held {
        Held { packets: self.packets + other.packets, bytes: self.bytes + other.bytes }
    }
}

impl LinkOutput {
    /// The packet delivered or dropped.
    pub fn packet(&self) -> &Packet {
        match self {
            LinkOutput::Delivered { pkt, .. } | LinkOutput::Dropped { pkt, .. } => pkt,
        }
    }
}

/// One direction of a link, sans-IO.
pub trait Link {
    /// Offers a packet at `now`. A packet refused at the door (full queue, random loss, link
    /// down) comes back with the cause.
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)>;
    /// The next output due at or before `now`, in order of due time; `None` when nothing is due.
    fn poll(&mut self, now: Time) -> Option<LinkOutput>;
    /// When the next output will be due, if any is pending. A lazy link (see
    /// [`delay::Delayed`]) may let a packet finish its transmission before then without
    /// asking to be woken: its queue changes are then caught up on the next call.
    fn poll_timeout(&self) -> Option<Time>;
    /// When the queue next changes by itself (the packet in transmission leaves it), if it is
    /// sooner than [`Link::poll_timeout`]: a sender held back by [`Link::has_room`] wants to
    /// be woken then. The default is the next output.
    fn next_departure(&self) -> Option<Time> {
        self.poll_timeout()
    }
    /// Processes what happened inside the link strictly before `now` and was not yet
    /// processed (a lazy link's departures), so that [`Link::queue`] and [`Link::has_room`]
    /// tell the state at `now`. A link that is woken at every departure has nothing to do.
    fn catch_up(&mut self, _now: Time) {}
    /// Moves the queue changes caught up since the last call to `out`, as `(when, queue
    /// after the change)` in time order: a lazy link's queue shrinks at departures that
    /// nobody was woken for, and its recorder still wants them at their instants.
    fn take_queue_changes(&mut self, _out: &mut Vec<(Time, QueueState)>) {}
    /// Asks the link to integrate its own queue in bins of `width`
    /// ([`QueueMeter`]): one that knows its queue's every change can, and then reports no
    /// changes through [`Link::take_queue_changes`]. Whether it does; the default does not.
    fn keep_queue_meter(&mut self, _width: Dur) -> bool {
        false
    }
    /// The meter of a link that keeps its own ([`Link::keep_queue_meter`]).
    fn queue_meter(&mut self) -> Option<&mut QueueMeter> {
        None
    }
    /// The queue right now.
    fn queue(&self) -> QueueState;
    /// Whether a packet of `size` bytes would fit in the queue now (used for back-pressure
    /// by a directly attached saturating sender; random loss is not predicted).
    fn has_room(&self, size: u32) -> bool;
    /// Whether it certainly loses every packet offered at its door from now on, whatever the
    /// random draws (a loss probability of 1, a loss trace of all `1`): a saturating sender
    /// told by [`Link::has_room`] that there is room would then never fill it. False when
    /// unsure; a link without a loss model never does.
    fn loses_everything(&self) -> bool {
        false
    }
    /// Removes every packet waiting or in transmission (not those already propagating) and
    /// appends them to `out`; the link is then idle. Used when a link goes down.
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>);
    /// Removes the waiting packets (not the one in transmission, not those propagating) for
    /// which `discard` is true and appends them to `out`, in queue order. Used to drop the
    /// queued PDCP copies of a leg when duplication is deactivated (TS 38.323 §5.11).
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>);
    /// Removes the packets already propagating (past the queue, inside a delay) and appends
    /// them to `out`, as destroying a netem qdisc does
    /// ([`availability::Intermittent::with_replacements`]). A link without
    /// a delay stage has none: the default does nothing, and decorators pass it on.
    fn flush_propagating(&mut self, _now: Time, _out: &mut Vec<Packet>) {}
    /// Whether the link is up (carries packets) at `now`; a link without an availability
    /// model always is.
    fn is_up(&self, _now: Time) -> bool {
        true
    }
    /// The first instant at or after `from` at which the link goes down or comes back up,
    /// when it knows it in advance (a scheduled outage); `None` when no change is known.
    fn next_change(&self, _from: Time) -> Option<Time> {
        None
    }
    /// Everything inside the link now (waiting, in transmission, propagating), when it can
    /// tell; `None` otherwise. It walks the propagating packets: for an invariant checker's
    /// end-of-run count, not for every event.
    fn held(&self) -> Option<Held> {
        None
    }
    /// What its active queue management did (drops by kind, ECN marks), for a link with an
    /// AQM discipline ([`aqm`]); `None` for a drop-tail link.
    fn aqm_stats(&self) -> Option<aqm::AqmStats> {
        None
    }
}

impl<L: Link + ?Sized> Link for Box<L> {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        (**self).enqueue(now, pkt)
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        (**self).poll(now)
    }
    fn poll_timeout(&self) -> Option<Time> {
        (**self).poll_timeout()
    }
    fn next_departure(&self) -> Option<Time> {
        (**self).next_departure()
    }
    fn catch_up(&mut self, now: Time) {
        (**self).catch_up(now)
    }
    fn take_queue_changes(&mut self, out: &mut Vec<(Time, QueueState)>) {
        (**self).take_queue_changes(out)
    }
    fn keep_queue_meter(&mut self, width: Dur) -> bool {
        (**self).keep_queue_meter(width)
    }
    fn queue_meter(&mut self) -> Option<&mut QueueMeter> {
        (**self).queue_meter()
    }
    fn queue(&self) -> QueueState {
        (**self).queue()
    }
    fn has_room(&self, size: u32) -> bool {
        (**self).has_room(size)
    }
    fn loses_everything(&self) -> bool {
        (**self).loses_everything()
    }
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        (**self).flush(now, out)
    }
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        (**self).discard_waiting(discard, out)
    }
    fn flush_propagating(&mut self, now: Time, out: &mut Vec<Packet>) {
        (**self).flush_propagating(now, out)
    }
    fn is_up(&self, now: Time) -> bool {
        (**self).is_up(now)
    }
    fn next_change(&self, from: Time) -> Option<Time> {
        (**self).next_change(from)
    }
    fn held(&self) -> Option<Held> {
        (**self).held()
    }
    fn aqm_stats(&self) -> Option<aqm::AqmStats> {
        (**self).aqm_stats()
    }
}

/// A malformed trace or model file: which file, which line (1-based) where known, and what
/// is wrong and allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct TraceError {
    /// The file (or other source) the text came from.
    pub origin: String,
    /// The 1-based line, where known.
    pub line: Option<usize>,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl TraceError {
    /// An error in `origin` at `line`.
    pub fn new(origin: &str, line: Option<usize>, message: impl Into<String>) -> TraceError {
        TraceError { origin: origin.to_string(), line, message: message.into() }
    }
}
