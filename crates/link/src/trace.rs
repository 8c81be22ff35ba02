//! Parsers for rate traces. (CONTRACT STUB — to be implemented)

use crate::rate::{OpportunityTrace, StepTrace};
use crate::TraceError;

/// Where the time of each row of a bitrate CSV comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeColumn {
    /// A column of seconds (integer or decimal) since any origin.
    Seconds(String),
    /// A G-NetTrack timestamp column, `YYYY.MM.DD_HH.MM.SS` (the UCC datasets' `Timestamp`).
    GNetTrack(String),
    /// No time column: row i covers second i.
    RowIndex,
}

/// How to read a per-second bitrate CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct BitrateCsvFormat {
    pub time: TimeColumn,
    pub rate_column: String,
    /// Bits per second per unit of the rate column (1000 for kbit/s).
    pub bps_per_unit: f64,
}

impl BitrateCsvFormat {
    /// The UCC G-NetTrack files: `Timestamp`, `DL_bitrate` (or `UL_bitrate`) in kbit/s.
    pub fn ucc(column: &str) -> BitrateCsvFormat {
        BitrateCsvFormat { time: TimeColumn::GNetTrack("Timestamp".into()), rate_column: column.into(), bps_per_unit: 1000.0 }
    }
}

pub fn parse_mahimahi(text: &str, origin: &str) -> Result<OpportunityTrace, TraceError> {
    let _ = (text, origin);
    unimplemented!()
}

pub fn parse_bitrate_csv(text: &str, origin: &str, format: &BitrateCsvFormat) -> Result<StepTrace, TraceError> {
    let _ = (text, origin, format);
    unimplemented!()
}
