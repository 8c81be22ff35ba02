//! The scenario file schema: the single source of truth for what a scenario may contain.
//!
//! Every struct refuses unknown keys. Quantities are typed values parsed by
//! `multiconn_core::units` ("20 Mbit/s", "10 ms", "100 MB", "100 packets", "1 %"); model
//! choices that need more than one value are tables tagged by `model`.

use multiconn_core::units::{Probability, QueueLimit};
use multiconn_cc::CoupledKind;
use multiconn_core::{Bytes, Dur, Rate};
use multiconn_multipath::{LinkReaction, PathEvent};
use multiconn_transport::{AckPath, DatagramPriority, FailoverProfile, SchedulerKind, SchedulerOptions};
pub use crate::messages::MessageKind;
use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// A scenario file as written: its `name`, `[run]` and the arrays of tables `[[link]]`,
/// `[[flow]]`, `[[split]]` and `[[cell]]`, before resolution checks what the schema cannot.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// The scenario's name (default: the file name without its extension).
    pub name: Option<String>,
    /// `[run]`: duration, seed, time-series bins, steady-state window and packet captures.
    #[serde(default)]
    pub run: RunSection,
    /// `[[link]]`: the links joining two nodes each.
    #[serde(default)]
    pub link: Vec<LinkSection>,
    /// `[[flow]]`: the flows, each a UDP, TCP or QUIC transfer from one node to another.
    #[serde(default)]
    pub flow: Vec<FlowSection>,
    /// `[[split]]`: the PDCP split bearers, each joining two links into one hop (dual
    /// connectivity).
    #[serde(default)]
    pub split: Vec<SplitSection>,
    /// `[[cell]]`: the LTE cells (docs/lte-cell.md).
    #[serde(default)]
    pub cell: Vec<CellSection>,
    /// Which flows the fairness indices cover (default: every flow that runs).
    pub fairness: Option<FairnessSection>,
    /// `[[wire]]`: fixed-delay wires (test builds only).
    #[cfg(feature = "test-elements")]
    #[serde(default)]
    pub wire: Vec<WireSection>,
}

