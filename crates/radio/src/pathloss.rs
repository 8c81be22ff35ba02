//! Path-loss models, in dB, for the synthetic drive test and the LTE cell.
//!
//! * **free space** (Friis): 20·log10(4π·d·f/c);
//! * **log-distance** (ns-3 `LogDistancePropagationLossModel`): L0 + 10·n·log10(d/d0), L0 at and
//!   below d0 — the LTE-cell study's 46.6777 dB at 1 m with n = 3 is [`LogDistance::ns3`];
//! * **3GPP TR 38.901 UMa** (Table 7.4.1-1): LOS with its breakpoint, NLOS = max(LOS, NLOS');
//! * **3GPP TR 38.901 UMi – Street Canyon** (Table 7.4.1-1): LOS with its breakpoint,
//!   NLOS = max(LOS, NLOS');
//! * **3GPP TR 38.901 RMa** (Table 7.4.1-1, from ITU-R M.2135): LOS with its breakpoint,
//!   NLOS = max(LOS, NLOS');
//! * **COST-231 Hata** (1500–2000 MHz), with Okumura–Hata below 1500 MHz.
//!
//! Distances are horizontal (2D) ground distances in metres; the 3GPP and Hata models use the
//! heights they hold, the free-space and log-distance models take the distance as the path
//! length. 3GPP models hold the distance at 10 m and above, Hata at 1 m and above (their formulas
//! are not meant for shorter ones). Frequencies are in MHz. The shadowing parameters of
//! TR 38.901 Table 7.5-6 are given by [`PathLoss::shadowing`].

use serde::{Deserialize, Serialize};

use crate::error::{check_above, check_range, RadioError};

/// Speed of light, m/s.
pub const SPEED_OF_LIGHT_MPS: f64 = 299_792_458.0;

/// Line of sight or not, for the models that distinguish them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sight {
    Los,
    #[default]
    Nlos,
}

/// Log-distance parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogDistance {
    /// L0, the loss at the reference distance, dB (46.6777: Friis at 5.15 GHz and 1 m).
    pub reference_loss_db: f64,
    /// d0, m (1).
    pub reference_distance_m: f64,
    /// n, the path-loss exponent (3).
    pub exponent: f64,
}

impl LogDistance {
    /// ns-3's defaults: 46.6777 dB at 1 m, exponent 3.
    pub fn ns3() -> LogDistance {
        LogDistance { reference_loss_db: 46.6777, reference_distance_m: 1.0, exponent: 3.0 }
    }
}

impl Default for LogDistance {
    fn default() -> LogDistance {
        LogDistance::ns3()
    }
}

/// TR 38.901 UMa parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Uma {
    /// Base-station height, m (25).
    pub h_bs_m: f64,
    /// UE height, m (1.5).
    pub h_ut_m: f64,
    pub sight: Sight,
}

impl Default for Uma {
    fn default() -> Uma {
        Uma { h_bs_m: 25.0, h_ut_m: 1.5, sight: Sight::Nlos }
    }
}

/// TR 38.901 UMi – Street Canyon parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Umi {
    /// Base-station height, m (10).
    pub h_bs_m: f64,
    /// UE height, m (1.5).
    pub h_ut_m: f64,
    pub sight: Sight,
}

impl Default for Umi {
    fn default() -> Umi {
        Umi { h_bs_m: 10.0, h_ut_m: 1.5, sight: Sight::Nlos }
    }
}

/// TR 38.901 RMa parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rma {
    /// Base-station height, m (35).
    pub h_bs_m: f64,
    /// UE height, m (1.5).
    pub h_ut_m: f64,
    /// Average building height h, m (5).
    pub building_height_m: f64,
    /// Average street width W, m (20).
    pub street_width_m: f64,
    pub sight: Sight,
}

impl Default for Rma {
    fn default() -> Rma {
        Rma { h_bs_m: 35.0, h_ut_m: 1.5, building_height_m: 5.0, street_width_m: 20.0, sight: Sight::Nlos }
    }
}

/// COST-231 Hata parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Hata {
    /// Base-station height, m (30).
    pub h_bs_m: f64,
    /// UE height, m (1.5).
    pub h_ut_m: f64,
    /// Metropolitan centre (C_m = 3 dB and the large-city mobile-height correction) instead
    /// of a medium city or suburb (C_m = 0).
    pub metropolitan: bool,
}

