//! The transmitting PDCP entity (TS 38.323 §5.2.1 numbering, §5.11 duplication, the split
//! policies of pdcp-dc.md §4.3): exact leg sequences of the fixed policies, SN wrap, header
//! sizes, the window guard (pdcp-dc.md TV12), COUNT exhaustion (TV17), and the adaptive policy
//! against a small fluid model of two legs that report every 10 ms; the uplink threshold
//! policy (TS 38.323 §5.2.1, ul-DataSplitThreshold); a leg that takes nothing (a released
//! secondary cell group) leaves every PDU, duplicates too, to the other.

use multiconn_core::{Dur, Time};
use proptest::prelude::*;
use multiconn_pdcp::{
    header_bytes, AdaptiveSignal, LegReport, Legs, PendingVolume, Pdu, Rat, SnLength, SplitPolicy, Transmitter, TransmitterConfig, TxRefusal,
};

fn cfg(bits: u8, policy: SplitPolicy) -> TransmitterConfig {
    TransmitterConfig { rat: Rat::Nr, sn: SnLength::new(bits).unwrap(), policy }
}

fn at_us(us: u64) -> Time {
    Time::ZERO + Dur::from_micros(us)
}

/// The legs of the next `n` PDUs (single-leg policies), all sent at time zero.
fn legs(tx: &mut Transmitter, n: usize) -> Vec<usize> {
    (0..n)
        .map(|_| match tx.send(Time::ZERO, 100).unwrap().legs {
            Legs::One(leg) => leg,
            Legs::Both => panic!("duplicated"),
        })
        .collect()
}

fn pattern(runs: &[(usize, usize)]) -> Vec<usize> {
    runs.iter().flat_map(|&(leg, n)| vec![leg; n]).collect()
}

#[test]
fn batch_100_at_0_9_is_90_then_10() {
    let mut tx = Transmitter::new(cfg(18, SplitPolicy::Batch { size: 100, share: 0.9 }));
    assert_eq!(legs(&mut tx, 300), pattern(&[(0, 90), (1, 10), (0, 90), (1, 10), (0, 90), (1, 10)]));
    let s = tx.stats();
    assert_eq!(s.pdus, [270, 30]);
    assert_eq!(s.bytes, [270 * 103, 30 * 103], "PDU size = SDU + 3-byte NR 18-bit header");
}

#[test]
fn batch_50_at_0_5_is_25_then_25() {
    let mut tx = Transmitter::new(cfg(18, SplitPolicy::Batch { size: 50, share: 0.5 }));
    assert_eq!(legs(&mut tx, 100), pattern(&[(0, 25), (1, 25), (0, 25), (1, 25)]));
}

#[test]
fn batch_7_at_0_5_rounds_the_half_up() {
    let mut tx = Transmitter::new(cfg(18, SplitPolicy::Batch { size: 7, share: 0.5 }));
    assert_eq!(legs(&mut tx, 14), pattern(&[(0, 4), (1, 3), (0, 4), (1, 3)]));
}

#[test]
fn batch_extremes_use_one_leg() {
    let mut all = Transmitter::new(cfg(18, SplitPolicy::Batch { size: 100, share: 1.0 }));
    assert_eq!(legs(&mut all, 250), vec![0; 250]);
    let mut none = Transmitter::new(cfg(18, SplitPolicy::Batch { size: 100, share: 0.0 }));
    assert_eq!(legs(&mut none, 250), vec![1; 250]);
    let mut one = Transmitter::new(cfg(18, SplitPolicy::Batch { size: 1, share: 0.5 }));
    assert_eq!(legs(&mut one, 5), vec![0; 5], "round(0.5) = 1: every one-PDU batch on leg 0");
}

#[test]
fn alternate_is_0_1_0_1() {
    let mut tx = Transmitter::new(cfg(18, SplitPolicy::Alternate));
    assert_eq!(legs(&mut tx, 9), [0, 1, 0, 1, 0, 1, 0, 1, 0]);
}

#[test]
fn ratio_0_75_interleaves_three_to_one() {
    let mut tx = Transmitter::new(cfg(18, SplitPolicy::Ratio { share: 0.75 }));
    // nginx smooth weighted round-robin with weights 3 and 1: credits (3,1)→0, (2,2)→0 (tie),
    // (1,3)→1, (4,0)→0, then the cycle repeats.
    assert_eq!(legs(&mut tx, 8), [0, 0, 1, 0, 0, 0, 1, 0]);
}

#[test]
fn ratio_one_third_never_runs_two_on_leg_0() {
    let mut tx = Transmitter::new(cfg(18, SplitPolicy::Ratio { share: 1.0 / 3.0 }));
    assert_eq!(legs(&mut tx, 9), [1, 0, 1, 1, 0, 1, 1, 0, 1]);
}

