//! Max-min fair shares from the topology, for the summary's normalised fairness.
//!
//! Each flow's share of the network is computed by water-filling (progressive filling) over
//! the capacities of the link directions its data crosses: every flow's rate rises at the
//! same pace; a link direction whose capacity is used up freezes the flows crossing it, and a
//! flow with a rate of its own (a cbr flow) stops at that rate. The result is the max-min
//! fair allocation (Bertsekas and Gallager, *Data Networks*, §6.5.2).
//!
//! A flow's data direction alone counts (its ACKs and requests are left out). How a flow uses
//! the links it crosses:
//!
//! * a link direction carries all of the flow's rate;
//! * a split whose policy fixes the legs' shares (batch, ratio, alternate) carries that share
//!   of the rate on each leg: a batch policy `round(size · share)` of every `size` PDUs on the
//!   first leg, ratio `share`, alternate one half; duplicate carries all of it on both legs
//!   (its `off` windows are left out);
//! * an adaptive split and the paths of a multipath flow move data where there is room: each
//!   leg or path is then a sub-flow of its own in the filling, and the flow's share is the sum
//!   of its sub-flows'. This is an approximation: it treats each sub-flow as a separate flow,
//!   so a multipath flow whose paths cross one bottleneck gets one share there per path.
//!
//! Capacities are each link direction's mean rate (a rate trace's mean over the trace; down
//! windows are left out). An element without a rate limit, and an LTE cell (whose capacity
//! depends on its UEs' channels), limits nothing; a flow that only
//! crosses such elements has no finite share (`None`).

use crate::resolve::{Flow, Hop, LinkDirection, Split};
use multiconn_net::Leg;
use multiconn_pdcp::SplitPolicy;

/// How one flow loads the network: its sub-flows, each a list of (link direction, the
/// fraction of the sub-flow's rate it carries), and the rate it asks for at most (bit/s).
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    /// The parts of the flow whose rates rise together, each with the link directions it
    /// loads and by how much.
    pub subflows: Vec<Vec<(usize, f64)>>,
    /// A cap on the flow's total rate (bit/s); `None`: as much as the network gives.
    pub demand: Option<f64>,
}

/// How `flow` loads the link directions; `split` gives a split's configuration by index.
pub fn usage<'a>(flow: &Flow, split_config: impl Fn(usize) -> &'a Split) -> Usage {
    let mut subflows = Vec::new();
    for p in 0..flow.path_count() {
        // Each variant: the sub-flow's loads so far.
        let mut variants: Vec<Vec<(usize, f64)>> = vec![Vec::new()];
        for hop in flow.hops(p as u8, 0) {
            match *hop {
                Hop::Link(d) => variants.iter_mut().for_each(|v| v.push((d, 1.0))),
                // A cell's capacity depends on its UEs' channels: it limits nothing here yet.
                Hop::Port { .. } => {}
                Hop::Split { split, legs } => match leg_weights(&split_config(split).tx.policy) {
                    Some(w) => {
                        for v in &mut variants {
                            // A cell leg limits nothing here yet, as a cell hop does not.
                            v.extend(legs.iter().zip(w).filter(|(_, w)| *w > 0.0).filter_map(|(&leg, w)| match leg {
                                Leg::Link(l) => Some((l, w)),
                                Leg::Port { .. } => None,
                            }));
                        }
                    }
                    None => {
                        variants = variants
                            .into_iter()
                            .flat_map(|v| {
                                legs.iter().map(move |&leg| {
                                    let mut v = v.clone();
                                    if let Leg::Link(l) = leg {
                                        v.push((l, 1.0));
                                    }
                                    v
                                })
                            })
                            .collect();
                    }
                },
            }
        }
        subflows.extend(variants);
    }
    let demand = flow.cbr_rate.map(|r| r.bps() as f64);
    Usage { subflows, demand }
}

/// The fraction of a split's traffic on each leg when its policy fixes it; `None` when the
/// policy moves traffic by the legs' state (adaptive, threshold).
fn leg_weights(policy: &SplitPolicy) -> Option<[f64; 2]> {
    match *policy {
        SplitPolicy::Batch { size, share } => {
            let size = size.max(1);
            let first = (f64::from(size) * share).round().clamp(0.0, f64::from(size));
            let w = first / f64::from(size);
            Some([w, 1.0 - w])
        }
        SplitPolicy::Ratio { share } => Some([share, 1.0 - share]),
        SplitPolicy::Alternate => Some([0.5, 0.5]),
        SplitPolicy::Duplicate => Some([1.0, 1.0]),
        SplitPolicy::Adaptive { .. } | SplitPolicy::Threshold { .. } => None,
    }
}

/// The capacity of each link direction (bit/s): its mean rate, infinite without a limit.
pub fn capacities(links: &[LinkDirection]) -> Vec<f64> {
    links
        .iter()
        .map(|l| match l.model.mean_bps() {
            bps if bps > 0.0 => bps,
            _ => f64::INFINITY,
        })
        .collect()
}

