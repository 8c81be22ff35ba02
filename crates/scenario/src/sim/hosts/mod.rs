//! The hosts: every flow's two ends, as the network's [`Driver`].
//!
//! A flow is driven either by a UDP source and sink ([`UdpFlow`]) or by a pair of transport
//! endpoints ([`ConnState`]); [`FlowDriver`] says which, so no flow carries the other's
//! state. The network calls back here when a packet reaches the end of its route, is lost,
//! or when a link was serviced (the saturating UDP sources attached to it may send); the
//! binned recorder gets every flow and link count.
//!
//! Everything the hosts do is here, in this module and its parts, one per kind of flow:
//! [`udp`] (sources and sinks), [`transport`] (TCP and QUIC endpoints), [`paths`] (the path
//! events of multipath flows) and [`app`] (message applications). The network's callbacks
//! re-enter the hosts (a packet's arrival may make an endpoint send), so that behaviour needs
//! the hosts as a whole; the state of one flow (`crate::sim::udp::UdpFlow`,
//! `crate::sim::transport::ConnState`, `crate::sim::paths`) is in modules of its own that
//! know nothing of the hosts.

use crate::messages::MessageLog;
use crate::resolve::{Flow, Resolved};
use crate::schema::AppKind;
use multiconn_core::{FlowId, LinkId, Packet, Recorder, Time, TransportSample};
use multiconn_engine::{EventQueue, LazyTimer};
use multiconn_metrics::BinnedRecorder;
use multiconn_net::{Driver, ElementId, Hop, Loss, Network};
use multiconn_transport::{PathAction, StreamProgress, TransportError};

mod app;
mod paths;
mod transport;
mod tunnel;
mod udp;

use super::invariants::HostChecks;
use super::paths::{ClientPathManager, PathTraffic};
use super::transport::ConnState;
use super::tunnel::TunnelState;
use super::udp::UdpFlow;
use super::Event;

/// What drives a flow's traffic.
pub enum FlowDriver {
    /// A UDP source at `from` and a sink at `to`.
    Udp(Box<UdpFlow>),
    /// A TCP or QUIC connection: the server at `from`, the client at `to`.
    Transport(Box<ConnState>),
}

/// One flow of the run: its resolved spec, what drives it, and what it recorded.
pub struct FlowState {
    /// The flow as resolved from the scenario.
    pub spec: Flow,
    /// Its UDP source and sink, or its TCP or QUIC connection.
    pub driver: FlowDriver,
    /// When it finished (`None` while it runs).
    pub done_at: Option<Time>,
    /// Multipath flows: what each path carried, `[forward, reverse]`; empty otherwise.
    pub path_traffic: Vec<[PathTraffic; 2]>,
    /// app = "messages" or "datagrams": the sources and their messages.
    pub messages: Option<MessageLog>,
    pub(super) message_timer: LazyTimer,
    /// Multipath QUIC flows with a path manager: the actions it took, in order.
    pub path_actions: Vec<(Time, PathAction)>,
    /// Multipath QUIC flows with a path manager: the client's.
    pub(super) path_manager: Option<ClientPathManager>,
    /// app = "tunnel": the flows it carries and what became of their packets.
    pub tunnel: Option<Box<TunnelState>>,
}

impl FlowState {
    /// The connection of a TCP or QUIC flow.
    pub fn conn(&self) -> Option<&ConnState> {
        match &self.driver {
            FlowDriver::Transport(conn) => Some(conn),
            FlowDriver::Udp(_) => None,
        }
    }

    /// The connection of a TCP or QUIC flow, to replace an endpoint (tests script their own).
    pub fn conn_mut(&mut self) -> Option<&mut ConnState> {
        match &mut self.driver {
            FlowDriver::Transport(conn) => Some(conn),
            FlowDriver::Udp(_) => None,
        }
    }

    /// The source and sink of a UDP flow.
    pub fn udp(&self) -> Option<&UdpFlow> {
        match &self.driver {
            FlowDriver::Udp(udp) => Some(udp),
            FlowDriver::Transport(_) => None,
        }
    }
}

/// The flows' ends, their clock and their records.
pub struct Hosts {
    /// The event queue: the run's clock.
    pub queue: EventQueue<Event>,
    /// Every enabled flow, in file order (index = the flow's id).
    pub flows: Vec<FlowState>,
    /// The time-series recorder, binned at `run.bin`.
    pub recorder: BinnedRecorder,
    /// The time limit: `run.duration`, or `Time::MAX` when the run ends only when its flows finish.
    pub end: Time,
    pub(super) next_packet_id: u64,
    flows_done: usize,
    /// Per link direction: the saturating UDP flows whose first hop it is, and which of them
    /// the freed room goes to first.
    pub(super) feeders: Vec<Feeders>,
    /// Scratch space for packets an endpoint emits in one poll round.
    pub(super) outbox: Vec<Packet>,
    /// Scratch space for the stream progress a client reports.
    pub(super) progress: Vec<StreamProgress>,
    /// Scratch space for what the transports tell of datagrams.
    pub(super) datagram_events: Vec<multiconn_transport::DatagramEvent>,
    /// Scratch space for the per-path states a multipath sender reports.
    pub(super) path_samples: Vec<(u8, TransportSample)>,
    /// The invariant checks of the endpoints, when on.
    pub(super) checks: Option<Box<HostChecks>>,
    /// The packet captures, when the run makes them (`run.pcap`): told of every packet a
    /// host sends and of every packet that reaches one; observe-only.
    pub pcap: Option<Box<crate::pcap::Capture>>,
}

/// The bulk UDP flows feeding one link direction, served round-robin.
#[derive(Debug, Clone, Default)]
pub(super) struct Feeders {
    pub(super) flows: Vec<usize>,
    pub(super) next: usize,
}

