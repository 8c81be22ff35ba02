//! What a run reports: the summary (JSON) and the time-series table (columns) when it is
//! finished, and the message table (columns) at any time.
//!
//! Flows count payload bytes (goodput); links count bytes on the wire. A flow's goodput is its
//! delivered payload over its active time: from its start to the moment it was done (source
//! finished and nothing left in the network), or to the end of the run. A link's utilization
//! is the bits it delivered over the bits its rate model could have carried in the run.
//!
//! Fairness: Jain's index of the covered flows' goodputs (`[fairness] flows`, default every
//! flow that runs), and beside it each flow's goodput over its max-min fair share of the
//! topology ([`crate::fairness`]) with Jain's index and the minimum of those normalised values.

use crate::fairness;
use crate::messages::MessageTable;
use crate::resolve::{Cell, Hop, LinkDirection};
use multiconn_net::Leg;
use crate::sim::{FlowState, PathTraffic, World};
use crate::format::{named_columns, tidy, Column, ColumnType, DictBuilder, Number, Numbers};
use multiconn_core::{DropCause, Dur, FlowId, LinkId, Time};
use multiconn_link::rate::RateServer;
use multiconn_metrics::{jain_index, BinRow, BinnedRecorder, Counters, Finished, PendingRows};
use multiconn_net::Network;
use multiconn_transport::{PathAction, PathStats, Role};
use serde_json::{json, Map, Value};

/// A link direction's `aqm` block (the simulator's and the emulator's): its discipline, drops
/// by kind and ECN marks.
pub fn aqm_json(discipline: &str, stats: &multiconn_link::aqm::AqmStats) -> Value {
    let mut block = json!({
        "discipline": discipline,
        "tail_drops": stats.tail_drops,
        "early_drops": stats.early_drops,
        "overflow_drops": stats.overflow_drops,
        "ecn_marks": stats.marks,
    });
    // DualPI2: the early drops and the marks by queue and by rule.
    if let Some(c) = &stats.dualpi2 {
        block["dualpi2"] = json!({
            "classic_drops": c.classic_drops,
            "classic_marks": c.classic_marks,
            "l4s_drops": c.l4s_drops,
            "coupled_marks": c.coupled_marks,
            "native_marks": c.native_marks,
            "l4s_sojourn": sojourn_json(&c.l4s_sojourn),
            "classic_sojourn": sojourn_json(&c.classic_sojourn),
        });
    }
    block
}

/// A DualPI2 queue's sojourn times: packets forwarded, mean, p99 and max in milliseconds.
fn sojourn_json(s: &multiconn_link::aqm::dualpi2::SojournSummary) -> Value {
    json!({
        "packets": s.packets,
        "mean_ms": tidy(s.mean.as_millis_f64()),
        "p99_ms": tidy(s.p99.as_millis_f64()),
        "max_ms": tidy(s.max.as_millis_f64()),
    })
}

/// Drops by cause, as the summaries write them (`{"queue": n, ...}`; the emulator's too).
pub fn drops_json(c: &Counters) -> Value {
    drops_json_by(|cause| c.drops_by(cause))
}

fn drops_json_by(count: impl Fn(DropCause) -> u64) -> Value {
    let mut m = Map::new();
    for cause in DropCause::ALL {
        m.insert(cause.name().into(), json!(count(cause)));
    }
    Value::Object(m)
}

/// The link directions' block of a run's summary, simulated or emulated: per direction what
/// it delivered, its capacity over the run (its rate model's bits from 0 to `end`) and how
/// much of it was used, its mean queue, its drops by cause and, where it has one, its queue
/// discipline's counts.
pub fn links_json(links: &[LinkDirection], recorder: &BinnedRecorder, net: &Network, end: Time) -> Vec<Value> {
    links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let total = recorder.link_total(LinkId(i as u32));
            let capacity_bits = l.model.capacity_bits(Time::ZERO, end);
            let utilization = (capacity_bits > 0.0).then(|| tidy(total.bytes_delivered as f64 * 8.0 / capacity_bits));
            let secs = end.as_secs_f64();
            let mean_queue = if end.0 > 0 { total.queue_packet_ns as f64 / end.0 as f64 } else { 0.0 };
            let mut link = json!({
                "name": l.name,
                "direction": l.direction.name(),
                "from": l.from,
                "to": l.to,
                "bytes_delivered": total.bytes_delivered,
                "packets_delivered": total.packets_delivered,
                "capacity_mbps": if secs > 0.0 { tidy(capacity_bits / secs / 1e6) } else { 0.0 },
                "utilization": utilization,
                "mean_queue_packets": tidy(mean_queue),
                "drops": drops_json(total),
            });
            // Only links with a queue discipline carry the block, so drop-tail runs read as before.
            if let (Some(stats), Some(aqm)) = (net.link(i).aqm_stats(), l.aqm) {
                link["aqm"] = aqm_json(aqm, &stats);
            }
            link
        })
        .collect()
}

