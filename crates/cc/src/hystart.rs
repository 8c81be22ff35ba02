//! HyStart++ (RFC 9406): leave slow start before the first loss when the RTT rises.
//!
//! Used by [`crate::newreno`] and [`crate::cubic`] during the initial slow start only
//! (RFC 9406 §4.1: after the first congestion event plain slow start is used).
//!
//! * Rounds are tracked by send times: a round starts when an ACK acknowledges a packet sent
//!   at or after the first packet sent in the current round (the send-time form of RFC 9406's
//!   `windowEnd = SND.NXT`).
//! * Per round the minimum RTT of the ACKs is kept. After at least [`N_RTT_SAMPLE`] samples in
//!   a round, slow start moves to Conservative Slow Start (CSS) when
//!   `currentRoundMinRTT ≥ lastRoundMinRTT + clamp(lastRoundMinRTT / 8, 4 ms, 16 ms)`.
//! * In CSS growth is divided by [`CSS_GROWTH_DIVISOR`]. If a round's minimum RTT (again after
//!   [`N_RTT_SAMPLE`] samples) falls below the RTT that triggered CSS, slow start resumes;
//!   once [`CSS_ROUNDS`] rounds have completed in CSS (the round CSS started in counts), the
//!   controller is told to leave slow start (`ssthresh = cwnd`).
//! * The per-ACK growth limit L of RFC 9406 §4.2 is not applied (the simulated senders pace,
//!   for which the RFC sets L = ∞).

use multiconn_core::{Dur, Time};

/// RFC 9406 constants.
pub const MIN_RTT_THRESH: Dur = Dur::from_millis(4);
pub const MAX_RTT_THRESH: Dur = Dur::from_millis(16);
pub const MIN_RTT_DIVISOR: u64 = 8;
pub const N_RTT_SAMPLE: u32 = 8;
pub const CSS_GROWTH_DIVISOR: u64 = 4;
pub const CSS_ROUNDS: u32 = 5;

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartPhase {
    /// Standard slow start, watching for an RTT increase.
    SlowStart,
    /// Conservative Slow Start; `rounds` counts the round boundaries passed since it began.
    Css { baseline: Dur, rounds: u32 },
    /// CSS has run its rounds: the controller must set `ssthresh = cwnd` now.
    ExitPending,
    /// Slow start is over (left by HyStart++ or by a congestion event): HyStart++ no longer acts.
    Done,
}

#[derive(Debug, Clone)]
pub struct HyStart {
    mds: u64,
    phase: HyStartPhase,
    /// Send time of the first packet of the current round; `None` until one is sent after the
    /// round began.
    round_first_sent: Option<Time>,
    last_round_min_rtt: Option<Dur>,
    current_round_min_rtt: Option<Dur>,
    rtt_samples: u32,
    rounds: u64,
}

impl HyStart {
    pub fn new(mds: u64) -> HyStart {
        HyStart {
            mds,
            phase: HyStartPhase::SlowStart,
            round_first_sent: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_samples: 0,
            rounds: 0,
        }
    }

    pub fn on_packet_sent(&mut self, now: Time) {
        if self.round_first_sent.is_none() {
            self.round_first_sent = Some(now);
        }
    }

