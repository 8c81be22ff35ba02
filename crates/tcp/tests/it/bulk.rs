//! A long bulk transfer through a drop-tail bottleneck: repeated loss episodes, goodput
//! close to the link rate, consistent counters; also reports the model's speed.
use crate::support;

use multiconn_core::units::QueueLimit;
use multiconn_core::{Rate, Time};
use multiconn_testkit::{link, Route};
use multiconn_transport::{Endpoint, Workload};
use support::*;

#[test]
fn bulk_40mbit_20s_through_a_drop_tail_queue() {
    let p = params(Workload::Download { size: None, request_size: 200 });
    // 100 packets may wait behind the one in transmission (a Linux pfifo of limit 100).
    let bottleneck = link(Rate(40_000_000), ms(10), QueueLimit::Packets(100));
    let mut h = tcp_pair(&p, path(bottleneck, fast(ms(10))));
    h.record_wire = false;
    let wall = std::time::Instant::now();
    h.drive_to(Time(20_000_000_000));
    let elapsed = wall.elapsed();
    let delivered = delivered_bytes(&h.client_events);
    let goodput = delivered as f64 * 8.0 / 20.0;
    // 1448 of 1500 bytes are payload: at most 38.6 Mbit/s.
    assert!(goodput > 0.85 * 40e6 * 1448.0 / 1500.0, "goodput {goodput}");
    let s = h.server.sample();
    let link = h.counters(0, Route::ToClient);
    // Every loss is the queue's: refused at the door, nothing dropped inside.
    assert_eq!(link.dropped, 0);
    let dropped = link.refused;
    assert!(dropped > 0 && s.retransmissions >= dropped.min(s.retransmissions));
    assert!(s.retransmissions <= dropped + 2 * h.server.sender().timeouts() * 100, "{s:?} dropped {dropped}");
    assert!(s.bytes_in_flight <= h.server.sender().scoreboard().outstanding());
    eprintln!(
        "bulk: {:.1} Mbit/s goodput, {} drops, {:?}, {} timeouts, {} steps in {:?}",
        goodput / 1e6,
        dropped,
        s,
        h.server.sender().timeouts(),
        h.steps,
        elapsed
    );
}