impl Hosts {
    /// The hosts of every flow, recording the series of the network's `bearers` split bearers
    /// too, their random streams derived from the run's `seed`; fails only if a transport refuses a connection the scenario's validation accepted.
    pub fn new(resolved: &Resolved, bearers: usize, seed: u64) -> Result<Hosts, TransportError> {
        let mut feeders = vec![Feeders::default(); resolved.links.len()];
        let flows = resolved
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let id = FlowId(i as u32);
                let driver = match super::transport::build_connection(id, f, seed)? {
                    Some(conn) => FlowDriver::Transport(conn),
                    None => {
                        let mut line_bps = 0.0;
                        if f.app == AppKind::Bulk {
                            let Hop::Link(first) = f.route[0] else { unreachable!("validated: a bulk udp route starts with a link") };
                            feeders[first].flows.push(i);
                            line_bps = resolved.links[first].model.mean_bps();
                        }
                        FlowDriver::Udp(Box::new(UdpFlow::new(id, f, line_bps)))
                    }
                };
                Ok(FlowState {
                    spec: f.clone(),
                    driver,
                    done_at: None,
                    path_traffic: if f.is_multipath() { vec![Default::default(); f.path_count()] } else { Vec::new() },
                    messages: matches!(f.app, AppKind::Messages | AppKind::Datagrams).then(|| MessageLog::new(&f.messages, f.stop)),
                    message_timer: LazyTimer::default(),
                    path_actions: Vec::new(),
                    path_manager: None,
                    tunnel: (f.app == AppKind::Tunnel).then(|| {
                        let carried = resolved.flows.iter().enumerate().filter(|(_, g)| g.tunnel.as_ref().is_some_and(|p| p.flow == i)).map(|(g, _)| g).collect();
                        Box::new(TunnelState::new(carried))
                    }),
                })
            })
            .collect::<Result<Vec<FlowState>, TransportError>>()?;
        let end = resolved.duration.map_or(Time::MAX, |d| Time(d.0));
        // Per-path series for the flows with more than one path.
        let paths: Vec<usize> = flows.iter().map(|f| if f.spec.is_multipath() { f.spec.path_count() } else { 0 }).collect();
        let recorder = BinnedRecorder::new(resolved.bin, flows.len(), resolved.links.len()).with_paths(&paths).with_bearers(bearers);
        Ok(Hosts {
            queue: EventQueue::new(),
            flows,
            recorder,
            end,
            next_packet_id: 0,
            flows_done: 0,
            feeders,
            outbox: Vec::new(),
            progress: Vec::new(),
            datagram_events: Vec::new(),
            path_samples: Vec::new(),
            checks: None,
            pcap: resolved.pcap.as_ref().map(|spec| Box::new(crate::pcap::Capture::new(spec, &resolved.flows))),
        })
    }

    /// Schedules what the hosts do first: the path events of multipath flows, then each
    /// flow's start.
    pub(super) fn start(&mut self, net: &Network) {
        for f in 0..self.flows.len() {
            self.watch_paths(net, f);
        }
        for f in 0..self.flows.len() {
            match &self.flows[f].driver {
                FlowDriver::Transport(_) => {
                    // The endpoints say when they start (the client's handshake at the flow's
                    // start).
                    self.arm_endpoint(f, multiconn_transport::Role::Client);
                    self.arm_endpoint(f, multiconn_transport::Role::Server);
                }
                FlowDriver::Udp(_) if self.flows[f].spec.app == AppKind::Bulk => {
                    // Bulk sending starts here; after that the first link's back-pressure
                    // drives it.
                    let start = self.flows[f].spec.start;
                    self.queue.schedule(start, Event::SourceWake(f));
                }
                FlowDriver::Udp(_) => self.arm_source(f),
            }
        }
    }

    /// Whether every flow is done.
    pub fn all_flows_done(&self) -> bool {
        self.flows_done == self.flows.len()
    }

    /// Flow `f` is done at `now` (once).
    pub(super) fn mark_done(&mut self, f: usize, now: Time) {
        if self.flows[f].done_at.is_none() {
            self.flows[f].done_at = Some(now);
            self.flows_done += 1;
            self.tunnelled_done(f, now);
        }
    }
}

impl Driver for Hosts {
    fn recorder(&mut self) -> Option<&mut dyn Recorder> {
        Some(&mut self.recorder)
    }

    fn wake_at(&mut self, at: Time, element: ElementId) {
        self.queue.schedule(at, Event::Net(element));
    }

    fn arrived(&mut self, net: &mut Network, now: Time, pkt: Packet) {
        if let Some(pcap) = &mut self.pcap {
            pcap.arrived(now, &pkt);
        }
        let f = pkt.flow.0 as usize;
        match self.flows[f].driver {
            FlowDriver::Transport(_) => {
                self.path_arrived(f, &pkt, now);
                self.arrive_at_endpoint(net, f, pkt, now);
            }
            FlowDriver::Udp(_) => self.arrive_at_sink(net, f, pkt, now),
        }
    }

    fn lost(&mut self, net: &Network, now: Time, loss: Loss) {
        self.recorder.flow_dropped(now, loss.flow, loss.cause, loss.size, loss.route != 0);
        let f = loss.flow.0 as usize;
        self.path_dropped(f, &loss, now);
        self.check_done(net, f, now);
    }

    fn absorbed(&mut self, net: &Network, now: Time, flow: FlowId) {
        self.check_done(net, flow.0 as usize, now);
    }

    fn link_serviced(&mut self, net: &mut Network, now: Time, link: LinkId) {
        self.refill_feeders(net, link.0 as usize, now);
    }
}
