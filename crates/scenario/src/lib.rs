//! multiconn-scenario: the scenario schema, its validation and overrides, and the wiring of
//! models onto the engine.
//!
//! * [`load`] parses TOML text, applies `--set` overrides ([`overrides`]), checks the schema
//!   ([`schema`]) and everything the schema cannot say ([`resolve`]), trace files included,
//!   before any run starts. Errors are one line: file, line where known, field path, problem.
//! * [`Simulation`] runs a loaded scenario in bounded steps so a caller can show progress.
//! * [`RunOutput`] carries the summary (JSON), the time-series columns ([`report`]) and the
//!   message table of app = "messages" flows ([`messages`]), whose streams the caller may
//!   also open and write itself ([`Simulation::write`]).
//! * [`stacks`]: the emulator's real stacks, one row of capabilities each.

pub mod diagnostics;
pub mod fairness;
pub mod format;
pub mod messages;
pub mod overrides;
pub mod pcap;
pub mod qlog;
pub mod report;
pub mod resolve;
pub mod schema;
pub mod sim;
pub mod stacks;

pub use format::{Column, ColumnType};

use diagnostics::{line_of_offset, line_of_path, user_path, PathSegment};
use multiconn_core::Time;
use std::path::PathBuf;

/// A one-line, user-facing error: file, line where known, field path, what is allowed.
///
/// Displayed as `FILE:LINE: PATH: MESSAGE`, or `FILE (--set KEY=VALUE): PATH: MESSAGE` when the
/// field was set by an override; the parts that are not known are left out (errors of a
/// running [`Simulation`] have only a message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario's name in messages (its path as given, `<string>`, `<dict>`).
    pub file: Option<String>,
    /// The 1-based line the error is on, when it lies in the file's text.
    pub line: Option<usize>,
    /// The override (`KEY=VALUE` as given to `--set`) that set the field, instead of a line.
    pub set: Option<String>,
    /// The field, as a dotted path (`link.bottleneck.rate`, `flow.v2x.messages[0].size`).
    pub path: Option<String>,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ScenarioError {
    /// An error with only a message.
    pub fn new(message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: None, line: None, set: None, path: None, message: message.into() }
    }

    fn at(place: &Place, path: Option<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: Some(place.file.clone()), line: place.line, set: place.set.clone(), path, message: message.into() }
    }
}

impl std::fmt::Display for ScenarioError {
    /// One line whatever the input: control characters the file or an override brought in
    /// (a newline in a value) are written as escapes (`\n`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write_escaped(f, file)?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            if let Some(set) = &self.set {
                f.write_str(" (--set ")?;
                write_escaped(f, set)?;
                f.write_str(")")?;
            }
            f.write_str(": ")?;
        }
        if let Some(path) = &self.path {
            write_escaped(f, path)?;
            f.write_str(": ")?;
        }
        write_escaped(f, &self.message)
    }
}

/// `text` with its control characters escaped.
fn write_escaped(f: &mut std::fmt::Formatter<'_>, text: &str) -> std::fmt::Result {
    for c in text.chars() {
        if c.is_control() {
            write!(f, "{}", c.escape_default())?;
        } else {
            write!(f, "{c}")?;
        }
    }
    Ok(())
}

impl std::error::Error for ScenarioError {}

/// Where in the input an error lies: the file, and a line or the override that set the field.
struct Place {
    file: String,
    line: Option<usize>,
    set: Option<String>,
}

/// Where a scenario's text came from: its name in messages and the folder trace paths are
/// relative to.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The scenario's name in error messages: its path as given, or `<string>`, `<dict>`.
    pub name: String,
    /// The folder trace files, profile files and other relative paths are read from.
    pub base_dir: PathBuf,
}

impl Origin {
    /// The default scenario name: the file name without its extension.
    fn stem(&self) -> String {
        std::path::Path::new(&self.name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.starts_with('<'))
            .unwrap_or_else(|| "scenario".into())
    }
}

/// A parsed and validated scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    resolved: resolve::Resolved,
    /// The scenario after overrides, as JSON.
    document: serde_json::Value,
}

