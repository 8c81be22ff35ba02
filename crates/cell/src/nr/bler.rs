//! The error probability of an NR transport block from its LDPC code blocks (TS 38.212 §5.2.2,
//! §7.2.2): the TB's base graph and segmentation into C code blocks of K' bits, each block's
//! error probability from the normal approximation of the finite-blocklength coding rate
//! (Polyanskiy, Poor and Verdú, "Channel coding rate in the finite blocklength regime", IEEE
//! Trans. IT 2010) on the modulation-constrained AWGN channel at the MIESM effective SINR less
//! the base graph's implementation gap, and the TB lost if any block is:
//! BLER_TB = 1 − (1 − BLER_CB)^C, as 5G-LENA's `NrEesmErrorModel` combines its code-block curves.
//!
//! A code block of K' information bits sent as E = K'/R coded bits (the MCS's target code rate
//! R; rate matching spreads the TB's coded bits evenly over its blocks) over transmissions k
//! with mean MI per coded bit I_k (bits) and dispersion per coded bit V_k (bits²) is lost with
//! probability
//!
//! ```text
//! Q( (Σ_k E·I_k − K' + ½·log2(n)) / √(Σ_k E·V_k) ),   n = Σ_k E / Q_m channel uses,
//! ```
//!
//! I_k and V_k read at the transmission's effective SINR less the gap ([`crate::amc::mi_per_bit`],
//! [`crate::amc::dispersion_per_bit`]). HARQ with incremental redundancy adds each
//! retransmission's coded bits to the same block (the circular buffer's limit, beyond which
//! bits repeat, is not modelled). The curve's steepness follows the block length: a 40-bit
//! block falls from 50 % to 10 % over about 1.7 dB of 16QAM at R 0.48, a 1 864-bit one over a
//! quarter of a dB — the widths of 5G-LENA's link-level curves for the same MCS (its Table-1
//! MCS 13, base graph 2: 1.60 and 0.31 dB), which sit a further 3.5–3.7 dB to the right; its
//! MCS 4 on base graph 1 sits 4.7 dB to the right (`tests/it/nr_bler.rs`). The gap is the model's
//! one free parameter per base graph: 1 dB by default, the implementation gap
//! [`crate::amc::BlerCurve`] takes to capacity; a cell that should match LENA's curves takes
//! theirs.

use crate::amc::{dispersion_per_bit, mi_per_bit, sinr_for_mi};
use crate::error::{check_range, CellError};
use crate::nr::tbs::{base_graph, code_blocks, BaseGraph};
use crate::tables::Modulation;

/// The implementation gap of each LDPC base graph to the normal approximation, in dB.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodeBlockGaps {
    /// Base graph 1 (large blocks at high rates), 0..=10 dB.
    pub bg1_db: f64,
    /// Base graph 2 (small blocks or low rates), 0..=10 dB.
    pub bg2_db: f64,
}

impl Default for CodeBlockGaps {
    /// 1 dB for both: the implementation gap the logistic curve takes to capacity.
    fn default() -> CodeBlockGaps {
        CodeBlockGaps { bg1_db: 1.0, bg2_db: 1.0 }
    }
}

/// One code block of a transport block: its information bits (CRC included), its coded bits
/// per transmission and its base graph, and how many such blocks the TB has.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segmentation {
    /// LDPC base graph (38.212 §7.2.2).
    pub base_graph: BaseGraph,
    /// Code blocks C.
    pub blocks: u32,
    /// Information bits per block K' (the block's share of the TB and its CRCs).
    pub block_bits: f64,
}

/// How a TB of `tbs_bits` (A ≥ 1) at code rate `r` is segmented (TS 38.212 §5.2.2): B = A +
/// the TB CRC (24 bits above 3 824, else 16); one block of B bits, or C blocks of
/// (B + 24·C) / C bits each.
pub fn segmentation(tbs_bits: u32, r: f64) -> Segmentation {
    let bg = base_graph(tbs_bits, r);
    let c = code_blocks(tbs_bits, bg).max(1);
    let crc = if tbs_bits > 3824 { 24.0 } else { 16.0 };
    let b = f64::from(tbs_bits) + crc;
    let block_bits = if c == 1 { b } else { (b + 24.0 * f64::from(c)) / f64::from(c) };
    Segmentation { base_graph: bg, blocks: c, block_bits }
}

