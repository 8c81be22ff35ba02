"""The report's figures, drawn with matplotlib and saved as PNG and SVG.

Figures are `matplotlib.figure.Figure` objects on an Agg canvas (no pyplot, no global
backend). Output is byte-deterministic: SVG text stays text (`svg.fonttype = none`, so it is
searchable), SVG ids use a fixed salt, and neither format records a date or the software.

* `line`: mean ± std (error bars) of y per series against a numeric axis;
* `bar`: grouped bars of the mean with std error bars, per x label and series;
* `timeseries`: y over time in repetition `rep` of the selected points, one line per flow
  and/or link direction (the plot's `show`), labelled by `series` axis label too.

References are drawn as black markers labelled with their source (on a time series, at
their x in seconds).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ..results import load_timeseries
from ..spec import PlotSpec, Reference, SweepSpec
from .selection import SERIES_JOIN, Panel, select, series_labels, x_matches, x_position

FIGURE_SIZE = (6.4, 4.0)
PNG_DPI = 120
RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "multiconn-report",
    "font.family": "DejaVu Sans",
    "axes.grid": True,
    "grid.alpha": 0.3,
}
REFERENCE_MARKERS = ("x", "+", "D", "^", "s", "v")
METRIC_LABELS = {
    "goodput_mbps": "goodput (Mbit/s)",
    "throughput_mbps": "throughput (Mbit/s)",
    "bytes_delivered": "bytes delivered (B)",
    "completion_s": "completion time (s)",
    "jain_fairness": "Jain's fairness index",
    "queue_packets": "queue (packets)",
    "queue_bytes": "queue (B)",
    "cwnd_bytes": "congestion window (B)",
    "bytes_in_flight": "bytes in flight (B)",
    "srtt_ms": "smoothed RTT (ms)",
}


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


def x_label(spec: SweepSpec, plot: PlotSpec) -> str:
    if plot.xlabel:
        return plot.xlabel
    if plot.kind == "timeseries":
        return "time (s)"
    if plot.x == "flow":
        return "flow"
    axis = spec.axis(plot.x or "")
    return f"{axis.name} ({axis.unit})" if axis.unit else axis.name


def plot_title(plot: PlotSpec) -> str:
    if plot.title:
        return plot.title
    against = "time" if plot.kind == "timeseries" else plot.x
    return f"{metric_label(plot.y)} against {against}"


def _save(fig: Figure, folder: Path, stem: str) -> None:
    fig.savefig(folder / f"{stem}.svg", format="svg", metadata={"Date": None})
    fig.savefig(folder / f"{stem}.png", format="png", dpi=PNG_DPI,
                metadata={"Software": None})


def _new_figure() -> tuple[Figure, Axes]:
    fig = Figure(figsize=FIGURE_SIZE, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _legend(fig: Figure, ax: Axes, title: str | None, plot_y: str) -> None:
    """The legend below the axes, where it cannot hide data; titled by the series axis."""
    handles, labels = ax.get_legend_handles_labels()
    if labels == [plot_y]:
        return  # one unnamed series: nothing to tell apart
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 3),
               fontsize="small", title=title, title_fontsize="small", frameon=False)


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
    data = data.assign(_x=[x_position(spec, plot.x, label) for label in data[plot.x]])
    for label, group in data.groupby("_series", sort=False):
        group = group.sort_values("_x")
        ax.errorbar(group["_x"], group["mean"], yerr=group["std"], marker="o",
                    markersize=4, capsize=4, label=str(label))
    for marker, ref in zip(_markers(), plot.references):
        xs = [float(x) if isinstance(x, (int, float)) else _label_position(spec, plot.x, x)
              for x in ref.x]
        _plot_reference(ax, ref, marker, xs, list(ref.y))
    if plot.logx:
        ax.set_xscale("log")
        # Ticks at the swept and referenced values, as plain numbers (0.1, not 10^-1).
        ticks = sorted({float(v.value) for v in spec.axis(plot.x).values} |
                       {float(x) for ref in plot.references for x in ref.x
                        if isinstance(x, (int, float)) and x > 0})
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())


def _label_position(spec: SweepSpec, x: str, label: str) -> float:
    """A reference's x given as a label ("10 Mbit/s"): that value's position, else NaN."""
    return next((float(v.value) for v in spec.axis(x).values if v.label == label), math.nan)


def _draw_bar(ax: Axes, data: pd.DataFrame, spec: SweepSpec, plot: PlotSpec) -> None:
    xs = list(pd.unique(data[plot.x]))
    series = list(pd.unique(data["_series"]))
    width = 0.8 / len(series)
    centers: dict[tuple[str, str], float] = {}
    for j, name in enumerate(series):
        own = data[data["_series"] == name].set_index(plot.x)
        positions = np.arange(len(xs)) + (j - (len(series) - 1) / 2) * width
        means = [own["mean"].get(x, np.nan) for x in xs]
        errors = [own["std"].get(x, np.nan) for x in xs]
        ax.bar(positions, means, width, yerr=errors, capsize=4, label=name,
               error_kw={"elinewidth": 1})
        centers.update({(x, name): p for x, p in zip(xs, positions)})
    ax.set_xticks(np.arange(len(xs)), [str(x) for x in xs])
    for marker, ref in zip(_markers(), plot.references):
        points = [(_bar_position(spec, plot, ref, ref_x, xs, series, centers), y)
                  for ref_x, y in zip(ref.x, ref.y)]
        points = [(p, y) for p, y in points if p is not None]
        _plot_reference(ax, ref, marker, [p for p, _ in points], [y for _, y in points])


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


def _draw_timeseries(ax: Axes, runs: pd.DataFrame, plot: PlotSpec, folder: Path) -> None:
    lines = []
    for _, run in runs.iterrows():
        series = load_timeseries(folder, run["run_key"])
        if plot.y not in series.columns:
            raise NothingToDraw(f"the time series have no column {plot.y}")
        series = series[series[plot.y].notna()]
        if plot.show != "both":
            series = series[series["kind"] == ("flow" if plot.show == "flows" else "link")]
        if plot.flow is not None:
            series = series[(series["kind"] == "flow") & (series["name"] == plot.flow)]
        prefix = str(run[plot.series]) if plot.series not in (None, "flow") else None
        for (kind, name, direction), line in series.groupby(
                ["kind", "name", "direction"], sort=False, observed=True):
            own = f"{name} ({direction})" if kind == "link" and direction else str(name)
            lines.append((prefix, own, line))
    names = {own for _, own, _ in lines}
    for prefix, own, line in lines:
        label = own if prefix is None else (prefix if len(names) == 1
                                            else f"{prefix}{SERIES_JOIN}{own}")
        ax.plot(line["time_s"], line[plot.y], linewidth=1.2, label=label)
    if not lines:
        raise NothingToDraw(f"the selected runs recorded no {plot.y}")
    for marker, ref in zip(_markers(), plot.references):
        xs = [float(x) if isinstance(x, (int, float)) else math.nan for x in ref.x]
        _plot_reference(ax, ref, marker, xs, list(ref.y))


def draw_plot(spec: SweepSpec, plot: PlotSpec, panel_list: list[Panel], summary: pd.DataFrame,
              rows: pd.DataFrame, folder: Path, out: Path) -> list[FigureFile]:
    """Draws each panel of `plot` into `out/figures/`; time series are read from `folder`."""
    figures = []
    for panel in panel_list:
        stem = f"{spec.name}-{plot.name}{panel.suffix}"
        data = _panel_data(plot, panel, summary, rows)
        figures.append(_render(spec, plot, panel, stem, data, folder, out))
    return figures


def _panel_data(plot: PlotSpec, panel: Panel, summary: pd.DataFrame,
                rows: pd.DataFrame) -> pd.DataFrame:
    """A panel's runs (time series) or its summary rows of y with their series labels."""
    if plot.kind == "timeseries":
        runs = select(rows, panel)
        return runs[runs["rep"] == plot.rep].drop_duplicates("run_key")
    data = select(summary[summary["metric"] == plot.y], panel, plot.flow)
    data = data[data["n"] > 0]
    if data.empty:
        return data
    return data.assign(_series=series_labels(data, plot))


def _render(spec: SweepSpec, plot: PlotSpec, panel: Panel, stem: str, data: pd.DataFrame,
            folder: Path, out: Path) -> FigureFile:
    title = plot_title(plot)
    if data.empty:
        return FigureFile(stem, title, panel.caption, None, None,
                          f"no successful run has {plot.y} here")
    with matplotlib.rc_context(RC):
        fig, ax = _new_figure()
        try:
            if plot.kind == "line":
                _draw_line(ax, data, spec, plot)
            elif plot.kind == "bar":
                _draw_bar(ax, data, spec, plot)
            else:
                _draw_timeseries(ax, data, plot, folder)
        except (NothingToDraw, FileNotFoundError) as exc:
            return FigureFile(stem, title, panel.caption, None, None, str(exc))
        ax.set_title(f"{title}\n{panel.caption}" if panel.caption else title, fontsize=10)
        ax.set_xlabel(x_label(spec, plot))
        ax.set_ylabel(plot.ylabel or metric_label(plot.y))
        _legend(fig, ax, plot.series, plot.y)
        _save(fig, out / "figures", stem)
    return FigureFile(stem, title, panel.caption, f"figures/{stem}.png",
                      f"figures/{stem}.svg")