/// Parses `text` (TOML), applies `overrides` (`key.path`, `value` pairs as given to `--set`),
/// validates, and loads every trace file.
pub fn load(text: &str, origin: &Origin, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
    let at = |line: Option<usize>| Place { file: origin.name.clone(), line, set: None };
    let set = |(k, v): &(String, String)| Place { file: origin.name.clone(), line: None, set: Some(format!("{k}={v}")) };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let line = e.span().map(|s| line_of_offset(text, s.start));
        let message = first_line(e.message());
        if message.contains("number too large") {
            // TOML's integers are 64-bit signed: a larger one is no TOML, whatever the field.
            let field = line.and_then(|l| diagnostics::key_at_line(text, l));
            let seed = if field.as_deref() == Some("run.seed") { SEED_HINT } else { "" };
            return ScenarioError::at(&at(line), field, format!("TOML integers stop at 2^63−1 (9223372036854775807){seed}"));
        }
        ScenarioError::at(&at(line), None, format!("invalid TOML: {message}"))
    })?;
    let overridden: Vec<Vec<String>> = overrides.iter().map(|(k, _)| k.split('.').map(|s| s.trim().to_string()).collect()).collect();
    for (key, value) in overrides {
        overrides::apply(&mut doc, key, value).map_err(|m| ScenarioError::at(&at(None), None, m))?;
    }
    let final_text = doc.to_string();
    // Where an error sits under a path set from the command line, say so instead of a line.
    let locate = |path: &[String]| -> Place {
        // `schedule[1]` lies under an override of `schedule`.
        let keys: Vec<String> = path.iter().map(|s| s.split('[').next().unwrap_or(s).to_string()).collect();
        match overridden.iter().zip(overrides).find(|(o, _)| keys.starts_with(o) || o.starts_with(&keys)) {
            Some((_, pair)) => set(pair),
            None => at(line_of_path(&final_text, path)),
        }
    };

    let file: schema::ScenarioFile = {
        let de = toml::Deserializer::new(&final_text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let arrays = ["link", "flow", "split", "cell"].map(|k| (k, names(&doc, k)));
            let mut path = user_path(&segments(e.path()), &arrays);
            let inner = e.into_inner();
            // A field inside a table read whole (tagged by `model`) brings its path in the message.
            let (below, message) = diagnostics::split_inside(&first_line(inner.message()));
            let span_line = inner.span().map(|s| line_of_offset(&final_text, s.start)).filter(|_| below.is_empty());
            path.extend(below);
            let place = match overridden.iter().zip(overrides).find(|(o, _)| path.starts_with(o)) {
                Some((_, pair)) => set(pair),
                None => at(span_line.or_else(|| line_of_path(&final_text, &path))),
            };
            let field = (!path.is_empty()).then(|| path.join("."));
            let last = path.last().map_or("value", String::as_str);
            let mut message = diagnostics::choice_words(last, &message)
                .or_else(|| diagnostics::number_words(&message))
                .or_else(|| diagnostics::table_words(&message))
                .unwrap_or(message);
            if field.as_deref() == Some("run.seed") && message.contains("2^63") {
                message.push_str(SEED_HINT);
            }
            ScenarioError::at(&place, field, message)
        })?
    };
    let resolved = resolve::resolve(&file, &origin.stem(), &origin.base_dir)
        .map_err(|e| ScenarioError::at(&locate(&e.path), Some(e.path.join(".")), e.message))?;
    let document: toml::Value = toml::from_str(&final_text).map_err(|e| ScenarioError::at(&at(None), None, e.message()))?;
    let document = serde_json::to_value(document).map_err(|e| ScenarioError::at(&at(None), None, e.to_string()))?;
    Ok(Scenario { resolved, document })
}

/// What an error about a seed beyond TOML's integers adds.
const SEED_HINT: &str = "; a larger seed is given on the command line, --seed N (0 ≤ N < 2^64)";

fn first_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

fn segments(path: &serde_path_to_error::Path) -> Vec<PathSegment> {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(PathSegment::Index(*index)),
            Segment::Map { key } => Some(PathSegment::Key(key.clone())),
            Segment::Enum { variant } => Some(PathSegment::Key(variant.clone())),
            Segment::Unknown => None,
        })
        .collect()
}

