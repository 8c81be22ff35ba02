//! L4S marking at a bearer's RLC transmission buffer: the per-UE queue that is the bottleneck
//! of a cellular path, where an L4S sender's congestion signal has to come from.
//!
//! Packets carrying ECT(1) or CE (RFC 9331 §5.1: the L4S identifier) are marked CE on the
//! buffer's delay; every other packet (Not-ECT, ECT(0)) meets the buffer exactly as it did
//! without marking (drop-tail on its capacity). Two rules, after the L4S reference's §2.4:
//!
//! * [`L4sMarking::Sojourn`] — **sojourn at dequeue**, a step as Linux `sch_dualpi2` marks its
//!   L queue (RFC 9332 §2.5.1, the reference's §1.5): an L4S SDU whose wait in the buffer,
//!   from its arrival to the slot its first byte is put into a PDU, is strictly above
//!   `step_us` is marked CE then (its packet has not left the cell yet: it leaves with its
//!   SDU, marked).
//! * [`L4sMarking::Predicted`] — **predicted sojourn at enqueue**, as L4Span marks in the RAN
//!   above RLC: the bytes already queued ahead of the arriving SDU divided by `rate_est`, an
//!   exponentially weighted moving average of the SDU bytes the bearer's grants drained per
//!   slot over the slots it had data in (weight slot ÷ `window_us` per slot, so it follows
//!   the radio's fading and the scheduler's share). A slot that emptied the buffer drained
//!   the demand, not the capacity, and only counts if it raises the estimate. `rate_est` is floored at
//!   `floor_bytes_per_s`: while the UE is not scheduled (deep fade, blockage, out of range)
//!   the average falls towards 0, and without a floor every packet behind another would be
//!   marked. The mark probability ramps linearly from 0 at `min_th_us` to 1 at `min_th_us +
//!   range_us` (RFC 9332 Appendix A.1's ramp for the L queue); a draw is taken from the
//!   bearer's own stream (derived from the run's seed) only strictly inside the ramp. Until
//!   the bearer has had data in one slot there is no estimate and nothing is marked.
//!
//! A mark changes ECT(1) to CE and is counted ([`L4sCounts::marks`]); a packet that arrives CE
//! stays CE and is counted apart (as `step_marks` of Linux counts only packets it changed).
//! The marker sits beside the [`crate::bearer::Bearer`] it serves and is absent when marking
//! is off, so a cell without marking does no more work per slot than before.

use std::collections::VecDeque;

use multiconn_core::{Ecn, RngStream};

use crate::error::CellError;

/// The sojourn rule's step, µs: Linux DualPI2's `step_thresh` (the reference's §1.5).
pub const DEFAULT_STEP_US: u64 = 1000;
/// The predicted rule's ramp start, µs (own choice: one LTE TTI).
pub const DEFAULT_RAMP_MIN_TH_US: u64 = 1000;
/// The predicted rule's ramp width, µs (own choice: the ramp ends at 5 ms).
pub const DEFAULT_RAMP_RANGE_US: u64 = 4000;
/// The predicted rule's rate window, µs (own choice: eight LTE TTIs).
pub const DEFAULT_RATE_WINDOW_US: u64 = 8000;
/// The predicted rule's rate floor, bytes/s: 1 Mbit/s (own choice: about the smallest grant
/// the LTE schedulers give, one RBG at a low MCS, every TTI).
pub const DEFAULT_RATE_FLOOR_BYTES_PER_S: f64 = 125_000.0;

/// How a cell's RLC buffers mark L4S packets (docs/aqm.md, "L4S marking in the RAN").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum L4sMarking {
    /// Mark at dequeue when the SDU waited strictly more than `step_us`.
    Sojourn {
        /// The step threshold, µs (1000: Linux DualPI2's `step_thresh`).
        step_us: u64,
    },
    /// Mark at enqueue on the predicted sojourn, queued bytes ÷ the drained-rate estimate.
    Predicted {
        /// Where the ramp starts, µs.
        min_th_us: u64,
        /// The ramp's width, µs (0: a step at `min_th_us`).
        range_us: u64,
        /// The moving average's time constant, µs: each slot weighs slot ÷ window (at most 1).
        window_us: u64,
        /// The lowest rate estimate, bytes/s (above 0).
        floor_bytes_per_s: f64,
    },
}

