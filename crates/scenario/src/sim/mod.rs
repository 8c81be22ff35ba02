//! The simulation world: the network, the hosts at the ends of its routes, and the one event
//! queue that drives both.
//!
//! The network ([`multiconn_net::Network`]) moves packets across links and split bearers; the
//! hosts ([`Hosts`]) are the flows' ends — UDP sources and sinks ([`udp`]), TCP and QUIC
//! endpoints ([`transport`]), the applications writing messages ([`app`]) and the path events
//! of multipath flows ([`paths`]). Both are sans-IO; this module owns their clock.
//!
//! Events are network wake-ups (an element's `poll_timeout` came due), UDP source wake-ups (a
//! CBR packet is due, or a flow starts), transport endpoint wake-ups (an endpoint's
//! `poll_timeout`), socket wake-ups (the receiving application can read the next datagram),
//! message wake-ups, and the path status and path manager events of multipath flows.
//! Same-time events fire in the order they were scheduled. After every interaction with a
//! model its timer is re-armed from its `poll_timeout`, so models stay sans-IO.
//!
//! With the invariant checker on ([`invariants`]), the first violation ends the run, and the
//! network's end-of-run counts are checked when the run is over.

pub mod app;
pub mod hosts;
pub mod invariants;
pub mod paths;
pub mod transport;
pub mod tunnel;
pub mod udp;
pub mod watchdog;

pub use hosts::{FlowDriver, FlowState, Hosts};
pub use invariants::InvariantViolation;
pub use paths::PathTraffic;
pub use transport::ConnState;
pub use udp::UdpFlow;
pub use watchdog::{Stall, Watchdog, DEFAULT_STALL_LIMIT};

use crate::resolve::Resolved;
use multiconn_core::{Packet, Time};
use multiconn_engine::EventQueue;
use multiconn_net::{Driver, ElementId, Network, Violation};
use multiconn_transport::{Role, TransportError};

use invariants::HostChecks;

/// An event of the world's queue: which model's wake-up came due.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// The network asked to be woken for one of its elements.
    Net(ElementId),
    /// The source of a UDP flow (by index) has something due: its start, a CBR packet, its stop.
    SourceWake(usize),
    /// The timer of a TCP or QUIC flow's endpoint (flow index, client or server) came due.
    EndpointWake(usize, Role),
    /// The receiving application of a QUIC flow (by index) can read its socket's next datagram.
    SocketWake(usize),
    /// The process of a TCP or QUIC flow's endpoint is done with the packet at the head of its
    /// work (the host model's timing noise).
    HostWork(usize, Role),
    /// The interface of `flow`'s endpoint `role` on path `path` goes down or comes back up
    /// (the network tells which).
    PathStatus {
        /// The flow's index.
        flow: usize,
        /// Which endpoint's interface: the client's or the server's.
        role: Role,
        /// The path's index in the flow's `paths`.
        path: u8,
    },
    /// A message of `flow` is due at its sending application.
    MessageWake(usize),
    /// The client's path manager of the flow acts.
    PathManager(usize),
}

impl Event {
    /// What the event is, for the watchdog's message.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Net(ElementId::Link(_)) => "a link wake-up",
            Event::Net(ElementId::Bearer(_)) => "a split bearer wake-up",
            Event::Net(ElementId::Port(_)) => "a multi-port element's wake-up (a cell's)",
            Event::SourceWake(_) => "a UDP source wake-up",
            Event::EndpointWake(..) => "an endpoint timer",
            Event::SocketWake(_) => "a socket buffer wake-up",
            Event::HostWork(..) => "an endpoint's process",
            Event::PathStatus { .. } => "an interface change",
            Event::MessageWake(_) => "a message due",
            Event::PathManager(_) => "a path manager action",
        }
    }
}

/// The rank of the network's first wake-ups, asked for while the world is built: at their
/// instant they fire before everything else, the path events included.
pub(crate) const START_RANK: u64 = 0;

/// The hosts as the driver of [`Network::start`], which only asks for wake-ups.
struct Starting<'a>(&'a mut Hosts);

impl Driver for Starting<'_> {
    fn wake_at(&mut self, at: Time, element: ElementId) {
        self.0.queue.schedule_ranked(at, START_RANK, Event::Net(element));
    }
    fn arrived(&mut self, _net: &mut Network, _now: Time, _pkt: Packet) {
        unreachable!("nothing is sent before the world is built")
    }
}

/// The network and its hosts.
pub struct World {
    /// The links, split bearers and cells that carry the packets.
    pub net: Network,
    /// The flows' ends, the event queue and the time-series recorder.
    pub hosts: Hosts,
    /// The link directions as the scenario names them (index = [`multiconn_net::Hop::Link`]).
    pub links: Vec<crate::resolve::LinkDirection>,
    /// The cells as the scenario names them (index = [`multiconn_net::Hop::Port`]'s `element`:
    /// the cells are the network's multi-port elements, in file order).
    pub cells: Vec<crate::resolve::Cell>,
    /// Ends the run when virtual time stops advancing.
    pub watchdog: Watchdog,
    /// Set when the watchdog stopped the run.
    pub stalled: Option<Stall>,
    /// `run.measure_from`: where the steady-state goodputs start counting.
    pub measure_from: Option<Time>,
    /// Set when the invariant checker found a violation (the run then ended).
    violated: bool,
    /// Whether the end-of-run invariant checks were made.
    end_checked: bool,
}

