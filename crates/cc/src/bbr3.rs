//! BBRv3 per draft-ietf-ccwg-bbr (the working group's editor's copy after -06, July 2026,
//! which specifies "version 3 of the BBR algorithm"), with Linux's google/bbr v3
//! `tcp_bbr.c` (`BBR_VERSION 3`) where the draft leaves a choice to the implementation.
//! BBR v1 ([`crate::bbr`], `cc = "bbr"`) is a separate controller and stays as it is.
//!
//! Reused from v1 by calling them: the delivery-rate samples ([`crate::delivery`], which
//! carry `RS.tx_in_flight`, `RS.lost` and the ACK's newly lost bytes), the windowed max
//! filter ([`MaxFilter`], for `max_bw` and `extra_acked`), the round counter
//! ([`crate::rounds`]), the BDP and hash helpers; the transport's pacer ([`crate::pacer`])
//! paces at [`Controller::pacing_rate`].
//!
//! Following the draft:
//! * States Startup → Drain → ProbeBW (DOWN → CRUISE → REFILL → UP → DOWN …) and ProbeRTT.
//!   Gains: Startup pacing 2.77 / cwnd 2; Drain pacing **0.5** (Linux keeps v1's 0.347);
//!   DOWN **0.90** (Linux 0.91), CRUISE and REFILL 1.0, UP 1.25 with cwnd gain **2.25**;
//!   ProbeRTT pacing 1, cwnd 0.5·BDP. Pacing is `gain · bw · 0.99` (1 % margin), rising
//!   only until the pipe is full; `2.77 · initial window / srtt` before any bandwidth sample.
//! * Model: `max_bw` is the windowed maximum of delivery-rate samples over the current and
//!   the previous ProbeBW cycle (the cycle count advances one round after UP ends);
//!   `min_rtt` the lowest RTT of 10 s, refreshed through `probe_rtt_min_delay` (5 s);
//!   `bw = min(max_bw, bw_shortterm)`; `extra_acked` a max over 10 rounds (1 in Startup)
//!   of data acknowledged beyond `bw` × the interval (the draft's 10, Linux's 5).
//! * Bounds: `inflight_longterm` (Linux `inflight_hi`), `inflight_shortterm`
//!   (`inflight_lo`), `bw_shortterm` (`bw_lo`). A sample is "too high" when
//!   `RS.lost > 2 % × RS.tx_in_flight`; while the samples come from a probe (REFILL's round
//!   onwards) that sets `inflight_longterm = max(RS.tx_in_flight, 0.7 × target_inflight)`
//!   (not when app-limited) and leaves UP for DOWN. Outside probing, every loss round cuts
//!   `bw_shortterm = max(bw_latest, 0.7·bw_shortterm)` and `inflight_shortterm =
//!   max(inflight_latest, 0.7·inflight_shortterm)`; REFILL and the end of ProbeRTT reset them.
//!   In UP, `inflight_longterm` grows by 1, 2, 4 … segments per round while cwnd-limited by
//!   it; DOWN leaves for CRUISE at in-flight ≤ min(BDP, 0.85·inflight_longterm); CRUISE
//!   (and ProbeRTT) cap cwnd at `inflight_longterm − max(15 %, 1 SMSS)`; precautionary
//!   probing after a probe that went too high.
//! * Time to probe from DOWN or CRUISE: `bw_probe_wait` = 2 s + U(0, 1 s) since the cycle
//!   began, or `rounds_since_probe_up ≥ min(target_inflight in packets, 63)` with the count
//!   starting at 0 or 1 (the Reno-coexistence bound, 62–63 rounds at most). The random
//!   draws come from a SplitMix64 hash of the decision time and a per-flow draw counter (as
//!   v1 draws its ProbeBW start phase), so runs are reproducible.
//! * Startup exits on a bandwidth plateau (3 non-app-limited rounds without 25 % growth of
//!   the delivery rate) or on loss: at the end of a loss round while in recovery for at
//!   least one round, with ≥ 6 loss events (ACKs that newly declared losses, Linux's
//!   count) in the round and the sample too high; then `inflight_longterm =
//!   max(BDP, inflight_latest)`. Drain ends at in-flight ≤ BDP or after 3 rounds.
//! * ProbeRTT when no RTT sample below `probe_rtt_min_delay` for 5 s: cwnd ≤ max(0.5·BDP,
//!   4 SMSS), held 200 ms and one round once in-flight is that low (samples of packets sent
//!   then count as app-limited), then ProbeBW (DOWN, at once CRUISE) or Startup.
//! * cwnd: `max_inflight = max(cwnd_gain·BDP + extra_acked, 3 SMSS, 4 SMSS)` (+2 SMSS in
//!   UP; Linux's quantization budget with a one-segment send quantum); after the pipe is
//!   full `cwnd = min(cwnd + acked, max_inflight)`, before it `cwnd += acked` while below
//!   (or while less than the initial window was delivered); floor 4 SMSS; then the state's
//!   volume caps. No packet conservation in recovery (the draft's response is the model
//!   update): entering recovery saves cwnd, leaving it restores at least that; persistent
//!   congestion sets the loss window. A spurious recovery restores cwnd and the bounds and
//!   returns to Startup or REFILL when the loss had ended them.
//!
//! Following Linux where the draft leaves it open:
//! * The too-high check runs on every ACK's rate sample (`bbr_adapt_upper_bounds`), not
//!   per lost packet: the transports report losses in bulk to the sampler. The draft's
//!   per-packet interpolation ([`inflight_at_loss`]) is applied to the newest acknowledged
//!   packet, taken as one SMSS.
//! * Loss events for the Startup exit are ACKs that newly declared losses
//!   (`loss_events_in_round`), not discontiguous SACK ranges.
//!
//! ECN: the draft specifies no particular response; a flow sending ECT MUST treat CE as
//! congestion, so a CE signal counts as a loss in the round (the short-term bounds' β cut
//! outside probing). Linux's low-RTT (≤ 5 ms) DCTCP-style response (`ecn_alpha`, the 50 %
//! CE threshold, the ECN Startup exit) and any L4S response are not modelled.
//!
//! Not modelled: restart from idle, the offload budget beyond one segment, TCP without SACK
//! (where any loss in recovery is "too high").

use crate::bbr::{bdp_bytes, splitmix64, MaxFilter};
use crate::rounds::RoundCounter;
use crate::{AckEvent, CcConfig, CcKind, CcState, Controller, LossEvent, RateSample, RttEstimator};
use multiconn_core::{Dur, Rate, Time};