/// An LTE cell: one eNB node and its UEs, each a node at a distance; routes cross it by name
/// between the eNB and a UE (see docs/lte-cell.md). Absent values are the cell study's.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellSection {
    /// The cell's name, given in routes like a link's (letters, digits, `_` and `-`; unique among
    /// links, splits and cells).
    pub name: String,
    /// The eNB's node.
    pub enb: String,
    /// The UEs (at least one): `[{ node = "ue1", distance_m = 250 }, ...]`.
    pub ues: Vec<CellUeSection>,
    /// The distance of every UE that gives neither `distance_m` nor `trajectory`, m (so that
    /// one `--set cell.<name>.distance_m` moves them all).
    pub distance_m: Option<f64>,
    /// The radio: `lte` (36.213's 1 ms TTI, FDD) or `nr` (a 5G NR carrier: numerology, TDD
    /// pattern, 38.214's tables) (`lte`).
    pub rat: Option<String>,
    /// LTE: 6, 15, 25, 50, 75 or 100 (100).
    pub bandwidth_rb: Option<u16>,
    /// NR: the channel bandwidth, MHz, one of TS 38.101's for the numerology and frequency
    /// range (100).
    pub bandwidth_mhz: Option<u32>,
    /// The carrier frequency, MHz: the path loss's frequency, and for NR the frequency range
    /// (LTE 2120, NR 3500).
    pub carrier_mhz: Option<f64>,
    /// NR: μ, 0–3 (subcarrier spacing 15·2^μ kHz, slot 1/2^μ ms) (1).
    pub numerology: Option<u8>,
    /// NR: `"FDD"` or a TDD pattern of `D`, `S` and `U` slots repeated (`"DDDSU"`).
    pub tdd_pattern: Option<String>,
    /// NR: the special slot's downlink, guard and uplink symbols, `"D:G:U"` summing to 14
    /// (`"10:2:2"`).
    pub special_slot: Option<String>,
    /// NR: `qam256` (TS 38.214 Table 5.1.3.1-2) or `qam64` (Table 5.1.3.1-1), with the CQI
    /// table that goes with it (`qam256`).
    pub mcs_table: Option<String>,
    /// NR: MIMO layers of a downlink transport block, 1–4 (1).
    pub layers: Option<u8>,
    /// NR: DMRS REs per PRB of a transport block (12: one DMRS symbol; 36: the RRC default of
    /// two additional positions) (12).
    pub dmrs_re_per_prb: Option<u8>,
    /// NR: PDCCH symbols at the start of a downlink slot, 1–3 (2).
    pub coreset_symbols: Option<u8>,
    /// NR: HARQ processes per UE and direction, 1–16 (16).
    pub harq_processes: Option<u8>,
    /// NR: the smallest PDSCH-to-HARQ-ACK offset K1, slots (1).
    pub k1_slots: Option<u8>,
    /// NR: the smallest grant-to-PUSCH offset K2, slots (1).
    pub k2_slots: Option<u8>,
    /// NR: the UE's PDSCH processing time N1, symbols (TS 38.214 Table 5.3-1, capability 1:
    /// 8, 10, 17, 20 for μ 0–3).
    pub n1_symbols: Option<u8>,
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
    /// The RLC mode of every bearer: `um` (36.322 unacknowledged: reordering, no repair) or `am`
    /// (38.322 acknowledged: ARQ with status reports under HARQ; an LTE cell delivers in
    /// sequence as 36.322 AM does) (`um`).
    pub rlc: Option<String>,
    /// RLC AM t-Reassembly (35 ms).
    pub t_reassembly: Option<Dur>,
    /// RLC AM t-PollRetransmit (45 ms).
    pub t_poll_retransmit: Option<Dur>,
    /// RLC AM maxRetxThreshold: 1, 2, 3, 4, 6, 8, 16 or 32 (8).
    pub max_retx: Option<u8>,
    /// `model` (the path-loss model's `sight`) or `drawn`: each UE's line of sight drawn with TR
    /// 38.901's LOS probability at its distance, again every 50 m (UMa, UMi; 60 m RMa) it
    /// moves (`model`).
    pub los: Option<String>,
    /// A stochastic blockage of every UE's link (each its own on/off process; docs/nr-cell.md):
    /// `{ mean = "300 ms", fraction = 0.15, depth_db = 25, ramp = "30 ms" }`, every field
    /// optional (those defaults); absent: no blockage.
    pub blockage: Option<BlockageSection>,
    /// The TB error model: `{ model = "logistic", gap_db = 1, width_db = 1 }` (the default: a
    /// curve per MCS from its modulation and rate) or, on an NR cell, `{ model = "code_blocks",
    /// gap_bg1_db = 1, gap_bg2_db = 1 }` (the TB's LDPC code blocks, each from the normal
    /// approximation less its base graph's gap; docs/nr-cell.md). The link adaptation judges
    /// its CQI by the same model.
    pub bler: Option<BlerSection>,
    /// Many cells of these settings instead of one (docs/mobility.md): `{ sites = [[0, 0],
    /// [500, 0]] }` (omnidirectional cells at these x, y in m) or `{ rings = 1, isd_m = 500,
    /// sectors = 3, wrap = false }` (a hexagonal grid of sites, TR 38.901), with `height_m`
    /// (25). Its UEs move along `route`s and are handed over between the cells.
    pub layout: Option<LayoutSection>,
    /// L4S marking on every UE's RLC buffer (docs/aqm.md, "L4S marking in the RAN"): ECT(1)
    /// and CE packets marked CE by `{ model = "sojourn", step_threshold = "1 ms" }` (their wait
    /// at dequeue) or `{ model = "predicted", ramp_min_th = "1 ms", ramp_range = "4 ms",
    /// rate_window = "8 ms", rate_floor = "1 Mbit/s" }` (queued bytes ÷ the UE's recent
    /// rate, at enqueue); every field optional (those defaults). Absent: no marking.
    pub l4s_marking: Option<L4sMarkingSection>,
    /// A queue discipline above every UE's RLC transmitting entity, both directions and every
    /// cell of a layout (docs/aqm.md, "DualPI2 on a cell's RLC buffer"): `"dualpi2"` or `{ model
    /// = "dualpi2", ... }` with a link's `aqm` parameters (also `codel`, `fq_codel`, `pie`); its
    /// limit is `rlc_buffer`. Absent or `"none"`: the RLC buffer is drop-tail. Not with
    /// `l4s_marking`.
    pub aqm: Option<AqmSpec>,
    /// With a layout: how handovers are decided and carried out.
    pub handover: Option<HandoverSection>,
    /// With a layout: how UEs measure the cells.
    pub measurement: Option<MeasurementSection>,
    /// With a layout: radio link monitoring and re-establishment (`rlf = false`: none).
    pub rlf: Option<RlfSection>,
    /// With a layout: shadowing correlated along each route, `{ sigma_db = 6,
    /// decorrelation_m = 50, inter_site_correlation = 0.5 }`.
    pub shadowing: Option<ShadowingSection>,
    /// With a layout, as the second leg of a `[[split]]`: the cells are an EN-DC secondary
    /// node whose SCG is released and added again, `{ addition_rsrp_dbm = -110,
    /// release_rsrp_dbm = -118 }` (docs/mobility.md).
    pub secondary_node: Option<SecondaryNodeSection>,
    /// The control loop's delays: `ideal` (none) or `lena` (ns-3 LENA's: downlink TBs on air
    /// 2 TTIs after scheduling, the uplink through buffer status reports and grants) (`ideal`).
    pub timing: Option<String>,
    /// How the uplink's MCS is picked: `measured` (the MCS meeting the AMC target at the part's
    /// SINR in that TTI) or `lena` (LENA's: the worst RB of the last SRS, every 40 ms, through
    /// the Shannon gap) (`measured`).
    pub uplink_mcs: Option<String>,
    /// The eNB's transmit power, dBm (46).
    pub enb_power_dbm: Option<f64>,
    /// A UE's transmit power, dBm (23).
    pub ue_power_dbm: Option<f64>,
    /// The eNB receiver's noise figure, dB (5).
    pub enb_noise_figure_db: Option<f64>,
    /// A UE receiver's noise figure, dB (9).
    pub ue_noise_figure_db: Option<f64>,
    /// Log-distance path loss: exponent (3) and loss at 1 m (46.6777 dB).
    pub pathloss_exponent: Option<f64>,
    /// The log-distance loss at 1 m, dB (46.6777).
    pub pathloss_reference_db: Option<f64>,
    /// Any other path-loss model of `multiconn_radio::pathloss`: `{ model = "uma", sight =
    /// "los" }` (free_space, log_distance, uma, umi, rma, cost231_hata); replaces the two above.
    pub pathloss: Option<multiconn_radio::pathloss::PathLoss>,
}

/// A cell's L4S marking rule, tagged by `model`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum L4sMarkingSection {
    /// Mark an L4S packet at dequeue when it waited strictly longer than the step.
    Sojourn {
        /// The step threshold (1 ms, Linux DualPI2's).
        step_threshold: Option<Dur>,
    },
    /// Mark at enqueue on the predicted sojourn, with a ramp.
    Predicted {
        /// Where the mark probability starts to rise above 0 (1 ms).
        ramp_min_th: Option<Dur>,
        /// How much more predicted sojourn takes it to 1 (4 ms; 0: a step).
        ramp_range: Option<Dur>,
        /// The time constant of the UE's drained-rate average (8 ms).
        rate_window: Option<Dur>,
        /// The lowest rate estimate, so that an outage does not mark every packet (1 Mbit/s).
        rate_floor: Option<Rate>,
    },
}

/// A cell's blockage process.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockageSection {
    /// Mean duration of a blockage (300 ms).
    pub mean: Option<Dur>,
    /// Long-run share of time blocked, in (0, 1) (0.15).
    pub fraction: Option<f64>,
    /// Attenuation while fully blocked, dB (25).
    pub depth_db: Option<f64>,
    /// Time to reach the full depth and to leave it (30 ms).
    pub ramp: Option<Dur>,
}

