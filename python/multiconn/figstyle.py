"""The look shared by every figure multiconn draws (sweep reports and single-run plots).

Figures are `matplotlib.figure.Figure` objects on an Agg canvas (no pyplot, no global
backend). Output is byte-deterministic: SVG text stays text (`svg.fonttype = none`, so it is
searchable), SVG ids use a fixed salt, and neither format records a date or the software.

Long titles and legend labels are wrapped to the figure's width instead of running off the
image (`wrap_text`, `title_text`), and legends go below the axes where they hide no data,
in as many columns as their longest label leaves room for (`legend_below`).

Series get a colour and a line style each (`series_style`): the ten colours of matplotlib's
`tab10` cycle solid, then the same colours dashed, dash-dotted and dotted, so forty series
are told apart before a pair repeats. A figure shows at most `MAX_SERIES` series on an axis
one by one; with more, the `TOP_SERIES` largest are drawn and the others as one aggregate
(their mean, with their range shaded): twenty lines crossing on one axis cannot be followed
even in distinct styles, while the few that carry most and the spread of the rest can.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FIGURE_SIZE = (6.4, 4.0)
PNG_DPI = 120
RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "multiconn-report",
    "font.family": "DejaVu Sans",
    "axes.grid": True,
    "grid.alpha": 0.3,
}
CHAR_WIDTH_EM = 0.6
"""A generous mean glyph width of DejaVu Sans in ems (its digits and capitals are ~0.63)."""
TITLE_POINTS = 10.0
LEGEND_POINTS = 8.0
SERIES_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
                 "tab:pink", "tab:olive", "tab:cyan", "tab:gray")
SERIES_LINESTYLES = ("-", "--", "-.", ":")
MAX_SERIES = 12
"""The most series an axis draws one by one; above, `TOP_SERIES` of them and an aggregate."""
TOP_SERIES = 8
"""How many series are drawn one by one when an axis has more than `MAX_SERIES`."""
AGGREGATE_COLOR = "0.35"


def series_style(index: int) -> dict[str, str]:
    """The colour and line style of a figure's `index`-th series (from 0): the ten colours
    solid, then dashed, dash-dotted and dotted; distinct for the first 40 series."""
    colors, styles = len(SERIES_COLORS), len(SERIES_LINESTYLES)
    return {"color": SERIES_COLORS[index % colors],
            "linestyle": SERIES_LINESTYLES[(index // colors) % styles]}


def top_series(weights: dict[str, float], limit: int = MAX_SERIES,
               keep: int = TOP_SERIES) -> list[str]:
    """The series to draw one by one: all of `weights` (label -> how much it carries) when
    there are at most `limit`, else the `keep` heaviest (the first on ties); in the order
    of `weights`."""
    if len(weights) <= limit:
        return list(weights)
    order = sorted(range(len(weights)), key=lambda i: -_finite(list(weights.values())[i]))
    chosen = set(order[:keep])
    return [label for i, label in enumerate(weights) if i in chosen]


def _finite(value: float) -> float:
    return value if value == value else float("-inf")


def chars_per_line(width_in: float, font_points: float) -> int:
    """How many characters of a `font_points` font fit in `width_in` inches (with margins)."""
    usable_points = max(width_in - 0.8, 1.0) * 72.0  # margins, and the y label beside axes
    return max(int(usable_points / (font_points * CHAR_WIDTH_EM)), 10)


def wrap_text(text: str, width: int) -> str:
    """`text` with each of its lines wrapped at `width` characters (words are not split
    unless longer than a line)."""
    return "\n".join(textwrap.fill(line, width, break_on_hyphens=False) if line else ""
                     for line in text.split("\n"))


def title_text(title: str, caption: str = "", width_in: float = FIGURE_SIZE[0],
               font_points: float = TITLE_POINTS) -> str:
    """A title, and below it an optional caption, wrapped to fit `width_in` inches."""
    text = f"{title}\n{caption}" if caption else title
    return wrap_text(text, chars_per_line(width_in, font_points))


def new_figure(rows: int = 1, height_in: float | None = None,
               width_in: float = FIGURE_SIZE[0]) -> tuple[Figure, list[Axes]]:
    """A constrained-layout figure with `rows` axes stacked on a shared time (x) axis."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    height = height_in if height_in is not None else FIGURE_SIZE[1] + 1.6 * (rows - 1)
    fig = Figure(figsize=(width_in, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0].tolist()
    return fig, axes


def legend_below(fig: Figure, handles: list[Any], labels: list[str],
                 title: str | None = None) -> None:
    """A legend under the axes, its labels wrapped, in as many columns (up to 4) as the
    longest label leaves room for."""
    if not labels:
        return
    width_chars = chars_per_line(fig.get_figwidth(), LEGEND_POINTS)
    label_width = max(12, min(max(len(label) for label in labels), width_chars - 4))
    columns = max(1, min(len(labels), 4, width_chars // (label_width + 6)))
    wrapped = [wrap_text(label, max(12, width_chars // columns - 6)) for label in labels]
    fig.legend(handles, wrapped, loc="outside lower center", ncols=columns,
               fontsize="small", title=title, title_fontsize="small", frameon=False)


def save_figure(fig: Figure, folder: Path, stem: str,
                formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:
    """Writes `stem.png` and/or `stem.svg` into `folder`; returns the paths."""
    paths = []
    for fmt in formats:
        path = folder / f"{stem}.{fmt}"
        if fmt == "svg":
            fig.savefig(path, format="svg", metadata={"Date": None})
        else:
            fig.savefig(path, format="png", dpi=PNG_DPI, metadata={"Software": None})
        paths.append(path)
    return paths
