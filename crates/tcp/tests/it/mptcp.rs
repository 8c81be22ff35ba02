//! MPTCP end to end between two endpoints over testkit's pair and the real link models: the MP_CAPABLE and MP_JOIN
//! handshakes, data sequence mappings and connection-level reassembly, DATA_ACKs across
//! subflows, the min-RTT scheduler, reinjection when a subflow fails, the shared receive
//! window, coupled and redundant variants, determinism.

use std::ops::{Deref, DerefMut};

use multiconn_cc::{CcKind, CoupledKind};
use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, FlowId, Packet, Rate, Time};
use multiconn_link::availability::Schedule;
use multiconn_multipath::PathStatus;
use multiconn_tcp::mptcp::option::HandshakeOption;
use multiconn_tcp::mptcp::MptcpSegment;
use multiconn_tcp::{MptcpEndpoint, MptcpError, TcpFactory};
use multiconn_testkit::{link, Pair, PathConfig, Route, WireEvent};
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{
    AckPath, AppEvent, ConnectionParams, Endpoint, FailoverProfile, MultipathParams, PathStats, Profile, Role, SchedulerKind, SchedulerOptions,
    Workload,
};

fn ms(v: u64) -> Dur {
    Dur::from_millis(v)
}

fn params(workload: Workload, paths: u8) -> ConnectionParams {
    ConnectionParams {
        flow: FlowId(0),
        start: Time::ZERO,
        workload,
        profile: Profile::default_for(TransportKind::Tcp),
        cc: CcKind::Cubic,
        max_packet_size: 1500,
        resume: false,
        address_token: false,
        qlog: false,
        multipath: Some(MultipathParams {
            paths,
            scheduler: SchedulerKind::MinRtt,
            options: SchedulerOptions::default(),
            ack_path: AckPath::Same,
            failover: FailoverProfile::LinuxMptcp,
            coupled: None,
            opened_later: Vec::new(),
        }),
        external_cc: None,
        external_workload: None,
        datagrams: None,
    }
}

fn download(size: u64) -> Workload {
    Workload::Download { size: Some(size), request_size: 200 }
}

/// What left an endpoint: (time, path, segment).
type Log = Vec<(Time, u8, MptcpSegment)>;

/// The MPTCP segment a packet carries.
fn mseg(pkt: &Packet) -> &MptcpSegment {
    pkt.payload.as_ref().and_then(|p| p.get::<MptcpSegment>()).unwrap_or_else(|| panic!("packet {} carries no MPTCP segment", pkt.id))
}

/// Client and server over testkit's pair; each path is alike both ways: a fixed rate, a
/// one-way delay and a queue that never fills (the windows, not queue drops, limit the
/// subflows). A blackout is the link's own down schedule: packets offered while down are
/// refused and those waiting in the queue when it goes down are flushed.
struct Net {
    pair: Pair<MptcpEndpoint, MptcpEndpoint>,
}

impl Deref for Net {
    type Target = Pair<MptcpEndpoint, MptcpEndpoint>;
    fn deref(&self) -> &Self::Target {
        &self.pair
    }
}

impl DerefMut for Net {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.pair
    }
}

impl Net {
    /// Paths of (one-way delay, rate).
    fn new(p: &ConnectionParams, paths: &[(Dur, Rate)]) -> Net {
        Net::with_down(p, paths, &[])
    }

    /// Paths of (one-way delay, rate); path `blackout.0` is down both ways during
    /// `[blackout.1, blackout.2)`.
    fn with_blackout(p: &ConnectionParams, paths: &[(Dur, Rate)], blackout: (usize, Time, Time)) -> Net {
        Net::with_down(p, paths, &[blackout])
    }

