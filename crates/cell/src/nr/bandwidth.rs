//! NR carriers' sizes in resource blocks:
//!
//! * the frequency ranges FR1 (410 MHz – 7.125 GHz, TS 38.101-1 §5.1) and FR2 (24.25 – 71 GHz,
//!   TS 38.101-2 §5.1, FR2-1 and FR2-2 together);
//! * the maximum transmission bandwidth N_RB per channel bandwidth and subcarrier spacing,
//!   TS 38.101-1 Table 5.3.2-1 (FR1: 15/30/60 kHz, 5–100 MHz) and TS 38.101-2 Table 5.3.2-1
//!   (FR2: 60/120 kHz, 50–400 MHz), as transcribed in OAI's `tables_5_3_2` (the 35, 45 and
//!   70 MHz FR1 columns are not included);
//! * the resource-block-group size P of downlink resource allocation type 0, TS 38.214
//!   Table 5.1.2.2.1-1 (the same table serves PUSCH, TS 38.214 Table 6.1.2.2.1-1).

use crate::error::CellError;
use crate::nr::numerology::Numerology;

/// The largest bandwidth part in resource blocks (TS 38.211 §4.4.4.1, 275 RBs).
pub const MAX_RB: u16 = 275;

/// A frequency range (TS 38.101-1 §5.1, TS 38.101-2 §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrequencyRange {
    /// FR1, 410 MHz to 7.125 GHz.
    Fr1,
    /// FR2, 24.25 GHz to 71 GHz (FR2-1 up to 52.6 GHz, FR2-2 above; only FR2-1's 60 and
    /// 120 kHz bandwidth tables are modelled).
    Fr2,
}

impl FrequencyRange {
    /// The frequency range of a carrier at `f` GHz: FR1 for 0.41..=7.125, FR2 for 24.25..=71.
    pub fn of_carrier_ghz(f: f64) -> Result<FrequencyRange, CellError> {
        if (0.41..=7.125).contains(&f) {
            Ok(FrequencyRange::Fr1)
        } else if (24.25..=71.0).contains(&f) {
            Ok(FrequencyRange::Fr2)
        } else {
            Err(CellError::out_of_range("cell.carrier_ghz", f, "in [0.41, 7.125] GHz (FR1) or in [24.25, 71] GHz (FR2)"))
        }
    }
}

const FR1_15_MHZ: [u32; 8] = [5, 10, 15, 20, 25, 30, 40, 50];
const FR1_15_RB: [u16; 8] = [25, 52, 79, 106, 133, 160, 216, 270];
const FR1_30_MHZ: [u32; 12] = [5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 90, 100];
const FR1_30_RB: [u16; 12] = [11, 24, 38, 51, 65, 78, 106, 133, 162, 217, 245, 273];
const FR1_60_MHZ: [u32; 11] = [10, 15, 20, 25, 30, 40, 50, 60, 80, 90, 100];
const FR1_60_RB: [u16; 11] = [11, 18, 24, 31, 38, 51, 65, 79, 107, 121, 135];
const FR2_60_MHZ: [u32; 3] = [50, 100, 200];
const FR2_60_RB: [u16; 3] = [66, 132, 264];
const FR2_120_MHZ: [u32; 4] = [50, 100, 200, 400];
const FR2_120_RB: [u16; 4] = [32, 66, 132, 264];

/// The bandwidth column and N_RB row of Table 5.3.2-1 for a range and SCS; empty when the
/// range has no such SCS (120 kHz in FR1, 15 and 30 kHz in FR2).
fn table(range: FrequencyRange, numerology: Numerology) -> (&'static [u32], &'static [u16]) {
    match (range, numerology.mu()) {
        (FrequencyRange::Fr1, 0) => (&FR1_15_MHZ, &FR1_15_RB),
        (FrequencyRange::Fr1, 1) => (&FR1_30_MHZ, &FR1_30_RB),
        (FrequencyRange::Fr1, 2) => (&FR1_60_MHZ, &FR1_60_RB),
        (FrequencyRange::Fr2, 2) => (&FR2_60_MHZ, &FR2_60_RB),
        (FrequencyRange::Fr2, 3) => (&FR2_120_MHZ, &FR2_120_RB),
        _ => (&[], &[]),
    }
}

/// The channel bandwidths (MHz) Table 5.3.2-1 defines for `range` at `numerology`'s SCS, in
/// increasing order; empty when the range does not use that SCS for data.
pub fn bandwidths_mhz(range: FrequencyRange, numerology: Numerology) -> &'static [u32] {
    table(range, numerology).0
}

/// The maximum transmission bandwidth N_RB of a `bandwidth_mhz` carrier in `range` at
/// `numerology`'s SCS (Table 5.3.2-1), e.g. 273 for 100 MHz at 30 kHz in FR1. An SCS the range
/// does not use is an error naming `cell.numerology`; a bandwidth not in the table is an error
/// naming `cell.bandwidth_mhz` and listing the bandwidths of that SCS.
pub fn n_rb(range: FrequencyRange, numerology: Numerology, bandwidth_mhz: u32) -> Result<u16, CellError> {
    let (mhz, rb) = table(range, numerology);
    if mhz.is_empty() {
        let allowed = match range {
            FrequencyRange::Fr1 => "0, 1 or 2 (15, 30 or 60 kHz) in FR1",
            FrequencyRange::Fr2 => "2 or 3 (60 or 120 kHz) in FR2",
        };
        return Err(CellError::out_of_range("cell.numerology", numerology.mu() as f64, allowed));
    }
    match mhz.iter().position(|&b| b == bandwidth_mhz) {
        Some(i) => Ok(rb[i]),
        None => {
            let list: Vec<String> = mhz.iter().map(u32::to_string).collect();
            let range_name = match range {
                FrequencyRange::Fr1 => "FR1",
                FrequencyRange::Fr2 => "FR2",
            };
            let allowed = format!("one of {} MHz ({range_name} at {} kHz subcarrier spacing)", list.join(", "), numerology.scs_khz());
            Err(CellError::out_of_range("cell.bandwidth_mhz", bandwidth_mhz as f64, &allowed))
        }
    }
}

