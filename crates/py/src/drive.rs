//! The multi-operator radio side (`multiconn-radio`) for Python: generate a synthetic drive
//! table, estimate a drive table's per-second capacities and their Table 2/3 statistics, or
//! take the levels and statistics of a table that gives capacities directly.
//!
//! Tables go in as CSV text (the reference's §5.2 long format) or as a dict of columns and
//! come out as plain Python structures (dicts of lists, dicts of numbers). Bad input raises
//! `DriveError`, a `ValueError` with a one-line message naming the field, or the row (1 is the
//! first row under the header) and the column.

use multiconn_radio::{
    self as radio, AggregationStats, CapacityTable, Carrier, CellSample, ChannelSeries,
    ChannelTable, DriveConfig, DriveTable, EstimationParams, RadioError, Summary,
};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

create_exception!(
    multiconn._core,
    DriveError,
    PyValueError,
    "A drive table, a drive preset or estimation parameters that cannot be used. The message \
     is one line naming the field, or the row (1 is the first row under the header) and the \
     column, and what is allowed."
);

/// The error as one line, with row numbers counted from 1 (the radio crate counts from 0).
fn drive_err(e: RadioError) -> PyErr {
    let e = match e {
        RadioError::BadValue {
            row,
            column,
            value,
            allowed,
        } => RadioError::BadValue {
            row: row + 1,
            column,
            value,
            allowed,
        },
        RadioError::TimeBackwards {
            row,
            time_s,
            previous_s,
        } => RadioError::TimeBackwards {
            row: row + 1,
            time_s,
            previous_s,
        },
        e => e,
    };
    DriveError::new_err(e.to_string())
}

/// Generates the synthetic drive of `preset` with `seed` (and `duration_s` seconds instead of
/// the preset's); returns the table as CSV text.
#[pyfunction]
#[pyo3(signature = (preset, seed, duration_s=None))]
pub fn drive_generate(
    py: Python<'_>,
    preset: &str,
    seed: u64,
    duration_s: Option<u32>,
) -> PyResult<String> {
    let mut config = DriveConfig::preset(preset).map_err(drive_err)?;
    if let Some(d) = duration_s {
        config.duration_s = d;
    }
    py.allow_threads(|| radio::generate(&config, seed).map(|t| t.to_csv_string()))
        .map_err(drive_err)
}

/// The preset names `drive_generate` accepts.
#[pyfunction]
pub fn drive_presets() -> Vec<&'static str> {
    radio::drive::PRESETS.to_vec()
}

/// One column of a dict of columns as a list, or None when absent (an error if `required`).
fn column<'py>(
    columns: &Bound<'py, PyDict>,
    name: &str,
    required: bool,
) -> PyResult<Option<Bound<'py, PyList>>> {
    match columns.get_item(name)? {
        None if required => Err(DriveError::new_err(format!(
            "no column {name:?} in the table"
        ))),
        None => Ok(None),
        Some(v) => {
            let list = columns
                .py()
                .get_type_bound::<PyList>()
                .call1((v,))?
                .downcast_into::<PyList>()?;
            Ok(Some(list))
        }
    }
}

fn cell_err(row: usize, name: &str, value: &Bound<'_, PyAny>, what: &str) -> PyErr {
    let repr = value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    DriveError::new_err(format!("row {}: {name} = {repr} is not {what}", row + 1))
}

fn whole(list: &Bound<'_, PyList>, row: usize, name: &str) -> PyResult<u32> {
    let v = list.get_item(row)?;
    if let Ok(i) = v.extract::<u32>() {
        return Ok(i);
    }
    match v.extract::<f64>() {
        Ok(f) if f.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&f) => Ok(f as u32),
        _ => Err(cell_err(
            row,
            name,
            &v,
            "a whole number from 0 to 4294967295",
        )),
    }
}

fn label(list: &Bound<'_, PyList>, row: usize, name: &str) -> PyResult<String> {
    let v = list.get_item(row)?;
    if v.is_instance_of::<PyString>() {
        return v.extract();
    }
    // Integers (a PCI, a PLMN) are taken as their decimal text.
    match v.extract::<i64>() {
        Ok(i) => Ok(i.to_string()),
        Err(_) => match v.extract::<f64>() {
            Ok(f) if f.is_finite() && f.fract() == 0.0 => Ok(format!("{}", f as i64)),
            _ => Err(cell_err(row, name, &v, "a label (text or whole number)")),
        },
    }
}

fn number(list: &Bound<'_, PyList>, row: usize, name: &str) -> PyResult<f64> {
    let v = list.get_item(row)?;
    v.extract::<f64>()
        .map_err(|_| cell_err(row, name, &v, "a number"))
}

/// An optional number: None and NaN are absent.
fn optional(list: Option<&Bound<'_, PyList>>, row: usize, name: &str) -> PyResult<Option<f64>> {
    let Some(list) = list else { return Ok(None) };
    let v = list.get_item(row)?;
    if v.is_none() {
        return Ok(None);
    }
    let f = v
        .extract::<f64>()
        .map_err(|_| cell_err(row, name, &v, "a number"))?;
    Ok(Some(f).filter(|f| !f.is_nan()))
}

