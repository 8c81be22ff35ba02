//! The host model (`[flow.host]`, `multiconn_transport::host`): each endpoint's process as a
//! FIFO server of random per-packet CPU time with late timers, the source of run-to-run spread.

use crate::common;
use common::*;

const TCP: &str = r#"
[run]
duration = "30 s"

[[link]]
name = "path"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "20 ms"
queue = "50 packets"

[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "tcp"
profile = "linux-tcp"
cc = "cubic"
app = "bulk"
size = "10 MB"
"#;

fn goodput(summary: &serde_json::Value) -> f64 {
    summary["flows"][0]["goodput_mbps"].as_f64().expect("a goodput")
}

#[test]
fn without_noise_every_seed_gives_the_same_run_and_with_it_they_spread() {
    let plain: Vec<f64> = (1..=4).map(|s| goodput(&run_with(TCP, &[], s))).collect();
    assert!(plain.windows(2).all(|w| w[0] == w[1]), "nothing random without the model: {plain:?}");
    let noisy = [("flow.dl.host.per_packet", "20 us"), ("flow.dl.host.per_packet_cv", "1"), ("flow.dl.host.timer_lateness", "50 us")];
    let spread: Vec<f64> = (1..=4).map(|s| goodput(&run_with(TCP, &noisy, s))).collect();
    let distinct = spread.iter().map(|x| x.to_bits()).collect::<std::collections::BTreeSet<_>>().len();
    assert!(distinct >= 3, "seeds should give different runs: {spread:?}");
    // The same seed again: the same run, to the byte.
    let a = load_with(TCP, &noisy).unwrap();
    assert_eq!(run_checked(&a, Some(3)).summary_json, run_checked(&a, Some(3)).summary_json);
}

#[test]
fn a_constant_cost_per_packet_caps_the_rate_at_one_packet_per_cost() {
    // 1 ms per packet at each end, the same process for what it sends and what it receives:
    // with an ACK every second segment the sender spends 3 ms per two 1500-byte segments
    // (two sent, one ACK read), 8 Mbit/s on the wire, 7.72 Mbit/s of payload, below the
    // 20 Mbit/s link.
    let sets = [("flow.dl.host.per_packet", "1 ms"), ("flow.dl.host.per_packet_cv", "0")];
    let g = goodput(&run_with(TCP, &sets, 1));
    let cap = 2.0 * 1448.0 * 8.0 / 3e-3 / 1e6;
    assert!(g < cap && g > 0.95 * cap, "goodput {g}, cap {cap}");
    let free = goodput(&run_with(TCP, &[], 1));
    assert!(free > 17.0, "without the cost the link is the limit: {free}");
}

#[test]
fn late_timers_alone_slow_a_timer_driven_sender() {
    // QUIC paces from its timer: with timers 2 ms late on average every paced gap grows.
    let quic = TCP.replace("transport = \"tcp\"\nprofile = \"linux-tcp\"", "transport = \"quic\"\nprofile = \"rfc9002\"");
    let on_time = goodput(&run_with(&quic, &[], 1));
    let late = goodput(&run_with(&quic, &[("flow.dl.host.timer_lateness", "2 ms")], 1));
    assert!(late < on_time, "late timers {late} against {on_time}");
}

#[test]
fn bad_host_settings_are_refused_naming_the_field() {
    let e = load_with(TCP, &[("flow.dl.host.per_packet_cv", "-1")]).expect_err("refused").to_string();
    assert!(e.contains("flow.dl.host.per_packet_cv") && e.contains("0 to 10"), "{e}");
    let e = load_with(TCP, &[("flow.dl.host.timer_lateness", "1 s")]).expect_err("refused").to_string();
    assert!(e.contains("flow.dl.host.timer_lateness") && e.contains("100 ms"), "{e}");
    let udp = TCP.replace("transport = \"tcp\"\nprofile = \"linux-tcp\"\ncc = \"cubic\"", "transport = \"udp\"");
    let e = load_with(&udp, &[("flow.dl.host.per_packet", "1 us")]).expect_err("refused").to_string();
    assert!(e.contains("flow.dl.host") && e.contains("only tcp and quic"), "{e}");
}
