//! The scenario file schema: the single source of truth for what a scenario may contain.
//!
//! Every struct refuses unknown keys. Quantities are typed values parsed by
//! `multiconn_core::units` ("20 Mbit/s", "10 ms", "100 MB", "100 packets", "1 %"); model
//! choices that need more than one value are tables tagged by `model`.

use multiconn_core::units::{Probability, QueueLimit};
use multiconn_cc::CoupledKind;
use multiconn_core::{Bytes, Dur, Rate};
use multiconn_multipath::{LinkReaction, PathEvent};
use multiconn_transport::{AckPath, FailoverProfile, SchedulerKind, SchedulerOptions};
pub use crate::messages::MessageKind;
use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: Option<String>,
    #[serde(default)]
    pub run: RunSection,
    #[serde(default)]
    pub link: Vec<LinkSection>,
    #[serde(default)]
    pub flow: Vec<FlowSection>,
    #[serde(default)]
    pub split: Vec<SplitSection>,
    #[serde(default)]
    pub cell: Vec<CellSection>,
    /// Which flows the fairness indices cover (default: every flow that runs).
    pub fairness: Option<FairnessSection>,
    #[cfg(feature = "test-elements")]
    #[serde(default)]
    pub wire: Vec<WireSection>,
}

/// An LTE cell: one eNB node and its UEs, each a node at a distance; routes cross it by name
/// between the eNB and a UE (see docs/lte-cell.md). Absent values are the cell study's.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellSection {
    pub name: String,
    /// The eNB's node.
    pub enb: String,
    pub ues: Vec<CellUeSection>,
    /// The distance of every UE that gives neither `distance_m` nor `trajectory`, m (so that
    /// one `--set cell.<name>.distance_m` moves them all).
    pub distance_m: Option<f64>,
    /// 6, 15, 25, 50, 75 or 100 (100).
    pub bandwidth_rb: Option<u16>,
    /// `pf`, `rr` or `maxci` (`pf`).
    pub scheduler: Option<String>,
    /// `rayleigh` (flat), `rayleigh_per_rb`, `epa`, `eva`, `etu` (TS 36.104 tapped delay lines)
    /// or `none` (`rayleigh`).
    pub fading: Option<String>,
    /// Maximum Doppler shift, Hz (5.89: 3 km/h at 2.12 GHz).
    pub doppler_hz: Option<f64>,
    /// A line of sight: Rician fading with this K-factor in dB over `rayleigh` or
    /// `rayleigh_per_rb` scattering (absent: Rayleigh).
    pub rician_k_db: Option<f64>,
    /// RLC transmission buffer per UE and direction (512 kB = 524 288 B).
    pub rlc_buffer: Option<Bytes>,
    /// RLC UM t-Reordering (100 ms).
    pub t_reordering: Option<Dur>,
    /// The control loop's delays: `ideal` (none) or `lena` (ns-3 LENA's: downlink TBs on air
    /// 2 TTIs after scheduling, the uplink through buffer status reports and grants) (`ideal`).
    pub timing: Option<String>,
    /// How the uplink's MCS is picked: `measured` (the MCS meeting the AMC target at the part's
    /// SINR in that TTI) or `lena` (LENA's: the worst RB of the last SRS, every 40 ms, through
    /// the Shannon gap) (`measured`).
    pub uplink_mcs: Option<String>,
    pub enb_power_dbm: Option<f64>,
    pub ue_power_dbm: Option<f64>,
    pub enb_noise_figure_db: Option<f64>,
    pub ue_noise_figure_db: Option<f64>,
    /// Log-distance path loss: exponent (3) and loss at 1 m (46.6777 dB).
    pub pathloss_exponent: Option<f64>,
    pub pathloss_reference_db: Option<f64>,
    /// Any other path-loss model of `multiconn_radio::pathloss`: `{ model = "uma", sight =
    /// "los" }` (free_space, log_distance, uma, umi, rma, cost231_hata); replaces the two above.
    pub pathloss: Option<multiconn_radio::pathloss::PathLoss>,
}

