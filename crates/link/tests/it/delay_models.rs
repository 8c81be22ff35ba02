//! Statistical and exact checks of the delay models (seeded, hence deterministic).

use multiconn_core::{Dur, RngStream, Time};
use multiconn_link::delay::{
    parse_delay_series, parse_histogram, DelayModel, DelaySampler, EmpiricalDelay,
};
use std::path::{Path, PathBuf};

const SAMPLES: usize = 1_000_000;

fn data_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn shared_traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/traces")
}

/// Mean and standard deviation (in ns) of `n` draws.
fn moments(n: usize, mut draw: impl FnMut() -> Dur) -> (f64, f64) {
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    for _ in 0..n {
        let x = draw().as_nanos() as f64;
        sum += x;
        sum_sq += x * x;
    }
    let mean = sum / n as f64;
    (mean, (sum_sq / n as f64 - mean * mean).sqrt())
}

fn assert_close(what: &str, measured: f64, expected: f64, relative: f64) {
    let error = (measured - expected).abs() / expected;
    assert!(
        error <= relative,
        "{what}: measured {measured}, expected {expected} (relative error {error:.5} > {relative})"
    );
    println!("{what}: measured {measured:.6}, expected {expected:.6}, relative error {error:.6}");
}

#[test]
fn constant_delay_is_constant_and_its_own_mean() {
    let model = DelayModel::Constant(Dur::from_millis(7));
    let mut rng = RngStream::derive(1, "constant");
    assert!((0..100).all(|i| model.sample(Time(i * 1_000), &mut rng) == Dur::from_millis(7)));
    assert_eq!(model.mean(), Dur::from_millis(7));
}

#[test]
fn normal_with_small_cv_has_the_requested_mean_and_cv() {
    let mean = Dur::from_millis(20);
    let model = DelayModel::Normal { mean, cv: 0.1 };
    let mut rng = RngStream::derive(11, "normal/cv0.1");
    let (m, sd) = moments(SAMPLES, || model.sample(Time::ZERO, &mut rng));
    assert_close("normal cv=0.1 mean (ns)", m, mean.as_nanos() as f64, 0.005);
    assert_close("normal cv=0.1 cv", sd / m, 0.1, 0.02);
    assert_eq!(model.mean(), mean);
}

/// With cv = 0.5, 2.3 % of raw draws are negative and become zero; the expected moments are
/// those of max(X, 0) for X ~ N(mu, (mu/2)^2).
#[test]
fn normal_with_large_cv_matches_the_truncated_moments() {
    let mu = 20e6; // ns
    let sigma = 0.5 * mu;
    let a = mu / sigma; // 2
    let cdf_a = 0.977_249_868_051_820_8; // Phi(2)
    let pdf_a = (-a * a / 2.0f64).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let expected_mean = mu * cdf_a + sigma * pdf_a;
    let expected_second = (mu * mu + sigma * sigma) * cdf_a + mu * sigma * pdf_a;
    let expected_sd = (expected_second - expected_mean * expected_mean).sqrt();

    let model = DelayModel::Normal {
        mean: Dur::from_millis(20),
        cv: 0.5,
    };
    let mut rng = RngStream::derive(12, "normal/cv0.5");
    let mut zeros = 0usize;
    let (m, sd) = moments(SAMPLES, || {
        let d = model.sample(Time::ZERO, &mut rng);
        zeros += (d == Dur::ZERO) as usize;
        d
    });
    assert_close("normal cv=0.5 truncated mean (ns)", m, expected_mean, 0.005);
    assert_close(
        "normal cv=0.5 truncated cv",
        sd / m,
        expected_sd / expected_mean,
        0.02,
    );
    // The truncation really happens, at the rate Phi(-2).
    let p_zero = 1.0 - cdf_a;
    let se = (p_zero * (1.0 - p_zero) / SAMPLES as f64).sqrt();
    let share = zeros as f64 / SAMPLES as f64;
    assert!(
        (share - p_zero).abs() < 4.0 * se,
        "share of zero delays {share}, expected {p_zero}"
    );
}

