//! Link adaptation reused while a UE's SINRs stay the same.
//!
//! A UE without fading, or between two TTIs at the same distance and allocation, meets exactly
//! the SINRs of its previous TTI; its CQIs, its mean mutual information per coded bit and the
//! MI of each resource block are then those of that TTI too. [`SinrMemo`] keeps them for the
//! last SINR vector it saw (compared bit for bit) and works out only what a new vector needs,
//! lazily. Every result is computed by the same functions of [`crate::amc`] in the same order
//! of operations as without it, so a run gives bit-identical numbers with or without the memo;
//! only the repeated work goes.
//!
//! ```
//! # use multiconn_cell::{memo::SinrMemo, AmcModel, McsScheme};
//! let amc = AmcModel::mutual_information();
//! let mut memo = SinrMemo::default();
//! let sinr = [12.0; 8];
//! let mut at = memo.at(&sinr);
//! assert_eq!(at.cqi(&amc, McsScheme::Lte).unwrap(), amc.cqi(&sinr).unwrap());
//! assert_eq!(at.cqi_per_rbg(&amc, McsScheme::Lte, 4).unwrap(), amc.cqi_per_rbg(&sinr, 4).unwrap().as_slice());
//! ```

use crate::amc::{check_sinrs, mi_per_bit, modulation_slot, sinr_for_mi, AmcModel, CqiRequirements, MODULATIONS};
use crate::scheme::McsScheme;
use crate::error::CellError;
use crate::tables::Modulation;

/// What was worked out for one SINR vector (dB, one per resource block). The buffers are kept
/// from vector to vector.
#[derive(Clone, Debug, Default)]
pub struct SinrMemo {
    /// The SINRs the entries below belong to; empty before the first use.
    sinr: Vec<f64>,
    /// [`AmcModel::cqi`] of the whole vector.
    cqi: Option<u8>,
    /// [`AmcModel::cqi_per_rbg`] of the vector, for the group size `rbg_size` (0: none yet).
    rbg_cqi: Vec<u8>,
    rbg_size: usize,
    /// MI per coded bit of each block, per modulation (QPSK, 16QAM, 64QAM, 256QAM), worked out block
    /// by block as asked for (NaN: not yet; the MI is never NaN); `mi_checked` once the
    /// vector's values were checked for that modulation.
    mi_per_rb: [Vec<f64>; MODULATIONS],
    mi_checked: [bool; MODULATIONS],
    /// The mean of the SINRs, dB.
    mean_sinr_db: Option<f64>,
    /// The CQI requirements of the model and tables last asked for (whatever the SINRs), with
    /// them.
    need: Option<(AmcModel, McsScheme, Option<CqiRequirements>)>,
}

impl SinrMemo {
    /// The memo for `sinr_db`: what it holds if the vector is the last one, bit for bit, and
    /// nothing otherwise.
    pub fn at<'a>(&'a mut self, sinr_db: &'a [f64]) -> SinrMemoAt<'a> {
        if !self.holds(sinr_db) {
            self.sinr.clear();
            self.sinr.extend_from_slice(sinr_db);
            self.cqi = None;
            self.rbg_size = 0;
            self.mi_checked = [false; MODULATIONS];
            self.mean_sinr_db = None;
        }
        SinrMemoAt { memo: self, sinr_db }
    }

    /// Whether the memo belongs to `sinr_db`, bit for bit.
    pub fn holds(&self, sinr_db: &[f64]) -> bool {
        // No early exit, so the comparison vectorises.
        self.sinr.len() == sinr_db.len() && self.sinr.iter().zip(sinr_db).fold(true, |same, (a, b)| same & (a.to_bits() == b.to_bits()))
    }
}

/// A few [`SinrMemo`]s for a UE whose SINRs take a few values by turns: the uplink's, where a
/// UE's share of the band follows how many UEs send in the TTI. A vector none of them holds
/// replaces the oldest.
#[derive(Clone, Debug)]
pub struct SinrMemoSet {
    memos: Vec<SinrMemo>,
    next: usize,
}

impl SinrMemoSet {
    /// A set of `n` (at least 1) memos.
    pub fn new(n: usize) -> SinrMemoSet {
        SinrMemoSet { memos: vec![SinrMemo::default(); n.max(1)], next: 0 }
    }

    /// The memo holding `sinr_db`, or the oldest one made to.
    pub fn at<'a>(&'a mut self, sinr_db: &'a [f64]) -> SinrMemoAt<'a> {
        let i = match self.memos.iter().position(|m| m.holds(sinr_db)) {
            Some(i) => i,
            None => {
                let i = self.next;
                self.next = (self.next + 1) % self.memos.len();
                i
            }
        };
        self.memos[i].at(sinr_db)
    }
}

/// A [`SinrMemo`] made to belong to one SINR vector ([`SinrMemo::at`]).
pub struct SinrMemoAt<'a> {
    memo: &'a mut SinrMemo,
    sinr_db: &'a [f64],
}

