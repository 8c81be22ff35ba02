//! The `Intermittent` decorator and its `Schedule`: refusals while down, the flush at each
//! window start (times, causes, order), recovery, and in-flight packets surviving.

use crate::delay_support;

use delay_support::{drain, ms, output_time, packet, FifoLink};
use multiconn_core::{DropCause, Dur, RngStream, Time};
use multiconn_link::availability::{Intermittent, Schedule};
use multiconn_link::delay::{DelayModel, Delayed};
use multiconn_link::{Link, LinkOutput};
use proptest::prelude::*;

fn window_10_to_20() -> Schedule {
    Schedule::new(vec![(ms(10), ms(20))]).unwrap()
}

/// A 1 ms-per-packet server with room for 10 waiting packets, down during [10, 20) ms.
fn server_down_10_to_20() -> Intermittent<FifoLink> {
    Intermittent::new(FifoLink::new(Dur::from_millis(1), 10), window_10_to_20())
}

fn delivered(id: u64, at: Time) -> LinkOutput {
    LinkOutput::Delivered {
        at,
        pkt: packet(id),
    }
}

fn link_down(id: u64, at: Time) -> LinkOutput {
    LinkOutput::Dropped {
        at,
        pkt: packet(id),
        cause: DropCause::LinkDown,
    }
}

/// Polls only when the link's own timeout says so, until `end`, as an event loop would.
fn run_on_timeouts(link: &mut impl Link, end: Time) -> Vec<(Time, LinkOutput)> {
    let mut outputs = Vec::new();
    while let Some(next) = link.poll_timeout().filter(|&t| t <= end) {
        outputs.extend(drain(link, next).into_iter().map(|o| (next, o)));
    }
    outputs
}

#[test]
fn schedule_accepts_sorted_disjoint_windows() {
    let windows = vec![(ms(1), ms(2)), (ms(2), ms(5)), (ms(9), ms(10))];
    assert_eq!(Schedule::new(windows.clone()).unwrap().down, windows);
    assert_eq!(Schedule::new(vec![]).unwrap(), Schedule::always_up());
    let schedule = Schedule::new(windows).unwrap();
    assert!(!schedule.is_down(Time(999_999)));
    assert!(schedule.is_down(ms(1)));
    assert!(schedule.is_down(ms(4)));
    assert!(!schedule.is_down(ms(5)));
    assert_eq!(schedule.window_at(Time(9_500_000)), Some((ms(9), ms(10))));
}

#[test]
fn schedule_rejects_empty_reversed_unsorted_and_overlapping_windows() {
    let cases: [(Vec<(Time, Time)>, &str); 4] = [
        (
            vec![(ms(1), ms(1))],
            "down window 1 [0.001000000 s, 0.001000000 s) is empty or reversed",
        ),
        (
            vec![(ms(1), ms(2)), (ms(5), ms(3))],
            "down window 2 [0.005000000 s, 0.003000000 s) is empty or reversed",
        ),
        (
            vec![(ms(1), ms(4)), (ms(3), ms(6))],
            "down window 2 starts at 0.003000000 s, before window 1 ends at 0.004000000 s",
        ),
        (
            vec![(ms(5), ms(6)), (ms(1), ms(2))],
            "must be sorted and must not overlap",
        ),
    ];
    for (windows, needle) in cases {
        let error = Schedule::new(windows.clone()).expect_err("should be rejected");
        assert!(
            error.contains(needle),
            "{windows:?}: \"{error}\" lacks \"{needle}\""
        );
    }
}

#[test]
fn arrivals_are_refused_while_down_and_accepted_again_after() {
    let mut link = server_down_10_to_20();
    assert!(link.has_room(1500));
    assert_eq!(
        link.enqueue(ms(10), packet(0)),
        Err((packet(0), DropCause::LinkDown))
    );
    assert_eq!(
        link.enqueue(Time(ms(20).0 - 1), packet(1)),
        Err((packet(1), DropCause::LinkDown))
    );
    assert!(!link.has_room(1500));
    assert_eq!(
        link.poll_timeout(),
        Some(ms(20)),
        "wakes the caller when the link returns"
    );
    assert_eq!(link.poll(ms(20)), None);
    assert!(link.has_room(1500));
    assert_eq!(link.enqueue(ms(20), packet(2)), Ok(()));
    assert_eq!(drain(&mut link, ms(21)), vec![delivered(2, ms(21))]);
}

