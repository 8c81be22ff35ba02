//! Link adaptation: SINR per resource block → CQI, and the error probability of a transport
//! block (TB) sent at an MCS over resource blocks with given SINRs.
//!
//! Two CQI models, as ns-3 LENA's `LteAmc::AmcModel` offers:
//!
//! * [`AmcModel::ShannonGap`] (LENA's `PiroEW2010`): spectral efficiency
//!   s = log2(1 + SINR/Γ) with Γ = −ln(5·BER)/1.5; the CQI is the number of CQI efficiencies
//!   strictly below s ([`crate::tables::cqi_for_efficiency`]). LENA's BER is 5·10⁻⁵ (Γ = 7.4 dB).
//!   Over a group of RBs the efficiency is the mean of the per-RB efficiencies.
//! * [`AmcModel::MutualInformation`] (LENA's default, `MiErrorModel` / "Vienna", in spirit):
//!   mutual-information effective SINR mapping (MIESM). The mutual information per coded bit
//!   of each RB is read from the constellation-constrained capacity of the MCS's modulation
//!   ([`mi_per_bit`]), averaged over the RBs and mapped back to an effective SINR; the CQI is the
//!   highest one whose MCS ([`crate::tables::mcs_for_cqi`]) keeps the TB error probability at
//!   or below the target (10 %).
//!
//! The TB error probability is a documented fit, not LENA's Vienna curves: a logistic curve in
//! the effective SINR (dB) per MCS, [`BlerCurve`]. Its 10 % point for MCS m is the SINR at which
//! the modulation-constrained capacity equals m's spectral efficiency (R1-081483, as LENA uses
//! it) plus an implementation gap, and its width is the SINR step from 50 % to 10 % BLER.
//! A TB error is one Bernoulli draw from a seeded stream ([`draw_tb_error`]).
//!
//! SINRs are in dB throughout; spectral efficiencies in bit/s/Hz.

use multiconn_core::rng::RngStream;
use multiconn_radio::units::db_to_ratio;

use crate::error::{check_range, CellError};
use crate::nr::bler::CodeBlockGaps;
use crate::nr::tbs::BaseGraph;
use crate::scheme::McsScheme;
use crate::tables::{mcs_entry, Modulation, MAX_CQI};

/// LENA's default BER target of the Shannon-gap model (`ns3::LteAmc::Ber`).
pub const LENA_BER: f64 = 5e-5;

/// Lowest SINR of the mutual-information table, in dB; below it the MI is taken as 0.
const MI_MIN_DB: f64 = -30.0;
/// Highest SINR of the table, in dB; above it the MI is taken as 1 bit per coded bit.
const MI_MAX_DB: f64 = 40.0;
/// Table step, in dB.
const MI_STEP_DB: f64 = 0.1;
/// Points of the numerical integral over the noise (per dimension, over ±8 σ).
const NOISE_POINTS: usize = 161;

/// Smallest and largest accepted SINR, in dB.
const SINR_LIMIT_DB: f64 = 200.0;

/// Mutual information of equiprobable `levels`-PAM with unit-energy complex symbols split over
/// two dimensions (each PAM symbol has energy 1/2) and noise variance 1/(2·SINR) per dimension,
/// in bits per PAM symbol.
fn pam_mi(levels: usize, sinr: f64) -> f64 {
    pam_information(levels, sinr).0
}

