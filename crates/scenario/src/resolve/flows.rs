//! Flows: each `[[flow]]` becomes a [`Flow`] — its application's settings checked against
//! its transport, its routes ([`super::routes`]), its connection ([`super::connection`]) and
//! message sources ([`super::messages`]) — and the transport model's own rules are asked of
//! the model ([`TransportFactory::check`](multiconn_transport::TransportFactory::check)).

use super::connection::{resolve_connection, ConnectionSpec};
use super::datagrams::{check_datagram_transport, resolve_datagrams};
use super::emulate::{resolve_emulate, EmulateSpec};
use super::errors::{check_name, err, FieldError};
use super::files::Files;
use super::messages::resolve_messages;
use super::links::{LinkDirection, DEFAULT_PACKET_SIZE};
use super::routes::{resolve_routes, Network, PathRoutes};
use super::tunnel_place::Tunnelled;
use crate::messages::MessageSource;
use crate::schema::{AppKind, FlowDirection, FlowSection, ScenarioFile, Transport};
use multiconn_core::units::QueueLimit;
use multiconn_core::{Bytes, Dur, FlowId, Rate, Time};
use multiconn_net::{FlowRoutes, Hop};
use multiconn_transport::{ConnectionParams, Role, TransportFactory};
use std::collections::HashMap;

/// The smallest packet a flow may take: an IPv4 and UDP header and one byte, in bytes.
const MIN_PACKET_SIZE: u64 = 29;
/// The largest IPv4 packet, in bytes.
const MAX_PACKET_SIZE: u64 = 65_535;
/// The most packets a bulk udp flow's first link may queue: the source fills the queue at
/// once, so its limit is the memory the run takes (about 100 MB at this bound).
pub const MAX_BULK_QUEUE_PACKETS: u64 = 1_000_000;

/// Every flow, in file order (names checked: valid, unique).
pub(super) fn resolve_flows(file: &ScenarioFile, net: &Network, files: &mut Files) -> Result<Vec<Flow>, FieldError> {
    let mut flows = Vec::new();
    let mut names = HashMap::new();
    for (i, f) in file.flow.iter().enumerate() {
        check_name("flow", i, &f.name)?;
        if names.insert(f.name.as_str(), i).is_some() {
            return Err(err(&["flow", &f.name, "name"], format!("two flows are named \"{}\"", f.name)));
        }
        flows.push(resolve_flow(f, file, net, files)?);
    }
    Ok(flows)
}

/// One flow, ready to run: its application, transport settings and routes.
#[derive(Debug, Clone)]
pub struct Flow {
    /// Its name (unique among flows).
    pub name: String,
    /// UDP, TCP or QUIC.
    pub transport: Transport,
    /// What the sending application does.
    pub app: AppKind,
    /// TCP/QUIC: which end of the connection sends the data (UDP flows: always `down`).
    pub direction: FlowDirection,
    /// app = "cbr": the sending rate.
    pub cbr_rate: Option<Rate>,
    /// The largest IP packet, headers included, in bytes.
    pub packet_size: u32,
    /// The payload to send, in bytes; `None`: unlimited.
    pub size: Option<u64>,
    /// When the flow starts.
    pub start: Time,
    /// UDP flows: when the source stops.
    pub stop: Option<Time>,
    /// UDP flows: the ECN field of the source's packets.
    pub ecn: multiconn_core::Ecn,
    /// Hops from `from` to `to`, in order.
    pub route: Vec<Hop>,
    /// From `to` back to `from` (ACKs, requests): the same links in the opposite direction,
    /// and a split's uplink leg where the route crosses a split.
    pub reverse_route: Vec<Hop>,
    /// Multipath flows: the routes of paths 1, 2, ... (path 0 is `route` and
    /// `reverse_route`); empty for a single-path flow.
    pub extra_paths: Vec<PathRoutes>,
    /// TCP and QUIC flows: the connection's settings.
    pub connection: Option<ConnectionSpec>,
    /// app = "messages" or "datagrams": the message sources.
    pub messages: Vec<MessageSource>,
    /// The node that sends the data (`from`) and the one that receives it (`to`).
    pub from: String,
    /// See `from`.
    pub to: String,
    /// The real stack `multiconn emulate` runs it with, if any fits.
    pub emulate: Option<EmulateSpec>,
    /// The app = "tunnel" flow whose datagrams carry its packets instead of a route.
    pub tunnel: Option<Tunnelled>,
}

