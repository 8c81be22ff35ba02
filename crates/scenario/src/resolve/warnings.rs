//! Settings that are valid but often not what was meant. Each gives one line naming the
//! field, what it does and how to say otherwise; the run itself is unchanged.
//!
//! * A rate trace given for a whole link also throttles its reverse direction: with a
//!   downlink trace, the ACKs and requests going up follow the downlink's capacity too,
//!   unless `[link.reverse]` gives that direction a rate of its own.

use crate::schema::{LinkSection, RateSpec, RateTrace, ScenarioFile};

/// The warnings of a scenario file, in file order.
pub(super) fn warnings(file: &ScenarioFile) -> Vec<String> {
    file.link.iter().filter_map(reverse_follows_a_trace).collect()
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
