//! Fuzzing of everything a scenario is read from: scenario TOML (the example scenarios and the
//! catalogue's, mutated value by value, key by key and byte by byte), `--set` overrides
//! applied to valid scenarios, and the trace files a scenario names (Mahimahi, bitrate CSV,
//! delay histograms and series, loss traces), mutated line by line.
//!
//! The property, for every input: loading returns a scenario or a one-line error, never a
//! panic; and a scenario that loads, cut to a short run through the override machinery
//! (`run.duration` = the latest flow start + [`SHORT_RUN`]) and watched by a small stall
//! limit, finishes within a wall-time bound ([`wall_bound`]). Each case runs in its own thread
//! so that a hang fails the case instead of the test binary.
//!
//! Environment: `MULTICONN_FUZZ_CASES` (cases per target; default [`DEFAULT_CASES`], what
//! `cargo test` runs), `MULTICONN_FUZZ_SEED` (the generator's seed; default a fixed one, so a
//! plain run is reproducible), `MULTICONN_FUZZ_TIMEOUT_S` (the wall-time bound of one case).
//! `make fuzz` runs tens of thousands of cases with a random seed, printing it and the
//! progress. A failure prints the shrunk input; keep it as a case of `regressions`.

use multiconn_scenario::overrides::split_assignment;
use multiconn_scenario::{load, Origin, Simulation};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use toml::Value;

/// Cases per target when `MULTICONN_FUZZ_CASES` is not set (the short run of `cargo test`).
const DEFAULT_CASES: u32 = 400;
/// The seed when `MULTICONN_FUZZ_SEED` is not set.
const DEFAULT_SEED: u64 = 0x6d63_6f6e_6e66_7a7a;
/// Virtual time a loaded scenario runs after its latest flow start.
const SHORT_RUN: u64 = 50_000_000;
/// Events at one instant before the run is declared stalled (the default is 20 million).
const STALL_LIMIT: u64 = 200_000;

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    let text = std::env::var(name).ok()?;
    Some(text.trim().parse().unwrap_or_else(|_| panic!("{name}={text:?} is not a number")))
}

fn cases() -> u32 {
    env_number("MULTICONN_FUZZ_CASES").unwrap_or(DEFAULT_CASES)
}

fn seed() -> u64 {
    env_number("MULTICONN_FUZZ_SEED").unwrap_or(DEFAULT_SEED)
}

/// How long one case (loading twice and the short run) may take.
fn wall_bound() -> Duration {
    Duration::from_secs_f64(env_number("MULTICONN_FUZZ_TIMEOUT_S").unwrap_or(20.0))
}

/// Runs `test` on `cases()` inputs of `strategy`, seeded from the fuzz seed and `target`;
/// prints progress when the run is long and a tally at the end.
fn fuzz<S: Strategy>(target: &str, strategy: S, test: impl Fn(S::Value) -> Result<Outcome, String>)
where
    S::Value: std::fmt::Debug + Clone,
{
    let cases = cases();
    let seed = seed();
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    for (i, b) in target.bytes().enumerate() {
        key[8 + i % 24] ^= b;
    }
    // Shrinking stops after a while: a hanging input costs the whole wall-time bound per step.
    let config = Config { cases, failure_persistence: None, max_shrink_iters: 4096, max_shrink_time: 300_000, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
    let tally = Tally::default();
    let started = Instant::now();
    let every = if cases >= 1000 { u64::from(cases / 20) } else { u64::MAX };
    let result = runner.run(&strategy, |input| {
        let copy = input.clone();
        let outcome = test(input).map_err(TestCaseError::fail)?;
        let done = tally.add(&outcome, || format!("{copy:?}"));
        if done % every == 0 {
            eprintln!("fuzz {target}: {done}/{cases} cases, {:.0} s, {}", started.elapsed().as_secs_f64(), tally.line());
        }
        Ok(())
    });
    eprintln!("fuzz {target}: seed {seed}, {:.1} s, {}", started.elapsed().as_secs_f64(), tally.line());
    if let Some((ms, input)) = tally.slowest.lock().unwrap().as_ref().filter(|(ms, _)| *ms >= 1000) {
        eprintln!("fuzz {target}: the slowest run ({ms} ms) was of {input}");
    }
    if let Err(e) = result {
        panic!("fuzz {target} (MULTICONN_FUZZ_SEED={seed}): {e}");
    }
    assert!(tally.loaded.load(Ordering::Relaxed) > 0, "fuzz {target}: no input loaded; the generator only produces rejected input");
}

/// What a case came to (every outcome passes; failures are `Err`).
#[derive(Debug)]
enum Outcome {
    /// Refused with this one-line error.
    Rejected(String),
    /// Loaded and ran its short run; `stalled` when the watchdog ended it.
    Ran { stalled: bool, wall: Duration },
}

#[derive(Default)]
struct Tally {
    cases: AtomicU64,
    loaded: AtomicU64,
    stalled: AtomicU64,
    /// The slowest run: its wall time (ms) and its input.
    slowest: Mutex<Option<(u64, String)>>,
}

impl Tally {
    fn add(&self, outcome: &Outcome, input: impl FnOnce() -> String) -> u64 {
        if let Outcome::Ran { stalled, wall } = outcome {
            self.loaded.fetch_add(1, Ordering::Relaxed);
            self.stalled.fetch_add(u64::from(*stalled), Ordering::Relaxed);
            let ms = wall.as_millis() as u64;
            let mut slowest = self.slowest.lock().unwrap();
            if slowest.as_ref().map_or(true, |(slowest, _)| ms > *slowest) {
                *slowest = Some((ms, input()));
            }
        }
        self.cases.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn line(&self) -> String {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "{} cases (shrinking included): {} ran, {} stalled, slowest run {} ms",
            r(&self.cases),
            r(&self.loaded),
            r(&self.stalled),
            self.slowest.lock().unwrap().as_ref().map_or(0, |(ms, _)| *ms)
        )
    }
}

// ---------------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------------

/// Loads `text` (trace files relative to `base`) with `sets`, and runs it shortly if it loads,
/// in a thread of its own: a panic or a case over the wall-time bound is an `Err`.
fn check(text: &str, base: &Path, sets: &[(String, String)]) -> Result<Outcome, String> {
    let (text, base, sets) = (text.to_string(), base.to_path_buf(), sets.to_vec());
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("fuzz-case".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = tx.send(load_and_run(&text, &base, &sets));
        })
        .expect("spawn a fuzz case");
    let bound = wall_bound();
    match rx.recv_timeout(bound) {
        Ok(outcome) => {
            let _ = worker.join();
            outcome
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let payload = worker.join().expect_err("the case ended without an outcome, so it panicked");
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("panicked: {message}"))
        }
        // The worker is left running: the case has failed, and shrinking starts the next ones.
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("loading and the short run took more than {} s", bound.as_secs_f64())),
    }
}