/// The run's summary; `covered` are the flows the fairness indices cover (indices of the
/// run's flows), `disabled` the names of the flows that did not run.
pub fn summary(world: &World, scenario: &str, seed: u64, end: Time, covered: &[usize], disabled: &[String]) -> Value {
    let mut goodputs = Vec::new();
    let capacity = fairness::capacities(&world.links);
    let usages: Vec<_> = world.hosts.flows.iter().map(|f| fairness::usage(&f.spec, |s| world.net.split_config(s))).collect();
    let shares = fairness::max_min_shares(&capacity, &usages);
    let mut normalised = Vec::new();
    let flows: Vec<Value> = world
        .hosts
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let total = world.hosts.recorder.flow_total(FlowId(i as u32));
            let active_until = f.done_at.unwrap_or(end);
            let active = active_until.since(f.spec.start).as_secs_f64();
            let goodput = if active > 0.0 { total.bytes_delivered as f64 * 8.0 / active / 1e6 } else { 0.0 };
            goodputs.push(goodput);
            let share = shares[i];
            let norm = share.filter(|s| *s > 0.0).map(|s| goodput * 1e6 / s);
            normalised.push(norm);
            let since_start = |t: Time| tidy(t.since(f.spec.start).as_secs_f64());
            let completion = match (f.udp(), f.spec.size) {
                (None, _) => f.done_at.map(since_start),
                (Some(udp), Some(size)) if udp.sink.payload >= size => udp.sink.last_arrival.map(since_start),
                _ => None,
            };
            let steady = world.measure_from.map(|from| {
                let since = from.max(f.spec.start);
                let secs = active_until.0.saturating_sub(since.0) as f64 / 1e9;
                let first_bin = (from.0 / world.hosts.recorder.bin_width().0) as usize;
                let bytes = world.hosts.recorder.flow_bytes_from_bin(FlowId(i as u32), first_bin);
                (secs > 0.0).then(|| tidy(bytes as f64 * 8.0 / secs / 1e6))
            });
            let mut flow = json!({
                "name": f.spec.name,
                "transport": f.spec.transport.name(),
                "app": f.spec.app.name(),
                "sender": f.spec.from,
                "receiver": f.spec.to,
                "bytes_sent": total.bytes_sent,
                "bytes_delivered": total.bytes_delivered,
                "packets_delivered": total.packets_delivered,
                "goodput_mbps": tidy(goodput),
                "fair_share_mbps": share.map(|s| tidy(s / 1e6)),
                "normalised": norm.map(tidy),
                "completion_s": completion,
                "drops": drops_json(total),
                "drops_data": drops_json_by(|cause| total.data_drops_by(cause)),
                "drops_ack": drops_json_by(|cause| total.reverse_drops_by(cause)),
            });
            let m = flow.as_object_mut().expect("an object");
            if let Some(steady) = steady {
                m.insert("steady_goodput_mbps".into(), json!(steady));
            }
            match (f.conn(), &f.spec.connection) {
                (Some(conn), Some(spec)) => {
                    let t = conn.last_sample;
                    m.insert("endpoints".into(), json!({"client": f.spec.node_of(Role::Client), "server": f.spec.node_of(Role::Server)}));
                    m.insert("cc".into(), json!(spec.cc.name()));
                    if let Some(kind) = spec.multipath.as_ref().and_then(|mp| mp.coupled) {
                        m.insert("coupled".into(), json!(kind.name()));
                    }
                    match spec.stack {
                        // A real library is its own profile: its name, and the exact crate.
                        Some(library) => {
                            m.insert("profile".into(), json!(library.name()));
                            m.insert("stack".into(), json!(library.version()));
                        }
                        None => {
                            m.insert("profile".into(), json!(spec.profile.name));
                        }
                    }
                    m.insert("handshake_s".into(), json!(conn.can_send_at.map(since_start)));
                    m.insert("first_byte_s".into(), json!(conn.first_byte_at.map(since_start)));
                    m.insert("retransmissions".into(), json!(t.retransmissions));
                    m.insert("spurious_retransmissions".into(), json!(t.spurious_retransmissions));
                    m.insert("lost_packets".into(), json!(t.lost));
                    m.insert("final_cwnd_bytes".into(), json!(t.cwnd));
                    m.insert("final_srtt_ms".into(), json!(tidy(t.srtt.as_millis_f64())));
                    let responses: Vec<Value> = conn.responses.iter().map(|(i, at)| json!({"index": i, "completion_s": since_start(*at)})).collect();
                    if !responses.is_empty() {
                        m.insert("responses".into(), Value::Array(responses));
                    }
                    // Only flows with ECN on carry the block, so other runs read as before.
                    if let (Some(server), Some(client)) = (conn.server.ecn_stats(), conn.client.ecn_stats()) {
                        m.insert("ecn".into(), json!({"server": ecn_json(f.spec.transport.name(), &server), "client": ecn_json(f.spec.transport.name(), &client)}));
                    }
                    if let Some(sock) = &conn.socket {
                        m.insert(
                            "udp_socket".into(),
                            json!({"capacity_bytes": sock.capacity(), "peak_bytes": sock.peak_charged(), "drops": sock.drops()}),
                        );
                    }
                }
                _ => {
                    let reordered = f.udp().map_or(0, |udp| udp.sink.reordered);
                    m.insert("reordered_packets".into(), json!(reordered));
                    // Only a source that sets a codepoint carries the block, so other runs read as before.
                    if let Some(udp) = f.udp().filter(|_| f.spec.ecn != multiconn_core::Ecn::NotEct) {
                        let codepoint = if f.spec.ecn == multiconn_core::Ecn::Ect1 { "ect1" } else { "ect0" };
                        m.insert("ecn".into(), json!({"codepoint": codepoint, "ce_packets_received": udp.sink.ce}));
                    }
                }
            }
            if let Some(log) = &f.messages {
                m.insert("messages".into(), crate::messages::summary(log));
                // Seed 004's bandwidth efficiency: application bytes delivered over the bytes
                // the sender put on the wire (headers, retransmissions and copies included).
                let efficiency = (total.bytes_sent > 0).then(|| tidy(total.bytes_delivered as f64 / total.bytes_sent as f64));
                m.insert("bandwidth_efficiency".into(), json!(efficiency));
                // The same for what was useful: only messages that arrived within their
                // deadline count (late ones cost bytes and bring nothing to deadline traffic).
                let timely = (total.bytes_sent > 0).then(|| tidy(log.bytes_in_time() as f64 / total.bytes_sent as f64));
                m.insert("timely_efficiency".into(), json!(timely));
            }
            if let Some(state) = &f.tunnel {
                m.insert("tunnel".into(), tunnel_json(world, state));
            }
            if let Some(place) = &f.spec.tunnel {
                m.insert("tunnel".into(), json!({"name": place.name, "mode": tunnel_mode_name(place.mode), "quarter_stream_id": place.quarter_stream_id}));
            }
            if f.spec.is_multipath() {
                m.insert("paths".into(), paths_json(world, FlowId(i as u32), f));
                if f.spec.connection.as_ref().is_some_and(|c| c.path_manager.is_some()) {
                    m.insert("path_manager".into(), path_actions_json(&f.path_actions));
                }
            } else {
                if world.net.bearers_of(FlowId(i as u32), 0).iter().any(Option::is_some) {
                    m.insert("pdcp".into(), pdcp_json(world, world.net.bearers_of(FlowId(i as u32), 0)));
                }
                // Only splits with a reverse_policy serve the return direction.
                if world.net.reverse_bearers_of(FlowId(i as u32), 0).iter().any(Option::is_some) {
                    m.insert("pdcp_reverse".into(), pdcp_json(world, world.net.reverse_bearers_of(FlowId(i as u32), 0)));
                }
            }
            flow
        })
        .collect();
    let links = links_json(&world.links, &world.hosts.recorder, &world.net, end);
    let mut summary = json!({
        "multiconn_version": env!("CARGO_PKG_VERSION"),
        "scenario": scenario,
        "seed": seed,
        "sim_time_s": tidy(end.as_secs_f64()),
        "events": world.queue().events_fired(),
        "flows": flows,
        "links": links,
        "jain_fairness": jain_index(&covered.iter().map(|&i| goodputs[i]).collect::<Vec<_>>()).map(tidy),
        "fairness": fairness_json(world, covered, &goodputs, &normalised),
        "disabled_flows": disabled,
    });
    if !world.cells.is_empty() {
        summary["cells"] = cells_json(world);
    }
    if let Some(from) = world.measure_from {
        summary["measure_from_s"] = json!(tidy(from.as_secs_f64()));
    }
    summary
}

/// The fairness of the covered flows: Jain's raw index and over the normalised goodputs.
fn fairness_json(world: &World, covered: &[usize], goodputs: &[f64], normalised: &[Option<f64>]) -> Value {
    let names: Vec<&str> = covered.iter().map(|&i| world.hosts.flows[i].spec.name.as_str()).collect();
    let raw: Vec<f64> = covered.iter().map(|&i| goodputs[i]).collect();
    let norm: Option<Vec<f64>> = covered.iter().map(|&i| normalised[i]).collect();
    json!({
        "flows": names,
        "jain": jain_index(&raw).map(tidy),
        "normalised_jain": norm.as_ref().and_then(|n| jain_index(n)).map(tidy),
        "min_normalised": norm.as_ref().and_then(|n| n.iter().copied().reduce(f64::min)).map(tidy),
    })
}

