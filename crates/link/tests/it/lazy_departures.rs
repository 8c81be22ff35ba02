//! Lazy departures (`Delayed::with_lazy_departures`): a FIFO link whose delay draws do not
//! depend on time (constant, normal, empirical), woken only for its deliveries, gives exactly
//! what the same link woken at every departure gives — the same deliveries at the same
//! instants, the same drops, the same queue changes at the same instants — with about one
//! wake-up per packet instead of two.

use crate::delay_support::{note_queue_changes, packet};
use multiconn_core::units::{QueueLimit, Rate};
use multiconn_core::{Dur, RngStream, Time};
use multiconn_link::availability::{Intermittent, Schedule};
use multiconn_link::delay::{DelayModel, DelaySeries, Delayed, EmpiricalDelay};
use multiconn_link::queue::DropTailLink;
use multiconn_link::rate::RateModel;
use multiconn_link::{Link, LinkOutput, QueueState};
use proptest::prelude::*;

/// What a driver of the link observes, as the network core records it.
#[derive(Debug, Default, PartialEq)]
struct Observed {
    delivered: Vec<(Time, u64)>,
    refused: Vec<(Time, u64)>,
    flushed: Vec<(Time, u64)>,
    /// Queue changes as the recorder hears them: `(instant, queue)`, repeats left out.
    queue: Vec<(Time, QueueState)>,
    wake_ups: usize,
}

impl Observed {
    fn note_queue(&mut self, link: &mut dyn Link, now: Time) {
        note_queue_changes(link, now, &mut self.queue);
    }

    fn service(&mut self, link: &mut dyn Link, now: Time) {
        self.wake_ups += 1;
        while let Some(out) = link.poll(now) {
            match out {
                LinkOutput::Delivered { at, pkt } => self.delivered.push((at, pkt.id)),
                LinkOutput::Dropped { at, pkt, .. } => self.flushed.push((at, pkt.id)),
            }
        }
        self.note_queue(link, now);
    }
}

/// Drives `link` through arrivals of `(instant, size)` in time order, waking it when it asks
/// (`next_departure` instead of `poll_timeout` when `watch_room`). At one instant arrivals are
/// handled before the link's wake-up.
fn drive(link: &mut dyn Link, arrivals: &[(Time, u32)], watch_room: bool) -> Observed {
    let mut seen = Observed::default();
    let mut next = 0;
    loop {
        let wake = if watch_room { link.next_departure() } else { link.poll_timeout() };
        let arrival = arrivals.get(next).filter(|&&(t, _)| wake.map_or(true, |w| t <= w));
        match (arrival, wake) {
            (Some(&(t, size)), _) => {
                let mut pkt = packet(next as u64);
                pkt.size = size;
                if let Err((pkt, _)) = link.enqueue(t, pkt) {
                    seen.refused.push((t, pkt.id));
                }
                seen.note_queue(link, t);
                next += 1;
            }
            (_, Some(w)) => seen.service(link, w),
            (None, None) => break,
        }
    }
    seen
}

fn droptail(rate_mbps: f64, limit: u64) -> DropTailLink {
    DropTailLink::new(RateModel::Fixed(Rate::from_mbps(rate_mbps)), QueueLimit::Packets(limit))
}

fn delayed(rate_mbps: f64, limit: u64, delay: Dur) -> Delayed<DropTailLink> {
    with_model(rate_mbps, limit, DelayModel::Constant(delay))
}

fn with_model(rate_mbps: f64, limit: u64, model: DelayModel) -> Delayed<DropTailLink> {
    Delayed::new(droptail(rate_mbps, limit), model, false, RngStream::derive(1, "test"))
}

/// Arrivals from gaps in microseconds and sizes.
fn arrivals(gaps_and_sizes: &[(u64, u32)]) -> Vec<(Time, u32)> {
    let mut t = 0;
    gaps_and_sizes
        .iter()
        .map(|&(gap_us, size)| {
            t += gap_us * 1000;
            (Time(t), size)
        })
        .collect()
}

