//! The FIFO fast path (`FifoLink`): a fixed-rate drop-tail link whose delay does not depend on
//! time (constant, normal, empirical), worked out at the door, gives exactly what the general
//! stack (`Delayed(DropTailLink)` with lazy departures) gives — deliveries, refusals, flushes,
//! queue changes at their instants, the wake-ups it asks for, what it holds, the random draws —
//! under any arrivals, limits, outages, discards of waiting packets and flushes of the delay
//! line; and the builder picks it only where that holds.

use crate::delay_support::{note_queue_changes, packet};
use multiconn_core::units::{QueueLimit, Rate};
use multiconn_core::{Dur, QueueMeter, RngStream, Time};
use multiconn_link::availability::{Intermittent, Schedule};
use multiconn_link::builder::LinkConfig;
use multiconn_link::delay::{DelayModel, DelaySeries, Delayed, EmpiricalDelay};
use multiconn_link::fifo::FifoLink;
use multiconn_link::queue::DropTailLink;
use multiconn_link::rate::RateModel;
use multiconn_link::{Held, Link, LinkOutput, QueueState};
use proptest::prelude::*;

/// What happens to the link at one instant.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A packet of this size arrives.
    Arrive(u32),
    /// The waiting packets whose id is a multiple of 3 are discarded (after a catch-up).
    Discard,
    /// The packets propagating are removed.
    FlushPropagating,
}

/// Everything a driver of the link can observe.
#[derive(Debug, Default, PartialEq)]
struct Observed {
    delivered: Vec<(Time, u64)>,
    dropped: Vec<(Time, u64)>,
    refused: Vec<(Time, u64)>,
    removed: Vec<(Time, u64)>,
    /// Queue changes as the network core reports them, repeats left out.
    queue: Vec<(Time, QueueState)>,
    /// At every step: the wake-ups asked for, the room for a full packet, what it holds.
    asked: Vec<(Option<Time>, Option<Time>, bool, Option<Held>)>,
}

impl Observed {
    fn note_queue(&mut self, link: &mut dyn Link, now: Time) {
        note_queue_changes(link, now, &mut self.queue);
        self.asked.push((link.poll_timeout(), link.next_departure(), link.has_room(1500), link.held()));
    }
}

/// Drives `link` through `steps` (instant, step) in time order, waking it when it asks
/// (`next_departure` when `watch_room`, else `poll_timeout`); at one instant the steps come
/// before the wake-up.
fn drive(link: &mut dyn Link, steps: &[(Time, Step)], watch_room: bool) -> Observed {
    let mut seen = Observed::default();
    let mut next = 0;
    loop {
        let wake = if watch_room { link.next_departure() } else { link.poll_timeout() };
        let step = steps.get(next).filter(|&&(t, _)| wake.map_or(true, |w| t <= w));
        match (step, wake) {
            (Some(&(t, step)), _) => {
                match step {
                    Step::Arrive(size) => {
                        let mut pkt = packet(next as u64);
                        pkt.size = size;
                        if let Err((pkt, _)) = link.enqueue(t, pkt) {
                            seen.refused.push((t, pkt.id));
                        }
                    }
                    Step::Discard => {
                        link.catch_up(t);
                        let mut gone = Vec::new();
                        link.discard_waiting(&mut |p| p.id % 3 == 0, &mut gone);
                        seen.removed.extend(gone.iter().map(|p| (t, p.id)));
                    }
                    Step::FlushPropagating => {
                        let mut gone = Vec::new();
                        link.flush_propagating(t, &mut gone);
                        seen.removed.extend(gone.iter().map(|p| (t, p.id)));
                    }
                }
                seen.note_queue(link, t);
                next += 1;
            }
            (_, Some(w)) => {
                while let Some(out) = link.poll(w) {
                    match out {
                        LinkOutput::Delivered { at, pkt } => seen.delivered.push((at, pkt.id)),
                        LinkOutput::Dropped { at, pkt, .. } => seen.dropped.push((at, pkt.id)),
                    }
                }
                seen.note_queue(link, w);
            }
            (None, None) => break,
        }
    }
    seen
}

fn general(rate: Rate, limit: QueueLimit, delay: Dur) -> Delayed<DropTailLink> {
    general_with(rate, limit, DelayModel::Constant(delay))
}