fn load_and_run(text: &str, base: &Path, sets: &[(String, String)]) -> Result<Outcome, String> {
    let origin = Origin { name: "fuzz.toml".into(), base_dir: base.to_path_buf() };
    let scenario = match load(text, &origin, sets) {
        Ok(s) => s,
        Err(e) => return rejected(e.to_string()),
    };
    let _ = scenario.to_json();
    let resolved = scenario.resolved();
    let latest_start = resolved.flows.iter().map(|f| f.start.0).max().unwrap_or(0);
    let end = latest_start.saturating_add(SHORT_RUN).min(resolved.duration.map_or(u64::MAX, |d| d.0));
    let mut short_sets = sets.to_vec();
    short_sets.push(("run.duration".into(), format!("{end} ns")));
    let short = match load(text, &origin, &short_sets) {
        Ok(s) => s,
        Err(e) => return rejected(e.to_string()),
    };
    let mut sim = Simulation::new(&short, None).map_err(|e| format!("a scenario that loaded was refused by the run: {e}"))?;
    sim.set_stall_limit(STALL_LIMIT);
    let started = Instant::now();
    sim.run_to_end();
    let stalled = sim.stalled().is_some();
    let out = sim.finish();
    serde_json::from_str::<serde_json::Value>(&out.summary_json).map_err(|e| format!("the summary is not JSON: {e}"))?;
    Ok(Outcome::Ran { stalled, wall: started.elapsed() })
}

/// A refusal passes when its message is one non-empty line.
fn rejected(message: String) -> Result<Outcome, String> {
    if message.trim().is_empty() || message.contains('\n') {
        return Err(format!("the error is not one line: {message:?}"));
    }
    Ok(Outcome::Rejected(message))
}

// ---------------------------------------------------------------------------------------------
// The corpus: example and catalogue scenarios
// ---------------------------------------------------------------------------------------------

struct Seed {
    name: String,
    text: String,
    base: PathBuf,
    doc: Value,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The example scenarios and the catalogue's, in name order.
fn corpus() -> &'static [Seed] {
    static CORPUS: OnceLock<Vec<Seed>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut seeds = Vec::new();
        for folder in ["examples/scenarios", "python/multiconn/catalog/scenarios"] {
            let dir = repo().join(folder);
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            files.sort();
            for path in files {
                let text = std::fs::read_to_string(&path).unwrap();
                let doc: Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                seeds.push(Seed { name: format!("{folder}/{}", path.file_name().unwrap().to_string_lossy()), text, base: dir.clone(), doc });
            }
        }
        seeds
    })
}

/// The seeds that load as they are (the trace of trace_lte.toml lies outside the repository).
fn loadable() -> &'static [usize] {
    static LOADABLE: OnceLock<Vec<usize>> = OnceLock::new();
    LOADABLE.get_or_init(|| {
        corpus()
            .iter()
            .enumerate()
            .filter(|(_, s)| load(&s.text, &Origin { name: s.name.clone(), base_dir: s.base.clone() }, &[]).is_ok())
            .map(|(i, _)| i)
            .collect()
    })
}

#[test]
fn the_corpus_loads() {
    let failing: Vec<String> = corpus()
        .iter()
        .filter(|s| !s.name.ends_with("trace_lte.toml"))
        .filter_map(|s| load(&s.text, &Origin { name: s.name.clone(), base_dir: s.base.clone() }, &[]).err().map(|e| e.to_string()))
        .collect();
    assert!(failing.is_empty(), "every seed scenario loads: {failing:#?}");
    assert!(corpus().len() >= 20, "{} seeds", corpus().len());
}

