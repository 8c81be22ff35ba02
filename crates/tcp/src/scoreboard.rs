//! The sender's retransmission queue and SACK scoreboard (RFC 6675 §2–§5: SACKed ranges,
//! `IsLost`, `NextSeg` rule 1, `pipe`; RFC 2018 §8 sender behaviour).
//!
//! Segments keep the boundaries they were first sent with (retransmissions reuse them), live
//! in a `VecDeque` ordered by sequence number and are popped from the front by cumulative ACKs.
//! Beside the per-segment flags the scoreboard keeps the SACKed ranges as a sorted `Vec` of
//! disjoint ranges, so a SACK block already known costs a binary search instead of a walk over
//! the window, and every counter (`pipe`, SACKed bytes, lost segments awaiting retransmission)
//! is maintained incrementally: no per-ACK work proportional to the window.
//!
//! `pipe` counts each unSACKed segment at most once: its bytes are in the network if the
//! original is not deemed lost or a retransmission of it is outstanding. (RFC 6675 counts a
//! retransmitted segment that is not deemed lost twice; that only happens for a tail loss
//! probe, and counting it once keeps `pipe ≤ bytes outstanding`.)
//! `IsLost` uses the byte rule only: more than (DupThresh − 1)·SMSS bytes SACKed above.

use std::collections::VecDeque;

use multiconn_cc::SentRateState;
use multiconn_core::Time;

/// One segment sent and not yet cumulatively acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentSegment {
    /// First sequence number.
    pub start: u64,
    /// End sequence number (exclusive).
    pub end: u64,
    /// Time of the first transmission.
    pub first_sent: Time,
    /// Time of the latest (re)transmission.
    pub last_sent: Time,
    /// Transmissions so far (1: never retransmitted).
    pub tx_count: u32,
    /// Covered by a SACK block.
    pub sacked: bool,
    /// Deemed lost (by SACK, RACK, dupacks or an RTO) and not acknowledged since.
    pub lost: bool,
    /// A retransmission of it is outstanding.
    pub retrans_in_flight: bool,
    /// Delivery-rate state of the latest transmission.
    pub rate: SentRateState,
    /// Place of the latest transmission in the sender's send order.
    pub xmit_order: u64,
}

impl SentSegment {
    /// Sequence space in bytes.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    /// Occupies no sequence space.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    fn pipe_bytes(&self) -> u64 {
        if self.sacked || (self.lost && !self.retrans_in_flight) {
            0
        } else {
            self.len()
        }
    }
    /// Lost and waiting for a retransmission (NextSeg rule 1).
    pub fn needs_retransmission(&self) -> bool {
        self.lost && !self.retrans_in_flight && !self.sacked
    }
}

/// The retransmission queue and SACK scoreboard of one sender (see the module header).
#[derive(Clone, Debug)]
pub struct Scoreboard {
    segs: VecDeque<SentSegment>,
    snd_una: u64,
    snd_nxt: u64,
    /// Sorted, disjoint, non-adjacent SACKed ranges, all within [snd_una, snd_nxt).
    sacked: Vec<(u64, u64)>,
    pipe: u64,
    sacked_bytes: u64,
    sacked_segments: u64,
    /// Segments with `needs_retransmission()`.
    lost_pending: u64,
    /// No segment below this sequence number needs a retransmission.
    retx_hint: u64,
    /// Segments below this sequence number were already judged by `mark_lost_by_sack`.
    mark_hint: u64,
    /// Transmissions so far.
    xmits: u64,
}

impl Scoreboard {
    /// An empty scoreboard whose next sequence number is `start`.
    pub fn new(start: u64) -> Scoreboard {
        Scoreboard {
            segs: VecDeque::new(),
            snd_una: start,
            snd_nxt: start,
            sacked: Vec::new(),
            pipe: 0,
            sacked_bytes: 0,
            sacked_segments: 0,
            lost_pending: 0,
            retx_hint: start,
            mark_hint: start,
            xmits: 0,
        }
    }