/// Each cell's UEs: what the MAC and RLC did for them (docs/lte-cell.md).
fn cells_json(world: &World) -> Value {
    let cells: Vec<Value> = world
        .cells
        .iter()
        .enumerate()
        .map(|(c, cell)| {
            if let Some(ran) = world.net.port_element::<multiconn_cell::ran::Ran>(c) {
                return ran_json(cell, ran);
            }
            let hop = world.net.port_element::<multiconn_cell::CellHop>(c).expect("the scenario's cells are the network's multi-port elements");
            let ues: Vec<Value> = cell
                .ues
                .iter()
                .enumerate()
                .map(|(u, node)| {
                    let k = hop.ue_counters(u);
                    let trajectory = cell.config.trajectories.get(u).copied().flatten().map(|t| {
                        json!({ "start_m": t.start_m, "end_m": t.end_m, "speed_mps": tidy(t.speed_mps), "doppler_hz": t.doppler_hz.map(tidy) })
                    });
                    let mut ue = json!({
                        "node": node,
                        "distance_m": cell.config.ue_distances_m[u],
                        "downlink": {
                            "tbs": k.dl_tbs,
                            "tb_errors": k.dl_tb_errors,
                            "first_transmission_bler": if k.dl_new_tbs > 0 { tidy(k.dl_first_tx_errors as f64 / k.dl_new_tbs as f64) } else { 0.0 },
                            "rb_ttis": k.dl_rb_ttis,
                            "out_of_range_ttis": k.dl_out_of_range_ttis,
                            "last_sinr_db": tidy(k.last_dl_sinr_db),
                            "last_cqi": k.last_cqi,
                            "last_mcs": k.last_mcs,
                        },
                        "uplink": {
                            "tbs": k.ul_tbs,
                            "tb_errors": k.ul_tb_errors,
                            "rb_ttis": k.ul_rb_ttis,
                            "out_of_range_ttis": k.ul_out_of_range_ttis,
                        },
                        "drops": {
                            "rlc_buffer_full": k.rlc_buffer_drops,
                            "harq_max_retx": k.harq_drops,
                            "rlc_reordering": k.reordering_drops,
                        },
                    });
                    if let Some(t) = trajectory {
                        ue["trajectory"] = t;
                    }
                    if let Some(los) = hop.in_sight(u) {
                        ue["line_of_sight"] = json!(los);
                    }
                    if let Some(n) = hop.blocked_periods(u) {
                        ue["blocked_periods"] = json!(n);
                    }
                    // RLC AM's repair work (a UM cell's summary is as it always was).
                    let am = |dir| hop.rlc_am_counts(u, dir).map(|c| json!({ "retransmitted_pdus": c.retransmitted_pdus, "status_reports": c.status_reports, "polls": c.polls, "failed_sdus": c.failed_sdus }));
                    if let (Some(down), Some(up)) = (am(multiconn_cell::CellDirection::Down), am(multiconn_cell::CellDirection::Up)) {
                        ue["rlc_am"] = json!({ "downlink": down, "uplink": up });
                        ue["drops"]["rlc_max_retx"] = json!(k.rlc_max_retx_drops);
                    }
                    // L4S marking (a cell without it reads as before).
                    if let Some(l4s) = l4s_json(hop, u) {
                        ue["l4s_marking"] = l4s;
                    }
                    // The queue discipline above RLC (a cell without one reads as before).
                    if let Some(aqm) = cell_aqm_json(hop, u) {
                        ue["aqm"] = aqm;
                        ue["drops"]["aqm"] = json!(k.aqm_drops);
                    }
                    ue
                })
                .collect();
            let mut out = json!({ "name": cell.name, "enb": cell.enb, "bandwidth_rb": cell.config.n_rb, "ues": ues });
            // An NR cell says what its grid is (an LTE cell's summary is as it always was).
            if let multiconn_cell::Carrier::Nr(nr) = &cell.config.carrier {
                out["rat"] = json!("nr");
                out["numerology"] = json!(nr.numerology.mu());
                out["slot_ms"] = json!(tidy(nr.numerology.slot_ns() as f64 / 1e6));
                out["duplex"] = json!(match &nr.duplex {
                    multiconn_cell::nr::tdd::Duplex::Fdd => "FDD".to_string(),
                    multiconn_cell::nr::tdd::Duplex::Tdd(p) => p.to_letters(),
                });
                out["mcs_table"] = json!(nr.mcs_table.name());
                out["layers"] = json!(nr.layers);
            }
            out
        })
        .collect();
    Value::Array(cells)
}

/// What L4S marking counted on UE `u`'s RLC buffers, by direction; `None` without marking.
fn l4s_json(hop: &multiconn_cell::CellHop, u: usize) -> Option<Value> {
    let dir = |d| {
        hop.l4s_counts(u, d).map(|c| {
            let mut v = json!({ "l4s_packets": c.l4s_packets, "ce_marks": c.marks, "arrived_ce": c.arrived_ce });
            if let Some(r) = hop.l4s_rate_estimate(u, d) {
                v["last_rate_estimate_mbps"] = json!(tidy(r * 8.0 / 1e6));
            }
            v
        })
    };
    let (down, up) = (dir(multiconn_cell::CellDirection::Down)?, dir(multiconn_cell::CellDirection::Up)?);
    Some(json!({ "downlink": down, "uplink": up }))
}

/// UE `u`'s queue discipline above RLC (`cell.aqm`), per direction, in a link's `aqm` block
/// form ([`aqm_json`]; DualPI2's sojourns run from arrival to the slot the RLC entity took the
/// packet in); `None` without one.
fn cell_aqm_json(hop: &multiconn_cell::CellHop, u: usize) -> Option<Value> {
    let name = hop.config().aqm.as_ref()?.name();
    let dir = |d| hop.aqm_stats(u, d).map(|s| aqm_json(name, &s));
    let (down, up) = (dir(multiconn_cell::CellDirection::Down)?, dir(multiconn_cell::CellDirection::Up)?);
    Some(json!({ "downlink": down, "uplink": up }))
}

/// A cell with a layout: its UEs' handovers, failures and event logs, and each cell's UEs'
/// radio counts (docs/mobility.md).
fn ran_json(cell: &crate::resolve::Cell, ran: &multiconn_cell::ran::Ran) -> Value {
    use multiconn_cell::ran::RanEvent;
    let ms = |ns: u64| tidy(ns as f64 / 1e6);
    let ues: Vec<Value> = cell
        .ues
        .iter()
        .enumerate()
        .map(|(u, node)| {
            let k = ran.ue_counters(u);
            let mut interruptions = Vec::new();
            let mut events = Vec::new();
            for e in ran.events().iter().filter(|e| e.ue == u) {
                let mut v = json!({ "t_s": tidy(e.at.as_secs_f64()), "x_m": tidy(e.position_m.0), "y_m": tidy(e.position_m.1) });
                let (name, source_target, cell) = match e.event {
                    RanEvent::Report { source, target } => ("report", Some((source, target)), None),
                    RanEvent::HandoverStart { source, target } => ("handover_start", Some((source, target)), None),
                    RanEvent::CandidateReady { source, target } => ("candidate_ready", Some((source, target)), None),
                    RanEvent::HandoverEnd { source, target, interruption_ns } => {
                        interruptions.push(ms(interruption_ns));
                        v["interruption_ms"] = json!(ms(interruption_ns));
                        ("handover_end", Some((source, target)), None)
                    }
                    RanEvent::RadioLinkFailure { cell } => ("radio_link_failure", None, Some(cell)),
                    RanEvent::Reestablished { cell } => ("reestablished", None, Some(cell)),
                    RanEvent::ScgReleased { cell, failure } => {
                        v["cause"] = json!(if failure { "scg_failure" } else { "a2" });
                        ("scg_released", None, Some(cell))
                    }
                    RanEvent::ScgAdditionReport { cell } => ("scg_addition_report", None, Some(cell)),
                    RanEvent::ScgAdded { cell, outage_ns } => {
                        v["outage_ms"] = json!(ms(outage_ns));
                        ("scg_added", None, Some(cell))
                    }
                };
                v["event"] = json!(name);
                if let Some((source, target)) = source_target {
                    v["source"] = json!(source);
                    v["target"] = json!(target);
                }
                if let Some(cell) = cell {
                    v["cell"] = json!(cell);
                }
                events.push(v);
            }
            let record = ran.rsrp_record(u);
            let rsrp = json!({
                "t_s": record.iter().map(|(t, _)| tidy(*t as f64 / 1e9)).collect::<Vec<_>>(),
                "dbm": record.iter().map(|(_, v)| v.iter().map(|&x| if x.is_finite() { json!(tidy(x)) } else { Value::Null }).collect::<Vec<_>>()).collect::<Vec<_>>(),
            });
            let mut entry = json!({
                "node": node,
                "initial_cell": ran.initial_cell(u),
                "rsrp": rsrp,
                "handovers": k.handovers,
                "interruptions_ms": interruptions,
                "radio_link_failures": k.failures,
                "serving_cell": k.serving,
                "events": events,
            });
            if ran.is_secondary() {
                entry["scg_releases"] = json!(k.releases);
            }
            entry
        })
        .collect();
    let cells: Vec<Value> = ran
        .cells()
        .iter()
        .enumerate()
        .map(|(i, hop)| {
            let ues: Vec<Value> = cell
                .ues
                .iter()
                .enumerate()
                .map(|(u, node)| {
                    let k = hop.ue_counters(u);
                    let mut ue = json!({ "node": node, "downlink": { "tbs": k.dl_tbs, "tb_errors": k.dl_tb_errors, "rb_ttis": k.dl_rb_ttis }, "uplink": { "tbs": k.ul_tbs, "rb_ttis": k.ul_rb_ttis } });
                    if let Some(l4s) = l4s_json(hop, u) {
                        ue["l4s_marking"] = l4s;
                    }
                    if let Some(aqm) = cell_aqm_json(hop, u) {
                        ue["aqm"] = aqm;
                        ue["aqm_drops"] = json!(k.aqm_drops);
                    }
                    ue
                })
                .collect();
            json!({ "index": i, "ues": ues })
        })
        .collect();
    json!({ "name": cell.name, "enb": cell.enb, "bandwidth_rb": cell.config.n_rb, "layout_cells": ran.cells().len(), "ues": ues, "cells": cells })
}

