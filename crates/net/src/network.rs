//! The network: elements, routes, and how a packet moves from hop to hop.
//!
//! * A packet enters with [`Network::send`] at hop 0 of its route. At a link hop it is
//!   offered to the link (a refusal is a loss); at a split hop it enters the bearer's
//!   numbering proxy and then one leg or both.
//! * Each element asks for a wake-up when its `poll_timeout` says so ([`Driver::wake_at`]);
//!   the driver calls [`Network::handle_wake`], and the element hands out what is due: a
//!   link its deliveries and drops, a bearer its numbered PDUs, reordered SDUs, feedback
//!   reports and duplication switches (pdcp-dc.md TV20).
//! * A packet a link delivers goes on to the next hop of its route, or, at a split's leg,
//!   to that split's receiving entity, which releases it (or others) in COUNT order; past the
//!   last hop it reaches its host ([`Driver::arrived`]).
//! * Random loss on a split leg is transport loss the split may recover
//!   (`retransmit_lost`): the bearer keeps the PDU for its next report instead of losing it.
//!
//! Every packet of a flow inside the network is counted ([`Network::in_flight`]), copies
//! included, so a host knows when nothing of its flow is left on the way.
//!
//! Wake-ups use a [`LazyTimer`] per element: a new wake-up is asked for only when the element
//! wants one earlier than the pending one, so nothing is ever cancelled, and a wake-up may
//! find nothing due. An element is serviced at every wake-up (its queue sampled, its sources
//! offered room), so its timer forgets later pending wake-ups once the earliest fired
//! ([`LazyTimer::fired_forgetting_later`]), which keeps every wake-up where it always was. The order of every call into the driver, and so of every wake-up it
//! schedules, is the order of the events themselves.

use std::sync::Arc;

use multiconn_core::{BearerId, DropCause, Dur, FlowId, LinkId, Packet, QueueBin, QueueMeter, Time};
use multiconn_engine::LazyTimer;
use multiconn_link::{Link, LinkOutput, QueueState};
use multiconn_pdcp::{Arrival, LegState, Legs, PendingVolume, RxOutcome, SplitBearer, SplitBearerConfig, SplitPolicy};

use crate::driver::{Driver, Loss};
use crate::element::HopModel;
use crate::invariants::{BearerCheck, Checks, Violation};
use crate::port::{PortElement, PortModel};
use crate::route::{FlowRoutes, Hop, Leg};

/// An element of the network, as its driver names it in wake-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementId {
    /// A link direction.
    Link(usize),
    /// The split bearer of one flow's path at one split (see [`Network::bearer`]).
    Bearer(usize),
    /// A multi-port element, such as a cell (see [`Network::port_element`]).
    Port(usize),
}

/// What a network is built from.
#[derive(Debug, Clone, Default)]
pub struct NetworkSpec {
    /// Link directions and other single-port hop elements ([`Hop::Link`] indexes them): the
    /// label their random streams derive from (e.g. `link/bottleneck/forward`), and their
    /// models (a [`LinkConfig`](multiconn_link::builder::LinkConfig) for a link direction).
    pub links: Vec<(String, Arc<dyn HopModel>)>,
    /// Split bearers' settings, indexed by [`Hop::Split`]'s `split`.
    pub splits: Vec<SplitBearerConfig>,
    /// Every flow's routes, indexed by `Packet::flow`.
    pub flows: Vec<FlowRoutes>,
    /// Multi-port elements ([`Hop::Port`]'s `element` indexes them): the label their random
    /// streams derive from (e.g. `cell/lte`) and their models (a
    /// [`CellConfig`](multiconn_cell::CellConfig) for a cell).
    pub ports: Vec<(String, Arc<dyn PortModel>)>,
}

struct PortSlot {
    element: Box<dyn PortElement>,
    timer: LazyTimer,
}

struct LinkSlot {
    link: Box<dyn Link + Send>,
    timer: LazyTimer,
    /// How its queue is integrated for the driver ([`Network::record_queues`]).
    meter: Meter,
    /// The queue as last noted: an unchanged queue is not noted again, so that a change a lazy
    /// link catches up later, at an earlier instant, still counts from that instant.
    last_queue: QueueState,
    /// A sender held back by the link's room waits for its departures: wake it for each.
    watch_room: bool,
}

/// Who integrates a link direction's queue.
enum Meter {
    /// Nobody: the queue is not recorded.
    Off,
    /// The link itself, as each change happens ([`Link::keep_queue_meter`]).
    InLink,
    /// The network, from the changes the link reports.
    Here(QueueMeter),
}