    /// An ACK in slow start: `largest_acked_sent` identifies the round, `latest_rtt` the sample.
    pub fn on_ack(&mut self, _now: Time, largest_acked_sent: Time, latest_rtt: Dur, _cwnd: u64) {
        match self.phase {
            HyStartPhase::Done => return,
            // The controller has acted on the exit (or ignored it, e.g. because the window
            // already collapsed): HyStart++ is finished either way.
            HyStartPhase::ExitPending => {
                self.phase = HyStartPhase::Done;
                return;
            }
            _ => {}
        }
        if self.round_first_sent.is_some_and(|first| largest_acked_sent >= first) {
            self.start_round();
            if self.phase == HyStartPhase::ExitPending {
                return;
            }
        }
        if latest_rtt > Dur::ZERO {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(latest_rtt, |m| m.min(latest_rtt)));
            self.rtt_samples += 1;
        }
        if self.rtt_samples < N_RTT_SAMPLE {
            return;
        }
        let Some(current) = self.current_round_min_rtt else { return };
        match self.phase {
            HyStartPhase::SlowStart => {
                if let Some(last) = self.last_round_min_rtt {
                    let thresh = Dur(last.0 / MIN_RTT_DIVISOR).max(MIN_RTT_THRESH).min(MAX_RTT_THRESH);
                    if current >= last + thresh {
                        self.phase = HyStartPhase::Css { baseline: current, rounds: 0 };
                    }
                }
            }
            HyStartPhase::Css { baseline, .. } => {
                // The RTT rise was spurious: back to standard slow start.
                if current < baseline {
                    self.phase = HyStartPhase::SlowStart;
                }
            }
            HyStartPhase::ExitPending | HyStartPhase::Done => {}
        }
    }

    fn start_round(&mut self) {
        self.rounds += 1;
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = None;
        self.rtt_samples = 0;
        self.round_first_sent = None;
        if let HyStartPhase::Css { baseline, rounds } = self.phase {
            let rounds = rounds + 1;
            self.phase = if rounds >= CSS_ROUNDS { HyStartPhase::ExitPending } else { HyStartPhase::Css { baseline, rounds } };
        }
    }

    /// True once Conservative Slow Start has lasted its rounds: go to congestion avoidance.
    pub fn should_exit_slow_start(&self) -> bool {
        self.phase == HyStartPhase::ExitPending
    }

    /// Slow-start growth is divided by this (1 in slow start, 4 in CSS).
    pub fn growth_divisor(&self) -> u64 {
        match self.phase {
            HyStartPhase::Css { .. } => CSS_GROWTH_DIVISOR,
            _ => 1,
        }
    }

    /// A loss or ECN-CE in slow start or CSS ends HyStart++.
    pub fn on_congestion_event(&mut self) {
        self.phase = HyStartPhase::Done;
    }

    pub fn phase(&self) -> HyStartPhase {
        self.phase
    }

    pub fn in_css(&self) -> bool {
        matches!(self.phase, HyStartPhase::Css { .. })
    }

    /// Rounds completed since the start.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// The datagram size this instance was built for.
    pub fn max_datagram_size(&self) -> u64 {
        self.mds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Drives `rounds` rounds of `acks` ACKs each, round r's RTT given by `rtt(r)`; returns the
    /// phase after each round.
    fn drive(h: &mut HyStart, rounds: u64, acks: u64, rtt: impl Fn(u64) -> u64) -> Vec<HyStartPhase> {
        let mut phases = Vec::new();
        for r in 0..rounds {
            let send = Time(r * 100 * MS);
            for _ in 0..acks {
                h.on_packet_sent(send);
            }
            for i in 0..acks {
                let now = Time(send.0 + rtt(r) * MS + i);
                h.on_ack(now, send, Dur(rtt(r) * MS), 0);
            }
            phases.push(h.phase());
        }
        phases
    }

    #[test]
    fn flat_rtt_stays_in_slow_start() {
        let mut h = HyStart::new(1200);
        let phases = drive(&mut h, 20, 16, |_| 50);
        assert!(phases.iter().all(|p| *p == HyStartPhase::SlowStart));
        assert_eq!(h.growth_divisor(), 1);
        assert_eq!(h.rounds(), 20);
    }

    #[test]
    fn rtt_rise_enters_css_and_exits_after_five_rounds() {
        let mut h = HyStart::new(1200);
        // 50 ms for 3 rounds, then 60 ms (≥ 50 + max(4, min(50/8, 16)) = 56.25 ms).
        let phases = drive(&mut h, 3, 16, |_| 50);
        assert_eq!(phases.last(), Some(&HyStartPhase::SlowStart));
        let phases = drive(&mut h, 1, 16, |_| 60);
        assert!(matches!(phases[0], HyStartPhase::Css { baseline: Dur(b), rounds: 0 } if b == 60 * MS));
        assert_eq!(h.growth_divisor(), CSS_GROWTH_DIVISOR);
        // Four more complete rounds keep CSS; the boundary ending the fifth CSS round exits.
        for k in 1..CSS_ROUNDS {
            let p = drive(&mut h, 1, 16, |_| 60);
            assert!(matches!(p[0], HyStartPhase::Css { rounds, .. } if rounds == k), "{k}: {:?}", p[0]);
        }
        assert!(!h.should_exit_slow_start());
        h.on_packet_sent(Time(10_000 * MS));
        h.on_ack(Time(10_060 * MS), Time(10_000 * MS), Dur(60 * MS), 0);
        assert!(h.should_exit_slow_start());
        // The next ACK finishes HyStart++ for good.
        h.on_ack(Time(10_061 * MS), Time(10_000 * MS), Dur(60 * MS), 0);
        assert_eq!(h.phase(), HyStartPhase::Done);
        assert_eq!(h.growth_divisor(), 1);
    }

    #[test]
    fn small_rise_or_few_samples_do_not_trigger() {
        // +5 ms on 50 ms is below the 6.25 ms threshold.
        let mut h = HyStart::new(1200);
        drive(&mut h, 2, 16, |_| 50);
        assert_eq!(drive(&mut h, 1, 16, |_| 55)[0], HyStartPhase::SlowStart);
        // A big rise seen by fewer than 8 ACKs is ignored.
        let mut h = HyStart::new(1200);
        drive(&mut h, 2, 16, |_| 50);
        assert_eq!(drive(&mut h, 1, 7, |_| 90)[0], HyStartPhase::SlowStart);
    }

    #[test]
    fn rtt_drop_below_baseline_resumes_slow_start() {
        let mut h = HyStart::new(1200);
        drive(&mut h, 2, 16, |_| 50);
        drive(&mut h, 1, 16, |_| 70);
        assert!(h.in_css());
        let p = drive(&mut h, 1, 16, |_| 65);
        assert_eq!(p[0], HyStartPhase::SlowStart);
    }

    #[test]
    fn congestion_event_ends_hystart() {
        let mut h = HyStart::new(1200);
        drive(&mut h, 2, 16, |_| 50);
        drive(&mut h, 1, 16, |_| 70);
        h.on_congestion_event();
        assert_eq!(h.phase(), HyStartPhase::Done);
        assert_eq!(drive(&mut h, 3, 16, |r| 50 + 30 * r)[2], HyStartPhase::Done);
    }
}
