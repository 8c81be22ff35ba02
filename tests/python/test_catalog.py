"""The experiment catalogue: every entry is valid in full, and its quick version runs and
reports in CI."""

from __future__ import annotations

import html
import re

import pytest
from multiconn import load, run_sweep
from multiconn.sweep import catalog
from multiconn.sweep.plan import plan
from multiconn.sweep.report import write_report

pytestmark = pytest.mark.native

ENTRIES = catalog.entries()


def test_the_catalogue_is_not_empty():
    assert len(ENTRIES) >= 5


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_every_point_of_the_full_version_is_valid(entry):
    runs = plan(entry.spec, "test")
    assert len(runs) == entry.points * entry.spec.repetitions
    assert entry.spec.name == entry.name, "an entry's name is its file name"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_the_quick_version_runs_and_reports(entry, tmp_path):
    summary = run_sweep(entry.spec, tmp_path, jobs=2, quick=True)
    assert summary.failed == 0, summary.failures
    assert summary.ran == entry.quick_runs
    frame = load(tmp_path)
    assert (frame["status"] == "ok").all()
    assert frame["goodput_mbps"].gt(0).all()
    index = write_report(tmp_path)
    assert entry.spec.title in html.unescape(index.read_text())
    figures = {p.name for p in (index.parent / "figures").iterdir()}
    for plot in entry.spec.plots:
        pattern = re.compile(rf"{re.escape(entry.name)}-{re.escape(plot.name)}(-\d+)?\.(png|svg)")
        assert sum(bool(pattern.fullmatch(f)) for f in figures) >= 2, (plot.name, figures)
