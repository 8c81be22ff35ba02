"""The Python API: run() on paths, strings and dicts; the time series; writing; the GIL."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import multiconn
import pandas as pd
import pytest
from multiconn import _native

pytestmark = pytest.mark.native
_core = pytest.importorskip("multiconn._core", reason="multiconn._core is not built",
                            exc_type=ImportError)

COLUMNS = [
    "time_s", "kind", "name", "direction", "bytes_delivered", "throughput_mbps",
    "drops_queue", "drops_random_loss", "drops_link_down", "drops_udp_buffer",
    "drops_pdcp_late", "drops_pdcp_window",
    "queue_packets", "queue_bytes", "cwnd_bytes", "bytes_in_flight", "srtt_ms",
    "retransmissions", "spurious_retransmissions", "path", "leg", "reorder_delay_ms",
    "reorder_buffer_pdus", "drops_ack", "ue", "sinr_db", "cqi", "mcs", "rbs_per_tti", "tbs",
    "tb_errors", "tbs_new", "tb_errors_first", "tbs_lost", "rlc_buffer_max_bytes",
    "rlc_buffer_bytes",
]
SHORT = {"run.duration": "2 s"}


def without_wall_time(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "wall_time_s"}


def test_path_string_and_dict_give_the_same_summary(examples: Path) -> None:
    path = examples / "bulk.toml"
    text = path.read_text(encoding="utf-8")
    from_path = multiconn.run(path, overrides=SHORT)
    from_str_path = multiconn.run(str(path), overrides=SHORT)
    from_text = multiconn.run(text, overrides=SHORT)
    from_dict = multiconn.run(tomllib.loads(text), overrides=SHORT)
    expected = without_wall_time(from_path.summary)
    assert expected["events"] > 0
    for other in (from_str_path, from_text, from_dict):
        assert without_wall_time(other.summary) == expected
        pd.testing.assert_frame_equal(other.timeseries, from_path.timeseries)


def test_timeseries_has_the_documented_columns(examples: Path) -> None:
    frame = multiconn.run(examples / "cbr_lossy.toml", overrides=SHORT).timeseries
    assert list(frame.columns) == COLUMNS
    assert len(frame) > 0
    assert frame["time_s"].dtype == "float64"
    assert frame["throughput_mbps"].dtype == "float64"
    for name in ("bytes_delivered", "drops_queue", "drops_random_loss", "drops_link_down"):
        assert frame[name].dtype == "int64", name
    for name in ("kind", "name", "direction"):
        assert isinstance(frame[name].dtype, pd.CategoricalDtype), name
    assert set(frame["kind"]) == {"flow", "link"}
    assert set(frame.loc[frame["kind"] == "flow", "direction"]) == {""}


def test_timeseries_bytes_add_up_to_the_summary(examples: Path) -> None:
    result = multiconn.run(examples / "cbr_lossy.toml", seed=3, overrides=SHORT)
    frame = result.timeseries
    flows = frame[frame["kind"] == "flow"].groupby("name", observed=True)["bytes_delivered"].sum()
    assert result.summary["flows"]
    for flow in result.summary["flows"]:
        assert flow["bytes_delivered"] > 0
        assert flows[flow["name"]] == flow["bytes_delivered"]
    links = frame[frame["kind"] == "link"].groupby(["name", "direction"], observed=True)
    per_link = links["bytes_delivered"].sum()
    for link in result.summary["links"]:
        assert per_link[(link["name"], link["direction"])] == link["bytes_delivered"]


def test_overrides_as_dict_and_pairs_with_typed_values(examples: Path) -> None:
    path = examples / "bulk.toml"
    by_dict = multiconn.run(path, overrides={"run.duration": "1 s", "run.seed": 9})
    by_pairs = multiconn.run(path, overrides=[("run.duration", "1 s"), ("run.seed", 9)])
    assert by_dict.summary["seed"] == 9
    assert by_dict.scenario["run"]["seed"] == 9
    assert without_wall_time(by_dict.summary) == without_wall_time(by_pairs.summary)


def test_seed_argument_overrides_the_scenario_seed(examples: Path) -> None:
    result = multiconn.run(examples / "bulk.toml", seed=123, overrides={"run.duration": "1 s"})
    assert result.summary["seed"] == 123


def test_summary_has_wall_time_right_after_events(examples: Path) -> None:
    summary = multiconn.run(examples / "bulk.toml", overrides=SHORT).summary
    keys = list(summary)
    assert keys[keys.index("events") + 1] == "wall_time_s"
    assert summary["wall_time_s"] >= 0.0


def test_invalid_scenario_raises_scenario_error() -> None:
    with pytest.raises(multiconn.ScenarioError) as info:
        multiconn.run({"run": {"duration": "1 s"}, "link": [{"name": "x", "colour": 1}]})
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)


def test_scenario_error_carries_file_line_field_and_message(examples: Path) -> None:
    text = (examples / "bulk.toml").read_text(encoding="utf-8")
    bad = text.replace('"40 Mbit/s"', '"-40 Mbit/s"', 1)
    assert bad != text
    with pytest.raises(multiconn.ScenarioError) as info:
        multiconn.validate(bad)
    e = info.value
    assert (e.file, e.path, e.set) == ("<string>", "link.bottleneck.rate", None)
    assert isinstance(e.line, int) and e.line > 0
    assert "negative" in e.message
    assert str(e) == f"<string>:{e.line}: link.bottleneck.rate: {e.message}"
    with pytest.raises(multiconn.ScenarioError) as info:
        multiconn.validate(examples / "bulk.toml", overrides={"link.bottleneck.rate": "fast"})
    e = info.value
    assert (e.line, e.set, e.path) == (None, "link.bottleneck.rate=fast", "link.bottleneck.rate")
    assert str(e).startswith(f"{e.file} (--set link.bottleneck.rate=fast): link.bottleneck.rate: ")
    # Errors of a running simulation have a message only.
    session = multiconn.Session(examples / "bulk.toml", overrides=SHORT)
    with pytest.raises(multiconn.ScenarioError) as info:
        session.connection("nope").open_stream("x")
    e = info.value
    assert (e.file, e.line, e.set, e.path) == (None, None, None, None)
    assert e.message == str(e)


def test_the_python_copies_of_the_schema_match_the_native_one() -> None:
    # Used only when the extension is not built (pure-Python tests, analysis).
    assert _native.FALLBACK_TIMESERIES_COLUMNS == _core.TIMESERIES_COLUMNS
    assert _native.FALLBACK_MESSAGE_COLUMNS == _core.MESSAGE_COLUMNS
    assert _native.FALLBACK_MESSAGE_KINDS == _core.MESSAGE_KINDS
    assert _native.FALLBACK_DURATION_UNITS == _core.DURATION_UNITS
    assert _native.TIMESERIES_COLUMNS is _core.TIMESERIES_COLUMNS
    assert [name for name, _ in _core.TIMESERIES_COLUMNS] == COLUMNS


def test_every_column_has_its_declared_type(examples: Path) -> None:
    result = multiconn.run(examples / "bulk.toml", overrides=SHORT)
    for name, kind in _core.TIMESERIES_COLUMNS:
        dtype = result.timeseries[name].dtype
        assert isinstance(dtype, pd.CategoricalDtype) if kind == "str" else dtype == kind, name


def test_validate_returns_the_resolved_scenario(examples: Path) -> None:
    resolved = multiconn.validate(examples / "bulk.toml", overrides={"link.bottleneck.rate": "30 Mbit/s"})
    assert resolved["link"][0]["rate"] == "30 Mbit/s"
    assert resolved["name"] == "bulk"


def test_write_creates_the_result_files(examples: Path, tmp_path: Path) -> None:
    result = multiconn.run(examples / "bulk.toml", overrides=SHORT)
    out = tmp_path / "deep" / "out"
    written = result.write(out, csv=True)
    names = sorted(p.name for p in written)
    assert names == ["scenario.json", "summary.json", "timeseries.csv", "timeseries.parquet"]
    text = (out / "summary.json").read_text(encoding="utf-8")
    assert text.endswith("}\n") and json.loads(text) == result.summary
    assert json.loads((out / "scenario.json").read_text()) == result.scenario
    back = pd.read_parquet(out / "timeseries.parquet")
    pd.testing.assert_frame_equal(back, result.timeseries)
    csv = pd.read_csv(out / "timeseries.csv", keep_default_na=False, na_values=[""])
    assert list(csv.columns) == COLUMNS and len(csv) == len(result.timeseries)


def test_native_simulation_can_finish_once(examples: Path) -> None:
    text = (examples / "bulk.toml").read_text()
    sim = _core.Simulation(text, "bulk.toml", str(examples), [("run.duration", "1 s")], 5)
    assert sim.end_time_s == 1.0 and not sim.done and sim.events == 0
    assert sim.run_until(0.5) is False
    assert sim.now_s == 0.5 and sim.events > 0
    assert sim.run_until(10.0) is True and sim.done
    summary, columns, qlog, messages = sim.finish()
    assert qlog == [] and messages == []
    assert json.loads(summary)["seed"] == 5
    assert [c[0] for c in columns][:2] == ["time_s", "kind"]
    assert [c[1] for c in columns][:2] == ["float64", "category"]
    with pytest.raises(RuntimeError):
        sim.finish()
    with pytest.raises(RuntimeError):
        sim.run_until(2.0)


def test_run_leaves_the_gil_free(examples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another thread advances while Rust runs a chunk; the main thread holds the GIL otherwise.

    With a huge switch interval the interpreter never takes the GIL from the main thread, so the
    counter can only move inside `run_until` if that call releases the GIL.
    """
    counter = 0
    moved_during_chunks = 0
    stop = threading.Event()
    ready = threading.Event()

    def count() -> None:
        nonlocal counter
        ready.set()
        while not stop.is_set():
            counter += 1
            time.sleep(0.0001)

    real = _core.Simulation

    class Probe:
        def __init__(self, *args: object) -> None:
            self._sim = real(*args)

        def run_until(self, t_s: float, max_events: int | None = None) -> bool:
            nonlocal moved_during_chunks
            before = counter
            done = self._sim.run_until(t_s, max_events)
            moved_during_chunks += counter - before
            return done

        def __getattr__(self, name: str) -> object:
            return getattr(self._sim, name)

    monkeypatch.setattr(_core, "Simulation", Probe)
    thread = threading.Thread(target=count, daemon=True)
    thread.start()
    ready.wait()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        result = multiconn.run(examples / "bulk.toml", overrides={"run.duration": "300 s"})
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        thread.join()
    assert result.summary["events"] > 0
    assert moved_during_chunks > 0