/// The PDCP entities of one path's splits, by split name.
/// One end's ECN counters, named as the transport's mechanism names them.
fn ecn_json(transport: &str, e: &multiconn_transport::EcnStats) -> Value {
    let (state, sent, received) = if transport == "tcp" {
        ("handshake", "ece_acks_sent", "ece_acks_received")
    } else {
        ("validation", "ack_ecn_frames_sent", "ce_reported_by_peer")
    };
    json!({
        state: e.state,
        "ect_packets_sent": e.ect_sent,
        "ce_packets_received": e.ce_received,
        sent: e.echoes_sent,
        received: e.echoes_received,
        "ecn_congestion_responses": e.congestion_responses,
    })
}

/// Records the scenario's warnings and what the run itself warns of in the summary's
/// `warnings` (written only when there is one, so other summaries read as before).
pub fn add_warnings(summary: &mut Value, world: &World, scenario: &[String]) {
    let mut all: Vec<String> = scenario.to_vec();
    all.extend(burst_warnings(world));
    all.extend(reordering_warnings(world));
    if !all.is_empty() {
        summary["warnings"] = json!(all);
    }
}

/// Flows whose busiest time-series bin shows more goodput than their routes could carry in
/// that bin: the bins count what reaches the application within them, and arrivals that
/// bunched up (a PDCP reordering release, data held behind a recovered loss, a jittered
/// delay) read as a rate above the capacity. A route carries, in a bin, the least any link on
/// it could deliver then (a split: its two legs' together; a rate trace: its rate in that
/// bin), the paths' added up; flows crossing a cell or a link without a rate limit are left
/// out.
pub fn burst_warnings(world: &World) -> Vec<String> {
    let width = world.hosts.recorder.bin_width();
    let bin_s = width.as_secs_f64();
    let mut out = Vec::new();
    for (i, f) in world.hosts.flows.iter().enumerate() {
        let Some((bin, bytes)) = world.hosts.recorder.flow_peak_bin(FlowId(i as u32)) else { continue };
        let (from, to) = (Time(bin as u64 * width.0), Time((bin as u64 + 1) * width.0));
        let rate = |l: usize| match world.links[l].model.capacity_bits(from, to) {
            c if c > 0.0 => c / bin_s,
            _ => f64::INFINITY,
        };
        let mut total = 0.0;
        for p in 0..f.spec.path_count() as u8 {
            let narrowest = f.spec.hops(p, 0).iter().map(|h| match *h {
                Hop::Link(l) => rate(l),
                Hop::Split { legs, .. } => legs.iter().map(|leg| match *leg {
                    Leg::Link(l) => rate(l),
                    Leg::Port { .. } => f64::INFINITY,
                }).sum(),
                Hop::Port { .. } => f64::INFINITY,
            });
            total += narrowest.fold(f64::INFINITY, f64::min);
        }
        let peak = bytes as f64 * 8.0 / bin_s;
        if !total.is_finite() || peak <= 1.05 * total {
            continue;
        }
        let bearers: Vec<usize> = (0..f.spec.path_count() as u8).flat_map(|p| world.net.bearers_of(FlowId(i as u32), p).iter().flatten().copied().collect::<Vec<_>>()).collect();
        let cause = match bearers.iter().map(|&e| (world.net.bearer(e).measures.max_burst, e)).max() {
            Some((burst, e)) if burst > 1 => format!("split {} released up to {burst} packets at once after reordering", world_split_name(world, e)),
            _ if f.conn().is_some_and(|c| c.last_sample.retransmissions > 0) => {
                "the transport delivered the data held behind a lost packet once it was recovered".to_string()
            }
            _ => "arrivals bunched up, e.g. behind a jittered delay".to_string(),
        };
        out.push(format!(
            "flow {}: {:.1} Mbit/s in the bin at {} s, above the {:.1} Mbit/s its route could carry then: a burst, not capacity ({cause}); bins count what reaches the application within them",
            f.spec.name,
            peak / 1e6,
            tidy(bin as f64 * bin_s),
            total / 1e6
        ));
    }
    out
}

/// The share of a flow's active time that t-Reordering expiries may have held its delivery
/// (expiries × t-Reordering / active time) from which a split warns. Each expiry ends a wait
/// of t-Reordering for a COUNT that never came (a leg dropped it), with everything behind it
/// held, so from a tenth of the time the stalls are a large part of the run. A TCP download
/// whose split sends everything over a 50 Mbit/s leg with tail drops expired 3.1 times a
/// second at 200 ms (0.63 of its time; 17.4 Mbit/s against 48.0 without the split), 0.55 at
/// 150 ms (0.08; 44.2 Mbit/s), and never without drops. t-Reordering of 0 or infinity never
/// warns.
pub const REORDERING_STALL_SHARE: f64 = 0.1;

/// Arrivals of COUNTs already given up (late discards) from which a split without
/// duplication says its t-Reordering is too short, when they are at least half of what its
/// expiries gave up: the gaps were only late, the slower leg's delay exceeds the timer, and
/// each given-up PDU is lost to the flow above. Over `examples/scenarios/uplink_dc.toml`
/// (an uplink split whose primary leg queues 240 ms) 50 ms gave up 45 COUNTs in 10 s, all 45
/// arriving later (TCP 9.6 Mbit/s), while 100 to 300 ms gave up 143 to 181, none arriving
/// later (29 to 33 Mbit/s).
pub const LATE_ARRIVALS_MIN: u64 = 10;

/// Splits whose t-Reordering expired often enough to hold a tenth of the flow's active time
/// or more ([`REORDERING_STALL_SHARE`]): gaps from a leg's drops, each waited for in full; or
/// whose t-Reordering is shorter than the legs' delay difference, giving up gaps that were
/// only late ([`LATE_ARRIVALS_MIN`]).
pub fn reordering_warnings(world: &World) -> Vec<String> {
    let end = world.end_time();
    let mut out = Vec::new();
    for e in 0..world.net.bearer_count() {
        let info = world.net.bearer_info(e);
        let config = world.net.split_config(info.split);
        let Some(t) = config.rx.t_reordering.filter(|t| *t > Dur::ZERO) else { continue };
        let stats = world.net.bearer(e).rx.stats();
        let expiries = stats.timer_expiries;
        let f = &world.hosts.flows[info.flow];
        let active = f.done_at.unwrap_or(end).since(f.spec.start).as_secs_f64();
        if expiries == 0 || active <= 0.0 {
            continue;
        }
        let which = if info.route == 0 { String::new() } else { " (its return direction)".to_string() };
        // The values RRC may configure (PDCP-Config's t-Reordering, TS 38.323 §7.3's timer).
        let range = match config.tx.rat {
            multiconn_pdcp::Rat::Nr => "NR allows 0 to 3000 ms, TS 38.331",
            multiconn_pdcp::Rat::Lte => "LTE allows 0 to 750 ms, TS 36.331",
        };
        // With duplication the slower copy of every PDU arrives late: late discards say nothing.
        let duplicates = matches!(config.tx.policy, multiconn_pdcp::SplitPolicy::Duplicate);
        let late = stats.late_discards;
        if !duplicates && late >= LATE_ARRIVALS_MIN && 2 * late >= stats.given_up {
            out.push(format!(
                "split {}{which}: t-Reordering ({} ms) is shorter than the legs' delay difference: it expired {expiries} times in flow {}'s {} s and gave up {} COUNTs, and {late} PDUs arrived after their gap was given up (discarded as late, lost to the flow); \
                 try a longer t_reordering ({range}), one that covers how long a PDU of the slower leg, its queue included, can arrive after its successor on the faster one",
                config.name,
                tidy(t.as_millis_f64()),
                f.spec.name,
                tidy(active),
                stats.given_up
            ));
            continue;
        }
        let per_s = expiries as f64 / active;
        if per_s * t.as_secs_f64() < REORDERING_STALL_SHARE {
            continue;
        }
        out.push(format!(
            "split {}{which}: t-Reordering ({} ms) expired {expiries} times in flow {}'s {} s ({:.1} a second), each a wait for a PDU a leg dropped that held everything behind it; \
             try a shorter t_reordering ({range}) that still covers the legs' delay difference (how long a PDU of the slower leg can arrive after its successor on the faster one): shorter than that, gaps that were only late are given up",
            config.name,
            tidy(t.as_millis_f64()),
            f.spec.name,
            tidy(active),
            per_s
        ));
    }
    out
}

