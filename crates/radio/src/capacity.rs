//! SINR from received powers and the truncated, down-scaled Shannon capacity of an LTE cell.
//!
//! Follows the multi-operator study (Krämer et al. 2022, §3.1 and Table 1) as restated in the
//! multi-operator reference §1:
//!
//! ```text
//! SINR = RSRP_s / ( QL · Σ_{i ∈ I(s)} RSRP_i + N )        all powers in mW
//! B    = f · min( c15 , C · log2(1 + γ · SINR) )           bit/s, 0 below the minimum SINR
//! ```
//!
//! RSRP is a power per resource element (one 15 kHz subcarrier), so the noise N is per resource
//! element too: the study's −132.24 dBm (= −174 dBm/Hz + 10·log10(15 kHz)) plus the UE noise
//! figure, 7 dB, i.e. −125.24 dBm = 2.992·10⁻¹³ mW (reference §1.2). Noise over the whole
//! channel (−104 dBm at 10 MHz) would be wrong by 28 dB.
//!
//! A carrier may have its own channel bandwidth ([`CapacityParams::carrier_bandwidth_mhz`],
//! reference §1.4 item 6): B and the cap scale with that carrier's f, while the noise stays per
//! resource element, so the SINR of a cell does not depend on its carrier's bandwidth.
//!
//! The same functions serve a cell model that works with total received powers: give
//! [`sinr`] powers and noise over the same bandwidth (see [`crate::units::receiver_noise_dbm`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::budget::resource_blocks;
use crate::error::{check_above, check_range, RadioError};
use crate::units::{dbm_to_mw, ratio_to_db};

/// Which cells count as interferers of a serving cell (reference §1.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interference {
    /// Every other visible cell of the second, whatever its operator or carrier — the reading
    /// that reproduces the study's Table 3.
    #[default]
    AllVisible,
    /// Only the other visible cells of the serving cell's carrier (operator, EARFCN): the
    /// physically standard co-channel model; near-cap capacities at 10 % load.
    SameCarrier,
}

/// Every constant of the study's Table 1, plus the interference set and an optional SINR floor.
///
/// `Default` is the study. Deserializes from a table in which every key is optional and unknown
/// keys are refused, so a scenario or a command line can override any one of them; call
/// [`CapacityParams::validate`] on values from a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CapacityParams {
    /// QL, the network load: the fraction of the interferers' resource elements that are
    /// active (0.10). In [0, 1].
    pub load: f64,
    /// N_thermal, thermal noise per resource element, in dBm (−132.24, Table 1; the exact
    /// −174 + 10·log10(15 000) is −132.239).
    pub thermal_noise_dbm: f64,
    /// NF_UE, the UE noise figure, in dB (7), added to the thermal noise in dB.
    pub ue_noise_figure_db: f64,
    /// f, the channel bandwidth, in Hz (10 MHz). Capacities scale with it; the noise does not
    /// (it is per resource element).
    pub bandwidth_hz: f64,
    /// Per-carrier channel bandwidths in MHz, keyed by EARFCN, replacing `bandwidth_hz` for
    /// those carriers (empty: every carrier has `bandwidth_hz`, as in the study). Each must be
    /// an LTE channel bandwidth: 1.4, 3, 5, 10, 15 or 20 MHz. Only B and the cap scale; the
    /// noise is per resource element whatever the bandwidth.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "earfcn_keys")]
    pub carrier_bandwidth_mhz: BTreeMap<u32, f64>,
    /// C, the bandwidth efficiency: down-scaling of the Shannon formula (0.9449).
    pub bandwidth_efficiency: f64,
    /// γ, the SINR efficiency: scaling of the SINR inside the logarithm (0.4852).
    pub sinr_efficiency: f64,
    /// c15, the maximum spectral efficiency: that of CQI 15 (64QAM, code rate 948/1024,
    /// TS 36.213), in bit/s/Hz (5.5547). The capacity is capped at f · c15.
    pub max_spectral_efficiency: f64,
    /// Below this SINR (dB) the capacity is zero. `None` (the study): no floor. TR 36.942
    /// Annex A's truncated Shannon uses −10 dB.
    pub min_sinr_db: Option<f64>,
    /// Which cells interfere.
    pub interference: Interference,
}

impl Default for CapacityParams {
    fn default() -> CapacityParams {
        CapacityParams {
            load: 0.10,
            thermal_noise_dbm: -132.24,
            ue_noise_figure_db: 7.0,
            bandwidth_hz: 10e6,
            carrier_bandwidth_mhz: BTreeMap::new(),
            bandwidth_efficiency: 0.9449,
            sinr_efficiency: 0.4852,
            max_spectral_efficiency: 5.5547,
            min_sinr_db: None,
            interference: Interference::AllVisible,
        }
    }
}

impl CapacityParams {
    /// Checks every field; the error names the field (`capacity.<name>`) and its range.
    pub fn validate(&self) -> Result<(), RadioError> {
        check_range("capacity.load", self.load, 0.0, 1.0, "")?;
        check_range("capacity.thermal_noise_dbm", self.thermal_noise_dbm, -250.0, 0.0, "dBm")?;
        check_range("capacity.ue_noise_figure_db", self.ue_noise_figure_db, 0.0, 40.0, "dB")?;
        check_above("capacity.bandwidth_hz", self.bandwidth_hz, 0.0, 1e10, "Hz")?;
        for (earfcn, &mhz) in &self.carrier_bandwidth_mhz {
            resource_blocks(mhz, &format!("capacity.carrier_bandwidth_mhz.{earfcn}"))?;
        }
        check_above("capacity.bandwidth_efficiency", self.bandwidth_efficiency, 0.0, 1.0, "")?;
        check_above("capacity.sinr_efficiency", self.sinr_efficiency, 0.0, 10.0, "")?;
        check_above("capacity.max_spectral_efficiency", self.max_spectral_efficiency, 0.0, 100.0, "bit/s/Hz")?;
        if let Some(m) = self.min_sinr_db {
            check_range("capacity.min_sinr_db", m, -100.0, 100.0, "dB")?;
        }
        Ok(())
    }

