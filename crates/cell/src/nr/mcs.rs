//! The NR PDSCH MCS and CQI tables of TS 38.214 and 5G-LENA's maps between them:
//!
//! * Table 5.1.3.1-1 ("64QAM", MCS 0..=28; 29–31 reserved for retransmissions) and Table
//!   5.1.3.1-2 ("256QAM", MCS 0..=27; 28–31 reserved): modulation order Q_m and target code
//!   rate R × 1024 per MCS.
//! * Table 5.2.2.1-2 (up to 64QAM, the LTE 4-bit table) and Table 5.2.2.1-3 (up to 256QAM):
//!   modulation and R × 1024 per CQI 1..=15 (CQI 0 is "out of range").
//! * CQI → MCS as `NrAmc::GetMcsFromCqi` and efficiency → CQI as
//!   `NrAmc::GetCqiFromSpectralEfficiency` of 5G-LENA, the same rules as the LTE
//!   [`crate::tables`] module.
//!
//! Spectral efficiency is Q_m · R, computed exactly from R × 1024 (the specification prints it
//! rounded to four decimals).

use crate::error::CellError;
use crate::tables::Modulation;

/// Highest CQI index (4-bit CQI).
pub const MAX_CQI: u8 = 15;

/// One row of an MCS table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NrMcs {
    /// Modulation (order Q_m).
    pub modulation: Modulation,
    /// Target code rate R × 1024.
    pub r_x1024: f64,
    /// Spectral efficiency Q_m · R in bits per resource element and layer.
    pub efficiency: f64,
}

/// One row of a CQI table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NrCqi {
    /// Modulation.
    pub modulation: Modulation,
    /// Code rate R × 1024.
    pub r_x1024: f64,
    /// Spectral efficiency Q_m · R in bits per resource element and layer.
    pub efficiency: f64,
}

/// Modulation order and R × 1024 of MCS 0..=28, TS 38.214 Table 5.1.3.1-1.
#[rustfmt::skip]
const MCS_TABLE_1: [(u8, f64); 29] = [
    (2, 120.0), (2, 157.0), (2, 193.0), (2, 251.0), (2, 308.0), (2, 379.0), (2, 449.0), (2, 526.0), (2, 602.0), (2, 679.0),
    (4, 340.0), (4, 378.0), (4, 434.0), (4, 490.0), (4, 553.0), (4, 616.0), (4, 658.0),
    (6, 438.0), (6, 466.0), (6, 517.0), (6, 567.0), (6, 616.0), (6, 666.0), (6, 719.0), (6, 772.0), (6, 822.0), (6, 873.0),
    (6, 910.0), (6, 948.0),
];

/// Modulation order and R × 1024 of MCS 0..=27, TS 38.214 Table 5.1.3.1-2.
#[rustfmt::skip]
const MCS_TABLE_2: [(u8, f64); 28] = [
    (2, 120.0), (2, 193.0), (2, 308.0), (2, 449.0), (2, 602.0),
    (4, 378.0), (4, 434.0), (4, 490.0), (4, 553.0), (4, 616.0), (4, 658.0),
    (6, 466.0), (6, 517.0), (6, 567.0), (6, 616.0), (6, 666.0), (6, 719.0), (6, 772.0), (6, 822.0), (6, 873.0),
    (8, 682.5), (8, 711.0), (8, 754.0), (8, 797.0), (8, 841.0), (8, 885.0), (8, 916.5), (8, 948.0),
];

/// Modulation order and R × 1024 of CQI 1..=15, TS 38.214 Table 5.2.2.1-2.
#[rustfmt::skip]
const CQI_TABLE_2: [(u8, f64); 15] = [
    (2, 78.0), (2, 120.0), (2, 193.0), (2, 308.0), (2, 449.0), (2, 602.0),
    (4, 378.0), (4, 490.0), (4, 616.0),
    (6, 466.0), (6, 567.0), (6, 666.0), (6, 772.0), (6, 873.0), (6, 948.0),
];

/// Modulation order and R × 1024 of CQI 1..=15, TS 38.214 Table 5.2.2.1-3.
#[rustfmt::skip]
const CQI_TABLE_3: [(u8, f64); 15] = [
    (2, 78.0), (2, 193.0), (2, 449.0),
    (4, 378.0), (4, 490.0), (4, 616.0),
    (6, 466.0), (6, 567.0), (6, 666.0), (6, 772.0), (6, 873.0),
    (8, 711.0), (8, 797.0), (8, 885.0), (8, 948.0),
];

