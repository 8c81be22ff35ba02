//! A link reconfigured at run time as `tc … change` reconfigures a Linux qdisc: a delay series
//! in steps with netem's time-ordered queue (`interpolation = "step"`, `reorder = true`).
//!
//! The vector is the study-testbeds reference's §1.6: 1500-byte packets at 20 Mbit/s
//! (0.6 ms each) leave the shaper back to back into netem, whose delay falls from 20 to 15 ms
//! at t₀. A packet that left after t₀ (k = 1, 2, …) overtakes one that left at t₀ − 0.6·j
//! (j = 0, 1, …) iff 15 + 0.6·k < 20 − 0.6·j, i.e. k ≤ 8 − j.

use crate::delay_support::{ms, packet};
use multiconn_core::units::{QueueLimit, Rate};
use multiconn_core::{Dur, RngStream, Time};
use multiconn_link::delay::{DelayModel, DelaySeries, Delayed, Interpolation};
use multiconn_link::queue::DropTailLink;
use multiconn_link::rate::RateModel;
use multiconn_link::{Link, LinkOutput};

/// The packet whose departure from the shaper is t₀ (packet i leaves at 0.6·(i + 1) ms).
const AT_STEP: u64 = 99;

/// 200 packets queued at time 0 behind a 20 Mbit/s shaper, then a delay of `before` until
/// just after packet `AT_STEP` leaves (60 ms) and `after` from 60.3 ms on. Returns the packet
/// ids in delivery order with their delivery times.
fn deliveries(before: u64, after: u64, interpolation: Interpolation, reorder: bool) -> Vec<(u64, Time)> {
    let shaper = DropTailLink::new(RateModel::Fixed(Rate::from_mbps(20.0)), QueueLimit::Packets(1000));
    let step = Dur::from_micros(60_300);
    let series = DelaySeries { points: vec![(Dur::ZERO, Dur::from_millis(before)), (step, Dur::from_millis(after))], interpolation };
    let mut link = Delayed::new(shaper, DelayModel::Series(series), reorder, RngStream::derive(1, "tc"));
    for id in 0..200 {
        link.enqueue(Time::ZERO, packet(id)).unwrap();
    }
    let mut out = Vec::new();
    while let Some(next) = link.poll_timeout() {
        while let Some(o) = link.poll(next) {
            match o {
                LinkOutput::Delivered { at, pkt } => out.push((pkt.id, at)),
                LinkOutput::Dropped { .. } => panic!("nothing is dropped"),
            }
        }
    }
    assert_eq!(out.len(), 200);
    out
}

/// For each packet, how many packets sent after it were delivered before it.
fn overtaken_by(order: &[(u64, Time)]) -> Vec<usize> {
    let mut counts = vec![0; order.len()];
    for (pos, &(id, _)) in order.iter().enumerate() {
        counts[id as usize] = order[..pos].iter().filter(|&&(other, _)| other > id).count();
    }
    counts
}

#[test]
fn a_delay_step_down_lets_the_packets_after_it_overtake_exactly_as_netems_queue_does() {
    let order = deliveries(20, 15, Interpolation::Step, true);
    let counts = overtaken_by(&order);
    // Old packet j = AT_STEP − j is overtaken by the 8 − j new packets k ≤ 8 − j.
    for j in 0..=8u64 {
        assert_eq!(counts[(AT_STEP - j) as usize], (8 - j) as usize, "old packet j = {j}");
    }
    // Nothing else is out of order.
    let reordered: usize = counts.iter().filter(|&&c| c > 0).count();
    assert_eq!(reordered, 8);
    // A sender that calls a packet lost once 3 later ones are acknowledged loses 6 (j = 0…5).
    assert_eq!(counts.iter().filter(|&&c| c >= 3).count(), 6);
    // Each packet keeps the delay stamped when it left the shaper.
    let at = |id: u64| order.iter().find(|&&(p, _)| p == id).unwrap().1;
    assert_eq!(at(AT_STEP), ms(60) + Dur::from_millis(20));
    assert_eq!(at(AT_STEP + 1), Time(60_600_000) + Dur::from_millis(15));
}

#[test]
fn a_delay_step_up_leaves_a_gap_and_reorders_nothing() {
    let order = deliveries(15, 20, Interpolation::Step, true);
    assert!(overtaken_by(&order).iter().all(|&c| c == 0));
    let at = |id: u64| order.iter().find(|&&(p, _)| p == id).unwrap().1;
    // The packet after the step arrives 0.6 ms + 5 ms after the one before it.
    assert_eq!(at(AT_STEP + 1) - at(AT_STEP), Dur::from_micros(5_600));
}

