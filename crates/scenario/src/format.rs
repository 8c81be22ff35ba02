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
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

/// The type of a column's values, as the tables' schemas ([`report::COLUMNS`],
/// [`messages::TABLE_COLUMNS`]) declare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    F64,
    I64,
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
    pub fn column_type(&self) -> ColumnType {
        match self {
            Column::F64(_) => ColumnType::F64,
            Column::I64(_) => ColumnType::I64,
            Column::Str(_) => ColumnType::Str,
        }
    }
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