/// A UE of a cell.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellUeSection {
    /// Its node.
    pub node: String,
    /// Its distance to the eNB, m (or a `trajectory`).
    pub distance_m: Option<f64>,
    /// A radial trajectory instead of a fixed distance.
    pub trajectory: Option<TrajectorySection>,
}

/// A UE's distance from the eNB moving linearly from `start_m` to `end_m` at `speed`, then
/// staying at `end_m`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectorySection {
    pub start_m: f64,
    pub end_m: f64,
    /// `"10 m/s"` or `"36 km/h"`.
    pub speed: multiconn_core::Speed,
}

/// Test builds only (feature `test-elements`): a fixed-delay wire between two nodes, named in
/// routes like a link. Both directions hold every packet `delay`; no rate limit, no loss.
#[cfg(feature = "test-elements")]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireSection {
    pub name: String,
    pub between: [String; 2],
    pub delay: Dur,
}

/// `[fairness]`: the flows Jain's index and the normalised fairness cover.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FairnessSection {
    /// Flow names (at least one; each an enabled flow of the scenario).
    pub flows: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Time limit of the run.
    pub duration: Option<Dur>,
    /// Default master seed (the command line's `--seed` wins).
    pub seed: Option<u64>,
    /// Width of the time-series bins (default 100 ms).
    pub bin: Option<Dur>,
    /// Start of the steady-state window: flows also report their goodput from then on
    /// (`steady_goodput_mbps`); a multiple of `bin`.
    pub measure_from: Option<Dur>,
    /// Packet captures (docs/pcap.md): `true` for every flow, or a filter naming flows
    /// (`"bulk"`, `"flow:bulk"`) and links (`"link:bottleneck"`).
    pub pcap: Option<PcapSetting>,
    /// The largest capture file, in MB (10^6 bytes; default 64): writing stops there.
    pub pcap_max_mb: Option<f64>,
}

/// `run.pcap`: on or off, or what to capture.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged, expecting = "true, false, or a list of names such as [\"bulk\", \"link:bottleneck\"]")]
pub enum PcapSetting {
    /// Every flow, or none.
    On(bool),
    /// Flows (`"name"`, `"flow:name"`) and links (`"link:name"`).
    Only(Vec<String>),
}

/// A bidirectional link between two nodes. The top-level parameters apply to both
/// directions; `forward` (first node to second) and `reverse` override them per direction.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSection {
    pub name: String,
    pub between: [String; 2],
    pub rate: Option<RateSpec>,
    pub delay: Option<DelaySpec>,
    pub queue: Option<QueueSpec>,
    pub loss: Option<LossSpec>,
    pub aqm: Option<AqmSpec>,
    pub down: Option<Vec<[Dur; 2]>>,
    /// Instants at which the link's queue disciplines are replaced (`tc qdisc replace`): every
    /// packet waiting, in transmission or propagating on it is dropped.
    pub replaced: Option<Vec<Dur>>,
    pub forward: Option<DirectionSection>,
    pub reverse: Option<DirectionSection>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionSection {
    pub rate: Option<RateSpec>,
    pub delay: Option<DelaySpec>,
    pub queue: Option<QueueSpec>,
    pub loss: Option<LossSpec>,
    pub aqm: Option<AqmSpec>,
    pub down: Option<Vec<[Dur; 2]>>,
    pub replaced: Option<Vec<Dur>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Udp,
    Tcp,
    Quic,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
            Transport::Quic => "quic",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// As much as the transport (or, for UDP, the first link) accepts.
    Bulk,
    /// Constant bit rate.
    Cbr,
    /// Requests and responses over several streams (TCP, QUIC).
    Requests,
    /// Timestamped messages from periodic sources, one stream each (QUIC): `[[flow.messages]]`.
    Messages,
}

impl AppKind {
    pub fn name(self) -> &'static str {
        match self {
            AppKind::Bulk => "bulk",
            AppKind::Cbr => "cbr",
            AppKind::Requests => "requests",
            AppKind::Messages => "messages",
        }
    }
}

