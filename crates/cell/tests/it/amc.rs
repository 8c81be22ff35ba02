//! Link adaptation: MI mapping, effective SINR, the two CQI models, BLER curves and error draws.

use multiconn_cell::amc::{shannon_gap_efficiency, sinr_for_mi, LENA_BER};
use multiconn_cell::tables::{mcs_entry, Modulation};
use multiconn_cell::{draw_tb_error, effective_sinr_db, mcs_for_cqi, mi_per_bit, AmcModel, BlerCurve, McsScheme};
use multiconn_core::RngStream;

const MODS: [Modulation; 3] = [Modulation::Qpsk, Modulation::Qam16, Modulation::Qam64];

#[test]
fn mutual_information_has_the_known_shape() {
    // QPSK per coded bit at SINR γ is BPSK over a real AWGN channel at SNR γ: 0.486 bit at 0 dB.
    let qpsk0 = mi_per_bit(Modulation::Qpsk, 0.0);
    assert!((qpsk0 - 0.486).abs() < 0.005, "{qpsk0}");
    for m in MODS {
        assert!(mi_per_bit(m, -25.0) < 0.01);
        assert!(mi_per_bit(m, 35.0) > 0.99);
        let mut prev = 0.0;
        for k in -300..=400 {
            let db = k as f64 / 10.0;
            let mi = mi_per_bit(m, db);
            assert!(mi >= prev, "{m:?} at {db} dB");
            // Never above Shannon's capacity.
            let shannon = (1.0 + 10f64.powf(db / 10.0)).log2();
            assert!(mi * m.order() as f64 <= shannon + 1e-3, "{m:?} at {db} dB: {mi}");
            prev = mi;
        }
        // The inverse gives the SINR back.
        for db in [-10.0, 0.0, 7.5, 15.0] {
            let back = sinr_for_mi(m, mi_per_bit(m, db));
            assert!((back - db).abs() < 0.02, "{m:?}: {db} → {back}");
        }
    }
    // A denser constellation carries less per coded bit at the same SINR.
    for db in [0.0, 10.0, 20.0] {
        assert!(mi_per_bit(Modulation::Qpsk, db) > mi_per_bit(Modulation::Qam16, db));
        assert!(mi_per_bit(Modulation::Qam16, db) > mi_per_bit(Modulation::Qam64, db));
    }
}

#[test]
fn effective_sinr_lies_between_the_extremes() {
    for m in MODS {
        let same = effective_sinr_db(m, &[12.0; 8]).unwrap();
        assert!((same - 12.0).abs() < 0.02, "{m:?}: {same}");
        let mixed = [0.0, 5.0, 10.0, 20.0];
        let e = effective_sinr_db(m, &mixed).unwrap();
        assert!(e > 0.0 && e < 20.0, "{m:?}: {e}");
        // A deep fade drags the effective SINR below the linear mean (16.3 dB here).
        let lin_mean = 10.0 * (mixed.iter().map(|d| 10f64.powf(d / 10.0)).sum::<f64>() / 4.0).log10();
        assert!(e < lin_mean - 1.0, "{m:?}: {e} vs {lin_mean}");
    }
    assert!(effective_sinr_db(Modulation::Qpsk, &[]).unwrap_err().to_string().contains("sinr_db"));
    let err = effective_sinr_db(Modulation::Qpsk, &[1.0, f64::NAN]).unwrap_err().to_string();
    assert!(err.starts_with("sinr_db[1] = NaN"), "{err}");
}

#[test]
fn shannon_gap_cqi_matches_hand_values() {
    // Γ = −ln(5·5e-5)/1.5 = 5.53 (7.43 dB).
    let s = shannon_gap_efficiency(20.0, LENA_BER);
    assert!((s - (1.0 + 100.0 / 5.5296f64).log2()).abs() < 1e-3, "{s}");
    let amc = AmcModel::shannon_gap();
    assert_eq!(amc.cqi(&[-10.0]).unwrap(), 0); // s = 0.026
    assert_eq!(amc.cqi(&[0.0]).unwrap(), 2); // s = 0.240
    assert_eq!(amc.cqi(&[10.0]).unwrap(), 7); // s = 1.513
    assert_eq!(amc.cqi(&[20.0]).unwrap(), 12); // s = 4.256
    assert_eq!(amc.cqi(&[30.0]).unwrap(), 15); // s = 7.50
    assert!(AmcModel::ShannonGap { ber: 0.5 }.cqi(&[0.0]).unwrap_err().to_string().contains("amc.ber = 0.5"));
}

