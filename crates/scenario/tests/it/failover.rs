//! Failover of a two-path Multipath QUIC download, per failover profile, end to end: the fast
//! path dies in the middle of the transfer and the time series shows when the application's
//! goodput resumes over the slow path.
//!
//! * **Silent**: the fast path's middle link (neither host's interface) goes down in both
//!   directions from 3 s to 10 s; the hosts learn of it only through the protocol. The profile's
//!   rule then decides: mp-quic and picoquic requeue the path's data in flight at its first PTO,
//!   linux-mptcp at its fourth (PTOs double: 1 + 2 + 4 + 8 = 15 PTO periods after the last
//!   send), xquic never (it only stops scheduling new data there after 2 PTOs), so its goodput
//!   resumes only once the link is back.
//! * **Hinted**: the fast path's first and last links (both hosts' interfaces) go down for good
//!   at 3 s; every profile requeues at once.
//!
//! The bounds are computed from the links: path 0's RTT lies between its propagation and
//! serialization time and that plus a full queue on its bottleneck, which bounds smoothed RTT
//! and RTT variation and so the PTO period `srtt + max(4·rttvar, 1 ms) + max_ack_delay`
//! (RFC 9002 §6.2.1); the data requeued then crosses path 1 (one-way delay plus at most a full
//! queue). Goodput is binned per 10 ms.

use crate::common;
use common::*;
use multiconn_scenario::{Column, RunOutput};

/// Path 0 (fast): 1 Gbit/s access links around a 10 Mbit/s, 16 ms core link with a short queue,
/// 20 ms one way. Path 1 (slow): one 10 Mbit/s, 50 ms link.
const TWO_PATHS: &str = r#"
[run]
duration = "60 s"
bin = "10 ms"

[[link]]
name = "fast_up"
between = ["server", "gw1"]
rate = "1 Gbit/s"
delay = "2 ms"
queue = "1000 packets"
UP_DOWN

[[link]]
name = "fast_core"
between = ["gw1", "gw2"]
rate = "10 Mbit/s"
delay = "16 ms"
queue = "5 packets"
CORE_DOWN

[[link]]
name = "fast_down"
between = ["gw2", "client"]
rate = "1 Gbit/s"
delay = "2 ms"
queue = "1000 packets"
UP_DOWN

[[link]]
name = "slow"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "50 ms"
queue = "25 packets"

[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "20 MB"
cc = "newreno"
paths = [["fast_up", "fast_core", "fast_down"], ["slow"]]

[flow.multipath]
scheduler = "minrtt"
failover = "PROFILE"
"#;

const SIZE: u64 = 20_000_000;
const OUTAGE: f64 = 3.0;
/// End of the silent outage.
const BACK: f64 = 10.0;
const BIN: f64 = 0.010;
/// 1500 B at 10 Mbit/s.
const SER: f64 = 0.0012;
/// Path 0's smallest RTT: 2 × 20 ms of propagation and one 10 Mbit/s serialization (the
/// 1 Gbit/s hops and the ACK's serialization are below 0.1 ms).
const R_MIN: f64 = 0.040 + SER;
/// Path 0's largest RTT: a full core queue (5 packets) and an ACK held for the second packet.
const R_MAX: f64 = R_MIN + 5.0 * SER + 2.0 * SER;
/// The rfc9002 profile: max_ack_delay 25 ms, kGranularity 1 ms.
const MAX_ACK_DELAY: f64 = 0.025;
const PTO_MIN: f64 = R_MIN + 0.001 + MAX_ACK_DELAY;
/// rttvar is a running mean of |srtt − sample| ≤ R_MAX − R_MIN.
const PTO_MAX: f64 = R_MAX + 4.0 * (R_MAX - R_MIN) + MAX_ACK_DELAY;
/// Path 1: one-way delay and serialization; a full queue (25 packets).
const OWD1: f64 = 0.050 + SER;
const Q1: f64 = 25.0 * SER;

fn scenario(profile: &str, silent: bool) -> String {
    let (up, core) = if silent { ("", "down = [[\"3 s\", \"10 s\"]]") } else { ("down = [[\"3 s\", \"100 s\"]]", "") };
    TWO_PATHS.replace("PROFILE", profile).replace("UP_DOWN", up).replace("CORE_DOWN", core)
}

fn column<'a>(out: &'a RunOutput, name: &str) -> &'a Column {
    &out.columns.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no column {name}")).1
}