/// Which end of a TCP or QUIC connection sends the application data: the data always goes
/// from the flow's `from` node to its `to` node, and `direction` says which of them opened
/// the connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowDirection {
    /// A download: `to` is the client, which connects and requests; `from` the server,
    /// which sends.
    #[default]
    Down,
    /// An upload: `from` is the client, which connects and sends (a vehicle sending up to a
    /// server); `to` the server, which receives.
    Up,
}

impl FlowDirection {
    pub fn name(self) -> &'static str {
        match self {
            FlowDirection::Down => "down",
            FlowDirection::Up => "up",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSection {
    pub name: String,
    /// `false`: the flow is checked like the others but not run (default true).
    pub enabled: Option<bool>,
    pub from: String,
    pub to: String,
    pub transport: Transport,
    pub app: AppKind,
    /// TCP/QUIC: whether the data sender (`from`) is the connection's server (`down`, the
    /// default) or its client (`up`).
    pub direction: Option<FlowDirection>,
    /// CBR rate.
    pub rate: Option<Rate>,
    /// Size on the wire (default 1500 B).
    pub packet_size: Option<Bytes>,
    /// Payload bytes to transfer; none = unlimited.
    pub size: Option<Bytes>,
    pub start: Option<Dur>,
    pub stop: Option<Dur>,
    /// Link names in order; default: the one link between `from` and `to`.
    pub route: Option<Vec<String>>,
    /// A multipath flow's paths (quic): 2 to 8 routes, each written like `route`; path 0
    /// carries the handshake. Instead of `route`.
    pub paths: Option<Vec<Vec<String>>>,
    /// How a multipath flow uses its paths; needs `paths` (which alone takes the defaults).
    pub multipath: Option<MultipathSection>,
    /// TCP/QUIC congestion control: newreno, cubic or bbr (default: the profile's).
    pub cc: Option<String>,
    /// TCP/QUIC implementation profile: a built-in name or a path to a profile TOML file.
    pub profile: Option<String>,
    /// QUIC: resume a session and send the request as 0-RTT data.
    pub resume: Option<bool>,
    /// QUIC: the client presents an address-validation token (no anti-amplification limit).
    pub address_token: Option<bool>,
    /// QUIC: write a qlog file per endpoint.
    pub qlog: Option<bool>,
    /// TCP/QUIC: use ECN (RFC 3168 §6.1, RFC 9000 §13.4) at both ends (default: the
    /// profile's, off for every built-in profile).
    pub ecn: Option<bool>,
    /// app = "requests": how many requests, how many outstanding at once, and their sizes.
    pub requests: Option<u32>,
    pub parallel: Option<u32>,
    pub request_size: Option<Bytes>,
    pub response_size: Option<Bytes>,
    /// The receiving host (the `to` node) of a TCP/QUIC flow.
    pub receiver: Option<ReceiverSection>,
    /// app = "messages": the message sources, one stream each.
    pub messages: Option<Vec<MessageSourceSection>>,
    /// How `multiconn emulate` runs the flow with a real stack (the simulator ignores it).
    pub emulate: Option<EmulateSection>,
}

/// `[flow.emulate]`: the real stack the emulator starts for a flow, or the user's own
/// commands (docs/emulator.md).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmulateSection {
    /// kernel-tcp, kernel-mptcp, ngtcp2, aioquic, tquic or command (default: from the
    /// transport, the paths and the profile).
    pub stack: Option<String>,
    /// stack = "command": the program the `from` node runs (placeholders in {braces}).
    pub server: Option<String>,
    /// stack = "command": the program the `to` node runs; the flow ends when it exits.
    pub client: Option<String>,
}

/// `[[flow.messages]]`: one periodic message source of an app = "messages" flow (seed 004
/// §7.2.3). Absent values take the kind's defaults: priority = 1200 B every 100 ms, packed
/// first, urgent, redundant, 100 ms deadline; background = 12500 B chunks at `rate`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageSourceSection {
    pub kind: MessageKind,
    /// Default: the kind's name (names must be unique within the flow).
    pub name: Option<String>,
    pub size: Option<Bytes>,
    /// Time between messages; or `rate`, from which the interval follows (size · 8 / rate).
    pub interval: Option<Dur>,
    pub rate: Option<Rate>,
    /// First message this long after the sending application can first send (default 0).
    pub start: Option<Dur>,
    /// Stop after this many messages.
    pub count: Option<u64>,
    /// Stop writing this long after the first message.
    pub duration: Option<Dur>,
    /// Packing order: lower first (default: priority 0, background 1).
    pub priority: Option<u8>,
    /// Priority data in seed 004's sense: with the multipath option `priority_ignores_cwnd`
    /// not held back by a path's congestion window (default: true for priority).
    pub urgent: Option<bool>,
    /// Sent on every usable path by the selective redundant scheduler (default: true for
    /// priority).
    pub redundant: Option<bool>,
    /// For the summary's reliability P(OWD < deadline) (default: 100 ms for priority).
    pub deadline: Option<Dur>,
    /// Obsolete data (seed 004's C1): a message not acknowledged this long after it was
    /// written is abandoned (its stream reset: never sent again, not waited for).
    pub lifetime: Option<Dur>,
    /// Obsolete data: a message is abandoned when the source writes its next one.
    pub superseded: Option<bool>,
    /// Each message on a stream of its own (implied by `lifetime` and `superseded`).
    pub stream_per_message: Option<bool>,
}

