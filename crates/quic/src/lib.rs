//! multiconn-quic: a packet-level model of QUIC (RFC 9000, RFC 9001 handshake timing, RFC 9002
//! loss detection and congestion control) for the simulator.
//!
//! * [`Connection`]: one endpoint (client or server), sans-IO, implementing
//!   [`multiconn_transport::Endpoint`], its timers named by [`Timer`]; [`QuicFactory`] builds
//!   the pair for a connection.
//! * Wire model: [`packet`] (headers, packet numbers, coalescing), [`frame`] (frame sizes),
//!   [`ack_ranges`] (ACK frame encoding), [`varint`].
//! * Multipath (draft-ietf-quic-multipath-21): [`path`] holds the per-path state; the
//!   connection schedules 1-RTT packets over the paths with a `multiconn_multipath` scheduler.
//! * Machinery: [`recovery`] (RFC 9002), [`ack_state`] (ACK generation), [`streams`] and
//!   [`flow_control`], [`datagram`] (DATAGRAM frames, RFC 9221), [`handshake`], [`range_set`],
//!   [`qlog`].
//!
//! Packets carry a [`packet::Datagram`] as their payload; no bytes are encrypted or copied,
//! but every size on the wire is that of a real encoding. [`wire`] writes a datagram's UDP
//! header and names its QUIC packets for packet captures (`multiconn_core::wire::WireHeader`).

pub mod ack_ranges;
pub mod ack_state;
pub mod connection;
pub mod datagram;
pub mod flow_control;
pub mod frame;
pub mod handshake;
pub mod packet;
pub mod path;
pub mod qlog;
pub mod range_set;
pub mod recovery;
pub mod streams;
pub mod varint;
pub mod wire;

pub use connection::{max_datagram_payload_for, Connection, ConnectionStats, Timer};
pub use handshake::HandshakeSizes;

use multiconn_transport::{ConnectionParams, Endpoint, ProfileError, Role, TransportError, TransportFactory};

/// Builds QUIC client/server pairs.
#[derive(Clone, Debug, Default)]
pub struct QuicFactory {
    /// TLS message sizes of the handshake.
    pub handshake: HandshakeSizes,
}

impl QuicFactory {
    /// A factory with the default TLS message sizes.
    pub fn new() -> QuicFactory {
        QuicFactory::default()
    }

    /// The two endpoints as concrete types: (client, server).
    pub fn connect_pair(&self, params: &ConnectionParams) -> Result<(Connection, Connection), ProfileError> {
        Ok((Connection::with_handshake(params, Role::Client, self.handshake)?, Connection::with_handshake(params, Role::Server, self.handshake)?))
    }
}

impl TransportFactory for QuicFactory {
    /// The profile must offer the controller.
    fn check(&self, params: &ConnectionParams) -> Result<(), TransportError> {
        params.cc_config(1).map(|_| ()).map_err(TransportError::from)
    }

    fn connect(&self, params: &ConnectionParams) -> Result<(Box<dyn Endpoint>, Box<dyn Endpoint>), TransportError> {
        let (c, s) = self.connect_pair(params)?;
        Ok((Box::new(c), Box::new(s)))
    }
}