impl L4sMarking {
    /// The sojourn rule with Linux DualPI2's 1 ms step.
    pub const SOJOURN_DEFAULT: L4sMarking = L4sMarking::Sojourn { step_us: DEFAULT_STEP_US };
    /// The predicted rule's defaults: a ramp from 1 ms to 5 ms, an 8 ms window, a 1 Mbit/s
    /// floor.
    pub const PREDICTED_DEFAULT: L4sMarking = L4sMarking::Predicted {
        min_th_us: DEFAULT_RAMP_MIN_TH_US,
        range_us: DEFAULT_RAMP_RANGE_US,
        window_us: DEFAULT_RATE_WINDOW_US,
        floor_bytes_per_s: DEFAULT_RATE_FLOOR_BYTES_PER_S,
    };

    /// Checks the parameters; the error names `cell.l4s_marking.<field>` and what is allowed.
    pub fn validate(&self) -> Result<(), CellError> {
        const MAX_US: u64 = 10_000_000;
        match *self {
            L4sMarking::Sojourn { step_us } => {
                if step_us > MAX_US {
                    return Err(CellError::out_of_range("cell.l4s_marking.step_threshold", step_us as f64 / 1000.0, "at most 10000 ms"));
                }
            }
            L4sMarking::Predicted { min_th_us, range_us, window_us, floor_bytes_per_s } => {
                if min_th_us > MAX_US {
                    return Err(CellError::out_of_range("cell.l4s_marking.ramp_min_th", min_th_us as f64 / 1000.0, "at most 10000 ms"));
                }
                if range_us > MAX_US {
                    return Err(CellError::out_of_range("cell.l4s_marking.ramp_range", range_us as f64 / 1000.0, "at most 10000 ms"));
                }
                if window_us == 0 || window_us > MAX_US {
                    return Err(CellError::out_of_range("cell.l4s_marking.rate_window", window_us as f64 / 1000.0, "above 0 ms and at most 10000 ms"));
                }
                if !(floor_bytes_per_s.is_finite() && floor_bytes_per_s > 0.0) {
                    return Err(CellError::out_of_range("cell.l4s_marking.rate_floor", floor_bytes_per_s * 8.0, "a rate above 0 bit/s"));
                }
            }
        }
        Ok(())
    }
}

/// What one bearer's marker counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct L4sCounts {
    /// L4S packets (ECT(1) or CE) the buffer accepted.
    pub l4s_packets: u64,
    /// Of those, the ECT(1) packets the buffer marked CE.
    pub marks: u64,
    /// Of those, the packets that arrived CE already.
    pub arrived_ce: u64,
}

/// The marking state of one bearer.
#[derive(Clone, Debug)]
pub(crate) struct L4sMarker {
    rule: L4sMarking,
    /// The slot, ns.
    slot_ns: u64,
    /// Sojourn: the L4S SDUs still waiting for their first byte to be sent, (id, arrival µs),
    /// in id order.
    waiting: VecDeque<(u64, u64)>,
    /// Predicted: the drained-rate estimate, bytes/s (`None` before the first sample).
    rate: Option<f64>,
    /// Predicted: SDU bytes handed to MAC in this slot.
    drained: u64,
    /// Predicted: whether the bearer had data at some point of this slot.
    backlogged: bool,
    /// Predicted: the ramp's draws.
    rng: RngStream,
    counts: L4sCounts,
}

