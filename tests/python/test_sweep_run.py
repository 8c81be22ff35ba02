"""Running sweeps: the results table, resuming, failures, kill -9, and the Dask backend."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from multiconn import load, run_sweep
from multiconn.sweep import driver
from multiconn.sweep.results import export
from multiconn.sweep.spec import SweepError

pytestmark = pytest.mark.native

ROOT = Path(__file__).resolve().parents[2]
BULK = ROOT / "examples" / "scenarios" / "bulk.toml"
SHARE = ROOT / "examples" / "scenarios" / "tcp_quic_share.toml"


def write_sweep(folder: Path, body: str, scenario: Path = BULK, reps: int = 2,
                name: str = "t") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'[experiment]\nname = "{name}"\nscenario = "{scenario}"\n'
                    f'repetitions = {reps}\n' + body)
    return path


RATES = '''
[set]
"run.duration" = "1 s"
"link.bottleneck.loss" = "1 %"

[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]
"flow.bulk.transport" = ["udp", "quic"]
'''


def test_results_table_has_one_row_per_run_and_flow(tmp_path):
    summary = run_sweep(write_sweep(tmp_path, RATES), tmp_path / "out", jobs=2)
    assert (summary.planned, summary.ran, summary.succeeded, summary.failed) == (8, 8, 8, 0)
    frame = load(tmp_path / "out")
    assert len(frame) == 8
    for column in ["experiment", "parameter", "value", "link.bottleneck.rate",
                   "flow.bulk.transport", "rep", "seed", "flow", "transport", "cc", "profile",
                   "goodput_mbps", "bytes_delivered", "completion_s", "jain_fairness"]:
        assert column in frame.columns, column
    assert list(frame["point"]) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert list(frame["rep"]) == [0, 1] * 4
    assert set(frame["parameter"]) == {"link.bottleneck.rate"}
    assert list(frame["value"]) == [10.0] * 4 + [20.0] * 4
    assert list(frame["transport"]) == ["udp", "udp", "quic", "quic"] * 2
    assert (frame["seed"].diff().fillna(1) != 0).all()
    # The two repetitions differ (random loss with different seeds), the points too.
    quic = frame[frame["transport"] == "quic"]
    assert quic["goodput_mbps"].nunique() == 4
    # Each run saw its own point's rate.
    assert (frame["goodput_mbps"] < frame["value"]).all()
    assert (frame["goodput_mbps"] > 0.3 * frame["value"]).all()
    # Each row is the run's own summary.
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        stored = dict(db.execute("SELECT run_key, summary_json FROM runs"))
    first = json.loads(stored[frame["run_key"][0]])
    assert first["flows"][0]["goodput_mbps"] == frame["goodput_mbps"][0]
    assert "wall_time_s" not in first


def test_rerunning_skips_what_is_done_and_more_repetitions_add_only_new_runs(tmp_path):
    path = write_sweep(tmp_path, RATES)
    run_sweep(path, tmp_path / "out", jobs=1)
    before = export(load(tmp_path / "out"), "csv", None)
    again = run_sweep(path, tmp_path / "out", jobs=1)
    assert (again.already_done, again.ran) == (8, 0)
    more = run_sweep(path, tmp_path / "out", jobs=2, repetitions=3)
    assert (more.planned, more.already_done, more.ran) == (12, 8, 4)
    frame = load(tmp_path / "out")
    assert len(frame) == 12
    kept = frame[frame["rep"] < 2].reset_index(drop=True)
    assert export(kept, "csv", None) == before


def test_a_failed_run_is_recorded_with_its_error_and_the_sweep_goes_on(tmp_path, monkeypatch):
    real_plan = driver.plan

    def plan_with_a_broken_point(spec, version, on_point=None):
        runs = real_plan(spec, version, on_point)
        broken = runs[2]
        task = broken.task.__class__(**{**broken.task.__dict__,
                                        "overrides": (("link.bottleneck.rate", "oops"),)})
        runs[2] = broken.__class__(broken.point, broken.rep, task, broken.scenario_json)
        return runs

    monkeypatch.setattr(driver, "plan", plan_with_a_broken_point)
    summary = run_sweep(write_sweep(tmp_path, RATES), tmp_path / "out", jobs=2)
    assert (summary.succeeded, summary.failed) == (7, 1)
    (failure,) = summary.failures
    assert (failure.point, failure.rep) == (1, 0)
    assert "ScenarioError" in failure.error and 'invalid rate "oops"' in failure.error
    assert failure.command.startswith("multiconn run ") and f"--seed {failure.seed}" in \
        failure.command
    frame = load(tmp_path / "out")
    row = frame[frame["status"] == "failed"]
    assert len(row) == 1 and row["flow"].isna().all() and "oops" in row["error"].iloc[0]
    # A re-run keeps the failure (the run is deterministic) unless asked to retry it.
    again = run_sweep(write_sweep(tmp_path, RATES), tmp_path / "out", jobs=2)
    assert again.ran == 0 and len(again.failures) == 1


def test_a_metric_that_is_not_a_summary_field_stops_the_sweep(tmp_path):
    path = write_sweep(tmp_path, RATES + '[metrics]\nflow = ["goodput_mbit"]\n')
    with pytest.raises(SweepError, match="metrics.flow: 'goodput_mbit' is not a field of the "
                                         r"flow summary \(did you mean 'goodput_mbps'\?\)"):
        run_sweep(path, tmp_path / "out", jobs=1)


def test_time_series_names_in_metrics_give_the_summary_fields(tmp_path):
    path = write_sweep(tmp_path, '[set]\n"run.duration" = "1 s"\n"link.bottleneck.loss" = "1 %"\n'
                       '"flow.bulk.transport" = "tcp"\n[params]\n"link.bottleneck.rate" = '
                       '["10 Mbit/s", "20 Mbit/s"]\n[metrics]\n'
                       'flow = ["srtt_ms", "drops_random_loss"]\n', reps=1)
    run_sweep(path, tmp_path / "out", jobs=1)
    frame = load(tmp_path / "out")
    assert frame["final_srtt_ms"].notna().all() and (frame["final_srtt_ms"] > 0).any()
    assert (frame["drops.random_loss"] > 0).all()
    assert "srtt_ms" not in frame.columns


def test_extra_metrics_and_nested_fields_become_columns(tmp_path):
    path = write_sweep(tmp_path, RATES + '[metrics]\nflow = ["drops.random_loss", '
                                         '"packets_delivered"]\n', reps=1)
    run_sweep(path, tmp_path / "out", jobs=1)
    frame = load(tmp_path / "out")
    assert (frame["drops.random_loss"] > 0).all()
    assert (frame["packets_delivered"] > 0).all()


SLOW = '''
[set]
"run.duration" = "40 s"

[params]
"link.bottleneck.rate" = ["30 Mbit/s", "40 Mbit/s", "50 Mbit/s"]
"link.bottleneck.delay" = ["5 ms", "10 ms", "20 ms", "30 ms"]

[metrics]
timeseries = true
'''


def _recorded(out: Path) -> int:
    try:
        with sqlite3.connect(out / "results.sqlite", timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _store_files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "timeseries").glob("*.parquet"))}


def test_kill_9_then_resume_gives_exactly_the_uninterrupted_results(tmp_path):
    scenario = tmp_path / "quic.toml"
    scenario.write_text(BULK.read_text().replace('transport = "udp"', 'transport = "quic"'))
    path = write_sweep(tmp_path, SLOW, scenario, reps=2)
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    proc = subprocess.Popen([sys.executable, "-m", "multiconn", "sweep", str(path), "--out",
                             str(killed), "--jobs", "2", "--quiet"], start_new_session=True)
    deadline = time.monotonic() + 120
    while _recorded(killed) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_at_kill = _recorded(killed)
    assert 3 <= done_at_kill < 24, "the sweep should be killed part-way"

    resumed = subprocess.run([sys.executable, "-m", "multiconn", "sweep", str(path), "--out",
                              str(killed), "--jobs", "2", "--json"],
                             capture_output=True, text=True, check=True)
    report = json.loads(resumed.stdout)
    assert report["already_done"] == done_at_kill
    assert report["ran"] == 24 - done_at_kill
    run_sweep(path, whole, jobs=2)

    with sqlite3.connect(killed / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT run_key) FROM runs").fetchone() \
            == (24, 24)
        assert db.execute("SELECT COUNT(*) FROM plan").fetchone()[0] == 24
    assert export(load(killed), "csv", None) == export(load(whole), "csv", None)
    assert _store_files(killed) == _store_files(whole)


def test_dask_local_cluster_gives_byte_identical_results(tmp_path):
    pytest.importorskip("dask.distributed")
    path = write_sweep(tmp_path, '''
[set]
"run.duration" = "2 s"
"link.bottleneck.loss" = "0.5 %"
[params]
"flow.tcp.cc" = ["newreno", "cubic"]
"link.bottleneck.queue" = ["20 packets", "67 packets"]
[metrics]
timeseries = true
''', SHARE, reps=2)
    local = run_sweep(path, tmp_path / "local", jobs=2, backend="local")
    dask = run_sweep(path, tmp_path / "dask", jobs=2, backend="dask")
    assert local.ran == dask.ran == 8
    for fmt in ("csv", "json"):
        assert export(load(tmp_path / "local"), fmt, None) == \
            export(load(tmp_path / "dask"), fmt, None)
    export(load(tmp_path / "local"), "parquet", tmp_path / "l.parquet")
    export(load(tmp_path / "dask"), "parquet", tmp_path / "d.parquet")
    assert (tmp_path / "l.parquet").read_bytes() == (tmp_path / "d.parquet").read_bytes()
    assert _store_files(tmp_path / "local") == _store_files(tmp_path / "dask")
    queries = "SELECT run_key, seed, scenario_json, summary_json FROM runs ORDER BY run_key"
    with sqlite3.connect(tmp_path / "local" / "results.sqlite") as a, \
            sqlite3.connect(tmp_path / "dask" / "results.sqlite") as b:
        assert a.execute(queries).fetchall() == b.execute(queries).fetchall()
    frame = load(tmp_path / "local")
    assert len(frame) == 16 and frame["jain_fairness"].between(0.5, 1.0).all()
    assert isinstance(frame, pd.DataFrame)


def test_a_store_written_by_an_incompatible_version_is_a_clear_error(tmp_path):
    from multiconn.sweep.store import StoreError

    run_sweep(write_sweep(tmp_path, RATES, reps=1), tmp_path / "out", jobs=1)
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        db.execute("UPDATE experiments SET spec_json = '{\"name\": \"t\"}'")
    with pytest.raises(StoreError, match="stored spec of experiment 't'.*cannot be read"):
        load(tmp_path / "out")


def _stored_runs(out: Path) -> dict[str, tuple]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return {row[0]: row[1:] for row in db.execute(
            "SELECT run_key, ok, summary_json, timeseries, wall_time_s FROM runs")}


def test_keeping_time_series_later_reruns_exactly_the_runs_that_lack_them(tmp_path):
    sweep = write_sweep(tmp_path, RATES)
    first = run_sweep(sweep, tmp_path / "out", jobs=1)
    assert first.ran == 8 and not list((tmp_path / "out").glob("timeseries/*.parquet"))
    sweep.write_text(sweep.read_text() + "\n[metrics]\ntimeseries = true\n")
    second = run_sweep(sweep, tmp_path / "out", jobs=1)
    assert (second.already_done, second.ran, second.rerun_missing_timeseries) == (0, 8, 8)
    assert len(list((tmp_path / "out").glob("timeseries/*.parquet"))) == 8
    third = run_sweep(sweep, tmp_path / "out", jobs=1)
    assert (third.already_done, third.ran, third.rerun_missing_timeseries) == (8, 0, 0)


def test_rerun_runs_exactly_the_selected_points_and_changes_nothing_else(tmp_path):
    sweep = write_sweep(tmp_path, RATES)
    run_sweep(sweep, tmp_path / "out", jobs=1)
    before = _stored_runs(tmp_path / "out")
    again = run_sweep(sweep, tmp_path / "out", jobs=1,
                      rerun="link.bottleneck.rate=20 Mbit/s,flow.bulk.transport=quic,rep=1")
    assert (again.ran, again.rerun_asked, again.already_done) == (1, 1, 7)
    after = _stored_runs(tmp_path / "out")
    changed = [k for k in before if before[k][3] != after[k][3]]  # wall time: rewritten rows
    assert len(changed) == 1
    assert all(before[k][:3] == after[k][:3] for k in before)  # same results, deterministic
    frame = load(tmp_path / "out")
    rerun_row = frame[(frame["run_key"] == changed[0])]
    assert list(rerun_row["rep"]) == [1] and list(rerun_row["flow.bulk.transport"]) == ["quic"]
    assert run_sweep(sweep, tmp_path / "out", jobs=1, rerun="all").ran == 8


@pytest.mark.parametrize("rerun, message", [
    ("speed=1", "'speed' is not an axis of t (axes: link.bottleneck.rate, flow.bulk.transport"),
    ("link.bottleneck.rate=30 Mbit/s", "'30 Mbit/s' is not a value of axis "
                                       "link.bottleneck.rate (values: 10 Mbit/s, 20 Mbit/s)"),
    ("rep=x", "rep expects a whole number, got 'x'"),
    ("quic", "'quic' is not NAME=VALUE"),
])
def test_a_bad_rerun_filter_is_refused_before_any_run(tmp_path, rerun, message):
    sweep = write_sweep(tmp_path, RATES)
    with pytest.raises(SweepError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_sweep(sweep, tmp_path / "out", jobs=1, rerun=rerun)
    assert not (tmp_path / "out" / "results.sqlite").exists()


def test_rerun_on_the_command_line(tmp_path, cli):
    sweep = write_sweep(tmp_path, RATES)
    assert cli("sweep", sweep, "--out", tmp_path / "out", "-q").returncode == 0
    done = cli("sweep", sweep, "--out", tmp_path / "out", "--rerun", "rep=0")
    assert done.returncode == 0, done.stderr
    assert "4 again as --rerun asked" in done.stderr
    bad = cli("sweep", sweep, "--out", tmp_path / "out", "--rerun", "nosuch=1")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_a_store_of_schema_1_is_read_as_it_is_and_upgraded_by_a_sweep(tmp_path):
    # Schema 1 had no runs.failure: a worker that died under a run was told only by its error.
    sweep = write_sweep(tmp_path, RATES, reps=1)
    out = tmp_path / "out"
    run_sweep(sweep, out, jobs=1)
    with sqlite3.connect(out / "results.sqlite") as db:
        db.execute("ALTER TABLE runs DROP COLUMN failure")
        db.execute("UPDATE meta SET value = '1' WHERE name = 'schema'")
        keys = [k for (k,) in db.execute("SELECT run_key FROM runs ORDER BY run_key")]
        db.execute("UPDATE runs SET ok = 0, summary_json = NULL, error = 'WorkerCrashed: the "
                   "worker process died during this run (...)' WHERE run_key = ?", (keys[0],))
        db.execute("UPDATE runs SET ok = 0, summary_json = NULL, error = 'RuntimeError: x' "
                   "WHERE run_key = ?", (keys[1],))
    assert list(load(out)["status"]).count("failed") == 2
    with sqlite3.connect(out / "results.sqlite") as db:  # reading changed nothing
        assert db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone() == ("1",)

    resumed = run_sweep(sweep, out, jobs=1)
    assert (resumed.ran, resumed.rerun_crashed, resumed.already_done) == (1, 1, 3)
    with sqlite3.connect(out / "results.sqlite") as db:
        assert db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone() == ("2",)
        failures = dict(db.execute("SELECT run_key, failure FROM runs"))
    assert failures == {keys[0]: None, keys[1]: "error", keys[2]: None, keys[3]: None}
    assert [f.error for f in resumed.failures] == ["RuntimeError: x"]
