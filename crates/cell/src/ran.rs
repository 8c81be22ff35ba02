//! A radio access network of several cells, UEs moving through them, and handovers: one
//! operator's cells ([`CellHop`]s placed by a [`Layout`]), each UE's [`Route`], the coupling
//! and load-weighted interference that follow the UE to every cell, RRC's measurements (layer-3
//! filtered RSRP, event A3 with time-to-trigger, [`crate::rrc`]) deciding handovers, the
//! handover procedure as a timed state machine, and radio link failure. The decision's event is
//! A3 (a neighbour offset better than the serving cell) or, with `a5_thresholds_dbm`, A5 (the
//! serving cell below one threshold and a neighbour above another, 38.331 §5.5.4.6), the
//! best neighbour that completed its time-to-trigger being the target either way.
//!
//! **The procedure** (TS 36.300 §10.1.2.1, TS 38.300 §9.2.3.2, as the reference's §5.3 times
//! it). An A3 report at t₀ (the measurement instant the time-to-trigger completes) leads, after
//! `preparation` (the report on the uplink, the source's decision, HANDOVER REQUEST and its
//! acknowledgement over X2/Xn), to the handover command at t₁: the UE leaves the source (its
//! MAC reset, its RLC re-established, [`CellHop::detach`]) and is in no cell until t₂ = t₁ +
//! `interruption` (synchronisation and random access in the target). The source forwards over
//! X2 what the UE has not received (RLC AM: every packet not delivered, the UE's PDCP status
//! report saying which arrived; RLC UM: the packets not a byte of which was sent; the rest is
//! lost, cause `handover`); forwarded packets reach the target `x2_delay` after they leave the
//! source. Downlink packets reaching the RAN for the UE go to the source until the path switch
//! (t₂ + `path_switch`; the core then sends to the target) and are forwarded too, so packets
//! sent after the switch can overtake forwarded ones. The UE keeps its uplink packets and sends
//! them in the target. With `forwarding = false` whatever the source held is lost, and
//! packets reaching it before the switch too.
//!
//! **DAPS** (Rel-16 dual active protocol stack, 38.300 §9.2.3.2): the UE keeps receiving from
//! the source until its random access in the target completes (t₂); only then does the source
//! let it go and forward what is left: no gap in which the UE is in no cell.
//!
//! **Conditional handover** (Rel-16 CHO, 38.300 §9.2.3.4, 38.331 §5.3.5.13): a looser A3
//! (`preparation_offset_db`, the same hysteresis and time-to-trigger) makes the source prepare
//! the cells it reports as candidates; `preparation` later each is ready, and from the next
//! measurement instant the UE evaluates the execution condition — A3 with `a3_offset_db` —
//! against the ready candidates alone, while the source keeps serving it. When the condition
//! holds the UE executes at once (no report, no command to wait for at the cell edge): it leaves
//! the source and enters the candidate `interruption` later. The source learns of it from the
//! target's HANDOVER SUCCESS (`x2_delay` after the UE entered) and only then sends the SN status
//! and forwards (no early forwarding), so forwarded packets reach the target two X2 delays
//! after the UE. A radio link failure with a ready candidate as the best cell is recovered by
//! executing to it (`attemptCondReconfig`): the source's packets are forwarded, not lost, and
//! the outage is the interruption instead of the re-establishment. CHO does not combine with
//! DAPS (38.300 §9.2.3.2).
//!
//! **Radio link failure** (38.331 §5.3.10): each measurement instant feeds the serving cell's
//! wideband SINR to the UE's [`LinkMonitor`] (out of sync below Qout, in sync above Qin, N310,
//! N311, T310). On failure the UE leaves its cell, everything the cell held for it is lost, and
//! after `reestablishment` (cell selection, random access, RRC re-establishment) it enters the
//! cell with the best filtered RSRP.
//!
//! **A secondary node of EN-DC** (TS 37.340 §10.3–10.5, 38.331 §5.7.3, with `secondary`): the
//! RAN's cells are the SCG of UEs whose master keeps them. A handover inside it is a PSCell
//! (SN) change as above, the master's leg carrying on. The SCG is released when the serving
//! cell's filtered RSRP falls below `release_rsrp_dbm` (event A2 with the handover's
//! hysteresis and time-to-trigger) or its radio link fails (SCG failure, no re-establishment):
//! the UE leaves the cell, and under RLC AM the split's PDCP entity recovers what the SN had not
//! delivered (38.323 §5.5 data recovery: every PDU not confirmed, resent on the master's leg);
//! under UM it is lost. While released the split sends on its other leg alone. A released UE's
//! SCG is added again when an NR cell's filtered RSRP exceeds `addition_rsrp_dbm` (event B1):
//! after `preparation` (SGNB ADDITION REQUEST and its acknowledgement, the RRC
//! reconfiguration) and `interruption` (random access in the cell) the UE is in it.
//!
//! **Radio model.** Every `link_update` each UE's coupling to every cell (the layout's antenna
//! gain less path loss, and the UE's route shadowing) sets its loss in that cell, and its
//! downlink noise rise 10·log10(1 + I/N) with I = Σ over the other cells of the same carrier of
//! their load × received power per RB; a cell's load is the share of its RBs it used in the
//! last `link_update` (its TBs' RBs). Every `measurement_period` the UE's layer 1 gives each
//! cell's RSRP (RS EPRE + coupling), the linear mean over the link updates since the last
//! measurement instant (as a UE averages its RSRP samples over the measurement period), to its
//! layer-3 filter. A time-to-trigger expires when it has run its length, between measurement
//! instants if it must (38.331 §5.5.4.1: the condition held at every measurement during it).

use std::collections::VecDeque;

use multiconn_core::{Packet, Time};
use multiconn_radio::layout::{Layout, Ue as LayoutUe};
use multiconn_radio::pathloss::PathLoss;
use multiconn_radio::route::{Route, RouteShadowing};
use multiconn_radio::units::{db_to_ratio, receiver_noise_dbm};

use crate::dl::CellDropCause;
use crate::error::{check_range, CellError};
use crate::hop::{CellConfig, CellDirection, CellHop, CellOutput};
use crate::rrc::{EventConfig, EventMonitor, L3Filter, LinkEvent, LinkMonitor, MeasEvent, RlmConfig};

