//! Implementation profiles: named bundles of knobs, as data (`profiles/*.toml`), that make the
//! one TCP model and the one QUIC model behave like a given real stack.
//!
//! Every knob is documented in `docs/profiles.md` with the source it was read from. A profile
//! file must set every field (no silent defaults); unknown fields are refused.

use multiconn_cc::pacer::BurstRule;
use multiconn_cc::newreno::RenoGrowth;
use multiconn_cc::{CcConfig, CcKind, CubicRule, HyStartRule, RttVarRule};
use multiconn_core::Dur;
use multiconn_multipath::{FailoverProfile, SchedulerKind};
use serde::Deserialize;

use crate::host::HostKnobs;
use crate::AckPath;

/// Which transport a profile is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// The QUIC model (`multiconn-quic`), Multipath QUIC included.
    Quic,
    /// The TCP model (`multiconn-tcp`), MPTCP included.
    Tcp,
}

/// An implementation profile: the knobs, read from one TOML file, that make the TCP or QUIC
/// model behave like one real stack.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The name scenarios use (`aioquic`, `linux-tcp`, ...).
    pub name: String,
    /// The transport it configures.
    pub transport: TransportKind,
    /// One line: what real stack and version this models.
    pub description: String,
    /// Congestion control (`[cc]`).
    pub cc: CcKnobs,
    /// Loss detection and timers (`[recovery]`).
    pub recovery: RecoveryKnobs,
    /// Pacing (`[pacing]`).
    pub pacing: PacingKnobs,
    /// Acknowledgements (`[ack]`).
    pub ack: AckKnobs,
    /// Packet sizes (`[packet]`).
    pub packet: PacketKnobs,
    /// QUIC only.
    pub quic: Option<QuicKnobs>,
    /// TCP only.
    pub tcp: Option<TcpKnobs>,
    /// How the stack runs several paths (Multipath QUIC, MPTCP); absent: the transport's
    /// defaults (see [`MultipathKnobs`]).
    pub multipath: Option<MultipathKnobs>,
    /// Explicit Congestion Notification: TCP requests it in the handshake and, once both ends
    /// agreed, sends data segments ECT(0) (RFC 3168 §6.1); QUIC sends ECT(0), reports the ECN
    /// counts in its ACK frames and validates the path (RFC 9000 §13.4, RFC 9002 §7.1).
    /// Absent: false, the built-in profiles' setting (Linux's default `tcp_ecn = 2` accepts
    /// ECN but never requests it, so a Linux client does not use it). A flow's `ecn` overrides
    /// it.
    #[serde(default)]
    pub ecn: bool,
    /// TCP: ask for Accurate ECN (RFC 9768) in the handshake and agree to it, instead of
    /// RFC 3168's ECN (Linux 6.18+ `net.ipv4.tcp_ecn = 3`); the ACKs then count CE-marked
    /// packets (the ACE field) instead of echoing ECE until CWR. A flow's `ecn = "accecn"` sets
    /// it; a scalable controller (`prague`) asks for AccECN whatever it says. Absent: false.
    #[serde(default)]
    pub accecn: bool,
    /// TCP: the ECN the data receiver's kernel does (the client of a download or of requests,
    /// the server of an upload), where it differs from what the flow asks for: `accecn`
    /// (Linux 6.18+ `tcp_ecn = 3`), `rfc3168` (`tcp_ecn = 1`; a server with the default 2)
    /// or `none` (`tcp_ecn = 0`; a client with the default 2). Absent: the same as the other
    /// end. A flow's `receiver.ecn` sets it.
    #[serde(default)]
    pub receiver_ecn: Option<TcpEcn>,
    /// The timing noise of the process the endpoints run in (`[host]`: per-packet CPU time,
    /// late timers; [`crate::host`]). Absent: none, as in every built-in profile.
    #[serde(default)]
    pub host: HostKnobs,
}

/// Congestion control knobs (`[cc]`), turned into a [`CcConfig`] by [`Profile::cc_config`].
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcKnobs {
    /// Algorithms the stack offers; a scenario asking for another is refused.
    pub allowed: Vec<CcKind>,
    /// The controller when the flow names none.
    pub default: CcKind,
    /// Initial window in datagrams/segments; absent = RFC 9002 min(10·MDS, max(2·MDS, 14720)).
    pub initial_window_packets: Option<u64>,
    /// Window floor after a reduction, in datagrams/segments.
    pub minimum_window_packets: u64,
    /// NewReno's multiplicative decrease factor (RFC 9002 §7.3.2: 0.5).
    pub reno_beta: f64,
    /// CUBIC's multiplicative decrease factor β (RFC 9438 §4.6: 0.7).
    pub cubic_beta: f64,
    /// CUBIC's constant C of the window increase function (RFC 9438 §4.2: 0.4).
    pub cubic_c: f64,
    /// CUBIC fast convergence (RFC 9438 §4.7): W_max = cwnd·(1+β)/2 when below the last W_max.
    pub fast_convergence: bool,
    /// Leave slow start early by HyStart, by the rule of `hystart_rule`.
    pub hystart: bool,
    /// Whose HyStart: `rfc9406` (RFC 9406's HyStart++ as written), `ngtcp2` (ngtcp2 1.x's
    /// reading), `ngtcp2-0.12` (ngtcp2 0.12's, without CSS) or `linux` (Linux CUBIC's ACK-train
    /// and delay tests; `multiconn_cc::hystart`). Absent: `rfc9406`.
    #[serde(default)]
    pub hystart_rule: HyStartRule,
    /// Whose CUBIC congestion avoidance: `rfc9438`, `ngtcp2-0.12`, `linux` or `linux-segments`
    /// (`multiconn_cc::cubic::CubicRule`). Absent: `rfc9438`.
    #[serde(default)]
    pub cubic_rule: CubicRule,
    /// ngtcp2 0.12's window cap: NewReno and CUBIC do not grow while cwnd exceeds 2.89 × the
    /// highest delivery rate sampled × min RTT (`multiconn_cc::delivery::DeliveryRateCap`).
    /// Absent: false.
    #[serde(default)]
    pub delivery_rate_cap: bool,
    /// Base a reduction on the bytes in flight after removing the lost packets instead of on
    /// cwnd.
    pub reduce_from_flight: bool,
    /// No window growth while application- or flow-control-limited (QUIC: RFC 9002 §7.8;
    /// TCP: unless Linux's `tcp_is_cwnd_limited` holds).
    pub app_limited_check: bool,
    /// Initial window in bytes, whatever the datagram size (picoquic: 10 × 1536); replaces
    /// `initial_window_packets` when set.
    pub initial_window_bytes: Option<u64>,
    /// Minimum window in bytes (picoquic: 2 × 1536); replaces `minimum_window_packets` when
    /// set.
    pub minimum_window_bytes: Option<u64>,
    /// picoquic's loss reactions: CUBIC and BBR react only to losses that pass picoquic's
    /// smoothed-loss-rate filter (`multiconn_cc::loss_filter`), BBR by halving its window;
    /// QUIC profiles only. Absent: false.
    #[serde(default)]
    pub loss_filter: bool,
    /// How NewReno turns ACKs into growth: `bytes` (byte counting) or `ns3-per-ack` (ns-3's
    /// `TcpNewReno`, per ACK; `multiconn_cc::newreno::RenoGrowth`). Absent: `bytes`.
    #[serde(default)]
    pub reno_growth: RenoGrowth,
    /// BBR's long-term (policer) bandwidth estimate as picoquic of early 2022 runs it
    /// (`multiconn_cc::bbr`); QUIC profiles only. Absent: false.
    #[serde(default)]
    pub bbr_long_term: bool,
    /// Prague's RTT independence: `rate` (Linux's `RTT_CONTROL_RATE`) or `none`
    /// (`multiconn_cc::prague::PragueRttScaling`). Absent: `rate`.
    #[serde(default)]
    pub prague_rtt_scaling: multiconn_cc::prague::PragueRttScaling,
    /// Prague's classic-ECN fallback (`multiconn_cc::prague`; Linux's `prague_ecn_fallback`).
    /// Absent: false, Linux's default.
    #[serde(default)]
    pub prague_ecn_fallback: bool,
}

