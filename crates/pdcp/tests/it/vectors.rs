//! The PDCP receiver against the test vectors of pdcp-dc.md §6 (TS 38.323 §5.2.2; §5.2.2.3
//! for TV15, §5.1.2 for TV16, the 32-bit COUNT limit for TV17; TS 36.323 split bearers for
//! TV18). NR 12-bit SNs (W = 2048, M = 4096) unless stated; t in ms.

use multiconn_core::{Dur, Time};
use multiconn_pdcp::{
    BearerMode, Rat, Receiver, ReceiverConfig, RxOutcome, SnLength, SplitPolicy, Transmitter, TransmitterConfig, TxRefusal,
};

const T: u64 = 200;

fn cfg(bits: u8, t: Option<u64>) -> ReceiverConfig {
    ReceiverConfig { sn: SnLength::new(bits).unwrap(), t_reordering: t.map(Dur::from_millis), reordering: true }
}

fn at(ms: u64) -> Time {
    Time::ZERO + Dur::from_millis(ms)
}

/// Feeds (time ms, SN); returns the COUNTs delivered by each call, running any timer expiry
/// due before each arrival first (pdcp-dc.md TV19: expiry before an arrival at the same time).
struct Feed {
    rx: Receiver<u32>,
    delivered: Vec<(u64, i64)>,
}

impl Feed {
    fn new(rx: Receiver<u32>) -> Feed {
        Feed { rx, delivered: Vec::new() }
    }
    fn advance(&mut self, ms: u64) {
        while let Some(t) = self.rx.poll_timeout() {
            if t > at(ms) {
                break;
            }
            let mut out = Vec::new();
            self.rx.handle_timeout(t, &mut out);
            let when = t.as_nanos() / 1_000_000;
            self.delivered.extend(out.into_iter().map(|(c, _)| (when, c)));
        }
    }
    fn rx(&mut self, ms: u64, sn: u32) -> RxOutcome {
        self.advance(ms);
        let mut out = Vec::new();
        let outcome = self.rx.receive(at(ms), sn, sn, &mut out);
        self.delivered.extend(out.into_iter().map(|(c, _)| (ms, c)));
        outcome
    }
    fn counts(&self) -> Vec<i64> {
        self.delivered.iter().map(|&(_, c)| c).collect()
    }
}

#[test]
fn tv1_in_order_across_the_sn_wrap() {
    let mut f = Feed::new(Receiver::starting_at(cfg(12, Some(T)), 4094));
    for sn in [4094, 4095, 0, 1] {
        assert_eq!(f.rx(0, sn), RxOutcome::Accepted { delivered: 1 });
        assert_eq!(f.rx.poll_timeout(), None);
    }
    assert_eq!(f.counts(), [4094, 4095, 4096, 4097]);
    assert_eq!((f.rx.rx_deliv(), f.rx.rx_next()), (4098, 4098));
}

#[test]
fn tv2_out_of_order_across_the_wrap() {
    let mut f = Feed::new(Receiver::starting_at(cfg(12, Some(T)), 4094));
    assert_eq!(f.rx.count_of(0), 4096);
    f.rx(0, 0);
    assert_eq!((f.rx.rx_next(), f.rx.rx_reord()), (4097, Some(4097)));
    f.rx(0, 1);
    f.rx(0, 4095);
    assert!(f.counts().is_empty());
    assert_eq!(f.rx(0, 4094), RxOutcome::Accepted { delivered: 4 });
    assert_eq!(f.counts(), [4094, 4095, 4096, 4097]);
    assert_eq!(f.rx.rx_deliv(), 4098);
    assert_eq!(f.rx.poll_timeout(), None);
}

#[test]
fn tv3_two_stage_expiry_does_not_rearm_for_new_gaps() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    f.rx(0, 2);
    assert_eq!(f.rx.rx_reord(), Some(3));
    f.rx(1, 3);
    f.rx(2, 5);
    assert_eq!(f.rx.poll_timeout(), Some(at(T)), "not restarted by the new gap");
    f.advance(T);
    assert_eq!(f.delivered, [(T, 2), (T, 3)]);
    assert_eq!((f.rx.rx_deliv(), f.rx.rx_reord()), (4, Some(6)));
    f.advance(2 * T);
    assert_eq!(f.delivered[2], (2 * T, 5), "SN 5 waited 2T - 2 ms");
    assert_eq!(f.rx.rx_deliv(), 6);
    assert_eq!(f.rx.poll_timeout(), None);
    for sn in [0, 1, 4] {
        assert_eq!(f.rx(2 * T + 1, sn), RxOutcome::Late);
    }
    assert_eq!(f.rx.stats().given_up, 3);
}

