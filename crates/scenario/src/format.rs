//! How the run's outputs write values: the typed columns of the time-series and message
//! tables ([`Column`], [`ColumnType`]; text either one string per row or dictionary-coded,
//! [`DictColumn`], numbers either one per row or one for all rows, [`Fill`], as [`Numbers`]
//! builds them) and the rounding every JSON number passes through ([`tidy`]), so that the
//! text does not depend on float noise.
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
    /// Text values as a dictionary: the distinct values and one code per row (4 bytes a row
    /// instead of a `String`). Read as [`Column::Str`] ([`Column::expand`]).
    Dict(DictColumn),
    /// Numbers that are the same in every row, stored once: read as [`Column::F64`] or
    /// [`Column::I64`] ([`Column::expand`]).
    Fill(Fill),
}

/// A value repeated over a number of rows ([`Column::Fill`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fill {
    /// A float in every row.
    F64(f64, usize),
    /// An integer in every row.
    I64(i64, usize),
}

/// A number a [`Numbers`] column holds.
pub trait Number: Copy {
    /// Whether `self` and `other` are the same value, bit for bit (NaN is NaN).
    fn same(self, other: Self) -> bool;
    /// The column of `values`.
    fn column(values: Vec<Self>) -> Column;
    /// The column of `self` in each of `rows` rows.
    fn fill(self, rows: usize) -> Column;
}

impl Number for f64 {
    fn same(self, other: f64) -> bool {
        self.to_bits() == other.to_bits()
    }
    fn column(values: Vec<f64>) -> Column {
        Column::F64(values)
    }
    fn fill(self, rows: usize) -> Column {
        Column::Fill(Fill::F64(self, rows))
    }
}

impl Number for i64 {
    fn same(self, other: i64) -> bool {
        self == other
    }
    fn column(values: Vec<i64>) -> Column {
        Column::I64(values)
    }
    fn fill(self, rows: usize) -> Column {
        Column::Fill(Fill::I64(self, rows))
    }
}

/// Builds a numeric column a row at a time, holding one value and a count for as long as
/// every row has that value (many columns are NaN or 0 throughout, e.g. the congestion
/// window of UDP flows, the cell columns of a run without a cell).
#[derive(Debug)]
pub struct Numbers<T> {
    same: Option<T>,
    rows: usize,
    capacity: usize,
    values: Vec<T>,
}

impl<T: Number> Numbers<T> {
    /// An empty column that expects about `rows` rows.
    pub fn with_capacity(rows: usize) -> Numbers<T> {
        Numbers { same: None, rows: 0, capacity: rows, values: Vec::new() }
    }

    /// Appends a row holding `value`.
    pub fn push(&mut self, value: T) {
        if self.values.is_empty() {
            match self.same {
                None => {
                    self.same = Some(value);
                    self.rows = 1;
                    return;
                }
                Some(same) if same.same(value) => {
                    self.rows += 1;
                    return;
                }
                Some(same) => {
                    self.values = Vec::with_capacity(self.capacity.max(self.rows + 1));
                    self.values.extend(std::iter::repeat(same).take(self.rows));
                }
            }
        }
        self.values.push(value);
    }

    /// The rows so far.
    pub fn len(&self) -> usize {
        if self.values.is_empty() { self.rows } else { self.values.len() }
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The column: [`Column::Fill`] when every row (at least one) holds one value.
    pub fn finish(self) -> Column {
        match self.same {
            Some(same) if self.values.is_empty() => same.fill(self.rows),
            _ => T::column(self.values),
        }
    }
}

/// A text column coded by a dictionary: row `r` holds `values[codes[r]]`; `values` are
/// distinct and sorted (byte order, which is code-point order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DictColumn {
    /// The distinct values, sorted.
    pub values: Vec<String>,
    /// One index into `values` per row.
    pub codes: Vec<u32>,
}

impl DictColumn {
    /// The value of row `r`.
    pub fn get(&self, r: usize) -> &str {
        &self.values[self.codes[r] as usize]
    }

    /// One string per row.
    pub fn into_strings(self) -> Vec<String> {
        self.codes.iter().map(|&c| self.values[c as usize].clone()).collect()
    }
}

/// Builds a [`DictColumn`] a row at a time.
#[derive(Debug, Default)]
pub struct DictBuilder {
    index: std::collections::HashMap<String, u32>,
    values: Vec<String>,
    codes: Vec<u32>,
}

impl DictBuilder {
    /// An empty column with room for `rows` rows.
    pub fn with_capacity(rows: usize) -> DictBuilder {
        DictBuilder { codes: Vec::with_capacity(rows), ..DictBuilder::default() }
    }

