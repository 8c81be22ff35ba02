//! One end of a flow's connection run by noq-proto: a noq `Endpoint` with its one
//! `Connection`, driven by the simulator's calls in virtual time, as quinn's adapter drives
//! quinn (`crate::quinn`), with paths.
//!
//! * **Time.** Virtual time `t` is the `Instant` `base + t` ([`Clock`]); noq only compares and
//!   subtracts the instants it is given. The next timeout is read back after every call that
//!   can move it.
//! * **Datagrams.** Each packet carries one QUIC datagram ([`RealDatagram`]) and is the
//!   datagram's size plus the IPv4 and UDP headers; its ECN field is noq's (RFC 9000 §13.4)
//!   and a CE mark a queue sets reaches noq. With several paths, the packet's path is the one
//!   its addresses name (`paths.rs`): noq chooses it, the simulator routes it.
//! * **Paths.** The client's path manager's actions ([`Endpoint::on_path_action`]) become
//!   `open_path`, `close_path` and `set_path_status` (`paths.rs`); an interface going down is
//!   not told to noq, which sees only the loss, as a real host's library would.
//! * **Applications.** `multiconn_app::workload` on the connection's streams
//!   (`common/proto/app.rs`), started when noq reports the connection established; the
//!   message workload through the endpoint's stream calls.
//! * **What is not exposed.** noq-proto 1.4.0 exposes per path its window, RTT and the packets
//!   it declared lost, not its bytes in flight nor which retransmissions were spurious: the
//!   samples report 0 in flight and no spurious retransmission, count the packets noq declared
//!   lost as both `lost` and `retransmissions`, and the controller state is `"unknown"`.

use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use multiconn_app::workload::{AppEvent, Application};
use multiconn_core::{FlowId, Packet, Payload, Time, TransportSample, IP_UDP_OVERHEAD};
use multiconn_transport::{
    AppError, ConnectionParams, Endpoint, Observation, Observations, PathAction, PathStats, Role, StreamOptions, StreamProgress,
};
use noq_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use noq_proto::{
    ClientConfig, Connection, ConnectionHandle, DatagramEvent, EcnCodepoint, Event, PathStatus, ServerConfig, StreamEvent, TransportConfig,
};

use super::app::{AppStreams, Glue};
use super::paths::Paths;
use super::token::SeededTokenKey;
use super::{ecn, qlog, seeds, LABEL};
use crate::common::qlog::QlogBuffer;
use crate::common::{self, tls, Clock, SERVER};
use crate::RealDatagram;

/// An outgoing datagram the endpoint itself answered with, and its path.
type Answer = (u8, Bytes, Option<EcnCodepoint>);

/// One end of a connection run by noq-proto.
pub struct NoqEndpoint {
    role: Role,
    flow: FlowId,
    clock: Clock,
    /// Client: when it connects.
    start: Time,
    endpoint: noq_proto::Endpoint,
    conn: Option<(ConnectionHandle, Connection)>,
    /// Client: taken when it connects.
    client_config: Option<ClientConfig>,
    /// Datagrams the endpoint itself answered with (a refused connection's close).
    answers: VecDeque<Answer>,
    buf: Vec<u8>,
    timeout: Option<Time>,
    app: Application,
    streams: AppStreams,
    events: VecDeque<AppEvent>,
    /// The per-flow sequence number of the next packet.
    seq: u64,
    /// What an invariant checker sees: the byte ranges handed to the application, the path IDs
    /// opened.
    seen: Observations,
    /// noq's qlog trace of this end, when the flow asks for one.
    qlog: Option<QlogBuffer>,
    paths: Paths,
}