fn pdcp_json(world: &World, entities: &[Option<usize>]) -> Value {
    let mut pdcp = Map::new();
    for e in entities.iter().flatten() {
        pdcp.insert(world_split_name(world, *e), split_json(world, *e));
    }
    Value::Object(pdcp)
}

/// A multipath flow's paths: their routes, what each endpoint counted on them, what the
/// network carried and dropped, and their splits' PDCP entities.
fn paths_json(world: &World, flow: FlowId, f: &FlowState) -> Value {
    let (mut server, mut client) = (Vec::new(), Vec::new());
    if let Some(conn) = f.conn() {
        conn.server.path_stats(&mut server);
        conn.client.path_stats(&mut client);
    }
    let hop_names = |hops: &[Hop]| -> Vec<String> {
        hops.iter()
            .map(|h| match *h {
                Hop::Link(l) => world.links[l].name.clone(),
                Hop::Split { split, .. } => world.net.split_config(split).name.clone(),
                Hop::Port { element, .. } => world.cells[element].name.clone(),
            })
            .collect()
    };
    let stats = |all: &[PathStats], p: u8| -> Value {
        match all.iter().find(|s| s.path == p) {
            None => Value::Null,
            Some(s) => json!({
                "status": s.status,
                "path_id": s.path_id,
                "path_ids_opened": s.path_ids_opened,
                "packets_sent": s.packets_sent,
                "bytes_sent": s.bytes_sent,
                "packets_received": s.packets_received,
                "bytes_received": s.bytes_received,
                "lost_packets": s.lost,
                "srtt_ms": tidy(s.srtt.as_millis_f64()),
                "cwnd_bytes": s.cwnd,
            }),
        }
    };
    let traffic = |t: &PathTraffic| {
        json!({
            "packets_arrived": t.packets_arrived,
            "bytes_arrived": t.bytes_arrived,
            "packets_dropped": t.packets_dropped,
            "bytes_dropped": t.bytes_dropped,
        })
    };
    let paths = (0..f.spec.path_count() as u8)
        .map(|p| {
            let mut path = json!({
                "path": p,
                "route": hop_names(f.spec.hops(p, 0)),
                "reverse_route": hop_names(f.spec.hops(p, 1)),
                "server": stats(&server, p),
                "client": stats(&client, p),
                "network": {
                    "forward": traffic(&f.path_traffic[p as usize][0]),
                    "reverse": traffic(&f.path_traffic[p as usize][1]),
                },
            });
            let bearers = world.net.bearers_of(flow, p);
            if bearers.iter().any(Option::is_some) {
                path.as_object_mut().expect("an object").insert("pdcp".into(), pdcp_json(world, bearers));
            }
            let reverse = world.net.reverse_bearers_of(flow, p);
            if reverse.iter().any(Option::is_some) {
                path.as_object_mut().expect("an object").insert("pdcp_reverse".into(), pdcp_json(world, reverse));
            }
            path
        })
        .collect();
    Value::Array(paths)
}

/// The actions the client's path manager took: `{at_s, path, action, path_id?}`.
fn path_actions_json(actions: &[(Time, PathAction)]) -> Value {
    let list = actions
        .iter()
        .map(|&(t, a)| {
            let at_s = tidy(t.as_secs_f64());
            match a {
                PathAction::Open { path, path_id, backup } => {
                    json!({ "at_s": at_s, "path": path, "action": "open", "path_id": path_id, "backup": backup })
                }
                PathAction::Abandon { path } => json!({ "at_s": at_s, "path": path, "action": "abandon" }),
                PathAction::SetStatus { path, backup } => {
                    json!({ "at_s": at_s, "path": path, "action": if backup { "backup" } else { "available" } })
                }
            }
        })
        .collect();
    Value::Array(list)
}

fn world_split_name(world: &World, e: usize) -> String {
    world.net.split_config(world.net.bearer_info(e).split).name.clone()
}

/// A split leg's name: its link's, or its cell's.
fn leg_name<'a>(links: &'a [LinkDirection], cells: &'a [Cell], leg: Leg) -> &'a str {
    match leg {
        Leg::Link(l) => &links[l].name,
        Leg::Port { element, .. } => &cells[element].name,
    }
}

/// What one flow's PDCP entities of a split did.
fn split_json(world: &World, e: usize) -> Value {
    let entity = world.net.bearer(e);
    let tx = entity.tx.stats();
    let rx = entity.rx.stats();
    let m = &entity.measures;
    let leg_names: Vec<String> = world.net.bearer_info(e).legs.iter().map(|&leg| leg_name(&world.links, &world.cells, leg).to_string()).collect();
    let mean_delay = if rx.delivered > 0 { m.reorder_delay_sum.as_millis_f64() / rx.delivered as f64 } else { 0.0 };
    let per_leg: Vec<Value> = (0..2)
        .map(|i| {
            json!({
                "leg": leg_names[i],
                "pdus_sent": tx.pdus[i],
                "bytes_sent": tx.bytes[i],
                "pdus_arrived": m.arrivals[i],
                "bytes_arrived": m.arrival_bytes[i],
            })
        })
        .collect();
    let mut out = json!({
        "legs": leg_names,
        "per_leg": per_leg,
        "pdus_sent": tx.pdus,
        "bytes_sent": tx.bytes,
        "window_full": tx.window_full,
        "pdus_arrived": m.arrivals,
        "delivered": rx.delivered,
        "out_of_order": m.held,
        "late_discards": rx.late_discards,
        "duplicate_discards": rx.duplicate_discards,
        "timer_expiries": rx.timer_expiries,
        "given_up": rx.given_up,
        "reorder_delay_mean_ms": tidy(mean_delay),
        "reorder_delay_max_ms": tidy(m.reorder_delay_max.as_millis_f64()),
        "max_burst": m.max_burst,
        "max_buffered": m.max_buffered,
        "retransmitted": m.retransmitted,
        "discarded_copies": m.discarded_copies,
    });
    // Only a leg that hands PDUs back (an EN-DC secondary node's released SCG) recovers any.
    if m.recovered > 0 {
        out["recovered"] = json!(m.recovered);
    }
    // Only a split with reordering marking counts its marks.
    if world.net.split_config(world.net.bearer_info(e).split).l4s_reorder_threshold.is_some() {
        out["l4s_reorder_marks"] = json!(m.l4s_reorder_marks);
    }
    out
}

