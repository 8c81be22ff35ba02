//! The simulation world: link directions, flows and the event loop that connects them.
//!
//! Events are link wake-ups (a link's `poll_timeout` came due) and source wake-ups (a CBR
//! packet is due, or a flow starts). Same-time events fire in the order they were scheduled.
//! After every interaction with a link its timer is re-armed from `poll_timeout`, so links
//! stay sans-IO. A saturating (bulk) UDP source is refilled whenever its first link has room:
//! after each delivery or drop of that link, in round-robin order among the flows sharing it.

use crate::resolve::{Flow, LinkDirection, Resolved};
use crate::schema::AppKind;
use multiconn_app::{SourceConfig, Traffic, UdpSink, UdpSource};
use multiconn_core::{DropCause, FlowId, LinkId, Packet, Recorder, RngStream, Time};
use multiconn_engine::{EventQueue, TimerId};
use multiconn_link::delay::Delayed;
use multiconn_link::loss::Lossy;
use multiconn_link::availability::Intermittent;
use multiconn_link::queue::DropTailLink;
use multiconn_link::{Link, LinkOutput, QueueState};
use multiconn_metrics::BinnedRecorder;

#[derive(Debug, Clone, Copy)]
pub enum Event {
    LinkWake(usize),
    SourceWake(usize),
}

pub struct LinkState {
    pub spec: LinkDirection,
    link: Box<dyn Link + Send>,
    timer: Option<(Time, TimerId)>,
    last_queue: QueueState,
    /// Bulk flows whose first hop is this link.
    feeders: Vec<usize>,
    next_feeder: usize,
}

pub struct FlowState {
    pub spec: Flow,
    pub source: UdpSource,
    pub sink: UdpSink,
    pub in_flight: u64,
    timer: Option<(Time, TimerId)>,
    pub done_at: Option<Time>,
}

pub struct World {
    pub queue: EventQueue<Event>,
    pub links: Vec<LinkState>,
    pub flows: Vec<FlowState>,
    pub recorder: BinnedRecorder,
    pub end: Time,
    next_packet_id: u64,
    flows_done: usize,
}

fn build_link(spec: &LinkDirection, seed: u64) -> Box<dyn Link + Send> {
    let label = format!("link/{}/{}", spec.name, spec.direction.name());
    let base = DropTailLink::new(spec.rate.clone(), spec.queue);
    let delayed = Delayed::new(base, spec.delay.clone(), spec.reorder, RngStream::derive(seed, &format!("{label}/delay")));
    let lossy: Box<dyn Link + Send> = match &spec.loss {
        Some(model) => Box::new(Lossy::new(delayed, model.clone(), RngStream::derive(seed, &format!("{label}/loss")))),
        None => Box::new(delayed),
    };
    if spec.down.down.is_empty() {
        lossy
    } else {
        Box::new(Intermittent::new(lossy, spec.down.clone()))
    }
}

