//! Python bindings: the native module `multiconn._core`.
//!
//! A thin layer over `multiconn-scenario`: scenario text in, summary JSON and time-series columns
//! out. Loading and running happen with the GIL released, so other Python threads (a progress
//! bar, a UI) keep running; a run advances in calls bounded by virtual time and by a number of
//! events, so that Python can show progress and take a Ctrl-C between them. Everything
//! user-facing (the CLI, output files, progress display) lives in the Python package
//! `multiconn`.
//!
//! A finished run's tables are handed over as typed buffers, the layout of Arrow arrays
//! ([`native_columns`]): no Python object per value, and each column's Rust memory freed as
//! it is handed over. [`estimate`] counts the events a scenario implies, before it runs.
//!
//! The schema the Python side relies on is exported from its one definition in Rust as module
//! constants: the time-series and message-table columns with their types, the message kinds and
//! the duration units.

// pyo3 0.22's #[pyfunction] wrappers convert a PyErr into itself where `?` is used.
#![allow(clippy::useless_conversion)]

mod cases;
mod drive;
mod emu;
mod estimate;

use multiconn_core::units::DURATION_UNIT_SECONDS;
use multiconn_core::{Dur, Time};
use multiconn_scenario as scenario;
use multiconn_scenario::messages::{MessageKind, StreamChoices, TABLE_COLUMNS};
use multiconn_scenario::report::COLUMNS;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyTuple};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

create_exception!(
    multiconn._core,
    ScenarioError,
    PyValueError,
    "A scenario could not be loaded: a parse, validation, override or trace-file error. \
     The message is one line naming the file, the field and what is allowed; the attributes \
     `file`, `line`, `set`, `path` (None where not known) and `message` hold its parts."
);

/// The parts of a [`scenario::ScenarioError`] the Python exception carries as attributes.
const ERROR_PARTS: [&str; 4] = ["file", "line", "set", "path"];

fn scenario_err(e: scenario::ScenarioError) -> PyErr {
    Python::with_gil(|py| {
        let err = ScenarioError::new_err(e.to_string());
        let value = err.value_bound(py);
        let parts = [
            e.file.into_py(py),
            e.line.into_py(py),
            e.set.into_py(py),
            e.path.into_py(py),
            e.message.into_py(py),
        ];
        for (name, part) in ERROR_PARTS.iter().chain(&["message"]).zip(parts) {
            if let Err(failed) = value.setattr(*name, part) {
                return failed;
            }
        }
        err
    })
}

/// Parses, overrides and validates a scenario (trace files included), without the GIL.
fn load(
    py: Python<'_>,
    text: &str,
    origin: &str,
    base_dir: PathBuf,
    overrides: &[(String, String)],
) -> PyResult<scenario::Scenario> {
    let origin = scenario::Origin {
        name: origin.to_owned(),
        base_dir,
    };
    py.allow_threads(|| scenario::load(text, &origin, overrides))
        .map_err(scenario_err)
}

/// The version of the native crate.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Loads and validates a scenario; returns the resolved scenario as canonical JSON.
#[pyfunction]
#[pyo3(signature = (text, origin, base_dir, overrides))]
fn validate(
    py: Python<'_>,
    text: &str,
    origin: &str,
    base_dir: PathBuf,
    overrides: Vec<(String, String)>,
) -> PyResult<String> {
    let loaded = load(py, text, origin, base_dir, &overrides)?;
    Ok(loaded.to_json())
}

/// Loads and validates a scenario; returns its warnings: settings that are valid but often
/// not what was meant, one line each.
#[pyfunction]
#[pyo3(signature = (text, origin, base_dir, overrides))]
fn warnings(
    py: Python<'_>,
    text: &str,
    origin: &str,
    base_dir: PathBuf,
    overrides: Vec<(String, String)>,
) -> PyResult<Vec<String>> {
    let loaded = load(py, text, origin, base_dir, &overrides)?;
    Ok(loaded.warnings().to_vec())
}

/// A capture file: its name and bytes.
type PcapFile = (String, Vec<u8>);

/// A run in progress, advanced in bounded steps of virtual time.
///
/// The simulation sits behind a mutex (it is only touched with the GIL released); the progress
/// counters are copied into atomics after every step so the read-only properties never wait for
/// a step running in another thread.
#[pyclass(module = "multiconn._core", name = "Simulation")]
struct PySimulation {
    inner: Mutex<Option<scenario::Simulation>>,
    scenario_json: String,
    end_time_s: f64,
    now_ns: AtomicU64,
    events: AtomicU64,
    done: AtomicBool,
    /// What `finish` left for `take_pcap`: the capture files (name, bytes) and what they left
    /// out.
    pcap: Mutex<(Vec<PcapFile>, Vec<String>)>,
    /// The scenario's estimate of its events, largest part first ([`estimate`]).
    estimate: Vec<estimate::Part>,
}

