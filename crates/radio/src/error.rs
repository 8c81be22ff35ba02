//! The one error type of the crate. Every message names the field (or the row and column) that
//! is wrong and what is allowed, so a scenario or command line can show it as it is.

/// Why a parameter set, a table or a generator configuration was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RadioError {
    /// A parameter outside its allowed range (or not a finite number).
    #[error("{field} = {value}: must be {allowed}")]
    OutOfRange { field: String, value: f64, allowed: String },
    /// A parameter that is inconsistent with another one or otherwise unusable.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// A table with no rows.
    #[error("{what}: the table is empty")]
    Empty { what: String },
    /// A row whose value is unusable (NaN, infinite, negative where it cannot be).
    #[error("row {row}: {column} = {value}: {allowed}")]
    BadValue { row: usize, column: String, value: String, allowed: String },
    /// Rows must come in non-decreasing time order.
    #[error("row {row}: time_s = {time_s} comes after time_s = {previous_s}; rows must be in non-decreasing time order")]
    TimeBackwards { row: usize, time_s: u64, previous_s: u64 },
    /// Series that must have one value per second have different lengths.
    #[error("{field}: {got} values, expected {expected} (one per second)")]
    LengthMismatch { field: String, expected: usize, got: usize },
    /// A computation needs a column the input does not have.
    #[error("{needed_by} needs {what}, which the input does not have")]
    Missing { what: String, needed_by: String },
    /// A name that is not one of the known ones.
    #[error("unknown {kind} {name:?}; known: {known}")]
    Unknown { kind: String, name: String, known: String },
    /// A CSV file that cannot be read or written.
    #[error("csv{}: {message}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
    Csv { line: Option<u64>, message: String },
}

impl RadioError {
    pub(crate) fn out_of_range(field: &str, value: f64, allowed: &str) -> RadioError {
        RadioError::OutOfRange { field: field.to_string(), value, allowed: allowed.to_string() }
    }

    pub(crate) fn invalid(field: &str, message: impl Into<String>) -> RadioError {
        RadioError::Invalid { field: field.to_string(), message: message.into() }
    }

    /// The same error for the field as a member of `parent` (`parent.field`).
    pub(crate) fn within(mut self, parent: &str) -> RadioError {
        if let RadioError::OutOfRange { field, .. } | RadioError::Invalid { field, .. } | RadioError::LengthMismatch { field, .. } = &mut self {
            *field = format!("{parent}.{field}");
        }
        self
    }
}

/// `value` must be finite and within `[lo, hi]`; the error names `field` and the range.
pub(crate) fn check_range(field: &str, value: f64, lo: f64, hi: f64, unit: &str) -> Result<(), RadioError> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(())
    } else {
        Err(RadioError::out_of_range(field, value, &format!("in [{lo}, {hi}]{}", unit_suffix(unit))))
    }
}

/// `value` must be finite and strictly greater than `lo` (and at most `hi`).
pub(crate) fn check_above(field: &str, value: f64, lo: f64, hi: f64, unit: &str) -> Result<(), RadioError> {
    if value.is_finite() && value > lo && value <= hi {
        Ok(())
    } else {
        Err(RadioError::out_of_range(field, value, &format!("in ({lo}, {hi}]{}", unit_suffix(unit))))
    }
}

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}
