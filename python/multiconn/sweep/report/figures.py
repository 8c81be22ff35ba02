"""The report's figures, drawn with matplotlib and saved as PNG and SVG.

The figures' look (canvas, deterministic PNG and SVG, wrapped titles and legends) is
`multiconn.figstyle`'s, shared with the single-run plots of `multiconn.plot`.

* `line`: mean ± std (error bars) of y per series against x: a numeric axis at its values,
  any other axis at evenly spaced positions in the axis's order, ticked with its labels;
* `bar`: grouped bars of the mean with std error bars, per x label and series, with the
  group's mean of the `annotate` metric written above each group ("JFI 0.99");
* `timeseries`: y over time in repetition `rep` of the selected points, one line per flow
  and/or link direction ("leg1 forward"; the plot's `show`), labelled by the `series` axis
  label too, optionally averaged over a trailing window (`smooth`);
* `ccdf`: P(OWD > x) of one kind of message per series, every repetition's messages pooled,
  on a log y axis with the deadline as a dotted vertical line and optionally the dashed
  "ideal" reference (see `ccdf.py`);
* `heatmap`: the mean of the metric `z` per cell of the axes x and y, the number written in
  each cell, with a colour bar (see `heatmap.py`); one figure per flow unless `flow` is set;
* `throughput-delay`: per series, mean y against the mean and 95th percentile of a delay on
  an inverted axis, Pantheon's plot (see `tputdelay.py`).

Error bars show the plot's `spread`: ± one standard deviation (the default), the 95 %
confidence interval of the mean (Student's t, `stats.py`) or nothing; the figure's caption
says which unless it is the default of a line or bar plot. The y scale and range (`logy`,
`ylim`, rates from zero) are `yrange.py`'s.

References are drawn as black markers labelled with their source (on a time series, at
their x in seconds).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ...figstyle import RC, TITLE_POINTS, legend_below, new_figure, save_figure, title_text

from ..results import load_timeseries
from ..spec import RUN_METRICS, PlotSpec, Reference, SweepSpec
from .aggregate import group_means, spread_column, trailing_mean
from .ccdf import Unavailable, draw_ccdf
from .heatmap import EmptyHeatmap, draw_heatmap
from .tputdelay import DELAY_NAMES, NoDelays, delay_label, draw_throughput_delay, scheme_points
from .yrange import LogScaleUnfit, apply_y_range, check_log_values
from .selection import (SERIES_JOIN, Panel, label_axes, legend_title, number_text, select,
                        series_labels, x_labels, x_matches)

REFERENCE_MARKERS = ("x", "+", "D", "^", "s", "v")
ANNOTATION_COLOR = "tab:purple"
ANNOTATION_HEADROOM = 0.12
"""The share of the y range added above the bars for the annotations."""
METRIC_LABELS = {
    "goodput_mbps": "goodput (Mbit/s)",
    "throughput_mbps": "throughput (Mbit/s)",
    "bytes_delivered": "bytes delivered (B)",
    "completion_s": "completion time (s)",
    "jain_fairness": "Jain's fairness index",
    "normalised_jain": "Jain's index of goodput / fair share",
    "min_normalised": "worst goodput / fair share",
    "queue_packets": "queue (packets)",
    "queue_bytes": "queue (B)",
    "cwnd_bytes": "congestion window (B)",
    "bytes_in_flight": "bytes in flight (B)",
    "srtt_ms": "smoothed RTT (ms)",
    "steady_goodput_mbps": "steady-state goodput (Mbit/s)",
    "fair_share_mbps": "max-min fair share (Mbit/s)",
    "bandwidth_efficiency": "bandwidth efficiency",
    "normalised": "goodput / fair share",
}
SPREAD_NOTES = {"std": "error bars: ± 1 standard deviation over repetitions",
                "ci95": "error bars: 95 % confidence interval of the mean (Student's t)",
                "none": ""}


class NothingToDraw(Exception):
    """The selected runs hold no values to draw (the message says why)."""


@dataclass(frozen=True)
class FigureFile:
    """A drawn panel (or why there is nothing to draw)."""

    stem: str
    title: str
    caption: str
    png: str | None
    """Path relative to the report folder; None when `note` says why there is no figure."""
    svg: str | None
    note: str | None = None


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name, name)


def axis_label(spec: SweepSpec, name: str) -> str:
    axis = spec.axis(name)
    return f"{axis.name} ({axis.unit})" if axis.unit else axis.name


def x_label(spec: SweepSpec, plot: PlotSpec) -> str:
    if plot.xlabel:
        return plot.xlabel
    if plot.kind == "timeseries":
        return "time (s)"
    if plot.kind == "ccdf":
        return "one-way delay (ms)"
    if plot.kind == "throughput-delay":
        return delay_label(plot)
    if plot.x == "flow":
        return "flow"
    return axis_label(spec, plot.x or "")


def plot_title(plot: PlotSpec) -> str:
    if plot.title:
        return plot.title
    if plot.kind == "ccdf":
        return f"One-way delay CCDF of {plot.message_kind} messages"
    if plot.kind == "heatmap":
        return f"{metric_label(plot.z or '')} over {plot.x} and {plot.y}"
    if plot.kind == "throughput-delay":
        return f"{metric_label(plot.y)} against {DELAY_NAMES[plot.delay]}"
    against = "time" if plot.kind == "timeseries" else plot.x
    return f"{metric_label(plot.y)} against {against}"


def y_label(plot: PlotSpec, spec: SweepSpec | None = None) -> str:
    if plot.ylabel:
        return plot.ylabel
    if plot.kind == "ccdf":
        return "P(OWD > x)"
    if plot.kind == "heatmap":
        return axis_label(spec, plot.y) if spec is not None else plot.y
    label = metric_label(plot.y)
    return f"{label}, {plot.smooth:g} s mean" if plot.smooth else label


def _new_figure() -> tuple[Figure, Axes]:
    fig, axes = new_figure()
    return fig, axes[0]


def _legend(fig: Figure, ax: Axes, title: str | None, plot_y: str) -> None:
    """The legend below the axes, where it cannot hide data; titled by the series axis."""
    handles, labels = ax.get_legend_handles_labels()
    if labels == [plot_y]:
        return  # one unnamed series: nothing to tell apart
    legend_below(fig, handles, labels, title)


def _reference_named(ref: Reference) -> list[str]:
    """The series label parts a reference names (its series, its flow)."""
    return [part for part in (ref.series, ref.flow) if part is not None]


def _reference_label(ref: Reference) -> str:
    return SERIES_JOIN.join([ref.source, *_reference_named(ref)])


def _plot_reference(ax: Axes, ref: Reference, marker: str, xs: list[float],
                    ys: list[float]) -> None:
    ax.plot(xs, ys, linestyle="none", marker=marker, color="black", markersize=8,
            markeredgewidth=1.5, label=_reference_label(ref))


def _draw_line(ax: Axes, data: pd.DataFrame, spec: SweepSpec, plot: PlotSpec) -> None:
    assert plot.x is not None
    positions = _line_positions(spec, plot)
    data = data.assign(_x=data[plot.x].map(positions).astype("float64"))
    column = spread_column(plot)
    for label, group in data.groupby("_series", sort=False):
        group = group.sort_values("_x")
        ax.errorbar(group["_x"], group["mean"],
                    yerr=None if column is None else group[column], marker="o",
                    markersize=4, capsize=4, label=str(label))
    for marker, ref in zip(_markers(), plot.references):
        xs = [_reference_position(spec, plot.x, positions, x) for x in ref.x]
        _plot_reference(ax, ref, marker, xs, list(ref.y))
    if not spec.axis(plot.x).numeric:
        ax.set_xticks(list(positions.values()), list(positions))
    elif plot.logx:
        ax.set_xscale("log")
        # Ticks at the swept and referenced values, as plain numbers (0.1, not 10^-1).
        ticks = sorted({float(v.value) for v in spec.axis(plot.x).values} |
                       {float(x) for ref in plot.references for x in ref.x
                        if isinstance(x, (int, float)) and x > 0})
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())


def _line_positions(spec: SweepSpec, plot: PlotSpec) -> dict[str, float]:
    """Where each x label is drawn: its value on a numeric axis; otherwise 0, 1, 2, ... in the
    axis's order (of the labels `where` keeps)."""
    assert plot.x is not None
    axis = spec.axis(plot.x)
    if axis.numeric:
        return {v.label: float(v.value) for v in axis.values}
    return {label: float(i) for i, label in enumerate(x_labels(spec, plot) or [])}


