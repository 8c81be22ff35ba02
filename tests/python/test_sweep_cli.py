"""The sweep commands of the CLI: sweep, list, reproduce, results; errors and exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import assert_one_error_line

pytestmark = pytest.mark.native

ROOT = Path(__file__).resolve().parents[2]
BULK = ROOT / "examples" / "scenarios" / "bulk.toml"


def sweep_file(folder: Path, body: str) -> Path:
    path = folder / "s.toml"
    path.write_text(f'[experiment]\nname = "s"\nscenario = "{BULK}"\nrepetitions = 2\n'
                    '[set]\n"run.duration" = "1 s"\n' + body)
    return path


@pytest.mark.parametrize("body, message", [
    ('[params]\n"link.bottleneck.bogus" = [1, 2]\n', "unknown field `bogus`"),
    ('[params]\n"link.bottleneck.loss" = { from = 3, to = 1, step = 1, unit = "%" }\n',
     "empty range"),
    ('[params]\n"link.bottleneck.rate" = ["10 Mbit/s", "0 Mbit/s"]\n',
     'point 1 (link.bottleneck.rate=0 Mbit/s)'),
    ('[params]\n"link.bottleneck.rate" = ["10 Mbit/s", "20 parsecs"]\n',
     'the values mix units (Mbit/s, parsecs)'),
])
def test_a_malformed_sweep_fails_before_any_run(cli, tmp_path, body, message):
    out = tmp_path / "out"
    result = cli("sweep", sweep_file(tmp_path, body), "--out", out)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("multiconn: error: ")
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (out / "results.sqlite").exists()


MILLION = ('[params]\n'
           '"link.bottleneck.rate" = { from = 1, to = 1000, step = 1, unit = "Mbit/s" }\n'
           '"link.bottleneck.delay" = { from = 1, to = 1000, step = 1, unit = "ms" }\n')


def test_a_sweep_of_a_million_runs_is_refused_from_its_count(cli, tmp_path, monkeypatch):
    # 1000 x 1000 points: refused before any point is built or validated, with the count,
    # the limit and the way past it.
    from multiconn import run_sweep
    from multiconn.sweep import driver, plan
    from multiconn.sweep.spec import SweepError

    def never(*args, **kwargs):
        raise AssertionError("a point was built or validated")

    path = sweep_file(tmp_path, MILLION)
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        patch.setattr(driver, "plan", never)
        patch.setattr(plan, "points", never)
        with pytest.raises(SweepError, match=r"s\.toml: 2000000 runs .* --max-runs 2000000"):
            run_sweep(path, out)
    assert not out.exists()
    result = cli("sweep", path, "--out", out)
    assert result.returncode == 2, result.stderr
    assert_one_error_line(result.stderr, "s.toml", "2000000 runs (1000000 points × 2 "
                          "repetitions)", "more than the 100000", "--max-runs 2000000")
    assert not out.exists()
    # A limit of one's own, counted with the repetitions --reps gives.
    small = sweep_file(tmp_path, '[params]\n"link.bottleneck.rate" = ["10 Mbit/s", '
                                 '"20 Mbit/s"]\n')
    with pytest.raises(SweepError, match=r"6 runs \(2 points × 3 repetitions\), more than the "
                                         r"5 a sweep may plan .* --max-runs 6$"):
        run_sweep(small, out, repetitions=3, max_runs=5)
    bad = cli("sweep", small, "--out", out, "--max-runs", "0")
    assert bad.returncode == 2 and "--max-runs" in bad.stderr
    assert not out.exists()


def test_max_runs_lets_a_larger_sweep_run(cli, tmp_path):
    small = sweep_file(tmp_path, '[params]\n"link.bottleneck.rate" = ["10 Mbit/s", '
                                 '"20 Mbit/s"]\n')
    refused = cli("sweep", small, "--out", tmp_path / "out", "--max-runs", "3")
    assert refused.returncode == 2 and "--max-runs 4" in refused.stderr
    ran = cli("sweep", small, "--out", tmp_path / "out", "--max-runs", "4", "--json")
    assert ran.returncode == 0 and json.loads(ran.stdout)["ran"] == 4


def test_many_points_show_their_validation_unless_quiet(tmp_path, monkeypatch, capsys):
    from multiconn import run_sweep
    from multiconn.sweep import driver, progress

    path = sweep_file(tmp_path, '[params]\n"link.bottleneck.rate" = ["10 Mbit/s", '
                                '"20 Mbit/s", "30 Mbit/s"]\n')
    run_sweep(path, tmp_path / "few", jobs=1, progress=True)
    assert "validating" not in capsys.readouterr().err  # three points: nothing to wait for
    monkeypatch.setattr(driver, "VALIDATION_PROGRESS_FROM", 3)
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.0)  # a log line at every point
    run_sweep(path, tmp_path / "many", jobs=1, progress=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if "validating" in line]
    assert [line.split(",")[0] for line in lines] == [
        "s: validating: 1/3 points", "s: validating: 2/3 points", "s: validating: 3/3 points"]
    run_sweep(path, tmp_path / "quiet", jobs=1, progress=False)
    assert capsys.readouterr().err == ""


def test_sweep_then_results_in_every_format(cli, tmp_path):
    path = sweep_file(tmp_path, '[params]\n"link.bottleneck.rate" = ["10 Mbit/s", '
                                '"20 Mbit/s"]\n')
    out = tmp_path / "out"
    result = cli("sweep", path, "--out", out, "--jobs", "2", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["planned"], summary["ran"], summary["failed"]) == (4, 4, 0)

    csv = cli("results", out)
    assert csv.returncode == 0, csv.stderr
    frame = pd.read_csv(io.StringIO(csv.stdout))
    assert list(frame["value"]) == [10.0, 10.0, 20.0, 20.0]
    assert frame["goodput_mbps"].between(0.9 * frame["value"], frame["value"]).all()

    as_json = json.loads(cli("results", out, "--format", "json").stdout)
    assert [row["rep"] for row in as_json] == [0, 1, 0, 1]
    assert as_json[0]["goodput_mbps"] == pytest.approx(frame["goodput_mbps"][0])

    parquet = tmp_path / "r.parquet"
    assert cli("results", out, "--format", "parquet", "-o", parquet).returncode == 0
    assert pd.read_parquet(parquet)["seed"].tolist() == frame["seed"].tolist()
    missing = cli("results", out, "--format", "parquet")
    assert missing.returncode == 2 and "--output" in missing.stderr

    again = cli("sweep", path, "--out", out, "--json")
    assert json.loads(again.stdout)["already_done"] == 4


def test_results_of_a_folder_without_a_store_is_bad_input(cli, tmp_path):
    result = cli("results", tmp_path)
    assert result.returncode == 2
    assert "holds no results" in result.stderr


def test_a_file_that_is_no_results_store_is_one_line_of_bad_input(cli, tmp_path):
    # Random bytes where results.sqlite should be: a clear refusal naming the file (exit 2),
    # not an internal error, and the file is left as it was.
    import random

    junk = bytes(random.Random(7).randrange(256) for _ in range(8192))
    (tmp_path / "results.sqlite").write_bytes(junk)
    result = cli("results", tmp_path)
    assert result.returncode == 2, result.stderr
    line = assert_one_error_line(result.stderr, "results.sqlite", "is not a results store")
    assert "internal error" not in line
    assert (tmp_path / "results.sqlite").read_bytes() == junk


def test_a_store_that_cannot_be_written_is_a_store_error_naming_it(tmp_path):
    # SQLite's own full-disk error (SQLITE_FULL), made by capping the database's pages: the
    # write is refused as a whole, with the store named, and what was stored before stays.
    from multiconn.errors import StoreError
    from multiconn.sweep.execute import Outcome
    from multiconn.sweep.store import Store

    with Store(tmp_path) as store:
        store.record(Outcome("k0", True, '{"a": 1}', None, 0.1), 1, "v", "{}")
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StoreError, match=r"cannot write into '.*results\.sqlite'.*full"):
            store.record(Outcome("k1", True, "x" * 200_000, None, 0.1), 1, "v", "{}")
        assert set(store.finished_keys()) == {"k0"}
    # A time series that cannot be written names its file.
    blocked = tmp_path / "timeseries"
    blocked.write_text("a file where the folder should be")
    with Store(tmp_path) as store, pytest.raises(StoreError, match="cannot write '.*timeseries"):
        store.record(Outcome("k2", True, "{}", None, 0.1, timeseries=b"PAR1"), 1, "v", "{}")


def test_list_shows_the_catalogue_one_line_each(cli):
    result = cli("list")
    assert result.returncode == 0, result.stderr
    sweeps, _, others = result.stdout.strip().partition("\n\n")
    names = [line.split()[0] for line in sweeps.splitlines()]
    assert {"mathis", "fairness", "udp-rcvbuf", "download-time", "cc-rtt"} <= set(names)
    # The experiments that are not sweeps follow, with their commands.
    assert "multiconn drive download --segment residential|road --out DIR" in others
    entries = json.loads(cli("list", "--json").stdout)
    mathis = next(e for e in entries if e["name"] == "mathis")
    assert mathis["runs"] == mathis["points"] * mathis["repetitions"] == 100
    assert mathis["quick_runs"] < mathis["runs"]


def test_list_takes_extra_catalogue_folders(cli, tmp_path):
    sweep_file(tmp_path, "")
    result = cli("list", "--catalog", tmp_path)
    assert result.returncode == 0, result.stderr
    assert any(line.split()[0] == "s" for line in result.stdout.splitlines())
    (tmp_path / "broken.toml").write_text("[experiment]\nscenario = 3\n")
    broken = cli("list", "--catalog", tmp_path)
    assert broken.returncode == 2 and "broken.toml: experiment.scenario" in broken.stderr


def test_reproduce_quick_runs_the_smoke_version(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("reproduce", "mathis", "--quick", "--out", out, "--no-report", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["experiment"] == "mathis" and summary["ran"] == 8
    frame = pd.read_csv(io.StringIO(cli("results", out).stdout))
    assert set(frame["link.path.forward.loss"]) == {1.0, 2.0}
    assert set(frame["protocol"]) == {"TCP", "QUIC"}
    unknown = cli("reproduce", "nope", "--out", out)
    assert unknown.returncode == 2 and "no experiment named 'nope'" in unknown.stderr


def test_reproduce_takes_several_names_and_globs_into_one_folder(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("reproduce", "dc-batch-size*", "mathis", "dc-batch-size", "--quick",
                 "--out", out, "--no-report", "--json")
    assert result.returncode == 0, result.stderr
    names = [s["experiment"] for s in json.loads(result.stdout)]
    assert names == ["dc-batch-size", "dc-batch-size-fairness", "mathis"]
    frame = pd.read_csv(io.StringIO(cli("results", out).stdout))
    assert set(frame["experiment"]) == set(names)
    nothing = cli("reproduce", "zz-*", "--out", out)
    assert nothing.returncode == 2 and "matches 'zz-*'" in nothing.stderr


@pytest.mark.parametrize("command", ["sweep", "list", "reproduce", "results", "report"])
def test_every_command_has_help(cli, command):
    result = cli(command, "--help")
    assert result.returncode == 0
    assert "usage: multiconn " + command in result.stdout


def test_bad_option_values_are_usage_errors(cli, tmp_path):
    result = cli("sweep", sweep_file(tmp_path, ""), "--out", tmp_path / "o", "--jobs", "0")
    assert result.returncode == 2 and "--jobs" in result.stderr
    result = cli("sweep", sweep_file(tmp_path, ""), "--out", tmp_path / "o", "--scheduler",
                 "tcp://x:1")
    assert result.returncode == 2 and "--scheduler needs --backend dask" in result.stderr