/// The mean (the mutual information) and the variance (the channel dispersion of Polyanskiy,
/// Poor and Verdú 2010) of the information density i(x; y) = log2 p(y|x)/p(y) of
/// equiprobable `levels`-PAM as [`pam_mi`] sets it up, in bits and bits² per PAM symbol.
fn pam_information(levels: usize, sinr: f64) -> (f64, f64) {
    let m = levels as f64;
    // Points (2i − M + 1)·d with mean energy (M² − 1)·d²/3 = 1/2.
    let d = (1.5 / (m * m - 1.0)).sqrt();
    let x: Vec<f64> = (0..levels).map(|i| (2.0 * i as f64 - m + 1.0) * d).collect();
    let sigma2 = 1.0 / (2.0 * sinr);
    let sigma = sigma2.sqrt();
    let dn = 16.0 * sigma / (NOISE_POINTS - 1) as f64;
    let mut loss = 0.0;
    let mut loss_sq = 0.0;
    let mut wsum = 0.0;
    for k in 0..NOISE_POINTS {
        let n = -8.0 * sigma + k as f64 * dn;
        let w = (-n * n / (2.0 * sigma2)).exp();
        wsum += w;
        for xi in &x {
            let mut s = 0.0;
            for xj in &x {
                let e = xi - xj + n;
                s += (-(e * e - n * n) / (2.0 * sigma2)).exp();
            }
            let l = s.log2();
            loss += w * l;
            loss_sq += w * l * l;
        }
    }
    let mean_loss = loss / (wsum * m);
    // i = log2 M − log2 s: its variance is the variance of log2 s.
    let variance = (loss_sq / (wsum * m) - mean_loss * mean_loss).max(0.0);
    ((m.log2() - mean_loss).clamp(0.0, m.log2()), variance)
}

/// The points of the MI tables: MI_MIN_DB to MI_MAX_DB in steps of MI_STEP_DB.
pub const MI_TABLE_POINTS: usize = 701;

/// The MI table of `modulation` worked out by numerical integration: bits per coded bit at
/// −30 + k·0.1 dB for k in 0..701, made non-decreasing against rounding. This is what
/// the crate's `mi_table` module holds, generated once (`cargo run -p multiconn-cell --example mi_table`)
/// because the integral takes about a tenth of a second per process.
pub fn integrate_mi_table(modulation: Modulation) -> Vec<f64> {
    let levels = pam_levels(modulation);
    let mut v: Vec<f64> = (0..MI_TABLE_POINTS)
        .map(|k| pam_mi(levels, db_to_ratio(MI_MIN_DB + k as f64 * MI_STEP_DB)) / (levels as f64).log2())
        .collect();
    // Guard the inversion against rounding: make the table non-decreasing.
    for k in 1..v.len() {
        if v[k] < v[k - 1] {
            v[k] = v[k - 1];
        }
    }
    v
}

/// The dispersion table of `modulation` worked out by numerical integration: the variance of
/// the information density per coded bit (bits², the PAM symbol's variance over its log2 M
/// coded bits: a QAM symbol is two independent PAM symbols and carries 2·log2 M coded bits) at
/// −30 + k·0.1 dB for k in 0..701, the grid of [`integrate_mi_table`]. This is what the crate's
/// `dispersion_table` module holds (`cargo run -p multiconn-cell --example dispersion_table`).
pub fn integrate_dispersion_table(modulation: Modulation) -> Vec<f64> {
    let levels = pam_levels(modulation);
    (0..MI_TABLE_POINTS).map(|k| pam_information(levels, db_to_ratio(MI_MIN_DB + k as f64 * MI_STEP_DB)).1 / (levels as f64).log2()).collect()
}

/// Levels of each of the two PAM components of a square QAM.
fn pam_levels(modulation: Modulation) -> usize {
    match modulation {
        Modulation::Qpsk => 2,
        Modulation::Qam16 => 4,
        Modulation::Qam64 => 8,
        Modulation::Qam256 => 16,
    }
}

/// The channel dispersion per coded bit (bits²) of `modulation` at `sinr_db`: the variance of
/// the information density that sets how steeply a code block's error probability falls with
/// its length ([`crate::nr::bler`]). Interpolated linearly in dB on the table's grid; 0 beyond
/// its ends (no information, or all of it, for certain).
pub fn dispersion_per_bit(modulation: Modulation, sinr_db: f64) -> f64 {
    let t = &crate::dispersion_table::DISPERSION_PER_CODED_BIT[modulation_slot(modulation)];
    if sinr_db.is_nan() || sinr_db >= MI_MAX_DB {
        return 0.0;
    }
    if sinr_db <= MI_MIN_DB {
        return t[0] * db_to_ratio(sinr_db - MI_MIN_DB);
    }
    let pos = (sinr_db - MI_MIN_DB) / MI_STEP_DB;
    let k = (pos as usize).min(t.len() - 2);
    let f = pos - k as f64;
    t[k] + f * (t[k + 1] - t[k])
}