def _reference_position(spec: SweepSpec, x: str, positions: dict[str, float],
                        ref_x: float | str) -> float:
    """A reference's x on a line plot: a number on a numeric axis, else the position of the
    label it names ("10 Mbit/s", "2:1"); NaN when it names no label."""
    if isinstance(ref_x, (int, float)) and spec.axis(x).numeric:
        return float(ref_x)
    return positions.get(number_text(ref_x), math.nan)


def _draw_bar(ax: Axes, data: pd.DataFrame, spec: SweepSpec, plot: PlotSpec,
              notes: dict[str, float]) -> None:
    assert plot.x is not None
    xs = _bar_groups(spec, plot, data)
    series = list(pd.unique(data["_series"]))
    width = 0.8 / len(series)
    column = spread_column(plot)
    centers: dict[tuple[str, str], float] = {}
    for j, name in enumerate(series):
        own = data[data["_series"] == name].set_index(plot.x)
        positions = np.arange(len(xs)) + (j - (len(series) - 1) / 2) * width
        means = [own["mean"].get(x, np.nan) for x in xs]
        errors = None if column is None else [own[column].get(x, np.nan) for x in xs]
        ax.bar(positions, means, width, yerr=errors, capsize=4, label=name,
               error_kw={"elinewidth": 1})
        centers.update({(x, name): p for x, p in zip(xs, positions)})
    ax.set_xticks(np.arange(len(xs)), [str(x) for x in xs])
    for marker, ref in zip(_markers(), plot.references):
        points = [(_bar_position(spec, plot, ref, ref_x, xs, series, centers), y)
                  for ref_x, y in zip(ref.x, ref.y)]
        points = [(p, y) for p, y in points if p is not None]
        _plot_reference(ax, ref, marker, [p for p, _ in points], [y for _, y in points])
    if plot.annotate is not None:
        _annotate_groups(ax, data, plot, xs, notes)


