"""One run of a sweep, as a worker performs it (in a local process or on a Dask worker).

The outcome carries only deterministic content — the summary without `wall_time_s`, the
time series and the message table as Parquet bytes — plus the wall time on the side, so that every backend stores
byte-identical results. Any exception becomes a failed outcome with a one-line error; the
sweep goes on.
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass

from .plan import RunTask


@dataclass(frozen=True)
class Outcome:
    """What came of a run."""

    run_key: str
    ok: bool
    summary_json: str | None
    """The run's summary (canonical JSON, no wall time) when it succeeded."""
    error: str | None
    """`Type: message` when it failed (the traceback's last line for internal errors)."""
    wall_time_s: float
    timeseries: bytes | None = None
    """The time series as Parquet, when the sweep keeps them."""
    messages: bytes | None = None
    """The message table as Parquet, when the run has one (app = "messages" flows)."""
    crashed: bool = False
    """The run failed because its worker process died under it (killed from outside, as the
    OOM killer does, or a crash in native code), not by an error of its own: nothing says it
    would fail again, so a resumed sweep runs it again."""


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=True)


def execute(task: RunTask) -> Outcome:
    """Performs the run; never raises for a failing scenario."""
    from ..frame import NativeTable, parquet_bytes
    from ..runner import simulate
    from ..source import ScenarioSource

    started = time.perf_counter()
    try:
        source = ScenarioSource(task.scenario_text, task.origin, task.base_dir)
        finished = simulate(source, task.seed, list(task.overrides), chunked=False)
        if finished.stalled is not None:
            raise RuntimeError(finished.stalled)
        summary = json.loads(finished.summary_json)
        summary.pop("wall_time_s", None)
        series = parquet_bytes(NativeTable(finished.columns)) if task.keep_timeseries else None
        messages = (parquet_bytes(NativeTable(finished.messages, messages=True))
                    if finished.messages else None)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # recorded, not raised: one failed run must not stop a sweep
        # (BaseException: a Rust panic arrives as pyo3's PanicException)
        kind = type(exc).__name__
        message = " ".join(str(exc).split()) or traceback.format_exc().strip().splitlines()[-1]
        return Outcome(task.run_key, False, None, f"{kind}: {message}",
                       time.perf_counter() - started)
    return Outcome(task.run_key, True, _canonical(summary), None,
                   time.perf_counter() - started, series, messages)


def execute_batch(tasks: list[RunTask]) -> list[Outcome]:
    """Several runs in one call (fewer round trips for very short runs)."""
    return [execute(task) for task in tasks]


def execute_emulated(task: RunTask) -> Outcome:
    """Performs the run in the emulator (real time, real stacks; docs/emulator.md); never
    raises for a failing run. The summary keeps the emulator's fields; the time series is
    the emulator's."""
    import shutil
    import tempfile
    from pathlib import Path

    from ..emulate import emulate

    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="multiconn-emu-sweep-"))
    try:
        scenario = work / "scenario.toml"
        scenario.write_text(task.scenario_text)
        summary = emulate(scenario, work / "out", overrides=list(task.overrides), seed=task.seed,
                          quiet=True, base_dir=task.base_dir)
        summary.pop("wall_time_s", None)
        series = (work / "out" / "timeseries.parquet").read_bytes() if task.keep_timeseries else None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # recorded, not raised, like a simulated run's failure
        message = " ".join(str(exc).split()) or type(exc).__name__
        return Outcome(task.run_key, False, None, f"{type(exc).__name__}: {message}",
                       time.perf_counter() - started)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Outcome(task.run_key, True, _canonical(summary), None, time.perf_counter() - started,
                   series, None)
