//! Scripts on a pair's links: a drop refused at the door, a loss after transmission, an
//! extra delay that reorders, and the drop-tail queue of the real link.

use crate::toy::Toy;

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, Packet, Rate, Time};
use multiconn_link::scripted::Verdict;
use multiconn_testkit::{link, Pair, PathConfig, Route, WireEvent};

fn ms(v: u64) -> Time {
    Time(v * 1_000_000)
}

/// 12 Mbit/s (1500 B in 1 ms) and 10 ms both ways.
fn path(queue: u64) -> PathConfig {
    PathConfig::symmetric(link(Rate(12_000_000), Dur::from_millis(10), QueueLimit::Packets(queue)))
}

fn three_at_once(queue: u64) -> Pair<Toy, Toy> {
    let sends = (0..3).map(|_| (ms(0), 0, 1500)).collect();
    Pair::from_configs(Box::new(Toy::client(sends)), Box::new(Toy::echo_server()), 1, &[path(queue)])
}

#[test]
fn a_scripted_drop_is_refused_at_the_door_and_never_arrives() {
    let mut p = three_at_once(100);
    p.script(0, Route::ToServer, |n, _: &Packet| if n == 1 { Verdict::Drop } else { Verdict::Pass });
    p.drive_bounded(100);
    let to_server: Vec<(Time, WireEvent, u64)> =
        p.wire.iter().filter(|w| w.route == Route::ToServer).map(|w| (w.at, w.event, w.pkt.id)).collect();
    assert_eq!(
        to_server,
        vec![
            (ms(0), WireEvent::Sent, 0),
            (ms(0), WireEvent::Sent, 1),
            (ms(0), WireEvent::Refused(DropCause::RandomLoss), 1),
            (ms(0), WireEvent::Sent, 2),
            // The dropped packet used no capacity: packet 2 follows packet 0 directly.
            (ms(11), WireEvent::Delivered, 0),
            (ms(12), WireEvent::Delivered, 2),
        ]
    );
    let ids: Vec<u64> = p.server.received.iter().map(|r| r.2).collect();
    assert_eq!(ids, vec![0, 2]);
    let c = p.counters(0, Route::ToServer);
    assert_eq!((c.sent, c.refused, c.delivered, c.dropped), (3, 1, 2, 0));
    assert_eq!(p.link(0, Route::ToServer).counters().dropped, 1);
}

#[test]
fn a_scripted_loss_is_dropped_where_it_would_have_arrived() {
    let mut p = three_at_once(100);
    p.script(0, Route::ToServer, |n, _: &Packet| if n == 1 { Verdict::Lose } else { Verdict::Pass });
    p.drive_bounded(100);
    let lost: Vec<(Time, WireEvent, u64)> = p.wire.iter().filter(|w| w.is_lost()).map(|w| (w.at, w.event, w.pkt.id)).collect();
    assert_eq!(lost, vec![(ms(12), WireEvent::Dropped(DropCause::RandomLoss), 1)]);
    // Packet 1 used its millisecond of the link: packet 2 arrives at 13 ms.
    assert_eq!(p.server.received.iter().map(|r| (r.0, r.2)).collect::<Vec<_>>(), vec![(ms(11), 0), (ms(13), 2)]);
}

#[test]
fn a_scripted_delay_reorders_the_arrivals() {
    let mut p = three_at_once(100);
    p.script(0, Route::ToServer, |n, _: &Packet| if n == 0 { Verdict::Delay(Dur::from_millis(5)) } else { Verdict::Pass });
    p.drive_bounded(100);
    assert_eq!(
        p.server.received.iter().map(|r| (r.0, r.2)).collect::<Vec<_>>(),
        vec![(ms(12), 1), (ms(13), 2), (ms(16), 0)]
    );
}

#[test]
fn the_real_drop_tail_queue_refuses_what_does_not_fit() {
    // One packet in service and one waiting: the third offered at once is refused.
    let mut p = three_at_once(1);
    p.drive_bounded(100);
    let refused: Vec<(u64, WireEvent)> = p.wire.iter().filter(|w| w.is_lost()).map(|w| (w.pkt.id, w.event)).collect();
    assert_eq!(refused, vec![(2, WireEvent::Refused(DropCause::Queue))]);
    assert_eq!(p.counters(0, Route::ToServer).refused, 1);
}
