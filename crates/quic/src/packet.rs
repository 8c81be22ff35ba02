//! QUIC packets and datagrams as the model puts them on the wire (RFC 9000 §12, §17).
//!
//! * Long headers (§17.2): first byte, Version (4), DCID length + DCID, SCID length + SCID,
//!   for Initial a Token Length varint (empty token), Length varint (packet number + payload
//!   + AEAD tag), Packet Number (1–4 bytes).
//! * Short header (§17.3): first byte, DCID, Packet Number (1–4 bytes).
//! * Packet number length (§17.1, appendix A.2): enough bytes to represent more than twice
//!   the distance to the largest acknowledged packet.
//! * Every packet carries a 16-byte AEAD tag (RFC 9001 §5.3, AES-GCM / ChaCha20-Poly1305);
//!   header protection samples 16 bytes starting 4 bytes after the packet number start, so
//!   packet number + payload is padded to at least 4 bytes (RFC 9001 §5.4.2).
//! * Coalesced packets (§12.2) share one UDP datagram: a [`Datagram`] holds one or more.

use crate::frame::Frame;
use crate::varint;

pub use multiconn_core::IP_UDP_OVERHEAD;
/// AEAD authentication tag.
pub const AEAD_TAG: usize = 16;
/// Smallest UDP payload of a datagram carrying an ack-eliciting Initial packet (§14.1).
pub const MIN_INITIAL_DATAGRAM: usize = 1200;
/// Packet number + payload bytes needed for the header-protection sample.
pub const MIN_PN_AND_PAYLOAD: usize = 4;

/// Packet number spaces (RFC 9000 §12.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// Initial packets.
    Initial = 0,
    /// Handshake packets.
    Handshake = 1,
    /// Application data: 0-RTT and 1-RTT packets.
    Data = 2,
}

impl Space {
    /// The three spaces, in order.
    pub const ALL: [Space; 3] = [Space::Initial, Space::Handshake, Space::Data];
    /// Index of the space (0, 1, 2) in per-space arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// QUIC packet types (RFC 9000 §17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// Initial (long header, §17.2.2).
    Initial,
    /// 0-RTT (long header, §17.2.3).
    ZeroRtt,
    /// Handshake (long header, §17.2.4).
    Handshake,
    /// 1-RTT (short header, §17.3).
    OneRtt,
}

impl PacketType {
    /// The packet number space packets of this type belong to.
    pub fn space(self) -> Space {
        match self {
            PacketType::Initial => Space::Initial,
            PacketType::Handshake => Space::Handshake,
            PacketType::ZeroRtt | PacketType::OneRtt => Space::Data,
        }
    }
    /// The qlog packet_type name.
    pub fn qlog_name(self) -> &'static str {
        match self {
            PacketType::Initial => "initial",
            PacketType::ZeroRtt => "0RTT",
            PacketType::Handshake => "handshake",
            PacketType::OneRtt => "1RTT",
        }
    }
    /// Sent with a long header (every type but 1-RTT).
    pub fn is_long(self) -> bool {
        self != PacketType::OneRtt
    }
}

/// One QUIC packet: its type, number, frames and total size (header + frames + tag).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuicPacket {
    /// Packet type.
    pub ptype: PacketType,
    /// Packet number in its space.
    pub pn: u64,
    /// Bytes of the encoded packet number (1–4).
    pub pn_len: u8,
    /// Frames carried, in order.
    pub frames: Vec<Frame>,
    /// Bytes of this packet within the UDP payload.
    pub size: u32,
}

impl QuicPacket {
    /// Carries an ack-eliciting frame (RFC 9002 §2).
    pub fn is_ack_eliciting(&self) -> bool {
        self.frames.iter().any(Frame::is_ack_eliciting)
    }
    /// Counts in bytes in flight (RFC 9002 §2: ack-eliciting or PADDING).
    pub fn counts_in_flight(&self) -> bool {
        self.frames.iter().any(|f| f.is_ack_eliciting() || matches!(f, Frame::Padding(_)))
    }
}

