//! Active queue management: CoDel (RFC 8289), FQ-CoDel (RFC 8290), PIE (RFC 8033) and DualPI2
//! (RFC 9332) as queue disciplines in front of a rate server, with ECN marking (RFC 3168,
//! RFC 9331).
//!
//! [`AqmLink`] is the AQM twin of [`crate::queue::DropTailLink`]: one packet in service at a
//! time at the rate model, back to back in virtual time, the next packet taken from a
//! [`Qdisc`] when the previous one's last bit is out. A discipline decides at the door
//! (PIE's early drop, the packet limit) and when a packet is taken for transmission (CoDel's
//! head drops); a packet dropped after it was accepted comes out of [`Link::poll`] as
//! [`LinkOutput::Dropped`] with [`DropCause::Queue`] at the instant it was dropped, so the
//! network's drop counters see every AQM drop as a queue drop, and [`AqmStats`] tells them
//! apart (tail, early or head, and ECN marks).
//!
//! The link's `queue` limit bounds the discipline's waiting packets or bytes (Linux's `limit`). Time is the
//! link's virtual time: CoDel measures a packet's sojourn from its enqueue to the instant it
//! starts transmission, and PIE runs its periodic update at the exact multiples of its
//! `tupdate` as the link's calls reach them.

pub mod codel;
pub mod dualpi2;
pub mod fq_codel;
pub mod pie;

use std::collections::VecDeque;

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Packet, Time};

use crate::rate::{RateModel, RateServer};
use crate::{Held, Link, LinkOutput, QueueState};

pub use codel::{Codel, CodelParams};
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use pie::{Pie, PieParams};

/// What an AQM discipline did, cumulative since the link was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AqmStats {
    /// Packets refused because the discipline held its packet limit.
    pub tail_drops: u64,
    /// Packets dropped by the AQM's own rule (CoDel's control law at dequeue, PIE's random
    /// early drop at enqueue, DualPI2's coupled drops).
    pub early_drops: u64,
    /// Packets dropped from the fattest flow queue to make room (FQ-CoDel overflow).
    pub overflow_drops: u64,
    /// ECN-capable packets marked CE instead of being dropped.
    pub marks: u64,
    /// DualPI2's drops and marks by queue and kind (`None` for the other disciplines).
    pub dualpi2: Option<dualpi2::DualPi2Counts>,
}

impl AqmStats {
    /// Every drop the discipline made.
    pub fn drops(&self) -> u64 {
        self.tail_drops + self.early_drops + self.overflow_drops
    }
}

/// Whether `packets` waiting packets of `bytes` bytes have room for one more of `size`
/// bytes under `limit` (the drop-tail rule of [`crate::queue`]).
pub fn within(limit: QueueLimit, packets: u64, bytes: u64, size: u32) -> bool {
    match limit {
        QueueLimit::Packets(n) => packets < n,
        QueueLimit::Bytes(n) => bytes.saturating_add(u64::from(size)) <= n,
    }
}

/// A FIFO of packets with their enqueue instants and its byte count.
#[derive(Debug, Default)]
pub struct Fifo {
    items: VecDeque<(Packet, Time)>,
    bytes: u64,
}

impl Fifo {
    /// Appends `pkt`, enqueued at `now`.
    pub fn push(&mut self, pkt: Packet, now: Time) {
        self.bytes += u64::from(pkt.size);
        self.items.push_back((pkt, now));
    }
    /// Takes the head packet and its enqueue instant.
    pub fn pop(&mut self) -> Option<(Packet, Time)> {
        let (pkt, at) = self.items.pop_front()?;
        self.bytes -= u64::from(pkt.size);
        Some((pkt, at))
    }
    /// The head packet's enqueue instant.
    pub fn head_arrival(&self) -> Option<Time> {
        self.items.front().map(|(_, at)| *at)
    }
    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// Moves every packet to `out`, in order.
    pub fn drain(&mut self, out: &mut Vec<Packet>) {
        out.extend(self.items.drain(..).map(|(p, _)| p));
        self.bytes = 0;
    }
    /// Moves the packets for which `discard` is true to `out`, in order.
    pub fn discard(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        let mut kept = VecDeque::with_capacity(self.items.len());
        for (pkt, at) in self.items.drain(..) {
            if discard(&pkt) {
                self.bytes -= u64::from(pkt.size);
                out.push(pkt);
            } else {
                kept.push_back((pkt, at));
            }
        }
        self.items = kept;
    }
}

