//! Delivery-rate samples per draft-cheng-iccrg-delivery-rate-estimation-02 (the estimator
//! Linux TCP, quiche and ngtcp2 feed to BBR).
//!
//! The transport keeps one [`DeliveryRateEstimator`] per path, stores the [`SentRateState`]
//! returned by [`DeliveryRateEstimator::on_packet_sent`] with each packet, reports every newly
//! acknowledged packet with [`DeliveryRateEstimator::on_packet_acked`], and after processing
//! one ACK asks [`DeliveryRateEstimator::take_sample`] for the sample.

use multiconn_core::{Dur, Rate, Time};

/// Snapshot taken when a packet is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SentRateState {
    pub delivered: u64,
    pub delivered_time: Time,
    pub first_sent_time: Time,
    pub sent_time: Time,
    pub is_app_limited: bool,
}

/// One delivery-rate sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    pub delivery_rate: Rate,
    /// Bytes delivered over the sample's interval.
    pub delivered: u64,
    pub interval: Dur,
    /// The sample was taken while the sender was application-limited (a lower bound only).
    pub is_app_limited: bool,
    /// Total bytes delivered on the path when the newest acknowledged packet was sent.
    pub prior_delivered: u64,
    /// RTT of the newest acknowledged packet.
    pub rtt: Dur,
}

#[derive(Clone, Debug, Default)]
pub struct DeliveryRateEstimator {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Nonzero: the `delivered` count at which the current app-limited phase ends.
    app_limited_until: u64,
    // Sample under construction for the ACK being processed.
    prior_delivered: u64,
    prior_time: Time,
    send_elapsed: Dur,
    ack_elapsed: Dur,
    sample_app_limited: bool,
    newest_sent: Option<Time>,
    acked_now: u64,
    rtt: Dur,
}

impl DeliveryRateEstimator {
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
        }
    }

    /// The sender has nothing to send although the window allows it: samples until what is in
    /// flight now is delivered are marked application-limited.
    pub fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited_until = (self.delivered + bytes_in_flight).max(1);
    }

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
        Some(RateSample {
            delivery_rate: Rate(bps),
            delivered,
            interval,
            is_app_limited: self.sample_app_limited,
            prior_delivered: self.prior_delivered,
            rtt: self.rtt,
        })
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
}
