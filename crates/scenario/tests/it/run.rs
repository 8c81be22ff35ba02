//! End-to-end runs of whole scenarios: what the links allow is what flows get, and the same
//! seed gives the same bytes.

use crate::common;
use common::*;
use multiconn_scenario::Column;

fn flow<'a>(summary: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    summary["flows"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap()
}

fn link<'a>(summary: &'a serde_json::Value, name: &str, dir: &str) -> &'a serde_json::Value {
    summary["links"].as_array().unwrap().iter().find(|l| l["name"] == name && l["direction"] == dir).unwrap()
}

#[test]
fn a_saturating_source_fills_a_fixed_link() {
    let (s, _) = run(BULK, None);
    let l = link(&s, "bottleneck", "forward");
    let u = l["utilization"].as_f64().unwrap();
    // The link is busy from the first packet; only the final packets in flight are missed.
    assert!(u > 0.999 && u <= 1.0, "utilization {u}");
    // Goodput = 40 Mbit/s x 1472/1500 payload share, minus the 10 ms start-up.
    let g = flow(&s, "bulk")["goodput_mbps"].as_f64().unwrap();
    let expected = 40.0 * 1472.0 / 1500.0;
    assert!((g - expected).abs() / expected < 0.002, "goodput {g} vs {expected}");
    // Back-pressure: the sender never overflows its own first queue.
    assert_eq!(l["drops"]["queue"], 0);
    assert_eq!(s["sim_time_s"], 20.0);
}

#[test]
fn cbr_above_capacity_drops_the_excess_at_the_queue() {
    let text = BULK.replace("app = \"bulk\"", "app = \"cbr\"\nrate = \"50 Mbit/s\"");
    let (s, _) = run(&text, None);
    let f = flow(&s, "bulk");
    let sent = f["bytes_sent"].as_f64().unwrap();
    let delivered = f["bytes_delivered"].as_f64().unwrap();
    // 10 of every 50 Mbit/s are dropped: 20 % of what was sent.
    let lost = 1.0 - delivered / sent;
    assert!((lost - 0.2).abs() < 0.01, "lost share {lost}");
    assert!(f["drops"]["queue"].as_u64().unwrap() > 0);
    assert_eq!(f["drops"]["random_loss"], 0);
}

#[test]
fn sized_flow_completes_at_the_expected_time() {
    // 1 MB of payload in 1472-byte packets at 40 Mbit/s, 10 ms propagation.
    let text = BULK.replace("app = \"bulk\"", "app = \"bulk\"\nsize = \"1 MB\"").replace("duration = \"20 s\"", "");
    let (s, _) = run(&text, None);
    let f = flow(&s, "bulk");
    let packets = (1_000_000f64 / 1472.0).ceil();
    let last_size = 1_000_000.0 - (packets - 1.0) * 1472.0 + 28.0;
    let expected = ((packets - 1.0) * 1500.0 + last_size) * 8.0 / 40e6 + 0.010;
    let got = f["completion_s"].as_f64().unwrap();
    assert!((got - expected).abs() < 1e-6, "completion {got} vs {expected}");
    assert_eq!(f["bytes_delivered"], 1_000_000);
    assert_eq!(s["sim_time_s"].as_f64().unwrap(), got, "the run stops when the flow is done");
}

#[test]
fn two_flows_sharing_a_link_are_fair() {
    let text = format!("{BULK}\n[[flow]]\nname = \"second\"\nfrom = \"server\"\nto = \"client\"\ntransport = \"udp\"\napp = \"bulk\"\n");
    let (s, _) = run(&text, None);
    let j = s["jain_fairness"].as_f64().unwrap();
    assert!(j > 0.9999, "jain {j}");
}

#[test]
fn random_loss_matches_its_rate_end_to_end() {
    let text = BULK.replace("queue = \"100 packets\"", "queue = \"100 packets\"\nloss = \"2 %\"");
    let (s, _) = run(&text, None);
    let f = flow(&s, "bulk");
    let lost = f["drops"]["random_loss"].as_f64().unwrap();
    let total = lost + f["packets_delivered"].as_f64().unwrap();
    let p = lost / total;
    let se = (0.02 * 0.98 / total).sqrt();
    assert!((p - 0.02).abs() < 4.0 * se, "loss {p} over {total}");
}

