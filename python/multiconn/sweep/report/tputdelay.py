"""The `throughput-delay` plot: Pantheon's throughput against delay, one point per scheme.

A scheme is a series label (the `series` axis, or the flow). For each run and flow of the
panel, the run gives its throughput (the plot's `y`, goodput by default) and two delays, the
mean and the 95th percentile (linear interpolation) of one of:

* `delay = "rtt"` (default): the sender's smoothed RTT in each time bin (`srtt_ms` of the
  flow's rows of the time series, from its first sample to the last bin in which the flow
  delivered data, so a finished flow's last value is not repeated to the end of the run);
* `"queueing"`: that RTT minus its smallest value in the run: the delay the queues added;
* `"owd"`: the one-way delay of each message the flow's receiver got (app = "messages"
  flows; lost messages are left out).

The simulator has no per-packet one-way delay for bulk flows, so the first two stand in for
Pantheon's per-packet one-way delay. Each scheme's point is the mean over repetitions of the
runs' values (a run without a delay sample, such as a TCP flow whose handshake never
completed, counts for the throughput only): a filled marker at the 95th percentile, a hollow one at the mean, joined by a
dotted line, with error bars of the plot's `spread` (over repetitions) on both axes. The
delay axis is inverted as in Pantheon, so "better" (more throughput, less delay) is towards
the upper right.

A scheme whose point is identical to an earlier one's (the same throughput and delays, to 9
significant digits) would hide behind it: it is drawn with a cross on the earlier markers
(a different cross for each further one) and its legend entry says "identical to <scheme>".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ..results import load_messages, load_timeseries
from ..spec import PlotSpec
from .stats import ci_half_width

DELAY_NAMES = {"rtt": "smoothed RTT", "queueing": "queueing delay", "owd": "one-way delay"}
DELAY_AXIS = {"rtt": "smoothed RTT (ms)", "queueing": "queueing delay: RTT − least RTT (ms)",
              "owd": "one-way delay of messages (ms)"}
PERCENTILE = 95.0


class NoDelays(Exception):
    """The selected runs have no delay of the plot's kind (the message says why)."""


@dataclass(frozen=True)
class SchemePoint:
    """One scheme's means over repetitions, each with its spread (NaN: none)."""

    label: str
    throughput: float
    throughput_spread: float
    delay_mean: float
    delay_mean_spread: float
    delay_p95: float
    delay_p95_spread: float
    runs: int


def delay_label(plot: PlotSpec) -> str:
    return f"{DELAY_AXIS[plot.delay]}: ● 95th percentile, ○ mean"


def run_delays(rows: pd.DataFrame, plot: PlotSpec, folder: Path) -> pd.DataFrame:
    """`rows` (flow rows) with the columns `delay_mean_ms` and `delay_p95_ms` (NaN when the
    run's flow has no delay samples)."""
    tables: dict[str, pd.DataFrame] = {}
    means, p95s = [], []
    for key, flow in zip(rows["run_key"].astype(str), rows["flow"].astype(str)):
        if key not in tables:
            tables[key] = (load_messages(folder, key) if plot.delay == "owd"
                           else load_timeseries(folder, key))
        samples = (_owd_samples(tables[key], flow) if plot.delay == "owd"
                   else _rtt_samples(tables[key], flow, plot.delay == "queueing"))
        means.append(float(np.mean(samples)) if samples.size else math.nan)
        p95s.append(float(np.percentile(samples, PERCENTILE)) if samples.size else math.nan)
    return rows.assign(delay_mean_ms=means, delay_p95_ms=p95s)


def _rtt_samples(series: pd.DataFrame, flow: str, above_minimum: bool) -> np.ndarray:
    own = series[(series["kind"] == "flow") & (series["name"].astype(str) == flow)]
    own = own.sort_values("time_s")
    delivering = np.flatnonzero(own["bytes_delivered"].to_numpy() > 0)
    if delivering.size:
        own = own.iloc[: delivering[-1] + 1]
    srtt = own["srtt_ms"].to_numpy("float64")
    srtt = srtt[np.isfinite(srtt) & (srtt > 0)]
    return srtt - srtt.min() if above_minimum and srtt.size else srtt


def _owd_samples(messages: pd.DataFrame, flow: str) -> np.ndarray:
    own = messages[(messages["flow"].astype(str) == flow) & messages["received_s"].notna()]
    return ((own["received_s"] - own["sent_s"]) * 1e3).to_numpy("float64")


