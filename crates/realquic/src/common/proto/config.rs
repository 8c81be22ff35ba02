//! The transport settings both ends use, written once against the `TransportConfig` quinn-proto
//! and noq-proto share (compiled into each adapter; `super::proto` is its crate): the flow's
//! controller and datagram size, the rest the library's defaults.

use std::sync::Arc;

use multiconn_core::IP_UDP_OVERHEAD;
use multiconn_transport::ConnectionParams;

use super::proto::congestion::ControllerFactory;
use super::proto::{TransportConfig, VarInt};

/// Bidirectional streams the peer may open at once unless the workload asks for more.
const DEFAULT_STREAMS: u32 = 100;

/// Datagrams of `packet_size − 28` bytes (path MTU discovery off, one datagram per
/// `poll_transmit`: no segmentation offload), `controller` for every path, and as many
/// bidirectional streams as the workload keeps outstanding.
pub(super) fn transport_config(p: &ConnectionParams, controller: Arc<dyn ControllerFactory + Send + Sync>) -> TransportConfig {
    let mut t = TransportConfig::default();
    let datagram = (p.max_packet_size - IP_UDP_OVERHEAD) as u16;
    t.initial_mtu(datagram);
    t.mtu_discovery_config(None);
    t.enable_segmentation_offload(false);
    t.congestion_controller_factory(controller);
    let streams = p.exchanges().parallel().max(DEFAULT_STREAMS);
    t.max_concurrent_bidi_streams(VarInt::from_u32(streams));
    t
}