    fn with_down(p: &ConnectionParams, paths: &[(Dur, Rate)], down: &[(usize, Time, Time)]) -> Net {
        let (client, server) = TcpFactory::new().try_connect_mptcp(p).unwrap();
        let configs: Vec<PathConfig> = paths
            .iter()
            .enumerate()
            .map(|(i, &(delay, rate))| {
                let mut l = link(rate, delay, QueueLimit::Packets(10_000));
                let windows: Vec<(Time, Time)> = down.iter().filter(|d| d.0 == i).map(|d| (d.1, d.2)).collect();
                l.down = Schedule::new(windows).unwrap();
                PathConfig::symmetric(l)
            })
            .collect();
        Net { pair: Pair::from_configs(Box::new(client), Box::new(server), 1, &configs) }
    }

    fn finished(&self) -> Option<Time> {
        self.pair.client_event_time(AppEvent::Finished)
    }

    /// Runs until the client's application has everything or `limit`.
    fn run(&mut self, limit: Time) -> Option<Time> {
        self.pair.drive_until_by(limit, |p| p.client_finished());
        self.finished()
    }

    /// Runs on until `limit`.
    fn settle(&mut self, limit: Time) {
        self.pair.drive_to(limit);
    }

    fn log(&self, route: Route) -> Log {
        self.pair.wire_on(route, WireEvent::Sent).map(|w| (w.at, w.path, mseg(&w.pkt).clone())).collect()
    }

    /// What the client sent, on every path.
    fn client_log(&self) -> Log {
        self.log(Route::ToServer)
    }

    /// What the server sent, on every path.
    fn server_log(&self) -> Log {
        self.log(Route::ToClient)
    }

    fn delivered(&self) -> u64 {
        multiconn_testkit::delivered_bytes(&self.pair.client_events)
    }

    /// Payload bytes the server sent on `path` (retransmissions included).
    fn server_payload_on(&self, path: u8) -> u64 {
        self.server_log().iter().filter(|(_, p, _)| *p == path).map(|(_, _, s)| u64::from(s.tcp.len)).sum()
    }
}

fn mbps(v: u64) -> Rate {
    Rate(v * 1_000_000)
}

fn secs(v: u64) -> Time {
    Time(v * 1_000_000_000)
}

fn path_stats(e: &MptcpEndpoint) -> Vec<PathStats> {
    let mut v = Vec::new();
    e.path_stats(&mut v);
    v
}

// ---------------------------------------------------------------------------------------------
// Handshakes

#[test]
fn mp_capable_first_then_mp_join_on_the_other_path() {
    let p = params(download(100_000), 2);
    let mut net = Net::new(&p, &[(ms(20), mbps(10)), (ms(10), mbps(10))]);
    assert!(net.run(secs(5)).is_some());
    let first = |log: &Log, path: u8| log.iter().find(|(_, p, _)| *p == path).map(|(t, _, s)| (*t, s.clone())).unwrap();
    let (t0, syn) = first(&net.client_log(), 0);
    assert_eq!((t0, syn.handshake), (Time::ZERO, Some(HandshakeOption::CapableSyn)));
    assert!(syn.tcp.flags.syn && syn.data_ack.is_none());
    let (_, synack) = first(&net.server_log(), 0);
    assert_eq!(synack.handshake, Some(HandshakeOption::CapableSynAck));
    // The join leaves once the SYN-ACK of the initial subflow is back (40 ms RTT).
    let (t1, join) = first(&net.client_log(), 1);
    assert_eq!(join.handshake, Some(HandshakeOption::JoinSyn));
    assert!(t1 >= Time(40_000_000), "join at {t1}");
    let (_, join_ack) = first(&net.server_log(), 1);
    assert_eq!(join_ack.handshake, Some(HandshakeOption::JoinSynAck));
    // The initiator's third ACKs carry the handshake ACK options, the first of path 0 with the
    // ClientHello (MP_CAPABLE with data).
    let third = |path: u8| net.client_log().iter().filter(|(_, p, s)| *p == path && !s.tcp.flags.syn).map(|(_, _, s)| s.clone()).next().unwrap();
    let t = third(0);
    assert_eq!((t.handshake, t.tcp.len), (Some(HandshakeOption::CapableAck), 300));
    assert!(t.mapping.is_some() && t.data_ack.is_none());
    assert_eq!(third(1).handshake, Some(HandshakeOption::JoinAck));
    // Everything after carries a DATA_ACK.
    for (_, _, s) in net.server_log().iter().filter(|(_, _, s)| !s.tcp.flags.syn) {
        assert!(s.data_ack.is_some() && s.handshake.is_none());
    }
    // Both subflows are active at both ends.
    for e in [&net.client, &net.server] {
        let st = path_stats(e);
        assert_eq!(st.len(), 2);
        assert!(st.iter().all(|s| s.status == "active"), "{st:?}");
    }
}