#[test]
fn tv3_variant_the_missing_sn_arrives_between_expiries() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    f.rx(0, 2);
    f.rx(1, 3);
    f.rx(2, 5);
    f.advance(T);
    assert_eq!(f.rx(T + 1, 4), RxOutcome::Accepted { delivered: 2 });
    assert_eq!(&f.counts()[2..], [4, 5]);
    assert_eq!(f.rx.poll_timeout(), None);
}

#[test]
fn tv4_timer_stops_then_restarts_for_a_remaining_gap() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    f.rx(0, 1);
    assert_eq!(f.rx.rx_reord(), Some(2));
    f.rx(5, 3);
    assert_eq!(f.rx.poll_timeout(), Some(at(T)));
    f.rx(6, 0);
    assert_eq!(f.counts(), [0, 1]);
    assert_eq!((f.rx.rx_deliv(), f.rx.rx_reord(), f.rx.poll_timeout()), (2, Some(4), Some(at(6 + T))));
    f.advance(6 + T);
    assert_eq!(f.delivered[2], (6 + T, 3));
    assert_eq!(f.rx.rx_deliv(), 4);
}

#[test]
fn tv5_upper_window_edge() {
    let mut f = Feed::new(Receiver::starting_at(cfg(12, Some(T)), 100));
    assert_eq!(f.rx.count_of(2147), 2147);
    assert!(matches!(f.rx(0, 2147), RxOutcome::Accepted { .. }));
    assert_eq!(f.rx.count_of(2148), -1948);
    assert_eq!(f.rx(0, 2148), RxOutcome::Late);
}

#[test]
fn tv6_lower_window_edge() {
    let mut f = Feed::new(Receiver::starting_at(cfg(12, Some(T)), 3000));
    assert_eq!(f.rx(0, 952), RxOutcome::Late);
    assert_eq!(f.rx.count_of(951), 5047);
    assert!(matches!(f.rx(0, 951), RxOutcome::Accepted { delivered: 0 }));
    assert_eq!(f.rx.rx_next(), 5048);
    assert!(f.rx.poll_timeout().is_some());
    assert_eq!(f.rx(0, 2999), RxOutcome::Late);
    assert_eq!(f.rx(0, 3000), RxOutcome::Accepted { delivered: 1 });
}

#[test]
fn tv7_hfn_underflow_is_old_not_far_future() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    for sn in [2048, 3000, 4095] {
        assert!(f.rx.count_of(sn) < 0);
        assert_eq!(f.rx(0, sn), RxOutcome::Late);
    }
    assert_eq!(f.rx.rx_next(), 0);
}

#[test]
fn tv8_duplicates_from_two_legs() {
    let mut f = Feed::new(Receiver::starting_at(cfg(12, Some(T)), 10));
    f.rx(0, 12);
    assert_eq!(f.rx.rx_reord(), Some(13));
    assert_eq!(f.rx(1, 12), RxOutcome::Duplicate);
    f.rx(2, 10);
    assert_eq!(f.rx(3, 10), RxOutcome::Late);
    assert_eq!(f.rx(4, 11), RxOutcome::Accepted { delivered: 2 });
    assert_eq!(f.rx.poll_timeout(), None);
    assert_eq!(f.rx(5, 11), RxOutcome::Late);
    assert_eq!(f.counts(), [10, 11, 12]);
    let s = f.rx.stats();
    assert_eq!((s.delivered, s.duplicate_discards + s.late_discards), (3, 3));
}

#[test]
fn tv9_zero_t_reordering_expires_at_once() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(0))));
    assert_eq!(f.rx(0, 1), RxOutcome::Accepted { delivered: 1 });
    assert_eq!(f.counts(), [1]);
    assert_eq!(f.rx.rx_deliv(), 2);
    assert_eq!(f.rx.poll_timeout(), None, "no zero-length timer left pending");
    assert_eq!(f.rx(5, 0), RxOutcome::Late);
}