TWO_FLOWS = """
[run]
duration = "2 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "5 ms"
queue = "1 BDP"
""" + "".join(f"""
[[flow]]
name = "{name}"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "{rate}"
""" for name, rate in [("a", "2 Mbit/s"), ("b", "20 Mbit/s")])


def test_a_flow_switched_off_by_an_override_is_not_run() -> None:
    on = multiconn.run(TWO_FLOWS).summary
    assert [f["name"] for f in on["flows"]] == ["a", "b"] and on["disabled_flows"] == []
    # Max-min: the 2 Mbit/s cbr flow gets its rate, the other the 8 left.
    assert [f["fair_share_mbps"] for f in on["flows"]] == [2.0, 8.0]
    off = multiconn.run(TWO_FLOWS, overrides={"flow.b.enabled": False}).summary
    assert [f["name"] for f in off["flows"]] == ["a"] and off["disabled_flows"] == ["b"]
    assert off["flows"][0]["fair_share_mbps"] == 2.0
    assert off["fairness"]["flows"] == ["a"]


def test_a_write_that_fails_midway_leaves_the_folder_as_it_was(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """All or nothing: a full disk while the second run's files are written (here the time
    series) leaves the first run's summary and scenario together, and no staging folder."""
    import errno

    from multiconn import result as result_module

    scenario = Path(__file__).resolve().parents[2] / "examples/scenarios/cbr_lossy.toml"
    out = tmp_path / "r"
    multiconn.run(scenario, seed=1).write(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    second = multiconn.run(scenario, seed=2)

    def full_disk(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(result_module, "write_parquet", full_disk)
    with pytest.raises(OSError, match="No space left"):
        second.write(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    monkeypatch.undo()
    second.write(out)
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    assert not [p for p in out.iterdir() if p.name.startswith(".writing-")]


def test_an_empty_out_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "multiconn", "run",
                           str(Path(__file__).resolve().parents[2] / "examples/scenarios/cbr_lossy.toml"), "--out", "", "-q"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--out '': give a folder for the results" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_readmes_csv_rate_trace_form_runs_with_a_bare_unit(tmp_path: Path) -> None:
    """README: `{ model = "csv", file = "x.csv", column = "rate", unit = "Mbit/s", ... }`; a
    bare unit means one of it, a rate works as before, anything else is one line naming
    `unit`."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert 'column = "rate", unit = "Mbit/s"' in readme
    (tmp_path / "x.csv").write_text("time,rate\n0,10\n1,20\n2,6\n")
    scenario = """
[run]
duration = "3 s"
[[link]]
name = "bottleneck"
between = ["a", "b"]
rate = { model = "csv", file = "x.csv", column = "rate", unit = "UNIT", time_column = "time", time_format = "seconds" }
reverse = { rate = "100 Mbit/s" }
queue = "100 packets"
[[flow]]
name = "f"
from = "a"
to = "b"
transport = "udp"
app = "cbr"
rate = "40 Mbit/s"
route = ["bottleneck"]
"""
    goodput = {}
    for unit in ("Mbit/s", "1 Mbit/s", "125 kB/s"):
        path = tmp_path / "s.toml"
        path.write_text(scenario.replace("UNIT", unit))
        goodput[unit] = multiconn.run(path).summary["flows"][0]["goodput_mbps"]
    # 10, 20 and 6 Mbit/s for a second each: 12 Mbit/s on average, whichever way it is said.
    assert goodput["Mbit/s"] == goodput["1 Mbit/s"] == goodput["125 kB/s"]
    assert 11.0 < goodput["Mbit/s"] <= 12.0
    path.write_text(scenario.replace("UNIT", "furlongs"))
    with pytest.raises(multiconn.ScenarioError, match=r'unit = "furlongs": expected a rate unit'):
        multiconn.run(path)