#[test]
fn a_join_waits_for_the_fourth_ack_before_the_initiator_uses_it() {
    let p = params(download(50_000), 2);
    let mut net = Net::new(&p, &[(ms(10), mbps(10)), (ms(10), mbps(10))]);
    net.run(secs(5)).unwrap();
    // The server's first non-SYN segment on path 1 is the fourth ACK, right after the third.
    let third_at = net.client_log().iter().find(|(_, p, s)| *p == 1 && s.handshake == Some(HandshakeOption::JoinAck)).unwrap().0;
    let fourth = net.server_log().into_iter().find(|(_, p, s)| *p == 1 && !s.tcp.flags.syn).unwrap();
    // Answered at once: 10 ms and the serialization of the third ACK at 10 Mbit/s.
    assert!(fourth.0 >= third_at + ms(10) && fourth.0 < third_at + ms(11), "{} after {}", fourth.0, third_at);
    assert_eq!(fourth.2.tcp.ack, 1);
}

// ---------------------------------------------------------------------------------------------
// Data sequence mapping, reassembly, DATA_ACK

#[test]
fn a_download_over_two_subflows_is_reassembled_in_data_order() {
    let size = 3_000_000;
    let p = params(download(size), 2);
    let mut net = Net::new(&p, &[(ms(20), mbps(10)), (ms(40), mbps(10))]);
    let done = net.run(secs(30)).expect("finishes");
    assert_eq!(net.delivered(), size);
    // Both subflows carried data, and a subflow's segments carry disjoint pieces of one data
    // sequence space that together cover it.
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for (_, _, s) in net.server_log().iter().filter(|(_, _, s)| s.tcp.len > 0) {
        let m = s.mapping.expect("every data segment has a mapping");
        assert_eq!((m.ssn, m.len), (s.tcp.seq, s.tcp.len));
        ranges.push((m.dsn, m.dsn + u64::from(m.len)));
    }
    ranges.sort();
    ranges.dedup();
    let mut covered = 0;
    for (a, b) in ranges {
        assert!(a <= covered, "a gap before {a}");
        covered = covered.max(b);
    }
    let total = multiconn_tcp::app::SERVER_FLIGHT + size;
    assert_eq!(covered, total);
    for path in 0..2 {
        assert!(net.server_payload_on(path) > 500_000, "path {path}: {}", net.server_payload_on(path));
    }
    // Across subflows data arrived out of order and waited in the shared buffer.
    assert!(net.client.data_receiver().peak_ooo_bytes() > 0);
    assert_eq!(net.client.data_receiver().rcv_nxt(), total);
    assert_eq!(net.client.data_receiver().beyond_window_bytes(), 0);
    for e in [&net.client, &net.server] {
        assert!(e.subflows().iter().all(|s| s.counters.mapping_errors == 0));
    }
    // Two 10 Mbit/s paths: well under the 2.5 s one path needs.
    assert!(done < Time(2_100_000_000), "done at {done}");
}