/// Where a split bearer sits: which split, which flow's path, which hop of its forward route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BearerInfo {
    /// Which split (index into the network's split configurations).
    pub split: usize,
    /// Which flow.
    pub flow: usize,
    /// Which of its paths.
    pub path: u8,
    /// Which of that path's routes: 0 forward (the data direction), 1 reverse.
    pub route: u16,
    /// Which hop of that route.
    pub hop: u16,
    /// The legs, in the crossing direction.
    pub legs: [Leg; 2],
}

struct BearerSlot {
    bearer: SplitBearer,
    info: BearerInfo,
    timer: LazyTimer,
    /// The receiving entity as last reported to the driver.
    reported: RxReported,
}

/// What the driver was last told of a bearer's receiving entity: running totals of what it
/// delivered, and its buffer.
#[derive(Debug, Clone, Copy, Default)]
struct RxReported {
    sdus: u64,
    bytes: u64,
    reorder_delay: Dur,
    buffered: usize,
}

impl BearerSlot {
    /// Which of the two legs `leg` is.
    fn leg_of(&self, leg: Leg) -> usize {
        usize::from(self.info.legs[1] == leg)
    }

    /// Which of the two legs is a port of multi-port element `element`.
    fn leg_at_element(&self, element: usize) -> usize {
        usize::from(matches!(self.info.legs[1], Leg::Port { element: e, .. } if e == element))
    }
}

/// The network of one run.
pub struct Network {
    links: Vec<LinkSlot>,
    ports: Vec<PortSlot>,
    bearers: Vec<BearerSlot>,
    splits: Vec<SplitBearerConfig>,
    flows: Vec<FlowRoutes>,
    /// Per flow, per path, per hop of its forward route: the bearer serving that hop, if it is
    /// a split.
    entities: Vec<Vec<[Vec<Option<usize>>; 2]>>,
    /// Per flow: its packets inside the network, copies included.
    in_flight: Vec<u64>,
    /// Scratch space for packets a bearer releases.
    forward: Vec<Packet>,
    /// Scratch space for the queue changes a lazy link caught up.
    queue_changes: Vec<(Time, QueueState)>,
    /// Scratch space for the queue integrals handed to the driver.
    queue_bins: Vec<QueueBin>,
    /// Per link direction: the model it was built from, when known (the invariant checks'
    /// delivery floors).
    models: Vec<Option<Arc<dyn HopModel>>>,
    /// The invariant checks, when asked for ([`Network::check_invariants`]).
    checks: Option<Box<Checks>>,
}

impl Network {
    /// Builds every link from its model, its random streams derived from `seed`.
    pub fn new(spec: &NetworkSpec, seed: u64) -> Network {
        let links = spec.links.iter().map(|(label, model)| model.build(seed, label)).collect();
        let mut net = Network::with_links(links, spec.splits.clone(), spec.flows.clone());
        net.models = spec.links.iter().map(|(_, model)| Some(Arc::clone(model))).collect();
        net.ports = spec.ports.iter().map(|(label, model)| PortSlot { element: model.build(seed, label), timer: LazyTimer::default() }).collect();
        net
    }

    /// A network over links built elsewhere: any [`Link`] is an element (a test's fixed-delay
    /// wire, a trace replayer...). [`Hop::Link`] indexes `links`.
    pub fn with_links(links: Vec<Box<dyn Link + Send>>, splits: Vec<SplitBearerConfig>, flows: Vec<FlowRoutes>) -> Network {
        let links: Vec<LinkSlot> = links.into_iter().map(|link| LinkSlot { link, timer: LazyTimer::default(), meter: Meter::Off, last_queue: QueueState::default(), watch_room: false }).collect();
        let mut bearers = Vec::new();
        let mut entities = Vec::with_capacity(flows.len());
        // Bearers in order of flow, path, route (forward first) and hop.
        for (f, routes) in flows.iter().enumerate() {
            let mut per_path = Vec::with_capacity(routes.paths.len());
            for (p, both) in routes.paths.iter().enumerate() {
                let per_route = [0, 1].map(|r: usize| {
                    let mut per_hop = vec![None; both[r].len()];
                    for (h, hop) in both[r].iter().enumerate() {
                        if let Hop::Split { split, legs } = *hop {
                            per_hop[h] = Some(bearers.len());
                            let info = BearerInfo { split, flow: f, path: p as u8, route: r as u16, hop: h as u16, legs };
                            bearers.push(BearerSlot { bearer: SplitBearer::new(&splits[split]), info, timer: LazyTimer::default(), reported: RxReported::default() });
                        }
                    }
                    per_hop
                });
                per_path.push(per_route);
            }
            entities.push(per_path);
        }
        let in_flight = vec![0; flows.len()];
        let models = vec![None; links.len()];
        Network { links, ports: Vec::new(), bearers, splits, flows, entities, in_flight, forward: Vec::new(), queue_changes: Vec::new(), queue_bins: Vec::new(), models, checks: None }
    }

