//! The TS 36.104 tapped delay lines (EPA, EVA, ETU): the tables, and over many seeded
//! realisations the mean power and exponential distribution per RB, the correlation between
//! RBs against Σ p_l e^{−j2π Δf τ_l}, and the time correlation against J₀(2π f_d τ).
//!
//! Tolerances, from the sample counts (deterministic seeds; the estimates are unbiased: the
//! taps are independent with E|h_l|² = 1 exactly):
//! * mean power: 60 000 samples per RB (300 realisations × 200 instants 10 ms apart at 50 Hz
//!   Doppler), σ of a mean ≈ 0.006; the band's mean within 0.02, every one of the 100 RBs
//!   within 0.04 (≈ 6 σ; the largest of 100 deviations is expected near 2.5 σ);
//! * P(|H_k|² < x) = 1 − e^−x: σ of an empirical probability ≤ 0.003; within 0.02;
//! * frequency correlation: 20 000 snapshots (2 000 realisations × 10 instants 50 ms apart at
//!   100 Hz), each averaged over the 100 − m RB pairs, normalised by the measured mean power;
//!   σ < 0.01 per component; within 0.03;
//! * time correlation: 10 000 pairs (2 000 realisations × 5 instants 0.4 s apart), σ ≈ 0.01;
//!   within 0.03, as the flat model's test.

use multiconn_cell::fading::DEFAULT_SINUSOIDS;
use multiconn_cell::{CellFading, FadingSpread, TdlFading, TdlProfile};
use multiconn_core::RngStream;
use std::f64::consts::PI;

const N_RB: usize = 100;

/// J₀(x) = (1/π)·∫₀^π cos(x·sin θ) dθ, by Simpson's rule.
fn bessel_j0(x: f64) -> f64 {
    let n = 400;
    let h = PI / n as f64;
    let f = |k: usize| (x * (k as f64 * h).sin()).cos();
    let mut s = f(0) + f(n);
    for k in 1..n {
        s += if k % 2 == 1 { 4.0 } else { 2.0 } * f(k);
    }
    s * h / 3.0 / PI
}

fn realisations(profile: TdlProfile, count: usize, fd: f64, seed: u64) -> Vec<TdlFading> {
    let mut rng = RngStream::derive(seed, &format!("cell/tdl/test/{}", profile.name()));
    (0..count).map(|_| TdlFading::new(profile, N_RB, fd, DEFAULT_SINUSOIDS, &mut rng).unwrap()).collect()
}

#[test]
fn the_tables_are_36_104s() {
    let counts = [(TdlProfile::Epa, 7, 410.0), (TdlProfile::Eva, 9, 2510.0), (TdlProfile::Etu, 9, 5000.0)];
    for (profile, taps, max_delay) in counts {
        let t = profile.taps();
        assert_eq!(t.len(), taps, "{profile:?}");
        assert_eq!(t[0].delay_ns, 0.0);
        assert_eq!(t.last().unwrap().delay_ns, max_delay, "{profile:?}: Table B.2-1's maximum excess delay");
        assert!(t.windows(2).all(|w| w[0].delay_ns < w[1].delay_ns));
        let p = profile.powers();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{profile:?}");
        assert!(p[taps..].iter().all(|&x| x == 0.0));
        // The r.m.s. delay spread from the taps is Table B.2-1's value to its rounding (1 ns):
        // EPA 43.13, EVA 356.65, ETU 990.94 ns. (EPA's fifth tap at 120 ns, as one
        // transcription has it, would give 43.95 ns.)
        let rms = profile.rms_delay_spread_ns();
        assert!((rms - profile.stated_rms_delay_spread_ns()).abs() <= 0.5, "{profile:?}: {rms} ns");
        assert_eq!(TdlProfile::from_name(profile.name()), Some(profile));
        assert_eq!(FadingSpread::from_name(profile.name()), Some(FadingSpread::Tdl(profile)));
    }
    // Spot values of the tables.
    assert_eq!(TdlProfile::Epa.taps()[4].power_db, -8.0);
    assert_eq!(TdlProfile::Eva.taps()[4].power_db, -0.6);
    assert_eq!(TdlProfile::Etu.taps()[6].delay_ns, 1600.0);
    assert_eq!(TdlProfile::from_name("tu"), None);
    // R(0) = 1 and |R| ≤ 1.
    for profile in TdlProfile::ALL {
        let (re, im) = profile.frequency_correlation(0.0);
        assert!((re - 1.0).abs() < 1e-12 && im.abs() < 1e-12);
    }
}

