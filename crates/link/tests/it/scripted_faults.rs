//! The `Scripted` decorator: exact drops, losses after transmission, extra delay with
//! reordering, and a script that says nothing leaving a full `LinkConfig` stack unchanged.

use crate::delay_support;

use delay_support::{drain, ms, packet};
use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, Ecn, Packet, Rate, Time};
use multiconn_link::availability::Schedule;
use multiconn_link::builder::LinkConfig;
use multiconn_link::delay::DelayModel;
use multiconn_link::loss::LossModel;
use multiconn_link::rate::RateModel;
use multiconn_link::scripted::{ScriptCounters, Scripted, Verdict};
use multiconn_link::{Link, LinkOutput};
use proptest::prelude::*;

/// 12 Mbit/s serializes a 1500-byte packet in exactly 1 ms; then 10 ms of propagation.
fn twelve_mbit_10ms() -> LinkConfig {
    LinkConfig {
        aqm: None,
        rate: RateModel::Fixed(Rate(12_000_000)),
        delay: DelayModel::Constant(Dur::from_millis(10)),
        reorder: false,
        queue: QueueLimit::Packets(100),
        loss: None,
        down: Schedule::always_up(),
        replaced: Vec::new(),
    }
}

/// (time, id) of deliveries and (time, id, cause) of drops, in the order handed out, polling
/// at every wake-up the link asks for.
fn run_out(link: &mut impl Link) -> Vec<(Time, u64, Option<DropCause>)> {
    let mut out = Vec::new();
    while let Some(t) = link.poll_timeout() {
        for o in drain(link, t) {
            out.push(match o {
                LinkOutput::Delivered { at, pkt } => (at, pkt.id, None),
                LinkOutput::Dropped { at, pkt, cause } => (at, pkt.id, Some(cause)),
            });
        }
    }
    out
}

