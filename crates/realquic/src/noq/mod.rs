//! noq-proto 1.4.0 (n0-computer/noq, iroh's fork of quinn) as the simulator's QUIC endpoints
//! (`stack = "noq"`), single-path or with draft-ietf-quic-multipath (noq-proto implements
//! draft-ietf-quic-multipath-21: path IDs, PATH_ABANDON, PATH_STATUS_BACKUP/AVAILABLE).
//!
//! [`NoqFactory`] builds a client and a server, each a noq-proto `Endpoint` with its one
//! `Connection` (`endpoint.rs`), configured from the flow's [`ConnectionParams`] as quinn's
//! adapter configures quinn (`common/proto/config.rs`: datagrams of `packet_size − 28` bytes,
//! path MTU discovery and segmentation offload off, the library's defaults otherwise), with:
//!
//! * the controller from `cc`: noq's NewReno or CUBIC with their default settings. noq's BBR
//!   (`Bbr3Config`) is refused: it seeds its ProbeBW timing from the operating system
//!   (`congestion/bbr3/mod.rs:585`, `rand::rng()`) unless `probe_rng_seed` is set, and that
//!   field has no public setter in 1.4.0, so runs would differ;
//! * multipath, for a flow with `paths`: `max_concurrent_multipath_paths` (twice the flow's
//!   paths, so a path reopened after an outage has an ID while the abandoned one drains), the
//!   scenario's path `p` as the client's address 198.18.`p`.1 (`paths.rs`), the client's path
//!   manager's actions as `open_path` / `close_path` / `set_path_status`, and noq's own
//!   scheduler (the lowest path ID with window space first; backup paths only while no
//!   available path is validated: `Connection::scheduling_info`);
//! * the seeds (`common/proto/seeds.rs`, the token key in `token.rs`) and TLS
//!   (`common/tls.rs`) from the run.
//!
//! Refused, naming the setting: a controller noq lacks or cannot seed (`bbr`), 0-RTT
//! resumption, address tokens and datagrams below QUIC's 1200 bytes
//! (`common::check_fresh_connection`). With `qlog`, each end writes noq's own qlog events
//! (`qlog.rs`).

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
mod paths;
mod qlog;
#[path = "../common/proto/seeds.rs"]
#[allow(clippy::duplicate_mod)] // on purpose: compiled once against each library
mod seeds;
mod token;

use std::sync::Arc;

use multiconn_cc::CcKind;
use multiconn_transport::{ConnectionParams, Endpoint, Knob, TransportError, TransportFactory};
use noq_proto::congestion::{ControllerFactory, CubicConfig, NewRenoConfig};
use noq_proto::TransportConfig;

pub use crate::RealDatagram;
pub use endpoint::NoqEndpoint;

/// The library the shared sources in `common/proto/` are compiled against here.
use noq_proto as proto;
/// noq's name in the labels of its random streams (`noq/client`, `noq/cids`, ...).
const LABEL: &str = "noq";

/// Builds noq-proto connections, seeded per run and flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoqFactory {
    seed: u64,
}

impl NoqFactory {
    /// A factory whose connections draw every random choice from `seed`.
    pub fn new(seed: u64) -> NoqFactory {
        NoqFactory { seed }
    }
}

impl TransportFactory for NoqFactory {
    fn check(&self, p: &ConnectionParams) -> Result<(), TransportError> {
        controller(p.cc)?;
        crate::common::check_fresh_connection(LABEL, p)
    }

    fn connect(&self, p: &ConnectionParams) -> Result<(Box<dyn Endpoint>, Box<dyn Endpoint>), TransportError> {
        self.check(p)?;
        // Each end its own settings: with qlog, each writes its own trace.
        let client = NoqEndpoint::client(p, transport_config(p)?, self.seed);
        let server = NoqEndpoint::server(p, transport_config(p)?, self.seed);
        Ok((Box::new(client), Box::new(server)))
    }
}

/// noq's controller for `cc`, with its default settings.
fn controller(cc: CcKind) -> Result<Arc<dyn ControllerFactory + Send + Sync>, TransportError> {
    Ok(match cc {
        CcKind::NewReno => Arc::new(NewRenoConfig::default()),
        CcKind::Cubic => Arc::new(CubicConfig::default()),
        CcKind::Bbr => {
            return Err(TransportError::new(
                Knob::Cc,
                "stack noq offers newreno and cubic, not bbr: noq-proto 1.4.0's BBRv3 draws its probing times from the operating system's randomness (no public seed), so runs would differ",
            ));
        }
        CcKind::Bbr3 => {
            return Err(TransportError::new(
                Knob::Cc,
                "stack noq offers newreno and cubic, not bbr3: noq-proto 1.4.0's BBRv3 draws its probing times from the operating system's randomness (no public seed), so runs would differ; leave stack out to run the model's bbr3",
            ));
        }
        other => {
            return Err(TransportError::new(Knob::Cc, format!("stack noq offers newreno and cubic, not {}", other.name())));
        }
    })
}

/// The transport settings both ends use: quinn's adapter's, with multipath on for a flow with
/// several paths.
fn transport_config(p: &ConnectionParams) -> Result<TransportConfig, TransportError> {
    let mut t = config::transport_config(p, controller(p.cc)?);
    if let Some(mp) = &p.multipath {
        t.max_concurrent_multipath_paths(2 * u32::from(mp.paths));
    }
    Ok(t)
}

/// Has the endpoint issue its connection IDs from `factory`'s generators.
fn cid_generator(config: &mut proto::EndpointConfig, factory: impl Fn() -> Box<dyn proto::ConnectionIdGenerator> + Send + Sync + 'static) {
    config.cid_generator(Arc::new(factory));
}
