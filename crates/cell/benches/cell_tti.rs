//! Simulated time per wall time of one LTE cell with 10 saturated downlink UEs (the study's
//! cell: 100 RBs, PF, MI link adaptation, flat Rayleigh fading at 3 km/h) at distances from
//! 50 m to 950 m, the same with per-RB and ETU fading and without fading: the cost of the cell
//! alone, per simulated second (the goal is at least 100x real time for the whole
//! run). The same without fading with L4S marking on the RLC buffers (the packets are ECT(1),
//! which a cell without marking ignores). And the fading alone: one TTI's gains over 100 RBs,
//! flat, per RB and per profile.

// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use multiconn_cell::fading::DEFAULT_SINUSOIDS;
use multiconn_cell::{CellConfig, CellDirection, CellFading, CellHop, FadingConfig, FadingSpread, L4sMarking, TdlProfile};
use multiconn_core::{Ecn, FlowId, Packet, RngStream, Time};

const UES: usize = 10;
const SECONDS: u64 = 1;

/// Runs the cell for `SECONDS` with every UE's queue topped up to 50 packets; returns the
/// packets delivered.
fn saturate(cfg: &CellConfig) -> u64 {
    let mut cell = CellHop::new(cfg.clone(), 1, "bench").expect("a valid cell");
    let mut queued = [0usize; UES];
    let (mut now, mut id, mut delivered) = (0u64, 0u64, 0u64);
    while now < SECONDS * 1_000_000_000 {
        for (ue, q) in queued.iter_mut().enumerate() {
            while *q < 50 {
                let pkt = Packet::new(id, FlowId(ue as u32), 1500, id, Time(now)).with_ecn(Ecn::Ect1);
                id += 1;
                if cell.enqueue(Time(now), ue, CellDirection::Down, pkt).is_ok() {
                    *q += 1;
                }
            }
        }
        while let Some(out) = cell.poll(Time(now)).expect("runs") {
            let (multiconn_cell::CellOutput::Delivered { ue, .. } | multiconn_cell::CellOutput::Dropped { ue, .. }) = out;
            queued[ue] -= 1;
            delivered += 1;
        }
        now = cell.poll_timeout().map_or(now + 1_000_000, |t| t.0.max(now + 1));
    }
    delivered
}

fn cell(c: &mut Criterion) {
    let distances: Vec<f64> = (0..UES).map(|i| 50.0 + 100.0 * i as f64).collect();
    let faded = CellConfig::study(distances.clone());
    let still = CellConfig { fading: FadingConfig::None, ..CellConfig::study(distances) };
    let mut group = c.benchmark_group("cell_10_ues_1s");
    group.sample_size(10);
    group.bench_function("rayleigh", |b| b.iter(|| saturate(&faded)));
    group.bench_function("no_fading", |b| b.iter(|| saturate(&still)));
    for (name, rule) in [("no_fading_l4s_sojourn", L4sMarking::SOJOURN_DEFAULT), ("no_fading_l4s_predicted", L4sMarking::PREDICTED_DEFAULT)] {
        let cfg = CellConfig { l4s_marking: Some(rule), ..still.clone() };
        group.bench_function(name, |b| b.iter(|| saturate(&cfg)));
    }
    for spread in [FadingSpread::PerRb, FadingSpread::Tdl(TdlProfile::Etu)] {
        let cfg = CellConfig { fading: FadingConfig::Rayleigh { doppler_hz: 5.89, spread }, ..faded.clone() };
        group.bench_function(spread.name(), |b| b.iter(|| saturate(&cfg)));
    }
    group.finish();
    let mut group = c.benchmark_group("fading_100_rbs_one_tti");
    for spread in [FadingSpread::Flat, FadingSpread::PerRb, FadingSpread::Tdl(TdlProfile::Epa), FadingSpread::Tdl(TdlProfile::Etu)] {
        let mut rng = RngStream::derive(1, "bench");
        let fading = CellFading::new(spread, 100, 5.89, DEFAULT_SINUSOIDS, &mut rng).expect("valid fading");
        let mut out = vec![0.0; 100];
        let mut t = 0.0;
        group.bench_function(spread.name(), |b| {
            b.iter(|| {
                t += 1e-3;
                fading.gains_db(t, &mut out).expect("100 gains");
                out[0]
            })
        });
    }
    group.finish();
}

criterion_group!(benches, cell);
criterion_main!(benches);
