//! CUBIC's congestion avoidance in whole segments as Linux computes it: net/ipv4/tcp_cubic.c
//! `bictcp_update`, `cubictcp_cong_avoid`, `cubictcp_recalc_ssthresh` and `bictcp_reset` since
//! Linux 6.11 ("tcp_cubic: switch ca->last_time to usec resolution"), with net/ipv4/tcp_cong.c
//! `tcp_cong_avoid_ai`. Used by [`crate::cubic`] with `cubic_rule = "linux-segments"`.
//!
//! * The window is a whole number of segments. It grows by one segment each time `cnt`
//!   segments have been acknowledged (`snd_cwnd_cnt` counts them; `tcp_cong_avoid_ai`).
//! * `cnt` is recomputed only when the window changed since the last computation or 1/32 s has
//!   passed, and at most once a millisecond; otherwise the last one stands.
//! * The epoch starts at the first congestion-avoidance ACK: `K = ∛((last_max_cwnd −
//!   cwnd)/C)` (Linux's `cube_factor`, time in 1/1024 s) and origin `last_max_cwnd`, or `K =
//!   0` and origin `cwnd` when the window is at or above `last_max_cwnd`; the Reno estimate
//!   `tcp_cwnd` starts at `cwnd` and the ACK count at this ACK's segments.
//! * `bic_target = origin ± ⌊C·(t − K)³⌋` segments with `t` the time since the epoch began
//!   plus the minimum RTT (`delay_min`), in 1/1024 s; `cnt = cwnd / (bic_target − cwnd)`, or
//!   `100·cwnd` when the target is not above the window; at most 20 while `last_max_cwnd` is 0
//!   (5 % a round trip before the first congestion event).
//! * TCP friendliness: `tcp_cwnd` grows by one for each `(cwnd · beta_scale) >> 3` segments
//!   acknowledged (`beta_scale = 8·(1024 + β)/3/(1024 − β)`, 15 for β = 717/1024: about 0.53
//!   segments a round trip), and while it is above the window `cnt ≤ cwnd / (tcp_cwnd −
//!   cwnd)`. It is updated only when `cnt` may be, so it lags the acknowledged segments by up
//!   to 1/32 s; the window follows it one step behind (it is the current estimate, not the
//!   next round trip's).
//! * `cnt ≥ 2`: at most 1.5 times the window a round trip.
//! * A congestion event ends the epoch; fast convergence: `last_max_cwnd = cwnd·(1024 + β) /
//!   2048` if the window is below the last one, else the window; `ssthresh = max(cwnd·β/1024,
//!   2)`. A timeout (`bictcp_reset`) forgets everything, `last_max_cwnd` included.
//! * Sending again with nothing in flight moves the epoch start forward by the time since the
//!   last send (`cubictcp_cwnd_event`, `CA_EVENT_TX_START`), not past now.
//!
//! β and C come from the configuration, in Linux's fixed point (`beta = 717`, `bic_scale =
//! 41` for 0.7 and 0.4). `t` counts nanoseconds where Linux counts jiffies.

use multiconn_core::{Dur, Time};

const BETA_SCALE: u64 = 1024;
/// `BICTCP_HZ`: `t` and `K` in 1/1024 s.
const BICTCP_HZ: u32 = 10;

/// Linux's `struct bictcp`, the part congestion avoidance uses, and `snd_cwnd_cnt`.
#[derive(Clone, Debug, PartialEq)]
pub struct BicTcp {
    /// β · 1024.
    beta: u64,
    /// `cube_rtt_scale = bic_scale · 10`, with C = bic_scale · 10 / 1024.
    cube_rtt_scale: u128,
    /// `beta_scale` of the TCP-friendliness estimate.
    beta_scale: u64,
    fast_convergence: bool,
    /// Increase the window by one segment after `cnt` acknowledged segments.
    pub cnt: u64,
    /// Segments; 0 before the first congestion event and after a timeout.
    pub last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: Option<Time>,
    epoch_start: Option<Time>,
    /// K in 1/1024 s.
    bic_k: u64,
    origin: u64,
    ack_cnt: u64,
    /// The Reno-friendly estimate, segments.
    pub tcp_cwnd: u64,
    /// `snd_cwnd_cnt`: segments acknowledged towards the next increase.
    pub cwnd_cnt: u64,
}