/// Q_m · R for a row (exact: R × 1024 / 1024 is a division by a power of two).
fn efficiency(qm: u8, r_x1024: f64) -> f64 {
    f64::from(qm) * r_x1024 / 1024.0
}

fn modulation(qm: u8) -> Modulation {
    match qm {
        2 => Modulation::Qpsk,
        4 => Modulation::Qam16,
        6 => Modulation::Qam64,
        _ => Modulation::Qam256,
    }
}

/// The PDSCH MCS table in use (RRC `mcs-Table`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McsTable {
    /// Table 5.1.3.1-1, up to 64QAM, MCS 0..=28 ("qam64" in scenarios).
    Qam64,
    /// Table 5.1.3.1-2, up to 256QAM, MCS 0..=27 ("qam256" in scenarios).
    Qam256,
}

impl McsTable {
    /// The table named `name`: "qam64" or "qam256" (field `cell.mcs_table` otherwise).
    pub fn from_name(name: &str) -> Result<McsTable, CellError> {
        match name {
            "qam64" => Ok(McsTable::Qam64),
            "qam256" => Ok(McsTable::Qam256),
            _ => Err(CellError::invalid("cell.mcs_table", format!("{name:?}: must be \"qam64\" (Table 5.1.3.1-1) or \"qam256\" (Table 5.1.3.1-2)"))),
        }
    }

    /// The table's name in scenarios, "qam64" or "qam256".
    pub fn name(self) -> &'static str {
        match self {
            McsTable::Qam64 => "qam64",
            McsTable::Qam256 => "qam256",
        }
    }

    fn rows(self) -> &'static [(u8, f64)] {
        match self {
            McsTable::Qam64 => &MCS_TABLE_1,
            McsTable::Qam256 => &MCS_TABLE_2,
        }
    }

    /// The highest MCS that carries a transport block size: 28 (Table 1) or 27 (Table 2).
    pub fn max_mcs(self) -> u8 {
        self.rows().len() as u8 - 1
    }

    /// The row of `mcs` (0..=28 in Table 1, 0..=27 in Table 2; the reserved indices are
    /// refused with field `mcs`).
    pub fn entry(self, mcs: u8) -> Result<NrMcs, CellError> {
        match self.rows().get(usize::from(mcs)) {
            Some(&(qm, r)) => Ok(NrMcs { modulation: modulation(qm), r_x1024: r, efficiency: efficiency(qm, r) }),
            None => {
                let allowed = match self {
                    McsTable::Qam64 => "an integer in [0, 28] (Table 5.1.3.1-1; 29–31 are reserved for retransmissions)",
                    McsTable::Qam256 => "an integer in [0, 27] (Table 5.1.3.1-2; 28–31 are reserved for retransmissions)",
                };
                Err(CellError::out_of_range("mcs", mcs as f64, allowed))
            }
        }
    }

    /// The CQI table that goes with this MCS table: Table 5.2.2.1-2 for 64QAM, 5.2.2.1-3 for
    /// 256QAM.
    pub fn cqi_table(self) -> CqiTable {
        match self {
            McsTable::Qam64 => CqiTable::Table2,
            McsTable::Qam256 => CqiTable::Table3,
        }
    }

    /// The MCS for CQI `cqi` (0..=15, of [`McsTable::cqi_table`]) as 5G-LENA's
    /// `NrAmc::GetMcsFromCqi`: the highest MCS whose efficiency does not exceed the CQI's,
    /// MCS 0 when even MCS 0's does (CQI 1 of Table 5.2.2.1-2). CQI 0 (out of range) gives
    /// `None`: nothing is sent.
    pub fn mcs_for_cqi(self, cqi: u8) -> Result<Option<u8>, CellError> {
        if cqi > MAX_CQI {
            return Err(CellError::out_of_range("cqi", cqi as f64, "an integer in [0, 15]"));
        }
        if cqi == 0 {
            return Ok(None);
        }
        let s = self.cqi_table().entry(cqi)?.efficiency;
        let rows = self.rows();
        let mut mcs = 0usize;
        while mcs + 1 < rows.len() && efficiency(rows[mcs + 1].0, rows[mcs + 1].1) <= s {
            mcs += 1;
        }
        Ok(Some(mcs as u8))
    }
}

