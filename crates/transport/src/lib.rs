//! multiconn-transport: what the TCP and QUIC models share.
//!
//! * [`Endpoint`]: the sans-IO interface of one end of a connection. The simulator hands it
//!   packets and timer expiries and polls it for packets to send, the time it next needs
//!   attention and application events.
//! * [`Workload`]: what the applications at the two ends do (a download, or requests and
//!   responses over several streams) and [`AppEvent`]: what they observe. The applications
//!   themselves, the same for every transport, are `multiconn_app::workload`'s; a
//!   workload from outside the built-in set comes in [`ConnectionParams::external_workload`].
//! * [`profile`]: implementation profiles (`aioquic`, `ngtcp2`, `linux-tcp`, ...) as data.
//! * [`udp_socket`]: the receiving host's UDP socket buffer, counted as Linux counts it.
//! * [`host`]: the timing noise of an endpoint's process (per-packet CPU time, late timers),
//!   off unless a profile or flow sets it.
//! * [`observe`]: what an endpoint lets an invariant checker see (in-order deliveries, path
//!   IDs opened).
//!
//! Roles: the *client* opens the connection and asks; the *server* answers. In a scenario the
//! flow's `from` node is the server (the data sender) and `to` the client.

pub mod host;
pub mod observe;
pub mod profile;
pub mod udp_socket;

use std::sync::Arc;

pub use multiconn_app::datagrams::{DatagramEvent, DatagramOptions};
pub use multiconn_app::streams::{AppError, OpenStreams, StreamOptions, StreamProgress};
pub use multiconn_app::workload::{AppEvent, Exchanges, Response, Uniform};
use multiconn_cc::{CcConfig, CcKind, ControllerFactory, CoupledKind};
pub use multiconn_multipath::{FailoverProfile, SchedulerKind, SchedulerOptions};
use multiconn_core::{Dur, FlowId, Packet, Payload, Time, TransportSample};

pub use host::{HostCpu, HostKnobs};
pub use observe::{Observation, Observations};
pub use profile::{Profile, ProfileError};
pub use udp_socket::{UdpSocket, UdpSocketConfig};

/// What the applications do over the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// The client sends one request of `request_size` bytes; the server answers with `size`
    /// bytes (`None`: it never stops) on one stream.
    Download {
        /// Response bytes; `None`: unbounded.
        size: Option<u64>,
        /// Request bytes.
        request_size: u64,
    },
    /// The client sends `size` bytes (`None`: it never stops) on one stream, as an upload
    /// (HTTP PUT); the server's application reads them and, once all arrived, emits
    /// [`AppEvent::Finished`]. A QUIC server then ends the stream with an empty response
    /// (a FIN), so the client finishes too.
    Upload {
        /// Bytes uploaded; `None`: unbounded.
        size: Option<u64>,
    },
    /// The client sends `count` requests of `request_size` bytes, keeping up to `parallel`
    /// outstanding, each on its own stream (QUIC) or in turn on the one byte stream (TCP);
    /// the server answers each with `response_size` bytes.
    Requests {
        /// Number of requests.
        count: u32,
        /// Most requests outstanding at once.
        parallel: u32,
        /// Bytes per request.
        request_size: u64,
        /// Bytes per response.
        response_size: u64,
    },
    /// The server's application opens streams and writes messages on them itself
    /// ([`Endpoint::open_stream`], [`Endpoint::write`]); the client's reads what arrives
    /// ([`Endpoint::drain_progress`]). The connection only carries them.
    Messages,
}

impl Workload {
    /// Its requests and responses, as the applications run them. [`Workload::Messages`] has
    /// none: the application writes its streams itself.
    pub fn exchanges(self) -> Uniform {
        match self {
            Workload::Download { size, request_size } => Uniform { count: 1, parallel: 1, request_size: Some(request_size), response: Response::Bytes(size) },
            Workload::Upload { size } => Uniform { count: 1, parallel: 1, request_size: size, response: Response::Nothing },
            Workload::Requests { count, parallel, request_size, response_size } => Uniform { count, parallel, request_size: Some(request_size), response: Response::Bytes(Some(response_size)) },
            Workload::Messages => Uniform { count: 0, parallel: 1, request_size: Some(0), response: Response::Bytes(Some(0)) },
        }
    }
}