#[test]
fn a_saturated_link_wakes_once_per_packet_with_the_same_results() {
    // 2000 packets of 1500 B every 200 µs into 40 Mbit/s (300 µs each): the queue fills and
    // drops.
    let load = arrivals(&vec![(200, 1500); 2000]);
    let eager = drive(&mut delayed(40.0, 20, Dur::from_millis(10)), &load, false);
    let lazy = drive(&mut delayed(40.0, 20, Dur::from_millis(10)).with_lazy_departures(), &load, false);
    assert!(!eager.refused.is_empty(), "the queue overflows");
    assert_eq!(lazy.delivered, eager.delivered);
    assert_eq!(lazy.refused, eager.refused);
    assert_eq!(lazy.queue, eager.queue);
    assert_eq!(lazy.wake_ups, lazy.delivered.len(), "one wake-up per delivery");
    assert!(eager.wake_ups >= 2 * eager.delivered.len() - 1, "eager: a departure and a delivery each ({})", eager.wake_ups);
}

#[test]
fn a_watched_link_is_woken_at_each_departure() {
    let mut link = delayed(40.0, 5, Dur::from_millis(10)).with_lazy_departures();
    link.enqueue(Time::ZERO, packet(1)).unwrap();
    link.enqueue(Time::ZERO, packet(2)).unwrap();
    let first_finish = Time(300_000); // 1500 B at 40 Mbit/s
    assert_eq!(link.next_departure(), Some(first_finish));
    assert_eq!(link.poll_timeout(), Some(first_finish + Dur::from_millis(10)));
    assert_eq!(link.poll(first_finish), None, "nothing is delivered at the departure");
    assert_eq!(link.queue(), QueueState { packets: 0, bytes: 0 }, "the second packet is in transmission");
    assert_eq!(link.next_departure(), Some(Time(600_000)));
}

#[test]
fn catch_up_tells_the_queue_at_an_instant_without_a_wake_up() {
    let mut link = delayed(40.0, 5, Dur::from_millis(10)).with_lazy_departures();
    for id in 0..4 {
        link.enqueue(Time::ZERO, packet(id)).unwrap();
    }
    assert_eq!(link.queue().packets, 3);
    // Two departures (300 and 600 µs) before 700 µs; one at exactly 900 µs is left for later.
    link.catch_up(Time(700_000));
    assert_eq!(link.queue().packets, 1);
    let mut changes = Vec::new();
    link.take_queue_changes(&mut changes);
    assert_eq!(changes.iter().map(|(t, q)| (t.0, q.packets)).collect::<Vec<_>>(), vec![(300_000, 2), (600_000, 1)]);
    link.catch_up(Time(900_000));
    assert_eq!(link.queue().packets, 1, "a departure at the very instant is not caught up");
}

#[test]
fn a_random_delay_is_drawn_when_the_packet_enters_transmission() {
    let normal = DelayModel::Normal { mean: Dur::from_millis(10), cv: 0.2 };
    let mut eager = with_model(40.0, 5, normal.clone());
    let mut lazy = with_model(40.0, 5, normal).with_lazy_departures();
    eager.enqueue(Time::ZERO, packet(1)).unwrap();
    lazy.enqueue(Time::ZERO, packet(1)).unwrap();
    assert_eq!(eager.poll_timeout(), Some(Time(300_000)), "eager: woken at the departure");
    assert_eq!(eager.poll(Time(300_000)), None);
    let due = eager.poll_timeout().expect("the delivery is due");
    assert!(due > Time(300_000));
    assert_eq!(lazy.poll_timeout(), Some(due), "lazy: woken for the delivery only, the same draw");
}

#[test]
fn a_delay_series_stays_eager() {
    let series = DelayModel::Series(DelaySeries::linear(vec![(Dur::ZERO, Dur::from_millis(5)), (Dur::from_secs(1), Dur::from_millis(50))]));
    let mut link = with_model(40.0, 5, series).with_lazy_departures();
    link.enqueue(Time::ZERO, packet(1)).unwrap();
    assert_eq!(link.poll_timeout(), Some(Time(300_000)), "the series is read at the departure");
}

