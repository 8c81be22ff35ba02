//! Runs a scenario file to the end and prints events/s, simulated/wall time and peak memory:
//! `cargo run --release -p multiconn-scenario --example run_scenario -- FILE [KEY=VALUE ...]`.
//! With `MULTICONN_PRINT_FLOWS=1` it also prints each flow's and each link direction's summary;
//! with `MULTICONN_CHECK_INVARIANTS=1` the invariant checker watches the run (a violation is
//! printed, exit code 1); with `MULTICONN_PCAP_DIR=DIR` the packet captures of a scenario with
//! `run.pcap` (e.g. the argument `run.pcap=true`) are written into DIR.

use multiconn_scenario::{load, Origin, Simulation};
use std::path::Path;
use std::time::Instant;

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: run_scenario FILE [KEY=VALUE ...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| {
        eprintln!("{file}: {e}");
        std::process::exit(2)
    });
    let sets: Vec<(String, String)> = args[1..]
        .iter()
        .map(|a| multiconn_scenario::overrides::split_assignment(a).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        }))
        .collect();
    let base_dir = Path::new(file).parent().unwrap_or(Path::new(".")).to_path_buf();
    let scenario = load(&text, &Origin { name: file.clone(), base_dir }, &sets).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let started = Instant::now();
    let mut sim = Simulation::new(&scenario, None).expect("simulation builds");
    sim.run_to_end();
    let wall = started.elapsed().as_secs_f64();
    if let Err(violation) = sim.check() {
        eprintln!("{violation}");
        std::process::exit(1);
    }
    let events = sim.events();
    let sim_s = sim.now().as_secs_f64();
    let out = sim.finish();
    let summary: serde_json::Value = serde_json::from_str(&out.summary_json).expect("summary is JSON");
    if std::env::var_os("MULTICONN_PRINT_FLOWS").is_some() {
        for f in summary["flows"].as_array().into_iter().flatten() {
            println!("{f}");
        }
        for l in summary["links"].as_array().into_iter().flatten() {
            println!("{l}");
        }
    }
    if let Some(dir) = std::env::var_os("MULTICONN_PCAP_DIR") {
        let dir = Path::new(&dir);
        std::fs::create_dir_all(dir).expect("the capture folder can be made");
        for f in &out.pcap {
            std::fs::write(dir.join(&f.file_name), &f.bytes).expect("a capture file can be written");
        }
        for w in &out.pcap_warnings {
            eprintln!("warning: {w}");
        }
    }
    let flow = &summary["flows"][0];
    let packets: u64 = summary["links"].as_array().map_or(0, |ls| ls.iter().filter_map(|l| l["packets_delivered"].as_u64()).sum());
    println!(
        "{{\"events\": {events}, \"wall_s\": {wall:.4}, \"sim_s\": {sim_s}, \"events_per_s\": {:.0}, \"sim_over_wall\": {:.1}, \"peak_rss_kib\": {}, \"link_packets\": {packets}, \"ns_per_packet\": {:.1}, \"goodput_mbps\": {}, \"bytes_delivered\": {}, \"completion_s\": {}}}",
        events as f64 / wall,
        sim_s / wall,
        peak_rss_kib().unwrap_or(0),
        if packets > 0 { wall * 1e9 / packets as f64 } else { 0.0 },
        flow["goodput_mbps"],
        flow["bytes_delivered"],
        flow["completion_s"],
    );
}