def _bar_groups(spec: SweepSpec, plot: PlotSpec, data: pd.DataFrame) -> list[str]:
    """The x labels with bars: in the axis's order, or as the flows come when x is "flow"."""
    assert plot.x is not None
    present = list(pd.unique(data[plot.x].astype(str)))
    order = x_labels(spec, plot)
    return present if order is None else [x for x in order if x in present]


def _annotate_groups(ax: Axes, data: pd.DataFrame, plot: PlotSpec, xs: list[str],
                     notes: dict[str, float]) -> None:
    """Writes "<label> <mean>" above the highest error bar of each x group."""
    assert plot.x is not None
    column = spread_column(plot)
    above = data[column].fillna(0.0) if column is not None else 0.0
    tops = (data["mean"] + above).groupby(data[plot.x].astype(str)).max()
    label = plot.annotate_label or plot.annotate
    for i, x in enumerate(xs):
        if x in notes:
            ax.annotate(f"{label} {notes[x]:.2f}", (i, tops[x]), xytext=(0, 4),
                        textcoords="offset points", ha="center", va="bottom",
                        fontsize="small", color=ANNOTATION_COLOR)
    # Texts do not widen the y range: make room for them above the tallest group.
    low, high = ax.get_ylim()
    ax.set_ylim(low, high + ANNOTATION_HEADROOM * (high - low))


def _bar_position(spec: SweepSpec, plot: PlotSpec, ref: Reference, ref_x: float | str,
                  xs: list[str], series: list[str],
                  centers: dict[tuple[str, str], float]) -> float | None:
    """Where a reference value goes: on its series' bar, else at the middle of the group."""
    assert plot.x is not None
    index = next((i for i, x in enumerate(xs) if x_matches(spec, plot.x, ref_x, x)), None)
    if index is None:
        return None
    named = set(_reference_named(ref))
    own = [s for s in series if named and named <= set(s.split(SERIES_JOIN))]
    return centers[(xs[index], own[0])] if len(own) == 1 else float(index)


def _markers() -> Iterator[str]:
    while True:
        yield from REFERENCE_MARKERS


