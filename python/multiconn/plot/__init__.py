"""`multiconn plot RUN_DIR`: the standard figures of one run, as PNG and SVG.

    >>> import multiconn
    >>> result = multiconn.run("examples/scenarios/mpquic_handover.toml")
    >>> result.plot("out/handover/figures")
    >>> from multiconn.plot import plot_run
    >>> plot_run("out/handover")          # a folder written by `multiconn run`

Which figures a run gets depends on what it has (see `multiconn.plot.figures`): every run
the throughput figure; transport flows the sender-state figure; multipath flows one
per-path figure each; flows over a PDCP split one legs-and-reordering figure each; busy link
queues and RLC buffers the queue figure; LTE cells a radio-and-RLC figure each; message flows a
one-way-delay CCDF each. Figures are written
byte-identically for the same run.

`from_s`/`to_s` narrow every figure to a time span (`multiconn plot --from 2s --to 5s`): the
time series to the bins that start in it, the CCDFs to the messages sent in it; each figure
says so under its title. `ccdf_x` ("log", the default, or "linear") and `ccdf_xlim` set the
CCDF's delay axis.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PlotOptionError, RunFolderError

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
             formats: tuple[str, ...] = ("png", "svg"), *,
             from_s: float | None = None, to_s: float | None = None,
             ccdf_x: str = "log",
             ccdf_xlim: tuple[float, float] | None = None) -> list[RunFigure]:
    """Draws the standard figures of `run` (a `RunResult` or a run folder) into `out_dir`
    (default: the run folder's `figures/`); returns them in display order. `from_s`, `to_s`
    (seconds) narrow them to a time span; `ccdf_x` and `ccdf_xlim` (seconds) set the CCDFs'
    delay axis.

    Raises RunFolderError for a folder that holds no run, PlotOptionError for a span or CCDF
    range that does not fit the run, ValueError for an unknown format or a `RunResult`
    without `out_dir`."""
    import matplotlib

    from ..figstyle import RC, save_figure
    from ..result import RunResult

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
    view = make_view(result, from_s, to_s, ccdf_x, ccdf_xlim)
    out = Path(out_dir) if out_dir is not None else Path(run) / FIGURES_DIR  # type: ignore[arg-type]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunFolderError(f"{out}: cannot create the figures folder: "
                             f"{exc.strerror or exc}") from None
    written = []
    with matplotlib.rc_context(figures_rc(RC)):
        for d in draw_run(result, view):
            files = save_figure(d.figure, out, d.stem, formats)
            written.append(RunFigure(d.stem, d.title, d.caption, tuple(files)))
    return written


def draw_run(result: RunResult, view: Any = None) -> list[Any]:
    """The run's figures (`figures.Drawn`, not yet saved) as `view` (a `figures.View`, from
    `make_view`; default the whole run) shows them, in display order."""
    from . import figures

    view = figures.WHOLE_RUN if view is None else view
    table = view.within(result.timeseries, "time_s")
    drawn = [d for build in figures.TABLE_FIGURES for d in build(table, result.summary, view)]
    return drawn + figures.owd(result.messages, result.summary, view)


def make_view(result: RunResult, from_s: float | None = None, to_s: float | None = None,
              ccdf_x: str = "log", ccdf_xlim: tuple[float, float] | None = None) -> Any:
    """The figures' `View` of `result`, its span checked against the run (the errors name
    the options as `multiconn plot` spells them)."""
    import math

    from .figures import View

    if ccdf_x not in ("log", "linear"):
        raise PlotOptionError(f"--ccdf-x: {ccdf_x!r} is not allowed (allowed: log, linear)")
    if ccdf_xlim is not None:
        lo, hi = ccdf_xlim
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo < hi):
            raise PlotOptionError(f"--ccdf-xlim: {lo:g} s to {hi:g} s is not a range (it needs "
                                  "lo < hi, e.g. 10ms,500ms)")
        if ccdf_x == "log" and lo <= 0:
            raise PlotOptionError("--ccdf-xlim: a log delay axis starts above 0 (e.g. 1ms,1s),"
                                  " or give --ccdf-x linear")
    if from_s is None and to_s is None:
        return View(ccdf_x=ccdf_x, ccdf_xlim=ccdf_xlim)
    end = _run_end(result)
    start = 0.0 if from_s is None else float(from_s)
    for option, value in (("--from", from_s), ("--to", to_s)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise PlotOptionError(f"{option}: {value:g} s is not a time in the run (it must be "
                                  f"between 0 s and the run's end, {end:g} s)")
    if start >= end:
        raise PlotOptionError(f"--from {start:g} s is at or after the run's end ({end:g} s): "
                              f"it must be below {end:g} s")
    if to_s is not None and to_s > end * (1 + 1e-9):
        raise PlotOptionError(f"--to {to_s:g} s is beyond the run's end ({end:g} s): it must be "
                              f"at most {end:g} s")
    if to_s is not None and to_s <= start:
        raise PlotOptionError(f"--from {start:g} s is not before --to {to_s:g} s: --from must be "
                              "below --to")
    stop = end if to_s is None else float(to_s)
    times = result.timeseries["time_s"].astype(float)
    if len(times) and not ((times >= start) & (times < stop)).any():
        raise PlotOptionError(f"--from {start:g} s --to {stop:g} s: no time bin starts in this "
                              "span (the bins start at whole multiples of [run] bin); widen it")
    return View(start_s=start, end_s=stop, span_given=True, ccdf_x=ccdf_x, ccdf_xlim=ccdf_xlim)


def _run_end(result: RunResult) -> float:
    """The simulated time the run ended at (its summary's sim_time_s)."""
    end = result.summary.get("sim_time_s")
    if isinstance(end, (int, float)) and end > 0:
        return float(end)
    times = result.timeseries["time_s"]
    return float(times.max()) if len(times) else 0.0


def add_view_options(parser: Any) -> None:
    """Adds --from, --to, --ccdf-x and --ccdf-xlim to an argparse parser (`multiconn plot`
    and `multiconn report`); `view_options(args)` reads them back for `plot_run`."""
    group = parser.add_argument_group("what the figures show")
    group.add_argument("--from", dest="from_s", type=_duration, metavar="TIME",
                       help="draw from this time on (e.g. 2s; default: the run's start)")
    group.add_argument("--to", dest="to_s", type=_duration, metavar="TIME",
                       help="draw up to this time (e.g. 5s; default: the run's end)")
    group.add_argument("--ccdf-x", dest="ccdf_x", choices=("log", "linear"), default="log",
                       help="the one-way-delay CCDF's delay axis (default log)")
    group.add_argument("--ccdf-xlim", dest="ccdf_xlim", type=_duration_range, metavar="LO,HI",
                       help="the CCDF's delay range drawn, e.g. 10ms,500ms")


def view_options(args: Any) -> dict[str, Any]:
    """The keyword arguments of `plot_run` that `add_view_options` read."""
    return {"from_s": args.from_s, "to_s": args.to_s, "ccdf_x": args.ccdf_x,
            "ccdf_xlim": args.ccdf_xlim}


def _duration(text: str) -> float:
    import argparse

    from ..owdgen import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _duration_range(text: str) -> tuple[float, float]:
    import argparse

    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected two durations LO,HI such as 10ms,500ms, "
                                         f"got '{text}'")
    lo, hi = (_duration(part) for part in parts)
    if not lo < hi:
        raise argparse.ArgumentTypeError(f"'{text}': the first duration must be below the "
                                         "second")
    return lo, hi


def figures_rc(base: dict[str, object]) -> dict[str, object]:
    """The run figures' matplotlib settings: the shared look with their own SVG id salt."""
    return {**base, "svg.hashsalt": "multiconn-plot"}


__all__ = ["FIGURES_DIR", "RunFigure", "add_view_options", "draw_run", "make_view", "plot_run",
           "view_options"]