/// A cell's TB error model, tagged by `model`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum BlerSection {
    /// A logistic curve per MCS: 10 % at the modulation's capacity for the MCS's rate plus
    /// `gap_db` (1), 50 % `width_db` (1) lower.
    Logistic {
        /// Implementation gap to the modulation's capacity at 10 % BLER, dB (1).
        gap_db: Option<f64>,
        /// SINR step from 50 % to 10 % BLER, dB (1).
        width_db: Option<f64>,
    },
    /// NR's LDPC code blocks with each base graph's gap to the normal approximation (1 dB).
    CodeBlocks {
        /// Base graph 1's gap to the normal approximation, dB (1).
        gap_bg1_db: Option<f64>,
        /// Base graph 2's gap, dB (1).
        gap_bg2_db: Option<f64>,
    },
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
    /// In a cell with a layout: where it goes, `[{ x_m = 100, y_m = 50 }, { x_m = 900, y_m = 50,
    /// speed = "72 km/h" }, { pause = "2 s" }, ...]` — a start, then moves at a speed or pauses.
    pub route: Option<Vec<WaypointSection>>,
    /// In a cell with a layout: the cell it starts in, by index (default: the best).
    pub initial_cell: Option<usize>,
}

/// One step of a UE's route: a point (the first: the start; then reached at `speed`), or a
/// `pause`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaypointSection {
    /// x, m.
    pub x_m: Option<f64>,
    /// y, m.
    pub y_m: Option<f64>,
    /// The speed to this point, `"72 km/h"` or `"20 m/s"`.
    pub speed: Option<multiconn_core::Speed>,
    /// A stop of this long instead of a point.
    pub pause: Option<Dur>,
}

/// A cell's layout of many cells.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutSection {
    /// Omnidirectional cells at these [x, y], m.
    pub sites: Option<Vec<[f64; 2]>>,
    /// A hexagonal grid's rings of sites around the centre (0: one site, 1: 7, 2: 19).
    pub rings: Option<u32>,
    /// Its inter-site distance, m (500).
    pub isd_m: Option<f64>,
    /// Sectors per site, 1 or 3 (a grid's 3, placed sites' 1); three point at 30°, 150°, 270°.
    pub sectors: Option<u32>,
    /// Wrap-around for 7 or 19 sites (false).
    pub wrap: Option<bool>,
    /// Antenna height, m (25).
    pub height_m: Option<f64>,
}

/// How handovers are decided (event A3) and carried out.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoverSection {
    /// The decision's event: `a3` (the default) or `a5`.
    pub event: Option<String>,
    /// A3 offset, dB (3).
    pub a3_offset_db: Option<f64>,
    /// A5: the serving cell below this, dBm.
    pub a5_threshold1_dbm: Option<f64>,
    /// A5: a neighbour above this, dBm.
    pub a5_threshold2_dbm: Option<f64>,
    /// Hysteresis, dB (1).
    pub hysteresis_db: Option<f64>,
    /// Time-to-trigger, one of TS 38.331's values (256 ms).
    pub time_to_trigger: Option<Dur>,
    /// From the report to the command (20 ms).
    pub preparation: Option<Dur>,
    /// The UE in no cell, command to random access done (40 ms).
    pub interruption: Option<Dur>,
    /// One-way X2/Xn delay (5 ms).
    pub x2_delay: Option<Dur>,
    /// From the UE entering the target to the path switch (20 ms).
    pub path_switch: Option<Dur>,
    /// The source forwards what the UE has not received (true).
    pub forwarding: Option<bool>,
    /// Dual active protocol stack: no interruption (false).
    pub daps: Option<bool>,
    /// Conditional handover: `true` for its defaults, or its settings (off).
    pub conditional: Option<ConditionalSection>,
}

/// Conditional handover: `true`/`false`, or its settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged, expecting = "true, false, or a table of preparation_offset_db (dB) and attempt_after_failure (true or false)")]
pub enum ConditionalSection {
    /// `true`: on with its defaults; `false`: off.
    Switch(bool),
    /// On, with these settings.
    On(ConditionalFields),
}

/// Conditional handover's settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionalFields {
    /// The preparation trigger's A3 offset, dB (0; at most `a3_offset_db`).
    pub preparation_offset_db: Option<f64>,
    /// After a radio link failure, execute to a ready candidate if it is the best cell (true).
    pub attempt_after_failure: Option<bool>,
}

/// An EN-DC secondary node's SCG release and addition.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecondaryNodeSection {
    /// Event B1's threshold: a released SCG is added in a cell above it, dBm.
    pub addition_rsrp_dbm: f64,
    /// Event A2's threshold: the SCG is released when its cell falls below it, dBm (none:
    /// only on an SCG failure).
    pub release_rsrp_dbm: Option<f64>,
}

/// How UEs measure.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasurementSection {
    /// Between RSRP samples (40 ms).
    pub period: Option<Dur>,
    /// Layer-3 filter coefficient (4).
    pub filter_coefficient: Option<u8>,
    /// The sample period the coefficient assumes (200 ms).
    pub nominal_period: Option<Dur>,
    /// Between updates of loss and interference (10 ms).
    pub link_update: Option<Dur>,
}

/// Radio link monitoring, or `false` for none.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RlfSection {
    /// `false`: no radio link failures.
    Off(bool),
    /// The monitor's settings.
    On(RlfFields),
}

/// Radio link monitoring's settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RlfFields {
    /// T310 (1000 ms).
    pub t310: Option<Dur>,
    /// N310 (1).
    pub n310: Option<u32>,
    /// N311 (1).
    pub n311: Option<u32>,
    /// Out of sync below, dB (−8).
    pub q_out_db: Option<f64>,
    /// In sync above, dB (−6).
    pub q_in_db: Option<f64>,
    /// From the failure to being served again (300 ms).
    pub reestablishment: Option<Dur>,
}

/// Shadowing along routes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShadowingSection {
    /// Standard deviation, dB.
    pub sigma_db: f64,
    /// Decorrelation distance, m (50).
    pub decorrelation_m: Option<f64>,
    /// Correlation between sites (0.5).
    pub inter_site_correlation: Option<f64>,
}

/// A UE's distance from the eNB moving linearly from `start_m` to `end_m` at `speed`, then
/// staying at `end_m`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectorySection {
    /// The distance at the start of the run, m.
    pub start_m: f64,
    /// The distance it ends at and keeps, m.
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
    /// The wire's name, given in routes like a link's.
    pub name: String,
    /// The two nodes it joins.
    pub between: [String; 2],
    /// The time every packet spends on it, in either direction.
    pub delay: Dur,
}

/// `[fairness]`: the flows Jain's index and the normalised fairness cover.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FairnessSection {
    /// Flow names (at least one; each an enabled flow of the scenario).
    pub flows: Vec<String>,
}

