"""The memory a run's results cost once it is over (field report, defect 13): the time series
leaves Rust as typed buffers that Arrow wraps without a copy, never as a Python object per
value, and the recorder's bins are freed as the columns are built. A run of 1000 flows and
2001 links (500 200 rows) peaked at 822 MiB against its own 122 MiB before; the bound here is
1.5 times its own peak."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.native

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_memory", ROOT / "bench" / "bench_memory.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/self/status")
def test_the_results_of_1000_flows_cost_at_most_half_the_runs_memory(tmp_path: Path) -> None:
    """`multiconn run` in a child process: its peak memory at the end is at most 1.5 times
    its peak before the run is finished (the series converted, the Parquet written)."""
    bench = _bench()
    scenario = tmp_path / "many.toml"
    scenario.write_text(bench.many_flows_scenario(1000))
    marks = bench.measure(scenario, tmp_path / "out")
    assert marks["peak_at_end_mib"] <= 1.5 * marks["peak_before_finish_mib"], marks


def test_a_finished_run_hands_over_buffers_not_values(examples: Path) -> None:
    """`Simulation.finish` gives each column as bytes (the values, the codes of a text
    column) or as one value for a column that holds it in every row; no list of values."""
    from multiconn._native import core
    from multiconn.source import resolve_source

    source = resolve_source(examples / "tcp_quic_share.toml")
    sim = core().Simulation(source.text, source.origin, source.base_dir,
                            [("run.duration", "2 s")], None)
    sim.run_until(10.0)
    _, columns, _, _ = sim.finish()
    kinds = {}
    for name, kind, data, validity, nulls, extra in columns:
        kinds[name] = kind
        assert data is None or isinstance(data, bytes), name
        assert validity is None or isinstance(validity, bytes), name
        if data is None:
            assert isinstance(extra, (int, float)), name
        if kind == "category":
            assert isinstance(data, bytes) and extra == sorted(set(extra)), name
    assert kinds["kind"] == "category" and kinds["time_s"] == "float64"
    assert kinds["bytes_delivered"] == "int64"


def test_writing_a_run_never_builds_the_table_from_python_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, examples: Path) -> None:
    """`multiconn run` writes the Parquet from the native buffers: neither the route through
    Python lists (`_arrow_array`) nor pandas is taken, and the file is the one the pandas
    route writes."""
    import pandas as pd

    from multiconn import frame
    from multiconn.cli import main

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the table was built from Python values")

    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        patch.setattr(frame, "_arrow_array", refuse)
        patch.setattr(frame, "build_frame", refuse)
        patch.setattr(pd.DataFrame, "__init__", refuse)
        assert main(["run", str(examples / "mpquic_handover.toml"), "--out", str(out),
                     "--set", "run.duration=3s", "-q"]) == 0
    from multiconn.runner import simulate

    finished = simulate(examples / "mpquic_handover.toml", None, {"run.duration": "3s"})
    assert (out / "timeseries.parquet").read_bytes() == frame.parquet_bytes(
        frame.build_frame({name: column.tolist() for name, column in finished.columns.items()}))


def test_the_dataframe_of_native_columns_is_the_one_of_their_values(examples: Path) -> None:
    """`RunResult.timeseries` built from the buffers equals the frame built from the values
    (types, categories, NaN), for the time series and the message table."""
    import pandas as pd

    from multiconn.frame import NativeTable, build_frame, build_messages_frame
    from multiconn.runner import simulate

    root = examples.parents[1]
    for path, duration in [(examples / "lte_cell.toml", "0.3 s"),
                           (root / "python/multiconn/catalog/scenarios/v2x_two_paths.toml", "2 s")]:
        finished = simulate(path, None, {"run.duration": duration})
        values = {name: column.tolist() for name, column in finished.columns.items()}
        pd.testing.assert_frame_equal(NativeTable(finished.columns).frame(), build_frame(values))
        if finished.messages:
            messages = {name: column.tolist() for name, column in finished.messages.items()}
            pd.testing.assert_frame_equal(NativeTable(finished.messages, messages=True).frame(),
                                          build_messages_frame(messages))


def test_the_memory_benchmark_reports_both_peaks(tmp_path: Path) -> None:
    """bench/bench_memory.py (in `make bench`) on a small scenario: its JSON has the run's
    own peak and the peak at the end."""
    out = tmp_path / "memory.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_memory.py"),
                           "--flows", "20", "--duration", "2s", "--out", str(out)],
                          capture_output=True, text=True, check=False,
                          env=dict(os.environ, COLUMNS="100"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["flows"] == 20 and report["links"] == 41
    assert 0 < report["peak_before_finish_mib"] <= report["peak_at_end_mib"]
