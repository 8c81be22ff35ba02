//! Cells: each `[[cell]]` becomes a validated [`CellConfig`] with its eNB and UE nodes, which
//! routes cross by the cell's name (downlink from the eNB to a UE, uplink back).

use super::errors::{check_name, choose, err, FieldError};
use crate::schema::{BlerSection, CellSection, L4sMarkingSection};
use multiconn_cell::nr::bandwidth::{n_rb, FrequencyRange};
use multiconn_cell::nr::mcs::McsTable;
use multiconn_cell::nr::numerology::Numerology;
use multiconn_cell::nr::tdd::{Duplex, SpecialSlot};
use multiconn_cell::nr::bler::CodeBlockGaps;
use multiconn_cell::rlc_am::AmConfig;
use multiconn_cell::{doppler_hz, L4sMarking, AmcModel, BlockageConfig, Carrier, CellConfig, CellError, RlcMode, FadingConfig, FadingSpread, MacTiming, NrCarrier, SchedulerKind, Trajectory, UlMcs};
use multiconn_radio::pathloss::{LogDistance, PathLoss};
use std::collections::HashMap;

/// A cell of the scenario.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Its name.
    pub name: String,
    /// The eNB's node.
    pub enb: String,
    /// The UEs' nodes, in file order (index = the UE's index in the cell).
    pub ues: Vec<String>,
    /// The model's configuration, validated (with a layout: every cell's).
    pub config: CellConfig,
    /// With a layout: the network of cells the section stands for (docs/mobility.md).
    pub ran: Option<multiconn_cell::ran::RanConfig>,
}

