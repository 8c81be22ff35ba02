"""`multiconn plot RUN_DIR`: the standard figures of one run, as PNG and SVG.

    >>> import multiconn
    >>> result = multiconn.run("examples/scenarios/mpquic_handover.toml")
    >>> result.plot("out/handover/figures")
    >>> from multiconn.plot import plot_run
    >>> plot_run("out/handover")          # a folder written by `multiconn run`

Which figures a run gets depends on what it has (see `multiconn.plot.figures`): every run
the throughput figure; transport flows the sender-state figure; multipath flows one
per-path figure each; flows over a PDCP split one legs-and-reordering figure each; links
that queued the queue figure; LTE cells a radio-and-RLC figure each; message flows a
one-way-delay CCDF each. Figures are written
byte-identically for the same run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import RunFolderError

if TYPE_CHECKING:
    from ..result import RunResult

FIGURES_DIR = "figures"


@dataclass(frozen=True)
class RunFigure:
    """A figure written for a run."""

    stem: str
    title: str
    caption: str
    files: tuple[Path, ...]
    """The files written, in the order of the formats asked for."""


def plot_run(run: RunResult | str | os.PathLike[str],
             out_dir: str | os.PathLike[str] | None = None,
             formats: tuple[str, ...] = ("png", "svg")) -> list[RunFigure]:
    """Draws the standard figures of `run` (a `RunResult` or a run folder) into `out_dir`
    (default: the run folder's `figures/`); returns them in display order.

    Raises RunFolderError for a folder that holds no run, ValueError for an unknown format
    or a `RunResult` without `out_dir`."""
    import matplotlib

    from ..figstyle import RC, save_figure
    from ..result import RunResult
    from . import figures

    unknown = [f for f in formats if f not in ("png", "svg")]
    if unknown or not formats:
        raise ValueError(f"figure formats: {', '.join(unknown) or '(none)'} not allowed "
                         "(allowed: png, svg)")
    if isinstance(run, RunResult):
        if out_dir is None:
            raise ValueError("plot_run: give out_dir for a RunResult (it has no folder)")
        result = run
    else:
        result = RunResult.read(run)
    out = Path(out_dir) if out_dir is not None else Path(run) / FIGURES_DIR  # type: ignore[arg-type]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunFolderError(f"{out}: cannot create the figures folder: "
                             f"{exc.strerror or exc}") from None
    written = []
    with matplotlib.rc_context(figures_rc(RC)):
        drawn = [d for build in figures.TABLE_FIGURES
                 for d in build(result.timeseries, result.summary)]
        drawn += figures.owd(result.messages, result.summary)
        for d in drawn:
            files = save_figure(d.figure, out, d.stem, formats)
            written.append(RunFigure(d.stem, d.title, d.caption, tuple(files)))
    return written


def figures_rc(base: dict[str, object]) -> dict[str, object]:
    """The run figures' matplotlib settings: the shared look with their own SVG id salt."""
    return {**base, "svg.hashsalt": "multiconn-plot"}


__all__ = ["FIGURES_DIR", "RunFigure", "plot_run"]
