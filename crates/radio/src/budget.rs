//! Pieces of a downlink link budget: the reference-signal power per resource element of an LTE
//! carrier and the sector antenna pattern of 3GPP TR 36.814 (Table A.2.1.1-2), as the
//! synthetic drive test uses them (multi-operator reference §5.3).
//!
//! RSRP = P_RE + G_BS + A(φ) − L_cable − PL − S − L_pen, with P_RE = P_tx − 10·log10(12·N_RB)
//! (the transmit power spread evenly over every subcarrier, no reference-signal boost): 46 dBm
//! over 50 RB (10 MHz) is 18.2 dBm.

use serde::{Deserialize, Serialize};

use crate::error::{check_range, RadioError};

/// LTE channel bandwidths (MHz) and their resource blocks (TS 36.101 Table 5.6-1).
pub const LTE_BANDWIDTHS: [(f64, u32); 6] = [(1.4, 6), (3.0, 15), (5.0, 25), (10.0, 50), (15.0, 75), (20.0, 100)];

/// Resource blocks of an LTE carrier of `bandwidth_mhz`; an error names `field` otherwise.
pub fn resource_blocks(bandwidth_mhz: f64, field: &str) -> Result<u32, RadioError> {
    LTE_BANDWIDTHS
        .iter()
        .find(|(b, _)| *b == bandwidth_mhz)
        .map(|(_, n)| *n)
        .ok_or_else(|| RadioError::out_of_range(field, bandwidth_mhz, "an LTE channel bandwidth: 1.4, 3, 5, 10, 15 or 20 MHz"))
}

/// Reference-signal EPRE, dBm: `tx_power_dbm` − 10·log10(12·`n_rb`).
pub fn rs_epre_dbm(tx_power_dbm: f64, n_rb: u32) -> f64 {
    tx_power_dbm - 10.0 * (12.0 * n_rb as f64).log10()
}

/// A sector antenna's horizontal pattern (vertical pattern ignored).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SectorAntenna {
    /// Boresight gain minus cable loss, dB (14).
    pub gain_db: f64,
    /// Half-power beamwidth φ3dB, degrees (70).
    pub beamwidth_deg: f64,
    /// Front-to-back limit A_m, dB (25).
    pub max_attenuation_db: f64,
}

impl Default for SectorAntenna {
    fn default() -> SectorAntenna {
        SectorAntenna { gain_db: 14.0, beamwidth_deg: 70.0, max_attenuation_db: 25.0 }
    }
}

impl SectorAntenna {
    /// A(φ) = −min(12·(φ/φ3dB)², A_m), dB, φ in degrees off boresight (any sign, any turn).
    pub fn pattern_db(&self, off_boresight_deg: f64) -> f64 {
        let phi = wrap_deg(off_boresight_deg);
        -(12.0 * (phi / self.beamwidth_deg).powi(2)).min(self.max_attenuation_db)
    }

    /// Gain towards a direction `off_boresight_deg` off boresight: gain + A(φ), dB.
    pub fn gain_towards_db(&self, off_boresight_deg: f64) -> f64 {
        self.gain_db + self.pattern_db(off_boresight_deg)
    }

    pub fn validate(&self, field: &str) -> Result<(), RadioError> {
        check_range(&format!("{field}.gain_db"), self.gain_db, -50.0, 50.0, "dB")?;
        check_range(&format!("{field}.beamwidth_deg"), self.beamwidth_deg, 1.0, 360.0, "degrees")?;
        check_range(&format!("{field}.max_attenuation_db"), self.max_attenuation_db, 0.0, 100.0, "dB")
    }
}

/// An angle brought into [−180, 180) degrees.
pub fn wrap_deg(deg: f64) -> f64 {
    (deg + 180.0).rem_euclid(360.0) - 180.0
}