#[test]
fn the_data_ack_on_one_subflow_acknowledges_data_sent_on_the_other() {
    let p = params(download(1_000_000), 2);
    let mut net = Net::new(&p, &[(ms(20), mbps(10)), (ms(40), mbps(10))]);
    let done = net.run(secs(30)).unwrap();
    net.settle(done + Dur::from_millis(1000));
    // Some ACK on path 0 (the fast one) acknowledged at the data level bytes that only path 1
    // carried.
    let on_path = |path: u8| -> Vec<(u64, u64)> {
        net.server_log()
            .iter()
            .filter(|(_, p, s)| *p == path && s.tcp.len > 0)
            .map(|(_, _, s)| (s.mapping.unwrap().dsn, s.mapping.unwrap().dsn + u64::from(s.tcp.len)))
            .collect()
    };
    let slow = on_path(1);
    let fast = on_path(0);
    // The DATA_ACK is one sequence for the connection: never decreasing, whichever subflow
    // carries it.
    let acks: Vec<(u8, u64)> = net.client_log().iter().filter_map(|(_, p, s)| s.data_ack.map(|d| (*p, d.ack))).collect();
    assert!(acks.windows(2).all(|w| w[0].1 <= w[1].1));
    assert!(acks.iter().any(|a| a.0 == 0) && acks.iter().any(|a| a.0 == 1));
    // ACKs on path 0 acknowledge data that only path 1 carried, and the other way round.
    let only = |r: &(u64, u64), other: &[(u64, u64)]| !other.iter().any(|o| o.0 < r.1 && r.0 < o.1);
    let covers = |path: u8, ranges: &[(u64, u64)], other: &[(u64, u64)]| {
        ranges.iter().filter(|r| only(r, other)).any(|r| acks.iter().any(|a| a.0 == path && a.1 >= r.1 && a.1 < r.1 + 20_000))
    };
    assert!(covers(0, &slow, &fast), "a DATA_ACK on path 0 right after path-1 data");
    assert!(covers(1, &fast, &slow), "a DATA_ACK on path 1 right after path-0 data");
    // At the end the server knows everything arrived.
    let total = multiconn_tcp::app::SERVER_FLIGHT + 1_000_000;
    assert_eq!(net.server.data_sender().una(), total);
    assert_eq!(net.server.data_sender().nxt(), total);
}

// ---------------------------------------------------------------------------------------------
// Scheduling

#[test]
fn min_rtt_puts_what_fits_on_the_faster_subflow_and_spills_when_it_is_full() {
    // Small responses after the subflows are up: each fits in the fast subflow's window.
    let w = Workload::Requests { count: 6, parallel: 1, request_size: 100, response_size: 8_000 };
    let p = params(w, 2);
    let mut net = Net::new(&p, &[(ms(60), mbps(10)), (ms(10), mbps(10))]);
    net.run(secs(10)).unwrap();
    let after_join = net.client_log().iter().find(|(_, p, s)| *p == 1 && s.handshake == Some(HandshakeOption::JoinAck)).unwrap().0 + ms(10);
    let late: Vec<u8> = net.server_log().iter().filter(|(t, _, s)| *t > after_join && s.tcp.len > 0).map(|(_, p, _)| *p).collect();
    assert!(late.len() > 20);
    assert!(late.iter().all(|&p| p == 1), "the 20 ms subflow takes everything: {late:?}");
    // A bulk download fills the fast subflow's window and spills onto the slow one.
    let p = params(download(2_000_000), 2);
    let mut net = Net::new(&p, &[(ms(60), mbps(10)), (ms(10), mbps(10))]);
    net.run(secs(30)).unwrap();
    assert!(net.server_payload_on(1) > net.server_payload_on(0));
    assert!(net.server_payload_on(0) > 200_000);
}

#[test]
fn redundant_sends_every_chunk_on_both_subflows() {
    let mut p = params(download(500_000), 2);
    p.multipath.as_mut().unwrap().scheduler = SchedulerKind::Redundant;
    let mut net = Net::new(&p, &[(ms(20), mbps(10)), (ms(30), mbps(10))]);
    net.run(secs(30)).unwrap();
    assert_eq!(net.delivered(), 500_000);
    assert!(net.server.stats().redundant_copies > 200, "{:?}", net.server.stats());
    assert!(net.client.data_receiver().duplicate_bytes() > 200_000);
}

