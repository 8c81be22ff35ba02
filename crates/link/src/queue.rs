//! Drop-tail queue in front of a rate server: the base link.
//!
//! [`DropTailLink`] is a FIFO with a tail-drop limit feeding a [`RateServer`] (see
//! [`crate::rate`]), one packet in service at a time. The limit counts packets *waiting*, not
//! the one being transmitted, like the `limit` of a Linux `pfifo`/`bfifo` qdisc:
//! [`QueueLimit::Packets`]`(n)` admits up to `n` waiting packets, [`QueueLimit::Bytes`]`(n)`
//! admits a packet while waiting bytes plus its size stay within `n`, and a zero limit leaves
//! room only for the packet in service. A refused packet comes back with [`DropCause::Queue`].
//!
//! Service is back to back in virtual time, independent of when the caller polls: when the
//! packet in service finishes at `f`, the next waiting packet starts at `f` (or at its arrival,
//! if later), even if [`Link::poll`] is called long after `f`. The delay, loss and availability
//! decorators in this crate wrap this link through the [`Link`] trait.

use crate::rate::{RateModel, RateServer};
use crate::{Held, Link, LinkOutput, QueueState};
use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Packet, Time};
use std::collections::VecDeque;

/// A drop-tail queue in front of a [`RateServer`]: packets wait up to `limit`, are
/// serialized one at a time at the rate, and leave when their last bit is out.
pub struct DropTailLink {
    server: RateServer,
    limit: QueueLimit,
    in_service: Option<InService>,
    waiting: VecDeque<Waiting>,
    waiting_bytes: u64,
    /// When the last packet put into service finishes: the link cannot start another before.
    busy_until: Time,
}

struct InService {
    pkt: Packet,
    finish: Time,
}

struct Waiting {
    pkt: Packet,
    arrived: Time,
}

impl DropTailLink {
    /// An idle link serving at `rate` whose waiting packets may not exceed `limit`.
    pub fn new(rate: RateModel, limit: QueueLimit) -> DropTailLink {
        DropTailLink {
            server: RateServer::new(rate),
            limit,
            in_service: None,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            busy_until: Time::ZERO,
        }
    }

    /// The rate server, e.g. for its mean rate or the capacity of a time window.
    pub fn server(&self) -> &RateServer {
        &self.server
    }

    fn start_service(&mut self, earliest: Time, pkt: Packet) {
        let start = earliest.max(self.busy_until);
        let finish = self.server.finish_time(start, pkt.size);
        self.busy_until = finish;
        self.in_service = Some(InService { pkt, finish });
    }

    fn waiting_fits(&self, size: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(limit) => (self.waiting.len() as u64) < limit,
            QueueLimit::Bytes(limit) => self.waiting_bytes.saturating_add(size as u64) <= limit,
        }
    }

    fn start_next_waiting(&mut self, finished_at: Time) {
        if let Some(next) = self.waiting.pop_front() {
            self.waiting_bytes -= next.pkt.size as u64;
            self.start_service(finished_at.max(next.arrived), next.pkt);
        }
    }
}

impl Link for DropTailLink {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        if self.in_service.is_none() {
            self.start_service(now, pkt);
            return Ok(());
        }
        if !self.waiting_fits(pkt.size) {
            return Err((pkt, DropCause::Queue));
        }
        self.waiting_bytes += pkt.size as u64;
        self.waiting.push_back(Waiting { pkt, arrived: now });
        Ok(())
    }

    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        if self.in_service.as_ref()?.finish > now {
            return None;
        }
        let done = self.in_service.take()?;
        self.start_next_waiting(done.finish);
        Some(LinkOutput::Delivered { at: done.finish, pkt: done.pkt })
    }

    /// The finish time of the packet in service; `None` when idle or when the rate model can
    /// never finish it (a trace that carries nothing).
    fn poll_timeout(&self) -> Option<Time> {
        self.in_service.as_ref().map(|s| s.finish).filter(|&finish| finish < Time::MAX)
    }

    fn queue(&self) -> QueueState {
        QueueState { packets: self.waiting.len() as u32, bytes: self.waiting_bytes }
    }

    fn has_room(&self, size: u32) -> bool {
        self.in_service.is_none() || self.waiting_fits(size)
    }

    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        out.extend(self.in_service.take().map(|s| s.pkt));
        out.extend(self.waiting.drain(..).map(|w| w.pkt));
        self.waiting_bytes = 0;
        // The aborted transmission no longer occupies the link after `now`.
        self.busy_until = self.busy_until.min(now);
        self.server.reset();
    }

    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        let mut kept = VecDeque::with_capacity(self.waiting.len());
        for w in self.waiting.drain(..) {
            if discard(&w.pkt) {
                self.waiting_bytes -= w.pkt.size as u64;
                out.push(w.pkt);
            } else {
                kept.push_back(w);
            }
        }
        self.waiting = kept;
    }

    fn held(&self) -> Option<Held> {
        let mut held = Held { packets: self.waiting.len() as u64, bytes: self.waiting_bytes };
        if let Some(s) = &self.in_service {
            held.add(s.pkt.size);
        }
        Some(held)
    }
}
