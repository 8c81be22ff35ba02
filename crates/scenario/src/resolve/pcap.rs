//! `run.pcap` and `run.pcap_max_mb`: which flows' packets are captured, on which of their
//! paths, and how large a capture file may grow (see `docs/pcap.md`).
//!
//! A filter entry names a flow (`"bulk"` or `"flow:bulk"`) or a link (`"link:bottleneck"`).
//! Flow entries choose the flows (default: every flow); link entries keep, of those flows,
//! only the paths whose routes cross one of the links (either direction, a split's legs
//! included). A bare name that is both a flow and a link is an error asking for the prefix.

use super::errors::{err, FieldError};
use super::flows::Flow;
use super::links::LinkDirection;
use crate::schema::{PcapSetting, RunSection};
use multiconn_net::{Hop, Leg};

/// A capture file's size limit when `run.pcap_max_mb` is not given, in MB.
pub const DEFAULT_PCAP_MAX_MB: f64 = 64.0;
/// The largest `run.pcap_max_mb`: 4 GB, where pcapng's 32-bit block fields stop mattering and
/// every file is held in memory until the run ends.
pub const MAX_PCAP_MAX_MB: f64 = 4000.0;
/// The most distinct nodes the address plan numbers (512 /24 blocks in 198.18.0.0/15).
pub const MAX_PCAP_NODES: usize = 512;

/// What a run captures.
#[derive(Debug, Clone, PartialEq)]
pub struct PcapSpec {
    /// Per flow (index of `Resolved::flows`): the paths whose packets are captured; empty
    /// for a flow that is not captured.
    pub paths: Vec<Vec<u8>>,
    /// The largest file, in bytes.
    pub max_bytes: u64,
    /// Every node of the scenario, sorted by name: node `i` has the addresses 198.18.0.0 +
    /// 256·i + 1 + path.
    pub nodes: Vec<String>,
}

impl PcapSpec {
    /// The index of `node` in the address plan.
    pub fn node_index(&self, node: &str) -> usize {
        self.nodes.binary_search_by(|n| n.as_str().cmp(node)).expect("every flow end is a node of the plan")
    }
}

/// The capture settings of a run; `None` when `run.pcap` is absent or false.
pub(super) fn resolve_pcap(run: &RunSection, flows: &[Flow], links: &[LinkDirection], nodes: Vec<String>) -> Result<Option<PcapSpec>, FieldError> {
    let at = ["run", "pcap"];
    let max_at = ["run", "pcap_max_mb"];
    let max_mb = run.pcap_max_mb.unwrap_or(DEFAULT_PCAP_MAX_MB);
    if !(max_mb.is_finite() && max_mb > 0.0 && max_mb <= MAX_PCAP_MAX_MB) {
        return Err(err(&max_at, format!("{max_mb} MB is not a size limit: give a number of MB above 0 and at most {MAX_PCAP_MAX_MB}")));
    }
    let entries: &[String] = match &run.pcap {
        None | Some(PcapSetting::On(false)) => {
            if run.pcap_max_mb.is_some() {
                return Err(err(&max_at, "run.pcap is not set, so nothing is captured: set run.pcap = true (or a filter) too"));
            }
            return Ok(None);
        }
        Some(PcapSetting::On(true)) => &[],
        Some(PcapSetting::Only(entries)) => {
            if entries.is_empty() {
                return Err(err(&at, "an empty filter captures nothing: name flows or links (e.g. [\"bulk\", \"link:bottleneck\"]), or say true or false"));
            }
            entries
        }
    };
    let flow_names = || flows.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ");
    let link_names = || {
        let mut names: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
        names.dedup();
        if names.is_empty() { "none".to_string() } else { names.join(", ") }
    };
    let mut chosen_flows: Vec<usize> = Vec::new();
    let mut chosen_links: Vec<&str> = Vec::new();
    for entry in entries {
        let (kind, name) = match entry.split_once(':') {
            Some((kind, name)) => (Some(kind), name),
            None => (None, entry.as_str()),
        };
        let flow = flows.iter().position(|f| f.name == name);
        let link = links.iter().any(|l| l.name == name);
        match (kind, flow, link) {
            (Some("flow") | None, Some(i), false) | (Some("flow"), Some(i), true) => chosen_flows.push(i),
            (Some("link") | None, None, true) | (Some("link"), Some(_), true) => chosen_links.push(name),
            (None, Some(_), true) => {
                return Err(err(&at, format!("\"{name}\" names both a flow and a link: write \"flow:{name}\" or \"link:{name}\"")));
            }
            (Some("flow"), None, _) => return Err(err(&at, format!("\"{entry}\": there is no flow named \"{name}\" (flows: {})", flow_names()))),
            (Some("link"), _, false) => return Err(err(&at, format!("\"{entry}\": there is no link named \"{name}\" (links: {})", link_names()))),
            (Some(other), _, _) => {
                return Err(err(&at, format!("\"{entry}\": \"{other}:\" is not a filter kind; write \"flow:NAME\" or \"link:NAME\"")));
            }
            (None, None, false) => {
                return Err(err(&at, format!("\"{name}\" is neither a flow nor a link (flows: {}; links: {})", flow_names(), link_names())));
            }
        }
    }
    let link_wanted = |l: usize| chosen_links.contains(&links[l].name.as_str());
    let crosses = |hop: &Hop| match *hop {
        Hop::Link(l) => link_wanted(l),
        Hop::Split { legs, .. } => legs.iter().any(|&leg| matches!(leg, Leg::Link(l) if link_wanted(l))),
        Hop::Port { .. } => false,
    };
    let mut paths = Vec::with_capacity(flows.len());
    for (i, f) in flows.iter().enumerate() {
        let captured = chosen_flows.is_empty() || chosen_flows.contains(&i);
        let kept: Vec<u8> = (0..f.path_count() as u8)
            .filter(|&p| captured && (chosen_links.is_empty() || f.hops(p, 0).iter().chain(f.hops(p, 1)).any(crosses)))
            .collect();
        paths.push(kept);
    }
    if paths.iter().all(Vec::is_empty) {
        return Err(err(&at, "the filter leaves nothing to capture: no chosen flow has a path over the chosen links"));
    }
    if nodes.len() > MAX_PCAP_NODES {
        return Err(err(&at, format!("the scenario has {} nodes; the capture address plan numbers at most {MAX_PCAP_NODES}", nodes.len())));
    }
    Ok(Some(PcapSpec { paths, max_bytes: (max_mb * 1e6) as u64, nodes }))
}

/// Every node the scenario names (links, cells, flows' ends), sorted and without repeats.
pub(super) fn nodes(links: &[LinkDirection], cells: &[super::cells::Cell], flows: &[Flow]) -> Vec<String> {
    let mut nodes: Vec<String> = links
        .iter()
        .flat_map(|l| [&l.from, &l.to])
        .chain(cells.iter().flat_map(|c| std::iter::once(&c.enb).chain(&c.ues)))
        .chain(flows.iter().flat_map(|f| [&f.from, &f.to]))
        .cloned()
        .collect();
    nodes.sort();
    nodes.dedup();
    nodes
}