fn table_of(modulation: Modulation) -> &'static [f64] {
    &crate::mi_table::MI_PER_CODED_BIT[modulation_slot(modulation)]
}

/// Mutual information per coded bit (0..=1) of `modulation` (square QAM, Gray-independent
/// constellation-constrained capacity over AWGN, divided by Q_m) at `sinr_db`. Computed once by
/// numerical integration on a 0.1 dB grid from −30 to 40 dB and interpolated linearly in dB.
pub fn mi_per_bit(modulation: Modulation, sinr_db: f64) -> f64 {
    let t = table_of(modulation);
    if sinr_db.is_nan() {
        return 0.0;
    }
    if sinr_db <= MI_MIN_DB {
        // At low SINR the MI grows linearly with the linear SINR.
        return t[0] * db_to_ratio(sinr_db - MI_MIN_DB);
    }
    if sinr_db >= MI_MAX_DB {
        return 1.0;
    }
    // pos > 0 here, so truncating is flooring (and, unlike f64::floor, needs no libm call
    // without SSE4.1).
    let pos = (sinr_db - MI_MIN_DB) / MI_STEP_DB;
    let k = (pos as usize).min(t.len() - 2);
    let f = pos - k as f64;
    t[k] + f * (t[k + 1] - t[k])
}

/// The SINR in dB at which `modulation` reaches `mi` bits per coded bit: the inverse of
/// [`mi_per_bit`], clamped to the table's range [−30, 40] dB.
pub fn sinr_for_mi(modulation: Modulation, mi: f64) -> f64 {
    let t = table_of(modulation);
    if mi.is_nan() || mi <= t[0] {
        return MI_MIN_DB;
    }
    if mi >= t[t.len() - 1] {
        return MI_MAX_DB;
    }
    // First index whose MI reaches `mi`, then interpolate.
    let k = t.partition_point(|&v| v < mi).max(1);
    let (lo, hi) = (t[k - 1], t[k]);
    let f = if hi > lo { (mi - lo) / (hi - lo) } else { 0.0 };
    MI_MIN_DB + (k as f64 - 1.0 + f) * MI_STEP_DB
}

pub(crate) fn check_sinrs(sinr_db: &[f64]) -> Result<(), CellError> {
    if sinr_db.is_empty() {
        return Err(CellError::invalid("sinr_db", "no resource blocks: at least one SINR is needed"));
    }
    // The field name is only built for the value that is out of range.
    match sinr_db.iter().position(|s| !(s.is_finite() && (-SINR_LIMIT_DB..=SINR_LIMIT_DB).contains(s))) {
        Some(i) => check_range(&format!("sinr_db[{i}]"), sinr_db[i], -SINR_LIMIT_DB, SINR_LIMIT_DB, "dB").map(|_| ()),
        None => Ok(()),
    }
}

/// The modulations (QPSK, 16QAM, 64QAM, 256QAM), each with its slot in per-modulation arrays.
pub(crate) const MODULATIONS: usize = 4;

pub(crate) fn modulation_slot(m: Modulation) -> usize {
    match m {
        Modulation::Qpsk => 0,
        Modulation::Qam16 => 1,
        Modulation::Qam64 => 2,
        Modulation::Qam256 => 3,
    }
}

/// Mean MI per coded bit of `modulation` over resource blocks with SINRs `sinr_db` (dB).
pub fn mean_mi_per_bit(modulation: Modulation, sinr_db: &[f64]) -> Result<f64, CellError> {
    check_sinrs(sinr_db)?;
    Ok(sinr_db.iter().map(|&s| mi_per_bit(modulation, s)).sum::<f64>() / sinr_db.len() as f64)
}

/// Effective SINR in dB of resource blocks with SINRs `sinr_db` for `modulation` (MIESM): the
/// SINR whose MI per coded bit is the mean of the blocks' MI.
pub fn effective_sinr_db(modulation: Modulation, sinr_db: &[f64]) -> Result<f64, CellError> {
    check_sinrs(sinr_db)?;
    let mean = sinr_db.iter().map(|&s| mi_per_bit(modulation, s)).sum::<f64>() / sinr_db.len() as f64;
    Ok(sinr_for_mi(modulation, mean))
}