/// Which end of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Opens the connection and asks (the flow's `to` node).
    Client,
    /// Answers (the flow's `from` node, the data sender).
    Server,
}

impl Role {
    /// The other end of the connection.
    pub fn peer(self) -> Role {
        match self {
            Role::Client => Role::Server,
            Role::Server => Role::Client,
        }
    }
}

/// Everything needed to build the two endpoints of one connection.
#[derive(Clone, Debug)]
pub struct ConnectionParams {
    /// The flow the connection carries; its packets bear this id.
    pub flow: FlowId,
    /// When the client starts the handshake.
    pub start: Time,
    /// What the applications at the two ends do.
    pub workload: Workload,
    /// The implementation profile both ends follow.
    pub profile: Profile,
    /// The congestion controller; the profile must offer it.
    pub cc: CcKind,
    /// Largest IP packet either end sends (e.g. 1500 B); datagram and segment sizes derive
    /// from it and the profile.
    pub max_packet_size: u32,
    /// QUIC: the client holds a session ticket and sends its request as 0-RTT data.
    pub resume: bool,
    /// QUIC: the client's Initial carries an address-validation token from an earlier
    /// connection (a NEW_TOKEN frame, RFC 9000 §8.1.3), so the server may send before the
    /// handshake completes without the 3x anti-amplification limit.
    pub address_token: bool,
    /// QUIC: collect qlog events.
    pub qlog: bool,
    /// Multipath (QUIC: draft-ietf-quic-multipath; TCP: MPTCP); `None` for a single path.
    pub multipath: Option<MultipathParams>,
    /// A controller from outside the built-in set, run in place of `cc`'s algorithm (`cc`
    /// must still be one the profile offers); `None` in every scenario.
    pub external_cc: Option<ControllerFactory>,
    /// Requests and responses from outside the built-in workloads, run by both ends in place
    /// of `workload`'s; `None` in every scenario.
    pub external_workload: Option<Arc<dyn Exchanges>>,
    /// QUIC: DATAGRAM frames (RFC 9221); `None`: neither end advertises them.
    pub datagrams: Option<DatagramParams>,
}

/// QUIC DATAGRAM frames (RFC 9221) on a connection: what each end advertises in its transport
/// parameter max_datagram_frame_size (0x20, §3), and how the sender fills its packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatagramParams {
    /// The client's max_datagram_frame_size: the largest DATAGRAM frame (type, Length and
    /// data) it accepts, bytes; `None`: the parameter is absent, the client takes none.
    pub client_max_frame_size: Option<u64>,
    /// The server's max_datagram_frame_size; `None`: absent.
    pub server_max_frame_size: Option<u64>,
    /// Datagrams or stream data first when a packet is filled.
    pub priority: DatagramPriority,
    /// Bytes of datagrams the sender queues while the congestion window holds them back; a
    /// datagram that would overflow it pushes out the oldest ones (quinn's
    /// `datagram_send_buffer_size`, 1 MiB by default).
    pub send_buffer: u64,
}

impl DatagramParams {
    /// quinn's default send buffer, bytes (`TransportConfig::datagram_send_buffer_size`).
    pub const DEFAULT_SEND_BUFFER: u64 = 1 << 20;

    /// The max_datagram_frame_size `role` advertises.
    pub fn max_frame_size(&self, role: Role) -> Option<u64> {
        match role {
            Role::Client => self.client_max_frame_size,
            Role::Server => self.server_max_frame_size,
        }
    }
}

/// How a QUIC sender orders DATAGRAM frames and stream data in its packets (RFC 9221 §5
/// leaves it to the implementation; they share the congestion window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatagramPriority {
    /// Queued datagrams go first, then stream data in what room is left (quinn and aioquic
    /// write DATAGRAM frames before STREAM frames when they fill a packet). The default.
    #[default]
    BeforeStreams,
    /// Packets alternate: one starts with datagrams, the next with stream data, each filling
    /// the room the other left.
    RoundRobin,
}

