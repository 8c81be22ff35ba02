//! multiconn-tcp: a sans-IO model of one TCP connection carrying TLS 1.3, in the style of
//! Linux with default sysctls (profile `linux-tcp`).
//!
//! * [`segment`]: the segment inside a packet and its size on the wire.
//! * [`handshake`]: SYN, SYN-ACK, ACK and option negotiation; [`app`]: TLS 1.3 and the
//!   workload on the byte stream.
//! * [`sender`]: send buffer, ACK processing, SACK/RACK-TLP loss recovery, RTO, controller;
//!   built from [`scoreboard`] (RFC 6675), [`rack`] (RFC 8985), [`rto`] (RFC 6298) and
//!   [`prr`] (RFC 6937's proportional rate reduction as Linux runs it).
//! * [`receiver`]: reassembly, SACK and D-SACK generation, delayed ACKs, advertised window;
//!   [`autotune`]: Linux receive-buffer autotuning; [`gro`]: Linux's generic receive offload,
//!   which coalesces segments arriving together before the receiver sees them.
//! * [`connection`]: [`TcpEndpoint`], one end as a [`multiconn_transport::Endpoint`];
//!   [`TcpFactory`] builds both ends.
//! * [`mptcp`]: Multipath TCP (RFC 8684) on top of these: [`MptcpEndpoint`], built by
//!   [`TcpFactory`] when the connection has multipath parameters.
//! * [`wire`]: the TCP header of a segment as bytes, with its options and MPTCP's, for
//!   packet captures (`multiconn_core::wire::WireHeader`).

pub mod app;
pub mod autotune;
pub mod connection;
pub mod gro;
pub mod handshake;
pub mod mptcp;
pub mod prr;
pub mod rack;
pub mod receiver;
pub mod rto;
pub mod scoreboard;
pub mod segment;
pub mod sender;
pub mod wire;

pub use connection::TcpEndpoint;
pub use mptcp::{MptcpEndpoint, MptcpError};
pub use segment::Segment;

use multiconn_transport::{ConnectionParams, Endpoint, ProfileError, Role, TransportError, TransportFactory};

/// Builds TCP connections.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpFactory;

impl TcpFactory {
    /// The factory (it holds no state).
    pub fn new() -> TcpFactory {
        TcpFactory
    }

    /// (client, server) of a single-path connection, or the profile's refusal of the
    /// congestion controller. Multipath parameters are ignored: see
    /// [`try_connect_mptcp`](Self::try_connect_mptcp).
    pub fn try_connect(
        &self,
        params: &ConnectionParams,
    ) -> Result<(TcpEndpoint, TcpEndpoint), ProfileError> {
        Ok((
            TcpEndpoint::new(Role::Client, params)?,
            TcpEndpoint::new(Role::Server, params)?,
        ))
    }

    /// (client, server) of an MPTCP connection over `params.multipath`'s paths.
    pub fn try_connect_mptcp(
        &self,
        params: &ConnectionParams,
    ) -> Result<(MptcpEndpoint, MptcpEndpoint), MptcpError> {
        Ok((
            MptcpEndpoint::new(Role::Client, params)?,
            MptcpEndpoint::new(Role::Server, params)?,
        ))
    }
}

impl TransportFactory for TcpFactory {
    /// MPTCP's rules when the parameters name several paths (one subflow per path, a
    /// scheduler and ACK path that fit one byte stream), else the profile's controllers.
    fn check(&self, params: &ConnectionParams) -> Result<(), TransportError> {
        if params.multipath.is_some() {
            MptcpEndpoint::check(params).map_err(TransportError::from)
        } else {
            TcpEndpoint::check(params).map_err(TransportError::from)
        }
    }

    /// (client, server): MPTCP when the parameters name several paths, else single-path TCP.
    fn connect(&self, params: &ConnectionParams) -> Result<(Box<dyn Endpoint>, Box<dyn Endpoint>), TransportError> {
        if params.multipath.is_some() {
            let (c, s) = self.try_connect_mptcp(params)?;
            return Ok((Box::new(c), Box::new(s)));
        }
        let (c, s) = self.try_connect(params)?;
        Ok((Box::new(c), Box::new(s)))
    }
}
