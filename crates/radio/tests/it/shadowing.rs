//! Gudmundson shadowing: unit variance whatever the steps, exponential autocorrelation in
//! distance, a stop keeps the value.

use multiconn_core::RngStream;
use multiconn_radio::shadowing::*;

#[test]
fn the_process_has_unit_variance_and_exponential_correlation() {
    let d_corr = 50.0;
    let step = 12.5; // 45 km/h, 1 s
    let mut g = Gudmundson::new(RngStream::derive(9, "shadow-test"), d_corr);
    let n = 200_000;
    let z: Vec<f64> = (0..n).map(|_| g.advance(step)).collect();
    let mean = z.iter().sum::<f64>() / n as f64;
    let var = z.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    assert!(mean.abs() < 0.05, "mean {mean}");
    assert!((var - 1.0).abs() < 0.05, "variance {var}");
    for lag in [1usize, 4, 8] {
        let c = z.windows(lag + 1).map(|w| (w[0] - mean) * (w[lag] - mean)).sum::<f64>() / (n - lag) as f64 / var;
        let expected = (-(lag as f64) * step / d_corr).exp();
        assert!((c - expected).abs() < 0.02, "lag {lag}: {c} vs {expected}");
    }
    assert!((correlation(100.0, 500.0) - 0.8187).abs() < 1e-4, "Gudmundson's 0.82 at 100 m for 500 m");
}

#[test]
fn a_stop_keeps_the_value_and_combining_keeps_sigma() {
    let mut g = Gudmundson::new(RngStream::derive(1, "stop"), 50.0);
    let v = g.value();
    assert_eq!(g.advance(0.0), v);
    assert_eq!(combine(6.0, 0.5, 1.0, 1.0), 6.0 * 2f64.sqrt());
    assert_eq!(combine(6.0, 1.0, 0.5, 9.0), 3.0);
    assert_eq!(combine(6.0, 0.0, 9.0, 0.5), 3.0);
}
