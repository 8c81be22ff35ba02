//! Splits: each `[[split]]` becomes a PDCP split bearer's configuration — two legs joining
//! the same nodes, an uplink leg, a policy, the SN length and reordering timer of its RAT —
//! after its name is checked against the links' (routes name both alike).

use super::errors::{check_name, err, FieldError};
use super::cells::Cell;
use super::links::LinkDirection;
use crate::schema::{PolicySection, Share, SplitSection, TReordering};
use multiconn_core::{Bytes, Dur};
use multiconn_pdcp::{header_bytes, AdaptiveSignal, Rat, ReceiverConfig, SnLength, SplitBearerConfig, SplitPolicy, TransmitterConfig};
use std::collections::HashMap;

/// A PDCP split bearer, ready to build (one bearer per flow path crossing it).
pub type Split = SplitBearerConfig;

/// The t-Reordering value of the seed study's testbed.
pub const DEFAULT_T_REORDERING: Dur = Dur::from_millis(200);
/// Packets per batch of the batch policy when `size` is not given.
pub const DEFAULT_BATCH_SIZE: u32 = 100;
/// The period of the receiver's reports (adaptive policy, retransmission of lost PDUs).
pub const DEFAULT_FEEDBACK: Dur = Dur::from_millis(10);

/// Where a split's configurations are among the resolved splits: the one its routes' data
/// direction crosses, and the reverse direction's, when it has a `reverse_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitIndex {
    pub forward: usize,
    pub reverse: Option<usize>,
}

/// Every split, in file order, then the reverse directions' configurations of those with a
/// `reverse_policy` (in file order too, so the others keep their indices), and each split's
/// indices by name. Its legs are two-way hops of `links` (hop `i` is directions `2 * i` and
/// `2 * i + 1`), named by `link_index`.
pub(super) fn resolve_splits<'f>(file_splits: &'f [SplitSection], links: &[LinkDirection], link_index: &HashMap<&str, usize>, cells: &[Cell], cell_index: &HashMap<&str, usize>) -> Result<(Vec<Split>, HashMap<&'f str, SplitIndex>), FieldError> {
    let ends = Ends { links, link_index, cells, cell_index };
    let mut splits = Vec::new();
    let mut index: HashMap<&str, SplitIndex> = HashMap::new();
    for (i, sp) in file_splits.iter().enumerate() {
        check_name("split", i, &sp.name)?;
        if link_index.contains_key(sp.name.as_str()) {
            return Err(err(&["split", &sp.name, "name"], format!("a link is also named \"{}\"; routes name links and splits alike, so names must differ", sp.name)));
        }
        if index.insert(&sp.name, SplitIndex { forward: splits.len(), reverse: None }).is_some() {
            return Err(err(&["split", &sp.name, "name"], format!("two splits are named \"{}\"", sp.name)));
        }
        splits.push(resolve_split(sp, &ends)?);
    }
    // An EN-DC secondary node is the second leg of a split (the first is the master's, whose
    // leg carries everything while the SCG is released).
    for c in cells.iter().filter(|c| c.ran.as_ref().is_some_and(|r| r.secondary.is_some())) {
        if let Some(sp) = file_splits.iter().find(|sp| sp.legs[0] == c.name) {
            return Err(err(&["split", &sp.name, "legs"], format!("\"{}\" is a secondary node (secondary_node): it is the second leg, the master's cell or link the first", c.name)));
        }
        if !file_splits.iter().any(|sp| sp.legs[1] == c.name) {
            return Err(err(&["cell", &c.name, "secondary_node"], "a secondary node is the second leg of a [[split]] (legs = [\"master\", \"this cell\"]); this cell is no split's leg"));
        }
    }
    for sp in file_splits {
        let Some(policy) = &sp.reverse_policy else { continue };
        if sp.uplink.is_some() {
            return Err(err(&["split", &sp.name, "reverse_policy"], "the opposite direction takes either one leg (uplink) or a split of its own (reverse_policy), not both"));
        }
        let mut reverse = resolve_split(&SplitSection { policy: Some(policy.clone()), reverse_policy: None, ..sp.clone() }, &ends).map_err(|e| e.renamed("policy", "reverse_policy"))?;
        reverse.name = sp.name.clone();
        // The opposite direction's PDUs take the X2-U after the secondary cell delivers them.
        reverse.rx_leg_delay = reverse.tx_leg_delay;
        reverse.tx_leg_delay = [Dur::ZERO; 2];
        index.get_mut(sp.name.as_str()).expect("indexed above").reverse = Some(splits.len());
        splits.push(reverse);
    }
    Ok((splits, index))
}

/// What a split's legs may be: links, or cells (a UE's bearer in each: dual connectivity over
/// cells, EN-DC when one is LTE and the other NR).
struct Ends<'a> {
    links: &'a [LinkDirection],
    link_index: &'a HashMap<&'a str, usize>,
    cells: &'a [Cell],
    cell_index: &'a HashMap<&'a str, usize>,
}