    /// Turns the invariant checks on (see [`crate::invariants`]); `link_names` name the link
    /// directions in messages. Call before anything is sent: a packet already inside a link
    /// would come out unaccounted for.
    pub fn check_invariants(&mut self, link_names: Vec<String>) {
        let bearers = self
            .bearers
            .iter()
            .map(|b| {
                let split = &self.splits[b.info.split];
                BearerCheck {
                    name: format!("split {}, flow {}, path {}{}", split.name, self.flows[b.info.flow].name, b.info.path, if b.info.route != 0 { " (reverse)" } else { "" }),
                    in_order: split.rx.reordering,
                    window: split.rx.sn.window(),
                }
            })
            .collect();
        for b in &mut self.bearers {
            b.bearer.watch_counts(true);
        }
        self.checks = Some(Box::new(Checks::new(link_names, self.models.clone(), bearers)));
    }

    /// Turns the invariant checks off.
    pub fn stop_checking_invariants(&mut self) {
        for b in &mut self.bearers {
            b.bearer.watch_counts(false);
        }
        self.checks = None;
    }

    /// Whether the invariant checks are on.
    pub fn checks_invariants(&self) -> bool {
        self.checks.is_some()
    }

    /// The first invariant violation seen, if the checks are on.
    pub fn violation(&self) -> Option<&Violation> {
        self.checks.as_ref().and_then(|c| c.violation())
    }

    /// The end-of-run checks (what each link still holds), at `now`; the first violation
    /// seen is then [`Network::violation`]. Nothing when the checks are off.
    pub fn check_end(&mut self, now: Time) {
        if let Some(checks) = &mut self.checks {
            let links: Vec<&dyn Link> = self.links.iter().map(|s| s.link.as_ref() as &dyn Link).collect();
            checks.finish(now, &links);
        }
    }

    /// A host sends into link direction `l` only when it has room ([`Link::has_room`]): the
    /// link is then woken at each departure, not only at each delivery, and the driver hears
    /// of it ([`Driver::link_serviced`]). Call before the run starts.
    pub fn watch_room(&mut self, l: usize) {
        self.links[l].watch_room = true;
    }

    /// Integrates every link direction's queue in bins of `width` from time zero and hands
    /// each bin to the driver ([`Driver::link_queue_bin`]) once it is over, the last one at
    /// [`Network::settle`]. A link that knows its queue's every change keeps the integral
    /// itself ([`Link::keep_queue_meter`]); the network keeps it for the others, from the
    /// changes they report. Call before anything is sent; without it no queue is recorded.
    pub fn record_queues(&mut self, width: Dur) {
        for slot in &mut self.links {
            slot.meter = if slot.link.keep_queue_meter(width) { Meter::InLink } else { Meter::Here(QueueMeter::new(width)) };
        }
    }

    /// Catches every link direction up to `now` included (the end of a run), so their
    /// queues, and what the driver was told of them, are those at `now`: the queue integrals
    /// run to `now` and are all handed out.
    pub fn settle(&mut self, now: Time, d: &mut impl Driver) {
        for l in 0..self.links.len() {
            self.links[l].link.catch_up(Time(now.0.saturating_add(1)));
            self.note_queue(l, now, d);
            let slot = &mut self.links[l];
            let meter = match &mut slot.meter {
                Meter::Off => continue,
                Meter::InLink => slot.link.queue_meter().expect("a link that keeps its meter has one"),
                Meter::Here(meter) => meter,
            };
            meter.close(now);
            Self::hand_out_bins(meter, l, &mut self.queue_bins, d);
        }
    }

    /// Hands the bins `meter` closed to the driver.
    fn hand_out_bins(meter: &mut QueueMeter, l: usize, scratch: &mut Vec<QueueBin>, d: &mut impl Driver) {
        meter.take_closed(scratch);
        for q in scratch.drain(..) {
            d.link_queue_bin(LinkId(l as u32), q);
        }
    }

    /// Asks for the first wake-up of every element that already wants one (a bearer's first
    /// feedback report or duplication switch). Call once, before anything is sent.
    pub fn start(&mut self, d: &mut impl Driver) {
        for e in 0..self.bearers.len() {
            self.arm_bearer(e, d);
        }
        // Elements with work of their own from the start (a RAN's measurements); an idle cell
        // asks for none.
        for e in 0..self.ports.len() {
            self.arm_port(e, d);
        }
    }

    /// A host sends `pkt` at `now` on the route its `flow`, `path` and `route` name.
    pub fn send(&mut self, now: Time, mut pkt: Packet, d: &mut impl Driver) {
        pkt.hop = 0;
        self.in_flight[pkt.flow.0 as usize] += 1;
        self.enter_hop(pkt, now, d);
    }

