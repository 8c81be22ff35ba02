//! An LTE cell as a packet element: IP packets to and from its UEs go in, come out at the
//! other side TTI by TTI, or are dropped with the cell's own causes (the LTE cell reference
//! §1–3: one eNB, N static UEs at their distances, no interference).
//!
//! Each packet is an RLC SDU of its UE and direction. Per 1 ms TTI n (starting at n ms):
//!
//! * **downlink**: every UE with data or HARQ work gets its SINR per RB (link budget, path
//!   loss, fading at that instant) and reports a subband CQI computed on the previous TTI's
//!   SINR (a one-TTI-old report); the [`DlMac`] serves retransmissions first, then its
//!   scheduler shares the rest, each new TB filled with one RLC UMD PDU from the UE's buffer;
//! * **uplink**: the [`UlMac`] shares the band among the UEs with data;
//! * TBs decoded in TTI n reach the receiving RLC at (n + 1) ms, which reorders them
//!   (t-Reordering) and reassembles SDUs; a packet leaves the cell when its SDU is whole.
//!
//! With [`MacTiming::Lena`] the control loop has LENA's delays: a downlink TB reaches the UE
//! [`LENA_DL_DELAY_TTIS`] TTIs after the TTI it was scheduled in, and the uplink runs on buffer
//! status reports and grants ([`UlTiming::LENA`]).
//!
//! Drops: an SDU that does not fit in its RLC buffer (`rlc_buffer_full`, at once), the SDUs a
//! TB carried when HARQ gives it up after 4 transmissions (`harq_max_retx`, at that TTI's end;
//! the receiver then waits for t-Reordering before it goes on past the gap), and the SDUs of a
//! PDU the receiver gave up on t-Reordering's expiry while HARQ still held it
//! (`rlc_reordering`). With a queue discipline above RLC ([`CellConfig::aqm`], e.g. DualPI2;
//! [`crate::bearer`]) packets wait in it instead of the RLC buffer: one it refuses at its
//! limit is `rlc_buffer_full` at once, one its own rule drops is `aqm` (at once if refused at
//! the door or pushed out to make room, at the start of the slot whose grant pulled it if
//! dropped there). The
//! cell runs TTIs only while something is queued, in HARQ or held for reordering, so an idle
//! cell costs nothing. Everything random comes from streams derived from the run's seed and
//! the cell's label, so a run is reproducible.

use std::collections::VecDeque;

use multiconn_core::{Packet, RngStream, Time};
use multiconn_radio::pathloss::{PathLoss, Sight};

use crate::amc::{AmcModel, BlerCurve};
use crate::carrier::{Carrier, SlotUse};
use crate::channel::{LinkBudget, UeChannel};
use crate::dl::{CellDropCause, DlMac, DlUeInput};
use crate::error::{check_range, CellError};
use crate::fading::{CellFading, FadingSpread, Grid};
use crate::harq::MiCombining;
use crate::l4s::{L4sCounts, L4sMarker, L4sMarking};
use crate::memo::SinrMemo;
use crate::mobility::Trajectory;
use crate::bearer::{rlc_capacity_under_aqm, rlc_fill_limit, AmCounts, Bearer, BearerAqm, Payload, RlcMode};
use multiconn_core::units::QueueLimit;
use multiconn_link::aqm::{AqmConfig, AqmStats};
use crate::blockage::{Blockage, BlockageConfig};
use crate::nr::bandwidth::rbg_size as nr_rbg_size;
use crate::sched::{Scheduler, SchedulerKind, NR_MAX_PRB};
use crate::series::CellSeries;
use crate::ul::{UlMac, UlMcs, UlTiming, UlUeInput};

/// One LTE TTI, ns (an NR cell's slot: [`Carrier::slot_ns`]).
pub const TTI_NS: u64 = crate::carrier::LTE_TTI_NS;
/// LTE bandwidths in resource blocks (1.4, 3, 5, 10, 15, 20 MHz).
pub const BANDWIDTHS_RB: [u16; 6] = [6, 15, 25, 50, 75, 100];
/// Sinusoids per fading process.
const FADING_SINUSOIDS: usize = 16;

/// Which way a packet crosses the cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellDirection {
    /// eNB → UE.
    Down = 0,
    /// UE → eNB.
    Up = 1,
}

/// The fading of the cell's links.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FadingConfig {
    /// None: the mean SINR every TTI.
    None,
    /// Time-correlated Rayleigh fading with this maximum Doppler shift, flat, per RB or from a
    /// TS 36.104 tapped delay line (independent draws for the downlink and the uplink).
    Rayleigh {
        /// Maximum Doppler shift, Hz (3 km/h at 2.12 GHz: 5.9 Hz).
        doppler_hz: f64,
        /// One process for the band, one per RB, or one per tap of an EPA/EVA/ETU profile.
        spread: FadingSpread,
    },
    /// Time-correlated Rician fading: a line of sight with K-factor `k_factor` (linear) over
    /// Rayleigh scattering, flat or per RB.
    Rician {
        /// Maximum Doppler shift, Hz.
        doppler_hz: f64,
        /// One process for the band or one per RB (a tapped delay line is refused).
        spread: FadingSpread,
        /// The power of the line of sight over the scattered power (linear, 0..=1000).
        k_factor: f64,
    },
}

/// The delays of the cell's control loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MacTiming {
    /// None: a downlink TB goes on air in the TTI the scheduler picks it, and the eNB knows
    /// every UE's uplink buffer in the TTI it schedules.
    #[default]
    Ideal,
    /// ns-3 LENA's (the LTE cell reference §3.1): a downlink TB goes on air
    /// [`LENA_DL_DELAY_TTIS`] TTIs after the scheduler picks it (`MacToChannelDelay`), and the
    /// uplink runs on buffer status reports and grants ([`UlTiming::LENA`]).
    Lena,
}

/// LENA's `MacToChannelDelay`: TTIs from the downlink scheduler's decision to the air.
pub const LENA_DL_DELAY_TTIS: u64 = 2;

