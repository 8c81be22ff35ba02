//! TCP and QUIC flows: the data sender (`from`: the server of a download, the client of an
//! upload) sends on the flow's forward routes, the receiver (`to`) on the reverse ones.
//!
//! Datagrams reaching a QUIC receiver pass its host's UDP socket buffer first; overflow is a
//! `udp_buffer` drop. After every input the endpoint is drained of packets and application
//! events, its state is recorded and its timer re-armed from its `poll_timeout`. When the
//! flow's host model adds timing noise (`multiconn_transport::host`), each endpoint's process
//! is a FIFO server that every packet it sends or receives passes through, and its timers fire
//! late.

use crate::resolve::Flow;
use std::collections::VecDeque;

use multiconn_core::{FlowId, Packet, RngStream, Time, TransportSample};
use multiconn_engine::LazyTimer;
use multiconn_transport::{Endpoint, HostCpu, Role, TransportError, UdpSocket};

/// One TCP or QUIC connection: its two endpoints, the receiving host's UDP socket, and what
/// the applications observed.
pub struct ConnState {
    /// The client's endpoint (at `to` for a download, `from` for an upload).
    pub client: Box<dyn Endpoint>,
    /// The server's endpoint.
    pub server: Box<dyn Endpoint>,
    pub(super) client_timer: LazyTimer,
    pub(super) server_timer: LazyTimer,
    /// QUIC: the receiving host's UDP socket buffer (`None` for TCP).
    pub socket: Option<UdpSocket>,
    pub(super) socket_timer: LazyTimer,
    /// When the client's application could first send (handshake done, or 0-RTT).
    pub can_send_at: Option<Time>,
    /// When the first data byte reached the receiving application.
    pub first_byte_at: Option<Time>,
    /// Completion time of each response, in order of completion.
    pub responses: Vec<(u32, Time)>,
    /// The data sender's last transport sample (what the time series last recorded).
    pub last_sample: TransportSample,
    /// Multipath flows: the data sender's last sample on each path (what the path's time
    /// series last recorded); empty for single-path flows.
    pub last_path_samples: Vec<Option<TransportSample>>,
    /// qlog events (JSON text, one per event) of the client and the server.
    pub qlog_client: Vec<String>,
    /// The server's qlog events.
    pub qlog_server: Vec<String>,
    /// The processes the endpoints run in, when the flow's host model adds timing noise
    /// (`multiconn_transport::host`): client's, then server's.
    pub(super) hosts: Option<Box<[HostProcess; 2]>>,
}

/// What an endpoint's process has to do, in order.
pub(super) enum HostWork {
    /// A packet the endpoint sent, to put on the wire.
    Send(Packet),
    /// A packet that reached the host, to hand to the endpoint.
    Receive(Packet),
}

/// An endpoint's process: its CPU, the work waiting for it (with the instant each item is
/// done) and the wake-up armed for the first.
pub(super) struct HostProcess {
    pub(super) cpu: HostCpu,
    pub(super) work: VecDeque<(Time, HostWork)>,
    pub(super) timer: LazyTimer,
    /// The endpoint's last timer deadline and when it fires.
    pub(super) last_timer: Option<(Time, Time)>,
}

impl HostProcess {
    /// When a timer the endpoint wants at `want` fires: late by a fresh draw whenever the
    /// deadline changes, by the same lateness while it stays.
    pub(super) fn late(&mut self, want: Time) -> Time {
        match self.last_timer {
            Some((w, at)) if w == want => at,
            _ => {
                let at = want + self.cpu.timer_lateness();
                self.last_timer = Some((want, at));
                at
            }
        }
    }
}

fn role_index(role: Role) -> usize {
    match role {
        Role::Client => 0,
        Role::Server => 1,
    }
}

impl ConnState {
    /// The endpoint in `role`.
    pub fn endpoint(&self, role: Role) -> &dyn Endpoint {
        match role {
            Role::Client => self.client.as_ref(),
            Role::Server => self.server.as_ref(),
        }
    }

    /// The endpoint in `role`, to hand it input or poll it.
    pub fn endpoint_mut(&mut self, role: Role) -> &mut dyn Endpoint {
        match role {
            Role::Client => self.client.as_mut(),
            Role::Server => self.server.as_mut(),
        }
    }

    /// The process of the endpoint in `role`, if the flow models its host's timing noise.
    pub(super) fn host_mut(&mut self, role: Role) -> Option<&mut HostProcess> {
        self.hosts.as_mut().map(|h| &mut h[role_index(role)])
    }

    pub(super) fn timer_mut(&mut self, role: Role) -> &mut LazyTimer {
        match role {
            Role::Client => &mut self.client_timer,
            Role::Server => &mut self.server_timer,
        }
    }
}

/// The connection of a TCP or QUIC flow; `None` for UDP. The scenario was checked against
/// the transport's rules when it was resolved, so a refusal here is a bug of that check.
pub(super) fn build_connection(flow: FlowId, f: &Flow, seed: u64) -> Result<Option<Box<ConnState>>, TransportError> {
    // A real library's random choices come from the run's seed, each flow its own stream.
    let library_seed = RngStream::derive(seed, &format!("flow/{}/stack", f.name)).next_u64();
    let (Some(spec), Some(params), Some(factory)) = (f.connection.as_ref(), f.connection_params(flow), f.factory(library_seed)) else { return Ok(None) };
    let (client, server) = factory.connect(&params)?;
    let process = |role: &str| {
        HostCpu::new(spec.profile.host, RngStream::derive(seed, &format!("flow/{}/{role}/host", f.name)))
            .map(|cpu| HostProcess { cpu, work: VecDeque::new(), timer: LazyTimer::default(), last_timer: None })
    };
    let hosts = match (process("client"), process("server")) {
        (Some(c), Some(s)) => Some(Box::new([c, s])),
        _ => None,
    };
    Ok(Some(Box::new(ConnState {
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
        last_path_samples: if f.is_multipath() { vec![None; f.path_count()] } else { Vec::new() },
        qlog_client: Vec::new(),
        qlog_server: Vec::new(),
        hosts,
    })))
}


/// The other end of a connection.
pub fn other(role: Role) -> Role {
    role.peer()
}
