//! multiconn-engine: the discrete-event core.
//!
//! [`EventQueue`] holds events of any type keyed by virtual [`Time`]. Events at the same time
//! come out in the order they were scheduled (insertion sequence), which is what makes runs
//! reproducible: no tie is ever broken by a hash, an address or a float comparison. An event
//! may instead be given a rank ([`EventQueue::schedule_ranked`]): at its instant it comes out
//! before every unranked event, and before ranked ones of a higher rank, whenever it was
//! scheduled.
//! Scheduling returns a [`TimerId`]; cancelling marks it so that it is skipped when it would
//! have fired (lazy deletion, O(1) cancel). The queue never moves time backwards: scheduling
//! in the past is clamped to the current time. The entries sit in a 4-ary heap (`dary_heap`):
//! every key is distinct, so any correct heap gives the same order, and a 4-ary one is half as
//! deep as a binary one, which counts with many flows' timers pending.

use multiconn_core::Time;
use std::cmp::Reverse;
use dary_heap::QuaternaryHeap;
use std::collections::HashSet;

/// Identifies a scheduled event so it can be cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimerId(u64);

struct Entry<E> {
    at: Time,
    /// [`UNRANKED`] unless scheduled with a rank.
    rank: u64,
    seq: u64,
    event: E,
}

/// The rank of events scheduled without one: after every ranked event at the same instant.
const UNRANKED: u64 = u64::MAX;

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.rank, self.seq) == (other.at, other.rank, other.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.rank, self.seq).cmp(&(other.at, other.rank, other.seq))
    }
}

/// A priority queue of events ordered by (time, rank, insertion sequence); events scheduled
/// without a rank come after the ranked ones at their instant.
pub struct EventQueue<E> {
    heap: QuaternaryHeap<Reverse<Entry<E>>>,
    cancelled: HashSet<u64>,
    next_seq: u64,
    now: Time,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> EventQueue<E> {
        EventQueue { heap: QuaternaryHeap::new(), cancelled: HashSet::new(), next_seq: 0, now: Time::ZERO, popped: 0 }
    }

    /// The time of the last event popped (the current virtual time).
    pub fn now(&self) -> Time {
        self.now
    }

    /// How many events have fired so far (cancelled ones excluded).
    pub fn events_fired(&self) -> u64 {
        self.popped
    }

    /// Schedules `event` at `at` (clamped to now if in the past).
    pub fn schedule(&mut self, at: Time, event: E) -> TimerId {
        self.schedule_ranked(at, UNRANKED, event)
    }

    /// Schedules `event` at `at` (clamped to now if in the past) to come out, at that instant,
    /// after the events of a lower rank and before those of a higher one and the unranked
    /// ones; events of the same rank come out in the order they were scheduled. For events
    /// whose place at an instant must not depend on when they were scheduled.
    pub fn schedule_ranked(&mut self, at: Time, rank: u64, event: E) -> TimerId {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Entry { at: at.max(self.now), rank, seq, event }));
        TimerId(seq)
    }

    /// Cancels a scheduled event. Cancelling one that already fired or was cancelled is a no-op.
    pub fn cancel(&mut self, id: TimerId) {
        if id.0 < self.next_seq {
            self.cancelled.insert(id.0);
        }
    }

    /// Time of the next live event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.skip_cancelled();
        self.heap.peek().map(|e| e.0.at)
    }

    /// Removes and returns the next live event, advancing the clock to its time.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.skip_cancelled();
        let Reverse(entry) = self.heap.pop()?;
        self.now = entry.at;
        self.popped += 1;
        Some((entry.at, entry.event))
    }

    /// Pops the next event only if it is due at or before `limit`.
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        match self.peek_time() {
            Some(t) if t <= limit => self.pop(),
            _ => None,
        }
    }

    /// Moves the clock forward to `t` without firing anything (end of a bounded run).
    pub fn advance_to(&mut self, t: Time) {
        self.now = self.now.max(t);
    }

    /// Whether no event is left (cancelled ones are skipped).
    pub fn is_empty(&mut self) -> bool {
        self.peek_time().is_none()
    }

    fn skip_cancelled(&mut self) {
        if self.cancelled.is_empty() {
            return;
        }
        while let Some(Reverse(top)) = self.heap.peek() {
            if self.cancelled.remove(&top.seq) {
                self.heap.pop();
            } else {
                break;
            }
        }
    }
}

/// A wake-up for one owner (a link, an endpoint) that never cancels events.
///
/// Owners whose wanted wake-up time moves on nearly every input would otherwise cancel and
/// reschedule an event each time. Instead, an event is scheduled only when the new time is
/// earlier than every one of the owner's events still pending; a pending event that fires
/// before it is needed is a spurious wake-up the owner ignores (sans-IO models act only on
/// what is due at `now`), after which the owner is re-armed. The timer remembers all of its
/// owner's pending events, not only the earliest: an owner that is woken early (e.g. a
/// receiver flushing coalesced segments) and then wants its later deadline again (its
/// delayed-ACK timer) finds the event already pending for it instead of adding one more to
/// the queue each time. The event order stays deterministic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LazyTimer {
    /// The owner's pending events, latest first (each was earlier than all before it).
    pending: Vec<Time>,
}

