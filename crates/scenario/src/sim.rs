//! The simulation world: link directions, flows and the event loop that connects them.
//!
//! Events are link wake-ups (a link's `poll_timeout` came due), UDP source wake-ups (a CBR
//! packet is due, or a flow starts), transport endpoint wake-ups (an endpoint's
//! `poll_timeout`) and socket wake-ups (the receiving application can read the next datagram).
//! Same-time events fire in the order they were scheduled. After every interaction with a
//! model its timer is re-armed from its `poll_timeout`, so models stay sans-IO.
//!
//! * UDP: a saturating (bulk) source is refilled whenever its first link has room: after each
//!   delivery or drop of that link, in round-robin order among the flows sharing it.
//! * TCP/QUIC: the server (`from`) sends on the flow's route, the client (`to`) on the reverse
//!   route. Datagrams reaching a QUIC client pass its host's UDP socket buffer first; overflow
//!   is a `udp_buffer` drop. After every input the endpoint is drained of packets and events.
//! * Multipath flows: every packet follows the route of the path its sending endpoint named
//!   (`Packet::path`; the forward or reverse route of that path by `Packet::route`). Each end
//!   watches its own interface on each path — the first link direction it sends on: the
//!   forward route's for the server, the reverse route's for the client — and is told
//!   (`Endpoint::on_path_status`) at the exact instants that link's `down` windows start and
//!   end. These events are scheduled when the world is built, so at any instant they fire
//!   before whatever else happens then.

use crate::resolve::{Flow, Hop, LinkDirection, Resolved};
use crate::split::{Arrival, SplitEntity};
use crate::schema::{AppKind, Transport};
use multiconn_app::{SourceConfig, Traffic, UdpSink, UdpSource};
use multiconn_core::{DropCause, FlowId, LinkId, Packet, Recorder, RngStream, Time, TransportSample};
use crate::messages::{MessageKind, MessageLog};
use multiconn_core::Dur;
use multiconn_multipath::{Action, LinkChange};
use multiconn_transport::{AppError, PathAction, StreamOptions};
use multiconn_transport::{AppEvent, ConnectionParams, Endpoint, Role, StreamProgress, TransportFactory, UdpSocket};
use multiconn_engine::{EventQueue, LazyTimer, TimerId};
use multiconn_link::delay::Delayed;
use multiconn_link::loss::{LossModel, Lossy};
use multiconn_link::availability::Intermittent;
use multiconn_link::queue::DropTailLink;
use multiconn_link::{Link, LinkOutput, QueueState};
use multiconn_metrics::BinnedRecorder;
use multiconn_pdcp::{Legs, RxOutcome, SplitPolicy};

#[derive(Debug, Clone, Copy)]
pub enum Event {
    LinkWake(usize),
    SourceWake(usize),
    EndpointWake(usize, Role),
    SocketWake(usize),
    SplitWake(usize),
    /// The interface of `flow`'s endpoint `role` on path `path` went down or came back up.
    PathStatus { flow: usize, role: Role, path: u8, up: bool },
    /// A message of `flow` is due at its sending application.
    MessageWake(usize),
    /// The client's path manager of `flow` acts.
    PathAction { flow: usize, action: PathAction },
}

pub struct LinkState {
    pub spec: LinkDirection,
    link: Box<dyn Link + Send>,
    timer: LazyTimer,
    last_queue: QueueState,
    /// Bulk flows whose first hop is this link.
    feeders: Vec<usize>,
    next_feeder: usize,
}

pub struct FlowState {
    pub spec: Flow,
    /// UDP flows.
    pub source: UdpSource,
    pub sink: UdpSink,
    pub in_flight: u64,
    timer: Option<(Time, TimerId)>,
    pub done_at: Option<Time>,
    /// TCP and QUIC flows.
    pub conn: Option<Box<ConnState>>,
    /// Per path, per hop of its forward route: the split entity serving it, if that hop is a
    /// split.
    pub entities: Vec<Vec<Option<usize>>>,
    /// Multipath flows: what each path carried, `[forward, reverse]`; empty otherwise.
    pub path_traffic: Vec<[PathTraffic; 2]>,
    /// app = "messages": the sources and their messages.
    pub messages: Option<MessageLog>,
    message_timer: LazyTimer,
    /// Multipath QUIC flows with a path manager: the actions it took, in order.
    pub path_actions: Vec<(Time, PathAction)>,
}