/// `[flow.multipath]`: the scheduler and the rules a multipath connection follows. Names are
/// the models' own (`multiconn_multipath`, `multiconn_cc`), so the error for an unknown one
/// lists the allowed names.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultipathSection {
    /// minrtt (default), roundrobin, redundant, selective_redundant, blest, ecf, picoquic,
    /// tquic_redundant (the last two quic only).
    pub scheduler: Option<SchedulerKind>,
    /// The path acknowledgements take: "same" (default) or "fastest".
    pub ack_path: Option<AckPath>,
    /// Whose path-failure rules: "mp-quic" (default for quic), "picoquic", "xquic",
    /// "linux-mptcp" (default for tcp).
    pub failover: Option<FailoverProfile>,
    /// Coupled congestion control over the paths: "lia", "olia", "balia", "wvegas" or
    /// "westwood"; absent: each path has its own controller (`cc`).
    pub coupled: Option<CoupledKind>,
    /// `[flow.multipath.options]`: the scheduler knobs (`SchedulerOptions`; absent keys take
    /// their defaults).
    pub options: Option<SchedulerOptions>,
    /// The client's path manager schedule (quic): `[{ at = "3 s", path = 1, action =
    /// "abandon" }, ...]`, actions "open", "abandon", "backup", "available", times from the
    /// start of the run. A path whose first entry is "open" starts closed; the others are open
    /// from the start.
    pub schedule: Option<Vec<PathEvent>>,
    /// What the client's path manager does when a path's link goes down (quic): "none"
    /// (default: the failover profile alone reacts), "abandon_reopen" (abandon it, open a new
    /// path ID when the link is back) or "standby" (backup while down).
    pub on_link_down: Option<LinkReaction>,
    /// How long the path manager takes to notice a link going down or coming back (default 0).
    pub detect_delay: Option<Dur>,
}

/// The receiving host: its UDP socket buffer (QUIC), TCP receive buffer and application reader.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiverSection {
    /// SO_RCVBUF requested by the application (the kernel doubles it, up to 2·rmem_max).
    pub udp_rcvbuf: Option<Bytes>,
    /// net.core.rmem_default (212992).
    pub rmem_default: Option<Bytes>,
    /// net.core.rmem_max (212992).
    pub rmem_max: Option<Bytes>,
    /// Memory charged per datagram instead of the skb truesize model.
    pub truesize: Option<Bytes>,
    /// How fast the application reads datagrams (IP bytes per second); default: at once.
    pub read_rate: Option<Rate>,
    /// Application time per datagram read.
    pub read_cost: Option<Dur>,
    /// net.ipv4.tcp_rmem: [min, default, max].
    pub tcp_rmem: Option<[Bytes; 3]>,
}

