//! The 3GPP TS 36.213 tables a downlink scheduler needs:
//!
//! * Table 7.2.3-1, the 4-bit CQI table: modulation, code rate × 1024 and efficiency per CQI.
//! * Table 7.1.7.1-1, the PDSCH modulation and TBS index table: MCS → (Q_m, I_TBS).
//! * Table 7.1.7.2.1-1, the transport block size table, 27 I_TBS × 110 N_PRB (data in `tbs.rs`).
//! * Table 7.1.6.1-1, the resource-block-group size P of downlink resource allocation type 0.
//!
//! and the CQI → MCS map of ns-3 LENA (`LteAmc::GetMcsFromCqi`): the highest MCS whose spectral
//! efficiency does not exceed the CQI's, both from 3GPP R1-081483 (`TBS_support.xls`, rounded to
//! two decimals), which maps CQI c ≥ 1 to MCS 2·(c − 1).

use crate::error::CellError;
use crate::tbs::TBS;

/// Highest CQI index (4-bit CQI).
pub const MAX_CQI: u8 = 15;
/// Highest MCS index that carries a transport block size (29–31 are reserved for retransmissions).
pub const MAX_MCS: u8 = 28;
/// Highest TBS index.
pub const MAX_ITBS: u8 = 26;
/// Largest number of physical resource blocks in Table 7.1.7.2.1-1.
pub const MAX_PRB: u16 = 110;
/// The downlink bandwidths LTE defines, in resource blocks (1.4, 3, 5, 10, 15 and 20 MHz).
pub const BANDWIDTHS_RB: [u16; 6] = [6, 15, 25, 50, 75, 100];

/// A modulation scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Modulation {
    /// QPSK, 2 bits per symbol.
    Qpsk,
    /// 16QAM, 4 bits per symbol.
    Qam16,
    /// 64QAM, 6 bits per symbol.
    Qam64,
    /// 256QAM, 8 bits per symbol (NR's MCS table 2, TS 38.214 Table 5.1.3.1-2).
    Qam256,
}

impl Modulation {
    /// Bits per modulation symbol, Q_m (2, 4, 6 or 8).
    pub fn order(self) -> u8 {
        match self {
            Modulation::Qpsk => 2,
            Modulation::Qam16 => 4,
            Modulation::Qam64 => 6,
            Modulation::Qam256 => 8,
        }
    }

    /// The modulation of order `q` (2, 4, 6 or 8).
    pub fn from_order(q: u8) -> Result<Modulation, CellError> {
        match q {
            2 => Ok(Modulation::Qpsk),
            4 => Ok(Modulation::Qam16),
            6 => Ok(Modulation::Qam64),
            8 => Ok(Modulation::Qam256),
            _ => Err(CellError::out_of_range("modulation order", q as f64, "2, 4, 6 or 8")),
        }
    }
}

/// One row of the CQI table (36.213 Table 7.2.3-1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CqiEntry {
    /// The CQI index, 1..=15.
    pub cqi: u8,
    /// Modulation.
    pub modulation: Modulation,
    /// Code rate × 1024.
    pub code_rate_x1024: u16,
    /// Efficiency in information bits per resource element, as the table prints it.
    pub efficiency: f64,
}

const fn cqi_row(cqi: u8, modulation: Modulation, code_rate_x1024: u16, efficiency: f64) -> CqiEntry {
    CqiEntry { cqi, modulation, code_rate_x1024, efficiency }
}

/// 36.213 Table 7.2.3-1 (4-bit CQI table), CQI 1..=15 at index CQI − 1. CQI 0 is "out of range".
#[rustfmt::skip]
pub static CQI_TABLE: [CqiEntry; 15] = [
    cqi_row(1, Modulation::Qpsk, 78, 0.1523),
    cqi_row(2, Modulation::Qpsk, 120, 0.2344),
    cqi_row(3, Modulation::Qpsk, 193, 0.3770),
    cqi_row(4, Modulation::Qpsk, 308, 0.6016),
    cqi_row(5, Modulation::Qpsk, 449, 0.8770),
    cqi_row(6, Modulation::Qpsk, 602, 1.1758),
    cqi_row(7, Modulation::Qam16, 378, 1.4766),
    cqi_row(8, Modulation::Qam16, 490, 1.9141),
    cqi_row(9, Modulation::Qam16, 616, 2.4063),
    cqi_row(10, Modulation::Qam64, 466, 2.7305),
    cqi_row(11, Modulation::Qam64, 567, 3.3223),
    cqi_row(12, Modulation::Qam64, 666, 3.9023),
    cqi_row(13, Modulation::Qam64, 772, 4.5234),
    cqi_row(14, Modulation::Qam64, 873, 5.1152),
    cqi_row(15, Modulation::Qam64, 948, 5.5547),
];

/// The CQI table's row for `cqi` (1..=15); CQI 0 ("out of range") has none.
pub fn cqi_entry(cqi: u8) -> Result<CqiEntry, CellError> {
    if (1..=MAX_CQI).contains(&cqi) {
        Ok(CQI_TABLE[cqi as usize - 1])
    } else {
        Err(CellError::out_of_range("cqi", cqi as f64, "an integer in [1, 15] (0 is out of range and has no row)"))
    }
}

/// One row of the PDSCH MCS table (36.213 Table 7.1.7.1-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McsEntry {
    /// The MCS index, 0..=28.
    pub mcs: u8,
    /// Modulation (order Q_m).
    pub modulation: Modulation,
    /// TBS index I_TBS, 0..=26.
    pub itbs: u8,
}

/// 36.213 Table 7.1.7.1-1: the modulation order Q_m of MCS 0..=28.
#[rustfmt::skip]
const MCS_QM: [u8; 29] = [
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    4, 4, 4, 4, 4, 4, 4,
    6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
];