/// Column names of the time-series table, in order. Transport columns are empty (NaN) for
/// links and UDP flows; `retransmissions` and `spurious_retransmissions` count per bin.
///
/// Row kinds: `flow`, `link`, then `path` (each path of a flow with more than one), `leg`
/// (each leg of each split bearer) and `bearer` (each split bearer: one flow's path crossing
/// one split). `path` is the flow's path index on path, leg and bearer rows and -1 on flow and
/// link rows; `leg` the leg's link name on leg rows and empty elsewhere; `reorder_delay_ms` and
/// `reorder_buffer_pdus` are set on bearer rows only (NaN elsewhere); `drops_ack` is the part
/// of a flow row's drops in the flow's return direction (0 on other rows).
///
/// `cell` rows (each UE of each cell, `downlink` then `uplink`; name = the cell, `ue` = the
/// UE's node) carry the bytes of the packets the cell delivered whole, its drops (the RLC
/// buffer's as `drops_queue`, HARQ's and the receiving RLC's as `drops_random_loss`) and the
/// radio's columns, which are NaN (floats) or 0 (counts) on the other rows: the mean SINR (dB),
/// CQI and MCS, RBs per TTI of the bin, TBs sent and in error (all transmissions, first
/// transmissions, given up after HARQ), and the RLC buffer's largest and last fill in bytes
/// (docs/lte-cell.md).
pub const COLUMNS: [(&str, ColumnType); 36] = [
    ("time_s", ColumnType::F64),
    ("kind", ColumnType::Str),
    ("name", ColumnType::Str),
    ("direction", ColumnType::Str),
    ("bytes_delivered", ColumnType::I64),
    ("throughput_mbps", ColumnType::F64),
    ("drops_queue", ColumnType::I64),
    ("drops_random_loss", ColumnType::I64),
    ("drops_link_down", ColumnType::I64),
    ("drops_udp_buffer", ColumnType::I64),
    ("drops_pdcp_late", ColumnType::I64),
    ("drops_pdcp_window", ColumnType::I64),
    ("queue_packets", ColumnType::F64),
    ("queue_bytes", ColumnType::F64),
    ("cwnd_bytes", ColumnType::F64),
    ("bytes_in_flight", ColumnType::F64),
    ("srtt_ms", ColumnType::F64),
    ("retransmissions", ColumnType::F64),
    ("spurious_retransmissions", ColumnType::F64),
    ("path", ColumnType::I64),
    ("leg", ColumnType::Str),
    ("reorder_delay_ms", ColumnType::F64),
    ("reorder_buffer_pdus", ColumnType::F64),
    ("drops_ack", ColumnType::I64),
    ("ue", ColumnType::Str),
    ("sinr_db", ColumnType::F64),
    ("cqi", ColumnType::F64),
    ("mcs", ColumnType::F64),
    ("rbs_per_tti", ColumnType::F64),
    ("tbs", ColumnType::I64),
    ("tb_errors", ColumnType::I64),
    ("tbs_new", ColumnType::I64),
    ("tb_errors_first", ColumnType::I64),
    ("tbs_lost", ColumnType::I64),
    ("rlc_buffer_max_bytes", ColumnType::F64),
    ("rlc_buffer_bytes", ColumnType::F64),
];

/// One row per message of every message flow; no columns when the run has none.
pub fn messages(world: &World) -> Vec<(String, Column)> {
    if world.hosts.flows.iter().all(|f| f.messages.is_none()) {
        return Vec::new();
    }
    let mut table = MessageTable::default();
    for (i, f) in world.hosts.flows.iter().enumerate() {
        if let Some(log) = &f.messages {
            table.append_rows(&f.spec.name, log, &ideal_of_flow(world, i));
        }
    }
    table.into_columns()
}

/// The rows of message flow `f`'s messages received after its first `n` arrivals, in order
/// of arrival (the columns of [`messages`]).
pub fn arrivals_since(world: &World, f: usize, n: usize) -> Vec<(String, Column)> {
    let mut table = MessageTable::default();
    let flow = &world.hosts.flows[f];
    if let Some(log) = &flow.messages {
        table.append_arrivals(&flow.spec.name, log, n, &ideal_of_flow(world, f));
    }
    table.into_columns()
}

/// The smallest [`ideal_owd`] over flow `f`'s paths of a message of `size` bytes sent at
/// `sent`: the best path at each message's send time.
fn ideal_of_flow(world: &World, f: usize) -> impl Fn(Time, u64) -> Option<Dur> + '_ {
    let spec = &world.hosts.flows[f].spec;
    let routes: Vec<&[Hop]> = (0..spec.path_count()).map(|p| spec.hops(p as u8, 0)).collect();
    let rates: Vec<Vec<Option<RateServer>>> = routes.iter().map(|r| r.iter().map(|h| match h {
        Hop::Link(l) => world.links[*l].model.rate_server(),
        Hop::Split { .. } | Hop::Port { .. } => None,
    }).collect()).collect();
    move |sent: Time, size: u64| -> Option<Dur> {
        routes.iter().zip(&rates).filter_map(|(route, rates)| ideal_owd(world, route, rates, sent, size)).min()
    }
}

/// The one-way delay the network alone gives a message of `size` bytes entering `route` at
/// `sent`: at each link in turn, its transmission through the link's rate as it varies over
/// time from when the message reaches it ([`RateServer::transmission_end`]: `size` bytes at a
/// fixed rate, the rate's integral for a bitrate trace, whole opportunities for a Mahimahi
/// trace; the message as one block, headers left out, the link otherwise idle), then its
/// propagation delay when the message leaves it (a delay series' value then; the mean of a
/// random model). `None` for a route through a split, or a link whose trace never carries
/// the message.
fn ideal_owd(world: &World, route: &[Hop], rates: &[Option<RateServer>], sent: Time, size: u64) -> Option<Dur> {
    let mut t = sent;
    for (hop, rate) in route.iter().zip(rates) {
        let Hop::Link(l) = hop else { return None };
        if let Some(rate) = rate {
            t = rate.transmission_end(t, size * 8)?;
        }
        t += world.links[*l].model.delay_at(t);
    }
    Some(t.since(sent))
}

/// The radio's columns of the `cell` rows (see [`COLUMNS`]).
#[derive(Default)]
struct CellColumns {
    ue: Vec<String>,
    sinr_db: Vec<f64>,
    cqi: Vec<f64>,
    mcs: Vec<f64>,
    rbs_per_tti: Vec<f64>,
    tbs: Vec<i64>,
    tb_errors: Vec<i64>,
    tbs_new: Vec<i64>,
    tb_errors_first: Vec<i64>,
    tbs_lost: Vec<i64>,
    rlc_max: Vec<f64>,
    rlc_last: Vec<f64>,
}

impl CellColumns {
    /// A cell row: UE `node`'s bin `b`, `ttis` TTIs long.
    fn push(&mut self, node: &str, b: &multiconn_cell::UeBin, ttis: f64) {
        self.ue.push(node.to_string());
        self.sinr_db.push(b.mean_sinr_db().map_or(f64::NAN, tidy));
        self.cqi.push(b.mean_cqi().map_or(f64::NAN, tidy));
        self.mcs.push(b.mean_mcs().map_or(f64::NAN, tidy));
        self.rbs_per_tti.push(if ttis > 0.0 { tidy(b.rb_ttis as f64 / ttis) } else { f64::NAN });
        self.tbs.push(b.tbs as i64);
        self.tb_errors.push(b.tb_errors as i64);
        self.tbs_new.push(b.tbs_new as i64);
        self.tb_errors_first.push(b.tb_errors_first as i64);
        self.tbs_lost.push(b.tbs_lost as i64);
        self.rlc_max.push(b.rlc_max_bytes as f64);
        self.rlc_last.push(b.rlc_last_bytes.unwrap_or(0) as f64);
    }

