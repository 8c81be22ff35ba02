//! A flow's place in a tunnel ([`super::tunnels`] links the two): which tunnel, how it
//! carries the flow's packets, and the size of the datagram that carries one — an HTTP
//! Datagram (RFC 9297 §2.1): the Quarter Stream ID of the flow's request stream, a Context ID of
//! 0, then the UDP payload (CONNECT-UDP, RFC 9298 §5: a udp or quic flow's packet less its IPv4
//! and UDP headers) or the whole IP packet (CONNECT-IP, RFC 9484 §6: a tcp flow's).

use multiconn_core::IP_UDP_OVERHEAD;
use multiconn_transport::Role;

/// How a tunnel carries a flow's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunnelMode {
    /// CONNECT-UDP (RFC 9298): the UDP payload.
    ConnectUdp,
    /// CONNECT-IP (RFC 9484): the IP packet.
    ConnectIp,
}

/// A flow's place in its tunnel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tunnelled {
    /// The tunnel's index among the flows that run.
    pub flow: usize,
    /// The tunnel's name.
    pub name: String,
    /// What of each packet the datagram carries.
    pub mode: TunnelMode,
    /// The Quarter Stream ID that opens each of its datagrams (its request stream ID ÷ 4).
    pub quarter_stream_id: u64,
    /// The tunnel's end on the flow's `from` node (the other end is on its `to` node): where
    /// its forward packets go in.
    pub end_at_from: Role,
}

impl Tunnelled {
    /// The bytes of the datagram that carries a packet of `size` bytes: the HTTP Datagram's
    /// Quarter Stream ID and Context ID (0, one byte), then the UDP payload or the IP packet.
    pub fn datagram_bytes(&self, size: u32) -> u64 {
        let header = (multiconn_quic::varint::len(self.quarter_stream_id) + 1) as u64;
        let carried = match self.mode {
            TunnelMode::ConnectUdp => u64::from(size.saturating_sub(IP_UDP_OVERHEAD)),
            TunnelMode::ConnectIp => u64::from(size),
        };
        header + carried
    }
}