impl Default for Hata {
    fn default() -> Hata {
        Hata { h_bs_m: 30.0, h_ut_m: 1.5, metropolitan: false }
    }
}

/// A path-loss model: `{ model = "uma", sight = "nlos" }`, `{ model = "log_distance", exponent = 3.5 }`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum PathLoss {
    FreeSpace {},
    LogDistance(LogDistance),
    Uma(Uma),
    Umi(Umi),
    Rma(Rma),
    Cost231Hata(Hata),
}

impl Default for PathLoss {
    /// TR 38.901 UMa NLOS.
    fn default() -> PathLoss {
        PathLoss::Uma(Uma::default())
    }
}

/// Shadow fading of a model: standard deviation (dB) and decorrelation distance (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowingDefaults {
    pub sigma_db: f64,
    pub decorrelation_m: f64,
}

impl PathLoss {
    /// The loss in dB at horizontal distance `d2d_m` and carrier frequency `f_mhz`.
    pub fn loss_db(&self, d2d_m: f64, f_mhz: f64) -> f64 {
        match *self {
            PathLoss::FreeSpace {} => free_space_db(d2d_m, f_mhz),
            PathLoss::LogDistance(p) => log_distance_db(&p, d2d_m),
            PathLoss::Uma(p) => match p.sight {
                Sight::Los => uma_los_db(d2d_m, f_mhz, p.h_bs_m, p.h_ut_m),
                Sight::Nlos => uma_nlos_db(d2d_m, f_mhz, p.h_bs_m, p.h_ut_m),
            },
            PathLoss::Umi(p) => match p.sight {
                Sight::Los => umi_los_db(d2d_m, f_mhz, p.h_bs_m, p.h_ut_m),
                Sight::Nlos => umi_nlos_db(d2d_m, f_mhz, p.h_bs_m, p.h_ut_m),
            },
            PathLoss::Rma(p) => match p.sight {
                Sight::Los => rma_los_db(d2d_m, f_mhz, &p),
                Sight::Nlos => rma_nlos_db(d2d_m, f_mhz, &p),
            },
            PathLoss::Cost231Hata(p) => cost231_hata_db(d2d_m, f_mhz, &p),
        }
    }

    /// TR 38.901 Table 7.4.2-1's LOS probability at `d2d_m` for the models that have one (UMa,
    /// UMi – Street Canyon, RMa); `None` for the others.
    pub fn los_probability(&self, d2d_m: f64) -> Option<f64> {
        match self {
            PathLoss::Uma(_) => Some(uma_los_probability(d2d_m)),
            PathLoss::Umi(_) => Some(umi_los_probability(d2d_m)),
            PathLoss::Rma(_) => Some(rma_los_probability(d2d_m)),
            _ => None,
        }
    }

    /// How far a UE moves before its LOS state is drawn again (TR 38.901 §7.6.3.3's spatial
    /// consistency: 50 m UMa and UMi, 60 m RMa); `None` for models without a LOS state.
    pub fn los_correlation_m(&self) -> Option<f64> {
        match self {
            PathLoss::Uma(_) | PathLoss::Umi(_) => Some(50.0),
            PathLoss::Rma(_) => Some(60.0),
            _ => None,
        }
    }

    /// The same model in line of sight or not (the models without a LOS state unchanged).
    pub fn with_sight(self, sight: Sight) -> PathLoss {
        match self {
            PathLoss::Uma(p) => PathLoss::Uma(Uma { sight, ..p }),
            PathLoss::Umi(p) => PathLoss::Umi(Umi { sight, ..p }),
            PathLoss::Rma(p) => PathLoss::Rma(Rma { sight, ..p }),
            other => other,
        }
    }

    /// TR 38.901 Table 7.5-6's shadowing for the 3GPP models (UMa LOS 4 dB / 37 m, NLOS
    /// 6 dB / 50 m; UMi LOS 4 dB / 10 m, NLOS 7.82 dB / 13 m; RMa LOS 4 dB / 37 m, NLOS
    /// 8 dB / 120 m); `None` for the others.
    pub fn shadowing(&self) -> Option<ShadowingDefaults> {
        let (sigma_db, decorrelation_m) = match self {
            PathLoss::Uma(Uma { sight: Sight::Los, .. }) | PathLoss::Rma(Rma { sight: Sight::Los, .. }) => (4.0, 37.0),
            PathLoss::Uma(_) => (6.0, 50.0),
            PathLoss::Umi(Umi { sight: Sight::Los, .. }) => (4.0, 10.0),
            PathLoss::Umi(_) => (7.82, 13.0),
            PathLoss::Rma(_) => (8.0, 120.0),
            _ => return None,
        };
        Some(ShadowingDefaults { sigma_db, decorrelation_m })
    }