/// The [`Qdisc`] methods of a discipline that keeps its packets in one [`Fifo`] field under a
/// [`QueueLimit`] field (CoDel, PIE): counts, room, draining and discarding.
macro_rules! single_fifo_qdisc_methods {
    ($queue:ident, $limit:ident) => {
        fn packets(&self) -> u64 {
            self.$queue.len() as u64
        }
        fn bytes(&self) -> u64 {
            self.$queue.bytes()
        }
        fn has_room(&self, size: u32) -> bool {
            $crate::aqm::within(self.$limit, self.$queue.len() as u64, self.$queue.bytes(), size)
        }
        fn drain(&mut self, out: &mut Vec<Packet>) {
            self.$queue.drain(out);
        }
        fn discard(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
            self.$queue.discard(discard, out);
        }
        fn stats(&self) -> AqmStats {
            self.stats
        }
    };
}
pub(crate) use single_fifo_qdisc_methods;

/// A queue discipline: where packets wait for the rate server, and which are dropped or
/// marked on the way.
pub trait Qdisc: Send {
    /// Offers `pkt` at `now`. A refused packet comes back; packets already queued that the
    /// discipline drops to make room go to `dropped`.
    fn enqueue(&mut self, now: Time, pkt: Packet, dropped: &mut Vec<Packet>) -> Result<(), Packet>;
    /// The next packet to transmit at `now`, if any; packets dropped on the way go to
    /// `dropped`.
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Packet>) -> Option<Packet>;
    /// Packets waiting.
    fn packets(&self) -> u64;
    /// Bytes waiting.
    fn bytes(&self) -> u64;
    /// Whether a packet of `size` bytes would be admitted by the limit now (random early
    /// drops are not predicted).
    fn has_room(&self, size: u32) -> bool;
    /// Moves every waiting packet to `out`.
    fn drain(&mut self, out: &mut Vec<Packet>);
    /// Moves the waiting packets for which `discard` is true to `out`.
    fn discard(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>);
    /// What it did so far.
    fn stats(&self) -> AqmStats;
}

/// Which discipline a link direction runs, with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum AqmConfig {
    /// CoDel on one FIFO (RFC 8289).
    Codel(CodelParams),
    /// Flow queues with DRR and CoDel on each (RFC 8290).
    FqCodel(FqCodelParams),
    /// PIE (RFC 8033).
    Pie(PieParams),
    /// DualPI2, the DualQ Coupled AQM (RFC 9332, Linux `sch_dualpi2`).
    DualPi2(DualPi2Params),
}

impl AqmConfig {
    /// The discipline's name in reports (`"codel"`, `"fq_codel"`, `"pie"`, `"dualpi2"`).
    pub fn name(&self) -> &'static str {
        match self {
            AqmConfig::Codel(_) => "codel",
            AqmConfig::FqCodel(_) => "fq_codel",
            AqmConfig::Pie(_) => "pie",
            AqmConfig::DualPi2(_) => "dualpi2",
        }
    }

    /// The discipline, its waiting packets bounded by `limit`; PIE and DualPI2 draw from `rng`.
    pub fn build(&self, limit: QueueLimit, rng: multiconn_core::RngStream) -> Box<dyn Qdisc> {
        match self {
            AqmConfig::Codel(p) => Box::new(Codel::new(*p, limit)),
            AqmConfig::FqCodel(p) => Box::new(FqCodel::new(*p, limit)),
            AqmConfig::Pie(p) => Box::new(Pie::new(*p, limit, rng)),
            AqmConfig::DualPi2(p) => Box::new(DualPi2::new(*p, limit, rng)),
        }
    }
}