#[test]
fn the_window_start_is_a_timeout_even_for_an_idle_link() {
    let link = server_down_10_to_20();
    assert_eq!(link.poll_timeout(), Some(ms(10)));
}

#[test]
fn queue_is_flushed_at_the_window_start_in_time_order() {
    let mut link = server_down_10_to_20();
    for id in 0..5 {
        link.enqueue(ms(8), packet(id)).unwrap();
    }
    assert_eq!(link.queue().packets, 4);
    let outputs = run_on_timeouts(&mut link, ms(15));
    // Packet 1 completes exactly at the window start and gets through; 2 (in transmission)
    // and 3, 4 (waiting) are flushed at 10 ms.
    assert_eq!(
        outputs,
        vec![
            (ms(9), delivered(0, ms(9))),
            (ms(10), delivered(1, ms(10))),
            (ms(10), link_down(2, ms(10))),
            (ms(10), link_down(3, ms(10))),
            (ms(10), link_down(4, ms(10))),
        ]
    );
    assert_eq!(link.queue().packets, 0);
    // Service resumes after the window.
    link.poll(ms(20));
    for id in 5..7 {
        link.enqueue(ms(20), packet(id)).unwrap();
    }
    let after: Vec<LinkOutput> = run_on_timeouts(&mut link, ms(100))
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert_eq!(after, vec![delivered(5, ms(21)), delivered(6, ms(22))]);
}

#[test]
fn a_lazy_caller_gets_the_same_outputs_in_the_same_order() {
    let mut link = server_down_10_to_20();
    for id in 0..5 {
        link.enqueue(ms(8), packet(id)).unwrap();
    }
    // No poll during the window; a packet offered after it must not be caught by its flush.
    assert_eq!(link.enqueue(ms(25), packet(5)), Ok(()));
    assert_eq!(
        drain(&mut link, ms(100)),
        vec![
            delivered(0, ms(9)),
            delivered(1, ms(10)),
            link_down(2, ms(10)),
            link_down(3, ms(10)),
            link_down(4, ms(10)),
            delivered(5, ms(26)),
        ]
    );
}

#[test]
fn packets_already_propagating_still_arrive() {
    let model = DelayModel::Constant(Dur::from_millis(50));
    let delayed = Delayed::new(
        FifoLink::new(Dur::from_millis(1), 10),
        model,
        false,
        RngStream::derive(1, "prop"),
    );
    let mut link = Intermittent::new(delayed, window_10_to_20());
    for id in 0..5 {
        link.enqueue(ms(8), packet(id)).unwrap();
    }
    let outputs: Vec<LinkOutput> = run_on_timeouts(&mut link, ms(100))
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert_eq!(
        outputs,
        vec![
            link_down(2, ms(10)),
            link_down(3, ms(10)),
            link_down(4, ms(10)),
            delivered(0, ms(59)),
            delivered(1, ms(60)),
        ]
    );
}

