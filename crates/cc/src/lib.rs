//! multiconn-cc: congestion control shared by the TCP and QUIC models.
//!
//! * [`rtt`]: the RTT estimator of RFC 9002 §5 (and the RFC 6298 / aioquic update orders).
//! * [`Controller`]: the interface every algorithm implements, fed by the transport's loss
//!   recovery; [`build`] is the factory that turns a [`CcConfig`] into one.
//! * [`newreno`] (RFC 9002 appendix B, RFC 6582 behaviour for TCP), [`cubic`] (RFC 9438 with
//!   [`hystart`] HyStart++ of RFC 9406 as an option), [`bbr`] (BBR v1,
//!   draft-cardwell-iccrg-bbr-congestion-control-00), [`bbr3`] (BBRv3, draft-ietf-ccwg-bbr
//!   and Linux's google/bbr v3), [`fast`] (picoquic's delay-based controller of early 2022),
//!   [`prague`] (L4S's scalable controller, RFC 9331 §4, Linux `tcp_prague.c`).
//! * [`rounds`]: packet-timed round trips, shared by the BBR controllers.
//! * [`loss_filter`]: picoquic's smoothed loss rate, which decides whether a loss is worth a
//!   reduction (profiles turn it on for CUBIC and BBR; `fast` always uses it).
//! * [`coupled`]: congestion control for the paths of one multipath connection (MPQUIC,
//!   MPTCP): uncoupled per-path controllers or LIA (RFC 6356), OLIA and BALIA; [`wvegas`]
//!   (delay-based weighted Vegas) and [`westwood`] (LIA's increase, Westwood+'s decrease).
//! * [`delivery`]: delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation) for BBR.
//! * [`pacer`]: the token-bucket pacer of RFC 9002 §7.7 with the aioquic and ngtcp2 variants.
//!
//! Windows and byte counts are `u64` bytes; times are integer nanoseconds. Controllers never
//! read a clock: every call carries `now`.

pub mod bbr;
pub mod bbr3;
pub mod bictcp;
pub mod coupled;
pub mod cubic;
pub mod delivery;
pub mod fast;
pub mod hystart;
pub mod loss_filter;
pub mod newreno;
pub mod pacer;
pub mod prague;
mod recovery_period;
pub mod rounds;
pub mod rtt;
pub mod westwood;
pub mod wvegas;

use multiconn_core::{Rate, Time};
use serde::Deserialize;

pub use coupled::{build_multipath, build_paths, share, CoupledCc, CoupledKind, MultipathController, PathController, SharedMultipath, UncoupledCc};
pub use hystart::HyStartRule;
pub use cubic::CubicRule;
pub use delivery::{DeliveryRateCap, DeliveryRateEstimator, RateSample, SentRateState};
pub use pacer::{Pacer, PacerConfig};
pub use rtt::{RttEstimator, RttVarRule};

/// Which algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    /// NewReno (RFC 9002 appendix B; RFC 6582 behaviour for TCP); `reno` is read as it too.
    #[serde(alias = "reno")]
    NewReno,
    /// CUBIC (RFC 9438).
    Cubic,
    /// BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00).
    Bbr,
    /// picoquic's delay-based `fast` (`fastcc.c`).
    Fast,
    /// BBRv3 (draft-ietf-ccwg-bbr, Linux google/bbr v3), named `bbr3`.
    Bbr3,
    /// Prague, L4S's scalable controller (RFC 9331 §4, Linux `tcp_prague.c`): sends ECT(1).
    Prague,
}

impl CcKind {
    /// Every algorithm, in declaration order.
    pub const ALL: [CcKind; 6] = [CcKind::NewReno, CcKind::Cubic, CcKind::Bbr, CcKind::Fast, CcKind::Bbr3, CcKind::Prague];

    /// Every name profiles and scenarios may give, each algorithm's own first; `reno` is
    /// taken for NewReno.
    pub const NAMES: [(&'static str, CcKind); 7] = [
        ("newreno", CcKind::NewReno),
        ("cubic", CcKind::Cubic),
        ("bbr", CcKind::Bbr),
        ("fast", CcKind::Fast),
        ("bbr3", CcKind::Bbr3),
        ("prague", CcKind::Prague),
        ("reno", CcKind::NewReno),
    ];

    /// Its name in profiles and scenarios (`newreno`, `cubic`, `bbr`, `fast`, `bbr3`, `prague`).
    pub fn name(self) -> &'static str {
        CcKind::NAMES.iter().find(|(_, k)| *k == self).map(|(n, _)| *n).expect("every algorithm has a name")
    }
}