    /// Oldest unacknowledged sequence number (SND.UNA).
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// Next sequence number to send (SND.NXT).
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// RFC 6675 pipe: bytes believed to be in the network.
    pub fn pipe(&self) -> u64 {
        self.pipe
    }
    /// Bytes sent and not cumulatively acknowledged (FlightSize).
    pub fn outstanding(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
    /// Bytes SACKed above `snd_una`.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    /// Segments SACKed above `snd_una`.
    pub fn sacked_segments(&self) -> u64 {
        self.sacked_segments
    }
    /// Segments deemed lost and not yet retransmitted.
    pub fn lost_pending(&self) -> u64 {
        self.lost_pending
    }
    /// SACKed ranges `[start, end)`, sorted and disjoint.
    pub fn sacked_ranges(&self) -> &[(u64, u64)] {
        &self.sacked
    }
    /// Highest SACKed sequence number, or `snd_una` (RFC 6675 HighACK / forward ACK).
    pub fn fack(&self) -> u64 {
        self.sacked.last().map_or(self.snd_una, |r| r.1)
    }
    /// Segments held (sent and not cumulatively acknowledged).
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    /// No segment outstanding.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    /// The `idx`-th outstanding segment in sequence order.
    pub fn get(&self, idx: usize) -> Option<&SentSegment> {
        self.segs.get(idx)
    }
    /// The outstanding segments in sequence order.
    pub fn segments(&self) -> impl Iterator<Item = &SentSegment> {
        self.segs.iter()
    }

    /// Index of the segment holding sequence number `seq`.
    pub fn index_of(&self, seq: u64) -> Option<usize> {
        if seq < self.snd_una || seq >= self.snd_nxt {
            return None;
        }
        let i = self.segs.partition_point(|s| s.end <= seq);
        (i < self.segs.len()).then_some(i)
    }

    /// Applies `f` to segment `idx`, keeping the counters right.
    fn modify(&mut self, idx: usize, f: impl FnOnce(&mut SentSegment)) {
        let seg = &mut self.segs[idx];
        let (pipe0, lp0, sack0, len0) = (
            seg.pipe_bytes(),
            seg.needs_retransmission(),
            seg.sacked,
            seg.len(),
        );
        f(seg);
        let (pipe1, lp1, sack1, len1) = (
            seg.pipe_bytes(),
            seg.needs_retransmission(),
            seg.sacked,
            seg.len(),
        );
        let start = seg.start;
        self.pipe = self.pipe - pipe0 + pipe1;
        self.lost_pending = self.lost_pending - lp0 as u64 + lp1 as u64;
        if sack0 {
            self.sacked_bytes -= len0;
            self.sacked_segments -= 1;
        }
        if sack1 {
            self.sacked_bytes += len1;
            self.sacked_segments += 1;
        }
        if lp1 && !lp0 {
            self.retx_hint = self.retx_hint.min(start);
        }
    }

    /// A new segment of `len` bytes leaves at `snd_nxt`; returns its start.
    pub fn on_sent(&mut self, len: u64, now: Time, rate: SentRateState) -> u64 {
        let start = self.snd_nxt;
        let seg = SentSegment {
            start,
            end: start + len,
            first_sent: now,
            last_sent: now,
            tx_count: 1,
            sacked: false,
            lost: false,
            retrans_in_flight: false,
            rate,
            xmit_order: self.xmits,
        };
        self.xmits += 1;
        self.pipe += len;
        self.snd_nxt = seg.end;
        self.segs.push_back(seg);
        start
    }

    /// Segment `idx` was sent again.
    pub fn on_retransmitted(&mut self, idx: usize, now: Time, rate: SentRateState) {
        let order = self.xmits;
        self.xmits += 1;
        self.modify(idx, |s| {
            s.xmit_order = order;
            s.tx_count += 1;
            s.last_sent = now;
            s.retrans_in_flight = true;
            s.rate = rate;
        });
    }

    /// Declares segment `idx` lost (or its outstanding retransmission). Returns whether that
    /// changed anything.
    pub fn mark_lost(&mut self, idx: usize) -> bool {
        let Some(s) = self.segs.get(idx) else {
            return false;
        };
        if s.sacked || s.needs_retransmission() {
            return false;
        }
        self.modify(idx, |s| {
            s.lost = true;
            s.retrans_in_flight = false;
        });
        true
    }

    /// Retransmission timeout: everything not SACKed is lost. Returns how many segments
    /// became lost.
    pub fn mark_all_lost(&mut self) -> u64 {
        let mut n = 0;
        for i in 0..self.segs.len() {
            n += self.mark_lost(i) as u64;
        }
        n
    }

    /// Cumulative ACK up to `ack`: drops the segments below it, calling `delivered` for each
    /// removed segment that had not been SACKed. Returns the bytes newly acknowledged that
    /// had not been SACKed before.
    pub fn ack(&mut self, ack: u64, mut delivered: impl FnMut(&SentSegment)) -> u64 {
        let ack = ack.min(self.snd_nxt);
        if ack <= self.snd_una {
            return 0;
        }
        let mut newly = 0;
        while let Some(front) = self.segs.front() {
            if front.end > ack {
                break;
            }
            let s = *front;
            if !s.sacked {
                newly += s.len();
                delivered(&s);
            }
            self.pipe -= s.pipe_bytes();
            self.lost_pending -= s.needs_retransmission() as u64;
            if s.sacked {
                self.sacked_bytes -= s.len();
                self.sacked_segments -= 1;
            }
            self.segs.pop_front();
        }
        // An ACK inside a segment (not produced by this model's receiver) trims it.
        if let Some(front) = self.segs.front() {
            if front.start < ack {
                let sacked = front.sacked;
                let cut = ack - front.start;
                if !sacked {
                    newly += cut;
                }
                self.modify(0, |x| x.start = ack);
            }
        }
        self.snd_una = ack;
        let k = self.sacked.partition_point(|r| r.1 <= ack);
        self.sacked.drain(..k);
        if let Some(first) = self.sacked.first_mut() {
            first.0 = first.0.max(ack);
        }
        self.retx_hint = self.retx_hint.max(ack);
        self.mark_hint = self.mark_hint.max(ack);
        newly
    }

    /// Inserts [a, b) into the SACKed ranges, merging neighbours.
    fn insert_range(&mut self, a: u64, b: u64) {
        let i = self.sacked.partition_point(|r| r.1 < a);
        let j = self.sacked.partition_point(|r| r.0 <= b);
        if i < j {
            let merged = (a.min(self.sacked[i].0), b.max(self.sacked[j - 1].1));
            self.sacked.splice(i..j, std::iter::once(merged));
        } else {
            self.sacked.insert(i, (a, b));
        }
    }

    /// A SACK block [start, end): marks the segments wholly inside it, calling `delivered` for
    /// each newly SACKed one. Returns the bytes newly SACKed. Parts outside
    /// [snd_una, snd_nxt) are ignored.
    pub fn sack(&mut self, start: u64, end: u64, mut delivered: impl FnMut(&SentSegment)) -> u64 {
        let a = start.max(self.snd_una);
        let b = end.min(self.snd_nxt);
        let mut newly = 0;
        let mut cursor = a;
        while cursor < b {
            let k = self.sacked.partition_point(|r| r.1 <= cursor);
            if k < self.sacked.len() && self.sacked[k].0 <= cursor {
                cursor = self.sacked[k].1;
                continue;
            }
            let gap_end = if k < self.sacked.len() {
                self.sacked[k].0.min(b)
            } else {
                b
            };
            // Mark the segments wholly inside [cursor, gap_end).
            let mut i = self.segs.partition_point(|s| s.start < cursor);
            let mut run: Option<(u64, u64)> = None;
            while i < self.segs.len() && self.segs[i].end <= gap_end {
                let s = self.segs[i];
                if !s.sacked {
                    self.modify(i, |x| {
                        x.sacked = true;
                        x.lost = false;
                        x.retrans_in_flight = false;
                    });
                    newly += s.len();
                    delivered(&s);
                    run = Some(run.map_or((s.start, s.end), |r| (r.0, s.end)));
                }
                i += 1;
            }
            if let Some((ra, rb)) = run {
                self.insert_range(ra, rb);
            }
            cursor = gap_end;
        }
        newly
    }

    /// RFC 6675 `IsLost` with the byte rule: marks lost every segment with more than
    /// (DupThresh − 1)·SMSS bytes SACKed above it, calling `lost` for each. Amortised O(1):
    /// segments already judged are not looked at again.
    pub fn mark_lost_by_sack(
        &mut self,
        dup_thresh: u64,
        mss: u64,
        mut lost: impl FnMut(&SentSegment),
    ) {
        let limit = dup_thresh.saturating_sub(1) * mss;
        if self.sacked_bytes <= limit {
            return;
        }
        let from = self.mark_hint.max(self.snd_una);
        let Some(mut i) = self.index_of(from) else {
            return;
        };
        let first = self.segs[i].start;
        let mut below: u64 = self
            .sacked
            .iter()
            .take_while(|r| r.0 < first)
            .map(|r| r.1.min(first) - r.0)
            .sum();
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.sacked {
                below += s.len();
            } else {
                if self.sacked_bytes - below <= limit {
                    break;
                }
                if !s.lost && self.mark_lost(i) {
                    lost(&self.segs[i]);
                }
            }
            self.mark_hint = s.end;
            i += 1;
        }
    }