impl CodeBlockGaps {
    /// The gaps, or an error naming the field out of range.
    pub fn validate(&self) -> Result<(), CellError> {
        check_range("bler.gap_bg1_db", self.bg1_db, 0.0, 10.0, "dB")?;
        check_range("bler.gap_bg2_db", self.bg2_db, 0.0, 10.0, "dB")?;
        Ok(())
    }

    /// The gap of base graph `bg`, dB.
    pub fn gap_db(&self, bg: BaseGraph) -> f64 {
        match bg {
            BaseGraph::Bg1 => self.bg1_db,
            BaseGraph::Bg2 => self.bg2_db,
        }
    }

    /// The error probability of one code block of `block_bits` information bits on base graph
    /// `bg`, sent at code rate `r` with `modulation`, after transmissions whose mean MIs per
    /// coded bit are `mi_per_tx` (each in [0, 1]; at least one).
    pub fn block_error_probability(&self, modulation: Modulation, r: f64, bg: BaseGraph, block_bits: f64, mi_per_tx: &[f64]) -> f64 {
        let gap = self.gap_db(bg);
        let coded = block_bits / r;
        let (mut info, mut variance) = (0.0, 0.0);
        for &mi in mi_per_tx {
            let sinr = sinr_for_mi(modulation, mi) - gap;
            info += coded * mi_per_bit(modulation, sinr);
            variance += coded * dispersion_per_bit(modulation, sinr);
        }
        let uses = coded * mi_per_tx.len() as f64 / f64::from(modulation.order());
        let margin = info - block_bits + 0.5 * uses.log2();
        if variance <= 0.0 {
            // No spread left (the constellation saturated, or no information at all): the
            // block decodes exactly when the information suffices.
            return if margin >= 0.0 { 0.0 } else { 1.0 };
        }
        q_function(margin / variance.sqrt())
    }

    /// The error probability of a TB of `tbs_bits` at code rate `r` with `modulation` after
    /// transmissions whose mean MIs per coded bit are `mi_per_tx`: its base graph and
    /// segmentation, then 1 − (1 − BLER_CB)^C.
    pub fn tb_error_probability(&self, modulation: Modulation, r: f64, tbs_bits: u32, mi_per_tx: &[f64]) -> Result<f64, CellError> {
        self.validate()?;
        if tbs_bits == 0 {
            return Err(CellError::out_of_range("tbs_bits", 0.0, "an integer ≥ 1"));
        }
        check_range("code_rate", r, 1e-3, 1.0, "")?;
        if mi_per_tx.is_empty() || mi_per_tx.len() > 8 {
            return Err(CellError::out_of_range("transmissions", mi_per_tx.len() as f64, "an integer in [1, 8]"));
        }
        for (k, &mi) in mi_per_tx.iter().enumerate() {
            check_range(&format!("mi_per_tx[{k}]"), mi, 0.0, 1.0, "bit per coded bit")?;
        }
        let seg = segmentation(tbs_bits, r);
        let p = self.block_error_probability(modulation, r, seg.base_graph, seg.block_bits, mi_per_tx);
        Ok(1.0 - (1.0 - p).powi(seg.blocks as i32))
    }
}

/// Q(x) = P(N(0, 1) > x) = ½·erfc(x / √2).
fn q_function(x: f64) -> f64 {
    0.5 * libm::erfc(x / std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_is_the_normal_tail() {
        for (x, want) in [(0.0, 0.5), (1.281_551_565_5, 0.1), (-1.281_551_565_5, 0.9), (3.090_232_306, 0.001)] {
            assert!((q_function(x) - want).abs() < 1e-9, "Q({x}) = {}", q_function(x));
        }
    }

    #[test]
    fn segmentation_follows_38_212() {
        // A = 8 448 at R 0.5: BG1, B = 8 472 > 8 448 → C = ⌈8 472 / 8 424⌉ = 2 blocks of
        // (8 472 + 48) / 2 = 4 260 bits.
        let s = segmentation(8448, 0.5);
        assert_eq!((s.base_graph, s.blocks), (BaseGraph::Bg1, 2));
        assert!((s.block_bits - 4260.0).abs() < 1e-9);
        // A = 1 000 at R 0.3: BG2, one block of A + 16.
        let s = segmentation(1000, 0.3);
        assert_eq!((s.base_graph, s.blocks, s.block_bits), (BaseGraph::Bg2, 1, 1016.0));
        // The 391.9 Mbit/s slot's TB (270 576 bits at R 948/1024): 33 blocks of BG1.
        let s = segmentation(270_576, 948.0 / 1024.0);
        assert_eq!((s.base_graph, s.blocks), (BaseGraph::Bg1, 33));
    }
}
