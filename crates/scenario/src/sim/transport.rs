//! TCP and QUIC flows: the data sender (`from`: the server of a download, the client of an
//! upload) sends on the flow's forward routes, the receiver (`to`) on the reverse ones.
//!
//! Datagrams reaching a QUIC receiver pass its host's UDP socket buffer first; overflow is a
//! `udp_buffer` drop. After every input the endpoint is drained of packets and application
//! events, its state is recorded and its timer re-armed from its `poll_timeout`.

use crate::resolve::Flow;
use multiconn_core::{DropCause, FlowId, Packet, Recorder, Time, TransportSample};
use multiconn_engine::LazyTimer;
use multiconn_net::Network;
use multiconn_transport::{AppEvent, Endpoint, Role, TransportError, UdpSocket};

use super::hosts::{FlowDriver, Hosts};
use super::Event;

/// One TCP or QUIC connection: its two endpoints, the receiving host's UDP socket, and what
/// the applications observed.
pub struct ConnState {
    pub client: Box<dyn Endpoint>,
    pub server: Box<dyn Endpoint>,
    client_timer: LazyTimer,
    server_timer: LazyTimer,
    pub socket: Option<UdpSocket>,
    socket_timer: LazyTimer,
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
    pub qlog_server: Vec<String>,
}

impl ConnState {
    pub fn endpoint(&self, role: Role) -> &dyn Endpoint {
        match role {
            Role::Client => self.client.as_ref(),
            Role::Server => self.server.as_ref(),
        }
    }

    pub fn endpoint_mut(&mut self, role: Role) -> &mut dyn Endpoint {
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

/// The connection of a TCP or QUIC flow; `None` for UDP. The scenario was checked against
/// the transport's rules when it was resolved, so a refusal here is a bug of that check.
pub(super) fn build_connection(flow: FlowId, f: &Flow) -> Result<Option<Box<ConnState>>, TransportError> {
    let (Some(spec), Some(params), Some(factory)) = (f.connection.as_ref(), f.connection_params(flow), f.factory()) else { return Ok(None) };
    let (client, server) = factory.connect(&params)?;
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
    })))
}

impl Hosts {
    pub(super) fn conn_mut(&mut self, f: usize) -> &mut ConnState {
        match &mut self.flows[f].driver {
            FlowDriver::Transport(conn) => conn,
            FlowDriver::Udp(_) => unreachable!("transport events only concern transport flows"),
        }
    }

    pub(super) fn arm_endpoint(&mut self, f: usize, role: Role) {
        let conn = self.conn_mut(f);
        let want = conn.endpoint_mut(role).poll_timeout();
        if let Some(t) = conn.timer_mut(role).arm(want) {
            self.queue.schedule(t, Event::EndpointWake(f, role));
        }
    }

    pub(super) fn on_endpoint_wake(&mut self, net: &mut Network, f: usize, role: Role, now: Time) {
        let conn = self.conn_mut(f);
        conn.timer_mut(role).fired(now);
        let ep = conn.endpoint_mut(role);
        // A wake-up armed for an earlier deadline may find nothing due any more.
        if ep.poll_timeout().is_some_and(|t| t <= now) {
            ep.handle_timeout(now);
            self.pump(net, f, role, now);
        } else {
            self.arm_endpoint(f, role);
        }
    }

    pub(super) fn on_socket_wake(&mut self, net: &mut Network, f: usize, now: Time) {
        self.conn_mut(f).socket_timer.fired(now);
        self.read_socket(net, f, now);
    }