/// A PDCP split bearer (dual connectivity): two links joining the same two nodes, used as one
/// hop of a route. The side a route enters numbers each packet and sends it over one leg or
/// both; the other side reorders (TS 38.323 §5.2.2) and passes packets on in order. The
/// opposite direction of a flow crossing it takes the `uplink` leg alone.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitSection {
    pub name: String,
    pub legs: [String; 2],
    /// The leg for the opposite direction (default: the first leg).
    pub uplink: Option<String>,
    /// How packets are spread over the legs (default: batch of 100, half on each leg).
    pub policy: Option<PolicySection>,
    /// The opposite direction (a flow's ACKs and requests) crosses the split through PDCP
    /// entities of its own with this policy, instead of the `uplink` leg alone.
    pub reverse_policy: Option<PolicySection>,
    /// "nr" (default) or "lte": the receiving algorithm and the header size.
    pub rat: Option<multiconn_pdcp::Rat>,
    /// PDCP SN length in bits: NR 12 or 18 (default 18), LTE 7, 12, 15 or 18.
    pub sn_length: Option<u8>,
    /// t-Reordering: a duration (default 200 ms) or "infinity".
    pub t_reordering: Option<TReordering>,
    /// In-order delivery at the receiving side (default true).
    pub reordering: Option<bool>,
    /// Time each side (the numbering proxy and the reordering proxy) holds a packet.
    pub processing_delay: Option<Dur>,
    /// Each proxy's time per packet: the packets it forwards leave at least this far apart
    /// (default 0: a burst the reordering releases leaves at one instant).
    pub proxy_packet_time: Option<Dur>,
    /// PDUs lost on a leg (its random loss: Xn/X2 transport loss) are reported in the next
    /// delivery status report and resent over the other leg (default false).
    pub retransmit_lost: Option<bool>,
    /// Period of the legs' delivery status reports (DDDS) for `retransmit_lost` (default
    /// 10 ms; the adaptive policy's `feedback` sets the same period).
    pub ddds_period: Option<Dur>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum PolicySection {
    /// `size` packets per batch; the first `share` of each batch on the first leg.
    Batch {
        size: u32,
        #[serde(default)]
        share: Option<Probability>,
    },
    /// One packet per leg in turn.
    Alternate {},
    /// Per packet, interleaved: `share` of the packets on the first leg.
    Ratio { share: Probability },
    /// Every packet on both legs, except during the `off` intervals ([from, until] from the
    /// start of the run): there a MAC CE has deactivated duplication, packets take the first
    /// leg, and at each deactivation the copies waiting on the second leg are discarded.
    Duplicate {
        #[serde(default)]
        off: Option<Vec<[Dur; 2]>>,
    },
    /// Each packet on the leg that the legs' periodic feedback favours.
    Adaptive {
        #[serde(default)]
        signal: Option<multiconn_pdcp::AdaptiveSignal>,
        /// Feedback period (default 10 ms).
        #[serde(default)]
        feedback: Option<Dur>,
    },
    /// The uplink split of TS 38.323 §5.2.1: everything on the `primary` leg (a leg's name;
    /// default the first) while the data volume pending in PDCP and both legs is below
    /// `threshold` (ul-DataSplitThreshold; absent: infinity, the primary path only), either
    /// leg above it.
    Threshold {
        #[serde(default)]
        primary: Option<String>,
        #[serde(default)]
        threshold: Option<Bytes>,
    },
}

/// A t-Reordering value: a duration or "infinity".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TReordering {
    After(Dur),
    Infinity,
}

impl<'de> Deserialize<'de> for TReordering {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TReordering;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as \"200 ms\", or \"infinity\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TReordering, E> {
                if s.trim().eq_ignore_ascii_case("infinity") {
                    return Ok(TReordering::Infinity);
                }
                Dur::deserialize(de::value::StrDeserializer::<E>::new(s)).map(TReordering::After)
            }
        }
        d.deserialize_any(V)
    }
}