def _draw_timeseries(ax: Axes, runs: pd.DataFrame, spec: SweepSpec, plot: PlotSpec,
                     folder: Path) -> None:
    lines = [line for _, run in runs.iterrows() for line in _run_lines(run, spec, plot, folder)]
    if not lines:
        raise NothingToDraw(f"the selected runs recorded no {plot.y}")
    # A prefix (the run's series labels) that has one line is that line's whole label: each
    # variant running its own flow reads "MP-QUIC", not "MP-QUIC · mpq".
    owns: dict[str | None, set[str]] = {}
    for prefix, own, _, _ in lines:
        owns.setdefault(prefix, set()).add(own)
    for prefix, own, times, values in lines:
        label = own if prefix is None else (prefix if len(owns[prefix]) == 1
                                            else f"{prefix}{SERIES_JOIN}{own}")
        ax.plot(times, values, linewidth=1.2, label=label)
    for marker, ref in zip(_markers(), plot.references):
        xs = [float(x) if isinstance(x, (int, float)) else math.nan for x in ref.x]
        _plot_reference(ax, ref, marker, xs, list(ref.y))


def _run_lines(run: pd.Series, spec: SweepSpec, plot: PlotSpec,
               folder: Path) -> list[tuple[str | None, str, np.ndarray, np.ndarray]]:
    """One run's lines: (prefix from its axis labels, flow or "link direction", times, y)."""
    series = load_timeseries(folder, run["run_key"])
    if plot.y not in series.columns:
        raise NothingToDraw(f"the time series have no column {plot.y}")
    series = series[series[plot.y].notna()]
    if plot.show == "both":
        # Flows and links only: path, leg and bearer rows share their flow's name.
        series = series[series["kind"].isin(["flow", "link"])]
    else:
        series = series[series["kind"] == ("flow" if plot.show == "flows" else "link")]
    if plot.flow is not None:
        series = series[(series["kind"] == "flow") & (series["name"] == plot.flow)]
    prefix = SERIES_JOIN.join(str(run[name]) for name in label_axes(spec, plot)) or None
    lines = []
    for (kind, name, direction), line in series.groupby(
            ["kind", "name", "direction"], sort=False, observed=True):
        own = f"{name} {direction}" if kind == "link" and direction else str(name)
        line = line.sort_values("time_s")
        times = line["time_s"].to_numpy("float64")
        values = line[plot.y].to_numpy("float64")
        if plot.smooth:
            values = trailing_mean(times, values, plot.smooth)
        if plot.span is not None:
            inside = (times >= plot.span[0]) & (times < plot.span[1])
            times, values = times[inside], values[inside]
        lines.append((prefix, own, times, values))
    return lines


def draw_plot(spec: SweepSpec, plot: PlotSpec, panel_list: list[Panel], summary: pd.DataFrame,
              rows: pd.DataFrame, folder: Path, out: Path) -> list[FigureFile]:
    """Draws each panel of `plot` into `out/figures/`; time series are read from `folder`.
    A heatmap of a flow metric without `flow` is drawn once per flow of the panel."""
    drawn = []
    for panel in panel_list:
        for flow in _heatmap_flows(plot, panel, rows):
            own = plot if flow is None else replace(plot, flow=flow)
            suffix = "" if flow is None else "-" + re.sub(r"[^A-Za-z0-9_.]+", "_", flow)
            caption = ", ".join(c for c in (panel.caption, f"flow = {flow}" if flow else "")
                                if c)
            drawn.append(_render(spec, own, panel, f"{spec.name}-{plot.name}{panel.suffix}"
                                 f"{suffix}", caption, summary, rows, folder, out))
    return drawn


def _heatmap_flows(plot: PlotSpec, panel: Panel, rows: pd.DataFrame) -> list[str | None]:
    """The flows a heatmap panel is split into ([None]: one figure, no split)."""
    if plot.kind != "heatmap" or plot.flow is not None or plot.z in RUN_METRICS:
        return [None]
    flows = [str(f) for f in pd.unique(select(rows, panel)["flow"])]
    return flows if len(flows) > 1 else [None]


def _render(spec: SweepSpec, plot: PlotSpec, panel: Panel, stem: str, caption: str,
            summary: pd.DataFrame, rows: pd.DataFrame, folder: Path, out: Path) -> FigureFile:
    title = plot_title(plot)
    with matplotlib.rc_context(RC):
        try:
            fig = panel_figure(spec, plot, panel, summary, rows, folder, caption)
        except (NothingToDraw, Unavailable, EmptyHeatmap, NoDelays, LogScaleUnfit,
                FileNotFoundError) as exc:
            return FigureFile(stem, title, caption, None, None, str(exc))
        save_figure(fig, out / "figures", stem)
    return FigureFile(stem, title, caption, f"figures/{stem}.png", f"figures/{stem}.svg")