impl DatagramPriority {
    /// Every choice, in the order error messages list them.
    pub const ALL: [DatagramPriority; 2] = [DatagramPriority::BeforeStreams, DatagramPriority::RoundRobin];

    /// The name as written in the scenario.
    pub fn name(self) -> &'static str {
        match self {
            DatagramPriority::BeforeStreams => "before_streams",
            DatagramPriority::RoundRobin => "round_robin",
        }
    }
}

impl ConnectionParams {
    /// The controller settings for packets of `mds` bytes: the profile's for `cc` (refused
    /// when the profile does not offer it), with [`external_cc`](Self::external_cc) attached.
    pub fn cc_config(&self, mds: u64) -> Result<CcConfig, ProfileError> {
        Ok(CcConfig { external: self.external_cc.clone(), ..self.profile.cc_config(self.cc, mds)? })
    }

    /// The requests and responses the applications at the two ends run:
    /// [`external_workload`](Self::external_workload) if set, else `workload`'s.
    pub fn exchanges(&self) -> Arc<dyn Exchanges> {
        self.external_workload.clone().unwrap_or_else(|| Arc::new(self.workload.exchanges()))
    }
}

/// How a multipath connection uses its paths. Path 0 carries the handshake; the packets an
/// endpoint sends name their path in [`Packet::path`].
#[derive(Clone, Debug, PartialEq)]
pub struct MultipathParams {
    /// Number of paths (2 to 8).
    pub paths: u8,
    /// Which path carries the next packet and which paths get a duplicate.
    pub scheduler: SchedulerKind,
    /// The scheduler's tunables.
    pub options: SchedulerOptions,
    /// Which path acknowledgements take.
    pub ack_path: AckPath,
    /// When a path counts as potentially failed and how the connection reacts.
    pub failover: FailoverProfile,
    /// Coupled congestion control over the paths; `None`: each path has its own controller.
    pub coupled: Option<CoupledKind>,
    /// Paths that are not opened with the connection but later, by a [`PathAction::Open`]
    /// (the scenario's path schedule). Path 0 carries the handshake and is never among them.
    pub opened_later: Vec<u8>,
}

/// What a multipath client's path manager asks of its connection (draft-ietf-quic-multipath-21
/// §3: opening, §3.3 status, §3.4 abandoning). `path` is the scenario path (the route the
/// packets take); `path_id` the transport's path identifier, never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathAction {
    /// Open a path on `path` with identifier `path_id`, available or backup.
    Open {
        /// The scenario path.
        path: u8,
        /// The new path identifier.
        path_id: u32,
        /// Open it as a backup path (PATH_BACKUP) rather than available.
        backup: bool,
    },
    /// Abandon the path open on `path`.
    Abandon {
        /// The scenario path.
        path: u8,
    },
    /// Announce the status of the path open on `path` (PATH_BACKUP / PATH_AVAILABLE).
    SetStatus {
        /// The scenario path.
        path: u8,
        /// Backup (PATH_BACKUP) rather than available (PATH_AVAILABLE).
        backup: bool,
    },
}

/// The path a multipath endpoint sends its acknowledgements on (draft-ietf-quic-multipath §7:
/// any path may carry the ACK of any path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckPath {
    /// The path the acknowledged packets came on.
    Same,
    /// The path with the smallest smoothed RTT.
    Fastest,
    /// The path with the smallest minimum RTT among those the failover rules deem usable
    /// (picoquic's "nominal ACK path": `sender.c` `picoquic_select_next_path_mp` at
    /// 48525d89ef4d sends a due ACK on the candidate with the lowest `rtt_min`).
    #[serde(rename = "min_rtt")]
    MinRtt,
}

