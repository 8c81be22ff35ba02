//! The fast path for what most links are: a drop-tail FIFO queue served at a constant rate,
//! then a propagation delay that does not depend on time (constant, or drawn from a normal or
//! empirical distribution), packets never overtaking each other.
//!
//! [`FifoLink`] gives exactly what `Delayed(DropTailLink)` with lazy departures gives for such
//! a link (the same deliveries at the same instants, the same refusals, the same queue changes
//! at the same instants, the same wake-up requests, the same random draws in the same order;
//! see [`crate::delay::Delayed::with_lazy_departures`]), at a fraction of the cost. At a fixed
//! rate nothing about a packet's transmission depends on what happens after it is accepted, so
//! it is worked out at the door: it starts when the packet before it finishes (or at once on an
//! idle link) and finishes after its serialization time. Its delay is drawn as it starts (the
//! draw an eager link makes, in the same order; a transmission cut short by an outage hands
//! its draw to the next packet, as the general stack does), and it is delivered then, or with
//! the packet before it if that one is later (FIFO). Every packet inside the link sits in one
//! ring in order, propagating ones first, and a poll only moves a cursor over the departures
//! that are due. A queue change is kept with its instant as the cursor
//! passes it ([`Link::take_queue_changes`]), so a recorder sees the queue as an eagerly woken
//! link shows it; asked to ([`Link::keep_queue_meter`]), it integrates its queue per bin
//! itself as each change happens ([`QueueMeter`]), and reports no changes one by one.
//!
//! [`crate::builder::LinkConfig::build`] picks it for a positive fixed rate, a delay that does
//! not depend on time, no AQM and FIFO delivery; everything else keeps the general decorator
//! stack.

use std::collections::VecDeque;

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, Packet, QueueMeter, Rate, RngStream, Time};

use crate::delay::{DelayModel, DelaySampler};
use crate::{Held, Link, LinkOutput, QueueState};

/// A drop-tail FIFO queue at a fixed rate followed by a delay that does not depend on time
/// (see the module header).
pub struct FifoLink {
    rate: Rate,
    delay: DelaySampler,
    /// The delay when it is constant (no draw to make).
    constant: Option<Dur>,
    rng: RngStream,
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
    /// The delivery time of the last packet that left the queue: the next one is not delivered
    /// before it (FIFO).
    last_due: Time,
    /// The delay drawn for a transmission an outage cut short: the next packet to start takes it.
    carried: Option<Dur>,
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
    /// Its delay, drawn as it starts transmission (zero while it waits).
    drawn: Dur,
    /// When it reaches the far end, once it has started transmission.
    due: Time,
}

impl FifoLink {
    /// An idle link serving at `rate` (positive), whose waiting packets may not exceed
    /// `limit`, delivering each packet `delay` after its transmission ends.
    pub fn new(rate: Rate, limit: QueueLimit, delay: Dur) -> FifoLink {
        FifoLink::with_delay(rate, limit, DelayModel::Constant(delay), RngStream::derive(0, "fifo/constant")).expect("a constant delay does not depend on time")
    }

    /// An idle link serving at `rate` (positive), whose waiting packets may not exceed
    /// `limit`, delivering each packet a draw of `model` from `rng` after its transmission
    /// ends (never before the packet before it); `None` for a model whose draws depend on
    /// time (a delay series), which the general stack serves.
    pub fn with_delay(rate: Rate, limit: QueueLimit, model: DelayModel, rng: RngStream) -> Option<FifoLink> {
        if matches!(model, DelayModel::Series(_)) {
            return None;
        }
        let constant = match model {
            DelayModel::Constant(d) => Some(d),
            _ => None,
        };
        Some(FifoLink {
            rate,
            constant,
            delay: DelaySampler::new(model),
            rng,
            limit,
            slots: VecDeque::new(),
            departed: 0,
            undeparted_bytes: 0,
            busy_until: Time::ZERO,
            last_due: Time::ZERO,
            carried: None,
            tx_cache: (0, Dur::ZERO),
            queue_changes: Vec::new(),
            meter: None,
            latest: Time::ZERO,
        })
    }

    /// The packet at `index` starts transmission: its delay is drawn (or taken over from a
    /// transmission an outage cut short) and its delivery fixed.
    fn start_transmission(&mut self, index: usize) {
        let finish = self.slots[index].finish;
        let drawn = match (self.constant, self.carried.take()) {
            (Some(d), _) => d,
            (None, Some(d)) => d,
            (None, None) => self.delay.sample(finish, &mut self.rng),
        };
        let slot = &mut self.slots[index];
        slot.drawn = drawn;
        slot.due = (finish + drawn).max(self.last_due);
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
            let (at, due) = (slot.finish, slot.due);
            self.undeparted_bytes -= u64::from(slot.pkt.size);
            self.last_due = self.last_due.max(due);
            self.departed += 1;
            if self.departed < self.slots.len() {
                self.start_transmission(self.departed);
            }
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
        self.slots.push_back(Slot { pkt, finish, drawn: Dur::ZERO, due: Time::MAX });
        if !waits {
            self.start_transmission(self.slots.len() - 1);
        } else if self.meter.is_some() {
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

    /// The next delivery: the front packet's (propagating or in transmission), every later one
    /// being due no sooner.
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
        // The aborted transmission's delay goes to the next packet delivered.
        if let Some(in_service) = self.slots.get(self.departed) {
            self.carried = Some(in_service.drawn);
        }
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

    /// Removes every packet propagating, in delivery order; the packet in transmission is then
    /// held back by nothing before `now`.
    fn flush_propagating(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.saw(now);
        self.depart_before(now);
        out.extend(self.slots.drain(..self.departed).map(|s| s.pkt));
        self.departed = 0;
        self.last_due = now;
        if let Some(in_service) = self.slots.front_mut() {
            in_service.due = (in_service.finish + in_service.drawn).max(now);
        }
    }

    fn held(&self) -> Option<Held> {
        let mut held = Held::default();
        for slot in &self.slots {
            held.add(slot.pkt.size);
        }
        Some(held)
    }
}