/// The histogram mean computed straight from the file text, bins at their midpoints and the
/// last bin as wide as the one before.
fn independent_histogram_mean_ms(text: &str) -> f64 {
    let rows: Vec<(f64, f64)> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<f64> = l
                .split(['\t', ',', ' '])
                .filter(|s| !s.is_empty())
                .map(|s| s.trim_end_matches("ms").parse().unwrap())
                .collect();
            (cols[0], cols[1])
        })
        .collect();
    let n = rows.len();
    let width = |i: usize| {
        if i + 1 < n {
            rows[i + 1].0 - rows[i].0
        } else {
            rows[n - 1].0 - rows[n - 2].0
        }
    };
    let total: f64 = rows.iter().map(|r| r.1).sum();
    (0..n)
        .map(|i| rows[i].1 * (rows[i].0 + width(i) / 2.0))
        .sum::<f64>()
        / total
}

/// Draws from the histogram and checks the mean, the share of every bin (within 5 standard
/// errors) and that no draw lands outside the support or in a zero-weight bin.
fn check_empirical_sampler(name: &str, text: &str, seed: u64) {
    let hist = parse_histogram(text, name).unwrap();
    let expected_mean_ms = independent_histogram_mean_ms(text);
    let model = DelayModel::Empirical(hist.clone());
    assert_close(
        &format!("{name}: model mean (ms)"),
        model.mean().as_millis_f64(),
        expected_mean_ms,
        1e-6,
    );

    let sampler = DelaySampler::new(model);
    let mut rng = RngStream::derive(seed, name);
    let mut hits = vec![0usize; hist.lower_ms.len()];
    let (mean_ns, _) = moments(SAMPLES, || {
        let d = sampler.sample(Time::ZERO, &mut rng);
        hits[bin_of(&hist, d.as_millis_f64())] += 1;
        d
    });
    assert_close(
        &format!("{name}: sampled mean (ms)"),
        mean_ns / 1e6,
        expected_mean_ms,
        0.01,
    );
    check_bin_shares(name, &hist, &hits);
}

fn bin_of(hist: &EmpiricalDelay, ms: f64) -> usize {
    let n = hist.lower_ms.len();
    let upper = hist.lower_ms[n - 1] + (hist.lower_ms[n - 1] - hist.lower_ms[n - 2]);
    // Allow for the nanosecond rounding of the drawn delay.
    assert!(
        ms >= hist.lower_ms[0] - 1e-6 && ms <= upper + 1e-6,
        "draw {ms} ms outside the histogram"
    );
    hist.lower_ms
        .partition_point(|&l| l <= ms + 1e-9)
        .saturating_sub(1)
}

fn check_bin_shares(name: &str, hist: &EmpiricalDelay, hits: &[usize]) {
    let total: f64 = hist.weights.iter().sum();
    for (i, (&w, &h)) in hist.weights.iter().zip(hits).enumerate() {
        if w == 0.0 {
            assert_eq!(h, 0, "{name}: zero-weight bin {i} was drawn {h} times");
            continue;
        }
        let p = w / total;
        let se = (p * (1.0 - p) / SAMPLES as f64).sqrt();
        let share = h as f64 / SAMPLES as f64;
        // Bins near a boundary may swap a few draws through nanosecond rounding.
        assert!(
            (share - p).abs() <= 5.0 * se + 1e-5,
            "{name}: bin {i} share {share}, expected {p}"
        );
    }
}

#[test]
fn empirical_sampler_matches_synthetic_histograms() {
    for (i, name) in [
        "delay_hist_counts.tsv",
        "delay_hist_frequencies.csv",
        "delay_hist_spaces.txt",
    ]
    .iter()
    .enumerate()
    {
        check_empirical_sampler(name, &data_file(name), 100 + i as u64);
    }
}

