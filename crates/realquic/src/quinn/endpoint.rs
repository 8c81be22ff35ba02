//! One end of a flow's connection run by quinn-proto: a quinn `Endpoint` with its one
//! `Connection`, driven by the simulator's calls in virtual time.
//!
//! * **Time.** Virtual time `t` is the `Instant` `base + t` ([`Clock`]). The next timeout is
//!   read back after every call that can move it.
//! * **Datagrams.** Each packet carries one QUIC datagram ([`RealDatagram`]) and is the
//!   datagram's size plus the IPv4 and UDP headers on the wire; its ECN field is quinn's (ECT(0)
//!   while quinn validates ECN, RFC 9000 §13.4) and a CE mark a queue sets reaches quinn.
//! * **Addresses.** Private to the adapter: the client is 198.18.0.1:40000, the server
//!   198.18.0.2:4433; the simulator routes by flow.
//! * **Applications.** `multiconn_app::workload` on the connection's streams (`common/proto/app.rs`),
//!   started when quinn reports the connection established; the message workload through the
//!   endpoint's stream calls (`open_stream`, `write`, `finish`, `reset_stream`,
//!   `drain_progress`).
//! * **What is not exposed.** quinn-proto 0.11.19 does not expose its bytes in flight, nor a
//!   controller's state, nor which retransmissions were spurious: the sample reports 0 in
//!   flight and no spurious retransmission, counts the packets quinn declared lost as both
//!   `lost` and `retransmissions` (quinn sends the frames of a lost packet again), and the
//!   controller state is `"unknown"`.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use multiconn_app::workload::{AppEvent, Application};
use multiconn_core::{Dur, FlowId, Packet, Payload, Time, TransportSample, IP_UDP_OVERHEAD};
use multiconn_transport::{AppError, ConnectionParams, Endpoint, Observation, Observations, Role, StreamOptions, StreamProgress};
use quinn_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn_proto::{
    ClientConfig, Connection, ConnectionHandle, DatagramEvent, EcnCodepoint, Event, ServerConfig, StreamEvent,
    TransportConfig,
};

use super::app::{AppStreams, Glue};
use super::{ecn, qlog, seeds, LABEL};
use crate::common::qlog::QlogBuffer;
use crate::common::{self, tls, Clock, SERVER};
use crate::RealDatagram;

/// The client's address, private to the adapter (its one path's).
const CLIENT: SocketAddr = common::client_address(0);

/// One end of a connection run by quinn-proto.
pub struct QuinnEndpoint {
    role: Role,
    flow: FlowId,
    clock: Clock,
    /// Client: when it connects.
    start: Time,
    endpoint: quinn_proto::Endpoint,
    conn: Option<(ConnectionHandle, Connection)>,
    /// Client: taken when it connects.
    client_config: Option<ClientConfig>,
    /// Datagrams the endpoint itself answered with (a refused connection's close).
    answers: VecDeque<(Bytes, Option<EcnCodepoint>)>,
    buf: Vec<u8>,
    timeout: Option<Time>,
    app: Application,
    streams: AppStreams,
    events: VecDeque<AppEvent>,
    /// The per-flow sequence number of the next packet.
    seq: u64,
    /// What an invariant checker sees: the byte ranges handed to the application.
    seen: Observations,
    /// quinn's qlog trace of this end, when the flow asks for one.
    qlog: Option<QlogBuffer>,
}

