//! The resolver's errors: a message at a field path in the user's terms
//! (`["link", "bottleneck", "forward", "rate"]`), and the rule for names.

/// A problem at a field path (user-style segments).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// The field's path: section, entry name (or `[i]` when the name itself is wrong), field.
    pub path: Vec<String>,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl FieldError {
    /// The same error with the path's component `from` named `to` (a copy of a section
    /// checked under another field's name).
    pub(super) fn renamed(mut self, from: &str, to: &str) -> FieldError {
        for part in &mut self.path {
            if part == from {
                *part = to.to_string();
            }
        }
        self
    }
}

/// An error at `path`.
pub(super) fn err(path: &[&str], message: impl Into<String>) -> FieldError {
    FieldError { path: path.iter().map(|s| s.to_string()).collect(), message: message.into() }
}

/// A named choice of the schema (a cell's `scheduler`, `fading`, `timing` or `uplink_mcs`, a
/// flow's `cc`, an emulated flow's `stack`): `given` must be one of the names in `known`
/// (the model's own table of its names), or the error is the one every named choice gives,
/// `unknown <what> "<given>"; known: <the names>`.
pub(super) fn choose<T: Copy>(path: &[&str], what: &str, given: &str, known: &[(&str, T)]) -> Result<T, FieldError> {
    known.iter().find(|(name, _)| *name == given).map(|&(_, value)| value).ok_or_else(|| {
        let names: Vec<&str> = known.iter().map(|(name, _)| *name).collect();
        err(path, format!("unknown {what} \"{given}\"; known: {}", names.join(", ")))
    })
}

/// Names of links, splits, flows and message sources: letters, digits, `_` and `-`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Checks the name of entry `i` of `section` (errors name the entry by its index, since its
/// name is the problem).
pub(super) fn check_name(section: &str, i: usize, name: &str) -> Result<(), FieldError> {
    if valid_name(name) {
        return Ok(());
    }
    Err(err(&[section, &format!("[{i}]"), "name"], format!("\"{name}\" is not a valid name: use letters, digits, '_' and '-'")))
}