#[test]
fn tv10_infinite_t_reordering_holds_until_the_gap_fills() {
    let mut f = Feed::new(Receiver::new(cfg(12, None)));
    f.rx(0, 1);
    assert_eq!(f.rx.poll_timeout(), None);
    f.advance(1_000_000);
    assert!(f.counts().is_empty());
    assert_eq!(f.rx(1_000_000, 0), RxOutcome::Accepted { delivered: 2 });
}

#[test]
fn tv11_one_burst_releases_the_whole_window() {
    let n = 2047u32;
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    for sn in 1..=n {
        f.rx(0, sn);
    }
    assert_eq!(f.rx(1, 0), RxOutcome::Accepted { delivered: n as usize + 1 });
    assert_eq!(f.counts(), (0..=i64::from(n)).collect::<Vec<_>>());
    assert_eq!(f.rx.poll_timeout(), None);
}

#[test]
fn tv12_skew_beyond_the_window_discards_as_old() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    for sn in 1..2048 {
        f.rx(0, sn);
    }
    assert_eq!(f.rx(0, 2048), RxOutcome::Late);
    assert_eq!(f.rx(0, 2049), RxOutcome::Late);
}

#[test]
fn tv13_eighteen_bit_edges() {
    let w = 131_072i64;
    let m = 262_144i64;
    for start in [0, w - 1, m - 1] {
        let rx: Receiver<u32> = Receiver::starting_at(cfg(18, Some(T)), start);
        let sn = |c: i64| c.rem_euclid(m) as u32;
        assert_eq!(rx.count_of(sn(start)), start);
        assert_eq!(rx.count_of(sn(start + w - 1)), start + w - 1, "upper edge from {start}");
        assert_eq!(rx.count_of(sn(start + w)), start + w - m, "just past it reads as old");
        assert_eq!(rx.count_of(sn(start - 1)), start - 1);
    }
    // TV1 in 18 bits: in order across the wrap.
    let mut f = Feed::new(Receiver::starting_at(cfg(18, Some(T)), m - 2));
    for sn in [(m - 2) as u32, (m - 1) as u32, 0, 1] {
        f.rx(0, sn);
    }
    assert_eq!(f.counts(), [m - 2, m - 1, m, m + 1]);
}

#[test]
fn tv14_reordering_off_delivers_on_arrival_but_still_drops_copies() {
    let mut c = cfg(12, Some(T));
    c.reordering = false;
    let mut f = Feed::new(Receiver::new(c));
    f.rx(0, 2);
    f.rx(1, 3);
    f.rx(2, 5);
    assert_eq!(f.counts(), [2, 3, 5]);
    assert_eq!(f.rx(3, 3), RxOutcome::Duplicate);
    assert_eq!((f.rx.rx_deliv(), f.rx.rx_reord()), (0, Some(3)), "state evolves as in TV3");
    f.advance(T);
    assert_eq!(f.rx.rx_deliv(), 4);
    assert_eq!(f.counts(), [2, 3, 5], "expiry passes nothing up twice");
    f.advance(2 * T);
    assert_eq!(f.rx.rx_deliv(), 6);
    assert_eq!(f.rx(2 * T + 1, 5), RxOutcome::Late);
}

#[test]
fn tv15_reconfiguring_a_running_timer_moves_rx_reord_to_rx_next_and_restarts() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    f.rx(0, 2);
    f.rx(10, 5);
    assert_eq!((f.rx.rx_reord(), f.rx.poll_timeout()), (Some(3), Some(at(T))));
    let mut out = Vec::new();
    f.rx.reconfigure_t_reordering(at(50), Some(Dur::from_millis(100)), &mut out);
    assert!(out.is_empty());
    assert_eq!((f.rx.rx_reord(), f.rx.poll_timeout()), (Some(6), Some(at(150))));
    // One expiry now covers both gaps (without the reconfiguration, SN 5 would wait for a
    // second period as in TV3).
    f.advance(150);
    assert_eq!(f.delivered, [(150, 2), (150, 5)]);
    assert_eq!(f.rx.rx_deliv(), 6);
    assert_eq!(f.rx.poll_timeout(), None);
    assert_eq!(f.rx.stats().given_up, 4);
}

