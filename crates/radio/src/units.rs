//! Power units and thermal noise.
//!
//! Powers are dBm (decibels relative to 1 mW) or mW; ratios are dB or linear. Sums of powers
//! (interference) are always taken in mW, never in dBm. Thermal noise is kT·B: −174 dBm/Hz at
//! 290 K plus 10·log10(B), and a receiver's noise figure (a ratio) adds its dB value
//! (multi-operator reference §1.2).

/// Thermal noise density kT at 290 K, in dBm/Hz.
pub const THERMAL_NOISE_DENSITY_DBM_PER_HZ: f64 = -174.0;

/// LTE subcarrier spacing, in Hz: the bandwidth of one resource element, over which RSRP is
/// measured.
pub const SUBCARRIER_SPACING_HZ: f64 = 15_000.0;

/// mW from dBm: 10^(dBm / 10).
pub fn dbm_to_mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

/// dBm from mW: 10·log10(mW). Zero gives −∞.
pub fn mw_to_dbm(mw: f64) -> f64 {
    10.0 * mw.log10()
}

/// A linear power ratio from dB.
pub fn db_to_ratio(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

/// dB from a linear power ratio. Zero gives −∞.
pub fn ratio_to_db(ratio: f64) -> f64 {
    10.0 * ratio.log10()
}

/// Thermal noise over `bandwidth_hz`, in dBm: −174 + 10·log10(B). Over one 15 kHz resource
/// element this is −132.24 dBm; over 10 MHz, −104.0 dBm.
pub fn thermal_noise_dbm(bandwidth_hz: f64) -> f64 {
    THERMAL_NOISE_DENSITY_DBM_PER_HZ + 10.0 * bandwidth_hz.log10()
}

/// Receiver noise over `bandwidth_hz` with noise figure `noise_figure_db`, in dBm:
/// thermal noise + NF (the receiver adds (F − 1)·kTB of its own, F·kTB in total).
pub fn receiver_noise_dbm(bandwidth_hz: f64, noise_figure_db: f64) -> f64 {
    thermal_noise_dbm(bandwidth_hz) + noise_figure_db
}
