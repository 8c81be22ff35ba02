//! A rough count of the events a run will fire, from its scenario alone, so that a run of
//! hours can be told apart before it starts (`Simulation.event_estimate`).
//!
//! Each packet costs about one event where its source sends it and one at each link
//! direction it crosses (a CBR source at 1 Gpacket/s through one link: 2 × 10^9 events per
//! second of virtual time, as measured). The packets are counted from the rates:
//!
//! * a flow's source sends, over its active time (start to stop or the end of the run), a
//!   CBR flow its `rate`, a UDP bulk flow its first link's capacity, any other flow the
//!   least capacity along its route (more than a transport can carry), in packets of its
//!   `packet_size`;
//! * each link direction of the route carries what the hop before let through, at most its
//!   own capacity in that time, in the same packets.
//!
//! Capacities are the links' rate models over the time (rate traces included); a hop without
//! a rate limit passes everything, a split or a cell is not counted (nor beyond it). ACKs and
//! retransmissions are left out, and a flow limited by its `size` is counted at full rate.
//! It is an estimate of the order of magnitude, meant for runs of 10^9 events and more;
//! a run without a time limit gets none.

use multiconn_core::Time;
use multiconn_scenario::resolve::{Hop, Resolved};
use multiconn_scenario::schema::{AppKind, Transport};

/// One part of the estimate: events and who fires them.
pub struct Part {
    /// Its events.
    pub events: f64,
    /// `flow "name"` or `link "name" (direction)`.
    pub who: String,
    /// How it was counted, e.g. `320 Gbit/s in 40 B packets over 20 s`.
    pub why: String,
}

fn rate_text(bps: f64) -> String {
    let (value, unit) = if bps >= 1e9 {
        (bps / 1e9, "Gbit/s")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbit/s")
    } else {
        (bps / 1e3, "kbit/s")
    };
    format!("{} {unit}", (value * 100.0).round() / 100.0)
}

/// The parts of the estimate, largest first; empty for a run without a time limit.
pub fn event_estimate(resolved: &Resolved) -> Vec<Part> {
    let Some(duration) = resolved.duration else { return Vec::new() };
    let end = Time(duration.0);
    let mut links = vec![0.0f64; resolved.links.len()];
    let mut link_bits = vec![0.0f64; resolved.links.len()];
    let mut link_packet = vec![u32::MAX; resolved.links.len()];
    let mut parts = Vec::new();
    for flow in &resolved.flows {
        let start = flow.start.min(end);
        let stop = flow.stop.map_or(end, |s| s.min(end)).max(start);
        let seconds = (stop.0 - start.0) as f64 / 1e9;
        if seconds <= 0.0 || flow.packet_size == 0 {
            continue;
        }
        let capacity = |hop: &Hop| match hop {
            Hop::Link(i) => Some(resolved.links[*i].model.capacity_bits(start, stop)).filter(|c| *c > 0.0),
            _ => None,
        };
        let offered = match (flow.app, flow.cbr_rate) {
            (AppKind::Cbr, Some(rate)) => Some(rate.bps() as f64 * seconds),
            (AppKind::Bulk, _) if flow.transport == Transport::Udp => flow.route.first().and_then(capacity),
            _ => flow.route.iter().filter_map(capacity).reduce(f64::min),
        };
        let Some(mut bits) = offered else { continue };
        let packet_bits = f64::from(flow.packet_size) * 8.0;
        parts.push(Part {
            events: bits / packet_bits,
            who: format!("flow \"{}\"", flow.name),
            why: format!("{} in {} B packets over {} s", rate_text(bits / seconds), flow.packet_size, seconds),
        });
        for hop in &flow.route {
            let Hop::Link(i) = hop else { break };
            if let Some(c) = capacity(hop) {
                bits = bits.min(c);
            }
            links[*i] += bits / packet_bits;
            link_bits[*i] += bits / seconds;
            link_packet[*i] = link_packet[*i].min(flow.packet_size);
        }
    }
    let seconds = duration.0 as f64 / 1e9;
    for (i, events) in links.into_iter().enumerate() {
        if events > 0.0 {
            let link = &resolved.links[i];
            parts.push(Part {
                events,
                who: format!("link \"{}\" ({})", link.name, link.direction.name()),
                why: format!("{} in packets of {} B and more over {} s", rate_text(link_bits[i]), link_packet[i], seconds),
            });
        }
    }
    parts.sort_by(|a, b| b.events.total_cmp(&a.events));
    parts
}