/// A queue limit: packets, bytes, or a multiple of the direction's bandwidth-delay product
/// (`"1.5 BDP"`: 1.5 × rate × twice the one-way delay), which resolution turns into bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueSpec {
    Limit(QueueLimit),
    Bdp(f64),
}

/// `"1.5 BDP"` as a [`QueueSpec::Bdp`], anything else as a [`QueueLimit`].
pub fn parse_queue_spec(s: &str) -> Result<QueueSpec, String> {
    let t = s.trim();
    // The last three bytes, when they end a character (the text may end in a multi-byte one).
    let tail = t.len().checked_sub(3).and_then(|cut| Some((t.get(..cut)?, t.get(cut..)?)));
    if let Some((number, _)) = tail.filter(|(_, unit)| unit.eq_ignore_ascii_case("bdp")) {
        let number = number.trim();
        return match number.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(QueueSpec::Bdp(v)),
            _ => Err(format!("invalid queue limit \"{s}\": a multiple of the bandwidth-delay product is a positive number before BDP, e.g. \"1.5 BDP\"")),
        };
    }
    multiconn_core::units::parse_queue_limit(s).map(QueueSpec::Limit).map_err(|e| {
        // An unreadable limit also lists the BDP form; a readable one out of range is just that.
        if e.0.starts_with("invalid queue limit") {
            format!("{e}, or a multiple of the bandwidth-delay product (\"1.5 BDP\")")
        } else {
            e.0
        }
    })
}

impl<'de> Deserialize<'de> for QueueSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QueueSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a queue limit such as \"100 packets\", \"150 kB\" or \"1.5 BDP\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<QueueSpec, E> {
                parse_queue_spec(s).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<QueueSpec, E> {
                QueueLimit::deserialize(de::value::F64Deserializer::<E>::new(v)).map(QueueSpec::Limit)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<QueueSpec, E> {
                QueueLimit::deserialize(de::value::I64Deserializer::<E>::new(v)).map(QueueSpec::Limit)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<QueueSpec, E> {
                QueueLimit::deserialize(de::value::U64Deserializer::<E>::new(v)).map(QueueSpec::Limit)
            }
        }
        d.deserialize_any(V)
    }
}

