"""Published values beside ours: one comparison row per reference value and matching series.

A reference value is matched to the summary rows of its panel with the same x (a number on
a numeric axis is compared with the axis values, anything else with the labels), the same
flow (`flow`) and the same series label or `series` axis label (`series`). When the
reference names neither and the plot has several series, each series gets a row. A value
with no matching point still gets a row, without ours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..spec import PlotSpec, Reference, SweepSpec
from .selection import Panel, number_text, select, series_labels, x_matches


@dataclass(frozen=True)
class Comparison:
    """A published value and ours at the same point."""

    source: str
    panel: str
    x: str
    series: str | None
    published: float
    mean: float | None = None
    std: float | None = None
    n: int = 0

    @property
    def difference(self) -> float | None:
        """Ours minus published."""
        return None if self.mean is None else self.mean - self.published

    @property
    def difference_pct(self) -> float | None:
        """The difference relative to the published value, in percent."""
        if self.mean is None or self.published == 0:
            return None
        return 100.0 * (self.mean - self.published) / abs(self.published)


def reference_rows(data: pd.DataFrame, plot: PlotSpec, ref: Reference) -> pd.DataFrame:
    """The rows of `data` (one panel's summary rows of the plot's metric) a reference names."""
    keep = pd.Series(True, index=data.index)
    if ref.flow is not None:
        keep &= data["flow"] == ref.flow
    if ref.series is not None:
        own = data["_series"] == ref.series
        if plot.series is not None:
            own |= data[plot.series].astype(str) == ref.series
        keep &= own
    return data[keep]


def compare_plot(summary: pd.DataFrame, spec: SweepSpec, plot: PlotSpec,
                 panel_list: list[Panel]) -> list[Comparison]:
    """The comparison rows of every reference of a line or bar plot."""
    result = []
    for panel in panel_list:
        data = select(summary[summary["metric"] == plot.y], panel, plot.flow)
        data = data.assign(_series=series_labels(data, spec, plot))
        for ref in plot.references:
            named = reference_rows(data, plot, ref)
            for ref_x, published in zip(ref.x, ref.y):
                at_x = named[named[plot.x].map(
                    lambda label, ref_x=ref_x: x_matches(spec, plot.x, ref_x, label)).astype(bool)]
                result.extend(_rows(ref, panel.caption, number_text(ref_x), published, at_x,
                                    plot.x))
    return result


def _rows(ref: Reference, panel: str, ref_x: str, published: float, ours: pd.DataFrame,
          x: str) -> list[Comparison]:
    """One row per matching series (ours at x), or one row without ours."""
    ours = ours[ours["n"] > 0]
    if ours.empty:
        return [Comparison(ref.source, panel, ref_x, ref.series or ref.flow, published)]
    return [Comparison(ref.source, panel, str(row[x]), row["_series"], published,
                       float(row["mean"]),
                       None if math.isnan(row["std"]) else float(row["std"]), int(row["n"]))
            for _, row in ours.iterrows()]
