//! Link adaptation reused while a UE's SINRs stay the same.
//!
//! A UE without fading, or between two TTIs at the same distance and allocation, meets exactly
//! the SINRs of its previous TTI; its CQIs, its mean mutual information per coded bit and the
//! MI of each resource block are then those of that TTI too. [`SinrMemo`] keeps them for the
//! last SINR vector it saw (compared bit for bit) and works out only what a new vector needs,
//! lazily. Every result is computed by the same functions of [`crate::amc`] in the same order
//! of operations as without it, so a run gives bit-identical numbers with or without the memo;
//! only the repeated work goes.

use crate::amc::{check_sinrs, mi_per_bit, modulation_slot, sinr_for_mi, AmcModel, CqiRequirements};
use crate::error::CellError;
use crate::tables::Modulation;

/// What was worked out for one SINR vector (dB, one per resource block).
#[derive(Clone, Debug, Default)]
pub struct SinrMemo {
    /// The SINRs the entries below belong to; empty before the first use.
    sinr: Vec<f64>,
    /// [`AmcModel::cqi`] of the whole vector.
    cqi: Option<u8>,
    /// [`AmcModel::cqi_per_rbg`] of the vector, with its group size.
    rbg_cqi: Option<(usize, Vec<u8>)>,
    /// MI per coded bit of each block, per modulation (QPSK, 16QAM, 64QAM).
    mi_per_rb: [Option<Vec<f64>>; 3],
    /// The mean of the SINRs, dB.
    mean_sinr_db: Option<f64>,
    /// The CQI requirements of the model last asked for (whatever the SINRs), with it.
    need: Option<(AmcModel, Option<CqiRequirements>)>,
}

impl SinrMemo {
    /// Makes the memo belong to `sinr_db`, forgetting everything if it differs from the last
    /// vector in any bit.
    fn key(&mut self, sinr_db: &[f64]) {
        let same = self.sinr.len() == sinr_db.len() && self.sinr.iter().zip(sinr_db).all(|(a, b)| a.to_bits() == b.to_bits());
        if !same {
            self.sinr.clear();
            self.sinr.extend_from_slice(sinr_db);
            self.cqi = None;
            self.rbg_cqi = None;
            self.mi_per_rb = [None, None, None];
            self.mean_sinr_db = None;
        }
    }

    fn requirements(&mut self, amc: &AmcModel) -> Result<Option<CqiRequirements>, CellError> {
        match self.need {
            Some((model, need)) if model == *amc => Ok(need),
            _ => Ok(self.need.insert((*amc, amc.requirements()?)).1),
        }
    }

    /// [`AmcModel::cqi`] of `sinr_db` with `amc`.
    pub fn cqi(&mut self, amc: &AmcModel, sinr_db: &[f64]) -> Result<u8, CellError> {
        self.key(sinr_db);
        if let Some(c) = self.cqi {
            return Ok(c);
        }
        let c = match self.requirements(amc)? {
            Some(need) => {
                check_sinrs(sinr_db)?;
                need.cqi(sinr_db)
            }
            None => amc.cqi(sinr_db)?,
        };
        Ok(*self.cqi.insert(c))
    }

    /// [`AmcModel::cqi_per_rbg`] of `sinr_db` with `amc`.
    pub fn cqi_per_rbg(&mut self, amc: &AmcModel, sinr_db: &[f64], rbg_size: usize) -> Result<&[u8], CellError> {
        self.key(sinr_db);
        if self.rbg_cqi.as_ref().map_or(true, |(size, _)| *size != rbg_size) {
            let cqi = match self.requirements(amc)? {
                Some(need) if rbg_size > 0 => {
                    check_sinrs(sinr_db)?;
                    sinr_db.chunks(rbg_size).map(|g| need.cqi(g)).collect()
                }
                _ => amc.cqi_per_rbg(sinr_db, rbg_size)?,
            };
            self.rbg_cqi = Some((rbg_size, cqi));
        }
        Ok(self.rbg_cqi.as_ref().map(|(_, c)| c.as_slice()).unwrap_or_default())
    }

    /// The mean of `sinr_db` (its plain sum over its length), dB.
    pub fn mean_sinr_db(&mut self, sinr_db: &[f64]) -> f64 {
        self.key(sinr_db);
        *self.mean_sinr_db.get_or_insert_with(|| sinr_db.iter().sum::<f64>() / sinr_db.len() as f64)
    }

    /// The MI per coded bit of every block of `sinr_db` for `modulation`.
    fn per_rb(&mut self, modulation: Modulation, sinr_db: &[f64]) -> Result<&[f64], CellError> {
        self.key(sinr_db);
        let slot = &mut self.mi_per_rb[modulation_slot(modulation)];
        if slot.is_none() {
            check_sinrs(sinr_db)?;
        }
        Ok(slot.get_or_insert_with(|| sinr_db.iter().map(|&s| mi_per_bit(modulation, s)).collect()))
    }

    /// [`crate::amc::mean_mi_per_bit`] of `sinr_db`.
    pub fn mean_mi(&mut self, modulation: Modulation, sinr_db: &[f64]) -> Result<f64, CellError> {
        let mi = self.per_rb(modulation, sinr_db)?;
        Ok(mi.iter().sum::<f64>() / mi.len() as f64)
    }

    /// [`crate::amc::effective_sinr_db`] of `sinr_db`.
    pub fn effective_sinr_db(&mut self, modulation: Modulation, sinr_db: &[f64]) -> Result<f64, CellError> {
        Ok(sinr_for_mi(modulation, self.mean_mi(modulation, sinr_db)?))
    }

    /// [`crate::amc::mean_mi_per_bit`] of the blocks `rbs` of `sinr_db`, taken in that order
    /// (an allocation's blocks); an error if there are none.
    pub fn mean_mi_of(&mut self, modulation: Modulation, sinr_db: &[f64], rbs: impl Iterator<Item = usize>) -> Result<f64, CellError> {
        let mi = self.per_rb(modulation, sinr_db)?;
        let mut n = 0usize;
        let sum = rbs
            .map(|rb| {
                n += 1;
                mi[rb]
            })
            .sum::<f64>();
        if n == 0 {
            return Err(CellError::invalid("sinr_db", "no resource blocks: at least one SINR is needed"));
        }
        Ok(sum / n as f64)
    }
}
