//! NewReno per RFC 9002 appendix B (byte-counted, one reduction per round trip), which is also
//! the window behaviour of TCP NewReno with SACK recovery (RFC 5681, RFC 6582, RFC 6675).
//!
//! * Slow start: `cwnd += acked` while `cwnd < ssthresh` (optionally HyStart++, RFC 9406).
//! * Congestion avoidance: `cwnd += mds · acked / cwnd`, accumulated in bytes so that one
//!   window of ACKs adds exactly one datagram.
//! * Congestion event: if the newest lost packet was sent after the last recovery period
//!   started, a new period starts: `ssthresh = cwnd · β` (β = 0.5), `cwnd = max(ssthresh,
//!   minimum_window)`. ACKs of packets sent before the period started do not grow the window,
//!   and their losses, even declared after the Recovery state ended, do not reduce it again
//!   (`recovery_period.rs`).
//! * Persistent congestion / RTO: `cwnd = loss_window`, recovery ends.
//! * With `delivery_rate_cap`, ngtcp2 0.12's [`crate::delivery::DeliveryRateCap`] stops all
//!   growth above its target (`ngtcp2_cc_reno_cc_on_pkt_acked` at v0.12.1). The
//!   `ngtcp2-0.12` HyStart rule acts in CUBIC only, as in ngtcp2 0.12, whose Reno has none.
//! * With `reno_growth = "ns3-per-ack"` the window grows per ACK, not per byte, as ns-3's
//!   `TcpNewReno` up to ns-3.37 does (`tcp-congestion-ops.cc`): in slow start one segment per
//!   ACK that acknowledges at least one segment (`SlowStart`: `m_cWnd += m_segmentSize`), the
//!   rest of its segments passed on to congestion avoidance if the window reached ssthresh; in
//!   congestion avoidance `max(1, ⌊MSS²/cwnd⌋)` bytes per such ACK (`CongestionAvoidance`),
//!   whatever the number of segments it acknowledges. Segments are counted as ns-3's
//!   `ReceivedAck` counts them: whole segments of the bytes acknowledged, the remainders
//!   carried until they make one more. With delayed ACKs every second segment this is half
//!   the growth of byte counting.

use crate::delivery::DeliveryRateCap;
use crate::hystart::{HyStart, SlowStartStep};
use crate::recovery_period::RecoveryPeriod;
use crate::{AckEvent, CcConfig, CcKind, CcState, Controller, LossEvent, RttEstimator};
use multiconn_core::{Dur, Time};

/// NewReno (see the module header).
#[derive(Debug, Clone)]
pub struct NewReno {
    cfg: CcConfig,
    cwnd: u64,
    ssthresh: u64,
    recovery: RecoveryPeriod,
    /// Bytes acknowledged in congestion avoidance not yet turned into window.
    ca_acked: u64,
    hystart: Option<HyStart>,
    /// State before the last reduction, for undo after a spurious congestion event.
    before_reduction: Option<(u64, u64)>,
    /// ngtcp2 0.12's `target_cwnd` (`delivery_rate_cap`).
    cap: Option<DeliveryRateCap>,
    /// `ns3-per-ack`: acknowledged bytes short of a whole segment, carried to the next ACK
    /// (ns-3's `m_bytesAckedNotProcessed`).
    unsegmented: u64,
}

/// How NewReno turns ACKs into window growth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenoGrowth {
    /// Byte counting (RFC 9002 appendix B, RFC 3465 with L = ∞ in slow start).
    #[default]
    Bytes,
    /// ns-3's `TcpNewReno` (ns-3.29 to ns-3.37): growth per ACK (see the module header).
    #[serde(rename = "ns3-per-ack")]
    Ns3PerAck,
}

