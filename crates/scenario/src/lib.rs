//! multiconn-scenario: the scenario schema, its validation and overrides, and the wiring of
//! models onto the engine. (PUBLIC API CONTRACT — bodies being implemented)
//!
//! Entry points used by the bindings:
//! * [`load`] parses TOML text, applies `--set` overrides and validates everything (trace files
//!   included) before any run starts;
//! * [`Simulation`] runs a loaded scenario in bounded steps so a caller can show progress;
//! * [`RunOutput`] carries the summary (JSON) and the time-series columns.

use multiconn_core::Time;
use std::path::PathBuf;

/// A one-line, user-facing error: file, line where known, field path, what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScenarioError(pub String);

/// Where a scenario's text came from: its name in messages and the folder trace paths are
/// relative to.
#[derive(Debug, Clone)]
pub struct Origin {
    pub name: String,
    pub base_dir: PathBuf,
}

/// A parsed and validated scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    _private: (),
}

/// Parses `text` (TOML), applies `overrides` (`key.path`, `value` pairs as given to `--set`),
/// validates, and loads every trace file.
pub fn load(text: &str, origin: &Origin, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
    let _ = (text, origin, overrides);
    Err(ScenarioError("not yet implemented".into()))
}

impl Scenario {
    /// The resolved scenario (after overrides) as canonical JSON.
    pub fn to_json(&self) -> String {
        String::new()
    }
    /// The seed written in the scenario, if any.
    pub fn seed(&self) -> Option<u64> {
        None
    }
}

/// One column of the time-series table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

/// What a finished run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The summary as a JSON object (everything except wall-clock time).
    pub summary_json: String,
    /// The time series, one entry per column, in a fixed order.
    pub columns: Vec<(String, Column)>,
}

/// A run in progress.
pub struct Simulation {
    _private: (),
}

impl Simulation {
    /// Builds the run; `seed` overrides the scenario's seed (default 1).
    pub fn new(scenario: &Scenario, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
        let _ = (scenario, seed);
        Err(ScenarioError("not yet implemented".into()))
    }
    /// The time limit of the run.
    pub fn end_time(&self) -> Time {
        Time::ZERO
    }
    pub fn now(&self) -> Time {
        Time::ZERO
    }
    pub fn events(&self) -> u64 {
        0
    }
    pub fn is_done(&self) -> bool {
        true
    }
    /// Runs until virtual time `t`, the time limit, or until every flow is done; returns
    /// whether the run is over.
    pub fn run_until(&mut self, t: Time) -> bool {
        let _ = t;
        true
    }
    pub fn finish(self) -> RunOutput {
        RunOutput { summary_json: String::new(), columns: Vec::new() }
    }
}