    /// Appends a row holding `value`. A row repeating the one before (a series' bins, one
    /// after another) takes its code without a look-up.
    pub fn push(&mut self, value: &str) {
        if let Some(&last) = self.codes.last() {
            if self.values[last as usize] == value {
                self.codes.push(last);
                return;
            }
        }
        let code = match self.index.get(value) {
            Some(&code) => code,
            None => {
                let code = u32::try_from(self.values.len()).expect("fewer than 2^32 distinct names");
                self.index.insert(value.to_owned(), code);
                self.values.push(value.to_owned());
                code
            }
        };
        self.codes.push(code);
    }

    /// The rows so far.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The column, its values sorted and its codes renumbered to match.
    pub fn finish(self) -> DictColumn {
        let DictBuilder { values, mut codes, .. } = self;
        let mut order: Vec<u32> = (0..values.len() as u32).collect();
        order.sort_by(|&a, &b| values[a as usize].cmp(&values[b as usize]));
        let mut renumber = vec![0u32; values.len()];
        for (new, &old) in order.iter().enumerate() {
            renumber[old as usize] = new as u32;
        }
        for code in &mut codes {
            *code = renumber[*code as usize];
        }
        let mut slots: Vec<Option<String>> = values.into_iter().map(Some).collect();
        let values = order.iter().map(|&old| slots[old as usize].take().expect("each value once")).collect();
        DictColumn { values, codes }
    }
}

/// The type of a column's values, as the tables' schemas ([`crate::report::COLUMNS`],
/// [`crate::messages::TABLE_COLUMNS`]) declare it.
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
            Column::Dict(d) => d.codes.len(),
            Column::Fill(Fill::F64(_, n) | Fill::I64(_, n)) => *n,
        }
    }

    /// Whether it has no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The type of its values.
    pub fn column_type(&self) -> ColumnType {
        match self {
            Column::F64(_) | Column::Fill(Fill::F64(..)) => ColumnType::F64,
            Column::I64(_) | Column::Fill(Fill::I64(..)) => ColumnType::I64,
            Column::Str(_) | Column::Dict(_) => ColumnType::Str,
        }
    }

    /// The column with a value per row: [`Column::Dict`] becomes [`Column::Str`],
    /// [`Column::Fill`] [`Column::F64`] or [`Column::I64`]; others are returned as they are.
    pub fn expand(self) -> Column {
        match self {
            Column::Dict(d) => Column::Str(d.into_strings()),
            Column::Fill(Fill::F64(v, n)) => Column::F64(vec![v; n]),
            Column::Fill(Fill::I64(v, n)) => Column::I64(vec![v; n]),
            other => other,
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
                Column::Dict(d) => out.push_str(d.get(r)),
                Column::Fill(Fill::F64(v, _)) => write!(out, "{v}").expect("a String"),
                Column::Fill(Fill::I64(v, _)) => write!(out, "{v}").expect("a String"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dictionary_column_has_sorted_values_and_reads_as_its_strings() {
        let rows = ["link", "flow", "", "link", "path", "flow"];
        let mut b = DictBuilder::with_capacity(rows.len());
        for r in rows {
            b.push(r);
        }
        let d = b.finish();
        assert_eq!(d.values, ["", "flow", "link", "path"]);
        assert_eq!(d.codes, [2, 1, 0, 2, 3, 1]);
        let column = Column::Dict(d);
        assert_eq!(column.column_type(), ColumnType::Str);
        assert_eq!(column.expand(), Column::Str(rows.map(String::from).to_vec()));
    }

    #[test]
    fn numbers_of_one_value_are_a_fill_and_read_as_that_value_in_every_row() {
        let mut nan = Numbers::<f64>::with_capacity(4);
        let mut mixed = Numbers::<f64>::with_capacity(4);
        let mut zeros = Numbers::<i64>::with_capacity(4);
        for i in 0..4 {
            nan.push(f64::NAN);
            mixed.push(if i == 2 { 1.5 } else { f64::NAN });
            zeros.push(0);
        }
        assert_eq!(nan.len(), 4);
        let nan = nan.finish();
        assert!(matches!(nan, Column::Fill(Fill::F64(v, 4)) if v.is_nan()));
        assert_eq!(nan.column_type(), ColumnType::F64);
        assert_eq!(format!("{:?}", nan.expand()), format!("{:?}", Column::F64(vec![f64::NAN; 4])));
        assert_eq!(format!("{:?}", mixed.finish()), format!("{:?}", Column::F64(vec![f64::NAN, f64::NAN, 1.5, f64::NAN])));
        assert_eq!(zeros.finish(), Column::Fill(Fill::I64(0, 4)));
        assert_eq!(Column::Fill(Fill::I64(-1, 2)).expand(), Column::I64(vec![-1, -1]));
        assert_eq!(Numbers::<i64>::with_capacity(0).finish(), Column::I64(Vec::new()));
        let csv = columns_csv(&[("a".into(), Column::Fill(Fill::I64(7, 2))), ("b".into(), Column::Dict(DictColumn { values: vec!["x".into()], codes: vec![0, 0] }))]);
        assert_eq!(csv, "a,b\n7,x\n7,x\n");
    }
}
