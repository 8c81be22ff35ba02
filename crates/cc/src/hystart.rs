//! HyStart++ (RFC 9406): leave slow start before the first loss when the RTT rises.
//!
//! Used by [`crate::newreno`], [`crate::cubic`] and [`crate::coupled`]. Two rules
//! ([`HyStartRule`]); both use RFC 9406's constants and its threshold
//! `clamp(lastRoundMinRTT / 8, 4 ms, 16 ms)`, and both find rounds the same way: a round ends
//! with the first ACK that acknowledges a packet sent after the round began (the send-time
//! form of RFC 9406's `windowEnd = SND.NXT`; ngtcp2's `next_round_delivered`, a delivered-byte
//! count taken at the round's first ACK, marks the same packets).
//!
//! **`rfc9406`** (the default), during the initial slow start only (§4.1: after the first
//! congestion event plain slow start is used):
//!
//! * Every ACK that reaches it is a sample of the estimator's latest RTT (the last sample
//!   taken, which is this ACK's when it produced one). After at least [`N_RTT_SAMPLE`] samples
//!   in a round, slow start moves to Conservative Slow Start (CSS) when
//!   `currentRoundMinRTT ≥ lastRoundMinRTT + threshold`; that ACK already grows by a quarter.
//! * In CSS growth is divided by [`CSS_GROWTH_DIVISOR`]. If a round's minimum RTT (again after
//!   [`N_RTT_SAMPLE`] samples) falls below the RTT that triggered CSS, slow start resumes;
//!   once [`CSS_ROUNDS`] rounds have completed in CSS (the round CSS started in counts), the
//!   ACK that ends the last one does not grow the window and sets `ssthresh = cwnd`.
//! * A congestion event ends HyStart++ for good; application-limited ACKs are not seen.
//!
//! **`ngtcp2`**: ngtcp2 1.x's port of it (`ngtcp2_cc.c` `ngtcp2_cc_cubic_cc_on_ack_recv`,
//! samples from `ngtcp2_rtb.c` `ngtcp2_rtb_recv_ack`; checked at v1.25.0):
//!
//! * Every ACK frame that newly acknowledges bytes outside a recovery period counts as a
//!   sample (`++rtt_sample_count`), but only one that produced an RTT sample (its largest
//!   acknowledged packet newly acknowledged, an ack-eliciting packet among them) lowers the
//!   round's minimum (`ack->rtt`, the raw `latest_rtt`, is `UINT64_MAX` otherwise).
//! * Application-limited ACKs count too (they only skip the growth), and the rule runs in
//!   every slow start, also after persistent congestion, with the state it had: a congestion
//!   event does not end it.
//! * The ACK's growth comes first (divided by 4 if CSS was on before it), then the round and
//!   sample bookkeeping, so the ACK that enters CSS grows in full.
//! * In CSS the minimum is compared with the CSS baseline after every sample, without waiting
//!   for [`N_RTT_SAMPLE`] of them: one sample below the baseline resumes slow start.
//! * `css_round` is 1 in the round CSS began in and grows at each round start; the first ACK
//!   of round 5 (after four round boundaries, not five) that does not resume slow start sets
//!   `ssthresh = cwnd`, after its growth.
//!
//! **`ngtcp2-0.12`**: the older HyStart of ngtcp2 0.12 (`lib/ngtcp2_cc.c` at v0.12.1,
//! `ngtcp2_cc_cubic_cc_on_pkt_acked`, `_on_pkt_sent`, `_new_rtt_sample`), an early draft of
//! HyStart++ without Conservative Slow Start:
//!
//! * A round begins when a packet is sent while no round is open (`window_end = -1`): the
//!   round's minimum becomes the last round's, and the minimum and the sample count restart.
//!   The round closes with the ACK that acknowledges its first packet; RTT samples taken while
//!   no round is open (between that ACK and the next packet sent) are not counted.
//! * Every ACK that produces an RTT sample (`ngtcp2_conn_update_rtt`, then `new_rtt_sample`)
//!   counts once and lowers the round's minimum with the raw `latest_rtt`, in slow start or
//!   not, in a recovery period or not; the sample is taken before the ACK's packets close the
//!   round.
//! * After the ACK's slow-start growth ([`HyStart::exits_after_growth`]): once the round has
//!   [`N_RTT_SAMPLE`] samples, the window is at least [`MIN_SSTHRESH_PACKETS`] datagrams and
//!   `currentRoundMinRTT ≥ lastRoundMinRTT + threshold`, slow start ends at once
//!   (`ssthresh = cwnd`, and CUBIC's `w_last_max = cwnd`). ngtcp2 checks after each
//!   acknowledged packet; the model checks once per ACK, after the ACK's whole growth.
//! * Nothing ends the rule: it acts in every slow start (also after persistent congestion),
//!   and application-limited ACKs are counted like the others.
//!
//! **`linux`**: the HyStart of Linux's CUBIC (`net/ipv4/tcp_cubic.c`, `hystart_update` and
//! `cubictcp_acked`, as of 5.7 and since), not HyStart++: two tests, and no Conservative Slow
//! Start.
//!
//! * Only ACKs with an RTT sample count (`sample->rtt_us < 0` returns). Each lowers the
//!   connection's minimum `delay_min` (slow start or not); a timeout (`TCP_CA_Loss`,
//!   `bictcp_reset`) forgets it. While slow start lasts and HyStart has not fired (`found`), a
//!   round ends with the first ACK that acknowledges a packet sent after the round began
//!   (`end_seq = snd_nxt`), and the ACK that ends it is the new round's first.
//! * The tests run only while the window is at least [`LINUX_LOW_WINDOW_PACKETS`] segments
//!   (`hystart_low_window`).
//! * ACK train: an ACK at most [`LINUX_ACK_DELTA`] after the previous ACK of the train
//!   extends it (a longer gap breaks it for the rest of the round); slow start ends once the
//!   train, counted from the round's first ACK, lasts more than `(delay_min + 1 ms) / 2`
//!   (the sender is not paced; `hystart_ack_delay`'s cushion is 1 ms below a pacing rate of
//!   262 MB/s, which the model takes as always).
//! * Delay: the round's minimum RTT over all its samples so far; from its ninth sample on
//!   (`HYSTART_MIN_SAMPLES` = 8 are only counted), slow start ends when that minimum exceeds
//!   `delay_min + clamp(delay_min / 8, 4 ms, 16 ms)`.
//! * Either test ends slow start at once: `ssthresh = cwnd`, without growing the window on
//!   that ACK (Linux's `tcp_slow_start` then no longer applies). A fast-recovery congestion
//!   event leaves the state alone; a timeout starts HyStart afresh. Linux's discarding of
//!   samples within a second of a CUBIC epoch's start only touches `delay_min` in congestion
//!   avoidance and is not modelled.
//!
//! **`aioquic`**: not HyStart++ either, but aioquic's own delay test, `QuicRttMonitor`
//! (`quic/congestion/base.py`, used by its `reno` and `cubic` in `on_rtt_measurement`; checked
//! at aioquic 1.7.2):
//!
//! * It runs only in the first slow start (`ssthresh is None`): a congestion event or its own
//!   exit ends it for good. Only ACKs with an RTT sample count (aioquic calls it after the
//!   ACK's packets grew the window), with the raw `latest_rtt`, at most one per
//!   [`AIOQUIC_GRANULARITY`] (`now > sample_time + K_GRANULARITY`), application-limited or not.
//! * The samples fill a ring of [`AIOQUIC_SAMPLES`]; once it is full, each sample sets the
//!   ring's minimum and maximum (aioquic's loop: a value below the minimum is not also tested
//!   against the maximum), `filtered_min` becomes the ring's maximum whenever that is below
//!   it, and with `delta = minimum − filtered_min`: `4·delta ≥ filtered_min` counts an
//!   increase, [`AIOQUIC_SAMPLES`] increases end slow start (`ssthresh = cwnd`, after the
//!   ACK's growth); otherwise a positive `delta` resets the count (a negative one does not).
//!
//! The per-ACK growth limit L of RFC 9406 §4.2 is not applied in either (the simulated senders
//! pace, for which the RFC sets L = ∞; ngtcp2 has no L).