/// How handovers are decided and carried out.
#[derive(Clone, Debug, PartialEq)]
pub struct HandoverConfig {
    /// Event A3's offset, dB (3).
    pub a3_offset_db: f64,
    /// Event A5's thresholds instead of A3 (`None`: A3): the serving cell below the first and
    /// a neighbour above the second, dBm (38.331 §5.5.4.6).
    pub a5_thresholds_dbm: Option<(f64, f64)>,
    /// Hysteresis, dB (1).
    pub hysteresis_db: f64,
    /// Time-to-trigger, ms, one of 38.331's values (256).
    pub time_to_trigger_ms: u32,
    /// From the A3 report to the handover command, ns (20 ms).
    pub preparation_ns: u64,
    /// From the command to the UE's random access completing in the target, ns (40 ms).
    pub interruption_ns: u64,
    /// One-way X2/Xn delay between cells, ns (5 ms).
    pub x2_delay_ns: u64,
    /// From the UE entering the target to the core's path switch, ns (20 ms).
    pub path_switch_ns: u64,
    /// The source forwards what the UE has not received (true).
    pub forwarding: bool,
    /// Dual active protocol stack: the source serves the UE until it has entered the target.
    pub daps: bool,
    /// Conditional handover (`None`: the classic procedure).
    pub conditional: Option<ConditionalConfig>,
}

/// Conditional handover's settings (see the module header).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConditionalConfig {
    /// The A3 offset of the preparation trigger, dB: at most the execution's `a3_offset_db`
    /// (0, the reference's 3 dB below the default execution offset).
    pub preparation_offset_db: f64,
    /// After a radio link failure, a ready candidate selected as the best cell is executed to
    /// instead of re-establishing (true, 38.331 `attemptCondReconfig`).
    pub attempt_after_failure: bool,
}

impl Default for ConditionalConfig {
    fn default() -> ConditionalConfig {
        ConditionalConfig { preparation_offset_db: 0.0, attempt_after_failure: true }
    }
}

impl Default for HandoverConfig {
    fn default() -> HandoverConfig {
        HandoverConfig {
            a3_offset_db: 3.0,
            a5_thresholds_dbm: None,
            hysteresis_db: 1.0,
            time_to_trigger_ms: 256,
            preparation_ns: 20_000_000,
            interruption_ns: 40_000_000,
            x2_delay_ns: 5_000_000,
            path_switch_ns: 20_000_000,
            forwarding: true,
            daps: false,
            conditional: None,
        }
    }
}

/// How a UE measures.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasurementConfig {
    /// Between RSRP samples (and radio link monitoring indications), ns (40 ms).
    pub period_ns: u64,
    /// The layer-3 filter coefficient k (4).
    pub filter_coefficient: u8,
    /// The sample period the filter coefficient assumes, ns (200 ms, TS 36.331's for LTE).
    pub nominal_period_ns: u64,
    /// Between updates of every UE's loss and interference in every cell, ns (10 ms).
    pub link_update_ns: u64,
}

impl Default for MeasurementConfig {
    fn default() -> MeasurementConfig {
        MeasurementConfig { period_ns: 40_000_000, filter_coefficient: 4, nominal_period_ns: 200_000_000, link_update_ns: 10_000_000 }
    }
}

/// Radio link failure handling.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureConfig {
    /// Radio link monitoring (Qout, Qin, N310, N311, T310).
    pub monitor: RlmConfig,
    /// From the failure to the UE being served again, ns (300 ms).
    pub reestablishment_ns: u64,
}

impl Default for FailureConfig {
    fn default() -> FailureConfig {
        FailureConfig { monitor: RlmConfig::default(), reestablishment_ns: 300_000_000 }
    }
}

/// The RAN as an EN-DC secondary node (see the module header).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SecondaryNodeConfig {
    /// Event B1's threshold, dBm: a released UE's SCG is added in a cell above it.
    pub addition_rsrp_dbm: f64,
    /// Event A2's threshold, dBm: the SCG is released when the serving cell falls below it
    /// (`None`: only on an SCG failure).
    pub release_rsrp_dbm: Option<f64>,
}

/// Spatially correlated shadowing along the routes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RanShadowing {
    /// Standard deviation, dB.
    pub sigma_db: f64,
    /// Decorrelation distance, m.
    pub decorrelation_m: f64,
    /// Correlation between sites.
    pub inter_site_correlation: f64,
}

/// A RAN: its cells (one [`CellConfig`] per cell of `layout`, each with every UE of the RAN),
/// the path-loss model of the couplings, and the UEs' routes.
#[derive(Clone, Debug)]
pub struct RanConfig {
    /// The cells' MAC/RLC/PHY settings, one per cell of the layout, in its order. Each must
    /// have `routes.len()` UEs (`ue_distances_m`, whose values the RAN's couplings replace)
    /// and no trajectories (the RAN moves them).
    pub cells: Vec<CellConfig>,
    /// Where the cells are.
    pub layout: Layout,
    /// The path loss of every coupling (the layout sets the heights).
    pub pathloss: PathLoss,
    /// Each UE's route.
    pub routes: Vec<Route>,
    /// Each UE's cell at the start (`None`: the best by RSRP).
    pub initial_cell: Vec<Option<usize>>,
    /// Shadowing along the routes (`None`: none).
    pub shadowing: Option<RanShadowing>,
    /// Measurement and link updates.
    pub measurement: MeasurementConfig,
    /// Handover decision and procedure.
    pub handover: HandoverConfig,
    /// Radio link failure (`None`: not monitored).
    pub failure: Option<FailureConfig>,
    /// The RAN is an EN-DC secondary node (`None`: a standalone RAN).
    pub secondary: Option<SecondaryNodeConfig>,
}

/// What happened to a UE, for its event log.
#[derive(Clone, Debug, PartialEq)]
pub enum RanEvent {
    /// The UE's event A3 fired for `target` (a measurement report).
    Report {
        /// The serving cell.
        source: usize,
        /// The neighbour reported.
        target: usize,
    },
    /// The handover command: the UE leaves `source` (with DAPS it keeps it for now).
    HandoverStart {
        /// From.
        source: usize,
        /// To.
        target: usize,
    },
    /// The UE entered `target`; `interruption_ns` is how long it was in no cell.
    HandoverEnd {
        /// From.
        source: usize,
        /// To.
        target: usize,
        /// Time in no cell, ns (0 with DAPS).
        interruption_ns: u64,
    },
    /// Conditional handover: `target`, prepared for the UE, counts from this measurement
    /// instant in its execution condition.
    CandidateReady {
        /// The serving cell.
        source: usize,
        /// The candidate.
        target: usize,
    },
    /// T310 expired in `cell`.
    RadioLinkFailure {
        /// The cell it failed in.
        cell: usize,
    },
    /// Re-established in `cell` after a failure.
    Reestablished {
        /// The cell it entered.
        cell: usize,
    },
    /// EN-DC: the SCG was released in `cell`, on event A2 or an SCG failure.
    ScgReleased {
        /// The cell it left.
        cell: usize,
        /// An SCG failure (the radio link), not event A2.
        failure: bool,
    },
    /// EN-DC: B1 reported `cell`; the SCG is being added there.
    ScgAdditionReport {
        /// The cell reported.
        cell: usize,
    },
    /// EN-DC: the SCG was added in `cell`; `outage_ns` since its release.
    ScgAdded {
        /// The cell it entered.
        cell: usize,
        /// From the release to now, ns.
        outage_ns: u64,
    },
}

