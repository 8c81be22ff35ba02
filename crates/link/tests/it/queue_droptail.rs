//! The drop-tail link: queue limits in packets and bytes, service order and timing, late
//! polling, flushing.

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, FlowId, Packet, Rate, Time};
use multiconn_link::queue::DropTailLink;
use multiconn_link::rate::{OpportunityTrace, RateModel, StepTrace};
use multiconn_link::{Link, LinkOutput, QueueState};
use proptest::prelude::*;

fn packet(id: u64, size: u32) -> Packet {
    Packet { id, flow: FlowId(0), size, seq: id, created: Time::ZERO, hop: 0, route: 0, lower_sn: 0, path: 0, ecn: multiconn_core::Ecn::NotEct, payload: None }
}

fn us(u: u64) -> Time {
    Time(u * 1_000)
}

/// 40 Mbit/s: 1500 B take 300 µs, 500 B take 100 µs.
fn link_40mbps(limit: QueueLimit) -> DropTailLink {
    DropTailLink::new(RateModel::Fixed(Rate::from_mbps(40.0)), limit)
}

fn delivered(output: Option<LinkOutput>) -> (Time, u64) {
    match output {
        Some(LinkOutput::Delivered { at, pkt }) => (at, pkt.id),
        other => panic!("expected a delivery, got {other:?}"),
    }
}

/// Polls at `now` until nothing is due; (time, id) of each delivery.
fn drain(link: &mut DropTailLink, now: Time) -> Vec<(Time, u64)> {
    std::iter::from_fn(|| link.poll(now)).map(|o| delivered(Some(o))).collect()
}

#[test]
fn packet_limit_counts_waiting_packets_not_the_one_in_service() {
    let mut link = link_40mbps(QueueLimit::Packets(2));
    for id in 0..3 {
        assert!(link.has_room(1500));
        link.enqueue(Time::ZERO, packet(id, 1500)).unwrap();
    }
    assert!(!link.has_room(1));
    assert_eq!(link.queue(), QueueState { packets: 2, bytes: 3000 });
    let (refused, cause) = link.enqueue(Time::ZERO, packet(3, 1500)).unwrap_err();
    assert_eq!((refused.id, cause), (3, DropCause::Queue));
    assert_eq!(link.queue(), QueueState { packets: 2, bytes: 3000 });
}

#[test]
fn zero_limits_leave_room_only_for_the_packet_in_service() {
    for limit in [QueueLimit::Packets(0), QueueLimit::Bytes(0)] {
        let mut link = link_40mbps(limit);
        assert!(link.has_room(1500));
        link.enqueue(Time::ZERO, packet(0, 1500)).unwrap();
        assert!(!link.has_room(1), "{limit:?}");
        assert_eq!(link.enqueue(Time::ZERO, packet(1, 1)).unwrap_err().1, DropCause::Queue);
        assert_eq!(link.queue(), QueueState::default());
        assert_eq!(drain(&mut link, us(300)), [(us(300), 0)]);
        assert!(link.has_room(1500), "idle again after the delivery");
    }
}

#[test]
fn byte_limit_admits_a_packet_while_waiting_bytes_plus_its_size_fit() {
    let mut link = link_40mbps(QueueLimit::Bytes(3000));
    link.enqueue(Time::ZERO, packet(0, 1500)).unwrap(); // in service, not counted
    link.enqueue(Time::ZERO, packet(1, 1000)).unwrap();
    link.enqueue(Time::ZERO, packet(2, 2000)).unwrap(); // exactly 3000 waiting
    assert!(!link.has_room(1));
    assert_eq!(link.enqueue(Time::ZERO, packet(3, 1)).unwrap_err().0.id, 3);
    assert_eq!(link.queue(), QueueState { packets: 2, bytes: 3000 });
    // Once packet 1 enters service, 1000 bytes are free again.
    assert_eq!(drain(&mut link, us(300)), [(us(300), 0)]);
    assert!(link.has_room(1000));
    assert!(!link.has_room(1001));
}

#[test]
fn fixed_rate_link_delivers_back_to_back_in_fifo_order() {
    let mut link = link_40mbps(QueueLimit::Packets(10));
    for id in 0..3 {
        link.enqueue(Time::ZERO, packet(id, 1500)).unwrap();
    }
    assert_eq!(link.poll_timeout(), Some(us(300)));
    assert_eq!(link.poll(us(299)), None);
    assert_eq!(delivered(link.poll(us(300))), (us(300), 0));
    assert_eq!(link.poll(us(300)), None);
    assert_eq!(link.poll_timeout(), Some(us(600)));
    assert_eq!(delivered(link.poll(us(600))), (us(600), 1));
    assert_eq!(delivered(link.poll(us(900))), (us(900), 2));
    assert_eq!(link.poll_timeout(), None);
}

