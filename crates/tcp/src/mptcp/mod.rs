//! MPTCP: TCP extensions for multipath operation (RFC 8684, MPTCP v1), with the congestion
//! control of the subflows coupled by LIA (RFC 6356), OLIA or BALIA, or left uncoupled as
//! upstream Linux does.
//!
//! A connection is one data stream over several subflows, one per path. Each subflow is a full
//! TCP connection of the single-path model (handshake, SACK/RACK-TLP, RTO, its own RTT and
//! window); above them the connection keeps one data sequence space, maps pieces of it onto the
//! subflows (DSS), acknowledges it with DATA_ACKs and holds one receive buffer for all subflows.
//!
//! * [`option`]: the MPTCP options and their sizes on the wire, and [`MptcpSegment`].
//! * [`dss`]: data sequence mappings at the sender and receiver of a subflow.
//! * [`data_send`]: the data-level send side: send buffer, peer window, reinjection queue.
//! * [`data_recv`]: the data-level receive side: shared buffer, reassembly, DATA_ACK, window.
//! * [`subflow`]: one subflow (MP_CAPABLE or MP_JOIN handshake, sender, receiver, mappings).
//! * [`endpoint`]: [`MptcpEndpoint`], one end as a [`multiconn_transport::Endpoint`]: opening
//!   subflows, scheduling with `multiconn_multipath`'s schedulers, failure detection and
//!   reinjection, per-path statistics.
//!
//! Not modelled: ADD_ADDR / REMOVE_ADDR signalling (every path is known to both ends), MP_PRIO
//! and backup subflows, MP_FASTCLOSE, DATA_FIN and connection teardown, the DSS checksum and
//! fallback to plain TCP, a data-level retransmission timer (data is resent elsewhere only
//! when the failover profile gives up on a subflow), opportunistic retransmission and
//! penalisation of the out-of-tree Linux scheduler, zero-window probes.

pub mod data_recv;
pub mod data_send;
pub mod dss;
pub mod endpoint;
pub mod option;
pub mod subflow;

pub use endpoint::{MptcpEndpoint, MptcpError, MptcpStats, MAX_SUBFLOWS};
pub use option::MptcpSegment;
