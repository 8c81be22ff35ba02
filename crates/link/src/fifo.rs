//! The fast path for what most links are: a drop-tail FIFO queue served at a constant rate,
//! then a constant propagation delay.
//!
//! [`FifoLink`] gives exactly what `Delayed(DropTailLink)` with lazy departures gives for such
//! a link (the same deliveries at the same instants, the same refusals, the same queue changes
//! at the same instants, the same wake-up requests; see [`crate::delay::Delayed::with_lazy_departures`]),
//! at a fraction of the cost. With a fixed rate and a fixed delay nothing about a packet depends
//! on what happens after it is accepted, so its whole passage is worked out at the door: it
//! starts transmission when the packet before it finishes (or at once on an idle link), finishes
//! after its serialization time, and is delivered one delay later. Every packet inside the link
//! then sits in one ring in that order, propagating ones first, and a poll only moves a cursor
//! over the departures that are due. A queue change is kept with its instant as the cursor
//! passes it ([`Link::take_queue_changes`]), so a recorder sees the queue as an eagerly woken
//! link shows it; asked to ([`Link::keep_queue_meter`]), it integrates its queue per bin
//! itself as each change happens ([`QueueMeter`]), and reports no changes one by one.
//!
//! [`crate::builder::LinkConfig::build`] picks it for a positive fixed rate, a constant delay,
//! no AQM and FIFO delivery; everything else keeps the general decorator stack.

use std::collections::VecDeque;

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, Packet, QueueMeter, Rate, Time};

use crate::{Held, Link, LinkOutput, QueueState};

/// A drop-tail FIFO queue at a fixed rate followed by a fixed delay (see the module header).
pub struct FifoLink {
    rate: Rate,
    delay: Dur,
    limit: QueueLimit,
    /// Every packet inside the link in order: first those propagating (`departed` of them),
    /// then the one in transmission, then the waiting ones.
    slots: VecDeque<Slot>,
    /// How many packets at the front of `slots` have left the queue (are propagating).
    departed: usize,
    /// Bytes of the packets not yet departed (in transmission and waiting).
    undeparted_bytes: u64,
    /// When the last packet accepted finishes its transmission.
    busy_until: Time,
    /// The serialization time of the last packet size seen (most packets share a size).
    tx_cache: (u32, Dur),
    /// Queue changes at departures the cursor passed, not yet taken (without a meter).
    queue_changes: Vec<(Time, QueueState)>,
    /// The queue integrated bin by bin, when asked for ([`Link::keep_queue_meter`]): every
    /// change is noted here as it happens instead.
    meter: Option<QueueMeter>,
    /// The latest instant the link was told of (a discard of waiting packets happens then).
    latest: Time,
}

struct Slot {
    pkt: Packet,
    /// When its last bit leaves the queue.
    finish: Time,
    /// When it reaches the far end.
    due: Time,
}

impl FifoLink {
    /// An idle link serving at `rate` (positive), whose waiting packets may not exceed
    /// `limit`, delivering each packet `delay` after its transmission ends.
    pub fn new(rate: Rate, limit: QueueLimit, delay: Dur) -> FifoLink {
        FifoLink {
            rate,
            delay,
            limit,
            slots: VecDeque::new(),
            departed: 0,
            undeparted_bytes: 0,
            busy_until: Time::ZERO,
            tx_cache: (0, Dur::ZERO),
            queue_changes: Vec::new(),
            meter: None,
            latest: Time::ZERO,
        }
    }

    /// Notes the queue as it is from `at` on.
    fn queue_changed(&mut self, at: Time) {
        let queue = self.queue();
        match &mut self.meter {
            Some(meter) => meter.change(at, queue.packets, queue.bytes),
            None => match self.queue_changes.last_mut() {
                Some(last) if last.0 == at => last.1 = queue,
                _ => self.queue_changes.push((at, queue)),
            },
        }
    }

    fn saw(&mut self, now: Time) {
        self.latest = self.latest.max(now);
    }

    fn tx_time(&mut self, size: u32) -> Dur {
        if self.tx_cache.0 != size {
            self.tx_cache = (size, self.rate.tx_time(u64::from(size)));
        }
        self.tx_cache.1
    }

    /// When a packet of `size` bytes starting transmission at `start` finishes (a packet of no
    /// bytes takes no time, as the rate server has it).
    fn finish_from(&mut self, start: Time, size: u32) -> Time {
        if size == 0 {
            start
        } else {
            start + self.tx_time(size)
        }
    }

    /// Whether a packet is in transmission.
    fn busy(&self) -> bool {
        self.slots.len() > self.departed
    }

    fn waiting_packets(&self) -> usize {
        self.slots.len().saturating_sub(self.departed + 1)
    }

    fn waiting_bytes(&self) -> u64 {
        match self.slots.get(self.departed) {
            Some(in_service) => self.undeparted_bytes - u64::from(in_service.pkt.size),
            None => 0,
        }
    }

