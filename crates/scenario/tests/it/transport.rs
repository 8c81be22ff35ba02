//! End-to-end behaviour of the TCP and QUIC models inside the simulator, checked against
//! theory: the Mathis et al. square-root law, link utilization, Jain's fairness index of
//! identical flows, CUBIC vs NewReno recovery on a high-BDP path, the receiving host's UDP
//! buffer, handshake timing and determinism.

use crate::common;

use common::{load_with, run};
use multiconn_scenario::{Column, Simulation};
use serde_json::Value;

fn flow<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["flows"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("flow {name}"))
}

fn link<'a>(summary: &'a Value, name: &str, direction: &str) -> &'a Value {
    summary["links"].as_array().unwrap().iter().find(|l| l["name"] == name && l["direction"] == direction).unwrap()
}

/// One link between server and client; `flows` TOML appended.
fn path(rate: &str, one_way: &str, queue: &str, loss: &str, duration: &str, flows: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"

[[link]]
name = "path"
between = ["server", "client"]
rate = "{rate}"
delay = "{one_way}"
queue = "{queue}"
[link.forward]
loss = "{loss}"
{flows}"#
    )
}

fn bulk_flow(name: &str, transport: &str, cc: &str) -> String {
    format!(
        r#"
[[flow]]
name = "{name}"
from = "server"
to = "client"
transport = "{transport}"
app = "bulk"
cc = "{cc}"
"#
    )
}

fn mathis_mbps(mss: f64, rtt_s: f64, p: f64) -> f64 {
    mss * 8.0 / rtt_s * (3.0 / (2.0 * p)).sqrt() / 1e6
}

#[test]
fn newreno_goodput_under_random_loss_follows_the_mathis_law() {
    // 40 ms RTT, 200 Mbit/s (never the limit), loss on the data direction only.
    for transport in ["tcp", "quic"] {
        for p in [0.001, 0.005, 0.01, 0.02] {
            let text = path("200 Mbit/s", "20 ms", "10000 packets", &format!("{} %", p * 100.0), "120 s", &bulk_flow("f", transport, "newreno"));
            let (s, _) = run(&text, Some(7));
            let f = flow(&s, "f");
            let goodput = f["goodput_mbps"].as_f64().unwrap();
            // Payload per full packet: TCP MSS 1448 (timestamps); QUIC datagram 1472 less its
            // short header, AEAD tag and STREAM frame header.
            let mss = if transport == "tcp" { 1448.0 } else { 1440.0 };
            let expect = mathis_mbps(mss, 0.040, p);
            let ratio = goodput / expect;
            assert!((0.75..=1.25).contains(&ratio), "{transport} p={p}: goodput {goodput:.3} Mbit/s vs Mathis {expect:.3} (ratio {ratio:.3})");
        }
    }
}

#[test]
fn one_flow_fills_a_bottleneck_with_a_bdp_queue() {
    // 20 Mbit/s, 40 ms RTT: BDP = 100 kB ≈ 67 packets of 1500 B.
    for transport in ["tcp", "quic"] {
        for cc in ["newreno", "cubic"] {
            let text = path("20 Mbit/s", "20 ms", "67 packets", "0 %", "60 s", &bulk_flow("f", transport, cc));
            let (s, _) = run(&text, None);
            let u = link(&s, "path", "forward")["utilization"].as_f64().unwrap();
            assert!(u >= 0.95, "{transport}/{cc}: utilization {u:.4}");
        }
    }
}

#[test]
fn two_identical_flows_share_a_bottleneck_fairly() {
    for (a, b) in [("tcp", "tcp"), ("quic", "quic"), ("tcp", "quic")] {
        let flows = bulk_flow("a", a, "newreno") + &bulk_flow("b", b, "newreno");
        let text = path("20 Mbit/s", "20 ms", "67 packets", "0 %", "60 s", &flows);
        let (s, _) = run(&text, None);
        let jfi = s["jain_fairness"].as_f64().unwrap();
        let ga = flow(&s, "a")["goodput_mbps"].as_f64().unwrap();
        let gb = flow(&s, "b")["goodput_mbps"].as_f64().unwrap();
        assert!(jfi >= 0.98, "{a}-{b}: JFI {jfi:.4} ({ga:.2} vs {gb:.2} Mbit/s)");
        assert!(ga + gb > 0.9 * 20.0 * 1440.0 / 1500.0, "{a}-{b}: together {:.2} Mbit/s", ga + gb);
    }
}