/// `[run]`: how long the run lasts, its seed, the time-series bins and the packet captures.
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
    /// The link's name, given in routes and `--set link.<name>.…` (letters, digits, `_` and `-`;
    /// unique).
    pub name: String,
    /// The two nodes it joins: `forward` is from the first to the second, `reverse` back.
    pub between: [String; 2],
    /// The rate of each direction (required): `"40 Mbit/s"` or a trace table (`mahimahi`, `ucc`,
    /// `csv`).
    pub rate: Option<RateSpec>,
    /// One-way propagation delay of each direction, added after serialization: `"10 ms"` or a
    /// model table (`normal`, `empirical`, `series`, `constant`) (default none).
    pub delay: Option<DelaySpec>,
    /// The queue limit of each direction (required): `"100 packets"`, a size (`"150 kB"`) or
    /// bandwidth-delay products (`"1.5 BDP"`).
    pub queue: Option<QueueSpec>,
    /// Random loss drawn as a packet enters the link: `0.01`, `"1 %"` or a model table
    /// (`gilbert_elliott`, `trace`, `bernoulli`) (default none).
    pub loss: Option<LossSpec>,
    /// Queue discipline: `"codel"`, `"fq_codel"`, `"pie"`, `"dualpi2"` or `"none"` (drop-tail, the
    /// default), or a table with its parameters (docs/aqm.md).
    pub aqm: Option<AqmSpec>,
    /// Down windows `[["10 s", "12 s"], ...]`, each [from, until) from the start of the run:
    /// waiting packets and the one in transmission are dropped (`link_down`).
    pub down: Option<Vec<[Dur; 2]>>,
    /// Instants at which the link's queue disciplines are replaced (`tc qdisc replace`): every
    /// packet waiting, in transmission or propagating on it is dropped.
    pub replaced: Option<Vec<Dur>>,
    /// `[link.forward]`: overrides for the direction from `between[0]` to `between[1]`.
    pub forward: Option<DirectionSection>,
    /// `[link.reverse]`: overrides for the direction from `between[1]` to `between[0]`.
    pub reverse: Option<DirectionSection>,
}

/// `[link.forward]` / `[link.reverse]`: one direction's own values, each replacing the link's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionSection {
    /// The direction's rate, as the link's `rate`.
    pub rate: Option<RateSpec>,
    /// The direction's delay, as the link's `delay`.
    pub delay: Option<DelaySpec>,
    /// The direction's queue limit, as the link's `queue`.
    pub queue: Option<QueueSpec>,
    /// The direction's random loss, as the link's `loss`.
    pub loss: Option<LossSpec>,
    /// The direction's queue discipline, as the link's `aqm` (`"none"` switches a link-wide one
    /// off).
    pub aqm: Option<AqmSpec>,
    /// The direction's down windows, as the link's `down`.
    pub down: Option<Vec<[Dur; 2]>>,
    /// The direction's queue replacement instants, as the link's `replaced`.
    pub replaced: Option<Vec<Dur>>,
}

/// A flow's `transport`: `"udp"`, `"tcp"` or `"quic"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Datagrams, with no connection, congestion control or retransmission.
    Udp,
    /// A TCP connection (MPTCP with `paths`).
    Tcp,
    /// A QUIC connection (Multipath QUIC with `paths`).
    Quic,
}

impl Transport {
    /// The name as written in the scenario (`"udp"`, `"tcp"`, `"quic"`).
    pub fn name(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
            Transport::Quic => "quic",
        }
    }
}

/// A flow's `app`: what the sending application writes.
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
    /// Timestamped messages from one periodic source, each a QUIC DATAGRAM frame (RFC 9221):
    /// `[flow.datagrams]`.
    Datagrams,
    /// A tunnel (quic): the packets of the flows that name it in their `tunnel` ride its QUIC
    /// DATAGRAM frames (MASQUE CONNECT-UDP, RFC 9298, for udp and quic flows; CONNECT-IP, RFC
    /// 9484, for tcp), as a 3GPP ATSSS MPQUIC proxy carries an MA PDU session's traffic.
    Tunnel,
}

impl AppKind {
    /// The name as written in the scenario (`"bulk"`, `"cbr"`, `"requests"`, `"messages"`,
    /// `"datagrams"`).
    pub fn name(self) -> &'static str {
        match self {
            AppKind::Bulk => "bulk",
            AppKind::Cbr => "cbr",
            AppKind::Requests => "requests",
            AppKind::Messages => "messages",
            AppKind::Datagrams => "datagrams",
            AppKind::Tunnel => "tunnel",
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
    /// The name as written in the scenario (`"down"`, `"up"`).
    pub fn name(self) -> &'static str {
        match self {
            FlowDirection::Down => "down",
            FlowDirection::Up => "up",
        }
    }
}