#[test]
fn down_window_drops_and_recovers() {
    let text = BULK.replace("queue = \"100 packets\"", "queue = \"100 packets\"\ndown = [[\"5 s\", \"7 s\"]]");
    let (s, out) = run(&text, None);
    let l = link(&s, "bottleneck", "forward");
    assert!(l["drops"]["link_down"].as_u64().unwrap() > 0);
    // Two of twenty seconds down: delivered ≈ 18 s worth.
    let u = l["utilization"].as_f64().unwrap();
    assert!((u - 0.9).abs() < 0.005, "utilization {u}");
    // No link bytes in the bins fully inside the window.
    let (times, names, bytes) = columns(&out);
    for i in 0..times.len() {
        if names[i] == "bottleneck" && times[i] >= 5.02 && times[i] < 6.9 {
            assert_eq!(bytes[i], 0, "bytes at {}", times[i]);
        }
    }
}

fn columns(out: &multiconn_scenario::RunOutput) -> (Vec<f64>, Vec<String>, Vec<i64>) {
    let get = |n: &str| out.columns.iter().find(|(c, _)| c == n).map(|(_, v)| v.clone()).unwrap();
    match (get("time_s"), get("name"), get("bytes_delivered")) {
        (Column::F64(t), Column::Str(n), Column::I64(b)) => (t, n, b),
        _ => panic!("unexpected column types"),
    }
}

#[test]
fn same_seed_same_output_different_seed_different_output() {
    let text = BULK.replace("\"10 ms\"", "{ model = \"normal\", mean = \"10 ms\", cv = 0.3, reorder = true }")
        .replace("queue = \"100 packets\"", "queue = \"100 packets\"\nloss = \"1 %\"");
    let (a, out_a) = run(&text, Some(5));
    let (b, out_b) = run(&text, Some(5));
    let (c, out_c) = run(&text, Some(6));
    assert_eq!(a, b);
    // Compared as text so that NaN (queue columns of flows) equals NaN.
    let text = |o: &multiconn_scenario::RunOutput| format!("{:?}", o.columns);
    assert!(text(&out_a) == text(&out_b), "same seed, different time series");
    assert_ne!(a["flows"], c["flows"]);
    assert!(text(&out_a) != text(&out_c), "different seeds, same time series");
    assert!(flow(&a, "bulk")["reordered_packets"].as_u64().unwrap() > 0);
}

#[test]
fn mahimahi_trace_capacity_end_to_end() {
    let Some(traces) = shared_traces() else { return };
    let file = traces.join("mahimahi/ATT-LTE-driving-2016.down");
    let text = BULK
        .replace("\"40 Mbit/s\"", &format!("{{ model = \"mahimahi\", file = \"{}\" }}", file.display()))
        .replace("\"20 s\"", "\"240 s\"")
        .replace("\"100 packets\"", "\"1000 packets\"");
    let (s, _) = run(&text, None);
    let l = link(&s, "bottleneck", "forward");
    let u = l["utilization"].as_f64().unwrap();
    assert!(u > 0.99 && u <= 1.0, "utilization {u}");
    let cap = l["capacity_mbps"].as_f64().unwrap();
    assert!((cap - 4.56).abs() < 0.01, "capacity {cap}");
}

#[test]
fn ucc_trace_capacity_end_to_end() {
    let Some(traces) = shared_traces() else { return };
    let file = traces.join("ucc-5g/5G-production-dataset/Download/Static/B_2020.02.14_13.21.26.csv");
    let text = BULK
        .replace("\"40 Mbit/s\"", &format!("{{ model = \"ucc\", file = \"{}\" }}", file.display()))
        .replace("\"20 s\"", "\"120 s\"")
        .replace("\"100 packets\"", "\"3000 packets\"");
    let (s, _) = run(&text, None);
    let u = link(&s, "bottleneck", "forward")["utilization"].as_f64().unwrap();
    assert!(u > 0.99 && u <= 1.0, "utilization {u}");
}

