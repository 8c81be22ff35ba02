//! The one error type of the crate. Every message names the field and what is allowed.

/// Why an input was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CellError {
    /// A parameter outside its allowed range (or not a finite number).
    #[error("{field} = {value}: must be {allowed}")]
    OutOfRange {
        /// The parameter's name.
        field: String,
        /// The value given.
        value: f64,
        /// The allowed range or set, in words.
        allowed: String,
    },
    /// Inputs that do not fit together (e.g. slices of different lengths).
    #[error("{field}: {message}")]
    Invalid {
        /// The parameter's name.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl CellError {
    pub(crate) fn out_of_range(field: &str, value: f64, allowed: &str) -> CellError {
        CellError::OutOfRange { field: field.to_string(), value, allowed: allowed.to_string() }
    }

    pub(crate) fn invalid(field: &str, message: impl Into<String>) -> CellError {
        CellError::Invalid { field: field.to_string(), message: message.into() }
    }
}

/// `value` is finite and within `[lo, hi]`, or an error naming `field`.
pub(crate) fn check_range(field: &str, value: f64, lo: f64, hi: f64, unit: &str) -> Result<f64, CellError> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(value)
    } else {
        let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
        Err(CellError::out_of_range(field, value, &format!("a number in [{lo}, {hi}]{unit}")))
    }
}
