//! Up/down windows: a link that disappears and returns.
//!
//! [`Intermittent`] is the outermost decorator of a link (around [`crate::loss::Lossy`] and
//! [`crate::delay::Delayed`]). A [`Schedule`] lists half-open down windows `[from, until)`.
//! While down, offered packets are refused with [`DropCause::LinkDown`]. At the instant a window
//! starts the inner link is flushed through [`Link::flush`]: its waiting queue and the packet
//! in transmission come out of [`Link::poll`] as `Dropped { at: from, cause: LinkDown }`,
//! after every inner output due at or before `from` (a transmission completing exactly at
//! `from` still succeeds). Packets already propagating, e.g. inside a `Delayed`, still arrive,
//! as on a radio link that loses its bearer but not the packets already in flight.
//!
//! The same decorator replaces the link's queue disciplines at given instants
//! ([`Intermittent::with_replacements`]), as `tc qdisc replace` under a handle other than the
//! root's does: it creates a new qdisc, grafts it at the root and destroys the old one with
//! every packet in it (Linux `sch_api.c` `tc_modify_qdisc` → `create_n_graft` →
//! `qdisc_graft`); Minitopo 7faea31's first scheduled change on a link does that to its netem
//! and its tbf (the study-testbeds reference's §1.1). At such an instant the outputs due by
//! then come out as usual, and then everything still on the link — the waiting queue, the
//! packet in transmission and the packets propagating ([`Link::flush_propagating`]) — comes out
//! as `Dropped { at, cause: LinkDown }`; the link carries on at once.
//!
//! The decorator is lazy but exact: a window that started, or a replacement due, before the
//! caller's `now` is processed at its own instant, whether the caller polls or enqueues first.

use crate::{Held, Link, LinkOutput, QueueState};
use multiconn_core::{DropCause, Dur, Packet, QueueMeter, Time};
use std::collections::VecDeque;

/// Down windows `[from, until)`, sorted and disjoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// The windows `[from, until)`, in time order.
    pub down: Vec<(Time, Time)>,
}

impl Schedule {
    /// A schedule from down windows `[from, until)`; each must be non-empty and start no
    /// earlier than the previous one ends.
    pub fn new(windows: Vec<(Time, Time)>) -> Result<Schedule, String> {
        for (i, &(from, until)) in windows.iter().enumerate() {
            if from >= until {
                return Err(format!(
                    "down window {} [{from}, {until}) is empty or reversed: it must start before it ends",
                    i + 1
                ));
            }
            if let Some(&(_, previous_until)) = i.checked_sub(1).map(|p| &windows[p]) {
                if from < previous_until {
                    return Err(format!(
                        "down window {} starts at {from}, before window {} ends at {previous_until}: windows must be sorted and must not overlap",
                        i + 1,
                        i
                    ));
                }
            }
        }
        Ok(Schedule { down: windows })
    }

    /// A link that never goes down.
    pub fn always_up() -> Schedule {
        Schedule { down: Vec::new() }
    }

    /// The window containing `t`, if the link is down at `t`.
    pub fn window_at(&self, t: Time) -> Option<(Time, Time)> {
        let candidate = self.down.partition_point(|&(_, until)| until <= t);
        self.down
            .get(candidate)
            .copied()
            .filter(|&(from, _)| from <= t)
    }

    /// Whether the link is down at `t` (inside a window; the window's end is up).
    pub fn is_down(&self, t: Time) -> bool {
        self.window_at(t).is_some()
    }

    /// The first instant at or after `from` at which the link goes down or comes back up. A
    /// window that starts where the previous one ends continues the outage: no change there.
    pub fn next_change(&self, from: Time) -> Option<Time> {
        let down = &self.down;
        let first = down.partition_point(|&(_, until)| until < from);
        for i in first..down.len() {
            let (start, end) = down[i];
            if start >= from && (i == 0 || down[i - 1].1 != start) {
                return Some(start);
            }
            if down.get(i + 1).map(|&(next, _)| next) != Some(end) {
                return Some(end);
            }
        }
        None
    }
}

/// While down: arrivals are dropped (`LinkDown`) and, when it goes down, the waiting queue and
/// the packet in transmission are flushed as `LinkDown` drops; packets already propagating
/// still arrive. At a replacement of its queue disciplines, those propagating are dropped too.
pub struct Intermittent<L> {
    /// The link it switches on and off.
    pub inner: L,
    schedule: Schedule,
    /// Index of the first window whose start has not been processed yet.
    next_window: usize,
    /// Instants at which the queue disciplines are replaced, sorted, and the index of the
    /// first not processed yet.
    replaced: Vec<Time>,
    next_replaced: usize,
    /// Outputs collected while processing window starts, in time order; all precede whatever
    /// the inner link still holds.
    ready: VecDeque<LinkOutput>,
    /// The latest time seen in `enqueue` or `poll`: what `has_room` judges "now" by.
    clock: Time,
    flushed: Vec<Packet>,
}

