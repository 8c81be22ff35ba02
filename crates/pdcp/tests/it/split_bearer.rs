//! A split bearer end to end: the transmitting entity → two FIFO legs with constant, different
//! delays → the receiving entity (TS 38.323 §5.2.1 and §5.2.2). The receiver's RX_DELIV is fed
//! back to the transmitter, whose window guard (pdcp-dc.md TV12) must keep every PDU inside the
//! receiver's window however large the skew between the legs: everything arrives exactly
//! once, in COUNT order, and under duplication each second copy is discarded.

use std::collections::BTreeMap;

use multiconn_core::{Dur, Time};
use multiconn_pdcp::{
    AdaptiveSignal, Legs, Rat, Receiver, ReceiverConfig, RxStats, SnLength, SplitPolicy, Transmitter, TransmitterConfig, TxRefusal, TxStats,
};
use proptest::prelude::*;

fn at(ms: u64) -> Time {
    Time::ZERO + Dur::from_millis(ms)
}

struct Run {
    delivered: Vec<i64>,
    rx: RxStats,
    tx: TxStats,
    max_outstanding: i64,
}

/// Sends `n` SDUs, at most `per_ms` each millisecond (those the window guard refuses wait),
/// over legs with one-way delays `delays` (ms). Each millisecond: t-Reordering expiries due,
/// then arrivals (in sending order per leg, leg by leg within the same millisecond), then the
/// receiver's RX_DELIV goes back to the transmitter, then new PDUs are sent.
fn run(policy: SplitPolicy, bits: u8, delays: [u64; 2], per_ms: u32, n: usize, t_reordering: Option<u64>) -> Run {
    let sn = SnLength::new(bits).unwrap();
    let mut tx = Transmitter::new(TransmitterConfig { rat: Rat::Nr, sn, policy });
    let mut rx: Receiver<i64> =
        Receiver::new(ReceiverConfig { sn, t_reordering: t_reordering.map(Dur::from_millis), reordering: true });
    // (arrival ms, leg, order sent) → (SN, COUNT)
    let mut in_flight: BTreeMap<(u64, usize, u64), (u32, i64)> = BTreeMap::new();
    let mut out = Vec::new();
    let mut sent = 0;
    let mut order = 0;
    let mut max_outstanding = 0;
    for ms in 0.. {
        while let Some(t) = rx.poll_timeout().filter(|&t| t <= at(ms)) {
            rx.handle_timeout(t, &mut out);
        }
        while let Some(entry) = in_flight.first_entry() {
            if entry.key().0 > ms {
                break;
            }
            let (sn, count) = entry.remove();
            rx.receive(at(ms), sn, count, &mut out);
        }
        tx.on_delivered(rx.rx_deliv());
        for _ in 0..per_ms {
            if sent == n {
                break;
            }
            match tx.send(at(ms), 1000) {
                Ok(pdu) => {
                    let legs: &[usize] = match pdu.legs {
                        Legs::One(0) => &[0],
                        Legs::One(_) => &[1],
                        Legs::Both => &[0, 1],
                    };
                    for &leg in legs {
                        in_flight.insert((ms + delays[leg], leg, order), (pdu.sn, pdu.count));
                        order += 1;
                    }
                    sent += 1;
                }
                Err(TxRefusal::WindowFull) => break,
                Err(TxRefusal::CountExhausted) => unreachable!(),
            }
            max_outstanding = max_outstanding.max(tx.outstanding());
        }
        if sent == n && in_flight.is_empty() && rx.poll_timeout().is_none() {
            break;
        }
    }
    let delivered = out.into_iter().map(|(count, sdu)| {
        assert_eq!(count, sdu, "the SDU delivered under a COUNT is the one sent with it");
        count
    });
    Run { delivered: delivered.collect(), rx: rx.stats(), tx: tx.stats(), max_outstanding }
}

fn single_leg_policy() -> impl Strategy<Value = SplitPolicy> {
    prop_oneof![
        (1u32..200, 0.0f64..=1.0).prop_map(|(size, share)| SplitPolicy::Batch { size, share }),
        Just(SplitPolicy::Alternate),
        (0.0f64..=1.0).prop_map(|share| SplitPolicy::Ratio { share }),
        prop_oneof![Just(AdaptiveSignal::Delay), Just(AdaptiveSignal::Queue)].prop_map(|signal| SplitPolicy::Adaptive { signal }),
    ]
}

/// t-Reordering longer than the slowest leg (so nothing is ever given up), or infinity.
fn t_reordering(delays: [u64; 2], extra: Option<u64>) -> Option<u64> {
    extra.map(|e| delays[0].max(delays[1]) + 1 + e)
}

