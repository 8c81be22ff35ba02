//! What an emulated run writes: `summary.json` (flows with what their application and the
//! emulator measured, links, the timing report), `timeseries.csv` (the simulator's
//! time-series table, [`multiconn_scenario::report::timeseries_of`], over the emulator's
//! recorder and network: flows, link directions, paths, split bearer legs and bearers) and
//! `scenario.json` (docs/emulator.md lists every field). The link block of the summary is the
//! simulator's ([`multiconn_scenario::report::links_json`]). `multiconn emulate` reads these
//! back and writes the run folder as `multiconn run` does.
//!
//! A flow's bytes here are IP bytes, headers included, as the emulator saw them cross its
//! TUNs; the payload the application received is the stack's own report (`app`).

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use multiconn_core::{Dur, FlowId, Time};
use multiconn_scenario::format::tidy;
use multiconn_scenario::format::columns_csv;
use multiconn_scenario::report::{drops_json, links_json, timeseries_of, SeriesNames};
use multiconn_net::Network;
use multiconn_scenario::Scenario;
use serde_json::{json, Value};

use crate::fabric::Fabric;
use crate::sandbox::KernelCounters;
use crate::stacks::AppResult;

/// What became of one flow's programs.
pub struct FlowOutcome {
    /// The stack that ran it.
    pub stack: String,
    /// When its client started and exited (run time).
    pub started: Option<Time>,
    /// See `started`.
    pub exited: Option<Time>,
    /// The client's exit code (-1: killed by a signal).
    pub exit_code: Option<i32>,
    /// What the client reported, or why its report could not be read.
    pub app: Result<Option<AppResult>, String>,
    /// Its folder (logs, reports, qlogs).
    pub dir: PathBuf,
    /// Per path: (`from` node, `to` node) addresses.
    pub addresses: Vec<(Ipv4Addr, Ipv4Addr)>,
}

/// Facts of the run as a whole.
pub struct RunFacts {
    /// The scenario's name.
    pub scenario: String,
    /// The models' seed.
    pub seed: u64,
    /// When the run stopped (run time).
    pub end: Time,
    /// Its wall-clock length, set-up excluded.
    pub wall: Duration,
    /// Why it stopped.
    pub stopped_by: String,
    /// The lateness budget.
    pub budget: Dur,
    /// Per host: its node and its network namespace's identity (`net:[inode]`).
    pub hosts: Vec<(String, String)>,
    /// Per host: its kernel's counters at the end of the run.
    pub counters: Vec<(String, KernelCounters)>,
}

/// The timing report: how late packets were written after the model released them.
pub fn timing_json(lateness_ns: &[u64], budget: Dur) -> Value {
    let mut sorted = lateness_ns.to_vec();
    sorted.sort_unstable();
    let q = |p: f64| -> Option<f64> {
        if sorted.is_empty() {
            return None;
        }
        let i = ((sorted.len() - 1) as f64 * p).round() as usize;
        Some(tidy(sorted[i] as f64 / 1e3))
    };
    let over = sorted.iter().filter(|&&l| l > budget.0).count();
    let p99_ns = q(0.99).map(|us| us * 1e3);
    let verdict = match p99_ns {
        None => "no packets",
        Some(p) if p > budget.0 as f64 => "over budget",
        Some(_) => "ok",
    };
    json!({
        "packets": sorted.len(),
        "median_us": q(0.5),
        "p99_us": q(0.99),
        "max_us": sorted.last().map(|&m| tidy(m as f64 / 1e3)),
        "budget_us": tidy(budget.0 as f64 / 1e3),
        "over_budget": over,
        "verdict": verdict,
    })
}