impl L4sMarker {
    /// A marker of `rule` for a bearer whose slot lasts `slot_ns`, drawing from `rng`.
    pub(crate) fn new(rule: L4sMarking, slot_ns: u64, rng: RngStream) -> L4sMarker {
        L4sMarker { rule, slot_ns, waiting: VecDeque::new(), rate: None, drained: 0, backlogged: false, rng, counts: L4sCounts::default() }
    }

    /// The counts so far.
    pub(crate) fn counts(&self) -> L4sCounts {
        self.counts
    }

    /// The bearer starts afresh (RLC re-establishment at handover): the queue and the rate
    /// estimate go; the counts and the stream stay.
    pub(crate) fn reset(&mut self) {
        self.waiting.clear();
        self.rate = None;
        self.drained = 0;
        self.backlogged = false;
    }

    /// The rate estimate, bytes/s, floored (`None` before the first sample or in sojourn mode).
    pub(crate) fn rate_estimate(&self) -> Option<f64> {
        match self.rule {
            L4sMarking::Predicted { floor_bytes_per_s, .. } => self.rate.map(|r| r.max(floor_bytes_per_s)),
            L4sMarking::Sojourn { .. } => None,
        }
    }

    /// SDU `id` carrying the packet whose ECN field is `ecn` was queued at `now_us` behind
    /// `ahead_bytes` bytes not yet sent; the field it leaves the buffer with.
    pub(crate) fn on_enqueue(&mut self, id: u64, now_us: u64, ahead_bytes: u64, ecn: Ecn) -> Ecn {
        self.backlogged = true;
        if !matches!(ecn, Ecn::Ect1 | Ecn::Ce) {
            return ecn;
        }
        self.counts.l4s_packets += 1;
        if ecn == Ecn::Ce {
            self.counts.arrived_ce += 1;
        }
        match self.rule {
            L4sMarking::Sojourn { .. } => {
                self.waiting.push_back((id, now_us));
                ecn
            }
            L4sMarking::Predicted { min_th_us, range_us, .. } => {
                let Some(rate) = self.rate_estimate() else { return ecn };
                if ecn == Ecn::Ce {
                    return ecn;
                }
                let sojourn_us = ahead_bytes as f64 * 1e6 / rate;
                let lo = min_th_us as f64;
                let mark = if sojourn_us <= lo {
                    false
                } else if sojourn_us >= lo + range_us as f64 {
                    true
                } else {
                    self.rng.bernoulli((sojourn_us - lo) / range_us as f64)
                };
                if mark {
                    self.counts.marks += 1;
                    Ecn::Ce
                } else {
                    ecn
                }
            }
        }
    }

    /// SDU `id` has its first byte put into a PDU at `now_us`: whether to mark its packet CE
    /// now (sojourn rule; the packet is ECT(1)).
    pub(crate) fn on_first_byte(&mut self, id: u64, now_us: u64) -> bool {
        let L4sMarking::Sojourn { step_us } = self.rule else { return false };
        while self.waiting.front().is_some_and(|&(i, _)| i < id) {
            self.waiting.pop_front();
        }
        match self.waiting.front() {
            Some(&(i, arrival_us)) if i == id => {
                self.waiting.pop_front();
                now_us.saturating_sub(arrival_us) > step_us
            }
            _ => false,
        }
    }

    /// Counts a mark made at dequeue (the packet was ECT(1)).
    pub(crate) fn count_mark(&mut self) {
        self.counts.marks += 1;
    }

    /// `bytes` of SDU data were handed to MAC in this slot.
    pub(crate) fn on_drained(&mut self, bytes: u64) {
        self.drained += bytes;
    }