/// One end of a connection, sans-IO.
pub trait Endpoint: Send {
    /// A packet of this connection arrived from the network (after the host's socket buffer).
    fn handle_packet(&mut self, now: Time, pkt: Packet);
    /// The next packet to put on the network at `now`, or `None` when the window, pacing or
    /// lack of data holds it back. Callers poll until `None`. `next_id` is the run-wide packet
    /// id counter: take one id per packet.
    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet>;
    /// When the endpoint next needs `handle_timeout` (loss, PTO/RTO, delayed ACK, pacing,
    /// application start); `None` when idle.
    fn poll_timeout(&self) -> Option<Time>;
    /// The time [`poll_timeout`](Self::poll_timeout) asked for has come: runs the timers due
    /// at `now`.
    fn handle_timeout(&mut self, now: Time);
    /// Application events since the last call, oldest first.
    fn poll_event(&mut self) -> Option<AppEvent>;
    /// The sending side's state (meaningful at the data sender).
    fn sample(&self) -> TransportSample;
    /// Controller state name for time series and qlog (`slow_start`, `recovery`, ...).
    fn cc_state(&self) -> &'static str;
    /// qlog events (JSON objects of the main schema, one per line without the RS prefix)
    /// collected since the last call; empty unless `qlog` was set.
    fn drain_qlog(&mut self, _out: &mut Vec<String>) {}
    /// The host's interface for path `path` went down (`up = false`) or came back. Hosts know
    /// their own interfaces; single-path endpoints ignore it and only see the loss.
    fn on_path_status(&mut self, _now: Time, _path: u8, _up: bool) {}
    /// The host's path manager opens, abandons or changes the status of a path (QUIC
    /// multipath clients). Other endpoints ignore it; the scenario refuses a path schedule
    /// for them.
    fn on_path_action(&mut self, _now: Time, _action: PathAction) {}
    /// Per-path counters of a multipath endpoint, one entry per path it has opened; nothing
    /// for single-path endpoints.
    fn path_stats(&self, _out: &mut Vec<PathStats>) {}
    /// The sending side's state on each path of a multipath endpoint that carries or carried
    /// packets (QUIC: a path ID was opened on it; MPTCP: its subflow is established), as
    /// (path, sample); counters are cumulative on the path since the connection started,
    /// over every path ID opened on it. Nothing for single-path endpoints. Appends to `out`.
    fn path_samples(&self, _out: &mut Vec<(u8, TransportSample)>) {}
    /// Workload [`Workload::Messages`], either end: opens a unidirectional stream to the peer
    /// and returns its id (QUIC: 3, 7, 11, ... from the server; 2, 6, 10, ... from the client,
    /// RFC 9000 §2.1).
    fn open_stream(&mut self, _options: StreamOptions) -> Result<u64, AppError> {
        Err(AppError::Unsupported)
    }
    /// Workload [`Workload::Messages`], the end that opened `stream`: the application writes
    /// `bytes` more on it. Poll the endpoint afterwards.
    fn write(&mut self, _stream: u64, _bytes: u64) -> Result<(), AppError> {
        Err(AppError::Unsupported)
    }
    /// Workload [`Workload::Messages`], the end that opened `stream`: no more writes on it (a
    /// FIN follows).
    fn finish(&mut self, _stream: u64) -> Result<(), AppError> {
        Err(AppError::Unsupported)
    }
    /// Workload [`Workload::Messages`], the end that opened `stream`: the application abandons
    /// it (QUIC: RESET_STREAM, RFC 9000 §3.1); what was not acknowledged is never sent again.
    /// `Ok(false)` when nothing was left to abandon (all acknowledged, or reset before).
    fn reset_stream(&mut self, _stream: u64) -> Result<bool, AppError> {
        Err(AppError::Unsupported)
    }
    /// Workload [`Workload::Messages`], either end: in-order progress of the streams the peer
    /// opened, since the last call, oldest first.
    fn drain_progress(&mut self, _out: &mut Vec<StreamProgress>) {}
    /// QUIC with [`ConnectionParams::datagrams`], either end: queues datagram `tag` of `bytes`
    /// bytes for the peer (a DATAGRAM frame, RFC 9221). Refused when this end or the peer does
    /// not take datagrams ([`AppError::DatagramsUnsupported`]) or when it does not fit in one
    /// packet ([`AppError::DatagramTooLarge`]). Poll the endpoint afterwards.
    fn send_datagram(&mut self, _tag: u64, _bytes: u64, _options: DatagramOptions) -> Result<(), AppError> {
        Err(AppError::Unsupported)
    }
    /// [`Endpoint::send_datagram`] with the datagram's bytes: `content` travels in its frames
    /// and comes out of the peer's [`DatagramEvent::Received`] (a tunnel carrying another
    /// flow's packets). `bytes` is still what counts on the wire.
    fn send_datagram_content(&mut self, _tag: u64, _bytes: u64, _options: DatagramOptions, _content: Payload) -> Result<(), AppError> {
        Err(AppError::Unsupported)
    }
    /// What became of datagrams since the last call, oldest first: those that arrived here,
    /// and the fate of those sent from here ([`DatagramEvent`]).
    fn drain_datagram_events(&mut self, _out: &mut Vec<DatagramEvent>) {}
    /// From now on, notes for an invariant checker what the application is handed and which
    /// path IDs open ([`observe`]); path IDs already open are noted at once. `on = false`
    /// stops it. Endpoints that do not implement it note nothing.
    fn observe(&mut self, _on: bool) {}
    /// Moves what was noted since the last call to `out`, oldest first.
    fn drain_observations(&mut self, _out: &mut Vec<Observation>) {}
    /// ECN counters of this end; `None` when ECN is off for the connection (profile or flow
    /// `ecn`), as for endpoints without ECN support.
    fn ecn_stats(&self) -> Option<EcnStats> {
        None
    }
}