impl FlowState {
    /// The split entity at hop `hop` of path `path`'s forward route, if that hop is a split.
    fn entity(&self, path: u8, hop: u16) -> Option<usize> {
        self.entities.get(path as usize).and_then(|p| p.get(hop as usize)).copied().flatten()
    }
}

/// Packets of one direction of one path of a multipath flow, on the wire (headers included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathTraffic {
    /// Reached the end of the route (the receiving host, before its socket buffer).
    pub packets_arrived: u64,
    pub bytes_arrived: u64,
    /// Dropped on the route's links or split bearers.
    pub packets_dropped: u64,
    pub bytes_dropped: u64,
}

/// One TCP or QUIC connection: its two endpoints, the client host's UDP socket, and what the
/// applications observed.
pub struct ConnState {
    pub client: Box<dyn Endpoint>,
    pub server: Box<dyn Endpoint>,
    client_timer: LazyTimer,
    server_timer: LazyTimer,
    pub socket: Option<UdpSocket>,
    socket_timer: LazyTimer,
    /// When the client's application could first send (handshake done, or 0-RTT).
    pub can_send_at: Option<Time>,
    /// When the first response byte reached the client's application.
    pub first_byte_at: Option<Time>,
    /// Completion time of each response, in order of completion.
    pub responses: Vec<(u32, Time)>,
    pub last_sample: TransportSample,
    pub cc_state: &'static str,
    /// qlog events (JSON text, one per event) of the client and the server.
    pub qlog_client: Vec<String>,
    pub qlog_server: Vec<String>,
}

pub struct World {
    pub queue: EventQueue<Event>,
    pub links: Vec<LinkState>,
    pub flows: Vec<FlowState>,
    /// One per (split, flow crossing it).
    pub splits: Vec<SplitEntity>,
    pub split_specs: Vec<crate::resolve::Split>,
    pub recorder: BinnedRecorder,
    pub end: Time,
    next_packet_id: u64,
    flows_done: usize,
    /// Scratch space for packets an endpoint emits in one poll round.
    outbox: Vec<Packet>,
    /// Scratch space for packets a split entity passes on.
    forward: Vec<Packet>,
    /// Scratch space for the stream progress a client reports.
    progress: Vec<StreamProgress>,
}

