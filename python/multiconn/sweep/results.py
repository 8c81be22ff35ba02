"""The results of an output directory as one table: one row per run and flow.

Columns, in order: experiment, parameter, value (the experiment's main axis and its value),
one column per axis, point, rep, seed, run_key, status ("ok" or "failed"), flow, transport,
cc, profile, app, the flow metrics (goodput_mbps, bytes_delivered, completion_s and those the
sweep adds), the per-run fairness of the covered flows (jain_fairness, normalised_jain,
min_normalised), error. A failed run has one row, with its error and no
flow. Rows are ordered by experiment, point, repetition and flow, whatever order the runs
finished in, so equal stores give byte-identical exports.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SweepError
from ..frame import write_csv, write_parquet
from .spec import DEFAULT_FLOW_METRICS, RUN_METRICS
from .store import Store

if TYPE_CHECKING:
    import pandas as pd

EXPORT_FORMATS = ("csv", "parquet", "json")
FLOW_FIELDS = ("transport", "cc", "profile", "app")


def _lookup(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _column(values: list[Any]) -> pd.Series:
    """Numbers stay numbers when every present value is one; anything else becomes text."""
    import pandas as pd

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        if all(isinstance(v, int) for v in present):
            return pd.Series(values, dtype="Int64")
        return pd.Series([math.nan if v is None else v for v in values], dtype="float64")
    if present and all(isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="boolean")
    return pd.Series([None if v is None else str(v) for v in values], dtype=object)


def load(folder: str | os.PathLike[str], experiment: str | None = None,
         timing: bool = False) -> pd.DataFrame:
    """The results of `folder` as a DataFrame (see the module header for the columns).

    `experiment` keeps one experiment; `timing=True` adds each run's `wall_time_s` (which
    differs between runs of the same scenario and seed, unlike every other column).
    """
    import pandas as pd

    with Store(folder, create=False) as store:
        specs = {s.name: s for s in store.experiments()}
        if experiment is not None and experiment not in specs:
            raise SweepError(f"no experiment {experiment!r} in '{folder}' (experiments: "
                             f"{', '.join(specs) or 'none'})")
        records = store.records(experiment)
    axis_names: list[str] = []
    metrics: list[str] = list(DEFAULT_FLOW_METRICS)
    for spec in specs.values():
        if experiment is None or spec.name == experiment:
            axis_names.extend(a.name for a in spec.axes if a.name not in axis_names)
            metrics.extend(m for m in spec.metrics if m not in metrics)
    rows: list[dict[str, Any]] = []
    for rec in records:
        spec = specs[rec.experiment]
        base: dict[str, Any] = {
            "experiment": rec.experiment,
            "parameter": spec.parameter,
            "value": rec.values.get(spec.parameter) if spec.parameter else None,
        }
        base.update({name: rec.values.get(name) for name in axis_names})
        base.update(point=rec.point, rep=rec.rep, seed=rec.seed, run_key=rec.run_key,
                    status="ok" if rec.ok else "failed")
        flows = (rec.summary or {}).get("flows", []) if rec.ok else []
        summary = (rec.summary or {}) if rec.ok else {}
        fairness = summary.get("fairness") or {}
        run_metrics = {"jain_fairness": summary.get("jain_fairness"),
                       "normalised_jain": fairness.get("normalised_jain"),
                       "min_normalised": fairness.get("min_normalised")}
        for flow in flows or [None]:
            row = dict(base)
            row["flow"] = flow.get("name") if flow else None
            row.update({f: (flow or {}).get(f) for f in FLOW_FIELDS})
            row.update({m: _lookup(flow, m) if flow else None for m in metrics})
            row.update(run_metrics)
            row["error"] = rec.error
            if timing:
                row["wall_time_s"] = rec.wall_time_s
            rows.append(row)
    columns = ["experiment", "parameter", "value", *axis_names, "point", "rep", "seed",
               "run_key", "status", "flow", *FLOW_FIELDS, *metrics, *RUN_METRICS, "error"]
    if timing:
        columns.append("wall_time_s")
    return pd.DataFrame({c: _column([row[c] for row in rows]) for c in columns})


def _json_value(value: Any) -> Any:
    import pandas as pd

    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _json_value(value.item())
    return value


def export(frame: pd.DataFrame, fmt: str, path: str | os.PathLike[str] | None) -> str | None:
    """Writes the table as csv, parquet or json to `path`; returns the text when path is None
    (csv and json only)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown format {fmt!r} (formats: {', '.join(EXPORT_FORMATS)})")
    if fmt == "parquet":
        if path is None:
            raise ValueError("parquet is binary: give an output file")
        write_parquet(frame, path)
        return None
    if fmt == "csv":
        text = frame.to_csv(index=False, lineterminator="\n")
    else:
        records = [{k: _json_value(v) for k, v in row.items()}
                   for row in frame.to_dict(orient="records")]
        text = "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + \
            ("\n]\n" if records else "]\n")
    if path is None:
        return text
    Path(path).write_text(text, encoding="utf-8", newline="\n")
    return None


def load_messages(folder: str | os.PathLike[str], run_key: str) -> pd.DataFrame:
    """The message table of one run (flows with app = "messages"): one row per message with
    the columns of `RunResult.messages` (flow, source, kind, stream, msg_id, size, sent_s,
    received_s: NaN if it never arrived, path_owd_min_s); the input of `multiconn.messages`."""
    path = Path(folder, "messages", f"{run_key}.parquet")
    if not path.is_file():
        raise FileNotFoundError(f"no message table for run {run_key} in '{folder}' (only runs "
                                "with app = \"messages\" flows have one)")
    import pandas as pd

    return pd.read_parquet(path)


def load_timeseries(folder: str | os.PathLike[str], run_key: str) -> pd.DataFrame:
    """The time series of one run (the sweep must keep time series: [metrics] timeseries)."""
    path = Path(folder, "timeseries", f"{run_key}.parquet")
    if not path.is_file():
        raise FileNotFoundError(f"no time series stored for run {run_key} in '{folder}': "
                                "the sweep did not keep time series when the run was "
                                "recorded (with [metrics] timeseries = true, running the "
                                "sweep again records the missing ones)")
    import pandas as pd

    return pd.read_parquet(path)
