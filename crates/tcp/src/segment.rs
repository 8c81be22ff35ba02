//! The TCP segment as it travels inside a [`multiconn_core::Payload`] (RFC 9293 §3.1 header,
//! RFC 7323 §2–3 window scale and timestamps options, RFC 2018 §3 SACK option, RFC 2883
//! D-SACK).
//!
//! Sequence numbers are 64-bit and never wrap: a run never sends 2^64 bytes, so the model
//! skips modular comparison. Each direction's initial sequence number is 0; the SYN occupies
//! sequence number 0 and data starts at 1 (stream offset = seq − 1).
//!
//! Timestamps carry the sender's virtual time in nanoseconds; on the wire they are the usual
//! 10-byte option (12 bytes with the two NOPs), and that is what [`Segment::wire_size`] counts.

use multiconn_core::Ecn;

/// IPv4 header without options.
pub const IP_HEADER: u32 = 20;
/// TCP header without options.
pub const TCP_HEADER: u32 = 20;
/// Timestamps option with its two NOPs (RFC 7323 appendix A layout).
pub const TIMESTAMPS_OPTION: u32 = 12;
/// Options of a Linux SYN / SYN-ACK: MSS (4), SACK-permitted (2), timestamps (10), NOP and
/// window scale (4) = 20 bytes.
pub const SYN_OPTIONS: u32 = 20;
/// Largest number of SACK blocks in one segment (40 option bytes).
pub const MAX_SACK_BLOCKS: usize = 4;

/// Header flags the model uses (no URG/PSH/RST/FIN: connections are never torn down).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// SYN: synchronize sequence numbers.
    pub syn: bool,
    /// ACK: the acknowledgement number is meaningful.
    pub ack: bool,
    /// ECN-Echo (RFC 3168 §6.1): in a SYN (with CWR) or SYN-ACK, the ECN setup; afterwards,
    /// the receiver saw a CE-marked segment and the sender has not yet answered with CWR.
    pub ece: bool,
    /// Congestion Window Reduced (RFC 3168 §6.1): in a SYN, part of the ECN setup;
    /// afterwards, the sender reduced its window in response to ECE.
    pub cwr: bool,
    /// AE (Accurate ECN, RFC 9768 §3.1): header bit 8, once ECN-nonce's NS. With AccECN
    /// agreed, AE, CWR and ECE together are the ACE field of every segment but a SYN
    /// ([`Flags::ace`]); in a SYN and SYN-ACK they negotiate it.
    pub ae: bool,
}

impl Flags {
    /// The 3-bit ACE field (RFC 9768 §3.2.2): AE, CWR and ECE as one number, AE the most
    /// significant bit.
    pub fn ace(&self) -> u8 {
        u8::from(self.ae) << 2 | u8::from(self.cwr) << 1 | u8::from(self.ece)
    }

    /// Sets AE, CWR and ECE to the three low bits of `ace`.
    pub fn set_ace(&mut self, ace: u8) {
        self.ae = ace & 4 != 0;
        self.cwr = ace & 2 != 0;
        self.ece = ace & 1 != 0;
    }
}

/// Up to four SACK blocks, `[start, end)` sequence ranges, the first one possibly a D-SACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
    len: u8,
}

impl SackBlocks {
    /// No blocks.
    pub fn new() -> SackBlocks {
        SackBlocks::default()
    }
    /// Appends a block; ignored once full.
    pub fn push(&mut self, start: u64, end: u64) {
        if (self.len as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.len as usize] = (start, end);
            self.len += 1;
        }
    }
    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// No blocks.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The blocks `(start, end)`, in order.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }
    /// Keeps the first `n` blocks.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n as u8);
    }
}

/// Timestamps option values (RFC 7323 §3): the sender's clock and the echoed peer value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timestamps {
    /// TSval: the sender's timestamp clock (see [`ts_from_time`]).
    pub tsval: u64,
    /// TSecr: the peer's TSval echoed (TS.Recent), 0 for none.
    pub tsecr: u64,
}

/// One TCP segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first byte (or of the SYN).
    pub seq: u64,
    /// Meaningful when `flags.ack`.
    pub ack: u64,
    /// Header flags.
    pub flags: Flags,
    /// The 16-bit window field (scaled by the peer's shift except in SYN segments).
    pub window: u16,
    /// Window scale shift offered in a SYN (RFC 7323 §2.2).
    pub wscale: Option<u8>,
    /// SACK-permitted option in a SYN.
    pub sack_permitted: bool,
    /// MSS option in a SYN.
    pub mss: Option<u32>,
    /// Timestamps option, when negotiated (or offered in a SYN).
    pub ts: Option<Timestamps>,
    /// SACK option blocks.
    pub sack: SackBlocks,
    /// Payload bytes carried.
    pub len: u32,
    /// The ECN field of the IP packet carrying the segment (RFC 3168 §5), not a TCP header
    /// field: what the sender put there, and on arrival what the network delivered.
    pub ip_ecn: Ecn,
    /// IP packets the segment stands for: 1 as sent; after receive-side coalescing
    /// ([`crate::gro`]), the segments merged into it (Linux's `gso_segs`, by which AccECN
    /// counts CE-marked packets).
    pub packets: u32,
}