/// The message workload (`multiconn_app::messages`) runs over an endpoint's streams: an
/// endpoint without them refuses every call with [`AppError::Unsupported`].
impl OpenStreams for dyn Endpoint + '_ {
    fn open_stream(&mut self, options: StreamOptions) -> Result<u64, AppError> {
        Endpoint::open_stream(self, options)
    }
    fn write(&mut self, stream: u64, bytes: u64) -> Result<(), AppError> {
        Endpoint::write(self, stream, bytes)
    }
    fn finish(&mut self, stream: u64) -> Result<(), AppError> {
        Endpoint::finish(self, stream)
    }
    fn reset_stream(&mut self, stream: u64) -> Result<bool, AppError> {
        Endpoint::reset_stream(self, stream)
    }
    fn send_datagram(&mut self, tag: u64, bytes: u64, options: DatagramOptions) -> Result<(), AppError> {
        Endpoint::send_datagram(self, tag, bytes, options)
    }
}

/// What one end of a connection did with ECN (RFC 3168 §6.1 for TCP, RFC 9000 §13.4 and
/// RFC 9002 §7.1 for QUIC). The sending counters concern the data this end sent, the
/// receiving ones the data it received.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EcnStats {
    /// TCP: "accecn" (Accurate ECN agreed, RFC 9768), "negotiated" (RFC 3168) or
    /// "not_negotiated" (the handshake's outcome). QUIC: the ECN
    /// validation state of RFC 9000 §13.4.2 / appendix A.4, "testing", "unknown", "capable" or
    /// "failed" (multipath: the paths' states, by path, joined with commas).
    pub state: String,
    /// Packets sent ECT(0) (TCP with a scalable controller over AccECN: ECT(1)).
    pub ect_sent: u64,
    /// Packets that arrived CE-marked.
    pub ce_received: u64,
    /// TCP: ACKs sent with ECE (AccECN: ACKs whose ACE field reported new CE marks). QUIC:
    /// ACK frames sent with ECN counts (type 0x03).
    pub echoes_sent: u64,
    /// TCP: ACKs received with ECE (AccECN: ACKs whose ACE field reported new CE marks). QUIC: the CE count the peer reported, summed over packet
    /// number spaces (and paths).
    pub echoes_received: u64,
    /// Congestion responses to ECN: TCP entries into CWR (a scalable controller over AccECN:
    /// ACKs whose feedback brought its window down), QUIC congestion events for an
    /// increased CE count outside a recovery period.
    pub congestion_responses: u64,
}