/// Startup's pacing gain, 4·ln 2 rounded as the draft gives it.
pub const STARTUP_PACING_GAIN: f64 = 2.77;
/// The cwnd gain of every state but ProbeBW_UP and ProbeRTT.
pub const DEFAULT_CWND_GAIN: f64 = 2.0;
/// Drain's pacing gain (the draft's; Linux v3 keeps 1/2.885).
pub const DRAIN_PACING_GAIN: f64 = 0.5;
/// ProbeBW_DOWN's pacing gain (the draft's; Linux 0.91).
pub const PROBE_DOWN_PACING_GAIN: f64 = 0.9;
/// ProbeBW_UP's pacing gain.
pub const PROBE_UP_PACING_GAIN: f64 = 1.25;
/// ProbeBW_UP's cwnd gain.
pub const PROBE_UP_CWND_GAIN: f64 = 2.25;
/// ProbeRTT's cwnd gain.
pub const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// Pacing at 1 % below the bandwidth.
pub const PACING_MARGIN: f64 = 0.01;
/// The loss rate per round a probe tolerates (`BBRLossThresh`).
pub const LOSS_THRESH: f64 = 0.02;
/// Multiplicative decrease of the bounds (`BBRBeta`).
pub const BETA: f64 = 0.7;
/// Share of `inflight_longterm` left free in CRUISE (`BBRHeadroom`).
pub const HEADROOM: f64 = 0.15;
/// cwnd floor in segments (`BBRMinPipeCwnd`).
pub const MIN_PIPE_CWND_SEGMENTS: u64 = 4;
/// Full-bandwidth detection: 25 % growth, 3 rounds.
pub const FULL_BW_THRESH: f64 = 1.25;
/// Rounds without growth that fill the pipe.
pub const FULL_BW_COUNT: u32 = 3;
/// Loss events in a round that can end Startup (`BBRStartupFullLossCnt`).
pub const STARTUP_FULL_LOSS_COUNT: u32 = 6;
/// `min_rtt`'s window.
pub const MIN_RTT_FILTER_LEN: Dur = Dur::from_secs(10);
/// How long `probe_rtt_min_delay` stands before ProbeRTT.
pub const PROBE_RTT_INTERVAL: Dur = Dur::from_secs(5);
/// Least time ProbeRTT holds its window (and at least one round).
pub const PROBE_RTT_DURATION: Dur = Dur::from_millis(200);
/// Rounds of the `extra_acked` filter after Startup (the draft's; Linux 5).
pub const EXTRA_ACKED_FILTER_ROUNDS: u64 = 10;
/// The Reno-coexistence bound on rounds between probes.
pub const BW_PROBE_MAX_ROUNDS: u64 = 63;
/// `bw_probe_wait` = 2 s + U(0, 1 s).
pub const BW_PROBE_BASE: Dur = Dur::from_secs(2);
/// The random part of `bw_probe_wait`.
pub const BW_PROBE_RAND: Dur = Dur::from_secs(1);
/// Segments of the quantization budget (a send quantum of one segment, three in flight).
const QUANTUM_SEGMENTS: u64 = 3;
/// The `max_bw` filter's window in ProbeBW cycles beyond the current one (2 slots).
const MAX_BW_FILTER_CYCLES: u64 = 1;
/// "Infinity" of the bounds.
const INF: u64 = u64::MAX;

/// BBRv3's state (the four ProbeBW phases apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bbr3Mode {
    /// Exponential search, pacing gain 2.77.
    Startup,
    /// Pacing gain 0.5 until in-flight ≤ BDP.
    Drain,
    /// ProbeBW_DOWN: pacing gain 0.9, draining the probe's queue.
    ProbeBwDown,
    /// ProbeBW_CRUISE: pacing gain 1, leaving headroom below `inflight_longterm`.
    ProbeBwCruise,
    /// ProbeBW_REFILL: pacing gain 1 for one round, short-term bounds reset.
    ProbeBwRefill,
    /// ProbeBW_UP: pacing gain 1.25, cwnd gain 2.25.
    ProbeBwUp,
    /// ProbeRTT: cwnd 0.5·BDP for 200 ms and a round.
    ProbeRtt,
}

impl Bbr3Mode {
    /// The name used in time series and docs (`startup`, `probe_bw_down`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Bbr3Mode::Startup => "startup",
            Bbr3Mode::Drain => "drain",
            Bbr3Mode::ProbeBwDown => "probe_bw_down",
            Bbr3Mode::ProbeBwCruise => "probe_bw_cruise",
            Bbr3Mode::ProbeBwRefill => "probe_bw_refill",
            Bbr3Mode::ProbeBwUp => "probe_bw_up",
            Bbr3Mode::ProbeRtt => "probe_rtt",
        }
    }

    /// One of the four ProbeBW phases.
    pub fn is_probe_bw(self) -> bool {
        matches!(self, Bbr3Mode::ProbeBwDown | Bbr3Mode::ProbeBwCruise | Bbr3Mode::ProbeBwRefill | Bbr3Mode::ProbeBwUp)
    }

    /// Accelerating to probe for bandwidth (`IsProbingBW`): Startup, REFILL, UP.
    pub fn is_probing(self) -> bool {
        matches!(self, Bbr3Mode::Startup | Bbr3Mode::ProbeBwRefill | Bbr3Mode::ProbeBwUp)
    }

    /// The state's pacing and cwnd gains (draft §5.6.1).
    pub fn gains(self) -> (f64, f64) {
        match self {
            Bbr3Mode::Startup => (STARTUP_PACING_GAIN, DEFAULT_CWND_GAIN),
            Bbr3Mode::Drain => (DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN),
            Bbr3Mode::ProbeBwDown => (PROBE_DOWN_PACING_GAIN, DEFAULT_CWND_GAIN),
            Bbr3Mode::ProbeBwCruise | Bbr3Mode::ProbeBwRefill => (1.0, DEFAULT_CWND_GAIN),
            Bbr3Mode::ProbeBwUp => (PROBE_UP_PACING_GAIN, PROBE_UP_CWND_GAIN),
            Bbr3Mode::ProbeRtt => (1.0, PROBE_RTT_CWND_GAIN),
        }
    }
}

/// What the ACKs mean with respect to a bandwidth probe (`BBR.ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The draft's `InflightAtLoss`: the in-flight volume at which losses crossed the 2 %
/// threshold inside the last packet `P` of `size` bytes, given the sample's `tx_in_flight`
/// (P included) and `lost` (since P was sent, P's own loss included).
pub fn inflight_at_loss(tx_in_flight: u64, lost: u64, size: u64) -> f64 {
    let inflight_prev = tx_in_flight.saturating_sub(size) as f64;
    let lost_prev = lost as f64 - size as f64;
    let lost_prefix = (LOSS_THRESH * inflight_prev - lost_prev) / (1.0 - LOSS_THRESH);
    inflight_prev + lost_prefix
}

