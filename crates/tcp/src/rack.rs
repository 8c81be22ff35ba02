//! RACK loss detection per RFC 8985 §6: the most recently sent delivered segment
//! (`RACK.xmit_ts`, `RACK.end_seq`, `RACK.rtt`, step 2 of §6.2 including the
//! retransmission-ambiguity filter), reordering detection (step 3), the reordering window
//! (step 4, `min_rtt · (num − den)/den` from the profile's time threshold, zero when no
//! reordering was seen and recovery is on or DupThresh segments are SACKed) and the
//! detection walk with its reorder timer (step 5, §6.3).
//!
//! Transmissions are kept in a queue in send order (`(time, seq, transmission number)`), like
//! Linux's time-sorted list; entries whose segment was since acknowledged, SACKed,
//! retransmitted or already marked lost are stale and skipped. The walk stops at the first
//! live entry that is not yet lost, so with no loss it costs O(1) per ACK.
//!
//! "Sent after" compares send times and, between transmissions at the same instant, their
//! place in the send order (`SentSegment::xmit_order`) where RFC 8985 takes the end sequence
//! number. The simulator sends everything one event releases at one instant, where a real
//! sender's clock tells the sends apart (Linux stamps each skb in nanoseconds): a
//! retransmission sent just after new data is sent after it, although its sequence number is
//! lower.

use std::collections::VecDeque;

use multiconn_core::{Dur, Time};

use crate::scoreboard::{Scoreboard, SentSegment};

#[derive(Clone, Copy, Debug)]
struct Sent {
    time: Time,
    seq: u64,
    tx: u32,
}

/// RACK loss detection state of one sender (RFC 8985, see the module header).
#[derive(Clone, Debug)]
pub struct Rack {
    /// `RACK.xmit_ts` of the most recently sent delivered segment, and its place in the send
    /// order (for `RACK.end_seq`).
    xmit: Option<(Time, u64)>,
    rtt: Dur,
    reord: bool,
    fack: u64,
    reo_num: u64,
    reo_den: u64,
    sent: VecDeque<Sent>,
}

/// RFC 8985 `RACK_sent_after(t1, seq1, t2, seq2)`, with the places in the send order in the
/// place of the sequence numbers.
fn sent_after(t1: Time, order1: u64, t2: Time, order2: u64) -> bool {
    t1 > t2 || (t1 == t2 && order1 > order2)
}

impl Rack {
    /// `time_threshold` = [num, den]: reo_wnd = min_rtt · (num − den)/den ([5, 4]: min_rtt/4).
    pub fn new(time_threshold: [u64; 2]) -> Rack {
        let den = time_threshold[1].max(1);
        Rack {
            xmit: None,
            rtt: Dur::ZERO,
            reord: false,
            fack: 0,
            reo_num: time_threshold[0].saturating_sub(den),
            reo_den: den,
            sent: VecDeque::new(),
        }
    }

    /// `RACK.rtt`: the RTT of the most recently sent delivered segment.
    pub fn rtt(&self) -> Dur {
        self.rtt
    }
    /// Reordering was detected (RFC 8985 §6.2 step 3: a never-retransmitted segment delivered
    /// below the highest delivered sequence number).
    pub fn reordering_seen(&self) -> bool {
        self.reord
    }

    /// A transmission (new or retransmission) of the segment at `seq` with number `tx`.
    pub fn on_sent(&mut self, now: Time, seq: u64, tx: u32) {
        self.sent.push_back(Sent { time: now, seq, tx });
    }

    /// Everything outstanding was declared lost (RTO): no transmission is pending.
    pub fn clear_sent(&mut self) {
        self.sent.clear();
    }

    /// §6.2 steps 1–3 for one newly acknowledged or SACKed segment. `tsecr` is the ACK's echoed
    /// timestamp (as an instant) when timestamps are on.
    pub fn on_delivered(&mut self, now: Time, seg: &SentSegment, min_rtt: Dur, echo: Option<Time>) {
        if seg.tx_count == 1 && seg.end < self.fack {
            self.reord = true;
        }
        self.fack = self.fack.max(seg.end);
        let rtt = now.since(seg.last_sent);
        if seg.tx_count > 1 && (echo.is_some_and(|e| e < seg.last_sent) || rtt < min_rtt) {
            return;
        }
        let newer = self
            .xmit
            .map_or(true, |(t, s)| sent_after(seg.last_sent, seg.xmit_order, t, s));
        if newer {
            self.xmit = Some((seg.last_sent, seg.xmit_order));
            self.rtt = rtt;
        }
    }