    /// The noise term N (thermal + UE noise figure), in dBm per resource element.
    pub fn noise_dbm(&self) -> f64 {
        self.thermal_noise_dbm + self.ue_noise_figure_db
    }

    /// The noise term N, in mW.
    pub fn noise_mw(&self) -> f64 {
        dbm_to_mw(self.noise_dbm())
    }

    /// Linear SINR of a serving power against the sum of the interferers' powers, all in mW:
    /// `serving / (load · interference + N)`.
    pub fn sinr(&self, serving_mw: f64, interference_mw: f64) -> f64 {
        sinr(serving_mw, interference_mw, self.load, self.noise_mw())
    }

    /// Linear SINR of a serving RSRP against interferers' RSRPs, all in dBm (summed in mW).
    pub fn sinr_dbm(&self, serving_dbm: f64, interferers_dbm: &[f64]) -> f64 {
        let interference: f64 = interferers_dbm.iter().map(|&r| dbm_to_mw(r)).sum();
        self.sinr(dbm_to_mw(serving_dbm), interference)
    }

    /// Capacity in bit/s at linear SINR `sinr` over this channel's bandwidth.
    pub fn capacity_bps(&self, sinr: f64) -> f64 {
        self.capacity_bps_over(sinr, self.bandwidth_hz)
    }

    /// Capacity in Mbit/s at linear SINR `sinr`.
    pub fn capacity_mbps(&self, sinr: f64) -> f64 {
        self.capacity_bps(sinr) / 1e6
    }

    /// The channel bandwidth f of carrier `earfcn`, in Hz: its entry in
    /// `carrier_bandwidth_mhz`, else `bandwidth_hz`.
    pub fn bandwidth_hz_of(&self, earfcn: u32) -> f64 {
        self.carrier_bandwidth_mhz.get(&earfcn).map_or(self.bandwidth_hz, |mhz| mhz * 1e6)
    }

    /// Capacity in Mbit/s at linear SINR `sinr` on carrier `earfcn` (over its bandwidth).
    pub fn capacity_mbps_on(&self, earfcn: u32, sinr: f64) -> f64 {
        self.capacity_bps_over(sinr, self.bandwidth_hz_of(earfcn)) / 1e6
    }

    /// The cap f · c15 of carrier `earfcn`, in bit/s.
    pub fn max_capacity_bps_on(&self, earfcn: u32) -> f64 {
        self.bandwidth_hz_of(earfcn) * self.max_spectral_efficiency
    }

    /// Capacity in bit/s at linear SINR `sinr` over `bandwidth_hz` (for carriers whose
    /// bandwidth differs from `bandwidth_hz`): `f · min(c15, C · log2(1 + γ · SINR))`, zero below
    /// `min_sinr_db`, and zero for a SINR that is not a non-negative number.
    pub fn capacity_bps_over(&self, sinr: f64, bandwidth_hz: f64) -> f64 {
        if sinr.is_nan() || sinr <= 0.0 {
            return 0.0;
        }
        if let Some(min_db) = self.min_sinr_db {
            if ratio_to_db(sinr) < min_db {
                return 0.0;
            }
        }
        let efficiency =
            (self.bandwidth_efficiency * (self.sinr_efficiency * sinr).ln_1p() / std::f64::consts::LN_2).min(self.max_spectral_efficiency);
        bandwidth_hz * efficiency
    }

    /// The cap f · c15, in bit/s (55.547 Mbit/s with the study's values).
    pub fn max_capacity_bps(&self) -> f64 {
        self.bandwidth_hz * self.max_spectral_efficiency
    }

    /// The linear SINR at which the logarithmic branch reaches the cap:
    /// (2^(c15 / C) − 1) / γ (119.2, i.e. 20.76 dB, with the study's values).
    pub fn sinr_at_cap(&self) -> f64 {
        ((self.max_spectral_efficiency / self.bandwidth_efficiency).exp2() - 1.0) / self.sinr_efficiency
    }
}

/// A map keyed by EARFCN from a file: keys are text in JSON and TOML, so they are read as text
/// and must be whole numbers.
fn earfcn_keys<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<u32, f64>, D::Error> {
    BTreeMap::<String, f64>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| match k.trim().parse::<u32>() {
            Ok(earfcn) => Ok((earfcn, v)),
            Err(_) => Err(serde::de::Error::custom(format!("carrier_bandwidth_mhz: key {k:?} is not an EARFCN (a whole number)"))),
        })
        .collect()
}

/// Linear SINR: `serving_mw / (load · interference_mw + noise_mw)`, every power in mW over the
/// same bandwidth (per resource element for RSRP, or the whole channel for total powers).
pub fn sinr(serving_mw: f64, interference_mw: f64, load: f64, noise_mw: f64) -> f64 {
    serving_mw / (load * interference_mw + noise_mw)
}