/// A controller name that is not one of [`CcKind::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown congestion control \"{0}\"; available: {}", CcKind::ALL.map(CcKind::name).join(", "))]
pub struct UnknownCc(pub String);

impl std::str::FromStr for CcKind {
    type Err = UnknownCc;

    /// A name of [`CcKind::ALL`]; "reno" is taken for NewReno.
    fn from_str(s: &str) -> Result<CcKind, UnknownCc> {
        CcKind::NAMES.iter().find(|(n, _)| *n == s).map(|&(_, k)| k).ok_or_else(|| UnknownCc(s.to_string()))
    }
}

/// Where the controller is: reported in time series and qlog `congestion_state_updated`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CcState {
    /// Slow start: below ssthresh (`fast`: its *initial* phase).
    SlowStart,
    /// Congestion avoidance: at or above ssthresh (`fast`: its *eval* phase).
    CongestionAvoidance,
    /// Inside a recovery period (no further reduction until it ends).
    Recovery,
    /// BBR's own phases, named as the draft names them.
    Startup,
    /// BBR draining the queue Startup built.
    Drain,
    /// BBR's steady state, cycling the pacing gain around the estimated bandwidth.
    ProbeBw,
    /// BBR holding its window low (v1: 4 segments; v3: half the BDP) to measure the minimum RTT again.
    ProbeRtt,
}

impl CcState {
    /// The qlog name (`slow_start`, `congestion_avoidance`, `recovery`, ...).
    pub fn name(self) -> &'static str {
        match self {
            CcState::SlowStart => "slow_start",
            CcState::CongestionAvoidance => "congestion_avoidance",
            CcState::Recovery => "recovery",
            CcState::Startup => "startup",
            CcState::Drain => "drain",
            CcState::ProbeBw => "probe_bw",
            CcState::ProbeRtt => "probe_rtt",
        }
    }
}

/// The state of a loss-based window (NewReno, CUBIC): in recovery, below ssthresh, or above.
pub(crate) fn loss_based_state(in_recovery: bool, cwnd: u64, ssthresh: u64) -> CcState {
    if in_recovery {
        CcState::Recovery
    } else if cwnd < ssthresh {
        CcState::SlowStart
    } else {
        CcState::CongestionAvoidance
    }
}