impl World {
    /// The world of a resolved scenario; fails only if a transport refuses a connection the
    /// scenario's validation accepted.
    pub fn new(resolved: &Resolved, seed: u64) -> Result<World, TransportError> {
        let mut net = Network::new(&resolved.network_spec(), seed);
        let mut hosts = Hosts::new(resolved, net.bearer_count(), seed)?;
        net.record_queues(hosts.recorder.bin_width());
        for c in 0..net.port_count() {
            if let Some(cell) = net.port_element_mut::<multiconn_cell::CellHop>(c) {
                cell.record_series(hosts.recorder.bin_width().0);
            }
        }
        for (l, feeders) in hosts.feeders.iter().enumerate() {
            if !feeders.flows.is_empty() {
                net.watch_room(l);
            }
        }
        net.start(&mut Starting(&mut hosts));
        hosts.start(&net);
        Ok(World {
            net,
            hosts,
            links: resolved.links.clone(),
            cells: resolved.cells.clone(),
            watchdog: Watchdog::new(DEFAULT_STALL_LIMIT),
            stalled: None,
            measure_from: resolved.measure_from.map(|d| Time(d.0)),
            violated: false,
            end_checked: false,
        })
    }

    /// Turns the invariant checker on or off ([`invariants`]). Turn it on before anything is
    /// sent (a packet already inside a link would come out unaccounted for).
    pub fn check_invariants(&mut self, on: bool) {
        for f in &mut self.hosts.flows {
            if let Some(conn) = f.conn_mut() {
                conn.client.observe(on);
                conn.server.observe(on);
            }
        }
        if on {
            let names = self.links.iter().map(|l| format!("link {} ({} -> {})", l.name, l.from, l.to)).collect();
            self.net.check_invariants(names);
            self.hosts.checks = Some(Box::new(HostChecks::new(self.hosts.flows.iter().map(|f| f.spec.name.clone()))));
        } else {
            self.net.stop_checking_invariants();
            self.hosts.checks = None;
        }
    }

    /// Whether the invariant checker is on.
    pub fn checks_invariants(&self) -> bool {
        self.hosts.checks.is_some()
    }

    /// The first invariant violation the checker saw (the earlier of the network's and the
    /// hosts' when both saw one at the same event).
    pub fn violation(&self) -> Option<&Violation> {
        match (self.net.violation(), self.hosts.checks.as_ref().and_then(|c| c.violation())) {
            (Some(a), Some(b)) => Some(if b.at < a.at { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// Whether every flow is done.
    pub fn all_flows_done(&self) -> bool {
        self.hosts.all_flows_done()
    }

    /// Fires every event due at or before `limit` (capped at the end of the run); returns
    /// whether the run is over. With the invariant checker on, a violation ends the run, and
    /// the end-of-run checks are made once it is over.
    pub fn run_until(&mut self, limit: Time) -> bool {
        self.run_until_budget(limit, u64::MAX)
    }

    /// [`World::run_until`], returning `false` early once `max_events` events have fired
    /// (virtual time is then that of the last one; the next call goes on from there). The
    /// events and their order are the same however a run is cut.
    pub fn run_until_budget(&mut self, limit: Time, max_events: u64) -> bool {
        let over = self.advance(limit, max_events);
        if over && !self.end_checked && self.checks_invariants() {
            self.end_checked = true;
            let now = self.now();
            self.net.check_end(now);
        }
        over
    }

    fn advance(&mut self, limit: Time, max_events: u64) -> bool {
        if self.stalled.is_some() || self.violated {
            return true;
        }
        let checking = self.checks_invariants();
        let World { net, hosts, watchdog, stalled, violated, .. } = self;
        let limit = limit.min(hosts.end);
        let mut budget = max_events;
        while !hosts.all_flows_done() {
            if budget == 0 {
                // Cut short: the events due up to `limit` are not all fired yet.
                return false;
            }
            let Some((now, event)) = hosts.queue.pop_until(limit) else { break };
            budget -= 1;
            if let Some(stall) = watchdog.fired(now, event.kind()) {
                *stalled = Some(stall);
                return true;
            }
            match event {
                Event::Net(element) => net.handle_wake(now, element, hosts),
                Event::SourceWake(f) => hosts.on_source_wake(net, f, now),
                Event::EndpointWake(f, role) => hosts.on_endpoint_wake(net, f, role, now),
                Event::SocketWake(f) => hosts.on_socket_wake(net, f, now),
                Event::HostWork(f, role) => hosts.on_host_work(net, f, role, now),
                Event::PathStatus { flow, role, path } => hosts.on_path_status(net, flow, role, path, now),
                Event::MessageWake(f) => hosts.on_message_wake(net, f, now),
                Event::PathManager(flow) => hosts.on_path_manager(net, flow, now),
            }
            if checking && (net.violation().is_some() || hosts.checks.as_ref().is_some_and(|c| c.violation().is_some())) {
                *violated = true;
                return true;
            }
        }
        if hosts.all_flows_done() {
            return true;
        }
        if limit >= hosts.end {
            hosts.queue.advance_to(hosts.end);
            return true;
        }
        // Nothing can ever happen again (e.g. every source stopped): the run is over, unless
        // a message flow's application may still write.
        let awaits_application = hosts.flows.iter().any(|f| f.messages.is_some() && f.done_at.is_none());
        if hosts.queue.is_empty() && !awaits_application {
            return true;
        }
        hosts.queue.advance_to(limit);
        false
    }

    /// Catches the network up to the end of the run, so that what the recorder was told of
    /// the links' queues runs to the end (call once the run is over, before reporting).
    pub fn settle(&mut self) {
        let end = self.end_time();
        self.net.settle(end, &mut self.hosts);
    }

    /// The virtual time the run has reached.
    pub fn now(&self) -> Time {
        self.hosts.queue.now()
    }

    /// When the run ended: the last event if every flow finished early, else the limit.
    pub fn end_time(&self) -> Time {
        self.hosts.queue.now()
    }

    /// The event queue (its clock and how many events fired).
    pub fn queue(&self) -> &EventQueue<Event> {
        &self.hosts.queue
    }
}