#[test]
fn mi_cqi_is_the_highest_meeting_the_target() {
    let curve = BlerCurve::default();
    let amc = AmcModel::mutual_information();
    assert_eq!(amc.cqi(&[-20.0; 4]).unwrap(), 0);
    assert_eq!(amc.cqi(&[35.0; 4]).unwrap(), 15);
    let mut prev = 0;
    for k in -200..=350 {
        let db = k as f64 / 10.0;
        let sinrs = [db, db + 3.0, db - 2.0];
        let cqi = amc.cqi(&sinrs).unwrap();
        assert!(cqi >= prev, "CQI falls at {db} dB");
        prev = cqi;
        if cqi >= 1 {
            let mcs = mcs_for_cqi(cqi).unwrap().unwrap();
            assert!(curve.tb_error_probability(mcs, &sinrs).unwrap() <= 0.1);
        }
        if cqi < 15 {
            let next = mcs_for_cqi(cqi + 1).unwrap().unwrap();
            assert!(curve.tb_error_probability(next, &sinrs).unwrap() > 0.1, "{db} dB, CQI {cqi}");
        }
    }
    // The 10 % points of MCS 0 and 28 (−8.6 and 19.4 dB with the default curve).
    let t0 = curve.threshold_db(0).unwrap();
    let t28 = curve.threshold_db(28).unwrap();
    assert!((-9.0..-4.0).contains(&t0), "{t0}");
    assert!((17.0..23.0).contains(&t28), "{t28}");
    let groups = amc.cqi_per_rbg(&[25.0, 25.0, 25.0, 25.0, -20.0, -20.0], 4).unwrap();
    assert_eq!(groups.len(), 2);
    assert!(groups[0] > 10 && groups[1] == 0, "{groups:?}");
    assert!(amc.cqi_per_rbg(&[1.0], 0).is_err());
}

#[test]
fn bler_curve_falls_with_sinr_and_rises_with_mcs() {
    let curve = BlerCurve::default();
    for mcs in 0..=28u8 {
        let t = curve.threshold_db(mcs).unwrap();
        assert!((curve.error_probability(mcs, t).unwrap() - 0.1).abs() < 1e-12);
        assert!((curve.error_probability(mcs, t - 1.0).unwrap() - 0.5).abs() < 1e-12);
        assert!(curve.error_probability(mcs, t + 5.0).unwrap() < 1e-4);
        if mcs > 0 {
            assert!(t > curve.threshold_db(mcs - 1).unwrap(), "MCS {mcs}");
            let same = mcs_entry(mcs).unwrap().modulation == mcs_entry(mcs - 1).unwrap().modulation;
            if same {
                assert!(curve.error_probability(mcs, 10.0).unwrap() >= curve.error_probability(mcs - 1, 10.0).unwrap());
            }
        }
    }
    let err = BlerCurve { gap_db: 1.0, width_db: 0.0, ..BlerCurve::default() }.error_probability(5, 0.0).unwrap_err().to_string();
    assert!(err.starts_with("bler.width_db = 0"), "{err}");
    assert!(curve.error_probability(29, 0.0).is_err());
}

#[test]
fn tb_error_draws_follow_the_probability_and_the_seed() {
    let mut rng = RngStream::derive(7, "cell/ue/0/tb");
    let n = 40_000;
    let errors = (0..n).filter(|_| draw_tb_error(0.1, &mut rng)).count();
    let rate = errors as f64 / n as f64;
    // 4.5 standard deviations: 0.1 ± 0.0067.
    assert!((rate - 0.1).abs() < 0.0067, "{rate}");
    let a: Vec<bool> = {
        let mut r = RngStream::derive(3, "x");
        (0..64).map(|_| draw_tb_error(0.5, &mut r)).collect()
    };
    let b: Vec<bool> = {
        let mut r = RngStream::derive(3, "x");
        (0..64).map(|_| draw_tb_error(0.5, &mut r)).collect()
    };
    assert_eq!(a, b);
    let mut r = RngStream::derive(1, "y");
    assert!(!draw_tb_error(0.0, &mut r) && draw_tb_error(1.0, &mut r));
}