/// Everything that parameterises a controller. Implementation profiles fill it.
#[derive(Clone, Debug, PartialEq)]
pub struct CcConfig {
    /// The algorithm [`build`] makes.
    pub kind: CcKind,
    /// Largest datagram (QUIC) or segment (TCP MSS) in bytes: the window's unit.
    pub max_datagram_size: u64,
    /// Initial window, bytes (RFC 9002: min(10·MDS, max(2·MDS, 14720)); TCP: 10·MSS).
    pub initial_window: u64,
    /// Floor of the window after a reduction, bytes (RFC 9002: 2·MDS).
    pub minimum_window: u64,
    /// Window after a retransmission timeout / persistent congestion, bytes (TCP: 1 MSS;
    /// QUIC: the minimum window).
    pub loss_window: u64,
    /// NewReno multiplicative decrease (RFC 9002: 0.5).
    pub reno_beta: f64,
    /// CUBIC β (RFC 9438: 0.7) and C (0.4).
    pub cubic_beta: f64,
    /// CUBIC C, the scale of the cubic window function (RFC 9438 §4.2: 0.4).
    pub cubic_c: f64,
    /// CUBIC fast convergence (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// HyStart++ (RFC 9406) in slow start, for NewReno and CUBIC.
    pub hystart: bool,
    /// Whose reading of HyStart++ ([`hystart::HyStartRule`]): RFC 9406's, ngtcp2 1.x's or
    /// ngtcp2 0.12's.
    pub hystart_rule: hystart::HyStartRule,
    /// Whose CUBIC congestion avoidance ([`cubic::CubicRule`]): RFC 9438's or ngtcp2 0.12's.
    pub cubic_rule: cubic::CubicRule,
    /// ngtcp2 0.12's window cap ([`delivery::DeliveryRateCap`]): NewReno and CUBIC stop growing
    /// while the window exceeds 2.89 × the highest delivery rate sampled × min RTT.
    pub delivery_rate_cap: bool,
    /// Base the reduction on bytes in flight after removing the lost packets instead of on
    /// cwnd (aioquic's rule); `false` uses cwnd.
    pub reduce_from_flight: bool,
    /// Stop window growth when the sender is application- or flow-control-limited
    /// (RFC 9002 §7.8). aioquic does not check.
    pub app_limited_check: bool,
    /// picoquic's loss reactions of early 2022: CUBIC reduces the window for a loss only when
    /// picoquic's smoothed loss rate ([`loss_filter`]) exceeds 20 %, BBR replaces Linux's
    /// packet conservation by picoquic's halving on such losses (see [`bbr`]); `fast` always
    /// filters. Needs the losses reported one by one ([`Controller::on_packet_lost`]), which
    /// only the QUIC model does.
    pub loss_filter: bool,
    /// The RTT assumed before the first sample (a delay-based controller starts from it).
    pub initial_rtt: multiconn_core::Dur,
    /// How NewReno turns ACKs into growth ([`newreno::RenoGrowth`]): byte counting, or ns-3's
    /// per-ACK rule.
    pub reno_growth: newreno::RenoGrowth,
    /// BBR's long-term (policer) bandwidth estimate as picoquic of early 2022 runs it (see
    /// [`bbr`]); needs per-packet loss reports (QUIC).
    pub bbr_long_term: bool,
    /// A controller from outside the built-in set: [`build`] returns what it makes instead of
    /// the algorithm `kind` names (`kind` is then only the name the profile accepted). Tests
    /// and experiments use it to run a controller through TCP and QUIC without touching them.
    pub external: Option<ControllerFactory>,
    /// Prague's RTT independence ([`prague::PragueRttScaling`]; Linux's default: `rate`).
    pub prague_rtt_scaling: prague::PragueRttScaling,
    /// Prague's classic-ECN fallback (Linux's `prague_ecn_fallback`, off by default).
    pub prague_ecn_fallback: bool,
}

/// A function that makes a controller from its settings.
pub type MakeController = dyn Fn(&CcConfig) -> Box<dyn Controller> + Send + Sync;

/// Makes a controller from a [`CcConfig`], for [`CcConfig::external`]. Two factories are equal
/// when they are the same one.
#[derive(Clone)]
pub struct ControllerFactory(pub std::sync::Arc<MakeController>);

impl std::fmt::Debug for ControllerFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ControllerFactory")
    }
}

impl PartialEq for ControllerFactory {
    fn eq(&self, other: &ControllerFactory) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl CcConfig {
    /// RFC 9002 defaults for a QUIC sender with datagrams of `mds` bytes.
    pub fn quic_default(kind: CcKind, mds: u64) -> CcConfig {
        CcConfig {
            kind,
            max_datagram_size: mds,
            initial_window: (10 * mds).min((2 * mds).max(14720)),
            minimum_window: 2 * mds,
            loss_window: 2 * mds,
            reno_beta: 0.5,
            cubic_beta: 0.7,
            cubic_c: 0.4,
            fast_convergence: true,
            hystart: false,
            hystart_rule: hystart::HyStartRule::Rfc9406,
            cubic_rule: cubic::CubicRule::Rfc9438,
            delivery_rate_cap: false,
            reduce_from_flight: false,
            app_limited_check: true,
            loss_filter: false,
            initial_rtt: rtt::INITIAL_RTT,
            reno_growth: newreno::RenoGrowth::Bytes,
            bbr_long_term: false,
            external: None,
            prague_rtt_scaling: prague::PragueRttScaling::Rate,
            prague_ecn_fallback: false,
        }
    }

    /// Linux-like defaults for a TCP sender with segments of `mss` bytes (IW10, RFC 6928).
    pub fn tcp_default(kind: CcKind, mss: u64) -> CcConfig {
        CcConfig { initial_window: 10 * mss, loss_window: mss, ..CcConfig::quic_default(kind, mss) }
    }
}

/// Packets newly acknowledged by one ACK, summarised.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckEvent {
    /// Bytes newly acknowledged (ack-eliciting and in flight).
    pub bytes_acked: u64,
    /// Send time of the most recently sent of the newly acknowledged packets.
    pub largest_acked_sent: Time,
    /// Bytes in flight before these packets were removed.
    pub prior_in_flight: u64,
    /// Bytes in flight after.
    pub bytes_in_flight: u64,
    /// The sender was application- or flow-control-limited (not cwnd-limited) when the acked
    /// packets were sent: growth should be suppressed (RFC 9002 §7.8).
    pub app_limited: bool,
    /// Delivery-rate sample from this ACK, if the transport tracks one (BBR needs it).
    pub rate_sample: Option<RateSample>,
}