impl<L: Link> Intermittent<L> {
    /// `schedule` must satisfy the invariants [`Schedule::new`] checks.
    pub fn new(inner: L, schedule: Schedule) -> Intermittent<L> {
        debug_assert!(
            Schedule::new(schedule.down.clone()).is_ok(),
            "invalid schedule {schedule:?}"
        );
        Intermittent {
            inner,
            schedule,
            next_window: 0,
            replaced: Vec::new(),
            next_replaced: 0,
            ready: VecDeque::new(),
            clock: Time::ZERO,
            flushed: Vec::new(),
        }
    }

    /// Also replaces the queue disciplines at each of `instants` (non-decreasing), dropping
    /// everything on the link (see the module documentation).
    pub fn with_replacements(mut self, instants: Vec<Time>) -> Intermittent<L> {
        debug_assert!(instants.windows(2).all(|w| w[0] <= w[1]), "unsorted instants {instants:?}");
        self.replaced = instants;
        self
    }

    /// Its down windows.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    fn next_replacement(&self) -> Option<Time> {
        self.replaced.get(self.next_replaced).copied()
    }

    fn next_window_start(&self) -> Option<Time> {
        self.schedule
            .down
            .get(self.next_window)
            .map(|&(from, _)| from)
    }

    /// The earliest of `inner` (the inner link's next output or departure), an output already
    /// collected, the next window start, the next replacement and, while down, the window's
    /// end.
    fn earliest_with(&self, inner: Option<Time>) -> Option<Time> {
        let current_window_end = self.schedule.window_at(self.clock).map(|(_, until)| until);
        [self.ready.front().map(output_time), inner, self.next_window_start(), self.next_replacement(), current_window_end].into_iter().flatten().min()
    }

    /// Processes every window start and replacement at or before `now`, in time order (a
    /// window start first at the same instant).
    fn process_window_starts(&mut self, now: Time) {
        self.clock = self.clock.max(now);
        loop {
            let start = self.next_window_start().filter(|&from| from <= now);
            let replacement = self.next_replacement().filter(|&at| at <= now);
            match (start, replacement) {
                (Some(from), r) if r.map_or(true, |at| from <= at) => {
                    self.drop_all(from, false);
                    self.next_window += 1;
                }
                (_, Some(at)) => {
                    self.drop_all(at, true);
                    self.next_replaced += 1;
                }
                _ => return,
            }
        }
    }

    /// Collects the inner outputs due by `at`, then flushes the inner link at `at`: what waits
    /// and is in transmission, and with `propagating` what is on its way too.
    fn drop_all(&mut self, at: Time, propagating: bool) {
        while let Some(output) = self.inner.poll(at) {
            self.ready.push_back(output);
        }
        self.inner.flush(at, &mut self.flushed);
        if propagating {
            self.inner.flush_propagating(at, &mut self.flushed);
        }
        for pkt in self.flushed.drain(..) {
            self.ready.push_back(LinkOutput::Dropped { at, pkt, cause: DropCause::LinkDown });
        }
    }
}

fn output_time(output: &LinkOutput) -> Time {
    match output {
        LinkOutput::Delivered { at, .. } | LinkOutput::Dropped { at, .. } => *at,
    }
}

impl<L: Link> Link for Intermittent<L> {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        // Windows that started before `now` must flush before this packet joins the queue.
        self.process_window_starts(now);
        if self.schedule.is_down(now) {
            return Err((pkt, DropCause::LinkDown));
        }
        self.inner.enqueue(now, pkt)
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        self.process_window_starts(now);
        self.ready.pop_front().or_else(|| self.inner.poll(now))
    }
    /// The earliest of: an output already collected, the inner link's next output, the next
    /// window start (so the flush happens on time), and, while down, the window's end (so a
    /// sender held back by `has_room` is woken when the link returns).
    fn poll_timeout(&self) -> Option<Time> {
        self.earliest_with(self.inner.poll_timeout())
    }
    /// As [`Link::poll_timeout`], with the inner link's next departure in place of its next
    /// output.
    fn next_departure(&self) -> Option<Time> {
        self.earliest_with(self.inner.next_departure())
    }
    fn catch_up(&mut self, now: Time) {
        self.process_window_starts(now);
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
    /// False while down (judged at the latest time given to `enqueue` or `poll`).
    fn has_room(&self, size: u32) -> bool {
        !self.schedule.is_down(self.clock) && self.inner.has_room(size)
    }
    fn loses_everything(&self) -> bool {
        self.inner.loses_everything()
    }
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush(now, out)
    }
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        self.inner.discard_waiting(discard, out)
    }
    fn flush_propagating(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush_propagating(now, out)
    }
    fn is_up(&self, now: Time) -> bool {
        !self.schedule.is_down(now)
    }
    fn next_change(&self, from: Time) -> Option<Time> {
        self.schedule.next_change(from)
    }
    /// The inner link's packets and the outputs collected at a window start, not yet polled.
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