/// One entry of a UE's event log.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedEvent {
    /// When.
    pub at: Time,
    /// Which UE.
    pub ue: usize,
    /// The UE's position then, m.
    pub position_m: (f64, f64),
    /// What.
    pub event: RanEvent,
}

/// Where a UE is in the procedure.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Served by `cell`.
    Connected { cell: usize },
    /// Reported `target` at some instant; the command comes at `command_at`.
    Preparing { source: usize, target: usize, command_at: u64 },
    /// Commanded at `left_at`; enters `target` at `enter_at` (DAPS: still served by `source`).
    Executing { source: usize, target: usize, left_at: u64, enter_at: u64 },
    /// Failed; enters the best cell at `until`.
    Reestablishing { until: u64 },
    /// EN-DC: the SCG released at `since`.
    Released { since: u64 },
    /// EN-DC: the SCG being added in `target`, the UE in it at `enter_at`.
    Adding { target: usize, since: u64, enter_at: u64 },
}

/// One UE's state.
struct UeState {
    phase: Phase,
    filters: Vec<L3Filter>,
    /// Event A3: the report that starts a handover, or with CHO the preparation's trigger.
    a3: EventMonitor,
    /// CHO: the execution condition, over the ready candidates.
    execution: Option<EventMonitor>,
    /// EN-DC: event A2, releasing the SCG, and B1, adding it again.
    release: Option<EventMonitor>,
    addition: Option<EventMonitor>,
    /// CHO: the candidates prepared for the UE (cell, when ready, whether the UE counts it).
    candidates: Vec<Candidate>,
    /// From when the source may forward what it holds for the UE (the command; with CHO the
    /// target's HANDOVER SUCCESS).
    forward_from: u64,
    monitor: Option<LinkMonitor>,
    shadowing: Option<RouteShadowing>,
    /// Its coupling to every cell at the last link update, dB.
    coupling_db: Vec<f64>,
    /// Layer 1: each cell's RSRP (mW) summed over the link updates since the last measurement
    /// instant, and how many.
    l1_sum_mw: Vec<f64>,
    l1_count: u32,
    /// Downlink packets reaching the RAN that its serving cell cannot take now, or forwarded
    /// ones on their way to it: (cell, time it may enter the cell, packet).
    dl_waiting: VecDeque<(usize, u64, Packet)>,
    /// Uplink packets the UE keeps while in no cell.
    ul_waiting: VecDeque<Packet>,
    /// Until when downlink packets still reach the old cell (the path switch), and that cell.
    path_at: Option<(usize, u64)>,
    handovers: u64,
    failures: u64,
    releases: u64,
    /// The cell it started in.
    initial: usize,
    /// Its filtered RSRP of every cell, every [`RSRP_RECORD_NS`]: (time, dBm per cell).
    rsrp: Vec<(u64, Vec<f64>)>,
}

/// A conditional handover's candidate cell.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Candidate {
    cell: usize,
    ready_at: u64,
    /// The UE has been told (a measurement instant at or after `ready_at` has passed).
    armed: bool,
}

/// How often a UE's filtered RSRPs are kept for its record ([`Ran::rsrp_record`]), ns.
pub const RSRP_RECORD_NS: u64 = 500_000_000;

/// A UE's counts for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RanUeCounters {
    /// Handovers completed.
    pub handovers: u64,
    /// Radio link failures.
    pub failures: u64,
    /// The serving cell now (`None` while in no cell).
    pub serving: Option<usize>,
    /// EN-DC: SCG releases.
    pub releases: u64,
}

/// The RAN as one element with a port per UE and direction, like a [`CellHop`].
pub struct Ran {
    cfg: RanConfig,
    cells: Vec<CellHop>,
    ues: Vec<UeState>,
    /// RBs each cell had used by the last link update (sum of its UEs' counters).
    rbs_used: Vec<u64>,
    /// Per cell: its load over the last link update (0..=1).
    load: Vec<f64>,
    next_link_update: u64,
    next_measurement: u64,
    /// The RAN's own next instant ([`Ran::next_own_event`]), kept up to date where it can
    /// change (its own work, a packet waiting for a UE in no cell) instead of worked out over
    /// every UE at each poll.
    own_next: u64,
    log: Vec<LoggedEvent>,
    /// Outputs made by the RAN itself (packets lost at a handover), in time order.
    own_outputs: VecDeque<CellOutput>,
    /// EN-DC: packets handed back to the split's PDCP entity for data recovery (time, UE,
    /// direction, packet), in time order.
    handed_back: VecDeque<(Time, usize, CellDirection, Packet)>,
    /// Per cell: RS EPRE, dBm, and received noise per RB at the UE, mW.
    rs_epre_dbm: Vec<f64>,
    per_rb_dbm: Vec<f64>,
    noise_rb_mw: Vec<f64>,
}