impl std::fmt::Debug for NoqEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NoqEndpoint").field("role", &self.role).field("flow", &self.flow).field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl NoqEndpoint {
    /// The client of `p`'s connection, connecting at `p.start`.
    pub(super) fn client(p: &ConnectionParams, mut transport: TransportConfig, seed: u64) -> NoqEndpoint {
        let clock = Clock::new();
        let qlog = qlog::attach(p.qlog, &mut transport, clock.base, "client");
        let mut rng = common::seeds::stream(seed, LABEL, Role::Client);
        let endpoint = noq_proto::Endpoint::new(Arc::new(seeds::endpoint_config(&mut rng)), None, false);
        let tls = QuicClientConfig::try_from(tls::client()).expect("the ring provider has QUIC's initial cipher suite");
        let mut config = ClientConfig::new(Arc::new(tls));
        config.transport_config(Arc::new(transport));
        config.initial_dst_cid_provider(seeds::initial_dcids(&mut rng));
        let mut end = NoqEndpoint::new(Role::Client, p, clock, endpoint, Application::client(p.exchanges()), qlog);
        end.client_config = Some(config);
        end.timeout = Some(p.start);
        end
    }

    /// The server of `p`'s connection.
    pub(super) fn server(p: &ConnectionParams, mut transport: TransportConfig, seed: u64) -> NoqEndpoint {
        let clock = Clock::new();
        let qlog = qlog::attach(p.qlog, &mut transport, clock.base, "server");
        let mut rng = common::seeds::stream(seed, LABEL, Role::Server);
        let endpoint_config = seeds::endpoint_config(&mut rng);
        let tls = QuicServerConfig::try_from(tls::server()).expect("the ring provider has QUIC's initial cipher suite");
        let mut config = ServerConfig::new(Arc::new(tls), Arc::new(SeededTokenKey::new(&mut rng)));
        config.transport_config(Arc::new(transport));
        config.time_source(Arc::new(seeds::FixedClock));
        let endpoint = noq_proto::Endpoint::new(Arc::new(endpoint_config), Some(Arc::new(config)), false);
        NoqEndpoint::new(Role::Server, p, clock, endpoint, Application::server(p.exchanges()), qlog)
    }

    fn new(role: Role, p: &ConnectionParams, clock: Clock, endpoint: noq_proto::Endpoint, app: Application, qlog: Option<QlogBuffer>) -> NoqEndpoint {
        let paths = match &p.multipath {
            Some(mp) => Paths::new(role, mp.paths, true, &mp.opened_later),
            None => Paths::new(role, 1, false, &[]),
        };
        NoqEndpoint {
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
            paths,
        }
    }

    /// Client: opens the connection on path 0 (the first Initial goes with the next
    /// `poll_transmit`).
    fn connect(&mut self, now: Time) {
        let Some(config) = self.client_config.take() else { return };
        let at = self.clock.instant(now);
        let (handle, conn) = self
            .endpoint
            .connect(at, config, SERVER, tls::SERVER_NAME)
            .expect("a fresh endpoint has connection IDs and the configuration was checked");
        self.conn = Some((handle, conn));
        self.paths.connected(&mut self.seen);
    }

    /// After any input: the connection's requests to the endpoint and back, its events to the
    /// application and the paths, the application's writes, the paths the client still has to
    /// open, noq's counters, and the next timeout.
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
                Event::Path(ev) => self.paths.on_event(conn, ev),
                // Writable, Finished, Stopped, Available, the handshake's data, a lost
                // connection (the flow then never completes): nothing for the applications
                // to do beyond the writes below.
                _ => {}
            }
        }
        self.streams.write(conn);
        self.paths.reconcile(conn, clock.instant(now), &mut self.seen);
        self.paths.refresh(conn, &mut self.seen);
        self.timeout = conn.poll_timeout().map(|i| clock.time(i));
    }

    /// The packet that carries `datagram` on scenario path `path`.
    fn packet(&mut self, now: Time, next_id: &mut u64, (path, datagram, ecn): Answer) -> Packet {
        let size = datagram.len() as u32 + IP_UDP_OVERHEAD;
        let mut pkt = Packet::new(*next_id, self.flow, size, self.seq, now).with_ecn(ecn::to_packet(ecn));
        pkt.path = path;
        *next_id += 1;
        self.seq += 1;
        pkt.payload = Some(Payload::new(RealDatagram(datagram)));
        pkt
    }
}

impl Endpoint for NoqEndpoint {
    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        let Some(RealDatagram(data)) = pkt.payload.as_ref().and_then(|p| p.get::<RealDatagram>()) else { return };
        let at = self.clock.instant(now);
        let network_path = self.paths.network_path(pkt.path);
        self.buf.clear();
        match self.endpoint.handle(at, network_path, ecn::from_packet(pkt.ecn), BytesMut::from(&data[..]), &mut self.buf) {
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
                        Ok((handle, conn)) => {
                            self.conn = Some((handle, conn));
                            self.paths.connected(&mut self.seen);
                        }
                        Err(refused) => {
                            if let Some(t) = refused.response {
                                self.answers.push_back((pkt.path, Bytes::copy_from_slice(&self.buf[..t.size]), t.ecn));
                            }
                        }
                    }
                }
            }
            Some(DatagramEvent::Response(t)) => self.answers.push_back((pkt.path, Bytes::copy_from_slice(&self.buf[..t.size]), t.ecn)),
            None => {}
        }
        self.process(now);
    }

    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if let Some(answer) = self.answers.pop_front() {
            return Some(self.packet(now, next_id, answer));
        }
        let at = self.clock.instant(now);
        let (_, conn) = self.conn.as_mut()?;
        // What the application wrote since noq last took data.
        self.streams.write(conn);
        self.buf.clear();
        let transmit = conn.poll_transmit(at, NonZeroUsize::MIN, &mut self.buf);
        let out = transmit.map(|t| (self.paths.of_datagram(t.destination.ip(), t.src_ip), Bytes::copy_from_slice(&self.buf[..t.size]), t.ecn));
        // Sending moves the timers (pacing, loss detection, the ACK delay).
        self.process(now);
        out.map(|answer| self.packet(now, next_id, answer))
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
        self.paths.sample()
    }

    fn cc_state(&self) -> &'static str {
        "unknown"
    }

    fn on_path_action(&mut self, now: Time, action: PathAction) {
        let at = self.clock.instant(now);
        let Some((_, conn)) = &mut self.conn else { return };
        let status = |backup: bool| if backup { PathStatus::Backup } else { PathStatus::Available };
        let (path, wanted) = match action {
            PathAction::Open { path, backup, .. } => (path, Some(status(backup))),
            PathAction::Abandon { path } => (path, None),
            PathAction::SetStatus { path, backup } => (path, Some(status(backup))),
        };
        self.paths.want(conn, at, path, wanted, &mut self.seen);
        self.process(now);
    }

    fn path_stats(&self, out: &mut Vec<PathStats>) {
        self.paths.stats(out);
    }

    fn path_samples(&self, out: &mut Vec<(u8, TransportSample)>) {
        self.paths.samples(out);
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
        if on {
            self.paths.note_open(&mut self.seen);
        }
    }

    fn drain_observations(&mut self, out: &mut Vec<Observation>) {
        self.seen.drain(out);
    }
}
