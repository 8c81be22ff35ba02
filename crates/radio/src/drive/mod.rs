//! A synthetic multi-operator drive test: the per-second table of visible cells that a modem on
//! a vehicle would report, for several operators with several carriers each (multi-operator
//! reference §5.3). A stand-in for the study's MONROE data, which is not public.
//!
//! * **Route**: a straight line at `heading_deg`, driven at `speed_kmh`, optionally stopping
//!   10–30 s every 300 m; one sample per second.
//! * **Sites**: per operator a hexagonal lattice of inter-site distance `isd_m`, randomly rotated
//!   and translated, kept within `site_range_isd` · ISD of the route; a fraction `site_sharing`
//!   of each later operator's sites moves onto the first operator's nearest mast, and by default
//!   shares its shadowing, so coverage holes can be common to operators. Three sectors per site
//!   (azimuths θ₀ + 0°, 120°, 240°), one cell per (sector, carrier); a carrier is on a fraction
//!   `site_fraction` of its operator's sites.
//! * **Link budget** per cell and second: RSRP = P_RE + G + A(φ) − PL(d, f) − S − L_pen + ε,
//!   with P_RE from the carrier's power and bandwidth ([`crate::budget`]), the TR 36.814 sector
//!   pattern, a path-loss model ([`crate::pathloss`]), shadowing S per physical site
//!   correlated along the route ([`crate::shadowing`]: σ, d_corr, inter-site correlation) and
//!   measurement noise ε ~ N(0, `measurement_noise_db`) per cell and second.
//! * **Visible cells**: per (operator, carrier), the cells at or above `min_rsrp_dbm` and within
//!   `rel_db` of the carrier's strongest cell, at most `max_per_carrier`.
//!
//! Deterministic: every random draw comes from a `multiconn-core` stream derived from the seed
//! and a label — the layout per operator, the carrier equipment per (operator, carrier), the
//! shadowing per physical site (and one common process), the noise per cell — so the same seed
//! gives the same table, byte for byte, and adding a carrier changes no other cell's values.

mod layout;
mod presets;

use std::collections::HashMap;

use multiconn_core::RngStream;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::budget::{resource_blocks, rs_epre_dbm, SectorAntenna};
use crate::error::{check_above, check_range, RadioError};
use crate::pathloss::PathLoss;
use crate::shadowing::{combine, Gudmundson};
use crate::table::{CellSample, DriveTable};

pub use presets::PRESETS;

/// Stops of a city bus: after every `every_m` metres, a stop of `min_stop_s`–`max_stop_s` s.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StopAndGo {
    pub every_m: f64,
    pub min_stop_s: u32,
    pub max_stop_s: u32,
}

impl Default for StopAndGo {
    fn default() -> StopAndGo {
        StopAndGo { every_m: 300.0, min_stop_s: 10, max_stop_s: 30 }
    }
}

/// One carrier of an operator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CarrierLayout {
    pub earfcn: u32,
    /// Downlink centre frequency, MHz.
    pub freq_mhz: f64,
    /// An LTE channel bandwidth, MHz (10).
    #[serde(default = "ten")]
    pub bandwidth_mhz: f64,
    /// Fraction of the operator's sites that have this carrier (1).
    #[serde(default = "one")]
    pub site_fraction: f64,
}

fn ten() -> f64 {
    10.0
}

fn one() -> f64 {
    1.0
}

fn isd_default() -> f64 {
    500.0
}

fn tx_power_default() -> f64 {
    46.0
}

/// One operator's network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorLayout {
    /// The label in the table's `operator` column.
    pub name: String,
    /// Inter-site distance, m (500: 3GPP urban macro; 1732: rural macro).
    #[serde(default = "isd_default")]
    pub isd_m: f64,
    /// Transmit power per carrier, dBm (46).
    #[serde(default = "tx_power_default")]
    pub tx_power_dbm: f64,
    pub carriers: Vec<CarrierLayout>,
}

/// Shadow fading.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShadowingParams {
    /// σ, dB (6: TR 38.901 UMa NLOS).
    pub sigma_db: f64,
    /// Decorrelation distance, m (50: UMa NLOS).
    pub decorrelation_m: f64,
    /// Share of the shadowing common to all sites (0.5).
    pub inter_site_correlation: f64,
}

impl Default for ShadowingParams {
    fn default() -> ShadowingParams {
        ShadowingParams { sigma_db: 6.0, decorrelation_m: 50.0, inter_site_correlation: 0.5 }
    }
}