impl MacTiming {
    /// Every timing by its name in scenarios.
    pub const NAMES: [(&'static str, MacTiming); 2] = [("ideal", MacTiming::Ideal), ("lena", MacTiming::Lena)];

    /// Its name in scenarios: `"ideal"` or `"lena"`.
    pub fn from_name(name: &str) -> Result<MacTiming, CellError> {
        MacTiming::NAMES.iter().find(|(n, _)| *n == name).map(|&(_, t)| t).ok_or_else(|| {
            CellError::invalid("timing", format!("unknown timing {name:?}; known: {}", MacTiming::NAMES.map(|(n, _)| n).join(", ")))
        })
    }

    /// TTIs from the downlink scheduler's decision to the TB's reception.
    pub fn dl_delay_ttis(self) -> u64 {
        match self {
            MacTiming::Ideal => 0,
            MacTiming::Lena => LENA_DL_DELAY_TTIS,
        }
    }

    /// How the eNB learns of the UEs' uplink data.
    pub fn ul_timing(self) -> UlTiming {
        match self {
            MacTiming::Ideal => UlTiming::Immediate,
            MacTiming::Lena => UlTiming::LENA,
        }
    }
}

/// Everything a cell is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct CellConfig {
    /// Downlink and uplink bandwidth, in RBs: 6, 15, 25, 50, 75 or 100.
    pub n_rb: u16,
    /// Powers, noise figures, path loss.
    pub budget: LinkBudget,
    /// Fading.
    pub fading: FadingConfig,
    /// The downlink scheduler.
    pub scheduler: SchedulerKind,
    /// How CQIs (and the uplink MCS) are chosen.
    pub amc: AmcModel,
    /// TB error probability curves.
    pub curve: BlerCurve,
    /// RLC transmission buffer per UE and direction, bytes (the study: 524 288; LENA: 10 240).
    pub rlc_buffer_bytes: u64,
    /// RLC UM t-Reordering, µs (100 000).
    pub t_reordering_us: u64,
    /// The UEs' distances to the eNB, m (of a moving UE: its trajectory's start).
    pub ue_distances_m: Vec<f64>,
    /// Per UE, a trajectory that moves it during the run (empty: every UE stays put).
    pub trajectories: Vec<Option<Trajectory>>,
    /// The control loop's delays.
    pub timing: MacTiming,
    /// How the uplink's MCS is picked.
    pub uplink_mcs: UlMcs,
    /// LTE (the default) or an NR carrier: slot, duplex, tables, HARQ timing.
    pub carrier: Carrier,
    /// The bearers' RLC mode (UM: the LTE cell's, as the study's testbed had it).
    pub rlc: RlcMode,
    /// A stochastic blockage process on every UE's link (each its own), or none.
    pub blockage: Option<BlockageConfig>,
    /// Draw each UE's line of sight with TR 38.901's LOS probability at its distance (again
    /// each correlation distance it moves) instead of taking the path-loss model's `sight`;
    /// needs a model with a LOS probability (UMa, UMi, RMa).
    pub draw_los: bool,
    /// L4S marking on every UE's RLC transmission buffers, both directions ([`crate::l4s`]),
    /// or none.
    pub l4s_marking: Option<L4sMarking>,
    /// A queue discipline above every UE's RLC transmitting entity, both directions (e.g.
    /// DualPI2, RFC 9332), its limit `rlc_buffer_bytes` in bytes ([`crate::bearer`]), or none
    /// (drop-tail in the RLC buffer).
    pub aqm: Option<AqmConfig>,
}

impl CellConfig {
    /// The study's cell (reference §2) with UEs at `distances_m`: 100 RBs, 46/23 dBm, the
    /// log-distance path loss, PF, the MI error model, a 512 kB RLC buffer, flat Rayleigh
    /// fading at 3 km/h.
    pub fn study(distances_m: Vec<f64>) -> CellConfig {
        CellConfig {
            n_rb: 100,
            budget: LinkBudget::study(),
            fading: FadingConfig::Rayleigh { doppler_hz: 5.89, spread: FadingSpread::Flat },
            scheduler: SchedulerKind::ProportionalFair,
            amc: AmcModel::mutual_information(),
            curve: BlerCurve::default(),
            rlc_buffer_bytes: 524_288,
            t_reordering_us: 100_000,
            ue_distances_m: distances_m,
            trajectories: Vec::new(),
            timing: MacTiming::Ideal,
            uplink_mcs: UlMcs::Measured,
            carrier: Carrier::Lte,
            rlc: RlcMode::Um,
            blockage: None,
            draw_los: false,
            l4s_marking: None,
            aqm: None,
        }
    }

    /// The capacity of each bearer's RLC transmitting entity, bytes: `rlc_buffer_bytes`, or
    /// under a queue discipline (which then holds that many) one largest SDU more.
    pub(crate) fn rlc_entity_bytes(&self) -> u64 {
        match self.aqm {
            None => self.rlc_buffer_bytes,
            Some(_) => rlc_capacity_under_aqm(self.rlc_buffer_bytes),
        }
    }