fn build_link(spec: &LinkDirection, seed: u64) -> Box<dyn Link + Send> {
    let label = format!("link/{}/{}", spec.name, spec.direction.name());
    let base = DropTailLink::new(spec.rate.clone(), spec.queue);
    let delayed = Delayed::new(base, spec.delay.clone(), spec.reorder, RngStream::derive(seed, &format!("{label}/delay")));
    let lossy: Box<dyn Link + Send> = match &spec.loss {
        // A zero Bernoulli probability loses nothing: skip the per-packet random draw.
        Some(LossModel::Bernoulli { p }) if *p == 0.0 => Box::new(delayed),
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
                timer: LazyTimer::default(),
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
                    AppKind::Bulk | AppKind::Requests | AppKind::Messages => Traffic::Bulk,
                    AppKind::Cbr => Traffic::Cbr(f.cbr_rate.expect("validated: cbr flows have a rate")),
                };
                if f.app == AppKind::Bulk && f.connection.is_none() {
                    let Hop::Link(first) = f.route[0] else { unreachable!("validated: a bulk udp route starts with a link") };
                    links[first].feeders.push(i);
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
                    conn: build_connection(FlowId(i as u32), f),
                    entities: (0..f.path_count()).map(|p| vec![None; f.hops(p as u8, 0).len()]).collect(),
                    path_traffic: if f.is_multipath() { vec![Default::default(); f.path_count()] } else { Vec::new() },
                    messages: (f.app == AppKind::Messages).then(|| MessageLog::new(&f.messages, f.stop)),
                    message_timer: LazyTimer::default(),
                    path_actions: Vec::new(),
                }
            })
            .collect();
        let mut flows = flows;
        let mut splits = Vec::new();
        for (i, flow) in flows.iter_mut().enumerate() {
            for p in 0..flow.spec.path_count() {
                for (h, hop) in flow.spec.hops(p as u8, 0).iter().enumerate() {
                    if let Hop::Split { split, legs } = *hop {
                        flow.entities[p][h] = Some(splits.len());
                        splits.push(SplitEntity::new(split, &resolved.splits[split], i, p as u8, h, legs));
                    }
                }
            }
        }
        let end = resolved.duration.map_or(Time::MAX, |d| Time(d.0));
        let recorder = BinnedRecorder::new(resolved.bin, flows.len(), links.len());
        let mut world = World {
            queue: EventQueue::new(),
            links,
            flows,
            splits,
            split_specs: resolved.splits.clone(),
            recorder,
            end,
            next_packet_id: 0,
            flows_done: 0,
            outbox: Vec::new(),
            forward: Vec::new(),
            progress: Vec::new(),
        };
        for e in 0..world.splits.len() {
            world.arm_split(e);
        }
        for f in 0..world.flows.len() {
            world.schedule_path_status(f);
        }
        for f in 0..world.flows.len() {
            if world.flows[f].conn.is_some() {
                // The endpoints say when they start (the client's handshake at the flow's start).
                world.arm_endpoint(f, Role::Client);
                world.arm_endpoint(f, Role::Server);
            } else if world.flows[f].spec.app == AppKind::Bulk {
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
                    self.links[l].timer.fired(now);
                    self.service_link(l, now);
                }
                Event::SourceWake(f) => {
                    self.flows[f].timer = None;
                    self.service_source(f, now);
                }
                Event::EndpointWake(f, role) => {
                    let conn = self.conn_mut(f);
                    conn.timer_mut(role).fired(now);
                    let ep = conn.endpoint_mut(role);
                    // A wake-up armed for an earlier deadline may find nothing due any more.
                    if ep.poll_timeout().is_some_and(|t| t <= now) {
                        ep.handle_timeout(now);
                        self.pump(f, role, now);
                    } else {
                        self.arm_endpoint(f, role);
                    }
                }
                Event::SocketWake(f) => {
                    self.conn_mut(f).socket_timer.fired(now);
                    self.read_socket(f, now);
                }
                Event::SplitWake(e) => {
                    self.splits[e].timer.fired(now);
                    self.service_split(e, now);
                }
                Event::PathStatus { flow, role, path, up } => {
                    self.conn_mut(flow).endpoint_mut(role).on_path_status(now, path, up);
                    self.pump(flow, role, now);
                }
                Event::MessageWake(f) => {
                    self.flows[f].message_timer.fired(now);
                    self.write_messages(f, now);
                }
                Event::PathAction { flow, action } => {
                    self.flows[flow].path_actions.push((now, action));
                    self.conn_mut(flow).endpoint_mut(Role::Client).on_path_action(now, action);
                    self.pump(flow, Role::Client, now);
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
        // Nothing can ever happen again (e.g. every source stopped): the run is over, unless
        // a message flow's application may still write.
        let awaits_application = self.flows.iter().any(|f| f.messages.is_some() && f.done_at.is_none());
        if self.queue.is_empty() && !awaits_application {
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
        if let Some(t) = self.links[l].timer.arm(want) {
            self.queue.schedule(t, Event::LinkWake(l));
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
        let Hop::Link(first) = self.flows[f].spec.route[0] else { unreachable!("validated: a bulk udp route starts with a link") };
        let size = self.flows[f].spec.packet_size;
        while self.flows[f].source.wants_to_send(now) && self.links[first].link.has_room(size) {
            let Some(pkt) = self.flows[f].source.poll_transmit(now, &mut self.next_packet_id) else { break };
            self.send(f, pkt, now);
        }
    }

    fn send(&mut self, f: usize, pkt: Packet, now: Time) {
        self.recorder.flow_sent(now, FlowId(f as u32), multiconn_app::payload_of(&pkt) as u32);
        self.flows[f].in_flight += 1;
        self.enter_hop(pkt, now);
    }

    /// Hands a packet to the hop it is at (`pkt.hop`) of its path's route: a link, or a split.
    fn enter_hop(&mut self, pkt: Packet, now: Time) {
        let f = pkt.flow.0 as usize;
        match self.flows[f].spec.hops(pkt.path, pkt.route)[pkt.hop as usize] {
            Hop::Link(l) => self.offer(l, pkt, now),
            Hop::Split { .. } => {
                let e = self.flows[f].entity(pkt.path, pkt.hop).expect("every split hop has its entity");
                if let Some(pkt) = self.splits[e].enter(now, pkt) {
                    self.split_transmit(e, pkt, now);
                }
                self.arm_split(e);
            }
        }
    }

    /// A packet has crossed the hop it was at: on to the next hop, or to its destination.
    fn leave_hop(&mut self, mut pkt: Packet, now: Time) {
        pkt.hop += 1;
        let f = pkt.flow.0 as usize;
        if (pkt.hop as usize) < self.flows[f].spec.hops(pkt.path, pkt.route).len() {
            self.enter_hop(pkt, now);
        } else if self.flows[f].conn.is_some() {
            if let Some(t) = self.flows[f].path_traffic.get_mut(pkt.path as usize) {
                let t = &mut t[usize::from(pkt.route != 0)];
                t.packets_arrived += 1;
                t.bytes_arrived += u64::from(pkt.size);
            }
            self.arrive_at_endpoint(f, pkt, now);
        } else {
            self.arrive(f, pkt, now);
        }
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
        // Random loss on a split leg is transport loss the split may recover.
        let Some(pkt) = (match self.flows[f].entity(pkt.path, pkt.hop) {
            Some(e) if pkt.route == 0 && cause == DropCause::RandomLoss => {
                let leg = self.splits[e].leg_of(l);
                self.splits[e].lost_on_leg(leg, pkt)
            }
            _ => Some(pkt),
        }) else {
            return;
        };
        self.recorder.flow_dropped(now, pkt.flow, cause, pkt.size);
        self.path_dropped(f, pkt.path, pkt.route, pkt.size);
        if self.flows[f].conn.is_none() {
            self.flows[f].in_flight -= 1;
            self.check_done(f, now);
        }
    }

    /// Counts a packet of a multipath flow lost on its path.
    fn path_dropped(&mut self, f: usize, path: u8, route: u16, size: u32) {
        if let Some(t) = self.flows[f].path_traffic.get_mut(path as usize) {
            let t = &mut t[usize::from(route != 0)];
            t.packets_dropped += 1;
            t.bytes_dropped += u64::from(size);
        }
    }

    fn service_link(&mut self, l: usize, now: Time) {
        while let Some(out) = self.links[l].link.poll(now) {
            match out {
                LinkOutput::Delivered { at, pkt } => {
                    self.recorder.link_delivered(at, LinkId(l as u32), pkt.size);
                    let f = pkt.flow.0 as usize;
                    match self.flows[f].entity(pkt.path, pkt.hop) {
                        // Route 0 at a split hop: the packet came over one of its legs.
                        Some(e) if pkt.route == 0 => self.split_receive(e, l, pkt, at),
                        _ => self.leave_hop(pkt, at),
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

fn build_connection(flow: FlowId, f: &Flow) -> Option<Box<ConnState>> {
    let spec = f.connection.as_ref()?;
    let params = ConnectionParams {
        flow,
        start: f.start,
        workload: spec.workload,
        profile: spec.profile.clone(),
        cc: spec.cc,
        max_packet_size: f.packet_size,
        resume: spec.resume,
        address_token: spec.address_token,
        qlog: spec.qlog,
        multipath: spec.multipath.clone(),
    };
    let (client, server) = match f.transport {
        Transport::Quic => multiconn_quic::QuicFactory::new().connect(&params),
        Transport::Tcp => multiconn_tcp::TcpFactory::new().connect(&params),
        Transport::Udp => unreachable!("udp flows have no connection"),
    };
    Some(Box::new(ConnState {
        client,
        server,
        client_timer: LazyTimer::default(),
        server_timer: LazyTimer::default(),
        socket: spec.udp_socket.clone().map(UdpSocket::new),
        socket_timer: LazyTimer::default(),
        can_send_at: None,
        first_byte_at: None,
        responses: Vec::new(),
        last_sample: TransportSample::default(),
        cc_state: "",
        qlog_client: Vec::new(),
        qlog_server: Vec::new(),
    }))
}

impl ConnState {
    fn endpoint_mut(&mut self, role: Role) -> &mut dyn Endpoint {
        match role {
            Role::Client => self.client.as_mut(),
            Role::Server => self.server.as_mut(),
        }
    }
    fn timer_mut(&mut self, role: Role) -> &mut LazyTimer {
        match role {
            Role::Client => &mut self.client_timer,
            Role::Server => &mut self.server_timer,
        }
    }
}

impl World {
    fn conn_mut(&mut self, f: usize) -> &mut ConnState {
        self.flows[f].conn.as_deref_mut().expect("transport events only concern transport flows")
    }

    fn arm_endpoint(&mut self, f: usize, role: Role) {
        let conn = self.flows[f].conn.as_deref_mut().expect("transport flow");
        let want = conn.endpoint_mut(role).poll_timeout();
        if let Some(t) = conn.timer_mut(role).arm(want) {
            self.queue.schedule(t, Event::EndpointWake(f, role));
        }
    }

    /// Multipath flows: schedules the interface events of both ends on every path. A host's
    /// interface on a path is the first link direction it sends on (the server's forward route,
    /// the client's reverse route); a route that starts with a split has no single interface
    /// and is not watched. Back-to-back down windows are one outage.
    fn schedule_path_status(&mut self, f: usize) {
        let spec = &self.flows[f].spec;
        if !spec.is_multipath() || self.flows[f].conn.is_none() {
            return;
        }
        let mut events = Vec::new();
        let mut client_links = Vec::new();
        for path in 0..spec.path_count() as u8 {
            for (role, route) in [(Role::Server, 0), (Role::Client, 1)] {
                let Some(&Hop::Link(l)) = spec.hops(path, route).first() else { continue };
                let mut changes: Vec<(Time, bool)> = Vec::new();
                for &(from, until) in &self.links[l].spec.down.down {
                    if changes.last() == Some(&(from, true)) {
                        changes.pop();
                    } else {
                        changes.push((from, false));
                    }
                    changes.push((until, true));
                }
                if role == Role::Client {
                    client_links.extend(changes.iter().map(|&(at, up)| LinkChange { at, path: usize::from(path), up }));
                }
                events.extend(changes.into_iter().map(|(t, up)| (t, Event::PathStatus { flow: f, role, path, up })));
            }
        }
        if let Some(pm) = spec.connection.as_ref().and_then(|c| c.path_manager.as_ref()) {
            let planned = multiconn_multipath::plan(pm.config, &pm.schedule, &client_links).expect("the schedule was checked when the scenario was resolved");
            // The first openings are the connection's own (the paths open from the start).
            for p in planned.into_iter().skip(pm.opened_with_connection) {
                let path = p.path as u8;
                let action = match p.action {
                    Action::Open { path_id, backup } => PathAction::Open { path, path_id: path_id as u32, backup },
                    Action::Abandon { .. } => PathAction::Abandon { path },
                    Action::SetStatus { backup, .. } => PathAction::SetStatus { path, backup },
                };
                events.push((p.at, Event::PathAction { flow: f, action }));
            }
        }
        for (t, event) in events {
            self.queue.schedule(t, event);
        }
    }

    /// After any input to an endpoint: sends what it wants to send, handles its application
    /// events, records its state and re-arms its timer.
    fn pump(&mut self, f: usize, role: Role, now: Time) {
        let mut outbox = std::mem::take(&mut self.outbox);
        let flow = FlowId(f as u32);
        {
            let conn = self.flows[f].conn.as_deref_mut().expect("transport flow");
            let ep = conn.endpoint_mut(role);
            while let Some(pkt) = ep.poll_transmit(now, &mut self.next_packet_id) {
                outbox.push(pkt);
            }
        }
        let route = match role {
            Role::Server => 0,
            Role::Client => 1,
        };
        for mut pkt in outbox.drain(..) {
            pkt.route = route;
            pkt.hop = 0;
            if role == Role::Server {
                self.recorder.flow_sent(now, flow, pkt.size);
            }
            self.enter_hop(pkt, now);
        }
        self.outbox = outbox;
        let mut sender_ready = false;
        loop {
            let conn = self.flows[f].conn.as_deref_mut().expect("transport flow");
            let Some(event) = conn.endpoint_mut(role).poll_event() else { break };
            match role {
                Role::Client => self.client_event(f, event, now),
                Role::Server => sender_ready |= event == AppEvent::CanSend,
            }
        }
        if role == Role::Client && self.flows[f].messages.is_some() {
            self.read_messages(f, now);
        }
        let conn = self.flows[f].conn.as_deref_mut().expect("transport flow");
        match role {
            Role::Server => {
                let sample = conn.server.sample();
                conn.cc_state = conn.server.cc_state();
                if sample != conn.last_sample {
                    conn.last_sample = sample;
                    self.recorder.flow_transport(now, flow, &sample);
                }
                let q = &mut conn.qlog_server;
                conn.server.drain_qlog(q);
            }
            Role::Client => {
                let q = &mut conn.qlog_client;
                conn.client.drain_qlog(q);
            }
        }
        self.arm_endpoint(f, role);
        if sender_ready && self.flows[f].messages.is_some() {
            let flow = &mut self.flows[f];
            let log = flow.messages.as_mut().expect("checked");
            let server = flow.conn.as_deref_mut().expect("transport flow").server.as_mut();
            log.begin(now, server).expect("validated: message flows are quic, whose servers open streams");
            self.write_messages(f, now);
        }
    }

    /// The sending application of message flow `f` opens a stream of its own.
    pub fn app_open_stream(&mut self, f: usize, name: &str, kind: MessageKind, options: StreamOptions, deadline: Option<Dur>) -> Result<u64, AppError> {
        let flow = &mut self.flows[f];
        let (Some(log), Some(conn)) = (flow.messages.as_mut(), flow.conn.as_deref_mut()) else { return Err(AppError::Unsupported) };
        log.open_app_stream(conn.server.as_mut(), name, kind, options, deadline)
    }

    /// The sending application of message flow `f` writes a message of `size` bytes on its
    /// stream `stream` now; the connection sends what it can at once.
    pub fn app_write(&mut self, f: usize, stream: u64, size: u64) -> Result<u64, AppError> {
        let now = self.now();
        let flow = &mut self.flows[f];
        let (Some(log), Some(conn)) = (flow.messages.as_mut(), flow.conn.as_deref_mut()) else { return Err(AppError::Unsupported) };
        let id = log.app_write(now, conn.server.as_mut(), stream, size)?;
        self.pump(f, Role::Server, now);
        Ok(id)
    }

    /// The sending application of message flow `f` ends its stream `stream`.
    pub fn app_finish(&mut self, f: usize, stream: u64) -> Result<(), AppError> {
        let now = self.now();
        let flow = &mut self.flows[f];
        let (Some(log), Some(conn)) = (flow.messages.as_mut(), flow.conn.as_deref_mut()) else { return Err(AppError::Unsupported) };
        log.app_finish(conn.server.as_mut(), stream)?;
        self.pump(f, Role::Server, now);
        Ok(())
    }

    /// Writes the messages due now at the sending application, sends them and waits for the
    /// next.
    fn write_messages(&mut self, f: usize, now: Time) {
        let flow = &mut self.flows[f];
        let log = flow.messages.as_mut().expect("message events concern message flows");
        let server = flow.conn.as_deref_mut().expect("transport flow").server.as_mut();
        let wrote = log.write_due(now, server).expect("validated: message flows are quic, whose servers take writes");
        let want = log.next_due();
        if let Some(t) = flow.message_timer.arm(want) {
            self.queue.schedule(t, Event::MessageWake(f));
        }
        if wrote {
            self.pump(f, Role::Server, now);
        }
    }

    /// The receiving application reads what arrived of the messages; the flow is done once
    /// every source stopped and all their messages arrived.
    fn read_messages(&mut self, f: usize, now: Time) {
        let flow = &mut self.flows[f];
        let log = flow.messages.as_mut().expect("checked");
        let mut progress = std::mem::take(&mut self.progress);
        flow.conn.as_deref_mut().expect("transport flow").client.drain_progress(&mut progress);
        for p in progress.drain(..) {
            log.on_progress(&p);
        }
        self.progress = progress;
        if log.is_complete() && flow.done_at.is_none() {
            flow.done_at = Some(now);
            self.flows_done += 1;
        }
    }

    fn client_event(&mut self, f: usize, event: AppEvent, now: Time) {
        let conn = self.conn_mut(f);
        match event {
            AppEvent::CanSend => {
                conn.can_send_at.get_or_insert(now);
            }
            AppEvent::Delivered { bytes } => {
                conn.first_byte_at.get_or_insert(now);
                self.recorder.flow_delivered(now, FlowId(f as u32), bytes);
            }
            AppEvent::ResponseComplete { index, .. } => conn.responses.push((index, now)),
            AppEvent::Finished => {
                if self.flows[f].done_at.is_none() {
                    self.flows[f].done_at = Some(now);
                    self.flows_done += 1;
                }
            }
        }
    }

    /// A packet reached the end of its route: the client (through its UDP socket, for QUIC)
    /// or the server.
    fn arrive_at_endpoint(&mut self, f: usize, pkt: Packet, now: Time) {
        if pkt.route != 0 {
            self.conn_mut(f).server.handle_packet(now, pkt);
            self.pump(f, Role::Server, now);
            return;
        }
        let conn = self.conn_mut(f);
        match conn.socket.as_mut() {
            None => {
                conn.client.handle_packet(now, pkt);
                self.pump(f, Role::Client, now);
            }
            Some(socket) => {
                if let Err(pkt) = socket.offer(now, pkt) {
                    self.recorder.flow_dropped(now, pkt.flow, DropCause::UdpBuffer, pkt.size);
                }
                self.read_socket(f, now);
            }
        }
    }

    /// The client application reads what its socket lets it read now.
    fn read_socket(&mut self, f: usize, now: Time) {
        // The endpoint is drained after every datagram, so ACKs are not bunched.
        loop {
            let conn = self.conn_mut(f);
            let Some(pkt) = conn.socket.as_mut().and_then(|s| s.poll_read(now)) else { break };
            conn.client.handle_packet(now, pkt);
            self.pump(f, Role::Client, now);
        }
        let conn = self.conn_mut(f);
        let want = conn.socket.as_ref().and_then(|s| s.poll_timeout());
        if let Some(t) = conn.socket_timer.arm(want) {
            self.queue.schedule(t, Event::SocketWake(f));
        }
    }
}

/// Split bearers: numbering, the legs, reordering.
impl World {
    fn arm_split(&mut self, e: usize) {
        let want = self.splits[e].poll_timeout();
        if let Some(t) = self.splits[e].timer.arm(want) {
            self.queue.schedule(t, Event::SplitWake(e));
        }
    }

    /// Numbers a packet and sends it over its leg(s).
    fn split_transmit(&mut self, e: usize, mut pkt: Packet, now: Time) {
        let entity = &mut self.splits[e];
        match entity.tx.send(now, pkt.size) {
            Ok(pdu) => {
                entity.note_sent(pdu.count, now);
                pkt.size = pdu.size;
                pkt.lower_sn = pdu.sn;
                let legs = entity.legs;
                match pdu.legs {
                    Legs::One(i) => self.offer(legs[i], pkt, now),
                    Legs::Both => {
                        let f = pkt.flow.0 as usize;
                        if self.flows[f].conn.is_none() {
                            self.flows[f].in_flight += 1;
                        }
                        self.offer(legs[0], pkt.clone(), now);
                        self.offer(legs[1], pkt, now);
                    }
                }
            }
            Err(_) => {
                // Window full or COUNT exhausted: the proxy drops the packet.
                let f = pkt.flow.0 as usize;
                self.recorder.flow_dropped(now, pkt.flow, DropCause::PdcpWindow, pkt.size);
                self.path_dropped(f, pkt.path, pkt.route, pkt.size);
                if self.flows[f].conn.is_none() {
                    self.flows[f].in_flight -= 1;
                    self.check_done(f, now);
                }
            }
        }
    }

    /// A PDU came over leg link `l` to the receiving side of entity `e`.
    fn split_receive(&mut self, e: usize, l: usize, pkt: Packet, now: Time) {
        let mut forward = std::mem::take(&mut self.forward);
        let entity = &mut self.splits[e];
        let leg = entity.leg_of(l);
        let (flow, size, path, route) = (pkt.flow, pkt.size, pkt.path, pkt.route);
        let duplicating = matches!(entity.tx_policy(), SplitPolicy::Duplicate);
        if let Arrival::Discarded(outcome) = entity.arrive(now, leg, pkt, &mut forward) {
            let f = flow.0 as usize;
            // A late copy under duplication is the spare copy of a delivered packet, not a loss.
            if outcome == RxOutcome::Late && !duplicating {
                self.recorder.flow_dropped(now, flow, DropCause::PdcpLate, size);
                self.path_dropped(f, path, route, size);
            }
            if self.flows[f].conn.is_none() {
                self.flows[f].in_flight -= 1;
                self.check_done(f, now);
            }
        }
        self.pass_on(e, &mut forward, now);
        self.forward = forward;
    }

    fn service_split(&mut self, e: usize, now: Time) {
        while let Some(pkt) = self.splits[e].pop_numbering(now) {
            self.split_transmit(e, pkt, now);
        }
        let mut forward = std::mem::take(&mut self.forward);
        self.splits[e].service_receiver(now, &mut forward);
        if let Some(on) = self.splits[e].switch_due(now) {
            if !on {
                self.discard_copies(e, now);
            }
        }
        if self.splits[e].report_due(now) {
            let legs = self.splits[e].legs;
            let queued = legs.map(|l| self.links[l].link.queue().bytes);
            self.splits[e].report(now, queued);
            let mut resend = Vec::new();
            self.splits[e].take_retransmissions(&mut resend);
            for (leg, pkt) in resend {
                self.offer(legs[leg], pkt, now);
            }
        }
        self.pass_on(e, &mut forward, now);
        self.forward = forward;
    }

    /// Duplication was switched off: the copies of entity `e`'s PDUs still waiting on the
    /// second leg go (their twins on the first leg carry the data).
    fn discard_copies(&mut self, e: usize, now: Time) {
        let (flow, path, hop, l) = (self.splits[e].flow, self.splits[e].path, self.splits[e].hop as u16, self.splits[e].legs[1]);
        let mut gone = Vec::new();
        self.links[l].link.discard_waiting(&mut |p| p.flow.0 as usize == flow && p.path == path && p.route == 0 && p.hop == hop, &mut gone);
        self.splits[e].measures.discarded_copies += gone.len() as u64;
        if self.flows[flow].conn.is_none() {
            self.flows[flow].in_flight -= gone.len() as u64;
            self.check_done(flow, now);
        }
        self.note_queue(l, now);
    }

    /// Sends on what the receiving side of entity `e` released.
    fn pass_on(&mut self, e: usize, forward: &mut Vec<Packet>, now: Time) {
        for pkt in forward.drain(..) {
            self.leave_hop(pkt, now);
        }
        self.arm_split(e);
    }
}