    /// After any input to an endpoint: sends what it wants to send, handles its application
    /// events, records its state and re-arms its timer.
    pub(super) fn pump(&mut self, net: &mut Network, f: usize, role: Role, now: Time) {
        let mut outbox = std::mem::take(&mut self.outbox);
        let flow = FlowId(f as u32);
        {
            let mut ids = self.next_packet_id;
            let ep = self.conn_mut(f).endpoint_mut(role);
            while let Some(pkt) = ep.poll_transmit(now, &mut ids) {
                outbox.push(pkt);
            }
            self.next_packet_id = ids;
        }
        let sender = self.flows[f].spec.sender_role();
        let route = self.flows[f].spec.route_of(role);
        for mut pkt in outbox.drain(..) {
            pkt.route = route;
            if role == sender {
                self.recorder.flow_sent(now, flow, pkt.size);
            }
            if let Some(pcap) = &mut self.pcap {
                pcap.sent(now, &pkt);
            }
            net.send(now, pkt, self);
        }
        self.outbox = outbox;
        let mut sender_ready = false;
        while let Some(event) = self.conn_mut(f).endpoint_mut(role).poll_event() {
            self.app_event(f, role, event, now);
            sender_ready |= role == sender && event == AppEvent::CanSend;
        }
        if role != sender && self.flows[f].messages.is_some() {
            self.read_messages(f, now);
        }
        if self.checks.is_some() {
            self.check_endpoint(f, role, now);
        }
        let FlowDriver::Transport(conn) = &mut self.flows[f].driver else { unreachable!("transport flow") };
        if role == sender {
            let ep = match role {
                Role::Client => conn.client.as_ref(),
                Role::Server => conn.server.as_ref(),
            };
            let sample = ep.sample();
            if sample != conn.last_sample {
                conn.last_sample = sample;
                self.recorder.flow_transport(now, flow, &sample);
            }
            if !conn.last_path_samples.is_empty() {
                ep.path_samples(&mut self.path_samples);
                for (path, sample) in self.path_samples.drain(..) {
                    let Some(last) = conn.last_path_samples.get_mut(path as usize) else { continue };
                    if *last != Some(sample) {
                        *last = Some(sample);
                        self.recorder.path_transport(now, flow, path, &sample);
                    }
                }
            }
        }
        match role {
            Role::Server => {
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
            self.begin_messages(net, f, now);
        }
    }

    /// The invariant checks: what `role`'s end of flow `f` noted since its last input.
    fn check_endpoint(&mut self, f: usize, role: Role, now: Time) {
        let Some(mut checks) = self.checks.take() else { return };
        self.conn_mut(f).endpoint_mut(role).drain_observations(&mut checks.scratch);
        checks.observed(f, role, now);
        self.checks = Some(checks);
    }

    /// What `role`'s application saw: the client's handshake and responses, the receiver's
    /// data, and the end of the workload at whichever end finishes it.
    fn app_event(&mut self, f: usize, role: Role, event: AppEvent, now: Time) {
        let receiver = role != self.flows[f].spec.sender_role();
        let conn = self.conn_mut(f);
        match event {
            AppEvent::CanSend => {
                if role == Role::Client {
                    conn.can_send_at.get_or_insert(now);
                }
            }
            AppEvent::Delivered { bytes } => {
                if receiver {
                    conn.first_byte_at.get_or_insert(now);
                    self.recorder.flow_delivered(now, FlowId(f as u32), bytes);
                }
            }
            AppEvent::ResponseComplete { index, .. } => {
                if receiver {
                    conn.responses.push((index, now));
                }
            }
            // A download finishes at the client, an upload at the server.
            AppEvent::Finished => {
                if receiver {
                    self.mark_done(f, now);
                }
            }
        }
    }

    /// A packet reached the end of its route: the receiver (through its UDP socket, for QUIC)
    /// or the sender.
    pub(super) fn arrive_at_endpoint(&mut self, net: &mut Network, f: usize, pkt: Packet, now: Time) {
        let sender = self.flows[f].spec.sender_role();
        if pkt.route != 0 {
            self.conn_mut(f).endpoint_mut(sender).handle_packet(now, pkt);
            self.pump(net, f, sender, now);
            return;
        }
        let receiver = other(sender);
        let conn = self.conn_mut(f);
        match conn.socket.as_mut() {
            None => {
                conn.endpoint_mut(receiver).handle_packet(now, pkt);
                self.pump(net, f, receiver, now);
            }
            Some(socket) => {
                if let Err(pkt) = socket.offer(now, pkt) {
                    self.recorder.flow_dropped(now, pkt.flow, DropCause::UdpBuffer, pkt.size, false);
                }
                self.read_socket(net, f, now);
            }
        }
    }

    /// The receiving application reads what its socket lets it read now.
    fn read_socket(&mut self, net: &mut Network, f: usize, now: Time) {
        let receiver = other(self.flows[f].spec.sender_role());
        // The endpoint is drained after every datagram, so ACKs are not bunched.
        loop {
            let conn = self.conn_mut(f);
            let Some(pkt) = conn.socket.as_mut().and_then(|s| s.poll_read(now)) else { break };
            conn.endpoint_mut(receiver).handle_packet(now, pkt);
            self.pump(net, f, receiver, now);
        }
        let conn = self.conn_mut(f);
        let want = conn.socket.as_ref().and_then(|s| s.poll_timeout());
        if let Some(t) = conn.socket_timer.arm(want) {
            self.queue.schedule(t, Event::SocketWake(f));
        }
    }
}

/// The other end of a connection.
pub fn other(role: Role) -> Role {
    match role {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    }
}
