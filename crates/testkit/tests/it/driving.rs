//! The driving calls: idle detection, predicates, deadlines, interface events, and the two
//! guards (a step bound and the same-time livelock guard) failing with a clear message.

use crate::toy::{AlwaysDue, Ticker, Toy};

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, Rate, Time};
use multiconn_testkit::{link, Pair, PathConfig};
use multiconn_transport::{AppEvent, Endpoint};

fn ms(v: u64) -> Time {
    Time(v * 1_000_000)
}

fn one_path() -> Vec<PathConfig> {
    vec![PathConfig::symmetric(link(Rate(12_000_000), Dur::from_millis(10), QueueLimit::Packets(100)))]
}

fn toy_pair(sends: Vec<(Time, u8, u32)>) -> Pair<Toy, Toy> {
    Pair::from_configs(Box::new(Toy::client(sends)), Box::new(Toy::echo_server()), 1, &one_path())
}

#[test]
fn step_goes_to_each_wake_up_in_turn_and_reports_idle() {
    let mut p = toy_pair(vec![(ms(5), 0, 1500)]);
    let mut times = Vec::new();
    while p.step() {
        times.push(p.now);
    }
    // The client's timer; the arrival at the server (1 ms of serialization, 10 ms of
    // propagation: the links wake only for deliveries); the echo's arrival after its
    // serialization (100 B: 66.667 µs) and propagation.
    let echo_tx = Dur(66_667);
    assert_eq!(times, vec![ms(5), ms(16), ms(26) + echo_tx]);
    assert_eq!(p.steps, 3);
    assert_eq!(p.next_wakeup(), None);
    assert!(!p.step());
}

#[test]
fn drive_until_stops_when_the_predicate_holds() {
    let mut p = toy_pair(vec![(ms(5), 0, 1500), (ms(50), 0, 1500)]);
    assert!(p.drive_until(|p| !p.server_events.is_empty()));
    assert_eq!(p.now, ms(16));
    assert_eq!(p.server_event_time(AppEvent::Delivered { bytes: 1500 }), Some(ms(16)));
    // The rest is still to come: the echo's arrival.
    assert_eq!(p.next_wakeup(), Some(ms(26) + Dur(66_667)));
    p.drive();
    assert_eq!(p.server.received.len(), 2);
}

#[test]
fn a_deadline_stops_the_clock_there_and_leaves_later_wake_ups_alone() {
    let mut p = toy_pair(vec![(ms(5), 0, 1500), (ms(50), 0, 1500)]);
    assert!(!p.drive_until_by(ms(30), |_| false));
    assert_eq!(p.now, ms(30));
    assert_eq!(p.server.received.len(), 1);
    assert_eq!(p.next_wakeup(), Some(ms(50)));
    p.drive_to(ms(61));
    assert_eq!((p.now, p.server.received.len()), (ms(61), 2));
    // An idle pair's clock still moves to the deadline.
    p.drive_to(ms(500));
    assert_eq!(p.now, ms(500));
}

#[test]
fn interface_events_reach_both_ends_at_their_time() {
    let mut p = toy_pair(vec![(ms(5), 0, 1500)]);
    p.path_status_at(ms(20), 0, false);
    p.path_status_at(ms(8), 0, true);
    p.drive_bounded(100);
    assert_eq!(p.client.status, vec![(ms(8), 0, true), (ms(20), 0, false)]);
    assert_eq!(p.server.status, p.client.status);
}

#[test]
fn any_transport_fits_behind_the_trait() {
    let client: Box<dyn Endpoint> = Box::new(Toy::client(vec![(ms(1), 0, 1500)]));
    let server: Box<dyn Endpoint> = Box::new(Toy::echo_server());
    let mut p = Pair::from_configs(client, server, 1, &one_path());
    p.drive_bounded(100);
    assert_eq!(p.client_events.len(), 1);
}

#[test]
#[should_panic(expected = "the pair is not idle after 50 steps (now 0.050000000 s")]
fn drive_bounded_fails_when_the_pair_never_goes_idle() {
    let server = Toy::echo_server();
    let mut p = Pair::from_configs(Box::new(Ticker { next: ms(1) }), Box::new(server), 1, &one_path());
    p.drive_bounded(50);
}

#[test]
#[should_panic(expected = "livelock: 10001 steps at 0.000000000 s without the clock advancing; due now or earlier: client timer at 0.000000000 s")]
fn an_endpoint_that_is_always_due_trips_the_livelock_guard() {
    let mut p = Pair::from_configs(Box::new(AlwaysDue), Box::new(Toy::echo_server()), 1, &one_path());
    p.drive();
}