/// Spectral efficiency of the Shannon-gap model at `sinr_db` and bit-error target `ber`, in
/// bit/s/Hz: log2(1 + SINR/Γ), Γ = −ln(5·BER)/1.5.
pub fn shannon_gap_efficiency(sinr_db: f64, ber: f64) -> f64 {
    let gamma = -(5.0 * ber).ln() / 1.5;
    (1.0 + db_to_ratio(sinr_db) / gamma).log2()
}

/// A TB error-probability curve per MCS: logistic in the effective SINR (dB),
/// BLER(γ) = 1 / (1 + 9^(1 + (γ − γ₁₀(m)) / width)), so BLER is 10 % at γ₁₀(m), 50 % at
/// γ₁₀(m) − width and 1.2 % at γ₁₀(m) + width. γ₁₀(m) is the SINR at which the
/// constellation-constrained capacity of m's modulation equals m's spectral efficiency, plus
/// `gap_db`.
///
/// With `code_blocks` set (NR only) the curves are instead those of the TB's LDPC code blocks
/// ([`crate::nr::bler`]): per base graph and block length, from the normal approximation less
/// each base graph's gap; `gap_db` and `width_db` are then unused. Where no TB size is at hand
/// (the CQI a UE reports, [`BlerCurve::error_probability_in`]) the TB is taken as one code
/// block of the largest size of its base graph (8 448 bits on BG1, 3 840 on BG2 at R ≤ 0.25).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlerCurve {
    /// Implementation gap of the turbo code to the constellation-constrained capacity at 10 %
    /// BLER, in dB (0..=10).
    pub gap_db: f64,
    /// SINR step from 50 % to 10 % BLER, in dB (0.05..=10).
    pub width_db: f64,
    /// NR's code-block curves instead, with each base graph's gap.
    pub code_blocks: Option<CodeBlockGaps>,
}

impl Default for BlerCurve {
    /// A 1 dB gap and a 1 dB width, the order of a turbo-coded TB of a few thousand bits.
    fn default() -> BlerCurve {
        BlerCurve { gap_db: 1.0, width_db: 1.0, code_blocks: None }
    }
}

impl BlerCurve {
    /// The curve, or an error naming the field out of range.
    pub fn validate(&self) -> Result<(), CellError> {
        check_range("bler.gap_db", self.gap_db, 0.0, 10.0, "dB")?;
        check_range("bler.width_db", self.width_db, 0.05, 10.0, "dB")?;
        if let Some(gaps) = self.code_blocks {
            gaps.validate()?;
        }
        Ok(())
    }

    /// The code-block gaps, refused on LTE's tables (turbo codes, not LDPC).
    fn code_blocks_in(&self, scheme: McsScheme) -> Result<Option<CodeBlockGaps>, CellError> {
        match (self.code_blocks, scheme) {
            (Some(_), McsScheme::Lte) => Err(CellError::invalid("bler.model", "code_blocks follows NR's LDPC code blocks; an LTE cell takes the logistic curve")),
            (gaps, _) => Ok(gaps),
        }
    }

    /// The error probability of the reference TB (one code block of its base graph's largest
    /// size) of MCS `mcs` of `scheme` at effective SINR `effective_sinr_db`, under `gaps`.
    fn reference_block(gaps: CodeBlockGaps, scheme: McsScheme, mcs: u8, effective_sinr_db: f64) -> Result<f64, CellError> {
        let m = scheme.modulation(mcs)?;
        let r = scheme.efficiency(mcs)? / f64::from(m.order());
        let (bg, bits) = if r <= 0.25 { (BaseGraph::Bg2, 3840.0) } else { (BaseGraph::Bg1, 8448.0) };
        Ok(gaps.block_error_probability(m, r, bg, bits, &[mi_per_bit(m, effective_sinr_db)]))
    }

