"""Silent no-ops in a finished sweep: repetitions of a scenario with nothing random, and
points whose axis values change nothing, are named in the sweep's notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from multiconn import run_sweep
from multiconn.sweep.noops import outcome

pytestmark = pytest.mark.native

ROOT = Path(__file__).resolve().parents[2]
BULK = ROOT / "examples" / "scenarios" / "bulk.toml"

# 40 Mbit/s with a 10 ms delay: a 1 s TCP transfer never fills a queue of 2000 or 4000
# packets, but does fill one of 5.
QUEUES = '''
[set]
"run.duration" = "1 s"
"flow.bulk.transport" = "tcp"
{loss}
[params]
"link.bottleneck.queue" = ["2000 packets", "4000 packets", "5 packets"]
'''


def sweep(folder: Path, loss: str = "") -> Path:
    path = folder / "q.toml"
    path.write_text(f'[experiment]\nname = "q"\nscenario = "{BULK}"\nrepetitions = 2\n'
                    + QUEUES.format(loss=loss))
    return path


def test_a_scenario_with_nothing_random_and_a_queue_never_filled_are_named(tmp_path: Path) -> None:
    summary = run_sweep(sweep(tmp_path), tmp_path / "out", jobs=1)
    assert summary.succeeded == 6
    assert len(summary.notes) == 2, summary.notes
    reps, points = summary.notes
    assert reps.startswith("the 2 repetitions of every point gave identical results"), reps
    assert "repetitions = 1" in reps
    assert "=2000 packets" in points and "=4000 packets" in points and "5 packets" not in points, points
    assert "one run reported 2 times" in points
    assert json.loads(json.dumps(summary.to_dict()))["notes"] == summary.notes
    assert summary.note.startswith("identical results: every point's 2 repetitions")


def test_random_loss_makes_repetitions_and_points_differ(tmp_path: Path) -> None:
    summary = run_sweep(sweep(tmp_path, '"link.bottleneck.loss" = "1 %"'), tmp_path / "out", jobs=1)
    assert summary.succeeded == 6
    assert summary.notes == []


def test_the_cli_prints_the_notes_in_one_line_and_in_full_with_verbose(tmp_path: Path,
                                                                       cli) -> None:
    proc = cli("sweep", sweep(tmp_path), "--out", tmp_path / "out", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.startswith("note:")]
    assert notes == ["note: identical results: every point's 2 repetitions were identical; "
                     "2 points gave the results of 1 (--verbose: where and why)"], proc.stderr
    proc = cli("sweep", sweep(tmp_path), "--out", tmp_path / "out", "--jobs", "1", "--verbose")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stderr.split())
    assert "note: the 2 repetitions of every point gave identical results" in text
    assert "note: points link.bottleneck.queue=2000 packets; link.bottleneck.queue=4000 packets" in text


def test_the_outcome_ignores_what_the_run_echoes_and_sees_what_it_measured() -> None:
    run = {"seed": 1, "wall_time_s": 0.2, "scenario": "a", "events": 10,
           "flows": [{"name": "f", "cc": "cubic", "goodput_mbps": 9.5, "drops": {"queue": 3}}],
           "links": [{"name": "l", "capacity_mbps": 10.0, "bytes_delivered": 100}]}
    echoed = json.loads(json.dumps(run))
    echoed.update(seed=2, wall_time_s=0.3, scenario="b")
    echoed["flows"][0]["cc"] = "newreno"
    echoed["links"][0]["capacity_mbps"] = 20.0
    assert outcome(echoed) == outcome(run)
    for change in (("events", 11), ("flows", [{"goodput_mbps": 9.5, "drops": {"queue": 4}}])):
        other = dict(run)
        other[change[0]] = change[1]
        assert outcome(other) != outcome(run), change
