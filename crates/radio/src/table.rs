//! The per-second drive-test table: the interface between a data source (a parsed drive test or
//! the synthetic generator) and the capacity estimation (multi-operator reference §5.2).
//!
//! Long format, one row per visible cell per second:
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `time_s` | integer | seconds from the start of the drive |
//! | `operator` | string | PLMN or label (`A`, `B`, …) |
//! | `earfcn` | integer | carrier (frequency channel) of the cell |
//! | `cell_id` | string | PCI or global cell id, unique within (operator, earfcn) |
//! | `rsrp_dbm` | float | the cell's RSRP in that second, dBm |
//! | `x_m`, `y_m`, `speed_mps` | float, optional | position (m) and speed (m/s) |
//!
//! A [`DriveTable`] is validated when built: at least one row, rows in non-decreasing time,
//! finite RSRP, non-empty labels, finite positions and non-negative finite speeds.

use std::io::{Read, Write};

use crate::error::RadioError;

/// One visible cell in one second.
#[derive(Clone, Debug, PartialEq)]
pub struct CellSample {
    /// Seconds from the start of the drive.
    pub time_s: u32,
    /// Operator label or PLMN.
    pub operator: String,
    /// The carrier's frequency channel (EARFCN).
    pub earfcn: u32,
    /// The cell's id, unique within (operator, earfcn).
    pub cell_id: String,
    /// RSRP, dBm (per resource element).
    pub rsrp_dbm: f64,
    /// Position east, m.
    pub x_m: Option<f64>,
    /// Position north, m.
    pub y_m: Option<f64>,
    /// Speed, m/s.
    pub speed_mps: Option<f64>,
}

impl CellSample {
    /// A sample without position or speed.
    pub fn new(time_s: u32, operator: &str, earfcn: u32, cell_id: &str, rsrp_dbm: f64) -> CellSample {
        CellSample {
            time_s,
            operator: operator.to_string(),
            earfcn,
            cell_id: cell_id.to_string(),
            rsrp_dbm,
            x_m: None,
            y_m: None,
            speed_mps: None,
        }
    }
}

/// A validated per-second table.
#[derive(Clone, Debug, PartialEq)]
pub struct DriveTable {
    rows: Vec<CellSample>,
}

/// The column names, in file order.
pub const COLUMNS: [&str; 8] = ["time_s", "operator", "earfcn", "cell_id", "rsrp_dbm", "x_m", "y_m", "speed_mps"];

impl DriveTable {
    /// Validates `rows` (row numbers in errors are 0-based indices into `rows`).
    pub fn new(rows: Vec<CellSample>) -> Result<DriveTable, RadioError> {
        if rows.is_empty() {
            return Err(RadioError::Empty { what: "drive table".into() });
        }
        let mut previous = rows[0].time_s;
        for (i, r) in rows.iter().enumerate() {
            if r.time_s < previous {
                return Err(RadioError::TimeBackwards { row: i, time_s: r.time_s.into(), previous_s: previous.into() });
            }
            previous = r.time_s;
            let bad = |column: &str, value: String, allowed: &str| RadioError::BadValue {
                row: i,
                column: column.into(),
                value,
                allowed: allowed.into(),
            };
            if !r.rsrp_dbm.is_finite() {
                return Err(bad("rsrp_dbm", r.rsrp_dbm.to_string(), "must be a finite number of dBm"));
            }
            if r.operator.is_empty() {
                return Err(bad("operator", "\"\"".into(), "must not be empty"));
            }
            if r.cell_id.is_empty() {
                return Err(bad("cell_id", "\"\"".into(), "must not be empty"));
            }
            for (column, v) in [("x_m", r.x_m), ("y_m", r.y_m)] {
                if let Some(v) = v.filter(|v| !v.is_finite()) {
                    return Err(bad(column, v.to_string(), "must be a finite number of metres"));
                }
            }
            if let Some(v) = r.speed_mps.filter(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(bad("speed_mps", v.to_string(), "must be a finite number of m/s, at least 0"));
            }
        }
        Ok(DriveTable { rows })
    }

    pub fn rows(&self) -> &[CellSample] {
        &self.rows
    }

