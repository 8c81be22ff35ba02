//! Fading statistics over many samples: mean power, the Rayleigh envelope distribution and the
//! autocorrelation against the Doppler's Bessel function.

use multiconn_cell::fading::DEFAULT_SINUSOIDS;
use multiconn_cell::{doppler_hz, CellFading, FadingSpread, RayleighFading, RicianFading};
use multiconn_core::RngStream;

/// J₀(x) = (1/π)·∫₀^π cos(x·sin θ) dθ, by Simpson's rule.
fn bessel_j0(x: f64) -> f64 {
    let n = 400;
    let h = std::f64::consts::PI / n as f64;
    let f = |k: usize| (x * (k as f64 * h).sin()).cos();
    let mut s = f(0) + f(n);
    for k in 1..n {
        s += if k % 2 == 1 { 4.0 } else { 2.0 } * f(k);
    }
    s * h / 3.0 / std::f64::consts::PI
}

fn processes(count: usize, fd: f64, seed: u64) -> Vec<RayleighFading> {
    let mut rng = RngStream::derive(seed, "cell/fading/test");
    (0..count).map(|_| RayleighFading::new(fd, DEFAULT_SINUSOIDS, &mut rng).unwrap()).collect()
}

#[test]
fn bessel_helper_is_right() {
    assert!((bessel_j0(0.0) - 1.0).abs() < 1e-12);
    assert!((bessel_j0(2.404_825_557_7)).abs() < 1e-9);
    assert!((bessel_j0(1.0) - 0.765_197_686_6).abs() < 1e-9);
}

#[test]
fn mean_power_is_one_and_the_envelope_is_rayleigh() {
    let fd = 5.36;
    let ps = processes(300, fd, 1);
    let mut gains = Vec::new();
    for p in &ps {
        for k in 0..2000 {
            gains.push(p.power_gain(k as f64 * 1e-3));
        }
    }
    let n = gains.len() as f64;
    let mean = gains.iter().sum::<f64>() / n;
    assert!((mean - 1.0).abs() < 0.03, "mean power {mean}");
    // |h|² is exponential with mean 1: P(|h|² < x) = 1 − e^−x.
    for x in [0.1, 0.5, 1.0, 2.0, 3.0] {
        let p = gains.iter().filter(|&&g| g < x).count() as f64 / n;
        let want = 1.0 - (-x).exp();
        assert!((p - want).abs() < 0.02, "P(|h|² < {x}) = {p}, want {want}");
    }
    // One long realisation: the time mean power is also near 1.
    let one = &ps[0];
    let long = (0..200_000).map(|k| one.power_gain(k as f64 * 1e-3)).sum::<f64>() / 200_000.0;
    assert!((long - 1.0).abs() < 0.05, "time mean {long}");
}

#[test]
fn autocorrelation_follows_bessel_j0() {
    let fd = 5.0;
    let ps = processes(2000, fd, 2);
    for tau in [0.0, 0.02, 0.05, 0.1, 0.2] {
        let mut acc = 0.0;
        let mut count = 0.0;
        for p in &ps {
            for k in 0..25 {
                let t = k as f64 * 0.4;
                let (a, b) = p.coefficient(t);
                let (c, d) = p.coefficient(t + tau);
                // Re(h(t)·h*(t + τ)).
                acc += a * c + b * d;
                count += 1.0;
            }
        }
        let r = acc / count;
        let want = bessel_j0(2.0 * std::f64::consts::PI * fd * tau);
        assert!((r - want).abs() < 0.03, "τ = {tau} s: {r} vs J0 = {want}");
    }
}

#[test]
fn per_rb_fading_differs_between_blocks_and_flat_does_not() {
    let mut rng = RngStream::derive(9, "cell/fading");
    let per = CellFading::new(FadingSpread::PerRb, 100, 5.36, DEFAULT_SINUSOIDS, &mut rng).unwrap();
    let flat = CellFading::new(FadingSpread::Flat, 100, 5.36, DEFAULT_SINUSOIDS, &mut rng).unwrap();
    let mut g = vec![0.0; 100];
    per.gains_db(0.5, &mut g).unwrap();
    assert!(g.iter().any(|&x| (x - g[0]).abs() > 1.0));
    flat.gains_db(0.5, &mut g).unwrap();
    assert!(g.iter().all(|&x| x == g[0]));
    // Same seed, same gains.
    let mut a = RngStream::derive(4, "f");
    let mut b = RngStream::derive(4, "f");
    let fa = CellFading::new(FadingSpread::PerRb, 6, 10.0, 8, &mut a).unwrap();
    let fb = CellFading::new(FadingSpread::PerRb, 6, 10.0, 8, &mut b).unwrap();
    let (mut ga, mut gb) = (vec![0.0; 6], vec![0.0; 6]);
    fa.gains_db(1.234, &mut ga).unwrap();
    fb.gains_db(1.234, &mut gb).unwrap();
    assert_eq!(ga, gb);
    assert!(per.gains_db(0.0, &mut [0.0; 3]).is_err());
}