#[test]
fn selective_redundant_and_fastest_acks_are_refused() {
    let mut p = params(download(1), 2);
    p.multipath.as_mut().unwrap().scheduler = SchedulerKind::SelectiveRedundant;
    let e = MptcpEndpoint::new(Role::Server, &p).unwrap_err();
    assert_eq!(e, MptcpError::Scheduler(SchedulerKind::SelectiveRedundant));
    assert!(e.to_string().contains("one byte stream"), "{e}");
    let mut p = params(download(1), 2);
    p.multipath.as_mut().unwrap().ack_path = AckPath::Fastest;
    assert!(MptcpEndpoint::new(Role::Server, &p).unwrap_err().to_string().contains("ack_path must be \"same\""));
    let mut p = params(download(1), 2);
    p.multipath = None;
    assert_eq!(MptcpEndpoint::new(Role::Server, &p).unwrap_err(), MptcpError::NotMultipath);
    let mut p = params(download(1), 2);
    p.max_packet_size = 80;
    assert_eq!(MptcpEndpoint::new(Role::Server, &p).unwrap_err(), MptcpError::PacketSize(80));
    let p = params(download(1), 9);
    assert_eq!(MptcpEndpoint::new(Role::Server, &p).unwrap_err(), MptcpError::Paths(9));
    // Prague needs AccECN, which the subflows do not negotiate (linux-tcp offers it).
    let mut p = params(download(1), 2);
    p.cc = multiconn_cc::CcKind::Prague;
    let e = MptcpEndpoint::new(Role::Server, &p).unwrap_err();
    assert_eq!(e, MptcpError::ScalableCc("prague"));
    assert!(e.to_string().contains("needs Accurate ECN"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Failure and reinjection

#[test]
fn an_interface_going_down_reinjects_the_subflows_data_elsewhere() {
    let size = 4_000_000;
    let p = params(download(size), 2);
    // Path 0 dies at 1 s for good, both directions; both hosts see their interface go down.
    let mut net = Net::with_blackout(&p, &[(ms(10), mbps(10)), (ms(30), mbps(10))], (0, secs(1), secs(1000)));
    net.path_status_at(secs(1), 0, false);
    let done = net.run(secs(60)).expect("finishes over path 1");
    assert_eq!(net.delivered(), size);
    let st = net.server.stats();
    assert!(st.reinjection_events >= 1 && st.reinjected_chunks > 0, "{st:?}");
    assert!(net.server.data_sender().reinjected_bytes() > 0);
    assert_eq!(path_stats(&net.server)[0].status, "down");
    // Nothing left on path 0 after it went down.
    assert!(net.server_log().iter().all(|(t, p, _)| *p != 0 || *t < secs(1)));
    // Reinjected chunks went out on path 1 right away: no RTO had to pass.
    let first_reinjection = net.server_log().iter().find(|(t, p, s)| *t >= secs(1) && *p == 1 && s.tcp.len > 0).unwrap().0;
    assert!(first_reinjection < secs(1) + ms(50), "{first_reinjection}");
    assert!(done < secs(6), "done at {done}");
}

#[test]
fn a_silent_blackout_makes_the_subflow_stale_after_four_timeouts() {
    let size = 3_000_000;
    let p = params(download(size), 2);
    // No interface event: the path just stops delivering.
    let mut net = Net::with_blackout(&p, &[(ms(10), mbps(10)), (ms(30), mbps(10))], (0, secs(1), secs(1000)));
    let done = net.run(secs(60)).expect("finishes over path 1");
    assert_eq!(net.delivered(), size);
    assert_eq!(net.server.health(0), Some(PathStatus::PotentiallyFailed));
    assert!(net.server.subflows()[0].sender().timeouts() >= 4);
    assert!(net.server.stats().reinjection_events >= 1);
    // Stale after 4 RTOs (about 0.2 + 0.4 + 0.8 + 1.6 s with backoff), then path 1 finishes.
    assert!(done > secs(3) && done < secs(10), "done at {done}");
    assert_eq!(path_stats(&net.server)[0].status, "potentially_failed");
}

#[test]
fn a_returning_interface_brings_the_subflow_back() {
    let size = 6_000_000;
    let p = params(download(size), 2);
    let mut net = Net::with_blackout(&p, &[(ms(10), mbps(10)), (ms(30), mbps(10))], (0, secs(1), secs(2)));
    net.path_status_at(secs(1), 0, false);
    net.path_status_at(secs(2), 0, true);
    net.run(secs(60)).expect("finishes");
    assert_eq!(net.delivered(), size);
    assert_eq!(net.server.health(0), Some(PathStatus::Active));
    let after = net.server_log().iter().filter(|(t, p, s)| *t > secs(2) + ms(500) && *p == 0 && s.tcp.len > 0).count();
    assert!(after > 100, "path 0 carries data again: {after}");
}

// ---------------------------------------------------------------------------------------------
// The shared receive buffer

#[test]
fn a_small_shared_buffer_holds_the_fast_subflow_back() {
    let size = 3_000_000;
    let run = |rmem: [u64; 3]| {
        let mut p = params(download(size), 2);
        p.profile.tcp.as_mut().unwrap().rmem = rmem;
        let mut net = Net::new(&p, &[(ms(10), mbps(10)), (ms(100), mbps(10))]);
        let done = net.run(secs(120)).expect("finishes");
        assert_eq!(net.delivered(), size);
        assert_eq!(net.client.data_receiver().beyond_window_bytes(), 0);
        (done, net.client.data_receiver().peak_ooo_bytes(), net.client.data_receiver().right_edge())
    };
    let (big, _, _) = run([4096, 131_072, 33_554_432]);
    let (small, peak, _) = run([4096, 65_536, 65_536]);
    // 64 KiB advertise 32 KiB: less than one RTT of the 200 ms subflow at 10 Mbit/s.
    assert!(peak <= 32_768, "out-of-order data never exceeds the window: {peak}");
    assert!(small.0 > big.0 * 13 / 10, "small buffer {small}, large {big}");
}

// ---------------------------------------------------------------------------------------------
// Congestion control, statistics, determinism

#[test]
fn coupled_lia_completes_and_reports_per_path_windows() {
    // Every coupled kind, LIA's linked increases as much as the delay-based wVegas and
    // Westwood+: MPTCP subflows share one controller from the same `build_multipath`.
    for kind in CoupledKind::ALL {
        let mut p = params(download(2_000_000), 2);
        p.multipath.as_mut().unwrap().coupled = Some(kind);
        let mut net = Net::new(&p, &[(ms(20), mbps(10)), (ms(40), mbps(10))]);
        net.run(secs(30)).expect("finishes");
        assert_eq!(net.delivered(), 2_000_000, "{kind:?}");
        let st = path_stats(&net.server);
        assert_eq!(st.len(), 2);
        for s in &st {
            assert!(s.cwnd > 0 && s.srtt > Dur::ZERO && s.bytes_sent > 100_000, "{kind:?}: {s:?}");
            assert_eq!(s.cwnd, net.server.cwnd(s.path as usize));
        }
        assert!(st[0].srtt < st[1].srtt, "{kind:?}");
        let sample = net.server.sample();
        assert_eq!(sample.cwnd, st[0].cwnd + st[1].cwnd);
        assert_eq!(sample.srtt, st[0].srtt);
    }
}

#[test]
fn same_inputs_same_run() {
    let go = || {
        let p = params(download(1_500_000), 2);
        let mut net = Net::new(&p, &[(ms(20), mbps(10)), (ms(50), mbps(5))]);
        let t = net.run(secs(30)).unwrap();
        (t, net.server_log().len(), net.client_log().len(), path_stats(&net.server), path_stats(&net.client))
    };
    assert_eq!(go(), go());
}


/// The factory refuses what MPTCP cannot run, naming the knob, instead of running something
/// else (it used to fall back to min-RTT, ACKs on the same subflow, the default controller).
#[test]
fn the_factory_refuses_instead_of_substituting() {
    use multiconn_transport::{Knob, TransportFactory};
    let factory = multiconn_tcp::TcpFactory::new();
    let mut p = params(download(1), 2);
    p.multipath.as_mut().unwrap().scheduler = SchedulerKind::SelectiveRedundant;
    assert_eq!(factory.check(&p).unwrap_err().knob, Knob::Scheduler);
    assert_eq!(factory.connect(&p).err().map(|e| e.knob), Some(Knob::Scheduler));
    let mut p = params(download(1), 2);
    p.multipath.as_mut().unwrap().ack_path = multiconn_transport::AckPath::Fastest;
    assert_eq!(factory.check(&p).unwrap_err().knob, Knob::AckPath);
    let mut p = params(download(1), 2);
    p.max_packet_size = 80;
    assert_eq!(factory.check(&p).unwrap_err().knob, Knob::PacketSize);
    assert!(factory.check(&params(download(1), 2)).is_ok());
    assert!(factory.connect(&params(download(1), 2)).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Linux 5.15 (reference multi-operator.md §6.2)

/// An MPTCP connection under the `linux-mptcp-5.15` profile, as a scenario resolves it.
fn params_5_15(workload: Workload) -> ConnectionParams {
    let mut p = params(workload, 2);
    p.profile = Profile::builtin("linux-mptcp-5.15", TransportKind::Tcp).unwrap();
    p.multipath.as_mut().unwrap().failover = FailoverProfile::LinuxMptcp515;
    p
}

/// Path 0 (10 ms, 10 Mbit/s) is down both ways from 1 s to `back`, and both hosts'
/// interfaces report it; path 1: 30 ms, 10 Mbit/s.
fn link_down_until(p: &ConnectionParams, back: Time) -> Net {
    let mut net = Net::with_blackout(p, &[(ms(10), mbps(10)), (ms(30), mbps(10))], (0, secs(1), back));
    net.path_status_at(secs(1), 0, false);
    net.path_status_at(back, 0, true);
    net
}

#[test]
fn linux_5_15_a_dead_link_makes_the_subflow_stale_at_the_fifth_timeout_and_it_recovers_after_the_link() {
    let size = 60_000_000;
    let mut net = link_down_until(&params_5_15(download(size)), secs(15));
    // The path manager does not see the link go down: nothing happens at 1 s.
    net.settle(secs(1) + ms(100));
    assert_eq!(net.server.health(0), Some(PathStatus::Active));
    assert_eq!(net.server.stats().reinjection_events, 0);
    assert_eq!(path_stats(&net.server)[0].status, "active", "not \"down\": the interface is not watched");
    // Stale when the count of timeouts without reception exceeds stale_loss_cnt = 4.
    net.pair.drive_until_by(secs(60), |p| p.server.health(0) == Some(PathStatus::PotentiallyFailed));
    let stale_at = net.now;
    assert_eq!(net.server.subflows()[0].sender().timeouts(), 5);
    // Five backed-off RTOs after the outage began: 31 times the first RTO, which the queue
    // built up by the transfer makes about 0.32 s (srtt 115 ms at 1 s: HyStart leaves slow
    // start before the 10 Mbit/s path's queue is full).
    assert!(stale_at > secs(9) && stale_at < secs(12), "stale at {stale_at}");
    assert!(net.server.stats().reinjection_events >= 1 && net.server.stats().reinjected_chunks > 0);
    // Its data moves to subflow 1, and nothing new goes to the stale subflow: until the
    // link is back, its next RTO is due only after 15 s.
    net.settle(secs(15));
    assert!(net.server.data_sender().reinjected_bytes() > 0);
    assert_eq!(net.server_log().iter().filter(|(t, p, s)| *p == 0 && *t > stale_at && s.tcp.len > 0).count(), 0);
    let on_1 = net.server_log().iter().filter(|(t, p, s)| *p == 1 && *t > stale_at && s.tcp.len > 0).count();
    // From then to 15 s at 10 Mbit/s (about 4 s: some 3400 full segments).
    let full = (secs(15) - stale_at).as_secs_f64() * 10e6 / 8.0 / 1448.0;
    assert!(on_1 as f64 > 0.9 * full, "subflow 1 carries the transfer: {on_1} of {full:.0}");
    // The link returns at 15 s; the subflow stays stale until its next backed-off
    // retransmission (the sixth, 63 first RTOs after the outage began, about 21 s) gets
    // through and is acknowledged.
    net.pair.drive_until_by(secs(60), |p| p.server.health(0) == Some(PathStatus::Active));
    let back_at = net.now;
    assert!(back_at > secs(15) && back_at < secs(22), "active again at {back_at}");
    assert_eq!(net.server.subflows()[0].sender().timeouts(), 6);
    net.run(secs(120)).expect("finishes");
    assert_eq!(net.delivered(), size);
    let after = net.server_log().iter().filter(|(t, p, s)| *t > back_at + ms(500) && *p == 0 && s.tcp.len > 0).count();
    assert!(after > 100, "subflow 0 carries data again: {after}");
}

#[test]
fn linux_5_15_needs_more_than_four_timeouts_where_the_current_rule_takes_four() {
    // The same outage silent for both profiles (no interface events): linux-mptcp makes the
    // subflow stale at its fourth timeout, 5.15 at its fifth.
    let stale = |p: &ConnectionParams| {
        let mut net = Net::with_blackout(p, &[(ms(10), mbps(10)), (ms(30), mbps(10))], (0, secs(1), secs(30)));
        net.pair.drive_until_by(secs(60), |p| p.server.health(0) == Some(PathStatus::PotentiallyFailed));
        (net.now, net.server.subflows()[0].sender().timeouts())
    };
    let (t_now, n_now) = stale(&params(download(30_000_000), 2));
    let (t_515, n_515) = stale(&params_5_15(download(30_000_000)));
    assert_eq!((n_now, n_515), (4, 5));
    assert!(t_515 > t_now + Dur::from_secs(2), "{t_now} vs {t_515}: one more doubled RTO");
}

#[test]
fn linux_5_15_does_not_see_an_interface_go_down_where_the_current_profile_does() {
    // With linux-tcp the interface event makes the subflow potentially failed at once.
    let mut net = link_down_until(&params(download(30_000_000), 2), secs(25));
    // (An ACK already on its way when the link went down may make it active again a moment
    // later.)
    net.settle(secs(1));
    assert_eq!(net.server.health(0), Some(PathStatus::PotentiallyFailed));
    assert_eq!(path_stats(&net.server)[0].status, "down");
    // With linux-mptcp-5.15 the subflow keeps sending into the dead link (its SYN too, for a
    // join whose link is down from the start: it joins once a retransmitted SYN gets through).
    let mut net = Net::with_blackout(&params_5_15(download(4_000_000)), &[(ms(10), mbps(10)), (ms(30), mbps(10))], (1, Time::ZERO, secs(3)));
    net.path_status_at(Time::ZERO, 1, false);
    net.path_status_at(secs(3), 1, true);
    net.run(secs(60)).expect("finishes");
    let syns: Vec<Time> = net.client_log().iter().filter(|(_, p, s)| *p == 1 && s.tcp.flags.syn).map(|(t, _, _)| *t).collect();
    assert!(syns.len() >= 3, "{syns:?}");
    assert!(syns[0] < secs(1) && *syns.last().unwrap() >= secs(3), "{syns:?}");
    assert_eq!(net.delivered(), 4_000_000);
}
