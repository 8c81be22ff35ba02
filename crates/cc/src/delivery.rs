//! Delivery-rate samples per draft-cheng-iccrg-delivery-rate-estimation-02 (the estimator
//! Linux TCP, quiche and ngtcp2 feed to BBR).
//!
//! The transport keeps one [`DeliveryRateEstimator`] per path, stores the [`SentRateState`]
//! returned by [`DeliveryRateEstimator::on_packet_sent`] with each packet, reports every newly
//! acknowledged packet with [`DeliveryRateEstimator::on_packet_acked`], and after processing
//! one ACK asks [`DeliveryRateEstimator::take_sample`] for the sample. Packets declared lost
//! are reported with [`DeliveryRateEstimator::on_packet_lost`] (before the ACK's sample is
//! taken), so that each sample also carries the losses BBRv3 judges (`RS.lost`,
//! `RS.tx_in_flight` of draft-ietf-ccwg-bbr §4.1.2).

use multiconn_core::{Dur, Rate, Time};

/// Snapshot taken when a packet is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SentRateState {
    /// Total bytes delivered on the path when the packet was sent.
    pub delivered: u64,
    /// When `delivered` last grew (or the flight restarted from empty), as of the send.
    pub delivered_time: Time,
    /// Send time of the newest packet acknowledged by then, or of the first packet sent after
    /// the flight emptied: where the sample's send interval starts.
    pub first_sent_time: Time,
    /// When the packet was sent.
    pub sent_time: Time,
    /// The sender was in an application-limited phase.
    pub is_app_limited: bool,
    /// Total bytes declared lost on the path when the packet was sent (`P.lost`).
    pub lost: u64,
    /// Bytes in flight just before the packet was sent (it excluded).
    pub in_flight: u64,
}

/// One delivery-rate sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// `delivered` over `interval`, bits per second.
    pub delivery_rate: Rate,
    /// Bytes delivered over the sample's interval.
    pub delivered: u64,
    /// The longer of the send and ACK intervals of the newest acknowledged packet.
    pub interval: Dur,
    /// The sample was taken while the sender was application-limited (a lower bound only).
    pub is_app_limited: bool,
    /// Total bytes delivered on the path when the newest acknowledged packet was sent.
    pub prior_delivered: u64,
    /// RTT of the newest acknowledged packet.
    pub rtt: Dur,
    /// Bytes in flight when the newest acknowledged packet was sent, it included
    /// (`RS.tx_in_flight`); 0 where the transport does not track it.
    pub tx_in_flight: u64,
    /// Bytes declared lost between the send of the newest acknowledged packet and this ACK
    /// (`RS.lost`).
    pub lost: u64,
    /// Bytes declared lost since the previous sample (Linux's `rs->losses`, in bytes).
    pub newly_lost: u64,
}

/// The delivery-rate estimator of one path.
#[derive(Clone, Debug, Default)]
pub struct DeliveryRateEstimator {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Nonzero: the `delivered` count at which the current app-limited phase ends.
    app_limited_until: u64,
    /// Total bytes declared lost.
    lost: u64,
    /// `lost` when the previous sample was taken.
    lost_at_last_sample: u64,
    // Sample under construction for the ACK being processed.
    prior_delivered: u64,
    prior_time: Time,
    send_elapsed: Dur,
    ack_elapsed: Dur,
    sample_app_limited: bool,
    newest_sent: Option<Time>,
    acked_now: u64,
    rtt: Dur,
    tx_in_flight: u64,
    sent_lost: u64,
}

impl DeliveryRateEstimator {
    /// Nothing delivered yet.
    pub fn new() -> DeliveryRateEstimator {
        DeliveryRateEstimator::default()
    }

    /// Total bytes acknowledged so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Call before counting the packet in flight; `bytes_in_flight` excludes it.
    pub fn on_packet_sent(&mut self, now: Time, bytes_in_flight: u64) -> SentRateState {
        if bytes_in_flight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        SentRateState {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            is_app_limited: self.app_limited_until != 0,
            lost: self.lost,
            in_flight: bytes_in_flight,
        }
    }

    /// A packet of `bytes` that counted in flight was declared lost.
    pub fn on_packet_lost(&mut self, bytes: u64) {
        self.lost = self.lost.saturating_add(bytes);
    }