impl Ran {
    /// The RAN of `cfg`, its cells' random streams derived from `seed` and `label`.
    pub fn new(cfg: RanConfig, seed: u64, label: &str) -> Result<Ran, CellError> {
        let n_cells = cfg.layout.cells().len();
        if cfg.cells.len() != n_cells {
            return Err(CellError::invalid("ran.cells", format!("the layout has {n_cells} cells but {} cell configurations were given", cfg.cells.len())));
        }
        let n_ues = cfg.routes.len();
        if cfg.initial_cell.len() != n_ues {
            return Err(CellError::invalid("ran.initial_cell", format!("one per UE ({n_ues}), got {}", cfg.initial_cell.len())));
        }
        if let Some(c) = cfg.initial_cell.iter().flatten().find(|&&c| c >= n_cells) {
            return Err(CellError::invalid("ran.initial_cell", format!("cell {c} does not exist (the layout has {n_cells})")));
        }
        let m = &cfg.measurement;
        for (field, v) in [("ran.measurement.period", m.period_ns), ("ran.measurement.link_update", m.link_update_ns), ("ran.measurement.nominal_period", m.nominal_period_ns)] {
            if v == 0 {
                return Err(CellError::invalid(field, "must be positive"));
            }
        }
        let h = &cfg.handover;
        // The decision's event: A3, or A5 with its thresholds.
        let decision = match h.a5_thresholds_dbm {
            None => MeasEvent::A3 { offset_db: h.a3_offset_db },
            Some((threshold1, threshold2)) => MeasEvent::A5 { threshold1, threshold2 },
        };
        let a3 = EventConfig::new(decision, h.hysteresis_db, h.time_to_trigger_ms);
        a3.validate()?;
        // With CHO the A3 monitor is the preparation's trigger, the execution one of its own.
        let (trigger, execution) = match h.conditional {
            None => (a3, None),
            Some(c) => {
                if h.daps {
                    return Err(CellError::invalid("ran.handover.conditional", "conditional handover does not combine with DAPS (TS 38.300 §9.2.3.2): leave one out"));
                }
                if h.a5_thresholds_dbm.is_some() {
                    return Err(CellError::invalid("ran.handover.conditional", "conditional handover here prepares and executes on event A3: leave out the A5 thresholds or conditional"));
                }
                if c.preparation_offset_db > h.a3_offset_db {
                    return Err(CellError::invalid(
                        "ran.handover.conditional.preparation_offset_db",
                        format!("{} dB is above the execution's a3_offset_db ({} dB): candidates must be prepared no later than they are executed", c.preparation_offset_db, h.a3_offset_db),
                    ));
                }
                let trigger = EventConfig::new(MeasEvent::A3 { offset_db: c.preparation_offset_db }, h.hysteresis_db, h.time_to_trigger_ms);
                trigger.validate().map_err(|e| CellError::invalid("ran.handover.conditional.preparation_offset_db", e.to_string()))?;
                (trigger, Some(a3))
            }
        };
        if let Some(f) = &cfg.failure {
            f.monitor.validate()?;
        }
        if let Some(s) = cfg.shadowing {
            check_range("ran.shadowing.sigma_db", s.sigma_db, 0.0, 20.0, "dB")?;
        }
        let (release, addition) = match cfg.secondary {
            None => (None, None),
            Some(sn) => {
                let b1 = EventConfig::new(MeasEvent::B1 { threshold: sn.addition_rsrp_dbm }, h.hysteresis_db, h.time_to_trigger_ms);
                b1.validate().map_err(|e| CellError::invalid("ran.secondary.addition_rsrp_dbm", e.to_string()))?;
                let a2 = match sn.release_rsrp_dbm {
                    Some(threshold) => {
                        let a2 = EventConfig::new(MeasEvent::A2 { threshold }, h.hysteresis_db, h.time_to_trigger_ms);
                        a2.validate().map_err(|e| CellError::invalid("ran.secondary.release_rsrp_dbm", e.to_string()))?;
                        if threshold >= sn.addition_rsrp_dbm {
                            return Err(CellError::invalid("ran.secondary.release_rsrp_dbm", format!("{threshold} dBm is not below addition_rsrp_dbm ({} dBm): the SCG would be released where it is added", sn.addition_rsrp_dbm)));
                        }
                        Some(a2)
                    }
                    None => None,
                };
                (a2, Some(b1))
            }
        };
        let mut cells = Vec::with_capacity(n_cells);
        for (c, cell_cfg) in cfg.cells.iter().enumerate() {
            if cell_cfg.ue_distances_m.len() != n_ues {
                return Err(CellError::invalid("ran.cells", format!("cell {c} has {} UEs, the RAN {n_ues}", cell_cfg.ue_distances_m.len())));
            }
            if cell_cfg.trajectories.iter().any(Option::is_some) {
                return Err(CellError::invalid("ran.cells", format!("cell {c}: the RAN moves its UEs along their routes; give them no trajectory")));
            }
            let placed = &cfg.layout.cells()[c];
            if placed.tx_power_dbm != cell_cfg.budget.enb_power_dbm || placed.n_rb != u32::from(cell_cfg.n_rb) || placed.carrier_mhz != cell_cfg.budget.carrier_mhz {
                return Err(CellError::invalid("ran.cells", format!("cell {c}: the layout's power, RBs and carrier ({} dBm, {}, {} MHz) differ from the cell's ({} dBm, {}, {} MHz)", placed.tx_power_dbm, placed.n_rb, placed.carrier_mhz, cell_cfg.budget.enb_power_dbm, cell_cfg.n_rb, cell_cfg.budget.carrier_mhz)));
            }
            cells.push(CellHop::new(cell_cfg.clone(), seed, &format!("{label}/cell{c}"))?);
        }
        let sites: Vec<String> = (0..cfg.layout.sites().len()).map(|s| format!("site{s}")).collect();
        let mut ues = Vec::with_capacity(n_ues);
        for u in 0..n_ues {
            let shadowing = match cfg.shadowing {
                Some(s) => Some(
                    RouteShadowing::new(seed, &format!("{label}/ue{u}/shadowing"), &sites, s.sigma_db, s.decorrelation_m, s.inter_site_correlation)
                        .map_err(|e| CellError::invalid("ran.shadowing", e.to_string()))?,
                ),
                None => None,
            };
            let filters = (0..n_cells).map(|_| L3Filter::new(m.filter_coefficient, m.nominal_period_ns, m.period_ns)).collect::<Result<Vec<_>, _>>()?;
            ues.push(UeState {
                phase: Phase::Reestablishing { until: 0 },
                filters,
                a3: EventMonitor::new(trigger.clone())?,
                execution: execution.clone().map(EventMonitor::new).transpose()?,
                release: release.clone().map(EventMonitor::new).transpose()?,
                addition: addition.clone().map(EventMonitor::new).transpose()?,
                candidates: Vec::new(),
                forward_from: 0,
                monitor: cfg.failure.as_ref().map(|f| LinkMonitor::new(f.monitor)).transpose()?,
                shadowing,
                coupling_db: vec![f64::NEG_INFINITY; n_cells],
                l1_sum_mw: vec![0.0; n_cells],
                l1_count: 0,
                dl_waiting: VecDeque::new(),
                ul_waiting: VecDeque::new(),
                path_at: None,
                handovers: 0,
                failures: 0,
                releases: 0,
                initial: 0,
                rsrp: Vec::new(),
            });
        }
        let lc = cfg.layout.cells();
        let rs_epre_dbm = lc.iter().map(|c| multiconn_radio::budget::rs_epre_dbm(c.tx_power_dbm, c.n_rb)).collect();
        let per_rb_dbm = cfg.cells.iter().map(|c| c.budget.enb_power_dbm - 10.0 * f64::from(c.n_rb).log10()).collect();
        let noise_rb_mw = cfg.cells.iter().map(|c| db_to_ratio(receiver_noise_dbm(c.carrier.rb_hz(), c.budget.ue_noise_figure_db))).collect();
        let mut ran = Ran {
            cells,
            ues,
            rbs_used: vec![0; n_cells],
            load: vec![0.0; n_cells],
            next_link_update: 0,
            next_measurement: 0,
            own_next: 0,
            log: Vec::new(),
            own_outputs: VecDeque::new(),
            handed_back: VecDeque::new(),
            rs_epre_dbm,
            per_rb_dbm,
            noise_rb_mw,
            cfg,
        };
        // Every UE enters its initial cell (or the best) at the start.
        ran.update_links(0)?;
        for u in 0..n_ues {
            let cell = match ran.cfg.initial_cell[u] {
                Some(c) => c,
                None => ran.best_cell(u),
            };
            ran.ues[u].phase = Phase::Connected { cell };
            ran.ues[u].initial = cell;
        }
        ran.own_next = ran.next_own_event();
        Ok(ran)
    }

    /// The cells, in layout order.
    pub fn cells(&self) -> &[CellHop] {
        &self.cells
    }