/// The cells and their names' index. `taken` holds the link and split names a cell may not
/// reuse.
pub(super) fn resolve_cells<'f>(cells: &'f [CellSection], taken: &dyn Fn(&str) -> bool) -> Result<(Vec<Cell>, HashMap<&'f str, usize>), FieldError> {
    let mut out = Vec::new();
    let mut index = HashMap::new();
    for (i, c) in cells.iter().enumerate() {
        check_name("cell", i, &c.name)?;
        let at = |field: &str| vec!["cell".to_string(), c.name.clone(), field.to_string()];
        let fail = |field: &str, message: String| FieldError { path: at(field), message };
        let field = |name: &'static str| ["cell", c.name.as_str(), name];
        if taken(&c.name) || index.insert(c.name.as_str(), out.len()).is_some() {
            return Err(err(&["cell", &c.name, "name"], format!("a link, split or cell is already named \"{}\"", c.name)));
        }
        if c.ues.is_empty() {
            return Err(fail("ues", "a cell needs at least one UE: ues = [{ node = \"ue1\", distance_m = 250 }]".into()));
        }
        if let Some(d) = c.distance_m.filter(|d| !(d.is_finite() && *d > 0.0 && *d <= multiconn_cell::mobility::MAX_DISTANCE_M)) {
            return Err(fail("distance_m", format!("{d} is not allowed: must be a number in (0, 100000] m")));
        }
        let mut nodes: Vec<String> = Vec::new();
        let mut distances = Vec::new();
        let mut trajectories = Vec::new();
        for (k, u) in c.ues.iter().enumerate() {
            if u.node == c.enb || nodes.contains(&u.node) {
                return Err(fail(&format!("ues[{k}].node"), format!("\"{}\" is already the eNB or another UE of this cell", u.node)));
            }
            nodes.push(u.node.clone());
            if c.layout.is_some() {
                if u.distance_m.is_some() || u.trajectory.is_some() || u.route.is_none() {
                    return Err(fail(&format!("ues[{k}]"), "in a cell with a layout a UE moves along a route: route = [{ x_m = 100, y_m = 50 }, { x_m = 900, y_m = 50, speed = \"72 km/h\" }] (no distance_m or trajectory)".into()));
                }
                // Its couplings replace the distance (a placeholder for the cell's table).
                distances.push(100.0);
                trajectories.push(None);
                continue;
            }
            if u.route.is_some() || u.initial_cell.is_some() {
                let f = if u.route.is_some() { "route" } else { "initial_cell" };
                return Err(fail(&format!("ues[{k}].{f}"), "a route needs the cell's layout of many cells: layout = { sites = [[0, 0], [500, 0]] }".into()));
            }
            match (u.distance_m.or(if u.trajectory.is_none() { c.distance_m } else { None }), &u.trajectory) {
                (Some(d), None) => {
                    distances.push(d);
                    trajectories.push(None);
                }
                (None, Some(t)) => {
                    distances.push(t.start_m);
                    trajectories.push(Some(Trajectory { start_m: t.start_m, end_m: t.end_m, speed_mps: t.speed.0, doppler_hz: None }));
                }
                (Some(_), Some(_)) => return Err(fail(&format!("ues[{k}]"), "give distance_m or trajectory, not both".into())),
                (None, None) => {
                    return Err(fail(&format!("ues[{k}]"), "needs distance_m = <m> or trajectory = { start_m = .., end_m = .., speed = \"10 m/s\" } (or the cell's distance_m)".into()))
                }
            }
        }
        let mut cfg = CellConfig::study(distances);
        if trajectories.iter().any(Option::is_some) {
            cfg.trajectories = trajectories;
        }
        if let Some(mhz) = c.carrier_mhz {
            cfg.budget.carrier_mhz = mhz;
        }
        match choose(&field("rat"), "radio", c.rat.as_deref().unwrap_or("lte"), &[("lte", false), ("nr", true)])? {
            false => {
                if let Some(name) = nr_only(c) {
                    return Err(fail(name, "only an NR cell has it: set rat = \"nr\"".into()));
                }
                if let Some(n) = c.bandwidth_rb {
                    cfg.n_rb = n;
                }
            }
            true => {
                if c.bandwidth_rb.is_some() {
                    return Err(fail("bandwidth_rb", "an NR cell's band is bandwidth_mhz (its PRBs follow from TS 38.101 Table 5.3.2-1)".into()));
                }
                let (n_rb, carrier) = nr_carrier(c, &mut cfg).map_err(|e| cell_error(&c.name, e))?;
                cfg.n_rb = n_rb;
                cfg.carrier = Carrier::Nr(carrier);
            }
        }
        if let Some(name) = &c.scheduler {
            cfg.scheduler = choose(&field("scheduler"), "scheduler", name, &SchedulerKind::NAMES)?;
        }
        // 3 km/h: 5.89 Hz at the LTE cell's 2.12 GHz; an NR cell's at its own carrier.
        let doppler = c.doppler_hz.unwrap_or(match cfg.carrier {
            Carrier::Lte => 5.89,
            Carrier::Nr(_) => doppler_hz(3.0 / 3.6, cfg.budget.carrier_mhz * 1e6),
        });
        // The spreads by their names, and "none".
        let fadings: Vec<(&str, Option<FadingSpread>)> =
            FadingSpread::NAMES.iter().map(|&n| (n, FadingSpread::from_name(n))).chain([("none", None)]).collect();
        cfg.fading = match choose(&field("fading"), "fading", c.fading.as_deref().unwrap_or("rayleigh"), &fadings)? {
            None if c.doppler_hz.is_some() => return Err(fail("doppler_hz", format!("a Doppler shift needs fading = one of {}", FadingSpread::NAMES.join(", ")))),
            None => FadingConfig::None,
            Some(spread) => FadingConfig::Rayleigh { doppler_hz: doppler, spread },
        };
        if let Some(k_db) = c.rician_k_db {
            let spread = match cfg.fading {
                FadingConfig::Rayleigh { spread: spread @ (FadingSpread::Flat | FadingSpread::PerRb), .. } => spread,
                _ => return Err(fail("rician_k_db", "a line of sight rides on fading = \"rayleigh\" or \"rayleigh_per_rb\" (a tapped delay line's taps are Rayleigh, TS 36.104 Annex B.2)".into())),
            };
            if !(k_db.is_finite() && (-30.0..=30.0).contains(&k_db)) {
                return Err(fail("rician_k_db", format!("must lie between -30 dB and 30 dB, got {k_db}")));
            }
            cfg.fading = FadingConfig::Rician { doppler_hz: doppler, spread, k_factor: 10f64.powf(k_db / 10.0) };
        }
        if let Some(b) = c.rlc_buffer {
            cfg.rlc_buffer_bytes = b.0;
        }
        if let Some(t) = c.t_reordering {
            cfg.t_reordering_us = t.as_nanos() / 1000;
        }
        match choose(&field("rlc"), "RLC mode", c.rlc.as_deref().unwrap_or("um"), &[("um", false), ("am", true)])? {
            false => {
                for (name, given) in [("t_reassembly", c.t_reassembly.is_some()), ("t_poll_retransmit", c.t_poll_retransmit.is_some()), ("max_retx", c.max_retx.is_some())] {
                    if given {
                        return Err(fail(name, "an RLC AM parameter: set rlc = \"am\"".into()));
                    }
                }
            }
            true => {
                if c.t_reordering.is_some() {
                    return Err(fail("t_reordering", "UM's reordering timer; an AM bearer reassembles under t_reassembly".into()));
                }
                let mut am = AmConfig { in_order: cfg.carrier == Carrier::Lte, ..AmConfig::nr_default(cfg.rlc_buffer_bytes) };
                if let Some(t) = c.t_reassembly {
                    am.t_reassembly_us = t.as_nanos() / 1000;
                }
                if let Some(t) = c.t_poll_retransmit {
                    am.t_poll_retransmit_us = t.as_nanos() / 1000;
                }
                if let Some(m) = c.max_retx {
                    am.max_retx_threshold = m;
                }
                am.validate().map_err(|e| cell_error(&c.name, e))?;
                cfg.rlc = RlcMode::Am(am);
            }
        }
        if let Some(name) = &c.timing {
            cfg.timing = choose(&field("timing"), "timing", name, &MacTiming::NAMES)?;
        }
        if let Some(name) = &c.uplink_mcs {
            cfg.uplink_mcs = choose(&field("uplink_mcs"), "uplink MCS rule", name, &UlMcs::NAMES)?;
        }
        cfg.draw_los = choose(&field("los"), "line of sight", c.los.as_deref().unwrap_or("model"), &[("model", false), ("drawn", true)])?;
        if let Some(section) = &c.l4s_marking {
            cfg.l4s_marking = Some(l4s_marking(section).map_err(|e| cell_error(&c.name, e))?);
        }
        if let Some(spec) = &c.aqm {
            // The link's parameters and messages, at `cell.<name>.aqm[.<field>]`.
            cfg.aqm = super::links::resolve_aqm(spec).map_err(|(sub, m)| {
                let mut path = vec!["cell", c.name.as_str(), "aqm"];
                path.extend(sub);
                err(&path, m)
            })?;
            if cfg.aqm.is_some() && cfg.l4s_marking.is_some() {
                return Err(fail("aqm", "a queue discipline and l4s_marking would both mark the same RLC buffer: give one (DualPI2 has its own L4S marking)".into()));
            }
        }
        if let Some(section) = &c.blockage {
            let d = BlockageConfig::default();
            cfg.blockage = Some(BlockageConfig {
                mean_blocked_s: section.mean.map_or(d.mean_blocked_s, |t| t.as_nanos() as f64 * 1e-9),
                fraction: section.fraction.unwrap_or(d.fraction),
                depth_db: section.depth_db.unwrap_or(d.depth_db),
                ramp_s: section.ramp.map_or(d.ramp_s, |t| t.as_nanos() as f64 * 1e-9),
            });
        }
        if let Some(section) = &c.bler {
            let mut curve = cfg.curve;
            match *section {
                BlerSection::Logistic { gap_db, width_db } => {
                    curve.gap_db = gap_db.unwrap_or(curve.gap_db);
                    curve.width_db = width_db.unwrap_or(curve.width_db);
                }
                BlerSection::CodeBlocks { gap_bg1_db, gap_bg2_db } => {
                    if cfg.carrier == Carrier::Lte {
                        return Err(fail("bler.model", "\"code_blocks\" follows NR's LDPC code blocks: set it on a cell with rat = \"nr\" (an LTE cell takes \"logistic\")".into()));
                    }
                    let d = CodeBlockGaps::default();
                    curve.code_blocks = Some(CodeBlockGaps { bg1_db: gap_bg1_db.unwrap_or(d.bg1_db), bg2_db: gap_bg2_db.unwrap_or(d.bg2_db) });
                }
            }
            cfg.curve = curve;
            // The UEs judge their CQI by the same curves.
            if let AmcModel::MutualInformation { curve: c, .. } = &mut cfg.amc {
                *c = curve;
            }
        }
        let b = &mut cfg.budget;
        for (value, slot) in [
            (c.enb_power_dbm, &mut b.enb_power_dbm),
            (c.ue_power_dbm, &mut b.ue_power_dbm),
            (c.enb_noise_figure_db, &mut b.enb_noise_figure_db),
            (c.ue_noise_figure_db, &mut b.ue_noise_figure_db),
        ] {
            if let Some(v) = value {
                *slot = v;
            }
        }
        b.pathloss = match c.pathloss {
            Some(model) => {
                if c.pathloss_exponent.is_some() || c.pathloss_reference_db.is_some() {
                    let field = if c.pathloss_exponent.is_some() { "pathloss_exponent" } else { "pathloss_reference_db" };
                    return Err(fail(field, "give either pathloss = { model = ... } or the log-distance pathloss_exponent / pathloss_reference_db, not both".into()));
                }
                model.validate("pathloss").map_err(|e| pathloss_error(&c.name, e))?;
                model
            }
            None => {
                let ld = LogDistance { exponent: c.pathloss_exponent.unwrap_or(3.0), reference_loss_db: c.pathloss_reference_db.unwrap_or(46.6777), ..LogDistance::ns3() };
                PathLoss::LogDistance(ld)
            }
        };
        // A moving UE's Doppler shift follows its speed on the downlink carrier, unless the
        // cell sets one for every UE.
        if c.doppler_hz.is_none() {
            let carrier_hz = cfg.budget.carrier_mhz * 1e6;
            for t in cfg.trajectories.iter_mut().flatten().filter(|t| t.speed_mps > 0.0) {
                t.doppler_hz = Some(doppler_hz(t.speed_mps, carrier_hz).min(2000.0));
            }
        }
        cfg.validate().map_err(|e| cell_error(&c.name, e))?;
        let ran = match &c.layout {
            Some(layout) => Some(super::rans::resolve_ran(c, layout, &cfg)?),
            None => {
                for (name, given) in [("handover", c.handover.is_some()), ("measurement", c.measurement.is_some()), ("rlf", c.rlf.is_some()), ("shadowing", c.shadowing.is_some()), ("secondary_node", c.secondary_node.is_some())] {
                    if given {
                        return Err(fail(name, "applies to a cell with a layout of many cells: layout = { sites = [[0, 0], [500, 0]] }".into()));
                    }
                }
                None
            }
        };
        out.push(Cell { name: c.name.clone(), enb: c.enb.clone(), ues: nodes, config: cfg, ran });
    }
    Ok((out, index))
}