/// One column as [`native_columns`] hands it over: (name, type, data, validity, null count,
/// extra).
type NativeColumn<'py> = (String, &'static str, Option<Bound<'py, PyBytes>>, Option<Bound<'py, PyBytes>>, usize, PyObject);

/// Bytes of `values` in little-endian order, written straight into a Python bytes object.
fn le_bytes<'py, T: Copy, const N: usize>(py: Python<'py>, values: &[T], to: impl Fn(T) -> [u8; N]) -> Bound<'py, PyBytes> {
    PyBytes::new_bound_with(py, values.len() * N, |out| {
        for (chunk, v) in out.chunks_exact_mut(N).zip(values) {
            chunk.copy_from_slice(&to(*v));
        }
        Ok(())
    })
    .expect("writing into a new bytes object cannot fail")
}

/// A dictionary column's codes in the narrowest signed type that indexes its values (int8
/// below 128 values, int16 below 32 768, else int32: what pandas and Arrow choose).
fn codes_bytes<'py>(py: Python<'py>, dict: &scenario::format::DictColumn) -> Bound<'py, PyBytes> {
    let width = dict.values.len();
    if width < 1 << 7 {
        le_bytes(py, &dict.codes, |c| (c as i8).to_le_bytes())
    } else if width < 1 << 15 {
        le_bytes(py, &dict.codes, |c| (c as i16).to_le_bytes())
    } else {
        le_bytes(py, &dict.codes, |c| (c as i32).to_le_bytes())
    }
}

/// The columns of a table as Python objects that own no Python value per row: for each,
/// `(name, type, data, validity, null_count, extra)`:
///
/// * `"float64"`: `data` the values (little-endian f64), `validity` an Arrow bitmap of the
///   values that are not NaN (None when all are), `null_count` the NaNs;
/// * `"int64"`: `data` the values (little-endian i64);
/// * `"category"`: `data` the codes (int8, int16 or int32 as [`codes_bytes`]), `extra` the
///   sorted distinct values (a list of str);
/// * a numeric column holding one value in every row: `data` None and `extra` that value
///   (the Python side shares one buffer among such columns).
///
/// Each Rust column is freed once handed over.
fn native_columns<'py>(py: Python<'py>, columns: Vec<(String, scenario::Column)>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty_bound(py);
    for (name, column) in columns {
        let item: NativeColumn = match column {
            scenario::Column::F64(v) => {
                let nulls = v.iter().filter(|x| x.is_nan()).count();
                if v.first().is_some_and(|first| v.iter().all(|x| x.to_bits() == first.to_bits())) {
                    (name, "float64", None, None, nulls, v[0].into_py(py))
                } else {
                    let validity = (nulls > 0).then(|| {
                        PyBytes::new_bound_with(py, v.len().div_ceil(8), |bits| {
                            for (i, x) in v.iter().enumerate() {
                                if !x.is_nan() {
                                    bits[i >> 3] |= 1 << (i & 7);
                                }
                            }
                            Ok(())
                        })
                        .expect("writing into a new bytes object cannot fail")
                    });
                    (name, "float64", Some(le_bytes(py, &v, f64::to_le_bytes)), validity, nulls, py.None())
                }
            }
            scenario::Column::I64(v) => {
                if v.first().is_some_and(|first| v.iter().all(|x| x == first)) {
                    (name, "int64", None, None, 0, v[0].into_py(py))
                } else {
                    (name, "int64", Some(le_bytes(py, &v, i64::to_le_bytes)), None, 0, py.None())
                }
            }
            scenario::Column::Fill(scenario::format::Fill::F64(value, rows)) => {
                (name, "float64", None, None, if value.is_nan() { rows } else { 0 }, value.into_py(py))
            }
            scenario::Column::Fill(scenario::format::Fill::I64(value, _)) => (name, "int64", None, None, 0, value.into_py(py)),
            scenario::Column::Dict(d) => {
                let codes = codes_bytes(py, &d);
                (name, "category", Some(codes), None, 0, PyList::new_bound(py, &d.values).into_py(py))
            }
            scenario::Column::Str(v) => {
                let mut dict = scenario::format::DictBuilder::with_capacity(v.len());
                for s in &v {
                    dict.push(s);
                }
                let d = dict.finish();
                (name, "category", Some(codes_bytes(py, &d)), None, 0, PyList::new_bound(py, &d.values).into_py(py))
            }
        };
        out.append(item)?;
    }
    Ok(out)
}