def panel_figure(spec: SweepSpec, plot: PlotSpec, panel: Panel, summary: pd.DataFrame,
                 rows: pd.DataFrame, folder: Path, caption: str | None = None) -> Figure:
    """One panel of `plot`, drawn from the summary (line, bar), its flow rows (heatmap) or
    the runs' time series and message tables (timeseries, ccdf, throughput-delay).

    Raises NothingToDraw, Unavailable (a ccdf without messages), EmptyHeatmap, NoDelays (a
    throughput-delay plot without delays), LogScaleUnfit (logy with values not above zero)
    or FileNotFoundError (a missing time series or message table) when the panel has
    nothing to show.
    """
    data = _panel_data(spec, plot, panel, summary, rows)
    if data.empty:
        what = "" if plot.kind == "ccdf" else f" has {plot.z or plot.y}"
        raise NothingToDraw(f"no successful run{what} here")
    caption = panel.caption if caption is None else caption
    if plot.kind in ("line", "bar"):
        check_log_values(plot, data["mean"])
    points = None
    if plot.kind == "throughput-delay":
        points = scheme_points(data, plot, folder)
        check_log_values(plot, [p.throughput for p in points])
    fig, ax = _new_figure()
    if plot.kind == "line":
        _draw_line(ax, data, spec, plot)
    elif plot.kind == "bar":
        _draw_bar(ax, data, spec, plot, _annotations(plot, panel, rows))
    elif plot.kind == "ccdf":
        draw_ccdf(ax, data, spec, plot, folder)
    elif plot.kind == "heatmap":
        draw_heatmap(fig, ax, data, spec, plot, metric_label(plot.z or ""))
    elif points is not None:
        draw_throughput_delay(ax, points, plot)
    else:
        _draw_timeseries(ax, data, spec, plot, folder)
    note = SPREAD_NOTES[plot.spread] if plot.kind == "throughput-delay" or (
        plot.kind in ("line", "bar") and plot.spread != "std") else ""
    caption = ", ".join(c for c in (caption, note) if c)
    title = plot_title(plot)
    ax.set_title(title_text(title, caption, fig.get_figwidth()), fontsize=TITLE_POINTS)
    ax.set_xlabel(x_label(spec, plot))
    ax.set_ylabel(y_label(plot, spec))
    if plot.kind != "heatmap":
        apply_y_range(ax, plot, plot.y)
    _legend(fig, ax, legend_title(spec, plot), plot.y)
    return fig


def _panel_data(spec: SweepSpec, plot: PlotSpec, panel: Panel, summary: pd.DataFrame,
                rows: pd.DataFrame) -> pd.DataFrame:
    """A panel's runs (time series) or its summary rows of y with their series labels."""
    if plot.kind == "timeseries":
        runs = select(rows, panel)
        return runs[runs["rep"] == plot.rep].drop_duplicates("run_key")
    if plot.kind in ("ccdf", "throughput-delay"):  # every repetition's flow rows per series
        data = select(rows, panel, plot.flow)
        return data.assign(_series=series_labels(data, spec, plot)) if len(data) else data
    if plot.kind == "heatmap":  # every repetition's flow rows, averaged per cell
        return select(rows, panel, plot.flow)
    data = select(summary[summary["metric"] == plot.y], panel, plot.flow)
    data = data[data["n"] > 0]
    if data.empty:
        return data
    if plot.y in RUN_METRICS and plot.flow is None and plot.x != "flow":
        # A per-run metric is the same on every flow's row: one series for the run's flows,
        # not one identical line per flow.
        data = data[data["flow"] == data["flow"].iloc[0]].assign(flow="all flows")
    return data.assign(_series=series_labels(data, spec, plot))


def _annotations(plot: PlotSpec, panel: Panel, rows: pd.DataFrame) -> dict[str, float]:
    """The `annotate` metric's mean per x label over the panel's rows (of `flow`, if set)."""
    if plot.annotate is None or plot.x is None:
        return {}
    return group_means(select(rows, panel, plot.flow), plot.x, plot.annotate)
