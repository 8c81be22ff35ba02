//! The `Delayed` decorator: timing, ordering, FIFO versus reorder mode, pass-through.

use crate::delay_support;

use delay_support::{drain, ms, output_time, packet, FifoLink, ScriptedLink};
use multiconn_core::{DropCause, Dur, RngStream, Time};
use multiconn_link::delay::{DelayModel, Delayed};
use multiconn_link::{Link, LinkOutput};
use proptest::prelude::*;

fn delivered_ids(outputs: &[LinkOutput]) -> Vec<u64> {
    outputs
        .iter()
        .filter_map(|o| match o {
            LinkOutput::Delivered { pkt, .. } => Some(pkt.id),
            LinkOutput::Dropped { .. } => None,
        })
        .collect()
}

fn assert_time_ordered(outputs: &[LinkOutput]) {
    let times: Vec<Time> = outputs.iter().map(output_time).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "outputs out of time order: {times:?}"
    );
}

/// Offers packets at the given instants through `link`, polling as time advances, and returns
/// every output together with the `now` at which it was handed out.
fn run(link: &mut impl Link, arrivals: &[Time]) -> Vec<(Time, LinkOutput)> {
    let mut outputs = Vec::new();
    for (id, &t) in arrivals.iter().enumerate() {
        outputs.extend(drain(link, t).into_iter().map(|o| (t, o)));
        link.enqueue(t, packet(id as u64)).unwrap();
    }
    while let Some(next) = link.poll_timeout() {
        outputs.extend(drain(link, next).into_iter().map(|o| (next, o)));
    }
    outputs
}

fn delay_of(delay: Dur, reorder: bool, seed: u64) -> Delayed<FifoLink> {
    Delayed::new(
        FifoLink::zero_time(),
        DelayModel::Constant(delay),
        reorder,
        RngStream::derive(seed, "delay"),
    )
}

#[test]
fn constant_delay_adds_to_the_inner_delivery_time() {
    // 1 ms of service per packet, then 10 ms of propagation.
    let inner = FifoLink::new(Dur::from_millis(1), 100);
    let mut link = Delayed::new(
        inner,
        DelayModel::Constant(Dur::from_millis(10)),
        false,
        RngStream::derive(1, "c"),
    );
    for id in 0..3 {
        link.enqueue(ms(0), packet(id)).unwrap();
    }
    assert_eq!(link.poll_timeout(), Some(ms(1)));
    // At 1 ms the first packet leaves the server and starts propagating; nothing is due yet.
    assert_eq!(link.poll(ms(1)), None);
    assert_eq!(link.propagating(), 1);
    assert_eq!(link.poll_timeout(), Some(ms(2)));
    assert_eq!(link.poll(ms(10)), None);
    let outputs = drain(&mut link, ms(12));
    let times: Vec<Time> = outputs.iter().map(output_time).collect();
    assert_eq!(times, vec![ms(11), ms(12)]);
    assert_eq!(link.poll_timeout(), Some(ms(13)));
    assert_eq!(drain(&mut link, ms(13)).len(), 1);
    assert_eq!(link.poll_timeout(), None);
}

#[test]
fn zero_delay_delivers_at_the_same_instant() {
    let mut link = delay_of(Dur::ZERO, false, 2);
    link.enqueue(ms(5), packet(0)).unwrap();
    assert_eq!(link.poll_timeout(), Some(ms(5)));
    assert_eq!(
        link.poll(ms(5)),
        Some(LinkOutput::Delivered {
            at: ms(5),
            pkt: packet(0)
        })
    );
    assert_eq!(link.poll(ms(5)), None);
    assert_eq!(link.poll_timeout(), None);
}

#[test]
fn nothing_is_handed_out_before_it_is_due() {
    let mut link = delay_of(Dur::from_millis(3), false, 3);
    link.enqueue(ms(1), packet(0)).unwrap();
    assert_eq!(link.poll(Time(ms(4).0 - 1)), None);
    assert_eq!(link.poll_timeout(), Some(ms(4)));
    assert!(matches!(link.poll(ms(4)), Some(LinkOutput::Delivered { at, .. }) if at == ms(4)));
}

#[test]
fn inner_drops_pass_through_at_their_own_time_and_in_time_order() {
    let script = vec![
        LinkOutput::Delivered {
            at: ms(1),
            pkt: packet(0),
        },
        LinkOutput::Dropped {
            at: ms(5),
            pkt: packet(1),
            cause: DropCause::LinkDown,
        },
        LinkOutput::Delivered {
            at: ms(6),
            pkt: packet(2),
        },
    ];
    let model = DelayModel::Constant(Dur::from_millis(10));
    let mut link = Delayed::new(
        ScriptedLink::new(script),
        model,
        false,
        RngStream::derive(4, "s"),
    );
    // A lazy caller polls once at 100 ms and still gets everything in time order.
    let outputs = drain(&mut link, ms(100));
    assert_eq!(
        outputs,
        vec![
            LinkOutput::Dropped {
                at: ms(5),
                pkt: packet(1),
                cause: DropCause::LinkDown
            },
            LinkOutput::Delivered {
                at: ms(11),
                pkt: packet(0)
            },
            LinkOutput::Delivered {
                at: ms(16),
                pkt: packet(2)
            },
        ]
    );
}