    /// Total bytes declared lost so far.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// The sender has nothing to send although the window allows it: samples until what is in
    /// flight now is delivered are marked application-limited.
    pub fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited_until = (self.delivered + bytes_in_flight).max(1);
    }

    /// A packet of `bytes`, sent with state `sent`, is newly acknowledged at `now`; call for
    /// every packet of an ACK, then [`take_sample`](Self::take_sample).
    pub fn on_packet_acked(&mut self, now: Time, bytes: u64, sent: &SentRateState) {
        self.delivered += bytes;
        self.delivered_time = now;
        self.acked_now += bytes;
        if self.newest_sent.map_or(true, |t| sent.sent_time >= t) {
            self.newest_sent = Some(sent.sent_time);
            self.prior_delivered = sent.delivered;
            self.prior_time = sent.delivered_time;
            self.sample_app_limited = sent.is_app_limited;
            self.send_elapsed = sent.sent_time.since(sent.first_sent_time);
            self.ack_elapsed = now.since(sent.delivered_time);
            self.rtt = now.since(sent.sent_time);
            self.first_sent_time = sent.sent_time;
            self.tx_in_flight = sent.in_flight.saturating_add(bytes);
            self.sent_lost = sent.lost;
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
    }

    /// The sample for the packets acknowledged since the last call; `None` if none were, or
    /// the interval is shorter than `min_rtt` (the draft discards such samples).
    pub fn take_sample(&mut self, min_rtt: Dur) -> Option<RateSample> {
        let newest = self.newest_sent.take()?;
        let _ = newest;
        self.acked_now = 0;
        let interval = self.send_elapsed.max(self.ack_elapsed);
        let delivered = self.delivered - self.prior_delivered;
        if interval.0 == 0 || interval < min_rtt {
            return None;
        }
        let bps = (delivered as u128 * 8 * 1_000_000_000 / interval.0 as u128) as u64;
        let newly_lost = self.lost - self.lost_at_last_sample;
        self.lost_at_last_sample = self.lost;
        Some(RateSample {
            delivery_rate: Rate(bps),
            delivered,
            interval,
            is_app_limited: self.sample_app_limited,
            prior_delivered: self.prior_delivered,
            rtt: self.rtt,
            tx_in_flight: self.tx_in_flight,
            lost: self.lost.saturating_sub(self.sent_lost),
            newly_lost,
        })
    }
}

/// ngtcp2 0.12's window cap (`lib/ngtcp2_cc.c` at v0.12.1, `target_cwnd` of
/// `ngtcp2_cc_reno_cc_on_ack_recv` and `ngtcp2_cc_cubic_cc_on_ack_recv`): after every ACK the
/// controller keeps the highest delivery rate ever sampled (bytes/s, `max_delivery_rate_sec`)
/// and sets `target = max(initial window, max rate × min RTT) × 289 / 100`; an acknowledged
/// packet grows the window only while `cwnd ≤ target` (`on_pkt_acked` returns early when
/// `target_cwnd < cwnd`), in slow start and in congestion avoidance alike. The target of the
/// previous ACK applies (ngtcp2 updates it after the ACK's packets were processed). No cap
/// before the first sample.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeliveryRateCap {
    /// `ngtcp2_cc_compute_initcwnd` of the datagram size.
    initial_window: u64,
    /// Highest delivery rate sampled, bytes per second.
    max_rate: u64,
    /// 0 = no cap yet.
    target: u64,
}

/// The cap's gain over the bandwidth-delay product, in hundredths (ngtcp2: `* 289 / 100`).
pub const DELIVERY_RATE_CAP_GAIN_PERCENT: u64 = 289;

impl DeliveryRateCap {
    /// `mds`: the datagram size, whose RFC 9002 initial window floors the product.
    pub fn new(mds: u64) -> DeliveryRateCap {
        DeliveryRateCap { initial_window: (10 * mds).min((2 * mds).max(14720)), max_rate: 0, target: 0 }
    }

