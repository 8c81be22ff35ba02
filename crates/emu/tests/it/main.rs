//! The emulator against real stacks in real namespaces. Every test needs root, TUN and the
//! tools it names; where they are missing it says so in one line and passes without running,
//! unless `MULTICONN_REQUIRE_EMU` is set (`make test-emu`, which CI runs as root after
//! installing them), when it fails. Runs are serialised: two real-time runs at once on
//! a small machine would disturb each other's timing, and the clean-up checks compare the
//! machine's namespaces before and after.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use multiconn_emu::sandbox::{on_path, processes_in_netns, unavailable};
use multiconn_emu::{emulate, EmuError, Options};
use multiconn_scenario::{load, Origin};
use serde_json::Value;

static SERIAL: Mutex<()> = Mutex::new(());

/// Why this test cannot run here, if it cannot.
fn skip(tools: &[&str]) -> Option<String> {
    if let Some(why) = unavailable() {
        return Some(why);
    }
    tools.iter().find(|t| !on_path(t)).map(|t| format!("`{t}` is not installed"))
}

/// Skips the test, saying why, when the machine cannot run it; with `MULTICONN_REQUIRE_EMU`
/// set (`make test-emu`), fails instead.
macro_rules! need {
    ($($tool:expr),*) => {
        if let Some(why) = skip(&[$($tool),*]) {
            assert!(std::env::var_os("MULTICONN_REQUIRE_EMU").is_none(), "MULTICONN_REQUIRE_EMU is set but this test cannot run: {why}");
            eprintln!("skipped: {why}");
            return;
        }
    };
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mc-emu-it-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(name: &str, text: &str) -> (Value, PathBuf) {
    let out = out_dir(name);
    let origin = Origin { name: format!("{name}.toml"), base_dir: PathBuf::from(".") };
    let scenario = load(text, &origin, &[]).expect("the test scenario is valid");
    let opts = Options { out: out.clone(), ..Options::default() };
    let summary = emulate(&scenario, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    (summary, out)
}

/// No process is left in any of the run's network namespaces (which the kernel then frees:
/// nothing else holds them).
fn assert_hosts_gone(summary: &Value) {
    let hosts = summary["hosts"].as_array().expect("hosts");
    assert!(!hosts.is_empty());
    for h in hosts {
        let id = h["netns"].as_str().expect("netns");
        assert!(id.starts_with("net:["), "{id}");
        let left = processes_in_netns(id);
        assert!(left.is_empty(), "host {}: processes {left:?} remain in {id}", h["node"]);
    }
}

fn probe() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/udp_probe.py").display().to_string()
}

const TCP_20M: &str = r#"
name = "tcp20"
[run]
duration = "20 s"
seed = 1
[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "10 ms"
queue = "100 packets"
[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
size = "6 MB"
cc = "cubic"
"#;

#[test]
fn kernel_tcp_fills_a_20_mbit_link_and_the_link_delivers_what_the_model_allowed() {
    need!("iperf3");
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (s, _) = run("tcp20", TCP_20M);
    let f = &s["flows"][0];
    assert_eq!(f["client_exit_code"], 0, "{f}");
    let app = &f["app_report"];
    assert_eq!(f["goodput_from"], "application");
    assert_eq!(f["goodput_mbps"], app["goodput_mbps"]);
    assert!(app["bytes"].as_u64().unwrap() >= 6_000_000, "{app}");
    let goodput = app["goodput_mbps"].as_f64().unwrap();
    // Payload over a 20 Mbit/s link of 1500-byte packets: at most 20 × 1448/1500 = 19.3.
    assert!((0.9 * 20.0 * 1448.0 / 1500.0..=20.0).contains(&goodput), "goodput {goodput} Mbit/s");
    // Every byte the link's model delivered was written to the client, nothing else was.
    let link = &s["links"][0];
    assert_eq!(link["direction"], "forward");
    assert_eq!(link["bytes_delivered"], f["ip_bytes_arrived"], "{link} vs {f}");
    // ...and never more than its rate allows over the run.
    let capacity = 20e6 / 8.0 * s["emulated_time_s"].as_f64().unwrap();
    assert!(link["bytes_delivered"].as_f64().unwrap() <= capacity, "{link}");
    // The transfer on the wire is iperf3's data connection alone (not its control
    // connection): it starts after the client and ends before the client exits, and it
    // covers iperf3's own data time plus the data connection's handshake.
    let t = &f["transfer"];
    assert_eq!(t["connections"], 1, "{t}");
    let secs = |v: &Value| v.as_f64().unwrap();
    assert!(secs(&t["first_packet_s"]) > secs(&f["client_started_s"]), "{f}");
    assert!(secs(&t["seconds"]) < secs(&f["completion_s"]), "{f}");
    assert!(secs(&t["seconds"]) >= secs(&app["seconds"]) && secs(&t["seconds"]) < secs(&app["seconds"]) + 0.2, "{f}");
    assert_hosts_gone(&s);
}

#[test]
fn kernel_tcp_with_ecn_is_marked_by_codel_instead_of_dropped() {
    need!("iperf3");
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = TCP_20M
        .replace("queue = \"100 packets\"", "queue = \"1000 packets\"\naqm = { model = \"codel\", ecn = true }")
        .replace("cc = \"cubic\"", "cc = \"cubic\"\necn = true");
    let (s, _) = run("tcp-ecn", &text);
    let f = &s["flows"][0];
    assert_eq!(f["client_exit_code"], 0, "{f}");
    let aqm = &s["links"][0]["aqm"];
    // The kernels negotiated ECN (tcp_ecn = 1 in both namespaces) and sent new data ECT(0):
    // CoDel marked it, and the bytes the client read carried CE (the real header was rewritten).
    let marks = aqm["ecn_marks"].as_u64().unwrap();
    assert!(marks > 0, "{aqm}");
    assert!(aqm["early_drops"].as_u64().unwrap() < marks, "{aqm}");
    assert!(f["app_report"]["goodput_mbps"].as_f64().unwrap() > 0.8 * 20.0 * 1448.0 / 1500.0, "{f}");
    assert_hosts_gone(&s);
}

/// A vehicle's uplink (5 Mbit/s) and downlink (20 Mbit/s) to a server.
const UPLOAD: &str = r#"
name = "upload"
[run]
duration = "20 s"
seed = 1
[[link]]
name = "radio"
between = ["vehicle", "server"]
delay = "15 ms"
queue = "100 packets"
forward = { rate = "5 Mbit/s" }
reverse = { rate = "20 Mbit/s" }
[[flow]]
name = "up"
from = "vehicle"
to = "server"
direction = "up"
transport = "tcp"
app = "bulk"
size = "2 MB"
cc = "cubic"
"#;

#[test]
fn kernel_tcp_uploads_from_the_vehicle_over_its_uplink() {
    need!("iperf3");
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (s, out) = run("upload", UPLOAD);
    let f = &s["flows"][0];
    assert_eq!(f["client_exit_code"], 0, "{f}");
    // iperf3's client ran at the vehicle and sent (no -R): the 2 MB crossed the 5 Mbit/s
    // uplink, not the 20 Mbit/s downlink.
    // iperf3's -n counts what its client wrote, and its report gives what the server had
    // received when the client stopped: the last socket buffers' worth may be missing.
    let app = &f["app_report"];
    let received = app["bytes"].as_u64().unwrap();
    assert!(received >= 1_500_000, "{app}");
    let goodput = app["goodput_mbps"].as_f64().unwrap();
    assert!((0.8 * 5.0 * 1448.0 / 1500.0..=5.0).contains(&goodput), "goodput {goodput} Mbit/s");
    let up = s["links"].as_array().unwrap().iter().find(|l| l["from"] == "vehicle").unwrap();
    let down = s["links"].as_array().unwrap().iter().find(|l| l["from"] == "server").unwrap();
    assert!(up["bytes_delivered"].as_u64().unwrap() > received, "{up}");
    assert!(down["bytes_delivered"].as_u64().unwrap() < 500_000, "only ACKs come down: {down}");
    let client_log = std::fs::read_to_string(out.join("flows/up/client.log")).unwrap_or_default();
    assert!(!client_log.contains("Reverse mode"), "the client sent: {client_log}");
    assert_hosts_gone(&s);
}

#[test]
fn an_upload_with_a_stack_that_only_downloads_is_refused() {
    let text = UPLOAD.replace("transport = \"tcp\"", "transport = \"quic\"").replace("cc = \"cubic\"", "cc = \"cubic\"\n[flow.emulate]\nstack = \"ngtcp2\"");
    let origin = Origin { name: "up.toml".into(), base_dir: PathBuf::from(".") };
    let scenario = load(&text, &origin, &[]).expect("valid");
    let opts = Options { out: out_dir("up-refused"), ..Options::default() };
    let e = emulate(&scenario, &opts).expect_err("refused").to_string();
    assert!(e.contains("flow \"up\"") && e.contains("direction = \"up\"") && e.contains("kernel-tcp"), "{e}");
}

#[test]
fn a_stack_added_as_one_row_and_one_launcher_file_runs_a_download() {
    // The test-only stack (feature test-stack): its row in the scenario crate's table and its
    // launcher, stacks/test_python_tcp.rs, are all it took.
    need!("python3");
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = TCP_20M.replace("size = \"6 MB\"", "size = \"3 MB\"").replace("cc = \"cubic\"", "cc = \"cubic\"\n[flow.emulate]\nstack = \"test-python-tcp\"");
    let (s, _out) = run("test-stack", &text);
    let f = &s["flows"][0];
    assert_eq!(f["stack"], "test-python-tcp", "{f}");
    assert_eq!(f["client_exit_code"], 0, "{f}");
    assert_eq!(f["app_report"]["bytes"], 3_000_000, "{f}");
    // 3 MB at 20 Mbit/s takes at least 1.2 s; the report says so.
    let seconds = f["app_report"]["seconds"].as_f64().unwrap();
    assert!((1.2..10.0).contains(&seconds), "{f}");
    assert_hosts_gone(&s);
    // And the table refuses what its row says the stack cannot do, before anything starts.
    let bbr = text.replace("cc = \"cubic\"", "cc = \"bbr\"");
    let scenario = load(&bbr, &Origin { name: "bbr.toml".into(), base_dir: PathBuf::from(".") }, &[]).expect("valid");
    let e = emulate(&scenario, &Options { out: out_dir("test-stack-bbr"), ..Options::default() }).expect_err("refused").to_string();
    assert!(e.contains("test-python-tcp offers newreno, cubic, not cc = \"bbr\""), "{e}");
}

#[test]
fn a_controller_the_stacks_row_does_not_offer_is_refused_before_anything_starts() {
    // aioquic's row offers newreno and cubic: bbr is refused, naming what it offers.
    let text = TCP_20M.replace("transport = \"tcp\"", "transport = \"quic\"").replace("cc = \"cubic\"", "cc = \"bbr\"\n[flow.emulate]\nstack = \"aioquic\"");
    let origin = Origin { name: "cc.toml".into(), base_dir: PathBuf::from(".") };
    let scenario = load(&text, &origin, &[]).expect("valid");
    let opts = Options { out: out_dir("cc-refused"), ..Options::default() };
    let e = emulate(&scenario, &opts).expect_err("refused").to_string();
    assert!(e.contains("aioquic offers newreno, cubic, not cc = \"bbr\""), "{e}");
}

#[test]
fn ecn_on_a_stack_that_cannot_switch_it_is_refused() {
    let text = TCP_20M.replace("transport = \"tcp\"", "transport = \"quic\"").replace("cc = \"cubic\"", "cc = \"cubic\"\necn = true\n[flow.emulate]\nstack = \"aioquic\"");
    let origin = Origin { name: "ecn.toml".into(), base_dir: PathBuf::from(".") };
    let scenario = load(&text, &origin, &[]).expect("valid");
    let opts = Options { out: out_dir("ecn-refused"), ..Options::default() };
    let e = emulate(&scenario, &opts).expect_err("refused").to_string();
    assert!(e.contains("ecn = true can be switched on only for the kernel stacks"), "{e}");
}

#[test]
fn a_constant_delay_link_adds_its_delay_to_a_measured_rtt() {
    need!("python3");
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = format!(
        r#"
name = "rtt"
[run]
duration = "10 s"
[[link]]
name = "wan"
between = ["server", "client"]
rate = "1 Gbit/s"
delay = "25 ms"
queue = "1000 packets"
[[flow]]
name = "ping"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "1 Mbit/s"
start = "1 s"
[flow.emulate]
server = "python3 {probe} server {{server_addr}} 5300"
client = "python3 {probe} client ping {{server_addr}} 5300 30 {{out}}/rtt.json"
"#,
        probe = probe()
    );
    let (s, out) = run("rtt", &text);
    assert_eq!(s["flows"][0]["client_exit_code"], 0);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(out.join("flows/ping/rtt.json")).unwrap()).unwrap();
    let rtts: Vec<f64> = r["rtts_ms"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert!(rtts.len() >= 25, "{rtts:?}");
    let min = rtts.iter().copied().fold(f64::INFINITY, f64::min);
    // 2 × 25 ms of propagation; serialisation at 1 Gbit/s is microseconds.
    assert!((min - 50.0).abs() < 1.0, "min RTT {min} ms, expected 50 ± 1");
    assert_hosts_gone(&s);
}

fn split_scenario(reordering: bool) -> String {
    format!(
        r#"
name = "split"
[run]
duration = "10 s"
[[link]]
name = "lte"
between = ["server", "client"]
rate = "50 Mbit/s"
delay = "30 ms"
queue = "1000 packets"
[[link]]
name = "nr"
between = ["server", "client"]
rate = "50 Mbit/s"
delay = "5 ms"
queue = "1000 packets"
[[split]]
name = "dc"
legs = ["lte", "nr"]
policy = {{ model = "batch", size = 10, share = 0.5 }}
reordering = {reordering}
t_reordering = "200 ms"
[[flow]]
name = "seq"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "1 Mbit/s"
start = "1 s"
route = ["dc"]
[flow.emulate]
server = "python3 {probe} server {{server_addr}} 5300"
client = "python3 {probe} client seq {{server_addr}} 5300 400 {{out}}/seq.json"
"#,
        probe = probe()
    )
}

#[test]
fn a_pdcp_split_delivers_in_order_with_reordering_and_out_of_order_without() {
    need!("python3");
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut seen = Vec::new();
    for reordering in [true, false] {
        let (s, out) = run(&format!("split-{reordering}"), &split_scenario(reordering));
        let r: Value = serde_json::from_str(&std::fs::read_to_string(out.join("flows/seq/seq.json")).unwrap()).unwrap();
        assert_eq!(r["received"], 400, "reordering {reordering}: {r}");
        seen.push(r["out_of_order"].as_u64().unwrap());
        assert_hosts_gone(&s);
    }
    // Batches of 10 alternate between a 30 ms and a 5 ms leg: without reordering, later
    // batches overtake earlier ones at the receiver.
    assert_eq!(seen[0], 0, "with reordering: {} datagrams out of order", seen[0]);
    assert!(seen[1] >= 50, "without reordering only {} datagrams out of order", seen[1]);
}

#[test]
fn kernel_mptcp_uses_both_paths_and_moves_to_the_other_when_one_goes_down() {
    need!("iperf3", "mptcpize");
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = r#"
name = "mptcp"
[run]
duration = "10 s"
bin = "1 s"
[[link]]
name = "a"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "100 packets"
[[link]]
name = "b"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "100 packets"
down = [["4 s", "10 s"]]
[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
profile = "linux-mptcp-5.15"
paths = [["a"], ["b"]]
"#;
    let (s, out) = run("mptcp", text);
    let csv = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    let (time, kind, path, throughput) = (col("time_s"), col("kind"), col("path"), col("throughput_mbps"));
    // Per path, per 1 s bin: Mbit/s.
    let mut per_path = [[0.0f64; 10]; 2];
    for line in csv.lines().skip(1) {
        let c: Vec<&str> = line.split(',').collect();
        if c[kind] != "path" {
            continue;
        }
        let (t, p, mbps) = (c[time].parse::<f64>().unwrap() as usize, c[path].parse::<usize>().unwrap(), c[throughput].parse::<f64>().unwrap());
        if t < 10 {
            per_path[p][t] = mbps;
        }
    }
    let mean = |p: usize, r: std::ops::Range<usize>| per_path[p][r.clone()].iter().sum::<f64>() / r.len() as f64;
    assert!(mean(0, 1..4) > 5.0 && mean(1, 1..4) > 5.0, "both paths carry data before the outage: {per_path:?}");
    assert!(mean(1, 5..9) < 0.01, "path b is down: {per_path:?}");
    // Linux reinjects what was in flight on b only once b's subflow times out (its RTO, backed
    // off): up to two seconds with little progress, seen once in a CI run (0.55 Mbit/s in the
    // bin after the outage's first). From then on path a carries the transfer at its rate.
    assert!(mean(0, 6..10) > 8.0, "path a keeps the transfer going at its rate: {per_path:?}");
    // Both subflows carried data, so the transfer counts both.
    assert_eq!(s["flows"][0]["transfer"]["connections"], 2, "{}", s["flows"][0]);
    assert_hosts_gone(&s);
}

#[test]
fn a_failing_client_ends_the_run_with_its_exit_code_and_leaves_nothing() {
    need!();
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = r#"
name = "fails"
[run]
duration = "30 s"
[[link]]
name = "l"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "5 ms"
queue = "100 packets"
[[flow]]
name = "broken"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "1 Mbit/s"
[flow.emulate]
server = "sleep 1000"
client = "echo failing on purpose >&2; exit 3"
"#;
    let started = Instant::now();
    let (s, _) = run("fails", text);
    assert_eq!(s["flows"][0]["client_exit_code"], 3);
    assert_eq!(s["stopped_by"], "all clients exited");
    assert!(started.elapsed() < Duration::from_secs(20), "the run did not wait for its 30 s");
    assert_hosts_gone(&s);
}

/// Starts `multiconn-emu` on a 60 s scenario of idle programs in `dir`; returns it once both
/// hosts' servers run, with the hosts' network namespaces.
fn start_long_run(dir: &Path) -> (std::process::Child, Vec<String>) {
    std::fs::create_dir_all(dir).unwrap();
    let scenario = dir.join("long.toml");
    std::fs::write(
        &scenario,
        r#"
name = "long"
[run]
duration = "60 s"
[[link]]
name = "l"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "5 ms"
queue = "100 packets"
[[flow]]
name = "idle"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "1 Mbit/s"
[flow.emulate]
server = "sleep 1000"
client = "sleep 1000"
"#,
    )
    .unwrap();
    // Progress goes to a file (a pipe closed by the test would break the emulator's writes).
    let log = dir.join("emu.log");
    let emu = Command::new(env!("CARGO_BIN_EXE_multiconn-emu"))
        .arg(&scenario)
        .arg("--out")
        .arg(dir.join("out"))
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("servers ready") {
            break text;
        }
        assert!(Instant::now() < deadline, "the servers did not start: {text}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let netns: Vec<String> = text.split_whitespace().filter(|w| w.starts_with("net:[")).map(String::from).collect();
    assert_eq!(netns.len(), 2, "two hosts announced");
    std::thread::sleep(Duration::from_millis(300));
    for id in &netns {
        assert!(!processes_in_netns(id).is_empty(), "host {id} runs before the kill");
    }
    (emu, netns)
}

#[test]
fn kill_9_of_the_emulator_leaves_no_namespace_or_process() {
    need!();
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("kill9");
    let (mut emu, netns) = start_long_run(&dir);
    emu.kill().unwrap(); // SIGKILL
    emu.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<i32> = netns.iter().flat_map(|id| processes_in_netns(id)).collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "processes {left:?} outlived the emulator");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_link_faster_than_the_emulator_keeps_up_with_is_refused() {
    let text = TCP_20M.replace("20 Mbit/s", "5 Gbit/s");
    let origin = Origin { name: "fast.toml".into(), base_dir: PathBuf::from(".") };
    let scenario = load(&text, &origin, &[]).unwrap();
    let e = emulate(&scenario, &Options { out: out_dir("fast"), ..Options::default() }).unwrap_err();
    assert!(matches!(e, EmuError::Refused(_)), "{e}");
    assert!(e.contains("bottleneck") && e.contains("5000 Mbit/s") && e.contains("--max-rate"), "{e}");
}

#[test]
fn links_that_could_hold_more_memory_than_allowed_are_refused() {
    let text = TCP_20M.replace("queue = \"100 packets\"", "queue = \"1 GB\"");
    let origin = Origin { name: "big.toml".into(), base_dir: PathBuf::from(".") };
    let scenario = load(&text, &origin, &[]).unwrap();
    let e = emulate(&scenario, &Options { out: out_dir("big"), ..Options::default() }).unwrap_err();
    assert!(matches!(e, EmuError::Refused(_)), "{e}");
    assert!(e.contains("link \"bottleneck\" (forward)") && e.contains("256 MiB") && e.contains("queues"), "{e}");
}

#[test]
fn tunnels_are_refused_before_anything_is_created() {
    let text = format!(
        "{}[[flow]]\nname = \"proxy\"\nfrom = \"server\"\nto = \"client\"\ntransport = \"quic\"\napp = \"tunnel\"\n",
        TCP_20M.replace("cc = \"cubic\"", "cc = \"cubic\"\npacket_size = \"1400 B\"\ntunnel = \"proxy\"")
    );
    let origin = Origin { name: "tunnel.toml".into(), base_dir: PathBuf::from(".") };
    let scenario = load(&text, &origin, &[]).unwrap();
    let out = out_dir("tunnel");
    let e = emulate(&scenario, &Options { out: out.clone(), ..Options::default() }).unwrap_err();
    assert!(matches!(e, EmuError::Refused(_)), "{e}");
    assert!(e.contains("flow \"dl\"") && e.contains("does not run tunnels"), "{e}");
    assert!(!out.exists(), "nothing written: {}", out.display());
}

#[test]
fn a_flow_no_stack_fits_is_refused_with_a_hint() {
    let text = TCP_20M.replace("transport = \"tcp\"", "transport = \"udp\"").replace("size = \"6 MB\"\ncc = \"cubic\"", "size = \"6 MB\"");
    let origin = Origin { name: "udp.toml".into(), base_dir: PathBuf::from(".") };
    let scenario = load(&text, &origin, &[]).unwrap();
    if unavailable().is_some() {
        return; // refused earlier, for want of root
    }
    let e = emulate(&scenario, &Options { out: out_dir("udp"), ..Options::default() }).unwrap_err();
    assert!(matches!(e, EmuError::Refused(_)), "{e}");
    assert!(e.contains("flow \"dl\"") && e.contains("[flow.emulate]"), "{e}");
}

#[test]
fn ctrl_c_stops_the_programs_writes_the_results_and_leaves_nothing() {
    need!();
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("sigint");
    let (mut emu, netns) = start_long_run(&dir);
    // SAFETY: plain syscall on the child we started.
    unsafe { libc::kill(emu.id() as i32, libc::SIGINT) };
    let status = emu.wait().unwrap();
    assert!(status.success(), "{status}");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap()).unwrap();
    assert_eq!(s["stopped_by"], "interrupted");
    assert!(s["emulated_time_s"].as_f64().unwrap() < 30.0);
    for id in &netns {
        assert!(processes_in_netns(id).is_empty(), "processes remain in {id}");
    }
}

fn two_path_quic(scheduler: &str, size: &str) -> String {
    format!(
        r#"
name = "tquic"
[run]
duration = "30 s"
[[link]]
name = "a"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "100 packets"
[[link]]
name = "b"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "100 packets"
[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "{size}"
cc = "cubic"
paths = [["a"], ["b"]]
[flow.multipath]
scheduler = "{scheduler}"
"#
    )
}

/// Bytes each link's forward direction delivered.
fn forward_bytes(s: &Value) -> Vec<f64> {
    s["links"].as_array().unwrap().iter().filter(|l| l["direction"] == "forward").map(|l| l["bytes_delivered"].as_f64().unwrap()).collect()
}

#[test]
fn tquic_spreads_a_download_over_both_paths_with_minrtt_and_duplicates_it_with_redundant() {
    need!("tquic_server", "tquic_client", "openssl");
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (s, _) = run("tquic-minrtt", &two_path_quic("minrtt", "8 MB"));
    let f = &s["flows"][0];
    assert_eq!(f["stack"], "tquic");
    assert_eq!(f["client_exit_code"], 0, "{f}");
    let bytes = forward_bytes(&s);
    let total: f64 = bytes.iter().sum();
    assert!(total >= 8e6, "{bytes:?}");
    assert!(bytes.iter().all(|b| *b > 0.3 * total), "min-RTT uses both 10 Mbit/s paths: {bytes:?}");
    // Two 10 Mbit/s paths: faster than either alone could be.
    assert!(f["goodput_mbps"].as_f64().unwrap() > 11.0, "{f}");
    assert_hosts_gone(&s);

    let (s, _) = run("tquic-redundant", &two_path_quic("redundant", "3 MB"));
    assert_eq!(s["flows"][0]["client_exit_code"], 0);
    let bytes = forward_bytes(&s);
    assert!(bytes.iter().all(|b| *b >= 0.9 * 3e6), "redundant sends everything on both paths: {bytes:?}");
    assert_hosts_gone(&s);
}