/// Which column of TS 38.214 Table 5.1.2.2.1-1 the RRC parameter `rbg-Size` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RbgConfig {
    /// Configuration 1 (the smaller groups: 2, 4, 8, 16).
    Config1,
    /// Configuration 2 (4, 8, 16, 16).
    Config2,
}

/// The nominal RBG size P for a bandwidth part of `n_rb` resource blocks (1..=275), TS 38.214
/// Table 5.1.2.2.1-1: 1–36 → 2 / 4, 37–72 → 4 / 8, 73–144 → 8 / 16, 145–275 → 16 / 16
/// (configuration 1 / 2).
pub fn rbg_size(n_rb: u16, config: RbgConfig) -> Result<u16, CellError> {
    let (p1, p2) = match n_rb {
        1..=36 => (2, 4),
        37..=72 => (4, 8),
        73..=144 => (8, 16),
        145..=MAX_RB => (16, 16),
        _ => return Err(CellError::out_of_range("n_rb", n_rb as f64, "an integer in [1, 275] (resource blocks of the bandwidth part)")),
    };
    Ok(match config {
        RbgConfig::Config1 => p1,
        RbgConfig::Config2 => p2,
    })
}

/// The number of RBGs of a bandwidth part of `n_rb` resource blocks (1..=275) that starts at a
/// multiple of P (TS 38.214 §5.1.2.2.1 with N_BWP^start mod P = 0): ⌈n_rb / P⌉, the last group
/// possibly smaller.
pub fn rbg_count(n_rb: u16, config: RbgConfig) -> Result<u16, CellError> {
    Ok(n_rb.div_ceil(rbg_size(n_rb, config)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mu(m: u8) -> Numerology {
        Numerology::new(m).unwrap()
    }

    #[test]
    fn carriers_fall_in_their_frequency_range() {
        for (f, r) in [(0.41, FrequencyRange::Fr1), (3.5, FrequencyRange::Fr1), (7.125, FrequencyRange::Fr1), (24.25, FrequencyRange::Fr2), (28.0, FrequencyRange::Fr2), (71.0, FrequencyRange::Fr2)] {
            assert_eq!(FrequencyRange::of_carrier_ghz(f).unwrap(), r, "{f} GHz");
        }
        for f in [0.0, 0.4, 7.2, 10.0, 24.0, 71.5, f64::NAN, f64::INFINITY, -3.5] {
            let err = FrequencyRange::of_carrier_ghz(f).unwrap_err().to_string();
            assert!(err.contains("cell.carrier_ghz") && err.contains("FR1") && err.contains("FR2"), "{err}");
        }
    }

    #[test]
    fn every_table_row_has_one_n_rb_per_bandwidth_and_both_grow() {
        for range in [FrequencyRange::Fr1, FrequencyRange::Fr2] {
            for m in 0..=3 {
                let (mhz, rb) = table(range, mu(m));
                assert_eq!(mhz.len(), rb.len());
                for i in 1..mhz.len() {
                    assert!(mhz[i] > mhz[i - 1] && rb[i] > rb[i - 1]);
                }
                for (&b, &r) in mhz.iter().zip(rb) {
                    assert_eq!(n_rb(range, mu(m), b).unwrap(), r);
                    // The occupied bandwidth is below the channel bandwidth (guard bands).
                    assert!(r as f64 * mu(m).rb_bandwidth_hz() < b as f64 * 1e6, "{range:?} μ {m} {b} MHz");
                    assert!(r <= MAX_RB);
                }
            }
        }
    }

    #[test]
    fn an_scs_the_range_does_not_use_is_refused() {
        let err = n_rb(FrequencyRange::Fr1, mu(3), 100).unwrap_err().to_string();
        assert!(err.contains("cell.numerology = 3") && err.contains("FR1"), "{err}");
        let err = n_rb(FrequencyRange::Fr2, mu(1), 100).unwrap_err().to_string();
        assert!(err.contains("cell.numerology = 1") && err.contains("2 or 3"), "{err}");
        assert!(bandwidths_mhz(FrequencyRange::Fr2, mu(0)).is_empty());
    }

    #[test]
    fn rbg_size_follows_table_5_1_2_2_1_1() {
        let rows = [(1, 2, 4), (36, 2, 4), (37, 4, 8), (72, 4, 8), (73, 8, 16), (144, 8, 16), (145, 16, 16), (273, 16, 16), (275, 16, 16)];
        for (n, p1, p2) in rows {
            assert_eq!(rbg_size(n, RbgConfig::Config1).unwrap(), p1, "{n} RBs");
            assert_eq!(rbg_size(n, RbgConfig::Config2).unwrap(), p2, "{n} RBs");
        }
        assert_eq!(rbg_count(273, RbgConfig::Config1).unwrap(), 18);
        assert_eq!(rbg_count(51, RbgConfig::Config1).unwrap(), 13);
        assert_eq!(rbg_count(52, RbgConfig::Config2).unwrap(), 7);
        for n in [0, 276, u16::MAX] {
            let err = rbg_size(n, RbgConfig::Config1).unwrap_err().to_string();
            assert!(err.contains("n_rb") && err.contains("[1, 275]"), "{err}");
            assert!(rbg_count(n, RbgConfig::Config2).is_err());
        }
    }
}
