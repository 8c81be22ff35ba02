"""The `heatmap` plot: a metric's mean over repetitions per cell of two axes.

Columns are the labels of the axis `x`, rows those of the axis `y` (each in the axis's order,
as far as `where` keeps them; the first value at the bottom), drawn as evenly spaced cells. A
cell's colour and the number written in it are the mean of the metric `z` over the panel's
rows with that pair of labels: over repetitions, for one flow (the plot's `flow`; a heatmap
of a flow metric is drawn once per flow otherwise). A per-run metric such as `jain_fairness`
counts once per run. Cells without a value are grey and marked "–". The colour bar is
labelled with the metric's name and unit; `zlim = [lo, hi]` fixes its range (values outside
take the end colours, their numbers stay exact).
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from ..spec import RUN_METRICS, PlotSpec, SweepSpec

COLORMAP = "viridis"
MISSING_COLOR = "0.85"
MISSING_TEXT = "–"
LIGHT_TEXT_BELOW = 0.5
"""Cells whose colour's luminance is below this get white numbers, the others black."""
ROTATE_TICKS_FROM = 48
"""x tick labels are tilted when their characters together exceed this."""


class EmptyHeatmap(Exception):
    """No cell of the panel has a value (the message says which metric)."""


def axis_labels(spec: SweepSpec, plot: PlotSpec, name: str) -> list[str]:
    """The labels of axis `name` in axis order, as far as the plot's `where` keeps them."""
    kept = dict(plot.where).get(name)
    return [v.label for v in spec.axis(name).values if kept is None or v.label in kept]


def tick_texts(spec: SweepSpec, name: str, labels: list[str]) -> list[str]:
    """Tick texts: a numeric axis's plain numbers (its unit is in the axis label)."""
    axis = spec.axis(name)
    if not axis.numeric:
        return labels
    values = {v.label: float(v.value) for v in axis.values}
    return [f"{values[label]:g}" for label in labels]


def cell_means(rows: pd.DataFrame, plot: PlotSpec) -> dict[tuple[str, str], float]:
    """The mean of `plot.z` per (x label, y label) over `rows` (flow rows of one panel)."""
    assert plot.x is not None and plot.z is not None
    if rows.empty:
        return {}
    values = rows[[plot.x, plot.y, "point", "rep", plot.z]]
    if plot.z in RUN_METRICS:
        values = values.drop_duplicates(["point", "rep"])
    numbers = pd.to_numeric(values[plot.z], errors="coerce").astype("float64")
    keys = [values[plot.x].astype(str), values[plot.y].astype(str)]
    means = numbers.groupby(keys, sort=False).mean().dropna()
    return {(str(x), str(y)): float(mean) for (x, y), mean in means.items()}


def grid(spec: SweepSpec, plot: PlotSpec,
         means: dict[tuple[str, str], float]) -> tuple[list[str], list[str], np.ndarray]:
    """(x labels, y labels, means[y index, x index]) with NaN for empty cells."""
    assert plot.x is not None
    xs, ys = axis_labels(spec, plot, plot.x), axis_labels(spec, plot, plot.y)
    values = np.full((len(ys), len(xs)), np.nan)
    for i, y in enumerate(ys):
        for j, x in enumerate(xs):
            values[i, j] = means.get((x, y), np.nan)
    return xs, ys, values


def decimals(values: np.ndarray) -> int:
    """Decimals that tell the cells apart: about three significant digits of the largest
    value, more when the values differ only further down (0.981 and 1.000)."""
    finite = values[np.isfinite(values)]
    largest = float(np.max(np.abs(finite))) if finite.size else 0.0
    if largest == 0.0:
        return 0
    places = 2 - math.floor(math.log10(largest))
    spread = float(np.max(finite) - np.min(finite))
    if spread > 0:
        places = max(places, 1 - math.floor(math.log10(spread)))
    return min(max(places, 0), 6)


def cell_text(value: float, places: int) -> str:
    if not math.isfinite(value):
        return MISSING_TEXT
    if abs(value) >= 1e5:
        return f"{value:.3g}"
    return f"{value:.{places}f}"


def draw_heatmap(fig: Figure, ax: Axes, rows: pd.DataFrame, spec: SweepSpec, plot: PlotSpec,
                 label: str) -> np.ndarray:
    """Draws the panel's cells on `ax` and a colour bar titled `label`; returns the grid of
    means (rows: y labels, columns: x labels). Raises EmptyHeatmap when no cell has a value."""
    assert plot.x is not None
    xs, ys, values = grid(spec, plot, cell_means(rows, plot))
    if not np.isfinite(values).any():
        raise EmptyHeatmap(f"no run of this panel has a value of {plot.z}")
    low, high = plot.zlim if plot.zlim is not None else (
        float(np.nanmin(values)), float(np.nanmax(values)))
    if low == high:  # one value everywhere: centre it in the colour scale
        pad = abs(low) * 0.05 or 0.5
        low, high = low - pad, high + pad
    norm = Normalize(low, high, clip=True)
    cmap = matplotlib.colormaps[COLORMAP].with_extremes(bad=MISSING_COLOR)
    image = ax.imshow(np.ma.masked_invalid(values), origin="lower", aspect="auto", cmap=cmap,
                      norm=norm, interpolation="nearest")
    ax.grid(False)
    x_ticks = tick_texts(spec, plot.x, xs)
    ax.set_xticks(range(len(xs)), x_ticks,
                  rotation=30 if sum(map(len, x_ticks)) > ROTATE_TICKS_FROM else 0,
                  ha="right" if sum(map(len, x_ticks)) > ROTATE_TICKS_FROM else "center")
    ax.set_yticks(range(len(ys)), tick_texts(spec, plot.y, ys))
    places = decimals(values)
    cells = max(len(xs), len(ys))
    size = "medium" if cells <= 5 else "small" if cells <= 8 else "x-small"
    for i in range(len(ys)):
        for j in range(len(xs)):
            value = values[i, j]
            color = "black"
            if math.isfinite(value):
                r, g, b, _ = cmap(norm(value))
                color = "white" if 0.299 * r + 0.587 * g + 0.114 * b < LIGHT_TEXT_BELOW else "black"
            ax.text(j, i, cell_text(value, places), ha="center", va="center", color=color,
                    fontsize=size)
    bar = fig.colorbar(image, ax=ax)
    bar.set_label(label)
    return values