    /// The cell columns of a table of `total` rows whose first `before` are not the cells':
    /// `ue`, then the others in the order of [`COLUMNS`], empty (NaN, 0, "") on the rows
    /// before. Without a cell row, the numbers are [`Column::Fill`]s.
    fn into_columns(mut self, total: usize, before: usize) -> (crate::format::DictColumn, [Column; 11]) {
        let ue = self.ue_column(total);
        if self.tbs.is_empty() && total > 0 {
            let (nan, zero) = (f64::NAN.fill(total), 0i64.fill(total));
            let columns = [nan.clone(), nan.clone(), nan.clone(), nan.clone(), zero.clone(), zero.clone(), zero.clone(), zero.clone(), zero, nan.clone(), nan];
            return (ue, columns);
        }
        self.pad_to(total, before);
        let CellColumns { sinr_db, cqi, mcs, rbs_per_tti, tbs, tb_errors, tbs_new, tb_errors_first, tbs_lost, rlc_max, rlc_last, .. } = self;
        let f = Column::F64;
        let i = Column::I64;
        (ue, [f(sinr_db), f(cqi), f(mcs), f(rbs_per_tti), i(tbs), i(tb_errors), i(tbs_new), i(tb_errors_first), i(tbs_lost), f(rlc_max), f(rlc_last)])
    }

    /// Puts the empty values of the `before` rows ahead of the cell rows, for `total` rows
    /// (the `ue` column: [`Self::ue_column`]).
    fn pad_to(&mut self, total: usize, before: usize) {
        fn front<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
            v.splice(0..0, std::iter::repeat(fill).take(n));
        }
        for v in [&mut self.sinr_db, &mut self.cqi, &mut self.mcs, &mut self.rbs_per_tti, &mut self.rlc_max, &mut self.rlc_last] {
            front(v, before, f64::NAN);
        }
        for v in [&mut self.tbs, &mut self.tb_errors, &mut self.tbs_new, &mut self.tb_errors_first, &mut self.tbs_lost] {
            front(v, before, 0);
        }
        debug_assert_eq!(self.tbs.len(), total);
    }

    /// The `ue` column of `total` rows: empty on the rows before the cell rows.
    fn ue_column(&self, total: usize) -> crate::format::DictColumn {
        let mut ue = DictBuilder::with_capacity(total);
        for _ in self.ue.len()..total {
            ue.push("");
        }
        for node in &self.ue {
            ue.push(node);
        }
        ue.finish()
    }
}

/// What a time-series row is about beyond its kind, name and direction.
#[derive(Clone, Copy)]
enum RowOf<'a> {
    Flow,
    Link,
    Path(u8),
    Leg { path: u8, leg: &'a str },
    Bearer(u8),
}

/// One row per (entity, bin) of a simulated run: see [`timeseries_of`]. The text columns are
/// dictionary-coded ([`Column::Dict`]), and the recorder's bins are freed as the rows are
/// made and the rows as the columns are built: a run with many series keeps most of its
/// memory in them, and the table replaces them instead of joining them.
pub fn timeseries(world: &mut World, end: Time) -> Vec<(String, Column)> {
    let rows = world.hosts.recorder.take_series(end);
    let flows: Vec<&str> = world.hosts.flows.iter().map(|f| f.spec.name.as_str()).collect();
    timeseries_from(rows, &SeriesNames { flows: &flows, links: &world.links, cells: &world.cells }, &world.net, end)
}

/// After this many bytes of rows are freed, the allocator is asked to hand free memory back
/// to the system ([`release_freed_memory`]).
const RELEASE_EVERY_BYTES: usize = 16 << 20;

/// Asks the allocator to return the memory freed so far to the system. glibc keeps freed
/// heap memory for its own reuse, and the columns, allocated in large blocks of their own,
/// would not reuse it: without this, the rows freed while the columns are built would stay
/// in the process. Elsewhere a no-op.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory glibc's allocator holds free; it touches no
    // live allocation and may be called at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Counts the bytes of rows freed and releases them ([`release_freed_memory`]) every
/// [`RELEASE_EVERY_BYTES`].
#[derive(Default)]
struct Freed(usize);

impl Freed {
    fn rows(&mut self, bins: Vec<BinRow>) {
        let bytes = bins.capacity() * std::mem::size_of::<BinRow>();
        drop(bins);
        self.bytes(bytes);
    }

    fn bytes(&mut self, bytes: usize) {
        self.0 += bytes;
        if self.0 >= RELEASE_EVERY_BYTES {
            self.0 = 0;
            release_freed_memory();
        }
    }
}

/// What names a run's series: its flows (in the recorder's order), link directions and cells.
pub struct SeriesNames<'a> {
    /// The flows' names.
    pub flows: &'a [&'a str],
    /// The link directions.
    pub links: &'a [LinkDirection],
    /// The cells.
    pub cells: &'a [Cell],
}

/// The time-series table of a run, simulated or emulated, from its recorder's rows and its
/// network: one row per (entity, bin), every flow's bins, every link direction's, then every
/// path's of the flows with more than one, every split bearer leg's and every split bearer's
/// (bearers in the order of their flows, paths and hops; legs in the split's order), then
/// the cells' UEs (when the cells keep series).
pub fn timeseries_of(rows: &Finished, names: &SeriesNames, net: &Network, end: Time) -> Vec<(String, Column)> {
    timeseries_from(rows.clone(), names, net, end).into_iter().map(|(name, column)| (name, column.expand())).collect()
}

/// A series' rows as [`timeseries_from`] takes them: made already, or made when taken.
trait IntoRows {
    /// How many rows.
    fn rows_len(&self) -> usize;
    /// The rows; what they were made from is freed (and counted in `freed`).
    fn into_rows(self, freed: &mut Freed) -> Vec<BinRow>;
}

impl IntoRows for Vec<BinRow> {
    fn rows_len(&self) -> usize {
        self.len()
    }
    fn into_rows(self, _: &mut Freed) -> Vec<BinRow> {
        self
    }
}

impl IntoRows for PendingRows {
    fn rows_len(&self) -> usize {
        self.len()
    }
    fn into_rows(self, freed: &mut Freed) -> Vec<BinRow> {
        let bytes = self.bin_bytes();
        let rows = self.rows();
        freed.bytes(bytes);
        rows
    }
}