/// Every key and every leaf value of the corpus, for cross-pollination.
fn corpus_keys_and_values() -> &'static (Vec<String>, Vec<Value>) {
    static POOL: OnceLock<(Vec<String>, Vec<Value>)> = OnceLock::new();
    POOL.get_or_init(|| {
        fn walk(v: &Value, keys: &mut Vec<String>, values: &mut Vec<Value>) {
            match v {
                Value::Table(t) => t.iter().for_each(|(k, v)| {
                    keys.push(k.clone());
                    walk(v, keys, values)
                }),
                Value::Array(a) => a.iter().for_each(|v| walk(v, keys, values)),
                leaf => values.push(leaf.clone()),
            }
        }
        let (mut keys, mut values) = (Vec::new(), Vec::new());
        for s in corpus() {
            walk(&s.doc, &mut keys, &mut values);
        }
        keys.sort();
        keys.dedup();
        keys.extend(["bogus", "", " ", "link.rate", "0"].map(String::from));
        values.sort_by_key(|v| v.to_string());
        values.dedup();
        (keys, values)
    })
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

const NUMBERS: &[&str] = &[
    "0", "-0", "-1", "1", "0.5", "1e308", "-1e308", "1e-308", "5e-324", "1e400", "NaN", "nan", "inf", "-inf", "+inf",
    "4611686018427387903", "4611686018427387904", "4611686018427387905", "9223372036854775807", "9223372036854775808",
    "18446744073709551615", "18446744073709551616", "9007199254740993", "0.000000001", "0.0000000001", "1_000",
    "1__0", "1e", "1e+", "--1", ".", "..5", "0x10", "1.5.5", "", "320000000000", "320000000001", "4294967296",
    "65535", "65536", "255", "256", "1e9", "1e12", "1e15", "1e18", "1e19", "3.4e38",
];

const UNITS: &[&str] = &[
    "", " ", "ns", "us", "ms", "s", "min", "h", "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "bps", "Mbps", "B/s", "kB/s",
    "MB/s", "GB/s", "B", "kB", "MB", "GB", "KiB", "MiB", "GiB", "bytes", "packets", "packet", "p", "BDP", "bdp", "%",
    "m/s", "km/h", "Mbit", "mbit/s", "MBit/s", "ms ms", "µs", "years", "s/s", "Tbit/s", "ms\0", "\u{202e}ms",
];

const STRINGS: &[&str] = &[
    "", " ", "\t", "\n", "\0", "\u{feff}", "é", "💥", "a\nb", "nan", "NaN ms", "inf Mbit/s", "-5 ms", "1e400 Mbit/s",
    "1e30 s", "0 ns", "1 ns", "4611686018427387904 ns", "4611686018427387905 ns", "146 years", "320 Gbit/s",
    "320.000001 Gbit/s", "0 bit/s", "1 bit/s", "1 B", "0 B", "1 packets", "0 packets", "9999999999999999 packets",
    "18446744073709551616 B", "1.5 BDP", "0 BDP", "1e300 BDP", "-1 BDP", "nan BDP", "100 %", "101 %", "-1 %", "1e-300 %",
    "Mbit/s", "10", "10 Mbit", "10 ms ms", "١٠ ms", "10ms", " 10 ms ", "1e-9 s", "1e-10 s", "1e9 s", "1 h",
    "/", ".", "..", "../", "/nonexistent/file", "trace.down", "server", "client", "x", "-", "_", "a b",
];

/// A TOML value meant to break whatever field receives it.
fn value() -> impl Strategy<Value = Value> {
    let corpus_values = corpus_keys_and_values().1.clone();
    let scalar = prop_oneof![
        3 => prop::sample::select(corpus_values),
        2 => prop::sample::select(STRINGS).prop_map(|s| Value::String(s.into())),
        2 => (prop::sample::select(NUMBERS), prop::sample::select(UNITS)).prop_map(|(n, u)| Value::String(format!("{n} {u}"))),
        1 => (any::<f64>(), prop::sample::select(UNITS)).prop_map(|(n, u)| Value::String(format!("{n}{u}"))),
        2 => prop_oneof![Just(0i64), Just(-1), Just(1), Just(i64::MAX), Just(i64::MIN), Just(1 << 53), Just(1 << 62), Just(255), Just(256), Just(65536), any::<i64>()].prop_map(Value::Integer),
        2 => prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(-0.0), Just(1e308), Just(5e-324), Just(0.5), Just(1.5), Just(100.0), any::<f64>()].prop_map(Value::Float),
        1 => any::<bool>().prop_map(Value::Boolean),
        1 => "[ -~]{0,12}".prop_map(Value::String),
        1 => (0usize..100_000).prop_map(|n| Value::String("9".repeat(n))),
    ];
    scalar.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(corpus_keys_and_values().0.clone()), inner), 0..4)
                .prop_map(|kv| Value::Table(kv.into_iter().collect())),
        ]
    })
}

/// A structural change of the parsed document; `at` picks a node (modulo their count).
#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the node.
    Set { at: usize, value: Value },
    /// Replace the number of a value ("20 Mbit/s", 20, 20.0) by `number`.
    Number { at: usize, number: String },
    /// Replace the unit of a quantity ("20 Mbit/s") by `unit`.
    Unit { at: usize, unit: String },
    /// Delete the node.
    Remove { at: usize },
    /// Give the node another key.
    Rename { at: usize, key: String },
    /// Add a key to the table the node is (or lies in).
    Insert { at: usize, key: String, value: Value },
    /// Append a copy of an element of the array the node lies in (duplicate tables and names).
    Duplicate { at: usize },
}