/// 36.213 Table 7.1.7.1-1: the TBS index I_TBS of MCS 0..=28.
#[rustfmt::skip]
const MCS_ITBS: [u8; 29] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    9, 10, 11, 12, 13, 14, 15,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
];

/// The PDSCH MCS table's row for `mcs` (0..=28).
pub fn mcs_entry(mcs: u8) -> Result<McsEntry, CellError> {
    if mcs <= MAX_MCS {
        let i = mcs as usize;
        Ok(McsEntry { mcs, modulation: Modulation::from_order(MCS_QM[i])?, itbs: MCS_ITBS[i] })
    } else {
        Err(CellError::out_of_range("mcs", mcs as f64, "an integer in [0, 28] (29–31 are reserved)"))
    }
}

/// Transport block size in bits for TBS index `itbs` (0..=26) over `n_prb` (1..=110) resource
/// blocks: 36.213 Table 7.1.7.2.1-1.
pub fn tbs_bits(itbs: u8, n_prb: u16) -> Result<u32, CellError> {
    if itbs > MAX_ITBS {
        return Err(CellError::out_of_range("itbs", itbs as f64, "an integer in [0, 26]"));
    }
    if n_prb == 0 || n_prb > MAX_PRB {
        return Err(CellError::out_of_range("n_prb", n_prb as f64, "an integer in [1, 110]"));
    }
    Ok(TBS[itbs as usize][n_prb as usize - 1])
}

/// Downlink transport block size in bits for MCS `mcs` (0..=28) over `n_prb` (1..=110)
/// resource blocks: Table 7.1.7.1-1, then Table 7.1.7.2.1-1.
pub fn tbs_for_mcs(mcs: u8, n_prb: u16) -> Result<u32, CellError> {
    tbs_bits(mcs_entry(mcs)?.itbs, n_prb)
}

/// Spectral efficiency of CQI 0..=15 (bit/s/Hz) as ns-3 LENA uses it (R1-081483, two decimals).
#[rustfmt::skip]
pub const LENA_CQI_EFFICIENCY: [f64; 16] = [
    0.0, 0.15, 0.23, 0.38, 0.6, 0.88, 1.18, 1.48, 1.91, 2.41, 2.73, 3.32, 3.9, 4.52, 5.12, 5.55,
];

/// Spectral efficiency of MCS 0..=28 (bit/s/Hz) as ns-3 LENA uses it (R1-081483, two decimals).
#[rustfmt::skip]
pub const LENA_MCS_EFFICIENCY: [f64; 29] = [
    0.15, 0.19, 0.23, 0.31, 0.38, 0.49, 0.6, 0.74, 0.88, 1.03, 1.18, 1.33, 1.48, 1.7, 1.91, 2.16,
    2.41, 2.57, 2.73, 3.03, 3.32, 3.61, 3.9, 4.21, 4.52, 4.82, 5.12, 5.33, 5.55,
];

/// The MCS LENA uses for CQI `cqi` (0..=15): the highest MCS whose efficiency is at most the
/// CQI's. CQI 0 (out of range) gives `None`: nothing is sent.
pub fn mcs_for_cqi(cqi: u8) -> Result<Option<u8>, CellError> {
    if cqi > MAX_CQI {
        return Err(CellError::out_of_range("cqi", cqi as f64, "an integer in [0, 15]"));
    }
    if cqi == 0 {
        return Ok(None);
    }
    let s = LENA_CQI_EFFICIENCY[cqi as usize];
    let mut mcs = 0u8;
    while mcs < MAX_MCS && LENA_MCS_EFFICIENCY[mcs as usize + 1] <= s {
        mcs += 1;
    }
    Ok(Some(mcs))
}

/// The CQI LENA reports for spectral efficiency `s` (bit/s/Hz, ≥ 0): the number of CQI
/// efficiencies strictly below `s`, at most 15 (`LteAmc::GetCqiFromSpectralEfficiency`).
pub fn cqi_for_efficiency(s: f64) -> u8 {
    let mut cqi = 0u8;
    while cqi < MAX_CQI && LENA_CQI_EFFICIENCY[cqi as usize + 1] < s {
        cqi += 1;
    }
    cqi
}

/// Resource-block-group size P of downlink resource allocation type 0 for a downlink bandwidth
/// of `n_rb` resource blocks (36.213 Table 7.1.6.1-1): ≤ 10 → 1, 11–26 → 2, 27–63 → 3,
/// 64–110 → 4. So 6/15/25/50/75/100 RBs → 1/2/2/3/4/4.
pub fn rbg_size(n_rb: u16) -> Result<u16, CellError> {
    match n_rb {
        1..=10 => Ok(1),
        11..=26 => Ok(2),
        27..=63 => Ok(3),
        64..=110 => Ok(4),
        _ => Err(CellError::out_of_range("bandwidth_rb", n_rb as f64, "an integer in [1, 110]")),
    }
}

/// The number of resource block groups over `n_rb` resource blocks: ⌈n_rb / P⌉ (the last group
/// may be smaller).
pub fn rbg_count(n_rb: u16) -> Result<u16, CellError> {
    let p = rbg_size(n_rb)?;
    Ok(n_rb.div_ceil(p))
}

/// `n_rb` if it is one of the LTE bandwidths {6, 15, 25, 50, 75, 100} resource blocks.
pub fn check_bandwidth_rb(n_rb: u16) -> Result<u16, CellError> {
    if BANDWIDTHS_RB.contains(&n_rb) {
        Ok(n_rb)
    } else {
        Err(CellError::out_of_range("bandwidth_rb", n_rb as f64, "one of 6, 15, 25, 50, 75, 100 resource blocks"))
    }
}