/// The first NR-only field an LTE cell gives, if any.
fn nr_only(c: &CellSection) -> Option<&'static str> {
    [
        ("bandwidth_mhz", c.bandwidth_mhz.is_some()),
        ("numerology", c.numerology.is_some()),
        ("tdd_pattern", c.tdd_pattern.is_some()),
        ("special_slot", c.special_slot.is_some()),
        ("mcs_table", c.mcs_table.is_some()),
        ("layers", c.layers.is_some()),
        ("dmrs_re_per_prb", c.dmrs_re_per_prb.is_some()),
        ("coreset_symbols", c.coreset_symbols.is_some()),
        ("harq_processes", c.harq_processes.is_some()),
        ("k1_slots", c.k1_slots.is_some()),
        ("k2_slots", c.k2_slots.is_some()),
        ("n1_symbols", c.n1_symbols.is_some()),
    ]
    .into_iter()
    .find_map(|(name, given)| given.then_some(name))
}

/// An NR cell's PRBs and carrier from its fields (defaults: 3.5 GHz, μ 1, 100 MHz, DDDSU with
/// 10:2:2, the 256QAM table, one layer).
fn nr_carrier(c: &CellSection, cfg: &mut CellConfig) -> Result<(u16, NrCarrier), CellError> {
    if c.carrier_mhz.is_none() {
        cfg.budget.carrier_mhz = NR_CARRIER_MHZ;
    }
    let mhz = cfg.budget.carrier_mhz;
    let range = FrequencyRange::of_carrier_ghz(mhz / 1000.0)
        .map_err(|_| CellError::OutOfRange { field: "cell.carrier_mhz".into(), value: mhz, allowed: "in [410, 7125] MHz (FR1) or [24250, 71000] MHz (FR2)".into() })?;
    let numerology = Numerology::new(c.numerology.unwrap_or(1))?;
    let n_rb = n_rb(range, numerology, c.bandwidth_mhz.unwrap_or(100))?;
    let special = match &c.special_slot {
        None => SpecialSlot::default(),
        Some(text) => {
            let parts: Vec<Option<u8>> = text.split(':').map(|p| p.trim().parse().ok()).collect();
            match parts.as_slice() {
                [Some(d), Some(g), Some(u)] => SpecialSlot::new(*d, *g, *u)?,
                _ => return Err(CellError::Invalid { field: "cell.special_slot".into(), message: format!("{text:?}: must be \"D:G:U\", downlink, guard and uplink symbols summing to 14 (e.g. \"10:2:2\")") }),
            }
        }
    };
    let duplex = Duplex::parse(Some(c.tdd_pattern.as_deref().unwrap_or("DDDSU")), special)?;
    let mut nr = NrCarrier::new(numerology, duplex);
    if let Some(name) = &c.mcs_table {
        nr.mcs_table = McsTable::from_name(name)?;
    }
    for (value, slot) in [
        (c.layers, &mut nr.layers),
        (c.dmrs_re_per_prb, &mut nr.dmrs_re_per_prb),
        (c.coreset_symbols, &mut nr.coreset_symbols),
        (c.harq_processes, &mut nr.harq_processes),
        (c.k1_slots, &mut nr.k1_slots),
        (c.k2_slots, &mut nr.k2_slots),
        (c.n1_symbols, &mut nr.n1_symbols),
    ] {
        if let Some(v) = value {
            *slot = v;
        }
    }
    nr.validate()?;
    Ok((n_rb, nr))
}

