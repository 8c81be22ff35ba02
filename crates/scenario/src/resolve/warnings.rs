//! Settings that are valid but often not what was meant. Each gives one line naming the
//! field, what it does and how to say otherwise; the run itself is unchanged.
//!
//! * A rate trace given for a whole link also throttles its reverse direction: with a
//!   downlink trace, the ACKs and requests going up follow the downlink's capacity too,
//!   unless `[link.reverse]` gives that direction a rate of its own.
//! * A queue discipline that marks ECN (FQ-CoDel by default; CoDel and PIE with `ecn = true`)
//!   on a link direction whose TCP and QUIC data all comes from flows without ECN: it drops
//!   their packets where it would mark them, and its results differ from ECN's (the field
//!   report: −6.8 % goodput and 303 ms PDCP reordering peaks on a DC leg). Only the data
//!   direction counts: pure ACKs are not ECN-capable whatever the flow says. On a split's leg
//!   the line adds that each drop is also a gap waited out for t_reordering: over
//!   `split_queues.toml` with FQ-CoDel, ECN's gain for TCP (30.8 -> 34.9 Mbit/s) was that
//!   wait, gone with a t_reordering of 30 ms (35.0 without ECN).
//! * A flow with `cc = "prague"` whose data crosses no queue that marks ECN: Prague's
//!   scalable response never runs, the flow sees only drops and halves for each as Reno
//!   does, so it is no L4S flow there.

use super::flows::Flow;
use multiconn_cc::CcKind;
use super::links::LinkDirection;
use crate::schema::{LinkSection, PolicySection, RateSpec, RateTrace, ScenarioFile};
use multiconn_net::{Hop, Leg};

/// The warnings of a scenario file, in file order.
pub(super) fn warnings(file: &ScenarioFile) -> Vec<String> {
    let mut w: Vec<String> = file.link.iter().filter_map(reverse_follows_a_trace).collect();
    for sp in &file.split {
        for (field, policy) in [("policy", &sp.policy), ("reverse_policy", &sp.reverse_policy)] {
            if let Some(message) = policy.as_ref().and_then(|p| batch_rounds_share_away(&sp.name, field, p, &sp.legs)) {
                w.push(message);
            }
        }
    }
    w
}

/// A batch policy whose share rounds to none or all of a batch (the transmitting entity puts
/// round(size · share) PDUs of each batch on the first leg): one leg then carries nothing,
/// whatever the share says.
fn batch_rounds_share_away(split: &str, field: &str, policy: &PolicySection, legs: &[String; 2]) -> Option<String> {
    let PolicySection::Batch { size, share } = policy else { return None };
    let share = share.map_or(0.5, |s| s.0);
    if !(share > 0.0 && share < 1.0) {
        return None;
    }
    let first = (f64::from(*size) * share).round() as u32;
    let idle = match first {
        0 => &legs[0],
        n if n == *size => &legs[1],
        _ => return None,
    };
    Some(format!(
        "split.{split}.{field}: batches of {size} with share {share} put round({size} × {share}) = {first} PDUs of each on \"{}\", so \"{idle}\" carries none; a larger size keeps the share (or model = \"ratio\", which spreads it per packet)",
        legs[0]
    ))
}

/// The warnings that need the resolved routes, in link-direction order: a marking queue
/// discipline that no ECN-capable flow's data crosses.
pub(super) fn route_warnings(links: &[LinkDirection], flows: &[Flow]) -> Vec<String> {
    let mut w: Vec<String> = links.iter().enumerate().filter_map(|(d, l)| marks_without_ecn(d, l, flows)).collect();
    w.extend(flows.iter().filter_map(|f| prague_without_marking(links, f)));
    w
}