impl std::fmt::Debug for QuinnEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuinnEndpoint").field("role", &self.role).field("flow", &self.flow).field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl QuinnEndpoint {
    /// The client of `p`'s connection, connecting at `p.start`.
    pub(super) fn client(p: &ConnectionParams, mut transport: TransportConfig, seed: u64) -> QuinnEndpoint {
        let clock = Clock::new();
        let qlog = qlog::attach(p.qlog, &mut transport, clock.base, "client");
        let mut rng = common::seeds::stream(seed, LABEL, Role::Client);
        let endpoint = quinn_proto::Endpoint::new(Arc::new(seeds::endpoint_config(&mut rng)), None, false, None);
        let tls = QuicClientConfig::try_from(tls::client()).expect("the ring provider has QUIC's initial cipher suite");
        let mut config = ClientConfig::new(Arc::new(tls));
        config.transport_config(Arc::new(transport));
        config.initial_dst_cid_provider(seeds::initial_dcids(&mut rng));
        let mut end = QuinnEndpoint::new(Role::Client, p, clock, endpoint, Application::client(p.exchanges()), qlog);
        end.client_config = Some(config);
        end.timeout = Some(p.start);
        end
    }

    /// The server of `p`'s connection.
    pub(super) fn server(p: &ConnectionParams, mut transport: TransportConfig, seed: u64) -> QuinnEndpoint {
        let clock = Clock::new();
        let qlog = qlog::attach(p.qlog, &mut transport, clock.base, "server");
        let mut rng = common::seeds::stream(seed, LABEL, Role::Server);
        let endpoint_config = seeds::endpoint_config(&mut rng);
        let tls = QuicServerConfig::try_from(tls::server()).expect("the ring provider has QUIC's initial cipher suite");
        let mut config = ServerConfig::new(Arc::new(tls), Arc::new(super::token_key(&mut rng)));
        config.transport_config(Arc::new(transport));
        config.time_source(Arc::new(seeds::FixedClock));
        let endpoint = quinn_proto::Endpoint::new(Arc::new(endpoint_config), Some(Arc::new(config)), false, None);
        QuinnEndpoint::new(Role::Server, p, clock, endpoint, Application::server(p.exchanges()), qlog)
    }

    fn new(role: Role, p: &ConnectionParams, clock: Clock, endpoint: quinn_proto::Endpoint, app: Application, qlog: Option<QlogBuffer>) -> QuinnEndpoint {
        QuinnEndpoint {
            role,
            flow: p.flow,
            clock,
            start: p.start,
            endpoint,
            conn: None,
            client_config: None,
            answers: VecDeque::new(),
            buf: Vec::new(),
            timeout: None,
            app,
            streams: AppStreams::default(),
            events: VecDeque::new(),
            seq: 0,
            seen: Observations::default(),
            qlog,
        }
    }

    /// The peer's address.
    fn remote(&self) -> SocketAddr {
        match self.role {
            Role::Client => SERVER,
            Role::Server => CLIENT,
        }
    }

    fn local_ip(&self) -> IpAddr {
        match self.role {
            Role::Client => CLIENT.ip(),
            Role::Server => SERVER.ip(),
        }
    }

    /// Client: opens the connection (the first Initial goes with the next `poll_transmit`).
    fn connect(&mut self, now: Time) {
        let Some(config) = self.client_config.take() else { return };
        let at = self.clock.instant(now);
        let (handle, conn) = self
            .endpoint
            .connect(at, config, SERVER, tls::SERVER_NAME)
            .expect("a fresh endpoint has connection IDs and the configuration was checked");
        self.conn = Some((handle, conn));
    }

    /// After any input: the connection's requests to the endpoint and back, its events to the
    /// application, the application's writes, and the next timeout.
    fn process(&mut self, now: Time) {
        let clock = self.clock;
        let Some((handle, conn)) = &mut self.conn else {
            self.timeout = self.client_config.as_ref().map(|_| self.start);
            return;
        };
        loop {
            while let Some(ev) = conn.poll_endpoint_events() {
                if let Some(back) = self.endpoint.handle_event(*handle, ev) {
                    conn.handle_event(back);
                }
            }
            let Some(event) = conn.poll() else { break };
            match event {
                Event::Connected => {
                    let mut glue = Glue { conn, streams: &mut self.streams, events: &mut self.events };
                    self.app.on_can_send(&mut glue);
                }
                Event::Stream(StreamEvent::Opened { dir }) => {
                    self.streams.accept(conn, dir);
                    self.streams.read_all(now, conn, &mut self.app, &mut self.events, &mut self.seen);
                }
                Event::Stream(StreamEvent::Readable { id }) => self.streams.read(now, id, conn, &mut self.app, &mut self.events, &mut self.seen),
                // Writable, Finished, Stopped, Available, the handshake's data, a lost
                // connection (the flow then never completes): nothing for the applications
                // to do beyond the writes below.
                _ => {}
            }
        }
        self.streams.write(conn);
        self.timeout = conn.poll_timeout().map(|i| clock.time(i));
    }

    /// The packet that carries `datagram`.
    fn packet(&mut self, now: Time, next_id: &mut u64, datagram: Bytes, ecn: Option<EcnCodepoint>) -> Packet {
        let size = datagram.len() as u32 + IP_UDP_OVERHEAD;
        let mut pkt = Packet::new(*next_id, self.flow, size, self.seq, now).with_ecn(ecn::to_packet(ecn));
        *next_id += 1;
        self.seq += 1;
        pkt.payload = Some(Payload::new(RealDatagram(datagram)));
        pkt
    }
}