/// One path of a multipath endpoint, as reported at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathStats {
    /// The scenario path.
    pub path: u8,
    /// The transport path identifier open on the path at the end (`None`: closed or
    /// abandoned, or no identifiers, as for MPTCP subflows).
    pub path_id: Option<u32>,
    /// How many path identifiers were opened on the path over the run.
    pub path_ids_opened: u32,
    /// Packets sent on the path.
    pub packets_sent: u64,
    /// UDP payload bytes (QUIC) or segment bytes (TCP) sent on the path.
    pub bytes_sent: u64,
    /// Packets received on the path.
    pub packets_received: u64,
    /// UDP payload bytes (QUIC) or segment bytes (TCP) received on the path.
    pub bytes_received: u64,
    /// Packets declared lost on the path.
    pub lost: u64,
    /// Smoothed RTT of the path (MPTCP: zero before the subflow's first sample).
    pub srtt: Dur,
    /// Congestion window of the path in bytes.
    pub cwnd: u64,
    /// "active", "potentially_failed", "abandoned", ...
    pub status: &'static str,
}

/// The setting of [`ConnectionParams`] a transport refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    /// The congestion controller (`cc`), or what the profile offers of it.
    Cc,
    /// The number of paths of a multipath connection.
    Paths,
    /// The multipath scheduler.
    Scheduler,
    /// Which path acknowledgements take.
    AckPath,
    /// The largest packet size.
    PacketSize,
    /// 0-RTT resumption (`resume`).
    Resume,
    /// An address-validation token from an earlier connection (`address_token`).
    AddressToken,
    /// The connection's qlog (`qlog`).
    Qlog,
    /// The application's workload (`app`).
    App,
    /// QUIC DATAGRAM frames (`max_datagram_frame_size`).
    Datagrams,
}

impl Knob {
    /// The scenario field a knob comes from, below the flow's table (e.g. `multipath.scheduler`).
    pub fn field(self) -> &'static [&'static str] {
        match self {
            Knob::Cc => &["cc"],
            Knob::Paths => &["paths"],
            Knob::Scheduler => &["multipath", "scheduler"],
            Knob::AckPath => &["multipath", "ack_path"],
            Knob::PacketSize => &["packet_size"],
            Knob::Resume => &["resume"],
            Knob::AddressToken => &["address_token"],
            Knob::Qlog => &["qlog"],
            Knob::App => &["app"],
            Knob::Datagrams => &["max_datagram_frame_size"],
        }
    }
}

/// Why a transport cannot build a connection from the parameters it was given: the knob at
/// fault and what is allowed. A factory never substitutes another setting for a refused one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TransportError {
    /// The setting refused.
    pub knob: Knob,
    /// Why, and what is allowed.
    pub message: String,
}

impl TransportError {
    /// A refusal of `knob`, explained by `message`.
    pub fn new(knob: Knob, message: impl Into<String>) -> TransportError {
        TransportError { knob, message: message.into() }
    }
}

impl From<ProfileError> for TransportError {
    /// A profile refuses only the controller once it is loaded.
    fn from(e: ProfileError) -> TransportError {
        TransportError::new(Knob::Cc, e.to_string())
    }
}

/// Builds the two endpoints of a connection for one transport.
pub trait TransportFactory {
    /// Whether [`connect`](Self::connect) would accept `params`, without building anything:
    /// scenarios call it while they are validated, so a connection the transport cannot run
    /// is an error before the run, naming the knob.
    fn check(&self, params: &ConnectionParams) -> Result<(), TransportError>;

    /// (client, server), or the refusal [`check`](Self::check) gives.
    #[allow(clippy::type_complexity)]
    fn connect(&self, params: &ConnectionParams) -> Result<(Box<dyn Endpoint>, Box<dyn Endpoint>), TransportError>;
}