impl Flow {
    /// What builds its connections: the QUIC or TCP model, or the real library of its `stack`
    /// seeded with `seed`; `None` for UDP, which has none.
    pub fn factory(&self, seed: u64) -> Option<Box<dyn TransportFactory>> {
        match self.transport {
            Transport::Udp => None,
            Transport::Tcp => Some(Box::new(multiconn_tcp::TcpFactory::new())),
            Transport::Quic => match self.connection.as_ref().and_then(|c| c.stack) {
                // Resolving checked that this build has the library.
                Some(library) => library.factory(seed),
                None => Some(Box::new(multiconn_quic::QuicFactory::new())),
            },
        }
    }

    /// The parameters its connection is built from (TCP and QUIC flows).
    pub fn connection_params(&self, flow: FlowId) -> Option<ConnectionParams> {
        let spec = self.connection.as_ref()?;
        Some(ConnectionParams {
            flow,
            start: self.start,
            workload: spec.workload,
            profile: spec.profile.clone(),
            cc: spec.cc,
            max_packet_size: self.packet_size,
            resume: spec.resume,
            address_token: spec.address_token,
            qlog: spec.qlog,
            multipath: spec.multipath.clone(),
            external_cc: None,
            external_workload: None,
            datagrams: spec.datagrams,
        })
    }

    /// The connection end at `from`, which sends the data on the forward routes: the server
    /// of a download, the client of an upload.
    pub fn sender_role(&self) -> Role {
        match self.direction {
            FlowDirection::Down => Role::Server,
            FlowDirection::Up => Role::Client,
        }
    }

    /// The route (0: forward, 1: reverse) the packets of `role`'s end take.
    pub fn route_of(&self, role: Role) -> u16 {
        u16::from(role != self.sender_role())
    }

    /// The node `role`'s end of the connection runs on.
    pub fn node_of(&self, role: Role) -> &str {
        if role == self.sender_role() {
            &self.from
        } else {
            &self.to
        }
    }

    /// The node the connection's server runs on: `from` for a download, `to` for an upload.
    pub fn server_node(&self) -> &str {
        self.node_of(Role::Server)
    }

    /// The node the connection's client runs on (it opens the connection).
    pub fn client_node(&self) -> &str {
        self.node_of(Role::Client)
    }

    /// Its routes as the network keys them: per path, forward and reverse.
    pub fn routes(&self) -> FlowRoutes {
        let paths = (0..self.path_count() as u8).map(|p| [self.hops(p, 0).to_vec(), self.hops(p, 1).to_vec()]).collect();
        FlowRoutes { name: self.name.clone(), paths }
    }

    /// Number of paths: 1 for a single-path flow.
    pub fn path_count(&self) -> usize {
        1 + self.extra_paths.len()
    }

    /// Whether it has several paths.
    pub fn is_multipath(&self) -> bool {
        !self.extra_paths.is_empty()
    }

    /// The hops of path `path`: `route` 0 from `from` to `to`, 1 back (a packet's `path` and
    /// `route`).
    pub fn hops(&self, path: u8, route: u16) -> &[Hop] {
        let (forward, reverse) = match path {
            0 => (&self.route, &self.reverse_route),
            p => {
                let p = self.extra_paths.get(p as usize - 1).unwrap_or_else(|| {
                    panic!("flow \"{}\": a packet names path {p}, but the flow has {} paths", self.name, self.path_count())
                });
                (&p.route, &p.reverse_route)
            }
        };
        if route == 0 {
            forward
        } else {
            reverse
        }
    }
}