#[test]
fn ratio_is_exact_at_half_way_points() {
    // 81/122: after 183 PDUs leg 0 is owed exactly 121.5; rounding half up must give it the
    // 122nd, as nginx's integer credits do (tie to leg 0). In floating point 183 · (81/122)
    // comes out just below 121.5.
    let mut tx = Transmitter::new(cfg(18, SplitPolicy::Ratio { share: 81.0 / 122.0 }));
    let sent = legs(&mut tx, 244);
    assert_eq!(sent, nginx_swrr([81, 41], 244));
    assert_eq!(sent[..61].iter().filter(|&&l| l == 0).count(), 41);
    assert_eq!(sent[..183].iter().filter(|&&l| l == 0).count(), 122);
    assert_eq!(sent[..122].iter().filter(|&&l| l == 0).count(), 81);
}

#[test]
fn duplicate_sends_every_pdu_on_both_legs() {
    let mut tx = Transmitter::new(cfg(12, SplitPolicy::Duplicate));
    for count in 0..5 {
        let pdu = tx.send(Time::ZERO, 1000).unwrap();
        assert_eq!(pdu, Pdu { count, sn: count as u32, legs: Legs::Both, size: 1002 });
    }
    let s = tx.stats();
    assert_eq!((s.pdus, s.bytes), ([5, 5], [5010, 5010]));
}

#[test]
fn deactivated_duplication_sends_on_leg_0_and_keeps_numbering() {
    let mut tx = Transmitter::new(cfg(12, SplitPolicy::Duplicate));
    assert_eq!(tx.send(Time::ZERO, 1000).unwrap().legs, Legs::Both);
    tx.set_duplication(false);
    assert!(!tx.duplication_active());
    let off: Vec<_> = (0..3).map(|_| tx.send(Time::ZERO, 1000).unwrap()).collect();
    assert!(off.iter().all(|p| p.legs == Legs::One(0)));
    assert_eq!(off.iter().map(|p| p.count).collect::<Vec<_>>(), [1, 2, 3]);
    tx.set_duplication(true);
    assert_eq!(tx.send(Time::ZERO, 1000).unwrap(), Pdu { count: 4, sn: 4, legs: Legs::Both, size: 1002 });
    assert_eq!(tx.stats().pdus, [5, 2]);
    // Other policies ignore the flag.
    let mut alt = Transmitter::new(cfg(12, SplitPolicy::Alternate));
    alt.set_duplication(false);
    assert_eq!(legs(&mut alt, 4), [0, 1, 0, 1]);
}

#[test]
fn header_sizes() {
    let sn = |b| SnLength::new(b).unwrap();
    assert_eq!(header_bytes(Rat::Nr, sn(12)), Some(2));
    assert_eq!(header_bytes(Rat::Nr, sn(18)), Some(3));
    assert_eq!(header_bytes(Rat::Nr, sn(7)), None);
    assert_eq!(header_bytes(Rat::Nr, sn(15)), None);
    assert_eq!(header_bytes(Rat::Lte, sn(7)), Some(1));
    assert_eq!(header_bytes(Rat::Lte, sn(12)), Some(2));
    assert_eq!(header_bytes(Rat::Lte, sn(15)), Some(2));
    assert_eq!(header_bytes(Rat::Lte, sn(18)), Some(3));
    let lte7 = TransmitterConfig { rat: Rat::Lte, sn: sn(7), policy: SplitPolicy::Alternate };
    let mut tx = Transmitter::new(lte7);
    assert_eq!(tx.header_bytes(), 1);
    assert_eq!(tx.send(Time::ZERO, 1500).unwrap().size, 1501);
    assert_eq!(Transmitter::new(cfg(12, SplitPolicy::Alternate)).header_bytes(), 2);
}

#[test]
#[should_panic(expected = "no 15-bit SN")]
fn an_nr_entity_with_a_15_bit_sn_is_refused() {
    Transmitter::new(cfg(15, SplitPolicy::Alternate));
}

#[test]
fn sn_wraps_at_4096_with_12_bits() {
    let mut tx = Transmitter::starting_at(cfg(12, SplitPolicy::Alternate), 4095);
    let a = tx.send(Time::ZERO, 10).unwrap();
    let b = tx.send(Time::ZERO, 10).unwrap();
    assert_eq!((a.count, a.sn), (4095, 4095));
    assert_eq!((b.count, b.sn), (4096, 0));
    let mut lte7 = Transmitter::starting_at(TransmitterConfig { rat: Rat::Lte, sn: SnLength::new(7).unwrap(), policy: SplitPolicy::Alternate }, 127);
    assert_eq!(lte7.send(Time::ZERO, 10).unwrap().sn, 127);
    assert_eq!(lte7.send(Time::ZERO, 10).unwrap().sn, 0);
}

