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
//! * the seeds (`common/proto/seeds.rs`, and the token key here) and TLS (`common/tls.rs`)
//!   from the run, never from the operating system's entropy for anything that changes a
//!   datagram's size or time.
//!
//! Refused, naming the setting: a controller quinn lacks, multipath (quinn-proto is single
//! path), 0-RTT resumption and address tokens (no earlier connection to take a ticket or a
//! token from) and datagrams below QUIC's 1200 bytes. With `qlog`, each end writes quinn's own
//! qlog events (`qlog.rs`). The applications on quinn's streams are the ones noq runs too
//! (`common/proto/app.rs`).

#[path = "../common/proto/app.rs"]
#[allow(clippy::duplicate_mod)] // on purpose: compiled once against each library
mod app;
#[path = "../common/proto/config.rs"]
#[allow(clippy::duplicate_mod)] // on purpose: compiled once against each library
mod config;
#[path = "../common/proto/ecn.rs"]
#[allow(clippy::duplicate_mod)] // on purpose: compiled once against each library
mod ecn;
mod endpoint;
mod qlog;
#[path = "../common/proto/seeds.rs"]
#[allow(clippy::duplicate_mod)] // on purpose: compiled once against each library
mod seeds;

/// The library the shared sources in `common/proto/` are compiled against here.
use quinn_proto as proto;
/// quinn's name in the labels of its random streams (`quinn/client`, `quinn/cids`, ...).
const LABEL: &str = "quinn";

use std::sync::Arc;

use multiconn_cc::CcKind;
use multiconn_transport::{ConnectionParams, Endpoint, Knob, TransportError, TransportFactory};
use quinn_proto::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};
use quinn_proto::TransportConfig;

pub use crate::RealDatagram;
pub use endpoint::QuinnEndpoint;

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
            return Err(TransportError::new(Knob::Paths, "stack quinn is single-path (quinn-proto has no multipath): give the flow one path, use stack noq, or leave stack out to run the model"));
        }
        crate::common::check_fresh_connection(LABEL, p)
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
        CcKind::Bbr3 => {
            return Err(TransportError::new(Knob::Cc, "stack quinn offers newreno, cubic and bbr, not bbr3: quinn-proto's bbr is its own experimental BBR (v1-style gain cycle), it has no BBRv3; leave stack out to run the model's bbr3"));
        }
        other => {
            return Err(TransportError::new(Knob::Cc, format!("stack quinn offers newreno, cubic and bbr, not {}", other.name())));
        }
    })
}

/// The transport settings both ends use: the flow's controller and datagram size, the rest
/// quinn's defaults.
fn transport_config(p: &ConnectionParams) -> Result<TransportConfig, TransportError> {
    Ok(config::transport_config(p, controller(p.cc)?))
}

/// The server's key for its address-validation tokens (quinn's `ServerConfig::new` takes an
/// HKDF-SHA256 pseudorandom key), from `rng`.
fn token_key(rng: &mut multiconn_core::RngStream) -> ring::hkdf::Prk {
    use crate::common::seeds::bytes;
    let salt = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, &bytes::<32>(rng));
    salt.extract(&bytes::<32>(rng))
}

/// Has the endpoint issue its connection IDs from `factory`'s generators.
fn cid_generator(config: &mut proto::EndpointConfig, factory: impl Fn() -> Box<dyn proto::ConnectionIdGenerator> + Send + Sync + 'static) {
    config.cid_generator(factory);
}