impl NewReno {
    /// Slow start from the initial window, ssthresh infinite.
    pub fn new(cfg: CcConfig) -> NewReno {
        let hystart = cfg.hystart.then(|| HyStart::with_rule(cfg.max_datagram_size, cfg.hystart_rule));
        NewReno { cwnd: cfg.initial_window, ssthresh: u64::MAX, recovery: RecoveryPeriod::default(), ca_acked: 0, hystart, before_reduction: None, cap: cfg.delivery_rate_cap.then(|| DeliveryRateCap::new(cfg.max_datagram_size)), unsegmented: 0, cfg }
    }

    fn in_recovery(&self, sent: Time) -> bool {
        self.recovery.covers(sent)
    }
}

impl NewReno {
    fn on_ack_growth(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        if self.in_recovery(ack.largest_acked_sent) {
            return;
        }
        self.recovery.end();
        if self.cfg.reno_growth == RenoGrowth::Ns3PerAck {
            self.grow_per_ack(ack.bytes_acked);
            return;
        }
        let app_limited = self.cfg.app_limited_check && ack.app_limited;
        let in_slow_start = self.cwnd < self.ssthresh;
        let step = match &mut self.hystart {
            Some(h) => h.on_ack_event(now, ack.largest_acked_sent, rtt, in_slow_start, app_limited, self.cwnd),
            None => SlowStartStep::GROW,
        };
        if in_slow_start && !app_limited && step.divisor > 0 {
            let mut add = ack.bytes_acked / step.divisor;
            if let Some(cap) = &self.cap {
                add = cap.slow_start_growth(self.cwnd, add, self.cfg.max_datagram_size);
            }
            self.cwnd += add;
        }
        if in_slow_start && step.exit {
            self.ssthresh = self.cwnd;
        }
        if app_limited || in_slow_start || self.cap.as_ref().is_some_and(|c| c.blocks(self.cwnd)) {
            return;
        }
        self.ca_acked += ack.bytes_acked;
        if self.ca_acked >= self.cwnd {
            self.ca_acked -= self.cwnd;
            self.cwnd += self.cfg.max_datagram_size;
        }
    }
}

impl NewReno {
    /// ns-3's `TcpNewReno::IncreaseWindow` for one ACK of `bytes_acked` (see the module
    /// header).
    fn grow_per_ack(&mut self, bytes_acked: u64) {
        let mss = self.cfg.max_datagram_size;
        self.unsegmented += bytes_acked;
        let mut segments = self.unsegmented / mss;
        self.unsegmented %= mss;
        if self.cwnd < self.ssthresh && segments > 0 {
            self.cwnd += mss;
            segments -= 1;
        }
        if self.cwnd >= self.ssthresh && segments > 0 {
            let adder = (mss as f64 * mss as f64 / self.cwnd as f64).max(1.0);
            self.cwnd += adder as u64;
        }
    }
}

impl Controller for NewReno {
    fn on_packet_sent(&mut self, now: Time, _bytes: u64, _bytes_in_flight: u64) {
        if let Some(h) = &mut self.hystart {
            h.on_packet_sent(now);
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        self.on_ack_growth(now, ack, rtt);
        // ngtcp2 0.12 updates its target after the ACK's packets, in recovery or not.
        if let Some(cap) = &mut self.cap {
            cap.on_ack(ack.rate_sample.as_ref(), rtt.has_sample().then(|| rtt.min()));
        }
    }


    fn on_congestion_event(&mut self, now: Time, loss: &LossEvent, _rtt: &RttEstimator) {
        if self.in_recovery(loss.largest_lost_sent) {
            return;
        }
        self.before_reduction = Some((self.cwnd, self.ssthresh));
        self.recovery.begin(now);
        let base = if self.cfg.reduce_from_flight { loss.bytes_in_flight } else { self.cwnd };
        self.ssthresh = ((base as f64 * self.cfg.reno_beta) as u64).max(self.cfg.minimum_window);
        self.cwnd = self.ssthresh;
        self.ca_acked = 0;
        if let Some(h) = &mut self.hystart {
            h.on_congestion_event();
        }
    }

    fn on_persistent_congestion(&mut self, now: Time) {
        if let Some(h) = &mut self.hystart {
            h.on_timeout(now);
        }
        if self.before_reduction.is_none() {
            self.before_reduction = Some((self.cwnd, self.ssthresh));
        }
        // A timeout outside recovery is itself the congestion signal (RFC 5681 §3.1); inside a
        // recovery period ssthresh was already lowered by that period's loss event.
        if !self.recovery.is_open() {
            self.ssthresh = ((self.cwnd as f64 * self.cfg.reno_beta) as u64).max(self.cfg.minimum_window);
        }
        self.cwnd = self.cfg.loss_window;
        self.recovery.forget();
        self.ca_acked = 0;
    }

    /// quic-go's `cubicSender.OnRetransmissionTimeout(true)` in Reno mode (2017-18): the
    /// slow-start threshold is half the window, the window the minimum, the recovery over.
    fn on_retransmission_timeout(&mut self, now: Time) {
        if let Some(h) = &mut self.hystart {
            h.on_timeout(now);
        }
        if self.before_reduction.is_none() {
            self.before_reduction = Some((self.cwnd, self.ssthresh));
        }
        self.ssthresh = (self.cwnd / 2).max(self.cfg.minimum_window);
        self.cwnd = self.cfg.loss_window;
        self.recovery.forget();
        self.ca_acked = 0;
    }

    fn on_spurious_congestion(&mut self, _now: Time) {
        if let Some((cwnd, ssthresh)) = self.before_reduction.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = ssthresh;
            self.recovery.forget();
        }
    }