#[test]
fn window_guard_holds_window_size_minus_one_outstanding() {
    let mut tx = Transmitter::new(cfg(12, SplitPolicy::Alternate));
    for count in 0..2047 {
        assert_eq!(tx.send(Time::ZERO, 100).unwrap().count, count);
    }
    assert_eq!(tx.outstanding(), 2047);
    assert_eq!(tx.send(Time::ZERO, 100), Err(TxRefusal::WindowFull));
    assert_eq!(tx.send(Time::ZERO, 100), Err(TxRefusal::WindowFull));
    assert_eq!(tx.stats().window_full, 2);
    assert_eq!(tx.stats().pdus, [1024, 1023], "refusals send nothing");
    tx.on_delivered(10);
    assert_eq!(tx.outstanding(), 2037);
    for count in 2047..2057 {
        assert_eq!(tx.send(Time::ZERO, 100).unwrap().count, count, "no COUNT consumed by a refusal");
    }
    assert_eq!(tx.send(Time::ZERO, 100), Err(TxRefusal::WindowFull));
    tx.on_delivered(5);
    assert_eq!(tx.outstanding(), 2047, "a stale RX_DELIV is ignored");
    assert_eq!(tx.send(Time::ZERO, 100), Err(TxRefusal::WindowFull));
    assert_eq!(tx.stats().window_full, 4);
}

#[test]
fn window_guard_is_relative_to_the_starting_count() {
    let mut tx = Transmitter::starting_at(cfg(12, SplitPolicy::Alternate), 1_000_000);
    assert_eq!(tx.outstanding(), 0);
    for _ in 0..2047 {
        tx.send(Time::ZERO, 100).unwrap();
    }
    assert_eq!(tx.send(Time::ZERO, 100), Err(TxRefusal::WindowFull));
    tx.on_delivered(1_000_001);
    assert_eq!(tx.send(Time::ZERO, 100).unwrap().count, 1_002_047);
}

#[test]
fn count_exhaustion_after_2_pow_32_minus_1() {
    let top = (1i64 << 32) - 1;
    let mut tx = Transmitter::starting_at(cfg(12, SplitPolicy::Alternate), top - 1);
    let a = tx.send(Time::ZERO, 10).unwrap();
    let b = tx.send(Time::ZERO, 10).unwrap();
    assert_eq!((a.count, a.sn), (top - 1, 4094));
    assert_eq!((b.count, b.sn), (top, 4095));
    assert_eq!(tx.send(Time::ZERO, 10), Err(TxRefusal::CountExhausted));
    tx.on_delivered(top + 1);
    assert_eq!(tx.send(Time::ZERO, 10), Err(TxRefusal::CountExhausted), "delivery frees no COUNT");
    assert_eq!(tx.stats().pdus, [1, 1]);
    assert_eq!(tx.stats().window_full, 0);
}

// ---- Adaptive policy ----

fn adaptive(signal: AdaptiveSignal) -> Transmitter {
    Transmitter::new(cfg(18, SplitPolicy::Adaptive { signal }))
}

fn report(queued: u64, delivered: u64) -> LegReport {
    LegReport { queued_bytes: queued, delivered_bytes: delivered, interval: Dur::from_millis(10), min_delay: Some(Dur::from_millis(10)), desired_bytes: None, buffer_bytes: None, confirmed_sn: None }
}

fn count_legs(tx: &mut Transmitter, now: Time, n: usize) -> [usize; 2] {
    let mut c = [0; 2];
    for _ in 0..n {
        match tx.send(now, 997).unwrap().legs {
            Legs::One(leg) => c[leg] += 1,
            Legs::Both => panic!("duplicated"),
        }
    }
    c
}

#[test]
fn adaptive_alternates_until_both_legs_have_a_rate() {
    for signal in [AdaptiveSignal::Delay, AdaptiveSignal::Queue] {
        let mut tx = adaptive(signal);
        assert_eq!(legs(&mut tx, 4), [0, 1, 0, 1]);
        tx.on_leg_report(Time::ZERO, 0, report(0, 125_000));
        assert_eq!(legs(&mut tx, 4), [0, 1, 0, 1], "one leg's estimate is not enough");
        // A backlogged leg that delivered nothing yet has no rate either.
        tx.on_leg_report(Time::ZERO, 1, report(50_000, 0));
        assert_eq!(legs(&mut tx, 2), [0, 1]);
    }
}