#[test]
fn the_nth_packet_is_refused_at_the_door_and_uses_no_capacity() {
    let mut link = Scripted::new(twelve_mbit_10ms().build(1, "l"), |n, _: &Packet| {
        if n == 2 {
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    });
    let mut refused = Vec::new();
    for id in 0..5 {
        if let Err((pkt, cause)) = link.enqueue(Time::ZERO, packet(id)) {
            refused.push((pkt.id, cause));
        }
    }
    assert_eq!(refused, vec![(2, DropCause::RandomLoss)]);
    // Packet 3 is served right after packet 1: the dropped one took no serialization time.
    let out = run_out(&mut link);
    assert_eq!(
        out,
        vec![(ms(11), 0, None), (ms(12), 1, None), (ms(13), 3, None), (ms(14), 4, None)]
    );
    assert_eq!(link.counters(), ScriptCounters { offered: 5, dropped: 1, lost: 0, delayed: 0, ecn_rewritten: 0 });
}

#[test]
fn set_ecn_rewrites_the_field_of_the_chosen_packets_only() {
    // Packet 1 is marked CE on the way, packet 2 bleached; the others pass as sent (ECT(0)).
    let mut link = Scripted::new(twelve_mbit_10ms().build(1, "l"), |n, _: &Packet| match n {
        1 => Verdict::SetEcn(Ecn::Ce),
        2 => Verdict::SetEcn(Ecn::NotEct),
        _ => Verdict::Pass,
    });
    for id in 0..4 {
        let mut pkt = packet(id);
        pkt.ecn = Ecn::Ect0;
        link.enqueue(Time::ZERO, pkt).unwrap();
    }
    let mut fields = Vec::new();
    while let Some(t) = link.poll_timeout() {
        for o in drain(&mut link, t) {
            if let LinkOutput::Delivered { at, pkt } = o {
                fields.push((at, pkt.id, pkt.ecn));
            }
        }
    }
    // Same times as a plain link: rewriting costs nothing.
    assert_eq!(fields, vec![(ms(11), 0, Ecn::Ect0), (ms(12), 1, Ecn::Ce), (ms(13), 2, Ecn::NotEct), (ms(14), 3, Ecn::Ect0)]);
    assert_eq!(link.counters(), ScriptCounters { offered: 4, dropped: 0, lost: 0, delayed: 0, ecn_rewritten: 2 });
}

#[test]
fn the_index_counts_every_offer_across_time() {
    // Drop every third packet offered, one packet per 5 ms (the link is idle each time).
    let mut link = Scripted::new(twelve_mbit_10ms().build(1, "l"), |n, _: &Packet| {
        if n % 3 == 2 {
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    });
    let mut outputs = Vec::new();
    for id in 0..9u64 {
        let now = ms(5 * id);
        outputs.extend(drain(&mut link, now));
        let refused = link.enqueue(now, packet(id)).is_err();
        assert_eq!(refused, id % 3 == 2, "packet {id}");
    }
    let mut delivered: Vec<(Time, u64, Option<DropCause>)> = outputs
        .into_iter()
        .map(|o| match o {
            LinkOutput::Delivered { at, pkt } => (at, pkt.id, None),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    delivered.extend(run_out(&mut link));
    // Each one 1 ms of serialization and 10 ms of propagation after its offer.
    let expected: Vec<_> = [0, 1, 3, 4, 6, 7].into_iter().map(|id| (ms(5 * id + 11), id, None)).collect();
    assert_eq!(delivered, expected);
}

#[test]
fn a_lost_packet_crosses_the_link_then_vanishes_when_it_would_have_arrived() {
    let mut link = Scripted::new(twelve_mbit_10ms().build(1, "l"), |n, _: &Packet| {
        if n == 1 {
            Verdict::Lose
        } else {
            Verdict::Pass
        }
    });
    for id in 0..3 {
        link.enqueue(Time::ZERO, packet(id)).unwrap();
    }
    // Packet 1 occupied the link for its millisecond: packet 2 arrives at 13 ms, not 12.
    assert_eq!(
        run_out(&mut link),
        vec![(ms(11), 0, None), (ms(12), 1, Some(DropCause::RandomLoss)), (ms(13), 2, None)]
    );
    assert_eq!(link.counters().lost, 1);
}

#[test]
fn extra_delay_reorders_with_exact_times() {
    // Packet 0 is held 2.5 ms after the 10 ms of propagation: 11 + 2.5 = 13.5 ms, behind
    // packets 1 (12 ms) and 2 (13 ms).
    let mut link = Scripted::new(twelve_mbit_10ms().build(1, "l"), |n, _: &Packet| {
        if n == 0 {
            Verdict::Delay(Dur::from_micros(2_500))
        } else {
            Verdict::Pass
        }
    });
    for id in 0..3 {
        link.enqueue(Time::ZERO, packet(id)).unwrap();
    }
    // The wake-ups: packet 0 leaves the rate server at 1 ms, unwoken (lazy departures), and
    // would arrive at 11 ms; it is held then, and nothing is handed out.
    assert_eq!(link.next_departure(), Some(ms(1)));
    assert_eq!(link.poll_timeout(), Some(ms(11)));
    assert_eq!(link.poll(ms(11)), None);
    assert_eq!(link.held(), 1);
    assert_eq!(link.poll_timeout(), Some(ms(12)));
    assert_eq!(
        run_out(&mut link),
        vec![(ms(12), 1, None), (ms(13), 2, None), (Time(13_500_000), 0, None)]
    );
    assert_eq!(link.counters().delayed, 1);
    assert_eq!(link.poll_timeout(), None);
}

#[test]
fn equal_due_times_keep_the_order_packets_left_the_inner_link() {
    // Packet 0 held exactly 1 ms is due at 12 ms together with packet 1: it left first.
    let mut link = Scripted::new(twelve_mbit_10ms().build(1, "l"), |n, _: &Packet| {
        if n == 0 {
            Verdict::Delay(Dur::from_millis(1))
        } else {
            Verdict::Pass
        }
    });
    for id in 0..2 {
        link.enqueue(Time::ZERO, packet(id)).unwrap();
    }
    assert_eq!(run_out(&mut link), vec![(ms(12), 0, None), (ms(12), 1, None)]);
}

#[test]
fn a_refused_packet_leaves_no_mark_and_a_flushed_one_takes_its_mark_along() {
    // A queue of one waiting packet: the third packet offered at once is refused by the queue,
    // not by the script, although the script wanted to delay it.
    let mut cfg = twelve_mbit_10ms();
    cfg.queue = QueueLimit::Packets(1);
    let mut link = Scripted::new(cfg.build(1, "l"), |_, _: &Packet| Verdict::Delay(Dur::from_millis(5)));
    link.enqueue(Time::ZERO, packet(0)).unwrap();
    link.enqueue(Time::ZERO, packet(1)).unwrap();
    assert_eq!(link.enqueue(Time::ZERO, packet(2)).unwrap_err().1, DropCause::Queue);
    assert_eq!(link.counters().delayed, 2);
    // Flush at 0.5 ms: both packets come back and their marks are gone, so a later packet
    // with a reused id under a passing script is not delayed.
    let mut flushed = Vec::new();
    link.flush(Time(500_000), &mut flushed);
    assert_eq!(flushed.iter().map(|p| p.id).collect::<Vec<_>>(), vec![0, 1]);
    link.set_script(|_, _: &Packet| Verdict::Pass);
    link.enqueue(ms(20), packet(0)).unwrap();
    assert_eq!(run_out(&mut link), vec![(ms(31), 0, None)]);
}

#[test]
fn a_held_packet_survives_a_flush() {
    let mut link = Scripted::new(twelve_mbit_10ms().build(1, "l"), |n, _: &Packet| {
        if n == 0 {
            Verdict::Delay(Dur::from_millis(5))
        } else {
            Verdict::Pass
        }
    });
    link.enqueue(Time::ZERO, packet(0)).unwrap();
    link.enqueue(Time::ZERO, packet(1)).unwrap();
    // At 11 ms packet 0 is held (due 16 ms) and packet 1 propagates (due 12 ms): a flush
    // finds nothing waiting or in transmission.
    assert_eq!(link.poll(ms(11)), None);
    let mut flushed = Vec::new();
    link.flush(ms(11), &mut flushed);
    assert!(flushed.is_empty());
    assert_eq!(run_out(&mut link), vec![(ms(12), 1, None), (ms(16), 0, None)]);
}

/// A link with every decorator: random delay with reordering, Gilbert–Elliott loss, two down
/// windows, a small queue.
fn busy_config() -> LinkConfig {
    LinkConfig {
        aqm: None,
        rate: RateModel::Fixed(Rate(20_000_000)),
        delay: DelayModel::Normal { mean: Dur::from_millis(8), cv: 0.5 },
        reorder: true,
        queue: QueueLimit::Packets(5),
        loss: Some(LossModel::GilbertElliott { p: 0.1, r: 0.3, loss_good: 0.01, loss_bad: 0.5 }),
        down: Schedule::new(vec![(ms(20), ms(25)), (ms(60), ms(61))]).unwrap(),
        replaced: Vec::new(),
    }
}

/// Offers packets at the given gaps (µs), polling as time advances; returns every enqueue
/// result and output with the time it happened.
fn trace(link: &mut impl Link, gaps_us: &[u64]) -> Vec<String> {
    let mut log = Vec::new();
    let mut now = Time::ZERO;
    for (id, gap) in gaps_us.iter().enumerate() {
        let next = now + Dur::from_micros(*gap);
        while let Some(t) = link.poll_timeout().filter(|&t| t <= next) {
            log.extend(drain(link, t).into_iter().map(|o| format!("{t} {o:?}")));
        }
        now = next;
        let result = link.enqueue(now, packet(id as u64)).map_err(|(p, c)| (p.id, c));
        log.push(format!("{now} enqueue {id} {result:?} {:?}", link.queue()));
    }
    while let Some(t) = link.poll_timeout() {
        log.extend(drain(link, t).into_iter().map(|o| format!("{t} {o:?}")));
    }
    log
}

#[test]
fn a_silent_script_leaves_a_full_stack_unchanged() {
    let gaps: Vec<u64> = (0..400).map(|i| (i * 7919) % 900).collect();
    let bare = trace(&mut busy_config().build(42, "l"), &gaps);
    let mut wrapped = Scripted::passthrough(busy_config().build(42, "l"));
    let scripted = trace(&mut wrapped, &gaps);
    assert_eq!(bare, scripted);
    // The run did exercise the decorators: drops of every kind and reordering.
    for cause in ["Queue", "RandomLoss", "LinkDown"] {
        assert!(bare.iter().any(|l| l.contains(cause)), "no {cause} in the run");
    }
    assert_eq!(wrapped.counters(), ScriptCounters { offered: 400, dropped: 0, lost: 0, delayed: 0, ecn_rewritten: 0 });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn passthrough_is_transparent(seed in any::<u64>(), gaps in proptest::collection::vec(0u64..2_000, 1..120)) {
        let bare = trace(&mut busy_config().build(seed, "p"), &gaps);
        let scripted = trace(&mut Scripted::passthrough(busy_config().build(seed, "p")), &gaps);
        prop_assert_eq!(bare, scripted);
    }
}
