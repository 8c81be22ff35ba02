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
        let text = std::fs::read_to_string(&full).map_err(|e| err(path, self.unreadable(file, &full, &e)))?;
        self.cache.insert(full.clone(), text.clone());
        Ok((text, full.display().to_string()))
    }

    /// Why `full` (named `file` in the scenario) cannot be read, saying where a relative name
    /// was looked up and which folder is missing, if one is.
    fn unreadable(&self, file: &str, full: &Path, e: &std::io::Error) -> String {
        let mut text = format!("cannot read \"{}\": {e}", full.display());
        if e.kind() == std::io::ErrorKind::NotFound {
            if let Some(folder) = full.parent().filter(|f| !f.as_os_str().is_empty() && !f.is_dir()) {
                text += &format!("; the folder \"{}\" does not exist", folder.display());
            }
            if Path::new(file).is_relative() {
                let base = if self.base.as_os_str().is_empty() { Path::new(".") } else { self.base };
                text += &format!(" (a relative path is looked up from the scenario's folder, \"{}\")", base.display());
            }
        }
        text
    }
}