#[test]
fn adaptive_avoids_the_leg_with_the_large_backlog() {
    for signal in [AdaptiveSignal::Delay, AdaptiveSignal::Queue] {
        let mut tx = adaptive(signal);
        let now = Time::ZERO + Dur::from_millis(10);
        tx.on_leg_report(now, 0, report(500_000, 125_000));
        tx.on_leg_report(now, 1, report(0, 125_000));
        // Same rate (12.5 MB/s): leg 1 takes everything until its backlog matches leg 0's.
        assert_eq!(count_legs(&mut tx, now, 400), [0, 400], "{signal:?}");
        let c = count_legs(&mut tx, now, 400);
        assert!(c[0] > 0 && c[0] < c[1], "{signal:?}: {c:?}");
    }
}

#[test]
fn adaptive_splits_evenly_on_equal_reports() {
    for signal in [AdaptiveSignal::Delay, AdaptiveSignal::Queue] {
        let mut tx = adaptive(signal);
        let now = Time::ZERO + Dur::from_millis(10);
        tx.on_leg_report(now, 0, report(20_000, 125_000));
        tx.on_leg_report(now, 1, report(20_000, 125_000));
        let c = count_legs(&mut tx, now, 1000);
        assert_eq!(c, [500, 500], "{signal:?}: ties to leg 0, then the two backlogs leapfrog");
    }
}

#[test]
fn adaptive_backlog_drains_at_the_estimated_rate() {
    let mut tx = adaptive(AdaptiveSignal::Queue);
    tx.on_leg_report(Time::ZERO, 0, report(100_000, 1_000_000)); // 100 MB/s
    tx.on_leg_report(Time::ZERO, 1, report(50_000, 10_000)); // 1 MB/s
    assert_eq!(count_legs(&mut tx, Time::ZERO, 10), [0, 10]);
    // 1 ms later leg 0 has drained its 100 kB, leg 1 only 1 kB of its 60 kB.
    assert_eq!(count_legs(&mut tx, Time::ZERO + Dur::from_millis(1), 10), [10, 0]);
}

#[test]
fn adaptive_an_idle_leg_does_not_read_as_slow() {
    // Both legs measured at 12.5 MB/s while backlogged; then leg 1 reports an interval in
    // which it drained its queue and delivered only 1 kB. That sample is a lower bound and
    // must not lower its estimate. The same report with a backlog at both ends does.
    let run = |idle_queue: u64| {
        let mut tx = adaptive(AdaptiveSignal::Delay);
        for (i, q) in [(1u64, 10_000u64), (2, 10_000)] {
            let now = Time::ZERO + Dur::from_millis(10 * i);
            tx.on_leg_report(now, 0, report(q, 125_000));
            tx.on_leg_report(now, 1, report(q, 125_000));
        }
        let now = Time::ZERO + Dur::from_millis(30);
        tx.on_leg_report(now, 0, report(idle_queue, 125_000));
        tx.on_leg_report(now, 1, report(idle_queue, 1_000));
        count_legs(&mut tx, now, 1000)
    };
    let idle = run(0);
    assert!(idle[0].abs_diff(idle[1]) <= 1, "{idle:?}");
    let busy = run(10_000);
    assert!(busy[1] < 450, "a backlogged leg delivering little is slow: {busy:?}");
}

#[test]
fn adaptive_a_stalled_leg_gets_nothing() {
    let mut tx = adaptive(AdaptiveSignal::Delay);
    let t = |ms| Time::ZERO + Dur::from_millis(ms);
    tx.on_leg_report(t(10), 0, report(10_000, 125_000));
    tx.on_leg_report(t(10), 1, report(10_000, 125_000));
    tx.on_leg_report(t(20), 1, report(10_000, 0));
    // Leg 1's estimate fell to 3/4 but it still holds 10 kB: leg 0 wins while it is ahead.
    tx.on_leg_report(t(20), 0, report(0, 125_000));
    let c = count_legs(&mut tx, t(20), 10);
    assert_eq!(c, [10, 0]);
}

#[test]
fn adaptive_delay_prefers_the_lower_base_delay() {
    let mut tx = adaptive(AdaptiveSignal::Delay);
    let now = Time::ZERO + Dur::from_millis(10);
    // Equal rates, empty queues; leg 1's path is 20 ms shorter, worth 250 kB of its backlog.
    tx.on_leg_report(now, 0, LegReport { min_delay: Some(Dur::from_millis(30)), ..report(0, 125_000) });
    tx.on_leg_report(now, 1, LegReport { min_delay: Some(Dur::from_millis(10)), ..report(0, 125_000) });
    assert_eq!(count_legs(&mut tx, now, 240), [0, 240]);
    // Ten more fill leg 1 to 250 kB, then the legs take turns.
    assert_eq!(count_legs(&mut tx, now, 20), [5, 15]);
    // A later, larger min_delay does not raise the base delay.
    tx.on_leg_report(now, 1, LegReport { min_delay: Some(Dur::from_millis(50)), ..report(300_000, 0) });
    assert_eq!(count_legs(&mut tx, now, 20), [20, 0], "leg 1 now holds 300 kB, more than 20 ms worth");
}