fn columns_dict<'py>(
    py: Python<'py>,
    columns: &[(String, scenario::Column)],
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new_bound(py);
    for (name, column) in columns {
        let list = match column {
            scenario::Column::F64(v) => PyList::new_bound(py, v),
            scenario::Column::I64(v) => PyList::new_bound(py, v),
            scenario::Column::Str(v) => PyList::new_bound(py, v.iter().map(String::as_str)),
            scenario::Column::Dict(d) => PyList::new_bound(py, (0..d.codes.len()).map(|r| d.get(r))),
            fill @ scenario::Column::Fill(_) => match fill.clone().expand() {
                scenario::Column::F64(v) => PyList::new_bound(py, v),
                scenario::Column::I64(v) => PyList::new_bound(py, v),
                _ => unreachable!("a fill expands to numbers"),
            },
        };
        dict.set_item(name, list)?;
    }
    Ok(dict)
}

impl PySimulation {
    /// Runs `f` on the simulation (not yet finished) and publishes its counters.
    fn with_sim<T>(&self, f: impl FnOnce(&mut scenario::Simulation) -> PyResult<T>) -> PyResult<T> {
        let mut guard = self.inner.lock().map_err(|_| poisoned())?;
        let sim = guard.as_mut().ok_or_else(finished)?;
        let out = f(sim);
        self.publish(sim);
        out
    }

    fn publish(&self, sim: &scenario::Simulation) {
        self.now_ns.store(sim.now().as_nanos(), Ordering::Relaxed);
        self.events.store(sim.events(), Ordering::Relaxed);
        self.done.store(sim.is_done(), Ordering::Relaxed);
    }
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the simulation stopped after an internal error and cannot continue")
}

fn finished() -> PyErr {
    PyRuntimeError::new_err("the simulation has already been finished")
}

#[pymethods]
impl PySimulation {
    #[new]
    #[pyo3(signature = (text, origin, base_dir, overrides, seed=None))]
    fn new(
        py: Python<'_>,
        text: &str,
        origin: &str,
        base_dir: PathBuf,
        overrides: Vec<(String, String)>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let loaded = load(py, text, origin, base_dir, &overrides)?;
        let scenario_json = loaded.to_json();
        let sim = py
            .allow_threads(|| scenario::Simulation::new(&loaded, seed))
            .map_err(scenario_err)?;
        let this = PySimulation {
            estimate: estimate::event_estimate(loaded.resolved()),
            end_time_s: sim.end_time().as_secs_f64(),
            scenario_json,
            now_ns: AtomicU64::new(0),
            events: AtomicU64::new(0),
            done: AtomicBool::new(false),
            inner: Mutex::new(None),
            pcap: Mutex::new((Vec::new(), Vec::new())),
        };
        this.publish(&sim);
        *this.inner.lock().map_err(|_| poisoned())? = Some(sim);
        Ok(this)
    }

    /// The time limit of the run, in seconds of virtual time.
    #[getter]
    fn end_time_s(&self) -> f64 {
        self.end_time_s
    }

    /// A rough count of the events the run will fire, from its rates (see the `estimate`
    /// module of the native crate): its parts as (events, who, how counted), largest first;
    /// `who` is `flow "name"` or `link "name" (direction)`. Empty without a time limit.
    #[getter]
    fn event_estimate(&self) -> Vec<(f64, String, String)> {
        self.estimate.iter().map(|p| (p.events, p.who.clone(), p.why.clone())).collect()
    }

    /// Virtual time reached so far, in seconds.
    #[getter]
    fn now_s(&self) -> f64 {
        Time(self.now_ns.load(Ordering::Relaxed)).as_secs_f64()
    }

    /// Events processed so far.
    #[getter]
    fn events(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }

    /// Whether the run is over (time limit reached or every flow done).
    #[getter]
    fn done(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }

    /// The resolved scenario (after overrides) as canonical JSON.
    #[getter]
    fn scenario_json(&self) -> &str {
        &self.scenario_json
    }

    /// Why the run was stopped early, when virtual time stopped advancing (the watchdog);
    /// None otherwise. The results up to that instant are still given by `finish`.
    #[getter]
    fn stalled(&self) -> PyResult<Option<String>> {
        let guard = self.inner.lock().map_err(|_| poisoned())?;
        Ok(guard
            .as_ref()
            .and_then(|sim| sim.stalled())
            .map(|s| s.to_string()))
    }