#[test]
fn every_window_flushes_and_each_recovery_is_reported() {
    let schedule = Schedule::new(vec![(ms(10), ms(20)), (ms(30), ms(40))]).unwrap();
    let mut link = Intermittent::new(FifoLink::new(Dur::from_millis(4), 10), schedule);
    link.enqueue(ms(8), packet(0)).unwrap();
    link.enqueue(ms(8), packet(1)).unwrap();
    let mut wakeups = Vec::new();
    let mut outputs = Vec::new();
    while let Some(next) = link.poll_timeout().filter(|&t| t <= ms(100)) {
        wakeups.push(next);
        outputs.extend(drain(&mut link, next));
        let offered: &[u64] = match next {
            t if t == ms(20) => &[2],
            t if t == ms(24) => &[3, 4],
            _ => &[],
        };
        for &id in offered {
            link.enqueue(next, packet(id)).unwrap();
        }
    }
    // 20 and 40: the link returns; 24 and 28: deliveries; 10 and 30: flushes.
    assert_eq!(
        wakeups,
        vec![ms(10), ms(20), ms(24), ms(28), ms(30), ms(40)]
    );
    assert_eq!(
        outputs,
        vec![
            link_down(0, ms(10)),
            link_down(1, ms(10)),
            delivered(2, ms(24)),
            delivered(3, ms(28)),
            link_down(4, ms(30)),
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random traffic against random windows: outputs come in time order, every packet is
    /// accounted for exactly once, nothing is delivered strictly inside a window, flushes
    /// happen only at window starts, and arrivals inside a window are refused.
    #[test]
    fn outputs_are_time_ordered_and_every_packet_is_accounted_for(
        gaps_us in prop::collection::vec(0u64..3_000, 1..200),
        window_gaps in prop::collection::vec((1u64..20_000, 1u64..20_000), 0..6),
        service_us in 0u64..2_000,
    ) {
        let mut windows = Vec::new();
        let mut t = 0;
        for (up, down) in window_gaps {
            windows.push((Time(t + up * 1_000), Time(t + (up + down) * 1_000)));
            t += (up + down) * 1_000;
        }
        let schedule = Schedule::new(windows.clone()).unwrap();
        let mut link = Intermittent::new(FifoLink::new(Dur::from_micros(service_us), 5), schedule.clone());
        let mut refused_down = 0;
        let mut refused_full = 0;
        let mut outputs = Vec::new();
        let mut now = Time::ZERO;
        for (id, gap) in gaps_us.iter().enumerate() {
            now += Dur::from_micros(*gap);
            outputs.extend(drain(&mut link, now));
            match link.enqueue(now, packet(id as u64)) {
                Ok(()) => {}
                Err((_, DropCause::LinkDown)) => {
                    prop_assert!(schedule.is_down(now));
                    refused_down += 1;
                }
                Err((_, cause)) => {
                    prop_assert_eq!(cause, DropCause::Queue);
                    refused_full += 1;
                }
            }
            prop_assert!(!schedule.is_down(now) || !link.has_room(1));
        }
        outputs.extend(drain(&mut link, Time(t + 1_000_000_000)));
        prop_assert!(link.poll_timeout().is_none());

        let times: Vec<Time> = outputs.iter().map(output_time).collect();
        prop_assert!(times.windows(2).all(|w| w[0] <= w[1]), "not in time order: {:?}", times);
        prop_assert_eq!(outputs.len() + refused_down + refused_full, gaps_us.len());
        for output in &outputs {
            match output {
                LinkOutput::Delivered { at, .. } => {
                    let strictly_inside = matches!(schedule.window_at(*at), Some((from, _)) if from != *at);
                    prop_assert!(!strictly_inside, "delivered at {} inside a window", at);
                }
                LinkOutput::Dropped { at, cause, .. } => {
                    prop_assert_eq!(*cause, DropCause::LinkDown);
                    prop_assert!(windows.iter().any(|&(from, _)| from == *at));
                }
            }
        }
    }
}

#[test]
fn the_link_tells_its_state_and_next_change_and_back_to_back_windows_are_one_outage() {
    // Down [10, 20) and [20, 30) (one outage), then [40, 50).
    let schedule = Schedule::new(vec![(ms(10), ms(20)), (ms(20), ms(30)), (ms(40), ms(50))]).unwrap();
    let changes: Vec<Time> = std::iter::successors(schedule.next_change(Time::ZERO), |&t| schedule.next_change(Time(t.0 + 1))).collect();
    assert_eq!(changes, vec![ms(10), ms(30), ms(40), ms(50)]);
    assert_eq!(schedule.next_change(ms(10)), Some(ms(10)), "at or after");
    assert_eq!(schedule.next_change(ms(15)), Some(ms(30)));
    assert_eq!(schedule.next_change(ms(51)), None);
    let link: Box<dyn Link + Send> = Box::new(Delayed::new(
        Intermittent::new(FifoLink::new(Dur::from_millis(1), 10), schedule),
        DelayModel::Constant(ms(5).since(Time::ZERO)),
        false,
        RngStream::derive(1, "d"),
    ));
    let up: Vec<bool> = [0, 10, 19, 20, 29, 30, 40, 50].iter().map(|&t| link.is_up(ms(t))).collect();
    assert_eq!(up, vec![true, false, false, false, false, true, false, true], "decorators and boxes pass the state on");
    assert_eq!(link.next_change(ms(31)), Some(ms(40)));
    assert!(FifoLink::new(Dur::from_millis(1), 10).is_up(ms(10)), "a link without availability is always up");
}