/// (bin start, bytes delivered) of the time-series rows of one flow or link direction.
fn series(out: &RunOutput, kind: &str, name: &str, direction: &str) -> Vec<(f64, i64)> {
    let (Column::F64(t), Column::Str(k), Column::Str(n), Column::Str(d), Column::I64(b)) =
        (column(out, "time_s"), column(out, "kind"), column(out, "name"), column(out, "direction"), column(out, "bytes_delivered"))
    else {
        panic!("unexpected column types")
    };
    (0..t.len()).filter(|&i| k[i] == kind && n[i] == name && d[i] == direction).map(|i| (t[i], b[i])).collect()
}

/// The goodput stall the outage causes: the first run of empty bins that starts within
/// 0.5 s of the outage, as (first empty bin, first bin with data again).
fn stall(goodput: &[(f64, i64)]) -> (f64, f64) {
    let start = goodput.iter().find(|(t, b)| *t >= OUTAGE && *b == 0).expect("goodput stalls after the outage").0;
    assert!(start < OUTAGE + 0.5, "the stall starts at {start} s, long after the outage");
    let end = goodput.iter().find(|(t, b)| *t > start && *b > 0).expect("goodput resumes").0;
    (start, end)
}

/// Bytes in the bins of [from, until).
fn bytes_in(s: &[(f64, i64)], from: f64, until: f64) -> i64 {
    s.iter().filter(|(t, _)| *t >= from - 1e-9 && *t < until - 1e-9).map(|(_, b)| b).sum()
}

struct Failover {
    /// Outage to the first bin of resumed goodput, seconds.
    time: f64,
    resume: f64,
    completion: f64,
    out: RunOutput,
}

/// Runs the download and checks what every profile must do: every byte arrives, the outage
/// stalls goodput, and path 1 kept carrying data through the outage.
fn failover(profile: &str, silent: bool) -> Failover {
    let (summary, out) = run(&scenario(profile, silent), Some(1));
    let flow = &summary["flows"][0];
    assert_eq!(flow["bytes_delivered"], SIZE, "{profile}: every byte reaches the application: {flow}");
    let completion = flow["completion_s"].as_f64().unwrap_or_else(|| panic!("{profile}: the download finishes: {flow}"));
    let goodput = series(&out, "flow", "dl", "");
    let (_, resume) = stall(&goodput);
    // The other path carries data all along (new data while the stream waits for the hole).
    let slow = series(&out, "link", "slow", "forward");
    let mut t = OUTAGE;
    while t < completion.min(OUTAGE + 8.0) - 0.5 {
        assert!(bytes_in(&slow, t, t + 0.5) > 0, "{profile}: nothing arrived over path 1 in [{t}, {}) s", t + 0.5);
        t += 0.5;
    }
    assert_eq!(flow["paths"][1]["server"]["status"], "active", "{profile}: {flow}");
    let time = resume - OUTAGE;
    eprintln!("{profile} ({}): goodput resumes {time:.3} s after the outage; completion {completion:.2} s", if silent { "silent" } else { "hinted" });
    Failover { time, resume, completion, out }
}

/// After the failover, goodput keeps flowing over path 1 alone at a fair part of its 10 Mbit/s.
fn keeps_flowing(profile: &str, f: &Failover, until: f64) {
    let goodput = series(&f.out, "flow", "dl", "");
    let mut t = f.resume;
    while t + 0.5 <= until {
        assert!(bytes_in(&goodput, t, t + 0.5) > 0, "{profile}: no goodput in [{t}, {}) s", t + 0.5);
        t += 0.5;
    }
    let secs = until - f.resume;
    let mbps = bytes_in(&goodput, f.resume, until) as f64 * 8.0 / secs / 1e6;
    assert!(mbps > 6.0, "{profile}: {mbps} Mbit/s over path 1 after the failover");
}

/// A silent outage noticed at the `k`-th PTO of path 0: the last packet on path 0 leaves at most
/// one RTT after the outage (pacing spreads a window over an RTT; ACKs stop at once), the k-th
/// timeout follows (1 + 2 + ... + 2^(k−1)) PTO periods later, then the data requeued crosses path
/// 1. Returns the (lower, upper) bounds of the failover time.
fn after_ptos(k: i32) -> (f64, f64) {
    let periods = 2f64.powi(k) - 1.0;
    (periods * PTO_MIN + OWD1 - BIN, R_MAX + periods * PTO_MAX + OWD1 + Q1 + 2.0 * BIN)
}

fn check_silent(profile: &str, k: i32) -> f64 {
    let f = failover(profile, true);
    let (lo, hi) = after_ptos(k);
    assert!((lo..=hi).contains(&f.time), "{profile}: failover {:.3} s, expected {lo:.3}..{hi:.3} s (PTO {PTO_MIN:.3}..{PTO_MAX:.3} s)", f.time);
    // Before the link returns at 10 s, path 1 alone delivers.
    keeps_flowing(profile, &f, BACK.min(f.completion));
    f.time
}