/// The `name` of every element of the array of tables `key`, in order.
fn names(doc: &toml_edit::DocumentMut, key: &str) -> Vec<Option<String>> {
    doc.get(key)
        .and_then(|i| i.as_array_of_tables())
        .map(|a| a.iter().map(|t| t.get("name").and_then(|n| n.as_str()).map(String::from)).collect())
        .unwrap_or_default()
}

impl Scenario {
    /// The resolved scenario (after overrides) as canonical JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.document).expect("a TOML document always serializes to JSON")
    }
    /// Settings that are valid but often not what was meant, one line each (see
    /// `resolve::warnings`).
    pub fn warnings(&self) -> &[String] {
        &self.resolved.warnings
    }
    /// The seed written in the scenario, if any.
    pub fn seed(&self) -> Option<u64> {
        self.resolved.seed
    }
    /// The scenario's name: its `name`, else the file name without its extension.
    pub fn name(&self) -> &str {
        &self.resolved.name
    }
    /// The scenario after resolution: links, flows, routes and models, every value checked.
    pub fn resolved(&self) -> &resolve::Resolved {
        &self.resolved
    }
}

/// What a finished run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The summary as a JSON object (everything except wall-clock time).
    pub summary_json: String,
    /// The time series, one entry per column, in a fixed order.
    pub columns: Vec<(String, Column)>,
    /// qlog files of the QUIC flows that asked for them.
    pub qlog: Vec<qlog::QlogFile>,
    /// Packet captures (`run.pcap`), one per captured flow end.
    pub pcap: Vec<pcap::PcapFile>,
    /// What the captures left out (a file reached `run.pcap_max_mb`), one line each; empty
    /// when they hold everything.
    pub pcap_warnings: Vec<String>,
    /// The message table (app = "messages" flows), one entry per column in the order of
    /// [`messages::TABLE_COLUMNS`]; empty when no flow sends messages.
    pub messages: Vec<(String, Column)>,
}

/// The seed used when neither the command line nor the scenario gives one.
pub const DEFAULT_SEED: u64 = 1;

/// A run in progress.
pub struct Simulation {
    world: sim::World,
    seed: u64,
    name: String,
    done: bool,
    /// The flows the fairness indices cover (indices of the run's flows).
    fairness: Vec<usize>,
    /// The flows with `enabled = false`.
    disabled: Vec<String>,
    /// Whether anything happened yet (a step run, a message written): the invariant checker
    /// can no longer be turned on.
    started: bool,
    /// `run.pcap_max_mb` as the scenario gives it (for the captures' messages).
    pcap_max_mb: f64,
    /// The scenario's warnings (settings often not meant), recorded in the summary.
    warnings: Vec<String>,
}

