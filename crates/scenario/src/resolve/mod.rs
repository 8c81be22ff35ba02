//! From a parsed [`ScenarioFile`] to runnable model parameters.
//!
//! Checks what the schema alone cannot (unique names, nodes that routes connect, required
//! values per direction, model parameters in range), reads trace files relative to the
//! scenario's folder, and parses them with the link crate's parsers. Every failure names the
//! field path it comes from ([`FieldError`]).
//!
//! One module per job, run in this order: [`links`](self::links) (link directions and their
//! models, [`models`](self::models)), [`splits`](self::splits), then per flow
//! [`flows`](self::flows) (the application), [`routes`](self::routes),
//! [`connection`](self::connection) (TCP and QUIC settings), [`paths`](self::paths)
//! (multipath and the path manager) and [`messages`](self::messages). Trace files are read
//! through [`files`](self::files); errors and names are in [`errors`](self::errors).
//!
//! Flows with `enabled = false` are checked like the others, then left out of
//! [`Resolved::flows`] (their names kept in [`Resolved::disabled`]). A flow that would start at
//! or after the end of a run with a duration is an error, and so is a `[fairness]` list naming
//! a flow that does not run. Flows in a tunnel are linked to it last ([`tunnels`](self::tunnels)).

mod cells;
mod connection;
mod datagrams;
mod emulate;
mod errors;
mod files;
mod flows;
mod links;
mod messages;
mod models;
mod paths;
mod rans;
mod pcap;
mod routes;
mod splits;
mod tunnel_place;
mod tunnels;
mod warnings;
#[cfg(feature = "test-elements")]
mod wires;
#[cfg(feature = "test-elements")]
pub use wires::allow_test_elements;

pub use cells::Cell;
pub use connection::{ConnectionSpec, DEFAULT_REQUEST_SIZE};
pub use emulate::EmulateSpec;
pub use errors::{valid_name, FieldError};
pub use flows::{Flow, MAX_BULK_QUEUE_PACKETS};
pub use links::{Direction, LinkDirection, DEFAULT_PACKET_SIZE};
pub use multiconn_net::Hop;
pub use paths::PathManagerSpec;
pub use pcap::{PcapSpec, DEFAULT_PCAP_MAX_MB, MAX_PCAP_NODES};
pub use routes::{PathRoutes, MAX_PATHS, MIN_PATHS};
pub use tunnel_place::{TunnelMode, Tunnelled};
pub use splits::{Split, DEFAULT_BATCH_SIZE, DEFAULT_FEEDBACK, DEFAULT_T_REORDERING};

use crate::schema::{AppKind, ScenarioFile};
use errors::err;
use files::Files;
use multiconn_core::Dur;
use multiconn_net::{NetworkSpec, PortModel};
use std::sync::Arc;
use std::path::Path;

/// A scenario checked and ready to run.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Its name: `name` in the file, else the file's name.
    pub name: String,
    /// `run.duration`: the time limit, if any.
    pub duration: Option<Dur>,
    /// `run.seed`, if given.
    pub seed: Option<u64>,
    /// The time series' bin width.
    pub bin: Dur,
    /// `run.measure_from`: the start of the steady-state window, if any.
    pub measure_from: Option<Dur>,
    /// Every link's two directions, in file order (forward, then reverse).
    pub links: Vec<LinkDirection>,
    /// The split bearers, in file order.
    pub splits: Vec<Split>,
    /// The cells, in file order.
    pub cells: Vec<Cell>,
    /// The flows that run (`enabled` not false), in file order.
    pub flows: Vec<Flow>,
    /// The names of the flows with `enabled = false`: checked, not run.
    pub disabled: Vec<String>,
    /// The flows the fairness indices cover (indices of `flows`, in `[fairness]` order;
    /// default every flow).
    pub fairness: Vec<usize>,
    /// Settings that are valid but often not what was meant, one line each.
    pub warnings: Vec<String>,
    /// `run.pcap`: what the run captures, if anything.
    pub pcap: Option<PcapSpec>,
}

impl Resolved {
    /// The network the run's flows cross: every link direction, split and route.
    pub fn network_spec(&self) -> NetworkSpec {
        NetworkSpec {
            links: self.links.iter().map(|l| (l.label(), l.model.clone())).collect(),
            splits: self.splits.clone(),
            flows: self.flows.iter().map(Flow::routes).collect(),
            ports: self
                .cells
                .iter()
                .map(|c| {
                    let model: Arc<dyn PortModel> = match &c.ran {
                        Some(ran) => Arc::new(ran.clone()),
                        None => Arc::new(c.config.clone()),
                    };
                    (format!("cell/{}", c.name), model)
                })
                .collect(),
        }
    }
}

/// The most time-series bins a run with a duration may have (`run.duration` / `run.bin`):
/// every flow, link direction, path and bearer keeps each of them in memory.
pub const MAX_BINS: u64 = 1_000_000;

/// The time series' bin width when `run.bin` is not given.
pub const DEFAULT_BIN: Dur = Dur::from_millis(100);