#[test]
fn late_polling_keeps_service_back_to_back_in_virtual_time() {
    let mut link = link_40mbps(QueueLimit::Packets(10));
    for id in 0..3 {
        link.enqueue(Time::ZERO, packet(id, 1500)).unwrap();
    }
    // Polled only at 10 ms: the second packet started at 300 µs, not at 10 ms.
    assert_eq!(drain(&mut link, us(10_000)), [(us(300), 0), (us(600), 1), (us(900), 2)]);
}

#[test]
fn a_packet_arriving_after_an_unpolled_finish_starts_at_its_arrival() {
    let mut link = link_40mbps(QueueLimit::Packets(10));
    link.enqueue(Time::ZERO, packet(0, 1500)).unwrap();
    // Packet 0 finished at 300 µs but nobody polled; packet 1 arrives at 1 ms.
    link.enqueue(us(1000), packet(1, 1500)).unwrap();
    assert_eq!(drain(&mut link, us(5000)), [(us(300), 0), (us(1300), 1)]);
}

#[test]
fn an_idle_link_starts_service_on_arrival() {
    let mut link = link_40mbps(QueueLimit::Packets(10));
    link.enqueue(us(5000), packet(0, 500)).unwrap();
    assert_eq!(link.poll_timeout(), Some(us(5100)));
    assert_eq!(drain(&mut link, us(5100)), [(us(5100), 0)]);
    link.enqueue(us(7000), packet(1, 500)).unwrap();
    assert_eq!(link.poll_timeout(), Some(us(7100)));
}

#[test]
fn flush_empties_the_link_and_frees_the_line_at_once() {
    let mut link = link_40mbps(QueueLimit::Packets(10));
    for id in 0..4 {
        link.enqueue(Time::ZERO, packet(id, 1500)).unwrap();
    }
    assert_eq!(drain(&mut link, us(300)), [(us(300), 0)]);
    let mut out = vec![packet(99, 1)];
    link.flush(us(400), &mut out);
    assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), [99, 1, 2, 3]);
    assert_eq!(link.queue(), QueueState::default());
    assert_eq!(link.poll_timeout(), None);
    assert_eq!(link.poll(Time::MAX), None);
    // The aborted packet 1 would have finished at 600 µs; a new one starts at once.
    link.enqueue(us(400), packet(4, 1500)).unwrap();
    assert_eq!(link.poll_timeout(), Some(us(700)));
}

#[test]
fn flush_releases_mahimahi_opportunities_reserved_by_the_aborted_packet() {
    let trace = OpportunityTrace { times_ms: vec![1], period_ms: 1 };
    let mut link = DropTailLink::new(RateModel::Opportunities(trace), QueueLimit::Packets(10));
    link.enqueue(Time::ZERO, packet(0, 15_000)).unwrap(); // needs opportunities 1..=10 ms
    assert_eq!(link.poll_timeout(), Some(us(10_000)));
    let mut out = Vec::new();
    link.flush(us(2500), &mut out);
    assert_eq!(out.len(), 1);
    link.enqueue(us(2500), packet(1, 1500)).unwrap();
    assert_eq!(link.poll_timeout(), Some(us(3000)));
}

#[test]
fn step_trace_link_waits_through_a_zero_rate_step() {
    let trace = StepTrace {
        steps: vec![(Dur::ZERO, Rate(12_000_000)), (Dur::from_millis(1), Rate(0))],
        period: Dur::from_millis(10),
    };
    let mut link = DropTailLink::new(RateModel::Steps(trace), QueueLimit::Packets(10));
    for id in 0..3 {
        link.enqueue(Time::ZERO, packet(id, 750)).unwrap();
    }
    // 750 B at 12 Mbit/s take 500 µs; the third waits out the pause until the next loop.
    assert_eq!(drain(&mut link, Time(u64::MAX - 1)), [(us(500), 0), (us(1000), 1), (us(10_500), 2)]);
}

#[test]
fn a_trace_that_never_carries_anything_has_no_timeout() {
    let trace = StepTrace { steps: vec![(Dur::ZERO, Rate(0))], period: Dur::from_secs(1) };
    let mut link = DropTailLink::new(RateModel::Steps(trace), QueueLimit::Packets(1));
    link.enqueue(Time::ZERO, packet(0, 1)).unwrap();
    assert_eq!(link.poll_timeout(), None);
    assert_eq!(link.poll(Time(u64::MAX - 1)), None);
}