    /// picoquic 48525d89's `newreno.c` (`spurious_repeat`): within one smoothed RTT of the
    /// recovery's start, and while no packet sent after that start has been acknowledged, the
    /// window goes back to twice the ssthresh (the window before a halving); the ssthresh and
    /// the recovery's start stay.
    fn on_spurious_loss(&mut self, now: Time, largest_acked_sent: Time, srtt: Dur) {
        let Some(start) = self.recovery.open_start() else { return };
        if now.since(start) < srtt && largest_acked_sent < start && self.ssthresh != u64::MAX {
            self.cwnd = self.cwnd.max(2 * self.ssthresh);
        }
    }

    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> Option<u64> {
        (self.ssthresh != u64::MAX).then_some(self.ssthresh)
    }
    fn state(&self) -> CcState {
        crate::loss_based_state(self.recovery.is_open(), self.cwnd, self.ssthresh)
    }
    fn kind(&self) -> CcKind {
        CcKind::NewReno
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RttVarRule;

    const MDS: u64 = 1200;

    fn ack(bytes: u64, sent: Time) -> AckEvent {
        AckEvent { bytes_acked: bytes, largest_acked_sent: sent, prior_in_flight: 0, bytes_in_flight: 0, app_limited: false, rate_sample: None }
    }
    fn loss(sent: Time, in_flight: u64) -> LossEvent {
        LossEvent { bytes_lost: MDS, largest_lost_sent: sent, bytes_in_flight: in_flight, prior_in_flight: in_flight + MDS }
    }
    fn rtt() -> RttEstimator {
        RttEstimator::new(Dur::from_millis(100), RttVarRule::Rfc9002)
    }

    #[test]
    fn slow_start_doubles_then_halves_once_per_round_trip() {
        let mut cc = NewReno::new(CcConfig::quic_default(CcKind::NewReno, MDS));
        assert_eq!(cc.window(), 12000);
        cc.on_ack(Time(10), &ack(12000, Time(1)), &rtt());
        assert_eq!(cc.window(), 24000);
        cc.on_congestion_event(Time(100), &loss(Time(50), 0), &rtt());
        assert_eq!((cc.window(), cc.ssthresh()), (12000, Some(12000)));
        // A second loss of a packet sent before recovery started does not reduce again.
        cc.on_congestion_event(Time(110), &loss(Time(90), 0), &rtt());
        assert_eq!(cc.window(), 12000);
        // ACK of a pre-recovery packet: no growth, still in recovery.
        cc.on_ack(Time(120), &ack(MDS, Time(99)), &rtt());
        assert_eq!((cc.window(), cc.state()), (12000, CcState::Recovery));
        // ACK of a packet sent after recovery began ends it; congestion avoidance adds one MDS per window.
        cc.on_ack(Time(200), &ack(6000, Time(150)), &rtt());
        assert_eq!(cc.state(), CcState::CongestionAvoidance);
        assert_eq!(cc.window(), 12000);
        cc.on_ack(Time(210), &ack(6000, Time(160)), &rtt());
        assert_eq!(cc.window(), 12000 + MDS);
        // A packet sent before the period began, declared lost after it ended (the time
        // threshold, once a newer packet was acknowledged), is still the same congestion
        // event (RFC 9002 Appendix B.8): no second halving.
        cc.on_congestion_event(Time(220), &loss(Time(95), 0), &rtt());
        assert_eq!((cc.window(), cc.state()), (12000 + MDS, CcState::CongestionAvoidance));
    }

    #[test]
    fn floor_at_minimum_window_and_collapse_on_persistent_congestion() {
        let mut cc = NewReno::new(CcConfig::quic_default(CcKind::NewReno, MDS));
        for i in 0..5 {
            cc.on_congestion_event(Time(1000 * (i + 1)), &loss(Time(1000 * (i + 1) - 1), 0), &rtt());
        }
        assert_eq!(cc.window(), 2 * MDS);
        cc.on_persistent_congestion(Time(10_000));
        assert_eq!(cc.window(), 2 * MDS);
    }

    #[test]
    fn app_limited_acks_do_not_grow_the_window() {
        let mut cc = NewReno::new(CcConfig::quic_default(CcKind::NewReno, MDS));
        let mut a = ack(12000, Time(1));
        a.app_limited = true;
        cc.on_ack(Time(10), &a, &rtt());
        assert_eq!(cc.window(), 12000);
    }

    #[test]
    fn spurious_event_is_undone() {
        let mut cc = NewReno::new(CcConfig::quic_default(CcKind::NewReno, MDS));
        cc.on_ack(Time(10), &ack(12000, Time(1)), &rtt());
        cc.on_congestion_event(Time(100), &loss(Time(50), 0), &rtt());
        cc.on_spurious_congestion(Time(120));
        assert_eq!((cc.window(), cc.ssthresh()), (24000, None));
    }

    #[test]
    fn delivery_rate_cap_stops_reno_above_2_89_bdp_and_not_below() {
        let mut cc = NewReno::new(CcConfig { delivery_rate_cap: true, ..CcConfig::quic_default(CcKind::NewReno, MDS) });
        let mut r = rtt();
        r.update(Dur::from_millis(40), Dur::ZERO);
        // 500 kB/s × 40 ms = 20 kB; × 2.89 = 57.8 kB.
        let sample = crate::RateSample {
            delivery_rate: multiconn_core::Rate(4_000_000),
            delivered: 50_000,
            interval: Dur::from_millis(100),
            is_app_limited: false,
            prior_delivered: 0,
            rtt: Dur::from_millis(40),
            tx_in_flight: 0,
            lost: 0,
            newly_lost: 0,
        };
        cc.on_ack(Time(1), &AckEvent { rate_sample: Some(sample), ..ack(MDS, Time(0)) }, &r);
        assert_eq!(cc.window(), 13_200);
        // Slow start: the ACK of 40 datagrams stops at the first window above the cap.
        cc.on_ack(Time(2), &ack(40 * MDS, Time(0)), &r);
        assert_eq!(cc.window(), 58_800);
        cc.on_ack(Time(3), &ack(MDS, Time(0)), &r);
        assert_eq!(cc.window(), 58_800);
        // After a loss (29 400 B) congestion avoidance grows below the cap ...
        cc.on_congestion_event(Time(4), &loss(Time(3), 0), &r);
        assert_eq!(cc.window(), 29_400);
        for k in 0..200 {
            cc.on_ack(Time(10 + k), &ack(MDS, Time(5)), &r);
        }
        assert!(cc.window() > 29_400);
        // ... and not above it.
        cc.cwnd = 60_000;
        cc.on_ack(Time(1000), &ack(100 * MDS, Time(5)), &r);
        assert_eq!(cc.window(), 60_000);
    }

    /// ns-3's per-ACK growth with delayed ACKs (one ACK per two 536-byte segments): slow start
    /// adds one segment per ACK, so a window of 10 grows to 15 in a round trip, not 20; in
    /// congestion avoidance a window of 10 segments gains ⌊536²/5360⌋ = 53 bytes per ACK,
    /// about half a segment per round trip, where byte counting gains one.
    #[test]
    fn ns3_per_ack_growth_halves_the_growth_under_delayed_acks() {
        const MSS: u64 = 536;
        let cfg = CcConfig { reno_growth: RenoGrowth::Ns3PerAck, ..CcConfig::tcp_default(CcKind::NewReno, MSS) };
        let mut cc = NewReno::new(CcConfig { initial_window: 10 * MSS, ..cfg.clone() });
        for k in 0..5 {
            cc.on_ack(Time(10 + k), &ack(2 * MSS, Time(1)), &rtt());
        }
        assert_eq!(cc.window(), 15 * MSS);
        // Byte counting doubles.
        let mut bytes = NewReno::new(CcConfig { initial_window: 10 * MSS, ..CcConfig::tcp_default(CcKind::NewReno, MSS) });
        for k in 0..5 {
            bytes.on_ack(Time(10 + k), &ack(2 * MSS, Time(1)), &rtt());
        }
        assert_eq!(bytes.window(), 20 * MSS);
        // Congestion avoidance from 10 segments: 5 ACKs of 2 segments, 53 bytes each.
        let mut ca = NewReno::new(CcConfig { initial_window: 20 * MSS, ..cfg.clone() });
        ca.on_congestion_event(Time(100), &LossEvent { bytes_lost: MSS, largest_lost_sent: Time(50), bytes_in_flight: 0, prior_in_flight: MSS }, &rtt());
        assert_eq!(ca.window(), 10 * MSS);
        for k in 0..5 {
            ca.on_ack(Time(200 + k), &ack(2 * MSS, Time(150)), &rtt());
        }
        let gained = ca.window() - 10 * MSS;
        assert!((5 * 51..=5 * 53).contains(&gained), "{gained}");
        // Part of a segment grows nothing until the parts make a whole one.
        let mut part = NewReno::new(cfg);
        part.on_ack(Time(10), &ack(MSS / 2, Time(1)), &rtt());
        assert_eq!(part.window(), 10 * MSS);
        part.on_ack(Time(11), &ack(MSS / 2, Time(1)), &rtt());
        assert_eq!(part.window(), 11 * MSS);
    }

    /// picoquic's undo: a spurious notice 0.5 srtt after the recovery began restores the
    /// window from before the halving; one at 1.5 srtt, or after a packet sent after the
    /// recovery's start was acknowledged, does not.
    #[test]
    fn picoquic_undo_restores_the_window_only_within_one_smoothed_rtt() {
        let srtt = Dur::from_millis(40);
        let at = |ms: u64| Time(ms * 1_000_000);
        let reduced = || {
            let mut cc = NewReno::new(CcConfig::quic_default(CcKind::NewReno, MDS));
            cc.on_ack(at(1), &ack(12000, at(0)), &rtt());
            cc.on_congestion_event(at(100), &loss(at(90), 0), &rtt());
            assert_eq!((cc.window(), cc.ssthresh()), (12000, Some(12000)));
            cc
        };
        let mut early = reduced();
        early.on_spurious_loss(at(120), at(95), srtt);
        assert_eq!((early.window(), early.ssthresh()), (24000, Some(12000)));
        let mut late = reduced();
        late.on_spurious_loss(at(160), at(95), srtt);
        assert_eq!(late.window(), 12000);
        let mut after_new_ack = reduced();
        after_new_ack.on_spurious_loss(at(120), at(105), srtt);
        assert_eq!(after_new_ack.window(), 12000);
    }
}
