//! Throughput of schedule + pop on a queue holding a steady population of timers.

// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use multiconn_core::Time;
use multiconn_engine::EventQueue;

fn steady_state(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("schedule_pop_1k_live", |b| {
        b.iter(|| {
            let mut q = EventQueue::new();
            for i in 0..1000u64 {
                q.schedule(Time(i * 7919 % 1000), i);
            }
            for i in 0..100_000u64 {
                let (t, _) = q.pop().unwrap();
                q.schedule(Time(t.0 + 1 + (i * 7919) % 1000), i);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, steady_state);
criterion_main!(benches);