    /// Checks every field; the error names `cell.<field>` and what is allowed.
    pub fn validate(&self) -> Result<(), CellError> {
        match &self.carrier {
            Carrier::Lte => {
                if !BANDWIDTHS_RB.contains(&self.n_rb) {
                    return Err(CellError::out_of_range("cell.bandwidth_rb", f64::from(self.n_rb), "one of 6, 15, 25, 50, 75, 100 RBs"));
                }
            }
            Carrier::Nr(_) => {
                self.carrier.validate()?;
                if self.n_rb == 0 || self.n_rb > NR_MAX_PRB {
                    return Err(CellError::out_of_range("cell.bandwidth_rb", f64::from(self.n_rb), "an integer in [1, 275] PRBs"));
                }
                if self.timing != MacTiming::Ideal {
                    return Err(CellError::invalid("cell.timing", "\"lena\" is ns-3 LENA's LTE control loop; an NR cell times HARQ by K1 and N1 and schedules the uplink on known buffers: use \"ideal\""));
                }
                if self.uplink_mcs != UlMcs::Measured {
                    return Err(CellError::invalid("cell.uplink_mcs", "\"lena\" is LENA's LTE SRS rule; an NR cell picks the uplink MCS on the measured SINR: use \"measured\""));
                }
            }
        }
        self.budget.validate()?;
        if let Some(b) = &self.blockage {
            b.validate()?;
        }
        if self.draw_los && self.budget.pathloss.los_probability(100.0).is_none() {
            return Err(CellError::invalid("cell.los", "a drawn line of sight needs a path-loss model with a LOS probability: uma, umi or rma (TR 38.901 Table 7.4.2-1)"));
        }
        if let Some(m) = &self.l4s_marking {
            m.validate()?;
            if self.aqm.is_some() {
                return Err(CellError::invalid("cell.aqm", "a queue discipline and l4s_marking would both mark the same RLC buffer: give one (DualPI2 has its own L4S marking)"));
            }
        }
        self.amc.validate()?;
        self.curve.validate()?;
        if self.curve.code_blocks.is_some() && self.carrier == Carrier::Lte {
            return Err(CellError::invalid("cell.bler.model", "code_blocks follows NR's LDPC code blocks; an LTE cell takes the logistic curve"));
        }
        if let FadingConfig::Rayleigh { doppler_hz, .. } | FadingConfig::Rician { doppler_hz, .. } = self.fading {
            if !(doppler_hz.is_finite() && doppler_hz > 0.0 && doppler_hz <= 2000.0) {
                return Err(CellError::out_of_range("cell.fading.doppler_hz", doppler_hz, "a number in (0, 2000] Hz"));
            }
        }
        if let FadingConfig::Rician { k_factor, spread, .. } = self.fading {
            if !(k_factor.is_finite() && (0.0..=1000.0).contains(&k_factor)) {
                return Err(CellError::out_of_range("cell.fading.k_factor", k_factor, "a number in [0, 1000] (linear; 30 dB at most)"));
            }
            if let FadingSpread::Tdl(profile) = spread {
                return Err(CellError::invalid("cell.fading.k_factor", format!("the {} tapped delay line's taps are Rayleigh (TS 36.104 Annex B.2): a K-factor needs flat or per-RB fading", profile.name())));
            }
        }
        if self.rlc_buffer_bytes == 0 || self.rlc_buffer_bytes > 1 << 30 {
            return Err(CellError::out_of_range("cell.rlc_buffer_bytes", self.rlc_buffer_bytes as f64, "an integer in [1, 2^30] bytes"));
        }
        if self.t_reordering_us > 10_000_000 {
            return Err(CellError::out_of_range("cell.t_reordering_us", self.t_reordering_us as f64, "at most 10 s"));
        }
        if self.ue_distances_m.is_empty() || self.ue_distances_m.len() > 256 {
            return Err(CellError::out_of_range("cell.ues", self.ue_distances_m.len() as f64, "1 to 256 UEs"));
        }
        if !self.trajectories.is_empty() && self.trajectories.len() != self.ue_distances_m.len() {
            return Err(CellError::invalid("cell.trajectories", format!("{} trajectories for {} UEs: give one per UE (None for a static one) or none", self.trajectories.len(), self.ue_distances_m.len())));
        }
        for (i, t) in self.trajectories.iter().enumerate() {
            if let Some(t) = t {
                t.validate(i)?;
                if t.start_m != self.ue_distances_m[i] {
                    return Err(CellError::invalid(&format!("cell.ues[{i}].distance_m"), format!("{} m differs from its trajectory's start_m {} m", self.ue_distances_m[i], t.start_m)));
                }
            }
        }
        for (i, &d) in self.ue_distances_m.iter().enumerate() {
            if !(d.is_finite() && d > 0.0 && d <= 100_000.0) {
                return Err(CellError::out_of_range(&format!("cell.ues[{i}].distance_m"), d, "a number in (0, 100000] m"));
            }
        }
        Ok(())
    }
}

/// What the cell hands out.
#[derive(Clone, Debug)]
pub enum CellOutput {
    /// A packet crossed the cell.
    Delivered {
        /// When it left.
        at: Time,
        /// Its UE.
        ue: usize,
        /// Which way.
        dir: CellDirection,
        /// The packet.
        pkt: Packet,
    },
    /// A packet was dropped.
    Dropped {
        /// When.
        at: Time,
        /// Its UE.
        ue: usize,
        /// Which way.
        dir: CellDirection,
        /// The packet.
        pkt: Packet,
        /// Why.
        cause: CellDropCause,
    },
}

impl CellOutput {
    /// When it happened.
    pub fn at(&self) -> Time {
        match self {
            CellOutput::Delivered { at, .. } | CellOutput::Dropped { at, .. } => *at,
        }
    }
}

/// Counts and last values of one UE, for reports and time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UeCounters {
    /// Downlink TBs sent (retransmissions included), TBs in error, TBs given up.
    pub dl_tbs: u64,
    /// Downlink transmissions in error.
    pub dl_tb_errors: u64,
    /// Downlink RB·TTIs allocated (new data and retransmissions).
    pub dl_rb_ttis: u64,
    /// Downlink RB·TTIs of new data.
    pub dl_new_rb_ttis: u64,
    /// Downlink TBs of new data, and how many of them failed their first transmission.
    pub dl_new_tbs: u64,
    /// First transmissions in error.
    pub dl_first_tx_errors: u64,
    /// Uplink TBs sent, in error.
    pub ul_tbs: u64,
    /// Uplink transmissions in error.
    pub ul_tb_errors: u64,
    /// Uplink RB·TTIs allocated.
    pub ul_rb_ttis: u64,
    /// Downlink TTIs in which the UE had data but the cell could not reach it (CQI 0).
    pub dl_out_of_range_ttis: u64,
    /// Uplink TTIs in which it had data and CQI 0 over its part of the band.
    pub ul_out_of_range_ttis: u64,
    /// Drops by cause, both directions.
    pub rlc_buffer_drops: u64,
    /// SDUs lost with a TB HARQ gave up.
    pub harq_drops: u64,
    /// SDUs whose PDU the receiving RLC gave up before HARQ delivered it.
    pub reordering_drops: u64,
    /// AM: SDUs given up after maxRetxThreshold retransmissions, or discarded by the
    /// re-establishment that follows.
    pub rlc_max_retx_drops: u64,
    /// Packets the queue discipline above RLC dropped by its own rule (`cell.aqm`; its limit's
    /// refusals are `rlc_buffer_drops`).
    pub aqm_drops: u64,
    /// The wideband mean downlink SINR of the last TTI it was computed, dB.
    pub last_dl_sinr_db: f64,
    /// The last wideband CQI (mean of the subband CQIs, rounded down).
    pub last_cqi: u8,
    /// The MCS of its last downlink TB.
    pub last_mcs: u8,
}

struct Ue {
    channel: UeChannel,
    bearers: [Bearer; 2],
    counters: UeCounters,
    /// The path loss at its distance, before any blockage, dB.
    distance_loss_db: f64,
    /// The downlink's noise rise from other cells' transmissions, 10·log10(1 + I/N) dB, as a
    /// multi-cell controller sets it ([`CellHop::set_link`]); 0 in a cell of its own.
    dl_noise_rise_db: f64,
    /// Its blockage process, when the cell has one.
    blockage: Option<Blockage>,
    /// Its line of sight, when the cell draws it ([`CellConfig::draw_los`]): the path loss
    /// model in that state, the distance it was drawn at and the stream of its draws.
    los: Option<LosState>,
}

/// A UE's line-of-sight state, drawn with TR 38.901's LOS probability at its distance and
/// again each time it has moved the model's correlation distance.
struct LosState {
    pathloss: PathLoss,
    drawn_at_m: f64,
    rng: RngStream,
}

impl LosState {
    fn draw(model: PathLoss, d: f64, rng: &mut RngStream) -> PathLoss {
        let p = model.los_probability(d).unwrap_or(0.0);
        model.with_sight(if rng.bernoulli(p) { Sight::Los } else { Sight::Nlos })
    }

    /// The path loss at `d` m and `carrier_mhz`, the state drawn again if the UE has moved
    /// the correlation distance since the last draw.
    fn loss_db(&mut self, model: PathLoss, d: f64, carrier_mhz: f64) -> f64 {
        if model.los_correlation_m().is_some_and(|c| (d - self.drawn_at_m).abs() >= c) {
            self.pathloss = LosState::draw(model, d, &mut self.rng);
            self.drawn_at_m = d;
        }
        self.pathloss.loss_db(d, carrier_mhz)
    }
}

/// The cell.
pub struct CellHop {
    cfg: CellConfig,
    ues: Vec<Ue>,
    dl: DlMac<Payload, MiCombining>,
    ul: UlMac<Payload>,
    rbg: usize,
    /// The next TTI to run, when the cell is running.
    next_tti: Option<u64>,
    outputs: VecDeque<CellOutput>,
    /// Per UE: its downlink SINR per RB in this TTI (kept between TTIs while its channel is
    /// static: no fading and not moving).
    sinr: Vec<Vec<f64>>,
    /// The UEs in play, in index order: those with anything under way (data or timers in a
    /// bearer, HARQ or uplink MAC work) and those touched since the last TTI. Every other UE
    /// is idle, and a TTI looks only at these.
    in_play: Vec<usize>,
    /// Per UE: whether it is in `in_play`.
    is_in_play: Vec<bool>,
    /// The UEs that take part in this TTI's downlink (data queued or HARQ work), in index
    /// order.
    dl_listed: Vec<usize>,
    /// Per UE: its channel never changes (no fading, no moving trajectory), so its SINRs, CQI
    /// report and mean SINR, once worked out, hold for every TTI.
    static_channel: Vec<bool>,
    /// Per UE: its last report is CQI 0 on every RBG (out of range).
    report_all_zero: Vec<bool>,
    /// Per UE: a report, mean SINR and wideband CQI have been worked out.
    report_ready: Vec<bool>,
    /// Per UE: its last subband CQI report, one per RBG (empty before the first).
    dl_cqi: Vec<Vec<u8>>,
    /// Per UE: the subband CQIs of its last downlink SINRs.
    cqi_memo: Vec<SinrMemo>,
    /// What a UE without a report this TTI schedules on: CQI 0 on every RBG, −100 dB.
    no_report: (Vec<u8>, Vec<f64>),
    gains: Vec<f64>,
    ul_gains: Vec<Vec<f64>>,
    delivered: Vec<u64>,
    broken: Vec<u64>,
    /// Per-UE time series, when asked for.
    series: Option<CellSeries>,
    /// Downlink TBs decided but not yet received (with [`MacTiming::Lena`]): the TTI they
    /// reach the UE in, and the payloads decoded and lost.
    dl_on_air: VecDeque<DlOnAir>,
    /// The TTI or slot, ns (the carrier's, kept for the clock's every use).
    slot_ns: u64,
}