/// `RS.lost > 2 % · RS.tx_in_flight` (`IsInflightTooHigh`).
pub fn inflight_too_high(rs: &RateSample) -> bool {
    rs.lost as f64 > rs.tx_in_flight as f64 * LOSS_THRESH
}

/// BBRv3 (see the module header).
#[derive(Debug, Clone)]
pub struct Bbr3 {
    cfg: CcConfig,
    mode: Bbr3Mode,
    cwnd: u64,
    ssthresh: Option<u64>,
    /// bit/s.
    pacing_rate: u64,
    has_seen_rtt: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Bytes acknowledged so far (C.delivered).
    delivered: u64,
    rounds: RoundCounter,
    round_start: bool,
    loss_rounds: RoundCounter,
    loss_round_start: bool,
    rounds_since_probe_up: u64,
    max_bw: MaxFilter,
    cycle_count: u64,
    /// bit/s; INF: unset.
    bw_shortterm: u64,
    /// min(max_bw, bw_shortterm), bit/s.
    bw: u64,
    bw_latest: u64,
    inflight_latest: u64,
    inflight_longterm: u64,
    inflight_shortterm: u64,
    extra_acked: MaxFilter,
    extra_acked_interval_start: Time,
    extra_acked_delivered: u64,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_min_delay: Option<Dur>,
    probe_rtt_min_stamp: Time,
    probe_rtt_expired: bool,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    /// Send time of the last packet sent in ProbeRTT: samples up to it are app-limited.
    probe_rtt_last_sent: Option<Time>,
    prior_cwnd: u64,
    full_bw: u64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    drain_start_round: u64,
    loss_events_in_round: u32,
    is_loss_in_round: bool,
    ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    bw_probe_up_acked: u64,
    probe_up_acked_per_inc: u64,
    bw_probe_up_rounds: u32,
    bw_probe_wait: Dur,
    cycle_stamp: Time,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    undo_state: Option<Bbr3Mode>,
    undo_bw_shortterm: u64,
    undo_inflight_shortterm: u64,
    undo_inflight_longterm: u64,
    /// When the current recovery period began (RFC 9002 §7.3.2 rule) and at which round.
    recovery_start: Option<Time>,
    recovery_round: u64,
    /// The round the recovery period in place when the ACK arrived began at: the period
    /// ends on the ACK that also ends its first loss round.
    recovery_round_at_ack: Option<u64>,
    /// Random draws made so far (mixed into the hash).
    draws: u64,
    /// Times `inflight_longterm` was set by a probe that went too high.
    too_high_count: u64,
}

impl Bbr3 {
    /// Startup with the initial window, pacing at 2.77 · cwnd / 1 ms until an RTT sample.
    pub fn new(cfg: CcConfig) -> Bbr3 {
        let cwnd = cfg.initial_window;
        let mut b = Bbr3 {
            mode: Bbr3Mode::Startup,
            cwnd,
            ssthresh: None,
            pacing_rate: 0,
            has_seen_rtt: false,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: DEFAULT_CWND_GAIN,
            delivered: 0,
            rounds: RoundCounter::default(),
            round_start: false,
            loss_rounds: RoundCounter::default(),
            loss_round_start: false,
            rounds_since_probe_up: 0,
            max_bw: MaxFilter::default(),
            cycle_count: 0,
            bw_shortterm: INF,
            bw: 0,
            bw_latest: 0,
            inflight_latest: 0,
            inflight_longterm: INF,
            inflight_shortterm: INF,
            extra_acked: MaxFilter::default(),
            extra_acked_interval_start: Time::ZERO,
            extra_acked_delivered: 0,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: Time::ZERO,
            probe_rtt_expired: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_last_sent: None,
            prior_cwnd: 0,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            drain_start_round: 0,
            loss_events_in_round: 0,
            is_loss_in_round: false,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: INF,
            bw_probe_up_rounds: 0,
            bw_probe_wait: Dur::ZERO,
            cycle_stamp: Time::ZERO,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            undo_state: None,
            undo_bw_shortterm: INF,
            undo_inflight_shortterm: INF,
            undo_inflight_longterm: INF,
            recovery_start: None,
            recovery_round: 0,
            recovery_round_at_ack: None,
            draws: 0,
            too_high_count: 0,
            cfg,
        };
        b.init_pacing_rate(Dur::from_millis(1));
        b
    }