#[test]
fn mean_power_per_rb_is_one_and_each_rb_is_exponential() {
    // 300 realisations × 200 instants 10 ms apart at 50 Hz (a Doppler period every 20 ms).
    for profile in TdlProfile::ALL {
        let fs = realisations(profile, 300, 50.0, 1);
        let mut samples = vec![Vec::new(); N_RB];
        let mut g = vec![0.0; N_RB];
        for f in &fs {
            for i in 0..200 {
                f.power_gains(i as f64 * 0.01, &mut g).unwrap();
                for (s, &v) in samples.iter_mut().zip(&g) {
                    s.push(v);
                }
            }
        }
        let n = samples[0].len() as f64;
        let means: Vec<f64> = samples.iter().map(|s| s.iter().sum::<f64>() / n).collect();
        let band = means.iter().sum::<f64>() / N_RB as f64;
        assert!((band - 1.0).abs() < 0.02, "{profile:?}: band mean {band}");
        for (k, m) in means.iter().enumerate() {
            assert!((m - 1.0).abs() < 0.04, "{profile:?}: RB {k} mean power {m}");
        }
        // P(|H_k|² < x) = 1 − e^−x at the band's edges and centre.
        for k in [0, 49, 99] {
            for x in [0.1, 0.5, 1.0, 2.0, 3.0] {
                let p = samples[k].iter().filter(|&&v| v < x).count() as f64 / n;
                let want = 1.0 - (-x).exp();
                assert!((p - want).abs() < 0.02, "{profile:?}: RB {k}: P(|H|² < {x}) = {p}, want {want}");
            }
        }
    }
}

/// The measured R(m·180 kHz) = E[H_{k+m} H*_k] / E|H|² over all RB pairs m apart, for each m.
fn measured_frequency_correlation(profile: TdlProfile, separations: &[usize]) -> Vec<(f64, f64)> {
    // 2000 realisations × 10 instants 50 ms apart at 100 Hz.
    let fs = realisations(profile, 2000, 100.0, 2);
    let mut h = vec![(0.0, 0.0); N_RB];
    let mut acc = vec![(0.0, 0.0, 0.0); separations.len()];
    let mut power = 0.0;
    let mut count = 0.0;
    for f in &fs {
        for i in 0..10 {
            f.channel(i as f64 * 0.05, &mut h).unwrap();
            power += h.iter().map(|(a, b)| a * a + b * b).sum::<f64>();
            count += N_RB as f64;
            for (slot, &m) in acc.iter_mut().zip(separations) {
                for k in 0..N_RB - m {
                    let (a, b) = h[k + m];
                    let (c, d) = h[k];
                    // (a + jb)(c − jd)
                    slot.0 += a * c + b * d;
                    slot.1 += b * c - a * d;
                    slot.2 += 1.0;
                }
            }
        }
    }
    let power = power / count;
    acc.iter().map(|&(re, im, n)| (re / n / power, im / n / power)).collect()
}

#[test]
fn the_correlation_between_rbs_is_the_profiles() {
    let separations = [1, 2, 5, 10, 25, 50];
    let mut first = Vec::new();
    for profile in TdlProfile::ALL {
        let measured = measured_frequency_correlation(profile, &separations);
        for (&m, &(re, im)) in separations.iter().zip(&measured) {
            let (wr, wi) = profile.frequency_correlation(m as f64 * 180e3);
            let (mag, want) = (re.hypot(im), wr.hypot(wi));
            assert!((mag - want).abs() < 0.03, "{profile:?}, {m} RBs apart: |R| = {mag}, want {want}");
            assert!((re - wr).abs() < 0.03 && (im - wi).abs() < 0.03, "{profile:?}, {m} RBs: R = {re} + {im}j, want {wr} + {wi}j");
        }
        first.push((measured[0].0.hypot(measured[0].1), measured[1].0.hypot(measured[1].1)));
    }
    // Coherence bandwidth ordering: one and two RBs apart, ETU decorrelates more than EVA, EVA
    // more than EPA (theory: 0.815 < 0.932 < 0.999 and 0.710 < 0.825 < 0.995).
    let (epa, eva, etu) = (first[0], first[1], first[2]);
    assert!(etu.0 < eva.0 - 0.05 && eva.0 < epa.0 - 0.03, "one RB: EPA {}, EVA {}, ETU {}", epa.0, eva.0, etu.0);
    assert!(etu.1 < eva.1 - 0.05 && eva.1 < epa.1 - 0.1, "two RBs: EPA {}, EVA {}, ETU {}", epa.1, eva.1, etu.1);
    // And in theory the 50 % coherence bandwidth (first separation with |R| < 0.5) orders the
    // same way: EPA 26 RBs, EVA 7, ETU 6.
    let coherence = |p: TdlProfile| (1..N_RB).find(|&m| {
        let (re, im) = p.frequency_correlation(m as f64 * 180e3);
        re.hypot(im) < 0.5
    });
    assert_eq!([coherence(TdlProfile::Epa), coherence(TdlProfile::Eva), coherence(TdlProfile::Etu)], [Some(26), Some(7), Some(6)]);
}

