//! An RLC Acknowledged Mode entity pair, transmitter ([`AmTx`]) and receiver ([`AmRx`]), after
//! 3GPP TS 38.322 (NR) §5.2.3 (transmit and receive operations, state variables), §5.3.2
//! (ARQ retransmission), §5.3.3 (polling), §5.3.4 (status reporting), §6.2.2.4 (AMD PDU),
//! §6.2.2.5 (STATUS PDU), §6.2.3 (AM_Window_Size) and §7 (variables, timers, parameters), with
//! the parameter ranges of TS 38.331 `RLC-Config`. Sans-IO: the caller moves PDUs and STATUS
//! reports between the two ends and calls the timers when they expire. It serves the LTE and
//! the NR cell of the crate alike.
//!
//! * **PDUs.** NR RLC does not concatenate: each AMD PDU carries one SDU or one SDU segment
//!   ([`AmPdu`], the [`UmSegment`] shape of the UM buffer); the MAC multiplexes as many PDUs
//!   as fit into a grant ([`AmTx::pull`]). Header: 2 bytes with a 12-bit SN, 3 bytes with an
//!   18-bit SN, plus the 2-byte SO field when the segment does not start the SDU (§6.2.2.4).
//! * **Sequence numbers** are unwrapped `u64` counters (the 12- or 18-bit SN on the air is
//!   their low bits); the windows of AM_Window_Size = 2048 or 131 072 (§6.2.3) are enforced on
//!   both ends, so the unwrapped number is equivalent to the modular one. As in NR, an SDU
//!   gets its SN when it is queued (TX_Next counts queued SDUs, §5.2.3.1.1); the transmitter
//!   never sends an SN ≥ TX_Next_Ack + AM_Window_Size: it stalls and polls (§5.3.3.2).
//! * **Transmitter** ([`AmTx`]): retransmissions first (re-segmented to fit, §5.3.2), then new
//!   data; the poll bit per §5.3.3.2 (pollPDU, pollByte, both buffers empty after the PDU,
//!   window stall, a pending t-PollRetransmit expiry); POLL_SN and t-PollRetransmit (§5.3.3.2–
//!   4); STATUS handling (§5.2.3.1.2, §5.3.2): ACKed SDUs are released, NACKed byte ranges are
//!   queued for retransmission, RETX_COUNT per SDU (0 when first considered, then at most one
//!   increment per STATUS PDU or per t-PollRetransmit expiry, and only when the NACKed bytes
//!   are not already pending). At RETX_COUNT = maxRetxThreshold the SDU is reported (in
//!   `failed` of [`AmTx::on_status`], or returned by [`AmTx::handle_timeout`]): that is the
//!   indication to RRC that triggers radio link failure (TS 38.331 §5.3.10). The transmitter
//!   then gives the SDU up (TX_Next_Ack moves past it) and the cell drops it.
//! * **Receiver** ([`AmRx`]): the receive window, duplicate PDUs and duplicate byte segments
//!   discarded (§5.2.3.2.2), RX_Next / RX_Next_Highest / RX_Highest_Status /
//!   RX_Next_Status_Trigger and t-Reassembly (§5.2.3.2.3–4), status reporting triggered by a
//!   poll (delayed until x < RX_Highest_Status or x ≥ RX_Next + AM_Window_Size) and by
//!   t-Reassembly's expiry, sent when t-StatusProhibit is not running (§5.3.4). As 38.322
//!   allows, a STATUS sent while a retransmission is in flight NACKs it again and it is resent
//!   again; a t-StatusProhibit of at least the round trip avoids that when polls are frequent.
//! * **Delivery.** NR (38.322) delivers each SDU to PDCP as soon as all its bytes arrived;
//!   reordering is PDCP's job. [`AmConfig::in_order`] = `true` models LTE's 36.322 AM instead,
//!   which delivers SDUs in SN order only (as RX_Next, i.e. VR(R), passes them).
//!
//! Simplifications (declared):
//!
//! * The LTE mode (`in_order`) keeps NR's PDU format, window and timers: only the delivery
//!   order is LTE's (no concatenation, no 10-bit SN, t-Reassembly standing for t-Reordering).
//! * The STATUS PDU is built whole: it is not cut to the size of a grant (§5.3.4's "still fits"
//!   rule) — the cell carries it as a control message. It never uses NACK ranges (optional,
//!   §6.2.2.5): one NACK_SN per missing SDU, one NACK_SN with SOstart/SOend per missing byte
//!   range of a partly received SDU ([`AmNack::so`], end exclusive; the receiver knows the
//!   SDU's size from the segment, where the air interface would use SOend = 0xFFFF).
//! * The transmission buffer's capacity counts the bytes not yet sent a first time (as UM);
//!   SDUs sent and awaiting acknowledgement are held beyond it (at most a window of them).
//! * An SDU holds at most 65 535 bytes (the 16-bit SO field); 38.322's 9 000-byte PDCP SDU limit
//!   is not enforced.
//! * On the t-PollRetransmit expiry with nothing else to send, the SDU with the highest SN
//!   submitted and not yet acknowledged is retransmitted whole (the first option of §5.3.3.4).
//! * After a max-retransmission failure the receiver keeps waiting for the given-up SDU
//!   (38.322 has no way to move its window); RRC's answer to the failure is an RLC
//!   re-establishment of both ends (§5.1.2, [`AmTx::reestablish`], [`AmRx::reestablish`]),
//!   which the caller performs. Data-volume reporting to MAC counts only the transmitter's data
//!   (the STATUS PDU travels as a control message).
//! * The timer values are checked against the 38.331 ranges but not against their enumerated
//!   steps, so that studies can sweep them; t-PollRetransmit includes Rel-16's 1–4 ms values.
//!
//! Sizes are bytes; times are microseconds on the caller's clock.