/// Which cells a modem reports.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Visibility {
    /// Weakest reported RSRP, dBm (−120).
    pub min_rsrp_dbm: f64,
    /// Reported cells are within this of their carrier's strongest, dB (3).
    pub rel_db: f64,
    /// At most this many cells per carrier (8).
    pub max_per_carrier: usize,
}

impl Default for Visibility {
    fn default() -> Visibility {
        Visibility { min_rsrp_dbm: -120.0, rel_db: 3.0, max_per_carrier: 8 }
    }
}

/// Everything the generator needs. `Default` is the `residential` preset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriveConfig {
    /// Seconds to generate (samples at t = 0, 1, …, duration_s − 1).
    pub duration_s: u32,
    pub speed_kmh: f64,
    pub stop_and_go: Option<StopAndGo>,
    /// Direction of the route, degrees from the x axis (17: off the lattices' axes).
    pub heading_deg: f64,
    pub operators: Vec<OperatorLayout>,
    /// Fraction of each later operator's sites moved onto the first operator's masts (0.3).
    pub site_sharing: f64,
    /// Co-located sites of different operators share their shadowing (true).
    pub shared_sites_share_shadowing: bool,
    /// Sites farther than this many inter-site distances from the route are left out (3).
    pub site_range_isd: f64,
    pub path_loss: PathLoss,
    pub antenna: SectorAntenna,
    pub shadowing: ShadowingParams,
    /// Penetration loss (e.g. into a vehicle), dB (0: roof antenna).
    pub penetration_db: f64,
    /// Standard deviation of the per-cell, per-second measurement noise, dB (1).
    pub measurement_noise_db: f64,
    pub visibility: Visibility,
}

impl Default for DriveConfig {
    fn default() -> DriveConfig {
        DriveConfig::preset("residential").expect("built-in preset")
    }
}

impl DriveConfig {
    /// The channel bandwidth of every carrier, MHz, keyed by EARFCN: what
    /// [`crate::CapacityParams::carrier_bandwidth_mhz`] takes to estimate this drive with its
    /// carriers' bandwidths. An error if two operators give one EARFCN different bandwidths.
    pub fn carrier_bandwidths_mhz(&self) -> Result<std::collections::BTreeMap<u32, f64>, RadioError> {
        let mut out = std::collections::BTreeMap::new();
        for (o, op) in self.operators.iter().enumerate() {
            for (c, carrier) in op.carriers.iter().enumerate() {
                if let Some(&other) = out.get(&carrier.earfcn) {
                    if other != carrier.bandwidth_mhz {
                        return Err(RadioError::invalid(
                            &format!("operators[{o}].carriers[{c}].bandwidth_mhz"),
                            format!("EARFCN {} has {} MHz here and {other} MHz at another operator", carrier.earfcn, carrier.bandwidth_mhz),
                        ));
                    }
                }
                out.insert(carrier.earfcn, carrier.bandwidth_mhz);
            }
        }
        Ok(out)
    }