    fn waiting_fits(&self, size: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(limit) => (self.waiting_packets() as u64) < limit,
            QueueLimit::Bytes(limit) => self.waiting_bytes().saturating_add(u64::from(size)) <= limit,
        }
    }

    /// Moves the cursor over every transmission that ends by `now`, keeping the queue after
    /// each departure at its instant.
    fn depart_until(&mut self, now: Time) {
        while let Some(slot) = self.slots.get(self.departed) {
            if slot.finish > now {
                break;
            }
            let at = slot.finish;
            self.undeparted_bytes -= u64::from(slot.pkt.size);
            self.departed += 1;
            self.queue_changed(at);
        }
    }

    /// The departures strictly before `now`: the queue a packet arriving at `now` finds (one
    /// leaving at exactly `now` is still in transmission, as when the arrival is handled
    /// before the link's own wake-up at that instant).
    fn depart_before(&mut self, now: Time) {
        if now > Time::ZERO {
            self.depart_until(Time(now.0 - 1));
        }
    }
}

impl Link for FifoLink {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        self.saw(now);
        self.depart_before(now);
        let waits = self.busy();
        if waits && !self.waiting_fits(pkt.size) {
            return Err((pkt, DropCause::Queue));
        }
        let start = now.max(self.busy_until);
        let finish = self.finish_from(start, pkt.size);
        self.busy_until = finish;
        self.undeparted_bytes += u64::from(pkt.size);
        self.slots.push_back(Slot { pkt, finish, due: finish + self.delay });
        if waits && self.meter.is_some() {
            self.queue_changed(now);
        }
        Ok(())
    }

    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        self.saw(now);
        self.depart_until(now);
        if self.departed == 0 || self.slots.front()?.due > now {
            return None;
        }
        self.departed -= 1;
        let slot = self.slots.pop_front()?;
        Some(LinkOutput::Delivered { at: slot.due, pkt: slot.pkt })
    }

    /// The next delivery: the front packet's, every later one being due no sooner.
    fn poll_timeout(&self) -> Option<Time> {
        self.slots.front().map(|s| s.due)
    }

    /// The end of the transmission under way, or the next delivery if sooner.
    fn next_departure(&self) -> Option<Time> {
        let finish = self.slots.get(self.departed).map(|s| s.finish);
        let delivery = if self.departed > 0 { self.slots.front().map(|s| s.due) } else { None };
        match (finish, delivery) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn catch_up(&mut self, now: Time) {
        self.saw(now);
        self.depart_before(now);
    }

    fn take_queue_changes(&mut self, out: &mut Vec<(Time, QueueState)>) {
        out.append(&mut self.queue_changes);
    }

    /// Every change of its queue is known here, at its instant: it keeps its own meter.
    fn keep_queue_meter(&mut self, width: Dur) -> bool {
        let mut meter = QueueMeter::new(width);
        let queue = self.queue();
        meter.change(self.latest, queue.packets, queue.bytes);
        self.meter = Some(meter);
        self.queue_changes.clear();
        true
    }

    fn queue_meter(&mut self) -> Option<&mut QueueMeter> {
        self.meter.as_mut()
    }

    fn queue(&self) -> QueueState {
        QueueState { packets: self.waiting_packets() as u32, bytes: self.waiting_bytes() }
    }

    fn has_room(&self, size: u32) -> bool {
        !self.busy() || self.waiting_fits(size)
    }

    /// Removes the packet in transmission and the waiting ones; those propagating still
    /// arrive.
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.saw(now);
        self.depart_before(now);
        out.extend(self.slots.drain(self.departed..).map(|s| s.pkt));
        self.undeparted_bytes = 0;
        // The aborted transmission no longer occupies the link after `now`.
        self.busy_until = self.busy_until.min(now);
        if self.meter.is_some() {
            self.queue_changed(now);
        }
    }

    /// Removes the chosen waiting packets; those behind them move up, each starting when the
    /// one before it finishes. The queue changes at the latest instant the link was told of
    /// (the caller catches it up to the discard's instant first).
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        let Some(in_service) = self.slots.get(self.departed) else { return };
        let mut previous_finish = in_service.finish;
        let first_waiting = self.departed + 1;
        let mut kept = VecDeque::with_capacity(self.slots.len());
        for (i, mut slot) in self.slots.drain(..).enumerate() {
            if i < first_waiting {
                kept.push_back(slot);
            } else if discard(&slot.pkt) {
                self.undeparted_bytes -= u64::from(slot.pkt.size);
                out.push(slot.pkt);
            } else {
                let size = slot.pkt.size;
                slot.finish = if size == 0 { previous_finish } else { previous_finish + self.rate.tx_time(u64::from(size)) };
                slot.due = slot.finish + self.delay;
                previous_finish = slot.finish;
                kept.push_back(slot);
            }
        }
        self.slots = kept;
        self.busy_until = previous_finish;
        if self.meter.is_some() {
            self.queue_changed(self.latest);
        }
    }

    /// Removes every packet propagating, in delivery order.
    fn flush_propagating(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.saw(now);
        self.depart_before(now);
        out.extend(self.slots.drain(..self.departed).map(|s| s.pkt));
        self.departed = 0;
    }

    fn held(&self) -> Option<Held> {
        let mut held = Held::default();
        for slot in &self.slots {
            held.add(slot.pkt.size);
        }
        Some(held)
    }
}