use crate::RttEstimator;
use multiconn_core::{Dur, Time};
use serde::Deserialize;

/// RFC 9406 constants (ngtcp2's `NGTCP2_HS_*` are the same).
pub const MIN_RTT_THRESH: Dur = Dur::from_millis(4);
/// RFC 9406 MAX_RTT_THRESH: the RTT-increase threshold's upper clamp.
pub const MAX_RTT_THRESH: Dur = Dur::from_millis(16);
/// RFC 9406 MIN_RTT_DIVISOR: the threshold is `lastRoundMinRTT` divided by this, clamped.
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RFC 9406 N_RTT_SAMPLE: RTT samples a round needs before its minimum is compared.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 CSS_GROWTH_DIVISOR: slow-start growth is divided by this in CSS.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 CSS_ROUNDS: rounds of CSS before slow start ends.
pub const CSS_ROUNDS: u32 = 5;
/// ngtcp2 0.12's `NGTCP2_HS_MIN_SSTHRESH`: its HyStart acts only once the window is at least
/// this many datagrams.
pub const MIN_SSTHRESH_PACKETS: u64 = 16;
/// Linux's `hystart_low_window`: its HyStart tests only windows of at least this many
/// segments.
pub const LINUX_LOW_WINDOW_PACKETS: u64 = 16;
/// Linux's `hystart_ack_delta_us`: the longest gap between two ACKs of an ACK train.
pub const LINUX_ACK_DELTA: Dur = Dur::from_millis(2);
/// Linux's `hystart_ack_delay` at pacing rates below 262 MB/s: the ACK train's cushion.
pub const LINUX_ACK_TRAIN_CUSHION: Dur = Dur::from_millis(1);

/// aioquic's `QuicRttMonitor._size`: the ring of RTT samples, and the increases in a row that
/// end slow start.
pub const AIOQUIC_SAMPLES: usize = 5;
/// aioquic's `K_GRANULARITY`: the monitor takes at most one sample per this interval.
pub const AIOQUIC_GRANULARITY: Dur = Dur::from_millis(1);

/// Whose reading of RFC 9406 (see the module notes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HyStartRule {
    /// RFC 9406 as written.
    #[default]
    Rfc9406,
    /// ngtcp2 1.x (`ngtcp2_cc.c`).
    Ngtcp2,
    /// ngtcp2 0.12 (`ngtcp2_cc.c` at v0.12.1): no Conservative Slow Start.
    #[serde(rename = "ngtcp2-0.12")]
    Ngtcp2V012,
    /// Linux CUBIC's HyStart (`tcp_cubic.c`): ACK train and delay tests, exit at once.
    Linux,
    /// aioquic's `QuicRttMonitor` (`congestion/base.py`): a rise of a 5-sample window's
    /// minimum RTT, 5 samples in a row, ends the first slow start.
    Aioquic,
}

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartPhase {
    /// Standard slow start, watching for an RTT increase.
    SlowStart,
    /// Conservative Slow Start; `rounds` counts the round boundaries passed since it began.
    Css {
        /// The round minimum RTT that started CSS (RFC 9406 `cssBaselineMinRtt`).
        baseline: Dur,
        /// Round boundaries passed since CSS began.
        rounds: u32,
    },
    /// CSS has run its rounds: the controller must set `ssthresh = cwnd` now.
    ExitPending,
    /// Slow start is over (left by HyStart++ or by a congestion event): HyStart++ no longer acts.
    /// Under the ngtcp2 rule: CSS has run its rounds, and a later slow start (after persistent
    /// congestion) ends at its first ACK unless that ACK's RTT is below the CSS baseline.
    Done,
}

/// What the controller does with one ACK in slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowStartStep {
    /// Divide the ACK's slow-start growth by this; 0 = no growth.
    pub divisor: u64,
    /// After the growth, set `ssthresh = cwnd`: slow start is over.
    pub exit: bool,
}

impl SlowStartStep {
    /// Plain slow start.
    pub const GROW: SlowStartStep = SlowStartStep { divisor: 1, exit: false };
}

/// The HyStart state of one sender, by one [`HyStartRule`] (see the module notes).
#[derive(Debug, Clone)]
pub struct HyStart {
    mds: u64,
    rule: HyStartRule,
    phase: HyStartPhase,
    /// Send time of the first packet of the current round; `None` until one is sent after the
    /// round began.
    round_first_sent: Option<Time>,
    last_round_min_rtt: Option<Dur>,
    current_round_min_rtt: Option<Dur>,
    rtt_samples: u32,
    rounds: u64,
    /// ngtcp2: `css_round` (0 outside CSS) and `css_baseline_min_rtt`.
    css_round: u32,
    css_baseline: Option<Dur>,
    /// The estimator's sample count at the previous ACK: tells whether this ACK brought one.
    samples_seen: u64,
    /// Linux: `delay_min`, and the round's first ACK and the ACK train's last
    /// (`round_start`, `last_ack`).
    delay_min: Option<Dur>,
    train_start: Option<Time>,
    train_last: Option<Time>,
    /// aioquic: its RTT monitor.
    monitor: RttMonitor,
}

/// aioquic's `QuicRttMonitor` (see the module notes).
#[derive(Debug, Clone, Default)]
struct RttMonitor {
    samples: [Dur; AIOQUIC_SAMPLES],
    next: usize,
    ready: bool,
    sample_min: Dur,
    sample_max: Dur,
    filtered_min: Option<Dur>,
    increases: usize,
    sample_time: Time,
}

impl RttMonitor {
    /// `add_rtt`.
    fn add(&mut self, rtt: Dur) {
        self.samples[self.next] = rtt;
        self.next += 1;
        if self.next >= AIOQUIC_SAMPLES {
            self.next = 0;
            self.ready = true;
        }
        if self.ready {
            self.sample_max = self.samples[0];
            self.sample_min = self.samples[0];
            for &sample in &self.samples[1..] {
                if sample < self.sample_min {
                    self.sample_min = sample;
                } else if sample > self.sample_max {
                    self.sample_max = sample;
                }
            }
        }
    }