/// What a UE leaving a cell leaves behind ([`CellHop::detach`]).
#[derive(Debug, Default)]
pub struct Detached {
    /// Per direction (downlink, uplink): the packets forwarded to the target, in order.
    pub forward: [Vec<Packet>; 2],
    /// The packets lost with the source's state.
    pub lost: Vec<Packet>,
}

/// The outcome of a downlink TTI, waiting to reach the UEs.
struct DlOnAir {
    tti: u64,
    delivered: Vec<(usize, Payload)>,
    lost: Vec<(usize, Payload)>,
}

impl CellHop {
    /// The cell of `cfg`, its random streams derived from `seed` and `label`.
    pub fn new(cfg: CellConfig, seed: u64, label: &str) -> Result<CellHop, CellError> {
        cfg.validate()?;
        let n = cfg.ue_distances_m.len();
        let grid = Grid { n_rb: cfg.n_rb as usize, rb_hz: cfg.carrier.rb_hz(), slot_s: cfg.carrier.slot_s() };
        let mut fading_rng = RngStream::derive(seed, &format!("{label}/fading"));
        let mut ues = Vec::with_capacity(n);
        for (i, &d) in cfg.ue_distances_m.iter().enumerate() {
            let own_doppler = cfg.trajectories.get(i).copied().flatten().and_then(|t| t.doppler_hz);
            let fading = match cfg.fading {
                FadingConfig::None => None,
                FadingConfig::Rayleigh { doppler_hz, spread } => Some([
                    CellFading::on_grid(spread, grid, own_doppler.unwrap_or(doppler_hz), FADING_SINUSOIDS, &mut fading_rng)?,
                    CellFading::on_grid(spread, grid, own_doppler.unwrap_or(doppler_hz), FADING_SINUSOIDS, &mut fading_rng)?,
                ]),
                FadingConfig::Rician { doppler_hz, spread, k_factor } => Some([
                    CellFading::rician_on_grid(spread, k_factor, grid, own_doppler.unwrap_or(doppler_hz), FADING_SINUSOIDS, &mut fading_rng)?,
                    CellFading::rician_on_grid(spread, k_factor, grid, own_doppler.unwrap_or(doppler_hz), FADING_SINUSOIDS, &mut fading_rng)?,
                ]),
            };
            let blockage = match cfg.blockage {
                Some(b) => Some(Blockage::new(b, RngStream::derive(seed, &format!("{label}/blockage/{i}")))?),
                None => None,
            };
            let los = cfg.draw_los.then(|| {
                let mut rng = RngStream::derive(seed, &format!("{label}/los/{i}"));
                LosState { pathloss: LosState::draw(cfg.budget.pathloss, d, &mut rng), drawn_at_m: d, rng }
            });
            let loss_db = los.as_ref().map_or_else(|| cfg.budget.loss_db(d), |l| l.pathloss.loss_db(d, cfg.budget.carrier_mhz));
            let rlc_bytes = cfg.rlc_entity_bytes();
            let mut bearers = [Bearer::new(cfg.rlc, rlc_bytes, cfg.t_reordering_us)?, Bearer::new(cfg.rlc, rlc_bytes, cfg.t_reordering_us)?];
            if let Some(aqm) = &cfg.aqm {
                for (dir, b) in bearers.iter_mut().enumerate() {
                    let qdisc = aqm.build(QueueLimit::Bytes(cfg.rlc_buffer_bytes), RngStream::derive(seed, &format!("{label}/aqm/{i}/{dir}")));
                    b.aqm = Some(Box::new(BearerAqm::new(qdisc, rlc_fill_limit(rlc_bytes))));
                }
            }
            if let Some(rule) = cfg.l4s_marking {
                for (dir, b) in bearers.iter_mut().enumerate() {
                    b.l4s = Some(Box::new(L4sMarker::new(rule, cfg.carrier.slot_ns(), RngStream::derive(seed, &format!("{label}/l4s/{i}/{dir}")))));
                }
            }
            ues.push(Ue {
                channel: UeChannel { loss_db, fading },
                bearers,
                counters: UeCounters::default(),
                distance_loss_db: loss_db,
                dl_noise_rise_db: 0.0,
                blockage,
                los,
            });
        }
        let scheme = cfg.carrier.scheme();
        let sched = match &cfg.carrier {
            Carrier::Lte => Scheduler::new(cfg.scheduler, cfg.n_rb, n)?,
            Carrier::Nr(c) => {
                let first = (0..).find_map(|slot| match cfg.carrier.downlink(slot) {
                    SlotUse::Symbols(shape) => Some(shape),
                    _ => None,
                });
                let first = first.ok_or_else(|| CellError::invalid("cell.tdd_pattern", "no downlink slot"))?;
                Scheduler::for_slots(cfg.scheduler, cfg.n_rb, nr_rbg_size(cfg.n_rb, c.rbg)?, n, scheme, cfg.carrier.slot_s(), first)?
            }
        };
        let rbg = sched.rbg_size() as usize;
        let decoder = MiCombining { curve: cfg.curve, scheme };
        let (processes, dl_harq) = cfg.carrier.dl_harq()?;
        let dl = DlMac::new(sched, decoder, RngStream::derive(seed, &format!("{label}/dl"))).with_harq(processes, dl_harq)?;
        let mut ul = UlMac::new(cfg.n_rb, n, cfg.amc, cfg.curve, RngStream::derive(seed, &format!("{label}/ul")))?.with_timing(cfg.timing.ul_timing())?.with_mcs(cfg.uplink_mcs)?;
        if let Some(shape) = cfg.carrier.uplink_shape() {
            ul = ul.for_slots(scheme, shape, cfg.carrier.ul_harq()?, cfg.carrier.rb_hz())?;
        }
        Ok(CellHop {
            ues,
            dl,
            ul,
            rbg,
            next_tti: None,
            outputs: VecDeque::new(),
            sinr: vec![Vec::new(); n],
            in_play: Vec::new(),
            is_in_play: vec![false; n],
            dl_listed: Vec::new(),
            static_channel: (0..n)
                .map(|i| cfg.fading == FadingConfig::None && cfg.blockage.is_none() && !cfg.trajectories.get(i).copied().flatten().is_some_and(|t| t.speed_mps > 0.0))
                .collect(),
            report_all_zero: vec![false; n],
            report_ready: vec![false; n],
            dl_cqi: vec![Vec::new(); n],
            cqi_memo: vec![SinrMemo::default(); n],
            no_report: (vec![0; (cfg.n_rb as usize).div_ceil(rbg)], vec![-100.0; cfg.n_rb as usize]),
            gains: Vec::new(),
            ul_gains: vec![Vec::new(); n],
            delivered: Vec::new(),
            broken: Vec::new(),
            series: None,
            dl_on_air: VecDeque::new(),
            slot_ns: cfg.carrier.slot_ns(),
            cfg,
        })
    }

