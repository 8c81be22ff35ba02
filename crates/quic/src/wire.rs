//! A QUIC datagram's header as bytes, for packet captures ([`WireHeader`]): the UDP header
//! (RFC 768, checksum over the datagram with a zero-filled payload, RFC 1071) and a capture
//! comment naming the QUIC packets inside, as the payload itself is not captured: type and
//! packet number of each (RFC 9000 §17, types as qlog names them), `quic 1RTT pn=42`,
//! coalesced packets (§12.2) separated by `; `, then `path_id=N` for multipath QUIC
//! (draft-ietf-quic-multipath-21).

use multiconn_core::wire::{write_udp, Ends, WireHeader, PROTO_UDP};

use crate::packet::Datagram;

impl WireHeader for Datagram {
    fn protocol(&self) -> u8 {
        PROTO_UDP
    }
    fn write_header(&self, buf: &mut Vec<u8>, size: u32, ends: &Ends) -> Option<String> {
        write_udp(buf, size, ends);
        Some(comment(self))
    }
}

/// The capture comment of `dg`: its packets' types and numbers, and its path ID if not 0.
fn comment(dg: &Datagram) -> String {
    let mut s = String::with_capacity(24);
    for (i, p) in dg.packets().enumerate() {
        if i > 0 {
            s.push_str("; ");
        }
        s.push_str("quic ");
        s.push_str(p.ptype.qlog_name());
        s.push_str(" pn=");
        s.push_str(&p.pn.to_string());
    }
    if dg.path_id != 0 {
        s.push_str("; path_id=");
        s.push_str(&dg.path_id.to_string());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{PacketType, QuicPacket};
    use multiconn_core::wire::UDP_HEADER;

    fn packet(ptype: PacketType, pn: u64, size: u32) -> QuicPacket {
        QuicPacket { ptype, pn, pn_len: 1, frames: Vec::new(), size }
    }

    #[test]
    fn a_datagram_is_a_udp_header_and_a_comment_naming_its_packets() {
        let ends = Ends { src: [198, 18, 0, 1], dst: [198, 18, 1, 1], sport: 38000, dport: 50000, ttl: 64, id: 7, ecn: 0 };
        let dg = Datagram {
            first: packet(PacketType::Initial, 0, 400),
            coalesced: vec![packet(PacketType::Handshake, 1, 800)],
            path_id: 0,
        };
        let mut buf = Vec::new();
        assert_eq!(dg.protocol(), PROTO_UDP);
        let comment = dg.write_header(&mut buf, 1228, &ends);
        assert_eq!(comment.as_deref(), Some("quic initial pn=0; quic handshake pn=1"));
        let mut udp = Vec::new();
        write_udp(&mut udp, 1228, &ends);
        assert_eq!(buf, udp);
        assert_eq!(buf.len(), UDP_HEADER);

        let dg = Datagram { first: packet(PacketType::OneRtt, 42, 1200), coalesced: Vec::new(), path_id: 2 };
        assert_eq!(dg.write_header(&mut Vec::new(), 1228, &ends).as_deref(), Some("quic 1RTT pn=42; path_id=2"));
    }
}