    /// `is_rtt_increasing`: whether slow start ends with this sample.
    fn rising(&mut self, now: Time, rtt: Dur) -> bool {
        if now <= self.sample_time + AIOQUIC_GRANULARITY {
            return false;
        }
        self.add(rtt);
        self.sample_time = now;
        if !self.ready {
            return false;
        }
        if self.filtered_min.map_or(true, |f| f > self.sample_max) {
            self.filtered_min = Some(self.sample_max);
        }
        let filtered = self.filtered_min.unwrap_or(self.sample_max);
        if self.sample_min >= filtered && (self.sample_min - filtered).0.saturating_mul(4) >= filtered.0 {
            self.increases += 1;
            return self.increases >= AIOQUIC_SAMPLES;
        }
        if self.sample_min > filtered {
            self.increases = 0;
        }
        false
    }
}

impl HyStart {
    /// RFC 9406's rule.
    pub fn new(mds: u64) -> HyStart {
        HyStart::with_rule(mds, HyStartRule::Rfc9406)
    }

    /// `rule`'s HyStart for datagrams of `mds` bytes, in slow start.
    pub fn with_rule(mds: u64, rule: HyStartRule) -> HyStart {
        HyStart {
            mds,
            rule,
            phase: HyStartPhase::SlowStart,
            round_first_sent: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_samples: 0,
            rounds: 0,
            css_round: 0,
            css_baseline: None,
            samples_seen: 0,
            delay_min: None,
            train_start: None,
            train_last: None,
            monitor: RttMonitor::default(),
        }
    }

    /// Whose rule it follows.
    pub fn rule(&self) -> HyStartRule {
        self.rule
    }

    /// A packet was sent at `now`: it opens a round if none is open.
    pub fn on_packet_sent(&mut self, now: Time) {
        if self.round_first_sent.is_none() {
            self.round_first_sent = Some(now);
            if self.rule == HyStartRule::Linux && self.train_start.is_none() {
                // The first round's train starts with the connection (`cubictcp_init`).
                self.train_start = Some(now);
                self.train_last = Some(now);
            }
            if self.rule == HyStartRule::Ngtcp2V012 {
                // ngtcp2_cc_cubic_cc_on_pkt_sent: a new round begins with this packet.
                self.last_round_min_rtt = self.current_round_min_rtt.take();
                self.rtt_samples = 0;
            }
        }
    }

    /// An ACK that newly acknowledged bytes outside a recovery period, as a controller sees it:
    /// `in_slow_start` is `cwnd < ssthresh`, `app_limited` says the ACK will not grow the
    /// window, `cwnd` is the window before the ACK. `largest_acked_sent` (send time of the
    /// newest newly acknowledged packet) identifies the round, `rtt` has taken this ACK's
    /// sample if it produced one.
    pub fn on_ack_event(
        &mut self,
        now: Time,
        largest_acked_sent: Time,
        rtt: &RttEstimator,
        in_slow_start: bool,
        app_limited: bool,
        cwnd: u64,
    ) -> SlowStartStep {
        let sample = (rtt.samples() != self.samples_seen).then(|| rtt.latest());
        self.samples_seen = rtt.samples();
        match self.rule {
            HyStartRule::Rfc9406 => {
                if !in_slow_start || app_limited {
                    return SlowStartStep::GROW;
                }
                self.on_ack(now, largest_acked_sent, rtt.latest(), 0);
                if self.should_exit_slow_start() {
                    SlowStartStep { divisor: 0, exit: true }
                } else {
                    SlowStartStep { divisor: self.growth_divisor(), exit: false }
                }
            }
            HyStartRule::Ngtcp2 => self.on_ack_ngtcp2(largest_acked_sent, sample, in_slow_start),
            HyStartRule::Ngtcp2V012 => {
                self.on_ack_ngtcp2_012(largest_acked_sent, sample);
                SlowStartStep::GROW
            }
            HyStartRule::Linux => self.on_ack_linux(now, largest_acked_sent, sample, in_slow_start, cwnd),
            HyStartRule::Aioquic => self.on_ack_aioquic(now, sample, in_slow_start),
        }
    }

    /// aioquic rule (`on_rtt_measurement` with `QuicRttMonitor.is_rtt_increasing`).
    fn on_ack_aioquic(&mut self, now: Time, sample: Option<Dur>, in_slow_start: bool) -> SlowStartStep {
        let Some(rtt) = sample.filter(|_| in_slow_start && self.phase != HyStartPhase::Done) else {
            return SlowStartStep::GROW;
        };
        if !self.monitor.rising(now, rtt) {
            return SlowStartStep::GROW;
        }
        self.phase = HyStartPhase::Done;
        SlowStartStep { divisor: 1, exit: true }
    }

    /// Whether the controller passes it the ACKs of a recovery period too (as
    /// `in_slow_start = false`): ngtcp2 0.12 counts their samples and closes rounds, Linux
    /// lowers `delay_min`.
    pub fn sees_recovery_acks(&self) -> bool {
        matches!(self.rule, HyStartRule::Ngtcp2V012 | HyStartRule::Linux)
    }

    /// Linux rule (`cubictcp_acked`, `hystart_update`, and the round reset of
    /// `cubictcp_cong_avoid`).
    fn on_ack_linux(&mut self, now: Time, largest_acked_sent: Time, sample: Option<Dur>, in_slow_start: bool, cwnd: u64) -> SlowStartStep {
        if self.phase == HyStartPhase::Done || !in_slow_start {
            if let Some(s) = sample {
                self.delay_min = Some(self.delay_min.map_or(s, |m| m.min(s)));
            }
            return SlowStartStep::GROW;
        }
        if self.round_started(largest_acked_sent) {
            self.rounds += 1;
            self.reset_linux_round(now);
        }
        let Some(s) = sample else { return SlowStartStep::GROW };
        let delay_min = self.delay_min.map_or(s, |m| m.min(s));
        self.delay_min = Some(delay_min);
        if cwnd < LINUX_LOW_WINDOW_PACKETS * self.mds {
            return SlowStartStep::GROW;
        }
        let mut found = false;
        if let (Some(start), Some(last)) = (self.train_start, self.train_last) {
            if now.since(last) <= LINUX_ACK_DELTA {
                self.train_last = Some(now);
                found |= now.since(start) > Dur((delay_min + LINUX_ACK_TRAIN_CUSHION).0 / 2);
            }
        }
        let current = self.current_round_min_rtt.map_or(s, |m| m.min(s));
        self.current_round_min_rtt = Some(current);
        if self.rtt_samples < N_RTT_SAMPLE {
            self.rtt_samples += 1;
        } else {
            found |= current > delay_min + rtt_thresh(delay_min);
        }
        if !found {
            return SlowStartStep::GROW;
        }
        self.phase = HyStartPhase::Done;
        SlowStartStep { divisor: 0, exit: true }
    }