/// Each flow's max-min fair share (bit/s) of link directions with `capacity` (bit/s);
/// `None` for a flow no capacity or demand bounds.
pub fn max_min_shares(capacity: &[f64], flows: &[Usage]) -> Vec<Option<f64>> {
    // Sub-flows: (flow, loads), their rates, and which still rise.
    let subs: Vec<(usize, &[(usize, f64)])> =
        flows.iter().enumerate().flat_map(|(f, u)| u.subflows.iter().map(move |s| (f, s.as_slice()))).collect();
    let mut rate = vec![0.0; subs.len()];
    let mut rising = vec![true; subs.len()];
    let mut left: Vec<f64> = capacity.to_vec();
    let mut demand_left: Vec<Option<f64>> = flows.iter().map(|u| u.demand).collect();
    // A sub-flow that loads no limited link and whose flow has no demand rises for ever.
    let mut unbounded = vec![false; flows.len()];
    for (i, (f, loads)) in subs.iter().enumerate() {
        if demand_left[*f].is_none() && loads.iter().all(|&(l, w)| w <= 0.0 || !capacity[l].is_finite()) {
            unbounded[*f] = true;
            rising[i] = false;
        }
    }
    const EPS: f64 = 1e-9;
    // Each round freezes at least one sub-flow (the one whose limit sets the step).
    for _ in 0..=subs.len() {
        if !rising.iter().any(|&r| r) {
            break;
        }
        // The load each link direction gains per unit of rise, and each flow's rising parts.
        let mut pace = vec![0.0; capacity.len()];
        let mut parts = vec![0usize; flows.len()];
        for (i, (f, loads)) in subs.iter().enumerate() {
            if rising[i] {
                parts[*f] += 1;
                for &(l, w) in *loads {
                    pace[l] += w;
                }
            }
        }
        let by_link = (0..capacity.len()).filter(|&l| pace[l] > 0.0 && left[l].is_finite()).map(|l| left[l].max(0.0) / pace[l]);
        let by_demand = (0..flows.len()).filter(|&f| parts[f] > 0).filter_map(|f| demand_left[f].map(|d| d.max(0.0) / parts[f] as f64));
        let step = by_link.chain(by_demand).fold(f64::INFINITY, f64::min);
        if !step.is_finite() {
            break; // cannot happen: every rising sub-flow has a limit
        }
        for (i, (f, loads)) in subs.iter().enumerate() {
            if rising[i] {
                rate[i] += step;
                for &(l, w) in *loads {
                    left[l] -= w * step;
                }
                if let Some(d) = &mut demand_left[*f] {
                    *d -= step;
                }
            }
        }
        for (i, (f, loads)) in subs.iter().enumerate() {
            let full = loads.iter().any(|&(l, w)| w > 0.0 && left[l] <= EPS * capacity[l].max(1.0));
            let met = demand_left[*f].is_some_and(|d| d <= EPS * flows[*f].demand.unwrap_or(1.0).max(1.0));
            if full || met {
                rising[i] = false;
            }
        }
    }
    let mut shares = vec![0.0; flows.len()];
    for (i, (f, _)) in subs.iter().enumerate() {
        shares[*f] += rate[i];
    }
    shares.into_iter().zip(unbounded).map(|(s, u)| (!u).then_some(s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(links: &[usize]) -> Usage {
        Usage { subflows: vec![links.iter().map(|&l| (l, 1.0)).collect()], demand: None }
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-6)
    }

    #[test]
    fn two_flows_on_one_link_share_it_equally() {
        let s = max_min_shares(&[10e6], &[single(&[0]), single(&[0])]);
        assert!(close(s[0], 5e6) && close(s[1], 5e6), "{s:?}");
    }

    #[test]
    fn a_flow_held_by_a_narrower_link_leaves_the_rest_to_the_other() {
        // Link 0: 10 Mbit/s, crossed by both; link 1: 4 Mbit/s, by the first alone.
        let s = max_min_shares(&[10e6, 4e6], &[single(&[0, 1]), single(&[0])]);
        assert!(close(s[0], 4e6) && close(s[1], 6e6), "{s:?}");
    }

    #[test]
    fn a_fixed_split_loads_each_leg_by_its_share() {
        // Legs 30 and 10 Mbit/s; one flow half on each, one on the first leg alone: the
        // first leg fills at 20 each (10 + 20 = 30), as does the second (10).
        let split = Usage { subflows: vec![vec![(0, 0.5), (1, 0.5)]], demand: None };
        let s = max_min_shares(&[30e6, 10e6], &[split, single(&[0])]);
        assert!(close(s[0], 20e6) && close(s[1], 20e6), "{s:?}");
    }

    #[test]
    fn sub_flows_add_up_and_demands_cap() {
        // A two-path flow (5 and 10 Mbit/s links) sharing the 10 with a single-path flow:
        // the 5 fills at 5 (first path), the 10 splits 5 / 5: the first flow 10, the other 5.
        let mp = Usage { subflows: vec![vec![(0, 1.0)], vec![(1, 1.0)]], demand: None };
        let s = max_min_shares(&[5e6, 10e6], &[mp, single(&[1])]);
        assert!(close(s[0], 10e6) && close(s[1], 5e6), "{s:?}");
        // A 2 Mbit/s cbr flow leaves 8 to the other.
        let cbr = Usage { subflows: vec![vec![(0, 1.0)]], demand: Some(2e6) };
        let s = max_min_shares(&[10e6], &[cbr, single(&[0])]);
        assert!(close(s[0], 2e6) && close(s[1], 8e6), "{s:?}");
    }

    #[test]
    fn no_limit_no_share() {
        let s = max_min_shares(&[f64::INFINITY, 10e6], &[single(&[0]), single(&[1])]);
        assert_eq!(s[0], None);
        assert!(close(s[1], 10e6));
    }
}
