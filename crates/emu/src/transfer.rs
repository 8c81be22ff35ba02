//! A flow's transfer time as its own connections show it on the wire, for comparing a real
//! stack with the simulator like for like.
//!
//! A real client's process lifetime is not its transfer time: a CPython client spends a few
//! hundred milliseconds importing its libraries before its first packet and tearing down after
//! its last, and iperf3 opens a control connection, exchanges parameters before the data
//! connection and results after it. The simulator's completion time runs from the flow's first
//! packet to its last byte. So the emulator times the flow from the packets themselves: each
//! packet is put under its transport connection (IPv4 protocol and the two ports, RFC 791,
//! RFC 9293 §3.1, RFC 768), oriented by the flow's ends; the connections that carried at
//! least [`BULK_SHARE`] of the bytes that reached the flow's `to` end are its transfer (one
//! TCP or QUIC connection, or every MPTCP subflow and every multipath QUIC path that carried
//! data), which runs from the first packet of any of them to the last one they delivered to
//! the `to` end. iperf3's control connection and stray packets carry too little to count.

use multiconn_core::Time;

/// A connection carrying at least this share of the bytes delivered to the flow's `to` end
/// is part of the transfer.
pub const BULK_SHARE: f64 = 0.05;

/// A transport connection: IPv4 protocol number and its address and port at the flow's
/// `from` and `to` ends (a multipath flow's paths have addresses of their own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnKey {
    /// 6 (TCP) or 17 (UDP).
    pub protocol: u8,
    /// The address and port at the flow's `from` end.
    pub from: ([u8; 4], u16),
    /// The address and port at the flow's `to` end.
    pub to: ([u8; 4], u16),
}

impl ConnKey {
    /// The connection of an IPv4 TCP or UDP packet sent by the flow's `from` end
    /// (`from_end`) or its `to` end; `None` for anything else or a truncated header.
    pub fn of(packet: &[u8], from_end: bool) -> Option<ConnKey> {
        let first = *packet.first()?;
        if first >> 4 != 4 {
            return None;
        }
        let header = usize::from(first & 0x0f) * 4;
        let protocol = *packet.get(9)?;
        if !matches!(protocol, 6 | 17) || header < 20 {
            return None;
        }
        let port = |at: usize| -> Option<u16> { Some(u16::from_be_bytes([*packet.get(at)?, *packet.get(at + 1)?])) };
        let address = |at: usize| -> Option<[u8; 4]> { packet.get(at..at + 4)?.try_into().ok() };
        let source = (address(12)?, port(header)?);
        let destination = (address(16)?, port(header + 2)?);
        let (from, to) = if from_end { (source, destination) } else { (destination, source) };
        Some(ConnKey { protocol, from, to })
    }
}

#[derive(Clone, Copy, Debug)]
struct ConnTimes {
    key: ConnKey,
    first: Time,
    last_delivered: Option<Time>,
    bytes_delivered: u64,
}

/// A flow's transfer: when it began and ended, and over how many connections.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    /// The first packet of any of its connections, from either end.
    pub first_packet: Time,
    /// The last packet its connections delivered to the flow's `to` end.
    pub last_delivered: Time,
    /// How many connections it counts.
    pub connections: usize,
}

/// Per flow: its connections' first packets and deliveries to the `to` end.
#[derive(Clone, Debug, Default)]
pub struct FlowConnections {
    conns: Vec<ConnTimes>,
}

impl FlowConnections {
    /// A packet of `key` entered the network at `at` (from either end).
    pub fn sent(&mut self, key: ConnKey, at: Time) {
        if !self.conns.iter().any(|c| c.key == key) {
            self.conns.push(ConnTimes { key, first: at, last_delivered: None, bytes_delivered: 0 });
        }
    }

    /// A packet of `key`, `size` bytes, was written to the flow's `to` end at `at`.
    pub fn delivered(&mut self, key: ConnKey, at: Time, size: u32) {
        if let Some(c) = self.conns.iter_mut().find(|c| c.key == key) {
            c.last_delivered = Some(at);
            c.bytes_delivered += u64::from(size);
        }
    }

