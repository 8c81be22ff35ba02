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

use std::collections::VecDeque;

use multiconn_core::{Dur, Time};

use crate::scoreboard::{Scoreboard, SentSegment};

#[derive(Clone, Copy, Debug)]
struct Sent {
    time: Time,
    seq: u64,
    tx: u32,
}

#[derive(Clone, Debug)]
pub struct Rack {
    /// `RACK.xmit_ts`, `RACK.end_seq` of the most recently sent delivered segment.
    xmit: Option<(Time, u64)>,
    rtt: Dur,
    reord: bool,
    fack: u64,
    reo_num: u64,
    reo_den: u64,
    sent: VecDeque<Sent>,
}

/// RFC 8985 `RACK_sent_after(t1, seq1, t2, seq2)`.
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
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

    pub fn rtt(&self) -> Dur {
        self.rtt
    }
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
            .map_or(true, |(t, s)| sent_after(seg.last_sent, seg.end, t, s));
        if newer {
            self.xmit = Some((seg.last_sent, seg.end));
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
        let (rx_time, rx_seq) = self.xmit?;
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
            let seg_end = sb.get(idx).map_or(0, |s| s.end);
            if !sent_after(rx_time, rx_seq, e.time, seg_end) {
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
