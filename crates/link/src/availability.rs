//! Up/down windows: a link that disappears and returns. (CONTRACT STUB — to be implemented)

use crate::{Link, LinkOutput, QueueState};
use multiconn_core::{DropCause, Packet, Time};

/// Down windows `[from, until)`, sorted and disjoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub down: Vec<(Time, Time)>,
}

/// While down: arrivals are dropped (`LinkDown`) and, when it goes down, the waiting queue and
/// the packet in transmission are flushed as `LinkDown` drops; packets already propagating
/// still arrive.
pub struct Intermittent<L> {
    pub inner: L,
    _private: Schedule,
}

impl<L: Link> Intermittent<L> {
    pub fn new(inner: L, schedule: Schedule) -> Intermittent<L> {
        Intermittent { inner, _private: schedule }
    }
}

impl<L: Link> Link for Intermittent<L> {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        let _ = (now, pkt);
        unimplemented!()
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        let _ = now;
        unimplemented!()
    }
    fn poll_timeout(&self) -> Option<Time> {
        unimplemented!()
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
}
