//! The TCP header of a [`Segment`] and of an [`MptcpSegment`] as bytes, for packet captures
//! ([`WireHeader`]).
//!
//! * Header (RFC 9293 §3.1): sequence and acknowledgment numbers modulo 2^32 (the model's
//!   initial sequence number is 0), the SYN, ACK, ECE and CWR flags and AE (RFC 9768 §3.1:
//!   bit 8, the low bit of the data-offset byte), the window field as sent; the checksum
//!   is that of the segment with a zero-filled payload (RFC 1071).
//! * Options: MSS, SACK-permitted and window scale in SYNs, timestamps (RFC 7323 §3: TSval in
//!   milliseconds of simulated time plus one, as Linux's 1 kHz clock), SACK blocks (RFC 2018
//!   §3; a D-SACK, RFC 2883, where the model put it), the MPTCP options MP_CAPABLE, MP_JOIN
//!   and DSS (RFC 8684 §3.1–3.3; keys, tokens, nonces and HMACs are zeros), and NOP padding
//!   to the option space the model counted in the packet's size.

use multiconn_core::wire::{checksum, pseudo_header, sum_words, Ends, WireHeader, PROTO_TCP};

use crate::mptcp::option::{HandshakeOption, MptcpSegment};
use crate::segment::{Segment, IP_HEADER, TCP_HEADER};

/// TCP option kinds (IANA).
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WSCALE: u8 = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMPS: u8 = 8;
const OPT_MPTCP: u8 = 30;
/// TCP option space.
const MAX_OPTIONS: usize = 40;

impl WireHeader for Segment {
    fn protocol(&self) -> u8 {
        PROTO_TCP
    }
    fn write_header(&self, buf: &mut Vec<u8>, size: u32, ends: &Ends) -> Option<String> {
        tcp(buf, size, self, None, ends);
        None
    }
}

impl WireHeader for MptcpSegment {
    fn protocol(&self) -> u8 {
        PROTO_TCP
    }
    fn write_header(&self, buf: &mut Vec<u8>, size: u32, ends: &Ends) -> Option<String> {
        tcp(buf, size, &self.tcp, Some(self), ends);
        None
    }
}

/// A 64-bit model timestamp (virtual nanoseconds plus one; 0: nothing) as a 32-bit TSval
/// of a 1 kHz clock.
fn ts32(v: u64) -> u32 {
    if v == 0 {
        0
    } else {
        ((v - 1) / 1_000_000 + 1) as u32
    }
}

/// Appends the TCP header of `seg` (with `mptcp`'s options if given) in a packet of `size`
/// bytes (IPv4 header included).
fn tcp(buf: &mut Vec<u8>, size: u32, seg: &Segment, mptcp: Option<&MptcpSegment>, ends: &Ends) {
    let start = buf.len();
    buf.extend_from_slice(&ends.sport.to_be_bytes());
    buf.extend_from_slice(&ends.dport.to_be_bytes());
    buf.extend_from_slice(&(seg.seq as u32).to_be_bytes());
    let ack = if seg.flags.ack { seg.ack as u32 } else { 0 };
    buf.extend_from_slice(&ack.to_be_bytes());
    let f = seg.flags;
    buf.extend_from_slice(&[u8::from(f.ae), u8::from(f.cwr) << 7 | u8::from(f.ece) << 6 | u8::from(f.ack) << 4 | u8::from(f.syn) << 1]);
    buf.extend_from_slice(&seg.window.to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]);
    // Options.
    if seg.flags.syn {
        if let Some(mss) = seg.mss {
            buf.extend_from_slice(&[OPT_MSS, 4]);
            buf.extend_from_slice(&(mss.min(u16::MAX as u32) as u16).to_be_bytes());
        }
        if seg.sack_permitted {
            buf.extend_from_slice(&[OPT_SACK_PERMITTED, 2]);
        }
        if let Some(ts) = seg.ts {
            timestamps(buf, ts.tsval, ts.tsecr, false);
        }
        if let Some(shift) = seg.wscale {
            buf.extend_from_slice(&[OPT_NOP, OPT_WSCALE, 3, shift]);
        }
    } else {
        if let Some(ts) = seg.ts {
            timestamps(buf, ts.tsval, ts.tsecr, true);
        }
        if !seg.sack.is_empty() {
            buf.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * seg.sack.len() as u8]);
            for &(l, r) in seg.sack.as_slice() {
                buf.extend_from_slice(&(l as u32).to_be_bytes());
                buf.extend_from_slice(&(r as u32).to_be_bytes());
            }
        }
    }
    if let Some(m) = mptcp {
        mptcp_options(buf, m);
    }
    // Pad to the option space the model counted (its wire size), within TCP's 40 bytes.
    let counted = size.saturating_sub(IP_HEADER + TCP_HEADER + seg.len) as usize;
    let target = counted.min(MAX_OPTIONS).max((buf.len() - start - 20).next_multiple_of(4)).min(MAX_OPTIONS);
    buf.truncate(start + 20 + target);
    while buf.len() < start + 20 + target {
        buf.push(OPT_NOP);
    }
    let header = buf.len() - start;
    buf[start + 12] |= ((header / 4) as u8) << 4;
    let len = size.saturating_sub(IP_HEADER);
    let sum = checksum(sum_words(pseudo_header(ends, PROTO_TCP, len), &buf[start..]));
    buf[start + 16..start + 18].copy_from_slice(&sum.to_be_bytes());
}

