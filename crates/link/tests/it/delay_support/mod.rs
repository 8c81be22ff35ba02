//! Small stand-in links for the decorator tests (the real drop-tail link is tested elsewhere).

use multiconn_core::{DropCause, Dur, FlowId, Packet, Time};
use multiconn_link::{Link, LinkOutput, QueueState};
use std::collections::VecDeque;

pub fn packet(id: u64) -> Packet {
    Packet {
        id,
        flow: FlowId(0),
        size: 1500,
        seq: id,
        created: Time::ZERO,
        hop: 0,
        route: 0,
        lower_sn: 0,
        path: 0,
        ecn: multiconn_core::Ecn::NotEct,
        payload: None,
    }
}

/// Adds to `seen` the queue changes `link` reports since the last call, then its queue at
/// `now`, as the network core tells its recorder: `(instant, queue)`, repeats left out.
pub fn note_queue_changes(link: &mut dyn Link, now: Time, seen: &mut Vec<(Time, QueueState)>) {
    let mut changes = Vec::new();
    link.take_queue_changes(&mut changes);
    changes.push((now, link.queue()));
    for (at, q) in changes {
        if seen.last().map(|(_, last)| *last) != Some(q) {
            seen.push((at, q));
        }
    }
}

pub fn ms(v: u64) -> Time {
    Time(v * 1_000_000)
}

pub fn output_time(output: &LinkOutput) -> Time {
    match output {
        LinkOutput::Delivered { at, .. } | LinkOutput::Dropped { at, .. } => *at,
    }
}

/// Everything due by `now`, in the order the link hands it out.
pub fn drain<L: Link>(link: &mut L, now: Time) -> Vec<LinkOutput> {
    std::iter::from_fn(|| link.poll(now)).collect()
}

/// A FIFO server with a fixed service time per packet and room for `capacity` waiting
/// packets; a zero service time makes it a zero-time link.
pub struct FifoLink {
    service: Dur,
    capacity: usize,
    waiting: VecDeque<Packet>,
    in_service: Option<(Packet, Time)>,
}

impl FifoLink {
    pub fn new(service: Dur, capacity: usize) -> FifoLink {
        FifoLink {
            service,
            capacity,
            waiting: VecDeque::new(),
            in_service: None,
        }
    }

    pub fn zero_time() -> FifoLink {
        FifoLink::new(Dur::ZERO, usize::MAX)
    }

    fn start_next(&mut self, at: Time) {
        self.in_service = self.waiting.pop_front().map(|p| (p, at + self.service));
    }
}

impl Link for FifoLink {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        if self.in_service.is_none() {
            self.in_service = Some((pkt, now + self.service));
            return Ok(());
        }
        if self.waiting.len() >= self.capacity {
            return Err((pkt, DropCause::Queue));
        }
        self.waiting.push_back(pkt);
        Ok(())
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        let finish = self.in_service.as_ref()?.1;
        if finish > now {
            return None;
        }
        let (pkt, at) = self.in_service.take()?;
        self.start_next(finish);
        Some(LinkOutput::Delivered { at, pkt })
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.in_service.as_ref().map(|&(_, finish)| finish)
    }
    fn queue(&self) -> QueueState {
        QueueState {
            packets: self.waiting.len() as u32,
            bytes: self.waiting.iter().map(|p| p.size as u64).sum(),
        }
    }
    fn has_room(&self, _size: u32) -> bool {
        self.in_service.is_none() || self.waiting.len() < self.capacity
    }
    fn flush(&mut self, _now: Time, out: &mut Vec<Packet>) {
        out.extend(self.in_service.take().map(|(p, _)| p));
        out.extend(self.waiting.drain(..));
    }
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        let mut kept = VecDeque::new();
        for p in self.waiting.drain(..) {
            if discard(&p) {
                out.push(p);
            } else {
                kept.push_back(p);
            }
        }
        self.waiting = kept;
    }
}

/// Hands out a fixed list of outputs, each once it is due; accepts nothing.
pub struct ScriptedLink {
    script: VecDeque<LinkOutput>,
}

impl ScriptedLink {
    pub fn new(script: Vec<LinkOutput>) -> ScriptedLink {
        ScriptedLink {
            script: script.into(),
        }
    }
}

impl Link for ScriptedLink {
    fn enqueue(&mut self, _now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        Err((pkt, DropCause::Queue))
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        if output_time(self.script.front()?) <= now {
            self.script.pop_front()
        } else {
            None
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.script.front().map(output_time)
    }
    fn queue(&self) -> QueueState {
        QueueState::default()
    }
    fn has_room(&self, _size: u32) -> bool {
        false
    }
    fn flush(&mut self, _now: Time, _out: &mut Vec<Packet>) {}
    fn discard_waiting(&mut self, _discard: &mut dyn FnMut(&Packet) -> bool, _out: &mut Vec<Packet>) {}
}