/// A drive table from CSV text or a dict of columns.
fn drive_table(py: Python<'_>, table: &Bound<'_, PyAny>) -> PyResult<DriveTable> {
    if let Ok(text) = table.downcast::<PyString>() {
        let text = text.to_str()?.to_owned();
        return py
            .allow_threads(|| DriveTable::read_csv(text.as_bytes()))
            .map_err(drive_err);
    }
    let Ok(columns) = table.downcast::<PyDict>() else {
        return Err(DriveError::new_err(
            "the drive table must be CSV text or a dict of columns",
        ));
    };
    let time = column(columns, "time_s", true)?.expect("required");
    let operator = column(columns, "operator", true)?.expect("required");
    let earfcn = column(columns, "earfcn", true)?.expect("required");
    let cell_id = column(columns, "cell_id", true)?.expect("required");
    let rsrp = column(columns, "rsrp_dbm", true)?.expect("required");
    let x = column(columns, "x_m", false)?;
    let y = column(columns, "y_m", false)?;
    let speed = column(columns, "speed_mps", false)?;
    let n = time.len();
    for (name, list) in [
        ("operator", Some(&operator)),
        ("earfcn", Some(&earfcn)),
        ("cell_id", Some(&cell_id)),
        ("rsrp_dbm", Some(&rsrp)),
        ("x_m", x.as_ref()),
        ("y_m", y.as_ref()),
        ("speed_mps", speed.as_ref()),
    ] {
        if let Some(list) = list.filter(|l| l.len() != n) {
            return Err(DriveError::new_err(format!(
                "column {name:?} has {} values, time_s has {n}",
                list.len()
            )));
        }
    }
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        rows.push(CellSample {
            time_s: whole(&time, i, "time_s")?,
            operator: label(&operator, i, "operator")?,
            earfcn: whole(&earfcn, i, "earfcn")?,
            cell_id: label(&cell_id, i, "cell_id")?,
            rsrp_dbm: number(&rsrp, i, "rsrp_dbm")?,
            x_m: optional(x.as_ref(), i, "x_m")?,
            y_m: optional(y.as_ref(), i, "y_m")?,
            speed_mps: optional(speed.as_ref(), i, "speed_mps")?,
        });
    }
    DriveTable::new(rows).map_err(drive_err)
}

fn summary_dict<'py>(py: Python<'py>, s: &Summary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    for (k, v) in [
        ("mean", s.mean),
        ("median", s.median),
        ("p20", s.p20),
        ("p10", s.p10),
        ("p5", s.p5),
        ("p1", s.p1),
        ("p0.1", s.p0_1),
    ] {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// Estimates a drive table (CSV text or a dict of columns `time_s`, `operator`, `earfcn`,
/// `cell_id`, `rsrp_dbm` and optionally `x_m`, `y_m`, `speed_mps`) with the estimation
/// parameters `params_json` (JSON of `{"capacity": {...}, "availability": {...}}`, every key
/// optional; None: the study's). Returns the (second, channel) rows as columns, the per-second
/// counts and levels as columns, and the Table 2/3 statistics.
#[pyfunction]
#[pyo3(signature = (table, params_json=None))]
#[allow(clippy::type_complexity)]
pub fn drive_estimate<'py>(
    py: Python<'py>,
    table: &Bound<'py, PyAny>,
    params_json: Option<&str>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let params: EstimationParams = match params_json {
        None => EstimationParams::default(),
        Some(text) => serde_json::from_str(text)
            .map_err(|e| DriveError::new_err(format!("estimation parameters: {e}")))?,
    };
    let table = drive_table(py, table)?;
    let (estimate, stats) = py
        .allow_threads(|| {
            radio::estimate(&table, &params).map(|e| {
                let s = e.stats();
                (e, s)
            })
        })
        .map_err(drive_err)?;

    estimation_out(py, &estimate, &stats)
}