impl BicTcp {
    /// `beta` and `c` as in RFC 9438 (0.7 and 0.4 for Linux's 717/1024 and 41·10/1024).
    pub fn new(beta: f64, c: f64, fast_convergence: bool) -> BicTcp {
        let beta = (beta * BETA_SCALE as f64).round().clamp(1.0, (BETA_SCALE - 1) as f64) as u64;
        let bic_scale = (c * BETA_SCALE as f64 / 10.0).round().max(1.0) as u128;
        BicTcp::with_constants(beta, bic_scale * 10, 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta), fast_convergence)
    }

    /// The state of a new connection with these constants.
    fn with_constants(beta: u64, cube_rtt_scale: u128, beta_scale: u64, fast_convergence: bool) -> BicTcp {
        BicTcp {
            beta,
            cube_rtt_scale,
            beta_scale,
            fast_convergence,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            epoch_start: None,
            bic_k: 0,
            origin: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            cwnd_cnt: 0,
        }
    }

    /// `bictcp_reset` at a timeout (and `tcp_enter_loss`'s `snd_cwnd_cnt = 0`): everything
    /// forgotten, `last_max_cwnd` included.
    pub fn reset(&mut self) {
        *self = BicTcp::with_constants(self.beta, self.cube_rtt_scale, self.beta_scale, self.fast_convergence);
    }

    /// `cubictcp_recalc_ssthresh` at a congestion event with a window of `cwnd` segments (and
    /// `tcp_init_cwnd_reduction`'s `snd_cwnd_cnt = 0`): returns ssthresh, segments.
    pub fn on_congestion(&mut self, cwnd: u64) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
            cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.cwnd_cnt = 0;
        (cwnd * self.beta / BETA_SCALE).max(2)
    }

    /// `cubictcp_cong_avoid` past slow start: `acked` segments acknowledged at `now` with a
    /// window of `cwnd` segments (the connection cwnd-limited). Returns the new window.
    pub fn cong_avoid(&mut self, now: Time, cwnd: u64, acked: u64, delay_min: Dur) -> u64 {
        self.update(now, cwnd, acked, delay_min);
        self.cong_avoid_ai(self.cnt, cwnd, acked)
    }

    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`: sending resumes at `now` with nothing in
    /// flight, `idle` after the last send.
    pub fn on_tx_start(&mut self, now: Time, idle: Dur) {
        if let Some(e) = self.epoch_start.as_mut() {
            if idle > Dur::ZERO {
                *e = (*e + idle).min(now);
            }
        }
    }

    /// When the current epoch began (moved forward over idle time); `None` outside one.
    pub fn epoch_start(&self) -> Option<Time> {
        self.epoch_start
    }

    /// `tcp_cong_avoid_ai(tp, w, acked)`: one segment more each `w` acknowledged; credit
    /// accumulated at a larger `w` first gives one segment.
    fn cong_avoid_ai(&mut self, w: u64, mut cwnd: u64, acked: u64) -> u64 {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            cwnd += delta;
        }
        cwnd
    }

    /// `bictcp_update`.
    fn update(&mut self, now: Time, cwnd: u64, acked: u64, delay_min: Dur) {
        self.ack_cnt += acked;
        let since = self.last_time.map(|t| now.since(t));
        if self.last_cwnd == cwnd && since.is_some_and(|d| d <= Dur::from_micros(1_000_000 / 32)) {
            return;
        }
        // The curve is computed at most once a millisecond; a congestion event (no epoch)
        // forces it.
        if !(self.epoch_start.is_some() && since.is_some_and(|d| d < Dur::from_millis(1))) {
            self.last_cwnd = cwnd;
            self.last_time = Some(now);
            if self.epoch_start.is_none() {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.origin = cwnd;
                } else {
                    // cube_factor = 2^(10 + 3·BICTCP_HZ) / cube_rtt_scale: K = ∛(Δ/C) in 1/1024 s.
                    let a = (1u128 << (10 + 3 * BICTCP_HZ)) * (self.last_max_cwnd - cwnd) as u128 / self.cube_rtt_scale;
                    self.bic_k = icbrt(a);
                    self.origin = self.last_max_cwnd;
                }
            }
            let since_epoch = now.since(self.epoch_start.expect("set above"));
            let t = ((since_epoch + delay_min).0 as u128 * (1 << BICTCP_HZ) / 1_000_000_000) as u64;
            let offs = t.abs_diff(self.bic_k) as u128;
            let delta = ((self.cube_rtt_scale * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)).min(u64::MAX as u128) as u64;
            let bic_target = if t < self.bic_k { self.origin.saturating_sub(delta) } else { self.origin.saturating_add(delta) };
            self.cnt = if bic_target > cwnd { cwnd / (bic_target - cwnd) } else { 100 * cwnd };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // TCP friendliness.
        // while (ca->ack_cnt > delta) { ca->ack_cnt -= delta; ca->tcp_cwnd++; }
        let delta = (cwnd * self.beta_scale) >> 3;
        if delta > 0 && self.ack_cnt > delta {
            let k = (self.ack_cnt - 1) / delta;
            self.ack_cnt -= k * delta;
            self.tcp_cwnd += k;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(2);
    }
}

/// Integer cube root, rounded down.
fn icbrt(a: u128) -> u64 {
    if a == 0 {
        return 0;
    }
    let mut x = (a as f64).cbrt() as u128;
    while x * x * x > a {
        x -= 1;
    }
    while (x + 1) * (x + 1) * (x + 1) <= a {
        x += 1;
    }
    x as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> Time {
        Time(ms * MS)
    }

    /// `cubictcp_recalc_ssthresh` with β = 717/1024: ssthresh = ⌊cwnd·717/1024⌋ (at least 2);
    /// a window below the last maximum is remembered as ⌊cwnd·1741/2048⌋ (fast convergence).
    #[test]
    fn congestion_events_set_ssthresh_and_last_max_cwnd_in_whole_segments() {
        let mut b = BicTcp::new(0.7, 0.4, true);
        assert_eq!((b.on_congestion(100), b.last_max_cwnd), (70, 100));
        assert_eq!((b.on_congestion(80), b.last_max_cwnd), (56, 68));
        assert_eq!((b.on_congestion(90), b.last_max_cwnd), (63, 90));
        assert_eq!((b.on_congestion(2), b.last_max_cwnd), (2, 1));
        let mut slow = BicTcp::new(0.7, 0.4, false);
        slow.on_congestion(100);
        slow.on_congestion(80);
        assert_eq!(slow.last_max_cwnd, 80);
        b.reset();
        assert_eq!((b.last_max_cwnd, b.epoch_start()), (0, None));
    }

    /// Before the first congestion event (`last_max_cwnd` 0) the curve starts at the window
    /// and `cnt` is at most 20; after one, `cnt = cwnd / (bic_target − cwnd)` with the target
    /// `last_max_cwnd − ⌊C·(K − t)³⌋`, `t` including `delay_min`: 100 → 70, K = 4.216 s, at
    /// t = 1 s the target is 87 and cnt 70 / 17 = 4. Within 1/32 s and the window unchanged,
    /// cnt stays, however the curve moved (at t = 2.01 s it would be 96: cnt 2).
    #[test]
    fn cnt_follows_the_curve_and_is_recomputed_only_after_a_32nd_of_a_second() {
        let mut b = BicTcp::new(0.7, 0.4, true);
        b.cong_avoid(at(0), 100, 1, Dur::ZERO);
        assert_eq!(b.cnt, 20);
        let ssthresh = b.on_congestion(100);
        assert_eq!(b.cong_avoid(at(1000), ssthresh, 1, Dur::from_secs(1)), 70);
        assert_eq!(b.cnt, 4);
        b.cong_avoid(at(1010), 70, 1, Dur::from_millis(2000));
        assert_eq!(b.cnt, 4, "within 1/32 s");
        b.cong_avoid(at(1032), 70, 1, Dur::from_millis(1978));
        assert_eq!(b.cnt, 2, "after 1/32 s");
    }

    /// The Reno estimate grows by one for each `(cwnd·15) >> 3` segments acknowledged, counted
    /// strictly (`while (ack_cnt > delta)`): 112 for a window of 60. Above it the window grows
    /// at `cnt ≤ cwnd / (tcp_cwnd − cwnd)`, where the curve alone (a window above
    /// `last_max_cwnd`: K = 0, target = the window) would give `100·cwnd`.
    #[test]
    fn the_reno_estimate_counts_acknowledged_segments_strictly() {
        let mut b = BicTcp::new(0.7, 0.4, true);
        b.on_congestion(100);
        b.on_congestion(40);
        assert_eq!(b.last_max_cwnd, 34);
        let mut seen = Vec::new();
        for (i, acked) in [112, 1, 111, 1].into_iter().enumerate() {
            b.cong_avoid(at(100 + 40 * i as u64), 60, acked, Dur::ZERO);
            seen.push((b.tcp_cwnd, b.cnt));
        }
        assert_eq!(seen, vec![(60, 6000), (61, 60), (61, 60), (62, 30)]);
    }

    /// `tcp_cong_avoid_ai`: one segment per `w` acknowledged, several at once for a large ACK;
    /// credit above `w` (left from a larger `w`) first gives one segment and is cleared.
    #[test]
    fn additive_increase_counts_segments_towards_w() {
        let mut b = BicTcp::new(0.7, 0.4, true);
        assert_eq!(b.cong_avoid_ai(20, 50, 19), 50);
        assert_eq!(b.cong_avoid_ai(20, 50, 1), 51);
        assert_eq!(b.cwnd_cnt, 0);
        assert_eq!(b.cong_avoid_ai(20, 51, 45), 53);
        assert_eq!(b.cwnd_cnt, 5);
        b.cwnd_cnt = 30;
        assert_eq!(b.cong_avoid_ai(10, 53, 5), 54);
        assert_eq!(b.cwnd_cnt, 5);
    }

    /// `CA_EVENT_TX_START`: the epoch start moves forward by the idle time, never past now.
    #[test]
    fn idle_time_moves_the_epoch_forward() {
        let mut b = BicTcp::new(0.7, 0.4, true);
        b.on_tx_start(at(10), Dur::from_secs(1));
        assert_eq!(b.epoch_start(), None);
        b.cong_avoid(at(1000), 50, 1, Dur::ZERO);
        b.on_tx_start(at(3000), Dur::from_millis(1500));
        assert_eq!(b.epoch_start(), Some(at(2500)));
        b.on_tx_start(at(3000), Dur::from_secs(10));
        assert_eq!(b.epoch_start(), Some(at(3000)));
    }
}
