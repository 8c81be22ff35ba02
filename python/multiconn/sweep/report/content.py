"""What the report says about one experiment, gathered from the store and the results table.

`experiment_content` draws the figures and assembles everything the HTML template shows:
the sweep's description, run counts, axes, figures, the mean ± std table, the comparisons
with published values and the failed runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..spec import Axis, PlotSpec, SweepSpec
from ..store import RunRecord
from .aggregate import RUN_METRICS, numeric_metrics, ok_rows, summarize
from .compare import Comparison, compare_plot
from .figures import FigureFile, draw_plot, metric_label, plot_title
from .selection import panels


@dataclass(frozen=True)
class Counts:
    planned: int
    ok: int
    failed: int

    @property
    def pending(self) -> int:
        return self.planned - self.ok - self.failed


@dataclass(frozen=True)
class Cell:
    """Mean, std (None for fewer than two values) and count of one metric at one point."""

    mean: float | None
    std: float | None
    n: int


@dataclass(frozen=True)
class ResultRow:
    labels: tuple[str, ...]
    flow: str
    runs: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class PlotContent:
    plot: PlotSpec
    title: str
    figures: list[FigureFile]
    comparisons: list[Comparison]


@dataclass(frozen=True)
class Failure:
    point: int
    labels: tuple[str, ...]
    rep: int
    seed: int
    error: str


@dataclass(frozen=True)
class ExperimentContent:
    spec: SweepSpec
    counts: Counts
    axes: tuple[Axis, ...]
    plots: list[PlotContent]
    metrics: list[str]
    metric_labels: list[str]
    results: list[ResultRow]
    failures: list[Failure]


def default_plots(spec: SweepSpec) -> tuple[PlotSpec, ...]:
    """The figure of a sweep without [[plot]]: goodput per flow against the main axis."""
    if spec.parameter is None:
        return (PlotSpec("goodput", "bar", "goodput_mbps", x="flow"),)
    axis = spec.axis(spec.parameter)
    kind = "line" if axis.numeric and len(axis.values) > 1 else "bar"
    return (PlotSpec("goodput", kind, "goodput_mbps", x=axis.name, series="flow"),)


def experiment_content(spec: SweepSpec, frame: pd.DataFrame, records: list[RunRecord],
                       counts: tuple[int, int, int], folder: Path,
                       out: Path) -> ExperimentContent:
    """Draws the experiment's figures into `out/figures` and gathers the page's content."""
    labels = {r.point: r.labels for r in records}
    rows = ok_rows(frame, spec, labels)
    plot_specs = spec.plots or default_plots(spec)
    metrics = numeric_metrics(rows, [*spec.metrics, *RUN_METRICS,
                                     *(p.y for p in plot_specs if p.kind in ("line", "bar"))])
    summary = summarize(rows, spec, metrics)
    table_metrics = [m for m in metrics if m in spec.metrics or m in RUN_METRICS]
    return ExperimentContent(
        spec=spec,
        counts=Counts(*counts),
        axes=spec.axes,
        plots=[_plot_content(spec, plot, summary, rows, folder, out) for plot in plot_specs],
        metrics=table_metrics,
        metric_labels=[metric_label(m) for m in table_metrics],
        results=_result_rows(spec, summary, rows, table_metrics),
        failures=[Failure(r.point, tuple(r.labels[a.name] for a in spec.axes), r.rep, r.seed,
                          r.error or "") for r in records if r.ok is False],
    )


def _plot_content(spec: SweepSpec, plot: PlotSpec, summary: pd.DataFrame, rows: pd.DataFrame,
                  folder: Path, out: Path) -> PlotContent:
    panel_list = panels(spec, plot)
    figures = draw_plot(spec, plot, panel_list, summary, rows, folder, out)
    comparisons = []
    if plot.references and plot.kind in ("line", "bar"):
        comparisons = compare_plot(summary, spec, plot, panel_list)
    return PlotContent(plot, plot_title(plot), figures, comparisons)


def _result_rows(spec: SweepSpec, summary: pd.DataFrame, rows: pd.DataFrame,
                 metrics: list[str]) -> list[ResultRow]:
    runs = rows.groupby(["point", "flow"], sort=False).size()
    result = []
    for (point, flow), group in summary.groupby(["point", "flow"], sort=False):
        stats = group.set_index("metric")
        cells = tuple(_cell(stats.loc[m]) for m in metrics)
        labels = tuple(str(group.iloc[0][a.name]) for a in spec.axes)
        result.append(ResultRow(labels, str(flow), int(runs[(point, flow)]), cells))
    return result


def _cell(stat: pd.Series) -> Cell:
    n = int(stat["n"])
    std = stat["std"]
    return Cell(float(stat["mean"]) if n else None, None if pd.isna(std) else float(std), n)
