//! The receiving side of one RLC UM bearer (TS 36.322 §5.1.2.2, as LENA's `LteRlcUm`):
//! reordering of the PDUs HARQ delivers out of order, t-Reordering, and reassembly of SDUs from
//! their segments.
//!
//! PDUs are numbered by the transmitter without wrap-around here (the 10-bit SN of 36.322 is
//! the low bits of this number; a window of 512 never wraps within t-Reordering at LTE rates,
//! so the unwrapped number is equivalent). The receiver keeps PDUs above the next expected
//! number; when the next expected one is missing, t-Reordering (100 ms by default, LENA's
//! `ReorderingTimer`) starts, and on its expiry the receiver gives the missing PDUs up and goes
//! on from the first one it holds (VR(UR) moves past the gap, §5.1.2.2.4). PDUs are reassembled
//! in order: an SDU comes out once all its bytes arrived in sequence; an SDU one of whose
//! segments was in a PDU given up is discarded (`lost_sdus`), as 36.322 §5.1.2.2.3 says of
//! SDUs that cannot be reassembled.

use std::collections::BTreeMap;

use crate::rlc::UmPdu;

/// What a receiver reassembled or gave up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxCounters {
    /// PDUs received (duplicates and PDUs below the window included).
    pub pdus: u64,
    /// PDUs given up on t-Reordering's expiry.
    pub missing_pdus: u64,
    /// SDUs delivered whole.
    pub delivered_sdus: u64,
    /// SDUs discarded because a segment of theirs was given up.
    pub lost_sdus: u64,
    /// t-Reordering expiries.
    pub reordering_expiries: u64,
    /// PDUs that arrived after t-Reordering had given them up.
    pub late_pdus: u64,
}

/// An SDU's reassembly in progress.
#[derive(Clone, Copy, Debug)]
struct Assembly {
    sdu_id: u64,
    /// Bytes up to the end of the last segment received.
    bytes: u32,
    /// A segment of it is missing: it will be discarded.
    broken: bool,
}

/// The receiving side of one UM bearer.
#[derive(Clone, Debug)]
pub struct UmReceiver {
    t_reordering_us: u64,
    next: u64,
    held: BTreeMap<u64, UmPdu>,
    timer_expires_us: Option<u64>,
    assembly: Option<Assembly>,
    counters: RxCounters,
}

impl UmReceiver {
    /// A receiver whose t-Reordering lasts `t_reordering_us` µs.
    pub fn new(t_reordering_us: u64) -> UmReceiver {
        UmReceiver { t_reordering_us, next: 0, held: BTreeMap::new(), timer_expires_us: None, assembly: None, counters: RxCounters::default() }
    }

    /// The counts since the start.
    pub fn counters(&self) -> RxCounters {
        self.counters
    }

    /// PDUs held for reordering.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// When t-Reordering expires, if it runs.
    pub fn timer_expiry_us(&self) -> Option<u64> {
        self.timer_expires_us
    }

    /// PDU number `seq` arrived at `now_us`; the SDUs it completes (their ids) are appended to
    /// `out` in order, those that can no longer be reassembled to `lost`.
    pub fn receive(&mut self, now_us: u64, seq: u64, pdu: UmPdu, out: &mut Vec<u64>, lost: &mut Vec<u64>) {
        self.counters.pdus += 1;
        if seq < self.next {
            // Given up already (t-Reordering expired before HARQ delivered it): its SDUs
            // cannot be completed any more.
            self.counters.late_pdus += 1;
            lost.extend(pdu.segments.iter().map(|s| s.sdu_id));
            return;
        }
        if self.held.contains_key(&seq) {
            return; // a duplicate
        }
        self.held.insert(seq, pdu);
        self.deliver_in_order(out, lost);
        if self.held.is_empty() {
            self.timer_expires_us = None;
        } else if self.timer_expires_us.is_none() {
            self.timer_expires_us = Some(now_us + self.t_reordering_us);
        }
    }

    /// Gives up the missing PDUs if t-Reordering expired by `now_us`; appends the SDUs that
    /// completes to `out`, those it breaks to `lost`.
    pub fn expire(&mut self, now_us: u64, out: &mut Vec<u64>, lost: &mut Vec<u64>) {
        while let Some(at) = self.timer_expires_us.filter(|&at| at <= now_us) {
            let _ = at;
            self.counters.reordering_expiries += 1;
            let Some(&first) = self.held.keys().next() else {
                self.timer_expires_us = None;
                return;
            };
            self.counters.missing_pdus += first - self.next;
            self.drop_assembly(lost);
            self.next = first;
            self.deliver_in_order(out, lost);
            // A gap left behind restarts the timer from now (§5.1.2.2.4).
            self.timer_expires_us = if self.held.is_empty() { None } else { Some(now_us + self.t_reordering_us) };
        }
    }

    fn drop_assembly(&mut self, lost: &mut Vec<u64>) {
        if let Some(a) = self.assembly.take() {
            self.counters.lost_sdus += 1;
            lost.push(a.sdu_id);
        }
    }

    fn deliver_in_order(&mut self, out: &mut Vec<u64>, lost: &mut Vec<u64>) {
        while let Some(pdu) = self.held.remove(&self.next) {
            self.next += 1;
            for seg in &pdu.segments {
                let continues = matches!(self.assembly, Some(a) if a.sdu_id == seg.sdu_id && a.bytes == seg.offset);
                if !continues {
                    // Another SDU starts: one left unfinished is lost, and so is this one if
                    // its beginning is missing.
                    self.drop_assembly(lost);
                    self.assembly = Some(Assembly { sdu_id: seg.sdu_id, bytes: seg.offset, broken: seg.offset != 0 });
                }
                let Some(a) = self.assembly.as_mut() else { continue };
                a.bytes += seg.len;
                if seg.ends_sdu() {
                    if a.broken {
                        self.counters.lost_sdus += 1;
                        lost.push(seg.sdu_id);
                    } else {
                        out.push(seg.sdu_id);
                        self.counters.delivered_sdus += 1;
                    }
                    self.assembly = None;
                }
            }
        }
    }
}