    /// Turns the invariant checker on or off (on by default when the environment variable
    /// MULTICONN_CHECK_INVARIANTS is 1); it can be turned on only before the run starts.
    fn set_check_invariants(&self, on: bool) -> PyResult<()> {
        let mut guard = self.inner.lock().map_err(|_| poisoned())?;
        guard
            .as_mut()
            .ok_or_else(finished)?
            .set_check_invariants(on)
            .map_err(scenario_err)
    }

    /// Whether the invariant checker is on.
    #[getter]
    fn checks_invariants(&self) -> PyResult<bool> {
        let guard = self.inner.lock().map_err(|_| poisoned())?;
        Ok(guard.as_ref().ok_or_else(finished)?.checks_invariants())
    }

    /// The first invariant violation the checker saw (it ended the run), as one line; None
    /// otherwise.
    #[getter]
    fn violation(&self) -> PyResult<Option<String>> {
        let guard = self.inner.lock().map_err(|_| poisoned())?;
        Ok(guard
            .as_ref()
            .and_then(|sim| sim.violation())
            .map(|v| v.to_string()))
    }

    /// How many events may fire at one instant before the run is declared stalled.
    fn set_stall_limit(&self, events: u64) -> PyResult<()> {
        let mut guard = self.inner.lock().map_err(|_| poisoned())?;
        guard.as_mut().ok_or_else(finished)?.set_stall_limit(events);
        Ok(())
    }

    /// Runs until virtual time `t_s` (seconds), the time limit, or until every flow is done,
    /// with the GIL released; with `max_events`, returns after that many events at the most
    /// (virtual time is then that of the last one). Returns whether the run is over. How a
    /// run is cut into calls never changes its results.
    #[pyo3(signature = (t_s, max_events=None))]
    fn run_until(&self, py: Python<'_>, t_s: f64, max_events: Option<u64>) -> PyResult<bool> {
        if t_s.is_nan() {
            return Err(PyValueError::new_err(
                "run_until: time must be a number, not NaN",
            ));
        }
        if max_events == Some(0) {
            return Err(PyValueError::new_err("run_until: max_events must be at least 1"));
        }
        let t = Time::from_secs_f64(t_s);
        py.allow_threads(|| {
            let mut guard = self.inner.lock().map_err(|_| poisoned())?;
            let sim = guard.as_mut().ok_or_else(finished)?;
            let done = sim.run_until_budget(t, max_events.unwrap_or(u64::MAX));
            self.publish(sim);
            Ok(done)
        })
    }