/// Mean throughput (Mbit/s) of flow `name` over bins in [from_s, to_s).
fn mean_throughput(out: &multiconn_scenario::RunOutput, name: &str, from_s: f64, to_s: f64) -> f64 {
    let col = |n: &str| out.columns.iter().find(|(c, _)| c == n).map(|(_, v)| v).unwrap();
    let (Column::F64(time), Column::Str(names), Column::F64(mbps)) = (col("time_s"), col("name"), col("throughput_mbps")) else { panic!("column types") };
    let picked: Vec<f64> = (0..time.len()).filter(|&i| names[i] == name && time[i] >= from_s && time[i] < to_s).map(|i| mbps[i]).collect();
    picked.iter().sum::<f64>() / picked.len() as f64
}

#[test]
fn cubic_recovers_faster_than_newreno_on_a_high_bdp_path() {
    // 100 Mbit/s, 100 ms RTT (BDP ≈ 833 packets) and a 100-packet queue: after the first loss
    // the window must grow back by hundreds of packets.
    let mut means = Vec::new();
    for cc in ["newreno", "cubic"] {
        let text = path("100 Mbit/s", "50 ms", "100 packets", "0 %", "40 s", &bulk_flow("f", "tcp", cc));
        let (_, out) = run(&text, None);
        means.push(mean_throughput(&out, "f", 5.0, 40.0));
    }
    let (reno, cubic) = (means[0], means[1]);
    assert!(cubic > 1.15 * reno, "cubic {cubic:.2} Mbit/s vs newreno {reno:.2} Mbit/s");
}