/// `[[flow]]`: one flow, its endpoints, transport, application, route and settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSection {
    /// The flow's name, used in the summary and `--set flow.<name>.…` (letters, digits, `_` and
    /// `-`; unique).
    pub name: String,
    /// `false`: the flow is checked like the others but not run (default true).
    pub enabled: Option<bool>,
    /// The node the data leaves (the sender).
    pub from: String,
    /// The node the data reaches (the receiver).
    pub to: String,
    /// The name of an app = "tunnel" flow whose QUIC DATAGRAM frames carry this flow's packets
    /// both ways, instead of a route: the two flows join the same two nodes.
    pub tunnel: Option<String>,
    /// `"udp"`, `"tcp"` or `"quic"` (required).
    pub transport: Transport,
    /// `"bulk"`, `"cbr"` (udp), `"requests"` (tcp, quic), `"messages"`, `"datagrams"` or
    /// `"tunnel"` (quic) (required).
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
    /// When the flow starts, from the start of the run (default 0 s); before `run.duration`.
    pub start: Option<Dur>,
    /// When a UDP flow stops sending, from the start of the run (udp only: a TCP or QUIC flow ends
    /// when its transfer is done).
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
    /// QUIC: a real QUIC library run at both ends in virtual time instead of the model
    /// (`"quinn"`: quinn-proto; `"noq"`: noq-proto, with multipath); it is its own profile, so
    /// `profile` is not given with it.
    pub stack: Option<String>,
    /// QUIC: resume a session and send the request as 0-RTT data.
    pub resume: Option<bool>,
    /// QUIC: the client presents an address-validation token (no anti-amplification limit).
    pub address_token: Option<bool>,
    /// QUIC: write a qlog file per endpoint.
    pub qlog: Option<bool>,
    /// TCP/QUIC: use ECN (RFC 3168 §6.1, RFC 9000 §13.4) at both ends (default: the
    /// profile's, off for every built-in profile); TCP also `"accecn"`: Accurate ECN
    /// (RFC 9768), the ACKs counting CE-marked packets. A TCP flow with `cc = "prague"` asks
    /// for AccECN itself.
    pub ecn: Option<EcnSetting>,
    /// app = "requests": how many requests, how many outstanding at once, and their sizes.
    pub requests: Option<u32>,
    /// app = "requests": how many requests are outstanding at once (default 1).
    pub parallel: Option<u32>,
    /// The client's request (downloads and requests; default 100 B).
    pub request_size: Option<Bytes>,
    /// app = "requests": the size of each response (required there).
    pub response_size: Option<Bytes>,
    /// The receiving host (the `to` node) of a TCP/QUIC flow.
    pub receiver: Option<ReceiverSection>,
    /// UDP: the ECN codepoint of every packet the source sends: `not_ect`, `ect0` or `ect1`
    /// (the L4S identifier, RFC 9331) (`not_ect`). The sink counts the packets that arrive CE.
    pub ecn_codepoint: Option<String>,
    /// TCP/QUIC: the timing noise of the processes both endpoints run in (per-packet CPU time,
    /// late timers); each field replaces the profile's `[host]` one. Absent: the profile's
    /// (none for every built-in profile).
    pub host: Option<HostSection>,
    /// app = "messages": the message sources, one stream each.
    pub messages: Option<Vec<MessageSourceSection>>,
    /// app = "datagrams": the source whose messages go as QUIC DATAGRAM frames.
    pub datagrams: Option<DatagramSourceSection>,
    /// QUIC: the transport parameter max_datagram_frame_size (RFC 9221 §3) both ends
    /// advertise: the largest DATAGRAM frame each takes (default: the profile's, else 65535 B
    /// when the flow sends datagrams; absent otherwise).
    pub max_datagram_frame_size: Option<Bytes>,
    /// QUIC datagrams: `"before_streams"` (default) or `"round_robin"` with stream data.
    pub datagram_priority: Option<DatagramPriority>,
    /// QUIC datagrams: the sender's queue while the window holds them back; the oldest are
    /// dropped when it is full (default 1 MiB, quinn's).
    pub datagram_send_buffer: Option<Bytes>,
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
    /// `"priority"` or `"background"`: the defaults the source starts from.
    pub kind: MessageKind,
    /// Default: the kind's name (names must be unique within the flow).
    pub name: Option<String>,
    /// Each message's size (default: the kind's, 1200 B for priority, 12500 B for background).
    pub size: Option<Bytes>,
    /// Time between messages; or `rate`, from which the interval follows (size · 8 / rate).
    pub interval: Option<Dur>,
    /// The source's rate, instead of `interval` (required for background unless `interval` is
    /// given).
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
    /// Each message as one QUIC DATAGRAM frame (RFC 9221) instead of on a stream: never
    /// retransmitted (default false).
    pub datagram: Option<bool>,
}

/// `[flow.datagrams]`: the source of an app = "datagrams" flow: a message of `size` every
/// `interval` (or at `rate`), each one QUIC DATAGRAM frame.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatagramSourceSection {
    /// Each datagram's size, the application's payload (default 1200 B).
    pub size: Option<Bytes>,
    /// Time between datagrams; or `rate`.
    pub interval: Option<Dur>,
    /// The source's rate, instead of `interval` (one of the two is required).
    pub rate: Option<Rate>,
    /// First datagram this long after the sending application can first send (default 0).
    pub start: Option<Dur>,
    /// Stop after this many datagrams.
    pub count: Option<u64>,
    /// Stop sending this long after the first datagram.
    pub duration: Option<Dur>,
    /// For the summary's reliability P(OWD < deadline) and deadline misses.
    pub deadline: Option<Dur>,
    /// Multipath: copied onto every usable path by the redundant schedulers (default false).
    pub redundant: Option<bool>,
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
    /// TCP: the ECN its kernel does, where it does less than the flow asks for: "accecn"
    /// (Linux 6.18+, `tcp_ecn = 3`), "rfc3168" (`tcp_ecn = 1`, or a server's default 2) or
    /// "none" (`tcp_ecn = 0`, or a client's default 2). Default: as the sender.
    pub ecn: Option<multiconn_transport::profile::TcpEcn>,
}

/// A TCP/QUIC flow's `ecn`: `true`/`false`, or `"accecn"` (TCP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged, expecting = "true, false or \"accecn\"")]
pub enum EcnSetting {
    /// `true`: ECN (TCP: RFC 3168); `false`: none.
    Switch(bool),
    /// `"accecn"`: Accurate ECN (RFC 9768; TCP only).
    Word(EcnWord),
}

/// The words a flow's `ecn` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnWord {
    /// Accurate ECN (RFC 9768).
    AccEcn,
}

/// `[flow.host]`: the timing noise of a flow's endpoints' processes
/// (`multiconn_transport::host`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSection {
    /// Mean CPU time per packet sent or received.
    pub per_packet: Option<Dur>,
    /// Its coefficient of variation (log-normal).
    pub per_packet_cv: Option<f64>,
    /// Mean lateness of the timers (exponential).
    pub timer_lateness: Option<Dur>,
}

/// A PDCP split bearer (dual connectivity): two links joining the same two nodes, used as one
/// hop of a route. The side a route enters numbers each packet and sends it over one leg or
/// both; the other side reorders (TS 38.323 §5.2.2) and passes packets on in order. The
/// opposite direction of a flow crossing it takes the `uplink` leg alone.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitSection {
    /// The split's name, given in routes like a link's (letters, digits, `_` and `-`; unique among
    /// links, splits and cells).
    pub name: String,
    /// The two links it joins (they must join the same two nodes); shares are the first leg's.
    pub legs: [String; 2],
    /// The leg for the opposite direction (default: the first leg).
    pub uplink: Option<String>,
    /// How packets are spread over the legs (default: batch of 100, half on each leg).
    #[serde(default, deserialize_with = "policy_table")]
    pub policy: Option<PolicySection>,
    /// The opposite direction (a flow's ACKs and requests) crosses the split through PDCP
    /// entities of its own with this policy, instead of the `uplink` leg alone.
    #[serde(default, deserialize_with = "policy_table")]
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
    /// Over cells: the one-way X2-U (Xn-U) delay between the node hosting PDCP (the first
    /// leg's, the master) and the second leg's cell (the secondary node) — the downlink PDUs
    /// sent on the second leg, its delivery status reports back and, with a `reverse_policy`,
    /// the uplink PDUs it delivers all take it (default 0).
    pub x2u_delay: Option<Dur>,
    /// L4S marking at the receiving PDCP entity: an ECT(1) packet it held longer than this in
    /// reordering leaves it CE (default: no marking).
    pub l4s_reorder_threshold: Option<Dur>,
}