#[test]
fn doppler_and_bad_input() {
    // 3 km/h at 1.93 GHz: ns-3's Jakes default, 5.36 Hz.
    assert!((doppler_hz(3.0 / 3.6, 1.93e9) - 5.36).abs() < 0.01);
    let mut rng = RngStream::derive(1, "f");
    let err = RayleighFading::new(-1.0, 16, &mut rng).unwrap_err().to_string();
    assert!(err.starts_with("fading.doppler_hz = -1"), "{err}");
    assert!(RayleighFading::new(5.0, 2, &mut rng).unwrap_err().to_string().contains("fading.sinusoids"));
    assert!(CellFading::new(FadingSpread::Flat, 0, 5.0, 16, &mut rng).is_err());
    // Zero Doppler: a constant gain.
    let still = RayleighFading::new(0.0, 16, &mut rng).unwrap();
    assert_eq!(still.power_gain(0.0), still.power_gain(7.0));
}

/// I₀(z) by its power series Σ (z/2)^{2m} / (m!)².
fn bessel_i0(z: f64) -> f64 {
    let (mut term, mut sum) = (1.0, 1.0);
    for m in 1..500 {
        term *= (z / 2.0) * (z / 2.0) / (m as f64 * m as f64);
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
    }
    sum
}

/// P(|h|² < x) of Rician fading with K-factor `k` and unit mean power: the integral of the
/// noncentral chi-square density (K+1)·e^{−K}·e^{−(K+1)y}·I₀(2√(K(K+1)y)), by Simpson's rule.
fn rice_power_cdf(k: f64, x: f64) -> f64 {
    let f = |y: f64| (k + 1.0) * (-k - (k + 1.0) * y).exp() * bessel_i0(2.0 * (k * (k + 1.0) * y).sqrt());
    let n = 2000;
    let h = x / n as f64;
    let mut s = f(0.0) + f(x);
    for i in 1..n {
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i as f64 * h);
    }
    s * h / 3.0
}

#[test]
fn rice_helpers_are_right() {
    // K = 0 is Rayleigh: 1 − e^−x.
    assert!((rice_power_cdf(0.0, 1.0) - (1.0 - (-1.0f64).exp())).abs() < 1e-9);
    assert!((bessel_i0(1.0) - 1.266_065_877_752).abs() < 1e-10);
    // The density integrates to 1.
    assert!((rice_power_cdf(10.0, 6.0) - 1.0).abs() < 1e-6);
}

#[test]
fn rician_fading_has_unit_power_its_k_factors_variance_and_the_rice_distribution() {
    for k_db in [0.0, 6.0, 10.0] {
        let k = 10f64.powf(k_db / 10.0);
        let mut rng = RngStream::derive(3, "cell/fading/rician");
        let ps: Vec<RicianFading> = (0..400).map(|_| RicianFading::new(k, 50.0, DEFAULT_SINUSOIDS, &mut rng).unwrap()).collect();
        let gains: Vec<f64> = ps.iter().flat_map(|p| (0..500).map(move |i| p.power_gain(i as f64 * 7e-3))).collect();
        let n = gains.len() as f64;
        let mean = gains.iter().sum::<f64>() / n;
        let var = gains.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / n;
        assert!((mean - 1.0).abs() < 0.02, "K {k_db} dB: mean power {mean}");
        // Var|h|² = (2K+1)/(K+1)²: the moment-method K estimate of Greenstein et al. inverts it.
        let want = (2.0 * k + 1.0) / ((k + 1.0) * (k + 1.0));
        assert!((var - want).abs() < 0.05 * want.max(0.2), "K {k_db} dB: variance {var}, want {want}");
        let gamma = var / (mean * mean);
        let estimate = (1.0 - gamma).max(0.0).sqrt() / (1.0 - (1.0 - gamma).max(0.0).sqrt());
        if k_db > 0.0 {
            assert!((ratio_db(estimate) - k_db).abs() < 1.0, "K {k_db} dB estimated as {} dB", ratio_db(estimate));
        }
        // The power follows the noncentral chi-square (Rice) distribution: deep fades are
        // rarer as the line of sight grows.
        for x in [0.1, 0.3, 1.0, 2.0] {
            let p = gains.iter().filter(|&&g| g < x).count() as f64 / n;
            let cdf = rice_power_cdf(k, x);
            assert!((p - cdf).abs() < 0.02, "K {k_db} dB: P(|h|² < {x}) = {p}, Rice {cdf}");
        }
    }
}

