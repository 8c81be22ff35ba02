//! The receiving side of an AM entity (TS 38.322 §5.2.3.2, §5.3.4); see the module header of
//! [`crate::rlc_am`] for the model and its simplifications.

use std::collections::BTreeMap;

use super::{AmConfig, AmNack, AmPdu, AmStatus, ByteRanges};
use crate::error::CellError;

/// Counts of a receiver since the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AmRxCounters {
    /// AMD PDUs received (all of them).
    pub pdus: u64,
    /// PDUs discarded because every byte they carry was received before (below the window
    /// included).
    pub duplicate_pdus: u64,
    /// PDUs discarded because their SN is at or above RX_Next + AM_Window_Size.
    pub out_of_window_pdus: u64,
    /// PDUs discarded as inconsistent (empty, beyond their SDU's size, or another SDU's id or
    /// size under an SN already seen).
    pub malformed_pdus: u64,
    /// SDUs delivered to the upper layer.
    pub delivered_sdus: u64,
    /// STATUS PDUs sent.
    pub status_reports: u64,
    /// t-Reassembly expiries.
    pub reassembly_expiries: u64,
}

/// One SDU with bytes received, kept until RX_Next passes it.
#[derive(Clone, Debug)]
struct RxSdu {
    id: u64,
    size: u32,
    got: ByteRanges,
    complete: bool,
}

/// The receiving side of one AM bearer.
#[derive(Clone, Debug)]
pub struct AmRx {
    cfg: AmConfig,
    window: u64,
    rx_next: u64,
    rx_next_status_trigger: u64,
    rx_highest_status: u64,
    rx_next_highest: u64,
    /// SDUs at or above RX_Next with bytes received.
    buf: BTreeMap<u64, RxSdu>,
    reassembly_timer_us: Option<u64>,
    prohibit_timer_us: Option<u64>,
    status_triggered: bool,
    /// SNs of polls whose STATUS is delayed (§5.3.4).
    delayed_polls: Vec<u64>,
    counters: AmRxCounters,
}