fn timestamps(buf: &mut Vec<u8>, tsval: u64, tsecr: u64, nops: bool) {
    if nops {
        buf.extend_from_slice(&[OPT_NOP, OPT_NOP]);
    }
    buf.extend_from_slice(&[OPT_TIMESTAMPS, 10]);
    buf.extend_from_slice(&ts32(tsval).to_be_bytes());
    buf.extend_from_slice(&ts32(tsecr).to_be_bytes());
}

/// MPTCP options (RFC 8684 §3): the handshake option, then a DSS option with the DATA_ACK
/// and the mapping, 64-bit as Linux sends them, without checksum. Keys, tokens, nonces and
/// HMACs are zeros (the model has none).
fn mptcp_options(buf: &mut Vec<u8>, m: &MptcpSegment) {
    const CAPABLE: u8 = 0x00;
    const JOIN: u8 = 0x10;
    const DSS: u8 = 0x20;
    // MP_CAPABLE version 1, flag H (HMAC-SHA256).
    let capable = |buf: &mut Vec<u8>, len: u8| {
        buf.extend_from_slice(&[OPT_MPTCP, len, CAPABLE | 1, 0x01]);
        buf.resize(buf.len() + len as usize - 4, 0);
    };
    let data = m.tcp.len > 0;
    match m.handshake {
        Some(HandshakeOption::CapableSyn) => capable(buf, 4),
        Some(HandshakeOption::CapableSynAck) => capable(buf, 12),
        Some(HandshakeOption::CapableAck) => {
            if data {
                capable(buf, 22);
                let n = buf.len();
                buf[n - 2..].copy_from_slice(&(m.tcp.len.min(u16::MAX as u32) as u16).to_be_bytes());
            } else {
                capable(buf, 20);
            }
            // The mapping is implied by MP_CAPABLE with data; a DATA_ACK still needs a DSS.
            if let Some(da) = m.data_ack {
                dss(buf, DSS, Some(da.ack), None);
            }
            return;
        }
        Some(HandshakeOption::JoinSyn) => {
            buf.extend_from_slice(&[OPT_MPTCP, 12, JOIN, 0]);
            buf.resize(buf.len() + 8, 0);
        }
        Some(HandshakeOption::JoinSynAck) => {
            buf.extend_from_slice(&[OPT_MPTCP, 16, JOIN, 0]);
            buf.resize(buf.len() + 12, 0);
        }
        Some(HandshakeOption::JoinAck) => {
            buf.extend_from_slice(&[OPT_MPTCP, 24, JOIN, 0]);
            buf.resize(buf.len() + 20, 0);
        }
        None => {}
    }
    let mapping = m.mapping.filter(|_| data);
    if m.data_ack.is_some() || mapping.is_some() {
        dss(buf, DSS, m.data_ack.map(|d| d.ack), mapping.map(|mp| (mp.dsn, mp.ssn, mp.len)));
    }
}