    /// RFC 6675 NextSeg rule 1: the lowest segment deemed lost and not retransmitted.
    pub fn next_lost(&mut self) -> Option<usize> {
        if self.lost_pending == 0 {
            return None;
        }
        let from = self.retx_hint.max(self.snd_una);
        let mut i = self.index_of(from)?;
        while i < self.segs.len() {
            if self.segs[i].needs_retransmission() {
                self.retx_hint = self.segs[i].start;
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// The highest segment not SACKed (the tail loss probe's retransmission).
    pub fn last_unsacked(&self) -> Option<usize> {
        (0..self.segs.len()).rev().find(|&i| !self.segs[i].sacked)
    }

    /// Checks every invariant by recomputing from scratch (tests; O(window)).
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut expect = self.snd_una;
        let (mut pipe, mut sb, mut ss, mut lp) = (0, 0, 0, 0);
        let mut union: Vec<(u64, u64)> = Vec::new();
        for s in &self.segs {
            if s.start != expect || s.end <= s.start {
                return Err(format!(
                    "segment {:?} does not follow {expect}",
                    (s.start, s.end)
                ));
            }
            expect = s.end;
            if s.lost && s.sacked {
                return Err(format!("segment {} is lost and SACKed", s.start));
            }
            pipe += s.pipe_bytes();
            if s.sacked {
                sb += s.len();
                ss += 1;
                match union.last_mut() {
                    Some(r) if r.1 == s.start => r.1 = s.end,
                    _ => union.push((s.start, s.end)),
                }
            }
            if s.needs_retransmission() {
                lp += 1;
                if s.start < self.retx_hint {
                    return Err(format!(
                        "lost segment {} below the retransmission hint {}",
                        s.start, self.retx_hint
                    ));
                }
            }
        }
        if expect != self.snd_nxt {
            return Err(format!(
                "segments end at {expect}, snd_nxt {}",
                self.snd_nxt
            ));
        }
        for w in self.sacked.windows(2) {
            if w[0].1 >= w[1].0 {
                return Err(format!(
                    "SACKed ranges {:?} and {:?} overlap or touch",
                    w[0], w[1]
                ));
            }
        }
        if let Some(r) = self.sacked.first() {
            if r.0 < self.snd_una {
                return Err(format!("SACKed range {r:?} below snd_una {}", self.snd_una));
            }
        }
        if union != self.sacked {
            return Err(format!(
                "ranges {:?} differ from SACKed segments {:?}",
                self.sacked, union
            ));
        }
        if (pipe, sb, ss, lp)
            != (
                self.pipe,
                self.sacked_bytes,
                self.sacked_segments,
                self.lost_pending,
            )
        {
            return Err(format!(
                "counters (pipe, sacked bytes, sacked segments, lost) {:?} != recomputed {:?}",
                (
                    self.pipe,
                    self.sacked_bytes,
                    self.sacked_segments,
                    self.lost_pending
                ),
                (pipe, sb, ss, lp)
            ));
        }
        if self.pipe > self.outstanding() {
            return Err(format!(
                "pipe {} > outstanding {}",
                self.pipe,
                self.outstanding()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(1);
        for i in 0..n {
            sb.on_sent(100, Time(i), SentRateState::default());
        }
        sb
    }

    #[test]
    fn cumulative_ack_pops_and_counts() {
        let mut sb = board(5);
        assert_eq!((sb.pipe(), sb.outstanding()), (500, 500));
        let mut seen = 0;
        assert_eq!(sb.ack(201, |_| seen += 1), 200);
        assert_eq!((seen, sb.snd_una(), sb.pipe(), sb.len()), (2, 201, 300, 3));
        sb.check_invariants().unwrap();
    }

    #[test]
    fn sack_marks_whole_segments_and_merges_ranges() {
        let mut sb = board(10);
        assert_eq!(sb.sack(301, 501, |_| ()), 200);
        assert_eq!(sb.sack(501, 650, |_| ()), 100); // 601..650 is half a segment: ignored
        assert_eq!(sb.sacked_ranges(), &[(301, 601)]);
        assert_eq!(sb.sack(301, 601, |_| ()), 0);
        assert_eq!(sb.pipe(), 700);
        sb.check_invariants().unwrap();
    }

    #[test]
    fn is_lost_needs_more_than_two_segments_sacked_above() {
        let mut sb = board(10);
        sb.sack(201, 401, |_| ());
        let mut lost = Vec::new();
        sb.mark_lost_by_sack(3, 100, |s| lost.push(s.start));
        assert!(lost.is_empty());
        sb.sack(401, 501, |_| ());
        sb.mark_lost_by_sack(3, 100, |s| lost.push(s.start));
        assert_eq!(lost, vec![1, 101]);
        assert_eq!((sb.lost_pending(), sb.pipe()), (2, 500));
        assert_eq!(sb.next_lost(), Some(0));
        sb.on_retransmitted(0, Time(50), SentRateState::default());
        assert_eq!(sb.next_lost(), Some(1));
        assert_eq!(sb.pipe(), 600);
        sb.check_invariants().unwrap();
    }

    #[test]
    fn is_lost_resumes_inside_a_sacked_range() {
        let mut sb = board(12);
        sb.sack(101, 401, |_| ());
        let mut lost = Vec::new();
        sb.mark_lost_by_sack(3, 100, |s| lost.push(s.start));
        assert_eq!(lost, vec![1]);
        // The next call starts inside the SACKed range; nothing above 401 may be marked.
        sb.sack(501, 601, |_| ());
        sb.mark_lost_by_sack(3, 100, |s| lost.push(s.start));
        assert_eq!(lost, vec![1]);
        sb.sack(701, 801, |_| ());
        sb.mark_lost_by_sack(3, 100, |s| lost.push(s.start));
        assert_eq!(lost, vec![1], "401 has exactly 2·SMSS above: not yet");
        sb.sack(901, 1001, |_| ());
        sb.mark_lost_by_sack(3, 100, |s| lost.push(s.start));
        assert_eq!(lost, vec![1, 401]);
        sb.check_invariants().unwrap();
    }

    #[test]
    fn rto_marks_everything_not_sacked() {
        let mut sb = board(4);
        sb.sack(201, 301, |_| ());
        assert_eq!(sb.mark_all_lost(), 3);
        assert_eq!(sb.pipe(), 0);
        assert_eq!(sb.next_lost(), Some(0));
        sb.check_invariants().unwrap();
    }

    #[test]
    fn partial_ack_trims_a_segment() {
        let mut sb = board(2);
        assert_eq!(sb.ack(51, |_| ()), 50);
        assert_eq!((sb.pipe(), sb.snd_una()), (150, 51));
        sb.check_invariants().unwrap();
    }
}
