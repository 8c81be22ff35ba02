//! The multi-operator study's channel-usage cases (`multiconn_radio::run_case`, reference
//! §4.4) for Python: a per-second channel table in, the case's time line out — path events,
//! per-slot and per-channel series, up windows, MP and SP capacity, handover count.
//!
//! Bad input raises `DriveError` (one line naming the field, e.g. `handover.hysteresis_db` or
//! `channels[2].capacity_mbps`, and what is allowed).

use multiconn_radio::{
    run_case, Cause, ChannelSeries, ChannelTable, DelayModel, HandoverConfig, PathAction,
    RadioError, Timeline,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::drive::DriveError;

fn case_err(e: RadioError) -> PyErr {
    DriveError::new_err(e.to_string())
}

fn action_name(a: PathAction) -> &'static str {
    match a {
        PathAction::Open => "open",
        PathAction::Abandon => "abandon",
    }
}

fn cause_name(c: Cause) -> &'static str {
    match c {
        Cause::Fill => "fill",
        Cause::Loss => "loss",
        Cause::Release => "release",
        Cause::A3 => "a3",
        Cause::CellChange => "cell_change",
    }
}

/// An optional list item of `channels[k]`.
fn optional<'py, T: FromPyObject<'py>>(
    item: &Bound<'py, PyDict>,
    k: usize,
    key: &str,
) -> PyResult<Option<T>> {
    match item.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v.extract().map(Some).map_err(|_| {
            DriveError::new_err(format!(
                "channels[{k}].{key}: expected a list of numbers or None (one per second)"
            ))
        }),
    }
}

fn channel_series(k: usize, item: &Bound<'_, PyAny>) -> PyResult<ChannelSeries> {
    let item = item.downcast::<PyDict>().map_err(|_| {
        DriveError::new_err(format!(
            "channels[{k}]: expected a dict with name and capacity_mbps"
        ))
    })?;
    let name: String = optional(item, k, "name")?.unwrap_or_else(|| format!("ch{k}"));
    let capacity_mbps: Vec<f64> = optional(item, k, "capacity_mbps")?.ok_or_else(|| {
        DriveError::new_err(format!(
            "channels[{k}].capacity_mbps: missing (one capacity in Mbit/s per second)"
        ))
    })?;
    Ok(ChannelSeries {
        name,
        capacity_mbps,
        rsrp_dbm: optional(item, k, "rsrp_dbm")?,
        sinr_db: optional(item, k, "sinr_db")?,
        cell_id: optional(item, k, "cell_id")?,
    })
}

fn timeline_dict<'py>(py: Python<'py>, t: &Timeline) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new_bound(py);
    out.set_item(
        "params",
        serde_json::to_string(&t.params).expect("parameters serialise"),
    )?;
    out.set_item("start_s", t.start_s)?;
    out.set_item("handovers", t.handovers)?;
    let events = PyList::empty_bound(py);
    for e in &t.events {
        let d = PyDict::new_bound(py);
        d.set_item("at_s", e.at_s)?;
        d.set_item("slot", e.slot)?;
        d.set_item("channel", e.channel)?;
        d.set_item("action", action_name(e.action))?;
        d.set_item("cause", cause_name(e.cause))?;
        events.append(d)?;
    }
    out.set_item("events", events)?;
    let slots = PyList::empty_bound(py);
    for s in &t.slots {
        let d = PyDict::new_bound(py);
        d.set_item("channel", PyList::new_bound(py, &s.channel))?;
        d.set_item("rate_mbps", PyList::new_bound(py, &s.rate_mbps))?;
        d.set_item("delay_ms", PyList::new_bound(py, &s.delay_ms))?;
        slots.append(d)?;
    }
    out.set_item("slots", slots)?;
    let channels = PyList::empty_bound(py);
    for c in &t.channels {
        let d = PyDict::new_bound(py);
        d.set_item("rate_mbps", PyList::new_bound(py, &c.rate_mbps))?;
        d.set_item("delay_ms", PyList::new_bound(py, &c.delay_ms))?;
        d.set_item("active", PyList::new_bound(py, &c.active))?;
        d.set_item("up", PyList::new_bound(py, &c.up))?;
        channels.append(d)?;
    }
    out.set_item("channels", channels)?;
    out.set_item(
        "mp_capacity_mbps",
        PyList::new_bound(py, &t.mp_capacity_mbps),
    )?;
    out.set_item(
        "sp_capacity_mbps",
        PyList::new_bound(py, &t.sp_capacity_mbps),
    )?;
    Ok(out)
}

/// Runs a case over a channel table. `channels` is a list of dicts, one per channel, with
/// `name`, `capacity_mbps` (one value per second) and optionally `rsrp_dbm`, `sinr_db` (numbers
/// or None) and `cell_id` (strings or None); `config_json` is a `HandoverConfig`
/// (`{"case": "2", "preset": "study", "hysteresis_db": 3, ...}`) and `delay_json` a
/// `DelayModel` (None: the study's exp2pt curve).
#[pyfunction]
#[pyo3(signature = (channels, config_json, start_s=0, delay_json=None))]
pub fn drive_case<'py>(
    py: Python<'py>,
    channels: &Bound<'py, PyList>,
    config_json: &str,
    start_s: u32,
    delay_json: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let config: HandoverConfig = serde_json::from_str(config_json)
        .map_err(|e| DriveError::new_err(format!("handover: {e}")))?;
    let delay: DelayModel = match delay_json {
        None => DelayModel::default(),
        Some(text) => serde_json::from_str(text)
            .map_err(|e| DriveError::new_err(format!("delay: {e}")))?,
    };
    let series = channels
        .iter()
        .enumerate()
        .map(|(k, item)| channel_series(k, &item))
        .collect::<PyResult<Vec<_>>>()?;
    let table = ChannelTable::new(start_s, series).map_err(case_err)?;
    let params = config.resolve().map_err(case_err)?;
    let timeline = py
        .allow_threads(|| run_case(&table, &params, &delay))
        .map_err(case_err)?;
    timeline_dict(py, &timeline)
}

/// Adds `drive_case` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(drive_case, m)?)?;
    Ok(())
}