#[test]
fn a_slow_reader_overflows_the_default_udp_buffer_and_a_larger_one_fixes_it() {
    // The reader (36 Mbit/s) is the bottleneck, so the queue builds in the socket. The default
    // buffer holds 92 datagrams, less than the 100 ms path's BDP (≈ 300 datagrams): each
    // overflow halves the window below the BDP and the reader starves for a while.
    let base = path("40 Mbit/s", "50 ms", "100 packets", "0 %", "120 s", "")
        + r#"
[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "100 MB"
[flow.receiver]
read_rate = "36 Mbit/s"
"#;
    let (small, _) = run(&base, None);
    let big_text = base.replace("read_rate = \"36 Mbit/s\"", "read_rate = \"36 Mbit/s\"\nudp_rcvbuf = \"25 MB\"\nrmem_max = \"25 MB\"");
    let (big, _) = run(&big_text, None);
    let (fs, fb) = (flow(&small, "dl"), flow(&big, "dl"));
    assert!(fs["drops"]["udp_buffer"].as_u64().unwrap() > 0, "default buffer: {fs}");
    assert_eq!(fb["drops"]["udp_buffer"], 0, "25 MB buffer: {fb}");
    assert_eq!(fs["bytes_delivered"], 100_000_000);
    assert_eq!(fb["bytes_delivered"], 100_000_000);
    let (gs, gb) = (fs["goodput_mbps"].as_f64().unwrap(), fb["goodput_mbps"].as_f64().unwrap());
    assert!(gb > gs * 1.04, "goodput {gs:.2} -> {gb:.2} Mbit/s");
    assert_eq!(fb["udp_socket"]["capacity_bytes"], 50_000_000);
}

#[test]
fn handshakes_take_one_rtt_for_quic_zero_with_resumption_and_two_for_tcp() {
    // 10 ms each way at 10 Gbit/s: serialization adds at most a few microseconds.
    let run_one = |transport: &str, resume: bool| {
        let mut flows = bulk_flow("f", transport, "newreno").replace("app = \"bulk\"", "app = \"bulk\"\nsize = \"10 kB\"");
        if resume {
            flows.push_str("resume = true\n");
        }
        let (s, _) = run(&path("10 Gbit/s", "10 ms", "1000 packets", "0 %", "5 s", &flows), None);
        let f = flow(&s, "f").clone();
        (f["handshake_s"].as_f64().unwrap(), f["first_byte_s"].as_f64().unwrap())
    };
    let slack = 50e-6;
    let (quic_hs, quic_fb) = run_one("quic", false);
    let (zero_hs, zero_fb) = run_one("quic", true);
    let (tcp_hs, tcp_fb) = run_one("tcp", false);
    assert!((quic_hs - 0.020).abs() < slack, "quic handshake {quic_hs}");
    assert!(zero_hs.abs() < slack, "0-RTT handshake {zero_hs}");
    assert!((tcp_hs - 0.040).abs() < slack, "tcp handshake {tcp_hs}");
    // The response arrives one RTT after the request could be sent.
    for (hs, fb) in [(quic_hs, quic_fb), (zero_hs, zero_fb), (tcp_hs, tcp_fb)] {
        assert!((fb - hs - 0.020).abs() < slack, "first byte {fb} after handshake {hs}");
    }
}

#[test]
fn zero_rtt_saves_a_whole_rtt_only_when_a_token_lifts_the_amplification_limit() {
    // 64 kB over 10 Gbit/s with 10 ms each way: the transfer is a few round trips of slow
    // start. With 0-RTT the request arrives with the client's first Initial; without an
    // address token the server may send only 3x the 1200 bytes it received until the
    // handshake completes (RFC 9000 §8.1), so most of its first window waits one RTT anyway.
    let completion = |extra: &str| {
        let flows = bulk_flow("f", "quic", "newreno").replace("app = \"bulk\"", &format!("app = \"bulk\"\nsize = \"64 kB\"\n{extra}"));
        let (s, _) = run(&path("10 Gbit/s", "10 ms", "1000 packets", "0 %", "5 s", &flows), None);
        flow(&s, "f")["completion_s"].as_f64().unwrap()
    };
    let one_rtt = completion("");
    let zero_rtt = completion("resume = true");
    let zero_rtt_token = completion("resume = true\naddress_token = true");
    // With a token the data leaves one RTT earlier; the server's handshake packets share its
    // first window and its pacer has no RTT sample yet, so the gain is a little under an RTT.
    let gain = one_rtt - zero_rtt_token;
    assert!((0.015..=0.020).contains(&gain), "1-RTT {one_rtt:.4} s vs 0-RTT with token {zero_rtt_token:.4} s");
    // Without one, the 3600 bytes the server may send carry its handshake and two packets of
    // data: the last byte arrives at about the same time as with a full handshake.
    assert!(one_rtt - zero_rtt < 0.002, "1-RTT {one_rtt:.4} s vs 0-RTT without token {zero_rtt:.4} s");
}

#[test]
fn transport_runs_are_deterministic_and_depend_on_the_seed() {
    let text = path("20 Mbit/s", "20 ms", "67 packets", "1 %", "10 s", &(bulk_flow("a", "tcp", "cubic") + &bulk_flow("b", "quic", "newreno")));
    let (s1, o1) = run(&text, Some(3));
    let (s2, o2) = run(&text, Some(3));
    let (s3, _) = run(&text, Some(4));
    assert_eq!(s1, s2);
    // Debug text compares NaN cells (transport columns of link rows) as equal.
    assert_eq!(format!("{:?}", o1.columns), format!("{:?}", o2.columns));
    assert_ne!(flow(&s1, "a")["bytes_delivered"], flow(&s3, "a")["bytes_delivered"]);
}

#[test]
fn transport_time_series_report_window_rtt_and_retransmissions() {
    let text = path("20 Mbit/s", "20 ms", "67 packets", "1 %", "10 s", &bulk_flow("f", "quic", "newreno"));
    let (s, out) = run(&text, None);
    let col = |n: &str| out.columns.iter().find(|(c, _)| c == n).map(|(_, v)| v.clone()).unwrap();
    let (Column::Str(kind), Column::F64(cwnd), Column::F64(srtt), Column::F64(retx)) = (col("kind"), col("cwnd_bytes"), col("srtt_ms"), col("retransmissions")) else { panic!() };
    let rows: Vec<usize> = (0..kind.len()).filter(|&i| kind[i] == "flow").collect();
    assert!(rows.iter().skip(10).all(|&i| cwnd[i] >= 2.0 * 1200.0 && srtt[i] >= 40.0), "window and RTT present after start");
    let retx_total: f64 = rows.iter().map(|&i| retx[i]).sum();
    assert_eq!(retx_total as u64, flow(&s, "f")["retransmissions"].as_u64().unwrap());
    assert!(retx_total > 0.0);
}

#[test]
fn transport_settings_are_checked_before_the_run() {
    let text = path("20 Mbit/s", "20 ms", "67 packets", "0 %", "10 s", &bulk_flow("f", "quic", "newreno"));
    let bad = [
        (("flow.f.cc", "vegas"), "unknown congestion control \"vegas\""),
        (("flow.f.profile", "quiche"), "unknown profile \"quiche\""),
        (("flow.f.transport", "udp"), "only tcp and quic flows take this setting"),
        (("flow.f.app", "cbr"), "runs over udp only"),
    ];
    for ((k, v), want) in bad {
        let e = load_with(&text, &[(k, v)]).err().unwrap_or_else(|| panic!("{k}={v} should fail")).to_string();
        assert!(e.contains(want), "{k}={v}: {e}");
    }
    let e = load_with(&text, &[("flow.f.receiver.tcp_rmem", "[\"4 kB\", \"128 kB\", \"6 MB\"]")]).unwrap_err().to_string();
    assert!(e.contains("flow.f.receiver.tcp_rmem"), "{e}");
    let sim = Simulation::new(&load_with(&text, &[]).unwrap(), None);
    assert!(sim.is_ok());
}