/// One flow.
fn resolve_flow(f: &FlowSection, file: &ScenarioFile, net: &Network, files: &mut Files) -> Result<Flow, FieldError> {
    let links = net.links;
    let name = f.name.as_str();
    let path = |field: &'static str| vec!["flow", name, field];
    let packet_size = f.packet_size.unwrap_or(Bytes(DEFAULT_PACKET_SIZE as u64)).0;
    if !(MIN_PACKET_SIZE..=MAX_PACKET_SIZE).contains(&packet_size) {
        return Err(err(&path("packet_size"), format!("must lie between {MIN_PACKET_SIZE} B and {MAX_PACKET_SIZE} B (headers included), got {packet_size} B")));
    }
    check_datagram_transport(f)?;
    match (f.app, f.rate) {
        (AppKind::Cbr, _) if f.transport != Transport::Udp => {
            return Err(err(&path("app"), format!("app \"cbr\" runs over udp only; a {} flow takes app = \"bulk\" or \"requests\"", f.transport.name())))
        }
        (AppKind::Requests, _) if f.transport == Transport::Udp => {
            return Err(err(&path("app"), "app \"requests\" needs a transport with streams: transport = \"tcp\" or \"quic\""))
        }
        (AppKind::Messages, _) if f.transport != Transport::Quic => {
            return Err(err(&path("app"), format!("app \"messages\" writes each source on its own stream, which needs transport = \"quic\"; this flow is {}", f.transport.name())))
        }
        (AppKind::Requests | AppKind::Messages, Some(_)) => {
            return Err(err(&path("rate"), "only a cbr flow has a rate (a message source takes its own, in [[flow.messages]])"))
        }
        (AppKind::Datagrams, Some(_)) => return Err(err(&path("rate"), "only a cbr flow has a rate (a datagram source takes its own, in [flow.datagrams])")),
        (AppKind::Tunnel, Some(_)) => return Err(err(&path("rate"), "only a cbr flow has a rate; a tunnel carries what the flows in it send")),
        (AppKind::Cbr, None) => return Err(err(&path("rate"), "a cbr flow needs a rate, e.g. rate = \"10 Mbit/s\"")),
        (AppKind::Cbr, Some(r)) if r.bps() == 0 => return Err(err(&path("rate"), "a cbr rate must be positive")),
        (AppKind::Bulk, Some(_)) => return Err(err(&path("rate"), "only a cbr flow has a rate; a bulk flow sends as fast as the network accepts")),
        _ => {}
    }
    if f.size == Some(Bytes(0)) {
        return Err(err(&path("size"), "the size must be positive (leave it out for an unlimited flow)"));
    }
    let direction = f.direction.unwrap_or_default();
    if direction == FlowDirection::Up {
        if f.transport == Transport::Udp {
            return Err(err(&path("direction"), "a udp flow has no connection: its data always goes from `from` to `to`; direction chooses which end of a tcp or quic connection sends"));
        }
        if f.app == AppKind::Requests {
            return Err(err(&path("direction"), "app = \"requests\" is the client (`to`) asking and the server (`from`) answering; direction = \"up\" takes app = \"bulk\" (an upload) or \"messages\""));
        }
    }
    let start = Time(f.start.unwrap_or(Dur::ZERO).0);
    let stop = f.stop.map(|d| Time(d.0));
    if let Some(stop) = stop {
        if stop <= start {
            return Err(err(&path("stop"), "stop must come after start"));
        }
    }
    if f.from == f.to {
        return Err(err(&path("to"), "a flow must go to another node"));
    }
    let ecn = match &f.ecn_codepoint {
        None => multiconn_core::Ecn::NotEct,
        Some(_) if f.transport != Transport::Udp => {
            return Err(err(&path("ecn_codepoint"), format!("a {} flow's ECN follows its `ecn` setting and its controller; ecn_codepoint sets a udp source's", f.transport.name())))
        }
        Some(name) => {
            use multiconn_core::Ecn;
            super::errors::choose(&path("ecn_codepoint"), "ECN codepoint", name, &[("not_ect", Ecn::NotEct), ("ect0", Ecn::Ect0), ("ect1", Ecn::Ect1)])?
        }
    };
    let (route, reverse_route, extra_paths) = match &f.tunnel {
        Some(_) => {
            check_tunnelled(f)?;
            (Vec::new(), Vec::new(), Vec::new())
        }
        None => resolve_routes(f, file, net)?,
    };
    if f.transport == Transport::Udp && f.app == AppKind::Bulk {
        match route[0] {
            Hop::Split { .. } => {
                return Err(err(&path("route"), "a bulk udp flow is paced by its first link's queue, and a split has two: start the route with a link, or use app = \"cbr\""));
            }
            Hop::Link(d) if !links[d].model.paces_a_sender() => {
                return Err(err(&path("route"), format!("a bulk udp flow is paced by its first link's queue, and \"{}\" has none: start the route with a link, or use app = \"cbr\"", links[d].name)));
            }
            Hop::Port { .. } => {
                return Err(err(&path("route"), "a bulk udp flow is paced by its first link's queue, and a cell's RLC buffer does not pace a sender: start the route with a link, or use app = \"cbr\""));
            }
            Hop::Link(d) => check_bulk_queue(&links[d], packet_size, name)?,
        }
    }
    let mut connection = resolve_connection(f, 1 + extra_paths.len(), files)?;
    let messages = resolve_messages(f, file.run.duration)?;
    if let Some(conn) = &mut connection {
        let sender = match direction {
            FlowDirection::Down => Role::Server,
            FlowDirection::Up => Role::Client,
        };
        conn.datagrams = resolve_datagrams(f, conn, &messages, packet_size as u32, sender)?;
    }
    let emulate = resolve_emulate(f, 1 + extra_paths.len(), connection.as_ref().map(|c| c.profile.name.as_str()))?;
    let flow = Flow {
        name: f.name.clone(),
        transport: f.transport,
        app: f.app,
        direction,
        cbr_rate: f.rate,
        packet_size: packet_size as u32,
        size: f.size.map(|b| b.0),
        start,
        stop,
        ecn,
        route,
        reverse_route,
        extra_paths,
        connection,
        messages,
        from: f.from.clone(),
        to: f.to.clone(),
        emulate,
        tunnel: None,
    };
    // The transport's own rules (a controller its profile offers, MPTCP's scheduler and ACK
    // path...), asked of the model itself and mapped to the field they concern.
    if let (Some(params), Some(factory)) = (flow.connection_params(FlowId(0)), flow.factory(0)) {
        factory.check(&params).map_err(|e| {
            let mut at = vec!["flow", name];
            at.extend_from_slice(e.knob.field());
            err(&at, e.message)
        })?;
    }
    Ok(flow)
}