/// A split's `policy`: how the transmitting PDCP entity spreads packets over the legs, a table
/// tagged by `model` (`batch`, `alternate`, `ratio`, `duplicate`, `adaptive`, `threshold`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum PolicySection {
    /// `size` packets per batch; the first `share` of each batch on the first leg.
    Batch {
        /// Packets per batch (at least 1).
        #[serde(deserialize_with = "batch_size")]
        size: u32,
        /// The first leg's share of each batch, 0 to 1 or a percentage (default 0.5).
        #[serde(default)]
        share: Option<Share>,
    },
    /// One packet per leg in turn.
    Alternate {},
    /// Per packet, interleaved: `share` of the packets on the first leg.
    Ratio {
        /// The first leg's share of the packets, 0 to 1 or a percentage.
        share: Share,
    },
    /// Every packet on both legs, except during the `off` intervals ([from, until] from the
    /// start of the run): there a MAC CE has deactivated duplication, packets take the first
    /// leg, and at each deactivation the copies waiting on the second leg are discarded.
    Duplicate {
        /// The intervals without duplication, `[["2 s", "4 s"], ...]`, in order and without
        /// overlap.
        #[serde(default)]
        off: Option<Vec<[Dur; 2]>>,
    },
    /// Each packet on the leg that the legs' periodic feedback favours.
    Adaptive {
        /// `"delay"` (the leg with the earliest estimated arrival, base delay + backlog / rate;
        /// default), `"queue"` (the leg with the smaller backlog) or `"desired_buffer"` (the leg
        /// with more room by the desired buffer size its node reports, TS 38.425: a cell leg's
        /// free RLC buffer; the backlogs over links) or `"delivery_credit"` (the leg with more
        /// credit by TS 38.425 §5.4.2: its RLC buffer size beyond the highest PDCP SN it
        /// reported delivered under RLC AM, transmitted under UM; the backlogs over links).
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
        /// The primary leg's name (primaryPath; default the first leg).
        #[serde(default)]
        primary: Option<String>,
        /// ul-DataSplitThreshold, in bytes (positive; absent: infinity).
        #[serde(default)]
        threshold: Option<Bytes>,
    },
}

/// A split policy's share of the packets for its first leg, as written: a number (0 to 1) or
/// a percentage (`"75 %"`). Its range is checked where the policy is resolved, in a share's
/// own words (a probability's would hint at a loss).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share(pub f64);