mod rx;
mod tx;

pub use rx::{AmRx, AmRxCounters};
pub use tx::{AmTx, AmTxCounters};

use crate::error::CellError;
use crate::rlc::UmSegment;

/// AM_Window_Size with a 12-bit SN (TS 38.322 §7.2).
pub const AM_WINDOW_12: u64 = 2048;
/// AM_Window_Size with an 18-bit SN (TS 38.322 §7.2).
pub const AM_WINDOW_18: u64 = 131_072;
/// The SO field of an AMD PDU carrying a segment that does not start its SDU, in bytes.
pub const SO_FIELD_BYTES: u32 = 2;
/// The largest SDU the 16-bit SO field can address, in bytes.
pub const MAX_AM_SDU_BYTES: u32 = 65_535;

/// The AMD PDU header (§6.2.2.4): 2 bytes with a 12-bit SN, 3 with an 18-bit SN, plus 2 bytes
/// of SO when the segment starts at `offset` > 0.
pub fn am_header_bytes(sn_bits: u8, offset: u32) -> u32 {
    let fixed = if sn_bits <= 12 { 2 } else { 3 };
    fixed + if offset > 0 { SO_FIELD_BYTES } else { 0 }
}

/// The configuration of an AM entity (TS 38.331 `RLC-Config`, `UL-AM-RLC` / `DL-AM-RLC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmConfig {
    /// The transmission buffer: bytes not yet sent a first time (1 byte to 1 GiB).
    pub capacity_bytes: u64,
    /// `sn-FieldLength`: 12 or 18 bits.
    pub sn_bits: u8,
    /// `t-PollRetransmit`, in µs: 1–4000 ms.
    pub t_poll_retransmit_us: u64,
    /// `pollPDU`: 4–65 536 PDUs, `None` = infinity.
    pub poll_pdu: Option<u32>,
    /// `pollByte`: 1 kB – 40 MB (1 kB = 1000 bytes), `None` = infinity.
    pub poll_byte: Option<u64>,
    /// `maxRetxThreshold`: one of 1, 2, 3, 4, 6, 8, 16, 32.
    pub max_retx_threshold: u8,
    /// `t-Reassembly`, in µs: 0–200 ms.
    pub t_reassembly_us: u64,
    /// `t-StatusProhibit`, in µs: 0–2400 ms.
    pub t_status_prohibit_us: u64,
    /// Deliver SDUs in SN order, as LTE's 36.322 AM does; `false` is NR's delivery of each SDU
    /// as soon as it is complete.
    pub in_order: bool,
}

/// The allowed `maxRetxThreshold` values (38.331: t1, t2, t3, t4, t6, t8, t16, t32).
pub const MAX_RETX_VALUES: [u8; 8] = [1, 2, 3, 4, 6, 8, 16, 32];

impl AmConfig {
    /// A typical NR data bearer: 18-bit SN, t-PollRetransmit 45 ms, pollPDU p64, pollByte
    /// kB500 (typical DRB values; the 38.331 §9.2.1 SRB default is infinity for both),
    /// maxRetxThreshold t8, t-Reassembly 35 ms, t-StatusProhibit 0 ms, NR delivery.
    pub fn nr_default(capacity_bytes: u64) -> AmConfig {
        AmConfig {
            capacity_bytes,
            sn_bits: 18,
            t_poll_retransmit_us: 45_000,
            poll_pdu: Some(64),
            poll_byte: Some(500_000),
            max_retx_threshold: 8,
            t_reassembly_us: 35_000,
            t_status_prohibit_us: 0,
            in_order: false,
        }
    }