/// Packets declared lost by one run of loss detection, summarised.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossEvent {
    /// Bytes of the lost in-flight packets.
    pub bytes_lost: u64,
    /// Send time of the most recently sent lost packet (decides whether a new recovery period
    /// starts: RFC 9002 §7.3.2).
    pub largest_lost_sent: Time,
    /// Bytes in flight after the lost packets were removed.
    pub bytes_in_flight: u64,
    /// Bytes in flight before they were removed.
    pub prior_in_flight: u64,
}

/// The ECN feedback one ACK carried, for a scalable (L4S) controller (RFC 9331 §4.1: the
/// extent of CE marking, not one signal per round trip): TCP's AccECN ACE counter (RFC 9768),
/// QUIC's ECN counts (RFC 9000 §13.4). Counts are what the ACK newly reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnFeedback {
    /// Packets newly reported CE-marked.
    pub ce_packets: u64,
    /// Packets newly reported received with ECT(0), ECT(1) or CE: the marked fraction's
    /// denominator.
    pub ect_packets: u64,
    /// Send time of the newest packet the ACK acknowledges (decides whether a CE response has
    /// already covered it).
    pub largest_acked_sent: Time,
}

/// A congestion controller. The transport calls these as its loss recovery sees events; the
/// controller answers with a window and, optionally, its own pacing rate.
pub trait Controller: Send + std::fmt::Debug {
    /// A packet carrying `bytes` that counts in flight was sent; `bytes_in_flight` includes it.
    fn on_packet_sent(&mut self, now: Time, bytes: u64, bytes_in_flight: u64);
    /// An ACK newly acknowledged packets. `rtt` has already been updated with its sample.
    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator);
    /// Loss detection declared packets lost (a congestion event unless it falls in the current
    /// recovery period).
    fn on_congestion_event(&mut self, now: Time, loss: &LossEvent, rtt: &RttEstimator);
    /// An ECN congestion signal (TCP: an ACK with ECE, RFC 3168 §6.1.2; QUIC: a larger CE
    /// count, RFC 9002 §7.1): the same response as to a loss, `loss.bytes_lost` being 0 and
    /// `loss.largest_lost_sent` the send time the recovery period is judged by. Controllers
    /// that filter losses before reacting (picoquic's loss filter) react to it unfiltered.
    fn on_ecn_congestion_event(&mut self, now: Time, loss: &LossEvent, rtt: &RttEstimator) {
        self.on_congestion_event(now, loss, rtt);
    }
    /// The controller is scalable (L4S, RFC 9331 §4): the transport sends ECT(1) instead of
    /// ECT(0), requires accurate feedback, and calls [`on_ecn_feedback`](Self::on_ecn_feedback)
    /// instead of [`on_ecn_congestion_event`](Self::on_ecn_congestion_event).
    fn scalable_ecn(&self) -> bool {
        false
    }
    /// A scalable controller's per-ACK ECN feedback, before the same ACK's
    /// [`on_ack`](Self::on_ack).
    fn on_ecn_feedback(&mut self, _now: Time, _feedback: &EcnFeedback, _rtt: &RttEstimator) {}
    /// A packet (number `pn` in its path's space, `bytes` in flight) was declared lost by the
    /// packet or time threshold. The QUIC model reports each lost packet of a detection run
    /// this way before the run's [`on_congestion_event`](Self::on_congestion_event); TCP does
    /// not. Controllers that judge losses one by one (picoquic's loss filter) use it.
    fn on_packet_lost(&mut self, _now: Time, _pn: u64, _bytes: u64) {}
    /// A packet was declared lost by a retransmission timer (picoquic's timer-based loss,
    /// profile knob `retransmit_timer = "picoquic-2022"`); the timer's
    /// [`on_persistent_congestion`](Self::on_persistent_congestion) follows.
    fn on_packet_timed_out(&mut self, _now: Time, _pn: u64, _bytes: u64) {}
    /// Persistent congestion (RFC 9002 §7.6), a TCP retransmission timeout or a timer-based
    /// loss: collapse to the loss window.
    fn on_persistent_congestion(&mut self, now: Time);
    /// gQUIC's retransmission timeout (`OnRetransmissionTimeout(true)` in quic-go of 2017-18,
    /// profile knob `retransmit_timer = "mpquic-2018"`), after the congestion event of the
    /// packets it declared lost: ssthresh becomes half the window and the window the loss
    /// window, outside any recovery period. Controllers without that rule of their own collapse
    /// as on persistent congestion.
    fn on_retransmission_timeout(&mut self, now: Time) {
        self.on_persistent_congestion(now);
    }
    /// The last congestion event turned out spurious (the "lost" packets were acknowledged);
    /// controllers that support it restore their state from before the event.
    fn on_spurious_congestion(&mut self, _now: Time) {}
    /// One packet declared lost was acknowledged after all: picoquic's `spurious_repeat`
    /// notification of early 2022, sent for every such packet instead of
    /// [`on_spurious_congestion`](Self::on_spurious_congestion) under the recovery knob
    /// `spurious_undo = "picoquic-2022"`. `largest_acked_sent` is the send time of the largest
    /// packet the ACK acknowledges, `srtt` the path's smoothed RTT. NewReno and CUBIC react
    /// as picoquic's do; others (picoquic's BBR and fast) ignore it.
    fn on_spurious_loss(&mut self, _now: Time, _largest_acked_sent: Time, _srtt: multiconn_core::Dur) {}
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Slow-start threshold in bytes; `None` while infinite.
    fn ssthresh(&self) -> Option<u64>;
    /// Where the controller is, for time series and qlog.
    fn state(&self) -> CcState;
    /// A pacing rate the controller wants (BBR); `None` = pace from cwnd / smoothed RTT.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// The controller only works paced (a rate-based model such as BBR): the transport paces
    /// its packets even where the profile leaves pacing off, as Linux does for a controller
    /// that sets `sk_pacing_status = SK_PACING_NEEDED` (`tcp_needs_internal_pacing`).
    fn needs_pacing(&self) -> bool {
        false
    }
    /// The bursts the controller wants its pacer to allow, if it has a rule of its own
    /// (Prague: [`pacer::BurstRule::RateSlice`]); `None` keeps the profile's.
    fn pacing_burst(&self) -> Option<pacer::BurstRule> {
        None
    }
    /// The controller sets the window itself during loss recovery (Linux's `cong_control`
    /// hook, which BBR implements), so a TCP sender does not bring the window down by
    /// proportional rate reduction (RFC 6937) on its behalf.
    fn sets_recovery_window(&self) -> bool {
        false
    }
    /// Which algorithm this is.
    fn kind(&self) -> CcKind;
}

/// The factory: a controller for `cfg`.
pub fn build(cfg: &CcConfig) -> Box<dyn Controller> {
    if let Some(external) = &cfg.external {
        return (external.0)(cfg);
    }
    match cfg.kind {
        CcKind::NewReno => Box::new(newreno::NewReno::new(cfg.clone())),
        CcKind::Cubic => Box::new(cubic::Cubic::new(cfg.clone())),
        CcKind::Bbr => Box::new(bbr::Bbr::new(cfg.clone())),
        CcKind::Fast => Box::new(fast::Fast::new(cfg.clone())),
        CcKind::Bbr3 => Box::new(bbr3::Bbr3::new(cfg.clone())),
        CcKind::Prague => Box::new(prague::Prague::new(cfg.clone())),
    }
}