/// `"40 Mbit/s"` or a table tagged by `model`.
#[derive(Debug, Clone, PartialEq)]
pub enum RateSpec {
    Fixed(Rate),
    Trace(RateTrace),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum RateTrace {
    /// Mahimahi delivery-opportunity file.
    Mahimahi { file: String },
    /// A UCC G-NetTrack CSV (`Timestamp`; rate column in kbit/s).
    Ucc {
        file: String,
        #[serde(default = "default_ucc_column")]
        column: String,
    },
    /// Any per-second bitrate CSV.
    Csv {
        file: String,
        column: String,
        /// What one unit of the column is: a unit (`"Mbit/s"`) or a rate (`"1 Mbit/s"`,
        /// `"125 kB/s"`).
        #[serde(deserialize_with = "rate_unit")]
        unit: Rate,
        #[serde(default)]
        time_column: Option<String>,
        #[serde(default)]
        time_format: Option<TimeFormat>,
    },
}

/// A csv trace's `unit`: a rate, or a bare unit meaning one of it ("Mbit/s" = "1 Mbit/s").
fn rate_unit<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Rate, D::Error> {
    use serde::de::Error;
    let text = String::deserialize(d)?;
    multiconn_core::units::parse_rate(&text)
        .or_else(|_| multiconn_core::units::parse_rate(&format!("1 {}", text.trim())))
        .map_err(|_| D::Error::custom(format!("unit = \"{text}\": expected a rate unit such as \"Mbit/s\" or \"kbit/s\", or a rate such as \"1 Mbit/s\"")))
}

fn default_ucc_column() -> String {
    "DL_bitrate".into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeFormat {
    Seconds,
    Gnettrack,
    Row,
}

/// `"10 ms"` or a table tagged by `model`.
#[derive(Debug, Clone, PartialEq)]
pub enum DelaySpec {
    Constant(Dur),
    Model(DelayTable),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum DelayTable {
    Constant {
        value: Dur,
    },
    Normal {
        mean: Dur,
        cv: f64,
        #[serde(default)]
        reorder: bool,
    },
    Empirical {
        file: String,
        #[serde(default)]
        reorder: bool,
    },
    Series {
        file: String,
        /// `linear` (default: the delay glides between the points) or `step` (each point's
        /// delay holds until the next, as `tc … netem delay` changes it).
        #[serde(default)]
        interpolation: SeriesInterpolation,
        /// Let a packet overtake the ones before it when the delay falls (netem's time-ordered
        /// queue); default false (a delay line).
        #[serde(default)]
        reorder: bool,
    },
}

/// How a delay series goes from one point to the next (`multiconn_link::delay::Interpolation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesInterpolation {
    #[default]
    Linear,
    Step,
}

/// `"1 %"`, `0.01`, or a table tagged by `model`.
#[derive(Debug, Clone, PartialEq)]
pub enum LossSpec {
    Bernoulli(Probability),
    Model(LossTable),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossTable {
    Bernoulli {
        p: Probability,
    },
    GilbertElliott {
        p: Probability,
        r: Probability,
        #[serde(default)]
        loss_good: Option<Probability>,
        #[serde(default)]
        loss_bad: Option<Probability>,
    },
    Trace {
        file: String,
    },
}

/// A link direction's queue discipline: a name with the defaults, or a table with its
/// parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum AqmSpec {
    Kind(AqmKind),
    Model(AqmTable),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AqmKind {
    /// Drop-tail (no AQM), e.g. to switch off a link-wide discipline in one direction.
    #[serde(alias = "droptail", alias = "drop_tail")]
    None,
    Codel,
    FqCodel,
    Pie,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmTable {
    Codel {
        target: Option<Dur>,
        interval: Option<Dur>,
        ecn: Option<bool>,
    },
    FqCodel {
        target: Option<Dur>,
        interval: Option<Dur>,
        ecn: Option<bool>,
        quantum: Option<Bytes>,
        flows: Option<u32>,
        drop_batch: Option<u32>,
    },
    Pie {
        target: Option<Dur>,
        tupdate: Option<Dur>,
        alpha: Option<f64>,
        beta: Option<f64>,
        max_burst: Option<Dur>,
        ecn: Option<bool>,
        mark_ecn_th: Option<Probability>,
    },
}

/// Deserializes "a scalar with a unit, or a table tagged by `model`".
macro_rules! scalar_or_table {
    ($ty:ident, $scalar:ident, $scalar_ty:ty, $table:ident, $table_ty:ty, $expecting:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        <$scalar_ty>::deserialize(de::value::StrDeserializer::<E>::new(s)).map($ty::$scalar)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        <$scalar_ty>::deserialize(de::value::F64Deserializer::<E>::new(v)).map($ty::$scalar)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<$ty, A::Error> {
                        <$table_ty>::deserialize(MapAccessDeserializer::new(map)).map($ty::$table)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

scalar_or_table!(RateSpec, Fixed, Rate, Trace, RateTrace,
    "a rate such as \"20 Mbit/s\" or a table { model = \"mahimahi\" | \"ucc\" | \"csv\", file = ... }");
scalar_or_table!(DelaySpec, Constant, Dur, Model, DelayTable,
    "a delay such as \"10 ms\" or a table { model = \"normal\" | \"empirical\" | \"series\" | \"constant\", ... }");
scalar_or_table!(AqmSpec, Kind, AqmKind, Model, AqmTable,
    "a queue discipline \"codel\", \"fq_codel\", \"pie\" or \"none\", or a table { model = \"codel\" | \"fq_codel\" | \"pie\", ... }");
scalar_or_table!(LossSpec, Bernoulli, Probability, Model, LossTable,
    "a loss probability such as 0.01 or \"1 %\", or a table { model = \"gilbert_elliott\" | \"trace\" | \"bernoulli\", ... }");
