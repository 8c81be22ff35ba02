//! Which modulation-and-coding tables a cell's link adaptation, scheduler and HARQ read: LTE's
//! (TS 36.213 Tables 7.2.3-1, 7.1.7.1-1 and 7.1.7.2.1-1, with ns-3 LENA's CQI → MCS map) or
//! NR's (TS 38.214 Tables 5.1.3.1-1/-2 and 5.2.2.1-2/-3, the TBS of §5.1.3.2).
//!
//! Everything above this module works in MCS and CQI indices; what an index means — its
//! modulation, its spectral efficiency (which places its BLER curve), the MCS a CQI maps to and
//! the transport block an MCS fills — is asked here. LTE's transport block comes from its table
//! by PRB count alone; NR's from the procedure, which also needs the slot's PDSCH (or PUSCH)
//! symbols, DMRS and overhead REs and layers ([`TbsShape`]).

use crate::error::CellError;
use crate::nr::mcs::McsTable;
use crate::nr::tbs::{self, TbsShape};
use crate::tables::{self, Modulation, LENA_MCS_EFFICIENCY, MAX_CQI};

/// The tables of a cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum McsScheme {
    /// LTE: TS 36.213's 29 MCSs and TBS table, LENA's efficiencies and CQI → MCS map.
    #[default]
    Lte,
    /// NR: one of TS 38.214's PDSCH MCS tables and the CQI table that goes with it.
    Nr(McsTable),
}

impl McsScheme {
    /// The modulation of MCS `mcs`.
    pub fn modulation(self, mcs: u8) -> Result<Modulation, CellError> {
        match self {
            McsScheme::Lte => Ok(tables::mcs_entry(mcs)?.modulation),
            McsScheme::Nr(t) => Ok(t.entry(mcs)?.modulation),
        }
    }

    /// The spectral efficiency of MCS `mcs`, bit/s/Hz (Q_m·R): LENA's two-decimal values for
    /// LTE, TS 38.214's exact Q_m·R×1024/1024 for NR.
    pub fn efficiency(self, mcs: u8) -> Result<f64, CellError> {
        match self {
            McsScheme::Lte => {
                tables::mcs_entry(mcs)?;
                Ok(LENA_MCS_EFFICIENCY[mcs as usize])
            }
            McsScheme::Nr(t) => Ok(t.entry(mcs)?.efficiency),
        }
    }

    /// The MCS the scheduler uses for CQI `cqi` (0..=15); `None` for CQI 0 (out of range).
    pub fn mcs_for_cqi(self, cqi: u8) -> Result<Option<u8>, CellError> {
        match self {
            McsScheme::Lte => tables::mcs_for_cqi(cqi),
            McsScheme::Nr(t) => t.mcs_for_cqi(cqi),
        }
    }

    /// The CQI (0..=15) of spectral efficiency `s` (the Shannon-gap model's report).
    pub fn cqi_for_efficiency(self, s: f64) -> u8 {
        match self {
            McsScheme::Lte => tables::cqi_for_efficiency(s),
            McsScheme::Nr(t) => t.cqi_table().cqi_for_efficiency(s),
        }
    }

    /// The highest CQI.
    pub fn max_cqi(self) -> u8 {
        MAX_CQI
    }

    /// The transport block, in bits, of MCS `mcs` over `n_prb` PRBs: LTE's table (`shape` must
    /// be `None`), NR's procedure over the REs of `shape` (which NR needs).
    pub fn tbs_bits(self, mcs: u8, n_prb: u16, shape: Option<TbsShape>) -> Result<u32, CellError> {
        match (self, shape) {
            (McsScheme::Lte, None) => tables::tbs_for_mcs(mcs, n_prb),
            (McsScheme::Nr(t), Some(shape)) => {
                let e = t.entry(mcs)?;
                tbs::tbs_bits(n_prb, e.modulation, e.r_x1024, shape)
            }
            (McsScheme::Lte, Some(_)) => Err(CellError::invalid("tbs_shape", "LTE's TBS table takes no symbol count: pass none")),
            (McsScheme::Nr(_), None) => Err(CellError::invalid("tbs_shape", "NR's TBS needs the slot's symbols, DMRS and layers")),
        }
    }
}