#[test]
fn empirical_sampler_matches_deterministic6g_histograms() {
    let root = shared_traces().join("deterministic6g");
    if !root.is_dir() {
        println!("skipping: {} is absent", root.display());
        return;
    }
    let files = [
        "PD-Wireless-5G-2a/raw/5G-midband-Downlink_PD-Wireless-5G-2a.csv",
        "PD-Wireless-5G-2a/raw/5G-midband-Uplink_PD-Wireless-5G-2a.csv",
        "PD-Wireless-5G-3a/raw/5G-URLLC-mmW-Downlink_PD-Wireless-5G-3a.csv",
        "PD-Wireless-5G-3a/raw/5G-URLLC-mmW-Uplink_PD-Wireless-5G-3a.csv",
        "PD-Wireless-5G-4a/raw/5G-mmW-DL-histData.csv",
        "PD-Wireless-5G-4a/raw/5G-mmW-UL-histData.csv",
    ];
    for (i, file) in files.iter().enumerate() {
        let path = root.join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            println!("skipping {}: not readable", path.display());
            continue;
        };
        check_empirical_sampler(file, &text, 200 + i as u64);
    }
}

#[test]
fn a_single_bin_histogram_is_a_point_mass() {
    let model = DelayModel::Empirical(parse_histogram("4.5\t3\n", "one-bin").unwrap());
    let mut rng = RngStream::derive(3, "one-bin");
    assert!((0..1000).all(|_| model.sample(Time::ZERO, &mut rng) == Dur::from_micros(4500)));
    assert_eq!(model.mean(), Dur::from_micros(4500));
}

#[test]
fn direct_sampling_and_the_prepared_sampler_draw_the_same_values() {
    let model = DelayModel::Empirical(
        parse_histogram(&data_file("delay_hist_counts.tsv"), "counts").unwrap(),
    );
    let sampler = DelaySampler::new(model.clone());
    let (mut a, mut b) = (RngStream::derive(5, "same"), RngStream::derive(5, "same"));
    for _ in 0..1000 {
        assert_eq!(
            model.sample(Time::ZERO, &mut a),
            sampler.sample(Time::ZERO, &mut b)
        );
    }
}

#[test]
fn series_interpolates_linearly_and_holds_outside_its_span() {
    let series = parse_delay_series(&data_file("delay_series.csv"), "series").unwrap();
    let model = DelayModel::Series(series);
    let mut rng = RngStream::derive(1, "series");
    let at = |s: f64, rng: &mut RngStream| model.sample(Time::from_secs_f64(s), rng);
    assert_eq!(at(0.0, &mut rng), Dur::from_millis(10));
    assert_eq!(at(0.5, &mut rng), Dur::from_millis(15));
    assert_eq!(at(0.75, &mut rng), Dur::from_micros(17_500));
    assert_eq!(at(1.5, &mut rng), Dur::from_millis(20));
    // A repeated time is a step; at the step the later point applies.
    assert_eq!(at(1.999_999_999, &mut rng), Dur::from_millis(20));
    assert_eq!(at(2.0, &mut rng), Dur::from_millis(40));
    assert_eq!(at(2.5, &mut rng), Dur::from_millis(25));
    assert_eq!(at(3.0, &mut rng), Dur::from_millis(10));
    assert_eq!(at(1000.0, &mut rng), Dur::from_millis(10));
    // Time average over [0, 3] s: (15 + 20 + 25) / 3 ms.
    assert_eq!(model.mean(), Dur::from_millis(20));
}

#[test]
fn series_holds_its_first_value_before_it_starts() {
    let series = parse_delay_series("time_s,delay_ms\n5,8\n6,4\n", "late-start").unwrap();
    let model = DelayModel::Series(series);
    let mut rng = RngStream::derive(1, "late");
    assert_eq!(model.sample(Time::ZERO, &mut rng), Dur::from_millis(8));
    assert_eq!(
        model.sample(Time::from_secs_f64(5.25), &mut rng),
        Dur::from_millis(7)
    );
    assert_eq!(model.mean(), Dur::from_millis(6));
}
