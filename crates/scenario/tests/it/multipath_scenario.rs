//! Multipath flows in scenarios: the `paths` list and the `multipath` table are validated with
//! errors that name the field, resolve to one forward and one reverse route per path, and the
//! simulator moves every packet over the path its endpoint named and tells each end when its
//! own interface on a path goes down or comes back. Single-path flows are untouched.

use crate::common;
use common::*;
use multiconn_cc::CoupledKind;
use multiconn_core::{FlowId, Packet, Time, TransportSample};
use multiconn_scenario::resolve::{Hop, PathRoutes};
use multiconn_scenario::sim::World;
use multiconn_scenario::{report, Scenario};
use multiconn_transport::{AckPath, AppEvent, Endpoint, FailoverProfile, MultipathParams, PathStats, SchedulerKind, SchedulerOptions};
use std::sync::{Arc, Mutex};

/// Two paths from `server` to `client`: Wi-Fi direct, and LTE through a gateway.
const TWO_PATHS: &str = r#"
[run]
duration = "10 s"

[[link]]
name = "wifi"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "100 packets"

[[link]]
name = "lte_a"
between = ["server", "gw"]
rate = "10 Mbit/s"
delay = "5 ms"
queue = "100 packets"

[[link]]
name = "lte_b"
between = ["gw", "client"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "100 packets"

[[flow]]
name = "v2x"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "1 MB"
paths = [["wifi"], ["lte_a", "lte_b"]]
"#;

fn error_of(text: &str) -> String {
    let e = load_str(text).expect_err("scenario should be rejected").to_string();
    assert!(!e.contains('\n'), "error must be one line: {e}");
    e
}

fn with_multipath(table: &str) -> String {
    format!("{TWO_PATHS}\n[flow.multipath]\n{table}\n")
}

// ---------------------------------------------------------------------------------------------
// Validation

#[test]
fn path_count_is_checked_at_the_paths_field() {
    let one = error_of(&TWO_PATHS.replace(r#"paths = [["wifi"], ["lte_a", "lte_b"]]"#, r#"paths = [["wifi"]]"#));
    assert!(one.contains("flow.v2x.paths") && one.contains("a multipath flow needs 2 to 8 paths, got 1"), "{one}");
    assert!(one.starts_with("test.toml:33:"), "the line of `paths`: {one}");
    let nine = [r#"["wifi"]"#; 9].join(", ");
    let e = error_of(&TWO_PATHS.replace(r#"paths = [["wifi"], ["lte_a", "lte_b"]]"#, &format!("paths = [{nine}]")));
    assert!(e.contains("flow.v2x.paths") && e.contains("got 9"), "{e}");
}

#[test]
fn each_path_must_join_from_and_to() {
    let e = error_of(&TWO_PATHS.replace(r#"["lte_a", "lte_b"]"#, r#"["lte_a"]"#));
    assert!(e.contains("flow.v2x.paths"), "{e}");
    assert!(e.contains("paths[1] ends at \"gw\", not at \"client\"") && e.contains("each path must go from `from` to `to`"), "{e}");
    let e = error_of(&TWO_PATHS.replace(r#"["lte_a", "lte_b"]"#, r#"["lte_b", "lte_a"]"#));
    assert!(e.contains("flow.v2x.paths") && e.contains("\"lte_b\" joins \"gw\" and \"client\", but paths[1] is at \"server\""), "{e}");
    let e = error_of(&TWO_PATHS.replace(r#"["lte_a", "lte_b"]"#, r#"["lte_a", "lte_c"]"#));
    assert!(e.contains("flow.v2x.paths") && e.contains("paths[1]: there is no link, split or cell named \"lte_c\""), "{e}");
    let e = error_of(&TWO_PATHS.replace(r#"["lte_a", "lte_b"]"#, "[]"));
    assert!(e.contains("flow.v2x.paths") && e.contains("paths[1] is empty"), "{e}");
    let e = error_of(&TWO_PATHS.replace(r#"["lte_a", "lte_b"]"#, r#"["wifi"]"#));
    assert!(e.contains("flow.v2x.paths") && e.contains("paths[0] and paths[1] are the same route"), "{e}");
}

#[test]
fn paths_exclude_route_and_need_tcp_or_quic() {
    let e = error_of(&TWO_PATHS.replace("app = \"bulk\"", "app = \"bulk\"\nroute = [\"wifi\"]"));
    assert!(e.contains("flow.v2x.paths") && e.contains("either route") && e.contains("not both"), "{e}");
    // tcp flows take paths (MPTCP, crates/scenario/tests/mptcp.rs).
    load_str(&TWO_PATHS.replace("transport = \"quic\"", "transport = \"tcp\"")).unwrap_or_else(|e| panic!("{e}"));
    let udp = error_of(&TWO_PATHS.replace("transport = \"quic\"", "transport = \"udp\""));
    assert!(udp.contains("flow.v2x.paths") && udp.contains("only tcp (MPTCP) and quic (Multipath QUIC) flows take several paths"), "{udp}");
}

#[test]
fn a_multipath_table_needs_paths() {
    let text = with_multipath("scheduler = \"ecf\"").replace(r#"paths = [["wifi"], ["lte_a", "lte_b"]]"#, r#"route = ["wifi"]"#);
    let e = error_of(&text);
    assert!(e.contains("flow.v2x.multipath") && e.contains("needs paths"), "{e}");
}

#[test]
fn unknown_names_list_the_allowed_ones() {
    let e = error_of(&with_multipath("scheduler = \"fastest\""));
    assert!(e.contains("flow.v2x.multipath.scheduler") && e.contains("fastest"), "{e}");
    for name in ["minrtt", "roundrobin", "redundant", "selective_redundant", "blest", "ecf"] {
        assert!(e.contains(name), "{name} missing from: {e}");
    }
    let e = error_of(&with_multipath("ack_path = \"slowest\""));
    assert!(e.contains("flow.v2x.multipath.ack_path") && e.contains("same") && e.contains("fastest"), "{e}");
    let e = error_of(&with_multipath("failover = \"quiche\""));
    assert!(e.contains("flow.v2x.multipath.failover") && e.contains("mp-quic") && e.contains("picoquic") && e.contains("xquic"), "{e}");
    let e = error_of(&with_multipath("coupled = \"cubic\""));
    assert!(e.contains("flow.v2x.multipath.coupled") && e.contains("lia") && e.contains("olia") && e.contains("balia") && e.contains("wvegas") && e.contains("westwood"), "{e}");
    let e = error_of(&with_multipath("schedular = \"minrtt\""));
    assert!(e.contains("flow.v2x.multipath") && e.contains("schedular") && e.contains("expected one of"), "{e}");
}

#[test]
fn scheduler_options_are_checked_field_by_field() {
    let e = error_of(&with_multipath("[flow.multipath.options]\nrr_packets_per_turn = 0"));
    assert!(e.contains("flow.v2x.multipath.options.rr_packets_per_turn") && e.contains("at least 1"), "{e}");
    let e = error_of(&with_multipath("options = { redundant_min_paths = 0 }"));
    assert!(e.contains("flow.v2x.multipath.options.redundant_min_paths"), "{e}");
    let e = error_of(&with_multipath("options = { blest = { lambda_initial_permille = 900 } }"));
    assert!(e.contains("flow.v2x.multipath.options.blest") && e.contains("lambda_min_permille"), "{e}");
    let e = error_of(&with_multipath("options = { ecf_beta = 300 }"));
    assert!(e.contains("flow.v2x.multipath.options") && e.contains("ecf_beta") && e.contains("ecf_beta_permille"), "{e}");
    let e = error_of(&with_multipath("options = { unprobed = \"never\" }"));
    assert!(e.contains("flow.v2x.multipath.options.unprobed") && e.contains("first") && e.contains("last"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Resolution

/// Index of the forward or reverse direction of link `name`.
fn dir(s: &Scenario, name: &str, reverse: bool) -> usize {
    let want = if reverse { "reverse" } else { "forward" };
    s.resolved().links.iter().position(|l| l.name == name && l.direction.name() == want).unwrap()
}

#[test]
fn each_path_resolves_to_a_forward_and_a_reverse_route() {
    let s = load_str(TWO_PATHS).unwrap();
    let flow = &s.resolved().flows[0];
    let [wifi, wifi_r] = [dir(&s, "wifi", false), dir(&s, "wifi", true)];
    let [a, a_r, b, b_r] = [dir(&s, "lte_a", false), dir(&s, "lte_a", true), dir(&s, "lte_b", false), dir(&s, "lte_b", true)];
    // Path 0 stays the flow's route, so single-path code reads it as before.
    assert_eq!(flow.route, vec![Hop::Link(wifi)]);
    assert_eq!(flow.reverse_route, vec![Hop::Link(wifi_r)]);
    assert_eq!(flow.extra_paths, vec![PathRoutes { route: vec![Hop::Link(a), Hop::Link(b)], reverse_route: vec![Hop::Link(b_r), Hop::Link(a_r)] }]);
    assert_eq!(flow.path_count(), 2);
    assert_eq!(flow.hops(1, 0), &[Hop::Link(a), Hop::Link(b)]);
    assert_eq!(flow.hops(1, 1), &[Hop::Link(b_r), Hop::Link(a_r)]);
    // No multipath table: the defaults.
    let mp = flow.connection.as_ref().unwrap().multipath.clone().unwrap();
    assert_eq!(
        mp,
        MultipathParams {
            paths: 2,
            scheduler: SchedulerKind::MinRtt,
            options: SchedulerOptions::default(),
            ack_path: AckPath::Same,
            failover: FailoverProfile::MpQuic,
            coupled: None,
            opened_later: Vec::new(),
        }
    );
}

#[test]
fn the_multipath_table_sets_every_knob() {
    let text = with_multipath(
        "scheduler = \"ecf\"\nack_path = \"fastest\"\nfailover = \"picoquic\"\n\
         [flow.multipath.options]\nunprobed = \"last\"\nskip_initial_path = true\nrr_packets_per_turn = 3\n\
         ecf_beta_permille = 400\nblest = { lambda_initial_permille = 1100 }",
    );
    let s = load_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let mp = s.resolved().flows[0].connection.as_ref().unwrap().multipath.clone().unwrap();
    assert_eq!(mp.scheduler, SchedulerKind::Ecf);
    assert_eq!(mp.ack_path, AckPath::Fastest);
    assert_eq!(mp.failover, FailoverProfile::Picoquic);
    assert_eq!(mp.coupled, None);
    for (name, kind) in [("lia", CoupledKind::Lia), ("coupled", CoupledKind::Lia), ("olia", CoupledKind::Olia), ("balia", CoupledKind::Balia), ("wvegas", CoupledKind::Wvegas), ("westwood", CoupledKind::Westwood)] {
        let s = load_str(&with_multipath(&format!("coupled = \"{name}\""))).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.resolved().flows[0].connection.as_ref().unwrap().multipath.as_ref().unwrap().coupled, Some(kind));
    }
    // mp_quic() differs from the defaults by the three mp-quic quirks; take two of them.
    let mut expected = SchedulerOptions::mp_quic();
    expected.duplicate_on_unprobed = false;
    expected.rr_packets_per_turn = 3;
    expected.ecf_beta_permille = 400;
    expected.blest.lambda_initial_permille = 1100;
    assert_eq!(mp.options, expected);
}

#[test]
fn overrides_reach_the_multipath_table_and_paths() {
    let s = load_with(TWO_PATHS, &[("flow.v2x.multipath.scheduler", "roundrobin"), ("flow.v2x.multipath.options.rr_packets_per_turn", "4")]).unwrap();
    let mp = s.resolved().flows[0].connection.as_ref().unwrap().multipath.clone().unwrap();
    assert_eq!((mp.scheduler, mp.options.rr_packets_per_turn), (SchedulerKind::RoundRobin, 4));
    let s = load_with(TWO_PATHS, &[("flow.v2x.paths", r#"[["lte_a", "lte_b"], ["wifi"]]"#)]).unwrap();
    assert_eq!(s.resolved().flows[0].route, vec![Hop::Link(dir(&s, "lte_a", false)), Hop::Link(dir(&s, "lte_b", false))]);
    let e = load_with(TWO_PATHS, &[("flow.v2x.multipath.scheduler", "best")]).unwrap_err().to_string();
    assert!(e.contains("--set flow.v2x.multipath.scheduler=best") && e.contains("minrtt"), "{e}");
}

#[test]
fn single_path_flows_have_no_multipath_parameters() {
    let s = load_str(&TWO_PATHS.replace(r#"paths = [["wifi"], ["lte_a", "lte_b"]]"#, r#"route = ["wifi"]"#)).unwrap();
    let flow = &s.resolved().flows[0];
    assert!(flow.extra_paths.is_empty() && !flow.is_multipath());
    assert!(flow.connection.as_ref().unwrap().multipath.is_none());
}

// ---------------------------------------------------------------------------------------------
// Routing by path and interface status, with scripted endpoints

/// Three paths: Wi-Fi; LTE through a gateway; LTE to the gateway then a split bearer. Wi-Fi goes
/// down in both directions from 1 s to 2 s; the server's LTE uplink (`lte_a` forward) from 3 s
/// to 5 s in two back-to-back windows; `lte_b` in both directions from 6 s to 7 s.
const THREE_PATHS: &str = r#"
[run]
duration = "10 s"

[[link]]
name = "wifi"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "100 packets"
down = [["1 s", "2 s"]]

[[link]]
name = "lte_a"
between = ["server", "gw"]
rate = "10 Mbit/s"
delay = "5 ms"
queue = "100 packets"

[link.forward]
down = [["3 s", "4 s"], ["4 s", "5 s"]]

[[link]]
name = "lte_b"
between = ["gw", "client"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "100 packets"
down = [["6 s", "7 s"]]

[[link]]
name = "nr1"
between = ["gw", "client"]
rate = "10 Mbit/s"
delay = "2 ms"
queue = "100 packets"

[[link]]
name = "nr2"
between = ["gw", "client"]
rate = "10 Mbit/s"
delay = "2 ms"
queue = "100 packets"

[[split]]
name = "dc"
legs = ["nr1", "nr2"]
policy = { model = "alternate" }

[[flow]]
name = "v2x"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
paths = [["wifi"], ["lte_a", "lte_b"], ["lte_a", "dc"]]
"#;

#[derive(Default)]
struct Log {
    /// (arrival time, path, seq, created) of the data packets at the client.
    data: Vec<(Time, u8, u64, Time)>,
    /// (arrival time, path) of the acknowledgements at the server.
    acks: Vec<(Time, u8)>,
    server_status: Vec<(Time, u8, bool)>,
    client_status: Vec<(Time, u8, bool)>,
}

const GAP: Time = Time(10_000_000);
const DATA_PACKETS: u64 = 900;

/// Sends a 1000-byte packet every 10 ms from the request's arrival on, on path `seq % 3`.
struct Server {
    log: Arc<Mutex<Log>>,
    next_send: Option<Time>,
    due: bool,
    seq: u64,
}

/// Sends a request on path 0 at the start, then acknowledges each data packet on its path.
struct Client {
    log: Arc<Mutex<Log>>,
    start_due: bool,
    started: bool,
    acks: Vec<u8>,
}

impl Endpoint for Server {
    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        if pkt.seq == u64::MAX {
            self.next_send.get_or_insert(now);
        } else {
            self.log.lock().unwrap().acks.push((now, pkt.path));
        }
    }
    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if !self.due && !matches!(self.next_send, Some(t) if t <= now) {
            return None;
        }
        self.due = false;
        let mut pkt = Packet::new(*next_id, FlowId(0), 1000, self.seq, now);
        *next_id += 1;
        pkt.path = (self.seq % 3) as u8;
        self.seq += 1;
        self.next_send = (self.seq < DATA_PACKETS).then(|| now + multiconn_core::Dur(GAP.0));
        Some(pkt)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.next_send
    }
    fn handle_timeout(&mut self, _now: Time) {
        self.due = true;
    }
    fn poll_event(&mut self) -> Option<AppEvent> {
        None
    }
    fn sample(&self) -> TransportSample {
        TransportSample::default()
    }
    fn cc_state(&self) -> &'static str {
        ""
    }
    fn on_path_status(&mut self, now: Time, path: u8, up: bool) {
        self.log.lock().unwrap().server_status.push((now, path, up));
    }
    fn path_stats(&self, out: &mut Vec<PathStats>) {
        out.extend((0..3).map(|p| PathStats { path: p, packets_sent: 300, status: "active", ..PathStats::default() }));
    }
}

impl Endpoint for Client {
    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        self.log.lock().unwrap().data.push((now, pkt.path, pkt.seq, pkt.created));
        self.acks.push(pkt.path);
    }
    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        let (seq, path) = if self.start_due && !self.started {
            self.started = true;
            (u64::MAX, 0)
        } else {
            (0, self.acks.pop()?)
        };
        let mut pkt = Packet::new(*next_id, FlowId(0), 100, seq, now);
        *next_id += 1;
        pkt.path = path;
        Some(pkt)
    }
    fn poll_timeout(&self) -> Option<Time> {
        (!self.started).then_some(Time::ZERO)
    }
    fn handle_timeout(&mut self, _now: Time) {
        self.start_due = true;
    }
    fn poll_event(&mut self) -> Option<AppEvent> {
        None
    }
    fn sample(&self) -> TransportSample {
        TransportSample::default()
    }
    fn cc_state(&self) -> &'static str {
        ""
    }
    fn on_path_status(&mut self, now: Time, path: u8, up: bool) {
        self.log.lock().unwrap().client_status.push((now, path, up));
    }
}

fn scripted_run(text: &str) -> (Log, serde_json::Value) {
    let scenario = load_str(text).unwrap_or_else(|e| panic!("{e}"));
    let mut world = World::new(scenario.resolved(), 1).unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let conn = world.hosts.flows[0].conn_mut().unwrap();
    conn.server = Box::new(Server { log: log.clone(), next_send: None, due: false, seq: 0 });
    conn.client = Box::new(Client { log: log.clone(), start_due: false, started: false, acks: Vec::new() });
    while !world.run_until(Time::MAX) {}
    let resolved = scenario.resolved();
    let summary = report::summary(&world, "t", 1, world.end_time(), &resolved.fairness, &resolved.disabled);
    drop(world);
    let log = Arc::try_unwrap(log).ok().unwrap().into_inner().unwrap();
    (log, summary)
}

const fn s(secs: u64) -> Time {
    Time(secs * 1_000_000_000)
}

#[test]
fn packets_follow_the_path_their_endpoint_names() {
    let (log, _) = scripted_run(THREE_PATHS);
    // 900 sent; about 200 went into a down link.
    assert!(log.data.len() > 650, "{} data packets arrived", log.data.len());
    for p in 0..3u8 {
        assert!(log.data.iter().any(|d| d.1 == p), "nothing arrived on path {p}");
        assert!(log.acks.iter().any(|a| a.1 == p), "no acknowledgement came back on path {p}");
    }
    // The simulator keeps the path the sender chose.
    for &(_, path, seq, _) in &log.data {
        assert_eq!(u64::from(path), seq % 3, "packet {seq}");
    }
    // One-way delay = the path's serialization and propagation (no queueing at 0.8 Mbit/s):
    // Wi-Fi 0.8 + 20 ms; LTE 0.8 + 5 + 0.8 + 10 ms; LTE then the split (3-byte PDCP header).
    let owd = |p: u8| -> Vec<u64> {
        let mut v: Vec<u64> = log.data.iter().filter(|d| d.1 == p).map(|d| d.0.since(d.3).0).collect();
        v.dedup();
        v
    };
    assert_eq!(owd(0), vec![20_800_000]);
    assert_eq!(owd(1), vec![16_600_000]);
    assert_eq!(owd(2), vec![5_800_000 + 802_400 + 2_000_000]);
}

#[test]
fn each_end_hears_about_its_own_interfaces_at_the_exact_instants() {
    let (log, _) = scripted_run(THREE_PATHS);
    // The server's interfaces: wifi forward (path 0), lte_a forward (paths 1 and 2); the two
    // back-to-back lte_a windows are one outage.
    assert_eq!(
        log.server_status,
        vec![(s(1), 0, false), (s(2), 0, true), (s(3), 1, false), (s(3), 2, false), (s(5), 1, true), (s(5), 2, true)]
    );
    // The client's: wifi reverse (path 0), lte_b reverse (path 1), nr1 reverse (the split's
    // uplink leg, path 2).
    assert_eq!(log.client_status, vec![(s(1), 0, false), (s(2), 0, true), (s(6), 1, false), (s(7), 1, true)]);
    // Nothing sent into a down interface arrives.
    let sent_in = |p: u8, from: Time, until: Time| log.data.iter().filter(|d| d.1 == p && d.3 >= from && d.3 < until).count();
    assert_eq!(sent_in(0, s(1), s(2)), 0);
    assert_eq!(sent_in(1, s(3), s(5)) + sent_in(2, s(3), s(5)), 0);
    assert!(sent_in(0, s(2), s(3)) > 0 && sent_in(2, s(6), s(7)) > 0);
}

#[test]
fn the_summary_lists_each_path() {
    let (log, summary) = scripted_run(THREE_PATHS);
    let flow = &summary["flows"][0];
    let paths = flow["paths"].as_array().expect("a multipath flow lists its paths");
    assert_eq!(paths.len(), 3);
    assert!(flow.get("pdcp").is_none(), "a multipath flow's PDCP entities are listed per path");
    let names = |v: &serde_json::Value| -> Vec<String> { v.as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect() };
    assert_eq!(names(&paths[0]["route"]), ["wifi"]);
    assert_eq!(names(&paths[1]["route"]), ["lte_a", "lte_b"]);
    assert_eq!(names(&paths[1]["reverse_route"]), ["lte_b", "lte_a"]);
    assert_eq!(names(&paths[2]["route"]), ["lte_a", "dc"]);
    assert_eq!(names(&paths[2]["reverse_route"]), ["nr1", "lte_a"]);
    assert_eq!(paths[2]["pdcp"]["dc"]["legs"], serde_json::json!(["nr1", "nr2"]));
    assert!(paths[2]["pdcp"]["dc"]["delivered"].as_u64().unwrap() > 0);
    for (p, path) in paths.iter().enumerate() {
        assert_eq!(path["path"], p);
        // The endpoints' own counters: the scripted server reports some, the client none.
        assert_eq!(path["server"]["packets_sent"], 300);
        assert_eq!(path["server"]["status"], "active");
        assert!(path["client"].is_null());
        // What the network carried: arrivals at the client are the data packets logged there.
        let arrived = log.data.iter().filter(|d| usize::from(d.1) == p).count() as u64;
        assert_eq!(path["network"]["forward"]["packets_arrived"], arrived);
        assert_eq!(path["network"]["forward"]["bytes_arrived"].as_u64().unwrap(), arrived * 1000, "the PDCP header is gone at the client");
        assert!(path["network"]["reverse"]["packets_arrived"].as_u64().unwrap() > 0);
    }
    // Sent every 30 ms on each path: Wi-Fi loses its second 1-2 s, LTE its 3-5 s, lte_b its 6-7 s.
    let dropped = |p: usize| paths[p]["network"]["forward"]["packets_dropped"].as_u64().unwrap();
    assert!((32..=35).contains(&dropped(0)), "{}", dropped(0));
    assert!((99..=102).contains(&dropped(1)), "{}", dropped(1));
    assert!((65..=68).contains(&dropped(2)), "{}", dropped(2));
}

// ---------------------------------------------------------------------------------------------
// Single-path flows are untouched

#[test]
fn single_path_summaries_have_no_paths_and_stay_deterministic() {
    let text = TWO_PATHS.replace(r#"paths = [["wifi"], ["lte_a", "lte_b"]]"#, r#"route = ["wifi"]"#);
    let (a, out_a) = run(&text, Some(3));
    let (b, out_b) = run(&text, Some(3));
    assert_eq!(a, b);
    assert_eq!(format!("{:?}", out_a.columns), format!("{:?}", out_b.columns));
    let flow = &a["flows"][0];
    assert!(flow.get("paths").is_none());
    assert_eq!(flow["bytes_delivered"], 1_000_000);
}

// ---------------------------------------------------------------------------------------------
// End to end with the Multipath QUIC endpoint

/// A 20 MB download over two 10 Mbit/s paths, 20 ms and 50 ms one way.
const DOWNLOAD: &str = r#"
[run]
duration = "60 s"

[[link]]
name = "fast"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "100 packets"

[[link]]
name = "slow"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "50 ms"
queue = "100 packets"

[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "20 MB"
cc = "newreno"
paths = [["fast"], ["slow"]]

[flow.multipath]
scheduler = "minrtt"
"#;

fn path_field(flow: &serde_json::Value, p: usize, side: &str, field: &str) -> u64 {
    flow["paths"][p][side][field].as_u64().unwrap_or_else(|| panic!("paths[{p}].{side}.{field} in {flow}"))
}

#[test]
fn a_minrtt_download_uses_both_paths_and_finishes() {
    let (summary, _) = run(DOWNLOAD, Some(1));
    let flow = &summary["flows"][0];
    assert_eq!(flow["bytes_delivered"], 20_000_000u64);
    let done = flow["completion_s"].as_f64().expect("the download finishes");
    // One 10 Mbit/s path needs 16 s for 20 MB; two carry it in well under that.
    assert!(done < 13.0, "completion {done} s");
    for p in 0..2 {
        let sent = path_field(flow, p, "server", "bytes_sent");
        assert!(sent > 4_000_000, "path {p} carried only {sent} B: {flow}");
        assert_eq!(flow["paths"][p]["server"]["status"], "active");
        assert!(path_field(flow, p, "client", "packets_received") > 0);
        assert!(flow["paths"][p]["network"]["forward"]["bytes_arrived"].as_u64().unwrap() > 4_000_000);
    }
    let srtt = |p: usize| flow["paths"][p]["server"]["srtt_ms"].as_f64().unwrap();
    assert!(srtt(0) < srtt(1), "{flow}");
    let (again, _) = run(DOWNLOAD, Some(1));
    assert_eq!(summary, again, "same seed, same summary");
}

#[test]
fn the_download_survives_a_path_going_down() {
    // The fast path's link is down in both directions from 2 s to the end.
    let text = DOWNLOAD.replace("delay = \"20 ms\"", "delay = \"20 ms\"\ndown = [[\"2 s\", \"100 s\"]]");
    let (summary, _) = run(&text, Some(1));
    let flow = &summary["flows"][0];
    assert_eq!(flow["bytes_delivered"], 20_000_000u64, "{flow}");
    let done = flow["completion_s"].as_f64().expect("the download finishes over the slow path");
    assert!(done < 30.0, "completion {done} s");
    // Both ends were told that their interface on path 0 went down.
    assert_ne!(flow["paths"][0]["server"]["status"], "active", "{flow}");
    assert_ne!(flow["paths"][0]["client"]["status"], "active", "{flow}");
    assert_eq!(flow["paths"][1]["server"]["status"], "active", "{flow}");
    // After 2 s the slow path carries the rest: most of the 20 MB.
    assert!(path_field(flow, 1, "server", "bytes_sent") > 12_000_000, "{flow}");
    assert!(flow["paths"][0]["network"]["forward"]["packets_dropped"].as_u64().unwrap() > 0);
}