fn general_with(rate: Rate, limit: QueueLimit, model: DelayModel) -> Delayed<DropTailLink> {
    Delayed::new(DropTailLink::new(RateModel::Fixed(rate), limit), model, false, RngStream::derive(1, "test")).with_lazy_departures()
}

fn fast_with(rate: Rate, limit: QueueLimit, model: DelayModel) -> FifoLink {
    FifoLink::with_delay(rate, limit, model, RngStream::derive(1, "test")).expect("a delay that does not depend on time")
}

/// A constant, normal (cv up to 0.5) or empirical delay model.
fn model(kind: u8, mean_us: u64, cv: f64) -> DelayModel {
    match kind {
        0 => DelayModel::Constant(Dur::from_micros(mean_us)),
        1 => DelayModel::Normal { mean: Dur::from_micros(mean_us), cv },
        _ => DelayModel::Empirical(EmpiricalDelay { lower_ms: vec![1.0, 2.0, 5.0, 9.0], weights: vec![3.0, 1.0, 2.0, 0.0] }),
    }
}

/// Steps from gaps in microseconds: mostly arrivals, now and then a discard or a flush.
fn steps(gaps: &[(u64, u32, u8)]) -> Vec<(Time, Step)> {
    let mut t = 0;
    gaps.iter()
        .map(|&(gap_us, size, kind)| {
            t += gap_us * 1000;
            let step = match kind {
                0 => Step::Discard,
                1 => Step::FlushPropagating,
                _ => Step::Arrive(size),
            };
            (Time(t), step)
        })
        .collect()
}

#[test]
fn a_saturated_link_gives_the_general_stacks_results() {
    let load = steps(&vec![(200, 1500, 9); 2000]);
    let limit = QueueLimit::Packets(20);
    let fast = drive(&mut FifoLink::new(Rate::from_mbps(40.0), limit, Dur::from_millis(10)), &load, false);
    let reference = drive(&mut general(Rate::from_mbps(40.0), limit, Dur::from_millis(10)), &load, false);
    assert!(!reference.refused.is_empty(), "the queue overflows");
    assert_eq!(fast.delivered.len() + fast.refused.len(), 2000);
    assert_eq!(fast, reference);
}

#[test]
fn a_discard_moves_the_packets_behind_up() {
    // 40 Mbit/s: 1500 B take 300 µs. Four packets at 0: one in transmission, three waiting.
    let mut link = FifoLink::new(Rate::from_mbps(40.0), QueueLimit::Packets(10), Dur::from_millis(1));
    for id in 0..4 {
        link.enqueue(Time::ZERO, packet(id)).unwrap();
    }
    let mut gone = Vec::new();
    link.discard_waiting(&mut |p| p.id == 1, &mut gone);
    assert_eq!(gone.iter().map(|p| p.id).collect::<Vec<_>>(), vec![1]);
    assert_eq!(link.queue(), QueueState { packets: 2, bytes: 3000 });
    // Packet 2 now starts at 300 µs, when packet 0 ends, and is delivered at 1.6 ms.
    let mut delivered = Vec::new();
    while let Some(t) = link.poll_timeout() {
        while let Some(LinkOutput::Delivered { at, pkt }) = link.poll(t) {
            delivered.push((at.0, pkt.id));
        }
    }
    assert_eq!(delivered, vec![(1_300_000, 0), (1_600_000, 2), (1_900_000, 3)]);
}

