"""How `multiconn.runner` advances a run: in chunks bounded by virtual time and by a budget
of events, so that a run of many events per unit of virtual time still returns to Python
(progress bar, Ctrl-C) often; the results do not depend on the chunks. And the warning before
a run whose rates imply hours of events (field report, defect 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import multiconn.progress
from multiconn import runner
from multiconn.frame import NativeTable, parquet_bytes

pytestmark = pytest.mark.native

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "scenarios"

STORM = """\
name = "storm"

[run]
duration = "20 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "320 Gbit/s"
delay = "0 ms"
queue = "100 packets"

[[flow]]
name = "storm"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "320 Gbit/s"
packet_size = "40 B"
"""
"""The field report's storm: a 320 Gbit/s CBR of 40 B packets into a 320 Gbit/s link, both
the documented maximum; 2 x 10^7 events per 10 ms of virtual time."""


class Updates:
    """Stands in for the progress bar: keeps the event count of every update."""

    seen: list[int] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        Updates.seen = []

    def __enter__(self) -> Updates:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def update(self, sim_time_s: float, events: int) -> None:
        Updates.seen.append(events)


def _storm(tmp_path: Path, duration: str) -> Path:
    path = tmp_path / "storm.toml"
    path.write_text(STORM.replace('"20 s"', f'"{duration}"'))
    return path


def _steps(updates: list[int]) -> list[int]:
    return [b - a for a, b in zip([0, *updates], updates)]


def test_a_chunk_fires_at_most_the_event_budget(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """0.5 ms of the storm is one 10 ms chunk of virtual time but 10^6 events: control comes
    back to Python (the bar, Ctrl-C) after every `EVENT_BUDGET` events at the most."""
    monkeypatch.setattr(multiconn.progress, "RunProgress", Updates)
    finished = runner.simulate(_storm(tmp_path, "0.5 ms"), progress=True)
    events = json.loads(finished.summary_json)["events"]
    assert events > 2 * runner.EVENT_BUDGET
    assert Updates.seen[-1] == events
    assert max(_steps(Updates.seen)) <= runner.EVENT_BUDGET
    assert len(Updates.seen) >= events / runner.EVENT_BUDGET

    small = runner.simulate(_storm(tmp_path, "0.5 ms"), progress=True, event_budget=100_000)
    assert max(_steps(Updates.seen)) <= 100_000
    assert len(Updates.seen) >= events / 100_000
    assert small.summary_json == finished.summary_json


def test_ctrl_c_stops_the_storm_within_one_budget(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A KeyboardInterrupt (what Ctrl-C raises between two chunks) ends a run of 20 s of the
    storm, 4 x 10^10 events, after its first budget of events."""
    fired: list[int] = []

    class Interrupt(Updates):
        def update(self, sim_time_s: float, events: int) -> None:
            fired.append(events)
            raise KeyboardInterrupt

    monkeypatch.setattr(multiconn.progress, "RunProgress", Interrupt)
    with pytest.raises(KeyboardInterrupt):
        runner.simulate(_storm(tmp_path, "20 s"), progress=True, event_budget=50_000)
    assert fired == [50_000]


SCENARIOS = [
    ("bulk.toml", "1 s"),
    ("tcp_quic_share.toml", "1 s"),
    ("mpquic_handover.toml", "2 s"),
    ("split_queues.toml", "0.5 s"),
    ("lte_cell.toml", "0.2 s"),
    ("quic_slow_reader.toml", "0.5 s"),
]


def _outputs(finished: runner.Finished) -> tuple[Any, ...]:
    messages = (parquet_bytes(NativeTable(finished.messages, messages=True))
                if finished.messages else None)
    return (finished.summary_json, parquet_bytes(NativeTable(finished.columns)), messages,
            finished.qlog)


@pytest.mark.parametrize("scenario, duration", SCENARIOS)
def test_results_do_not_depend_on_the_event_budget(scenario: str, duration: str) -> None:
    """The same run in chunks of 1 event, of 7, of the default budget and in one call gives
    the same summary, time series and message table, byte for byte."""
    path = EXAMPLES / scenario
    overrides = {"run.duration": duration}
    whole = _outputs(runner.simulate(path, None, overrides, chunked=False))
    for budget in (1, 7, None):
        assert _outputs(runner.simulate(path, None, overrides, event_budget=budget)) == whole, budget