/// A number as text: an edge case, a plausible value, or any.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(NUMBERS).prop_map(String::from),
        3 => (0.0f64..1000.0).prop_map(|v| format!("{:.3}", v)),
        2 => (0u32..200).prop_map(|v| v.to_string()),
        1 => any::<f64>().prop_map(|v| v.to_string()),
        1 => any::<i64>().prop_map(|v| v.to_string()),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let key = || prop::sample::select(corpus_keys_and_values().0.clone());
    let number = number();
    prop_oneof![
        4 => (any::<usize>(), value()).prop_map(|(at, value)| Mutation::Set { at, value }),
        4 => (any::<usize>(), number).prop_map(|(at, number)| Mutation::Number { at, number }),
        2 => (any::<usize>(), prop::sample::select(UNITS)).prop_map(|(at, unit)| Mutation::Unit { at, unit: unit.into() }),
        2 => any::<usize>().prop_map(|at| Mutation::Remove { at }),
        1 => (any::<usize>(), key()).prop_map(|(at, key)| Mutation::Rename { at, key }),
        2 => (any::<usize>(), key(), value()).prop_map(|(at, key, value)| Mutation::Insert { at, key, value }),
        1 => any::<usize>().prop_map(|at| Mutation::Duplicate { at }),
    ]
}

/// A change of the text itself; `pos` and `line` are taken modulo the text's length.
#[derive(Debug, Clone)]
enum RawEdit {
    Insert { pos: usize, text: String },
    Delete { pos: usize, len: usize },
    Byte { pos: usize, byte: u8 },
    DuplicateLine { line: usize },
}

const FRAGMENTS: &[&str] = &[
    "[", "]", "[[", "]]", "=", "\"", "'", "'''", "\"\"\"", "{", "}", ",", ".", "#", "\n", "\r", "\r\n", "\\", "\\u0000",
    "\\uD800", "\u{feff}", "\n[run]\n", "\n[[link]]\n", "\n[[flow]]\n", "\n[[split]]\n", "\n[[cell]]\n", "\n[fairness]\n",
    "\nname = \"x\"\n", "1e999", "nan", "inf", "-", "= 1\n", "\na.b.c = 1\n", "\n[link.reverse]\n", "\n[flow.multipath]\n",
];

