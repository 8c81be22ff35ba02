//! What the adapters share, one owner for each kind of knowledge:
//!
//! * [`Clock`]: virtual time as the `Instant`s the libraries take;
//! * [`tls`]: TLS 1.3 for both ends (rustls over ring, the fixture's Ed25519 certificate);
//! * [`seeds`]: the run's seed as the bytes and streams the libraries' keys and IDs come from;
//! * [`qlog`]: a library's qlog records, kept in memory and handed to the run;
//! * [`check_fresh_connection`]: the settings no library here takes;
//! * `proto/`: code written once against the API quinn-proto and noq-proto share (the
//!   applications on their streams, the seeded configuration, the transport settings, ECN),
//!   compiled into each
//!   adapter with `#[path]`, where `super::proto` names that adapter's crate.

pub(crate) mod qlog;
pub(crate) mod seeds;
pub(crate) mod tls;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use multiconn_core::{Time, IP_UDP_OVERHEAD};
use multiconn_transport::{ConnectionParams, Knob, TransportError};

/// The server's address, private to the adapters (the simulator routes by flow and path).
pub(crate) const SERVER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2)), 4433);

/// The client's address on path `path`: 198.18.`path`.1, port 40000 (path 0: 198.18.0.1).
pub(crate) const fn client_address(path: u8) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(198, 18, path, 1)), 40000)
}

/// The smallest UDP payload QUIC allows (RFC 9000 §14.1).
const MIN_DATAGRAM: u32 = 1200;

/// What no library here can do, refused naming the setting: 0-RTT resumption and address
/// tokens (no earlier connection to take a ticket or a token from), datagrams outside QUIC's
/// 1200 B to a UDP datagram's 65 535 B, and QUIC DATAGRAM frames (RFC 9221: the adapters carry
/// the applications' streams only).
pub(crate) fn check_fresh_connection(library: &str, p: &ConnectionParams) -> Result<(), TransportError> {
    if p.datagrams.is_some() {
        return Err(TransportError::new(Knob::Datagrams, format!("stack {library} carries the applications' streams only, not QUIC DATAGRAM frames (RFC 9221): leave stack out to run the QUIC model")));
    }
    if p.resume {
        return Err(TransportError::new(Knob::Resume, format!("stack {library} starts every connection afresh: 0-RTT resumption needs a ticket from an earlier connection, which a run does not have")));
    }
    if p.address_token {
        return Err(TransportError::new(Knob::AddressToken, format!("stack {library} starts every connection afresh: an address token needs an earlier connection to come from")));
    }
    if p.max_packet_size < MIN_DATAGRAM + IP_UDP_OVERHEAD {
        return Err(TransportError::new(
            Knob::PacketSize,
            format!("stack {library} sends QUIC datagrams of at least {MIN_DATAGRAM} B: packet_size must be at least {} B", MIN_DATAGRAM + IP_UDP_OVERHEAD),
        ));
    }
    if p.max_packet_size > u16::MAX as u32 {
        return Err(TransportError::new(Knob::PacketSize, format!("stack {library} sends datagrams of at most {} B", u16::MAX)));
    }
    Ok(())
}

/// Virtual time `t` is the `Instant` `base + t`, `base` taken when an end is built: the
/// libraries only ever compare and subtract the instants they are given, so the choice of
/// `base` changes nothing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    /// The instant virtual time 0 stands for.
    pub(crate) base: Instant,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock { base: Instant::now() }
    }

    /// The instant of virtual time `t`.
    pub(crate) fn instant(self, t: Time) -> Instant {
        self.base + Duration::from_nanos(t.0)
    }

    /// The virtual time of `i` (never before 0).
    pub(crate) fn time(self, i: Instant) -> Time {
        Time(i.saturating_duration_since(self.base).as_nanos() as u64)
    }
}