#[test]
fn the_window_guard_keeps_a_large_skew_lossless() {
    // 50 PDUs/ms alternating over legs 0 ms and 200 ms apart: without the guard, 5000 PDUs
    // would be in flight on the slow leg, far beyond the 12-bit window of 2048 (TV12).
    let r = run(SplitPolicy::Alternate, 12, [1, 201], 50, 20_000, None);
    assert_eq!(r.delivered, (0..20_000).collect::<Vec<_>>());
    assert_eq!((r.rx.late_discards, r.rx.duplicate_discards, r.rx.given_up), (0, 0, 0));
    assert!(r.tx.window_full > 0, "the guard had to act");
    assert_eq!(r.max_outstanding, 2047);
    // With 18-bit SNs the same skew fits the window and the guard never acts.
    let r = run(SplitPolicy::Alternate, 18, [1, 201], 50, 20_000, None);
    assert_eq!(r.delivered.len(), 20_000);
    assert_eq!(r.tx.window_full, 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_split_bearer_delivers_everything_once_in_order(
        policy in single_leg_policy(),
        bits in prop_oneof![Just(12u8), Just(18u8)],
        delays in [0u64..150, 0u64..150],
        per_ms in 1u32..60,
        n in 1usize..6000,
        extra in prop::option::of(0u64..50),
    ) {
        let r = run(policy, bits, delays, per_ms, n, t_reordering(delays, extra));
        prop_assert_eq!(r.delivered, (0..n as i64).collect::<Vec<_>>());
        prop_assert_eq!((r.rx.late_discards, r.rx.duplicate_discards, r.rx.given_up), (0, 0, 0));
        prop_assert!(r.max_outstanding < SnLength::new(bits).unwrap().window());
        prop_assert_eq!(r.tx.pdus[0] + r.tx.pdus[1], n as u64);
    }

    /// Duplication: the second copy of every PDU is discarded, as a duplicate if the first
    /// is still held, as late if it already went up. The window guard follows the faster
    /// leg's deliveries, so the skew is kept to less than a window's worth of PDUs here: a
    /// copy arriving a window or more behind RX_DELIV would read as a future COUNT.
    #[test]
    fn duplication_delivers_once_and_discards_every_second_copy(
        bits in prop_oneof![Just(12u8), Just(18u8)],
        delays in [0u64..150, 0u64..150],
        per_ms in 1u32..13,
        n in 1usize..6000,
        extra in prop::option::of(0u64..50),
    ) {
        let r = run(SplitPolicy::Duplicate, bits, delays, per_ms, n, t_reordering(delays, extra));
        prop_assert_eq!(r.delivered, (0..n as i64).collect::<Vec<_>>());
        prop_assert_eq!(r.rx.duplicate_discards + r.rx.late_discards, n as u64);
        prop_assert_eq!(r.rx.given_up, 0);
        prop_assert_eq!(r.tx.pdus, [n as u64, n as u64]);
    }
}

/// A split bearer whose second leg's node is `x2` away (X2-U): adaptive on the delivery
/// credit, reports every 10 ms.
fn with_x2(x2: Dur) -> multiconn_pdcp::SplitBearer {
    let sn = SnLength::new(18).unwrap();
    multiconn_pdcp::SplitBearer::new(&multiconn_pdcp::SplitBearerConfig {
        name: "endc".into(),
        tx: TransmitterConfig { rat: Rat::Nr, sn, policy: SplitPolicy::Adaptive { signal: AdaptiveSignal::DeliveryCredit } },
        rx: ReceiverConfig { sn, t_reordering: Some(Dur::from_millis(100)), reordering: true },
        processing_delay: Dur::ZERO,
        packet_time: Dur::ZERO,
        feedback: Some(Dur::from_millis(10)),
        retransmit_lost: false,
        duplication_switches: Vec::new(),
        tx_leg_delay: [Dur::ZERO, x2],
        rx_leg_delay: [Dur::ZERO, x2],
        l4s_reorder_threshold: None,
    })
}

#[test]
fn the_x2u_delay_holds_the_second_legs_pdus_and_reports_and_nothing_else() {
    use multiconn_core::{FlowId, Packet};
    use multiconn_pdcp::LegState;
    let x2 = Dur::from_millis(7);
    let mut b = with_x2(x2);
    let pkt = |id: u64| Packet::new(id, FlowId(0), 1000, id, Time::ZERO);
    // Leg 0 is the master's own: at once. Leg 1's PDUs reach its node 7 ms later, in order.
    assert!(b.toward_leg(at(1), 0, pkt(1)).is_some());
    assert!(b.toward_leg(at(1), 1, pkt(2)).is_none());
    assert!(b.toward_leg(at(2), 1, pkt(3)).is_none());
    assert_eq!(b.poll_timeout(), Some(at(8)));
    assert!(b.pop_toward_leg(Time(at(8).0 - 1)).is_none());
    assert_eq!(b.pop_toward_leg(at(8)).map(|(leg, p)| (leg, p.id)), Some((1, 2)));
    assert!(b.pop_toward_leg(at(8)).is_none());
    assert_eq!(b.pop_toward_leg(at(9)).map(|(leg, p)| (leg, p.id)), Some((1, 3)));
    // What leg 1 delivers reaches the receiving entity 7 ms later; leg 0's at once.
    assert!(b.from_leg(at(20), 0, pkt(4)).is_some());
    assert!(b.from_leg(at(20), 1, pkt(5)).is_none());
    assert_eq!(b.pop_from_leg(at(27)).map(|(t, leg, p)| (t, leg, p.id)), Some((at(27), 1, 5)));
    // The legs' reports at 10 and 20 ms: leg 0's take effect at once, leg 1's 7 ms later
    // (at 17 and 27 ms). The adaptive split alternates until both legs have a rate (two
    // reports each), then leg 1's larger credit (its buffer of 50 000 bytes against leg 0's
    // 5 000) wins.
    let state = |buffer: u64| LegState { queued_bytes: 1, desired_bytes: Some(buffer), buffer_bytes: Some(buffer), confirmed_sn: None };
    b.report(at(10), [state(5_000), state(50_000)]);
    assert!(b.pop_toward_leg(at(17)).is_none());
    b.report(at(20), [state(5_000), state(50_000)]);
    let mut legs = Vec::new();
    for _ in 0..2 {
        legs.push(b.tx.send(at(22), 997).unwrap().legs);
    }
    assert_eq!(b.poll_timeout(), Some(at(27)), "leg 1's second report is on its way");
    assert!(b.pop_toward_leg(at(27)).is_none());
    for _ in 0..3 {
        legs.push(b.tx.send(at(27), 997).unwrap().legs);
    }
    assert_eq!(legs, [Legs::One(0), Legs::One(1), Legs::One(1), Legs::One(1), Legs::One(1)]);
}
