//! A test-only hop kind (feature `test-elements`): a fixed-delay wire. Every packet comes out
//! `delay` after it went in; no rate limit, no queue, no loss. It shows what a new kind of hop
//! takes: this element, a schema section and a resolver.

use std::collections::VecDeque;

use multiconn_core::{DropCause, Dur, Packet, Time};
use multiconn_link::{Held, Link, LinkOutput, QueueState};

use crate::HopModel;

/// One direction of a wire, as a hop element.
#[derive(Debug, Clone, Default)]
pub struct Wire {
    delay: Dur,
    on_the_wire: VecDeque<(Time, Packet)>,
}

impl Wire {
    /// A wire with this one-way delay.
    pub fn new(delay: Dur) -> Wire {
        Wire { delay, on_the_wire: VecDeque::new() }
    }
}

impl Link for Wire {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        self.on_the_wire.push_back((now + self.delay, pkt));
        Ok(())
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        let (at, _) = *self.on_the_wire.front().filter(|(t, _)| *t <= now)?;
        self.on_the_wire.pop_front().map(|(_, pkt)| LinkOutput::Delivered { at, pkt })
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.on_the_wire.front().map(|(t, _)| *t)
    }
    fn queue(&self) -> QueueState {
        QueueState::default()
    }
    fn has_room(&self, _size: u32) -> bool {
        true
    }
    fn flush(&mut self, _now: Time, _out: &mut Vec<Packet>) {}
    fn discard_waiting(&mut self, _discard: &mut dyn FnMut(&Packet) -> bool, _out: &mut Vec<Packet>) {}
    fn held(&self) -> Option<Held> {
        let mut held = Held::default();
        for (_, pkt) in &self.on_the_wire {
            held.add(pkt.size);
        }
        Some(held)
    }
}

/// What a wire is built from: its one-way delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireModel {
    /// The one-way delay.
    pub delay: Dur,
}

impl HopModel for WireModel {
    fn build(&self, _seed: u64, _label: &str) -> Box<dyn Link + Send> {
        Box::new(Wire::new(self.delay))
    }
    fn delay_at(&self, _t: Time) -> Dur {
        self.delay
    }
    fn transit_floor(&self, _size: u32) -> Dur {
        self.delay
    }
    fn paces_a_sender(&self) -> bool {
        false
    }
}
