//! Header bytes of a packet as a capture shows them: what an IPv4 packet's writer tells the
//! transport above it ([`Ends`]), the Internet checksum (RFC 1071) with the TCP/UDP
//! pseudo-header (RFC 9293 §3.1, RFC 768), the UDP header (RFC 768), and [`WireHeader`], the
//! capability through which a transport writes its own header for a packet it sent.
//!
//! The IPv4 header itself (RFC 791) is the capture's; each transport owns its header's bytes
//! and answers [`WireHeader`] for the payload it puts in packets
//! ([`crate::Payload::with_header`]). Payload bytes are never written: checksums are those of
//! the packet with a zero-filled payload.

/// IP protocol number of TCP (IANA).
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of UDP (IANA).
pub const PROTO_UDP: u8 = 17;
/// UDP header bytes (RFC 768).
pub const UDP_HEADER: usize = 8;

/// The addresses, ports and IP header fields of one packet at one end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    /// Source IPv4 address.
    pub src: [u8; 4],
    /// Destination IPv4 address.
    pub dst: [u8; 4],
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Time to live as seen at this end.
    pub ttl: u8,
    /// The IPv4 identification field.
    pub id: u16,
    /// The ECN field's two bits (RFC 3168 §5), as the packet carried them at this end.
    pub ecn: u8,
}

/// A transport's header on the wire, for a payload that knows it.
pub trait WireHeader {
    /// The IP protocol number of the header [`WireHeader::write_header`] writes
    /// ([`PROTO_TCP`], [`PROTO_UDP`]).
    fn protocol(&self) -> u8;

    /// Appends this payload's transport header (with its checksum over the packet with a
    /// zero-filled payload) to `buf`, which already holds the IPv4 header of a packet of
    /// `size` bytes (IP header included) between `ends`; returns the packet's capture
    /// comment, if any.
    fn write_header(&self, buf: &mut Vec<u8>, size: u32, ends: &Ends) -> Option<String>;
}

/// Adds `bytes` as big-endian 16-bit words to `sum` (an odd last byte is the high half of a
/// word, RFC 1071 §4.1).
pub fn sum_words(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for w in &mut chunks {
        sum += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

/// The one's complement of the one's complement sum (RFC 1071).
pub fn checksum(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The pseudo-header's share of a TCP or UDP checksum (RFC 9293 §3.1, RFC 768) for a
/// transport segment of `len` bytes (its header included).
pub fn pseudo_header(ends: &Ends, proto: u8, len: u32) -> u32 {
    let mut sum = sum_words(0, &ends.src);
    sum = sum_words(sum, &ends.dst);
    sum + proto as u32 + (len >> 16) + (len & 0xffff)
}

/// Appends the UDP header (RFC 768) of a packet of `size` bytes (IPv4 header of 20 bytes
/// included) to `buf`.
pub fn write_udp(buf: &mut Vec<u8>, size: u32, ends: &Ends) {
    let len = size.saturating_sub(20).max(UDP_HEADER as u32);
    let start = buf.len();
    buf.extend_from_slice(&ends.sport.to_be_bytes());
    buf.extend_from_slice(&ends.dport.to_be_bytes());
    buf.extend_from_slice(&(len.min(u16::MAX as u32) as u16).to_be_bytes());
    buf.extend_from_slice(&[0, 0]);
    // The payload is zeros: only the header and the pseudo-header add to the sum.
    let mut sum = checksum(sum_words(pseudo_header(ends, PROTO_UDP, len), &buf[start..start + UDP_HEADER]));
    if sum == 0 {
        sum = 0xffff;
    }
    buf[start + 6..start + 8].copy_from_slice(&sum.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENDS: Ends = Ends { src: [198, 18, 0, 1], dst: [198, 18, 1, 1], sport: 38000, dport: 50000, ttl: 64, id: 7, ecn: 0 };

    #[test]
    fn a_udp_header_with_its_checksum_sums_to_zero() {
        let mut buf = Vec::new();
        write_udp(&mut buf, 1200, &ENDS);
        assert_eq!(buf.len(), UDP_HEADER);
        assert_eq!(u16::from_be_bytes([buf[4], buf[5]]), 1180);
        assert_eq!(checksum(sum_words(pseudo_header(&ENDS, PROTO_UDP, 1180), &buf)), 0);
    }

    #[test]
    fn an_odd_byte_is_the_high_half_of_a_word() {
        assert_eq!(sum_words(0, &[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
        assert_eq!(checksum(0x1_fffe), !0xffffu16);
    }
}