#[test]
fn flush_empties_the_inner_link_but_not_the_packets_in_flight() {
    let inner = FifoLink::new(Dur::from_millis(1), 100);
    let mut link = Delayed::new(
        inner,
        DelayModel::Constant(Dur::from_millis(10)),
        false,
        RngStream::derive(5, "f"),
    );
    for id in 0..4 {
        link.enqueue(ms(0), packet(id)).unwrap();
    }
    assert!(drain(&mut link, ms(2)).is_empty()); // packets 0 and 1 are now propagating
    let mut flushed = Vec::new();
    link.flush(ms(2), &mut flushed);
    assert_eq!(flushed.iter().map(|p| p.id).collect::<Vec<_>>(), vec![2, 3]);
    let outputs = drain(&mut link, ms(100));
    assert_eq!(delivered_ids(&outputs), vec![0, 1]);
    assert_eq!(
        outputs.iter().map(output_time).collect::<Vec<_>>(),
        vec![ms(11), ms(12)]
    );
}

#[test]
fn queue_and_room_are_the_inner_links() {
    let inner = FifoLink::new(Dur::from_millis(1), 1);
    let mut link = Delayed::new(
        inner,
        DelayModel::Constant(Dur::ZERO),
        false,
        RngStream::derive(6, "q"),
    );
    link.enqueue(ms(0), packet(0)).unwrap();
    link.enqueue(ms(0), packet(1)).unwrap();
    assert_eq!(link.queue().packets, 1);
    assert!(!link.has_room(1500));
    assert_eq!(
        link.enqueue(ms(0), packet(2)),
        Err((packet(2), DropCause::Queue))
    );
}

#[test]
fn reorder_mode_lets_packets_overtake_when_jitter_exceeds_spacing() {
    // 0.1 ms spacing against a 5 ms standard deviation.
    let model = DelayModel::Normal {
        mean: Dur::from_millis(10),
        cv: 0.5,
    };
    let mut link = Delayed::new(
        FifoLink::zero_time(),
        model,
        true,
        RngStream::derive(7, "reorder"),
    );
    let arrivals: Vec<Time> = (0..2000).map(|i| Time(i * 100_000)).collect();
    let outputs: Vec<LinkOutput> = run(&mut link, &arrivals)
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert_time_ordered(&outputs);
    let ids = delivered_ids(&outputs);
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (0..2000).collect::<Vec<_>>(),
        "every packet is delivered exactly once"
    );
    let overtaken = ids.windows(2).filter(|w| w[1] < w[0]).count();
    println!("reorder mode: {overtaken} of 1999 neighbouring pairs inverted");
    assert!(overtaken > 500, "only {overtaken} inversions");
}

#[test]
fn fifo_mode_holds_back_a_packet_drawn_shorter_than_its_predecessor() {
    let model = DelayModel::Normal {
        mean: Dur::from_millis(10),
        cv: 0.5,
    };
    let mut link = Delayed::new(
        FifoLink::zero_time(),
        model,
        false,
        RngStream::derive(7, "reorder"),
    );
    let arrivals: Vec<Time> = (0..2000).map(|i| Time(i * 100_000)).collect();
    let outputs: Vec<LinkOutput> = run(&mut link, &arrivals)
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert_eq!(delivered_ids(&outputs), (0..2000).collect::<Vec<_>>());
    // Holding back makes many deliveries coincide with the one before.
    let ties = outputs
        .windows(2)
        .filter(|w| output_time(&w[0]) == output_time(&w[1]))
        .count();
    assert!(ties > 100, "only {ties} held-back deliveries");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the spacing and jitter, FIFO mode delivers in arrival order, never early, and
    /// hands outputs out in time order and only once they are due.
    #[test]
    fn fifo_mode_never_reorders(
        gaps_us in prop::collection::vec(0u64..5_000, 1..300),
        cv in 0.0f64..=1.0,
        seed in any::<u64>(),
    ) {
        let model = DelayModel::Normal { mean: Dur::from_millis(10), cv };
        let mut link = Delayed::new(FifoLink::zero_time(), model, false, RngStream::derive(seed, "fifo"));
        let arrivals: Vec<Time> = gaps_us
            .iter()
            .scan(Time::ZERO, |t, &gap| { *t += Dur::from_micros(gap); Some(*t) })
            .collect();
        let outputs = run(&mut link, &arrivals);
        let ids: Vec<u64> = delivered_ids(&outputs.iter().map(|(_, o)| o.clone()).collect::<Vec<_>>());
        prop_assert_eq!(ids, (0..arrivals.len() as u64).collect::<Vec<_>>());
        for (polled_at, output) in &outputs {
            prop_assert!(output_time(output) <= *polled_at, "handed out before it was due");
            if let LinkOutput::Delivered { at, pkt } = output {
                prop_assert!(*at >= arrivals[pkt.id as usize], "delivered before it arrived");
            }
        }
        let times: Vec<Time> = outputs.iter().map(|(_, o)| output_time(o)).collect();
        prop_assert!(times.windows(2).all(|w| w[0] <= w[1]));
    }
}