impl LazyTimer {
    /// The owner wants to wake at `want`: returns the time to schedule an event at, or `None`
    /// when an event at or before `want` is already pending (or nothing is wanted).
    pub fn arm(&mut self, want: Option<Time>) -> Option<Time> {
        match want {
            Some(t) if self.pending.last().map_or(true, |&p| t < p) => {
                self.pending.push(t);
                Some(t)
            }
            _ => None,
        }
    }

    /// An event of this owner fired at `now`.
    pub fn fired(&mut self, now: Time) {
        while self.pending.last().is_some_and(|&p| p <= now) {
            self.pending.pop();
        }
    }

    /// An event of this owner fired at `now`; if it was the earliest pending one, the later
    /// ones are forgotten, so that the owner's next `arm` schedules a new event even if one
    /// of them would have served. For owners whose every wake-up has effects (a network
    /// element is serviced, its queue sampled and its sources offered room, at each one),
    /// whose wake-ups must stay where they always were.
    pub fn fired_forgetting_later(&mut self, now: Time) {
        if self.pending.last().is_some_and(|&p| p <= now) {
            self.pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lazy_timer_schedules_only_earlier_wake_ups() {
        let mut t = LazyTimer::default();
        assert_eq!(t.arm(Some(Time(10))), Some(Time(10)));
        assert_eq!(t.arm(Some(Time(20))), None, "an earlier wake-up is pending");
        assert_eq!(t.arm(Some(Time(10))), None);
        assert_eq!(t.arm(Some(Time(5))), Some(Time(5)));
        assert_eq!(t.arm(None), None);
        t.fired_forgetting_later(Time(5));
        assert_eq!(t.arm(Some(Time(20))), Some(Time(20)), "10 was forgotten when the earliest fired");
        t.fired_forgetting_later(Time(10)); // the stale event at 10 fires; 20 is still pending
        assert_eq!(t.arm(Some(Time(20))), None);
    }

    #[test]
    fn lazy_timer_remembers_later_pending_wake_ups() {
        let mut t = LazyTimer::default();
        assert_eq!(t.arm(Some(Time(40))), Some(Time(40)), "a delayed-ACK deadline");
        assert_eq!(t.arm(Some(Time(1))), Some(Time(1)), "an earlier flush");
        t.fired(Time(1));
        assert_eq!(t.arm(Some(Time(41))), None, "the event at 40 is still pending");
        assert_eq!(t.arm(Some(Time(40))), None);
        assert_eq!(t.arm(Some(Time(39))), Some(Time(39)));
        t.fired(Time(40));
        assert_eq!(t.arm(Some(Time(41))), Some(Time(41)), "nothing pending once 39 and 40 fired");
    }

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(Time(10), "b");
        q.schedule(Time(5), "a");
        q.schedule(Time(10), "c");
        q.schedule(Time(10), "d");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn ranked_events_come_first_at_their_instant_whenever_they_were_scheduled() {
        let mut q = EventQueue::new();
        q.schedule(Time(10), "plain 1");
        q.schedule_ranked(Time(10), 2, "rank 2");
        q.schedule(Time(10), "plain 2");
        q.schedule_ranked(Time(10), 1, "rank 1, first");
        q.schedule_ranked(Time(10), 1, "rank 1, second");
        q.schedule_ranked(Time(20), 0, "later instant");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["rank 1, first", "rank 1, second", "rank 2", "plain 1", "plain 2", "later instant"]);
    }

    #[test]
    fn cancelled_events_never_fire() {
        let mut q = EventQueue::new();
        let a = q.schedule(Time(1), 1);
        q.schedule(Time(2), 2);
        let c = q.schedule(Time(3), 3);
        q.cancel(a);
        q.cancel(c);
        assert_eq!(q.pop(), Some((Time(2), 2)));
        assert_eq!(q.pop(), None);
        assert_eq!(q.events_fired(), 1);
    }

    #[test]
    fn the_past_is_clamped_to_now() {
        let mut q = EventQueue::new();
        q.schedule(Time(100), 'x');
        q.pop();
        q.schedule(Time(50), 'y');
        assert_eq!(q.pop(), Some((Time(100), 'y')));
    }

    #[test]
    fn pop_until_respects_the_limit() {
        let mut q = EventQueue::new();
        q.schedule(Time(10), 1);
        q.schedule(Time(20), 2);
        assert_eq!(q.pop_until(Time(15)), Some((Time(10), 1)));
        assert_eq!(q.pop_until(Time(15)), None);
        assert_eq!(q.pop_until(Time(20)), Some((Time(20), 2)));
    }

    proptest! {
        /// Against a reference model: a sorted list of (time, seq) minus the cancelled ones.
        #[test]
        fn matches_a_sorted_reference(ops in prop::collection::vec((0u64..50, any::<bool>()), 1..200)) {
            let mut q = EventQueue::new();
            let mut reference = Vec::new();
            for (i, (t, cancel)) in ops.iter().enumerate() {
                let id = q.schedule(Time(*t), i);
                if *cancel { q.cancel(id); } else { reference.push((*t, i)); }
            }
            reference.sort();
            let got: Vec<_> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
            prop_assert_eq!(got, reference);
        }
    }
}