#[test]
fn mp_quic_requeues_at_the_first_pto_of_a_silent_path() {
    check_silent("mp-quic", 1);
}

#[test]
fn picoquic_requeues_at_the_first_pto_of_a_silent_path() {
    check_silent("picoquic", 1);
}

#[test]
fn linux_mptcp_requeues_after_four_timeouts_of_a_silent_path() {
    let mptcp = check_silent("linux-mptcp", 4);
    let mp_quic = failover("mp-quic", true).time;
    assert!(mptcp > 5.0 * mp_quic, "linux-mptcp {mptcp} s vs mp-quic {mp_quic} s");
}

#[test]
fn xquic_waits_for_a_silent_path_to_come_back() {
    // XQUIC moves nothing off a path (its reinjection is off by default): after 2 PTOs the path
    // only stops taking new data, which path 1 carries; the data lost in the outage is
    // recovered once the link is back, its next probe answered and the loss detected.
    let f = failover("xquic", true);
    assert!(f.resume >= BACK, "xquic resumed at {} s, before the link came back at {BACK} s", f.resume);
    // The probes back off: PTO·2^k after the last one; the first after 10 s comes at most one
    // backed-off period (at most 2·7 s) later; then one RTT of path 0 and a loss detection.
    assert!(f.resume <= BACK + 2.0 * (BACK - OUTAGE) + 1.0, "xquic resumed at {} s", f.resume);
    keeps_flowing("xquic", &f, f.completion.min(f.resume + 3.0));
}

#[test]
fn every_profile_fails_over_at_once_when_the_interfaces_go_down() {
    // The interface events requeue path 0's data at 3 s: goodput resumes once the first
    // retransmission has crossed path 1.
    let (lo, hi) = (OWD1 - BIN, OWD1 + Q1 + 2.0 * BIN);
    for profile in ["mp-quic", "picoquic", "xquic", "linux-mptcp", "picoquic-2022", "linux-mptcp-5.15"] {
        let f = failover(profile, false);
        assert!((lo..=hi).contains(&f.time), "{profile}: failover {:.3} s, expected {lo:.3}..{hi:.3} s", f.time);
        keeps_flowing(profile, &f, f.completion);
    }
}

/// The `picoquic-2022` stack profile (its timer-based loss, scheduler, ACK path, failover
/// rules; scheduler and failover set as above): path 0's packets are declared lost by its
/// retransmission timer, max(srtt + 4·rttvar + 10 ms, 5/4·srtt + 10 ms, 50 ms) after they were
/// sent, and the path, now with one timer-based episode more than path 1, is avoided: the data
/// goes to path 1. The interfaces' events are not seen (`link_events = "ignore"`), so the
/// hinted outage is silent too.
#[test]
fn picoquic_2022_moves_the_data_when_its_retransmission_timer_declares_it_lost() {
    const PICOQUIC_MAD: f64 = 0.010;
    let t_min = (1.25 * R_MIN + PICOQUIC_MAD).max(0.050);
    let t_max = (R_MAX + 4.0 * (R_MAX - R_MIN) + PICOQUIC_MAD).max(1.25 * R_MAX + PICOQUIC_MAD);
    let (lo, hi) = (t_min + OWD1 - BIN, R_MAX + t_max + OWD1 + Q1 + 2.0 * BIN);
    let with_profile = |silent: bool| {
        let text = scenario("picoquic-2022", silent).replace("cc = \"newreno\"", "cc = \"newreno\"\nprofile = \"picoquic-2022\"");
        let (summary, out) = run(&text, Some(1));
        assert_eq!(summary["flows"][0]["bytes_delivered"], SIZE);
        stall(&series(&out, "flow", "dl", "")).1 - OUTAGE
    };
    let time = with_profile(true);
    eprintln!("picoquic-2022 (silent): goodput resumes {time:.3} s after the outage");
    assert!((lo..=hi).contains(&time), "failover {time:.3} s, expected {lo:.3}..{hi:.3} s");
    let hinted = with_profile(false);
    eprintln!("picoquic-2022 (hinted): goodput resumes {hinted:.3} s after the outage");
    assert!((lo..=hi).contains(&hinted), "hinted: failover {hinted:.3} s, expected {lo:.3}..{hi:.3} s");
}

#[test]
fn failover_runs_are_deterministic() {
    let a = run(&scenario("picoquic", true), Some(5));
    let b = run(&scenario("picoquic", true), Some(5));
    assert_eq!(a.0, b.0);
    assert_eq!(format!("{:?}", a.1.columns), format!("{:?}", b.1.columns));
}
