//! Queue disciplines replaced at run time: a decorator that drops every packet on the link at
//! given instants.
//!
//! `tc qdisc replace` with a handle other than the root's creates a new qdisc and grafts it
//! at the root; the old one is destroyed with every packet in it (Linux `sch_api.c`
//! `tc_modify_qdisc` → `create_n_graft` → `qdisc_graft`). Minitopo 7faea31's first scheduled
//! change on a link does exactly that to both its netem (the delay line) and its tbf (the
//! queue) — the study-testbeds reference's §1.1. [`Replaced`] models it: at each instant, the
//! outputs the inner link has due by then come out as usual, and then everything still on it
//! — the waiting queue, the packet in transmission ([`Link::flush`]) and the packets
//! propagating ([`Link::flush_propagating`]) — comes out of [`Link::poll`] as
//! `Dropped { at, cause: LinkDown }`. The link carries on at once afterwards.

use crate::{Held, Link, LinkOutput, QueueState};
use multiconn_core::{DropCause, Packet, Time};
use std::collections::VecDeque;

/// Drops everything on `inner` at each of `instants` (sorted, see [`Replaced::new`]).
pub struct Replaced<L> {
    /// The link whose queue disciplines are replaced.
    pub inner: L,
    instants: Vec<Time>,
    /// Index of the first instant not processed yet.
    next: usize,
    /// Outputs collected at processed instants, in time order.
    ready: VecDeque<LinkOutput>,
    dropped: Vec<Packet>,
}

impl<L: Link> Replaced<L> {
    /// `instants` in non-decreasing order (repeats act once each, the second on an empty
    /// link).
    pub fn new(inner: L, instants: Vec<Time>) -> Replaced<L> {
        debug_assert!(instants.windows(2).all(|w| w[0] <= w[1]), "unsorted instants {instants:?}");
        Replaced { inner, instants, next: 0, ready: VecDeque::new(), dropped: Vec::new() }
    }

    fn next_instant(&self) -> Option<Time> {
        self.instants.get(self.next).copied()
    }

    /// Processes every instant at or before `now`, in order.
    fn process(&mut self, now: Time) {
        while let Some(at) = self.next_instant().filter(|&at| at <= now) {
            while let Some(output) = self.inner.poll(at) {
                self.ready.push_back(output);
            }
            self.inner.flush(at, &mut self.dropped);
            self.inner.flush_propagating(at, &mut self.dropped);
            for pkt in self.dropped.drain(..) {
                self.ready.push_back(LinkOutput::Dropped { at, pkt, cause: DropCause::LinkDown });
            }
            self.next += 1;
        }
    }

    fn earliest_with(&self, inner: Option<Time>) -> Option<Time> {
        let ready = self.ready.front().map(|o| match o {
            LinkOutput::Delivered { at, .. } | LinkOutput::Dropped { at, .. } => *at,
        });
        [ready, inner, self.next_instant()].into_iter().flatten().min()
    }
}

impl<L: Link> Link for Replaced<L> {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        self.process(now);
        self.inner.enqueue(now, pkt)
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        self.process(now);
        self.ready.pop_front().or_else(|| self.inner.poll(now))
    }
    /// The earliest of an output already collected, the inner link's next output and the next
    /// replacement (so that it happens on time).
    fn poll_timeout(&self) -> Option<Time> {
        self.earliest_with(self.inner.poll_timeout())
    }
    fn next_departure(&self) -> Option<Time> {
        self.earliest_with(self.inner.next_departure())
    }
    fn catch_up(&mut self, now: Time) {
        self.process(now);
        self.inner.catch_up(now)
    }
    fn take_queue_changes(&mut self, out: &mut Vec<(Time, QueueState)>) {
        self.inner.take_queue_changes(out)
    }
    fn queue(&self) -> QueueState {
        self.inner.queue()
    }
    fn has_room(&self, size: u32) -> bool {
        self.inner.has_room(size)
    }
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush(now, out)
    }
    fn flush_propagating(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush_propagating(now, out)
    }
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        self.inner.discard_waiting(discard, out)
    }
    fn is_up(&self, now: Time) -> bool {
        self.inner.is_up(now)
    }
    fn next_change(&self, from: Time) -> Option<Time> {
        self.inner.next_change(from)
    }
    /// The inner link's packets and the drops collected at an instant, not yet polled.
    fn held(&self) -> Option<Held> {
        let mut held = self.inner.held()?;
        for output in &self.ready {
            held.add(output.packet().size);
        }
        Some(held)
    }
    fn aqm_stats(&self) -> Option<crate::aqm::AqmStats> {
        self.inner.aqm_stats()
    }
}
