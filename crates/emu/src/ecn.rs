//! The ECN field of real IPv4 packets crossing the emulator (RFC 3168 §5, RFC 791 §3.1).
//!
//! A packet read from a TUN enters the models with the ECN codepoint of its IP header, so an
//! AQM discipline with ECN on marks a real ECN-capable packet instead of dropping it; when the
//! model delivers a packet it marked CE, the bytes written to the far TUN carry CE too, with
//! the IPv4 header checksum recomputed (RFC 1071), so the receiving kernel or QUIC stack sees
//! the mark as it would behind a real CoDel or PIE queue.

use multiconn_core::Ecn;

/// The ECN codepoint of an IPv4 packet (the two low bits of its second byte); `NotEct` for
/// anything too short to hold one.
pub fn ecn_of(packet: &[u8]) -> Ecn {
    match packet.get(1).map(|tos| tos & 0b11) {
        Some(0b10) => Ecn::Ect0,
        Some(0b01) => Ecn::Ect1,
        Some(0b11) => Ecn::Ce,
        _ => Ecn::NotEct,
    }
}

/// Sets an IPv4 packet's ECN field to CE and recomputes its header checksum. Returns false
/// (and leaves the bytes alone) for a packet that is not IPv4 with a whole header.
pub fn mark_ce(packet: &mut [u8]) -> bool {
    let Some(&first) = packet.first() else { return false };
    let header_len = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || header_len < 20 || packet.len() < header_len {
        return false;
    }
    packet[1] |= 0b11;
    packet[10] = 0;
    packet[11] = 0;
    let sum = header_checksum(&packet[..header_len]);
    packet[10..12].copy_from_slice(&sum.to_be_bytes());
    true
}

/// The Internet checksum of an IPv4 header (RFC 1071): the ones' complement of the ones'
/// complement sum of its 16-bit words.
fn header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20-byte IPv4 header (UDP, 198.18.0.1 to 198.18.1.1) with a valid checksum, ECT(0).
    fn header() -> Vec<u8> {
        let mut h = vec![0x45, 0b10, 0, 48, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 1, 1];
        let sum = header_checksum(&h);
        h[10..12].copy_from_slice(&sum.to_be_bytes());
        h.extend_from_slice(&[0xaa; 28]);
        h
    }

    #[test]
    fn the_codepoint_is_read_from_the_second_byte() {
        let mut h = header();
        assert_eq!(ecn_of(&h), Ecn::Ect0);
        for (bits, ecn) in [(0b00, Ecn::NotEct), (0b01, Ecn::Ect1), (0b11, Ecn::Ce)] {
            h[1] = 0xb8 | bits; // DSCP EF is kept apart from the ECN bits
            assert_eq!(ecn_of(&h), ecn);
        }
        assert_eq!(ecn_of(&[0x45]), Ecn::NotEct);
    }

    #[test]
    fn marking_sets_ce_keeps_the_rest_and_leaves_a_valid_checksum() {
        let mut h = header();
        let before = h.clone();
        assert!(mark_ce(&mut h));
        assert_eq!(ecn_of(&h), Ecn::Ce);
        assert_eq!(h[1] & !0b11, before[1] & !0b11);
        // A valid header sums to 0xffff, so its checksum over itself is zero (RFC 1071).
        assert_eq!(header_checksum(&h[..20]), 0);
        assert_ne!(h[10..12], before[10..12]);
        assert_eq!(h[12..], before[12..]);
        // The incremental update of RFC 1624 (eqn. 3) gives the same checksum.
        let old = u16::from_be_bytes([before[0], before[1]]);
        let new = u16::from_be_bytes([h[0], h[1]]);
        let hc = u16::from_be_bytes([before[10], before[11]]);
        let mut sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(!(sum as u16), u16::from_be_bytes([h[10], h[11]]));
    }

    #[test]
    fn non_ipv4_or_truncated_packets_are_left_alone() {
        let mut v6 = vec![0x60, 0, 0, 0];
        assert!(!mark_ce(&mut v6));
        assert_eq!(v6, vec![0x60, 0, 0, 0]);
        let mut short = header()[..12].to_vec();
        assert!(!mark_ce(&mut short));
        assert!(!mark_ce(&mut []));
    }
}