/// Writes the run's files into `out` and returns the summary.
pub fn write(out: &Path, scenario: &Scenario, net: &Network, fabric: &mut Fabric, outcomes: &[FlowOutcome], facts: &RunFacts) -> Result<Value, String> {
    let resolved = scenario.resolved();
    let finished = fabric.recorder.finish(facts.end);
    let end_s = facts.end.as_secs_f64();
    let flows: Vec<Value> = resolved
        .flows
        .iter()
        .zip(outcomes)
        .enumerate()
        .map(|(i, (f, o))| {
            let a = fabric.arrivals[i];
            let transfer = fabric.connections[i].transfer();
            let total = fabric.recorder.flow_total(FlowId(i as u32));
            let since_start = |t: Time| tidy(t.since(f.start).as_secs_f64());
            let active = o.exited.unwrap_or(facts.end).since(f.start).as_secs_f64();
            let ip_goodput = if active > 0.0 { a.ip_bytes_arrived as f64 * 8.0 / active / 1e6 } else { 0.0 };
            // The payload goodput, from the best source there is: the application's own report;
            // else a sized flow's size over its completion time.
            let (goodput, goodput_from) = match (&o.app, f.size, o.exited) {
                (Ok(Some(r)), _, _) if r.seconds > 0.0 => (Some(r.bytes as f64 * 8.0 / r.seconds / 1e6), "application"),
                (_, Some(size), Some(done)) if o.exit_code == Some(0) && done > f.start => (Some(size as f64 * 8.0 / done.since(f.start).as_secs_f64() / 1e6), "size over completion"),
                _ => (None, "none"),
            };
            let bytes_delivered = match (&o.app, f.size) {
                (Ok(Some(r)), _) => Some(r.bytes),
                (_, Some(size)) if goodput_from == "size over completion" => Some(size),
                _ => None,
            };
            let (app, app_error) = match &o.app {
                Ok(Some(r)) => (json!({"bytes": r.bytes, "seconds": tidy(r.seconds), "goodput_mbps": tidy(if r.seconds > 0.0 { r.bytes as f64 * 8.0 / r.seconds / 1e6 } else { 0.0 })}), Value::Null),
                Ok(None) => (Value::Null, Value::Null),
                Err(e) => (Value::Null, json!(e)),
            };
            json!({
                "name": f.name,
                "transport": f.transport.name(),
                "app": f.app.name(),
                "profile": f.connection.as_ref().map(|c| c.profile.name.clone()),
                "stack": o.stack,
                "from": f.from,
                "to": f.to,
                "cc": f.connection.as_ref().map(|c| c.cc.name()),
                "addresses": o.addresses.iter().map(|(s, c)| json!({"from": s.to_string(), "to": c.to_string()})).collect::<Vec<_>>(),
                "client_exit_code": o.exit_code,
                "completion_s": o.exited.map(since_start),
                "client_started_s": o.started.map(|t| tidy(t.as_secs_f64())),
                "ip_bytes_sent": a.ip_bytes_sent,
                "ip_bytes_arrived": a.ip_bytes_arrived,
                "bytes_delivered": bytes_delivered,
                "goodput_mbps": goodput.map(tidy),
                "goodput_from": goodput_from,
                "ip_goodput_mbps": tidy(ip_goodput),
                "last_arrival_s": a.last.map(since_start),
                "transfer": transfer.map(|t| json!({
                    "first_packet_s": since_start(t.first_packet),
                    "last_delivered_s": since_start(t.last_delivered),
                    "seconds": tidy(t.last_delivered.since(t.first_packet).as_secs_f64()),
                    "connections": t.connections,
                })),
                "app_report": app,
                "app_error": app_error,
                "drops": drops_json(total),
                "folder": o.dir.strip_prefix(out).unwrap_or(&o.dir).display().to_string(),
            })
        })
        .collect();
    let links = links_json(&resolved.links, &fabric.recorder, net, facts.end);
    let goodputs: Vec<f64> = flows.iter().filter_map(|f| f["goodput_mbps"].as_f64()).collect();
    let jain = (goodputs.len() == flows.len()).then(|| multiconn_metrics::jain_index(&goodputs)).flatten().map(tidy);
    let summary = json!({
        "multiconn_version": env!("CARGO_PKG_VERSION"),
        "mode": "emulation",
        "scenario": facts.scenario,
        "seed": facts.seed,
        "emulated_time_s": tidy(end_s),
        "wall_time_s": tidy(facts.wall.as_secs_f64()),
        "stopped_by": facts.stopped_by,
        "flows": flows,
        "links": links,
        "jain_fairness": jain,
        "split_bearers": net.bearer_count(),
        "hosts": facts.hosts.iter().map(|(node, netns)| {
            let c = facts.counters.iter().find(|(n, _)| n == node).map(|(_, c)| *c).unwrap_or_default();
            json!({
                "node": node,
                "netns": netns,
                "udp_in_datagrams": c.udp_in_datagrams,
                "udp_rcvbuf_errors": c.udp_rcvbuf_errors,
                "udp_in_errors": c.udp_in_errors,
                "tcp_retrans_segs": c.tcp_retrans_segs,
            })
        }).collect::<Vec<_>>(),
        "timing": timing_json(&fabric.lateness_ns, facts.budget),
        "outside_models": {"tun_write_failures": fabric.write_failures, "non_ipv4_packets": fabric.unclassified},
    });
    let write_file = |name: &str, text: &str| std::fs::write(out.join(name), text).map_err(|e| format!("{}: {e}", out.join(name).display()));
    write_file("summary.json", &(serde_json::to_string_pretty(&summary).expect("JSON") + "\n"))?;
    write_file("scenario.json", &(scenario.to_json() + "\n"))?;

    // The simulator's time-series table, written as CSV: `multiconn emulate` reads it back
    // and writes the run folder as `multiconn run` does (python/multiconn/emulate.py).
    let names: Vec<&str> = resolved.flows.iter().map(|f| f.name.as_str()).collect();
    let columns = timeseries_of(&finished, &SeriesNames { flows: &names, links: &resolved.links, cells: &resolved.cells }, net, facts.end);
    let csv = columns_csv(&columns);
    write_file("timeseries.csv", &csv)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_quantiles_and_verdict() {
        let lateness: Vec<u64> = (1..=1000).map(|i| i * 1000).collect(); // 1 µs .. 1 ms
        let t = timing_json(&lateness, Dur::from_micros(500));
        assert_eq!(t["packets"], 1000);
        assert_eq!(t["median_us"], 501.0);
        assert_eq!(t["p99_us"], 990.0);
        assert_eq!(t["max_us"], 1000.0);
        assert_eq!(t["over_budget"], 500);
        assert_eq!(t["verdict"], "over budget");
        assert_eq!(timing_json(&lateness, Dur::from_millis(2))["verdict"], "ok");
        assert_eq!(timing_json(&[], Dur::from_millis(1))["verdict"], "no packets");
    }
}