    /// §6.2 step 4.
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segments: u64,
        dup_thresh: u64,
        min_rtt: Dur,
        srtt: Dur,
    ) -> Dur {
        if !self.reord && (in_recovery || sacked_segments >= dup_thresh) {
            return Dur::ZERO;
        }
        Dur((min_rtt.0 as u128 * self.reo_num as u128 / self.reo_den as u128) as u64).min(srtt)
    }

    fn live(&self, e: &Sent, sb: &Scoreboard) -> Option<usize> {
        let i = sb.index_of(e.seq)?;
        let s = sb.get(i)?;
        (!s.sacked && s.tx_count == e.tx && !s.needs_retransmission()).then_some(i)
    }

    /// §6.2 step 5: marks lost every outstanding transmission sent before `RACK.xmit_ts` more
    /// than `RACK.rtt + reo_wnd` ago, calling `lost` for each; returns when the reorder timer
    /// should fire next.
    pub fn detect_loss(
        &mut self,
        now: Time,
        sb: &mut Scoreboard,
        reo_wnd: Dur,
        mut lost: impl FnMut(&SentSegment),
    ) -> Option<Time> {
        let (rx_time, rx_order) = self.xmit?;
        let mut i = 0;
        while i < self.sent.len() {
            let e = self.sent[i];
            let Some(idx) = self.live(&e, sb) else {
                if i == 0 {
                    self.sent.pop_front();
                } else {
                    i += 1;
                }
                continue;
            };
            let order = sb.get(idx).map_or(0, |s| s.xmit_order);
            if !sent_after(rx_time, rx_order, e.time, order) {
                if e.time > rx_time {
                    break;
                }
                i += 1;
                continue;
            }
            let deadline = e.time + self.rtt + reo_wnd;
            if deadline > now {
                return Some(deadline);
            }
            if sb.mark_lost(idx) {
                if let Some(s) = sb.get(idx) {
                    lost(s);
                }
            }
            if i == 0 {
                self.sent.pop_front();
            } else {
                i += 1;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use multiconn_cc::SentRateState;

    fn ms(v: u64) -> Dur {
        Dur::from_millis(v)
    }

    #[test]
    fn a_hole_is_lost_once_a_later_segment_is_delivered_and_the_window_passes() {
        let mut sb = Scoreboard::new(1);
        let mut rack = Rack::new([5, 4]);
        for i in 0..4u64 {
            let t = Time(i * 1_000_000);
            let seq = sb.on_sent(100, t, SentRateState::default());
            rack.on_sent(t, seq, 1);
        }
        // Segment 1 (seq 101) is SACKed 50 ms after it was sent.
        let now = Time(51_000_000);
        let mut delivered = Vec::new();
        sb.sack(101, 201, |s| delivered.push(*s));
        for s in &delivered {
            rack.on_delivered(now, s, ms(50), None);
        }
        assert_eq!(rack.rtt(), ms(50));
        // One SACKed segment, no reordering seen: reo_wnd = min_rtt / 4 = 12.5 ms.
        let reo = rack.reo_wnd(false, 1, 3, ms(50), ms(50));
        assert_eq!(reo, Dur(12_500_000));
        let mut lost = Vec::new();
        let timer = rack.detect_loss(now, &mut sb, reo, |s| lost.push(s.start));
        assert!(lost.is_empty());
        assert_eq!(timer, Some(Time(0) + ms(50) + reo));
        let lost_at = timer.unwrap();
        rack.detect_loss(lost_at, &mut sb, reo, |s| lost.push(s.start));
        assert_eq!(lost, vec![1]);
        assert_eq!(sb.lost_pending(), 1);
    }

    /// At one instant the sender sends new data, then (the next ACK of the same burst having
    /// revealed a hole) retransmits the hole. When the new segment is SACKed, the
    /// retransmission must not count as sent before it, although its sequence number is lower:
    /// it stays outstanding. A retransmission sent before the SACKed segment is lost.
    #[test]
    fn a_retransmission_sent_after_new_data_in_the_same_instant_is_not_lost_by_its_sack() {
        let t0 = Time(0);
        let t1 = Time(100_000_000);
        for retransmit_first in [false, true] {
            let mut sb = Scoreboard::new(1);
            let mut rack = Rack::new([5, 4]);
            for _ in 0..3u64 {
                let seq = sb.on_sent(100, t0, SentRateState::default());
                rack.on_sent(t0, seq, 1);
            }
            // Segment 1 (the hole) is lost, 101 and 201 are SACKed.
            let mut d = Vec::new();
            sb.sack(101, 301, |s| d.push(*s));
            for s in &d {
                rack.on_delivered(t1, s, ms(100), None);
            }
            assert!(sb.mark_lost(0));
            // At t1 a new segment (301) and the retransmission of 1, in either order.
            let send_new = |sb: &mut Scoreboard, rack: &mut Rack| {
                let seq = sb.on_sent(100, t1, SentRateState::default());
                rack.on_sent(t1, seq, 1);
            };
            if !retransmit_first {
                send_new(&mut sb, &mut rack);
            }
            sb.on_retransmitted(0, t1, SentRateState::default());
            rack.on_sent(t1, 1, 2);
            if retransmit_first {
                send_new(&mut sb, &mut rack);
            }
            // 301 is SACKed 20 ms later; in recovery reo_wnd is 0.
            let now = t1 + ms(20);
            let mut d = Vec::new();
            sb.sack(301, 401, |s| d.push(*s));
            for s in &d {
                rack.on_delivered(now, s, ms(20), None);
            }
            let mut lost = Vec::new();
            rack.detect_loss(now, &mut sb, Dur::ZERO, |s| lost.push(s.start));
            let expect: Vec<u64> = if retransmit_first { vec![1] } else { vec![] };
            assert_eq!(lost, expect, "retransmitted first: {retransmit_first}");
        }
    }

    #[test]
    fn reordering_is_noticed_and_keeps_the_window() {
        let mut sb = Scoreboard::new(1);
        let mut rack = Rack::new([5, 4]);
        for i in 0..3u64 {
            let seq = sb.on_sent(100, Time(i), SentRateState::default());
            rack.on_sent(Time(i), seq, 1);
        }
        let mut d = Vec::new();
        sb.sack(201, 301, |s| d.push(*s));
        sb.ack(201, |s| d.push(*s));
        for s in &d {
            rack.on_delivered(Time(10), s, Dur(1), None);
        }
        assert!(rack.reordering_seen());
        assert_eq!(rack.reo_wnd(true, 5, 3, ms(40), ms(40)), ms(10));
    }
}