#[test]
fn tv15_reconfiguring_an_idle_timer_only_stores_the_value() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    let mut out = Vec::new();
    f.rx.reconfigure_t_reordering(at(0), Some(Dur::from_millis(50)), &mut out);
    assert_eq!(f.rx.poll_timeout(), None);
    f.rx(10, 1);
    assert_eq!(f.rx.poll_timeout(), Some(at(60)), "the next start uses the new value");
}

#[test]
fn tv15_reconfiguring_to_zero_expires_at_once() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    f.rx(0, 1);
    f.rx(1, 3);
    let mut out = Vec::new();
    f.rx.reconfigure_t_reordering(at(5), Some(Dur::ZERO), &mut out);
    assert_eq!(out, [(1, 1), (3, 3)]);
    assert_eq!((f.rx.rx_deliv(), f.rx.poll_timeout()), (4, None), "no zero-length timer left");
    assert_eq!(f.rx.stats().delivered, 2);
}

#[test]
fn tv15_reconfiguring_to_and_from_infinity() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    f.rx(0, 1);
    let mut out = Vec::new();
    f.rx.reconfigure_t_reordering(at(5), None, &mut out);
    assert_eq!(f.rx.poll_timeout(), None, "infinity never expires");
    f.rx(7, 4);
    f.advance(10 * T);
    assert!(f.counts().is_empty());
    // Infinity runs while the gap is awaited: a finite value restarts it from RX_NEXT = 5.
    f.rx.reconfigure_t_reordering(at(10 * T), Some(Dur::from_millis(20)), &mut out);
    assert_eq!((f.rx.rx_reord(), f.rx.poll_timeout()), (Some(5), Some(at(10 * T + 20))));
    f.advance(10 * T + 20);
    assert_eq!(f.counts(), [1, 4]);
    assert!(out.is_empty());
}

#[test]
fn tv16_um_reestablishment_flushes_in_count_order_and_resets() {
    let mut f = Feed::new(Receiver::starting_at(cfg(12, Some(T)), 4094));
    for sn in [1, 4095, 0] {
        f.rx(0, sn);
    }
    assert!(f.counts().is_empty());
    let mut out = Vec::new();
    f.rx.reestablish(BearerMode::Um, &mut out);
    assert_eq!(out, [(4095, 4095), (4096, 0), (4097, 1)], "ascending COUNT, the gap at 4094 skipped");
    assert_eq!((f.rx.rx_deliv(), f.rx.rx_next(), f.rx.poll_timeout()), (0, 0, None));
    assert_eq!(f.rx.stats().delivered, 3);
    // The new state starts from COUNT 0.
    assert_eq!(f.rx(1, 0), RxOutcome::Accepted { delivered: 1 });
    assert_eq!(f.rx(2, 2), RxOutcome::Accepted { delivered: 0 });
    assert_eq!(f.rx.rx_reord(), Some(3));
}

#[test]
fn tv16_um_reestablishment_without_reordering_passes_nothing_twice() {
    let mut c = cfg(12, Some(T));
    c.reordering = false;
    let mut f = Feed::new(Receiver::new(c));
    f.rx(0, 2);
    f.rx(0, 3);
    let mut out = Vec::new();
    f.rx.reestablish(BearerMode::Um, &mut out);
    assert!(out.is_empty());
    assert_eq!((f.rx.rx_deliv(), f.rx.rx_next()), (0, 0));
}

#[test]
fn tv16_am_reestablishment_keeps_the_state() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    f.rx(0, 1);
    f.rx(0, 2);
    let mut out = Vec::new();
    f.rx.reestablish(BearerMode::Am, &mut out);
    assert!(out.is_empty());
    assert_eq!((f.rx.rx_deliv(), f.rx.rx_next(), f.rx.rx_reord(), f.rx.poll_timeout()), (0, 3, Some(2), Some(at(T))));
    assert_eq!(f.rx(5, 0), RxOutcome::Accepted { delivered: 3 }, "the retransmission fills the gap");
}