    /// Whether UE `ue` is in line of sight, when the cell draws it; `None` otherwise.
    pub fn in_sight(&self, ue: usize) -> Option<bool> {
        self.ues[ue].los.as_ref().map(|l| l.pathloss == l.pathloss.with_sight(Sight::Los))
    }

    /// UE `ue`'s path loss to the eNB in the last TTI run (at its distance then), dB.
    pub fn loss_db(&self, ue: usize) -> f64 {
        self.ues[ue].channel.loss_db
    }

    /// The TTI (LTE) or slot (NR), ns: the unit of the per-UE series' RB counts.
    pub fn slot_ns(&self) -> u64 {
        self.slot_ns
    }

    /// The configuration.
    pub fn config(&self) -> &CellConfig {
        &self.cfg
    }

    /// UE `ue`'s counts and last values.
    pub fn ue_counters(&self, ue: usize) -> UeCounters {
        self.ues[ue].counters
    }

    /// Bytes queued in UE `ue`'s RLC buffer in direction `dir`.
    pub fn rlc_queued_bytes(&self, ue: usize, dir: CellDirection) -> u64 {
        self.ues[ue].bearers[dir as usize].status(0).queued_bytes
    }

    /// UE `ue`'s delivery status in direction `dir` (TS 38.425's DL DATA DELIVERY STATUS):
    /// the PDCP SN (the packets' `lower_sn`) of the newest SDU such that it and every SDU the
    /// bearer queued before it is acknowledged (AM: the highest successfully delivered NR PDCP
    /// SN; an SDU given up or discarded at re-establishment counts as done) or wholly handed to
    /// MAC (UM: the highest transmitted NR PDCP SN). `None` until one is, or for no such UE.
    pub fn confirmed_pdcp_sn(&self, ue: usize, dir: CellDirection) -> Option<u32> {
        self.ues.get(ue)?.bearers[dir as usize].confirmed_pdcp_sn()
    }

    /// UE `ue`'s link as a multi-cell controller sets it (`crate::ran`): `loss_db` between
    /// the cell's antenna and the UE (path loss less antenna gain, plus shadowing) in both
    /// directions, and `dl_noise_rise_db` = 10·log10(1 + I/N), the downlink's noise rise from
    /// the other cells' transmissions. It holds until set again (a UE set this way should have
    /// no trajectory of its own); blockage still adds on top.
    pub fn set_link(&mut self, ue: usize, loss_db: f64, dl_noise_rise_db: f64) -> Result<(), CellError> {
        check_range("loss_db", loss_db, -100.0, 400.0, "dB")?;
        check_range("dl_noise_rise_db", dl_noise_rise_db, 0.0, 200.0, "dB")?;
        let Some(u) = self.ues.get_mut(ue) else {
            return Err(CellError::invalid("ue", format!("the cell has {} UEs, not {}", self.ues.len(), ue + 1)));
        };
        if u.distance_loss_db != loss_db || u.dl_noise_rise_db != dl_noise_rise_db {
            u.distance_loss_db = loss_db;
            u.channel.loss_db = loss_db;
            u.dl_noise_rise_db = dl_noise_rise_db;
            // A static channel's SINRs and report are worked out again.
            self.sinr[ue].clear();
            self.report_ready[ue] = false;
            self.dl_cqi[ue].clear();
        }
        Ok(())
    }

    /// UE `ue` leaves the cell (handover): its MAC is reset (HARQ flushed, TBs on the air for
    /// it dropped) and both bearers re-established, the packets they held split into those the
    /// source forwards to the target and those lost ([`Detached`]).
    pub fn detach(&mut self, ue: usize) -> Result<Detached, CellError> {
        if ue >= self.ues.len() {
            return Err(CellError::invalid("ue", format!("the cell has {} UEs, not {}", self.ues.len(), ue + 1)));
        }
        let _ = self.dl.reset_ue(ue);
        let _ = self.ul.reset_ue(ue);
        for d in &mut self.dl_on_air {
            d.delivered.retain(|(u, _)| *u != ue);
            d.lost.retain(|(u, _)| *u != ue);
        }
        let mut out = Detached::default();
        for dir in 0..2 {
            let (forward, lost) = self.ues[ue].bearers[dir].hand_over(self.cfg.rlc, self.cfg.rlc_entity_bytes(), self.cfg.t_reordering_us)?;
            out.forward[dir] = forward;
            out.lost.extend(lost);
        }
        self.dl_cqi[ue].clear();
        self.report_ready[ue] = false;
        // The next TTI notes the emptied buffers.
        self.bring_into_play(ue);
        Ok(out)
    }

    /// UE `ue`'s RLC AM counts in direction `dir`; `None` for UM bearers.
    pub fn rlc_am_counts(&self, ue: usize, dir: CellDirection) -> Option<AmCounts> {
        self.ues[ue].bearers[dir as usize].am_counts()
    }

    /// What L4S marking counted on UE `ue`'s RLC buffer in direction `dir`; `None` without
    /// marking.
    pub fn l4s_counts(&self, ue: usize, dir: CellDirection) -> Option<L4sCounts> {
        self.ues.get(ue)?.bearers[dir as usize].l4s.as_ref().map(|m| m.counts())
    }

    /// What the queue discipline above UE `ue`'s RLC entity in direction `dir` did (`cell.aqm`);
    /// `None` without one.
    pub fn aqm_stats(&self, ue: usize, dir: CellDirection) -> Option<AqmStats> {
        self.ues.get(ue)?.bearers[dir as usize].aqm_stats()
    }

    /// UE `ue`'s L4S rate estimate in direction `dir` (predicted sojourn: the drained rate,
    /// floored), bytes/s; `None` without one.
    pub fn l4s_rate_estimate(&self, ue: usize, dir: CellDirection) -> Option<f64> {
        self.ues.get(ue)?.bearers[dir as usize].l4s.as_ref().and_then(|m| m.rate_estimate())
    }

    /// Blocked periods UE `ue`'s link has begun so far; `None` without blockage.
    pub fn blocked_periods(&self, ue: usize) -> Option<u64> {
        self.ues[ue].blockage.as_ref().map(Blockage::blocked_periods)
    }

    /// Keeps per-UE time series in bins `bin_ns` wide from now on ([`CellSeries`]).
    pub fn record_series(&mut self, bin_ns: u64) {
        self.series = Some(CellSeries::new(bin_ns, self.ues.len()));
    }

    /// The per-UE time series, if [`CellHop::record_series`] asked for them.
    pub fn series(&self) -> Option<&CellSeries> {
        self.series.as_ref()
    }

    /// The number of UEs.
    pub fn ue_count(&self) -> usize {
        self.ues.len()
    }