/// [`timeseries_of`] taking the rows (or what makes them), each series' freed once it is in
/// the columns; the text columns are dictionary-coded ([`Column::Dict`]), the numbers that
/// are the same in every row [`Column::Fill`]s.
fn timeseries_from<R: IntoRows>(rows: Finished<R>, names: &SeriesNames, net: &Network, end: Time) -> Vec<(String, Column)> {
    let count = |series: &[R]| series.iter().map(R::rows_len).sum::<usize>();
    let flat = count(&rows.flows) + count(&rows.links) + rows.paths.iter().map(|p| count(p)).sum::<usize>()
        + rows.legs.iter().map(|l| count(l)).sum::<usize>() + count(&rows.bearers);
    let floats = || Numbers::<f64>::with_capacity(flat);
    let ints = || Numbers::<i64>::with_capacity(flat);
    let mut time_s = floats();
    let mut kind = DictBuilder::with_capacity(flat);
    let mut name = DictBuilder::with_capacity(flat);
    let mut direction = DictBuilder::with_capacity(flat);
    let mut bytes = ints();
    let mut mbps = floats();
    let mut drops: [Numbers<i64>; DropCause::ALL.len()] = std::array::from_fn(|_| ints());
    let mut drops_ack = ints();
    let mut q_packets = floats();
    let mut q_bytes = floats();
    let mut cwnd = floats();
    let mut in_flight = floats();
    let mut srtt = floats();
    let mut retx = floats();
    let mut spurious = floats();
    let mut path_col = ints();
    let mut leg_col = DictBuilder::with_capacity(flat);
    let mut reorder_delay = floats();
    let mut reorder_buffer = floats();
    let mut freed = Freed::default();
    let mut push = |k: &str, n: &str, d: &str, bins: &[BinRow], of: RowOf| {
        let mut before = (0u64, 0u64);
        for r in bins {
            match r.counters.transport {
                Some(t) => {
                    cwnd.push(t.cwnd as f64);
                    in_flight.push(t.bytes_in_flight as f64);
                    srtt.push(tidy(t.srtt.as_millis_f64()));
                    retx.push((t.retransmissions - before.0) as f64);
                    spurious.push((t.spurious_retransmissions - before.1) as f64);
                    before = (t.retransmissions, t.spurious_retransmissions);
                }
                None => {
                    for c in [&mut cwnd, &mut in_flight, &mut srtt, &mut retx, &mut spurious] {
                        c.push(f64::NAN);
                    }
                }
            }
            time_s.push(tidy(r.start.as_secs_f64()));
            kind.push(k);
            name.push(n);
            direction.push(d);
            bytes.push(r.counters.bytes_delivered as i64);
            mbps.push(tidy(r.throughput_mbps()));
            for (i, cause) in DropCause::ALL.iter().enumerate() {
                drops[i].push(r.counters.drops_by(*cause) as i64);
            }
            drops_ack.push(DropCause::ALL.iter().map(|c| r.counters.reverse_drops_by(*c) as i64).sum());
            let is_link = matches!(of, RowOf::Link);
            q_packets.push(if is_link { tidy(r.mean_queue_packets()) } else { f64::NAN });
            q_bytes.push(if is_link { tidy(r.mean_queue_bytes()) } else { f64::NAN });
            let (path, leg) = match of {
                RowOf::Flow | RowOf::Link => (-1, ""),
                RowOf::Path(p) | RowOf::Bearer(p) => (i64::from(p), ""),
                RowOf::Leg { path, leg } => (i64::from(path), leg),
            };
            path_col.push(path);
            leg_col.push(leg);
            match of {
                RowOf::Bearer(_) => {
                    reorder_delay.push(r.mean_reorder_delay_ms().map_or(f64::NAN, tidy));
                    reorder_buffer.push(tidy(r.mean_queue_packets()));
                }
                _ => {
                    reorder_delay.push(f64::NAN);
                    reorder_buffer.push(f64::NAN);
                }
            }
        }
    };
    let Finished { flows, links, paths, legs, bearers } = rows;
    for (f, bins) in names.flows.iter().zip(flows) {
        let bins = bins.into_rows(&mut freed);
        push("flow", f, "", &bins, RowOf::Flow);
        freed.rows(bins);
    }
    for (l, bins) in names.links.iter().zip(links) {
        let bins = bins.into_rows(&mut freed);
        push("link", &l.name, l.direction.name(), &bins, RowOf::Link);
        freed.rows(bins);
    }
    for (f, paths) in names.flows.iter().zip(paths) {
        for (p, bins) in paths.into_iter().enumerate() {
            let bins = bins.into_rows(&mut freed);
            push("path", f, "", &bins, RowOf::Path(p as u8));
            freed.rows(bins);
        }
    }
    // A split serving the return direction too (reverse_policy): its rows there say so.
    let bearer_direction = |route: u16| if route == 0 { "" } else { "reverse" };
    for (e, legs) in legs.into_iter().enumerate() {
        let info = net.bearer_info(e);
        let flow = names.flows[info.flow];
        for (leg, bins) in info.legs.iter().zip(legs) {
            let bins = bins.into_rows(&mut freed);
            push("leg", flow, bearer_direction(info.route), &bins, RowOf::Leg { path: info.path, leg: leg_name(names.links, names.cells, *leg) });
            freed.rows(bins);
        }
    }
    for (e, bins) in bearers.into_iter().enumerate() {
        let info = net.bearer_info(e);
        let bins = bins.into_rows(&mut freed);
        push("bearer", names.flows[info.flow], bearer_direction(info.route), &bins, RowOf::Bearer(info.path));
        freed.rows(bins);
    }
    release_freed_memory();
    let flat_rows = time_s.len();
    let mut cell = CellColumns::default();
    for (c, spec) in names.cells.iter().enumerate() {
        let Some(hop) = net.port_element::<multiconn_cell::CellHop>(c) else { continue };
        let Some(series) = hop.series() else { continue };
        // RBs per TTI (LTE) or per slot (NR).
        let slot_ns = hop.slot_ns() as f64;
        for (u, node) in spec.ues.iter().enumerate() {
            for (dir, dir_name) in [(0, "downlink"), (1, "uplink")] {
                for (i, b) in series.rows(u, dir, end.0).iter().enumerate() {
                    let start = i as u64 * series.bin_ns();
                    let len = ((i as u64 + 1) * series.bin_ns()).min(end.0) - start;
                    time_s.push(tidy(start as f64 / 1e9));
                    kind.push("cell");
                    name.push(&spec.name);
                    direction.push(dir_name);
                    bytes.push(b.bytes_delivered as i64);
                    mbps.push(tidy(if len > 0 { b.bytes_delivered as f64 * 8.0 / (len as f64 / 1e9) / 1e6 } else { 0.0 }));
                    for (k, cause) in DropCause::ALL.iter().enumerate() {
                        drops[k].push(match cause {
                            DropCause::Queue => b.drops_buffer as i64,
                            DropCause::RandomLoss => b.drops_radio as i64,
                            _ => 0,
                        });
                    }
                    drops_ack.push(0);
                    for col in [&mut q_packets, &mut q_bytes, &mut cwnd, &mut in_flight, &mut srtt, &mut retx, &mut spurious, &mut reorder_delay, &mut reorder_buffer] {
                        col.push(f64::NAN);
                    }
                    path_col.push(-1);
                    leg_col.push("");
                    cell.push(node, b, len as f64 / slot_ns);
                }
            }
        }
    }
    let (ue, [sinr_db, cqi, mcs, rbs_per_tti, tbs, tb_errors, tbs_new, tb_errors_first, tbs_lost, rlc_max, rlc_last]) =
        cell.into_columns(time_s.len(), flat_rows);
    let [d_queue, d_loss, d_down, d_udp, d_late, d_window] = drops;
    let columns = [
        time_s.finish(),
        Column::Dict(kind.finish()),
        Column::Dict(name.finish()),
        Column::Dict(direction.finish()),
        bytes.finish(),
        mbps.finish(),
        d_queue.finish(),
        d_loss.finish(),
        d_down.finish(),
        d_udp.finish(),
        d_late.finish(),
        d_window.finish(),
        q_packets.finish(),
        q_bytes.finish(),
        cwnd.finish(),
        in_flight.finish(),
        srtt.finish(),
        retx.finish(),
        spurious.finish(),
        path_col.finish(),
        Column::Dict(leg_col.finish()),
        reorder_delay.finish(),
        reorder_buffer.finish(),
        drops_ack.finish(),
        Column::Dict(ue),
        sinr_db,
        cqi,
        mcs,
        rbs_per_tti,
        tbs,
        tb_errors,
        tbs_new,
        tb_errors_first,
        tbs_lost,
        rlc_max,
        rlc_last,
    ];
    named_columns(&COLUMNS, columns)
}

/// A tunnel's block: the flows it carries and, by direction of its connection's data, what
/// became of their packets.
fn tunnel_json(world: &World, state: &crate::sim::tunnel::TunnelState) -> Value {
    let open = state.open_by_direction();
    let counts = |c: &crate::sim::tunnel::TunnelCounts, open: u64| {
        json!({
            "packets": c.entered,
            "datagram_bytes": c.datagram_bytes,
            "delivered": c.delivered,
            "lost": c.lost,
            "dropped_send_buffer": c.dropped_send_buffer,
            "refused": c.refused,
            "in_tunnel_at_end": open,
        })
    };
    let flows: Vec<&str> = state.flows.iter().map(|&g| world.hosts.flows[g].spec.name.as_str()).collect();
    json!({"flows": flows, "forward": counts(&state.counts[0], open[0]), "reverse": counts(&state.counts[1], open[1])})
}

/// How a tunnel carries a flow's packets, as the summary names it.
fn tunnel_mode_name(mode: crate::resolve::TunnelMode) -> &'static str {
    match mode {
        crate::resolve::TunnelMode::ConnectUdp => "connect-udp",
        crate::resolve::TunnelMode::ConnectIp => "connect-ip",
    }
}