/// The (second, channel) rows, the per-second counts and levels, and the statistics of an
/// estimation, as `drive_estimate` and `drive_aggregate` return them.
#[allow(clippy::type_complexity)]
fn estimation_out<'py>(
    py: Python<'py>,
    estimate: &CapacityTable,
    stats: &AggregationStats,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let rows = PyDict::new_bound(py);
    let r = &estimate.rows;
    let ch = &estimate.channels;
    rows.set_item("time_s", PyList::new_bound(py, r.iter().map(|r| r.time_s)))?;
    rows.set_item(
        "channel",
        PyList::new_bound(py, r.iter().map(|r| ch[r.channel].label())),
    )?;
    rows.set_item(
        "operator",
        PyList::new_bound(py, r.iter().map(|r| ch[r.channel].operator.as_str())),
    )?;
    rows.set_item(
        "earfcn",
        PyList::new_bound(py, r.iter().map(|r| ch[r.channel].earfcn)),
    )?;
    rows.set_item(
        "cell_id",
        PyList::new_bound(py, r.iter().map(|r| r.cell_id.as_str())),
    )?;
    rows.set_item(
        "n_visible",
        PyList::new_bound(py, r.iter().map(|r| r.n_visible)),
    )?;
    rows.set_item(
        "rsrp_dbm",
        PyList::new_bound(py, r.iter().map(|r| r.rsrp_dbm)),
    )?;
    rows.set_item(
        "sinr_db",
        PyList::new_bound(py, r.iter().map(|r| r.sinr_db)),
    )?;
    rows.set_item(
        "capacity_mbps",
        PyList::new_bound(py, r.iter().map(|r| r.capacity_mbps)),
    )?;

    let seconds = PyDict::new_bound(py);
    let s = &estimate.seconds;
    seconds.set_item("time_s", PyList::new_bound(py, s.iter().map(|s| s.time_s)))?;
    seconds.set_item(
        "visible",
        PyList::new_bound(py, s.iter().map(|s| s.visible)),
    )?;
    seconds.set_item(
        "available",
        PyList::new_bound(py, s.iter().map(|s| s.available)),
    )?;
    let per_operator = PyDict::new_bound(py);
    for (i, op) in estimate.operators.iter().enumerate() {
        per_operator.set_item(
            op,
            PyList::new_bound(py, s.iter().map(|s| s.levels.operator_sp_mbps[i])),
        )?;
    }
    seconds.set_item("operator_sp_mbps", per_operator)?;
    seconds.set_item(
        "best_single_path_mbps",
        PyList::new_bound(py, s.iter().map(|s| s.levels.best_single_path_mbps)),
    )?;
    seconds.set_item(
        "multipath_mbps",
        PyList::new_bound(py, s.iter().map(|s| s.levels.multipath_mbps)),
    )?;

    let out = PyDict::new_bound(py);
    out.set_item("seconds", stats.seconds)?;
    out.set_item("mean_visible", stats.mean_visible)?;
    out.set_item("mean_available", stats.mean_available)?;
    out.set_item(
        "available_share",
        PyList::new_bound(py, &stats.available_share),
    )?;
    out.set_item(
        "available_cdf",
        PyList::new_bound(py, stats.available_cdf()),
    )?;
    let operators = PyDict::new_bound(py);
    for (op, summary) in &stats.operators {
        operators.set_item(op, summary_dict(py, summary)?)?;
    }
    out.set_item("operators", operators)?;
    out.set_item(
        "best_single_path",
        summary_dict(py, &stats.best_single_path)?,
    )?;
    out.set_item("multipath", summary_dict(py, &stats.multipath)?)?;
    out.set_item(
        "channels",
        PyList::new_bound(py, ch.iter().map(|c| c.label())),
    )?;
    Ok((rows, seconds, out))
}

/// Levels and statistics of a table of capacities (no RSRP): `capacities[k]` is channel k's
/// capacity in Mbit/s, one value per second from `start_s`, on the carrier (`operators[k]`,
/// `earfcns[k]`); at most one channel per carrier. A channel is available where its capacity
/// is above 0 and at least `min_capacity_mbps`. Returns what `drive_estimate` returns (the
/// rows' `rsrp_dbm` and `sinr_db` are None, their `cell_id` the channel's label).
#[pyfunction]
#[pyo3(signature = (start_s, operators, earfcns, capacities, min_capacity_mbps=0.0))]
#[allow(clippy::type_complexity)]
pub fn drive_aggregate<'py>(
    py: Python<'py>,
    start_s: u32,
    operators: Vec<String>,
    earfcns: Vec<u32>,
    capacities: Vec<Vec<f64>>,
    min_capacity_mbps: f64,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    if operators.len() != capacities.len() || earfcns.len() != capacities.len() {
        return Err(DriveError::new_err(format!(
            "{} channels of capacities, {} operators and {} EARFCNs: one of each per channel",
            capacities.len(),
            operators.len(),
            earfcns.len()
        )));
    }
    let carriers: Vec<Carrier> = operators
        .into_iter()
        .zip(earfcns)
        .map(|(operator, earfcn)| Carrier { operator, earfcn })
        .collect();
    let (estimate, stats) = py
        .allow_threads(|| {
            let series = carriers
                .iter()
                .zip(capacities)
                .map(|(c, caps)| ChannelSeries::new(&c.label(), caps))
                .collect();
            let table = ChannelTable::new(start_s, series)?;
            radio::aggregate_channels(&table, &carriers, min_capacity_mbps).map(|e| {
                let s = e.stats();
                (e, s)
            })
        })
        .map_err(drive_err)?;
    estimation_out(py, &estimate, &stats)
}

/// Adds the drive functions and `DriveError` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DriveError", m.py().get_type_bound::<DriveError>())?;
    m.add_function(wrap_pyfunction!(drive_generate, m)?)?;
    m.add_function(wrap_pyfunction!(drive_presets, m)?)?;
    m.add_function(wrap_pyfunction!(drive_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(drive_aggregate, m)?)?;
    Ok(())
}
