"""The y range of a report figure: log scale, explicit limits, and rates from zero.

* `logy = true` draws y on a log scale. The values a line, bar or throughput-delay plot
  draws (its means over repetitions) must all be above zero; otherwise the panel gets no
  figure but a note naming the plot and the values (`check_log_values`). A time series keeps
  its samples at or below zero out of the log axis (gaps in the line).
* `ylim = [lo, hi]` draws exactly that range (checked when the sweep file is read: lo < hi,
  and lo > 0 on a log axis).
* Otherwise a rate (a metric in Mbit/s: goodput, throughput) starts at zero, so that heights
  compare as the rates do; other metrics are fitted to the data by matplotlib.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, LogFormatter, MaxNLocator, NullLocator

from ..spec import PlotSpec

NARROW_LOG_RATIO = 10.0
"""A log y range narrower than this ratio (less than a decade) is ticked like a linear one."""
RATE_SUFFIX = "_mbps"
RATE_WORDS = ("goodput", "throughput")


class PlainLogFormatter(LogFormatter):
    """matplotlib's choice of which log ticks get a label, written as plain numbers (0.4, 20
    rather than 4e-01, 2×10¹)."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return f"{x:g}" if super().__call__(x, pos) else ""


class LogScaleUnfit(Exception):
    """A log y axis asked for values at or below zero (the message names the plot)."""


def is_rate(metric: str) -> bool:
    """Whether `metric` is a rate (goodput, throughput, anything in Mbit/s)."""
    return metric.endswith(RATE_SUFFIX) or any(word in metric for word in RATE_WORDS)


def check_log_values(plot: PlotSpec, values: Iterable[float]) -> None:
    """Raises LogScaleUnfit when `plot` has a log y and a drawn value is not above zero."""
    if not plot.logy:
        return
    numbers = np.asarray([v for v in values if v == v], dtype="float64")  # NaN: not drawn
    bad = numbers[numbers <= 0]
    if bad.size:
        raise LogScaleUnfit(
            f"plot {plot.name!r}: logy = true, but {bad.size} of the {numbers.size} values "
            f"drawn {'is' if bad.size == 1 else 'are'} not above zero (smallest "
            f"{float(bad.min()):g}); a log axis shows only positive values: drop logy or "
            "plot another metric")


def apply_y_range(ax: Axes, plot: PlotSpec, metric: str) -> None:
    """Sets `ax`'s y scale and range from `plot` (see the module header)."""
    if plot.logy:
        ax.set_yscale("log")
    if plot.ylim is not None:
        ax.set_ylim(*plot.ylim)
    elif not plot.logy and is_rate(metric):
        ax.set_ylim(0.0, _top_from_zero(ax))
    if plot.logy:
        _plain_log_ticks(ax)


def _top_from_zero(ax: Axes) -> float:
    """The top of a y range that starts at zero: the data's top (matplotlib's autoscaled top
    less its margin) plus the same margin of the new, taller range."""
    low, high = ax.get_ylim()
    margin = ax.margins()[1]
    top = high - margin * (high - low) / (1 + 2 * margin)
    return top * (1 + margin) if top > 0 else 1.0


def _plain_log_ticks(ax: Axes) -> None:
    """Log y ticks as plain numbers (20, not 2×10¹); less than a decade ([0.95, 1]) is ticked
    at round values like a linear axis, since a log axis has at most one power of ten there."""
    low, high = ax.get_ylim()
    if low > 0 and high / low < NARROW_LOG_RATIO:
        ax.yaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    else:
        ax.yaxis.set_major_formatter(PlainLogFormatter(labelOnlyBase=False))
        ax.yaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False,
                                                       minor_thresholds=(2, 0.5)))