    /// Checks heights and parameters; `field` prefixes the names in errors.
    pub fn validate(&self, field: &str) -> Result<(), RadioError> {
        // The field's full name is written only when it is wrong (this runs on every link).
        let checked = (|| -> Result<(), RadioError> {
            match *self {
            PathLoss::FreeSpace {} => Ok(()),
            PathLoss::LogDistance(p) => {
                check_range("reference_loss_db", p.reference_loss_db, -100.0, 300.0, "dB")?;
                check_above("reference_distance_m", p.reference_distance_m, 0.0, 1e6, "m")?;
                check_range("exponent", p.exponent, 0.0, 10.0, "")
            }
            PathLoss::Uma(p) => {
                // Heights above the 1 m effective environment height, as the breakpoint needs.
                check_range("h_bs_m", p.h_bs_m, 1.5, 150.0, "m")?;
                check_range("h_ut_m", p.h_ut_m, 1.5, 22.5, "m")
            }
            PathLoss::Umi(p) => {
                // TR 38.901 Table 7.4.1-1 note: h_BS = 10 m; 1.5 m ≤ h_UT ≤ 22.5 m.
                check_range("h_bs_m", p.h_bs_m, 1.5, 150.0, "m")?;
                check_range("h_ut_m", p.h_ut_m, 1.5, 22.5, "m")
            }
            PathLoss::Rma(p) => {
                check_range("h_bs_m", p.h_bs_m, 10.0, 150.0, "m")?;
                check_range("h_ut_m", p.h_ut_m, 1.0, 10.0, "m")?;
                check_range("building_height_m", p.building_height_m, 5.0, 50.0, "m")?;
                check_range("street_width_m", p.street_width_m, 5.0, 50.0, "m")
            }
            PathLoss::Cost231Hata(p) => {
                check_range("h_bs_m", p.h_bs_m, 1.0, 200.0, "m")?;
                check_range("h_ut_m", p.h_ut_m, 1.0, 10.0, "m")
            }
            }
        })();
        checked.map_err(|e| e.within(field))
    }
}

fn d3d(d2d_m: f64, h_bs_m: f64, h_ut_m: f64) -> f64 {
    (d2d_m * d2d_m + (h_bs_m - h_ut_m).powi(2)).sqrt()
}

/// Free-space loss at path length `d_m` (held at 1 mm and above), dB.
pub fn free_space_db(d_m: f64, f_mhz: f64) -> f64 {
    let d = d_m.max(1e-3);
    20.0 * (4.0 * std::f64::consts::PI * d * f_mhz * 1e6 / SPEED_OF_LIGHT_MPS).log10()
}

/// Log-distance loss at path length `d_m`, dB.
pub fn log_distance_db(p: &LogDistance, d_m: f64) -> f64 {
    let d = d_m.max(p.reference_distance_m);
    p.reference_loss_db + 10.0 * p.exponent * (d / p.reference_distance_m).log10()
}

/// TR 38.901 UMa breakpoint distance d'_BP = 4·h'_BS·h'_UT·f_c/c, with an effective environment
/// height of 1 m, m.
pub fn uma_breakpoint_m(f_mhz: f64, h_bs_m: f64, h_ut_m: f64) -> f64 {
    4.0 * (h_bs_m - 1.0) * (h_ut_m - 1.0) * f_mhz * 1e6 / SPEED_OF_LIGHT_MPS
}