#[test]
fn a_k_factor_on_a_tapped_delay_line_or_out_of_range_is_refused() {
    let mut rng = RngStream::derive(1, "t");
    let e = CellFading::rician(FadingSpread::from_name("eva").unwrap(), 4.0, 25, 5.0, DEFAULT_SINUSOIDS, &mut rng).unwrap_err().to_string();
    assert!(e.contains("k_factor") && e.contains("Rayleigh"), "{e}");
    assert!(RicianFading::new(-1.0, 5.0, DEFAULT_SINUSOIDS, &mut rng).is_err());
    assert!(RicianFading::new(f64::NAN, 5.0, DEFAULT_SINUSOIDS, &mut rng).is_err());
    let flat = CellFading::rician(FadingSpread::Flat, 4.0, 25, 5.0, DEFAULT_SINUSOIDS, &mut rng).unwrap();
    let mut out = vec![0.0; 25];
    flat.gains_db(0.3, &mut out).unwrap();
    assert!(out.iter().all(|g| *g == out[0]), "flat: one gain for every RB");
}

fn ratio_db(x: f64) -> f64 {
    10.0 * x.log10()
}

#[test]
fn gains_over_some_blocks_are_those_blocks_of_the_whole_band() {
    use multiconn_cell::TdlProfile;
    let mut rng = RngStream::derive(3, "range");
    let spreads = [FadingSpread::Flat, FadingSpread::PerRb, FadingSpread::Tdl(TdlProfile::Epa), FadingSpread::Tdl(TdlProfile::Etu)];
    for spread in spreads {
        let f = CellFading::new(spread, 50, 70.0, DEFAULT_SINUSOIDS, &mut rng).unwrap();
        for t in [0.0, 0.0137, 1.5] {
            let mut whole = vec![0.0; 50];
            f.gains_db(t, &mut whole).unwrap();
            for rbs in [0..50, 10..23, 49..50, 7..7] {
                let mut part = vec![99.0; 50];
                f.gains_db_in(t, rbs.clone(), &mut part).unwrap();
                for k in 0..50 {
                    let want = if rbs.contains(&k) { whole[k] } else { 99.0 };
                    assert_eq!(part[k].to_bits(), want.to_bits(), "{spread:?} at {t} s, RB {k} of {rbs:?}");
                }
            }
        }
        let mut out = vec![0.0; 50];
        assert!(f.gains_db_in(0.0, 40..51, &mut out).is_err());
    }
}

/// Flat and per-RB Rayleigh fading asked TTI after TTI (the phasors advanced by rotation, as a
/// cell asks) give the direct evaluation's gains to 10⁻¹⁰ of the mean power, over 20 000 TTIs
/// with gaps and parts of the band, at a pedestrian and a high-speed Doppler.
#[test]
fn gains_advanced_tti_by_tti_are_the_direct_ones() {
    for spread in [FadingSpread::Flat, FadingSpread::PerRb] {
        for fd in [5.36, 300.0] {
            let mut stepped = CellFading::new(spread, 50, fd, DEFAULT_SINUSOIDS, &mut RngStream::derive(3, "steps")).unwrap();
            let direct = stepped.clone();
            let (mut fast, mut exact) = (vec![0.0; 50], vec![0.0; 50]);
            let mut worst: f64 = 0.0;
            let mut n = 0u64;
            while n < 20_000 {
                let t_s = (n * 1_000_000) as f64 / 1e9;
                // Now and then only part of the band (an uplink allocation).
                let rbs = if n % 7 == 3 { 10..20 } else { 0..50 };
                stepped.gains_db_at_tti(n, t_s, rbs.clone(), &mut fast).unwrap();
                direct.gains_db_in(t_s, rbs.clone(), &mut exact).unwrap();
                let linear = |db: f64| 10f64.powf(db / 10.0);
                worst = fast[rbs.clone()].iter().zip(&exact[rbs]).map(|(&a, &b)| (linear(a) - linear(b)).abs()).fold(worst, f64::max);
                n += if n % 997 == 0 { 37 } else { 1 };
            }
            assert!(worst < 1e-10, "{}, {fd} Hz: largest difference {worst:e} of the mean power", spread.name());
        }
    }
}