#[test]
fn subband_cqis_are_the_groups_own_cqis() {
    // cqi_per_rbg computes the required SINR per CQI once; it must agree with cqi() group by group.
    let amc = multiconn_cell::AmcModel::mutual_information();
    let sinr: Vec<f64> = (0..100).map(|i| -12.0 + 0.37 * i as f64 + if i % 7 == 0 { -6.0 } else { 0.0 }).collect();
    for size in [1, 2, 3, 4] {
        let fast = amc.cqi_per_rbg(&sinr, size).unwrap();
        let slow: Vec<u8> = sinr.chunks(size).map(|g| amc.cqi(g).unwrap()).collect();
        assert_eq!(fast, slow, "RBG size {size}");
        assert!(fast.contains(&0) && fast.contains(&15));
    }
}

#[test]
fn the_memo_gives_what_the_functions_give_and_forgets_on_any_bit() {
    use multiconn_cell::amc::mean_mi_per_bit;
    use multiconn_cell::memo::SinrMemo;
    let models = [multiconn_cell::AmcModel::mutual_information(), multiconn_cell::AmcModel::shannon_gap()];
    let base: Vec<f64> = (0..12).map(|i| -4.0 + 2.3 * i as f64).collect();
    // The same vector again, one block moved by one ulp, then another vector, then back.
    let mut nudged = base.clone();
    nudged[5] = f64::from_bits(nudged[5].to_bits() + 1);
    let other: Vec<f64> = base.iter().map(|s| s - 9.0).collect();
    for amc in models {
        let mut memo = SinrMemo::default();
        for sinr in [&base, &base, &nudged, &other, &base] {
            let mut at = memo.at(sinr);
            assert_eq!(at.cqi(&amc, McsScheme::Lte).unwrap(), amc.cqi(sinr).unwrap());
            assert_eq!(at.cqi_per_rbg(&amc, McsScheme::Lte, 4).unwrap(), amc.cqi_per_rbg(sinr, 4).unwrap().as_slice());
            assert_eq!(at.cqi_per_rbg(&amc, McsScheme::Lte, 3).unwrap(), amc.cqi_per_rbg(sinr, 3).unwrap().as_slice());
            let mean = sinr.iter().sum::<f64>() / sinr.len() as f64;
            assert_eq!(at.mean_sinr_db().to_bits(), mean.to_bits());
            for m in MODS {
                assert_eq!(at.mean_mi(m).unwrap().to_bits(), mean_mi_per_bit(m, sinr).unwrap().to_bits());
                assert_eq!(at.effective_sinr_db(m).unwrap().to_bits(), effective_sinr_db(m, sinr).unwrap().to_bits());
                let picked = [7usize, 2, 9];
                let subset: Vec<f64> = picked.iter().map(|&k| sinr[k]).collect();
                assert_eq!(at.mean_mi_of(m, picked.into_iter()).unwrap().to_bits(), mean_mi_per_bit(m, &subset).unwrap().to_bits());
            }
        }
    }
    // The one-ulp change is seen: at 64QAM the MI of block 5 moves.
    let mut memo = SinrMemo::default();
    let a = memo.at(&base).mean_mi(Modulation::Qam64).unwrap();
    let b = memo.at(&nudged).mean_mi(Modulation::Qam64).unwrap();
    assert_eq!(b.to_bits(), mean_mi_per_bit(Modulation::Qam64, &nudged).unwrap().to_bits());
    assert_eq!(a.to_bits(), mean_mi_per_bit(Modulation::Qam64, &base).unwrap().to_bits());
    // Bad input is refused as by the functions.
    assert!(memo.at(&[f64::NAN]).mean_mi(Modulation::Qpsk).is_err());
    assert!(memo.at(&[]).cqi(&models[0], McsScheme::Lte).is_err());
    assert!(memo.at(&base).cqi_per_rbg(&models[0], McsScheme::Lte, 0).is_err());
}
