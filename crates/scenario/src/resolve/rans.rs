//! A `[[cell]]` with a `layout`: many cells of the section's settings placed by the layout, its
//! UEs moving along routes and handed over between them ([`multiconn_cell::ran`],
//! docs/mobility.md).

use multiconn_cell::ran::{ConditionalConfig, FailureConfig, HandoverConfig, MeasurementConfig, RanConfig, RanShadowing, SecondaryNodeConfig};
use multiconn_cell::rrc::RlmConfig;
use multiconn_cell::CellConfig;
use multiconn_radio::budget::SectorAntenna;
use multiconn_radio::layout::{Cell as PlacedCell, HexGrid, Layout, Site};
use multiconn_radio::route::{Leg, Route};
use multiconn_radio::RadioError;

use super::errors::FieldError;
use crate::schema::{CellSection, ConditionalSection, LayoutSection, RlfSection};

/// The network of cells `c` (whose every cell is `cell`) stands for.
pub(super) fn resolve_ran(c: &CellSection, layout: &LayoutSection, cell: &CellConfig) -> Result<RanConfig, FieldError> {
    let fail = |field: &str, message: String| FieldError { path: vec!["cell".into(), c.name.clone(), field.into()], message };
    let radio = |prefix: &str, e: RadioError| {
        let text = e.to_string();
        fail(prefix, text)
    };
    let height_m = layout.height_m.unwrap_or(25.0);
    let power = cell.budget.enb_power_dbm;
    let carrier = cell.budget.carrier_mhz;
    let n_rb = u32::from(cell.n_rb);
    let placed = match (&layout.sites, layout.rings) {
        (Some(sites), None) => {
            for f in [("isd_m", layout.isd_m.is_some()), ("wrap", layout.wrap.is_some())] {
                if f.1 {
                    return Err(fail(&format!("layout.{}", f.0), "belongs to a hexagonal grid (rings = ...), not to sites placed by hand".into()));
                }
            }
            let s: Vec<Site> = sites.iter().map(|&[x, y]| Site { x_m: x, y_m: y, height_m }).collect();
            // One omnidirectional cell per site, or three sectors pointing at 30°, 150°, 270°.
            let cells: Vec<PlacedCell> = match layout.sectors.unwrap_or(1) {
                1 => (0..s.len()).map(|i| PlacedCell { site: i, azimuth_deg: None, antenna: SectorAntenna::default(), tx_power_dbm: power, carrier_mhz: carrier, n_rb }).collect(),
                3 => (0..s.len())
                    .flat_map(|i| (0..3).map(move |k| PlacedCell { site: i, azimuth_deg: Some(30.0 + 120.0 * f64::from(k)), antenna: SectorAntenna::default(), tx_power_dbm: power, carrier_mhz: carrier, n_rb }))
                    .collect(),
                n => return Err(fail("layout.sectors", format!("{n} is not allowed: 1 (omnidirectional) or 3"))),
            };
            Layout::from_sites(s, cells).map_err(|e| radio("layout.sites", e))?
        }
        (None, Some(rings)) => {
            let grid = HexGrid {
                rings,
                isd_m: layout.isd_m.unwrap_or(500.0),
                sectors: layout.sectors.unwrap_or(3),
                height_m,
                wrap: layout.wrap.unwrap_or(false),
                tx_power_dbm: power,
                carrier_mhz: carrier,
                n_rb,
                ..HexGrid::default()
            };
            Layout::hexagonal(&grid).map_err(|e| radio("layout", e))?
        }
        _ => return Err(fail("layout", "give either sites = [[x, y], ...] or a hexagonal grid's rings (with isd_m, sectors, wrap)".into())),
    };
    let n_cells = placed.cells().len();
    let mut routes = Vec::new();
    let mut initial_cell = Vec::new();
    for (k, u) in c.ues.iter().enumerate() {
        let field = format!("ues[{k}].route");
        let steps = u.route.as_deref().unwrap_or_default();
        let Some(first) = steps.first() else {
            return Err(fail(&field, "needs at least its start: [{ x_m = 100, y_m = 50 }, ...]".into()));
        };
        let (Some(x0), Some(y0), None, None) = (first.x_m, first.y_m, first.speed, first.pause) else {
            return Err(fail(&format!("{field}[0]"), "the first step is the start: { x_m = .., y_m = .. } (no speed or pause)".into()));
        };
        let mut legs = Vec::new();
        for (i, w) in steps.iter().enumerate().skip(1) {
            let here = format!("{field}[{i}]");
            match (w.x_m, w.y_m, w.speed, w.pause) {
                (Some(x), Some(y), Some(v), None) => legs.push(Leg::Move { to: (x, y), speed_mps: v.0 }),
                (None, None, None, Some(d)) => legs.push(Leg::Pause { duration_ns: d.as_nanos() }),
                (Some(_), Some(_), None, None) => return Err(fail(&here, "a move needs its speed, e.g. speed = \"50 km/h\" (a stop is a pause with a duration: { pause = \"5 s\" })".into())),
                _ => return Err(fail(&here, "is a point with its speed { x_m = .., y_m = .., speed = \"50 km/h\" } or a stop { pause = \"5 s\" }".into())),
            }
        }
        routes.push(Route::named(&field, (x0, y0), legs).map_err(|e| fail(&field, e.to_string()))?);
        if let Some(ic) = u.initial_cell.filter(|&ic| ic >= n_cells) {
            return Err(fail(&format!("ues[{k}].initial_cell"), format!("{ic} is not a cell of the layout, which has {n_cells} (0 to {})", n_cells - 1)));
        }
        initial_cell.push(u.initial_cell);
    }
    let d = HandoverConfig::default();
    let a5_thresholds_dbm = match &c.handover {
        None => None,
        Some(h) => match (h.event.as_deref(), h.a5_threshold1_dbm, h.a5_threshold2_dbm) {
            (None | Some("a3"), None, None) => None,
            (None | Some("a3"), _, _) => return Err(fail("handover.a5_threshold1_dbm", "the A5 thresholds apply to event = \"a5\"".into())),
            (Some("a5"), Some(t1), Some(t2)) if h.a3_offset_db.is_none() => Some((t1, t2)),
            (Some("a5"), Some(_), Some(_)) => return Err(fail("handover.a3_offset_db", "applies to event = \"a3\"; event \"a5\" takes a5_threshold1_dbm and a5_threshold2_dbm".into())),
            (Some("a5"), _, _) => return Err(fail("handover.event", "\"a5\" needs a5_threshold1_dbm (the serving cell below it) and a5_threshold2_dbm (a neighbour above it)".into())),
            (Some(other), _, _) => return Err(fail("handover.event", format!("\"{other}\" is not a handover event: a3 or a5"))),
        },
    };
    let handover = match &c.handover {
        None => d,
        Some(h) => HandoverConfig {
            a3_offset_db: h.a3_offset_db.unwrap_or(d.a3_offset_db),
            a5_thresholds_dbm,
            hysteresis_db: h.hysteresis_db.unwrap_or(d.hysteresis_db),
            time_to_trigger_ms: match h.time_to_trigger {
                Some(t) => u32::try_from(t.as_nanos() / 1_000_000).ok().filter(|ms| u64::from(*ms) * 1_000_000 == t.as_nanos()).ok_or_else(|| fail("handover.time_to_trigger", format!("{t} is not a whole number of ms: use one of TS 38.331's values (0, 40, 64, 80, 100, 128, 160, 256, 320, 480, 512, 640, 1024, 1280, 2560, 5120 ms)")))?,
                None => d.time_to_trigger_ms,
            },
            preparation_ns: h.preparation.map_or(d.preparation_ns, |t| t.as_nanos()),
            interruption_ns: h.interruption.map_or(d.interruption_ns, |t| t.as_nanos()),
            x2_delay_ns: h.x2_delay.map_or(d.x2_delay_ns, |t| t.as_nanos()),
            path_switch_ns: h.path_switch.map_or(d.path_switch_ns, |t| t.as_nanos()),
            forwarding: h.forwarding.unwrap_or(d.forwarding),
            daps: h.daps.unwrap_or(d.daps),
            conditional: match &h.conditional {
                None | Some(ConditionalSection::Switch(false)) => None,
                Some(ConditionalSection::Switch(true)) => Some(ConditionalConfig::default()),
                Some(ConditionalSection::On(f)) => {
                    let c = ConditionalConfig::default();
                    Some(ConditionalConfig {
                        preparation_offset_db: f.preparation_offset_db.unwrap_or(c.preparation_offset_db),
                        attempt_after_failure: f.attempt_after_failure.unwrap_or(c.attempt_after_failure),
                    })
                }
            },
        },
    };
    if let Some(cho) = handover.conditional {
        if handover.daps {
            return Err(fail("handover.conditional", "does not combine with daps = true (TS 38.300 §9.2.3.2): leave one out".into()));
        }
        if cho.preparation_offset_db > handover.a3_offset_db {
            return Err(fail(
                "handover.conditional.preparation_offset_db",
                format!("{} dB is above a3_offset_db ({} dB), the execution's: candidates are prepared at a looser trigger than they are executed", cho.preparation_offset_db, handover.a3_offset_db),
            ));
        }
    }
    let m = MeasurementConfig::default();
    let measurement = match &c.measurement {
        None => m,
        Some(s) => MeasurementConfig {
            period_ns: s.period.map_or(m.period_ns, |t| t.as_nanos()),
            filter_coefficient: s.filter_coefficient.unwrap_or(m.filter_coefficient),
            nominal_period_ns: s.nominal_period.map_or(m.nominal_period_ns, |t| t.as_nanos()),
            link_update_ns: s.link_update.map_or(m.link_update_ns, |t| t.as_nanos()),
        },
    };
    let f = FailureConfig::default();
    let failure = match &c.rlf {
        Some(RlfSection::Off(false)) => None,
        Some(RlfSection::Off(true)) | None => Some(f),
        Some(RlfSection::On(r)) => {
            let mon = RlmConfig::default();
            Some(FailureConfig {
                monitor: RlmConfig {
                    t310_ms: match r.t310 {
                        Some(t) => u32::try_from(t.as_nanos() / 1_000_000).unwrap_or(u32::MAX),
                        None => mon.t310_ms,
                    },
                    n310: r.n310.unwrap_or(mon.n310),
                    n311: r.n311.unwrap_or(mon.n311),
                    q_out_db: r.q_out_db.unwrap_or(mon.q_out_db),
                    q_in_db: r.q_in_db.unwrap_or(mon.q_in_db),
                },
                reestablishment_ns: r.reestablishment.map_or(f.reestablishment_ns, |t| t.as_nanos()),
            })
        }
    };
    let shadowing = c.shadowing.as_ref().map(|s| RanShadowing {
        sigma_db: s.sigma_db,
        decorrelation_m: s.decorrelation_m.unwrap_or(50.0),
        inter_site_correlation: s.inter_site_correlation.unwrap_or(0.5),
    });
    let ran = RanConfig {
        cells: vec![cell.clone(); n_cells],
        layout: placed,
        pathloss: cell.budget.pathloss,
        routes,
        initial_cell,
        shadowing,
        measurement,
        handover,
        failure,
        secondary: c.secondary_node.as_ref().map(|s| SecondaryNodeConfig { addition_rsrp_dbm: s.addition_rsrp_dbm, release_rsrp_dbm: s.release_rsrp_dbm }),
    };
    // Built once here so that every field's error comes now, named.
    multiconn_cell::ran::Ran::new(ran.clone(), 0, "check").map_err(|e| {
        use multiconn_cell::CellError;
        let (field, message) = match e {
            CellError::OutOfRange { field, value, allowed } => (field, format!("{value} is not allowed: must be {allowed}")),
            CellError::Invalid { field, message } => (field, message),
        };
        let field = match field.trim_start_matches("ran.").trim_start_matches("rrc.") {
            "time_to_trigger_ms" => "handover.time_to_trigger".to_string(),
            "hysteresis_db" => "handover.hysteresis_db".to_string(),
            "a3_offset_db" | "offset_db" => "handover.a3_offset_db".to_string(),
            "threshold1" => "handover.a5_threshold1_dbm".to_string(),
            "threshold2" => "handover.a5_threshold2_dbm".to_string(),
            f @ ("t310_ms" | "n310" | "n311" | "q_out_db" | "q_in_db") => format!("rlf.{}", f.trim_end_matches("_ms")),
            "filter_coefficient" => "measurement.filter_coefficient".to_string(),
            f if f.starts_with("secondary.") => f.replacen("secondary.", "secondary_node.", 1),
            f => f.to_string(),
        };
        fail(&field, message)
    })?;
    Ok(ran)
}
