//! The uplink MAC's band shares: what `UlMac::shares` announces is what `UlMac::tti` uses.

use multiconn_cell::channel::LinkBudget;
use multiconn_cell::ul::{UlMac, UlMcs, UlTiming, UlUeInput};
use multiconn_cell::{AmcModel, BlerCurve};
use multiconn_core::RngStream;

#[test]
fn the_announced_shares_are_the_ttis_allocations() {
    let budget = LinkBudget::study();
    let mut mac: UlMac<u32> = UlMac::new(50, 7, AmcModel::mutual_information(), BlerCurve::default(), RngStream::derive(5, "ul")).unwrap();
    let fading = vec![0.0; 50];
    for tti in 0..200u64 {
        // UEs come and go: UE u has data in TTIs where (tti + u) % (u + 2) != 0.
        let buffers: Vec<u64> = (0..7u64).map(|u| if (tti + u) % (u + 2) == 0 { 0 } else { 3000 }).collect();
        let shares = mac.shares(tti, &buffers);
        // Contiguous, in order, covering the band when anyone sends.
        let mut next = 0;
        for (_, rbs) in &shares {
            assert_eq!(rbs.start, next);
            next = rbs.end;
        }
        assert!(shares.is_empty() || next == 50, "TTI {tti}: {shares:?}");
        let inputs: Vec<UlUeInput> = buffers.iter().map(|&b| UlUeInput { loss_db: 90.0, fading_db: &fading, buffer_bytes: b, arrived_sdus: 0 }).collect();
        let out = mac.tti(tti, &budget, &inputs, |_, bytes| Some(bytes)).unwrap();
        let measured: Vec<usize> = out.measured.iter().map(|m| m.ue).collect();
        assert_eq!(measured, shares.iter().map(|(u, _)| *u).collect::<Vec<_>>(), "TTI {tti}");
        for tb in &out.tbs {
            let (_, rbs) = shares.iter().find(|(u, _)| *u == tb.ue).expect("a TB from a UE without a share");
            assert_eq!(usize::from(tb.n_prb), rbs.len(), "TTI {tti}, UE {}", tb.ue);
        }
    }
}

/// The TTIs in which `ue` sends a new TB, and those in which the scheduler measures (grants)
/// it, when its buffer is `bytes` from TTI `from` until its first TB leaves (then empty).
fn first_grants(timing: UlTiming, from: u64, bytes: u64, ttis: u64) -> (Vec<u64>, Vec<u64>) {
    let budget = LinkBudget::study();
    let mut mac: UlMac<u64> = UlMac::new(50, 2, AmcModel::mutual_information(), BlerCurve::default(), RngStream::derive(3, "ul")).unwrap().with_timing(timing).unwrap();
    let fading = vec![0.0; 50];
    let (mut sent, mut measured) = (Vec::new(), Vec::new());
    let mut left = 0u64;
    for tti in 0..ttis {
        if tti == from {
            left = bytes;
        }
        let buffers = [0, left];
        let arrived = [0, u64::from(tti >= from)];
        let parts = mac.parts(tti, &buffers, &arrived);
        let inputs: Vec<UlUeInput> =
            buffers.iter().zip(arrived).map(|(&b, a)| UlUeInput { loss_db: 80.0, fading_db: &fading, buffer_bytes: b, arrived_sdus: a }).collect();
        let out = mac.tti(tti, &budget, &inputs, |_, room| Some(u64::from(room))).unwrap();
        for tb in out.tbs.iter().filter(|tb| tb.ue == 1) {
            assert!(parts.iter().any(|(u, rbs)| *u == 1 && rbs.len() >= usize::from(tb.n_prb)), "TTI {tti}: a TB outside the announced parts");
            assert!(tb.decoded, "80 dB of path loss: every TB decodes");
            sent.push(tti);
            left = 0;
        }
        measured.extend(out.measured.iter().filter(|m| m.ue == 1).map(|_| tti));
    }
    (sent, measured)
}