/// Runs `BULK` for `duration` with `extra` lines added to its link (files in `files`, relative
/// to the scenario); returns the summary and how many events fired.
fn run_bulk_with(tag: &str, duration: &str, extra: &str, files: &[(&str, &str)]) -> (serde_json::Value, u64) {
    let text = BULK.replace("queue = \"100 packets\"", &format!("queue = \"100 packets\"\n{extra}")).replace("duration = \"20 s\"", &format!("duration = \"{duration}\""));
    let dir = std::env::temp_dir().join(format!("multiconn-run-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, content) in files {
        std::fs::write(dir.join(name), content).unwrap();
    }
    let origin = multiconn_scenario::Origin { name: "test.toml".into(), base_dir: dir };
    let scenario = multiconn_scenario::load(&text, &origin, &[]).unwrap();
    let mut sim = multiconn_scenario::Simulation::new(&scenario, Some(1)).unwrap();
    sim.run_to_end();
    assert!(sim.stalled().is_none(), "{:?}", sim.stalled());
    let events = sim.events();
    (serde_json::from_str(&sim.finish().summary_json).unwrap(), events)
}

#[test]
fn a_bulk_udp_flow_into_a_link_that_loses_everything_sends_at_the_line_rate_for_nothing() {
    // The link loses every packet at its door, so its queue never fills and back-pressure
    // never holds the source back: it used to offer packets without end at 0 s (the run
    // ended as stalled). It is paced at the line rate instead, as a real sender is by its
    // interface: one 1500-byte packet per 300 us at 40 Mbit/s, 0 s to 2 s: 6667 packets.
    let cases = [
        ("loss-one", "loss = 1"),
        ("loss-trace-ones", "loss = { model = \"trace\", file = \"all_lost.txt\" }"),
        ("loss-ge-ones", "loss = { model = \"gilbert_elliott\", p = 0.1, r = 0.5, loss_good = 1, loss_bad = 1 }"),
    ];
    for (tag, loss) in cases {
        let (s, events) = run_bulk_with(tag, "2 s", loss, &[("all_lost.txt", "1\n1\n1\n")]);
        assert_eq!(s["sim_time_s"], 2.0, "{tag}");
        let f = flow(&s, "bulk");
        assert_eq!((f["bytes_delivered"].as_u64(), f["goodput_mbps"].as_f64()), (Some(0), Some(0.0)), "{tag}");
        assert_eq!(f["bytes_sent"], 6667 * 1472, "{tag}");
        assert_eq!(link(&s, "bottleneck", "forward")["drops"]["random_loss"], 6667, "{tag}");
        // One wake-up per packet, not a storm.
        assert!(events < 6667 + 100, "{tag}: {events} events");
    }
}

#[test]
fn a_paced_bulk_udp_source_is_quiet_while_its_link_is_down_and_paced_again_after() {
    // Down from 0.5 s to 1 s: no room, so no packets; back up, the source is paced again.
    let (s, _) = run_bulk_with("loss-one-down", "2 s", "loss = 1\ndown = [[\"0.5 s\", \"1 s\"]]", &[]);
    let f = flow(&s, "bulk");
    assert_eq!(f["bytes_delivered"], 0);
    // 0 to 0.5 s: 1667 packets (0, 300 us, ..., 499.8 ms); 1 s to 2 s: 3334.
    assert_eq!(f["bytes_sent"], (1667 + 3334) * 1472);
}

#[test]
fn a_bulk_udp_flow_into_a_link_that_loses_almost_everything_is_paced_after_one_full_burst() {
    // Loss just below 1 is not certain, so the source refills at 0 s as it always does, until
    // the burst reaches its cap of 2 000 000 packets without filling the link (where a run
    // used to end as stalled); then it is paced at the line rate, 3333 packets in the rest
    // of the second. Nothing was queued (a queued packet would restart the refills).
    let (s, _) = run_bulk_with("loss-almost-one", "1 s", "loss = 0.999999999", &[]);
    assert_eq!(s["sim_time_s"], 1.0);
    let f = flow(&s, "bulk");
    assert_eq!(f["bytes_delivered"], 0);
    assert_eq!(f["bytes_sent"], (2_000_000 + 3333) * 1472_u64);
}
