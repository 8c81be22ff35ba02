//! The stack profiles of the multi-operator study (reference `multi-operator.md` §6) through
//! the scenario format: `profile = "picoquic-2022"` with its four controllers (`fast`
//! included) and its multipath defaults, `profile = "linux-mptcp-5.15"` for MPTCP, the
//! one-line errors for combinations a profile refuses, and a path schedule that abandons the
//! handshake's path and opens it again (§4.5).

use crate::common;
use common::*;
use multiconn_transport::{AckPath, FailoverProfile, SchedulerKind};
use serde_json::{json, Value};

/// Two 10 Mbit/s paths (20 and 30 ms one way), a download.
const TWO_PATHS: &str = r#"
[run]
duration = "60 s"

[[link]]
name = "a"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "50 packets"

[[link]]
name = "b"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "30 ms"
queue = "50 packets"

[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "TRANSPORT"
app = "bulk"
size = "SIZE"
paths = [["a"], ["b"]]
EXTRA
"#;

fn scenario(transport: &str, size: &str, extra: &str) -> String {
    TWO_PATHS.replace("TRANSPORT", transport).replace("SIZE", size).replace("EXTRA", extra)
}

fn error(text: &str) -> String {
    match load_str(text) {
        Ok(_) => panic!("should be refused:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn flow(summary: &Value) -> &Value {
    &summary["flows"][0]
}

#[test]
fn picoquic_2022_runs_the_studys_four_controllers_with_its_multipath_defaults() {
    for cc in ["bbr", "cubic", "fast", "reno"] {
        let text = scenario("quic", "8 MB", &format!("profile = \"picoquic-2022\"\ncc = \"{cc}\""));
        let scenario = load_str(&text).unwrap_or_else(|e| panic!("{cc}: {e}"));
        let conn = scenario.resolved().flows[0].connection.clone().unwrap();
        let m = conn.multipath.unwrap();
        assert_eq!((m.scheduler, m.ack_path, m.failover), (SchedulerKind::Picoquic, AckPath::MinRtt, FailoverProfile::Picoquic2022));
        assert_eq!(conn.profile.name, "picoquic-2022");
        let (summary, _) = run(&text, Some(1));
        let f = flow(&summary);
        assert_eq!(f["bytes_delivered"], json!(8_000_000), "{cc}");
        eprintln!("picoquic-2022 {cc}: 8 MB in {} s", f["completion_s"]);
        assert_eq!(f["profile"], json!("picoquic-2022"));
        assert_eq!(f["cc"], json!(if cc == "reno" { "newreno" } else { cc }));
        // picoquic's scheduler spreads the transfer over both paths.
        for p in 0..2 {
            let carried = f["paths"][p]["network"]["forward"]["bytes_arrived"].as_u64().unwrap();
            assert!(carried > 2_000_000, "{cc}: path {p} carried {carried}");
        }
    }
    // Without cc the profile's default: bbr, as picoquic's demo.
    let (summary, _) = run(&scenario("quic", "2 MB", "profile = \"picoquic-2022\""), Some(1));
    assert_eq!(flow(&summary)["cc"], json!("bbr"));
}

#[test]
fn the_flows_own_multipath_settings_win_over_the_profiles() {
    let text = scenario("quic", "2 MB", "profile = \"picoquic-2022\"\n[flow.multipath]\nscheduler = \"minrtt\"\nfailover = \"picoquic\"");
    let m = load_str(&text).unwrap().resolved().flows[0].connection.clone().unwrap().multipath.unwrap();
    assert_eq!((m.scheduler, m.ack_path, m.failover), (SchedulerKind::MinRtt, AckPath::MinRtt, FailoverProfile::Picoquic));
    // Profiles without a [multipath] table keep the transports' defaults.
    let m = load_str(&scenario("quic", "2 MB", "")).unwrap().resolved().flows[0].connection.clone().unwrap().multipath.unwrap();
    assert_eq!((m.scheduler, m.ack_path, m.failover), (SchedulerKind::MinRtt, AckPath::Same, FailoverProfile::MpQuic));
    let m = load_str(&scenario("tcp", "2 MB", "")).unwrap().resolved().flows[0].connection.clone().unwrap().multipath.unwrap();
    assert_eq!(m.failover, FailoverProfile::LinuxMptcp);
}

#[test]
fn combinations_a_profile_refuses_give_one_line_naming_the_field() {
    let e = error(&scenario("quic", "2 MB", "cc = \"fast\""));
    assert!(e.contains("flow.dl.cc: profile \"rfc9002\" does not offer congestion control \"fast\"; it offers: newreno, cubic, bbr"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let e = error(&scenario("quic", "2 MB", "profile = \"ngtcp2\"\ncc = \"fast\""));
    assert!(e.contains("flow.dl.cc: profile \"ngtcp2\" does not offer congestion control \"fast\""), "{e}");
    let e = error(&scenario("tcp", "2 MB", "profile = \"linux-mptcp-5.15\"\ncc = \"fast\""));
    assert!(e.contains("flow.dl.cc: profile \"linux-mptcp-5.15\" does not offer congestion control \"fast\"; it offers: newreno, cubic, bbr"), "{e}");
    let e = error(&scenario("tcp", "2 MB", "profile = \"picoquic-2022\""));
    assert!(e.contains("flow.dl.profile: unknown profile \"picoquic-2022\"; available for tcp: linux-tcp, linux-mptcp-5.15"), "{e}");
    let e = error(&scenario("quic", "2 MB", "profile = \"linux-mptcp-5.15\""));
    assert!(e.contains("flow.dl.profile: unknown profile \"linux-mptcp-5.15\"; available for quic: rfc9002, aioquic, aioquic-1.7, ngtcp2, ngtcp2-0.12, picoquic-2022, ns3-quic-2019, mpquic-2018"), "{e}");
    let e = error(&scenario("tcp", "2 MB", "[flow.multipath]\nscheduler = \"picoquic\""));
    assert!(e.contains("flow.dl.multipath.scheduler: \"picoquic\" is picoquic's Multipath QUIC scheduler"), "{e}");
    let e = error(&scenario("tcp", "2 MB", "[flow.multipath]\nack_path = \"min_rtt\""));
    assert!(e.contains("flow.dl.multipath.ack_path: an MPTCP subflow acknowledges its own segments"), "{e}");
    let e = error(&scenario("quic", "2 MB", "[flow.multipath]\nfailover = \"picoquic-2021\""));
    assert!(e.contains("flow.dl.multipath.failover") && e.contains("picoquic-2022") && e.contains("linux-mptcp-5.15"), "{e}");
    // Over --set as well.
    let e = load_with(&scenario("quic", "2 MB", ""), &[("flow.dl.cc", "fast")]).map(drop).expect_err("refused").to_string();
    assert!(e.contains("flow.dl.cc: profile \"rfc9002\" does not offer congestion control \"fast\""), "{e}");
    assert!(load_with(&scenario("quic", "2 MB", ""), &[("flow.dl.cc", "fast"), ("flow.dl.profile", "picoquic-2022")]).is_ok());
}

/// §4.5: a handover away from the handshake's path and back, path 1 open meanwhile.
#[test]
fn a_schedule_abandoning_path_0_and_opening_it_again_carries_data_on_the_new_path_id() {
    for profile in ["rfc9002", "picoquic-2022"] {
        let schedule = r#"schedule = [{ at = "2 s", path = 0, action = "abandon" }, { at = "4 s", path = 0, action = "open" }]"#;
        let text = scenario("quic", "20 MB", &format!("profile = \"{profile}\"\ncc = \"cubic\"\n[flow.multipath]\n{schedule}"));
        let (summary, out) = run(&text, Some(1));
        let f = flow(&summary);
        assert_eq!(f["bytes_delivered"], json!(20_000_000), "{profile}");
        assert_eq!(
            f["path_manager"],
            json!([
                { "at_s": 2.0, "path": 0, "action": "abandon" },
                { "at_s": 4.0, "path": 0, "action": "open", "path_id": 2, "backup": false },
            ]),
            "{profile}"
        );
        for end in ["server", "client"] {
            let p0 = &f["paths"][0][end];
            assert_eq!((p0["status"].clone(), p0["path_id"].clone(), p0["path_ids_opened"].clone()), (json!("active"), json!(2), json!(2)), "{profile} {end}");
        }
        // Path 0's time series: nothing arrives between the abandonment and the opening (once
        // the queue has drained), data again after.
        let rows = path_bytes(&out, 0);
        let between: u64 = rows.iter().filter(|(t, _)| *t > 2.3 && *t < 4.0).map(|r| r.1).sum();
        let after: u64 = rows.iter().filter(|(t, _)| *t > 4.2).map(|r| r.1).sum();
        assert_eq!(between, 0, "{profile}");
        assert!(after > 2_000_000, "{profile}: {after}");
    }
}

/// (time, bytes arrived) of path `p`'s rows of flow "dl" in the time series.
fn path_bytes(out: &multiconn_scenario::RunOutput, p: i64) -> Vec<(f64, u64)> {
    use multiconn_scenario::Column;
    let column = |name: &str| &out.columns.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no column {name}")).1;
    let (Column::Str(kind), Column::Str(flow), Column::I64(path), Column::F64(time), Column::I64(bytes)) =
        (column("kind"), column("name"), column("path"), column("time_s"), column("bytes_delivered"))
    else {
        panic!("unexpected column types")
    };
    (0..kind.len()).filter(|&i| kind[i] == "path" && flow[i] == "dl" && path[i] == p).map(|i| (time[i], bytes[i] as u64)).collect()
}

#[test]
fn linux_mptcp_5_15_runs_an_mptcp_flow_blind_to_its_links() {
    // Path 0's link is down from 1 s to 10 s: with linux-tcp the client hears of it at once;
    // with linux-mptcp-5.15 nothing is told and the subflow goes stale after five timeouts.
    let down = "[[link]]\nname = \"a\"";
    let text = |profile: &str| scenario("tcp", "12 MB", &format!("profile = \"{profile}\"")).replace(down, &format!("{down}\ndown = [[\"1 s\", \"10 s\"]]"));
    let resolved = load_str(&text("linux-mptcp-5.15")).unwrap();
    let conn = resolved.resolved().flows[0].connection.clone().unwrap();
    assert_eq!(conn.multipath.unwrap().failover, FailoverProfile::LinuxMptcp515);
    let (now, _) = run(&text("linux-tcp"), Some(1));
    let (old, _) = run(&text("linux-mptcp-5.15"), Some(1));
    for s in [&now, &old] {
        assert_eq!(flow(s)["bytes_delivered"], json!(12_000_000));
    }
    let done = |s: &Value| flow(s)["completion_s"].as_f64().unwrap();
    eprintln!("12 MB, path 0 down 1-10 s: linux-tcp {} s, linux-mptcp-5.15 {} s", done(&now), done(&old));
    // The blind stack loses seconds to the timeouts before moving the subflow's data.
    assert!(done(&old) > done(&now) + 2.0, "{} vs {}", done(&old), done(&now));
}

/// The receiving application's cost per datagram comes from the QUIC profile (measured with
/// bench/read_cost.py) unless the flow sets `receiver.read_cost`.
#[test]
fn a_quic_profile_gives_its_read_cost_and_the_flow_may_override_it() {
    let read_cost = |extra: &str| {
        let s = load_str(&scenario("quic", "2 MB", extra).replace("paths = [[\"a\"], [\"b\"]]", "route = [\"a\"]")).unwrap();
        let conn = s.resolved().flows[0].connection.clone().unwrap();
        conn.udp_socket.expect("a quic flow reads through a socket").read_cost
    };
    assert_eq!(read_cost("profile = \"aioquic\""), multiconn_core::Dur::from_micros(50));
    assert_eq!(read_cost("profile = \"ngtcp2\""), multiconn_core::Dur::from_micros(4));
    assert_eq!(read_cost("profile = \"rfc9002\""), multiconn_core::Dur::ZERO);
    assert_eq!(read_cost("profile = \"picoquic-2022\""), multiconn_core::Dur::ZERO);
    assert_eq!(read_cost("profile = \"aioquic\"\nreceiver = { read_cost = \"100 us\" }"), multiconn_core::Dur::from_micros(100));
    assert_eq!(read_cost("profile = \"aioquic\"\nreceiver = { read_cost = \"0 us\" }"), multiconn_core::Dur::ZERO);
    // The cost slows the reader: a 2 MB aioquic download over one 10 Mbit/s path is not
    // limited by 50 µs per 1200-byte datagram (186 Mbit/s), and ends at the same goodput
    // within a few per cent as an instant reader.
    let text = |extra: &str| scenario("quic", "2 MB", extra).replace("paths = [[\"a\"], [\"b\"]]", "route = [\"a\"]");
    let with = run_with(&text("profile = \"aioquic\""), &[], 1);
    let without = run_with(&text("profile = \"aioquic\"\nreceiver = { read_cost = \"0 us\" }"), &[], 1);
    let (g1, g0) = (flow(&with)["goodput_mbps"].as_f64().unwrap(), flow(&without)["goodput_mbps"].as_f64().unwrap());
    assert!((g1 - g0).abs() / g0 < 0.05, "{g1} vs {g0}");
    assert_ne!(with["flows"][0]["udp_socket"], Value::Null);
}