#[test]
fn with_bsrs_data_waits_for_the_report_and_the_grant_and_each_grant_counts_against_the_estimate() {
    // Immediate: the UE sends in the TTI its data appears.
    let (sent, _) = first_grants(UlTiming::Immediate, 10, 300, 40);
    assert_eq!(sent, vec![10]);
    // LENA's timing: the report made at 10 is known at 15, the grant made then is used at 21.
    let (sent, measured) = first_grants(UlTiming::LENA, 10, 300, 60);
    assert_eq!(sent, vec![21]);
    // One grant only: the TB it granted took the 300 bytes off the estimate, and the report of
    // the emptied buffer (made at 21) arrives at 26 with nothing to grant.
    assert_eq!(measured, vec![15]);
    // Other delays shift it alike.
    let (sent, measured) = first_grants(UlTiming::Bsr { bsr_ttis: 1, grant_ttis: 3 }, 7, 300, 40);
    assert_eq!((sent, measured), (vec![11], vec![8]));
}

#[test]
fn a_grant_that_finds_the_buffer_empty_goes_unused_and_bad_delays_are_refused() {
    let budget = LinkBudget::study();
    let mut mac: UlMac<u64> = UlMac::new(25, 1, AmcModel::mutual_information(), BlerCurve::default(), RngStream::derive(4, "ul")).unwrap().with_timing(UlTiming::LENA).unwrap();
    let fading = vec![0.0; 25];
    let mut tbs = 0;
    for tti in 0..40u64 {
        // Data appears at 0 and is gone (sent elsewhere, as far as this MAC knows) at 3.
        let buffer = if tti < 3 { 500 } else { 0 };
        mac.parts(tti, &[buffer], &[1]);
        let input = UlUeInput { loss_db: 80.0, fading_db: &fading, buffer_bytes: buffer, arrived_sdus: 1 };
        let out = mac.tti(tti, &budget, &[input], |_, room| Some(u64::from(room))).unwrap();
        tbs += out.tbs.len();
        if tti == 5 {
            assert_eq!(out.measured.len(), 1, "the report of TTI 0 gets a grant at 5");
        }
    }
    assert_eq!(tbs, 0, "the grant for TTI 11 found nothing to send");
    assert!(!mac.busy(0), "nothing left under way");
    let mac: Result<UlMac<u64>, _> = UlMac::new(25, 1, AmcModel::mutual_information(), BlerCurve::default(), RngStream::derive(4, "ul"))
        .unwrap()
        .with_timing(UlTiming::Bsr { bsr_ttis: 101, grant_ttis: 6 });
    let err = mac.err().expect("101 TTIs is refused").to_string();
    assert!(err.contains("cell.timing.bsr_ttis") && err.contains("[0, 100]"), "{err}");
}

#[test]
fn a_new_sdu_is_reported_even_when_the_buffer_is_back_at_the_size_last_reported() {
    // 300 bytes arrive at 10 and leave at 21 on their grant; at once another 300 arrive. The
    // buffer is as last reported (300), but the new SDU makes a report (TTI 22, known at 27):
    // without one the scheduler, whose estimate the first grant emptied, would never grant it.
    let budget = LinkBudget::study();
    let mut mac: UlMac<u64> = UlMac::new(50, 1, AmcModel::mutual_information(), BlerCurve::default(), RngStream::derive(6, "ul")).unwrap().with_timing(UlTiming::LENA).unwrap();
    let fading = vec![0.0; 50];
    let (mut buffer, mut arrived, mut sent) = (0u64, 0u64, Vec::new());
    for tti in 0..60u64 {
        if tti == 10 {
            (buffer, arrived) = (300, 1);
        }
        mac.parts(tti, &[buffer], &[arrived]);
        let input = UlUeInput { loss_db: 80.0, fading_db: &fading, buffer_bytes: buffer, arrived_sdus: arrived };
        let out = mac.tti(tti, &budget, &[input], |_, room| Some(u64::from(room))).unwrap();
        if !out.tbs.is_empty() {
            sent.push(tti);
            buffer = 0;
            if arrived == 1 {
                (buffer, arrived) = (300, 2);
            }
        }
    }
    assert_eq!(sent, vec![21, 33]);
}