fn raw_edit() -> impl Strategy<Value = RawEdit> {
    prop_oneof![
        3 => (any::<usize>(), prop_oneof![3 => prop::sample::select(FRAGMENTS).prop_map(String::from), 1 => "\\PC{0,8}"])
            .prop_map(|(pos, text)| RawEdit::Insert { pos, text }),
        2 => (any::<usize>(), 1usize..40).prop_map(|(pos, len)| RawEdit::Delete { pos, len }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(pos, byte)| RawEdit::Byte { pos, byte }),
        1 => any::<usize>().prop_map(|line| RawEdit::DuplicateLine { line }),
    ]
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// The paths of every node of `v` (its root excluded), parents before children.
fn node_paths(v: &Value) -> Vec<Vec<Step>> {
    fn walk(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        let children: Vec<(Step, &Value)> = match v {
            Value::Table(t) => t.iter().map(|(k, v)| (Step::Key(k.clone()), v)).collect(),
            Value::Array(a) => a.iter().enumerate().map(|(i, v)| (Step::Index(i), v)).collect(),
            _ => return,
        };
        for (step, child) in children {
            prefix.push(step);
            out.push(prefix.clone());
            walk(child, prefix, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

fn node_mut<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, step| match (v, step) {
        (Value::Table(t), Step::Key(k)) => t.get_mut(k),
        (Value::Array(a), Step::Index(i)) => a.get_mut(*i),
        _ => None,
    })
}

/// `"20 Mbit/s"` → (`"20"`, `" Mbit/s"`).
fn split_quantity(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || matches!(c, '.' | '_' | '-' | '+') || ((c == 'e' || c == 'E') && i > 0)))
        .map_or(s.len(), |(i, _)| i);
    s.split_at(end)
}

fn apply_mutation(doc: &mut Value, m: &Mutation) {
    let paths = node_paths(doc);
    if paths.is_empty() {
        if let (Value::Table(t), Mutation::Insert { key, value, .. }) = (doc, m) {
            t.insert(key.clone(), value.clone());
        }
        return;
    }
    let pick = |at: usize| paths[at % paths.len()].clone();
    match m {
        Mutation::Set { at, value } => {
            if let Some(node) = node_mut(doc, &pick(*at)) {
                *node = value.clone();
            }
        }
        Mutation::Number { at, number } => {
            if let Some(node) = node_mut(doc, &pick(*at)) {
                *node = match &*node {
                    Value::String(s) => Value::String(format!("{number}{}", split_quantity(s).1)),
                    _ => number
                        .parse::<i64>()
                        .map(Value::Integer)
                        .or_else(|_| number.parse::<f64>().map(Value::Float))
                        .unwrap_or_else(|_| Value::String(number.clone())),
                };
            }
        }
        Mutation::Unit { at, unit } => {
            if let Some(node) = node_mut(doc, &pick(*at)) {
                *node = match &*node {
                    Value::String(s) => Value::String(format!("{}{unit}", split_quantity(s).0)),
                    other => Value::String(format!("{other}{unit}")),
                };
            }
        }
        Mutation::Remove { at } => {
            let path = pick(*at);
            let (last, parent) = path.split_last().unwrap();
            match (node_mut(doc, parent), last) {
                (Some(Value::Table(t)), Step::Key(k)) => {
                    t.remove(k);
                }
                (Some(Value::Array(a)), Step::Index(i)) => {
                    a.remove(*i);
                }
                _ => {}
            }
        }
        Mutation::Rename { at, key } => {
            let path = pick(*at);
            let (last, parent) = path.split_last().unwrap();
            if let (Some(Value::Table(t)), Step::Key(k)) = (node_mut(doc, parent), last) {
                if let Some(v) = t.remove(k) {
                    t.insert(key.clone(), v);
                }
            }
        }
        Mutation::Insert { at, key, value } => {
            let mut path = pick(*at);
            while !matches!(node_mut(doc, &path), Some(Value::Table(_))) && !path.is_empty() {
                path.pop();
            }
            if let Some(Value::Table(t)) = node_mut(doc, &path) {
                t.insert(key.clone(), value.clone());
            }
        }
        Mutation::Duplicate { at } => {
            let mut path = pick(*at);
            while let Some(last) = path.pop() {
                if let (Step::Index(i), Some(Value::Array(a))) = (&last, node_mut(doc, &path)) {
                    let copy = a[*i].clone();
                    a.push(copy);
                    return;
                }
            }
        }
    }
}

fn apply_raw(text: &str, edit: &RawEdit) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let n = bytes.len().max(1);
    match edit {
        RawEdit::Insert { pos, text } => {
            let p = pos % (bytes.len() + 1);
            bytes.splice(p..p, text.bytes());
        }
        RawEdit::Delete { pos, len } => {
            let p = pos % n;
            let end = (p + len).min(bytes.len());
            bytes.drain(p.min(end)..end);
        }
        RawEdit::Byte { pos, byte } => {
            if !bytes.is_empty() {
                bytes[pos % n] = *byte;
            }
        }
        RawEdit::DuplicateLine { line } => {
            let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
            let i = line % lines.len();
            let mut out: Vec<u8> = Vec::new();
            for (j, l) in lines.iter().enumerate() {
                out.extend_from_slice(l);
                out.push(b'\n');
                if j == i {
                    out.extend_from_slice(l);
                    out.push(b'\n');
                }
            }
            bytes = out;
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A seed scenario with structural mutations, then raw edits of its text.
#[derive(Debug, Clone)]
struct MutatedScenario {
    seed: usize,
    mutations: Vec<Mutation>,
    raw: Vec<RawEdit>,
}

impl MutatedScenario {
    fn text(&self) -> String {
        let seed = &corpus()[self.seed];
        let mut doc = seed.doc.clone();
        for m in &self.mutations {
            apply_mutation(&mut doc, m);
        }
        // A table with NaN or ±inf serializes; a document toml cannot write keeps its text.
        let mut text = if self.mutations.is_empty() { seed.text.clone() } else { toml::to_string(&doc).unwrap_or_else(|_| seed.text.clone()) };
        for e in &self.raw {
            text = apply_raw(&text, e);
        }
        text
    }
}

fn mutated_scenario() -> impl Strategy<Value = MutatedScenario> {
    (
        0..corpus().len(),
        prop::collection::vec(mutation(), 0..3),
        prop_oneof![6 => Just(Vec::new()), 1 => prop::collection::vec(raw_edit(), 1..4)],
    )
        .prop_map(|(seed, mutations, raw)| MutatedScenario { seed, mutations, raw })
}

// ---------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------

/// Scenario text: mutated examples and catalogue scenarios.
#[test]
fn fuzz_scenario_text() {
    fuzz("scenario", mutated_scenario(), |m| {
        let text = m.text();
        check(&text, &corpus()[m.seed].base, &[]).map_err(|e| format!("{e}\n--- scenario ({}) ---\n{text}", corpus()[m.seed].name))
    });
}

/// `--set KEY=VALUE` overrides applied to a scenario that loads.
#[derive(Debug, Clone)]
struct Overridden {
    seed: usize,
    assignments: Vec<String>,
}

/// The `--set` key of every node of `doc` that an override can address (arrays of tables by
/// the element's `name`), with the node's value when it is not a table.
fn set_keys(doc: &Value) -> Vec<(String, Option<Value>)> {
    fn walk(v: &Value, prefix: &str, out: &mut Vec<(String, Option<Value>)>) {
        let Value::Table(t) = v else { return };
        for (k, child) in t {
            let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            match child {
                Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_table) => {
                    out.push((key.clone(), None));
                    for (i, e) in a.iter().enumerate() {
                        let name = e.get("name").and_then(Value::as_str).map_or_else(|| format!("{i}"), String::from);
                        walk(e, &format!("{key}.{name}"), out);
                    }
                }
                Value::Table(_) => {
                    out.push((key.clone(), None));
                    walk(child, &key, out)
                }
                leaf => out.push((key, Some(leaf.clone()))),
            }
        }
    }
    let mut out = Vec::new();
    walk(doc, "", &mut out);
    out
}

/// How `--set` spells `v` on the command line: a bare word when TOML would read it as a
/// string anyway, else TOML.
fn command_line_value(v: &Value) -> String {
    match v {
        Value::String(s) if !s.contains(['"', '\n', '[', '{']) && s.parse::<f64>().is_err() && !matches!(s.trim(), "true" | "false" | "nan" | "inf") => s.clone(),
        other => other.to_string(),
    }
}

fn overridden() -> impl Strategy<Value = Overridden> {
    let seeds = loadable().to_vec();
    assert!(!seeds.is_empty(), "some seed scenario loads");
    prop::sample::select(seeds).prop_flat_map(|seed| {
        let addressed = set_keys(&corpus()[seed].doc);
        let mut keys: Vec<String> = addressed.iter().map(|(k, _)| k.clone()).collect();
        keys.extend(["run.duration", "run.bin", "run.seed", "run.measure_from", "name", "link", "flow", "nosuch.x", "link.nosuch.rate", "a..b", " ", ".x", "run.duration.x"].map(String::from));
        let leaves: Vec<(String, Value)> = addressed.into_iter().filter_map(|(k, v)| Some((k, v?))).collect();
        let key = prop_oneof![
            6 => prop::sample::select(keys),
            1 => "[a-z_. ]{0,16}",
            1 => (prop::sample::select(corpus_keys_and_values().0.clone()), prop::sample::select(corpus_keys_and_values().0.clone())).prop_map(|(a, b)| format!("{a}.{b}")),
        ];
        let raw_value = prop_oneof![
            4 => value().prop_map(|v| command_line_value(&v)),
            2 => (prop::sample::select(NUMBERS), prop::sample::select(UNITS)).prop_map(|(n, u)| format!("{n}{u}")),
            1 => prop::sample::select(FRAGMENTS).prop_map(String::from),
            1 => "\\PC{0,16}",
        ];
        // A field's own value with its number or its unit changed: what a sweep would set.
        let change = prop_oneof![
            4 => number().prop_map(|number| Mutation::Number { at: 0, number }),
            1 => prop::sample::select(UNITS).prop_map(|unit| Mutation::Unit { at: 0, unit: unit.into() }),
            1 => value().prop_map(|value| Mutation::Set { at: 0, value }),
        ];
        let nearby = (prop::sample::select(leaves), change).prop_map(|((key, value), m)| {
            let mut doc = Value::Table([("v".to_string(), value)].into_iter().collect());
            apply_mutation(&mut doc, &m);
            format!("{key}={}", doc.get("v").map_or_else(String::new, command_line_value))
        });
        let assignment = prop_oneof![
            12 => nearby,
            4 => (key, raw_value).prop_map(|(k, v)| format!("{k}={v}")),
            1 => "\\PC{0,24}",
        ];
        prop::collection::vec(assignment, 1..3).prop_map(move |assignments| Overridden { seed, assignments })
    })
}

#[test]
fn fuzz_overrides() {
    fuzz("overrides", overridden(), |o| {
        let mut sets = Vec::new();
        for a in &o.assignments {
            match split_assignment(a) {
                Ok(pair) => sets.push(pair),
                Err(e) => return rejected(e),
            }
        }
        check(&corpus()[o.seed].text, &corpus()[o.seed].base, &sets).map_err(|e| format!("{e}\n--- {} with --set {:?}", corpus()[o.seed].name, o.assignments))
    });
}

/// The trace files a scenario can name, each with the field that names it.
#[derive(Debug, Clone, Copy)]
enum TraceKind {
    Mahimahi,
    Ucc,
    CsvSeconds,
    CsvRows,
    Histogram,
    DelaySeries,
    LossTrace,
}

impl TraceKind {
    const ALL: [TraceKind; 7] = [
        TraceKind::Mahimahi,
        TraceKind::Ucc,
        TraceKind::CsvSeconds,
        TraceKind::CsvRows,
        TraceKind::Histogram,
        TraceKind::DelaySeries,
        TraceKind::LossTrace,
    ];

    /// The link fields that use the trace file `trace`.
    fn fields(self) -> &'static str {
        match self {
            TraceKind::Mahimahi => r#"rate = { model = "mahimahi", file = "trace" }"#,
            TraceKind::Ucc => r#"rate = { model = "ucc", file = "trace" }"#,
            TraceKind::CsvSeconds => {
                r#"rate = { model = "csv", file = "trace", column = "rate", unit = "1 kbit/s", time_column = "time", time_format = "seconds" }"#
            }
            TraceKind::CsvRows => r#"rate = { model = "csv", file = "trace", column = "rate", unit = "1 Mbit/s", time_format = "row" }"#,
            TraceKind::Histogram => "rate = \"20 Mbit/s\"\ndelay = { model = \"empirical\", file = \"trace\", reorder = true }",
            TraceKind::DelaySeries => "rate = \"20 Mbit/s\"\ndelay = { model = \"series\", file = \"trace\" }",
            TraceKind::LossTrace => "rate = \"20 Mbit/s\"\nloss = { model = \"trace\", file = \"trace\" }",
        }
    }

    /// The link crate's sample files of this kind.
    fn samples(self) -> &'static [&'static str] {
        match self {
            TraceKind::Mahimahi => &["mahimahi-synthetic.down"],
            TraceKind::Ucc => &["gnettrack-synthetic.csv"],
            TraceKind::CsvSeconds => &[],
            TraceKind::CsvRows => &[],
            TraceKind::Histogram => &["delay_hist_counts.tsv", "delay_hist_frequencies.csv", "delay_hist_spaces.txt"],
            TraceKind::DelaySeries => &["delay_series.csv"],
            TraceKind::LossTrace => &["loss_trace_pattern.txt"],
        }
    }

    /// Valid texts to mutate: the samples, and a small one of the kind's format.
    fn seeds(self) -> Vec<String> {
        let data = repo().join("crates/link/tests/data");
        let mut seeds: Vec<String> = self.samples().iter().map(|f| std::fs::read_to_string(data.join(f)).unwrap()).collect();
        seeds.push(
            match self {
                TraceKind::Mahimahi => "1\n1\n5\n9\n10\n",
                TraceKind::Ucc => "Timestamp,DL_bitrate\n2020.02.14_13.21.26,1000\n2020.02.14_13.21.27,2000\n",
                TraceKind::CsvSeconds => "time,rate\n0,1000\n1.5,2000\n3,500\n",
                TraceKind::CsvRows => "rate\n10\n20\n0\n",
                TraceKind::Histogram => "10 1\n20 1\n",
                TraceKind::DelaySeries => "time_s,delay_ms\n0,10\n1,20\n",
                TraceKind::LossTrace => "0\n1\n0\n",
            }
            .to_string(),
        );
        seeds
    }
}