    /// After an ACK: `sample` is its delivery-rate sample, if any; `min_rtt` the smallest RTT
    /// seen, `None` before the first RTT sample.
    pub fn on_ack(&mut self, sample: Option<&RateSample>, min_rtt: Option<Dur>) {
        if let Some(s) = sample {
            if s.interval.0 > 0 {
                let rate = (s.delivered as u128 * 1_000_000_000 / s.interval.0 as u128).min(u64::MAX as u128) as u64;
                self.max_rate = self.max_rate.max(rate);
            }
        }
        if let (Some(min_rtt), true) = (min_rtt, self.max_rate > 0) {
            let bdp = (self.max_rate as u128 * min_rtt.0 as u128 / 1_000_000_000).min(u64::MAX as u128) as u64;
            self.target = (bdp.max(self.initial_window) as u128 * DELIVERY_RATE_CAP_GAIN_PERCENT as u128 / 100).min(u64::MAX as u128) as u64;
        }
    }

    /// The current cap in bytes; `None` before the first delivery-rate sample.
    pub fn target(&self) -> Option<u64> {
        (self.target > 0).then_some(self.target)
    }

    /// Highest delivery rate sampled so far, bytes per second.
    pub fn max_rate(&self) -> u64 {
        self.max_rate
    }

    /// No acknowledged packet may grow a window of `cwnd` bytes.
    pub fn blocks(&self, cwnd: u64) -> bool {
        self.target > 0 && self.target < cwnd
    }

    /// How much of a slow-start growth of `grow` bytes (packets of `mds` bytes, each adding
    /// its size) is left once the cap stops it: packets grow the window until it exceeds the
    /// cap, the packet that crosses it included.
    pub fn slow_start_growth(&self, cwnd: u64, grow: u64, mds: u64) -> u64 {
        if self.target == 0 {
            return grow;
        }
        if self.target < cwnd {
            return 0;
        }
        let packets = (self.target - cwnd) / mds.max(1) + 1;
        grow.min(packets.saturating_mul(mds.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_flow_measures_the_bottleneck_rate() {
        // 1000-byte packets every 1 ms (8 Mbit/s), RTT 50 ms.
        let mut est = DeliveryRateEstimator::new();
        let mut sent = Vec::new();
        let mut last = None;
        for i in 0..200u64 {
            let now = Time(i * 1_000_000);
            let in_flight = sent.iter().filter(|(t, _): &&(Time, SentRateState)| t.0 + 50_000_000 > now.0).count() as u64 * 1000;
            sent.push((now, est.on_packet_sent(now, in_flight)));
            // acks of packets sent 50 ms ago
            if i >= 50 {
                let (_, st) = sent[(i - 50) as usize];
                est.on_packet_acked(now, 1000, &st);
                last = est.take_sample(Dur::from_millis(50)).or(last);
            }
        }
        let s = last.expect("a sample");
        assert!((s.delivery_rate.bps() as f64 - 8e6).abs() / 8e6 < 0.03, "{:?}", s);
        assert!(!s.is_app_limited);
    }

    #[test]
    fn app_limited_marks_samples_until_in_flight_is_delivered() {
        let mut est = DeliveryRateEstimator::new();
        est.on_app_limited(0);
        let st = est.on_packet_sent(Time(0), 0);
        assert!(st.is_app_limited);
        est.on_packet_acked(Time(100_000_000), 1000, &st);
        let s = est.take_sample(Dur::from_millis(10)).unwrap();
        assert!(s.is_app_limited);
        let st2 = est.on_packet_sent(Time(100_000_000), 0);
        assert!(!st2.is_app_limited);
    }

    #[test]
    fn samples_carry_the_losses_since_the_packet_was_sent_and_its_in_flight() {
        let mut est = DeliveryRateEstimator::new();
        let a = est.on_packet_sent(Time(0), 0);
        let b = est.on_packet_sent(Time(1_000_000), 1000);
        est.on_packet_lost(1000);
        let c = est.on_packet_sent(Time(2_000_000), 1000);
        assert_eq!((a.in_flight, b.in_flight, c.lost), (0, 1000, 1000));
        est.on_packet_acked(Time(50_000_000), 1000, &b);
        let s = est.take_sample(Dur::from_millis(10)).unwrap();
        // Sent with 1000 bytes before it, 1000 lost since: both carried.
        assert_eq!((s.tx_in_flight, s.lost, s.newly_lost), (2000, 1000, 1000));
        est.on_packet_lost(500);
        est.on_packet_acked(Time(60_000_000), 1000, &c);
        let s = est.take_sample(Dur::from_millis(10)).unwrap();
        // c was sent after the first loss: only the 500 count for it, and only they are new.
        assert_eq!((s.tx_in_flight, s.lost, s.newly_lost), (2000, 500, 500));
        let _ = a;
    }
}