/// Checks `file` and builds its models; `default_name` names a scenario without `name`, and
/// trace files are read relative to `base_dir`.
pub fn resolve(file: &ScenarioFile, default_name: &str, base_dir: &Path) -> Result<Resolved, FieldError> {
    let mut files = Files::new(base_dir);
    let bin = file.run.bin.unwrap_or(DEFAULT_BIN);
    if bin == Dur::ZERO {
        return Err(err(&["run", "bin"], "the bin width must be positive"));
    }
    if file.run.duration == Some(Dur::ZERO) {
        return Err(err(&["run", "duration"], "the duration must be positive"));
    }
    if let Some(duration) = file.run.duration {
        let bins = duration.0.div_ceil(bin.0);
        if bins > MAX_BINS {
            return Err(err(
                &["run", "bin"],
                format!("{} s bins over run.duration = {} s make {bins} bins; at most {MAX_BINS} (every bin is kept in memory): widen the bins or shorten the run", seconds(bin.0), seconds(duration.0)),
            ));
        }
    }
    if let Some(from) = file.run.measure_from {
        if from.0 % bin.0 != 0 {
            return Err(err(&["run", "measure_from"], format!("{} s is not a multiple of the bin width run.bin = {} s", seconds(from.0), seconds(bin.0))));
        }
        if file.run.duration.is_some_and(|d| from.0 >= d.0) {
            return Err(err(&["run", "measure_from"], format!("{} s is not before the end of the run (run.duration)", seconds(from.0))));
        }
    }
    #[allow(unused_mut)] // test builds append wires
    let (mut links, mut link_index) = links::resolve_links(&file.link, &mut files)?;
    #[cfg(feature = "test-elements")]
    wires::resolve_wires(&file.wire, &mut links, &mut link_index)?;
    // Cells first: a split's legs may be cells.
    let taken = |name: &str| link_index.contains_key(name) || file.split.iter().any(|s| s.name == name);
    let (cells, cell_index) = cells::resolve_cells(&file.cell, &taken)?;
    let (splits, split_index) = splits::resolve_splits(&file.split, &links, &link_index, &cells, &cell_index)?;
    let network = routes::Network { links: &links, link_index: &link_index, split_index: &split_index, cells: &cells, cell_index: &cell_index };
    let all = flows::resolve_flows(file, &network, &mut files)?;
    if all.is_empty() {
        return Err(err(&["flow"], "the scenario has no flow: add at least one [[flow]]"));
    }
    let (mut flows, mut disabled) = (Vec::new(), Vec::new());
    for (flow, section) in all.into_iter().zip(&file.flow) {
        if section.enabled == Some(false) {
            disabled.push(flow.name);
        } else {
            flows.push(flow);
        }
    }
    tunnels::resolve_tunnels(file, &mut flows, &disabled)?;
    if flows.is_empty() {
        return Err(err(&["flow"], format!("every flow has enabled = false ({}): enable at least one", disabled.join(", "))));
    }
    if let Some(duration) = file.run.duration {
        if let Some(f) = flows.iter().find(|f| f.start.0 >= duration.0) {
            return Err(err(
                &["flow", &f.name, "start"],
                format!(
                    "the flow starts at {} s, not before the end of the run (run.duration = {} s): it would send nothing; start it earlier, lengthen the run, or set enabled = false",
                    seconds(f.start.0),
                    seconds(duration.0)
                ),
            ));
        }
    }
    let fairness = fairness_flows(file, &flows, &disabled)?;
    if file.run.duration.is_none() {
        // A tunnel ends with the flows in it.
        if let Some(f) = flows.iter().find(|f| f.size.is_none() && f.stop.is_none() && !matches!(f.app, AppKind::Requests | AppKind::Tunnel)) {
            return Err(err(&["run", "duration"], format!("required because flow \"{}\" has neither a size nor a stop time", f.name)));
        }
    }
    let nodes = pcap::nodes(&links, &cells, &flows);
    let pcap = pcap::resolve_pcap(&file.run, &flows, &links, nodes)?;
    let mut warnings = warnings::warnings(file);
    warnings.extend(warnings::route_warnings(&links, &flows));
    Ok(Resolved {
        name: file.name.clone().unwrap_or_else(|| default_name.to_string()),
        duration: file.run.duration,
        seed: file.run.seed,
        bin,
        measure_from: file.run.measure_from,
        links,
        splits,
        cells,
        flows,
        disabled,
        fairness,
        warnings,
        pcap,
    })
}

/// A time in nanoseconds as seconds, as short as exact.
fn seconds(ns: u64) -> String {
    format!("{}", ns as f64 / 1e9)
}

/// The indices (in `flows`) of the flows `[fairness] flows` names, or every flow.
fn fairness_flows(file: &ScenarioFile, flows: &[Flow], disabled: &[String]) -> Result<Vec<usize>, FieldError> {
    let Some(section) = &file.fairness else { return Ok((0..flows.len()).collect()) };
    let at = ["fairness", "flows"];
    let running = || flows.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ");
    if section.flows.is_empty() {
        return Err(err(&at, format!("name at least one flow (flows: {})", running())));
    }
    let mut chosen = Vec::new();
    for name in &section.flows {
        match flows.iter().position(|f| &f.name == name) {
            Some(i) if chosen.contains(&i) => return Err(err(&at, format!("flow \"{name}\" is named twice"))),
            Some(i) => chosen.push(i),
            None if disabled.contains(name) => {
                return Err(err(&at, format!("flow \"{name}\" has enabled = false, so it does not run (flows that run: {})", running())))
            }
            None => return Err(err(&at, format!("there is no flow named \"{name}\" (flows: {})", running()))),
        }
    }
    Ok(chosen)
}
