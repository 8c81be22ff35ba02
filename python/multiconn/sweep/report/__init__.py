"""`multiconn report DIR`: a static HTML report of the experiments in an output folder.

The report is `index.html` with a `figures/` folder of PNG and SVG files, written to
`DIR/report` unless told otherwise. It needs nothing but the folder: the sweep specs, the
plan and the run records all come from its results store. Writing it twice from the same
store gives identical files.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..results import load
from ..store import Store
from .content import ExperimentContent, experiment_content
from .html import render_page

REPORT_DIR = "report"
FIGURES_DIR = "figures"
INDEX = "index.html"
FIGURE_SUFFIXES = (".png", ".svg")


def write_report(folder: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Writes the report of `folder` (default: into `folder/report`); returns its index.html.

    Raises StoreError when `folder` holds no results store.
    """
    folder = Path(folder)
    out = Path(out) if out is not None else folder / REPORT_DIR
    with Store(folder, create=False) as store:
        specs = store.experiments()
        counts = {spec.name: store.counts(spec.name) for spec in specs}
        records = store.records(finished_only=False)
    frame = load(folder)
    (out / FIGURES_DIR).mkdir(parents=True, exist_ok=True)
    contents = [
        experiment_content(spec, frame, [r for r in records if r.experiment == spec.name],
                           counts[spec.name], folder, out)
        for spec in specs
    ]
    _remove_stale_figures(out / FIGURES_DIR, contents)
    index = out / INDEX
    index.write_text(render_page(os.fspath(folder), contents), encoding="utf-8", newline="\n")
    return index


def _remove_stale_figures(figures: Path, contents: list[ExperimentContent]) -> None:
    """Deletes figure files of an earlier report that this one did not write."""
    written = {f.stem for c in contents for p in c.plots for f in p.figures if f.png}
    for path in figures.iterdir():
        if path.suffix in FIGURE_SUFFIXES and path.stem not in written:
            path.unlink()


__all__ = ["write_report"]