/// Loss detection and timers (`[recovery]`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryKnobs {
    /// kPacketThreshold (QUIC) / DupThresh (TCP). QUIC: 0 = no packet threshold, only the time
    /// threshold and the timers declare losses (mp-quic of 2018).
    pub packet_threshold: u64,
    /// kTimeThreshold as a fraction [num, den] (RFC 9002: [9, 8]).
    pub time_threshold: [u64; 2],
    /// Floor the loss delay at kGranularity.
    pub time_threshold_floor: bool,
    /// kGranularity, the timer granularity (RFC 9002 §6.1.2: 1 ms).
    pub granularity: Dur,
    /// RTT assumed before the first sample (RFC 9002 §6.2.2: 333 ms).
    pub initial_rtt: Dur,
    /// How rttvar is updated (from the previous smoothed RTT, or aioquic's rule).
    pub rttvar_rule: RttVarRule,
    /// QUIC: declare persistent congestion (RFC 9002 §7.6).
    pub persistent_congestion: bool,
    /// kPersistentCongestionThreshold.
    pub persistent_congestion_threshold: u32,
    /// TCP RTO bounds and initial value (RFC 6298; Linux: 200 ms, 120 s, 1 s); QUIC: the floor
    /// of the `picoquic-2022` and `mpquic-2018` retransmission timers.
    pub min_rto: Dur,
    /// TCP maximum RTO; QUIC: the ceiling of the `mpquic-2018` RTO.
    pub max_rto: Dur,
    /// TCP RTO before the first RTT sample; QUIC: the `mpquic-2018` RTO before it.
    pub initial_rto: Dur,
    /// How the RTO follows from the RTT estimate.
    pub rto_rule: RtoRule,
    /// TCP: when the RTO is restarted besides on ACKs that advance. Absent: `ack`.
    #[serde(default)]
    pub rto_restart: RtoRestart,
    /// TCP: how the window comes down to the controller's target in fast recovery and after
    /// an ECN echo. Absent: `immediate`.
    #[serde(default)]
    pub rate_reduction: RateReduction,
    /// QUIC: what the retransmission timer of the 1-RTT packets does. Absent: `rfc9002`.
    #[serde(default)]
    pub retransmit_timer: RetransmitTimer,
    /// QUIC: how the controller hears of losses found spurious. Absent: `event`.
    #[serde(default)]
    pub spurious_undo: SpuriousUndo,
}

/// How a QUIC sender tells its controller that packets declared lost were acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpuriousUndo {
    /// Once every packet of the latest congestion event was acknowledged, the event is undone
    /// (`Controller::on_spurious_congestion`), as Linux's TCP undo does for a whole recovery.
    #[default]
    Event,
    /// picoquic of early 2022 (48525d89ef4d, `frames.c` `picoquic_check_spurious_retransmission`):
    /// every such packet is reported at once (`Controller::on_spurious_loss`) and each
    /// controller decides: NewReno restores twice its ssthresh if the notice comes within one
    /// smoothed RTT of the recovery's start and before any packet sent after that start is
    /// acknowledged (`newreno.c`), CUBIC restores its state before the reduction (`cubic.c`
    /// `picoquic_cubic_correct_spurious`), BBR and fast do nothing.
    #[serde(rename = "picoquic-2022")]
    Picoquic2022,
    /// Never: the controller is not told (mp-quic of 2018, `ackhandler/sent_packet_handler.go`:
    /// a packet declared lost or retransmitted by a timer leaves the packet history, so a later
    /// acknowledgement of it finds nothing).
    None,
}

/// What a QUIC path's retransmission timer does when it fires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetransmitTimer {
    /// RFC 9002 §6.2: a probe timeout sends probes and declares nothing lost; its base is
    /// `srtt + max(4·rttvar, kGranularity) + max_ack_delay`, doubled per consecutive expiry.
    #[default]
    Rfc9002,
    /// picoquic of early 2022 (`sender.c` `picoquic_retransmit_needed_by_packet` and
    /// `picoquic_current_retransmit_timer`, `frames.c` `picoquic_update_rtt_from_one_way` at
    /// 48525d89ef4d): each packet with no later packet of its path acknowledged is declared
    /// lost once `send time + timer` has passed, oldest first; the timer is
    /// `max(srtt + 4·rttvar + max_ack_delay, 5/4·srtt + max_ack_delay, min_rto)`, doubled after
    /// one timer-based loss episode on the path and quadrupled after two or more (no further
    /// backoff). An episode is a timer-based loss of a packet sent after the previous one; the
    /// congestion controller sees a timeout (collapse to the minimum window).
    #[serde(rename = "picoquic-2022")]
    Picoquic2022,
    /// aioquic 1.7 (`recovery.py` `reschedule_data`, `_in_persistent_congestion`): RFC 9002's
    /// probe timeout, but each 1-RTT expiry first declares the oldest outstanding ack-eliciting
    /// packet lost without a congestion event (its bytes leave the flight, its frames are sent
    /// again in the one probe) and sends a single probe.
    #[serde(rename = "aioquic-1.7")]
    Aioquic17,
    /// mp-quic of 2018 on gQUIC-era quic-go (`ackhandler/sent_packet_handler.go`
    /// `updateLossDetectionAlarm`, `OnAlarm`, `computeTLPTimeout`, `computeRTOTimeout`): armed
    /// from the last packet sent on the path (ACK-only ones included), first two tail-loss
    /// probes, each declaring the newest outstanding packet lost without a congestion event
    /// and sending it again, after `max(2·srtt, 3/2·srtt + min_rto/2)` (one packet
    /// outstanding: `max(2·srtt, 10 ms)`); then retransmission timeouts after
    /// `max(min(max(srtt + 4·rttvar, min_rto) · 2^n, max_rto), min_rto)` (`initial_rto` before
    /// any RTT sample, and no tail-loss probe then), each declaring the two oldest outstanding
    /// packets lost and collapsing the window (the controller's
    /// `on_retransmission_timeout`). An acknowledgement of a new packet resets both counts.
    #[serde(rename = "mpquic-2018")]
    Mpquic2018,
}

