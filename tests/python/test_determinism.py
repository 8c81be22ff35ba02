"""Same scenario and seed give byte-identical files; another seed gives other results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.native


def run_to(cli, examples: Path, out: Path, seed: int) -> None:
    proc = cli("run", examples / "cbr_lossy.toml", "--out", out, "--seed", seed, "--quiet")
    assert proc.returncode == 0, proc.stderr


def summary_without_wall_time(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert isinstance(summary.pop("wall_time_s"), float)
    return summary


def test_same_seed_gives_identical_files(cli, examples: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    run_to(cli, examples, a, 42)
    run_to(cli, examples, b, 42)
    for name in ("timeseries.parquet", "scenario.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert summary_without_wall_time(a) == summary_without_wall_time(b)
    # Byte-identical apart from the wall_time_s line.
    lines_a = (a / "summary.json").read_text().splitlines()
    lines_b = (b / "summary.json").read_text().splitlines()
    assert len(lines_a) == len(lines_b)
    differing = [x for x, y in zip(lines_a, lines_b, strict=True) if x != y]
    assert all('"wall_time_s"' in line for line in differing)


def test_other_seed_gives_other_results(cli, examples: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    run_to(cli, examples, a, 1)
    run_to(cli, examples, b, 2)
    assert (a / "timeseries.parquet").read_bytes() != (b / "timeseries.parquet").read_bytes()
    sa, sb = summary_without_wall_time(a), summary_without_wall_time(b)
    assert sa["seed"] == 1 and sb["seed"] == 2
    assert sa["flows"] != sb["flows"]


def test_a_cell_with_a_moving_ue_gives_identical_files_for_the_same_seed(
        cli, examples: Path, tmp_path: Path) -> None:
    """The cell's fading, HARQ draws, trajectory and per-UE rows are seeded like the rest."""
    moving = ("cell.lte.ues=[{ node = \"ue1\", trajectory = { start_m = 100, end_m = 900, "
              "speed = \"40 m/s\" } }, { node = \"ue2\", distance_m = 250 }]")
    outs = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        outs[name] = tmp_path / name
        proc = cli("run", examples / "lte_cell.toml", "--out", outs[name], "--seed", seed,
                   "--set", "run.duration=4s", "--set", moving, "--quiet")
        assert proc.returncode == 0, proc.stderr
    a, b, c = (outs[k] / "timeseries.parquet" for k in "abc")
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    summary = summary_without_wall_time(outs["a"])
    assert summary == summary_without_wall_time(outs["b"])
    assert summary["cells"][0]["ues"][0]["trajectory"]["speed_mps"] == 40
