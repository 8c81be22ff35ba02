"""A run with a cell layout (docs/mobility.md): the run folder's mobility_events.csv and the
mobility figure of `multiconn plot`, drawn from the summary's events and RSRP record."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from conftest import EXAMPLES

pytestmark = pytest.mark.native

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def drive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import multiconn

    out = tmp_path_factory.mktemp("drive") / "run"
    multiconn.run(EXAMPLES / "handover_route.toml", overrides={"run.duration": "40 s"}).write(out)
    return out


def test_the_events_file_lists_each_handover_with_its_interruption(drive: Path) -> None:
    with open(drive / "mobility_events.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    ends = [r for r in rows if r["event"] == "handover_end"]
    # 40 s at 20 m/s from x = 100: the borders at 250 and 750 m are passed.
    assert [(r["source"], r["target"], float(r["interruption_ms"])) for r in ends] == [("0", "1", 40.0), ("1", "2", 40.0)]
    starts = [r for r in rows if r["event"] == "handover_start"]
    assert all(float(s["t_s"]) < float(e["t_s"]) for s, e in zip(starts, ends))
    times = [float(r["t_s"]) for r in rows]
    assert times == sorted(times)


def test_the_mobility_figure_follows_the_serving_cell_and_rsrp(drive: Path) -> None:
    from multiconn.plot import plot_run

    drawn = {f.stem: f for f in plot_run(drive, formats=("png",))}
    assert "mobility-ran-ue" in drawn, list(drawn)
    figure = drawn["mobility-ran-ue"]
    assert figure.files[0].read_bytes().startswith(PNG_SIGNATURE)
    # Only runs with a layout get one.
    assert not any(stem.startswith("mobility-") for stem in drawn if stem != "mobility-ran-ue")


def test_a_run_without_a_layout_has_no_events_file(tmp_path: Path) -> None:
    import multiconn

    out = tmp_path / "bulk"
    multiconn.run(EXAMPLES / "bulk.toml", overrides={"run.duration": "1 s"}).write(out)
    assert not (out / "mobility_events.csv").exists()
