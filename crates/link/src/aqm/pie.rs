//! PIE, Proportional Integral controller Enhanced (RFC 8033).
//!
//! PIE drops (or marks) arriving packets at random with a probability it updates every
//! `tupdate` (15 ms) from the queueing delay's distance to `target` (15 ms) and its trend
//! (§4.2): `p = alpha × (qdelay − target) + beta × (qdelay − qdelay_old)`, scaled down while
//! the drop probability is small (the auto-tuning table of §4.2), capped at 2 % per update
//! once the probability is above 10 % (§5.5), and decayed by 2 % per update when the queue
//! stays empty. The queueing delay is the sojourn of the last packet sent, zero when it left
//! the queue empty (the timestamp method of §5.3, as Linux `pie` does by default). A burst
//! allowance of `max_burst` (150 ms) suspends early drops after an idle period (§4.4); no
//! early drop happens while the delay is below half the target and the probability below
//! 20 %, or while less than two MTUs wait (§4.1). ECN-capable packets are marked instead of
//! dropped while the probability is at most `mark_ecn_th` (10 %, §5.1).
//!
//! The periodic update is caught up on each call at the exact instants `k × tupdate`, with
//! the queueing delay as it was then (it only changes when a packet leaves, which is a call).

use multiconn_core::{Dur, Ecn, Packet, RngStream, Time};

use multiconn_core::units::QueueLimit;

use super::{within, AqmStats, Fifo, Qdisc};

/// PIE's parameters (RFC 8033 §4–§5 defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieParams {
    /// The reference queueing delay (QDELAY_REF, 15 ms).
    pub target: Dur,
    /// The drop probability's update period (T_UPDATE, 15 ms).
    pub tupdate: Dur,
    /// The weight of the delay's distance to target, per second (0.125).
    pub alpha: f64,
    /// The weight of the delay's trend, per second (1.25).
    pub beta: f64,
    /// The burst allowance after an idle period (MAX_BURST, 150 ms).
    pub max_burst: Dur,
    /// Bytes of one MTU (no early drop while less than two wait).
    pub mtu: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Mark only while the drop probability is at most this (10 %); above it, drop.
    pub mark_ecn_th: f64,
}

impl Default for PieParams {
    fn default() -> PieParams {
        PieParams {
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Dur::from_millis(150),
            mtu: 1500,
            ecn: false,
            mark_ecn_th: 0.1,
        }
    }
}

/// A FIFO under PIE (Linux `pie`), tail-dropping above a packet limit.
pub struct Pie {
    params: PieParams,
    queue: Fifo,
    limit: QueueLimit,
    rng: RngStream,
    stats: AqmStats,
    drop_prob: f64,
    qdelay: Dur,
    qdelay_old: Dur,
    burst_allowance: Dur,
    /// The next periodic update.
    next_update: Time,
}

/// The auto-tuning divisor of the adjustment for a drop probability (RFC 8033 §4.2).
fn tuning_divisor(drop_prob: f64) -> f64 {
    match drop_prob {
        p if p < 0.000001 => 2048.0,
        p if p < 0.00001 => 512.0,
        p if p < 0.0001 => 128.0,
        p if p < 0.001 => 32.0,
        p if p < 0.01 => 8.0,
        p if p < 0.1 => 2.0,
        _ => 1.0,
    }
}

/// The drop probability after one update from `drop_prob`, with the queueing delay `qdelay`
/// now and `qdelay_old` at the previous update (RFC 8033 §4.2, the §5.5 cap and the decay).
pub fn next_drop_prob(params: &PieParams, drop_prob: f64, qdelay: Dur, qdelay_old: Dur) -> f64 {
    let secs = |d: Dur| d.as_secs_f64();
    let mut p = params.alpha * (secs(qdelay) - secs(params.target)) + params.beta * (secs(qdelay) - secs(qdelay_old));
    p /= tuning_divisor(drop_prob);
    // Cap the adjustment so a delay spike cannot drive the probability up too fast (§5.5).
    if drop_prob >= 0.1 && p > 0.02 {
        p = 0.02;
    }
    let mut next = drop_prob + p;
    if qdelay == Dur::ZERO && qdelay_old == Dur::ZERO {
        next *= 0.98;
    }
    next.clamp(0.0, 1.0)
}

impl Pie {
    /// An empty PIE queue whose waiting packets are bounded by `limit`, drawing from `rng`.
    pub fn new(params: PieParams, limit: QueueLimit, rng: RngStream) -> Pie {
        Pie {
            params,
            queue: Fifo::default(),
            limit,
            rng,
            stats: AqmStats::default(),
            drop_prob: 0.0,
            qdelay: Dur::ZERO,
            qdelay_old: Dur::ZERO,
            burst_allowance: params.max_burst,
            next_update: Time::ZERO + params.tupdate,
        }
    }

    /// The current drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// The queueing delay PIE currently sees.
    pub fn qdelay(&self) -> Dur {
        self.qdelay
    }

    /// The remaining burst allowance.
    pub fn burst_allowance(&self) -> Dur {
        self.burst_allowance
    }

    /// One periodic update of the drop probability and burst allowance (RFC 8033 §4.2, §4.4).
    fn update(&mut self) {
        self.drop_prob = next_drop_prob(&self.params, self.drop_prob, self.qdelay, self.qdelay_old);
        self.burst_allowance = Dur(self.burst_allowance.as_nanos().saturating_sub(self.params.tupdate.as_nanos()));
        let half = Dur(self.params.target.as_nanos() / 2);
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = self.params.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// Runs the periodic updates due by `now`.
    fn catch_up(&mut self, now: Time) {
        let period = self.params.tupdate.as_nanos().max(1);
        while self.next_update <= now {
            self.update();
            self.next_update = Time(self.next_update.as_nanos().saturating_add(period));
            if self.next_update.as_nanos() == u64::MAX {
                break;
            }
        }
    }

    /// Whether an arriving packet is dropped early (RFC 8033 §4.1).
    fn drop_early(&mut self) -> bool {
        if self.burst_allowance > Dur::ZERO {
            return false;
        }
        let half = Dur(self.params.target.as_nanos() / 2);
        if self.qdelay_old < half && self.drop_prob < 0.2 {
            return false;
        }
        if self.queue.bytes() <= 2 * u64::from(self.params.mtu) {
            return false;
        }
        self.rng.uniform() < self.drop_prob
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, now: Time, mut pkt: Packet, _dropped: &mut Vec<Packet>) -> Result<(), Packet> {
        self.catch_up(now);
        if !within(self.limit, self.queue.len() as u64, self.queue.bytes(), pkt.size) {
            self.stats.tail_drops += 1;
            return Err(pkt);
        }
        if self.drop_early() {
            if self.params.ecn && pkt.ecn.is_capable() && self.drop_prob <= self.params.mark_ecn_th {
                pkt.ecn = Ecn::Ce;
                self.stats.marks += 1;
            } else {
                self.stats.early_drops += 1;
                return Err(pkt);
            }
        }
        self.queue.push(pkt, now);
        Ok(())
    }

    fn dequeue(&mut self, now: Time, _dropped: &mut Vec<Packet>) -> Option<Packet> {
        self.catch_up(now);
        let (pkt, arrived) = self.queue.pop()?;
        self.qdelay = if self.queue.is_empty() { Dur::ZERO } else { now.since(arrived) };
        Some(pkt)
    }

    super::single_fifo_qdisc_methods!(queue, limit);
}
