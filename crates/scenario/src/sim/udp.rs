//! UDP flows: a saturating (bulk) or constant-bit-rate source at `from`, a sink at `to`.
//!
//! A bulk source is refilled whenever its first link has room: at its start, and after each
//! service of that link, in round-robin order among the flows sharing it (the back-pressure
//! of ADR 0001 #2). A CBR source sends on its own timer. A flow is done when its source has
//! finished and nothing of it is left in the network.

use crate::resolve::Flow;
use crate::schema::AppKind;
use multiconn_app::{SourceConfig, Traffic, UdpSink, UdpSource};
use multiconn_core::{FlowId, Time};
use multiconn_engine::TimerId;

/// The most packets a bulk udp source sends at one instant: twice the largest queue it may
/// fill ([`crate::resolve::MAX_BULK_QUEUE_PACKETS`]); more means that its first link loses
/// what it is offered (a loss of 1) and would never fill.
pub(super) const MAX_BULK_BURST: u64 = 2 * crate::resolve::MAX_BULK_QUEUE_PACKETS;

/// The two ends of a UDP flow.
pub struct UdpFlow {
    /// The source at `from`: bulk or CBR.
    pub source: UdpSource,
    /// The sink at `to`, counting what arrives.
    pub sink: UdpSink,
    /// The source's pending wake-up (cancelled when it changes).
    pub(super) timer: Option<(Time, TimerId)>,
}

impl UdpFlow {
    /// The ends of UDP flow `f`, whose id is `flow`: a bulk source (a CBR one for app = "cbr")
    /// and a sink.
    pub fn new(flow: FlowId, f: &Flow) -> UdpFlow {
        let traffic = match f.app {
            AppKind::Bulk | AppKind::Requests | AppKind::Messages => Traffic::Bulk,
            AppKind::Cbr => Traffic::Cbr(f.cbr_rate.expect("validated: cbr flows have a rate")),
        };
        let source = UdpSource::new(SourceConfig { flow, traffic, packet_size: f.packet_size, start: f.start, stop: f.stop, size: f.size });
        UdpFlow { source, sink: UdpSink::default(), timer: None }
    }
}