impl AmRx {
    /// An idle receiver; the configuration is validated.
    pub fn new(cfg: AmConfig) -> Result<AmRx, CellError> {
        cfg.validate()?;
        Ok(AmRx {
            cfg,
            window: cfg.window_size(),
            rx_next: 0,
            rx_next_status_trigger: 0,
            rx_highest_status: 0,
            rx_next_highest: 0,
            buf: BTreeMap::new(),
            reassembly_timer_us: None,
            prohibit_timer_us: None,
            status_triggered: false,
            delayed_polls: Vec::new(),
            counters: AmRxCounters::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AmConfig {
        &self.cfg
    }

    /// The counts since the start.
    pub fn counters(&self) -> AmRxCounters {
        self.counters
    }

    /// RX_Next: the first SN not completely received (the window's lower edge).
    pub fn rx_next(&self) -> u64 {
        self.rx_next
    }

    /// RX_Highest_Status: the highest SN a STATUS PDU may give as ACK_SN.
    pub fn rx_highest_status(&self) -> u64 {
        self.rx_highest_status
    }

    /// RX_Next_Highest: one above the highest SN received.
    pub fn rx_next_highest(&self) -> u64 {
        self.rx_next_highest
    }

    /// True if a STATUS report is triggered and not yet sent.
    pub fn status_triggered(&self) -> bool {
        self.status_triggered
    }

    /// When t-Reassembly expires, if it runs.
    pub fn reassembly_timeout(&self) -> Option<u64> {
        self.reassembly_timer_us
    }

    /// The earliest of t-Reassembly's and t-StatusProhibit's expiries, if either runs.
    pub fn timer_expiry_us(&self) -> Option<u64> {
        match (self.reassembly_timer_us, self.prohibit_timer_us) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// An AMD PDU arrives at `now_us` (§5.2.3.2.2–3): discarded if outside the receive window
    /// or if all its bytes were received before; else its new bytes are kept, the state
    /// variables and t-Reassembly updated, and the SDUs it completes appended to `delivered`
    /// (NR: this one as soon as it is complete; in order: every SDU RX_Next passes). A poll
    /// triggers a STATUS report, delayed until SN < RX_Highest_Status or ≥ RX_Next + window.
    pub fn receive(&mut self, now_us: u64, pdu: AmPdu, delivered: &mut Vec<u64>) {
        self.counters.pdus += 1;
        let x = pdu.sn;
        let seg = pdu.segment;
        let Some(end) = seg.offset.checked_add(seg.len).filter(|&e| seg.len > 0 && e <= seg.sdu_bytes) else {
            self.counters.malformed_pdus += 1;
            return;
        };
        let above = x >= self.rx_next.saturating_add(self.window);
        let discard = if above {
            self.counters.out_of_window_pdus += 1;
            true
        } else if x < self.rx_next {
            self.counters.duplicate_pdus += 1;
            true
        } else {
            match self.buf.get(&x) {
                Some(e) if e.id != seg.sdu_id || e.size != seg.sdu_bytes => {
                    self.counters.malformed_pdus += 1;
                    return;
                }
                Some(e) if e.complete || e.got.covers(seg.offset, end) => {
                    self.counters.duplicate_pdus += 1;
                    true
                }
                _ => false,
            }
        };
        if discard {
            if pdu.poll {
                self.status_triggered = true;
            }
            return;
        }
        let e = self.buf.entry(x).or_insert_with(|| RxSdu { id: seg.sdu_id, size: seg.sdu_bytes, got: ByteRanges::default(), complete: false });
        e.got.insert(seg.offset, end);
        let complete = e.got.total() == e.size as u64;
        e.complete = complete;
        let id = e.id;
        if x >= self.rx_next_highest {
            self.rx_next_highest = x + 1;
        }
        if complete {
            if !self.cfg.in_order {
                delivered.push(id);
                self.counters.delivered_sdus += 1;
            }
            if x == self.rx_highest_status {
                self.rx_highest_status = self.first_incomplete_from(x + 1);
            }
            if x == self.rx_next {
                self.advance_rx_next(delivered);
            }
        }
        if self.reassembly_timer_us.is_some() {
            let t = self.rx_next_status_trigger;
            let outside = t < self.rx_next || t >= self.rx_next + self.window;
            if t == self.rx_next
                || (t == self.rx_next + 1 && !self.gap_before_last(self.rx_next))
                || (outside && t != self.rx_next + self.window)
            {
                self.reassembly_timer_us = None;
            }
        }
        if self.reassembly_timer_us.is_none()
            && (self.rx_next_highest > self.rx_next + 1
                || (self.rx_next_highest == self.rx_next + 1 && self.gap_before_last(self.rx_next)))
        {
            self.reassembly_timer_us = Some(now_us.saturating_add(self.cfg.t_reassembly_us));
            self.rx_next_status_trigger = self.rx_next_highest;
        }
        if pdu.poll && !self.delayed_polls.contains(&x) {
            self.delayed_polls.push(x);
        }
        self.release_delayed_polls();
    }

    /// Handles the timers expired by `now_us`: t-Reassembly (§5.2.3.2.4: RX_Highest_Status
    /// moves to the first incomplete SN ≥ RX_Next_Status_Trigger, a STATUS report is triggered
    /// and the timer restarts if gaps remain above) and t-StatusProhibit (a triggered STATUS may
    /// then go out through [`AmRx::poll_status`]).
    pub fn expire(&mut self, now_us: u64) {
        // A restart at `now_us` with t-Reassembly = 0 expires again at once; the second pass
        // moves RX_Highest_Status to RX_Next_Highest and cannot restart.
        while let Some(at) = self.reassembly_timer_us.filter(|&at| at <= now_us) {
            let _ = at;
            self.reassembly_timer_us = None;
            self.counters.reassembly_expiries += 1;
            self.rx_highest_status = self.first_incomplete_from(self.rx_next_status_trigger.max(self.rx_next));
            if self.rx_next_highest > self.rx_highest_status + 1
                || (self.rx_next_highest == self.rx_highest_status + 1 && self.gap_before_last(self.rx_highest_status))
            {
                self.reassembly_timer_us = Some(now_us.saturating_add(self.cfg.t_reassembly_us));
                self.rx_next_status_trigger = self.rx_next_highest;
            }
            self.status_triggered = true;
            self.release_delayed_polls();
        }
        if self.prohibit_timer_us.is_some_and(|at| at <= now_us) {
            self.prohibit_timer_us = None;
        }
    }

    /// The STATUS PDU to send at `now_us`, if one is triggered and t-StatusProhibit does not
    /// run (several triggers give one STATUS); sending it starts t-StatusProhibit (§5.3.4).
    /// ACK_SN = RX_Highest_Status; a NACK for every SN from RX_Next below it not completely
    /// received: the whole SDU if none of its bytes arrived, else each missing byte range.
    pub fn poll_status(&mut self, now_us: u64) -> Option<AmStatus> {
        if !self.status_triggered {
            return None;
        }
        if let Some(at) = self.prohibit_timer_us {
            if at > now_us {
                return None;
            }
            self.prohibit_timer_us = None;
        }
        self.status_triggered = false;
        if self.cfg.t_status_prohibit_us > 0 {
            self.prohibit_timer_us = Some(now_us.saturating_add(self.cfg.t_status_prohibit_us));
        }
        self.counters.status_reports += 1;
        Some(self.build_status())
    }

    /// The STATUS PDU the receive state gives now (what [`AmRx::poll_status`] would send),
    /// without sending it.
    pub fn build_status(&self) -> AmStatus {
        let mut nacks = Vec::new();
        for sn in self.rx_next..self.rx_highest_status {
            match self.buf.get(&sn) {
                None => nacks.push(AmNack { sn, so: None }),
                Some(e) if !e.complete => {
                    nacks.extend(e.got.gaps(e.size).into_iter().map(|r| AmNack { sn, so: Some(r) }));
                }
                Some(_) => {}
            }
        }
        AmStatus { ack_sn: self.rx_highest_status, nacks }
    }

    /// RLC re-establishment (§5.1.2): every byte held is discarded (SDUs complete but held for
    /// in-order delivery included), the timers stop and the state variables return to 0.
    /// Counters go on.
    pub fn reestablish(&mut self) {
        let counters = self.counters;
        if let Ok(fresh) = AmRx::new(self.cfg) {
            *self = fresh;
        }
        self.counters = counters;
    }

    fn is_complete(&self, sn: u64) -> bool {
        sn < self.rx_next || self.buf.get(&sn).is_some_and(|e| e.complete)
    }

    /// The first SN ≥ `from` not completely received.
    fn first_incomplete_from(&self, from: u64) -> u64 {
        let mut sn = from;
        while self.is_complete(sn) {
            sn += 1;
        }
        sn
    }

    /// SDU `sn` is partly received with a byte missing before the last byte received.
    fn gap_before_last(&self, sn: u64) -> bool {
        self.buf.get(&sn).is_some_and(|e| !e.complete && e.got.ranges().first().is_some_and(|r| r.0 > 0 || e.got.ranges().len() > 1))
    }

    /// RX_Next moves to the first SN not completely received; the SDUs it passes leave the
    /// buffer (and are delivered now in in-order mode).
    fn advance_rx_next(&mut self, delivered: &mut Vec<u64>) {
        let to = self.first_incomplete_from(self.rx_next);
        while let Some(entry) = self.buf.first_entry() {
            if *entry.key() >= to {
                break;
            }
            let e = entry.remove();
            if self.cfg.in_order {
                delivered.push(e.id);
                self.counters.delivered_sdus += 1;
            }
        }
        self.rx_next = to;
    }

    /// Triggers the STATUS of delayed polls whose condition now holds.
    fn release_delayed_polls(&mut self) {
        let (hs, top) = (self.rx_highest_status, self.rx_next + self.window);
        let before = self.delayed_polls.len();
        self.delayed_polls.retain(|&x| !(x < hs || x >= top));
        if self.delayed_polls.len() < before {
            self.status_triggered = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rlc::UmSegment;

    fn pdu(sn: u64, size: u32, offset: u32, len: u32, poll: bool) -> AmPdu {
        AmPdu { sn, segment: UmSegment { sdu_id: sn, sdu_bytes: size, offset, len }, header_bytes: 3, poll, retransmission: false }
    }

    #[test]
    fn state_variables_follow_5_2_3_2_3() {
        let mut rx = AmRx::new(AmConfig::nr_default(1000)).unwrap();
        let mut d = Vec::new();
        rx.receive(0, pdu(0, 100, 0, 100, false), &mut d);
        assert_eq!((rx.rx_next(), rx.rx_highest_status(), rx.rx_next_highest(), rx.reassembly_timeout()), (1, 1, 1, None));
        // SN 3 arrives before 1 and 2: a gap, t-Reassembly starts with the trigger at 4.
        rx.receive(1_000, pdu(3, 100, 0, 100, false), &mut d);
        assert_eq!((rx.rx_next(), rx.rx_highest_status(), rx.rx_next_highest()), (1, 1, 4));
        assert_eq!((rx.reassembly_timeout(), rx.rx_next_status_trigger), (Some(36_000), 4));
        // SN 1 closes part of the gap: the trigger (4) is still above RX_Next + 1 = 3.
        rx.receive(2_000, pdu(1, 100, 0, 100, false), &mut d);
        assert_eq!((rx.rx_next(), rx.rx_highest_status(), rx.reassembly_timeout()), (2, 2, Some(36_000)));
        // The first half of SN 2: RX_Next_Status_Trigger = RX_Next + 2 still; then the second
        // half closes the gap and the timer stops.
        rx.receive(3_000, pdu(2, 100, 0, 50, false), &mut d);
        assert_eq!(rx.reassembly_timeout(), Some(36_000));
        rx.receive(4_000, pdu(2, 100, 50, 50, false), &mut d);
        assert_eq!((rx.rx_next(), rx.rx_highest_status(), rx.reassembly_timeout()), (4, 4, None));
        assert_eq!(d, vec![0, 3, 1, 2]);
        // One SDU in the middle missing its middle bytes, alone above RX_Next: the timer runs.
        rx.receive(5_000, pdu(4, 100, 0, 10, false), &mut d);
        assert_eq!(rx.reassembly_timeout(), None, "a prefix only: no gap yet");
        rx.receive(5_000, pdu(4, 100, 60, 10, false), &mut d);
        assert_eq!((rx.reassembly_timeout(), rx.rx_next_status_trigger), (Some(40_000), 5));
        rx.expire(40_000);
        assert_eq!((rx.rx_highest_status(), rx.reassembly_timeout()), (5, None));
        let st = rx.poll_status(40_000).unwrap();
        assert_eq!(st.ack_sn, 5);
        assert_eq!(st.nacks, vec![AmNack { sn: 4, so: Some((10, 60)) }, AmNack { sn: 4, so: Some((70, 100)) }]);
    }

    #[test]
    fn malformed_and_out_of_window_pdus_are_discarded() {
        let mut rx = AmRx::new(AmConfig { sn_bits: 12, ..AmConfig::nr_default(1000) }).unwrap();
        let mut d = Vec::new();
        rx.receive(0, pdu(0, 100, 90, 20, false), &mut d);
        rx.receive(0, pdu(0, 100, 0, 0, false), &mut d);
        rx.receive(0, pdu(2048, 100, 0, 100, true), &mut d);
        rx.receive(0, pdu(2047, 100, 0, 100, false), &mut d);
        let mut other = pdu(2047, 100, 0, 100, false);
        other.segment.sdu_id = 9;
        rx.receive(0, other, &mut d);
        let c = rx.counters();
        assert_eq!((c.malformed_pdus, c.out_of_window_pdus, c.pdus, c.delivered_sdus), (3, 1, 5, 1));
        assert!(rx.status_triggered(), "a discarded PDU with a poll triggers a STATUS");
        assert_eq!(rx.rx_next_highest(), 2048);
    }
}