/// TR 38.901 UMa LOS, dB: PL1 = 28 + 22·log10(d3D) + 20·log10(f_GHz) up to the breakpoint,
/// PL2 = 28 + 40·log10(d3D) + 20·log10(f_GHz) − 9·log10(d'_BP² + (h_BS − h_UT)²) beyond.
pub fn uma_los_db(d2d_m: f64, f_mhz: f64, h_bs_m: f64, h_ut_m: f64) -> f64 {
    let d2 = d2d_m.max(10.0);
    let d = d3d(d2, h_bs_m, h_ut_m);
    let fg = 20.0 * (f_mhz / 1e3).log10();
    let bp = uma_breakpoint_m(f_mhz, h_bs_m, h_ut_m);
    if d2 <= bp {
        28.0 + 22.0 * d.log10() + fg
    } else {
        28.0 + 40.0 * d.log10() + fg - 9.0 * (bp * bp + (h_bs_m - h_ut_m).powi(2)).log10()
    }
}

/// TR 38.901 UMa NLOS, dB: max(LOS, 13.54 + 39.08·log10(d3D) + 20·log10(f_GHz) − 0.6·(h_UT − 1.5)).
pub fn uma_nlos_db(d2d_m: f64, f_mhz: f64, h_bs_m: f64, h_ut_m: f64) -> f64 {
    let d = d3d(d2d_m.max(10.0), h_bs_m, h_ut_m);
    let nlos = 13.54 + 39.08 * d.log10() + 20.0 * (f_mhz / 1e3).log10() - 0.6 * (h_ut_m - 1.5);
    nlos.max(uma_los_db(d2d_m, f_mhz, h_bs_m, h_ut_m))
}

/// TR 38.901 UMa LOS probability (h_UT ≤ 13 m): 1 up to 18 m, then 18/d + e^(−d/63)·(1 − 18/d).
pub fn uma_los_probability(d2d_m: f64) -> f64 {
    if d2d_m <= 18.0 {
        1.0
    } else {
        18.0 / d2d_m + (-d2d_m / 63.0).exp() * (1.0 - 18.0 / d2d_m)
    }
}

/// TR 38.901 UMi – Street Canyon LOS, dB: PL1 = 32.4 + 21·log10(d3D) + 20·log10(f_GHz) up to
/// the breakpoint d'_BP (effective environment height 1 m, as UMa's), PL2 = 32.4 +
/// 40·log10(d3D) + 20·log10(f_GHz) − 9.5·log10(d'_BP² + (h_BS − h_UT)²) beyond.
pub fn umi_los_db(d2d_m: f64, f_mhz: f64, h_bs_m: f64, h_ut_m: f64) -> f64 {
    let d2 = d2d_m.max(10.0);
    let d = d3d(d2, h_bs_m, h_ut_m);
    let fg = 20.0 * (f_mhz / 1e3).log10();
    let bp = uma_breakpoint_m(f_mhz, h_bs_m, h_ut_m);
    if d2 <= bp {
        32.4 + 21.0 * d.log10() + fg
    } else {
        32.4 + 40.0 * d.log10() + fg - 9.5 * (bp * bp + (h_bs_m - h_ut_m).powi(2)).log10()
    }
}

/// TR 38.901 UMi – Street Canyon NLOS, dB: max(LOS, 35.3·log10(d3D) + 22.4 + 21.3·log10(f_GHz)
/// − 0.3·(h_UT − 1.5)).
pub fn umi_nlos_db(d2d_m: f64, f_mhz: f64, h_bs_m: f64, h_ut_m: f64) -> f64 {
    let d = d3d(d2d_m.max(10.0), h_bs_m, h_ut_m);
    let nlos = 35.3 * d.log10() + 22.4 + 21.3 * (f_mhz / 1e3).log10() - 0.3 * (h_ut_m - 1.5);
    nlos.max(umi_los_db(d2d_m, f_mhz, h_bs_m, h_ut_m))
}

/// TR 38.901 UMi – Street Canyon LOS probability: 1 up to 18 m, then 18/d + e^(−d/36)·(1 − 18/d).
pub fn umi_los_probability(d2d_m: f64) -> f64 {
    if d2d_m <= 18.0 {
        1.0
    } else {
        18.0 / d2d_m + (-d2d_m / 36.0).exp() * (1.0 - 18.0 / d2d_m)
    }
}

/// TR 38.901 RMa LOS probability: 1 up to 10 m, then e^(−(d − 10)/1000).
pub fn rma_los_probability(d2d_m: f64) -> f64 {
    if d2d_m <= 10.0 {
        1.0
    } else {
        (-(d2d_m - 10.0) / 1000.0).exp()
    }
}