/// A change of a trace's text, line by line or field by field.
#[derive(Debug, Clone)]
enum TraceEdit {
    /// Replace the `field`-th number-like field of line `line` by `number`.
    Number { line: usize, field: usize, number: String },
    RemoveLine { line: usize },
    DuplicateLine { line: usize },
    SwapLines { a: usize, b: usize },
    InsertLine { line: usize, text: String },
    Raw(RawEdit),
}

fn trace_edit() -> impl Strategy<Value = TraceEdit> {
    let number = prop_oneof![
        3 => prop::sample::select(NUMBERS).prop_map(String::from),
        1 => (prop::sample::select(NUMBERS), prop::sample::select(&["ms", " ms", "s", "%", "e", ","][..])).prop_map(|(n, u)| format!("{n}{u}")),
        1 => any::<f64>().prop_map(|v| v.to_string()),
        1 => any::<u64>().prop_map(|v| v.to_string()),
    ];
    prop_oneof![
        6 => (any::<usize>(), 0usize..30, number).prop_map(|(line, field, number)| TraceEdit::Number { line, field, number }),
        1 => any::<usize>().prop_map(|line| TraceEdit::RemoveLine { line }),
        1 => any::<usize>().prop_map(|line| TraceEdit::DuplicateLine { line }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| TraceEdit::SwapLines { a, b }),
        1 => (any::<usize>(), prop_oneof![prop::sample::select(FRAGMENTS).prop_map(String::from), "[0-9.,\t e+-]{0,20}", "\\PC{0,10}"])
            .prop_map(|(line, text)| TraceEdit::InsertLine { line, text }),
        1 => raw_edit().prop_map(TraceEdit::Raw),
    ]
}