    /// The effective SINR in dB at which MCS `mcs` of `scheme` has TB error probability
    /// `target` (in (0, 1)): the logistic curve's closed form, or the code-block curve's by
    /// bisection (to 1e-6 dB).
    pub fn required_sinr_db(&self, scheme: McsScheme, mcs: u8, target: f64) -> Result<f64, CellError> {
        self.validate()?;
        if !(target > 0.0 && target < 1.0) {
            return Err(CellError::out_of_range("bler_target", target, "a number in (0, 1)"));
        }
        let Some(gaps) = self.code_blocks_in(scheme)? else {
            // error_probability(mcs, s) ≤ target ⟺ s ≥ threshold(mcs) + width·(log9((1 − target)
            // / target) − 1).
            let margin = self.width_db * (((1.0 - target) / target).ln() / 9f64.ln() - 1.0);
            let m = scheme.modulation(mcs)?;
            let mi = scheme.efficiency(mcs)? / m.order() as f64;
            return Ok(sinr_for_mi(m, mi) + self.gap_db + margin);
        };
        let (mut lo, mut hi) = (MI_MIN_DB - 20.0, MI_MAX_DB + 20.0);
        while hi - lo > 1e-6 {
            let mid = 0.5 * (lo + hi);
            if Self::reference_block(gaps, scheme, mcs, mid)? > target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(hi)
    }

    /// TB error probability of MCS `mcs` of `scheme`, a TB of `tbs_bits`, after the
    /// transmissions whose mean MIs per coded bit are `mi_per_tx`: the code-block curves when
    /// set (the TB's own segmentation), else [`BlerCurve::combined_error_probability_in`]
    /// (which does not depend on the TB's size).
    pub fn tb_error_probability_in(&self, scheme: McsScheme, mcs: u8, tbs_bits: u32, mi_per_tx: &[f64]) -> Result<f64, CellError> {
        match self.code_blocks_in(scheme)? {
            Some(gaps) => {
                let m = scheme.modulation(mcs)?;
                let r = scheme.efficiency(mcs)? / f64::from(m.order());
                gaps.tb_error_probability(m, r, tbs_bits, mi_per_tx)
            }
            None => self.combined_error_probability_in(scheme, mcs, mi_per_tx),
        }
    }

    /// The effective SINR in dB at which LTE MCS `mcs` (0..=28) has a TB error probability of
    /// 10 %.
    pub fn threshold_db(&self, mcs: u8) -> Result<f64, CellError> {
        self.threshold_db_in(McsScheme::Lte, mcs)
    }

    /// The effective SINR in dB at which MCS `mcs` of `scheme` has a TB error probability of
    /// 10 %: the curve is placed by the MCS's modulation and spectral efficiency alone, so it
    /// serves LTE's and NR's tables alike.
    pub fn threshold_db_in(&self, scheme: McsScheme, mcs: u8) -> Result<f64, CellError> {
        if self.code_blocks_in(scheme)?.is_some() {
            return self.required_sinr_db(scheme, mcs, 0.1);
        }
        let m = scheme.modulation(mcs)?;
        let mi = scheme.efficiency(mcs)? / m.order() as f64;
        Ok(sinr_for_mi(m, mi) + self.gap_db)
    }

    /// TB error probability of LTE MCS `mcs` at effective SINR `effective_sinr_db`.
    pub fn error_probability(&self, mcs: u8, effective_sinr_db: f64) -> Result<f64, CellError> {
        self.error_probability_in(McsScheme::Lte, mcs, effective_sinr_db)
    }

    /// TB error probability of MCS `mcs` of `scheme` at effective SINR `effective_sinr_db`.
    pub fn error_probability_in(&self, scheme: McsScheme, mcs: u8, effective_sinr_db: f64) -> Result<f64, CellError> {
        self.validate()?;
        check_range("effective_sinr_db", effective_sinr_db, -SINR_LIMIT_DB, SINR_LIMIT_DB, "dB")?;
        if let Some(gaps) = self.code_blocks_in(scheme)? {
            return Self::reference_block(gaps, scheme, mcs, effective_sinr_db);
        }
        let x = 1.0 + (effective_sinr_db - self.threshold_db_in(scheme, mcs)?) / self.width_db;
        Ok(1.0 / (1.0 + 9f64.powf(x)))
    }

    /// TB error probability of LTE MCS `mcs` over resource blocks with SINRs `sinr_db` (the
    /// MIESM effective SINR for the MCS's modulation).
    pub fn tb_error_probability(&self, mcs: u8, sinr_db: &[f64]) -> Result<f64, CellError> {
        let m = mcs_entry(mcs)?.modulation;
        self.error_probability(mcs, effective_sinr_db(m, sinr_db)?)
    }

    /// TB error probability of MCS `mcs` after `mi_per_tx.len()` (1..=8) equal-size
    /// transmissions of the same TB combined by incremental redundancy, `mi_per_tx[k]` being the
    /// mean MI per coded bit of transmission k over its resource blocks.
    ///
    /// As LENA's MI error model does for HARQ, the combined TB is judged at the code-bit-weighted
    /// mean MI of all transmissions (with equal sizes, the plain mean) and at the effective code
    /// rate of the information bits over all the code bits sent so far, i.e. the MCS's spectral
    /// efficiency divided by the number of transmissions. Here that lower rate moves the 10 %
    /// point of the curve to the SINR at which the modulation's capacity per coded bit equals
    /// efficiency / (Q_m · transmissions), plus the same gap, with the same width; with one
    /// transmission this is [`BlerCurve::error_probability`] at the MIESM effective SINR.
    pub fn combined_error_probability(&self, mcs: u8, mi_per_tx: &[f64]) -> Result<f64, CellError> {
        self.combined_error_probability_in(McsScheme::Lte, mcs, mi_per_tx)
    }

    /// [`BlerCurve::combined_error_probability`] for MCS `mcs` of `scheme`.
    pub fn combined_error_probability_in(&self, scheme: McsScheme, mcs: u8, mi_per_tx: &[f64]) -> Result<f64, CellError> {
        self.validate()?;
        let modulation = scheme.modulation(mcs)?;
        let n = mi_per_tx.len();
        if n == 0 || n > 8 {
            return Err(CellError::out_of_range("transmissions", n as f64, "an integer in [1, 8]"));
        }
        for (k, &mi) in mi_per_tx.iter().enumerate() {
            check_range(&format!("mi_per_tx[{k}]"), mi, 0.0, 1.0, "bit per coded bit")?;
        }
        let mean = mi_per_tx.iter().sum::<f64>() / n as f64;
        let rate_mi = scheme.efficiency(mcs)? / (modulation.order() as f64 * n as f64);
        let threshold = sinr_for_mi(modulation, rate_mi) + self.gap_db;
        let x = 1.0 + (sinr_for_mi(modulation, mean) - threshold) / self.width_db;
        Ok(1.0 / (1.0 + 9f64.powf(x)))
    }
}

/// True (the TB is lost) with probability `p`, drawn from `rng`. `p` outside [0, 1] is clamped.
pub fn draw_tb_error(p: f64, rng: &mut RngStream) -> bool {
    rng.bernoulli(p.clamp(0.0, 1.0))
}

/// How a UE turns SINRs into a CQI.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AmcModel {
    /// LENA's `PiroEW2010`: Shannon gap with bit-error target `ber` (LENA: 5·10⁻⁵).
    ShannonGap {
        /// Bit-error target, in (0, 0.2).
        ber: f64,
    },
    /// MIESM with a BLER curve and a TB error target (LENA's MI error model, in spirit).
    MutualInformation {
        /// The TB error probability curves.
        curve: BlerCurve,
        /// The highest acceptable TB error probability at the reported CQI (LENA: 0.1), in (0, 1).
        bler_target: f64,
    },
}

