"""Statistics over repetitions: mean, sample standard deviation and count per point and flow.

Input is the `results.load()` table of one experiment. Only successful runs count. The
output of `summarize` is long: one row per (point, flow, metric) with the point's axis labels,
`mean`, `std` (ddof=1: NaN, not 0, for fewer than two values), `n` (the values present: a
metric a run did not report, such as the completion time of a flow that never finished, is not
counted) and `ci95`, the half-width of the mean's 95 % confidence interval (Student's t with
n − 1 degrees of freedom, `stats.py`; NaN for fewer than two values). `spread_column` names
the column a plot's error bars show. `group_means` averages a metric over groups of rows (a bar plot's annotations);
`trailing_mean` smooths a time series.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from ..spec import RUN_METRICS, PlotSpec, SweepSpec
from .stats import ci_half_width



def ok_rows(frame: pd.DataFrame, spec: SweepSpec,
            labels: Mapping[int, Mapping[str, str]]) -> pd.DataFrame:
    """The successful flow rows of `spec`'s experiment, axis columns holding value labels."""
    rows = frame[(frame["experiment"] == spec.name) & (frame["status"] == "ok")
                 & frame["flow"].notna()].copy()
    rows["point"] = rows["point"].astype(int)
    for axis in spec.axes:
        rows[axis.name] = [labels[p][axis.name] for p in rows["point"]]
    return rows.reset_index(drop=True)


def numeric_metrics(rows: pd.DataFrame, candidates: Iterable[str]) -> list[str]:
    """The candidate columns that hold numbers (or nothing at all), in order."""
    found = []
    for name in candidates:
        if name not in rows.columns or name in found:
            continue
        column = rows[name]
        if column.notna().any() and (is_bool_dtype(column) or not is_numeric_dtype(column)):
            continue
        found.append(name)
    return found


def summarize(rows: pd.DataFrame, spec: SweepSpec, metrics: Iterable[str]) -> pd.DataFrame:
    """Mean, std and n of each metric per point and flow (see the module header)."""
    axes = [a.name for a in spec.axes]
    metrics = list(metrics)
    columns = ["point", *axes, "flow", "metric", "mean", "std", "n", "ci95"]
    if rows.empty or not metrics:
        return pd.DataFrame(columns=columns)
    values = rows[["point", "flow", *metrics]].copy()
    for name in metrics:
        values[name] = pd.to_numeric(values[name], errors="coerce").astype("float64")
    long = values.melt(id_vars=["point", "flow"], value_vars=metrics, var_name="metric")
    stats = (long.groupby(["point", "flow", "metric"], sort=False)["value"]
             .agg(mean="mean", std="std", n="count").reset_index())
    stats["ci95"] = [ci_half_width(float(std), int(n))
                     for std, n in zip(stats["std"], stats["n"])]
    point_axes = rows.drop_duplicates("point").set_index("point")[axes]
    stats = stats.join(point_axes, on="point")
    order = {name: i for i, name in enumerate(metrics)}
    stats["_order"] = stats["metric"].map(order)
    stats = stats.sort_values(["point", "_order"], kind="stable").drop(columns="_order")
    return stats[columns].reset_index(drop=True)


def spread_column(plot: PlotSpec) -> str | None:
    """The summary column a plot's error bars show (None: no error bars)."""
    return {"std": "std", "ci95": "ci95"}.get(plot.spread)


def group_means(rows: pd.DataFrame, by: str, metric: str) -> dict[str, float]:
    """The mean of `metric` over the rows of each value of column `by` (groups without a
    value are left out). A per-run metric, repeated on each flow's row, counts once per run."""
    if rows.empty:
        return {}
    values = rows[[by, "point", "rep", metric]]
    if metric in RUN_METRICS:
        values = values.drop_duplicates([by, "point", "rep"])
    numbers = pd.to_numeric(values[metric], errors="coerce").astype("float64")
    means = numbers.groupby(values[by].astype(str), sort=False).mean().dropna()
    return {str(label): float(mean) for label, mean in means.items()}


def trailing_mean(times: np.ndarray, values: np.ndarray, window: float) -> np.ndarray:
    """Each sample's mean over the samples in (t - window, t]; `times` ascend. The first
    `window` of a series averages the samples so far."""
    # Bin times are sums of a float bin width: a sample lying a rounding error inside the
    # window's open start still counts as outside it.
    tolerance = window * 1e-9
    first = np.searchsorted(times, times - window + tolerance, side="right")
    last = np.arange(1, len(times) + 1)
    sums = np.concatenate(([0.0], np.cumsum(values, dtype="float64")))
    return (sums[last] - sums[first]) / (last - first)
