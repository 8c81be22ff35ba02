"""The HTML page of one run: its headline, the summary tables (flows, links, paths, PDCP
legs) and its standard figures, written by `multiconn report RUN_DIR` and by `make demo`.

The page is `index.html` beside a `figures/` folder; writing it twice from the same run
gives identical files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import RunFolderError

INDEX = "index.html"
TEMPLATES = Path(__file__).parent / "templates"


def is_run_folder(folder: str | os.PathLike[str]) -> bool:
    """Whether `folder` holds the files of a single run (not a sweep's results store)."""
    path = Path(folder)
    return (path / "summary.json").is_file() and not (path / "results.sqlite").exists()


def write_run_page(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None,
                   intro: list[str] | None = None, view: dict[str, Any] | None = None) -> Path:
    """Draws the run's figures into `out/figures` and writes `out/index.html` (default
    `out`: `run_dir/report`); `intro` paragraphs go above the tables; `view` holds
    `plot_run`'s keyword arguments of what the figures show (a time span, the CCDF's axis),
    and the page says which span its figures show. Returns the page."""
    import jinja2

    from ..report import DROPS_NOTE, headline, summary_tables
    from ..result import RunResult
    from . import FIGURES_DIR, plot_run

    run = RunResult.read(run_dir)
    target = Path(out) if out is not None else Path(run_dir) / "report"
    options = dict(view or {})
    figures = plot_run(run, target / FIGURES_DIR, **options)
    span = _span_text(options.get("from_s"), options.get("to_s"), run.summary)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    shown = [{"stem": f.stem, "title": f.title, "caption": f.caption,
              "png": f"{FIGURES_DIR}/{f.stem}.png", "svg": f"{FIGURES_DIR}/{f.stem}.svg"}
             for f in figures]
    summary = dict(run.summary)
    summary.pop("wall_time_s", None)  # the only value two identical runs differ in
    html = env.get_template("run.html.j2").render(
        summary=summary, headline=headline(summary), intro=intro or [],
        folder=os.fspath(run_dir), has_messages=run.messages is not None,
        tables=summary_tables(summary), drops_note=DROPS_NOTE, figures=shown, span=span)
    page = target / INDEX
    try:
        page.write_text(html, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise RunFolderError(f"{page}: cannot write: {exc.strerror or exc}") from None
    return page


def _span_text(from_s: float | None, to_s: float | None, summary: dict[str, Any]) -> str:
    """What the page's figures show: the whole run, or the span asked for."""
    end = summary.get("sim_time_s")
    whole = f"0 s to {end:g} s" if isinstance(end, (int, float)) else "the whole run"
    if from_s is None and to_s is None:
        return f"the whole run ({whole})"
    start = 0.0 if from_s is None else from_s
    stop = to_s if to_s is not None else end
    return f"{start:g} s to {stop:g} s of the run ({whole}); the tables cover the whole run"
