"""Which results a plot shows: its panels (one figure each), their rows, series and x matching.

A plot fixes the axes it names (`x`, `series`, `where`, and a heatmap's `y`). Every other axis group with more
than one value is *free*: the plot is drawn once per combination of the free groups' values,
each figure named by those labels (`<experiment>-<plot>-<labels>`), rather than averaging
different configurations together. Axes zipped with a named axis are fixed with it. A `where`
that keeps several labels of an axis other than x and series puts them side by side: that
axis's label becomes part of each series label.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

import pandas as pd

from ..spec import PlotSpec, SweepSpec

SERIES_JOIN = " · "


@dataclass(frozen=True)
class Panel:
    """One figure of a plot: the axis labels its rows must have."""

    where: tuple[tuple[str, tuple[str, ...]], ...]
    """The plot's own `where`: the labels each named axis keeps."""
    free: tuple[tuple[str, str], ...]
    """The labels chosen for the free axes (empty when nothing is free)."""

    @property
    def fixed(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each constrained axis with the labels its rows may have."""
        return self.where + tuple((name, (label,)) for name, label in self.free)

    @property
    def suffix(self) -> str:
        """The file-name suffix: the free labels, file-name safe."""
        return "".join("-" + re.sub(r"[^A-Za-z0-9_.]+", "_", label).strip("_")
                       for _, label in self.free)

    @property
    def caption(self) -> str:
        return ", ".join(f"{name} = {labels[0]}" if len(labels) == 1
                         else f"{name} ∈ {{{', '.join(labels)}}}"
                         for name, labels in self.fixed)


def panels(spec: SweepSpec, plot: PlotSpec) -> list[Panel]:
    """The plot's panels, in axis order (one when no axis group is free)."""
    named = {plot.x, plot.series, *(name for name, _ in plot.where), *_heatmap_y(plot)}
    free_groups = [group for group in spec.groups
                   if len(group[0].values) > 1 and not any(a.name in named for a in group)]
    choices = itertools.product(*(range(len(group[0].values)) for group in free_groups))
    return [Panel(plot.where, tuple((axis.name, axis.values[i].label)
                                    for group, i in zip(free_groups, combo) for axis in group))
            for combo in choices]


def select(rows: pd.DataFrame, panel: Panel, flow: str | None = None) -> pd.DataFrame:
    """The rows (flow rows or summary rows) with the panel's labels (and of `flow` only)."""
    keep = pd.Series(True, index=rows.index)
    for name, labels in panel.fixed:
        keep &= rows[name].isin(labels)
    if flow is not None:
        keep &= rows["flow"] == flow
    return rows[keep]


def series_labels(data: pd.DataFrame, spec: SweepSpec, plot: PlotSpec) -> pd.Series:
    """Each row's series label: the `series` axis label, the labels of `where` axes that keep
    several values, and the flow when several flows would otherwise be averaged together (a
    series whose rows are one flow at each x is not labelled with it: variants that each run
    their own flow read "MP-QUIC", not "MP-QUIC · mpq"). A plot with one series names it
    after its flow (or after y, when x is the flow)."""
    names = ["flow"] if plot.series == "flow" else []
    parts = [data[name].astype(str) for name in [*names, *label_axes(spec, plot)]]
    if plot.series != "flow" and plot.x != "flow" and data["flow"].nunique() > 1 and (
            not parts or _several_flows(data, _joined(parts), plot)):
        parts.append(data["flow"].astype(str))
    if not parts:
        single = str(data["flow"].iloc[0]) if plot.x != "flow" and len(data) else plot.y
        return pd.Series(single, index=data.index, dtype=object)
    return _joined(parts)


def _joined(parts: list[pd.Series]) -> pd.Series:
    labels = parts[0]
    for part in parts[1:]:
        labels = labels + SERIES_JOIN + part
    return labels


def _several_flows(data: pd.DataFrame, labels: pd.Series, plot: PlotSpec) -> bool:
    """Whether some series (at some x) holds the rows of more than one flow."""
    keys = [labels] + ([data[plot.x].astype(str)] if plot.x in data.columns else [])
    return bool((data["flow"].groupby(keys, sort=False).nunique() > 1).any())


def label_axes(spec: SweepSpec, plot: PlotSpec) -> list[str]:
    """The axes whose labels tell a plot's series apart: `series` (unless it is "flow"),
    then each `where` axis keeping several labels that x and series do not already fix (an
    axis zipped with x or series advances with it)."""
    names = [plot.series] if plot.series not in (None, "flow") else []
    fixed = (plot.x, plot.series, *_heatmap_y(plot))
    taken = {a.name for group in spec.groups for a in group
             if any(axis.name in fixed for axis in group)}
    names.extend(name for name, labels in plot.where if len(labels) > 1 and name not in taken)
    return names


def _heatmap_y(plot: PlotSpec) -> tuple[str, ...]:
    """A heatmap's y, the second axis it fixes (other plots' y is a metric)."""
    return (plot.y,) if plot.kind == "heatmap" else ()


def legend_title(spec: SweepSpec, plot: PlotSpec) -> str | None:
    """What the series labels are made of ("flow · stack"), None for no series axis."""
    names = ["flow"] if plot.series == "flow" else []
    return SERIES_JOIN.join([*names, *label_axes(spec, plot)]) or None


def x_labels(spec: SweepSpec, plot: PlotSpec) -> list[str] | None:
    """The labels of the plot's x axis in axis order, as far as `where` keeps them (None
    when x is the flow)."""
    if plot.x is None or plot.x == "flow":
        return None
    kept = dict(plot.where).get(plot.x)
    return [v.label for v in spec.axis(plot.x).values if kept is None or v.label in kept]


def x_position(spec: SweepSpec, x: str, label: str) -> float | None:
    """The numeric position of an x label on a numeric axis (None otherwise)."""
    if x == "flow":
        return None
    axis = spec.axis(x)
    if not axis.numeric:
        return None
    return next(float(v.value) for v in axis.values if v.label == label)


def x_matches(spec: SweepSpec, x: str, ref_x: float | str, label: str) -> bool:
    """Whether a reference's x value names the point with x label `label`."""
    if isinstance(ref_x, (int, float)):
        position = x_position(spec, x, label)
        if position is not None:
            return math.isclose(float(ref_x), position, rel_tol=1e-9, abs_tol=1e-12)
        return number_text(ref_x) == label
    return ref_x == label


def number_text(value: float | str) -> str:
    """A reference's x value as text (`1` rather than `1.0`)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
