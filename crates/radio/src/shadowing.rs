//! Log-normal shadowing that is correlated along a route (Gudmundson, "Correlation model for
//! shadow fading in mobile radio systems", Electronics Letters 27(23), 1991).
//!
//! The shadowing in dB is Gaussian with an autocorrelation that decays exponentially with the
//! distance moved, R(Δx) = exp(−|Δx| / d_corr). Sampled along a route, this is a first-order
//! autoregressive process: Z ← ρ·Z + √(1 − ρ²)·n with ρ = exp(−Δx / d_corr) and n ~ N(0, 1),
//! which keeps Z ~ N(0, 1) at every step whatever the steps (a stop, Δx = 0, keeps Z). A
//! component's shadowing in dB is σ·Z. Several links can share part of it: with an inter-site
//! correlation c, S = σ·(√c·Z_common + √(1 − c)·Z_site) (TR 36.942 / TR 38.901 practice: c = 0.5).

use multiconn_core::RngStream;
use rand_distr::{Distribution, StandardNormal};

/// The lag-one correlation of the process for a step of `step_m`: exp(−step / d_corr).
pub fn correlation(step_m: f64, decorrelation_m: f64) -> f64 {
    (-step_m.abs() / decorrelation_m).exp()
}

/// A unit-variance Gudmundson process with its own random stream.
#[derive(Clone, Debug)]
pub struct Gudmundson {
    z: f64,
    decorrelation_m: f64,
    rng: RngStream,
}

impl Gudmundson {
    /// Starts in the stationary distribution, N(0, 1).
    pub fn new(mut rng: RngStream, decorrelation_m: f64) -> Gudmundson {
        let z = StandardNormal.sample(&mut rng);
        Gudmundson { z, decorrelation_m, rng }
    }

    /// The current value (unit variance).
    pub fn value(&self) -> f64 {
        self.z
    }

    /// Moves `step_m` along the route and returns the new value.
    pub fn advance(&mut self, step_m: f64) -> f64 {
        let rho = correlation(step_m, self.decorrelation_m);
        let n: f64 = StandardNormal.sample(&mut self.rng);
        self.z = rho * self.z + (1.0 - rho * rho).sqrt() * n;
        self.z
    }
}

/// Shared and own parts combined: σ·(√c·common + √(1 − c)·own), dB.
pub fn combine(sigma_db: f64, inter_site_correlation: f64, common: f64, own: f64) -> f64 {
    sigma_db * (inter_site_correlation.sqrt() * common + (1.0 - inter_site_correlation).sqrt() * own)
}
