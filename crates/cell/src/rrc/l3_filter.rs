//! The layer-3 filter of a measured quantity, TS 38.331 §5.5.3.2 (TS 36.331 §5.5.3.2 has the
//! same form): F_n = (1 − a)·F_{n−1} + a·M_n, F_0 = M_1 (the first measurement is taken as it
//! is), a = 1/2^(k/4) with k the `filterCoefficient` of the quantity (`FilterCoefficient`:
//! fc0…fc9, fc11, fc13, fc15, fc17, fc19; default fc4, a = 1/2; fc0, a = 1, is no filtering).
//! The filter runs on the logarithmic value as given (dBm for RSRP, dB for RSRQ and SINR), as
//! the specification says for these quantities.
//!
//! k assumes one input sample per nominal period X (one L1 measurement period of TS 38.133 in
//! NR, 200 ms in LTE). When samples arrive every T_s ≠ X, the filter uses
//! a' = 1 − (1 − a)^(T_s/X), so that n·X/T_s samples of a step weigh the old value by
//! (1 − a)^n, as n samples at X would: the time constant is kept. The specification only asks
//! that the filter keep its time characteristics at other input rates; this formula is a
//! modelling choice, not specification text. With T_s = X, a' = a exactly.

use crate::error::CellError;

/// The `FilterCoefficient` values k of TS 38.331 (fc0 … fc19), in increasing order.
pub const FILTER_COEFFICIENTS: [u8; 15] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 17, 19];

/// The default filter coefficient k of TS 38.331 (fc4, a = 1/2).
pub const DEFAULT_FILTER_COEFFICIENT: u8 = 4;

/// The nominal sample period X of LTE's layer-3 filter (TS 36.331 §5.5.3.2), ns: 200 ms.
pub const LTE_NOMINAL_PERIOD_NS: u64 = 200_000_000;

const FILTER_COEFFICIENTS_TEXT: &str = "one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 17, 19 (TS 38.331 FilterCoefficient)";

/// The weight a = 1/2^(k/4) of filter coefficient `k`, or an error naming `filter_coefficient`
/// when `k` is not one of [`FILTER_COEFFICIENTS`].
pub fn filter_weight(k: u8) -> Result<f64, CellError> {
    if FILTER_COEFFICIENTS.contains(&k) {
        Ok(0.5_f64.powf(f64::from(k) / 4.0))
    } else {
        Err(CellError::out_of_range("rrc.filter_coefficient", f64::from(k), FILTER_COEFFICIENTS_TEXT))
    }
}

/// The layer-3 filter of one quantity of one cell: fed each new L1 sample in dB (or dBm), it
/// returns the filtered value.
#[derive(Clone, Debug, PartialEq)]
pub struct L3Filter {
    k: u8,
    /// The weight of a new sample at the actual sample period, a'.
    weight: f64,
    /// F_{n−1}; `None` before the first sample.
    value: Option<f64>,
}

impl L3Filter {
    /// A filter with coefficient `filter_coefficient` (k) whose samples arrive every
    /// `sample_period_ns` (T_s) while k assumes one every `nominal_period_ns` (X). Errors name
    /// `rrc.filter_coefficient` (k not in [`FILTER_COEFFICIENTS`]), `rrc.nominal_period_ns` or
    /// `rrc.sample_period_ns` (zero).
    pub fn new(filter_coefficient: u8, nominal_period_ns: u64, sample_period_ns: u64) -> Result<L3Filter, CellError> {
        let a = filter_weight(filter_coefficient)?;
        if nominal_period_ns == 0 {
            return Err(CellError::out_of_range("rrc.nominal_period_ns", 0.0, "an integer ≥ 1 ns"));
        }
        if sample_period_ns == 0 {
            return Err(CellError::out_of_range("rrc.sample_period_ns", 0.0, "an integer ≥ 1 ns"));
        }
        let weight = if sample_period_ns == nominal_period_ns {
            a
        } else {
            // a' = 1 − (1 − a)^(T_s/X); for a = 1 (fc0) this is 1 again.
            let ratio = sample_period_ns as f64 / nominal_period_ns as f64;
            1.0 - (1.0 - a).powf(ratio)
        };
        Ok(L3Filter { k: filter_coefficient, weight, value: None })
    }

    /// A filter whose samples arrive at the nominal period (T_s = X, so a' = a).
    pub fn at_nominal_rate(filter_coefficient: u8) -> Result<L3Filter, CellError> {
        L3Filter::new(filter_coefficient, 1, 1)
    }

    /// The filter coefficient k.
    pub fn filter_coefficient(&self) -> u8 {
        self.k
    }

    /// The weight a' given to each new sample (a = 1/2^(k/4) at the nominal rate).
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// Takes the sample `measurement_db` (M_n, dB or dBm) and returns the filtered value F_n
    /// (the sample itself for the first one). A non-finite sample is refused (an error naming
    /// `rrc.measurement`) and leaves the filter as it was.
    pub fn update(&mut self, measurement_db: f64) -> Result<f64, CellError> {
        if !measurement_db.is_finite() {
            return Err(CellError::out_of_range("rrc.measurement", measurement_db, "a finite value in dB or dBm"));
        }
        let f = match self.value {
            None => measurement_db,
            Some(prev) => (1.0 - self.weight) * prev + self.weight * measurement_db,
        };
        self.value = Some(f);
        Ok(f)
    }