    /// Linux's `bictcp_hystart_reset`: a round begins at `now` with the next packet sent.
    fn reset_linux_round(&mut self, now: Time) {
        self.round_first_sent = None;
        self.train_start = Some(now);
        self.train_last = Some(now);
        self.current_round_min_rtt = None;
        self.rtt_samples = 0;
    }

    /// A retransmission timeout (or QUIC's persistent congestion). Linux (`cubictcp_state`
    /// entering `TCP_CA_Loss`: `bictcp_reset`, `bictcp_hystart_reset`) forgets `delay_min` and
    /// starts HyStart afresh with a new round; the other rules do not act on it.
    pub fn on_timeout(&mut self, now: Time) {
        if self.rule != HyStartRule::Linux {
            return;
        }
        self.phase = HyStartPhase::SlowStart;
        self.delay_min = None;
        self.reset_linux_round(now);
    }

    /// ngtcp2 0.12 rule: the sample counts if a round is open (`new_rtt_sample`), then the
    /// ACK's packets close the round if they include its first one (`on_pkt_acked`).
    fn on_ack_ngtcp2_012(&mut self, largest_acked_sent: Time, sample: Option<Dur>) {
        if let (Some(s), Some(_)) = (sample, self.round_first_sent) {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(s, |m| m.min(s)));
            self.rtt_samples += 1;
        }
        if self.round_started(largest_acked_sent) {
            self.rounds += 1;
            self.round_first_sent = None;
        }
    }

    /// Whether slow start ends after an ACK's growth left the window at `cwnd` (the
    /// controller asks only in slow start, and only when the ACK was allowed to grow the
    /// window). Only the `ngtcp2-0.12` rule decides here; the others answer through
    /// [`SlowStartStep::exit`].
    pub fn exits_after_growth(&self, cwnd: u64) -> bool {
        if self.rule != HyStartRule::Ngtcp2V012 || cwnd < MIN_SSTHRESH_PACKETS * self.mds || self.rtt_samples < N_RTT_SAMPLE {
            return false;
        }
        match (self.current_round_min_rtt, self.last_round_min_rtt) {
            (Some(current), Some(last)) => current >= last + rtt_thresh(last),
            _ => false,
        }
    }

    /// RFC 9406 rule: an ACK in slow start; `largest_acked_sent` identifies the round,
    /// `latest_rtt` is the sample.
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
        if self.round_started(largest_acked_sent) {
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
                    if current >= last + rtt_thresh(last) {
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

    /// ngtcp2 rule (`ngtcp2_cc_cubic_cc_on_ack_recv`): `sample` is this ACK's RTT sample, if
    /// it produced one. Round starts are tracked on every ACK, slow start or not.
    fn on_ack_ngtcp2(&mut self, largest_acked_sent: Time, sample: Option<Dur>, in_slow_start: bool) -> SlowStartStep {
        let round_start = self.round_started(largest_acked_sent);
        if round_start {
            self.rounds += 1;
            self.round_first_sent = None;
        }
        if !in_slow_start {
            return SlowStartStep::GROW;
        }
        // The growth uses CSS as it was before this ACK.
        let divisor = if self.css_round > 0 { CSS_GROWTH_DIVISOR } else { 1 };
        if round_start {
            self.last_round_min_rtt = self.current_round_min_rtt.take();
            self.rtt_samples = 0;
            if self.css_round > 0 {
                self.css_round += 1;
            }
        }
        if let Some(s) = sample {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(s, |m| m.min(s)));
        }
        self.rtt_samples += 1;
        let step = self.ngtcp2_decide(divisor);
        self.phase = match (self.css_round, self.css_baseline) {
            (0, _) | (_, None) => HyStartPhase::SlowStart,
            (r, Some(baseline)) if r < CSS_ROUNDS => HyStartPhase::Css { baseline, rounds: r - 1 },
            _ => HyStartPhase::Done,
        };
        step
    }

    fn ngtcp2_decide(&mut self, divisor: u64) -> SlowStartStep {
        if self.css_round > 0 {
            if let (Some(current), Some(baseline)) = (self.current_round_min_rtt, self.css_baseline) {
                if current < baseline {
                    self.css_baseline = None;
                    self.css_round = 0;
                    return SlowStartStep { divisor, exit: false };
                }
            }
            return SlowStartStep { divisor, exit: self.css_round >= CSS_ROUNDS };
        }
        if self.rtt_samples >= N_RTT_SAMPLE {
            if let (Some(current), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt) {
                if current >= last + rtt_thresh(last) {
                    self.css_baseline = Some(current);
                    self.css_round = 1;
                }
            }
        }
        SlowStartStep { divisor, exit: false }
    }

    fn round_started(&self, largest_acked_sent: Time) -> bool {
        self.round_first_sent.is_some_and(|first| largest_acked_sent >= first)
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

    /// RFC 9406 rule: true once Conservative Slow Start has lasted its rounds: go to
    /// congestion avoidance.
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

    /// A loss or ECN-CE: under RFC 9406 it ends HyStart++ (slow start after it is plain);
    /// ngtcp2 and Linux keep their state for the next slow start.
    pub fn on_congestion_event(&mut self) {
        if matches!(self.rule, HyStartRule::Rfc9406 | HyStartRule::Aioquic) {
            self.phase = HyStartPhase::Done;
        }
    }

    /// Where it is.
    pub fn phase(&self) -> HyStartPhase {
        self.phase
    }

    /// In Conservative Slow Start.
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

/// `clamp(last / MIN_RTT_DIVISOR, MIN_RTT_THRESH, MAX_RTT_THRESH)`.
fn rtt_thresh(last: Dur) -> Dur {
    Dur(last.0 / MIN_RTT_DIVISOR).max(MIN_RTT_THRESH).min(MAX_RTT_THRESH)
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

    /// Drives one HyStart++ through [`HyStart::on_ack_event`] as a controller does, with an
    /// RTT estimator that takes a sample only where one is given.
    struct Sender {
        h: HyStart,
        rtt: RttEstimator,
        round: u64,
    }

    impl Sender {
        fn new(rule: HyStartRule) -> Sender {
            Sender { h: HyStart::with_rule(1200, rule), rtt: RttEstimator::new(Dur::from_millis(333), crate::RttVarRule::Rfc9002), round: 0 }
        }

        /// One round: a packet is sent, then one ACK per entry acknowledges packets of this
        /// round, each with that RTT sample in ms (`None`: the ACK produced no sample).
        /// Returns each ACK's step.
        fn round(&mut self, samples: &[Option<u64>]) -> Vec<SlowStartStep> {
            self.round += 1;
            let sent = Time(self.round * 1000 * MS);
            self.h.on_packet_sent(sent);
            let mut steps = Vec::new();
            for (i, s) in samples.iter().enumerate() {
                if let Some(ms) = s {
                    self.rtt.update(Dur(ms * MS), Dur::ZERO);
                }
                steps.push(self.h.on_ack_event(Time(sent.0 + 500 * MS + i as u64), sent, &self.rtt, true, false, 0));
            }
            steps
        }

        fn flat(&mut self, ms: u64, acks: usize) -> Vec<SlowStartStep> {
            self.round(&vec![Some(ms); acks])
        }
    }

    const GROW_QUARTER: SlowStartStep = SlowStartStep { divisor: CSS_GROWTH_DIVISOR, exit: false };

    /// aioquic rule: one ACK with an RTT sample (ms) every `step_us` µs from 1 s on; the index
    /// of the ACK that ends slow start, if one does.
    fn aioquic_exit(samples: &[u64], step_us: u64) -> Option<usize> {
        let mut h = HyStart::with_rule(1200, HyStartRule::Aioquic);
        let mut rtt = RttEstimator::new(Dur::from_millis(333), crate::RttVarRule::Rfc9002);
        let mut exit = None;
        for (i, &ms) in samples.iter().enumerate() {
            rtt.update(Dur(ms * MS), Dur::ZERO);
            let now = Time(1_000 * MS + i as u64 * step_us * 1_000);
            let step = h.on_ack_event(now, Time(now.0 - ms * MS), &rtt, exit.is_none(), false, 0);
            if step.exit {
                assert_eq!(step.divisor, 1, "the exiting ACK has grown the window first");
                assert!(exit.is_none(), "slow start ends once");
                exit = Some(i);
            }
        }
        exit
    }

    /// The expected indices come from aioquic 1.7.2's own `QuicRttMonitor.is_rtt_increasing`
    /// fed the same samples at the same instants (`congestion/base.py`).
    #[test]
    fn aioquic_rule_matches_aioquics_rtt_monitor() {
        let flat_then = |rest: &[u64]| -> Vec<u64> { [20; 10].iter().chain(rest).copied().collect() };
        // A rise of a quarter of the 20 ms floor, held: the fifth increase in a row ends it.
        assert_eq!(aioquic_exit(&flat_then(&[26; 10]), 1500), Some(18));
        // 24 ms stays below 20 + 20/4: never.
        assert_eq!(aioquic_exit(&flat_then(&[24; 20]), 1500), None);
        // A window whose minimum is above the floor but by less than a quarter resets the count.
        let reset: Vec<u64> = flat_then(&[26, 26, 26, 26, 22]).into_iter().chain([26; 10]).collect();
        assert_eq!(aioquic_exit(&reset, 1500), Some(23));
        // One lower sample holds the window's minimum down for five samples.
        let dip: Vec<u64> = flat_then(&[26, 26, 26, 26, 18]).into_iter().chain([26; 10]).collect();
        assert_eq!(aioquic_exit(&dip, 1500), Some(23));
        // At most one sample per millisecond: ACKs 0.5 ms apart feed a third of them.
        assert_eq!(aioquic_exit(&flat_then(&[26; 10]), 500), None);
    }

    #[test]
    fn aioquic_rule_acts_only_in_the_first_slow_start() {
        let mut h = HyStart::with_rule(1200, HyStartRule::Aioquic);
        let mut rtt = RttEstimator::new(Dur::from_millis(333), crate::RttVarRule::Rfc9002);
        h.on_congestion_event();
        for i in 0..40u64 {
            rtt.update(Dur((20 + 10 * u64::from(i >= 10)) * MS), Dur::ZERO);
            let now = Time(1_000 * MS + i * 2 * MS);
            assert_eq!(h.on_ack_event(now, now, &rtt, true, false, 0), SlowStartStep::GROW, "after a loss ssthresh is set: no monitor");
        }
    }

    #[test]
    fn ngtcp2_counts_acks_without_rtt_sample_but_only_samples_set_the_minimum() {
        // A 50 ms round, then a round whose first seven ACKs carry no RTT sample (their
        // largest acknowledged packet was acknowledged before) and whose eighth measures 60 ms.
        let pattern: Vec<Option<u64>> = [None; 7].into_iter().chain([Some(60)]).collect();
        let mut rfc = Sender::new(HyStartRule::Rfc9406);
        rfc.flat(50, 16);
        rfc.round(&pattern);
        // RFC rule: each ACK is a sample of the estimator's latest RTT, so the stale 50 ms of
        // the previous round is this round's minimum: no rise.
        assert_eq!(rfc.h.phase(), HyStartPhase::SlowStart);
        let mut ng = Sender::new(HyStartRule::Ngtcp2);
        ng.flat(50, 16);
        let steps = ng.round(&pattern);
        // ngtcp2: eight ACKs counted (rtt_sample_count), minimum 60 ms from the one sample,
        // 60 ≥ 50 + 6.25: CSS on the eighth ACK.
        assert!(matches!(ng.h.phase(), HyStartPhase::Css { baseline, .. } if baseline == Dur::from_millis(60)));
        assert!(steps[..7].iter().all(|s| *s == SlowStartStep::GROW));
        // Seven ACKs are not enough, samples or not.
        let mut ng = Sender::new(HyStartRule::Ngtcp2);
        ng.flat(50, 16);
        ng.round(&pattern[1..]);
        assert_eq!(ng.h.phase(), HyStartPhase::SlowStart);
    }

    #[test]
    fn ngtcp2_grows_in_full_on_the_ack_that_enters_css() {
        let mut rfc = Sender::new(HyStartRule::Rfc9406);
        rfc.flat(50, 16);
        let steps = rfc.flat(60, 8);
        // RFC rule: the eighth ACK enters CSS and already grows by a quarter.
        assert_eq!(steps[7], GROW_QUARTER);
        let mut ng = Sender::new(HyStartRule::Ngtcp2);
        ng.flat(50, 16);
        let steps = ng.flat(60, 9);
        // ngtcp2 grows before it looks: the eighth ACK grows in full, the ninth by a quarter.
        assert_eq!((steps[7], steps[8]), (SlowStartStep::GROW, GROW_QUARTER));
        assert!(ng.h.in_css());
    }

    #[test]
    fn ngtcp2_resumes_slow_start_on_one_sample_below_the_baseline() {
        for rule in [HyStartRule::Rfc9406, HyStartRule::Ngtcp2] {
            let mut s = Sender::new(rule);
            s.flat(50, 16);
            s.flat(60, 16);
            assert!(s.h.in_css(), "{rule:?}");
            // The next round's first sample, 55 ms, is below the 60 ms baseline.
            let steps = s.round(&[Some(55), Some(61), Some(61)]);
            match rule {
                // ngtcp2 compares after every sample: back to slow start at once; the resuming
                // ACK still grew by a quarter, the next ones in full.
                HyStartRule::Ngtcp2 => {
                    assert_eq!(steps, vec![GROW_QUARTER, SlowStartStep::GROW, SlowStartStep::GROW]);
                    assert_eq!(s.h.phase(), HyStartPhase::SlowStart);
                }
                // RFC 9406 waits for N_RTT_SAMPLE samples of the round.
                HyStartRule::Rfc9406 => {
                    assert!(steps.iter().all(|st| *st == GROW_QUARTER));
                    assert!(s.h.in_css());
                    s.round(&[Some(55); 8]);
                    assert_eq!(s.h.phase(), HyStartPhase::SlowStart);
                }
                HyStartRule::Ngtcp2V012 | HyStartRule::Linux | HyStartRule::Aioquic => unreachable!(),
            }
        }
    }

    #[test]
    fn ngtcp2_leaves_css_four_round_boundaries_after_entering_and_grows_on_that_ack() {
        let mut ng = Sender::new(HyStartRule::Ngtcp2);
        ng.flat(50, 16);
        ng.flat(60, 16); // css_round = 1 from the eighth ACK on
        for _ in 0..3 {
            // css_round 2, 3, 4: no exit.
            assert!(ng.flat(60, 16).iter().all(|st| *st == GROW_QUARTER));
        }
        // The first ACK of the next round makes css_round 5: exit after a quarter growth.
        let steps = ng.flat(60, 1);
        assert_eq!(steps[0], SlowStartStep { divisor: CSS_GROWTH_DIVISOR, exit: true });
        assert_eq!(ng.h.phase(), HyStartPhase::Done);

        // The RFC rule needs a fifth boundary, and its exit ACK does not grow.
        let mut rfc = Sender::new(HyStartRule::Rfc9406);
        rfc.flat(50, 16);
        rfc.flat(60, 16);
        for _ in 0..4 {
            assert!(rfc.flat(60, 16).iter().all(|st| *st == GROW_QUARTER));
        }
        assert_eq!(rfc.flat(60, 1)[0], SlowStartStep { divisor: 0, exit: true });

        // At ngtcp2's fifth round start the resume test comes first: a sample below the
        // baseline there resumes slow start instead of leaving it.
        let mut ng = Sender::new(HyStartRule::Ngtcp2);
        ng.flat(50, 16);
        ng.flat(60, 16);
        for _ in 0..3 {
            ng.flat(60, 16);
        }
        assert_eq!(ng.round(&[Some(59)])[0], GROW_QUARTER);
        assert_eq!(ng.h.phase(), HyStartPhase::SlowStart);
    }

    #[test]
    fn rtt_alternating_between_two_legs_does_not_end_slow_start_under_either_rule() {
        // A split whose legs give 40 and 65 ms. Alternating ACK by ACK, every round's minimum
        // is 40 ms: never a rise.
        for rule in [HyStartRule::Rfc9406, HyStartRule::Ngtcp2] {
            let mut s = Sender::new(rule);
            for _ in 0..20 {
                let steps = s.round(&(0..16).map(|i| Some(if i % 2 == 0 { 40 } else { 65 })).collect::<Vec<_>>());
                assert!(steps.iter().all(|st| *st == SlowStartStep::GROW), "{rule:?}");
            }
        }
        // Alternating round by round (a small window fits in one batch of one leg): each 65 ms
        // round after a 40 ms one enters CSS (65 ≥ 40 + 5), and the next 40 ms round resumes
        // slow start (ngtcp2 at its first sample, the RFC after eight): CSS never lasts long
        // enough to end slow start.
        for rule in [HyStartRule::Rfc9406, HyStartRule::Ngtcp2] {
            let mut s = Sender::new(rule);
            let mut entered = 0;
            for r in 0..20 {
                let steps = s.flat(if r % 2 == 0 { 40 } else { 65 }, 16);
                assert!(steps.iter().all(|st| !st.exit), "{rule:?} round {r}");
                entered += usize::from(s.h.in_css());
            }
            assert_eq!(entered, 10, "{rule:?}");
        }
    }

    #[test]
    fn ngtcp2_keeps_its_state_through_congestion_and_counts_rounds_outside_slow_start() {
        let mut ng = Sender::new(HyStartRule::Ngtcp2);
        ng.flat(50, 16);
        ng.flat(60, 16);
        for _ in 0..4 {
            ng.flat(60, 16);
        }
        assert_eq!(ng.h.phase(), HyStartPhase::Done);
        ng.h.on_congestion_event();
        // Congestion avoidance: rounds still counted, nothing else.
        let rounds = ng.h.rounds();
        ng.h.on_packet_sent(Time(100_000 * MS));
        assert_eq!(ng.h.on_ack_event(Time(100_100 * MS), Time(100_000 * MS), &ng.rtt, false, false, 0), SlowStartStep::GROW);
        assert_eq!(ng.h.rounds(), rounds + 1);
        // A later slow start (after persistent congestion) ends at its first ACK: css_round
        // is still 5 or more.
        assert_eq!(ng.flat(60, 1)[0], SlowStartStep { divisor: CSS_GROWTH_DIVISOR, exit: true });

        // RFC 9406: after a congestion event slow start is plain.
        let mut rfc = Sender::new(HyStartRule::Rfc9406);
        rfc.flat(50, 16);
        rfc.flat(60, 16);
        rfc.h.on_congestion_event();
        assert!(rfc.flat(90, 16).iter().all(|st| *st == SlowStartStep::GROW));
    }

    #[test]
    fn ngtcp2_tracks_slow_start_through_application_limited_acks() {
        // Eight application-limited ACKs of 60 ms after a 50 ms round: ngtcp2 counts them
        // (they only skip the growth); the RFC rule does not see them.
        for (rule, css) in [(HyStartRule::Ngtcp2, true), (HyStartRule::Rfc9406, false)] {
            let mut s = Sender::new(rule);
            s.flat(50, 16);
            s.round += 1;
            let sent = Time(s.round * 1000 * MS);
            s.h.on_packet_sent(sent);
            for i in 0..8 {
                s.rtt.update(Dur::from_millis(60), Dur::ZERO);
                s.h.on_ack_event(Time(sent.0 + 500 * MS + i), sent, &s.rtt, true, true, 0);
            }
            assert_eq!(s.h.in_css(), css, "{rule:?}");
        }
    }

    /// ngtcp2 0.12's rounds: each opens with a packet sent at a new time; `n` ACKs follow, each
    /// with an RTT sample of `ms`, the first `n - 1` for packets sent before the round, the
    /// last for the round's first packet (it closes the round). `cwnd` is the window the
    /// controller would have after each ACK's growth; returns the answers of
    /// [`HyStart::exits_after_growth`].
    struct V012 {
        h: HyStart,
        rtt: RttEstimator,
        round: u64,
    }

    impl V012 {
        fn new() -> V012 {
            V012 { h: HyStart::with_rule(1200, HyStartRule::Ngtcp2V012), rtt: RttEstimator::new(Dur::from_millis(333), crate::RttVarRule::Rfc9002), round: 0 }
        }

        fn round(&mut self, ms: u64, n: u64, cwnd: u64) -> Vec<bool> {
            self.round += 1;
            let sent = Time(self.round * 1000 * MS);
            self.h.on_packet_sent(sent);
            (0..n)
                .map(|i| {
                    self.rtt.update(Dur(ms * MS), Dur::ZERO);
                    let acked = if i + 1 == n { sent } else { Time(sent.0 - 1) };
                    assert_eq!(self.h.on_ack_event(Time(sent.0 + ms * MS + i), acked, &self.rtt, true, false, 0), SlowStartStep::GROW);
                    self.h.exits_after_growth(cwnd)
                })
                .collect()
        }
    }

    #[test]
    fn ngtcp2_012_ends_slow_start_at_the_eighth_sample_of_a_round_whose_minimum_rose() {
        let mut s = V012::new();
        let big = MIN_SSTHRESH_PACKETS * 1200;
        assert!(s.round(50, 8, big).iter().all(|e| !e));
        // 60 ms ≥ 50 + clamp(50/8, 4, 16) = 56.25 ms: no CSS, slow start ends at the eighth
        // sample, in the middle of the round.
        let exits = s.round(60, 9, big);
        assert_eq!(exits, vec![false, false, false, false, false, false, false, true, true]);
        assert_eq!(s.h.phase(), HyStartPhase::SlowStart);
        assert!(!s.h.in_css());
        // The same round with a window one byte short of 16 datagrams does not end it.
        let mut s = V012::new();
        s.round(50, 8, big);
        assert!(s.round(60, 9, big - 1).iter().all(|e| !e));
    }

    #[test]
    fn ngtcp2_012_needs_eight_samples_and_a_rise_of_the_threshold() {
        let big = 64 * 1200;
        // Seven samples of 90 ms after a 50 ms round: not enough.
        let mut s = V012::new();
        s.round(50, 8, big);
        assert!(s.round(90, 7, big).iter().all(|e| !e));
        // A rise below the threshold (55 < 56.25 ms), however many samples.
        let mut s = V012::new();
        s.round(50, 8, big);
        assert!(s.round(55, 20, big).iter().all(|e| !e));
        // No previous round: nothing to compare with.
        let mut s = V012::new();
        assert!(s.round(90, 20, big).iter().all(|e| !e));
    }

    #[test]
    fn ngtcp2_012_ignores_samples_while_no_round_is_open_and_keeps_acting_after_congestion() {
        let big = 64 * 1200;
        let mut s = V012::new();
        s.round(60, 8, big);
        s.round(60, 8, big);
        // The round closed; eight 40 ms samples arrive before the next packet is sent: they
        // are not the closed round's, whose minimum stays 60 ms, so a round of 62 ms
        // (< 60 + 7.5) does not end slow start (it would against 40 ms).
        for i in 0..8 {
            s.rtt.update(Dur::from_millis(40), Dur::ZERO);
            s.h.on_ack_event(Time(2_500 * MS + i), Time(2_000 * MS - 1), &s.rtt, true, false, 0);
        }
        assert!(s.round(62, 8, big).iter().all(|e| !e));
        // A congestion event does not end the rule (ngtcp2 0.12 has no such state).
        s.h.on_congestion_event();
        s.round(50, 8, big);
        assert!(s.round(70, 8, big)[7]);
    }

    /// Drives the Linux rule as an ACK-clocked sender: every ACK is followed by a packet sent
    /// at once. Times in microseconds, windows in segments of 1000 bytes.
    struct LinuxSender {
        h: HyStart,
        rtt: RttEstimator,
    }

    const US: u64 = 1_000;
    const SEG: u64 = 1000;

    impl LinuxSender {
        fn new() -> LinuxSender {
            let mut s = LinuxSender { h: HyStart::with_rule(SEG, HyStartRule::Linux), rtt: RttEstimator::new(Dur::from_millis(333), crate::RttVarRule::Rfc9002) };
            s.h.on_packet_sent(Time::ZERO);
            s
        }

        /// An ACK at `now` of packets sent up to `acked_sent`, with an RTT sample of
        /// `sample` µs (none: `None`), the window `cwnd` segments.
        fn ack(&mut self, now: u64, acked_sent: u64, sample: Option<u64>, cwnd: u64) -> SlowStartStep {
            if let Some(us) = sample {
                self.rtt.update(Dur(us * US), Dur::ZERO);
            }
            let step = self.h.on_ack_event(Time(now * US), Time(acked_sent * US), &self.rtt, true, false, cwnd * SEG);
            self.h.on_packet_sent(Time(now * US));
            step
        }

        /// A round of `n` ACKs `gap` µs apart from `start`, the first acknowledging a packet
        /// sent at `first_sent` (which ends the previous round), the others older ones; each
        /// with an RTT sample of `rtt` µs.
        fn round(&mut self, start: u64, gap: u64, n: u64, first_sent: u64, rtt: u64, cwnd: u64) -> Vec<SlowStartStep> {
            (0..n).map(|i| self.ack(start + i * gap, if i == 0 { first_sent } else { first_sent.saturating_sub(1) }, Some(rtt), cwnd)).collect()
        }
    }

    const EXIT: SlowStartStep = SlowStartStep { divisor: 0, exit: true };

    /// The index of the first exit in `steps`, checking that every other step grows in full.
    fn exit_at(steps: &[SlowStartStep]) -> Option<usize> {
        let at = steps.iter().position(|s| *s == EXIT);
        assert!(steps[..at.unwrap_or(steps.len())].iter().all(|s| *s == SlowStartStep::GROW), "{steps:?}");
        at
    }

    /// A first round of nine 100 ms samples, 10 ms apart (no ACK train): delay_min = 100 ms,
    /// so the delay threshold is 100 + clamp(100/8, 4, 16) = 112.5 ms and the ACK train's
    /// (100 + 1) / 2 = 50.5 ms.
    fn after_a_100_ms_round() -> LinuxSender {
        let mut s = LinuxSender::new();
        assert_eq!(exit_at(&s.round(100_000, 10_000, 9, 0, 100_000, 20)), None);
        s
    }

    #[test]
    fn linux_delay_test_exits_at_the_ninth_sample_of_a_round_above_min_plus_threshold() {
        // 113 ms > 112.5 ms: the first eight samples of round two are only counted, the ninth
        // ends slow start at once (no growth on that ACK, no CSS).
        let mut s = after_a_100_ms_round();
        assert_eq!(exit_at(&s.round(300_000, 10_000, 12, 100_000, 113_000, 20)), Some(8));
        assert_eq!(s.h.phase(), HyStartPhase::Done);
        assert!(!s.h.in_css());
        // Done: later ACKs in slow start (a window restored by an undo) grow in full.
        assert_eq!(exit_at(&s.round(500_000, 10_000, 12, 300_000, 200_000, 40)), None);
        // Exactly at the threshold is not above it; nor is 112 ms.
        for rtt in [112_500, 112_000] {
            let mut s = after_a_100_ms_round();
            assert_eq!(exit_at(&s.round(300_000, 10_000, 30, 100_000, rtt, 20)), None, "{rtt} µs");
        }
    }

    #[test]
    fn linux_delay_test_compares_with_the_connection_minimum_not_the_last_round() {
        // Rounds of 100, 110 and 120 ms: each round is within 12.5 ms of the one before (the
        // RFC 9406 comparison would not fire), but 120 ms is above 100 + 12.5 ms.
        let mut s = after_a_100_ms_round();
        assert_eq!(exit_at(&s.round(300_000, 10_000, 9, 100_000, 110_000, 20)), None);
        assert_eq!(exit_at(&s.round(500_000, 10_000, 9, 300_000, 120_000, 20)), Some(8));
        // The same under RFC 9406: no CSS (each rise is below the threshold).
        let mut h = HyStart::new(SEG);
        let phases: Vec<_> = [100u64, 110, 120].iter().enumerate().map(|(r, ms)| {
            let send = Time(r as u64 * 1000 * MS);
            h.on_packet_sent(send);
            for i in 0..9 {
                h.on_ack(Time(send.0 + ms * MS + i), send, Dur(ms * MS), 0);
            }
            h.phase()
        }).collect();
        assert!(phases.iter().all(|p| *p == HyStartPhase::SlowStart), "{phases:?}");
    }

    #[test]
    fn linux_tests_only_windows_of_sixteen_segments() {
        // Round two at 200 ms: with 15 segments nothing is counted; from the sixth ACK the
        // window is 16, and the ninth sample counted from there exits (ACK 5 + 8).
        let mut s = after_a_100_ms_round();
        let steps: Vec<_> = (0..20u64).map(|i| s.ack(300_000 + i * 10_000, if i == 0 { 100_000 } else { 99_999 }, Some(200_000), if i < 5 { 15 } else { 16 })).collect();
        assert_eq!(exit_at(&steps), Some(13));
    }

    /// Linux resets a round before it tests the window (`hystart_update`, since "tcp_cubic:
    /// fix incorrect HyStart round start detection", 6.14): a round that began while the
    /// window was below 16 segments is the one whose samples count once it reaches 16.
    /// Replaying this rule on captures of the kernel's sender at the fidelity table's 5:1
    /// point (`bench/hystart_replay.py`) gives its `TCPHystartDelayCwnd` in seven runs of
    /// eight, the eighth within 3 segments; starting rounds only from 16 segments on (the rule
    /// before 6.14) gives it in none.
    #[test]
    fn linux_rounds_run_below_the_low_window() {
        let mut s = after_a_100_ms_round();
        // Round two begins at 300 ms with 10 segments: six 100 ms samples, not counted; then,
        // at 16 segments, 120 ms samples (above 112.5 ms), of packets sent before round two
        // began: counted in round two, the ninth exits. (Had round two not begun below 16
        // segments, round one would go on, its minimum 100 ms: no exit.)
        let steps: Vec<_> = (0..16u64)
            .map(|i| {
                let (rtt, cwnd) = if i < 6 { (100_000, 10) } else { (120_000, 16) };
                s.ack(300_000 + i * 10_000, if i == 0 { 100_000 } else { 99_999 }, Some(rtt), cwnd)
            })
            .collect();
        assert_eq!(exit_at(&steps), Some(14));
    }

    #[test]
    fn linux_ack_train_exits_once_it_lasts_half_the_minimum_rtt_plus_cushion() {
        // ACKs 1 ms apart from the round's first (at 300 ms), flat 100 ms samples: the train
        // lasts k ms at ACK k, and k > 50.5 first at k = 51.
        let mut s = after_a_100_ms_round();
        assert_eq!(exit_at(&s.round(300_000, 1_000, 80, 100_000, 100_000, 20)), Some(51));
        // 2 ms apart still extends it (at most hystart_ack_delta_us): 2k > 50.5 at k = 26.
        let mut s = after_a_100_ms_round();
        assert_eq!(exit_at(&s.round(300_000, 2_000, 80, 100_000, 100_000, 20)), Some(26));
        // 2.001 ms apart never does.
        let mut s = after_a_100_ms_round();
        assert_eq!(exit_at(&s.round(300_000, 2_001, 80, 100_000, 100_000, 20)), None);
    }

    #[test]
    fn linux_ack_train_broken_by_a_gap_waits_for_the_next_round() {
        // 1 ms apart, but a 3 ms gap after ACK 20: the train stops at 20 ms for the rest of
        // the round, although later ACKs are 1 ms apart again.
        let mut s = after_a_100_ms_round();
        let at = |i: u64| 300_000 + i * 1_000 + if i > 20 { 2_000 } else { 0 };
        let steps: Vec<_> = (0..80u64).map(|i| s.ack(at(i), if i == 0 { 100_000 } else { 99_999 }, Some(100_000), 20)).collect();
        assert_eq!(exit_at(&steps), None);
        // The next round's train starts afresh at its first ACK (at 500 ms) and exits at 51 ms.
        assert_eq!(exit_at(&s.round(500_000, 1_000, 80, 300_000, 100_000, 20)), Some(51));
    }

    #[test]
    fn linux_timeout_starts_hystart_afresh_and_forgets_the_minimum_a_congestion_event_does_not() {
        let mut s = after_a_100_ms_round();
        assert_eq!(exit_at(&s.round(300_000, 10_000, 9, 100_000, 113_000, 20)), Some(8));
        // A fast-recovery congestion event: HyStart stays done.
        s.h.on_congestion_event();
        assert_eq!(exit_at(&s.round(500_000, 10_000, 20, 300_000, 200_000, 20)), None);
        // A timeout: a new round at once, delay_min forgotten. Rounds of 200 then 210 ms do not
        // exit (210 < 200 + 16); against the old 100 ms they would have at once.
        s.h.on_timeout(Time(700_000 * US));
        assert_eq!(s.h.phase(), HyStartPhase::SlowStart);
        assert_eq!(exit_at(&s.round(900_000, 10_000, 9, 700_000, 200_000, 20)), None);
        assert_eq!(exit_at(&s.round(1_100_000, 10_000, 20, 900_000, 210_000, 20)), None);
        // 217 ms > 216 ms exits at the ninth sample.
        assert_eq!(exit_at(&s.round(1_400_000, 10_000, 20, 1_100_000, 217_000, 20)), Some(8));
    }

    #[test]
    fn linux_counts_only_acks_with_an_rtt_sample_and_keeps_the_minimum_outside_slow_start() {
        let mut s = after_a_100_ms_round();
        // Round two: eight ACKs with 113 ms samples, then ACKs without a sample, then one with.
        let mut steps: Vec<_> = (0..8u64).map(|i| s.ack(300_000 + i * 10_000, if i == 0 { 100_000 } else { 99_999 }, Some(113_000), 20)).collect();
        steps.extend((8..15u64).map(|i| s.ack(300_000 + i * 10_000, 99_999, None, 20)));
        steps.push(s.ack(450_000, 99_999, Some(113_000), 20));
        assert_eq!(exit_at(&steps), Some(15));
        // A 90 ms sample outside slow start (in a recovery period) lowers delay_min.
        let mut s = after_a_100_ms_round();
        s.rtt.update(Dur(90 * MS), Dur::ZERO);
        assert_eq!(s.h.on_ack_event(Time(250 * MS), Time(99 * MS), &s.rtt, false, false, 20 * SEG), SlowStartStep::GROW);
        // Threshold now 90 + 11.25 = 101.25 ms: 102 ms rounds exit.
        assert_eq!(exit_at(&s.round(300_000, 10_000, 9, 100_000, 102_000, 20)), Some(8));
    }
}