#[test]
fn every_link_the_builder_makes_gives_the_same_deliveries_and_a_delay_series_stays_general() {
    let base = LinkConfig {
        rate: RateModel::Fixed(Rate::from_mbps(10.0)),
        delay: DelayModel::Constant(Dur::from_millis(5)),
        reorder: false,
        queue: QueueLimit::Packets(2),
        aqm: None,
        loss: None,
        down: Schedule::always_up(),
        replaced: Vec::new(),
    };
    // Whatever the builder picks, three packets at once into a 2-packet queue at 10 Mbit/s
    // (1.2 ms each) are delivered 5 ms after each transmission.
    let variants = [
        base.clone(),
        LinkConfig { delay: DelayModel::Normal { mean: Dur::from_millis(5), cv: 0.0 }, ..base.clone() },
        LinkConfig { reorder: true, ..base.clone() },
        LinkConfig { rate: RateModel::Steps(multiconn_link::rate::StepTrace { steps: vec![(Dur::ZERO, Rate::from_mbps(10.0))], period: Dur::from_secs(1) }), ..base.clone() },
    ];
    let series = DelayModel::Series(DelaySeries::linear(vec![(Dur::ZERO, Dur::from_millis(5))]));
    assert!(FifoLink::with_delay(Rate::from_mbps(10.0), QueueLimit::Packets(2), series, RngStream::derive(1, "t")).is_none(), "a delay series stays general");
    for config in variants {
        let mut link = config.build(1, "link/test/forward");
        for id in 0..4 {
            let accepted = link.enqueue(Time::ZERO, packet(id)).is_ok();
            assert_eq!(accepted, id < 3, "{config:?}: packet {id}");
        }
        let mut delivered = Vec::new();
        while let Some(t) = link.poll_timeout() {
            while let Some(LinkOutput::Delivered { at, .. }) = link.poll(t) {
                delivered.push(at.0);
            }
        }
        assert_eq!(delivered, vec![6_200_000, 7_400_000, 8_600_000], "{config:?}");
    }
}

proptest! {
    /// Any arrivals, rate, packet or byte limit, delay, outage, discards and delay-line
    /// flushes: everything observable is the same, woken for deliveries or at each departure.
    #[test]
    fn the_fast_path_and_the_general_stack_agree(
        gaps in prop::collection::vec((0u64..600, 0u32..1500, 0u8..40), 1..300),
        rate_mbps in 1.0f64..100.0,
        limit in 0u64..20,
        bytes_limit in any::<bool>(),
        kind in 0u8..3,
        delay_us in 0u64..20_000,
        cv in 0.0f64..0.5,
        outage_ms in 0u64..60,
        watch_room in any::<bool>(),
    ) {
        let load = steps(&gaps);
        let rate = Rate::from_mbps(rate_mbps);
        let limit = if bytes_limit { QueueLimit::Bytes(limit * 700) } else { QueueLimit::Packets(limit) };
        let model = model(kind, delay_us, cv);
        let down = Schedule::new(vec![(Time(outage_ms * 1_000_000), Time(outage_ms * 1_000_000 + 7_000_000))]).unwrap();
        let fast = drive(&mut Intermittent::new(fast_with(rate, limit, model.clone()), down.clone()), &load, watch_room);
        let reference = drive(&mut Intermittent::new(general_with(rate, limit, model), down), &load, watch_room);
        prop_assert_eq!(fast, reference);
    }

    /// A fast link keeping its own queue meter integrates exactly the queue changes the
    /// general stack reports, bin by bin.
    #[test]
    fn the_fast_paths_own_meter_integrates_the_reported_changes(
        gaps in prop::collection::vec((0u64..600, 0u32..1500, 0u8..40), 1..300),
        rate_mbps in 1.0f64..100.0,
        limit in 0u64..20,
        kind in 0u8..3,
        delay_us in 0u64..20_000,
        outage_ms in 0u64..60,
        bin_us in 50u64..5_000,
        watch_room in any::<bool>(),
    ) {
        let load = steps(&gaps);
        let rate = Rate::from_mbps(rate_mbps);
        let limit = QueueLimit::Packets(limit);
        let model = model(kind, delay_us, 0.3);
        let width = Dur::from_micros(bin_us);
        let down = Schedule::new(vec![(Time(outage_ms * 1_000_000), Time(outage_ms * 1_000_000 + 7_000_000))]).unwrap();
        let mut metered = Intermittent::new(fast_with(rate, limit, model.clone()), down.clone());
        prop_assert!(metered.keep_queue_meter(width));
        drive(&mut metered, &load, watch_room);
        let reference = drive(&mut Intermittent::new(general_with(rate, limit, model), down), &load, watch_room);
        let end = load.last().unwrap().0 + Dur::from_secs(1);
        metered.catch_up(end);
        let meter = metered.queue_meter().unwrap();
        meter.close(end);
        let mut own = Vec::new();
        meter.take_closed(&mut own);
        let mut expected = QueueMeter::new(width);
        for &(at, q) in &reference.queue {
            expected.change(at, q.packets, q.bytes);
        }
        expected.close(end);
        let mut from_changes = Vec::new();
        expected.take_closed(&mut from_changes);
        prop_assert_eq!(own, from_changes);
    }
}
