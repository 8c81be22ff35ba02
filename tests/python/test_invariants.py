"""The invariant checker from Python and the command line: on by flag, argument or
environment, results unchanged, and a violation surfaced as `InvariantViolation` (Python) or
one error line with exit code 1 (CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import multiconn
from multiconn import runner
from multiconn._native import core
from multiconn.cli import main
from multiconn.errors import InvariantViolation

BULK = """
[run]
duration = "1 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "10 ms"
queue = "50 packets"
loss = 0.01

[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
"""

VIOLATION = ('invariant violated in scenario "scenario" (seed 1): link bottleneck (server -> client) '
             "at 0.012000000 s: delivered packet 41 (1500 B, flow 0) that is not inside it")


def test_results_are_the_same_with_the_checker_on_and_off() -> None:
    on = multiconn.run(BULK, check_invariants=True)
    off = multiconn.run(BULK, check_invariants=False)
    for result in (on, off):
        result.summary.pop("wall_time_s", None)
    assert json.dumps(on.summary, sort_keys=True) == json.dumps(off.summary, sort_keys=True)
    assert on.timeseries.equals(off.timeseries)


def test_the_environment_variable_turns_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def simulation() -> Any:
        return core().Simulation(BULK, "<string>", ".", [], None)

    monkeypatch.setenv("MULTICONN_CHECK_INVARIANTS", "1")
    assert simulation().checks_invariants
    monkeypatch.setenv("MULTICONN_CHECK_INVARIANTS", "0")
    assert not simulation().checks_invariants
    monkeypatch.delenv("MULTICONN_CHECK_INVARIANTS")
    sim = simulation()
    assert not sim.checks_invariants
    sim.set_check_invariants(True)
    assert sim.checks_invariants and sim.violation is None


def test_it_cannot_be_turned_on_once_the_run_started() -> None:
    sim = core().Simulation(BULK, "<string>", ".", [], None)
    sim.set_check_invariants(False)
    sim.run_until(0.1)
    with pytest.raises(multiconn.ScenarioError, match="only be turned on before the run starts"):
        sim.set_check_invariants(True)


class _Broken:
    """A native simulation whose checker reports a violation (the native models break none)."""

    def __init__(self, *args: Any) -> None:
        self._sim = core().Simulation(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sim, name)

    @property
    def violation(self) -> str:
        return VIOLATION


def _broken_core(monkeypatch: pytest.MonkeyPatch) -> None:
    class Core:
        Simulation = _Broken

    monkeypatch.setattr(runner, "core", lambda: Core)


def test_a_violation_raises_invariant_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_core(monkeypatch)
    with pytest.raises(InvariantViolation) as caught:
        multiconn.run(BULK, check_invariants=True)
    assert str(caught.value) == VIOLATION


def test_the_cli_flag_runs_checked_and_a_violation_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "bulk.toml"
    scenario.write_text(BULK, encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(tmp_path / "ok"), "--check-invariants", "-q"]) == 0
    assert (tmp_path / "ok" / "summary.json").exists()
    _broken_core(monkeypatch)
    capsys.readouterr()
    assert main(["run", str(scenario), "--out", str(tmp_path / "bad"), "--check-invariants", "-q"]) == 1
    assert capsys.readouterr().err == f"multiconn: error: {VIOLATION}\n"
    assert not (tmp_path / "bad" / "summary.json").exists()