/// A DSS option (RFC 8684 §3.3): flags A and a (64-bit DATA_ACK), M and m (64-bit DSN).
fn dss(buf: &mut Vec<u8>, subtype: u8, data_ack: Option<u64>, mapping: Option<(u64, u64, u32)>) {
    let len = 4 + if data_ack.is_some() { 8 } else { 0 } + if mapping.is_some() { 14 } else { 0 };
    let flags = if data_ack.is_some() { 0x03 } else { 0 } | if mapping.is_some() { 0x0c } else { 0 };
    buf.extend_from_slice(&[OPT_MPTCP, len, subtype, flags]);
    if let Some(a) = data_ack {
        buf.extend_from_slice(&a.to_be_bytes());
    }
    if let Some((dsn, ssn, l)) = mapping {
        buf.extend_from_slice(&dsn.to_be_bytes());
        buf.extend_from_slice(&(ssn as u32).to_be_bytes());
        buf.extend_from_slice(&(l.min(u16::MAX as u32) as u16).to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Flags, SackBlocks, Timestamps};
    use multiconn_core::Ecn;

    const ENDS: Ends = Ends { src: [198, 18, 0, 1], dst: [198, 18, 1, 1], sport: 38000, dport: 50000, ttl: 64, id: 7, ecn: 0 };

    fn data_segment() -> Segment {
        let mut sack = SackBlocks::new();
        sack.push(5001, 6449);
        Segment {
            seq: 1 + (1 << 32),
            ack: 2001,
            flags: Flags { syn: false, ack: true, ece: false, cwr: false, ae: false },
            window: 512,
            wscale: None,
            sack_permitted: false,
            mss: None,
            ts: Some(Timestamps { tsval: 3_000_001, tsecr: 1 }),
            sack,
            len: 1000,
            ip_ecn: Ecn::NotEct,
            packets: 1,
        }
    }

    /// The ECN flags where RFC 3168 §6.1 and RFC 9768 §3.1 put them: CWR and ECE the top bits
    /// of byte 13, AE the low bit of byte 12 beside the data offset.
    #[test]
    fn ecn_flags_and_ae_are_on_the_wire() {
        let mut seg = data_segment();
        seg.flags.set_ace(0b101);
        let mut buf = Vec::new();
        seg.write_header(&mut buf, seg.wire_size(), &ENDS);
        assert_eq!((buf[12] >> 4, buf[12] & 0x0f), (11, 1), "data offset 11 words, AE set");
        assert_eq!(buf[13], 0x40 | 0x10, "ECE and ACK");
        seg.flags.set_ace(0b010);
        buf.clear();
        seg.write_header(&mut buf, seg.wire_size(), &ENDS);
        assert_eq!((buf[12] & 0x0f, buf[13]), (0, 0x80 | 0x10), "CWR and ACK");
        assert_eq!(checksum(sum_words(pseudo_header(&ENDS, PROTO_TCP, seg.wire_size() - IP_HEADER), &buf)), 0);
    }

    #[test]
    fn timestamps_tick_in_milliseconds() {
        assert_eq!(ts32(0), 0);
        assert_eq!(ts32(1), 1);
        assert_eq!(ts32(1_000_001), 2);
    }

    #[test]
    fn a_segment_header_carries_its_options_and_a_checksum_that_sums_to_zero() {
        let seg = data_segment();
        let size = seg.wire_size();
        let mut buf = Vec::new();
        assert_eq!(seg.protocol(), PROTO_TCP);
        assert_eq!(seg.write_header(&mut buf, size, &ENDS), None);
        // 20 bytes of header, 12 of timestamps, 12 of one SACK block: the size's option space.
        assert_eq!(buf.len() as u32, size - IP_HEADER - seg.len);
        assert_eq!(buf[12] >> 4, 11);
        assert_eq!(buf[4..8], 1u32.to_be_bytes(), "sequence number modulo 2^32");
        assert_eq!(buf[20..32], [OPT_NOP, OPT_NOP, OPT_TIMESTAMPS, 10, 0, 0, 0, 4, 0, 0, 0, 1]);
        assert_eq!(buf[32..36], [OPT_NOP, OPT_NOP, OPT_SACK, 10]);
        // The payload is zeros: header and pseudo-header alone sum to zero with the checksum.
        assert_eq!(checksum(sum_words(pseudo_header(&ENDS, PROTO_TCP, size - IP_HEADER), &buf)), 0);
    }
}