def test_the_event_budget_must_be_a_whole_number() -> None:
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="event_budget"):
            runner.simulate(EXAMPLES / "bulk.toml", None, {"run.duration": "0.1 s"},
                            event_budget=bad)  # type: ignore[arg-type]


def _estimate(path: Path, **overrides: str) -> list[tuple[float, str, str]]:
    from multiconn._native import core
    from multiconn.source import normalize_overrides, resolve_source

    source = resolve_source(path)
    sim = core().Simulation(source.text, source.origin, source.base_dir,
                            normalize_overrides(overrides), None)
    return list(sim.event_estimate)


def test_the_storm_is_estimated_at_its_measured_event_rate(tmp_path: Path) -> None:
    """2 x 10^7 events per 10 ms measured; the estimate of 20 s: 10^9 packets a second from
    the source and as many through the link, 4 x 10^10 events."""
    parts = _estimate(_storm(tmp_path, "20 s"))
    assert [who for _, who, _ in parts] == ['flow "storm"', 'link "bottleneck" (forward)']
    assert sum(events for events, _, _ in parts) == pytest.approx(4e10)
    assert parts[0][2] == "320 Gbit/s in 40 B packets over 20 s"
    measured = json.loads(runner.simulate(_storm(tmp_path, "0.1 ms"), chunked=False)
                          .summary_json)["events"]
    estimate = sum(events for events, _, _ in _estimate(_storm(tmp_path, "0.1 ms")))
    assert estimate / 2 <= measured <= estimate * 2


def test_the_storm_is_warned_about_naming_its_flow_and_link(tmp_path: Path) -> None:
    line = runner.long_run_warning(_estimate(_storm(tmp_path, "20 s")))
    assert line is not None
    assert line.startswith("this run implies about 4.0e+10 events (~5.6 h at 2e+06 events/s)")
    assert 'flow "storm" ~2.0e+10 (320 Gbit/s in 40 B packets over 20 s)' in line
    assert 'link "bottleneck" (forward) ~2.0e+10' in line


@pytest.mark.parametrize("scenario", ["bulk.toml", "tcp_quic_share.toml", "lte_cell.toml",
                                      "mpquic_handover.toml", "uplink_dc.toml"])
def test_the_examples_are_not_warned_about(scenario: str) -> None:
    assert runner.long_run_warning(_estimate(EXAMPLES / scenario)) is None


def test_bulk_is_estimated_from_its_first_link(examples: Path) -> None:
    """A UDP bulk flow sends at its first link's rate: 40 Mbit/s in 1500 B packets for 20 s,
    66 667 packets, and as many cross the link."""
    parts = _estimate(examples / "bulk.toml")
    assert [(round(e), who) for e, who, _ in parts] == [
        (66667, 'flow "bulk"'), (66667, 'link "bottleneck" (forward)')]


def test_the_cli_warns_before_the_run_and_keeps_the_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`multiconn run` prints the warning on stderr once, before the run (the threshold
    lowered so that a short storm crosses it), and the summary keeps it; bulk.toml gets
    none."""
    from multiconn.cli import main

    monkeypatch.setattr(runner, "EVENT_WARNING", 1e5)
    started: list[str] = []
    real = runner.simulate

    def spy(*args: Any, **kwargs: Any) -> runner.Finished:
        def note(*a: Any, **k: Any) -> None:
            started.append(capsys.readouterr().err)

        monkeypatch.setattr(multiconn.progress.RunProgress, "__enter__",
                            lambda self: (note(), self)[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "simulate", spy)
    out = tmp_path / "storm"
    assert main(["run", str(_storm(tmp_path, "0.1 ms")), "--out", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert len(started) == 1 and started[0].startswith(
        "multiconn: warning: this run implies about"), started
    assert "this run implies" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert any(w.startswith("this run implies about") for w in summary["warnings"])

    monkeypatch.setattr(runner, "EVENT_WARNING", 1e9)
    assert main(["run", str(EXAMPLES / "bulk.toml"), "--out", str(tmp_path / "bulk"),
                 "--set", "run.duration=1s", "-q"]) == 0
    assert "this run implies" not in capsys.readouterr().err
    assert "warnings" not in json.loads((tmp_path / "bulk" / "summary.json").read_text())