/// The UDP payload: one packet, possibly followed by coalesced ones. The first is held inline
/// so that the common single-packet datagram needs no extra allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// The first packet of the datagram.
    pub first: QuicPacket,
    /// Packets coalesced after the first (§12.2).
    pub coalesced: Vec<QuicPacket>,
    /// Multipath: the path ID its destination connection ID belongs to (draft-ietf-quic-
    /// multipath-21 §2: every path ID has its own CIDs), so the receiver tells a new path ID on
    /// a route from late packets of an abandoned one. 0 without multipath.
    pub path_id: u32,
}

impl Datagram {
    /// Every packet of the datagram, in order.
    pub fn packets(&self) -> impl Iterator<Item = &QuicPacket> {
        std::iter::once(&self.first).chain(self.coalesced.iter())
    }
    /// The `index`-th packet (0: the first).
    pub fn get(&self, index: usize) -> Option<&QuicPacket> {
        if index == 0 {
            Some(&self.first)
        } else {
            self.coalesced.get(index - 1)
        }
    }
    /// UDP payload bytes.
    pub fn size(&self) -> u32 {
        self.packets().map(|p| p.size).sum()
    }
}

/// Packet number length per RFC 9000 appendix A.2.
pub fn pn_len(pn: u64, largest_acked: Option<u64>) -> u8 {
    let num_unacked = match largest_acked {
        Some(l) if pn > l => pn - l,
        Some(_) => 1,
        None => pn + 1,
    };
    // Smallest b with num_unacked ≤ 2^(8b − 1).
    for b in 1..4u8 {
        if num_unacked <= 1u64 << (8 * b as u32 - 1) {
            return b;
        }
    }
    4
}

/// Header bytes of a packet of `ptype` with `pn_len`-byte packet number and `payload` bytes of
/// frames (the Length field of long headers depends on it).
pub fn header_size(ptype: PacketType, dcid_len: usize, scid_len: usize, pn_len: u8, payload: usize) -> usize {
    let pn_len = pn_len as usize;
    match ptype {
        PacketType::OneRtt => 1 + dcid_len + pn_len,
        _ => {
            let token = if ptype == PacketType::Initial { varint::len(0) } else { 0 };
            let length = pn_len + payload + AEAD_TAG;
            1 + 4 + 1 + dcid_len + 1 + scid_len + token + varint::len(length as u64) + pn_len
        }
    }
}

/// Header + tag bytes reserved before frames are chosen, assuming the Length field takes 2
/// bytes (payloads of 64..16383 bytes); [`header_size`] gives the exact value afterwards.
pub fn overhead_estimate(ptype: PacketType, dcid_len: usize, scid_len: usize, pn_len: u8) -> usize {
    header_size(ptype, dcid_len, scid_len, pn_len, 100) + AEAD_TAG
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_number_length_follows_appendix_a2() {
        // RFC 9000 A.2 example: largest acked 0xabe8b3, sending 0xac5c02 → 29519 unacked → 2 bytes.
        assert_eq!(pn_len(0xac5c02, Some(0xabe8b3)), 2);
        // ... and 0xace8fe → 4 bytes? (0xace8fe − 0xabe8b3 = 65611 → needs 18 bits → 3 bytes)
        assert_eq!(pn_len(0xace8fe, Some(0xabe8b3)), 3);
        assert_eq!(pn_len(0, None), 1);
        assert_eq!(pn_len(127, None), 1);
        assert_eq!(pn_len(128, None), 2);
        assert_eq!(pn_len(200, Some(72)), 1);
        assert_eq!(pn_len(201, Some(72)), 2);
    }

    #[test]
    fn header_sizes() {
        assert_eq!(header_size(PacketType::OneRtt, 8, 8, 2, 1000), 11);
        // 1 + 4 + 1 + 8 + 1 + 8 + token len 1 + length 2 + pn 1
        assert_eq!(header_size(PacketType::Initial, 8, 8, 1, 1000), 27);
        assert_eq!(header_size(PacketType::Handshake, 8, 8, 1, 1000), 26);
        assert_eq!(header_size(PacketType::Handshake, 8, 8, 1, 10), 25);
    }
}