/// Two legs draining at `rates` (bytes/s, fluid), fed by an offered load of `load` × their
/// sum in 1000-byte PDUs, reporting every 10 ms; returns the PDUs per leg in the second half.
fn fluid(signal: AdaptiveSignal, rates: [f64; 2], load: f64, secs: u64) -> [u64; 2] {
    let mut tx = adaptive(signal);
    let tick_us = 100;
    let ticks = secs * 1_000_000 / tick_us;
    let dt = tick_us as f64 * 1e-6;
    let mut queue = [0.0f64; 2];
    let mut delivered = [0.0f64; 2];
    let mut credit = 0.0;
    let mut counted = [0u64; 2];
    for i in 0..ticks {
        let now = at_us(i * tick_us);
        for leg in 0..2 {
            let d = queue[leg].min(rates[leg] * dt);
            queue[leg] -= d;
            delivered[leg] += d;
        }
        if i > 0 && i % 100 == 0 {
            for leg in 0..2 {
                let r = LegReport {
                    queued_bytes: queue[leg].round() as u64,
                    delivered_bytes: delivered[leg].round() as u64,
                    interval: Dur::from_millis(10),
                    min_delay: Some(Dur::from_millis(10)),
                    desired_bytes: None,
                    buffer_bytes: None,
                    confirmed_sn: None,
                };
                tx.on_leg_report(now, leg, r);
                delivered[leg] = 0.0;
            }
        }
        credit += load * (rates[0] + rates[1]) * dt;
        while credit >= 1000.0 {
            credit -= 1000.0;
            let pdu = tx.send(now, 997).unwrap();
            let Legs::One(leg) = pdu.legs else { panic!("duplicated") };
            queue[leg] += f64::from(pdu.size);
            if i >= ticks / 2 {
                counted[leg] += 1;
            }
        }
    }
    counted
}

fn share1(c: [u64; 2]) -> f64 {
    c[1] as f64 / (c[0] + c[1]) as f64
}

#[test]
fn adaptive_delay_gives_a_four_times_faster_leg_four_fifths() {
    for load in [1.1, 1.5] {
        let c = fluid(AdaptiveSignal::Delay, [1.25e6, 5e6], load, 4);
        let s = share1(c);
        assert!((0.77..0.83).contains(&s), "load {load}: leg 1 share {s} ({c:?})");
    }
}

#[test]
fn adaptive_delay_below_capacity_fills_the_fast_leg_first() {
    // 0.7 × 6.25 MB/s fits in the fast leg alone; at 0.9 the slow leg takes only the
    // overflow, so the fast leg carries its 5 MB/s of 5.625: 8/9.
    let c = fluid(AdaptiveSignal::Delay, [1.25e6, 5e6], 0.7, 4);
    assert_eq!(c[0], 0, "{c:?}");
    let s = share1(fluid(AdaptiveSignal::Delay, [1.25e6, 5e6], 0.9, 4));
    assert!((0.87..0.90).contains(&s), "leg 1 share {s}");
}

#[test]
fn adaptive_equal_legs_split_evenly_in_the_fluid_model() {
    for signal in [AdaptiveSignal::Delay, AdaptiveSignal::Queue] {
        for load in [0.8, 1.2] {
            let s = share1(fluid(signal, [2.5e6, 2.5e6], load, 2));
            assert!((0.48..0.52).contains(&s), "{signal:?} load {load}: {s}");
        }
    }
}

#[test]
fn adaptive_is_deterministic() {
    let a = fluid(AdaptiveSignal::Queue, [1e6, 3e6], 1.2, 1);
    let b = fluid(AdaptiveSignal::Queue, [1e6, 3e6], 1.2, 1);
    assert_eq!(a, b);
}

// ---- Properties ----

fn any_policy() -> impl Strategy<Value = SplitPolicy> {
    prop_oneof![
        (0u32..300, 0.0f64..=1.0).prop_map(|(size, share)| SplitPolicy::Batch { size, share }),
        Just(SplitPolicy::Alternate),
        (0.0f64..=1.0).prop_map(|share| SplitPolicy::Ratio { share }),
        Just(SplitPolicy::Duplicate),
        prop_oneof![Just(AdaptiveSignal::Delay), Just(AdaptiveSignal::Queue)].prop_map(|signal| SplitPolicy::Adaptive { signal }),
    ]
}