impl Ends<'_> {
    /// The nodes leg `name` joins: a link's two ends, or a cell's eNB and its UEs.
    fn of(&self, name: &str) -> Option<(String, Vec<String>)> {
        if let Some(&li) = self.link_index.get(name) {
            let l = &self.links[2 * li];
            return Some((l.from.clone(), vec![l.to.clone()]));
        }
        self.cell_index.get(name).map(|&ci| (self.cells[ci].enb.clone(), self.cells[ci].ues.clone()))
    }
}

/// One split.
fn resolve_split(sp: &SplitSection, ends: &Ends) -> Result<Split, FieldError> {
    let name = sp.name.as_str();
    let path = |field: &'static str| vec!["split", name, field];
    let known = || {
        let mut names: Vec<&str> = ends.links.iter().step_by(2).map(|l| l.name.as_str()).collect();
        names.extend(ends.cells.iter().map(|c| c.name.as_str()));
        names.join(", ")
    };
    let mut joined = Vec::new();
    for leg in &sp.legs {
        joined.push(ends.of(leg).ok_or_else(|| err(&path("legs"), format!("there is no link or cell named \"{leg}\" (known: {})", known())))?);
    }
    if sp.legs[0] == sp.legs[1] {
        return Err(err(&path("legs"), "the two legs must be different links or cells"));
    }
    let cell_legs = sp.legs.iter().filter(|l| ends.cell_index.contains_key(l.as_str())).count();
    if cell_legs == 0 {
        // Their forward directions: from `between[0]` to `between[1]`.
        let [a, b] = [&ends.links[2 * ends.link_index[sp.legs[0].as_str()]], &ends.links[2 * ends.link_index[sp.legs[1].as_str()]]];
        let mut ends_a = [a.from.clone(), a.to.clone()];
        let mut ends_b = [b.from.clone(), b.to.clone()];
        ends_a.sort();
        ends_b.sort();
        if ends_a != ends_b {
            return Err(err(&path("legs"), format!(
                "both legs must join the same two nodes: \"{}\" joins {} and {}, \"{}\" joins {} and {}",
                a.name, a.from, a.to, b.name, b.from, b.to
            )));
        }
    } else {
        // A cell leg is a UE's bearer: the split joins the cell's eNB (the PDCP entity's node,
        // where the master and secondary node meet) and a UE both legs reach.
        let pairs = |(n, u): &(String, Vec<String>)| -> Vec<(String, String)> { u.iter().flat_map(|u| [(n.clone(), u.clone()), (u.clone(), n.clone())]).collect() };
        let first = pairs(&joined[0]);
        if !pairs(&joined[1]).iter().any(|p| first.contains(p)) {
            let show = |leg: &str, (n, u): &(String, Vec<String>)| {
                if ends.cell_index.contains_key(leg) {
                    format!("cell \"{leg}\" joins its eNB {n} and its UEs ({})", u.join(", "))
                } else {
                    format!("link \"{leg}\" joins {n} and {}", u.join(", "))
                }
            };
            return Err(err(&path("legs"), format!(
                "both legs must join the same two nodes (over cells: the same eNB node and a UE of both): {}; {}",
                show(&sp.legs[0], &joined[0]),
                show(&sp.legs[1], &joined[1]),
            )));
        }
        if let Some(PolicySection::Duplicate { off: Some(off) }) = &sp.policy {
            if !off.is_empty() {
                return Err(err(&["split", name, "policy", "off"], "switching duplication off drops the copies waiting on the second leg; a cell's RLC buffer cannot give them back yet: keep duplication on over a cell leg"));
            }
        }
    }
    if let Some(up) = &sp.uplink {
        if !sp.legs.contains(up) {
            return Err(err(&path("uplink"), format!("must be one of the legs (\"{}\" or \"{}\")", sp.legs[0], sp.legs[1])));
        }
    }
    let rat = sp.rat.unwrap_or(Rat::Nr);
    let bits = sp.sn_length.unwrap_or(18);
    let sn = SnLength::new(bits).filter(|&sn| header_bytes(rat, sn).is_some()).ok_or_else(|| {
        let allowed = if rat == Rat::Nr { "12 or 18 (NR)" } else { "7, 12, 15 or 18 (LTE)" };
        err(&path("sn_length"), format!("{bits} bits is not a PDCP SN length here; allowed: {allowed}"))
    })?;
    let t_reordering = match sp.t_reordering {
        None => Some(DEFAULT_T_REORDERING),
        Some(TReordering::After(d)) => Some(d),
        Some(TReordering::Infinity) => None,
    };
    let ppath = |field: &'static str| vec!["split", name, "policy", field];
    let share = |p: Option<Share>, field: &'static str| -> Result<f64, FieldError> {
        let v = p.map_or(0.5, |p| p.0);
        if !(0.0..=1.0).contains(&v) {
            return Err(err(&ppath(field), format!("the share of the first leg must lie between 0 and 1 (or 0 % and 100 %), got {v}")));
        }
        Ok(v)
    };
    let mut feedback = None;
    let mut duplication_switches = Vec::new();
    let policy = match sp.policy.clone().unwrap_or(PolicySection::Batch { size: DEFAULT_BATCH_SIZE, share: None }) {
        // The size is a whole number ≥ 1 (the schema's `batch_size`).
        PolicySection::Batch { size, share: s } => SplitPolicy::Batch { size, share: share(s, "share")? },
        PolicySection::Alternate {} => SplitPolicy::Alternate,
        PolicySection::Ratio { share: s } => SplitPolicy::Ratio { share: share(Some(s), "share")? },
        PolicySection::Duplicate { off } => {
            let mut last_until = None;
            for (i, &[from, until]) in off.iter().flatten().enumerate() {
                if from >= until {
                    return Err(err(&ppath("off"), format!("interval {} runs from {from} to {until}: it must end after it starts", i + 1)));
                }
                if last_until.is_some_and(|t| from < t) {
                    return Err(err(&ppath("off"), format!("interval {} starts at {from}, before the previous one ends: give the intervals in order, without overlap", i + 1)));
                }
                last_until = Some(until);
                duplication_switches.push((from, false));
                duplication_switches.push((until, true));
            }
            SplitPolicy::Duplicate
        }
        PolicySection::Adaptive { signal, feedback: period } => {
            let period = period.unwrap_or(DEFAULT_FEEDBACK);
            if period == Dur::ZERO {
                return Err(err(&ppath("feedback"), "the feedback period must be positive, e.g. \"10 ms\""));
            }
            feedback = Some(period);
            SplitPolicy::Adaptive { signal: signal.unwrap_or(AdaptiveSignal::Delay) }
        }
        PolicySection::Threshold { primary, threshold } => {
            let primary = match primary {
                None => 0,
                Some(leg) => sp.legs.iter().position(|l| *l == leg).ok_or_else(|| err(&ppath("primary"), format!("the primary path must be one of the legs (\"{}\" or \"{}\"), got \"{leg}\"", sp.legs[0], sp.legs[1])))?,
            };
            let threshold = match threshold {
                None => u64::MAX,
                Some(Bytes(0)) => return Err(err(&ppath("threshold"), "ul-DataSplitThreshold must be positive (TS 38.331 allows 0 B only as b0, which this model leaves out; leave threshold out for infinity)")),
                Some(Bytes(b)) => b,
            };
            SplitPolicy::Threshold { primary, threshold }
        }
    };
    let x2u_delay = sp.x2u_delay.unwrap_or(Dur::ZERO);
    if x2u_delay > Dur::ZERO && !ends.cell_index.contains_key(sp.legs[1].as_str()) {
        return Err(err(&path("x2u_delay"), format!("is the delay between the master node and the secondary cell's node: the second leg must be a cell, but \"{}\" is a link (a link leg's delay is its own `delay`)", sp.legs[1])));
    }
    let retransmit_lost = sp.retransmit_lost.unwrap_or(false);
    if retransmit_lost && policy == SplitPolicy::Duplicate {
        return Err(err(&path("retransmit_lost"), "with duplication every PDU is already on both legs; retransmit_lost needs another policy"));
    }
    match (sp.ddds_period, feedback) {
        (Some(_), _) if !retransmit_lost => {
            return Err(err(&path("ddds_period"), "the report period matters only with retransmit_lost = true (the adaptive policy takes its own `feedback`)"));
        }
        (Some(p), Some(f)) if p != f => {
            return Err(err(&path("ddds_period"), format!("one report period serves both: ddds_period is {p} but policy.feedback is {f}")));
        }
        (Some(p), _) if p == Dur::ZERO => {
            return Err(err(&path("ddds_period"), "the report period must be positive, e.g. \"10 ms\""));
        }
        (period, None) if retransmit_lost => feedback = Some(period.unwrap_or(DEFAULT_FEEDBACK)),
        _ => {}
    }
    let l4s_reorder_threshold = sp.l4s_reorder_threshold;
    if let Some(t) = l4s_reorder_threshold {
        if t == Dur::ZERO || t > Dur::from_secs(10) {
            return Err(err(&path("l4s_reorder_threshold"), format!("{t} is not allowed: the longest reordering wait an ECT(1) packet may have without a mark, above 0 and at most 10 s, e.g. \"5 ms\"")));
        }
        if !sp.reordering.unwrap_or(true) {
            return Err(err(&path("l4s_reorder_threshold"), "marks packets that waited in reordering, and reordering = false holds none"));
        }
    }
    Ok(Split {
        name: sp.name.clone(),
        tx: TransmitterConfig { rat, sn, policy },
        rx: ReceiverConfig { sn, t_reordering, reordering: sp.reordering.unwrap_or(true) },
        processing_delay: sp.processing_delay.unwrap_or(Dur::ZERO),
        packet_time: sp.proxy_packet_time.unwrap_or(Dur::ZERO),
        feedback,
        retransmit_lost,
        duplication_switches,
        tx_leg_delay: [Dur::ZERO, x2u_delay],
        rx_leg_delay: [Dur::ZERO; 2],
        l4s_reorder_threshold,
    })
}