    /// Checks every field; errors name it as `drive.<path>`.
    pub fn validate(&self) -> Result<(), RadioError> {
        if !(1..=864_000).contains(&self.duration_s) {
            return Err(RadioError::out_of_range("drive.duration_s", self.duration_s as f64, "a whole number in [1, 864000] s"));
        }
        check_range("drive.speed_kmh", self.speed_kmh, 0.0, 500.0, "km/h")?;
        if let Some(s) = &self.stop_and_go {
            check_above("drive.stop_and_go.every_m", s.every_m, 0.0, 1e6, "m")?;
            if s.min_stop_s > s.max_stop_s {
                return Err(RadioError::invalid("drive.stop_and_go", "min_stop_s must not exceed max_stop_s"));
            }
        }
        check_range("drive.heading_deg", self.heading_deg, -360.0, 360.0, "degrees")?;
        if self.operators.is_empty() {
            return Err(RadioError::invalid("drive.operators", "at least one operator is needed"));
        }
        for (o, op) in self.operators.iter().enumerate() {
            let f = |name: &str| format!("drive.operators[{o}].{name}");
            if op.name.is_empty() {
                return Err(RadioError::invalid(&f("name"), "must not be empty"));
            }
            if self.operators[..o].iter().any(|p| p.name == op.name) {
                return Err(RadioError::invalid(&f("name"), format!("{:?} is used by an earlier operator", op.name)));
            }
            check_range(&f("isd_m"), op.isd_m, 50.0, 100_000.0, "m")?;
            check_range(&f("tx_power_dbm"), op.tx_power_dbm, -50.0, 80.0, "dBm")?;
            if op.carriers.is_empty() {
                return Err(RadioError::invalid(&f("carriers"), "at least one carrier is needed"));
            }
            for (c, carrier) in op.carriers.iter().enumerate() {
                let g = |name: &str| f(&format!("carriers[{c}].{name}"));
                if op.carriers[..c].iter().any(|x| x.earfcn == carrier.earfcn) {
                    return Err(RadioError::invalid(&g("earfcn"), format!("{} is used by an earlier carrier", carrier.earfcn)));
                }
                check_range(&g("freq_mhz"), carrier.freq_mhz, 100.0, 100_000.0, "MHz")?;
                resource_blocks(carrier.bandwidth_mhz, &g("bandwidth_mhz"))?;
                check_range(&g("site_fraction"), carrier.site_fraction, 0.0, 1.0, "")?;
            }
        }
        check_range("drive.site_sharing", self.site_sharing, 0.0, 1.0, "")?;
        check_range("drive.site_range_isd", self.site_range_isd, 0.5, 20.0, "")?;
        // The sites near the route: the route's bounding box, widened by the range, over a
        // lattice cell's area.
        let length = self.speed_kmh / 3.6 * self.duration_s as f64;
        let heading = self.heading_deg.to_radians();
        for (o, op) in self.operators.iter().enumerate() {
            let range = self.site_range_isd * op.isd_m;
            let area = (length * heading.cos().abs() + 2.0 * range) * (length * heading.sin().abs() + 2.0 * range);
            let points = area / (op.isd_m * op.isd_m * 3f64.sqrt() / 2.0);
            if points > MAX_LATTICE_POINTS {
                return Err(RadioError::invalid(
                    &format!("drive.operators[{o}].isd_m"),
                    format!(
                        "a {:.0} km route would need about {points:.1e} candidate sites at {} m (at most {MAX_LATTICE_POINTS:.0e}): shorten the drive or widen the spacing",
                        length / 1e3,
                        op.isd_m
                    ),
                ));
            }
        }
        self.path_loss.validate("drive.path_loss")?;
        self.antenna.validate("drive.antenna")?;
        check_range("drive.shadowing.sigma_db", self.shadowing.sigma_db, 0.0, 30.0, "dB")?;
        check_above("drive.shadowing.decorrelation_m", self.shadowing.decorrelation_m, 0.0, 1e5, "m")?;
        check_range("drive.shadowing.inter_site_correlation", self.shadowing.inter_site_correlation, 0.0, 1.0, "")?;
        check_range("drive.penetration_db", self.penetration_db, 0.0, 100.0, "dB")?;
        check_range("drive.measurement_noise_db", self.measurement_noise_db, 0.0, 30.0, "dB")?;
        check_range("drive.visibility.min_rsrp_dbm", self.visibility.min_rsrp_dbm, -200.0, 0.0, "dBm")?;
        check_range("drive.visibility.rel_db", self.visibility.rel_db, 0.0, 200.0, "dB")?;
        if !(1..=1000).contains(&self.visibility.max_per_carrier) {
            return Err(RadioError::out_of_range(
                "drive.visibility.max_per_carrier",
                self.visibility.max_per_carrier as f64,
                "a whole number in [1, 1000]",
            ));
        }
        Ok(())
    }
}

/// At most this many lattice points are examined per operator (a guard against a route far
/// too long for its inter-site distance).
const MAX_LATTICE_POINTS: f64 = 2e7;

/// A candidate cell in one second: (carrier index, cell id, RSRP).
type Candidate = (usize, u32, f64);