    /// Current state.
    pub fn mode(&self) -> Bbr3Mode {
        self.mode
    }
    /// `max_bw`, bit/s.
    pub fn max_bw(&self) -> Rate {
        Rate(self.max_bw.get())
    }
    /// `bw = min(max_bw, bw_shortterm)`, bit/s.
    pub fn bw(&self) -> Rate {
        Rate(self.bw)
    }
    /// `min_rtt` (`None` before the first sample).
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }
    /// The pipe was found full once.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    /// Current cwnd gain.
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    /// Rounds counted so far.
    pub fn rounds(&self) -> u64 {
        self.rounds.count()
    }
    /// `inflight_longterm` (Linux `inflight_hi`) in bytes; `None` while unset.
    pub fn inflight_longterm(&self) -> Option<u64> {
        (self.inflight_longterm != INF).then_some(self.inflight_longterm)
    }
    /// `inflight_shortterm` (Linux `inflight_lo`) in bytes; `None` while unset.
    pub fn inflight_shortterm(&self) -> Option<u64> {
        (self.inflight_shortterm != INF).then_some(self.inflight_shortterm)
    }
    /// `bw_shortterm` (Linux `bw_lo`), bit/s; `None` while unset.
    pub fn bw_shortterm(&self) -> Option<Rate> {
        (self.bw_shortterm != INF).then_some(Rate(self.bw_shortterm))
    }
    /// How many times a probe was judged too high (`inflight_longterm` set from it).
    pub fn too_high_count(&self) -> u64 {
        self.too_high_count
    }
    /// The current `bw_probe_wait`.
    pub fn bw_probe_wait(&self) -> Dur {
        self.bw_probe_wait
    }
    /// `BBR.bdp = bw · min_rtt` in bytes; `None` before `min_rtt`.
    pub fn bdp(&self) -> Option<u64> {
        self.min_rtt.map(|rtt| bdp_bytes(self.bw, rtt))
    }

    fn mds(&self) -> u64 {
        self.cfg.max_datagram_size.max(1)
    }

    fn min_pipe_cwnd(&self) -> u64 {
        MIN_PIPE_CWND_SEGMENTS * self.mds()
    }

    fn in_recovery(&self, sent: Time) -> bool {
        self.recovery_start.is_some_and(|start| sent <= start)
    }

    /// A deterministic draw in [0, n): SplitMix64 of the time and the draw count.
    fn draw(&mut self, now: Time, n: u64) -> u64 {
        self.draws += 1;
        splitmix64(now.0 ^ self.draws.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xb3b3_0000_0000_0003) % n.max(1)
    }

    /// `BDPMultiple(gain)`: gain · bw · min_rtt, or the initial window before `min_rtt`.
    fn bdp_multiple(&self, bw: u64, gain: f64) -> u64 {
        match self.min_rtt {
            None => self.cfg.initial_window,
            Some(rtt) => (bdp_bytes(bw, rtt) as f64 * gain) as u64,
        }
    }

    /// `QuantizationBudget`.
    fn quantization_budget(&self, cap: u64) -> u64 {
        let mut cap = cap.max(QUANTUM_SEGMENTS * self.mds()).max(self.min_pipe_cwnd());
        if self.mode == Bbr3Mode::ProbeBwUp {
            cap += 2 * self.mds();
        }
        cap
    }

    /// `Inflight(bw, gain)`.
    fn inflight(&self, bw: u64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// `BBR.max_inflight`.
    fn max_inflight(&self) -> u64 {
        let cap = self.bdp_multiple(self.bw, self.cwnd_gain).saturating_add(self.extra_acked.get());
        self.quantization_budget(cap)
    }

    /// `TargetInflight`: min(BDP, cwnd).
    fn target_inflight(&self) -> u64 {
        self.bdp().map_or(self.cwnd, |bdp| bdp.min(self.cwnd))
    }

    /// `InflightWithHeadroom`.
    fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_longterm == INF {
            return INF;
        }
        let headroom = ((HEADROOM * self.inflight_longterm as f64) as u64).max(self.mds());
        self.inflight_longterm.saturating_sub(headroom).max(self.min_pipe_cwnd())
    }

    fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN).max(self.min_pipe_cwnd())
    }

    fn set_mode(&mut self, mode: Bbr3Mode) {
        self.mode = mode;
        (self.pacing_gain, self.cwnd_gain) = mode.gains();
    }

    fn init_pacing_rate(&mut self, rtt: Dur) {
        let bw = self.cfg.initial_window as f64 * 8e9 / rtt.0.max(1) as f64;
        self.pacing_rate = (STARTUP_PACING_GAIN * bw) as u64;
    }

    fn save_cwnd(&mut self) {
        self.prior_cwnd = if self.recovery_start.is_none() && self.mode != Bbr3Mode::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF;
        self.inflight_shortterm = INF;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    fn save_state_upon_loss(&mut self) {
        self.save_cwnd();
        self.undo_state = None;
        self.undo_bw_shortterm = self.bw_shortterm;
        self.undo_inflight_shortterm = self.inflight_shortterm;
        self.undo_inflight_longterm = self.inflight_longterm;
    }

    /// `NoteLoss`: the first congestion signal of a round starts a loss round.
    fn note_loss(&mut self) {
        if !self.is_loss_in_round {
            self.loss_rounds.restart();
            self.save_state_upon_loss();
        }
        self.is_loss_in_round = true;
    }

    fn enter_startup(&mut self) {
        self.set_mode(Bbr3Mode::Startup);
    }

    fn enter_drain(&mut self) {
        self.set_mode(Bbr3Mode::Drain);
        self.drain_start_round = self.rounds.count();
        self.ssthresh = Some(self.inflight(self.bw, 1.0));
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.start_probe_down(now);
    }

    fn pick_probe_wait(&mut self, now: Time) {
        self.rounds_since_probe_up = self.draw(now, 2);
        let r = self.draw(now, BW_PROBE_RAND.0 + 1);
        self.bw_probe_wait = BW_PROBE_BASE + Dur(r);
    }

    fn start_probe_down(&mut self, now: Time) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = INF;
        self.pick_probe_wait(now);
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.rounds.restart();
        self.set_mode(Bbr3Mode::ProbeBwDown);
    }

    fn start_probe_cruise(&mut self) {
        self.set_mode(Bbr3Mode::ProbeBwCruise);
    }

    fn start_probe_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.rounds.restart();
        self.set_mode(Bbr3Mode::ProbeBwRefill);
    }

    fn start_probe_up(&mut self, rs: &RateSample) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.rounds.restart();
        self.reset_full_bw();
        self.full_bw = rs.delivery_rate.bps();
        self.set_mode(Bbr3Mode::ProbeBwUp);
        self.raise_inflight_longterm_slope();
    }

    fn raise_inflight_longterm_slope(&mut self) {
        let growth = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_acked_per_inc = (self.cwnd / growth).max(self.mds());
    }

    fn probe_inflight_longterm_upward(&mut self, acked: u64, cwnd_limited: bool) {
        if !cwnd_limited || self.cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked += acked;
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = self.bw_probe_up_acked / self.probe_up_acked_per_inc;
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm = self.inflight_longterm.saturating_add(delta * self.mds());
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    fn handle_inflight_too_high(&mut self, now: Time, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false;
        if !rs.is_app_limited {
            let at_loss = inflight_at_loss(rs.tx_in_flight, rs.lost, self.mds()).max(0.0) as u64;
            let floor = (self.target_inflight() as f64 * BETA) as u64;
            self.inflight_longterm = at_loss.min(rs.tx_in_flight).max(floor);
            self.too_high_count += 1;
        }
        if self.mode == Bbr3Mode::ProbeBwUp {
            self.undo_state = Some(Bbr3Mode::ProbeBwUp);
            self.start_probe_down(now);
        }
    }

    /// `AdaptLongTermModel` (Linux `bbr_adapt_upper_bounds`): `true` if it decided a state
    /// transition.
    fn adapt_long_term_model(&mut self, now: Time, rs: &RateSample, acked: u64, cwnd_limited: bool) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.mode.is_probe_bw() && !rs.is_app_limited {
                self.cycle_count += 1;
            }
            if self.mode.is_probe_bw() && self.prev_probe_precautionary && !self.prev_probe_too_high {
                self.start_probe_refill();
                return true;
            }
        }
        if inflight_too_high(rs) {
            if self.is_bw_probe_sample {
                let was = self.mode;
                self.handle_inflight_too_high(now, rs);
                return self.mode != was;
            }
            return false;
        }
        if self.inflight_longterm == INF {
            return false;
        }
        if rs.tx_in_flight > self.inflight_longterm {
            self.inflight_longterm = rs.tx_in_flight;
        }
        if self.mode == Bbr3Mode::ProbeBwUp {
            self.probe_inflight_longterm_upward(acked, cwnd_limited);
        }
        false
    }

    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mds();
        self.rounds_since_probe_up >= reno_rounds.min(BW_PROBE_MAX_ROUNDS)
    }

    fn is_time_to_probe_bw(&mut self, now: Time) -> bool {
        if now > self.cycle_stamp + self.bw_probe_wait || self.is_reno_coexistence_probe_time() {
            self.start_probe_refill();
            return true;
        }
        false
    }

    fn is_time_to_cruise(&self, inflight: u64) -> bool {
        inflight <= self.inflight_with_headroom() && inflight <= self.inflight(self.max_bw.get(), 1.0)
    }

    fn is_time_to_go_down(&mut self, rs: &RateSample, inflight: u64, cwnd_limited: bool) -> bool {
        if self.prev_probe_too_high && inflight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if cwnd_limited && self.cwnd >= self.inflight_longterm {
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate.bps();
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    fn update_probe_bw_cycle_phase(&mut self, now: Time, rs: &RateSample, ack: &AckEvent, cwnd_limited: bool) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_long_term_model(now, rs, ack.bytes_acked, cwnd_limited) {
            return;
        }
        let inflight = ack.bytes_in_flight;
        match self.mode {
            Bbr3Mode::ProbeBwDown => {
                if self.is_time_to_probe_bw(now) {
                    return;
                }
                if self.is_time_to_cruise(inflight) {
                    self.start_probe_cruise();
                }
            }
            Bbr3Mode::ProbeBwCruise => {
                self.is_time_to_probe_bw(now);
            }
            // After one round of REFILL, UP.
            Bbr3Mode::ProbeBwRefill if self.round_start => {
                self.is_bw_probe_sample = true;
                self.start_probe_up(rs);
            }
            Bbr3Mode::ProbeBwUp => {
                // (It may reset the full-bandwidth detector when inflight_longterm limits.)
                let go_down = self.is_time_to_go_down(rs, inflight, cwnd_limited);
                if go_down {
                    self.prev_probe_too_high = false;
                    self.start_probe_down(now);
                }
            }
            _ => {}
        }
    }

    fn sample_app_limited(&self, ack: &AckEvent) -> bool {
        ack.rate_sample.is_some_and(|rs| rs.is_app_limited) || self.probe_rtt_last_sent.is_some_and(|t| ack.largest_acked_sent <= t)
    }

    fn update_max_bw(&mut self, rs: &RateSample) {
        let rate = rs.delivery_rate.bps();
        if rate > 0 && (rate >= self.max_bw.get() || !rs.is_app_limited) {
            self.max_bw.update(MAX_BW_FILTER_CYCLES, self.cycle_count, rate);
        }
    }

    fn update_ack_aggregation(&mut self, now: Time, acked: u64) {
        let interval = now.since(self.extra_acked_interval_start);
        let mut expected = bdp_bytes(self.bw, interval);
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = now;
            expected = 0;
        }
        self.extra_acked_delivered += acked;
        let extra = (self.extra_acked_delivered - expected).min(self.cwnd);
        let win = if self.full_bw_reached { EXTRA_ACKED_FILTER_ROUNDS } else { 1 };
        self.extra_acked.update(win, self.rounds.count(), extra);
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || !self.round_start || rs.is_app_limited {
            return;
        }
        let rate = rs.delivery_rate.bps();
        if rate as f64 >= self.full_bw as f64 * FULL_BW_THRESH {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= FULL_BW_COUNT;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    fn check_startup_high_loss(&mut self, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.newly_lost > 0 && self.loss_events_in_round < 15 {
            self.loss_events_in_round += 1;
        }
        let recovery_round = self.recovery_round_at_ack.is_some_and(|r| self.rounds.count() > r);
        if self.loss_round_start && recovery_round && self.loss_events_in_round >= STARTUP_FULL_LOSS_COUNT && inflight_too_high(rs) {
            self.undo_state = Some(Bbr3Mode::Startup);
            self.full_bw_reached = true;
            let bdp = self.bdp().unwrap_or(0);
            self.inflight_longterm = bdp.max(self.inflight_latest);
            self.too_high_count += 1;
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    fn update_min_rtt(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        let sample = match ack.rate_sample {
            Some(rs) => Some(rs.rtt),
            None => rtt.has_sample().then(|| rtt.latest()),
        };
        if let Some(s) = sample.filter(|s| s.0 > 0) {
            if self.probe_rtt_min_delay.map_or(true, |m| s < m) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(s);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + MIN_RTT_FILTER_LEN;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.map_or(true, |m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
    }

    fn check_probe_rtt(&mut self, now: Time, ack: &AckEvent) {
        if self.mode != Bbr3Mode::ProbeRtt && self.probe_rtt_expired {
            self.save_cwnd();
            self.set_mode(Bbr3Mode::ProbeRtt);
            self.probe_rtt_done = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.rounds.restart();
        }
        if self.mode != Bbr3Mode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None if ack.bytes_in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done = Some(now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.rounds.restart();
            }
            None => {}
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.probe_rtt_min_stamp = now;
                    self.restore_cwnd();
                    self.probe_rtt_done = None;
                    self.exit_probe_rtt(now);
                }
            }
        }
    }

    fn exit_probe_rtt(&mut self, now: Time) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_down(now);
            self.start_probe_cruise();
        } else {
            self.enter_startup();
        }
    }

    fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.mode.is_probing() || !self.is_loss_in_round {
            return;
        }
        if self.bw_shortterm == INF {
            self.bw_shortterm = self.max_bw.get();
        }
        if self.inflight_shortterm == INF {
            self.inflight_shortterm = self.cwnd;
        }
        self.bw_shortterm = self.bw_latest.max((BETA * self.bw_shortterm as f64) as u64);
        self.inflight_shortterm = self.inflight_latest.max((BETA * self.inflight_shortterm as f64) as u64);
    }

    fn set_pacing_rate(&mut self) {
        if self.bw == 0 {
            return;
        }
        let rate = (self.pacing_gain * self.bw as f64 * (1.0 - PACING_MARGIN)) as u64;
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate.max(1);
        }
    }

    fn set_cwnd(&mut self, acked: u64) {
        let max_inflight = self.max_inflight();
        if acked > 0 {
            if self.full_bw_reached {
                self.cwnd = self.cwnd.saturating_add(acked).min(max_inflight);
            } else if self.cwnd < max_inflight || self.delivered < self.cfg.initial_window {
                self.cwnd = self.cwnd.saturating_add(acked);
            }
        }
        self.cwnd = self.cwnd.max(self.min_pipe_cwnd());
        if self.mode == Bbr3Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
        self.bound_cwnd_for_model();
    }

    fn bound_cwnd_for_model(&mut self) {
        let mut cap = INF;
        if self.mode.is_probe_bw() && self.mode != Bbr3Mode::ProbeBwCruise {
            cap = self.inflight_longterm;
        } else if matches!(self.mode, Bbr3Mode::ProbeRtt | Bbr3Mode::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_shortterm).max(self.min_pipe_cwnd());
        self.cwnd = self.cwnd.min(cap);
    }
}