    /// The event log so far, in time order.
    pub fn events(&self) -> &[LoggedEvent] {
        &self.log
    }

    /// UE `ue`'s counts.
    pub fn ue_counters(&self, ue: usize) -> RanUeCounters {
        let u = &self.ues[ue];
        RanUeCounters { handovers: u.handovers, failures: u.failures, serving: self.active_cell(ue), releases: u.releases }
    }

    /// Whether the RAN is an EN-DC secondary node.
    pub fn is_secondary(&self) -> bool {
        self.cfg.secondary.is_some()
    }

    /// Whether UE `ue` has its SCG (EN-DC; always for a standalone RAN): while released, or
    /// being added, the split above sends on its other leg.
    pub fn scg_present(&self, ue: usize) -> bool {
        !matches!(self.ues.get(ue).map(|u| u.phase), Some(Phase::Released { .. } | Phase::Adding { .. }))
    }

    /// A packet handed back by `now` for data recovery (EN-DC's SCG release, TS 38.323 §5.5):
    /// its time, UE, direction.
    pub fn poll_handed_back(&mut self, now: Time) -> Option<(Time, usize, CellDirection, Packet)> {
        if self.handed_back.front().is_some_and(|h| h.0 <= now) {
            return self.handed_back.pop_front();
        }
        None
    }

    /// The cell UE `ue` started in.
    pub fn initial_cell(&self, ue: usize) -> usize {
        self.ues[ue].initial
    }

    /// UE `ue`'s layer-3-filtered RSRP of every cell (dBm, `NaN` before the first sample), at
    /// the first measurement instant of every [`RSRP_RECORD_NS`].
    pub fn rsrp_record(&self, ue: usize) -> &[(u64, Vec<f64>)] {
        &self.ues[ue].rsrp
    }

    /// UEs in the RAN.
    pub fn ue_count(&self) -> usize {
        self.ues.len()
    }

    /// The cell taking the UE's packets now: its serving cell, the source during DAPS.
    fn active_cell(&self, ue: usize) -> Option<usize> {
        match self.ues[ue].phase {
            Phase::Connected { cell } => Some(cell),
            Phase::Preparing { source, .. } => Some(source),
            Phase::Executing { source, .. } if self.cfg.handover.daps => Some(source),
            _ => None,
        }
    }

    /// The cell with the highest filtered RSRP (the coupling before the first sample).
    fn best_cell(&self, ue: usize) -> usize {
        let u = &self.ues[ue];
        let value = |c: usize| u.filters[c].value().unwrap_or(self.rs_epre_dbm[c] + u.coupling_db[c]);
        (0..self.cells.len()).fold(0, |best, c| if value(c) > value(best) { c } else { best })
    }

    /// A packet for UE `ue` in direction `dir` reaches the RAN at `now`.
    pub fn enqueue(&mut self, now: Time, ue: usize, dir: CellDirection, pkt: Packet) -> Result<(), (Packet, CellDropCause)> {
        if ue >= self.ues.len() {
            return Err((pkt, CellDropCause::RlcBufferFull));
        }
        let t = now.0;
        // Before the path switch, downlink packets still reach the old cell, which forwards.
        if dir == CellDirection::Down {
            if let Some((old, until)) = self.ues[ue].path_at {
                if t < until && self.active_cell(ue) != Some(old) {
                    if !self.cfg.handover.forwarding {
                        return Err((pkt, CellDropCause::Handover));
                    }
                    let target = self.target_of(ue).unwrap_or(old);
                    let from = t.max(self.ues[ue].forward_from);
                    self.ues[ue].dl_waiting.push_back((target, from + self.cfg.handover.x2_delay_ns, pkt));
                    self.own_next = self.next_own_event();
                    return Ok(());
                }
            }
        }
        if !self.scg_present(ue) {
            // Released (or not yet added): what still reaches the SN goes back to the PDCP
            // entity for the master's leg, or is lost under UM.
            self.recover_or_lose(t, ue, dir, pkt);
            return Ok(());
        }
        match self.active_cell(ue) {
            Some(c) => self.cells[c].enqueue(now, ue, dir, pkt),
            None => {
                match dir {
                    // The core still sends to the cell the UE is heading for (or left).
                    CellDirection::Down => {
                        let c = self.target_of(ue).unwrap_or(0);
                        self.ues[ue].dl_waiting.push_back((c, t, pkt));
                        self.own_next = self.next_own_event();
                    }
                    CellDirection::Up => self.ues[ue].ul_waiting.push_back(pkt),
                }
                Ok(())
            }
        }
    }

    /// The cell the UE is moving to, if it is in a handover.
    fn target_of(&self, ue: usize) -> Option<usize> {
        match self.ues[ue].phase {
            Phase::Preparing { target, .. } | Phase::Executing { target, .. } => Some(target),
            Phase::Connected { cell } => Some(cell),
            Phase::Adding { target, .. } => Some(target),
            Phase::Reestablishing { .. } | Phase::Released { .. } => None,
        }
    }

    /// When the RAN next has something to do.
    pub fn poll_timeout(&self) -> Option<Time> {
        let mut t = self.own_outputs.front().map(CellOutput::at);
        t = Time::earliest(t, self.handed_back.front().map(|h| h.0));
        for c in &self.cells {
            t = Time::earliest(t, c.poll_timeout());
        }
        t = Time::earliest(t, Some(Time(self.own_next)));
        t
    }

    /// The RAN's own next instant: a link update, a measurement, a phase change, a forwarded
    /// packet.
    fn next_own_event(&self) -> u64 {
        let mut t = self.next_link_update.min(self.next_measurement);
        for (i, u) in self.ues.iter().enumerate() {
            match u.phase {
                // A time-to-trigger may expire between measurement instants.
                Phase::Connected { .. } => {
                    t = t.min(u.a3.next_expiry_ns().unwrap_or(u64::MAX));
                    t = t.min(u.execution.as_ref().and_then(EventMonitor::next_expiry_ns).unwrap_or(u64::MAX));
                }
                Phase::Preparing { command_at, .. } => t = t.min(command_at),
                Phase::Executing { enter_at, .. } => t = t.min(enter_at),
                Phase::Reestablishing { until } => t = t.min(until),
                Phase::Released { .. } => t = t.min(u.addition.as_ref().and_then(EventMonitor::next_expiry_ns).unwrap_or(u64::MAX)),
                Phase::Adding { enter_at, .. } => t = t.min(enter_at),
            }
            if let (Phase::Connected { .. }, Some(a2)) = (u.phase, &u.release) {
                t = t.min(a2.next_expiry_ns().unwrap_or(u64::MAX));
            }
            // Waiting packets matter once the UE is in a cell to take them.
            if let Some(&(_, at, _)) = u.dl_waiting.front().filter(|_| self.active_cell(i).is_some()) {
                t = t.min(at);
            }
        }
        t
    }