impl Simulation {
    /// Builds the run; `seed` overrides the scenario's seed (default 1). The invariant checker
    /// is on when the environment variable `MULTICONN_CHECK_INVARIANTS` is `1`.
    pub fn new(scenario: &Scenario, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
        let seed = seed.or(scenario.seed()).unwrap_or(DEFAULT_SEED);
        let world = sim::World::new(&scenario.resolved, seed).map_err(|e| ScenarioError::new(format!("internal error: a connection validation accepted was refused: {e}")))?;
        let mut sim = Simulation {
            world,
            seed,
            name: scenario.resolved.name.clone(),
            done: false,
            fairness: scenario.resolved.fairness.clone(),
            disabled: scenario.resolved.disabled.clone(),
            warnings: scenario.resolved.warnings.clone(),
            started: false,
            pcap_max_mb: scenario.resolved.pcap.as_ref().map_or(resolve::DEFAULT_PCAP_MAX_MB, |p| p.max_bytes as f64 / 1e6),
        };
        if sim::invariants::requested_by_env() {
            sim.world.check_invariants(true);
        }
        Ok(sim)
    }
    /// Turns the invariant checker on or off (see [`sim::invariants`]); by default it is on
    /// when the environment variable `MULTICONN_CHECK_INVARIANTS` is `1`. It can be turned on
    /// only before the run starts. It observes only: the results are the same either way.
    pub fn set_check_invariants(&mut self, on: bool) -> Result<(), ScenarioError> {
        if on == self.world.checks_invariants() {
            return Ok(());
        }
        if on && self.started {
            return Err(ScenarioError::new("the invariant checker can only be turned on before the run starts"));
        }
        self.world.check_invariants(on);
        Ok(())
    }
    /// Whether the invariant checker is on.
    pub fn checks_invariants(&self) -> bool {
        self.world.checks_invariants()
    }
    /// The first invariant violation the checker saw; it ended the run. The results up to
    /// that instant are still available from [`Simulation::finish`], but are not to be
    /// trusted.
    pub fn violation(&self) -> Option<sim::InvariantViolation> {
        self.world.violation().map(|v| sim::InvariantViolation { scenario: self.name.clone(), seed: self.seed, violation: v.clone() })
    }
    /// `Err` when the invariant checker saw a violation (see [`Simulation::violation`]).
    pub fn check(&self) -> Result<(), sim::InvariantViolation> {
        self.violation().map_or(Ok(()), Err)
    }
    /// The time limit of the run (`Time::MAX` when the run ends only when its flows finish).
    pub fn end_time(&self) -> Time {
        self.world.hosts.end
    }
    /// The virtual time the run has reached.
    pub fn now(&self) -> Time {
        self.world.now()
    }
    /// How many events have fired so far.
    pub fn events(&self) -> u64 {
        self.world.queue().events_fired()
    }
    /// Whether the run is over (flows done, time limit reached, stalled, or an invariant violated).
    pub fn is_done(&self) -> bool {
        self.done
    }
    /// Set when the watchdog ended the run because virtual time stopped advancing; the run's
    /// results up to that instant are still available from [`Simulation::finish`].
    pub fn stalled(&self) -> Option<&sim::Stall> {
        self.world.stalled.as_ref()
    }
    /// Sets how many events may fire at one instant before the run is declared stalled
    /// (default [`sim::DEFAULT_STALL_LIMIT`]).
    pub fn set_stall_limit(&mut self, events: u64) {
        self.world.watchdog = sim::Watchdog::new(events);
    }
    /// Runs until virtual time `t`, the time limit, or until every flow is done; returns
    /// whether the run is over.
    pub fn run_until(&mut self, t: Time) -> bool {
        self.run_until_budget(t, u64::MAX)
    }
    /// [`Simulation::run_until`], returning early once `max_events` events have fired (then
    /// virtual time is that of the last one, and the run goes on with the next call). How
    /// the run is cut into calls never changes its results.
    pub fn run_until_budget(&mut self, t: Time, max_events: u64) -> bool {
        self.started = true;
        if !self.done {
            self.done = self.world.run_until_budget(t, max_events);
        }
        self.done
    }
    /// Runs to the end.
    pub fn run_to_end(&mut self) {
        while !self.run_until(Time::MAX) {}
    }
    /// Message flow `flow`'s sending application opens a stream of its own (app =
    /// "messages"; e.g. `messages = []` when the application writes everything itself).
    /// `name` labels its messages in the message table; what `choices` leaves out takes
    /// `kind`'s defaults ([`messages::MessageKind::defaults`]); the deadline gives the
    /// summary's reliability. Returns the stream id.
    pub fn open_stream(&mut self, flow: &str, name: &str, kind: messages::MessageKind, choices: messages::StreamChoices) -> Result<u64, ScenarioError> {
        let f = self.message_flow(flow)?;
        self.started = true;
        if !resolve::valid_name(name) {
            return Err(ScenarioError::new(format!("stream name \"{name}\" is not valid: use letters, digits, '_' and '-'")));
        }
        let (options, deadline) = choices.resolve(kind);
        self.world.app_open_stream(f, name, kind, options, deadline).map_err(|e| ScenarioError::new(format!("flow \"{flow}\": {e}")))
    }

    /// Message flow `flow`'s sending application writes one message of `size` bytes on its
    /// stream `stream` at the current virtual time; returns the message's number on the stream.
    pub fn write(&mut self, flow: &str, stream: u64, size: u64) -> Result<u64, ScenarioError> {
        let f = self.message_flow(flow)?;
        if size == 0 {
            return Err(ScenarioError::new("a message needs at least 1 B"));
        }
        self.started = true;
        self.world.app_write(f, stream, size).map_err(|e| ScenarioError::new(format!("flow \"{flow}\": {e}")))
    }