    /// The end of a slot, with `queued_bytes` left for the next: a slot the bearer had data in
    /// is a sample of the drained rate. A slot that emptied the buffer drained what there was,
    /// not what the grants could take: it only says that the rate is at least that, and
    /// counts only if it raises the estimate.
    pub(crate) fn end_of_slot(&mut self, queued_bytes: u64) {
        let L4sMarking::Predicted { window_us, .. } = self.rule else { return };
        if self.backlogged {
            let sample = self.drained as f64 * 1e9 / self.slot_ns as f64;
            let weight = (self.slot_ns as f64 / (window_us as f64 * 1000.0)).min(1.0);
            match self.rate {
                None => self.rate = Some(sample),
                Some(r) if queued_bytes > 0 || sample > r => self.rate = Some(r + weight * (sample - r)),
                Some(_) => {}
            }
        }
        self.drained = 0;
        self.backlogged = queued_bytes > 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(rule: L4sMarking) -> L4sMarker {
        L4sMarker::new(rule, 1_000_000, RngStream::derive(7, "test/l4s"))
    }

    #[test]
    fn the_step_marks_l4s_sdus_that_waited_strictly_longer_than_the_threshold() {
        let mut m = marker(L4sMarking::SOJOURN_DEFAULT);
        assert_eq!(m.on_enqueue(0, 0, 0, Ecn::Ect1), Ecn::Ect1);
        assert_eq!(m.on_enqueue(1, 100, 1500, Ecn::Ect0), Ecn::Ect0);
        assert_eq!(m.on_enqueue(2, 200, 3000, Ecn::Ect1), Ecn::Ect1);
        assert_eq!(m.on_enqueue(3, 300, 4500, Ecn::NotEct), Ecn::NotEct);
        assert!(!m.on_first_byte(0, 1000), "exactly the step: not above it");
        assert!(!m.on_first_byte(1, 1100), "ECT(0) is not watched");
        assert!(m.on_first_byte(2, 1201));
        assert!(!m.on_first_byte(3, 5000));
        assert!(!m.on_first_byte(2, 9000), "an SDU is judged once");
        assert_eq!(m.counts(), L4sCounts { l4s_packets: 2, marks: 0, arrived_ce: 0 }, "marks are counted by the bearer that makes them");
    }

    #[test]
    fn the_rate_estimate_follows_the_drained_bytes_of_backlogged_slots_only() {
        let mut m = marker(L4sMarking::Predicted { min_th_us: 1000, range_us: 0, window_us: 4000, floor_bytes_per_s: 1000.0 });
        assert_eq!(m.rate_estimate(), None);
        assert_eq!(m.on_enqueue(0, 0, 100_000, Ecn::Ect1), Ecn::Ect1, "no estimate, no mark");
        m.on_drained(1000);
        m.end_of_slot(5000);
        assert_eq!(m.rate_estimate(), Some(1e6), "the first sample: 1000 B in 1 ms");
        m.on_drained(3000);
        m.end_of_slot(2000);
        assert_eq!(m.rate_estimate(), Some(1.5e6), "a quarter of the way to 3 MB/s");
        // A slot that empties the buffer raises the estimate, never lowers it.
        m.on_drained(500);
        m.end_of_slot(0);
        assert_eq!(m.rate_estimate(), Some(1.5e6), "500 B was all there was");
        m.on_enqueue(1, 0, 0, Ecn::NotEct);
        m.on_drained(2000);
        m.end_of_slot(0);
        assert_eq!(m.rate_estimate(), Some(1.625e6));
        // Idle slots (no data) leave the estimate alone.
        m.end_of_slot(0);
        m.end_of_slot(0);
        assert_eq!(m.rate_estimate(), Some(1.625e6));
        // A slot with data left and nothing drained (an outage) pulls it down.
        m.on_enqueue(2, 0, 0, Ecn::NotEct);
        m.end_of_slot(1500);
        assert_eq!(m.rate_estimate(), Some(1.625e6 * 0.75));
        m.on_drained(1625);
        m.end_of_slot(1);
        assert_eq!(m.rate_estimate(), Some(1.625e6 * 0.75 + 0.25 * 1.625e6 * 0.25));
        m.rate = Some(1.625e6);
        // 1625 B ahead at 1.625 MB/s is exactly 1 ms: not above the step; 1626 B is.
        assert_eq!(m.on_enqueue(1, 0, 1625, Ecn::Ect1), Ecn::Ect1);
        assert_eq!(m.on_enqueue(2, 0, 1626, Ecn::Ect1), Ecn::Ce);
        assert_eq!(m.on_enqueue(3, 0, 1_000_000, Ecn::Ect0), Ecn::Ect0, "classic packets are never marked");
        assert_eq!(m.on_enqueue(4, 0, 1_000_000, Ecn::Ce), Ecn::Ce);
        assert_eq!(m.counts(), L4sCounts { l4s_packets: 4, marks: 1, arrived_ce: 1 }, "Not-ECT and ECT(0) are not L4S packets");
    }

    #[test]
    fn the_floor_holds_the_estimate_through_an_outage() {
        let mut m = marker(L4sMarking::Predicted { min_th_us: 1000, range_us: 0, window_us: 1000, floor_bytes_per_s: 2e6 });
        m.on_enqueue(0, 0, 0, Ecn::Ect1);
        m.on_drained(10_000);
        m.end_of_slot(1);
        assert_eq!(m.rate_estimate(), Some(1e7));
        // An outage: backlogged, nothing drained; a 1 ms window forgets at once.
        m.end_of_slot(1);
        assert_eq!(m.rate_estimate(), Some(2e6), "floored");
        assert_eq!(m.on_enqueue(1, 0, 2000, Ecn::Ect1), Ecn::Ect1, "2000 B at the floor: 1 ms");
        assert_eq!(m.on_enqueue(2, 0, 2001, Ecn::Ect1), Ecn::Ce);
    }

    #[test]
    fn the_ramp_marks_in_proportion_and_draws_only_inside_it() {
        let rule = L4sMarking::Predicted { min_th_us: 1000, range_us: 4000, window_us: 1000, floor_bytes_per_s: 1.0 };
        let mut m = marker(rule);
        m.on_enqueue(0, 0, 0, Ecn::Ect1);
        m.on_drained(1000);
        m.end_of_slot(1);
        // 1 MB/s: 1 byte ahead is 1 µs of sojourn. 2 ms: p = 1/4.
        let marks = (0..40_000).filter(|&i| m.on_enqueue(i, 0, 2000, Ecn::Ect1) == Ecn::Ce).count();
        assert!((9_600..10_400).contains(&marks), "{marks} of 40000 at p = 0.25");
        let mut a = marker(rule);
        let mut b = marker(rule);
        for m in [&mut a, &mut b] {
            m.on_enqueue(0, 0, 0, Ecn::Ect1);
            m.on_drained(1000);
            m.end_of_slot(1);
        }
        // Outside the ramp nothing is drawn: the streams stay in step.
        a.on_enqueue(1, 0, 500, Ecn::Ect1);
        a.on_enqueue(2, 0, 9000, Ecn::Ect1);
        let x: Vec<Ecn> = (0..64).map(|i| a.on_enqueue(i, 0, 3000, Ecn::Ect1)).collect();
        let y: Vec<Ecn> = (0..64).map(|i| b.on_enqueue(i, 0, 3000, Ecn::Ect1)).collect();
        assert_eq!(x, y);
    }

    #[test]
    fn parameters_out_of_range_name_their_field() {
        let bad = L4sMarking::Predicted { min_th_us: 1000, range_us: 0, window_us: 0, floor_bytes_per_s: 1.0 };
        assert!(bad.validate().unwrap_err().to_string().contains("cell.l4s_marking.rate_window"));
        let bad = L4sMarking::Predicted { min_th_us: 1000, range_us: 0, window_us: 1000, floor_bytes_per_s: 0.0 };
        assert!(bad.validate().unwrap_err().to_string().contains("cell.l4s_marking.rate_floor"));
        assert!(L4sMarking::Sojourn { step_us: 20_000_000 }.validate().is_err());
        assert!(L4sMarking::SOJOURN_DEFAULT.validate().is_ok() && L4sMarking::PREDICTED_DEFAULT.validate().is_ok());
    }
}