impl<'de> Deserialize<'de> for Share {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Share;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a share between 0 and 1, or a percentage such as \"75 %\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Share, E> {
                let t = s.trim();
                let parsed = match t.strip_suffix('%') {
                    Some(n) => n.trim().parse::<f64>().map(|v| v / 100.0),
                    None => t.parse::<f64>(),
                };
                parsed.map(Share).map_err(|_| E::custom(format!("invalid share \"{s}\": expected a number between 0 and 1 or a percentage such as \"75 %\"")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Share, E> {
                Ok(Share(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Share, E> {
                Ok(Share(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Share, E> {
                Ok(Share(v as f64))
            }
        }
        d.deserialize_any(V)
    }
}

/// A batch policy's `size`: a whole number of packets, at least 1.
fn batch_size<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    crate::diagnostics::whole_number(d, 1, u64::from(u32::MAX), "a batch size")
        .map(|n| n as u32)
}

/// A split's `policy` or `reverse_policy`: a table tagged by `model`, read by [`tagged`].
fn policy_table<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PolicySection>, D::Error> {
    tagged(toml::Value::deserialize(d)?).map(Some)
}

/// Reads a table tagged by `model` into `T`. serde reads such a table whole before it looks at
/// its fields, out of sight of any path tracking, so an error there would name the table
/// (`split.dc.policy`) and its line. The field at fault is found instead as the one whose
/// removal changes the error (serde stops at the first bad field, before it asks for missing
/// ones), and travels inside the message ([`crate::diagnostics::inside`]) to the error, which
/// names it. Only a failing table is read again.
fn tagged<T: serde::de::DeserializeOwned, E: de::Error>(value: toml::Value) -> Result<T, E> {
    let message = match T::deserialize(value.clone()) {
        Ok(t) => return Ok(t),
        Err(e) => e.message().to_string(),
    };
    let field = value.as_table().and_then(|table| {
        table.keys().filter(|k| k.as_str() != "model").find(|k| {
            let mut without = table.clone();
            without.remove(k.as_str());
            T::deserialize(toml::Value::Table(without)).err().map(|e| e.message().to_string()).as_ref() != Some(&message)
        })
    });
    Err(E::custom(match field {
        Some(k) => crate::diagnostics::inside(std::slice::from_ref(k), &message),
        None => message,
    }))
}

/// A t-Reordering value: a duration or "infinity".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TReordering {
    /// Gaps are given up this long after they are seen (`"0 ms"`: at once).
    After(Dur),
    /// Gaps are never given up: the receiver waits for every missing COUNT.
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
    /// A limit in packets (`"100 packets"`) or bytes (`"150 kB"`).
    Limit(QueueLimit),
    /// That many bandwidth-delay products (`"1.5 BDP"`), turned into bytes when the scenario is
    /// loaded.
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
    /// A constant rate (`"40 Mbit/s"`).
    Fixed(Rate),
    /// A rate trace, looped.
    Trace(RateTrace),
}

/// A rate trace table, tagged by `model`: `mahimahi`, `ucc` or `csv`; `file` is relative to the
/// scenario file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum RateTrace {
    /// Mahimahi delivery-opportunity file.
    Mahimahi {
        /// The trace: one millisecond timestamp per line, each a 1500-byte delivery opportunity.
        file: String,
        /// Where the run's time 0 reads the trace (default 0): `"480 s"` (whole milliseconds); less than the trace's
        /// period, which then loops from its beginning.
        #[serde(default)]
        start: Option<Dur>,
    },
    /// A UCC G-NetTrack CSV (`Timestamp`; rate column in kbit/s).
    Ucc {
        /// The G-NetTrack CSV file.
        file: String,
        /// The rate column, kbit/s (default `DL_bitrate`).
        #[serde(default = "default_ucc_column")]
        column: String,        /// Where the run's time 0 reads the trace (default 0): `"480 s"`; less than the trace's
        /// period, which then loops from its beginning.
        #[serde(default)]
        start: Option<Dur>,
    },
    /// Any per-second bitrate CSV.
    Csv {
        /// The CSV file, one row per second.
        file: String,
        /// The rate column's header.
        column: String,
        /// What one unit of the column is: a unit (`"Mbit/s"`) or a rate (`"1 Mbit/s"`,
        /// `"125 kB/s"`).
        #[serde(deserialize_with = "rate_unit")]
        unit: Rate,
        /// The time column's header (default `time` for `seconds`, `Timestamp` for `gnettrack`).
        #[serde(default)]
        time_column: Option<String>,
        /// How rows are timed: `seconds`, `gnettrack` or `row` (default `seconds`).
        #[serde(default)]
        time_format: Option<TimeFormat>,        /// Where the run's time 0 reads the trace (default 0): `"480 s"`; less than the trace's
        /// period, which then loops from its beginning.
        #[serde(default)]
        start: Option<Dur>,
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

/// A loss trace's `start`: a whole number of packets (a duration is refused in words that say
/// why).
fn packet_start<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    match toml::Value::deserialize(d)? {
        toml::Value::Integer(n) if n >= 0 => Ok(Some(n as u64)),
        other => Err(D::Error::custom(format!(
            "a loss trace is read per offered packet, so its start is a whole number of packets ≥ 0 such as 1000, got {other}"
        ))),
    }
}

fn default_ucc_column() -> String {
    "DL_bitrate".into()
}

/// A csv trace's `time_format`: where each row's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeFormat {
    /// A column of seconds, integer or decimal, from any origin.
    Seconds,
    /// A G-NetTrack timestamp column, `YYYY.MM.DD_HH.MM.SS` (the UCC datasets' `Timestamp`).
    Gnettrack,
    /// No time column: row i covers second i.
    Row,
}

/// `"10 ms"` or a table tagged by `model`.
#[derive(Debug, Clone, PartialEq)]
pub enum DelaySpec {
    /// A constant one-way delay (`"10 ms"`).
    Constant(Dur),
    /// A delay model table.
    Model(DelayTable),
}

/// A delay table, tagged by `model`: `constant`, `normal`, `empirical` or `series`; `file` is
/// relative to the scenario file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum DelayTable {
    /// Always the same delay.
    Constant {
        /// The delay.
        value: Dur,
    },
    /// Drawn per packet from a normal distribution, truncated at 0.
    Normal {
        /// The mean delay.
        mean: Dur,
        /// The coefficient of variation: standard deviation over mean (finite, at least 0; 0 is
        /// constant).
        cv: f64,
        /// Let packets overtake one another as netem's jitter does (default false: FIFO order).
        #[serde(default)]
        reorder: bool,
    },
    /// Drawn per packet from a histogram (e.g. the DETERMINISTIC6G files).
    Empirical {
        /// The histogram: two columns, bin lower bound in ms and a count or frequency.
        file: String,
        /// Let packets overtake one another (default false: FIFO order).
        #[serde(default)]
        reorder: bool,
    },
    /// A delay that follows a time series.
    Series {
        /// The series: header `time_s,delay_ms`, times in seconds from the start of the run,
        /// delays in ms.
        file: String,
        /// `linear` (default: the delay glides between the points) or `step` (each point's
        /// delay holds until the next, as `tc … netem delay` changes it).
        #[serde(default)]
        interpolation: SeriesInterpolation,
        /// Let a packet overtake the ones before it when the delay falls (netem's time-ordered
        /// queue); default false (a delay line).
        #[serde(default)]
        reorder: bool,        /// Where the run's time 0 reads the series (default 0): `"480 s"`; less than its last
        /// point's time, whose delay then holds.
        #[serde(default)]
        start: Option<Dur>,
    },
}

/// How a delay series goes from one point to the next (`multiconn_link::delay::Interpolation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesInterpolation {
    /// The delay glides linearly between the points (default).
    #[default]
    Linear,
    /// Each point's delay holds until the next, as `tc … netem delay` changes it.
    Step,
}

/// `"1 %"`, `0.01`, or a table tagged by `model`.
#[derive(Debug, Clone, PartialEq)]
pub enum LossSpec {
    /// Each packet lost independently with this probability.
    Bernoulli(Probability),
    /// A loss model table.
    Model(LossTable),
}

/// A loss table, tagged by `model`: `bernoulli`, `gilbert_elliott` or `trace`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossTable {
    /// Each packet lost independently with probability `p`.
    Bernoulli {
        /// The loss probability.
        p: Probability,
    },
    /// A per-packet two-state Markov chain (Gilbert–Elliott); mean burst 1/r.
    GilbertElliott {
        /// P(good → bad) per packet.
        p: Probability,
        /// P(bad → good) per packet (positive when `p` is).
        r: Probability,
        /// The loss probability in the good state (default 0).
        #[serde(default)]
        loss_good: Option<Probability>,
        /// The loss probability in the bad state (default 1).
        #[serde(default)]
        loss_bad: Option<Probability>,
    },
    /// A per-packet pattern, looped.
    Trace {
        /// The pattern file: one 0 (delivered) or 1 (lost) per line.
        file: String,
        /// The line the first offered packet reads, counted from 0 (default 0): the trace is
        /// per packet, so its start is a number of packets; less than its number of lines.
        #[serde(default, deserialize_with = "packet_start")]
        start: Option<u64>,
    },
}

/// A link direction's queue discipline: a name with the defaults, or a table with its
/// parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum AqmSpec {
    /// A discipline by name, with its defaults (`"codel"`).
    Kind(AqmKind),
    /// A discipline with parameters (`{ model = "codel", target = "5 ms" }`).
    Model(AqmTable),
}