    /// Message flow `flow`'s sending application ends its stream `stream`.
    pub fn finish_stream(&mut self, flow: &str, stream: u64) -> Result<(), ScenarioError> {
        let f = self.message_flow(flow)?;
        self.started = true;
        self.world.app_finish(f, stream).map_err(|e| ScenarioError::new(format!("flow \"{flow}\": {e}")))
    }

    /// The message table so far (received_s is NaN for what has not arrived yet).
    pub fn messages(&self) -> Vec<(String, Column)> {
        report::messages(&self.world)
    }

    /// The message table's rows of the messages of message flow `flow` that arrived after
    /// its first `n` arrivals, in order of arrival (`n` = 0: every message received so far).
    pub fn messages_since(&self, flow: &str, n: usize) -> Result<Vec<(String, Column)>, ScenarioError> {
        let f = self.find_message_flow(flow)?;
        Ok(report::arrivals_since(&self.world, f, n))
    }

    /// Message flow `name`, which may still be written to.
    fn message_flow(&self, name: &str) -> Result<usize, ScenarioError> {
        if self.done {
            return Err(ScenarioError::new("the run is over: nothing more can be written"));
        }
        self.find_message_flow(name)
    }

    fn find_message_flow(&self, name: &str) -> Result<usize, ScenarioError> {
        let flows = &self.world.hosts.flows;
        match flows.iter().position(|f| f.spec.name == name) {
            Some(i) if flows[i].messages.is_some() => Ok(i),
            Some(_) => Err(ScenarioError::new(format!("flow \"{name}\" is not app = \"messages\"; only message flows take application writes"))),
            None => {
                let names: Vec<&str> = flows.iter().filter(|f| f.messages.is_some()).map(|f| f.spec.name.as_str()).collect();
                Err(ScenarioError::new(format!("no flow \"{name}\"; the message flows are: {}", if names.is_empty() { "none".to_string() } else { names.join(", ") })))
            }
        }
    }

    /// Ends the run and reports: the summary, the time series, the message table, qlog files and
    /// packet captures.
    pub fn finish(self) -> RunOutput {
        let mut output = self.finish_compact();
        output.columns = output.columns.into_iter().map(|(name, column)| (name, column.expand())).collect();
        output
    }

    /// [`Simulation::finish`] with the time series' text columns dictionary-coded
    /// ([`Column::Dict`]): what the Python module hands over, the least memory the table can
    /// take (the recorder's bins are freed as its columns are built, [`report::timeseries`]).
    pub fn finish_compact(mut self) -> RunOutput {
        self.world.settle();
        let end = self.world.end_time();
        let mut summary = report::summary(&self.world, &self.name, self.seed, end, &self.fairness, &self.disabled);
        report::add_warnings(&mut summary, &self.world, &self.warnings);
        // The summary as text now, its tree freed before the time series is built.
        let summary_json = serde_json::to_string_pretty(&summary).expect("summary serializes");
        drop(summary);
        report::release_freed_memory();
        let columns = report::timeseries(&mut self.world, end);
        let messages = report::messages(&self.world);
        let mut qlogs = Vec::new();
        for f in &self.world.hosts.flows {
            if let (Some(conn), Some(spec)) = (f.conn(), &f.spec.connection) {
                if spec.qlog {
                    qlogs.push(qlog::qlog_file(&self.name, &f.spec.name, "client", &conn.qlog_client));
                    qlogs.push(qlog::qlog_file(&self.name, &f.spec.name, "server", &conn.qlog_server));
                }
            }
        }
        let pcap = self.world.hosts.pcap.take().map(|c| c.finish(self.pcap_max_mb)).unwrap_or_default();
        let pcap_warnings = pcap
            .iter()
            .filter(|f| f.omitted > 0)
            .map(|f| format!("pcap/{}: reached run.pcap_max_mb = {} after {} packets; {} later packets are not in the file", f.file_name, self.pcap_max_mb, f.packets, f.omitted))
            .collect();
        RunOutput { summary_json, columns, qlog: qlogs, pcap, pcap_warnings, messages }
    }
}