/// An NR cell's carrier frequency unless it gives one, MHz (n78).
const NR_CARRIER_MHZ: f64 = 3500.0;

/// A path-loss parameter out of range (its field `pathloss.<parameter>`) at
/// `cell.<name>.pathloss.<parameter>`.
fn pathloss_error(name: &str, e: multiconn_radio::error::RadioError) -> FieldError {
    use multiconn_radio::error::RadioError;
    let (field, message) = match e {
        RadioError::OutOfRange { field, value, allowed } => (field, format!("{value} is not allowed: must be {allowed}")),
        RadioError::Invalid { field, message } => (field, message),
        other => ("pathloss".to_string(), other.to_string()),
    };
    let mut path = vec!["cell".to_string(), name.to_string()];
    path.extend(field.split('.').map(str::to_string));
    FieldError { path, message }
}

/// A model error (its field `cell.<field>`) at the cell's field (`cell.<name>.<field>`), in the
/// scenario's spelling.
fn cell_error(name: &str, e: multiconn_cell::CellError) -> FieldError {
    use multiconn_cell::CellError;
    let (field, message) = match e {
        CellError::OutOfRange { field, value, allowed } => (field, format!("{value} is not allowed: must be {allowed}")),
        CellError::Invalid { field, message } => (field, message),
    };
    let sub = field.strip_prefix("cell.").unwrap_or(&field);
    let sub = match sub {
        "fading.doppler_hz" => "doppler_hz".to_string(),
        "rlc_buffer_bytes" => "rlc_buffer".to_string(),
        "t_reordering_us" => "t_reordering".to_string(),
        "rlc.t_reassembly" => "t_reassembly".to_string(),
        "rlc.t_poll_retransmit" => "t_poll_retransmit".to_string(),
        "rlc.max_retx_threshold" => "max_retx".to_string(),
        "blockage.mean_blocked_s" => "blockage.mean".to_string(),
        "blockage.ramp_s" => "blockage.ramp".to_string(),
        "los" => "los".to_string(),
        "ues" => "ues".to_string(),
        s if s.starts_with("pathloss") => "pathloss_exponent".to_string(),
        s => s.to_string(),
    };
    FieldError { path: vec!["cell".into(), name.into(), sub], message }
}