/// The CQI table the UE reports against (RRC `cqi-Table`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CqiTable {
    /// Table 5.2.2.1-2, up to 64QAM.
    Table2,
    /// Table 5.2.2.1-3, up to 256QAM.
    Table3,
}

impl CqiTable {
    fn rows(self) -> &'static [(u8, f64); 15] {
        match self {
            CqiTable::Table2 => &CQI_TABLE_2,
            CqiTable::Table3 => &CQI_TABLE_3,
        }
    }

    /// The row of CQI `cqi` (1..=15; 0, "out of range", has none: field `cqi`).
    pub fn entry(self, cqi: u8) -> Result<NrCqi, CellError> {
        if !(1..=MAX_CQI).contains(&cqi) {
            return Err(CellError::out_of_range("cqi", cqi as f64, "an integer in [1, 15] (0 is out of range and has no row)"));
        }
        let (qm, r) = self.rows()[usize::from(cqi) - 1];
        Ok(NrCqi { modulation: modulation(qm), r_x1024: r, efficiency: efficiency(qm, r) })
    }

    /// The CQI reported for spectral efficiency `s` (bits per RE and layer) as 5G-LENA's
    /// `NrAmc::GetCqiFromSpectralEfficiency` and the LTE [`crate::tables::cqi_for_efficiency`]:
    /// the number of CQIs 1..=15 whose efficiency is strictly below `s`, so 0 for `s` at or
    /// below CQI 1's (or not a number) and 15 above CQI 14's.
    pub fn cqi_for_efficiency(self, s: f64) -> u8 {
        self.rows().iter().filter(|&&(qm, r)| efficiency(qm, r) < s).count() as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounded_efficiencies_of_the_specification_match_the_computed_ones() {
        let mcs = [(McsTable::Qam64, 0, 0.2344), (McsTable::Qam64, 9, 1.3262), (McsTable::Qam64, 10, 1.3281), (McsTable::Qam64, 28, 5.5547)];
        let mcs2 = [(McsTable::Qam256, 20, 5.3320), (McsTable::Qam256, 26, 7.1602), (McsTable::Qam256, 27, 7.4063)];
        for (t, m, eff) in mcs.into_iter().chain(mcs2) {
            let e = t.entry(m).unwrap();
            assert!((e.efficiency - eff).abs() < 1e-4, "{t:?} MCS {m}: {} vs {eff}", e.efficiency);
            assert_eq!(e.efficiency, e.modulation.order() as f64 * e.r_x1024 / 1024.0);
        }
        #[rustfmt::skip]
        let t2 = [0.1523, 0.2344, 0.3770, 0.6016, 0.8770, 1.1758, 1.4766, 1.9141, 2.4063, 2.7305, 3.3223, 3.9023, 4.5234, 5.1152, 5.5547];
        #[rustfmt::skip]
        let t3 = [0.1523, 0.3770, 0.8770, 1.4766, 1.9141, 2.4063, 2.7305, 3.3223, 3.9023, 4.5234, 5.1152, 5.5547, 6.2266, 6.9141, 7.4063];
        for (table, effs) in [(CqiTable::Table2, t2), (CqiTable::Table3, t3)] {
            for (i, eff) in effs.into_iter().enumerate() {
                let e = table.entry(i as u8 + 1).unwrap();
                assert!((e.efficiency - eff).abs() < 1e-4, "{table:?} CQI {}: {} vs {eff}", i + 1, e.efficiency);
            }
        }
    }

    #[test]
    fn rows_grow_in_efficiency_and_modulation() {
        for t in [McsTable::Qam64, McsTable::Qam256] {
            for m in 1..=t.max_mcs() {
                let (a, b) = (t.entry(m - 1).unwrap(), t.entry(m).unwrap());
                assert!(b.modulation >= a.modulation && b.r_x1024 != a.r_x1024, "{t:?} MCS {m}");
                // The one exception of the specification: Table 1's MCS 17 (64QAM, 438) is a
                // little less efficient than MCS 16 (16QAM, 658): 2.5664 < 2.5703.
                if (t, m) == (McsTable::Qam64, 17) {
                    assert!(b.efficiency < a.efficiency && a.efficiency - b.efficiency < 0.004);
                } else {
                    assert!(b.efficiency > a.efficiency, "{t:?} MCS {m}");
                }
            }
        }
        for t in [CqiTable::Table2, CqiTable::Table3] {
            for c in 2..=15 {
                assert!(t.entry(c).unwrap().efficiency > t.entry(c - 1).unwrap().efficiency, "{t:?} CQI {c}");
            }
        }
        assert_eq!(McsTable::Qam64.entry(28).unwrap().modulation, Modulation::Qam64);
        assert_eq!(McsTable::Qam256.entry(20).unwrap().modulation, Modulation::Qam256);
        assert_eq!(CqiTable::Table3.entry(12).unwrap().modulation, Modulation::Qam256);
        assert_eq!(McsTable::Qam256.entry(26).unwrap().r_x1024, 916.5);
    }

    #[test]
    fn reserved_indices_and_unknown_names_are_refused() {
        let err = McsTable::Qam64.entry(29).unwrap_err().to_string();
        assert!(err.contains("mcs = 29") && err.contains("[0, 28]"), "{err}");
        let err = McsTable::Qam256.entry(28).unwrap_err().to_string();
        assert!(err.contains("mcs = 28") && err.contains("[0, 27]"), "{err}");
        for c in [0, 16, 255] {
            assert!(CqiTable::Table2.entry(c).unwrap_err().to_string().contains("[1, 15]"));
        }
        assert!(McsTable::Qam64.mcs_for_cqi(16).unwrap_err().to_string().contains("cqi = 16"));
        for t in [McsTable::Qam64, McsTable::Qam256] {
            assert_eq!(McsTable::from_name(t.name()).unwrap(), t);
        }
        let err = McsTable::from_name("QAM256").unwrap_err().to_string();
        assert!(err.contains("cell.mcs_table") && err.contains("\"qam64\"") && err.contains("\"qam256\""), "{err}");
    }

    #[test]
    fn cqi_maps_to_the_highest_mcs_not_above_its_efficiency() {
        // Table 1 with CQI Table 2: CQI 1 (0.15) is below MCS 0 (0.23) and still gets MCS 0.
        let t1: Vec<Option<u8>> = (0..=15).map(|c| McsTable::Qam64.mcs_for_cqi(c).unwrap()).collect();
        let want1 = [None, Some(0), Some(0), Some(2), Some(4), Some(6), Some(8), Some(11), Some(13), Some(15), Some(18), Some(20), Some(22), Some(24), Some(26), Some(28)];
        assert_eq!(t1, want1);
        let t2: Vec<Option<u8>> = (0..=15).map(|c| McsTable::Qam256.mcs_for_cqi(c).unwrap()).collect();
        let want2 = [None, Some(0), Some(1), Some(3), Some(5), Some(7), Some(9), Some(11), Some(13), Some(15), Some(17), Some(19), Some(21), Some(23), Some(25), Some(27)];
        assert_eq!(t2, want2);
        for t in [McsTable::Qam64, McsTable::Qam256] {
            for c in 1..=15 {
                let m = t.mcs_for_cqi(c).unwrap().unwrap();
                let s = t.cqi_table().entry(c).unwrap().efficiency;
                assert!(m == 0 || t.entry(m).unwrap().efficiency <= s);
                assert!(m == t.max_mcs() || t.entry(m + 1).unwrap().efficiency > s);
            }
        }
    }

    #[test]
    fn efficiency_maps_to_the_count_of_cqis_strictly_below_it() {
        let t = CqiTable::Table3;
        assert_eq!(t.cqi_for_efficiency(0.0), 0);
        assert_eq!(t.cqi_for_efficiency(f64::NAN), 0);
        assert_eq!(t.cqi_for_efficiency(t.entry(1).unwrap().efficiency), 0);
        assert_eq!(t.cqi_for_efficiency(t.entry(1).unwrap().efficiency + 1e-9), 1);
        assert_eq!(t.cqi_for_efficiency(t.entry(15).unwrap().efficiency), 14);
        assert_eq!(t.cqi_for_efficiency(100.0), 15);
        assert_eq!(CqiTable::Table2.cqi_for_efficiency(5.0), 13);
        assert_eq!(CqiTable::Table3.cqi_for_efficiency(5.0), 10);
    }
}