/// RTO from the RTT estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoRule {
    /// RFC 6298 §2: `srtt + max(G, 4·rttvar)`, then at least `min_rto`.
    Rfc6298,
    /// Linux (`tcp_set_rto`): the variance term is floored at `min_rto` instead, so the RTO is
    /// `srtt + max(4·rttvar, min_rto)` — always above the smoothed RTT by at least `min_rto`.
    Linux,
}

/// When a TCP sender restarts its retransmission timer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoRestart {
    /// RFC 6298 §5.3: only when an ACK acknowledges new data (and after the timer expired).
    #[default]
    Ack,
    /// Linux (`tcp_output.c` `tcp_xmit_retransmit_queue`): also when the segment at `snd_una`,
    /// the head of the retransmission queue, is retransmitted in recovery, unless the RACK
    /// reorder timer is pending: the timer then runs one RTO from that retransmission.
    HeadRetransmit,
}

/// The ECN feedback one end of a TCP connection does (and, after the handshake, the one the
/// connection agreed on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpEcn {
    /// No ECN: the SYN asks for none and a server agrees to none.
    #[default]
    None,
    /// RFC 3168: ECE on the ACKs from a CE mark until CWR, one reduction per window.
    Rfc3168,
    /// Accurate ECN (RFC 9768): the ACKs' ACE field counts CE-marked packets; a server that
    /// does AccECN also agrees to RFC 3168 with a client that asks only for that.
    AccEcn,
}

impl TcpEcn {
    /// Its name in profiles and scenarios (`none`, `rfc3168`, `accecn`).
    pub fn name(self) -> &'static str {
        match self {
            TcpEcn::None => "none",
            TcpEcn::Rfc3168 => "rfc3168",
            TcpEcn::AccEcn => "accecn",
        }
    }
}

/// How a TCP sender's window comes down to the controller's target after a congestion event
/// (fast recovery, or CWR after an ECN echo).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateReduction {
    /// At once: the window is the controller's target from the event on (RFC 6675 §5), and
    /// ACKs of data sent after the event may grow it before recovery ends.
    #[default]
    Immediate,
    /// Proportional rate reduction as Linux runs it (RFC 6937, with the reduction bounds of
    /// Linux 5.19 and later, which RFC 9937 specifies; `tcp_cwnd_reduction`,
    /// net/ipv4/tcp_input.c): the window follows what the ACKs deliver until recovery ends,
    /// the controller does not grow it meanwhile, and at the end it is the controller's target
    /// (`tcp_end_cwnd_reduction`). Not for BBR, which sets its own window in recovery
    /// (`cong_control`).
    Prr,
    /// As `prr`, with the conservative bound of Linux 5.11 to 5.18: below ssthresh, an ACK
    /// that does not advance `snd_una` (or reveals a new loss) sends only what it delivered,
    /// not what earlier ACKs delivered and was not sent.
    #[serde(rename = "prr-5.11")]
    Prr511,
}

/// Pacing (`[pacing]`, RFC 9002 §7.7).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacingKnobs {
    /// Pace packets (pure ACKs are never paced).
    pub enabled: bool,
    /// N in the pacing rate N·cwnd/smoothed_rtt (BBR uses its own rate).
    pub factor: f64,
    /// How deep the pacer's bucket is.
    pub burst: BurstRule,
}

/// When a receiver acknowledges (`[ack]`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckKnobs {
    /// QUIC max_ack_delay (transport parameter) / TCP delayed-ACK timer.
    pub max_ack_delay: Dur,
    /// ACK after this many ack-eliciting packets (RFC 9000 §13.2.2: 2). QUIC: 0 = no count, an
    /// ACK only when the ACK timer expires (or at once on reordering if asked).
    pub ack_eliciting_threshold: u32,
    /// QUIC: the receiver's own ACK timer, after the first unacknowledged ack-eliciting packet;
    /// absent = `max_ack_delay` (what it advertises stays `max_ack_delay`).
    #[serde(default)]
    pub ack_delay: Option<Dur>,
    /// ACK at once when a packet arrives out of order (RFC 9000 §13.2.1, RFC 5681 §4.2).
    pub immediate_ack_on_reorder: bool,
}

/// Packet sizes (`[packet]`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketKnobs {
    /// Cap on the UDP payload (QUIC) or MSS (TCP); absent = as large as the path allows.
    pub max_payload: Option<u32>,
}

/// QUIC-only knobs (`[quic]`): flow control, header size, the receiving application's cost.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuicKnobs {
    /// Connection-level and per-stream flow-control windows (initial_max_data,
    /// initial_max_stream_data_*), bytes.
    pub initial_max_data: u64,
    /// Per-stream flow-control window (initial_max_stream_data_*), bytes.
    pub initial_max_stream_data: u64,
    /// Send MAX_DATA / MAX_STREAM_DATA when this fraction of the window has been consumed.
    pub flow_control_update_fraction: f64,
    /// How the receiver raises its limits. Absent: `sliding`.
    #[serde(default)]
    pub flow_control_rule: FlowControlRule,
    /// Destination connection ID length in short headers, bytes.
    pub dcid_len: u32,
    /// CPU time the receiving application spends on each datagram (reading it, decrypting,
    /// acknowledging, handing the data over): the default of a flow's `receiver.read_cost`.
    /// Zero (the default): a reader as fast as the arrivals.
    #[serde(default)]
    pub read_cost: Dur,
    /// The transport parameter max_datagram_frame_size (RFC 9221 §3) the stack advertises when
    /// it is configured for datagrams, bytes. Absent (every built-in profile): a flow that sends
    /// datagrams advertises 65535, or its own `max_datagram_frame_size`.
    #[serde(default)]
    pub max_datagram_frame_size: Option<u64>,
    /// How the stack orders DATAGRAM frames and stream data in a packet. Absent:
    /// `before_streams`.
    #[serde(default)]
    pub datagram_priority: Option<crate::DatagramPriority>,
}