/// What a flow in a tunnel may not have: routes of its own, a tunnel inside, a bulk udp
/// source (paced by a first link it does not have) or a real library (the tunnel hands
/// packets to the model's endpoints).
fn check_tunnelled(f: &FlowSection) -> Result<(), FieldError> {
    let at = |field: &'static str| vec!["flow", f.name.as_str(), field];
    for (field, set) in [("route", f.route.is_some()), ("paths", f.paths.is_some()), ("multipath", f.multipath.is_some())] {
        if set {
            return Err(err(&at(field), "a flow in a tunnel takes the tunnel's paths: leave its own route, paths and multipath out"));
        }
    }
    if f.app == AppKind::Tunnel {
        return Err(err(&at("tunnel"), "a tunnel does not ride another tunnel"));
    }
    if f.transport == Transport::Udp && f.app == AppKind::Bulk {
        return Err(err(&at("app"), "a bulk udp flow is paced by its first link's queue, and a flow in a tunnel has none: use app = \"cbr\""));
    }
    if f.stack.is_some() {
        return Err(err(&at("stack"), "a flow in a tunnel runs the model's endpoints: leave stack out"));
    }
    Ok(())
}

/// A bulk udp flow fills its first link's queue at once: the queue must hold at most
/// [`MAX_BULK_QUEUE_PACKETS`] of the flow's packets.
fn check_bulk_queue(link: &LinkDirection, packet_size: u64, flow: &str) -> Result<(), FieldError> {
    let packets = match link.model.queue_limit() {
        Some(QueueLimit::Packets(n)) => n,
        Some(QueueLimit::Bytes(b)) => b.div_ceil(packet_size.max(1)),
        None => return Ok(()),
    };
    if packets <= MAX_BULK_QUEUE_PACKETS {
        return Ok(());
    }
    Err(err(
        &["link", &link.name, "queue"],
        format!(
            "the {} queue holds {packets} packets of {packet_size} B, and the bulk udp flow \"{flow}\" fills it at once: at most {MAX_BULK_QUEUE_PACKETS} packets; give a smaller queue, or use app = \"cbr\"",
            link.direction.name()
        ),
    ))
}