/// A Prague flow none of whose data's link directions marks ECN.
fn prague_without_marking(links: &[LinkDirection], f: &Flow) -> Option<String> {
    if f.connection.as_ref()?.cc != CcKind::Prague {
        return None;
    }
    let crossed: Vec<usize> = (0..links.len())
        .filter(|&d| crosses(&f.route, d) || f.extra_paths.iter().any(|p| crosses(&p.route, d)))
        .collect();
    if crossed.iter().any(|&d| links[d].aqm_ecn) {
        return None;
    }
    let queues: Vec<String> = crossed.iter().map(|&d| format!("link.{} {}: aqm = {}", links[d].name, links[d].direction.name(), links[d].aqm.unwrap_or("none"))).collect();
    Some(format!(
        "flow.{}.cc = \"prague\", but no queue on its path marks ECN ({}); it will only see losses and halve for each as Reno does; \
         give the bottleneck aqm = \"dualpi2\" (L4S) to see its scalable response",
        f.name,
        if queues.is_empty() { "no links".to_string() } else { queues.join(", ") }
    ))
}

/// Whether a data route crosses link direction `d`, alone or as a split's leg.
fn crosses(route: &[Hop], d: usize) -> bool {
    route.iter().any(|h| match *h {
        Hop::Link(l) => l == d,
        Hop::Split { legs, .. } => legs.contains(&Leg::Link(d)),
        Hop::Port { .. } => false,
    })
}

/// Link direction `d` marks ECN, TCP or QUIC data crosses it, and none of those flows is
/// ECN-capable.
fn marks_without_ecn(d: usize, l: &LinkDirection, flows: &[Flow]) -> Option<String> {
    if !l.aqm_ecn {
        return None;
    }
    let crossing: Vec<&Flow> = flows
        .iter()
        .filter(|f| f.connection.is_some())
        .filter(|f| crosses(&f.route, d) || f.extra_paths.iter().any(|p| crosses(&p.route, d)))
        .collect();
    if crossing.is_empty() || crossing.iter().any(|f| f.connection.as_ref().is_some_and(|c| c.profile.ecn)) {
        return None;
    }
    let aqm = l.aqm.unwrap_or("aqm");
    let names: Vec<&str> = crossing.iter().map(|f| f.name.as_str()).collect();
    let leg = crossing.iter().any(|f| std::iter::once(&f.route).chain(f.extra_paths.iter().map(|p| &p.route)).any(|r| is_split_leg(r, d)));
    let behind_split = if leg {
        "; on a split's leg each such drop is also a gap the receiving PDCP entity waits out for t_reordering, so a comparison with ECN measures that wait as well"
    } else {
        ""
    };
    // DualPI2 always marks ECN-capable packets (as Linux's: it has no ecn switch).
    let or_say_it_drops = if aqm == "dualpi2" { String::new() } else { format!(", or aqm = {{ model = \"{aqm}\", ecn = false }} to say it drops") };
    Some(format!(
        "link.{} ({}, {} -> {}): {aqm} marks ECN, but no flow crossing it is ECN-capable ({}), so it drops their packets where it would mark them{behind_split}; \
         set ecn = true on the flow (flow.{}.ecn = true) to compare with marking{or_say_it_drops}",
        l.name,
        l.direction.name(),
        l.from,
        l.to,
        names.join(", "),
        names[0]
    ))
}

/// Whether link direction `d` is a split's leg on `route`.
fn is_split_leg(route: &[Hop], d: usize) -> bool {
    route.iter().any(|h| matches!(h, Hop::Split { legs, .. } if legs.contains(&Leg::Link(d))))
}

fn trace_file(trace: &RateTrace) -> &str {
    match trace {
        RateTrace::Mahimahi { file, .. } | RateTrace::Ucc { file, .. } | RateTrace::Csv { file, .. } => file,
    }
}

/// A link-level rate trace that its reverse direction inherits.
fn reverse_follows_a_trace(l: &LinkSection) -> Option<String> {
    let Some(RateSpec::Trace(trace)) = &l.rate else { return None };
    if l.reverse.as_ref().is_some_and(|r| r.rate.is_some()) {
        return None;
    }
    Some(format!(
        "link.{}.rate: the trace \"{}\" throttles both directions, the reverse one ({} -> {}: ACKs, requests) too; \
         give [link.reverse] a rate of its own (e.g. rate = \"100 Mbit/s\"), or set it to the same trace to keep this and silence the warning",
        l.name,
        trace_file(trace),
        l.between[1],
        l.between[0]
    ))
}