#[test]
fn without_reordering_a_step_down_holds_the_later_packets_behind_the_earlier_ones() {
    let order = deliveries(20, 15, Interpolation::Step, false);
    assert!(overtaken_by(&order).iter().all(|&c| c == 0));
    let at = |id: u64| order.iter().find(|&&(p, _)| p == id).unwrap().1;
    // The new packets that would have overtaken queue behind packet AT_STEP.
    assert_eq!(at(AT_STEP + 1), at(AT_STEP));
}

#[test]
fn a_linear_series_glides_between_its_points_and_never_reorders_at_this_slope() {
    // 5 ms over 60.3 ms is far less than one packet time per packet time: no overtaking even
    // with a time-ordered queue.
    let order = deliveries(20, 15, Interpolation::Linear, true);
    assert!(overtaken_by(&order).iter().all(|&c| c == 0));
}

#[test]
fn a_step_series_reads_each_points_value_until_the_next_point() {
    let s = DelaySeries {
        points: vec![(Dur::ZERO, Dur::from_millis(10)), (Dur::from_secs(1), Dur::from_millis(30)), (Dur::from_secs(2), Dur::from_millis(20))],
        interpolation: Interpolation::Step,
    };
    assert_eq!(s.at(Time(999_999_999)), Dur::from_millis(10));
    assert_eq!(s.at(Time(1_000_000_000)), Dur::from_millis(30));
    assert_eq!(s.at(Time(1_500_000_000)), Dur::from_millis(30));
    assert_eq!(s.at(Time(5_000_000_000)), Dur::from_millis(20));
    // The time average counts rectangles: 10 ms for 1 s, 30 ms for 1 s.
    assert_eq!(s.time_average(), Dur::from_millis(20));
    let linear = DelaySeries { interpolation: Interpolation::Linear, ..s };
    assert_eq!(linear.at(Time(1_500_000_000)), Dur::from_millis(25));
    assert_eq!(linear.time_average(), Dur::from_micros(22_500));
}

/// Replaced queue disciplines (`Intermittent::with_replacements`): at the instant, what waits,
/// what is in transmission and what propagates is dropped — the reference's vector: a
/// 20 Mbit/s link with a 20 ms delay and a backlog loses its 100-packet queue, the packet in
/// transmission and the ≈ 33 packets in its delay line (20 ms / 0.6 ms) at t = 1 s; what was
/// delivered before stays delivered, and a packet offered afterwards crosses as usual.
#[test]
fn replacing_the_qdiscs_drops_the_queue_and_the_delay_line() {
    use multiconn_core::DropCause;
    use multiconn_link::availability::{Intermittent, Schedule};

    let t1 = Time(1_000_000_000);
    let shaper = DropTailLink::new(RateModel::Fixed(Rate::from_mbps(20.0)), QueueLimit::Packets(100));
    let delayed = Delayed::new(shaper, DelayModel::Constant(Dur::from_millis(20)), false, RngStream::derive(1, "r"));
    let mut link = Intermittent::new(delayed, Schedule::always_up()).with_replacements(vec![t1]);
    // A backlog: keep the queue full from 0.9 s on.
    let mut id = 0;
    let mut t = Time(900_000_000);
    let (mut delivered, mut dropped_at_t1, mut refused) = (0, 0, 0);
    while t < t1 {
        while let Some(o) = link.poll(t) {
            match o {
                LinkOutput::Delivered { .. } => delivered += 1,
                LinkOutput::Dropped { .. } => panic!("nothing dropped before the replacement"),
            }
        }
        if link.enqueue(t, packet(id)).is_err() {
            refused += 1;
        }
        id += 1;
        t += Dur::from_micros(100);
    }
    assert!(refused > 0, "the queue was full");
    while let Some(o) = link.poll(t1) {
        match o {
            LinkOutput::Dropped { at, cause, .. } => {
                assert_eq!((at, cause), (t1, DropCause::LinkDown));
                dropped_at_t1 += 1;
            }
            LinkOutput::Delivered { .. } => delivered += 1,
        }
    }
    // 100 waiting + 1 in transmission + the delay line (packets that left the shaper in the
    // last 20 ms: 20 / 0.6 = 33.3, so 33 or 34).
    assert!((134..=135).contains(&dropped_at_t1), "{dropped_at_t1}");
    assert!(delivered > 100);
    // The link carries on at once: a packet offered now arrives 0.6 + 20 ms later.
    link.enqueue(t1, packet(id)).unwrap();
    let mut arrival = None;
    while let Some(next) = link.poll_timeout() {
        while let Some(o) = link.poll(next) {
            if let LinkOutput::Delivered { at, pkt } = o {
                assert_eq!(pkt.id, id);
                arrival = Some(at);
            }
        }
    }
    assert_eq!(arrival, Some(t1 + Dur::from_micros(20_600)));
}