/// TR 38.901 RMa breakpoint distance d_BP = 2π·h_BS·h_UT·f_c/c, m.
pub fn rma_breakpoint_m(f_mhz: f64, h_bs_m: f64, h_ut_m: f64) -> f64 {
    2.0 * std::f64::consts::PI * h_bs_m * h_ut_m * f_mhz * 1e6 / SPEED_OF_LIGHT_MPS
}

fn rma_pl1(d3d_m: f64, f_ghz: f64, h: f64) -> f64 {
    20.0 * (40.0 * std::f64::consts::PI * d3d_m * f_ghz / 3.0).log10() + (0.03 * h.powf(1.72)).min(10.0) * d3d_m.log10()
        - (0.044 * h.powf(1.72)).min(14.77)
        + 0.002 * h.log10() * d3d_m
}

/// TR 38.901 RMa LOS, dB: PL1 up to the breakpoint, PL1(d_BP) + 40·log10(d3D/d_BP) beyond.
pub fn rma_los_db(d2d_m: f64, f_mhz: f64, p: &Rma) -> f64 {
    let d2 = d2d_m.max(10.0);
    let d = d3d(d2, p.h_bs_m, p.h_ut_m);
    let f_ghz = f_mhz / 1e3;
    let bp = rma_breakpoint_m(f_mhz, p.h_bs_m, p.h_ut_m);
    if d2 <= bp {
        rma_pl1(d, f_ghz, p.building_height_m)
    } else {
        rma_pl1(bp, f_ghz, p.building_height_m) + 40.0 * (d / bp).log10()
    }
}

/// TR 38.901 RMa NLOS, dB: max(LOS, NLOS') with NLOS' = 161.04 − 7.1·log10(W) + 7.5·log10(h)
/// − (24.37 − 3.7·(h/h_BS)²)·log10(h_BS) + (43.42 − 3.1·log10(h_BS))·(log10(d3D) − 3)
/// + 20·log10(f_GHz) − (3.2·(log10(11.75·h_UT))² − 4.97).
pub fn rma_nlos_db(d2d_m: f64, f_mhz: f64, p: &Rma) -> f64 {
    let d = d3d(d2d_m.max(10.0), p.h_bs_m, p.h_ut_m);
    let (h, w, hbs) = (p.building_height_m, p.street_width_m, p.h_bs_m);
    let nlos = 161.04 - 7.1 * w.log10() + 7.5 * h.log10() - (24.37 - 3.7 * (h / hbs).powi(2)) * hbs.log10()
        + (43.42 - 3.1 * hbs.log10()) * (d.log10() - 3.0)
        + 20.0 * (f_mhz / 1e3).log10()
        - (3.2 * (11.75 * p.h_ut_m).log10().powi(2) - 4.97);
    nlos.max(rma_los_db(d2d_m, f_mhz, p))
}

/// COST-231 Hata (f ≥ 1500 MHz) or Okumura–Hata (below), urban, dB, at ground distance `d2d_m`:
/// A + B·log10(f) − 13.82·log10(h_b) − a(h_m) + (44.9 − 6.55·log10(h_b))·log10(d_km) + C_m with
/// (A, B) = (46.3, 33.9) and C_m = 3 dB (metropolitan) or 0 for COST-231, (69.55, 26.16) and
/// C_m = 0 for Okumura–Hata; a(h_m) = (1.1·log10 f − 0.7)·h_m − (1.56·log10 f − 0.8) for a
/// medium city, 3.2·(log10(11.75·h_m))² − 4.97 for a metropolitan one.
pub fn cost231_hata_db(d2d_m: f64, f_mhz: f64, p: &Hata) -> f64 {
    let d_km = d2d_m.max(1.0) / 1e3;
    let lf = f_mhz.log10();
    let a_hm =
        if p.metropolitan { 3.2 * (11.75 * p.h_ut_m).log10().powi(2) - 4.97 } else { (1.1 * lf - 0.7) * p.h_ut_m - (1.56 * lf - 0.8) };
    let (a, b, cm) = if f_mhz >= 1500.0 { (46.3, 33.9, if p.metropolitan { 3.0 } else { 0.0 }) } else { (69.55, 26.16, 0.0) };
    a + b * lf - 13.82 * p.h_bs_m.log10() - a_hm + (44.9 - 6.55 * p.h_bs_m.log10()) * d_km.log10() + cm
}
