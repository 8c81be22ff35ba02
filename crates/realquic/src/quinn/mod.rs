//! quinn-proto 0.11.19 as the simulator's QUIC endpoints (`stack = "quinn"`).
//!
//! [`QuinnFactory`] builds a client and a server, each a quinn-proto `Endpoint` with its one
//! `Connection` (`endpoint.rs`), configured from the flow's [`ConnectionParams`]:
//!
//! * the controller from `cc`: quinn's NewReno, CUBIC or BBR with their default settings
//!   (`congestion::{NewRenoConfig, CubicConfig, BbrConfig}`);
//! * datagrams of `packet_size − 28` bytes (`initial_mtu`, path MTU discovery off, one
//!   datagram per `poll_transmit`: no segmentation offload), so a packet on the wire is the
//!   datagram plus the IPv4 and UDP headers;
//! * everything else is quinn's own default (RFC 9002 recovery with its constants, pacing at
//!   5/4 · cwnd / RTT, a 1.25 MB stream window, ECN with validation, `initial_rtt` 333 ms);
//! * the seeds (`seeds.rs`) and TLS (`tls.rs`) from the run, never from the operating system's
//!   entropy for anything that changes a datagram's size or time.
//!
//! Refused, naming the setting: a controller quinn lacks, multipath (quinn-proto is single
//! path), 0-RTT resumption and address tokens (no earlier connection to take a ticket or a
//! token from) and datagrams below QUIC's 1200 bytes. With `qlog`, each end writes quinn's own
//! qlog events (`qlog.rs`).

mod app;
mod endpoint;
mod qlog;
mod seeds;
mod tls;

use std::sync::Arc;

use multiconn_cc::CcKind;
use multiconn_core::IP_UDP_OVERHEAD;
use multiconn_transport::{ConnectionParams, Endpoint, Knob, TransportError, TransportFactory};
use quinn_proto::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};
use quinn_proto::{TransportConfig, VarInt};

pub use endpoint::{QuinnEndpoint, RealDatagram};

/// The smallest UDP payload QUIC allows (RFC 9000 §14.1).
const MIN_DATAGRAM: u32 = 1200;
/// Bidirectional streams the peer may open at once unless the workload asks for more.
const DEFAULT_STREAMS: u32 = 100;

/// Builds quinn-proto connections, seeded per run and flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuinnFactory {
    seed: u64,
}

impl QuinnFactory {
    /// A factory whose connections draw every random choice from `seed`.
    pub fn new(seed: u64) -> QuinnFactory {
        QuinnFactory { seed }
    }
}

impl TransportFactory for QuinnFactory {
    fn check(&self, p: &ConnectionParams) -> Result<(), TransportError> {
        controller(p.cc)?;
        if p.multipath.is_some() {
            return Err(TransportError::new(Knob::Paths, "stack quinn is single-path (quinn-proto has no multipath): give the flow one path, or leave stack out to run the model"));
        }
        if p.resume {
            return Err(TransportError::new(Knob::Resume, "stack quinn starts every connection afresh: 0-RTT resumption needs a ticket from an earlier connection, which a run does not have"));
        }
        if p.address_token {
            return Err(TransportError::new(Knob::AddressToken, "stack quinn starts every connection afresh: an address token needs an earlier connection to come from"));
        }
        if p.max_packet_size < MIN_DATAGRAM + IP_UDP_OVERHEAD {
            return Err(TransportError::new(
                Knob::PacketSize,
                format!("stack quinn sends QUIC datagrams of at least {MIN_DATAGRAM} B: packet_size must be at least {} B", MIN_DATAGRAM + IP_UDP_OVERHEAD),
            ));
        }
        if p.max_packet_size > u16::MAX as u32 {
            return Err(TransportError::new(Knob::PacketSize, format!("stack quinn sends datagrams of at most {} B", u16::MAX)));
        }
        Ok(())
    }

    fn connect(&self, p: &ConnectionParams) -> Result<(Box<dyn Endpoint>, Box<dyn Endpoint>), TransportError> {
        self.check(p)?;
        // Each end its own settings: with qlog, each writes its own trace.
        let client = QuinnEndpoint::client(p, transport_config(p)?, self.seed);
        let server = QuinnEndpoint::server(p, transport_config(p)?, self.seed);
        Ok((Box::new(client), Box::new(server)))
    }
}

/// quinn's controller for `cc`, with its default settings.
fn controller(cc: CcKind) -> Result<Arc<dyn ControllerFactory + Send + Sync>, TransportError> {
    Ok(match cc {
        CcKind::NewReno => Arc::new(NewRenoConfig::default()),
        CcKind::Cubic => Arc::new(CubicConfig::default()),
        CcKind::Bbr => Arc::new(BbrConfig::default()),
        other => {
            return Err(TransportError::new(Knob::Cc, format!("stack quinn offers newreno, cubic and bbr, not {}", other.name())));
        }
    })
}

/// The transport settings both ends use: the flow's controller and datagram size, the rest
/// quinn's defaults.
fn transport_config(p: &ConnectionParams) -> Result<TransportConfig, TransportError> {
    let mut t = TransportConfig::default();
    let datagram = (p.max_packet_size - IP_UDP_OVERHEAD) as u16;
    t.initial_mtu(datagram);
    t.mtu_discovery_config(None);
    t.enable_segmentation_offload(false);
    t.congestion_controller_factory(controller(p.cc)?);
    let streams = p.exchanges().parallel().max(DEFAULT_STREAMS);
    t.max_concurrent_bidi_streams(VarInt::from_u32(streams));
    Ok(t)
}
