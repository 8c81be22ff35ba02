//! A packet crosses a path in its serialization time plus the propagation delay, on the
//! path it names; back-to-back packets queue behind each other.

use crate::toy::{Toy, ECHO_SIZE};

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, Rate, Time};
use multiconn_link::Link;
use multiconn_testkit::{link, Pair, PathConfig, Route, WireEvent};
use multiconn_transport::AppEvent;

fn ms(v: u64) -> Time {
    Time(v * 1_000_000)
}

fn us(v: u64) -> Time {
    Time(v * 1_000)
}

/// Toward the server 12 Mbit/s (1500 B in 1 ms) and 10 ms; toward the client 8 Mbit/s
/// (100 B in 100 µs) and 20 ms.
fn asymmetric() -> PathConfig {
    PathConfig {
        to_server: link(Rate(12_000_000), Dur::from_millis(10), QueueLimit::Packets(100)),
        to_client: link(Rate(8_000_000), Dur::from_millis(20), QueueLimit::Packets(100)),
    }
}

fn pair(sends: Vec<(Time, u8, u32)>, paths: &[PathConfig]) -> Pair<Toy, Toy> {
    Pair::from_configs(Box::new(Toy::client(sends)), Box::new(Toy::echo_server()), 7, paths)
}

/// (time, path, route, event, packet id) of every wire record.
fn records(p: &Pair<Toy, Toy>) -> Vec<(Time, u8, Route, WireEvent, u64)> {
    p.wire.iter().map(|w| (w.at, w.path, w.route, w.event, w.pkt.id)).collect()
}

#[test]
fn one_packet_and_its_echo_take_serialization_plus_propagation() {
    let mut p = pair(vec![(ms(5), 0, 1500)], &[asymmetric()]);
    p.drive_bounded(100);
    // 5 ms + 1 ms + 10 ms = 16 ms at the server; the echo leaves at once and takes
    // 100 µs + 20 ms: 36.1 ms at the client.
    assert_eq!(
        records(&p),
        vec![
            (ms(5), 0, Route::ToServer, WireEvent::Sent, 0),
            (ms(16), 0, Route::ToServer, WireEvent::Delivered, 0),
            (ms(16), 0, Route::ToClient, WireEvent::Sent, 1),
            (us(36_100), 0, Route::ToClient, WireEvent::Delivered, 1),
        ]
    );
    assert_eq!(p.server_events, vec![(ms(16), AppEvent::Delivered { bytes: 1500 })]);
    assert_eq!(p.client_events, vec![(us(36_100), AppEvent::Delivered { bytes: u64::from(ECHO_SIZE) })]);
    assert_eq!(p.now, us(36_100));
    // The pair stamps the route; the endpoint chose the path.
    let routes: Vec<u16> = p.wire.iter().filter(|w| w.is_sent()).map(|w| w.pkt.route).collect();
    assert_eq!(routes, vec![1, 0]);
}

#[test]
fn back_to_back_packets_are_serialized_one_after_another() {
    let mut p = pair(vec![(ms(5), 0, 1500), (ms(5), 0, 1500), (ms(5), 0, 1500)], &[asymmetric()]);
    p.drive_bounded(100);
    let at_server: Vec<Time> = p.server.received.iter().map(|r| r.0).collect();
    assert_eq!(at_server, vec![ms(16), ms(17), ms(18)]);
    // Each echo leaves as its packet arrives, 1 ms apart: no queueing on the way back.
    let at_client: Vec<Time> = p.client.received.iter().map(|r| r.0).collect();
    assert_eq!(at_client, vec![us(36_100), us(37_100), us(38_100)]);
    assert_eq!(p.link(0, Route::ToServer).queue().packets, 0);
}

#[test]
fn packets_take_the_path_they_name() {
    // Path 1: 24 Mbit/s (1500 B in 500 µs) and 5 ms both ways.
    let fast = PathConfig::symmetric(link(Rate(24_000_000), Dur::from_millis(5), QueueLimit::Packets(100)));
    let mut p = pair(vec![(ms(0), 0, 1500), (ms(0), 1, 1500)], &[asymmetric(), fast]);
    p.drive_bounded(100);
    // The packet sent second, on path 1, arrives first: 0.5 + 5 ms.
    assert_eq!(p.server.received, vec![(us(5_500), 1, 1), (ms(11), 0, 0)]);
    // The echoes come back on the path of their packet: 100 B at 24 Mbit/s is 33.334 µs
    // (rounded up to the nanosecond).
    assert_eq!(p.client.received[0], (Time(5_500_000 + 33_334 + 5_000_000), 1, 2));
    assert_eq!(p.client.received[1], (us(11_000 + 100 + 20_000), 0, 3));
    for path in 0..2 {
        let c = p.counters(path, Route::ToServer);
        assert_eq!((c.sent, c.delivered, c.lost()), (1, 1, 0), "path {path}");
    }
}

#[test]
#[should_panic(expected = "the client sent packet 0 on path 1, but the pair has 1 path(s)")]
fn a_packet_on_a_path_the_pair_lacks_fails_clearly() {
    let mut p = pair(vec![(ms(1), 1, 1500)], &[asymmetric()]);
    p.drive_bounded(100);
}