impl Controller for Bbr3 {
    fn on_packet_sent(&mut self, now: Time, _bytes: u64, _bytes_in_flight: u64) {
        self.rounds.on_sent(now);
        self.loss_rounds.on_sent(now);
        if self.mode == Bbr3Mode::ProbeRtt {
            self.probe_rtt_last_sent = Some(now);
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        self.delivered = self.delivered.saturating_add(ack.bytes_acked);
        self.recovery_round_at_ack = self.recovery_start.map(|_| self.recovery_round);
        if self.recovery_start.is_some() && !self.in_recovery(ack.largest_acked_sent) {
            self.recovery_start = None;
            self.restore_cwnd();
        }
        if !self.has_seen_rtt && rtt.has_sample() {
            self.has_seen_rtt = true;
            self.init_pacing_rate(rtt.smoothed());
        }
        let app_limited = self.sample_app_limited(ack);
        let rs = match ack.rate_sample {
            Some(rs) => RateSample { is_app_limited: app_limited, ..rs },
            None => RateSample {
                delivery_rate: Rate(0),
                delivered: 0,
                interval: Dur::ZERO,
                is_app_limited: true,
                prior_delivered: 0,
                rtt: Dur::ZERO,
                tx_in_flight: 0,
                lost: 0,
                newly_lost: 0,
            },
        };
        let cwnd_limited = !ack.app_limited;
        if rs.newly_lost > 0 {
            self.note_loss();
        }
        // UpdateRound, UpdateLatestDeliverySignals.
        self.round_start = self.rounds.on_ack(ack.largest_acked_sent);
        if self.round_start {
            self.rounds_since_probe_up += 1;
        }
        self.loss_round_start = self.loss_rounds.on_ack(ack.largest_acked_sent);
        self.bw_latest = self.bw_latest.max(rs.delivery_rate.bps());
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        // UpdateCongestionSignals.
        self.update_max_bw(&rs);
        if self.loss_round_start {
            self.adapt_lower_bounds_from_congestion();
            self.is_loss_in_round = false;
        }
        self.update_ack_aggregation(now, ack.bytes_acked);
        self.check_full_bw_reached(&rs);
        // CheckStartupDone.
        self.check_startup_high_loss(&rs);
        if self.mode == Bbr3Mode::Startup && self.full_bw_reached {
            self.enter_drain();
        }
        // CheckDrainDone.
        if self.mode == Bbr3Mode::Drain && (ack.bytes_in_flight <= self.inflight(self.bw, 1.0) || self.rounds.count() > self.drain_start_round + 3) {
            self.enter_probe_bw(now);
        }
        self.update_probe_bw_cycle_phase(now, &rs, ack, cwnd_limited);
        self.update_min_rtt(now, ack, rtt);
        self.check_probe_rtt(now, ack);
        // AdvanceLatestDeliverySignals.
        if self.loss_round_start {
            self.bw_latest = rs.delivery_rate.bps();
            self.inflight_latest = rs.delivered;
        }
        // BoundBWForModel.
        self.bw = self.max_bw.get().min(self.bw_shortterm);
        self.set_pacing_rate();
        self.set_cwnd(ack.bytes_acked);
    }

    fn on_congestion_event(&mut self, now: Time, loss: &LossEvent, _rtt: &RttEstimator) {
        if !self.in_recovery(loss.largest_lost_sent) {
            // OnEnterFastRecovery.
            self.save_cwnd();
            self.save_state_upon_loss();
            self.recovery_start = Some(now);
            self.recovery_round = self.rounds.count();
        }
        self.note_loss();
    }

    fn on_ecn_congestion_event(&mut self, _now: Time, _loss: &LossEvent, _rtt: &RttEstimator) {
        self.note_loss();
    }

    fn on_persistent_congestion(&mut self, now: Time) {
        // OnEnterRTO.
        self.save_cwnd();
        self.note_loss();
        self.recovery_start = Some(now);
        self.recovery_round = self.rounds.count();
        self.cwnd = self.cfg.loss_window;
        self.rounds.restart();
    }

    fn on_spurious_congestion(&mut self, _now: Time) {
        // HandleSpuriousLossDetection.
        self.recovery_start = None;
        self.restore_cwnd();
        self.is_loss_in_round = false;
        self.reset_full_bw();
        self.bw_shortterm = self.bw_shortterm.max(self.undo_bw_shortterm);
        self.inflight_shortterm = self.inflight_shortterm.max(self.undo_inflight_shortterm);
        self.inflight_longterm = self.inflight_longterm.max(self.undo_inflight_longterm);
        match self.undo_state {
            Some(Bbr3Mode::Startup) if self.mode != Bbr3Mode::Startup => {
                self.full_bw_reached = false;
                if self.mode != Bbr3Mode::ProbeRtt {
                    self.enter_startup();
                }
            }
            Some(Bbr3Mode::ProbeBwUp) if self.mode != Bbr3Mode::ProbeBwUp && self.mode != Bbr3Mode::ProbeRtt => self.start_probe_refill(),
            _ => {}
        }
        self.undo_state = None;
        if self.mode == Bbr3Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> Option<u64> {
        self.ssthresh
    }
    fn state(&self) -> CcState {
        match self.mode {
            Bbr3Mode::Startup => CcState::Startup,
            Bbr3Mode::Drain => CcState::Drain,
            Bbr3Mode::ProbeRtt => CcState::ProbeRtt,
            _ => CcState::ProbeBw,
        }
    }
    fn pacing_rate(&self) -> Option<Rate> {
        (self.pacing_rate > 0).then_some(Rate(self.pacing_rate))
    }
    fn needs_pacing(&self) -> bool {
        true
    }
    fn sets_recovery_window(&self) -> bool {
        true
    }
    fn kind(&self) -> CcKind {
        CcKind::Bbr3
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RttVarRule;

    const MDS: u64 = 1000;
    const MS: u64 = 1_000_000;

    fn cfg() -> CcConfig {
        CcConfig::tcp_default(CcKind::Bbr3, MDS)
    }

    fn rtt_of(ms: u64) -> RttEstimator {
        let mut r = RttEstimator::new(Dur::from_millis(ms), RttVarRule::Rfc9002);
        r.update(Dur::from_millis(ms), Dur::ZERO);
        r
    }

    /// A model of 10 Mbit/s and 40 ms (BDP 50 000 bytes), the pipe full.
    fn modelled() -> Bbr3 {
        let mut b = Bbr3::new(cfg());
        b.max_bw.reset(0, 10_000_000);
        b.bw = 10_000_000;
        b.min_rtt = Some(Dur::from_millis(40));
        b.probe_rtt_min_delay = Some(Dur::from_millis(40));
        b.full_bw_reached = true;
        b
    }

    fn sample(rate: u64, delivered: u64, tx_in_flight: u64, lost: u64, newly_lost: u64) -> RateSample {
        RateSample { delivery_rate: Rate(rate), delivered, interval: Dur::from_millis(40), is_app_limited: false, prior_delivered: 0, rtt: Dur::from_millis(40), tx_in_flight, lost, newly_lost }
    }

    fn ack(sent: Time, in_flight: u64, rs: RateSample) -> AckEvent {
        AckEvent { bytes_acked: MDS, largest_acked_sent: sent, prior_in_flight: in_flight + MDS, bytes_in_flight: in_flight, app_limited: false, rate_sample: Some(rs) }
    }

    /// The reference's §4.7 table: pacing rate (with the 1 % margin) and cwnd before the
    /// caps in every state, at 10 Mbit/s and 40 ms.
    #[test]
    fn gains_give_the_reference_pacing_rates_and_windows() {
        let table = [
            (Bbr3Mode::Startup, 27_423_000, 100_000),
            (Bbr3Mode::Drain, 4_950_000, 100_000),
            (Bbr3Mode::ProbeBwDown, 8_910_000, 100_000),
            (Bbr3Mode::ProbeBwCruise, 9_900_000, 100_000),
            (Bbr3Mode::ProbeBwRefill, 9_900_000, 100_000),
            (Bbr3Mode::ProbeBwUp, 12_375_000, 112_500),
            (Bbr3Mode::ProbeRtt, 9_900_000, 25_000),
        ];
        let mut b = modelled();
        assert_eq!(b.bdp(), Some(50_000));
        for (mode, pacing, cwnd) in table {
            b.set_mode(mode);
            b.set_pacing_rate();
            assert!(b.pacing_rate.abs_diff(pacing) <= 1, "{mode:?}: {}", b.pacing_rate);
            assert_eq!(b.bdp_multiple(b.bw, b.cwnd_gain), cwnd, "{mode:?}");
        }
        // ProbeRTT's window: half the BDP, at least 4 segments.
        assert_eq!(b.probe_rtt_cwnd(), 25_000);
        // CRUISE and ProbeRTT leave 15 % of inflight_longterm free; DOWN, REFILL and UP
        // are capped at it; Startup and Drain by neither.
        b.inflight_longterm = 100_000;
        for (mode, cap) in [(Bbr3Mode::ProbeBwCruise, 85_000), (Bbr3Mode::ProbeBwDown, 100_000), (Bbr3Mode::ProbeBwUp, 100_000), (Bbr3Mode::Startup, 150_000)] {
            b.set_mode(mode);
            b.cwnd = 150_000;
            b.bound_cwnd_for_model();
            assert_eq!(b.cwnd, cap, "{mode:?}");
        }
        // The headroom is at least one segment, and the floor 4 segments.
        b.inflight_longterm = 5 * MDS;
        assert_eq!(b.inflight_with_headroom(), 4 * MDS);
        b.inflight_longterm = 2 * MDS;
        assert_eq!(b.inflight_with_headroom(), 4 * MDS);
    }

    #[test]
    fn initial_pacing_is_startup_gain_times_initial_window_over_1_ms_then_srtt() {
        let mut b = Bbr3::new(cfg());
        // 10 000 bytes per 1 ms = 80 Mbit/s, × 2.77.
        assert!(b.pacing_rate.abs_diff(221_600_000) <= 1, "{}", b.pacing_rate);
        let a = AckEvent { bytes_acked: 0, largest_acked_sent: Time(0), prior_in_flight: 0, bytes_in_flight: 0, app_limited: false, rate_sample: None };
        b.on_ack(Time(100 * MS), &a, &rtt_of(100));
        assert!(b.pacing_rate.abs_diff(2_216_000) <= 1, "{}", b.pacing_rate);
    }

    /// The reference's interpolation vector: 100 packets in flight and 1 lost before P.
    #[test]
    fn inflight_at_loss_interpolates_inside_the_last_packet() {
        let x = inflight_at_loss(101 * MDS, 2 * MDS, MDS) / MDS as f64;
        assert!((x - 101.0204).abs() < 1e-3, "{x}");
        let rs = sample(0, 0, 100_000, 2_000, 0);
        assert!(!inflight_too_high(&rs));
        assert!(inflight_too_high(&RateSample { lost: 2_001, ..rs }));
    }

    /// In ProbeBW_UP, a round's sample with 1 % loss leaves inflight_longterm unset and UP
    /// going on; 3 % sets it to the in-flight volume at the loss and goes DOWN; when that
    /// volume is small, β = 0.7 of the target in flight is the floor.
    #[test]
    fn probe_up_backs_off_only_above_the_two_percent_loss_threshold() {
        let up = || {
            let mut b = modelled();
            b.cwnd = 112_500;
            b.set_mode(Bbr3Mode::ProbeBwUp);
            b.is_bw_probe_sample = true;
            b.ack_phase = AckPhase::ProbeFeedback;
            b.probe_rtt_min_stamp = Time(900 * MS);
            b
        };
        let rtt = rtt_of(40);
        let now = Time(1000 * MS);
        let mut b = up();
        b.on_packet_sent(Time(950 * MS), MDS, 100_000);
        b.on_ack(now, &ack(Time(900 * MS), 99_000, sample(10_000_000, 50_000, 100_000, 1_000, 1_000)), &rtt);
        assert_eq!((b.mode(), b.inflight_longterm(), b.too_high_count()), (Bbr3Mode::ProbeBwUp, None, 0));
        let mut b = up();
        b.on_ack(now, &ack(Time(900 * MS), 97_000, sample(10_000_000, 50_000, 100_000, 3_000, 3_000)), &rtt);
        assert_eq!(b.mode(), Bbr3Mode::ProbeBwDown);
        let at_loss = inflight_at_loss(100_000, 3_000, MDS) as u64;
        assert_eq!(b.inflight_longterm(), Some(at_loss));
        assert!((96_000..100_000).contains(&at_loss), "{at_loss}");
        assert!(b.window() <= at_loss);
        // A small flight when the loss shows: 0.7 × min(BDP, cwnd) = 35 000.
        let mut b = up();
        b.on_ack(now, &ack(Time(900 * MS), 19_000, sample(10_000_000, 20_000, 20_000, 1_000, 1_000)), &rtt);
        assert_eq!((b.mode(), b.inflight_longterm()), (Bbr3Mode::ProbeBwDown, Some(35_000)));
        // App-limited: DOWN, but no bound learnt from it.
        let mut b = up();
        let rs = RateSample { is_app_limited: true, ..sample(10_000_000, 20_000, 20_000, 1_000, 1_000) };
        b.on_ack(now, &ack(Time(900 * MS), 19_000, rs), &rtt);
        assert_eq!((b.mode(), b.inflight_longterm()), (Bbr3Mode::ProbeBwDown, None));
    }

    /// Outside probing, the end of a round with a loss cuts the short-term bounds to
    /// max(latest, 0.7 × bound); REFILL resets them.
    #[test]
    fn loss_round_in_cruise_cuts_short_term_bounds_by_beta() {
        let mut b = modelled();
        b.cwnd = 100_000;
        b.start_probe_down(Time(0));
        b.start_probe_cruise();
        b.probe_rtt_min_stamp = Time(900 * MS);
        let rtt = rtt_of(40);
        // An ACK that reports a loss starts a loss round; the samples are low (5 Mbit/s,
        // 10 kB delivered) so the β term decides.
        b.on_ack(Time(1000 * MS), &ack(Time(950 * MS), 60_000, sample(5_000_000, 10_000, 60_000, 1_000, 1_000)), &rtt);
        assert_eq!(b.bw_shortterm(), None);
        let w = b.window();
        b.on_packet_sent(Time(1001 * MS), MDS, 60_000);
        b.on_ack(Time(1041 * MS), &ack(Time(1001 * MS), 60_000, sample(5_000_000, 10_000, 60_000, 0, 0)), &rtt);
        // Initialised from max_bw and cwnd, then × 0.7.
        assert_eq!(b.bw_shortterm(), Some(Rate(7_000_000)));
        let lo = (0.7 * w as f64) as u64;
        assert_eq!(b.inflight_shortterm(), Some(lo));
        assert_eq!(b.bw(), Rate(7_000_000));
        assert!(b.window() <= lo);
        // A second lossy round: 0.7 again.
        b.on_ack(Time(1042 * MS), &ack(Time(1001 * MS), 60_000, sample(5_000_000, 10_000, 60_000, 1_000, 1_000)), &rtt);
        b.on_packet_sent(Time(1043 * MS), MDS, 60_000);
        b.on_ack(Time(1083 * MS), &ack(Time(1043 * MS), 60_000, sample(5_000_000, 10_000, 60_000, 0, 0)), &rtt);
        assert_eq!(b.inflight_shortterm(), Some((0.7 * lo as f64) as u64));
        assert_eq!(b.bw_shortterm(), Some(Rate(5_000_000)));
        // In UP (probing) the same loss round leaves them alone; REFILL resets them.
        b.start_probe_refill();
        assert_eq!((b.bw_shortterm(), b.inflight_shortterm()), (None, None));
    }

    #[test]
    fn startup_exits_on_loss_only_with_six_loss_events_above_the_threshold_in_recovery() {
        let run = |events: u64, lost_each: u64| {
            let mut b = Bbr3::new(cfg());
            b.min_rtt = Some(Dur::from_millis(40));
            b.probe_rtt_min_delay = Some(Dur::from_millis(40));
            b.max_bw.reset(0, 10_000_000);
            b.bw = 10_000_000;
            let rtt = rtt_of(40);
            b.on_packet_sent(Time(0), MDS, MDS);
            let loss = LossEvent { bytes_lost: MDS, largest_lost_sent: Time(0), bytes_in_flight: 50_000, prior_in_flight: 51_000 };
            b.on_congestion_event(Time(40 * MS), &loss, &rtt);
            b.on_packet_sent(Time(41 * MS), MDS, 50_000);
            // ACKs of packets sent before recovery began, each declaring losses; growing
            // samples (no plateau).
            let mut rate = 10_000_000;
            for e in 0..events {
                rate = rate * 11 / 10;
                b.on_ack(Time((42 + e) * MS), &ack(Time((1 + e) * MS), 50_000, sample(rate, 50_000, 60_000, lost_each * (e + 1), lost_each)), &rtt);
            }
            // The ACK of the first packet sent in recovery ends the loss round (90 kB still in
            // flight, above the BDP: Drain stays).
            b.on_ack(Time(81 * MS), &ack(Time(41 * MS), 90_000, sample(2 * rate, 60_000, 60_000, lost_each * events, 0)), &rtt);
            b
        };
        // Six ACKs each declaring 500 bytes lost: 3 000 of 60 000 is 5 %.
        let b = run(6, 500);
        assert_eq!(b.mode(), Bbr3Mode::Drain);
        assert!(b.full_bw_reached());
        // inflight_longterm = max(BDP, the most delivered in the round): here the BDP of the
        // rising samples (88 578 bytes at the previous ACK's 17.7 Mbit/s).
        assert_eq!(b.inflight_longterm(), Some(88_578));
        // Five events, or six below 2 % (6 × 150 = 900 of 60 000 = 1.5 %): no exit.
        assert_eq!(run(5, 500).mode(), Bbr3Mode::Startup);
        assert_eq!(run(6, 150).mode(), Bbr3Mode::Startup);
    }

    #[test]
    fn probe_wait_draws_are_in_2_to_3_s_and_reproducible() {
        let mut a = Bbr3::new(cfg());
        let mut b = Bbr3::new(cfg());
        let mut seen = Vec::new();
        for i in 0..200u64 {
            let t = Time(i * 37 * MS);
            a.pick_probe_wait(t);
            b.pick_probe_wait(t);
            assert_eq!((a.bw_probe_wait, a.rounds_since_probe_up), (b.bw_probe_wait, b.rounds_since_probe_up));
            assert!(a.bw_probe_wait >= BW_PROBE_BASE && a.bw_probe_wait <= BW_PROBE_BASE + BW_PROBE_RAND);
            assert!(a.rounds_since_probe_up <= 1);
            seen.push(a.bw_probe_wait.0);
        }
        // Spread over the second: both halves drawn, and both round offsets.
        let low = seen.iter().filter(|&&w| w < 2_500_000_000).count();
        assert!((60..140).contains(&low), "{low}");
    }

    #[test]
    fn spurious_loss_restores_the_bounds_and_the_probe() {
        let mut b = modelled();
        b.cwnd = 112_500;
        b.set_mode(Bbr3Mode::ProbeBwUp);
        b.is_bw_probe_sample = true;
        b.ack_phase = AckPhase::ProbeFeedback;
        b.probe_rtt_min_stamp = Time(900 * MS);
        let rtt = rtt_of(40);
        let loss = LossEvent { bytes_lost: 3_000, largest_lost_sent: Time(900 * MS), bytes_in_flight: 97_000, prior_in_flight: 100_000 };
        b.on_congestion_event(Time(1000 * MS), &loss, &rtt);
        b.on_ack(Time(1000 * MS), &ack(Time(900 * MS), 97_000, sample(10_000_000, 50_000, 100_000, 3_000, 3_000)), &rtt);
        assert_eq!(b.mode(), Bbr3Mode::ProbeBwDown);
        assert!(b.inflight_longterm().is_some());
        b.on_spurious_congestion(Time(1010 * MS));
        assert_eq!(b.mode(), Bbr3Mode::ProbeBwRefill);
        assert_eq!(b.inflight_longterm(), None);
        assert!(b.window() >= 100_000, "{}", b.window());
    }
}
