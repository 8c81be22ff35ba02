//! Trace and profile files named by a scenario: read relative to the scenario's folder, once
//! each.

use super::errors::{err, FieldError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Reads files once each, relative to the scenario's folder.
pub(super) struct Files<'a> {
    base: &'a Path,
    cache: HashMap<PathBuf, String>,
}

impl Files<'_> {
    pub(super) fn new(base: &Path) -> Files<'_> {
        Files { base, cache: HashMap::new() }
    }

    /// The text of `file` and the full path it was read from (for parse errors); a failure
    /// is reported at `path`, the field that names the file.
    pub(super) fn read(&mut self, file: &str, path: &[&str]) -> Result<(String, String), FieldError> {
        let full = self.base.join(file);
        if let Some(text) = self.cache.get(&full) {
            return Ok((text.clone(), full.display().to_string()));
        }
        let text = std::fs::read_to_string(&full)
            .map_err(|e| err(path, format!("cannot read \"{}\": {e}", full.display())))?;
        self.cache.insert(full.clone(), text.clone());
        Ok((text, full.display().to_string()))
    }
}