/// nginx's smooth weighted round-robin with integer weights, ties to the lower index.
fn nginx_swrr(weights: [i64; 2], n: usize) -> Vec<usize> {
    let total = weights[0] + weights[1];
    let mut current = [0i64; 2];
    (0..n)
        .map(|_| {
            current[0] += weights[0];
            current[1] += weights[1];
            let pick = usize::from(current[1] > current[0]);
            current[pick] -= total;
            pick
        })
        .collect()
}

proptest! {
    #[test]
    fn batch_puts_the_rounded_share_first_in_every_batch(size in 1u32..300, share in 0.0f64..=1.0, batches in 1usize..5) {
        let mut tx = Transmitter::new(cfg(18, SplitPolicy::Batch { size, share }));
        let first = (f64::from(size) * share).round() as usize;
        let sent = legs(&mut tx, size as usize * batches);
        for batch in sent.chunks(size as usize) {
            prop_assert!(batch[..first].iter().all(|&l| l == 0));
            prop_assert!(batch[first..].iter().all(|&l| l == 1));
        }
        prop_assert_eq!(tx.stats().pdus[0], (first * batches) as u64);
    }

    #[test]
    fn ratio_keeps_every_prefix_within_half_a_pdu_of_the_share(share in 0.0f64..=1.0, n in 1usize..3000) {
        let mut tx = Transmitter::new(cfg(18, SplitPolicy::Ratio { share }));
        let mut on0 = 0usize;
        for (i, leg) in legs(&mut tx, n).into_iter().enumerate() {
            on0 += usize::from(leg == 0);
            let ideal = (i + 1) as f64 * share;
            // The share is read as a fraction with a denominator up to 2^20, off by less than 2^-20.
            let slack = 0.5 + 1e-9 + (i + 1) as f64 / f64::from(1u32 << 20);
            prop_assert!((on0 as f64 - ideal).abs() <= slack, "after {} PDUs: {} on leg 0, ideal {}", i + 1, on0, ideal);
        }
    }

    #[test]
    fn ratio_over_whole_periods_is_exact_and_matches_nginx(size in 1u32..200, j in 0u32..200, periods in 1usize..5) {
        let j = j % (size + 1);
        let share = f64::from(j) / f64::from(size);
        let mut tx = Transmitter::new(cfg(18, SplitPolicy::Ratio { share }));
        let n = size as usize * periods;
        let sent = legs(&mut tx, n);
        let first = (f64::from(size) * share).round() as usize;
        prop_assert_eq!(sent.iter().filter(|&&l| l == 0).count(), first * periods);
        for period in sent.chunks(size as usize) {
            prop_assert_eq!(period.iter().filter(|&&l| l == 0).count(), j as usize);
        }
        prop_assert_eq!(sent, nginx_swrr([i64::from(j), i64::from(size - j)], n));
    }

    #[test]
    fn counts_are_consecutive_and_sns_are_count_mod_2_pow_bits(
        policy in any_policy(),
        bits in prop_oneof![Just(12u8), Just(18u8)],
        start in 0i64..(1i64 << 32) - 5000,
        n in 1usize..3000,
    ) {
        let mut tx = Transmitter::starting_at(cfg(bits, policy), start);
        let mut bytes = 0u64;
        for i in 0..n as i64 {
            let pdu = tx.send(at_us(i as u64), 1000).unwrap_or_else(|e| panic!("{e:?} at {i}"));
            prop_assert_eq!(pdu.count, start + i);
            prop_assert_eq!(i64::from(pdu.sn), (start + i) % (1 << bits));
            prop_assert_eq!(pdu.size, 1000 + tx.header_bytes());
            bytes += u64::from(pdu.size);
            if i % 100 == 99 {
                tx.on_delivered(start + i - 50);
                tx.on_leg_report(at_us(i as u64), (i / 100 % 2) as usize, report(i as u64 * 10, 10_000));
            }
        }
        let s = tx.stats();
        let copies = if policy == SplitPolicy::Duplicate { 2 } else { 1 };
        prop_assert_eq!(s.pdus[0] + s.pdus[1], copies * n as u64);
        prop_assert_eq!(s.bytes[0] + s.bytes[1], copies * bytes);
    }
}

/// The leg of one 1000-byte SDU (1003 B with the 18-bit NR header) under `policy`, with
/// `pending` in the UE's buffers.
fn threshold_leg(policy: SplitPolicy, pending: PendingVolume) -> usize {
    let mut tx = Transmitter::new(cfg(18, policy));
    tx.set_pending_volume(pending);
    match tx.send(Time::ZERO, 1000).unwrap().legs {
        Legs::One(leg) => leg,
        Legs::Both => panic!("the threshold policy never duplicates"),
    }
}