/// A cell's `l4s_marking` table as the cell's rule, absent fields at their defaults
/// (docs/aqm.md, "L4S marking in the RAN").
fn l4s_marking(section: &L4sMarkingSection) -> Result<L4sMarking, CellError> {
    use multiconn_cell::l4s::{DEFAULT_RAMP_MIN_TH_US, DEFAULT_RAMP_RANGE_US, DEFAULT_RATE_FLOOR_BYTES_PER_S, DEFAULT_RATE_WINDOW_US, DEFAULT_STEP_US};
    let us = |d: multiconn_core::Dur| d.as_nanos() / 1000;
    let rule = match *section {
        L4sMarkingSection::Sojourn { step_threshold } => L4sMarking::Sojourn { step_us: step_threshold.map_or(DEFAULT_STEP_US, us) },
        L4sMarkingSection::Predicted { ramp_min_th, ramp_range, rate_window, rate_floor } => L4sMarking::Predicted {
            min_th_us: ramp_min_th.map_or(DEFAULT_RAMP_MIN_TH_US, us),
            range_us: ramp_range.map_or(DEFAULT_RAMP_RANGE_US, us),
            window_us: rate_window.map_or(DEFAULT_RATE_WINDOW_US, us),
            floor_bytes_per_s: rate_floor.map_or(DEFAULT_RATE_FLOOR_BYTES_PER_S, |r| r.bps() as f64 / 8.0),
        },
    };
    rule.validate()?;
    Ok(rule)
}