/// Generates the drive table of `config` for `seed`.
pub fn generate(config: &DriveConfig, seed: u64) -> Result<DriveTable, RadioError> {
    config.validate()?;
    let route = layout::Route::build(config, seed);
    let sites = layout::sites(config, &route, seed);
    let p_re: Vec<Vec<f64>> = config
        .operators
        .iter()
        .map(|op| {
            op.carriers.iter().map(|c| rs_epre_dbm(op.tx_power_dbm, resource_blocks(c.bandwidth_mhz, "").expect("validated"))).collect()
        })
        .collect();
    let sh = config.shadowing;
    let mut common = Gudmundson::new(RngStream::derive(seed, "radio/drive/shadow/common"), sh.decorrelation_m);
    // Site shadowing: (process, second it was last advanced to, the site's position along the
    // route), created when first needed and dropped once the route has left the site behind.
    let mut site_shadow: HashMap<String, (Gudmundson, usize, f64)> = HashMap::new();
    let max_range = config.operators.iter().map(|op| config.site_range_isd * op.isd_m).fold(0.0, f64::max);
    let mut noise: HashMap<(usize, usize, usize, usize), RngStream> = HashMap::new();
    let mut window: Vec<(usize, usize)> = vec![(0, 0); sites.len()]; // [lo, hi) per operator
    let mut rows = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::new();

    for i in 0..config.duration_s as usize {
        let (x, y) = route.position(i);
        let s_here = route.s[i];
        if i > 0 {
            common.advance(s_here - route.s[i - 1]);
        }
        if i % 64 == 0 {
            site_shadow.retain(|_, e| e.2 >= s_here - max_range);
        }
        for (o, op) in config.operators.iter().enumerate() {
            let range = config.site_range_isd * op.isd_m;
            let list = &sites[o];
            let (lo, hi) = &mut window[o];
            while *lo < list.len() && list[*lo].along < s_here - range {
                let gone = list[*lo].index;
                noise.retain(|key, _| !(key.0 == o && key.1 == gone));
                *lo += 1;
            }
            *hi = (*hi).max(*lo);
            while *hi < list.len() && list[*hi].along <= s_here + range {
                *hi += 1;
            }
            candidates.clear();
            for site in &list[*lo..*hi] {
                let (dx, dy) = (x - site.x, y - site.y);
                let d2d = dx.hypot(dy);
                let bearing = dy.atan2(dx).to_degrees();
                let entry = site_shadow.entry(site.shadow_key.clone()).or_insert_with(|| {
                    let rng = RngStream::derive(seed, &format!("radio/drive/shadow/site/{}", site.shadow_key));
                    (Gudmundson::new(rng, sh.decorrelation_m), i, site.along)
                });
                while entry.1 < i {
                    entry.1 += 1;
                    entry.0.advance(route.s[entry.1] - route.s[entry.1 - 1]);
                }
                let shadow = combine(sh.sigma_db, sh.inter_site_correlation, common.value(), entry.0.value());
                for (c, carrier) in op.carriers.iter().enumerate() {
                    if !site.carriers[c] {
                        continue;
                    }
                    let base = p_re[o][c] - config.path_loss.loss_db(d2d, carrier.freq_mhz) - shadow - config.penetration_db;
                    for sector in 0..3 {
                        let azimuth = site.azimuth0_deg + 120.0 * sector as f64;
                        let ant = config.antenna.gain_towards_db(bearing - azimuth);
                        let rng = noise.entry((o, site.index, sector, c)).or_insert_with(|| {
                            let label = format!("radio/drive/noise/{}/{}/{sector}/{}", op.name, site.index, carrier.earfcn);
                            RngStream::derive(seed, &label)
                        });
                        let eps: f64 = StandardNormal.sample(rng);
                        let rsrp = base + ant + config.measurement_noise_db * eps;
                        candidates.push((c, (site.index * 3 + sector) as u32, rsrp));
                    }
                }
            }
            for (c, carrier) in op.carriers.iter().enumerate() {
                for (cell, rsrp) in visible(&candidates, c, &config.visibility) {
                    rows.push(CellSample {
                        time_s: i as u32,
                        operator: op.name.clone(),
                        earfcn: carrier.earfcn,
                        cell_id: cell.to_string(),
                        rsrp_dbm: rsrp,
                        x_m: Some(x),
                        y_m: Some(y),
                        speed_mps: Some(route.speed[i]),
                    });
                }
            }
        }
    }
    if rows.is_empty() {
        return Err(RadioError::Empty { what: "generated drive (no cell was ever visible; check the power and range)".into() });
    }
    DriveTable::new(rows)
}

/// The reported cells of carrier `c`: at or above the floor, within `rel_db` of the strongest,
/// strongest first (ties by cell id), at most `max_per_carrier`.
fn visible(candidates: &[Candidate], c: usize, v: &Visibility) -> Vec<(u32, f64)> {
    let mut cells: Vec<(u32, f64)> = candidates.iter().filter(|x| x.0 == c).map(|x| (x.1, x.2)).collect();
    let Some(best) = cells.iter().map(|x| x.1).reduce(f64::max) else {
        return cells;
    };
    cells.retain(|x| x.1 >= v.min_rsrp_dbm && x.1 >= best - v.rel_db);
    cells.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    cells.truncate(v.max_per_carrier);
    cells
}