#[test]
fn below_ul_data_split_threshold_the_primary_path_takes_everything() {
    let policy = SplitPolicy::Threshold { primary: 1, threshold: 10_000 };
    let rates = [10e6, 30e6];
    // 8 996 B pending + the 1 003 B PDU = 9 999 B: below the threshold, even though the
    // primary's queue is much longer than the other's.
    let pending = PendingVolume { pdcp: 996, legs: [0, 8_000], rates_bps: rates };
    assert_eq!(threshold_leg(policy, pending), 1);
    // One byte more makes 10 000 B, "equal to or larger than" (§5.2.1): either leg, here the
    // idle one, which sends the PDU first.
    let pending = PendingVolume { pdcp: 997, legs: [0, 8_000], rates_bps: rates };
    assert_eq!(threshold_leg(policy, pending), 0);
}

#[test]
fn above_the_threshold_the_leg_that_sends_first_wins_ties_to_the_primary() {
    let policy = SplitPolicy::Threshold { primary: 0, threshold: 1 };
    // Equal queues: the 30 Mbit/s leg sends its 21 003 B in 5.6 ms, the 10 Mbit/s leg in 16.8 ms.
    let same = PendingVolume { pdcp: 0, legs: [20_000, 20_000], rates_bps: [10e6, 30e6] };
    assert_eq!(threshold_leg(policy, same), 1);
    // Three times the bytes on the three-times faster leg: a tie, which the primary takes.
    let tie = PendingVolume { pdcp: 0, legs: [9_997, 32_997], rates_bps: [10e6, 30e6] };
    assert_eq!(threshold_leg(policy, tie), 0);
    // Unknown rates: the leg with fewer bytes pending; equal bytes go to the primary.
    let unknown = PendingVolume { pdcp: 0, legs: [5_000, 4_000], rates_bps: [0.0, 0.0] };
    assert_eq!(threshold_leg(policy, unknown), 1);
    let unknown = PendingVolume { pdcp: 0, legs: [4_000, 4_000], rates_bps: [0.0, 30e6] };
    assert_eq!(threshold_leg(policy, unknown), 0);
}

#[test]
fn an_infinite_threshold_keeps_to_the_primary_path() {
    for primary in [0, 1] {
        let policy = SplitPolicy::Threshold { primary, threshold: u64::MAX };
        let full = PendingVolume { pdcp: u64::MAX / 4, legs: [u64::MAX / 4, u64::MAX / 4], rates_bps: [1e6, 1e9] };
        assert_eq!(threshold_leg(policy, full), primary);
    }
}

#[test]
fn the_desired_buffer_signal_fills_the_leg_with_more_room_first() {
    // Leg 0's node can take 3 000 bytes, leg 1's 10 000 (TS 38.425 desired buffer sizes): PDUs
    // of 997 bytes (1 000 with the header) go to leg 1 until its credit falls to leg 0's (7 of
    // them; a tie goes to leg 0), then the credits fall together.
    let mut tx = adaptive(AdaptiveSignal::DesiredBuffer);
    let now = Time(100_000_000);
    tx.on_leg_report(now, 0, LegReport { desired_bytes: Some(3_000), ..report(0, 125_000) });
    tx.on_leg_report(now, 1, LegReport { desired_bytes: Some(10_000), ..report(0, 125_000) });
    let legs: Vec<usize> = (0..12)
        .map(|_| match tx.send(now, 997).unwrap().legs {
            Legs::One(leg) => leg,
            Legs::Both => panic!("one leg each"),
        })
        .collect();
    assert_eq!(&legs[..8], &[1, 1, 1, 1, 1, 1, 1, 0], "{legs:?}");
    let sent = |leg: usize| legs.iter().filter(|&&l| l == leg).count() as f64 * (997.0 + 3.0);
    let credit = [3_000.0 - sent(0), 10_000.0 - sent(1)];
    assert!((credit[0] - credit[1]).abs() <= 1000.0, "{credit:?} after {legs:?}");
    // A leg that gives no size (a link): the backlogs decide, as with the queue signal.
    let mut mixed = adaptive(AdaptiveSignal::DesiredBuffer);
    let mut queue = adaptive(AdaptiveSignal::Queue);
    for tx in [&mut mixed, &mut queue] {
        tx.on_leg_report(now, 0, LegReport { desired_bytes: Some(1_000_000), ..report(40_000, 125_000) });
        tx.on_leg_report(now, 1, report(10_000, 125_000));
    }
    for _ in 0..20 {
        assert_eq!(mixed.send(now, 997).unwrap().legs, queue.send(now, 997).unwrap().legs);
    }
}