impl SinrMemoAt<'_> {
    fn requirements(&mut self, amc: &AmcModel, scheme: McsScheme) -> Result<Option<CqiRequirements>, CellError> {
        match self.memo.need {
            Some((model, tables, need)) if model == *amc && tables == scheme => Ok(need),
            _ => Ok(self.memo.need.insert((*amc, scheme, amc.requirements_in(scheme)?)).2),
        }
    }

    /// [`AmcModel::cqi_in`] of the SINRs with `amc` on the tables of `scheme` (one cell asks
    /// with one scheme: the CQI kept is not keyed by it).
    pub fn cqi(&mut self, amc: &AmcModel, scheme: McsScheme) -> Result<u8, CellError> {
        if let Some(c) = self.memo.cqi {
            return Ok(c);
        }
        let c = match self.requirements(amc, scheme)? {
            Some(need) => {
                check_sinrs(self.sinr_db)?;
                need.cqi(self.sinr_db)
            }
            None => amc.cqi_in(scheme, self.sinr_db)?,
        };
        Ok(*self.memo.cqi.insert(c))
    }

    /// [`AmcModel::cqi_per_rbg_in`] of the SINRs with `amc` on the tables of `scheme`.
    pub fn cqi_per_rbg(&mut self, amc: &AmcModel, scheme: McsScheme, rbg_size: usize) -> Result<&[u8], CellError> {
        if rbg_size == 0 {
            return Err(CellError::out_of_range("rbg_size", 0.0, "an integer ≥ 1"));
        }
        if self.memo.rbg_size != rbg_size {
            match self.requirements(amc, scheme)? {
                Some(need) => {
                    check_sinrs(self.sinr_db)?;
                    self.memo.rbg_cqi.clear();
                    self.memo.rbg_cqi.extend(self.sinr_db.chunks(rbg_size).map(|g| need.cqi(g)));
                }
                None => self.memo.rbg_cqi = amc.cqi_per_rbg_in(scheme, self.sinr_db, rbg_size)?,
            }
            self.memo.rbg_size = rbg_size;
        }
        Ok(&self.memo.rbg_cqi)
    }

    /// The mean of the SINRs (their plain sum over their number), dB.
    pub fn mean_sinr_db(&mut self) -> f64 {
        let sinr = self.sinr_db;
        *self.memo.mean_sinr_db.get_or_insert_with(|| sinr.iter().sum::<f64>() / sinr.len() as f64)
    }

    /// The MI table of `modulation` for these SINRs, checked and sized; entries may be NaN
    /// (not worked out yet).
    fn table(&mut self, modulation: Modulation) -> Result<&mut Vec<f64>, CellError> {
        let slot = modulation_slot(modulation);
        if !self.memo.mi_checked[slot] {
            check_sinrs(self.sinr_db)?;
            let mi = &mut self.memo.mi_per_rb[slot];
            mi.clear();
            mi.resize(self.sinr_db.len(), f64::NAN);
            self.memo.mi_checked[slot] = true;
        }
        Ok(&mut self.memo.mi_per_rb[slot])
    }

    /// The MI per coded bit of every block for `modulation`.
    fn per_rb(&mut self, modulation: Modulation) -> Result<&[f64], CellError> {
        let sinr = self.sinr_db;
        let mi = self.table(modulation)?;
        for (v, &s) in mi.iter_mut().zip(sinr) {
            if v.is_nan() {
                *v = mi_per_bit(modulation, s);
            }
        }
        Ok(mi)
    }

    /// [`crate::amc::mean_mi_per_bit`] of the SINRs.
    pub fn mean_mi(&mut self, modulation: Modulation) -> Result<f64, CellError> {
        let mi = self.per_rb(modulation)?;
        Ok(mi.iter().sum::<f64>() / mi.len() as f64)
    }

    /// [`crate::amc::effective_sinr_db`] of the SINRs.
    pub fn effective_sinr_db(&mut self, modulation: Modulation) -> Result<f64, CellError> {
        Ok(sinr_for_mi(modulation, self.mean_mi(modulation)?))
    }

    /// [`crate::amc::mean_mi_per_bit`] of the blocks `rbs`, taken in that order (an
    /// allocation's blocks); an error if there are none.
    pub fn mean_mi_of(&mut self, modulation: Modulation, rbs: impl Iterator<Item = usize>) -> Result<f64, CellError> {
        // Only the blocks asked for are worked out (an allocation is often a small part of
        // the band, and with fading the SINRs change every TTI).
        let sinr = self.sinr_db;
        let mi = self.table(modulation)?;
        let mut n = 0usize;
        let sum = rbs
            .map(|rb| {
                n += 1;
                if mi[rb].is_nan() {
                    mi[rb] = mi_per_bit(modulation, sinr[rb]);
                }
                mi[rb]
            })
            .sum::<f64>();
        if n == 0 {
            return Err(CellError::invalid("sinr_db", "no resource blocks: at least one SINR is needed"));
        }
        Ok(sum / n as f64)
    }
}