impl Endpoint for QuinnEndpoint {
    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        let Some(RealDatagram(data)) = pkt.payload.as_ref().and_then(|p| p.get::<RealDatagram>()) else { return };
        let ecn = ecn::from_packet(pkt.ecn);
        let at = self.clock.instant(now);
        let (remote, local) = (self.remote(), self.local_ip());
        self.buf.clear();
        match self.endpoint.handle(at, remote, Some(local), ecn, BytesMut::from(&data[..]), &mut self.buf) {
            Some(DatagramEvent::ConnectionEvent(handle, event)) => {
                if let Some((h, conn)) = &mut self.conn {
                    if *h == handle {
                        conn.handle_event(event);
                    }
                }
            }
            Some(DatagramEvent::NewConnection(incoming)) => {
                if self.conn.is_some() {
                    self.endpoint.ignore(incoming);
                } else {
                    self.buf.clear();
                    match self.endpoint.accept(incoming, at, &mut self.buf, None) {
                        Ok((handle, conn)) => self.conn = Some((handle, conn)),
                        Err(refused) => {
                            if let Some(t) = refused.response {
                                self.answers.push_back((Bytes::copy_from_slice(&self.buf[..t.size]), t.ecn));
                            }
                        }
                    }
                }
            }
            Some(DatagramEvent::Response(t)) => self.answers.push_back((Bytes::copy_from_slice(&self.buf[..t.size]), t.ecn)),
            None => {}
        }
        self.process(now);
    }

    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if let Some((datagram, ecn)) = self.answers.pop_front() {
            return Some(self.packet(now, next_id, datagram, ecn));
        }
        let at = self.clock.instant(now);
        let (_, conn) = self.conn.as_mut()?;
        // What the application wrote since quinn last took data.
        self.streams.write(conn);
        self.buf.clear();
        let transmit = conn.poll_transmit(at, 1, &mut self.buf);
        let out = transmit.map(|t| (Bytes::copy_from_slice(&self.buf[..t.size]), t.ecn));
        // Sending moves the timers (pacing, loss detection, the ACK delay).
        self.process(now);
        out.map(|(datagram, ecn)| self.packet(now, next_id, datagram, ecn))
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timeout
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.conn.is_none() {
            if self.role == Role::Client && now >= self.start {
                self.connect(now);
            }
        } else {
            let at = self.clock.instant(now);
            if let Some((_, conn)) = &mut self.conn {
                conn.handle_timeout(at);
            }
        }
        self.process(now);
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    fn sample(&self) -> TransportSample {
        let Some((_, conn)) = &self.conn else { return TransportSample::default() };
        let stats = conn.stats();
        TransportSample {
            cwnd: stats.path.cwnd,
            bytes_in_flight: 0,
            srtt: Dur(stats.path.rtt.as_nanos() as u64),
            retransmissions: stats.path.lost_packets,
            spurious_retransmissions: 0,
            lost: stats.path.lost_packets,
        }
    }

    fn cc_state(&self) -> &'static str {
        "unknown"
    }

    fn open_stream(&mut self, options: StreamOptions) -> Result<u64, AppError> {
        let (_, conn) = self.conn.as_mut().ok_or(AppError::Unsupported)?;
        self.streams.open(conn, options)
    }

    fn write(&mut self, stream: u64, bytes: u64) -> Result<(), AppError> {
        self.streams.append(stream, bytes)
    }

    fn finish(&mut self, stream: u64) -> Result<(), AppError> {
        self.streams.end(stream)
    }

    fn reset_stream(&mut self, stream: u64) -> Result<bool, AppError> {
        let (_, conn) = self.conn.as_mut().ok_or(AppError::UnknownStream(stream))?;
        self.streams.abandon(conn, stream)
    }

    fn drain_progress(&mut self, out: &mut Vec<StreamProgress>) {
        self.streams.drain_progress(out);
    }

    fn drain_qlog(&mut self, out: &mut Vec<String>) {
        if let Some(q) = &mut self.qlog {
            q.drain(out);
        }
    }

    fn observe(&mut self, on: bool) {
        self.seen.watch(on);
    }

    fn drain_observations(&mut self, out: &mut Vec<Observation>) {
        self.seen.drain(out);
    }
}
