//! Packets per second through a saturated [`DropTailLink`] driven by a Mahimahi trace (the
//! synthetic one in `tests/data`, and the ATT LTE trace from the shared data folder when it
//! is present), and the cost of a finish-time query after a long idle gap.

// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use multiconn_core::units::QueueLimit;
use multiconn_core::{FlowId, Packet, Time};
use multiconn_link::queue::DropTailLink;
use multiconn_link::rate::{RateModel, RateServer};
use multiconn_link::trace::parse_mahimahi;
use multiconn_link::Link;
use std::path::Path;

const PACKETS: u64 = 100_000;

fn packet(id: u64) -> Packet {
    Packet { id, flow: FlowId(0), size: 1500, seq: id, created: Time::ZERO, hop: 0, route: 0, lower_sn: 0, path: 0, ecn: multiconn_core::Ecn::NotEct, payload: None }
}

/// Keeps the queue full and delivers `PACKETS` packets; returns the last delivery time.
fn saturate(model: &RateModel) -> Time {
    let mut link = DropTailLink::new(model.clone(), QueueLimit::Packets(100));
    let (mut now, mut next_id, mut delivered) = (Time::ZERO, 0, 0);
    while delivered < PACKETS {
        while link.has_room(1500) {
            link.enqueue(now, packet(next_id)).unwrap();
            next_id += 1;
        }
        now = link.poll_timeout().expect("a saturated link always has a packet in service");
        while link.poll(now).is_some() {
            delivered += 1;
        }
    }
    now
}

fn mahimahi_traces() -> Vec<(&'static str, RateModel)> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut traces = Vec::new();
    for (name, path) in [
        ("synthetic", manifest.join("tests/data/mahimahi-synthetic.down")),
        ("att-lte-down", manifest.join("../../../shared/data/traces/mahimahi/ATT-LTE-driving-2016.down")),
    ] {
        match std::fs::read_to_string(&path) {
            Ok(text) => traces.push((name, RateModel::Opportunities(parse_mahimahi(&text, name).unwrap()))),
            Err(_) => eprintln!("skipped: {} not available", path.display()),
        }
    }
    traces
}

fn droptail_mahimahi(c: &mut Criterion) {
    let mut group = c.benchmark_group("droptail_mahimahi");
    group.throughput(Throughput::Elements(PACKETS));
    for (name, model) in mahimahi_traces() {
        group.bench_function(name, |b| b.iter(|| black_box(saturate(&model))));
    }
    group.finish();
}

fn finish_time_after_idle_gap(c: &mut Criterion) {
    let Some((_, model)) = mahimahi_traces().into_iter().last() else { return };
    const HOUR_NS: u64 = 3_600_000_000_000;
    // Starts must not decrease, so begin again with a fresh server before Time overflows.
    const RESTART_AFTER_NS: u64 = 100 * 365 * 24 * HOUR_NS; // 100 years
    let mut server = RateServer::new(model.clone());
    let mut start = Time::ZERO;
    c.bench_function("mahimahi_finish_time_after_one_hour_idle", |b| {
        b.iter(|| {
            start = Time(start.0 + HOUR_NS);
            if start.0 > RESTART_AFTER_NS {
                server = RateServer::new(model.clone());
                start = Time(HOUR_NS);
            }
            black_box(server.finish_time(start, 1500))
        })
    });
}

criterion_group!(benches, droptail_mahimahi, finish_time_after_idle_gap);
criterion_main!(benches);