/// A queue discipline by name: `"codel"`, `"fq_codel"`, `"pie"`, `"dualpi2"` or `"none"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AqmKind {
    /// Drop-tail (no AQM), e.g. to switch off a link-wide discipline in one direction.
    #[serde(alias = "droptail", alias = "drop_tail")]
    None,
    /// CoDel (RFC 8289) with its defaults.
    Codel,
    /// FQ-CoDel (RFC 8290) with its defaults.
    FqCodel,
    /// PIE (RFC 8033) with its defaults.
    Pie,
    /// DualPI2 (RFC 9332) with Linux `sch_dualpi2`'s defaults.
    #[serde(rename = "dualpi2")]
    Dualpi2,
}

/// A queue discipline table, tagged by `model`: `codel`, `fq_codel`, `pie` or `dualpi2`; absent parameters
/// take the RFCs' and Linux's defaults (docs/aqm.md).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmTable {
    /// CoDel (RFC 8289).
    Codel {
        /// Acceptable sojourn time (default 5 ms); shorter than `interval`.
        target: Option<Dur>,
        /// How long the sojourn must stay at or above `target` before dropping starts (default
        /// 100 ms).
        interval: Option<Dur>,
        /// Mark ECN-capable packets CE instead of dropping them (default false).
        ecn: Option<bool>,
    },
    /// FQ-CoDel (RFC 8290): a CoDel queue per flow, served by deficit round robin.
    FqCodel {
        /// Each queue's CoDel target (default 5 ms); shorter than `interval`.
        target: Option<Dur>,
        /// Each queue's CoDel interval (default 100 ms).
        interval: Option<Dur>,
        /// Mark ECN-capable packets CE instead of dropping them (default true).
        ecn: Option<bool>,
        /// Deficit round robin quantum, 64 B to 64 KiB (default 1514 B).
        quantum: Option<Bytes>,
        /// The number of flow queues, 1 to 65536 (default 1024); flows beyond share a queue.
        flows: Option<u32>,
        /// Most packets dropped at once from the fattest queue when the `queue` limit is reached,
        /// 1 to 65536 (default 64).
        drop_batch: Option<u32>,
    },
    /// PIE (RFC 8033).
    Pie {
        /// Target queueing delay (default 15 ms).
        target: Option<Dur>,
        /// Period of the drop probability's updates (default 15 ms).
        tupdate: Option<Dur>,
        /// Weight of the delay's distance from `target` in each update (default 0.125; at least 0).
        alpha: Option<f64>,
        /// Weight of the delay's change since the last update (default 1.25; at least 0).
        beta: Option<f64>,
        /// Burst allowance: early drops are suspended this long after the queue has been calm
        /// (default 150 ms).
        max_burst: Option<Dur>,
        /// Mark ECN-capable packets instead of dropping them while the drop probability is at most
        /// `mark_ecn_th` (default false).
        ecn: Option<bool>,
        /// The drop probability above which ECN-capable packets are dropped too (default 10 %).
        mark_ecn_th: Option<Probability>,
    },
    /// DualPI2, the DualQ Coupled AQM (RFC 9332, Linux `sch_dualpi2`): an L4S queue (ECT(1) and
    /// CE) and a Classic one under one PI2 controller; defaults are Linux's.
    #[serde(rename = "dualpi2")]
    Dualpi2 {
        /// PI2 target queue delay (default 15 ms).
        target: Option<Dur>,
        /// Period of the base probability's updates (default 16 ms).
        tupdate: Option<Dur>,
        /// Integral gain in Hz (default 0.16; above zero).
        alpha: Option<f64>,
        /// Proportional gain in Hz (default 3.2; above zero).
        beta: Option<f64>,
        /// Worst-case RTT to tune target, tupdate, alpha and beta for, as tc's `max_rtt`
        /// (instead of giving them).
        max_rtt: Option<Dur>,
        /// Typical RTT to tune for, as tc's `typical_rtt` (instead of target, tupdate, alpha, beta).
        typical_rtt: Option<Dur>,
        /// Coupling factor k between the queues (default 2; above 0, at most 255).
        coupling: Option<f64>,
        /// The L queue's native AQM: `"step"` (Linux, default) or `"ramp"` (RFC 9332 A.1).
        l_aqm: Option<String>,
        /// Step: mark L4S packets whose sojourn is above this (default 1 ms).
        step_threshold: Option<Dur>,
        /// Step: mark while more than this many L4S packets wait, instead of a sojourn.
        step_packets: Option<u32>,
        /// Step: apply it only to packets that found at least this many in the L queue (default 0).
        min_qlen_step: Option<u32>,
        /// Ramp: the sojourn where marking starts (default 800 us).
        ramp_min_th: Option<Dur>,
        /// Ramp: from 0 to 1 over this much more sojourn (default 400 us).
        ramp_range: Option<Dur>,
        /// Ramp: no native marking while the L queue holds at most this many packets (default 1).
        ramp_th_len: Option<u32>,
        /// Scheduler between the queues: `"wrr"` (Linux, default) or `"ts_fifo"` (RFC 9332).
        scheduler: Option<String>,
        /// WRR: the Classic queue's share when both are backlogged, a whole percentage (default 10 %).
        classic_protection: Option<Probability>,
        /// Time-shifted FIFO: the shift given to the Classic head (default 50 ms).
        tshift: Option<Dur>,
        /// The delay the controller measures: `"max"` of both heads (Linux, default) or `"classic"`.
        pi_input: Option<String>,
        /// On overload: `"drop"` (Linux's drop_on_overload, default) or `"overflow"`.
        overload: Option<String>,
        /// Where PI2 drops and marks: `"dequeue"` (default) or `"enqueue"`.
        drop_at: Option<String>,
        /// Which packets go to the L queue: `"l4s"` (ECT(1) and CE, default) or `"any"` (every ECT).
        ecn_mask: Option<String>,
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
                        tagged(toml::Value::deserialize(MapAccessDeserializer::new(map))?).map($ty::$table)
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
    "a queue discipline \"codel\", \"fq_codel\", \"pie\", \"dualpi2\" or \"none\", or a table { model = \"codel\" | \"fq_codel\" | \"pie\" | \"dualpi2\", ... }");
scalar_or_table!(LossSpec, Bernoulli, Probability, Model, LossTable,
    "a loss probability such as 0.01 or \"1 %\", or a table { model = \"gilbert_elliott\" | \"trace\" | \"bernoulli\", ... }");