#[test]
fn tv17_a_receiver_delivers_up_to_the_last_count() {
    let top = (1i64 << 32) - 1;
    for bits in [12u8, 18] {
        let m = 1i64 << bits;
        let sn = |c: i64| c.rem_euclid(m) as u32;
        let mut f = Feed::new(Receiver::starting_at(cfg(bits, Some(T)), top - 2));
        assert_eq!(f.rx.count_of(sn(top)), top);
        f.rx(0, sn(top));
        f.rx(1, sn(top - 2));
        assert_eq!(f.rx(2, sn(top - 1)), RxOutcome::Accepted { delivered: 2 });
        assert_eq!(f.counts(), [top - 2, top - 1, top], "{bits} bits");
        assert_eq!((f.rx.rx_deliv(), f.rx.rx_next(), f.rx.poll_timeout()), (top + 1, top + 1, None));
        assert_eq!(f.rx(3, sn(top - 1)), RxOutcome::Late);
    }
}

#[test]
fn tv17_the_transmitter_stops_at_the_last_count_and_the_receiver_gets_it_all() {
    let top = (1i64 << 32) - 1;
    let sn = SnLength::new(12).unwrap();
    let mut tx = Transmitter::starting_at(TransmitterConfig { rat: Rat::Nr, sn, policy: SplitPolicy::Alternate }, top - 3);
    let mut f = Feed::new(Receiver::starting_at(cfg(12, Some(T)), top - 3));
    let mut pdus = Vec::new();
    while let Ok(pdu) = tx.send(at(0), 100) {
        pdus.push(pdu);
    }
    assert_eq!(tx.send(at(0), 100), Err(TxRefusal::CountExhausted));
    assert_eq!(pdus.iter().map(|p| p.sn).collect::<Vec<_>>(), [4092, 4093, 4094, 4095]);
    // Leg 1 (odd positions) arrives first.
    for pdu in pdus.iter().skip(1).step_by(2).chain(pdus.iter().step_by(2)) {
        f.rx(1, pdu.sn);
    }
    assert_eq!(f.counts(), [top - 3, top - 2, top - 1, top]);
    tx.on_delivered(f.rx.rx_deliv());
    assert_eq!(tx.outstanding(), 0);
}

#[test]
fn tv18_lte_split_bearer_maps_onto_the_core() {
    // LTE: Last_Submitted = 4095, Next = 0, RX_HFN = 0 ⇔ RX_DELIV = Last_Submitted + 1 = 0
    // (mod 4096). SN 0 delivered; SN 2 stored and the timer starts at COUNT(0, 3); SN 1
    // delivers [1, 2] and stops it.
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    assert_eq!(f.rx(0, 0), RxOutcome::Accepted { delivered: 1 });
    f.rx(1, 2);
    assert_eq!(f.rx.rx_reord(), Some(3));
    assert_eq!(f.rx(2, 1), RxOutcome::Accepted { delivered: 2 });
    assert_eq!(f.rx.poll_timeout(), None);
    // Window with Last_Submitted = 10: LTE accepts (sn - 10) mod 4096 in [1, 2048].
    let rx: Receiver<u32> = Receiver::starting_at(cfg(12, Some(T)), 11);
    for sn in 0..4096u32 {
        let lte_accepts = (1..=2048).contains(&(i64::from(sn) - 10).rem_euclid(4096));
        assert_eq!(rx.count_of(sn) >= 11, lte_accepts, "SN {sn}");
    }
}

#[test]
fn tv19_an_arrival_at_the_expiry_instant_comes_after_the_expiry() {
    let mut f = Feed::new(Receiver::new(cfg(12, Some(T))));
    f.rx(0, 1);
    // The expiry at T gives up COUNT 0 and delivers 1; SN 0 at T is then late.
    assert_eq!(f.rx(T, 0), RxOutcome::Late);
    assert_eq!(f.counts(), [1]);
    // Without the expiry first (the other order), SN 0 would have filled the gap.
    let mut rx: Receiver<u32> = Receiver::new(cfg(12, Some(T)));
    let mut out = Vec::new();
    rx.receive(at(0), 1, 1, &mut out);
    rx.receive(at(T), 0, 0, &mut out);
    assert_eq!(out.iter().map(|&(c, _)| c).collect::<Vec<_>>(), [0, 1]);
}