    /// A packet for UE `ue` (downlink) or from it (uplink) arrives at `now`. A packet that does
    /// not fit in the RLC buffer comes back with [`CellDropCause::RlcBufferFull`].
    pub fn enqueue(&mut self, now: Time, ue: usize, dir: CellDirection, mut pkt: Packet) -> Result<(), (Packet, CellDropCause)> {
        if ue >= self.ues.len() {
            return Err((pkt, CellDropCause::RlcBufferFull));
        }
        self.bring_into_play(ue);
        if self.ues[ue].bearers[dir as usize].aqm.is_some() {
            return self.enqueue_aqm(now, ue, dir, pkt);
        }
        let u = &mut self.ues[ue];
        let bearer = &mut u.bearers[dir as usize];
        match bearer.enqueue(pkt.size.max(1), now.0 / 1000) {
            Ok(Some(id)) => {
                if bearer.l4s.is_some() {
                    let ahead = bearer.status(0).queued_bytes.saturating_sub(u64::from(pkt.size.max(1)));
                    if let Some(m) = &mut bearer.l4s {
                        pkt.ecn = m.on_enqueue(id, now.0 / 1000, ahead, pkt.ecn);
                    }
                }
                bearer.note_pdcp_sn(id, pkt.lower_sn);
                if let Err(pkt) = bearer.packets.insert(id, pkt) {
                    // The RLC buffer gives ids in order; this cannot happen.
                    return Err((pkt, CellDropCause::RlcBufferFull));
                }
                if let Some(s) = &mut self.series {
                    s.rlc_fill(ue, dir as usize, now.0, bearer.status(0).queued_bytes);
                }
                if self.next_tti.is_none() {
                    self.next_tti = Some(now.0.div_ceil(self.slot_ns));
                }
                Ok(())
            }
            _ => {
                u.counters.rlc_buffer_drops += 1;
                if let Some(s) = &mut self.series {
                    s.bin_mut(ue, dir as usize, now.0).drops_buffer += 1;
                }
                Err((pkt, CellDropCause::RlcBufferFull))
            }
        }
    }

    /// [`CellHop::enqueue`] into a bearer's queue discipline: refused by its limit, the packet
    /// comes back as `rlc_buffer_full`, by its own rule as `aqm`; packets it drops from its
    /// queue to make room leave as `aqm` drops at once.
    fn enqueue_aqm(&mut self, now: Time, ue: usize, dir: CellDirection, pkt: Packet) -> Result<(), (Packet, CellDropCause)> {
        let mut dropped = Vec::new();
        let u = &mut self.ues[ue];
        let bearer = &mut u.bearers[dir as usize];
        let admitted = bearer.aqm_enqueue(now, pkt, &mut dropped);
        let queued = bearer.status(0).queued_bytes;
        if !dropped.is_empty() {
            u.counters.aqm_drops += dropped.len() as u64;
            let at = self.outputs.partition_point(|o| o.at() <= now);
            for (k, pkt) in dropped.into_iter().enumerate() {
                if let Some(s) = &mut self.series {
                    s.bin_mut(ue, dir as usize, now.0).drops_buffer += 1;
                }
                self.outputs.insert(at + k, CellOutput::Dropped { at: now, ue, dir, pkt, cause: CellDropCause::Aqm });
            }
        }
        let u = &mut self.ues[ue];
        match admitted {
            Ok(()) => {
                if let Some(s) = &mut self.series {
                    s.rlc_fill(ue, dir as usize, now.0, queued);
                }
                if self.next_tti.is_none() {
                    self.next_tti = Some(now.0.div_ceil(self.slot_ns));
                }
                Ok(())
            }
            Err((pkt, room)) => {
                if let Some(s) = &mut self.series {
                    s.bin_mut(ue, dir as usize, now.0).drops_buffer += 1;
                }
                if room {
                    u.counters.aqm_drops += 1;
                    Err((pkt, CellDropCause::Aqm))
                } else {
                    u.counters.rlc_buffer_drops += 1;
                    Err((pkt, CellDropCause::RlcBufferFull))
                }
            }
        }
    }

    /// The packets the queue disciplines of the UEs in play dropped (when the RLC entities
    /// took from them at `at`, or since a handover), as `aqm` drops at `at`, placed among
    /// `finished` by time.
    fn report_aqm_drops(&mut self, at: Time, finished: &mut Vec<CellOutput>) {
        let mut drops = Vec::new();
        for &ue in &self.in_play {
            for dir in [CellDirection::Down, CellDirection::Up] {
                let mut pkts = Vec::new();
                self.ues[ue].bearers[dir as usize].take_aqm_drops(&mut pkts);
                self.ues[ue].counters.aqm_drops += pkts.len() as u64;
                drops.extend(pkts.into_iter().map(|pkt| CellOutput::Dropped { at, ue, dir, pkt, cause: CellDropCause::Aqm }));
            }
        }
        if !drops.is_empty() {
            let k = finished.partition_point(|o| o.at() <= at);
            finished.splice(k..k, drops);
        }
    }

    /// When the cell next has something to do: its next TTI while running, or the next output.
    pub fn poll_timeout(&self) -> Option<Time> {
        let tti = self.next_tti.map(|n| Time(n * self.slot_ns));
        let out = self.outputs.front().map(CellOutput::at);
        Time::earliest(tti, out)
    }

    /// The next output due by `now`, after running the TTIs that start by then.
    pub fn poll(&mut self, now: Time) -> Result<Option<CellOutput>, CellError> {
        while let Some(n) = self.next_tti.filter(|&n| n * self.slot_ns <= now.0) {
            if self.outputs.front().is_some_and(|o| o.at() <= now && o.at().0 <= n * self.slot_ns) {
                break; // hand out what is due before running further
            }
            self.run_tti(n)?;
            self.next_tti = if self.running() { Some(n + 1) } else { None };
        }
        if self.outputs.front().is_some_and(|o| o.at() <= now) {
            return Ok(self.outputs.pop_front());
        }
        Ok(None)
    }

    fn running(&self) -> bool {
        !self.dl_on_air.is_empty()
            || !self.in_play.is_empty()
    }

    /// Whether UE `i` has anything under way.
    fn ue_busy(&self, i: usize) -> bool {
        self.ues[i].bearers.iter().any(Bearer::busy) || self.dl.harq(i).is_some_and(|h| h.busy() > 0) || self.ul.busy(i)
    }

    /// UE `i` is in play from now on (until a TTI's end finds it idle).
    fn bring_into_play(&mut self, i: usize) {
        if !self.is_in_play[i] {
            self.is_in_play[i] = true;
            let at = self.in_play.partition_point(|&u| u < i);
            self.in_play.insert(at, i);
        }
    }

    /// At a TTI's end: the UEs that have nothing under way leave the play.
    fn leave_play_when_idle(&mut self) {
        let mut in_play = std::mem::take(&mut self.in_play);
        in_play.retain(|&i| {
            let busy = self.ue_busy(i);
            self.is_in_play[i] = busy;
            busy
        });
        self.in_play = in_play;
        debug_assert!((0..self.ues.len()).all(|i| self.is_in_play[i] || !self.ue_busy(i)), "a UE with work under way is out of play");
    }