#[derive(Debug, Clone)]
enum Op {
    Enqueue { gap_us: u64, size: u32 },
    Poll { gap_us: u64 },
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..500, 1u32..3000).prop_map(|(gap_us, size)| Op::Enqueue { gap_us, size }),
        3 => (0u64..2000).prop_map(|gap_us| Op::Poll { gap_us }),
        1 => Just(Op::Flush),
    ]
}

fn limit() -> impl Strategy<Value = QueueLimit> {
    prop_oneof![(0u64..6).prop_map(QueueLimit::Packets), (0u64..8000).prop_map(QueueLimit::Bytes)]
}

proptest! {
    /// Every packet offered is delivered, refused or flushed exactly once, in FIFO order,
    /// never before it could have been sent, and the queue never exceeds its limit.
    #[test]
    fn packets_are_conserved_in_order_within_the_limit(limit in limit(), ops in prop::collection::vec(op(), 1..200)) {
        let mut link = link_40mbps(limit);
        let mut now = Time::ZERO;
        let mut next_id = 0;
        let mut seen = Vec::new();
        let mut last_delivery = Time::ZERO;
        let mut last_delivered_id = None;
        let mut arrival = std::collections::HashMap::new();
        for op in ops {
            match op {
                Op::Enqueue { gap_us, size } => {
                    now += Dur::from_micros(gap_us);
                    let room = link.has_room(size);
                    arrival.insert(next_id, (now, size));
                    match link.enqueue(now, packet(next_id, size)) {
                        Ok(()) => prop_assert!(room),
                        Err((pkt, cause)) => {
                            prop_assert!(!room);
                            prop_assert_eq!(cause, DropCause::Queue);
                            prop_assert_eq!(pkt.id, next_id);
                            seen.push(next_id);
                        }
                    }
                    next_id += 1;
                }
                Op::Poll { gap_us } => {
                    now += Dur::from_micros(gap_us);
                    while let Some(output) = link.poll(now) {
                        let (at, id) = delivered(Some(output));
                        let (arrived, size) = arrival[&id];
                        prop_assert!(at <= now);
                        prop_assert!(at >= last_delivery);
                        prop_assert!(at >= arrived + Rate::from_mbps(40.0).tx_time(size as u64));
                        prop_assert!(last_delivered_id < Some(id), "FIFO order");
                        last_delivery = at;
                        last_delivered_id = Some(id);
                        seen.push(id);
                    }
                }
                Op::Flush => {
                    let mut out = Vec::new();
                    link.flush(now, &mut out);
                    seen.extend(out.iter().map(|p| p.id));
                    prop_assert_eq!(link.queue(), QueueState::default());
                    last_delivery = now;
                }
            }
            let queue = link.queue();
            match limit {
                QueueLimit::Packets(n) => prop_assert!(queue.packets as u64 <= n),
                QueueLimit::Bytes(n) => prop_assert!(queue.bytes <= n),
            }
        }
        let mut rest = Vec::new();
        link.flush(now, &mut rest);
        seen.extend(rest.iter().map(|p| p.id));
        seen.sort_unstable();
        prop_assert_eq!(seen, (0..next_id).collect::<Vec<_>>());
    }
}

#[test]
fn discard_waiting_removes_matching_waiting_packets_only() {
    let mut link = link_40mbps(QueueLimit::Bytes(10_000));
    for id in 0..5 {
        link.enqueue(Time::ZERO, packet(id, if id % 2 == 0 { 1500 } else { 500 })).unwrap();
    }
    // Packet 0 is in service; 1..=4 wait (500 + 1500 + 500 + 1500 bytes).
    assert_eq!(link.queue(), QueueState { packets: 4, bytes: 4000 });
    let mut out = Vec::new();
    link.discard_waiting(&mut |p| p.id % 2 == 0, &mut out);
    // The even packet in service stays; the waiting even ones go, in queue order.
    assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), [2, 4]);
    assert_eq!(link.queue(), QueueState { packets: 2, bytes: 1000 });
    // Service goes on back to back with what is left: 0 (300 µs), 1 and 3 (100 µs each).
    assert_eq!(drain(&mut link, us(1_000)), [(us(300), 0), (us(400), 1), (us(500), 3)]);
    // Freed bytes are room again.
    assert!(link.has_room(1500));
}