impl Segment {
    /// Sequence space the segment occupies (SYN counts one).
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.flags.syn as u64
    }
    /// Sequence number just past the segment.
    pub fn end(&self) -> u64 {
        self.seq.saturating_add(self.seq_len())
    }

    /// Bytes of TCP options.
    pub fn options_size(&self) -> u32 {
        if self.flags.syn {
            return SYN_OPTIONS;
        }
        let ts = if self.ts.is_some() {
            TIMESTAMPS_OPTION
        } else {
            0
        };
        let sack = if self.sack.is_empty() {
            0
        } else {
            (2 + 8 * self.sack.len() as u32).next_multiple_of(4)
        };
        ts + sack
    }

    /// Bytes on the wire: IP + TCP headers, options, payload.
    pub fn wire_size(&self) -> u32 {
        IP_HEADER + TCP_HEADER + self.options_size() + self.len
    }
}

/// The timestamp clock: virtual nanoseconds plus one, so that 0 means "nothing to echo".
pub fn ts_from_time(t: multiconn_core::Time) -> u64 {
    t.0.saturating_add(1)
}

/// The instant an echoed timestamp stands for; `None` for 0 (no echo).
pub fn ts_to_time(v: u64) -> Option<multiconn_core::Time> {
    v.checked_sub(1).map(multiconn_core::Time)
}

/// How many SACK blocks fit next to the other options (RFC 2018 §3: 3 with timestamps, 4
/// without).
pub fn max_sack_blocks(timestamps: bool) -> usize {
    if timestamps {
        3
    } else {
        4
    }
}

/// The MSS for packets of at most `max_packet_size` bytes: minus IP and TCP headers and the
/// timestamps option when used, capped by `cap` (profile `packet.max_payload`).
pub fn mss_for(max_packet_size: u32, timestamps: bool, cap: Option<u32>) -> u32 {
    let overhead = IP_HEADER + TCP_HEADER + if timestamps { TIMESTAMPS_OPTION } else { 0 };
    let mss = max_packet_size.saturating_sub(overhead).max(1);
    cap.map_or(mss, |c| mss.min(c.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(len: u32, ts: bool, sacks: usize) -> Segment {
        let mut s = Segment {
            seq: 1,
            ack: 1,
            flags: Flags {
                syn: false,
                ack: true,
                ..Flags::default()
            },
            window: 0,
            wscale: None,
            sack_permitted: false,
            mss: None,
            ts: ts.then_some(Timestamps::default()),
            sack: SackBlocks::new(),
            len,
            ip_ecn: Ecn::NotEct,
            packets: 1,
        };
        for i in 0..sacks {
            s.sack.push(i as u64 * 10, i as u64 * 10 + 5);
        }
        s
    }

    #[test]
    fn mss_for_1500_byte_packets() {
        assert_eq!(mss_for(1500, true, None), 1448);
        assert_eq!(mss_for(1500, false, None), 1460);
        assert_eq!(mss_for(1500, true, Some(1200)), 1200);
    }

    #[test]
    fn wire_sizes_count_padded_options() {
        assert_eq!(seg(1448, true, 0).wire_size(), 1500);
        assert_eq!(seg(0, true, 0).wire_size(), 52);
        // one block: 2 + 8 = 10 → 12; three: 26 → 28.
        assert_eq!(seg(0, true, 1).wire_size(), 52 + 12);
        assert_eq!(seg(0, true, 3).wire_size(), 52 + 28);
        assert_eq!(seg(0, false, 4).wire_size(), 40 + 36);
        let mut syn = seg(0, true, 0);
        syn.flags.syn = true;
        assert_eq!(syn.wire_size(), 60);
        assert_eq!(syn.seq_len(), 1);
    }

    #[test]
    fn sack_blocks_are_bounded() {
        let mut b = SackBlocks::new();
        for i in 0..6 {
            b.push(i, i + 1);
        }
        assert_eq!(b.len(), MAX_SACK_BLOCKS);
        b.truncate(3);
        assert_eq!(b.as_slice(), &[(0, 1), (1, 2), (2, 3)]);
    }
}