    /// The next output due by `now`, after the RAN's own work and the cells' slots by then, in
    /// time order across cells.
    pub fn poll(&mut self, now: Time) -> Result<Option<CellOutput>, CellError> {
        loop {
            if let Some(o) = self.own_outputs.front() {
                if o.at() <= now {
                    return Ok(self.own_outputs.pop_front());
                }
            }
            let own = self.own_next;
            let (cell, cell_t) = self.cells.iter().enumerate().filter_map(|(i, c)| c.poll_timeout().map(|t| (i, t.0))).min_by_key(|&(i, t)| (t, i)).unwrap_or((0, u64::MAX));
            let next = own.min(cell_t);
            if next > now.0 {
                return Ok(None);
            }
            if own <= cell_t {
                self.run_own(own)?;
                continue;
            }
            if let Some(o) = self.cells[cell].poll(Time(cell_t))? {
                return Ok(Some(o));
            }
        }
    }

    /// The RAN's own work at `t`.
    fn run_own(&mut self, t: u64) -> Result<(), CellError> {
        if self.next_link_update <= t {
            self.update_links(t)?;
            self.next_link_update = t + self.cfg.measurement.link_update_ns;
        }
        if self.next_measurement <= t {
            self.measure(t)?;
            self.next_measurement = t + self.cfg.measurement.period_ns;
        }
        for u in 0..self.ues.len() {
            if let Phase::Connected { cell } = self.ues[u].phase {
                if let Some(report) = self.ues[u].a3.expire(t) {
                    self.reported(u, cell, &report.cells, t);
                }
                if let Some(report) = self.ues[u].execution.as_mut().and_then(|m| m.expire(t)) {
                    self.execute(u, cell, usize::from(report.cells[0]), t)?;
                } else if self.ues[u].release.as_mut().and_then(|m| m.expire(t)).is_some() {
                    self.release_scg(u, cell, t, false)?;
                }
            }
            if let Phase::Released { since } = self.ues[u].phase {
                if let Some(report) = self.ues[u].addition.as_mut().and_then(|m| m.expire(t)) {
                    self.add_scg(u, usize::from(report.cells[0]), since, t);
                }
            }
            self.advance_phase(u, t)?;
            self.release_waiting(u, t);
        }
        self.own_next = self.next_own_event();
        Ok(())
    }

    /// UE `u` served by `cell` reported `targets` (event A3, best first) at `t`: the handover
    /// to the best is prepared; with CHO each one not yet a candidate becomes one.
    fn reported(&mut self, u: usize, cell: usize, targets: &[u16], t: u64) {
        let preparation = self.cfg.handover.preparation_ns;
        if self.cfg.handover.conditional.is_none() {
            let target = usize::from(targets[0]);
            self.note(u, t, RanEvent::Report { source: cell, target });
            self.ues[u].phase = Phase::Preparing { source: cell, target, command_at: t + preparation };
            return;
        }
        for &target in targets {
            let target = usize::from(target);
            if self.ues[u].candidates.iter().all(|c| c.cell != target) {
                self.note(u, t, RanEvent::Report { source: cell, target });
                self.ues[u].candidates.push(Candidate { cell: target, ready_at: t + preparation, armed: false });
            }
        }
    }

    /// CHO: UE `u` served by `source` executes the handover to candidate `target` at `t`, by
    /// itself; the source hears of it from the target once the UE is in.
    fn execute(&mut self, u: usize, source: usize, target: usize, t: u64) -> Result<(), CellError> {
        let h = &self.cfg.handover;
        let enter_at = t + h.interruption_ns;
        self.ues[u].forward_from = enter_at + h.x2_delay_ns;
        self.note(u, t, RanEvent::HandoverStart { source, target });
        self.leave(u, source, target, t)?;
        self.ues[u].path_at = Some((source, u64::MAX));
        self.ues[u].candidates.clear();
        self.ues[u].phase = Phase::Executing { source, target, left_at: t, enter_at };
        Ok(())
    }

    /// Every UE's coupling to every cell at `t`, the cells' loads since the last update, and
    /// each UE's loss and noise rise in every cell.
    fn update_links(&mut self, t: u64) -> Result<(), CellError> {
        let n_cells = self.cells.len();
        let elapsed = self.cfg.measurement.link_update_ns as f64;
        for c in 0..n_cells {
            let used: u64 = (0..self.ues.len()).map(|u| self.cells[c].ue_counters(u).dl_rb_ttis).sum();
            let slots = elapsed / self.cells[c].slot_ns() as f64;
            let capacity = slots * f64::from(self.cfg.cells[c].n_rb);
            self.load[c] = if t == 0 { 0.0 } else { ((used - self.rbs_used[c]) as f64 / capacity).clamp(0.0, 1.0) };
            self.rbs_used[c] = used;
        }
        for u in 0..self.ues.len() {
            let (x, y) = self.cfg.routes[u].position_at(t);
            let shadow: Option<Vec<f64>> = match &mut self.ues[u].shadowing {
                Some(s) => Some(s.advance_along(&self.cfg.routes[u], t).map_err(|e| CellError::invalid("ran.shadowing", e.to_string()))?.to_vec()),
                None => None,
            };
            let ue = LayoutUe::at(x, y);
            for c in 0..n_cells {
                let site = self.cfg.layout.cells()[c].site;
                let s = shadow.as_ref().map_or(0.0, |v| v[site]);
                let link = self.cfg.layout.link(c, &ue, &self.cfg.pathloss).map_err(|e| CellError::invalid("ran.layout", e.to_string()))?;
                self.ues[u].coupling_db[c] = link.coupling_db(s);
                self.ues[u].l1_sum_mw[c] += db_to_ratio(self.rs_epre_dbm[c] + self.ues[u].coupling_db[c]);
            }
            self.ues[u].l1_count += 1;
            // Each cell's load-weighted power at the UE, once; a cell's interference is its
            // carrier's total less its own.
            let weighted: Vec<f64> = (0..n_cells).map(|j| self.load[j] * db_to_ratio(self.per_rb_dbm[j] + self.ues[u].coupling_db[j])).collect();
            for c in 0..n_cells {
                let carrier = self.cfg.layout.cells()[c].carrier_mhz;
                let interference: f64 = (0..n_cells).filter(|&j| j != c && self.cfg.layout.cells()[j].carrier_mhz == carrier).map(|j| weighted[j]).sum();
                let rise = 10.0 * (1.0 + interference / self.noise_rb_mw[c]).log10();
                self.cells[c].set_link(u, -self.ues[u].coupling_db[c], rise)?;
            }
        }
        Ok(())
    }