    /// AM_Window_Size for the SN length: 2048 or 131 072.
    pub fn window_size(&self) -> u64 {
        if self.sn_bits <= 12 {
            AM_WINDOW_12
        } else {
            AM_WINDOW_18
        }
    }

    /// Checks every field against its TS 38.331 range; the error names the field.
    pub fn validate(&self) -> Result<(), CellError> {
        fn range(field: &str, v: u64, lo: u64, hi: u64, allowed: &str) -> Result<(), CellError> {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(CellError::out_of_range(field, v as f64, allowed))
            }
        }
        range("rlc.max_tx_buffer_bytes", self.capacity_bytes, 1, 1 << 30, "an integer in [1, 2^30] bytes")?;
        if self.sn_bits != 12 && self.sn_bits != 18 {
            return Err(CellError::out_of_range("rlc.sn_field_length", self.sn_bits as f64, "12 or 18 bits"));
        }
        range("rlc.t_poll_retransmit", self.t_poll_retransmit_us, 1_000, 4_000_000, "in [1000, 4000000] µs (1–4000 ms)")?;
        if let Some(p) = self.poll_pdu {
            range("rlc.poll_pdu", p as u64, 4, 65_536, "in [4, 65536] PDUs, or None for infinity")?;
        }
        if let Some(b) = self.poll_byte {
            range("rlc.poll_byte", b, 1_000, 40_000_000, "in [1000, 40000000] bytes (kB1–mB40), or None for infinity")?;
        }
        if !MAX_RETX_VALUES.contains(&self.max_retx_threshold) {
            return Err(CellError::out_of_range(
                "rlc.max_retx_threshold",
                self.max_retx_threshold as f64,
                "one of 1, 2, 3, 4, 6, 8, 16, 32",
            ));
        }
        range("rlc.t_reassembly", self.t_reassembly_us, 0, 200_000, "in [0, 200000] µs (0–200 ms)")?;
        range("rlc.t_status_prohibit", self.t_status_prohibit_us, 0, 2_400_000, "in [0, 2400000] µs (0–2400 ms)")?;
        Ok(())
    }
}

/// One AMD PDU: one SDU or SDU segment (§6.2.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmPdu {
    /// The SDU's sequence number, unwrapped (the SN field is its low 12 or 18 bits).
    pub sn: u64,
    /// The SDU bytes carried.
    pub segment: UmSegment,
    /// The header, in bytes (see [`am_header_bytes`]).
    pub header_bytes: u32,
    /// The P (poll) bit.
    pub poll: bool,
    /// True if these bytes were sent before (an ARQ retransmission).
    pub retransmission: bool,
}

impl AmPdu {
    /// SDU bytes carried.
    pub fn data_bytes(&self) -> u32 {
        self.segment.len
    }

    /// Header plus data, in bytes.
    pub fn size(&self) -> u32 {
        self.header_bytes + self.segment.len
    }
}

/// One NACK of a STATUS PDU (§6.2.2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmNack {
    /// NACK_SN, unwrapped.
    pub sn: u64,
    /// The missing bytes `start..end` of the SDU (SOstart, SOend + 1), or `None` if the whole
    /// SDU is missing.
    pub so: Option<(u32, u32)>,
}

/// A STATUS PDU (§6.2.2.5): every SN below `ack_sn` not listed in `nacks` was received whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AmStatus {
    /// ACK_SN: the next SN not received and not NACKed.
    pub ack_sn: u64,
    /// The NACKs, in increasing SN and offset order.
    pub nacks: Vec<AmNack>,
}

impl AmStatus {
    /// Its size on the air (§6.2.2.5): 3 bytes (D/C, CPT, ACK_SN, E1) plus, per NACK, 2 bytes
    /// (12-bit SN) or 3 bytes (18-bit SN) and 4 more bytes for SOstart/SOend. NACK ranges are
    /// not used.
    pub fn size_bytes(&self, sn_bits: u8) -> u32 {
        let per_nack = if sn_bits <= 12 { 2 } else { 3 };
        let body: u64 = self.nacks.iter().map(|n| per_nack + if n.so.is_some() { 4 } else { 0 }).sum();
        u32::try_from(3 + body).unwrap_or(u32::MAX)
    }
}

