//! Cost of the model per datagram in long bulk transfers (printed; run with --nocapture).
use crate::support;

use std::time::Instant;

use multiconn_core::{Dur, Rate, Time};
use multiconn_testkit::PathConfig;
use multiconn_transport::{Endpoint, Workload};
use support::*;

struct Run {
    goodput_mbps: f64,
    ns_per_datagram: f64,
}

fn bulk(rate_mbps: f64, secs: f64, backlog: Option<Dur>) -> Run {
    let p = params(Workload::Download { size: None, request_size: 100 }, Time::ZERO);
    let rate = Rate::from_mbps(rate_mbps);
    let to_client = backlog.map_or_else(|| deep(rate, ms(15)), |b| bounded(rate, ms(15), b));
    let mut h = quic_pair(&p, &[PathConfig { to_client, to_server: deep(rate, ms(15)) }]);
    h.record_wire = false;
    let t0 = Instant::now();
    h.run_until(Time::from_secs_f64(secs));
    let wall = t0.elapsed().as_secs_f64();
    let goodput_mbps = h.client.stats().delivered as f64 * 8.0 / secs / 1e6;
    let ns = wall * 1e9 / h.datagrams() as f64;
    let s = h.server.sample();
    println!(
        "{rate_mbps} Mbit/s, {secs} s, backlog {backlog:?}: {} datagrams, {ns:.0} ns each, {:.0}× real time; goodput {goodput_mbps:.1} Mbit/s; {s:?}; tail drops {}",
        h.datagrams(),
        secs / wall,
        h.counters(0, Route::ToClient).refused
    );
    Run { goodput_mbps, ns_per_datagram: ns }
}

#[test]
fn bulk_transfer_fills_the_link_at_a_cost_independent_of_the_window() {
    // Drop-tail bottleneck (50 ms of backlog): NewReno saw-tooth with losses and recovery.
    let r = bulk(40.0, 30.0, Some(ms(50)));
    assert!(r.goodput_mbps > 30.0, "{}", r.goodput_mbps);
    // No queue limit: the window grows to megabytes; the cost per datagram must not grow
    // with it (a per-ACK scan of the window would multiply it).
    let small = bulk(40.0, 3.0, None);
    let large = bulk(40.0, 30.0, None);
    assert!(large.goodput_mbps > 36.0, "{}", large.goodput_mbps);
    println!("cost ratio 30 s / 3 s without queue limit: {:.2}", large.ns_per_datagram / small.ns_per_datagram);
}