    /// The transfer, once anything reached the `to` end.
    pub fn transfer(&self) -> Option<Transfer> {
        let total: u64 = self.conns.iter().map(|c| c.bytes_delivered).sum();
        let bulk = || self.conns.iter().filter(|c| c.bytes_delivered > 0 && c.bytes_delivered as f64 >= BULK_SHARE * total as f64);
        Some(Transfer {
            first_packet: bulk().map(|c| c.first).min()?,
            last_delivered: bulk().filter_map(|c| c.last_delivered).max()?,
            connections: bulk().count(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVER: [u8; 4] = [198, 18, 0, 2];
    const CLIENT: [u8; 4] = [198, 18, 0, 1];

    /// An IPv4 header (no options) of `protocol` between the server (port 5201 or 1) and the
    /// client, followed by the two ports.
    fn packet(protocol: u8, source: u16, destination: u16) -> Vec<u8> {
        let mut p = vec![0u8; 28];
        p[0] = 0x45;
        p[9] = protocol;
        let server_sends = source == 5201 || source == 1;
        p[12..16].copy_from_slice(if server_sends { &SERVER } else { &CLIENT });
        p[16..20].copy_from_slice(if server_sends { &CLIENT } else { &SERVER });
        p[20..22].copy_from_slice(&source.to_be_bytes());
        p[22..24].copy_from_slice(&destination.to_be_bytes());
        p
    }

    #[test]
    fn both_directions_of_a_connection_share_a_key() {
        let server_to_client = ConnKey::of(&packet(6, 5201, 40000), true).unwrap();
        let client_to_server = ConnKey::of(&packet(6, 40000, 5201), false).unwrap();
        assert_eq!(server_to_client, client_to_server);
        assert_eq!(server_to_client, ConnKey { protocol: 6, from: (SERVER, 5201), to: (CLIENT, 40000) });
        assert_ne!(ConnKey::of(&packet(17, 5201, 40000), true), Some(server_to_client), "UDP is another connection");
    }

    #[test]
    fn options_move_the_ports_and_other_packets_have_no_key() {
        let mut with_options = packet(17, 1, 2);
        with_options[0] = 0x46;
        with_options.splice(20..20, [0u8; 4]);
        assert_eq!(ConnKey::of(&with_options, true), Some(ConnKey { protocol: 17, from: (SERVER, 1), to: (CLIENT, 2) }));
        assert_eq!(ConnKey::of(&packet(1, 0, 0), true), None, "ICMP");
        assert_eq!(ConnKey::of(&packet(6, 1, 2)[..22], true), None, "truncated");
        let mut v6 = packet(6, 1, 2);
        v6[0] = 0x60;
        assert_eq!(ConnKey::of(&v6, true), None);
    }

    #[test]
    fn the_transfer_spans_the_bulk_connections_only() {
        let control = ConnKey { protocol: 6, from: (SERVER, 5201), to: (CLIENT, 40000) };
        let data = ConnKey { protocol: 6, from: (SERVER, 5201), to: (CLIENT, 40002) };
        let mut f = FlowConnections::default();
        assert_eq!(f.transfer(), None);
        f.sent(control, Time(100));
        f.delivered(control, Time(150), 300);
        f.sent(data, Time(400));
        f.sent(data, Time(450)); // a later packet does not move the start
        for i in 0..100 {
            f.delivered(data, Time(500 + i * 10), 1500);
        }
        f.delivered(control, Time(5_000), 2_000); // the results exchange after the data
        let t = f.transfer().unwrap();
        assert_eq!(t, Transfer { first_packet: Time(400), last_delivered: Time(1_490), connections: 1 });
    }

    #[test]
    fn every_subflow_that_carried_data_counts() {
        // Two subflows over two paths' addresses, with the same ports.
        let a = ConnKey { protocol: 6, from: (SERVER, 5201), to: (CLIENT, 40000) };
        let b = ConnKey { protocol: 6, from: ([198, 18, 0, 34], 5201), to: ([198, 18, 0, 33], 40000) };
        let mut f = FlowConnections::default();
        f.sent(a, Time(10));
        f.sent(b, Time(60));
        f.delivered(a, Time(900), 70_000);
        f.delivered(b, Time(1_200), 30_000);
        assert_eq!(f.transfer(), Some(Transfer { first_packet: Time(10), last_delivered: Time(1_200), connections: 2 }));
    }
}