#[test]
fn an_outage_flushes_the_same_packets() {
    let load = arrivals(&vec![(250, 1500); 400]);
    let down = Schedule::new(vec![(Time(20_000_000), Time(35_000_000)), (Time(60_300_000), Time(70_000_000))]).unwrap();
    let eager = drive(&mut Intermittent::new(delayed(40.0, 30, Dur::from_millis(5)), down.clone()), &load, false);
    let lazy = drive(&mut Intermittent::new(delayed(40.0, 30, Dur::from_millis(5)).with_lazy_departures(), down), &load, false);
    assert!(!eager.flushed.is_empty(), "the outages flush queued packets");
    assert_eq!(lazy, Observed { wake_ups: lazy.wake_ups, ..eager });
}

proptest! {
    /// Any arrival pattern, rate, queue limit and delay: the same deliveries, drops and queue
    /// changes, with no more wake-ups; a watched lazy link behaves as an eager one.
    #[test]
    fn lazy_and_eager_departures_agree(
        gaps in prop::collection::vec((0u64..600, 40u32..1500), 1..300),
        rate_mbps in 1.0f64..100.0,
        limit in 0u64..20,
        delay_us in 0u64..20_000,
    ) {
        let load = arrivals(&gaps);
        let delay = Dur::from_micros(delay_us);
        let eager = drive(&mut delayed(rate_mbps, limit, delay), &load, false);
        let lazy = drive(&mut delayed(rate_mbps, limit, delay).with_lazy_departures(), &load, false);
        prop_assert_eq!(&lazy.delivered, &eager.delivered);
        prop_assert_eq!(&lazy.refused, &eager.refused);
        prop_assert_eq!(&lazy.queue, &eager.queue);
        prop_assert!(lazy.wake_ups <= eager.wake_ups);
        let watched = drive(&mut delayed(rate_mbps, limit, delay).with_lazy_departures(), &load, true);
        prop_assert_eq!(watched, eager);
    }

    /// The same with delays drawn from a normal or an empirical distribution: every delivered
    /// packet gets the draw an eager link gives it, outages included.
    #[test]
    fn lazy_and_eager_random_delays_agree(
        gaps in prop::collection::vec((0u64..600, 40u32..1500), 1..300),
        rate_mbps in 1.0f64..100.0,
        limit in 0u64..20,
        mean_us in 0u64..20_000,
        cv in 0.0f64..0.5,
        empirical in any::<bool>(),
        outage_ms in 0u64..60,
    ) {
        let load = arrivals(&gaps);
        let model = if empirical {
            DelayModel::Empirical(EmpiricalDelay { lower_ms: vec![1.0, 2.0, 5.0, 9.0], weights: vec![3.0, 1.0, 2.0, 0.0] })
        } else {
            DelayModel::Normal { mean: Dur::from_micros(mean_us), cv }
        };
        let down = Schedule::new(vec![(Time(outage_ms * 1_000_000), Time(outage_ms * 1_000_000 + 7_000_000))]).unwrap();
        let eager = drive(&mut Intermittent::new(with_model(rate_mbps, limit, model.clone()), down.clone()), &load, false);
        let lazy = drive(&mut Intermittent::new(with_model(rate_mbps, limit, model.clone()).with_lazy_departures(), down.clone()), &load, false);
        prop_assert_eq!(&lazy.delivered, &eager.delivered);
        prop_assert_eq!(&lazy.refused, &eager.refused);
        prop_assert_eq!(&lazy.flushed, &eager.flushed);
        prop_assert_eq!(&lazy.queue, &eager.queue);
        prop_assert!(lazy.wake_ups <= eager.wake_ups);
        let watched = drive(&mut Intermittent::new(with_model(rate_mbps, limit, model).with_lazy_departures(), down), &load, true);
        prop_assert_eq!(watched, eager);
    }
}