struct InService {
    pkt: Packet,
    finish: Time,
}

/// A queue discipline in front of a [`RateServer`].
pub struct AqmLink {
    server: RateServer,
    qdisc: Box<dyn Qdisc>,
    in_service: Option<InService>,
    /// When the last packet put into service finishes.
    busy_until: Time,
    /// Drops decided after a packet was accepted, with their instants, not yet reported.
    dropped: VecDeque<(Time, Packet)>,
    scratch: Vec<Packet>,
}

impl AqmLink {
    /// An idle link serving at `rate` from `qdisc`.
    pub fn new(rate: RateModel, qdisc: Box<dyn Qdisc>) -> AqmLink {
        AqmLink { server: RateServer::new(rate), qdisc, in_service: None, busy_until: Time::ZERO, dropped: VecDeque::new(), scratch: Vec::new() }
    }

    fn note_drops(&mut self, at: Time) {
        for pkt in self.scratch.drain(..) {
            self.dropped.push_back((at, pkt));
        }
    }

    /// Takes the next packet from the discipline into service at `at`.
    fn start_next(&mut self, at: Time) {
        let next = self.qdisc.dequeue(at, &mut self.scratch);
        self.note_drops(at);
        if let Some(pkt) = next {
            let start = at.max(self.busy_until);
            let finish = self.server.finish_time(start, pkt.size);
            self.busy_until = finish;
            self.in_service = Some(InService { pkt, finish });
        }
    }
}

impl Link for AqmLink {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        let admitted = self.qdisc.enqueue(now, pkt, &mut self.scratch);
        self.note_drops(now);
        if self.in_service.is_none() {
            self.start_next(now);
        }
        admitted.map_err(|pkt| (pkt, DropCause::Queue))
    }

    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        let finish = self.in_service.as_ref().map(|s| s.finish);
        if let Some(&(at, _)) = self.dropped.front() {
            if at <= now && finish.map_or(true, |f| at <= f) {
                let (at, pkt) = self.dropped.pop_front().expect("just seen");
                return Some(LinkOutput::Dropped { at, pkt, cause: DropCause::Queue });
            }
        }
        if finish? > now {
            return None;
        }
        let done = self.in_service.take().expect("just seen");
        self.start_next(done.finish);
        Some(LinkOutput::Delivered { at: done.finish, pkt: done.pkt })
    }

    fn poll_timeout(&self) -> Option<Time> {
        let finish = self.in_service.as_ref().map(|s| s.finish).filter(|&f| f < Time::MAX);
        Time::earliest(finish, self.dropped.front().map(|(at, _)| *at))
    }

    fn queue(&self) -> QueueState {
        QueueState { packets: self.qdisc.packets() as u32, bytes: self.qdisc.bytes() }
    }

    fn has_room(&self, size: u32) -> bool {
        self.in_service.is_none() || self.qdisc.has_room(size)
    }

    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        out.extend(self.in_service.take().map(|s| s.pkt));
        self.qdisc.drain(out);
        self.busy_until = self.busy_until.min(now);
        self.server.reset();
    }

    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        self.qdisc.discard(discard, out);
    }

    fn held(&self) -> Option<Held> {
        let mut held = Held { packets: self.qdisc.packets(), bytes: self.qdisc.bytes() };
        if let Some(s) = &self.in_service {
            held.add(s.pkt.size);
        }
        for (_, pkt) in &self.dropped {
            held.add(pkt.size);
        }
        Some(held)
    }

    fn aqm_stats(&self) -> Option<AqmStats> {
        Some(self.qdisc.stats())
    }
}