impl AmcModel {
    /// LENA's Shannon-gap model with its default BER, 5·10⁻⁵.
    pub fn shannon_gap() -> AmcModel {
        AmcModel::ShannonGap { ber: LENA_BER }
    }

    /// The MI model with the default curve and a 10 % BLER target.
    pub fn mutual_information() -> AmcModel {
        AmcModel::MutualInformation { curve: BlerCurve::default(), bler_target: 0.1 }
    }

    /// The model, or an error naming the field out of range.
    pub fn validate(&self) -> Result<(), CellError> {
        match *self {
            AmcModel::ShannonGap { ber } => {
                if !(ber > 0.0 && ber < 0.2) {
                    return Err(CellError::out_of_range("amc.ber", ber, "a number in (0, 0.2)"));
                }
            }
            AmcModel::MutualInformation { curve, bler_target } => {
                curve.validate()?;
                if !(bler_target > 0.0 && bler_target < 1.0) {
                    return Err(CellError::out_of_range("amc.bler_target", bler_target, "a number in (0, 1)"));
                }
            }
        }
        Ok(())
    }

    /// The CQI (0..=15) of one group of resource blocks with SINRs `sinr_db` (dB), on LTE's
    /// tables. CQI 0 means "out of range": no MCS meets the target.
    pub fn cqi(&self, sinr_db: &[f64]) -> Result<u8, CellError> {
        self.cqi_in(McsScheme::Lte, sinr_db)
    }

