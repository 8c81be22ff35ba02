//! Helpers shared by the scenario integration tests. The runs they make have the invariant
//! checker on, and fail on a violation.

use multiconn_scenario::{load, Column, Origin, RunOutput, Scenario, ScenarioError, Simulation};
use std::path::{Path, PathBuf};

pub fn origin(name: &str) -> Origin {
    Origin { name: name.into(), base_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests") }
}

pub fn load_str(text: &str) -> Result<Scenario, ScenarioError> {
    load(text, &origin("test.toml"), &[])
}

pub fn load_with(text: &str, sets: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    load(text, &origin("test.toml"), &sets)
}

/// Runs `scenario` to its end with the invariant checker on; panics on a violation.
pub fn run_checked(scenario: &Scenario, seed: Option<u64>) -> RunOutput {
    let mut sim = Simulation::new(scenario, seed).unwrap();
    sim.set_check_invariants(true).unwrap();
    sim.run_to_end();
    sim.check().unwrap_or_else(|e| panic!("{e}"));
    sim.finish()
}

pub fn run(text: &str, seed: Option<u64>) -> (serde_json::Value, RunOutput) {
    let scenario = load_str(text).unwrap_or_else(|e| panic!("scenario should load: {e}"));
    let out = run_checked(&scenario, seed);
    (serde_json::from_str(&out.summary_json).unwrap(), out)
}

/// Runs `text` with `--set` overrides and a seed; returns the summary.
pub fn run_with(text: &str, sets: &[(&str, &str)], seed: u64) -> serde_json::Value {
    let scenario = load_with(text, sets).unwrap_or_else(|e| panic!("scenario should load: {e}"));
    serde_json::from_str(&run_checked(&scenario, Some(seed)).summary_json).unwrap()
}

/// The error `text` is refused with; panics if it loads.
pub fn refusal(text: &str) -> String {
    match load_str(text) {
        Ok(_) => panic!("should be refused:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// The time-series column `name` of a run.
pub fn column<'a>(out: &'a RunOutput, name: &str) -> &'a Column {
    &out.columns.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no column {name}")).1
}

/// A float column.
pub fn floats(out: &RunOutput, name: &str) -> Vec<f64> {
    match column(out, name) {
        Column::F64(v) => v.clone(),
        other => panic!("{name} is not a float column: {other:?}"),
    }
}

/// An integer column.
pub fn ints(out: &RunOutput, name: &str) -> Vec<i64> {
    match column(out, name) {
        Column::I64(v) => v.clone(),
        other => panic!("{name} is not an integer column: {other:?}"),
    }
}

/// A text column.
pub fn texts(out: &RunOutput, name: &str) -> Vec<String> {
    match column(out, name) {
        Column::Str(v) => v.clone(),
        other => panic!("{name} is not a text column: {other:?}"),
    }
}

/// The shared trace folder beside the repository, if present.
pub fn shared_traces() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/traces");
    if p.is_dir() {
        Some(p.canonicalize().unwrap())
    } else {
        eprintln!("skipped: {} is absent", p.display());
        None
    }
}

pub const BULK: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "40 Mbit/s"
delay = "10 ms"
queue = "100 packets"

[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "udp"
app = "bulk"
"#;