    /// The measurement instant `t`: RSRP samples into the filters, A3, radio link monitoring.
    fn measure(&mut self, t: u64) -> Result<(), CellError> {
        for u in 0..self.ues.len() {
            let n_cells = self.cells.len();
            // Layer 1: the linear mean of the RSRPs of the link updates since the last instant.
            let count = f64::from(self.ues[u].l1_count.max(1));
            for c in 0..n_cells {
                let rsrp = if self.ues[u].l1_count == 0 {
                    self.rs_epre_dbm[c] + self.ues[u].coupling_db[c]
                } else {
                    10.0 * (self.ues[u].l1_sum_mw[c] / count).log10()
                };
                self.ues[u].filters[c].update(rsrp)?;
                self.ues[u].l1_sum_mw[c] = 0.0;
            }
            self.ues[u].l1_count = 0;
            if self.ues[u].rsrp.last().map_or(true, |&(at, _)| at / RSRP_RECORD_NS < t / RSRP_RECORD_NS) {
                let values = self.ues[u].filters.iter().map(|f| f.value().unwrap_or(f64::NAN)).collect();
                self.ues[u].rsrp.push((t, values));
            }
            if let Phase::Released { since } = self.ues[u].phase {
                // B1 over every cell of the SN.
                let cells: Vec<(u16, f64)> = (0..n_cells).filter_map(|c| self.ues[u].filters[c].value().map(|v| (c as u16, v))).collect();
                let report = match self.ues[u].addition.as_mut() {
                    // (B1 is about the neighbours alone: the serving value is not read.)
                    Some(m) => m.step(t, 0.0, &cells)?,
                    None => None,
                };
                if let Some(report) = report {
                    self.add_scg(u, usize::from(report.cells[0]), since, t);
                }
                continue;
            }
            let Phase::Connected { cell } = self.ues[u].phase else { continue };
            // Radio link monitoring on the serving cell's wideband SINR.
            if self.ues[u].monitor.is_some() {
                let carrier = self.cfg.layout.cells()[cell].carrier_mhz;
                let signal = db_to_ratio(self.per_rb_dbm[cell] + self.ues[u].coupling_db[cell]);
                let interference: f64 = (0..n_cells)
                    .filter(|&j| j != cell && self.cfg.layout.cells()[j].carrier_mhz == carrier)
                    .map(|j| self.load[j] * db_to_ratio(self.per_rb_dbm[j] + self.ues[u].coupling_db[j]))
                    .sum();
                let sinr_db = 10.0 * (signal / (self.noise_rb_mw[cell] + interference)).log10();
                let event = self.ues[u].monitor.as_mut().map(|m| m.step(t, sinr_db)).transpose()?;
                if event == Some(LinkEvent::RadioLinkFailure) {
                    if self.cfg.secondary.is_some() {
                        self.note(u, t, RanEvent::RadioLinkFailure { cell });
                        self.ues[u].failures += 1;
                        self.release_scg(u, cell, t, true)?;
                    } else {
                        self.fail(u, cell, t)?;
                    }
                    continue;
                }
            }
            let serving = self.ues[u].filters[cell].value().unwrap_or(f64::NEG_INFINITY);
            let release = match self.ues[u].release.as_mut().filter(|_| serving.is_finite()) {
                Some(a2) => a2.step(t, serving, &[])?,
                None => None,
            };
            if release.is_some() {
                self.release_scg(u, cell, t, false)?;
                continue;
            }
            let neighbours: Vec<(u16, f64)> = (0..n_cells).filter(|&c| c != cell).filter_map(|c| self.ues[u].filters[c].value().map(|v| (c as u16, v))).collect();
            if let Some(report) = self.ues[u].a3.step(t, serving, &neighbours)? {
                self.reported(u, cell, &report.cells, t);
            }
            if self.ues[u].execution.is_some() {
                // The candidates ready by now count in the execution condition from here on.
                for k in 0..self.ues[u].candidates.len() {
                    let c = self.ues[u].candidates[k];
                    if !c.armed && c.ready_at <= t {
                        self.ues[u].candidates[k].armed = true;
                        self.note(u, t, RanEvent::CandidateReady { source: cell, target: c.cell });
                    }
                }
                let armed: Vec<(u16, f64)> = neighbours.iter().copied().filter(|&(c, _)| self.ues[u].candidates.iter().any(|k| k.armed && k.cell == usize::from(c))).collect();
                let report = match self.ues[u].execution.as_mut() {
                    Some(m) => m.step(t, serving, &armed)?,
                    None => None,
                };
                if let Some(report) = report {
                    self.execute(u, cell, usize::from(report.cells[0]), t)?;
                }
            }
        }
        Ok(())
    }

    /// UE `u`'s radio link failed in `cell` at `t`.
    fn fail(&mut self, u: usize, cell: usize, t: u64) -> Result<(), CellError> {
        self.note(u, t, RanEvent::RadioLinkFailure { cell });
        self.ues[u].failures += 1;
        // CHO: the cell selected is a ready candidate, executed to instead of re-establishing.
        if self.cfg.handover.conditional.is_some_and(|c| c.attempt_after_failure) {
            let best = self.best_cell(u);
            if self.ues[u].candidates.iter().any(|c| c.armed && c.cell == best) {
                return self.execute(u, cell, best, t);
            }
        }
        self.ues[u].candidates.clear();
        let left = self.cells[cell].detach(u)?;
        let [down, up] = left.forward;
        for pkt in down.into_iter().chain(left.lost) {
            self.drop_own(t, u, pkt);
        }
        // The UE keeps its uplink packets for the cell it re-establishes in.
        self.ues[u].ul_waiting.extend(up);
        // What was waiting for the UE's downlink is lost with the context.
        for (_, _, pkt) in std::mem::take(&mut self.ues[u].dl_waiting) {
            self.drop_own(t, u, pkt);
        }
        self.ues[u].path_at = None;
        let until = t + self.cfg.failure.as_ref().map_or(0, |f| f.reestablishment_ns);
        self.ues[u].phase = Phase::Reestablishing { until };
        Ok(())
    }

    /// EN-DC: UE `u`'s SCG in `cell` is released at `t` (an SCG failure or event A2): under
    /// RLC AM what the SN had not delivered goes back to the split's PDCP entity (data
    /// recovery), under UM it is lost.
    fn release_scg(&mut self, u: usize, cell: usize, t: u64, failure: bool) -> Result<(), CellError> {
        self.note(u, t, RanEvent::ScgReleased { cell, failure });
        self.ues[u].releases += 1;
        let left = self.cells[cell].detach(u)?;
        let [down, up] = left.forward;
        for pkt in left.lost {
            self.drop_own(t, u, pkt);
        }
        for pkt in down {
            self.recover_or_lose(t, u, CellDirection::Down, pkt);
        }
        for pkt in up {
            self.recover_or_lose(t, u, CellDirection::Up, pkt);
        }
        for (_, _, pkt) in std::mem::take(&mut self.ues[u].dl_waiting) {
            self.recover_or_lose(t, u, CellDirection::Down, pkt);
        }
        for pkt in std::mem::take(&mut self.ues[u].ul_waiting) {
            self.recover_or_lose(t, u, CellDirection::Up, pkt);
        }
        self.ues[u].path_at = None;
        self.ues[u].phase = Phase::Released { since: t };
        self.reset_events(u);
        if let Some(m) = &mut self.ues[u].addition {
            m.reset();
        }
        if let Some(m) = &mut self.ues[u].monitor {
            m.reset();
        }
        Ok(())
    }