    /// [`AmcModel::cqi`] on the tables of `scheme`.
    pub fn cqi_in(&self, scheme: McsScheme, sinr_db: &[f64]) -> Result<u8, CellError> {
        self.validate()?;
        check_sinrs(sinr_db)?;
        match *self {
            AmcModel::ShannonGap { ber } => {
                let s = sinr_db.iter().map(|&x| shannon_gap_efficiency(x, ber)).sum::<f64>() / sinr_db.len() as f64;
                Ok(scheme.cqi_for_efficiency(s))
            }
            AmcModel::MutualInformation { curve, bler_target } => {
                // The effective SINR depends only on the modulation: at most four per group.
                let mut effective: [Option<f64>; MODULATIONS] = [None; MODULATIONS];
                for cqi in (1..=MAX_CQI).rev() {
                    if let Some(mcs) = scheme.mcs_for_cqi(cqi)? {
                        let m = scheme.modulation(mcs)?;
                        let slot = &mut effective[modulation_slot(m)];
                        let eff = match *slot {
                            Some(e) => e,
                            None => *slot.insert(effective_sinr_db(m, sinr_db)?),
                        };
                        if curve.error_probability_in(scheme, mcs, eff)? <= bler_target {
                            return Ok(cqi);
                        }
                    }
                }
                Ok(0)
            }
        }
    }

    /// One CQI per resource block group of `rbg_size` blocks over the per-RB SINRs `sinr_db`
    /// (the last group may be smaller): a subband report.
    pub fn cqi_per_rbg(&self, sinr_db: &[f64], rbg_size: usize) -> Result<Vec<u8>, CellError> {
        self.cqi_per_rbg_in(McsScheme::Lte, sinr_db, rbg_size)
    }

    /// [`AmcModel::cqi_per_rbg`] on the tables of `scheme`.
    pub fn cqi_per_rbg_in(&self, scheme: McsScheme, sinr_db: &[f64], rbg_size: usize) -> Result<Vec<u8>, CellError> {
        if rbg_size == 0 {
            return Err(CellError::out_of_range("rbg_size", 0.0, "an integer ≥ 1"));
        }
        check_sinrs(sinr_db)?;
        match self.requirements_in(scheme)? {
            None => sinr_db.chunks(rbg_size).map(|g| self.cqi_in(scheme, g)).collect(),
            Some(need) => Ok(sinr_db.chunks(rbg_size).map(|g| need.cqi(g)).collect()),
        }
    }

    /// What each CQI requires of a group's mean MI under the MI model (`None` for the
    /// Shannon-gap model), worked out once for any number of groups, on LTE's tables.
    pub fn requirements(&self) -> Result<Option<CqiRequirements>, CellError> {
        self.requirements_in(McsScheme::Lte)
    }

    /// [`AmcModel::requirements`] on the tables of `scheme`.
    pub fn requirements_in(&self, scheme: McsScheme) -> Result<Option<CqiRequirements>, CellError> {
        self.validate()?;
        let AmcModel::MutualInformation { curve, bler_target } = *self else {
            return Ok(None);
        };
        // One required effective SINR per CQI.
        let mut per_cqi = [(Modulation::Qpsk, f64::INFINITY, f64::INFINITY); MAX_CQI as usize + 1];
        for cqi in 1..=MAX_CQI {
            if let Some(mcs) = scheme.mcs_for_cqi(cqi)? {
                let m = scheme.modulation(mcs)?;
                let required = curve.required_sinr_db(scheme, mcs, bler_target)?;
                per_cqi[cqi as usize] = (m, required, mi_per_bit(m, required));
            }
        }
        Ok(Some(CqiRequirements { per_cqi }))
    }
}

