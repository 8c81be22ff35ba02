//! NR numerologies μ = 0..=3 with the normal cyclic prefix (TS 38.211 §4.2 Table 4.2-1 and
//! §4.3.2 Table 4.3.2-1): subcarrier spacing 15·2^μ kHz, 14 symbols per slot, 2^μ slots per
//! 1 ms subframe and 10·2^μ slots per 10 ms frame. The 240/480/960 kHz numerologies (SSB only
//! or FR2-2) and the extended cyclic prefix of μ = 2 are not modelled.

use crate::error::CellError;

/// OFDM symbols per slot with the normal cyclic prefix.
pub const SYMBOLS_PER_SLOT: u8 = 14;

/// The largest numerology modelled (120 kHz).
const MAX_MU: u8 = 3;

/// A numerology μ (0..=3): subcarrier spacing 15·2^μ kHz.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Numerology(u8);

impl Numerology {
    /// The numerology μ, 0..=3 (15, 30, 60 or 120 kHz); others are refused.
    pub fn new(mu: u8) -> Result<Numerology, CellError> {
        if mu <= MAX_MU {
            Ok(Numerology(mu))
        } else {
            Err(CellError::out_of_range("cell.numerology", mu as f64, "0, 1, 2 or 3"))
        }
    }

    /// The numerology of subcarrier spacing `scs_khz`: 15, 30, 60 or 120 kHz.
    pub fn from_scs_khz(scs_khz: u32) -> Result<Numerology, CellError> {
        match scs_khz {
            15 => Ok(Numerology(0)),
            30 => Ok(Numerology(1)),
            60 => Ok(Numerology(2)),
            120 => Ok(Numerology(3)),
            _ => Err(CellError::out_of_range("cell.scs_khz", scs_khz as f64, "15, 30, 60 or 120 kHz")),
        }
    }

    /// μ.
    pub fn mu(self) -> u8 {
        self.0
    }

    /// Subcarrier spacing Δf = 15·2^μ kHz.
    pub fn scs_khz(self) -> u32 {
        15 << self.0
    }

    /// Slot length in nanoseconds: 1 ms / 2^μ (1 000 000, 500 000, 250 000 or 125 000).
    pub fn slot_ns(self) -> u64 {
        1_000_000 >> self.0
    }

    /// Slots per 1 ms subframe, 2^μ.
    pub fn slots_per_subframe(self) -> u32 {
        1 << self.0
    }

    /// Slots per 10 ms frame, 10·2^μ.
    pub fn slots_per_frame(self) -> u32 {
        10 << self.0
    }

    /// Mean OFDM symbol duration including the cyclic prefix, T_s^μ = 10⁻³/(14·2^μ) s, as
    /// TS 38.306 §4.1.2 uses it in the peak-rate formula.
    pub fn mean_symbol_s(self) -> f64 {
        1e-3 / (f64::from(SYMBOLS_PER_SLOT) * f64::from(self.slots_per_subframe()))
    }

    /// Bandwidth of one resource block, 12 subcarriers, in Hz (180 kHz at 15 kHz).
    pub fn rb_bandwidth_hz(self) -> f64 {
        12.0 * f64::from(self.scs_khz()) * 1e3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_numerologies_match_table_4_3_2_1() {
        // (μ, SCS kHz, slot ns, slots per subframe, slots per frame, mean symbol µs)
        let rows = [(0, 15, 1_000_000, 1, 10, 71.43), (1, 30, 500_000, 2, 20, 35.71), (2, 60, 250_000, 4, 40, 17.86), (3, 120, 125_000, 8, 80, 8.93)];
        for (mu, scs, slot, per_sf, per_frame, symbol_us) in rows {
            let n = Numerology::new(mu).unwrap();
            assert_eq!((n.mu(), n.scs_khz(), n.slot_ns(), n.slots_per_subframe(), n.slots_per_frame()), (mu, scs, slot, per_sf, per_frame));
            assert!((n.mean_symbol_s() * 1e6 - symbol_us).abs() < 0.005, "μ {mu}");
            assert_eq!(n.rb_bandwidth_hz(), 12.0 * scs as f64 * 1e3);
            assert_eq!(Numerology::from_scs_khz(scs).unwrap(), n);
            // 14 symbols of the mean duration fill a slot.
            assert!((n.mean_symbol_s() * 14.0 - n.slot_ns() as f64 * 1e-9).abs() < 1e-15);
        }
    }

    #[test]
    fn other_numerologies_are_refused_with_the_allowed_values() {
        for mu in [4, 5, 255] {
            let err = Numerology::new(mu).unwrap_err().to_string();
            assert!(err.contains("cell.numerology") && err.contains("0, 1, 2 or 3"), "{err}");
        }
        let err = Numerology::from_scs_khz(240).unwrap_err().to_string();
        assert!(err.contains("cell.scs_khz = 240") && err.contains("15, 30, 60 or 120"), "{err}");
    }
}
