//! The approximate maximum data rate of one NR carrier, TS 38.306 §4.1.2:
//! ν · Q_m · f · R_max · (N_PRB · 12 / T_s^μ) · (1 − OH), with R_max = 948/1024 and the
//! overhead OH of the frequency range and direction. TDD is not in the formula: multiply by
//! the pattern's symbol share ([`crate::nr::tdd::Duplex::dl_symbol_share`]).

use crate::nr::bandwidth::FrequencyRange;
use crate::nr::numerology::Numerology;
use crate::tables::Modulation;

/// The highest code rate the formula assumes, 948/1024.
pub const R_MAX: f64 = 948.0 / 1024.0;

/// The overhead OH^(j) of TS 38.306 §4.1.2: 0.14 (FR1) or 0.18 (FR2) downlink, 0.08 (FR1) or
/// 0.10 (FR2) uplink.
pub fn overhead(range: FrequencyRange, downlink: bool) -> f64 {
    match (range, downlink) {
        (FrequencyRange::Fr1, true) => 0.14,
        (FrequencyRange::Fr2, true) => 0.18,
        (FrequencyRange::Fr1, false) => 0.08,
        (FrequencyRange::Fr2, false) => 0.10,
    }
}

/// The peak rate in bit/s of one carrier: `layers` · Q_m · `scaling` · R_max · `n_prb` · 12 /
/// T_s^μ · (1 − `overhead`), T_s^μ = [`Numerology::mean_symbol_s`]. `scaling` is the factor f
/// (1, 0.8, 0.75 or 0.4) and `overhead` the OH of [`overhead`]; the formula is evaluated as
/// given (no input is refused).
pub fn peak_rate_bps(layers: u8, modulation: Modulation, scaling: f64, n_prb: u16, numerology: Numerology, overhead: f64) -> f64 {
    let per_symbol = f64::from(layers) * f64::from(modulation.order()) * scaling * R_MAX * f64::from(n_prb) * 12.0;
    per_symbol / numerology.mean_symbol_s() * (1.0 - overhead)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worked_examples_of_the_reference() {
        let fr1 = FrequencyRange::Fr1;
        let fr2 = FrequencyRange::Fr2;
        let mu = |m| Numerology::new(m).unwrap();
        let cases = [
            (4, Modulation::Qam256, 273, mu(1), overhead(fr1, true), 2337.0),
            (2, Modulation::Qam256, 273, mu(1), overhead(fr1, true), 1168.5),
            (2, Modulation::Qam256, 106, mu(0), overhead(fr1, true), 226.9),
            (1, Modulation::Qam64, 273, mu(1), overhead(fr1, false), 468.8),
            (2, Modulation::Qam64, 264, mu(3), overhead(fr2, true), 3232.3),
        ];
        for (layers, m, n_prb, num, oh, mbps) in cases {
            let got = peak_rate_bps(layers, m, 1.0, n_prb, num, oh) / 1e6;
            assert!((got - mbps).abs() < 0.05, "{layers} layers {m:?} {n_prb} PRB μ {}: {got} vs {mbps}", num.mu());
        }
        assert_eq!(overhead(fr2, false), 0.10);
        // The scaling factor is linear.
        let full = peak_rate_bps(2, Modulation::Qam64, 1.0, 100, mu(1), 0.14);
        assert!((peak_rate_bps(2, Modulation::Qam64, 0.75, 100, mu(1), 0.14) - 0.75 * full).abs() < 1e-3);
    }
}