/// The effective SINR each CQI's MCS needs to meet the MI model's TB error target, and the
/// mean MI per coded bit that gives it ([`AmcModel::requirements`]). A group's CQI is then
/// found in the MI domain: the effective SINR is the inverse of the mean MI, and MI rises with
/// the SINR, so no group needs the inverse except right at a requirement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CqiRequirements {
    /// Per CQI (index 0 unused): the MCS's modulation, the required effective SINR (dB) and
    /// its MI per coded bit.
    per_cqi: [(Modulation, f64, f64); MAX_CQI as usize + 1],
}

impl CqiRequirements {
    /// The CQI (0..=15) of one group of blocks with SINRs `sinr_db` (already checked): the
    /// highest whose requirement the group's MIESM effective SINR meets, as [`AmcModel::cqi`].
    pub fn cqi(&self, sinr_db: &[f64]) -> u8 {
        let mut mean_mi: [Option<f64>; MODULATIONS] = [None; MODULATIONS];
        for c in (1..=MAX_CQI).rev() {
            let (m, required, required_mi) = self.per_cqi[c as usize];
            let slot = &mut mean_mi[modulation_slot(m)];
            let mi = *slot.get_or_insert_with(|| sinr_db.iter().map(|&x| mi_per_bit(m, x)).sum::<f64>() / sinr_db.len() as f64);
            // Far from the requirement the MI decides; at it, the exact test of cqi().
            let meets = if (mi - required_mi).abs() > 1e-9 { mi > required_mi } else { sinr_for_mi(m, mi) >= required };
            if meets {
                return c;
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_mi_tables_are_the_integral_bit_for_bit() {
        assert_eq!(MI_TABLE_POINTS, ((MI_MAX_DB - MI_MIN_DB) / MI_STEP_DB).round() as usize + 1);
        for m in [Modulation::Qpsk, Modulation::Qam16, Modulation::Qam64, Modulation::Qam256] {
            let integral = integrate_mi_table(m);
            let stored = table_of(m);
            assert_eq!(stored.len(), integral.len(), "{m:?}");
            for (k, (s, i)) in stored.iter().zip(&integral).enumerate() {
                assert_eq!(s.to_bits(), i.to_bits(), "{m:?} at {} dB: stored {s}, integral {i}", MI_MIN_DB + k as f64 * MI_STEP_DB);
            }
            // The tables rise from near 0 to 1 bit per coded bit.
            assert!(stored[0] < 0.01 && stored[MI_TABLE_POINTS - 1] > 0.999, "{m:?}");
        }
    }

    #[test]
    fn the_stored_dispersion_tables_are_the_integral_bit_for_bit() {
        for m in [Modulation::Qpsk, Modulation::Qam16, Modulation::Qam64, Modulation::Qam256] {
            let integral = integrate_dispersion_table(m);
            let stored = &crate::dispersion_table::DISPERSION_PER_CODED_BIT[modulation_slot(m)];
            for (k, (s, i)) in stored.iter().zip(&integral).enumerate() {
                assert_eq!(s.to_bits(), i.to_bits(), "{m:?} at {} dB", MI_MIN_DB + k as f64 * MI_STEP_DB);
            }
            // Near zero where the channel carries nothing or everything, and never above the
            // Gaussian-input dispersion's ceiling of log2(e)² ≈ 2.08 bits² per channel use.
            assert!(stored[0] < 0.01 && stored[MI_TABLE_POINTS - 1] < 1e-6, "{m:?}: {} {}", stored[0], stored[MI_TABLE_POINTS - 1]);
            let peak = stored.iter().cloned().fold(0.0, f64::max);
            assert!(peak > 0.2 && peak < 2.1, "{m:?}: peak {peak}");
        }
    }
}