    /// The last filtered value, `None` before the first sample.
    pub fn value(&self) -> Option<f64> {
        self.value
    }

    /// Forgets the filtered value: the next sample starts the filter again (F_0 = M_1), as when
    /// a measurement is (re)configured.
    pub fn reset(&mut self) {
        self.value = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: [f64; 5] = [-80.0, -90.0, -90.0, -90.0, -90.0];

    fn run(f: &mut L3Filter, m: &[f64]) -> Vec<f64> {
        m.iter().map(|&x| f.update(x).unwrap()).collect()
    }

    #[test]
    fn fc4_halves_the_distance_each_sample_as_in_the_reference_vector() {
        let mut f = L3Filter::at_nominal_rate(4).unwrap();
        assert_eq!(f.value(), None);
        let out = run(&mut f, &M);
        let want = [-80.0, -85.0, -87.5, -88.75, -89.375];
        for (o, w) in out.iter().zip(want) {
            assert!((o - w).abs() < 1e-12, "{out:?}");
        }
        assert_eq!(f.value(), Some(out[4]));
        assert_eq!(f.weight(), 0.5);
    }

    #[test]
    fn fc0_does_not_filter() {
        let mut f = L3Filter::at_nominal_rate(0).unwrap();
        assert_eq!(run(&mut f, &M), M.to_vec());
        // Also at another sample rate: a' = 1 stays 1.
        let mut g = L3Filter::new(0, 200_000_000, 50_000_000).unwrap();
        assert_eq!(run(&mut g, &M), M.to_vec());
    }

    #[test]
    fn the_weights_follow_two_to_the_minus_k_over_four() {
        for k in FILTER_COEFFICIENTS {
            let a = filter_weight(k).unwrap();
            assert!((a - 2f64.powf(-f64::from(k) / 4.0)).abs() < 1e-15, "k = {k}");
        }
        assert!((filter_weight(8).unwrap() - 0.25).abs() < 1e-15);
        assert!((filter_weight(19).unwrap() - 0.037_162_722_343_835_02).abs() < 1e-12);
    }

    #[test]
    fn half_the_nominal_period_keeps_the_time_constant() {
        for k in [1u8, 4, 7, 13, 19] {
            let mut nominal = L3Filter::new(k, LTE_NOMINAL_PERIOD_NS, LTE_NOMINAL_PERIOD_NS).unwrap();
            let mut half = L3Filter::new(k, LTE_NOMINAL_PERIOD_NS, LTE_NOMINAL_PERIOD_NS / 2).unwrap();
            assert!(half.weight() < nominal.weight(), "k = {k}");
            nominal.update(-80.0).unwrap();
            half.update(-80.0).unwrap();
            // A step to -90: after each nominal period both filters agree.
            for n in 0..10 {
                let a = nominal.update(-90.0).unwrap();
                half.update(-90.0).unwrap();
                let b = half.update(-90.0).unwrap();
                assert!((a - b).abs() < 1e-12, "k = {k}, period {n}: {a} vs {b}");
            }
        }
        // Twice the nominal period: one sample does what two nominal ones do.
        let mut nominal = L3Filter::at_nominal_rate(4).unwrap();
        let mut double = L3Filter::new(4, 100, 200).unwrap();
        run(&mut nominal, &[-80.0, -90.0, -90.0]);
        let b = run(&mut double, &[-80.0, -90.0])[1];
        assert!((nominal.value().unwrap() - b).abs() < 1e-12);
        assert!((b + 87.5).abs() < 1e-12);
    }

    #[test]
    fn reset_starts_again_from_the_next_sample() {
        let mut f = L3Filter::at_nominal_rate(4).unwrap();
        run(&mut f, &[-80.0, -90.0]);
        f.reset();
        assert_eq!(f.value(), None);
        assert_eq!(f.update(-70.0).unwrap(), -70.0);
        assert_eq!(f.update(-80.0).unwrap(), -75.0);
    }

    #[test]
    fn bad_coefficients_periods_and_samples_are_refused() {
        for k in [10u8, 12, 14, 16, 18, 20, 255] {
            let e = L3Filter::new(k, 1, 1).unwrap_err().to_string();
            assert!(e.contains("filter_coefficient") && e.contains("11, 13, 15, 17, 19"), "{e}");
            assert!(filter_weight(k).is_err());
        }
        let e = L3Filter::new(4, 0, 1).unwrap_err().to_string();
        assert!(e.contains("nominal_period_ns"), "{e}");
        let e = L3Filter::new(4, 1, 0).unwrap_err().to_string();
        assert!(e.contains("sample_period_ns"), "{e}");
        let mut f = L3Filter::at_nominal_rate(4).unwrap();
        f.update(-80.0).unwrap();
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = f.update(bad).unwrap_err().to_string();
            assert!(e.contains("measurement"), "{e}");
        }
        assert_eq!(f.value(), Some(-80.0));
    }
}
