//! A long bulk transfer through a drop-tail bottleneck: repeated loss episodes, goodput
//! close to the link rate, consistent counters; also reports the model's speed.
use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_transport::{Endpoint, Workload};
use support::*;

#[test]
fn bulk_40mbit_20s_through_a_drop_tail_queue() {
    let p = params(Workload::Download {
        size: None,
        request_size: 200,
    });
    let mut h = Harness::new(&p, ms(10));
    h.s2c.rate = Some(Rate(40_000_000));
    h.s2c.queue_limit = Some(100);
    h.s2c.keep_log = false;
    h.c2s.keep_log = false;
    let wall = std::time::Instant::now();
    h.run_until(Time(20_000_000_000), |_| false);
    let elapsed = wall.elapsed();
    let delivered = Harness::delivered(&h.client_events);
    let goodput = delivered as f64 * 8.0 / 20.0;
    // 1448 of 1500 bytes are payload: at most 38.6 Mbit/s.
    assert!(goodput > 0.85 * 40e6 * 1448.0 / 1500.0, "goodput {goodput}");
    let s = h.server.sample();
    assert!(h.s2c.dropped > 0 && s.retransmissions >= h.s2c.dropped.min(s.retransmissions));
    assert!(
        s.retransmissions <= h.s2c.dropped + 2 * h.server.sender().timeouts() * 100,
        "{s:?} dropped {}",
        h.s2c.dropped
    );
    assert!(s.bytes_in_flight <= h.server.sender().scoreboard().outstanding());
    eprintln!(
        "bulk: {:.1} Mbit/s goodput, {} drops, {:?}, {} timeouts, {} events in {:?}",
        goodput / 1e6,
        h.s2c.dropped,
        s,
        h.server.sender().timeouts(),
        h.steps,
        elapsed
    );
}