fn apply_trace_edit(text: &str, edit: &TraceEdit) -> String {
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    let n = lines.len();
    match edit {
        TraceEdit::Number { line, field, number } => {
            let l = &mut lines[line % n];
            // Fields are separated by commas, tabs or spaces; keep the separators.
            let mut starts = vec![0];
            starts.extend(l.char_indices().filter(|(_, c)| matches!(c, ',' | '\t' | ' ')).map(|(i, _)| i + 1));
            let start = starts[field % starts.len()];
            let end = l[start..].find([',', '\t', ' ']).map_or(l.len(), |e| start + e);
            l.replace_range(start..end, number);
        }
        TraceEdit::RemoveLine { line } => {
            lines.remove(line % n);
        }
        TraceEdit::DuplicateLine { line } => {
            let l = lines[line % n].clone();
            lines.insert(line % n, l);
        }
        TraceEdit::SwapLines { a, b } => lines.swap(a % n, b % n),
        TraceEdit::InsertLine { line, text } => lines.insert(line % (n + 1), text.clone()),
        TraceEdit::Raw(e) => return apply_raw(text, e),
    }
    lines.join("\n")
}

#[derive(Debug, Clone)]
struct TraceCase {
    kind: TraceKind,
    transport: &'static str,
    seed: usize,
    edits: Vec<TraceEdit>,
}

impl TraceCase {
    fn trace(&self) -> String {
        let seeds = self.kind.seeds();
        let mut text = seeds[self.seed % seeds.len()].clone();
        for e in &self.edits {
            text = apply_trace_edit(&text, e);
        }
        text
    }

    fn scenario(&self) -> String {
        let app = if self.transport == "udp" { "app = \"bulk\"" } else { "app = \"bulk\"\nsize = \"2 MB\"" };
        format!(
            "[run]\nduration = \"3 s\"\n\n[[link]]\nname = \"l\"\nbetween = [\"server\", \"client\"]\n{}\nqueue = \"100 packets\"\n\n[link.reverse]\nrate = \"10 Mbit/s\"\ndelay = \"5 ms\"\nloss = 0\n\n[[flow]]\nname = \"f\"\nfrom = \"server\"\nto = \"client\"\ntransport = \"{}\"\n{app}\n",
            self.kind.fields(),
            self.transport
        )
    }
}

fn trace_case() -> impl Strategy<Value = TraceCase> {
    (
        prop::sample::select(TraceKind::ALL.to_vec()),
        prop::sample::select(vec!["udp", "quic", "tcp"]),
        any::<usize>(),
        prop::collection::vec(trace_edit(), 0..6),
    )
        .prop_map(|(kind, transport, seed, edits)| TraceCase { kind, transport, seed, edits })
}