impl World {
    pub fn new(resolved: &Resolved, seed: u64) -> World {
        let mut links: Vec<LinkState> = resolved
            .links
            .iter()
            .map(|spec| LinkState {
                link: build_link(spec, seed),
                spec: spec.clone(),
                timer: None,
                last_queue: QueueState::default(),
                feeders: Vec::new(),
                next_feeder: 0,
            })
            .collect();
        let flows: Vec<FlowState> = resolved
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let traffic = match f.app {
                    AppKind::Bulk => Traffic::Bulk,
                    AppKind::Cbr => Traffic::Cbr(f.cbr_rate.expect("validated: cbr flows have a rate")),
                };
                if f.app == AppKind::Bulk {
                    links[f.route[0]].feeders.push(i);
                }
                FlowState {
                    source: UdpSource::new(SourceConfig {
                        flow: FlowId(i as u32),
                        traffic,
                        packet_size: f.packet_size,
                        start: f.start,
                        stop: f.stop,
                        size: f.size,
                    }),
                    spec: f.clone(),
                    sink: UdpSink::default(),
                    in_flight: 0,
                    timer: None,
                    done_at: None,
                }
            })
            .collect();
        let end = resolved.duration.map_or(Time::MAX, |d| Time(d.0));
        let recorder = BinnedRecorder::new(resolved.bin, flows.len(), links.len());
        let mut world = World { queue: EventQueue::new(), links, flows, recorder, end, next_packet_id: 0, flows_done: 0 };
        for f in 0..world.flows.len() {
            if world.flows[f].spec.app == AppKind::Bulk {
                // Bulk sending starts here; after that the first link's back-pressure drives it.
                let start = world.flows[f].spec.start;
                world.queue.schedule(start, Event::SourceWake(f));
            } else {
                world.arm_source(f);
            }
        }
        world
    }

    pub fn all_flows_done(&self) -> bool {
        self.flows_done == self.flows.len()
    }

    /// Fires every event due at or before `limit` (capped at the end of the run); returns
    /// whether the run is over.
    pub fn run_until(&mut self, limit: Time) -> bool {
        let limit = limit.min(self.end);
        while !self.all_flows_done() {
            let Some((now, event)) = self.queue.pop_until(limit) else { break };
            match event {
                Event::LinkWake(l) => {
                    self.links[l].timer = None;
                    self.service_link(l, now);
                }
                Event::SourceWake(f) => {
                    self.flows[f].timer = None;
                    self.service_source(f, now);
                }
            }
        }
        if self.all_flows_done() {
            return true;
        }
        if limit >= self.end {
            self.queue.advance_to(self.end);
            return true;
        }
        if self.queue.is_empty() {
            // Nothing can ever happen again (e.g. every source stopped): the run is over.
            return true;
        }
        self.queue.advance_to(limit);
        false
    }

    /// The virtual time the run has reached.
    pub fn now(&self) -> Time {
        self.queue.now()
    }

    /// When the run ended: the last event if every flow finished early, else the limit.
    pub fn end_time(&self) -> Time {
        self.queue.now()
    }

    fn arm_source(&mut self, f: usize) {
        let now = self.queue.now();
        let flow = &self.flows[f];
        // A stopping flow also wakes at its stop time, to notice that it is done.
        let stop_check = flow.spec.stop.filter(|&s| s > now && flow.done_at.is_none());
        let want = flow.source.poll_timeout(now).or(stop_check);
        let flow = &mut self.flows[f];
        if flow.timer.map(|(t, _)| Some(t)) == Some(want) {
            return;
        }
        if let Some((_, id)) = flow.timer.take() {
            self.queue.cancel(id);
        }
        if let Some(t) = want {
            flow.timer = Some((t, self.queue.schedule(t, Event::SourceWake(f))));
        }
    }

    fn arm_link(&mut self, l: usize) {
        let want = self.links[l].link.poll_timeout();
        let link = &mut self.links[l];
        if link.timer.map(|(t, _)| t) == want {
            return;
        }
        if let Some((_, id)) = link.timer.take() {
            self.queue.cancel(id);
        }
        if let Some(t) = want {
            link.timer = Some((t, self.queue.schedule(t, Event::LinkWake(l))));
        }
    }

    fn note_queue(&mut self, l: usize, now: Time) {
        let q = self.links[l].link.queue();
        if q != self.links[l].last_queue {
            self.links[l].last_queue = q;
            self.recorder.link_queue(now, LinkId(l as u32), q.packets, q.bytes);
        }
    }

    fn service_source(&mut self, f: usize, now: Time) {
        match self.flows[f].source.config().traffic {
            Traffic::Cbr(_) => {
                while let Some(pkt) = self.flows[f].source.poll_transmit(now, &mut self.next_packet_id) {
                    self.send(f, pkt, now);
                }
            }
            Traffic::Bulk => self.fill_bulk(f, now),
        }
        self.arm_source(f);
        self.check_done(f, now);
    }

    /// Keeps the first link of a saturating flow supplied while it has room.
    fn fill_bulk(&mut self, f: usize, now: Time) {
        let first = self.flows[f].spec.route[0];
        let size = self.flows[f].spec.packet_size;
        while self.flows[f].source.wants_to_send(now) && self.links[first].link.has_room(size) {
            let Some(pkt) = self.flows[f].source.poll_transmit(now, &mut self.next_packet_id) else { break };
            self.send(f, pkt, now);
        }
    }

    fn send(&mut self, f: usize, pkt: Packet, now: Time) {
        self.recorder.flow_sent(now, FlowId(f as u32), multiconn_app::payload_of(&pkt) as u32);
        self.flows[f].in_flight += 1;
        let first = self.flows[f].spec.route[0];
        self.offer(first, pkt, now);
    }

    /// Hands a packet to link `l`.
    fn offer(&mut self, l: usize, pkt: Packet, now: Time) {
        if let Err((pkt, cause)) = self.links[l].link.enqueue(now, pkt) {
            self.dropped(l, pkt, cause, now);
        }
        self.note_queue(l, now);
        self.arm_link(l);
    }

    fn dropped(&mut self, l: usize, pkt: Packet, cause: DropCause, now: Time) {
        self.recorder.link_dropped(now, LinkId(l as u32), cause, pkt.size);
        let f = pkt.flow.0 as usize;
        self.recorder.flow_dropped(now, pkt.flow, cause, pkt.size);
        self.flows[f].in_flight -= 1;
        self.check_done(f, now);
    }

    fn service_link(&mut self, l: usize, now: Time) {
        while let Some(out) = self.links[l].link.poll(now) {
            match out {
                LinkOutput::Delivered { at, mut pkt } => {
                    self.recorder.link_delivered(at, LinkId(l as u32), pkt.size);
                    pkt.hop += 1;
                    let f = pkt.flow.0 as usize;
                    match self.flows[f].spec.route.get(pkt.hop as usize).copied() {
                        Some(next) => self.offer(next, pkt, at),
                        None => self.arrive(f, pkt, at),
                    }
                }
                LinkOutput::Dropped { at, pkt, cause } => self.dropped(l, pkt, cause, at),
            }
        }
        self.note_queue(l, now);
        self.refill_feeders(l, now);
        self.arm_link(l);
    }

    /// Offers the freed room to the bulk flows that feed this link, round-robin: the flow
    /// after the last one that sent goes first.
    fn refill_feeders(&mut self, l: usize, now: Time) {
        let n = self.links[l].feeders.len();
        let start = self.links[l].next_feeder;
        for k in 0..n {
            let i = (start + k) % n;
            let f = self.links[l].feeders[i];
            let before = self.next_packet_id;
            self.fill_bulk(f, now);
            if self.next_packet_id != before {
                self.links[l].next_feeder = (i + 1) % n;
            }
            self.check_done(f, now);
        }
    }

    fn arrive(&mut self, f: usize, pkt: Packet, now: Time) {
        let payload = self.flows[f].sink.receive(now, &pkt);
        self.recorder.flow_delivered(now, pkt.flow, payload);
        self.flows[f].in_flight -= 1;
        self.check_done(f, now);
    }

    /// A flow is done when its source has finished and nothing of it is left in the network.
    fn check_done(&mut self, f: usize, now: Time) {
        let flow = &mut self.flows[f];
        if flow.done_at.is_none() && flow.in_flight == 0 && flow.source.is_finished(now) {
            flow.done_at = Some(now);
            self.flows_done += 1;
        }
    }
}