#[test]
fn the_delivery_credit_counts_every_byte_sent_beyond_the_confirmed_sn() {
    // TS 38.425 §5.4.2: a leg may be sent its desired buffer size beyond the highest PDCP SN it
    // confirmed. Both legs give 10 000 bytes and no SN yet: PDUs of 1 000 bytes (997 + 3)
    // alternate by credit (ties to leg 0) and the bytes stay counted across reports until an
    // SN confirms them — unlike the desired buffer signal, whose credit a report renews.
    let mut tx = adaptive(AdaptiveSignal::DeliveryCredit);
    let now = Time(100_000_000);
    let give = |tx: &mut Transmitter, at: Time, sn: [Option<u32>; 2]| {
        for (leg, sn) in sn.into_iter().enumerate() {
            tx.on_leg_report(at, leg, LegReport { buffer_bytes: Some(10_000), confirmed_sn: sn, ..report(0, 125_000) });
        }
    };
    give(&mut tx, now, [None, None]);
    let mut sent: Vec<(usize, u32)> = Vec::new();
    let send = |tx: &mut Transmitter, n: usize, sent: &mut Vec<(usize, u32)>| {
        for _ in 0..n {
            let pdu = tx.send(now, 997).unwrap();
            let Legs::One(leg) = pdu.legs else { panic!("one leg each") };
            sent.push((leg, pdu.sn));
        }
    };
    send(&mut tx, 6, &mut sent);
    assert_eq!(sent.iter().map(|s| s.0).collect::<Vec<_>>(), vec![0, 1, 0, 1, 0, 1]);
    // A new report without a confirmed SN leaves the 3 000 bytes on each leg counted.
    give(&mut tx, now, [None, None]);
    // Leg 1 confirms its second PDU (SN 3): 2 000 of its bytes are done; the next two PDUs
    // go to leg 1 (credit 9 000 against 7 000), then the legs alternate again.
    give(&mut tx, now, [None, Some(sent[3].1)]);
    send(&mut tx, 4, &mut sent);
    assert_eq!(sent[6..].iter().map(|s| s.0).collect::<Vec<_>>(), vec![1, 1, 0, 1], "{sent:?}");
    // An SN no longer (or never) listed changes nothing.
    give(&mut tx, now, [Some(60_000), Some(sent[1].1)]);
    send(&mut tx, 1, &mut sent);
    assert_eq!(sent[10].0, 0, "leg 0: 4 000 bytes outstanding, leg 1: 4 000, tie to leg 0: {sent:?}");
    // Over a link (no buffer size) the backlogs decide, as with the queue signal.
    let mut mixed = adaptive(AdaptiveSignal::DeliveryCredit);
    let mut queue = adaptive(AdaptiveSignal::Queue);
    for tx in [&mut mixed, &mut queue] {
        tx.on_leg_report(now, 0, LegReport { buffer_bytes: Some(1_000_000), ..report(40_000, 125_000) });
        tx.on_leg_report(now, 1, report(10_000, 125_000));
    }
    for _ in 0..20 {
        assert_eq!(mixed.send(now, 997).unwrap().legs, queue.send(now, 997).unwrap().legs);
    }
}

#[test]
fn a_leg_that_takes_nothing_leaves_every_pdu_to_the_other_and_the_batch_goes_on_counting() {
    let mut tx = Transmitter::new(cfg(18, SplitPolicy::Batch { size: 10, share: 0.5 }));
    assert_eq!(legs(&mut tx, 7), pattern(&[(0, 5), (1, 2)]));
    tx.set_leg_available(1, false);
    assert_eq!(legs(&mut tx, 10), vec![0; 10]);
    tx.set_leg_available(1, true);
    // PDU 17 is the batch's eighth: leg 1 until the batch ends, then five on leg 0.
    assert_eq!(legs(&mut tx, 8), pattern(&[(1, 3), (0, 5)]));
    tx.set_leg_available(0, false);
    assert_eq!(legs(&mut tx, 4), vec![1; 4]);
    assert_eq!(tx.stats().pdus, [20, 9]);
    // Duplication on one leg alone while the other takes nothing; both unavailable: the
    // policy decides (the entity has nowhere better to send).
    let mut dup = Transmitter::new(cfg(18, SplitPolicy::Duplicate));
    dup.set_leg_available(1, false);
    assert_eq!(dup.send(Time::ZERO, 100).unwrap().legs, Legs::One(0));
    dup.set_leg_available(0, false);
    assert_eq!(dup.send(Time::ZERO, 100).unwrap().legs, Legs::Both);
}