/// A folder of its own for each case's trace file.
fn case_dir() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    let root = ROOT.get_or_init(|| std::env::temp_dir().join(format!("multiconn-fuzz-{}", std::process::id())));
    let dir = root.join(NEXT.fetch_add(1, Ordering::Relaxed).to_string());
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `scenario` with `trace` as the file `trace` beside it.
fn check_with_trace(scenario: &str, trace: &str) -> Result<Outcome, String> {
    let dir = case_dir();
    std::fs::write(dir.join("trace"), trace).unwrap();
    let outcome = check(scenario, &dir, &[]);
    if outcome.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    outcome
}

#[test]
fn fuzz_trace_files() {
    fuzz("traces", trace_case(), |c| {
        let (scenario, trace) = (c.scenario(), c.trace());
        check_with_trace(&scenario, &trace).map_err(|e| format!("{e}\n--- {:?} over {}, trace:\n{trace}", c.kind, c.transport))
    });
}

// ---------------------------------------------------------------------------------------------
// Regressions: inputs the fuzzer found, kept as they were shrunk
// ---------------------------------------------------------------------------------------------

mod regressions {
    use super::*;
    use crate::common;

    /// Loading must refuse, with an error naming `needle`.
    fn refused(text: &str, base: &Path, sets: &[(&str, &str)], needle: &str) {
        let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        match check(text, base, &sets) {
            Ok(Outcome::Rejected(e)) => assert!(e.contains(needle), "{e}"),
            other => panic!("expected a refusal naming {needle:?}, got {other:?}"),
        }
    }

    /// A queue limit ending in a multi-byte character panicked (the BDP suffix was sliced at a
    /// byte that is not a character boundary).
    #[test]
    fn a_queue_limit_ending_in_a_multi_byte_character() {
        let seed = corpus().iter().find(|s| s.name.ends_with("quic_slow_reader.toml")).unwrap();
        refused(&seed.text, &seed.base, &[("link.access.queue", "\u{116e0}")], "link.access.queue");
        refused(common::BULK, Path::new("."), &[("link.bottleneck.queue", "1 é")], "invalid queue limit");
        refused(common::BULK, Path::new("."), &[("link.bottleneck.queue", "é")], "invalid queue limit");
    }

    /// A bulk udp flow fills its first link's queue at once: "9999999999999999 packets" made
    /// the run allocate until the process was killed.
    #[test]
    fn a_bulk_udp_flow_into_a_huge_queue() {
        let base = Path::new(".");
        let queue = |q: &str| common::BULK.replace("\"100 packets\"", q);
        refused(&queue("\"9999999999999999 packets\""), base, &[], "link.bottleneck.queue: the forward queue holds 10000000000000000 packets of 1500 B, and the bulk udp flow \"bulk\" fills it at once: at most 1000000 packets");
        refused(common::BULK, base, &[("link.bottleneck.queue", "1 GB"), ("flow.bulk.packet_size", "29 B")], "holds 34482759 packets of 29 B");
        assert!(matches!(check(&queue("\"1000000 packets\""), base, &[]), Ok(Outcome::Ran { .. })));
        // A transport flow is paced by its window, not by the queue.
        let quic = queue("\"9999999999999999 packets\"").replace("\"udp\"", "\"quic\"").replace("app = \"bulk\"", "app = \"bulk\"\nsize = \"1 MB\"");
        assert!(matches!(check(&quic, base, &[]), Ok(Outcome::Ran { .. })));
    }

    /// A newline in a value, from an override or an escape in the file, made the error two
    /// lines (`check` refuses errors that are not one line).
    #[test]
    fn a_newline_in_a_value_keeps_the_error_on_one_line() {
        let seed = corpus().iter().find(|s| s.name.ends_with("quic_slow_reader.toml")).unwrap();
        refused(&seed.text, &seed.base, &[("flow.download.receiver", "\n")], "(--set flow.download.receiver=\\n)");
        refused(&common::BULK.replace("\"40 Mbit/s\"", "\"40 Mbit\\n/s\""), Path::new("."), &[], "invalid rate");
        refused(common::BULK, Path::new("."), &[("flow.bulk.size", "1\r\n2")], "(--set flow.bulk.size=1\\r\\n2)");
    }

    /// A loss trace of only losses on a bulk udp flow's first link: the source offered
    /// packets without end at 0 s, past the wall-time bound (shrunk from seed 3); then the run
    /// was ended as stalled; now the source is paced at the line rate and the run completes.
    #[test]
    fn a_loss_trace_of_only_losses_under_a_bulk_udp_flow() {
        let case = TraceCase {
            kind: TraceKind::LossTrace,
            transport: "udp",
            seed: 1,
            edits: vec![TraceEdit::RemoveLine { line: 0 }, TraceEdit::Number { line: 1, field: 0, number: "1".into() }],
        };
        assert_eq!(case.trace(), "1\n1\n");
        match check_with_trace(&case.scenario(), &case.trace()) {
            Ok(Outcome::Ran { stalled: false, .. }) => {}
            other => panic!("expected a run to its end, got {other:?}"),
        }
    }

    /// A bitrate CSV at 320 Tbit/s (kbit/s column, 320000000000) loaded, and its 50 ms run
    /// took 15 s.
    #[test]
    fn a_bitrate_trace_above_320_gbit_s() {
        let case = TraceCase { kind: TraceKind::CsvSeconds, transport: "udp", seed: 0, edits: vec![] };
        match check_with_trace(&case.scenario(), "time,rate\n0,320000000000\n1,0\n") {
            Ok(Outcome::Rejected(e)) => assert!(e.contains("above the largest allowed, 320 Gbit/s"), "{e}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}