    fn run_tti(&mut self, n: u64) -> Result<(), CellError> {
        let slot_ns = self.slot_ns;
        let t_s = (n * slot_ns) as f64 / 1e9;
        let end = Time((n + 1) * slot_ns);
        let n_rb = self.cfg.n_rb as usize;
        let mut finished: Vec<CellOutput> = Vec::new();
        // Moving UEs: the path loss at this TTI's distance.
        for (u, t) in self.ues.iter_mut().zip(&self.cfg.trajectories) {
            if let Some(t) = t.filter(|t| t.speed_mps > 0.0) {
                let d = t.distance_at(t_s);
                u.distance_loss_db = match &mut u.los {
                    Some(los) => los.loss_db(self.cfg.budget.pathloss, d, self.cfg.budget.carrier_mhz),
                    None => self.cfg.budget.loss_db(d),
                };
                u.channel.loss_db = u.distance_loss_db;
            }
        }
        // Blocked UEs: the blockage's attenuation on top, both directions.
        for u in &mut self.ues {
            if let Some(b) = &mut u.blockage {
                u.channel.loss_db = u.distance_loss_db + b.attenuation_db(t_s);
            }
        }

        if matches!(self.cfg.rlc, RlcMode::Am(_)) {
            self.run_arq(n, &mut finished);
        }

        // Downlink, in a slot that has PDSCH symbols.
        let downlink = self.cfg.carrier.downlink(n);
        if let SlotUse::Symbols(shape) = downlink {
            self.dl.set_shape(shape)?;
        }
        let mut listed = std::mem::take(&mut self.dl_listed);
        listed.clear();
        for &i in &self.in_play {
            let u = &mut self.ues[i];
            let wants = downlink != SlotUse::Closed && (u.bearers[0].status(0).queued_bytes > 0 || self.dl.harq(i).is_some_and(|h| h.busy() > 0));
            if !wants {
                continue;
            }
            listed.push(i);
            // A static channel's SINRs are those of every earlier TTI: worked out once.
            if !(self.static_channel[i] && self.sinr[i].len() == n_rb) {
                u.channel.gains_db_at_tti(0, n_rb, n, t_s, 0..n_rb, &mut self.gains)?;
                self.cfg.budget.downlink_sinr_rb(self.cfg.n_rb, self.cfg.carrier.rb_hz(), u.channel.loss_db + u.dl_noise_rise_db, &self.gains, &mut self.sinr[i]);
            }
            if self.dl_cqi[i].is_empty() {
                self.dl_cqi[i] = self.cqi_memo[i].at(&self.sinr[i]).cqi_per_rbg(&self.cfg.amc, self.cfg.carrier.scheme(), self.rbg)?.to_vec();
            }
        }
        if !listed.is_empty() {
            let no_cqi = &self.no_report.0;
            let inputs: Vec<DlUeInput> = listed
                .iter()
                .map(|&i| {
                    let cqi = &self.dl_cqi[i];
                    let queued = self.ues[i].bearers[0].status(0).tx_queue_bytes;
                    DlUeInput { rbg_cqi: if cqi.is_empty() { no_cqi } else { cqi }, sinr_db: &self.sinr[i], buffer_bytes: queued }
                })
                .collect();
            let ues = &mut self.ues;
            let tti = self.dl.tti_listed(n, &listed, &inputs, |ue, bytes| ues[ue].bearers[0].pull(bytes, Time(n * slot_ns)))?;
            if let Some(s) = &mut self.series {
                for tb in &tti.tbs {
                    let b = s.bin_mut(tb.ue, 0, n * slot_ns);
                    b.record_tb(tb.n_prb, tb.mcs, tb.transmission, tb.decoded, tb.dropped);
                }
            }
            for tb in &tti.tbs {
                let c = &mut self.ues[tb.ue].counters;
                c.dl_tbs += 1;
                c.dl_tb_errors += u64::from(!tb.decoded);
                c.dl_rb_ttis += u64::from(tb.n_prb);
                if tb.transmission == 1 {
                    c.dl_new_rb_ttis += u64::from(tb.n_prb);
                    c.dl_new_tbs += 1;
                    c.dl_first_tx_errors += u64::from(!tb.decoded);
                    c.last_mcs = tb.mcs;
                }
            }
            self.dl_on_air.push_back(DlOnAir { tti: n + self.cfg.timing.dl_delay_ttis(), delivered: tti.delivered, lost: tti.lost });
            // This TTI's SINR is the report the next one schedules on.
            for &i in &listed {
                let u = &mut self.ues[i];
                // A static channel's report, mean SINR and wideband CQI are those it already
                // has (the same SINRs give the same report), once it has one.
                if !(self.static_channel[i] && self.report_ready[i]) {
                    let mut memo = self.cqi_memo[i].at(&self.sinr[i]);
                    let report = &mut self.dl_cqi[i];
                    report.clear();
                    report.extend_from_slice(memo.cqi_per_rbg(&self.cfg.amc, self.cfg.carrier.scheme(), self.rbg)?);
                    u.counters.last_dl_sinr_db = memo.mean_sinr_db();
                    let cqi_sum = report.iter().map(|&c| u32::from(c)).sum::<u32>();
                    u.counters.last_cqi = (cqi_sum / report.len() as u32) as u8;
                    self.report_ready[i] = true;
                    self.report_all_zero[i] = report.iter().all(|&c| c == 0);
                }
                if let Some(s) = &mut self.series {
                    let b = s.bin_mut(i, 0, n * slot_ns);
                    b.samples += 1;
                    b.sinr_db_sum += u.counters.last_dl_sinr_db;
                    b.cqi_sum += u64::from(u.counters.last_cqi);
                }
                if u.bearers[0].status(0).queued_bytes > 0 && self.report_all_zero[i] {
                    u.counters.dl_out_of_range_ttis += 1;
                }
            }
        }
        // (Only the UEs listed worked out SINRs in this TTI.)
        for &i in &listed {
            if !self.static_channel[i] {
                self.sinr[i].clear();
            }
        }
        self.dl_listed = listed;

        // The downlink TBs that reach the UEs in this TTI.
        while self.dl_on_air.front().is_some_and(|d| d.tti <= n) {
            let Some(d) = self.dl_on_air.pop_front() else { break };
            for (ue, payload) in d.delivered {
                self.receive(ue, CellDirection::Down, payload, end, &mut finished);
            }
            for (ue, payload) in d.lost {
                self.lose(ue, CellDirection::Down, &payload, end, &mut finished);
            }
        }

        // Uplink.
        let any_ul = self.cfg.carrier.uplink(n) != SlotUse::Closed
            && self.in_play.iter().any(|&i| self.ues[i].bearers[1].status(0).queued_bytes > 0 || self.ul.busy(i));
        if any_ul {
            // Fading only where the UEs will send, or be measured, in this TTI.
            let buffers: Vec<u64> = self.ues.iter().map(|u| u.bearers[1].status(0).tx_queue_bytes).collect();
            let arrived: Vec<u64> = self.ues.iter().map(|u| u.bearers[1].arrived_sdus()).collect();
            let mut sending = vec![None; self.ues.len()];
            for (ue, rbs) in self.ul.parts(n, &buffers, &arrived) {
                sending[ue] = Some(rbs);
            }
            for ((u, gains), rbs) in self.ues.iter_mut().zip(&mut self.ul_gains).zip(sending) {
                u.channel.gains_db_at_tti(1, n_rb, n, t_s, rbs.unwrap_or(0..0), gains)?;
            }
            let inputs: Vec<UlUeInput> = self
                .ues
                .iter()
                .enumerate()
                .map(|(i, u)| UlUeInput { loss_db: u.channel.loss_db, fading_db: &self.ul_gains[i], buffer_bytes: u.bearers[1].status(0).tx_queue_bytes, arrived_sdus: u.bearers[1].arrived_sdus() })
                .collect();
            let ues = &mut self.ues;
            let tti = self.ul.tti(n, &self.cfg.budget, &inputs, |ue, bytes| ues[ue].bearers[1].pull(bytes, Time(n * slot_ns)))?;
            if let Some(s) = &mut self.series {
                for tb in &tti.tbs {
                    s.bin_mut(tb.ue, 1, n * slot_ns).record_tb(tb.n_prb, tb.mcs, tb.transmission, tb.decoded, tb.dropped);
                }
                for m in &tti.measured {
                    let b = s.bin_mut(m.ue, 1, n * slot_ns);
                    b.samples += 1;
                    b.sinr_db_sum += m.sinr_db;
                    b.cqi_sum += u64::from(m.cqi);
                }
            }
            let mut sent = vec![false; self.ues.len()];
            for tb in &tti.tbs {
                sent[tb.ue] = true;
                let c = &mut self.ues[tb.ue].counters;
                c.ul_tbs += 1;
                c.ul_tb_errors += u64::from(!tb.decoded);
                c.ul_rb_ttis += u64::from(tb.n_prb);
            }
            match self.cfg.timing {
                // A UE with data that sent nothing could not be reached.
                MacTiming::Ideal => {
                    for (i, u) in self.ues.iter_mut().enumerate() {
                        if !sent[i] && u.bearers[1].status(0).queued_bytes > 0 {
                            u.counters.ul_out_of_range_ttis += 1;
                        }
                    }
                }
                // Waiting for a grant is not being out of range: a part granted at CQI 0 is.
                MacTiming::Lena => {
                    for m in tti.measured.iter().filter(|m| m.cqi == 0) {
                        if self.ues[m.ue].bearers[1].status(0).queued_bytes > 0 {
                            self.ues[m.ue].counters.ul_out_of_range_ttis += 1;
                        }
                    }
                }
            }
            for (ue, payload) in tti.delivered {
                self.receive(ue, CellDirection::Up, payload, end, &mut finished);
            }
            for (ue, payload) in tti.lost {
                self.lose(ue, CellDirection::Up, &payload, end, &mut finished);
            }
        }

        // The receiving sides' timers due by the end of this TTI (UM t-Reordering, AM
        // t-Reassembly and t-StatusProhibit), and AM's status reports on their way.
        // AM: a downlink bearer's report goes up, an uplink one's down (the same slot for all UEs).
        let status_slots = match self.cfg.rlc {
            RlcMode::Am(_) => [true, false].map(|up| self.cfg.carrier.next_open(up, n + 1)),
            RlcMode::Um => [n + 1; 2],
        };
        for k in 0..self.in_play.len() {
            let ue = self.in_play[k];
            for dir in [CellDirection::Down, CellDirection::Up] {
                let status_slot = status_slots[dir as usize];
                let (mut ids, mut broken) = (std::mem::take(&mut self.delivered), std::mem::take(&mut self.broken));
                ids.clear();
                broken.clear();
                self.ues[ue].bearers[dir as usize].end_of_slot(end.0 / 1000, status_slot, &mut ids, &mut broken);
                if !ids.is_empty() || !broken.is_empty() {
                    self.hand_out(ue, dir, &ids, &broken, end, &mut finished);
                }
                (self.delivered, self.broken) = (ids, broken);
            }
        }
        // What the queue disciplines dropped as the RLC entities took from them.
        if self.cfg.aqm.is_some() {
            self.report_aqm_drops(Time(n * slot_ns), &mut finished);
        }
        // L4S marking: the slot's drained bytes are a sample of each UE's rate (a cell without
        // marking skips the pass).
        if self.cfg.l4s_marking.is_some() {
            for &ue in &self.in_play {
                for b in &mut self.ues[ue].bearers {
                    b.l4s_end_of_slot();
                }
            }
        }
        if let Some(s) = &mut self.series {
            // A UE out of play has had an empty buffer since it left (its bins carry it over).
            for &i in &self.in_play {
                let u = &self.ues[i];
                for dir in 0..2 {
                    let q = u.bearers[dir].status(0).queued_bytes;
                    let b = s.bin_mut(i, dir, n * slot_ns);
                    if b.rlc_last_bytes != Some(q) {
                        s.rlc_fill(i, dir, n * slot_ns, q);
                    }
                }
            }
            for o in &finished {
                match o {
                    CellOutput::Delivered { at, ue, dir, pkt } => s.bin_mut(*ue, *dir as usize, at.0).bytes_delivered += u64::from(pkt.size),
                    CellOutput::Dropped { at, ue, dir, cause, .. } => {
                        let b = s.bin_mut(*ue, *dir as usize, at.0);
                        match cause {
                            CellDropCause::RlcBufferFull | CellDropCause::Aqm => b.drops_buffer += 1,
                            _ => b.drops_radio += 1,
                        }
                    }
                }
            }
        }
        self.outputs.extend(finished);
        self.leave_play_when_idle();
        Ok(())
    }

