//! How the run's outputs write values: the typed columns of the time-series and message
//! tables ([`Column`], [`ColumnType`]) and the rounding every JSON number passes through
//! ([`tidy`]), so that the text does not depend on float noise.
//!
//! Every module that writes an output takes these from here; nothing here depends on another
//! module of the crate.

/// Rounds to 9 decimal places so the JSON text does not depend on float noise; non-finite
/// values pass unchanged.
pub fn tidy(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1e9).round() / 1e9
    } else {
        x
    }
}

/// One column of the time-series table or the message table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Floating-point values (NaN where a value does not exist).
    F64(Vec<f64>),
    /// Integer values.
    I64(Vec<i64>),
    /// Text values (names).
    Str(Vec<String>),
}

/// The type of a column's values, as the tables' schemas ([`report::COLUMNS`],
/// [`messages::TABLE_COLUMNS`]) declare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// 64-bit floats (`float64`).
    F64,
    /// 64-bit integers (`int64`).
    I64,
    /// Strings (`str`).
    Str,
}

impl ColumnType {
    /// `float64`, `int64` or `str`.
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::F64 => "float64",
            ColumnType::I64 => "int64",
            ColumnType::Str => "str",
        }
    }
}

impl Column {
    /// Its number of values.
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    /// Whether it has no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The type of its values.
    pub fn column_type(&self) -> ColumnType {
        match self {
            Column::F64(_) => ColumnType::F64,
            Column::I64(_) => ColumnType::I64,
            Column::Str(_) => ColumnType::Str,
        }
    }
}

/// `columns` as CSV text: a header of their names, then one line per row; floats as Rust
/// writes them (the shortest text that reads back the same value), NaN as `NaN`, strings as
/// they are (the tables' strings are names, which hold no commas, quotes or line breaks).
pub fn columns_csv(columns: &[(String, Column)]) -> String {
    use std::fmt::Write as _;
    let rows = columns.first().map_or(0, |(_, c)| c.len());
    let mut out = columns.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(",");
    out.push('\n');
    for r in 0..rows {
        for (i, (_, column)) in columns.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match column {
                Column::F64(v) => write!(out, "{}", v[r]).expect("a String"),
                Column::I64(v) => write!(out, "{}", v[r]).expect("a String"),
                Column::Str(v) => out.push_str(&v[r]),
            }
        }
        out.push('\n');
    }
    out
}

/// Names `columns` after `schema`, whose types they must have.
pub(crate) fn named_columns<const N: usize>(schema: &[(&str, ColumnType); N], columns: [Column; N]) -> Vec<(String, Column)> {
    schema
        .iter()
        .zip(columns)
        .map(|((name, ty), column)| {
            assert_eq!(column.column_type(), *ty, "column {name} has the type its schema gives");
            (name.to_string(), column)
        })
        .collect()
}