/// A set of byte ranges `start..end` of one SDU: sorted, disjoint and not touching.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ByteRanges(Vec<(u32, u32)>);

impl ByteRanges {
    /// Adds `a..b`; returns how many bytes were not in the set before.
    pub(crate) fn insert(&mut self, a: u32, b: u32) -> u32 {
        if a >= b {
            return 0;
        }
        let start = self.0.partition_point(|r| r.1 < a);
        let (mut lo, mut hi, mut end) = (a, b, start);
        let mut covered = 0;
        while end < self.0.len() && self.0[end].0 <= b {
            let (x, y) = self.0[end];
            covered += y.min(b).saturating_sub(x.max(a));
            lo = lo.min(x);
            hi = hi.max(y);
            end += 1;
        }
        self.0.splice(start..end, [(lo, hi)]);
        (b - a) - covered
    }

    /// Removes `a..b`; returns how many bytes were in the set.
    pub(crate) fn remove(&mut self, a: u32, b: u32) -> u32 {
        if a >= b {
            return 0;
        }
        let mut removed = 0;
        let mut out = Vec::with_capacity(self.0.len() + 1);
        for &(x, y) in &self.0 {
            if y <= a || x >= b {
                out.push((x, y));
                continue;
            }
            removed += y.min(b) - x.max(a);
            if x < a {
                out.push((x, a));
            }
            if y > b {
                out.push((b, y));
            }
        }
        self.0 = out;
        removed
    }

    /// True if every byte of `a..b` is in the set.
    pub(crate) fn covers(&self, a: u32, b: u32) -> bool {
        a >= b || self.0.iter().any(|&(x, y)| x <= a && b <= y)
    }

    /// The bytes in the set.
    pub(crate) fn total(&self) -> u64 {
        self.0.iter().map(|&(x, y)| (y - x) as u64).sum()
    }

    /// The ranges, in order.
    pub(crate) fn ranges(&self) -> &[(u32, u32)] {
        &self.0
    }

    /// True if the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Empties the set.
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// The ranges of `0..size` not in the set, in order.
    pub(crate) fn gaps(&self, size: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut at = 0;
        for &(x, y) in &self.0 {
            if x > at {
                out.push((at, x.min(size)));
            }
            at = at.max(y);
        }
        if at < size {
            out.push((at, size));
        }
        out.retain(|&(a, b)| a < b);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges_merge_split_and_count() {
        let mut r = ByteRanges::default();
        assert_eq!(r.insert(10, 20), 10);
        assert_eq!(r.insert(30, 40), 10);
        assert_eq!(r.insert(15, 35), 10, "only 20..30 is new");
        assert_eq!(r.ranges(), &[(10, 40)]);
        assert_eq!(r.insert(40, 45), 5, "touching ranges merge");
        assert_eq!(r.ranges(), &[(10, 45)]);
        assert_eq!(r.insert(0, 50), 15);
        assert_eq!(r.remove(20, 30), 10);
        assert_eq!(r.ranges(), &[(0, 20), (30, 50)]);
        assert!(r.covers(0, 20) && r.covers(35, 50) && !r.covers(15, 35));
        assert_eq!(r.gaps(60), vec![(20, 30), (50, 60)]);
        assert_eq!(r.total(), 40);
        assert_eq!(r.remove(0, 100), 40);
        assert!(r.is_empty());
        assert_eq!(r.gaps(5), vec![(0, 5)]);
        assert_eq!((r.insert(5, 5), r.remove(7, 3)), (0, 0));
    }

    #[test]
    fn headers_and_status_sizes_follow_6_2_2() {
        assert_eq!([am_header_bytes(12, 0), am_header_bytes(12, 1), am_header_bytes(18, 0), am_header_bytes(18, 9)], [2, 4, 3, 5]);
        let st = AmStatus {
            ack_sn: 9,
            nacks: vec![AmNack { sn: 2, so: None }, AmNack { sn: 4, so: Some((100, 200)) }],
        };
        assert_eq!(st.size_bytes(12), 3 + 2 + 6);
        assert_eq!(st.size_bytes(18), 3 + 3 + 7);
        assert_eq!(AmStatus::default().size_bytes(18), 3);
        let cfg = AmConfig::nr_default(1000);
        assert_eq!(cfg.validate(), Ok(()));
        assert_eq!((cfg.window_size(), AmConfig { sn_bits: 12, ..cfg }.window_size()), (131_072, 2048));
    }
}