def spread(values: np.ndarray, kind: str) -> float:
    """The spread of per-run values: std (ddof=1), the 95 % CI half-width, or NaN."""
    values = values[np.isfinite(values)]
    if kind == "none" or values.size < 2:
        return math.nan
    std = float(np.std(values, ddof=1))
    return std if kind == "std" else ci_half_width(std, int(values.size))


def scheme_points(rows: pd.DataFrame, plot: PlotSpec, folder: Path) -> list[SchemePoint]:
    """Each series' point (rows: flow rows with a `_series` label), in order of appearance."""
    rows = run_delays(rows, plot, folder)
    points = []
    for label, own in rows.groupby("_series", sort=False):
        throughput = pd.to_numeric(own[plot.y], errors="coerce").to_numpy("float64")
        mean, p95 = own["delay_mean_ms"].to_numpy(), own["delay_p95_ms"].to_numpy()
        if not np.isfinite(mean).any() or not np.isfinite(throughput).any():
            continue
        points.append(SchemePoint(
            str(label), float(np.nanmean(throughput)), spread(throughput, plot.spread),
            float(np.nanmean(mean)), spread(mean, plot.spread),
            float(np.nanmean(p95)), spread(p95, plot.spread), len(own)))
    if not points:
        raise NoDelays(_no_delay_reason(plot))
    return points


def _no_delay_reason(plot: PlotSpec) -> str:
    if plot.delay == "owd":
        return "no selected flow received messages (delay = \"owd\" needs app = \"messages\")"
    return "no selected flow has RTT samples (UDP flows have none; delay = \"owd\" suits " \
           "message flows)"


IDENTICAL_MARKERS = ("x", "+", "1", "2", "3", "4")
"""The markers of a scheme identical to an earlier one, drawn on top of that one's."""


def identical_to(points: list[SchemePoint]) -> dict[str, str]:
    """Each scheme whose point equals an earlier scheme's (throughput, mean and 95th
    percentile delay, to 9 significant digits), mapped to the first such scheme."""
    def key(p: SchemePoint) -> tuple[str, ...]:
        return tuple(f"{v:.9g}" for v in (p.throughput, p.delay_mean, p.delay_p95))

    first: dict[tuple[str, ...], str] = {}
    found = {}
    for p in points:
        if key(p) in first:
            found[p.label] = first[key(p)]
        else:
            first[key(p)] = p.label
    return found


def draw_throughput_delay(ax: Axes, points: list[SchemePoint], plot: PlotSpec) -> None:
    """Draws each scheme's two markers on `ax`, then inverts the delay axis. A scheme
    identical to an earlier one gets a cross on its markers and says so in the legend."""
    def err(value: float) -> float | None:
        return None if math.isnan(value) else value

    same = identical_to(points)
    repeats: dict[str, int] = {}
    for i, p in enumerate(points):
        color = f"C{i % 10}"
        label = p.label
        marker, size = "o", 7
        if p.label in same:
            twin = same[p.label]
            marker = IDENTICAL_MARKERS[repeats.get(twin, 0) % len(IDENTICAL_MARKERS)]
            repeats[twin] = repeats.get(twin, 0) + 1
            size, label = 11, f"{p.label} (identical to {twin})"
        ax.plot([p.delay_mean, p.delay_p95], [p.throughput] * 2, linestyle=":",
                linewidth=1.0, color=color)
        ax.errorbar(p.delay_p95, p.throughput, xerr=err(p.delay_p95_spread),
                    yerr=err(p.throughput_spread), fmt=marker, markersize=size, capsize=3,
                    color=color, label=label)
        hollow = {"markerfacecolor": "white"} if marker == "o" else {}
        ax.errorbar(p.delay_mean, p.throughput, xerr=err(p.delay_mean_spread),
                    yerr=err(p.throughput_spread), fmt=marker, markersize=size, capsize=3,
                    color=color, **hollow)
    # What the two markers mean, listed after the schemes in the legend.
    ax.errorbar([], [], fmt="o", color="0.4", label="95th percentile")
    ax.errorbar([], [], fmt="o", color="0.4", markerfacecolor="white", label="mean")
    if plot.logx:
        ax.set_xscale("log")
    ax.invert_xaxis()