/// How a QUIC receiver raises the limits it gives its peer (MAX_DATA, MAX_STREAM_DATA).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowControlRule {
    /// A window of fixed size slides: once `flow_control_update_fraction` of it has been
    /// consumed by the application, the limit becomes consumed + window (quinn, ngtcp2,
    /// aioquic, each with its own fraction).
    #[default]
    Sliding,
    /// picoquic of early 2022 (48525d89ef4d): the connection limit grows once twice the bytes
    /// received (in any order) exceed it (`sender.c`: `2 * cnx->data_received >
    /// cnx->maxdata_local`), a stream's once twice the bytes it delivered in order exceed its
    /// limit (`frames.c`: `2 * stream->consumed_offset > stream->maxdata_local`), each time by
    /// `picoquic_cc_increased_window` (`cc_common.c`): twice the old limit while the first
    /// path's minimum RTT is at most 100 ms, otherwise the old limit × min(RTT, 610 ms) /
    /// 100 ms. The update fraction is not used.
    #[serde(rename = "picoquic-2022")]
    Picoquic2022,
}

/// TCP-only knobs (`[tcp]`): Linux's socket buffers, options and receive offload.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpKnobs {
    /// net.ipv4.tcp_rmem: min, default, max (bytes).
    pub rmem: [u64; 3],
    /// net.ipv4.tcp_wmem: min, default, max (bytes).
    pub wmem: [u64; 3],
    /// tcp_moderate_rcvbuf: receive-buffer autotuning.
    pub autotune: bool,
    /// Fraction of the receive buffer advertised as window (tcp_adv_win_scale = 1: 1/2).
    pub adv_win_fraction: f64,
    /// Selective acknowledgements (RFC 2018), offered in the handshake.
    pub sack: bool,
    /// RACK-TLP (RFC 8985) loss detection.
    pub rack_tlp: bool,
    /// TCP timestamps option (12 bytes per segment, RFC 7323).
    pub timestamps: bool,
    /// Generic receive offload at the receiving host: segments of a connection arriving at
    /// the same instant are coalesced (Linux `tcp_gro_receive`) and acknowledged as one.
    /// Absent: false.
    #[serde(default)]
    pub gro: bool,
    /// GRO's `gro_max_size`: a coalesced packet stays below this many bytes. Absent: 65536.
    #[serde(default = "default_gro_max_bytes")]
    pub gro_max_bytes: u64,
}

fn default_gro_max_bytes() -> u64 {
    65536
}

/// How the stack runs several paths. Absent from a profile, a flow's `[flow.multipath]`
/// defaults are `minrtt`, `same` and `mp-quic` (quic) or `linux-mptcp` (tcp), abandoned paths'
/// data is requeued and link events are seen.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultipathKnobs {
    /// The scheduler when the flow names none.
    pub scheduler: SchedulerKind,
    /// The ACK path when the flow names none.
    pub ack_path: AckPath,
    /// The failover rules when the flow names none.
    pub failover: FailoverProfile,
    /// What happens to the data in flight on a path when it is abandoned (QUIC).
    pub abandon: AbandonRule,
    /// Whether the endpoints hear of their interfaces going down and up.
    pub link_events: LinkEvents,
}

/// The data in flight on an abandoned path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AbandonRule {
    /// Queued again at once for the other paths.
    #[default]
    Requeue,
    /// Left to the path's own loss detection (the packet threshold, or the retransmission
    /// timer), and queued again only when the path's state is deleted, 3 × max(retransmission
    /// timer, 1 s) after the abandonment (picoquic of early 2022, `quicctx.c`
    /// `picoquic_demote_path`).
    Drain,
}

/// Whether an endpoint follows the state of its interface on each path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkEvents {
    /// An interface going down marks the path potentially failed at once; coming back, it is
    /// probed (or validated again).
    #[default]
    React,
    /// Interface events are not seen: the path keeps sending into a link that is down and
    /// learns of the outage only through losses and timeouts (Linux's in-kernel MPTCP path
    /// manager while the interface keeps its address).
    Ignore,
}

/// Why a profile could not be found, read or used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProfileError {
    /// No built-in profile of that name for the transport.
    #[error("unknown profile \"{name}\"; available for {transport}: {available}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The transport asked for (`quic`, `tcp`).
        transport: &'static str,
        /// The built-in profiles of that transport, comma-separated.
        available: String,
    },
    /// The profile does not offer the congestion controller asked for.
    #[error("profile \"{profile}\" does not offer congestion control \"{cc}\"; it offers: {offered}")]
    CcNotOffered {
        /// The profile's name.
        profile: String,
        /// The controller asked for.
        cc: &'static str,
        /// The controllers it offers, comma-separated.
        offered: String,
    },
    /// A profile's TOML does not parse, or sets a knob its transport cannot honour.
    #[error("profile file {origin}: {message}")]
    Parse {
        /// Where the text came from (a file name, or `(built-in NAME)`).
        origin: String,
        /// What is wrong.
        message: String,
    },
}

/// The built-in profiles: (name, TOML text).
const BUILTIN: &[(&str, &str)] = &[
    ("rfc9002", include_str!("../profiles/rfc9002.toml")),
    ("linux-tcp", include_str!("../profiles/linux-tcp.toml")),
    ("aioquic", include_str!("../profiles/aioquic.toml")),
    ("aioquic-1.7", include_str!("../profiles/aioquic-1.7.toml")),
    ("ngtcp2", include_str!("../profiles/ngtcp2.toml")),
    ("ngtcp2-0.12", include_str!("../profiles/ngtcp2-0.12.toml")),
    ("picoquic-2022", include_str!("../profiles/picoquic-2022.toml")),
    ("linux-mptcp-5.15", include_str!("../profiles/linux-mptcp-5.15.toml")),
    ("ns3-quic-2019", include_str!("../profiles/ns3-quic-2019.toml")),
    ("ns3-tcp-3.29", include_str!("../profiles/ns3-tcp-3.29.toml")),
    ("mpquic-2018", include_str!("../profiles/mpquic-2018.toml")),
];

impl TransportKind {
    /// Its name in profiles and scenarios (`quic`, `tcp`).
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Quic => "quic",
            TransportKind::Tcp => "tcp",
        }
    }
}

