"""The CLI on good input: help, version, run outputs, and internal-error reporting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import multiconn
import pytest
from multiconn import cli as cli_module


@pytest.mark.parametrize("command", [[], ["run"], ["validate"]])
def test_help_has_a_description_and_an_example(command: list[str], cli) -> None:
    proc = cli(*command, "--help")
    assert proc.returncode == 0
    assert "example:" in proc.stdout and "multiconn" in proc.stdout


def test_version(cli) -> None:
    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"multiconn {multiconn.__version__}"


@pytest.mark.native
def test_run_writes_files_and_prints_tables(cli, examples: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = cli("run", examples / "bulk.toml", "--out", out, "--set", "run.duration=2s", "--csv")
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in out.iterdir()} == {
        "summary.json", "timeseries.parquet", "timeseries.csv", "scenario.json",
    }
    assert "Flows" in proc.stdout and "Links" in proc.stdout and "bottleneck" in proc.stdout
    assert json.loads((out / "scenario.json").read_text())["run"]["duration"] == "2s"


@pytest.mark.native
@pytest.mark.parametrize("loss", ["1", '{ model = "trace", file = "ones.txt" }'])
def test_a_bulk_udp_run_into_a_link_that_loses_everything_gives_goodput_0(
        cli, examples: Path, tmp_path: Path, loss: str) -> None:
    """loss = 1 used to end the run as stalled (exit 1): it is a run with goodput 0, whatever
    --stall-limit says (the source is paced at the line rate, so time advances)."""
    scenario = tmp_path / "bulk.toml"
    scenario.write_text((examples / "bulk.toml").read_text())
    (tmp_path / "ones.txt").write_text("1\n")
    out = tmp_path / "out"
    proc = cli("run", scenario, "--out", out, "-q", "--set", "run.duration=1s",
               "--set", f"link.bottleneck.loss={loss}", "--stall-limit", "100")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    (flow,) = summary["flows"]
    assert (flow["goodput_mbps"], flow["bytes_delivered"]) == (0, 0)
    assert summary["sim_time_s"] == 1.0 and "incomplete" not in summary
    # 40 Mbit/s: one 1500-byte packet per 300 us, 3334 in the second.
    assert flow["bytes_sent"] == 3334 * 1472


@pytest.mark.native
def test_run_json_prints_the_summary(cli, examples: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = cli("run", examples / "bulk.toml", "--out", out, "--seed", "4", "--json",
               "--set", "run.duration=1s")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed == json.loads((out / "summary.json").read_text())
    assert printed["seed"] == 4 and printed["flows"][0]["name"] == "bulk"


@pytest.mark.native
@pytest.mark.parametrize("name", ["bulk.toml", "cbr_lossy.toml", "trace_lte.toml", "mpquic_handover.toml"])
def test_examples_validate(name: str, cli, examples: Path) -> None:
    if name == "trace_lte.toml":
        trace = examples / "../../../shared/data/traces/mahimahi/ATT-LTE-driving-2016.down"
        if not trace.exists():
            pytest.skip("the shared trace collection is not beside the repository")
    proc = cli("validate", examples / name)
    assert proc.returncode == 0, proc.stderr
    assert "valid" in proc.stdout


@pytest.mark.native
def test_handover_example_reports_its_path_manager(cli, examples: Path, tmp_path: Path) -> None:
    proc = cli("run", examples / "mpquic_handover.toml", "--out", tmp_path / "ho", "--json")
    assert proc.returncode == 0, proc.stderr
    flow = json.loads(proc.stdout)["flows"][0]
    assert flow["path_manager"] == [
        {"at_s": 10.2, "path": 1, "action": "abandon"},
        {"at_s": 14.2, "path": 1, "action": "open", "path_id": 2, "backup": False},
        {"at_s": 20.0, "path": 1, "action": "backup"},
        {"at_s": 30.0, "path": 1, "action": "available"},
    ]
    for end in ("server", "client"):
        path1 = flow["paths"][1][end]
        assert (path1["status"], path1["path_id"], path1["path_ids_opened"]) == ("active", 2, 2)
    # Both operators carried data; together more than operator A alone could (20 Mbit/s).
    assert flow["paths"][1]["server"]["bytes_sent"] > 10_000_000
    assert flow["goodput_mbps"] > 20.0


@pytest.mark.native
def test_validate_json(cli, examples: Path) -> None:
    proc = cli("validate", examples / "bulk.toml", "--json", "--set", "flow.bulk.size=10MB")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["flow"][0]["size"] == "10MB"


class PanicException(BaseException):
    """Stands in for pyo3_runtime.PanicException (same name, also a BaseException)."""


@pytest.mark.parametrize(
    "error, kind", [(RuntimeError("boom\nsecond line"), "RuntimeError"), (PanicException("boom"), "Rust panic")]
)
def test_internal_error_is_one_line_exit_1(
    error: BaseException, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr("multiconn.runner.run", explode)
    (tmp_path / "s.toml").write_text('name = "x"\n')
    code = cli_module.main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith(f"multiconn: internal error: {kind}: boom")
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()

    code = cli_module.main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"), "--verbose"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" in err and err.rstrip().splitlines()[-1].startswith("multiconn: internal error")


def test_the_run_summary_counts_pdcp_drops():
    from multiconn.report import flows_table

    summary = {"flows": [{"name": "dc", "transport": "quic", "app": "bulk",
                          "drops": {"queue": 1, "random_loss": 2, "link_down": 0,
                                    "udp_buffer": 3, "pdcp_late": 4, "pdcp_window": 5}}]}
    table = flows_table(summary)
    assert table.columns[-1].header == "drops q/l/d/u/p"
    assert list(table.columns[-1].cells) == ["1/2/0/3/9"]


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    # `multiconn list | head -1` when the reader has already gone: the read end of the pipe
    # is closed before the command writes its first line, so every write fails (a reader
    # that closes after the first line races with a listing that fits in the pipe buffer).
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "multiconn", "list"], stdout=write_end,
                              stderr=subprocess.PIPE, cwd=Path(__file__).resolve().parents[2],
                              check=False)
    finally:
        os.close(write_end)
    err = proc.stderr.decode()
    assert proc.returncode == 141, (proc.returncode, err)
    assert "internal error" not in err and "BrokenPipe" not in err, err