    /// A wake-up the network asked for came due.
    pub fn handle_wake(&mut self, now: Time, element: ElementId, d: &mut impl Driver) {
        match element {
            ElementId::Link(l) => {
                self.links[l].timer.fired_forgetting_later(now);
                self.service_link(l, now, d);
            }
            ElementId::Bearer(e) => {
                self.bearers[e].timer.fired_forgetting_later(now);
                self.service_bearer(e, now, d);
            }
            ElementId::Port(e) => {
                self.ports[e].timer.fired_forgetting_later(now);
                self.service_port(e, now, d);
            }
        }
    }

    /// Multi-port element `e` as its own type `T` (a cell's [`CellHop`](multiconn_cell::CellHop):
    /// its UEs' counters, RLC buffers and series); `None` if it is of another kind.
    pub fn port_element<T: 'static>(&self, e: usize) -> Option<&T> {
        self.ports.get(e).and_then(|s| s.element.as_any().downcast_ref::<T>())
    }

    /// Multi-port element `e` as its own type, to set it up before a run (a cell's series:
    /// [`CellHop::record_series`](multiconn_cell::CellHop::record_series)).
    pub fn port_element_mut<T: 'static>(&mut self, e: usize) -> Option<&mut T> {
        self.ports.get_mut(e).and_then(|s| s.element.as_any_mut().downcast_mut::<T>())
    }

    /// The number of multi-port elements.
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }

    fn arm_port(&mut self, e: usize, d: &mut impl Driver) {
        let want = self.ports[e].element.poll_timeout();
        if let Some(t) = self.ports[e].timer.arm(want) {
            d.wake_at(t, ElementId::Port(e));
        }
    }

    /// Multi-port element `e` dropped or refused `pkt`: a loss of its flow, or, at a split
    /// hop, of the split's leg there.
    fn port_lost(&mut self, e: usize, pkt: Packet, cause: DropCause, now: Time, d: &mut impl Driver) {
        let leg = self.entity(pkt.flow.0 as usize, pkt.path, pkt.route, pkt.hop).map(|b| (b, self.bearers[b].leg_at_element(e)));
        self.lost_at_hop(leg, pkt, cause, now, d);
    }

    fn service_port(&mut self, e: usize, now: Time, d: &mut impl Driver) {
        while let Some(out) = self.ports[e].element.poll(now) {
            match out {
                LinkOutput::Delivered { at, pkt } => match self.entity(pkt.flow.0 as usize, pkt.path, pkt.route, pkt.hop) {
                    // At a split hop: the packet came over one of its legs.
                    Some(b) => {
                        let leg = self.bearers[b].leg_at_element(e);
                        self.split_receive(b, leg, pkt, at, d)
                    }
                    None => self.leave_hop(pkt, at, d),
                },
                LinkOutput::Dropped { at, pkt, cause } => self.port_lost(e, pkt, cause, at, d),
            }
        }
        while let Some((at, _port, pkt)) = self.ports[e].element.poll_handed_back(now) {
            self.handed_back(e, pkt, at, d);
        }
        self.arm_port(e, d);
    }

    /// Multi-port element `e` handed `pkt` back for data recovery: at a split's leg the
    /// transmitting entity resends it on the other leg; anywhere else it is lost.
    fn handed_back(&mut self, e: usize, pkt: Packet, now: Time, d: &mut impl Driver) {
        match self.entity(pkt.flow.0 as usize, pkt.path, pkt.route, pkt.hop) {
            Some(b) => {
                let leg = self.bearers[b].leg_at_element(e);
                self.bearers[b].bearer.measures.recovered += 1;
                self.send_on_leg(b, 1 - leg, pkt, now, d);
            }
            None => self.port_lost(e, pkt, DropCause::LinkDown, now, d),
        }
    }

    /// Packets of `flow` inside the network now, copies included.
    pub fn in_flight(&self, flow: FlowId) -> u64 {
        self.in_flight[flow.0 as usize]
    }

    /// The routes of `flow`.
    pub fn routes(&self, flow: FlowId) -> &FlowRoutes {
        &self.flows[flow.0 as usize]
    }

    /// Link direction `l`, to read its queue or ask whether it has room (the back-pressure
    /// a saturating sender attached to it follows).
    pub fn link(&self, l: usize) -> &dyn Link {
        self.links[l].link.as_ref()
    }

    /// Whether link direction `l` is up at `now`, as its element tells.
    pub fn link_up(&self, l: usize, now: Time) -> bool {
        self.links[l].link.is_up(now)
    }

    /// The first instant at or after `from` at which link direction `l` goes down or comes
    /// back up, when its element knows it in advance (a scheduled outage). A host watching
    /// an interface asks for the next change each time one happens.
    pub fn next_link_change(&self, l: usize, from: Time) -> Option<Time> {
        self.links[l].link.next_change(from)
    }

    /// The number of link directions.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// The bearers serving the hops of `flow`'s path `path` (forward route), by hop.
    pub fn bearers_of(&self, flow: FlowId, path: u8) -> &[Option<usize>] {
        &self.entities[flow.0 as usize][path as usize][0]
    }

    /// The bearers serving the hops of `flow`'s path `path` on its reverse route (a split
    /// that serves the return direction too), by hop.
    pub fn reverse_bearers_of(&self, flow: FlowId, path: u8) -> &[Option<usize>] {
        &self.entities[flow.0 as usize][path as usize][1]
    }

    /// The number of split bearers ([`BearerId`]s run from 0 to this, excluded).
    pub fn bearer_count(&self) -> usize {
        self.bearers.len()
    }

    /// Split bearer `e`: its PDCP entities and measurements.
    pub fn bearer(&self, e: usize) -> &SplitBearer {
        &self.bearers[e].bearer
    }

    /// Where split bearer `e` sits.
    pub fn bearer_info(&self, e: usize) -> BearerInfo {
        self.bearers[e].info
    }

    /// The settings of split `split` (its name among them).
    pub fn split_config(&self, split: usize) -> &SplitBearerConfig {
        &self.splits[split]
    }

    /// The bearer at hop `hop` of route `route` (0 forward, anything else reverse) of flow
    /// `f`'s path `path`, if that hop is a split.
    fn entity(&self, f: usize, path: u8, route: u16, hop: u16) -> Option<usize> {
        self.entities[f].get(path as usize).and_then(|p| p[usize::from(route != 0)].get(hop as usize)).copied().flatten()
    }

    fn arm_link(&mut self, l: usize, d: &mut impl Driver) {
        let slot = &self.links[l];
        let want = if slot.watch_room { slot.link.next_departure() } else { slot.link.poll_timeout() };
        if let Some(t) = self.links[l].timer.arm(want) {
            d.wake_at(t, ElementId::Link(l));
        }
    }

    fn arm_bearer(&mut self, e: usize, d: &mut impl Driver) {
        let want = self.bearers[e].bearer.poll_timeout();
        if let Some(t) = self.bearers[e].timer.arm(want) {
            d.wake_at(t, ElementId::Bearer(e));
        }
    }

    /// Integrates link direction `l`'s queue changes since the last call (those a lazy link
    /// caught up, at their instants, then the queue at `now`) and hands the driver the bins
    /// that are over. A link keeping its own meter has integrated them already.
    fn note_queue(&mut self, l: usize, now: Time, d: &mut impl Driver) {
        let slot = &mut self.links[l];
        let meter = match &mut slot.meter {
            Meter::Off => return,
            Meter::InLink => {
                let meter = slot.link.queue_meter().expect("a link that keeps its meter has one");
                if meter.has_closed() {
                    Self::hand_out_bins(meter, l, &mut self.queue_bins, d);
                }
                return;
            }
            Meter::Here(meter) => meter,
        };
        let mut changes = std::mem::take(&mut self.queue_changes);
        slot.link.take_queue_changes(&mut changes);
        changes.push((now, slot.link.queue()));
        for (at, q) in changes.drain(..) {
            if q != slot.last_queue {
                slot.last_queue = q;
                meter.change(at, q.packets, q.bytes);
            }
        }
        self.queue_changes = changes;
        if meter.has_closed() {
            Self::hand_out_bins(meter, l, &mut self.queue_bins, d);
        }
    }

    /// Hands a packet to the hop it is at (`pkt.hop`) of its route.
    fn enter_hop(&mut self, pkt: Packet, now: Time, d: &mut impl Driver) {
        let f = pkt.flow.0 as usize;
        match self.flows[f].hops(pkt.path, pkt.route)[pkt.hop as usize] {
            Hop::Link(l) => self.offer(l, pkt, now, d),
            Hop::Port { element, port } => self.offer_port(element, port, pkt, now, d),
            Hop::Split { .. } => {
                let e = self.entity(f, pkt.path, pkt.route, pkt.hop).expect("every split hop has its bearer");
                if let Some(pkt) = self.bearers[e].bearer.enter(now, pkt) {
                    self.split_transmit(e, pkt, now, d);
                }
                self.arm_bearer(e, d);
            }
        }
    }

    /// A packet has crossed the hop it was at: on to the next hop, or to its host.
    fn leave_hop(&mut self, mut pkt: Packet, now: Time, d: &mut impl Driver) {
        pkt.hop += 1;
        let f = pkt.flow.0 as usize;
        if (pkt.hop as usize) < self.flows[f].hops(pkt.path, pkt.route).len() {
            self.enter_hop(pkt, now, d);
        } else {
            self.in_flight[f] -= 1;
            d.arrived(self, now, pkt);
        }
    }

    /// Offers a packet to link `l`.
    fn offer(&mut self, l: usize, pkt: Packet, now: Time, d: &mut impl Driver) {
        let (id, size) = (pkt.id, pkt.size);
        match self.links[l].link.enqueue(now, pkt) {
            Ok(()) => {
                if let Some(c) = &mut self.checks {
                    c.accepted(l, id, size, now);
                }
            }
            Err((pkt, cause)) => {
                if let Some(c) = &mut self.checks {
                    c.refused(l, size);
                }
                self.dropped(l, pkt, cause, now, d);
            }
        }
        self.note_queue(l, now, d);
        self.arm_link(l, d);
    }

    /// Offers a packet to port `port` of multi-port element `element`.
    fn offer_port(&mut self, element: usize, port: u32, pkt: Packet, now: Time, d: &mut impl Driver) {
        if let Err((pkt, cause)) = self.ports[element].element.enqueue(now, port, pkt) {
            self.port_lost(element, pkt, cause, now, d);
        }
        self.arm_port(element, d);
    }

    /// Offers a packet to a split's leg.
    fn offer_leg(&mut self, leg: Leg, pkt: Packet, now: Time, d: &mut impl Driver) {
        match leg {
            Leg::Link(l) => self.offer(l, pkt, now, d),
            Leg::Port { element, port } => self.offer_port(element, port, pkt, now, d),
        }
    }

    /// The bytes waiting on a split's leg: its link's queue, or what its port holds.
    fn leg_queued_bytes(&mut self, leg: Leg, now: Time, d: &mut impl Driver) -> u64 {
        match leg {
            Leg::Link(l) => {
                self.links[l].link.catch_up(now);
                self.note_queue(l, now, d);
                self.links[l].link.queue().bytes
            }
            Leg::Port { element, port } => self.ports[element].element.queued_bytes(port),
        }
    }

    /// Link `l` dropped `pkt`.
    fn dropped(&mut self, l: usize, pkt: Packet, cause: DropCause, now: Time, d: &mut impl Driver) {
        d.link_dropped(now, LinkId(l as u32), cause, pkt.size);
        let leg = self.entity(pkt.flow.0 as usize, pkt.path, pkt.route, pkt.hop).map(|e| (e, self.bearers[e].leg_of(Leg::Link(l))));
        self.lost_at_hop(leg, pkt, cause, now, d);
    }

    /// `pkt` was lost at the hop it is at: on leg `leg` of bearer `e` when `leg` is
    /// `Some((e, leg))`, where random loss is transport loss the split may recover.
    fn lost_at_hop(&mut self, leg: Option<(usize, usize)>, pkt: Packet, cause: DropCause, now: Time, d: &mut impl Driver) {
        let f = pkt.flow.0 as usize;
        if let Some((e, leg)) = leg {
            d.leg_dropped(now, BearerId(e as u32), leg as u8, cause, pkt.size);
        }
        // Random loss on a split leg is transport loss the split may recover.
        let pkt = match leg {
            Some((e, leg)) if cause == DropCause::RandomLoss => match self.bearers[e].bearer.lost_on_leg(leg, pkt) {
                Some(pkt) => pkt,
                None => return,
            },
            _ => pkt,
        };
        self.in_flight[f] -= 1;
        d.lost(self, now, Loss::of(&pkt, cause));
    }

    fn service_link(&mut self, l: usize, now: Time, d: &mut impl Driver) {
        while let Some(out) = self.links[l].link.poll(now) {
            match out {
                LinkOutput::Delivered { at, pkt } => {
                    if let Some(c) = &mut self.checks {
                        c.delivered(l, &pkt, at, now);
                    }
                    d.link_delivered(at, LinkId(l as u32), pkt.size);
                    match self.entity(pkt.flow.0 as usize, pkt.path, pkt.route, pkt.hop) {
                        // At a split hop: the packet came over one of its legs.
                        Some(e) => {
                            let leg = self.bearers[e].leg_of(Leg::Link(l));
                            self.split_receive(e, leg, pkt, at, d)
                        }
                        _ => self.leave_hop(pkt, at, d),
                    }
                }
                LinkOutput::Dropped { at, pkt, cause } => {
                    if let Some(c) = &mut self.checks {
                        c.dropped_inside(l, &pkt, at);
                    }
                    self.dropped(l, pkt, cause, at, d)
                }
            }
        }
        self.note_queue(l, now, d);
        d.link_serviced(self, now, LinkId(l as u32));
        self.arm_link(l, d);
    }

    /// Numbers a packet and sends it over its leg(s).
    fn split_transmit(&mut self, e: usize, mut pkt: Packet, now: Time, d: &mut impl Driver) {
        if matches!(self.bearers[e].bearer.tx_policy(), SplitPolicy::Threshold { .. }) {
            // The UE's own buffers, known at once: what its RLC entities (the legs' queues)
            // and its PDCP entity hold (TS 38.323 §5.2.1).
            let legs = self.bearers[e].info.legs;
            let queued = legs.map(|leg| self.leg_queued_bytes(leg, now, d));
            // The grants each leg gives, taken as its mean rate (0: unknown; a cell's varies).
            let rates_bps = legs.map(|leg| match leg {
                Leg::Link(l) => self.models[l].as_ref().map_or(0.0, |m| m.mean_bps()),
                Leg::Port { .. } => 0.0,
            });
            let pdcp = self.bearers[e].bearer.waiting_bytes();
            self.bearers[e].bearer.tx.set_pending_volume(PendingVolume { pdcp, legs: queued, rates_bps });
        }
        // A leg that takes nothing now (a released secondary cell group) leaves the PDU to
        // the other.
        for (i, leg) in self.bearers[e].info.legs.into_iter().enumerate() {
            if let Leg::Port { element, port } = leg {
                let available = self.ports[element].element.available(port);
                self.bearers[e].bearer.tx.set_leg_available(i, available);
            }
        }
        let slot = &mut self.bearers[e];
        match slot.bearer.tx.send(now, pkt.size) {
            Ok(pdu) => {
                slot.bearer.note_sent(pdu.count, now);
                pkt.size = pdu.size;
                pkt.lower_sn = pdu.sn;
                match pdu.legs {
                    Legs::One(i) => self.send_on_leg(e, i, pkt, now, d),
                    Legs::Both => {
                        self.in_flight[pkt.flow.0 as usize] += 1;
                        self.send_on_leg(e, 0, pkt.clone(), now, d);
                        self.send_on_leg(e, 1, pkt, now, d);
                    }
                }
            }
            Err(_) => {
                // Window full or COUNT exhausted: the proxy drops the packet.
                self.in_flight[pkt.flow.0 as usize] -= 1;
                d.bearer_dropped(now, BearerId(e as u32), DropCause::PdcpWindow, pkt.size);
                d.lost(self, now, Loss::of(&pkt, DropCause::PdcpWindow));
            }
        }
    }

    /// Bearer `e`'s transmitting entity sends `pkt` on its leg `leg`: to the leg now, or after
    /// the transport delay to the leg's node.
    fn send_on_leg(&mut self, e: usize, leg: usize, pkt: Packet, now: Time, d: &mut impl Driver) {
        if let Some(pkt) = self.bearers[e].bearer.toward_leg(now, leg, pkt) {
            let legs = self.bearers[e].info.legs;
            self.offer_leg(legs[leg], pkt, now, d);
        }
    }

    /// A PDU came over leg `leg` (0 or 1) from the receiving side of bearer `e`: it reaches the
    /// receiving entity now, or after the transport delay from the leg's node.
    fn split_receive(&mut self, e: usize, leg: usize, pkt: Packet, now: Time, d: &mut impl Driver) {
        if let Some(pkt) = self.bearers[e].bearer.from_leg(now, leg, pkt) {
            self.split_arrive(e, leg, pkt, now, d);
        }
    }

    /// A PDU reaches the receiving entity of bearer `e` from leg `leg`.
    fn split_arrive(&mut self, e: usize, leg: usize, pkt: Packet, now: Time, d: &mut impl Driver) {
        let mut forward = std::mem::take(&mut self.forward);
        let slot = &mut self.bearers[e];
        d.leg_arrived(now, BearerId(e as u32), leg as u8, pkt.size);
        let late = Loss::of(&pkt, DropCause::PdcpLate);
        let duplicating = matches!(slot.bearer.tx_policy(), SplitPolicy::Duplicate);
        let arrival = slot.bearer.arrive(now, leg, pkt, &mut forward);
        self.check_released(e, now);
        self.report_receiver(e, now, d);
        if let Arrival::Discarded(outcome) = arrival {
            self.in_flight[late.flow.0 as usize] -= 1;
            // A late copy under duplication is the spare copy of a delivered packet, not a loss.
            if outcome == RxOutcome::Late && !duplicating {
                d.bearer_dropped(now, BearerId(e as u32), DropCause::PdcpLate, late.size);
                d.lost(self, now, late);
            } else {
                d.absorbed(self, now, late.flow);
            }
        }
        self.pass_on(e, &mut forward, now, d);
        self.forward = forward;
    }

    fn service_bearer(&mut self, e: usize, now: Time, d: &mut impl Driver) {
        while let Some(pkt) = self.bearers[e].bearer.pop_numbering(now) {
            self.split_transmit(e, pkt, now, d);
        }
        let legs = self.bearers[e].info.legs;
        while let Some((leg, pkt)) = self.bearers[e].bearer.pop_toward_leg(now) {
            self.offer_leg(legs[leg], pkt, now, d);
        }
        while let Some((at, leg, pkt)) = self.bearers[e].bearer.pop_from_leg(now) {
            self.split_arrive(e, leg, pkt, at, d);
        }
        let mut forward = std::mem::take(&mut self.forward);
        self.bearers[e].bearer.service_receiver(now, &mut forward);
        self.check_released(e, now);
        self.report_receiver(e, now, d);
        if self.bearers[e].bearer.switch_due(now) == Some(false) {
            self.discard_copies(e, now, d);
        }
        if self.bearers[e].bearer.report_due(now) {
            // The legs' queues (a link's, or a cell bearer's RLC buffer) and, from a cell leg,
            // TS 38.425's delivery status: how much its RLC buffer can take, holds, and the
            // highest PDCP SN it confirmed; a link says nothing of these.
            let states = legs.map(|leg| {
                let queued_bytes = self.leg_queued_bytes(leg, now, d);
                match leg {
                    Leg::Link(_) => LegState { queued_bytes, ..LegState::default() },
                    Leg::Port { element, port } => {
                        let el = &self.ports[element].element;
                        LegState { queued_bytes, desired_bytes: el.room_bytes(port), buffer_bytes: el.buffer_bytes(port), confirmed_sn: el.confirmed_sn(port) }
                    }
                }
            });
            self.bearers[e].bearer.report(now, states);
            let mut resend = Vec::new();
            self.bearers[e].bearer.take_retransmissions(&mut resend);
            for (leg, pkt) in resend {
                self.send_on_leg(e, leg, pkt, now, d);
            }
        }
        self.pass_on(e, &mut forward, now, d);
        self.forward = forward;
    }

    /// Duplication was switched off: the copies of bearer `e`'s PDUs still waiting on the
    /// second leg go (their twins on the first leg carry the data).
    fn discard_copies(&mut self, e: usize, now: Time, d: &mut impl Driver) {
        let BearerInfo { flow, path, route, hop, legs, .. } = self.bearers[e].info;
        // A cell's RLC holds its copies as SDUs in its buffer: the scenario refuses duplication
        // switched off over a cell leg.
        let Leg::Link(l) = legs[1] else { return };
        let mut gone = Vec::new();
        self.links[l].link.catch_up(now);
        self.links[l].link.discard_waiting(&mut |p| p.flow.0 as usize == flow && p.path == path && p.route == route && p.hop == hop, &mut gone);
        if let Some(c) = &mut self.checks {
            c.discarded(l, &gone, now);
        }
        self.bearers[e].bearer.measures.discarded_copies += gone.len() as u64;
        self.in_flight[flow] -= gone.len() as u64;
        d.absorbed(self, now, FlowId(flow as u32));
        self.note_queue(l, now, d);
    }

    /// The invariant checks: the COUNTs bearer `e`'s receiving entity just delivered upwards.
    fn check_released(&mut self, e: usize, now: Time) {
        if let Some(c) = &mut self.checks {
            self.bearers[e].bearer.take_released_counts(&mut c.counts);
            c.bearer_released(e, now);
        }
    }

    /// Tells the driver what the receiving entity of bearer `e` delivered, and how full its
    /// buffer is, since it was last told.
    fn report_receiver(&mut self, e: usize, now: Time, d: &mut impl Driver) {
        let slot = &mut self.bearers[e];
        let (rx, m) = (&slot.bearer.rx, &slot.bearer.measures);
        let now_state = RxReported { sdus: rx.stats().delivered, bytes: m.delivered_bytes, reorder_delay: m.reorder_delay_sum, buffered: rx.buffered() };
        let was = std::mem::replace(&mut slot.reported, now_state);
        let id = BearerId(e as u32);
        if now_state.sdus != was.sdus {
            d.bearer_delivered(now, id, now_state.sdus - was.sdus, now_state.bytes - was.bytes, now_state.reorder_delay - was.reorder_delay);
        }
        if now_state.buffered != was.buffered {
            d.bearer_buffer(now, id, now_state.buffered as u32);
        }
    }

    /// Sends on what the receiving side of bearer `e` released.
    fn pass_on(&mut self, e: usize, forward: &mut Vec<Packet>, now: Time, d: &mut impl Driver) {
        for pkt in forward.drain(..) {
            self.leave_hop(pkt, now, d);
        }
        self.arm_bearer(e, d);
    }
}