    fn receive(&mut self, ue: usize, dir: CellDirection, payload: Payload, at: Time, out: &mut Vec<CellOutput>) {
        self.bring_into_play(ue);
        let (mut ids, mut broken) = (std::mem::take(&mut self.delivered), std::mem::take(&mut self.broken));
        ids.clear();
        broken.clear();
        self.ues[ue].bearers[dir as usize].receive(at.0 / 1000, payload, &mut ids, &mut broken);
        self.hand_out(ue, dir, &ids, &broken, at, out);
        (self.delivered, self.broken) = (ids, broken);
    }

    /// The receiving RLC completed the SDUs `ids` and can no longer complete `broken` (those
    /// HARQ did not already account for are reordering losses).
    fn hand_out(&mut self, ue: usize, dir: CellDirection, ids: &[u64], broken: &[u64], at: Time, out: &mut Vec<CellOutput>) {
        let u = &mut self.ues[ue];
        let b = &mut u.bearers[dir as usize];
        for id in broken {
            if let Some(pkt) = b.packets.remove(*id) {
                u.counters.reordering_drops += 1;
                out.push(CellOutput::Dropped { at, ue, dir, pkt, cause: CellDropCause::RlcReordering });
            }
        }
        for id in ids {
            if let Some(pkt) = b.packets.remove(*id) {
                out.push(CellOutput::Delivered { at, ue, dir, pkt });
            }
        }
    }

    /// HARQ gave up a TB: in UM the SDUs it carried a part of can no longer be reassembled;
    /// in AM, ARQ repairs it.
    fn lose(&mut self, ue: usize, dir: CellDirection, payload: &Payload, at: Time, out: &mut Vec<CellOutput>) {
        self.bring_into_play(ue);
        let mut broken = std::mem::take(&mut self.broken);
        broken.clear();
        let u = &mut self.ues[ue];
        u.bearers[dir as usize].lost(payload, &mut broken);
        for id in &broken {
            if let Some(pkt) = u.bearers[dir as usize].packets.remove(*id) {
                u.counters.harq_drops += 1;
                out.push(CellOutput::Dropped { at, ue, dir, pkt, cause: CellDropCause::HarqMaxRetx });
            }
        }
        self.broken = broken;
    }

    /// AM, at the start of slot `n`: status reports reach the transmitters, t-PollRetransmit
    /// fires; SDUs given up (and those a re-establishment discards) leave as drops.
    fn run_arq(&mut self, n: u64, out: &mut Vec<CellOutput>) {
        let at = Time(n * self.slot_ns);
        let mut failed = std::mem::take(&mut self.broken);
        for k in 0..self.in_play.len() {
            let ue = self.in_play[k];
            for dir in [CellDirection::Down, CellDirection::Up] {
                failed.clear();
                let u = &mut self.ues[ue];
                u.bearers[dir as usize].start_of_slot(n, at.0 / 1000, &mut failed);
                for id in &failed {
                    if let Some(pkt) = u.bearers[dir as usize].packets.remove(*id) {
                        u.counters.rlc_max_retx_drops += 1;
                        out.push(CellOutput::Dropped { at, ue, dir, pkt, cause: CellDropCause::RlcMaxRetx });
                    }
                }
            }
        }
        self.broken = failed;
    }
}