    /// EN-DC: B1 reported `target` for released UE `u` at `t`: the SCG is added there after
    /// the preparation and the random access.
    fn add_scg(&mut self, u: usize, target: usize, since: u64, t: u64) {
        self.note(u, t, RanEvent::ScgAdditionReport { cell: target });
        let h = &self.cfg.handover;
        self.ues[u].phase = Phase::Adding { target, since, enter_at: t + h.preparation_ns + h.interruption_ns };
    }

    /// A packet of UE `u` the SN gives up at `t`: back to the PDCP entity under RLC AM (TS
    /// 38.323 §5.5 recovers AM DRBs only), lost under UM.
    fn recover_or_lose(&mut self, t: u64, u: usize, dir: CellDirection, pkt: Packet) {
        // (Every cell of a RAN has its section's RLC mode.)
        if self.cfg.cells.first().is_some_and(|c| matches!(c.rlc, crate::bearer::RlcMode::Am(_))) {
            self.handed_back.push_back((Time(t), u, dir, pkt));
        } else {
            self.own_outputs.push_back(CellOutput::Dropped { at: Time(t), ue: u, dir, pkt, cause: CellDropCause::Handover });
        }
    }

    /// A packet of UE `u` lost with a cell's state at `t`.
    fn drop_own(&mut self, t: u64, ue: usize, pkt: Packet) {
        self.own_outputs.push_back(CellOutput::Dropped { at: Time(t), ue, dir: CellDirection::Down, pkt, cause: CellDropCause::Handover });
    }

    /// Moves UE `u` through the procedure's timed steps due by `t`.
    fn advance_phase(&mut self, u: usize, t: u64) -> Result<(), CellError> {
        let h = self.cfg.handover.clone();
        match self.ues[u].phase {
            Phase::Preparing { source, target, command_at } if command_at <= t => {
                self.note(u, t, RanEvent::HandoverStart { source, target });
                self.ues[u].forward_from = t;
                if !h.daps {
                    self.leave(u, source, target, t)?;
                }
                self.ues[u].path_at = Some((source, u64::MAX));
                self.ues[u].phase = Phase::Executing { source, target, left_at: t, enter_at: t + h.interruption_ns };
            }
            Phase::Executing { source, target, left_at, enter_at } if enter_at <= t => {
                if h.daps {
                    self.ues[u].forward_from = t;
                    self.leave(u, source, target, t)?;
                }
                let interruption_ns = if h.daps { 0 } else { t - left_at };
                self.ues[u].phase = Phase::Connected { cell: target };
                self.ues[u].path_at = Some((source, t + h.path_switch_ns));
                self.ues[u].handovers += 1;
                self.reset_events(u);
                if let Some(m) = &mut self.ues[u].monitor {
                    m.reset();
                }
                self.note(u, t, RanEvent::HandoverEnd { source, target, interruption_ns });
                self.enter(u, target, t);
            }
            Phase::Adding { target, since, enter_at } if enter_at <= t => {
                self.ues[u].phase = Phase::Connected { cell: target };
                self.reset_events(u);
                if let Some(m) = &mut self.ues[u].monitor {
                    m.reset();
                }
                self.note(u, t, RanEvent::ScgAdded { cell: target, outage_ns: t - since });
                self.enter(u, target, t);
            }
            Phase::Reestablishing { until } if until <= t => {
                let cell = self.best_cell(u);
                self.ues[u].phase = Phase::Connected { cell };
                self.reset_events(u);
                if let Some(m) = &mut self.ues[u].monitor {
                    m.reset();
                }
                self.note(u, t, RanEvent::Reestablished { cell });
                self.enter(u, cell, t);
            }
            _ => {}
        }
        Ok(())
    }

    /// UE `u` has a new serving cell: its events start afresh, no candidates.
    fn reset_events(&mut self, u: usize) {
        let ue = &mut self.ues[u];
        ue.a3.reset();
        for m in [&mut ue.execution, &mut ue.release].into_iter().flatten() {
            m.reset();
        }
        ue.candidates.clear();
    }

    /// UE `u` leaves `source` for `target` at `t`: the source's packets forwarded (leaving it
    /// at the UE's `forward_from`, arriving `x2_delay` later) or lost.
    fn leave(&mut self, u: usize, source: usize, target: usize, t: u64) -> Result<(), CellError> {
        let left = self.cells[source].detach(u)?;
        let [down, up] = left.forward;
        for pkt in left.lost {
            self.drop_own(t, u, pkt);
        }
        if self.cfg.handover.forwarding {
            let at = t.max(self.ues[u].forward_from) + self.cfg.handover.x2_delay_ns;
            for pkt in down {
                self.ues[u].dl_waiting.push_back((target, at, pkt));
            }
        } else {
            for pkt in down {
                self.drop_own(t, u, pkt);
            }
        }
        // The UE keeps its uplink packets and sends them in the target.
        for pkt in up {
            self.ues[u].ul_waiting.push_back(pkt);
        }
        Ok(())
    }

    /// UE `u` enters `cell` at `t`: what waits for it there goes in (forwarded packets first,
    /// in the order they left), and its kept uplink packets.
    fn enter(&mut self, u: usize, cell: usize, t: u64) {
        for pkt in std::mem::take(&mut self.ues[u].ul_waiting) {
            if let Err((pkt, cause)) = self.cells[cell].enqueue(Time(t), u, CellDirection::Up, pkt) {
                self.own_outputs.push_back(CellOutput::Dropped { at: Time(t), ue: u, dir: CellDirection::Up, pkt, cause });
            }
        }
        for w in self.ues[u].dl_waiting.iter_mut() {
            w.0 = cell;
        }
        self.release_waiting(u, t);
    }

    /// Downlink packets waiting for UE `u` that may enter its cell by `t`.
    fn release_waiting(&mut self, u: usize, t: u64) {
        let Some(cell) = self.active_cell(u) else { return };
        while self.ues[u].dl_waiting.front().is_some_and(|&(_, at, _)| at <= t) {
            let Some((_, _, pkt)) = self.ues[u].dl_waiting.pop_front() else { break };
            if let Err((pkt, cause)) = self.cells[cell].enqueue(Time(t), u, CellDirection::Down, pkt) {
                self.own_outputs.push_back(CellOutput::Dropped { at: Time(t), ue: u, dir: CellDirection::Down, pkt, cause });
            }
        }
    }

    fn note(&mut self, ue: usize, t: u64, event: RanEvent) {
        let position_m = self.cfg.routes[ue].position_at(t);
        self.log.push(LoggedEvent { at: Time(t), ue, position_m, event });
    }
}