/// The MCS of UE 0's TB in each of `ttis` TTIs (None: no TB), with `gains(tti)` as its fading
/// over a 50-RB band and 121.66 dB of path loss (0.8 dB per RB at 0 dB of gain over the whole
/// band: 23 dBm over 50 RBs against −116.45 dBm of noise).
fn mcs_series(rule: UlMcs, ttis: u64, gains: impl Fn(u64) -> Vec<f64>) -> Vec<Option<u8>> {
    let budget = LinkBudget::study();
    let mut mac: UlMac<u64> = UlMac::new(50, 1, AmcModel::mutual_information(), BlerCurve::default(), RngStream::derive(8, "ul")).unwrap().with_mcs(rule).unwrap();
    (0..ttis)
        .map(|tti| {
            let fading = gains(tti);
            mac.parts(tti, &[100_000], &[1]);
            let input = UlUeInput { loss_db: 121.66, fading_db: &fading, buffer_bytes: 100_000, arrived_sdus: 1 };
            let out = mac.tti(tti, &budget, &[input], |_, room| Some(u64::from(room))).unwrap();
            out.tbs.iter().find(|tb| tb.transmission == 1).map(|tb| tb.mcs)
        })
        .collect()
}

#[test]
fn lenas_uplink_mcs_follows_the_worst_rb_of_the_last_srs_through_the_shannon_gap() {
    // RB 7 at 0 dB (0.8 dB of SINR), the others 10 dB better.
    let one_deep = |deep_db: f64| move |_: u64| (0..50).map(|rb| if rb == 7 { deep_db } else { 10.0 }).collect::<Vec<f64>>();
    let lena = UlMcs::Lena { srs_period_ttis: 10 };
    // 0.8 dB: log2(1 + 1.202 / 5.529) = 0.284 bit/s/Hz, CQI 2 (0.2344 to 0.3770), MCS 2, for
    // the whole part, whatever its other RBs.
    let series = mcs_series(lena, 5, one_deep(0.0));
    assert_eq!(series, vec![Some(2); 5]);
    // The measured rule reads the part as a whole: a far higher MCS.
    let measured = mcs_series(UlMcs::Measured, 5, one_deep(0.0));
    assert!(measured.iter().all(|m| m.is_some_and(|m| m > 10)), "{measured:?}");
    // Below −2.2 dB on one RB (CQI 0): no grant at all, whatever the rest.
    assert_eq!(mcs_series(lena, 5, one_deep(-5.0)), vec![None; 5]);
    assert!(mcs_series(UlMcs::Measured, 5, one_deep(-5.0)).iter().all(Option::is_some));
    // The SRS of TTI 0 holds until TTI 10, when the deep RB has recovered.
    let recovering = |tti: u64| (0..50).map(|rb| if rb == 7 && tti == 0 { 0.0 } else { 10.0 }).collect::<Vec<f64>>();
    let series = mcs_series(lena, 12, recovering);
    assert_eq!(&series[..10], &[Some(2); 10]);
    assert!(series[10].is_some_and(|m| m > 2) && series[10] == series[11], "{series:?}");
    // A bad period is refused.
    let err = UlMcs::Lena { srs_period_ttis: 0 }.validate().unwrap_err().to_string();
    assert!(err.contains("srs_period_ttis"), "{err}");
}

#[test]
fn before_its_first_srs_a_ue_sends_at_mcs_0() {
    // UE 0 sounds at TTIs ≡ 0 modulo 10: a first TB at TTI 3 has no SRS behind it yet. (With a
    // period of 10 and data from TTI 3, TTIs 3..9 go out at MCS 0, TTI 10 on the SRS.)
    let budget = LinkBudget::study();
    let mut mac: UlMac<u64> = UlMac::new(50, 1, AmcModel::mutual_information(), BlerCurve::default(), RngStream::derive(9, "ul"))
        .unwrap()
        .with_mcs(UlMcs::Lena { srs_period_ttis: 10 })
        .unwrap();
    let fading = vec![10.0; 50];
    let mut mcs = Vec::new();
    for tti in 3..12u64 {
        mac.parts(tti, &[100_000], &[1]);
        let input = UlUeInput { loss_db: 121.66, fading_db: &fading, buffer_bytes: 100_000, arrived_sdus: 1 };
        let out = mac.tti(tti, &budget, &[input], |_, room| Some(u64::from(room))).unwrap();
        mcs.push(out.tbs.iter().find(|tb| tb.transmission == 1).map(|tb| tb.mcs));
    }
    assert_eq!(&mcs[..7], &[Some(0); 7]);
    assert!(mcs[7].is_some_and(|m| m > 0), "{mcs:?}");
}