#[test]
fn the_time_correlation_of_an_rb_follows_bessel_j0() {
    let fd = 5.0;
    for profile in [TdlProfile::Epa, TdlProfile::Etu] {
        let fs = realisations(profile, 2000, fd, 3);
        let mut now = vec![(0.0, 0.0); N_RB];
        let mut later = vec![(0.0, 0.0); N_RB];
        for tau in [0.0, 0.02, 0.05, 0.1, 0.2] {
            let mut acc = 0.0;
            let mut count = 0.0;
            for f in &fs {
                for i in 0..5 {
                    let t = i as f64 * 0.4;
                    f.channel(t, &mut now).unwrap();
                    f.channel(t + tau, &mut later).unwrap();
                    // Re(H_k(t)·H_k*(t + τ)) at RB 37.
                    let ((a, b), (c, d)) = (now[37], later[37]);
                    acc += a * c + b * d;
                    count += 1.0;
                }
            }
            let r = acc / count;
            let want = bessel_j0(2.0 * PI * fd * tau);
            assert!((r - want).abs() < 0.03, "{profile:?}, τ = {tau} s: {r} vs J0 = {want}");
        }
    }
}

#[test]
fn cell_fading_from_a_profile_is_seeded_and_frequency_selective() {
    let gains = |spread: FadingSpread, seed: u64| {
        let mut rng = RngStream::derive(seed, "cell/fading");
        let f = CellFading::new(spread, 50, 5.89, DEFAULT_SINUSOIDS, &mut rng).unwrap();
        let mut g = vec![0.0; 50];
        f.gains_db(0.75, &mut g).unwrap();
        g
    };
    let etu = gains(FadingSpread::Tdl(TdlProfile::Etu), 4);
    assert_eq!(etu, gains(FadingSpread::Tdl(TdlProfile::Etu), 4));
    assert_ne!(etu, gains(FadingSpread::Tdl(TdlProfile::Etu), 5));
    assert_ne!(etu, gains(FadingSpread::Tdl(TdlProfile::Eva), 4));
    // Across 50 RBs (9 MHz) ETU's gain varies by more than a few dB; neighbours are close.
    let spread = etu.iter().cloned().fold(f64::MIN, f64::max) - etu.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread > 3.0, "{etu:?}");
    // The gains in dB are the power gains', and the complex channel's.
    let mut rng = RngStream::derive(4, "cell/fading");
    let f = TdlFading::new(TdlProfile::Etu, 50, 5.89, DEFAULT_SINUSOIDS, &mut rng).unwrap();
    let (mut lin, mut h) = (vec![0.0; 50], vec![(0.0, 0.0); 50]);
    f.power_gains(0.75, &mut lin).unwrap();
    f.channel(0.75, &mut h).unwrap();
    for k in 0..50 {
        assert!((10.0 * lin[k].log10() - etu[k]).abs() < 1e-9);
        assert!((h[k].0 * h[k].0 + h[k].1 * h[k].1 - lin[k]).abs() < 1e-12);
    }
    // Bad input.
    assert!(f.power_gains(0.0, &mut [0.0; 3]).is_err());
    assert!(TdlFading::new(TdlProfile::Epa, 0, 5.0, 16, &mut rng).is_err());
    assert!(TdlFading::new(TdlProfile::Epa, 6, -1.0, 16, &mut rng).unwrap_err().to_string().contains("fading.doppler_hz"));
    assert_eq!(FadingSpread::from_name("jakes"), None);
    for name in FadingSpread::NAMES {
        assert_eq!(FadingSpread::from_name(name).unwrap().name(), name);
    }
}

/// The gains a cell asks for TTI after TTI, the phasors advanced by rotation, are those of the
/// direct evaluation to 10⁻¹⁰ of the mean power (both round differently: the direct cosine's
/// argument grows with time, 2π · 300 Hz · 20 s ≈ 38 000 rad, and carries its own rounding),
/// over 20 000 TTIs with gaps (a UE that neither sends nor is measured for a while) and
/// repeated TTIs, at a pedestrian and a high-speed Doppler, for every profile.
#[test]
fn gains_advanced_tti_by_tti_are_the_direct_ones() {
    for profile in TdlProfile::ALL {
        for fd in [5.36, 300.0] {
            let mut stepped = realisations(profile, 1, fd, 7).remove(0);
            let direct = stepped.clone();
            let (mut fast, mut exact) = (vec![0.0; N_RB], vec![0.0; N_RB]);
            let mut worst: f64 = 0.0;
            let mut n = 0u64;
            while n < 20_000 {
                let t_s = (n * 1_000_000) as f64 / 1e9;
                stepped.gains_db_at_tti(n, t_s, 0..N_RB, &mut fast).unwrap();
                direct.gains_db(t_s, &mut exact).unwrap();
                let linear = |db: f64| 10f64.powf(db / 10.0);
                worst = fast.iter().zip(&exact).map(|(&a, &b)| (linear(a) - linear(b)).abs()).fold(worst, f64::max);
                // Mostly the next TTI; now and then a gap, or the same TTI again.
                n += match n % 997 {
                    0 => 37,
                    500 => 0,
                    _ => 1,
                };
                if n % 997 == 500 {
                    let t_s = (n * 1_000_000) as f64 / 1e9;
                    stepped.gains_db_at_tti(n, t_s, 0..N_RB, &mut fast).unwrap();
                    n += 1;
                }
            }
            assert!(worst < 1e-10, "{}, {fd} Hz: largest difference {worst:e} of the mean power", profile.name());
        }
    }
}