    pub fn into_rows(self) -> Vec<CellSample> {
        self.rows
    }

    /// The first second of the table.
    pub fn first_s(&self) -> u32 {
        self.rows[0].time_s
    }

    /// The last second of the table.
    pub fn last_s(&self) -> u32 {
        self.rows[self.rows.len() - 1].time_s
    }

    /// The rows of each second that has any, in time order.
    pub fn seconds(&self) -> impl Iterator<Item = (u32, &[CellSample])> {
        self.rows.chunk_by(|a, b| a.time_s == b.time_s).map(|rows| (rows[0].time_s, rows))
    }

    /// Writes the table as CSV with the header [`COLUMNS`]; absent optional values are empty
    /// fields, numbers use the shortest representation that reads back exactly.
    pub fn write_csv<W: Write>(&self, out: W) -> Result<(), RadioError> {
        let mut w = csv::Writer::from_writer(out);
        let csv_err = |e: csv::Error| RadioError::Csv { line: None, message: e.to_string() };
        w.write_record(COLUMNS).map_err(csv_err)?;
        let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
        for r in &self.rows {
            w.write_record([
                r.time_s.to_string(),
                r.operator.clone(),
                r.earfcn.to_string(),
                r.cell_id.clone(),
                r.rsrp_dbm.to_string(),
                opt(r.x_m),
                opt(r.y_m),
                opt(r.speed_mps),
            ])
            .map_err(csv_err)?;
        }
        w.flush().map_err(|e| RadioError::Csv { line: None, message: e.to_string() })
    }

    /// The table as a CSV string (see [`DriveTable::write_csv`]).
    pub fn to_csv_string(&self) -> String {
        let mut buf = Vec::new();
        self.write_csv(&mut buf).expect("writing to memory");
        String::from_utf8(buf).expect("the writer emits UTF-8")
    }

    /// Reads a CSV file with at least the columns `time_s, operator, earfcn, cell_id, rsrp_dbm`
    /// (any order, extra columns ignored) and optionally `x_m, y_m, speed_mps`; then validates
    /// it as [`DriveTable::new`] does.
    pub fn read_csv<R: Read>(input: R) -> Result<DriveTable, RadioError> {
        let mut r = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(input);
        let headers = r.headers().map_err(|e| RadioError::Csv { line: Some(1), message: e.to_string() })?.clone();
        let find = |name: &str| headers.iter().position(|h| h == name);
        let mut index = [None; 8];
        for (i, name) in COLUMNS.iter().enumerate() {
            index[i] = find(name);
            if i < 5 && index[i].is_none() {
                return Err(RadioError::Csv { line: Some(1), message: format!("no column {name:?} in the header") });
            }
        }
        let mut rows = Vec::new();
        for record in r.records() {
            let record = record.map_err(|e| RadioError::Csv { line: e.position().map(|p| p.line()), message: e.to_string() })?;
            let line = record.position().map(|p| p.line());
            let field = |i: usize| index[i].and_then(|j| record.get(j)).unwrap_or("");
            let parse_err =
                |column: &str, v: &str, what: &str| RadioError::Csv { line, message: format!("{column} = {v:?} is not {what}") };
            let time_s = field(0).parse::<u32>().map_err(|_| parse_err("time_s", field(0), "a whole number of seconds"))?;
            let earfcn = field(2).parse::<u32>().map_err(|_| parse_err("earfcn", field(2), "a whole number"))?;
            let number = |i: usize| -> Result<Option<f64>, RadioError> {
                let v = field(i);
                if v.is_empty() {
                    Ok(None)
                } else {
                    v.parse::<f64>().map(Some).map_err(|_| parse_err(COLUMNS[i], v, "a number"))
                }
            };
            let rsrp_dbm = number(4)?.ok_or_else(|| parse_err("rsrp_dbm", "", "a number"))?;
            rows.push(CellSample {
                time_s,
                operator: field(1).to_string(),
                earfcn,
                cell_id: field(3).to_string(),
                rsrp_dbm,
                x_m: number(5)?,
                y_m: number(6)?,
                speed_mps: number(7)?,
            });
        }
        DriveTable::new(rows)
    }
}