    /// Ends the run. Returns the summary JSON, the time-series columns as typed buffers (a
    /// list of `(name, type, data, validity, null_count, extra)`, see `native_columns`), the
    /// qlog files as (file name, text) pairs, and the message table's columns in the same
    /// form (empty without message flows). May be called once.
    #[allow(clippy::type_complexity)]
    fn finish<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        String,
        Bound<'py, PyList>,
        Vec<(String, String)>,
        Bound<'py, PyList>,
    )> {
        let output = py.allow_threads(|| {
            let sim = self
                .inner
                .lock()
                .map_err(|_| poisoned())?
                .take()
                .ok_or_else(finished)?;
            PyResult::Ok(sim.finish_compact())
        })?;
        self.done.store(true, Ordering::Relaxed);
        *self.pcap.lock().map_err(|_| poisoned())? = (
            output.pcap.into_iter().map(|f| (f.file_name, f.bytes)).collect(),
            output.pcap_warnings,
        );
        let columns = native_columns(py, output.columns)?;
        let messages = native_columns(py, output.messages)?;
        let qlog = output
            .qlog
            .into_iter()
            .map(|q| (q.file_name, q.text))
            .collect();
        Ok((output.summary_json, columns, qlog, messages))
    }

    /// The packet captures of a finished run (`run.pcap`): the files as (file name, bytes)
    /// pairs and one line per file that reached its size limit. Empty before `finish`, and
    /// after the first call (the files are handed over, not copied).
    #[allow(clippy::type_complexity)]
    fn take_pcap<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Vec<(String, Bound<'py, PyBytes>)>, Vec<String>)> {
        let (files, warnings) = std::mem::take(&mut *self.pcap.lock().map_err(|_| poisoned())?);
        let files = files
            .into_iter()
            .map(|(name, bytes)| (name, PyBytes::new_bound(py, &bytes)))
            .collect();
        Ok((files, warnings))
    }

    /// Message flow `flow`'s sending application opens a stream; returns its id. What is
    /// None takes the kind's default.
    #[pyo3(signature = (flow, name, kind, priority=None, urgent=None, redundant=None, deadline_s=None))]
    #[allow(clippy::too_many_arguments)]
    fn open_stream(
        &self,
        flow: &str,
        name: &str,
        kind: &str,
        priority: Option<&Bound<'_, PyAny>>,
        urgent: Option<bool>,
        redundant: Option<bool>,
        deadline_s: Option<f64>,
    ) -> PyResult<u64> {
        let kind: MessageKind =
            kind.parse()
                .map_err(|e: scenario::messages::UnknownMessageKind| {
                    PyValueError::new_err(e.to_string())
                })?;
        let deadline = match deadline_s {
            None => None,
            Some(d) if d.is_finite() && d > 0.0 => Some(Dur::from_secs_f64(d)),
            Some(d) => {
                return Err(PyValueError::new_err(format!(
                    "deadline_s must be a number of seconds above zero, not {d}"
                )))
            }
        };
        let choices = StreamChoices {
            priority: priority.map(priority_level).transpose()?,
            urgent,
            redundant,
            deadline,
        };
        self.with_sim(|sim| {
            sim.open_stream(flow, name, kind, choices)
                .map_err(scenario_err)
        })
    }

    /// Writes one message of `size` bytes on `stream` of message flow `flow` at the current
    /// virtual time; returns its number on the stream.
    fn write(&self, flow: &str, stream: u64, size: u64) -> PyResult<u64> {
        self.with_sim(|sim| sim.write(flow, stream, size).map_err(scenario_err))
    }

    /// Ends `stream` of message flow `flow`.
    fn finish_stream(&self, flow: &str, stream: u64) -> PyResult<()> {
        self.with_sim(|sim| sim.finish_stream(flow, stream).map_err(scenario_err))
    }

    /// The message table so far as an insertion-ordered dict of lists.
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let columns = self.with_sim(|sim| Ok(sim.messages()))?;
        columns_dict(py, &columns)
    }

    /// The message table's rows of the messages of flow `flow` that arrived after its first
    /// `n` arrivals, in order of arrival.
    fn messages_since<'py>(
        &self,
        py: Python<'py>,
        flow: &str,
        n: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let columns = self.with_sim(|sim| sim.messages_since(flow, n).map_err(scenario_err))?;
        columns_dict(py, &columns)
    }

    fn __repr__(&self) -> String {
        format!(
            "<Simulation now_s={:.3} end_time_s={:.3} events={} done={}>",
            self.now_s(),
            self.end_time_s,
            self.events(),
            self.done()
        )
    }
}

/// A stream's priority level: an int from 0 to 255 (not a bool).
fn priority_level(v: &Bound<'_, PyAny>) -> PyResult<u8> {
    let level = if v.is_instance_of::<PyBool>() {
        None
    } else {
        v.downcast::<PyInt>()
            .ok()
            .and_then(|i| i.extract::<u8>().ok())
    };
    level.ok_or_else(|| match v.repr() {
        Ok(repr) => PyValueError::new_err(format!(
            "priority must be an int from 0 (first) to 255, not {repr}"
        )),
        Err(e) => e,
    })
}

/// A table's schema as ((name, type), ...), the types `float64`, `int64` or `str`.
fn schema<'py>(py: Python<'py>, columns: &[(&str, scenario::ColumnType)]) -> Bound<'py, PyTuple> {
    PyTuple::new_bound(py, columns.iter().map(|(name, ty)| (*name, ty.name())))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let error = py.get_type_bound::<ScenarioError>();
    for part in ERROR_PARTS {
        error.setattr(part, py.None())?;
    }
    m.add("ScenarioError", error)?;
    m.add("TIMESERIES_COLUMNS", schema(py, &COLUMNS))?;
    m.add("MESSAGE_COLUMNS", schema(py, &TABLE_COLUMNS))?;
    m.add(
        "MESSAGE_KINDS",
        PyTuple::new_bound(py, MessageKind::ALL.map(MessageKind::name)),
    )?;
    m.add(
        "DURATION_UNITS",
        PyTuple::new_bound(py, DURATION_UNIT_SECONDS),
    )?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(warnings, m)?)?;
    m.add_class::<PySimulation>()?;
    drive::register(m)?;
    cases::register(m)?;
    emu::register(m)?;
    Ok(())
}