impl Profile {
    /// Parses a profile from TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Profile, ProfileError> {
        let p: Profile = toml::from_str(text).map_err(|e| ProfileError::Parse { origin: origin.to_string(), message: e.to_string() })?;
        p.check().map_err(|message| ProfileError::Parse { origin: origin.to_string(), message })?;
        Ok(p)
    }

    /// Knobs that only one transport's model can honour.
    fn check(&self) -> Result<(), String> {
        if let Some((field, allowed)) = self.host.invalid() {
            return Err(format!("host.{field}: must be {allowed}"));
        }
        if self.transport != TransportKind::Tcp {
            if self.accecn || self.receiver_ecn.is_some() {
                return Err("accecn and receiver_ecn are tcp settings (AccECN, RFC 9768, is TCP's ECN feedback; quic reports ECN counts with ecn = true)".into());
            }
            if self.recovery.rate_reduction != RateReduction::Immediate {
                return Err("recovery.rate_reduction is a tcp setting (the quic model reduces at once, RFC 9002 §7.3.2)".into());
            }
            if self.recovery.retransmit_timer == RetransmitTimer::Mpquic2018 {
                let r = &self.recovery;
                if r.min_rto == Dur::ZERO {
                    return Err("recovery.min_rto must be above zero with retransmit_timer = \"mpquic-2018\" (it floors the RTO)".into());
                }
                if r.initial_rto == Dur::ZERO {
                    return Err("recovery.initial_rto must be above zero with retransmit_timer = \"mpquic-2018\" (the RTO before any RTT sample)".into());
                }
                if r.max_rto < r.min_rto {
                    return Err(format!("recovery.max_rto ({}) must not be below recovery.min_rto ({}) with retransmit_timer = \"mpquic-2018\"", r.max_rto, r.min_rto));
                }
            }
            return Ok(());
        }
        if self.recovery.packet_threshold == 0 {
            return Err("recovery.packet_threshold = 0 (no packet threshold) is a quic setting; tcp's DupThresh is 1 or more".into());
        }
        if self.cc.loss_filter {
            return Err("cc.loss_filter judges losses one by one, which only the quic model reports".into());
        }
        if self.cc.bbr_long_term {
            return Err("cc.bbr_long_term counts losses one by one, which only the quic model reports".into());
        }
        if self.recovery.spurious_undo != SpuriousUndo::Event {
            return Err("recovery.spurious_undo is a quic setting (tcp undoes a whole recovery)".into());
        }
        if self.cc.allowed.contains(&CcKind::Fast) || self.cc.default == CcKind::Fast {
            return Err("cc: \"fast\" judges losses one by one, which only the quic model reports; a tcp profile cannot offer it".into());
        }
        if self.ack.ack_eliciting_threshold == 0 {
            return Err("ack.ack_eliciting_threshold = 0 (the ACK timer alone) is a quic setting; tcp acknowledges after 1 or more segments".into());
        }
        if self.ack.ack_delay.is_some() {
            return Err("ack.ack_delay is a quic setting (tcp's delayed-ACK timer is ack.max_ack_delay)".into());
        }
        if self.recovery.retransmit_timer != RetransmitTimer::Rfc9002 {
            return Err("recovery.retransmit_timer is a quic setting (tcp has its own rto_rule)".into());
        }
        if let Some(m) = &self.multipath {
            if m.ack_path != AckPath::Same {
                return Err("multipath.ack_path must be \"same\" for tcp: a subflow acknowledges its own segments".into());
            }
            if let Some(stack) = m.scheduler.quic_stack() {
                return Err(format!("multipath.scheduler \"{}\" is {stack}'s multipath QUIC scheduler; tcp profiles take another", m.scheduler));
            }
            if m.abandon != AbandonRule::Requeue {
                return Err("multipath.abandon concerns abandoned QUIC paths; tcp profiles take \"requeue\"".into());
            }
        }
        Ok(())
    }

    /// Names of the built-in profiles for a transport.
    pub fn builtin_names(transport: TransportKind) -> Vec<&'static str> {
        BUILTIN.iter().filter(|(_, text)| Profile::from_toml(text, "").map(|p| p.transport == transport).unwrap_or(false)).map(|(n, _)| *n).collect()
    }

    /// A built-in profile by name, for the given transport.
    pub fn builtin(name: &str, transport: TransportKind) -> Result<Profile, ProfileError> {
        let found = BUILTIN.iter().find(|(n, _)| *n == name).map(|(n, text)| Profile::from_toml(text, &format!("(built-in {n})")));
        match found {
            Some(Ok(p)) if p.transport == transport => Ok(p),
            Some(Err(e)) => Err(e),
            _ => Err(ProfileError::Unknown { name: name.to_string(), transport: transport.name(), available: Profile::builtin_names(transport).join(", ") }),
        }
    }

    /// The default profile of a transport (`rfc9002` for QUIC, `linux-tcp` for TCP).
    pub fn default_for(transport: TransportKind) -> Profile {
        let name = match transport {
            TransportKind::Quic => "rfc9002",
            TransportKind::Tcp => "linux-tcp",
        };
        Profile::builtin(name, transport).expect("built-in default profiles parse")
    }

    /// The controller configuration for `cc` with datagrams/segments of `mds` bytes, or an
    /// error if this stack does not offer `cc`.
    pub fn cc_config(&self, cc: CcKind, mds: u64) -> Result<CcConfig, ProfileError> {
        if !self.cc.allowed.contains(&cc) {
            return Err(ProfileError::CcNotOffered {
                profile: self.name.clone(),
                cc: cc.name(),
                offered: self.cc.allowed.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "),
            });
        }
        let base = match self.transport {
            TransportKind::Quic => CcConfig::quic_default(cc, mds),
            TransportKind::Tcp => CcConfig::tcp_default(cc, mds),
        };
        let minimum_window = self.cc.minimum_window_bytes.unwrap_or(self.cc.minimum_window_packets * mds);
        let initial_window = match (self.cc.initial_window_bytes, self.cc.initial_window_packets) {
            (Some(bytes), _) => bytes,
            (None, Some(n)) => n * mds,
            (None, None) => base.initial_window,
        };
        Ok(CcConfig {
            initial_window,
            minimum_window,
            loss_window: match self.transport {
                TransportKind::Quic => minimum_window,
                TransportKind::Tcp => mds,
            },
            reno_beta: self.cc.reno_beta,
            cubic_beta: self.cc.cubic_beta,
            cubic_c: self.cc.cubic_c,
            fast_convergence: self.cc.fast_convergence,
            hystart: self.cc.hystart,
            hystart_rule: self.cc.hystart_rule,
            cubic_rule: self.cc.cubic_rule,
            delivery_rate_cap: self.cc.delivery_rate_cap,
            reduce_from_flight: self.cc.reduce_from_flight,
            app_limited_check: self.cc.app_limited_check,
            loss_filter: self.cc.loss_filter,
            initial_rtt: self.recovery.initial_rtt,
            reno_growth: self.cc.reno_growth,
            bbr_long_term: self.cc.bbr_long_term,
            prague_rtt_scaling: self.cc.prague_rtt_scaling,
            prague_ecn_fallback: self.cc.prague_ecn_fallback,
            ..base
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_parses_and_its_default_cc_is_allowed() {
        for (name, text) in BUILTIN {
            let p = Profile::from_toml(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&p.name, name);
            assert!(p.cc.allowed.contains(&p.cc.default), "{name}");
            assert_eq!(p.quic.is_some(), p.transport == TransportKind::Quic, "{name}");
            assert_eq!(p.tcp.is_some(), p.transport == TransportKind::Tcp, "{name}");
        }
    }

    #[test]
    fn unknown_profile_lists_the_available_ones() {
        let e = Profile::builtin("quiche", TransportKind::Quic).unwrap_err();
        assert!(e.to_string().contains("rfc9002"), "{e}");
        assert!(e.to_string().contains("aioquic") && e.to_string().contains("ngtcp2"), "{e}");
        assert!(!e.to_string().contains("linux-tcp"), "{e}");
    }

    #[test]
    fn builtin_names_are_split_by_transport() {
        assert_eq!(Profile::builtin_names(TransportKind::Quic), ["rfc9002", "aioquic", "aioquic-1.7", "ngtcp2", "ngtcp2-0.12", "picoquic-2022", "ns3-quic-2019", "mpquic-2018"]);
        assert_eq!(Profile::builtin_names(TransportKind::Tcp), ["linux-tcp", "linux-mptcp-5.15", "ns3-tcp-3.29"]);
        assert!(Profile::builtin("aioquic", TransportKind::Tcp).is_err());
    }

    #[test]
    fn aioquic_refuses_bbr_and_names_what_it_offers() {
        let p = Profile::builtin("aioquic", TransportKind::Quic).unwrap();
        let e = p.cc_config(CcKind::Bbr, 1200).unwrap_err();
        assert_eq!(e, ProfileError::CcNotOffered { profile: "aioquic".into(), cc: "bbr", offered: "newreno, cubic".into() });
        assert!(e.to_string().contains("offers: newreno, cubic"), "{e}");
        assert!(p.cc_config(CcKind::Cubic, 1200).is_ok());
    }

    #[test]
    fn aioquic_and_ngtcp2_knobs_reach_the_controller() {
        let a = Profile::builtin("aioquic", TransportKind::Quic).unwrap();
        let cfg = a.cc_config(a.cc.default, 1200).unwrap();
        assert_eq!((cfg.kind, cfg.initial_window, cfg.minimum_window), (CcKind::NewReno, 12_000, 2_400));
        assert!(!cfg.app_limited_check && !cfg.hystart);
        assert_eq!((a.pacing.factor, a.pacing.burst), (1.0, BurstRule::Aioquic));
        assert_eq!((a.recovery.rttvar_rule, a.recovery.time_threshold_floor, a.recovery.persistent_congestion), (RttVarRule::Aioquic, false, false));
        assert_eq!(a.packet.max_payload, Some(1200));

        let n = Profile::builtin("ngtcp2", TransportKind::Quic).unwrap();
        let cfg = n.cc_config(n.cc.default, 1444).unwrap();
        // No explicit initial window: RFC 9002 min(10·MDS, max(2·MDS, 14720)).
        assert_eq!((cfg.kind, cfg.initial_window), (CcKind::Cubic, 14_440));
        assert!(cfg.hystart && cfg.app_limited_check && !cfg.reduce_from_flight);
        assert_eq!(cfg.hystart_rule, HyStartRule::Ngtcp2);
        assert_eq!(a.cc_config(CcKind::Cubic, 1200).unwrap().hystart_rule, HyStartRule::Rfc9406);
        assert_eq!((n.pacing.factor, n.pacing.burst), (1.25, BurstRule::SendQuantum));
        assert!(n.cc_config(CcKind::Bbr, 1444).is_ok());
    }

    #[test]
    fn ngtcp2_0_12_is_ngtcp2_with_its_older_cubic_hystart_cap_and_windows() {
        let old = Profile::builtin("ngtcp2-0.12", TransportKind::Quic).unwrap();
        let new = Profile::builtin("ngtcp2", TransportKind::Quic).unwrap();
        let cfg = old.cc_config(old.cc.default, 1444).unwrap();
        assert_eq!((cfg.kind, cfg.initial_window, cfg.minimum_window), (CcKind::Cubic, 14_440, 2_888));
        assert_eq!((cfg.hystart, cfg.hystart_rule, cfg.cubic_rule), (true, HyStartRule::Ngtcp2V012, CubicRule::Ngtcp2V012));
        assert!(cfg.delivery_rate_cap && !cfg.app_limited_check);
        assert!(old.cc_config(CcKind::NewReno, 1444).unwrap().delivery_rate_cap);
        assert!(old.cc_config(CcKind::Bbr, 1444).is_err());
        assert_eq!((old.pacing.factor, old.pacing.burst), (1.25, BurstRule::Fixed64k));
        let q = old.quic.as_ref().unwrap();
        assert_eq!((q.initial_max_data, q.initial_max_stream_data, q.flow_control_update_fraction), (15 << 20, 6 << 20, 0.5));
        assert_eq!((&old.recovery, &old.ack, &old.packet), (&new.recovery, &new.ack, &new.packet));
        // The 1.x profile keeps RFC 9438's curve and no cap.
        let cfg = new.cc_config(CcKind::Cubic, 1444).unwrap();
        assert_eq!((cfg.cubic_rule, cfg.delivery_rate_cap), (CubicRule::Rfc9438, false));
    }

    #[test]
    fn picoquic_2022_knobs_reach_the_controller_and_the_connection() {
        let p = Profile::builtin("picoquic-2022", TransportKind::Quic).unwrap();
        // The study's four controllers; the demo's default is bbr.
        for cc in [CcKind::Bbr, CcKind::Cubic, CcKind::Fast, CcKind::NewReno] {
            assert!(p.cc_config(cc, 1440).is_ok(), "{cc:?}");
        }
        assert_eq!(p.cc.default, CcKind::Bbr);
        let cfg = p.cc_config(CcKind::Cubic, 1440).unwrap();
        // Windows in bytes whatever the datagram size: 10 and 2 times 1536.
        assert_eq!((cfg.initial_window, cfg.minimum_window, cfg.loss_window), (15_360, 3_072, 3_072));
        assert_eq!((cfg.cubic_beta, cfg.cubic_c), (0.875, 0.4));
        assert!(cfg.loss_filter && cfg.bbr_long_term && !cfg.hystart && cfg.app_limited_check);
        assert_eq!(cfg.initial_rtt, Dur::from_millis(250));
        assert_eq!((p.recovery.retransmit_timer, p.recovery.spurious_undo), (RetransmitTimer::Picoquic2022, SpuriousUndo::Picoquic2022));
        assert_eq!((p.recovery.min_rto, p.recovery.persistent_congestion), (Dur::from_millis(50), false));
        assert_eq!((p.pacing.factor, p.pacing.burst), (1.0, BurstRule::Aioquic));
        assert_eq!((p.ack.max_ack_delay, p.ack.ack_eliciting_threshold), (Dur::from_millis(10), 2));
        assert_eq!(p.packet.max_payload, Some(1440));
        let m = p.multipath.as_ref().unwrap();
        assert_eq!((m.scheduler, m.ack_path, m.failover), (SchedulerKind::Picoquic, AckPath::MinRtt, FailoverProfile::Picoquic2022));
        assert_eq!((m.abandon, m.link_events), (AbandonRule::Drain, LinkEvents::Ignore));
        // quicctx.c's initial limits, grown threefold at half use.
        let q = p.quic.as_ref().unwrap();
        assert_eq!((q.initial_max_data, q.initial_max_stream_data, q.flow_control_rule), (1 << 20, 2 << 20, FlowControlRule::Picoquic2022));
    }

    #[test]
    fn mpquic_2018_knobs_reach_the_controller_and_recovery() {
        let p = Profile::builtin("mpquic-2018", TransportKind::Quic).unwrap();
        assert_eq!(p.cc.default, CcKind::Cubic);
        assert!(p.cc_config(CcKind::NewReno, 1350).is_ok() && p.cc_config(CcKind::Bbr, 1350).is_err());
        let cfg = p.cc_config(CcKind::NewReno, 1350).unwrap();
        // Windows in packets of 1460 bytes whatever the datagram size: 32 and 2 of them.
        assert_eq!((cfg.initial_window, cfg.minimum_window, cfg.loss_window), (46_720, 2_920, 2_920));
        assert_eq!((cfg.reno_beta, cfg.cubic_beta, cfg.hystart, cfg.hystart_rule), (0.85, 0.85, true, HyStartRule::Linux));
        let r = &p.recovery;
        assert_eq!((r.packet_threshold, r.time_threshold, r.time_threshold_floor, r.persistent_congestion), (0, [9, 8], false, false));
        assert_eq!((r.retransmit_timer, r.spurious_undo), (RetransmitTimer::Mpquic2018, SpuriousUndo::None));
        assert_eq!((r.min_rto, r.initial_rto, r.max_rto, r.initial_rtt), (Dur::from_millis(200), Dur::from_millis(500), Dur::from_secs(60), Dur::from_millis(100)));
        assert!(!p.pacing.enabled);
        assert_eq!((p.ack.max_ack_delay, p.ack.ack_eliciting_threshold, p.ack.immediate_ack_on_reorder), (Dur::from_millis(25), 2, true));
        assert_eq!(p.packet.max_payload, Some(1350));
        let m = p.multipath.as_ref().unwrap();
        assert_eq!((m.scheduler, m.ack_path, m.failover, m.link_events), (SchedulerKind::MinRtt, AckPath::Same, FailoverProfile::MpQuic, LinkEvents::Ignore));
    }

    #[test]
    fn the_mpquic_2018_knobs_refuse_bad_values_in_one_line_naming_the_field() {
        let text = include_str!("../profiles/mpquic-2018.toml");
        let set = |key: &str, value: &str| {
            let line = text.lines().find(|l| l.starts_with(&format!("{key} = "))).unwrap_or_else(|| panic!("{key}"));
            text.replace(line, &format!("{key} = {value}"))
        };
        for (key, value, needle) in [
            ("min_rto", "\"0 ms\"", "recovery.min_rto must be above zero"),
            ("initial_rto", "\"0 s\"", "recovery.initial_rto must be above zero"),
            ("max_rto", "\"100 ms\"", "recovery.max_rto (100 ms) must not be below recovery.min_rto (200 ms)"),
            ("retransmit_timer", "\"mpquic\"", "unknown variant `mpquic`"),
            ("spurious_undo", "\"never\"", "unknown variant `never`"),
            ("packet_threshold", "-1", "packet_threshold"),
        ] {
            let e = Profile::from_toml(&set(key, value), "x.toml").unwrap_err().to_string();
            assert!(e.contains("x.toml") && e.contains(needle), "{key}: {e}");
            if !needle.starts_with("unknown") && key != "packet_threshold" {
                assert_eq!(e.lines().count(), 1, "{e}");
            }
        }
        // The floors hold only for the timer that uses them.
        let other = set("retransmit_timer", "\"rfc9002\"").replace("min_rto = \"200 ms\"", "min_rto = \"0 ms\"");
        assert!(Profile::from_toml(&other, "x.toml").is_ok());
        // No packet threshold and no undo are quic settings.
        let tcp = include_str!("../profiles/linux-tcp.toml");
        let e = Profile::from_toml(&tcp.replace("packet_threshold = 3 ", "packet_threshold = 0 "), "x.toml").unwrap_err().to_string();
        assert!(e.contains("recovery.packet_threshold = 0 (no packet threshold) is a quic setting"), "{e}");
        let e = Profile::from_toml(&tcp.replace("[recovery]\n", "[recovery]\nspurious_undo = \"none\"\n"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("recovery.spurious_undo is a quic setting"), "{e}");
        let e = Profile::from_toml(&tcp.replace("[recovery]\n", "[recovery]\nretransmit_timer = \"mpquic-2018\"\n"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("recovery.retransmit_timer is a quic setting"), "{e}");
    }

    #[test]
    fn fast_is_offered_by_picoquic_2022_only_and_refused_naming_what_is_offered() {
        for name in ["rfc9002", "aioquic", "ngtcp2"] {
            let p = Profile::builtin(name, TransportKind::Quic).unwrap();
            let e = p.cc_config(CcKind::Fast, 1200).unwrap_err();
            assert!(e.to_string().contains("does not offer congestion control \"fast\""), "{e}");
        }
        let e = Profile::builtin("linux-mptcp-5.15", TransportKind::Tcp).unwrap().cc_config(CcKind::Fast, 1448).unwrap_err();
        assert_eq!(e.to_string(), "profile \"linux-mptcp-5.15\" does not offer congestion control \"fast\"; it offers: newreno, cubic, bbr");
    }

    #[test]
    fn linux_mptcp_5_15_is_linux_tcp_of_that_kernel_with_its_multipath_rules() {
        let p = Profile::builtin("linux-mptcp-5.15", TransportKind::Tcp).unwrap();
        let now = Profile::builtin("linux-tcp", TransportKind::Tcp).unwrap();
        assert_eq!(p.tcp.as_ref().unwrap().rmem, [4096, 131072, 6 << 20]);
        // CUBIC as Linux's bictcp_update in bytes, where linux-tcp counts whole segments (the
        // two-path point, docs/fidelity.md), and no BBRv3 (google/bbr's v3 is a later
        // kernel's); everything else as linux-tcp.
        assert_eq!((p.cc.cubic_rule, now.cc.cubic_rule), (CubicRule::Linux, CubicRule::LinuxSegments));
        assert_eq!(p.cc.allowed.iter().chain([&CcKind::Bbr3, &CcKind::Prague]).collect::<Vec<_>>(), now.cc.allowed.iter().collect::<Vec<_>>());
        let allowed = p.cc.allowed.clone();
        assert_eq!((&CcKnobs { cubic_rule: CubicRule::Linux, allowed, ..now.cc.clone() }, &p.recovery, &p.ack), (&p.cc, &now.recovery, &now.ack));
        let m = p.multipath.as_ref().unwrap();
        assert_eq!((m.failover, m.link_events, m.ack_path), (FailoverProfile::LinuxMptcp515, LinkEvents::Ignore, AckPath::Same));
        // Profiles without the table keep the transports' defaults.
        assert!(now.multipath.is_none() && Profile::default_for(TransportKind::Quic).multipath.is_none());
    }

    #[test]
    fn rate_reduction_is_a_tcp_knob_immediate_when_absent() {
        let with = |text: &str, v: &str| text.replace("[recovery]\n", &format!("[recovery]\nrate_reduction = \"{v}\"\n"));
        let tcp = include_str!("../profiles/ns3-tcp-3.29.toml");
        assert_eq!(Profile::from_toml(tcp, "x").unwrap().recovery.rate_reduction, RateReduction::Immediate);
        assert_eq!(Profile::from_toml(&with(tcp, "prr"), "x").unwrap().recovery.rate_reduction, RateReduction::Prr);
        assert_eq!(Profile::from_toml(&with(tcp, "prr-5.11"), "x").unwrap().recovery.rate_reduction, RateReduction::Prr511);
        assert!(Profile::from_toml(&with(tcp, "rate-halving"), "x").is_err());
        let quic = include_str!("../profiles/rfc9002.toml");
        let e = Profile::from_toml(&with(quic, "prr"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("x.toml") && e.contains("rate_reduction is a tcp setting"), "{e}");
    }

    #[test]
    fn accecn_knobs_are_tcp_ones_off_when_absent() {
        let tcp = include_str!("../profiles/linux-tcp.toml");
        let p = Profile::from_toml(tcp, "x").unwrap();
        assert_eq!((p.accecn, p.receiver_ecn), (false, None));
        assert!(p.cc.allowed.contains(&CcKind::Prague));
        let p = Profile::from_toml(&format!("accecn = true\nreceiver_ecn = \"rfc3168\"\n{tcp}"), "x").unwrap();
        assert_eq!((p.accecn, p.receiver_ecn), (true, Some(TcpEcn::Rfc3168)));
        assert!(Profile::from_toml(&format!("receiver_ecn = \"nonce\"\n{tcp}"), "x").is_err());
        let quic = include_str!("../profiles/rfc9002.toml");
        let e = Profile::from_toml(&format!("accecn = true\n{quic}"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("accecn and receiver_ecn are tcp settings"), "{e}");
        assert!(!Profile::builtin("linux-mptcp-5.15", TransportKind::Tcp).unwrap().cc.allowed.contains(&CcKind::Prague));
    }

    #[test]
    fn quic_only_knobs_are_refused_in_a_tcp_profile() {
        let tcp = include_str!("../profiles/linux-tcp.toml");
        let with = |line: &str, table: &str| tcp.replace(&format!("[{table}]\n"), &format!("[{table}]\n{line}\n"));
        let e = Profile::from_toml(&with("loss_filter = true", "cc"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("x.toml") && e.contains("loss_filter"), "{e}");
        let e = Profile::from_toml(&with("bbr_long_term = true", "cc"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("cc.bbr_long_term counts losses one by one"), "{e}");
        let e = Profile::from_toml(&with("spurious_undo = \"picoquic-2022\"", "recovery"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("recovery.spurious_undo is a quic setting"), "{e}");
        let e = Profile::from_toml(&with("retransmit_timer = \"picoquic-2022\"", "recovery"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("retransmit_timer is a quic setting"), "{e}");
        let e = Profile::from_toml(&with("ack_delay = \"1 ms\"", "ack"), "x.toml").unwrap_err().to_string();
        assert!(e.contains("ack.ack_delay is a quic setting"), "{e}");
        let timer_only = tcp.replace("ack_eliciting_threshold = 2 ", "ack_eliciting_threshold = 0 ");
        let e = Profile::from_toml(&timer_only, "x.toml").unwrap_err().to_string();
        assert!(e.contains("ack.ack_eliciting_threshold = 0"), "{e}");
        let mp = |ack: &str, sched: &str| {
            format!("{tcp}\n[multipath]\nscheduler = \"{sched}\"\nack_path = \"{ack}\"\nfailover = \"linux-mptcp\"\nabandon = \"requeue\"\nlink_events = \"react\"\n")
        };
        let fast = tcp.replace("allowed = [\"newreno\", \"cubic\", \"bbr\", \"bbr3\", \"prague\"]", "allowed = [\"newreno\", \"cubic\", \"bbr\", \"bbr3\", \"prague\", \"fast\"]");
        assert!(Profile::from_toml(&fast, "x.toml").unwrap_err().to_string().contains("a tcp profile cannot offer it"));
        assert!(Profile::from_toml(&mp("same", "minrtt"), "x").is_ok());
        assert!(Profile::from_toml(&mp("min_rtt", "minrtt"), "x").unwrap_err().to_string().contains("ack_path"));
        assert!(Profile::from_toml(&mp("same", "picoquic"), "x").unwrap_err().to_string().contains("scheduler"));
    }
}
