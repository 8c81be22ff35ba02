"""`multiconn emulate`: run a scenario in real time with real stacks (docs/emulator.md).

The work is done by the `multiconn-emu` program (crate `crates/emu`), which `make setup`
builds and installs beside this package's interpreter; this module finds it, passes the
interpreter (for the aioquic stack), reads back what it wrote (its summary, the scenario and
the simulator's time-series table as CSV) into a `RunResult` and writes the run folder with
it, so that an emulated run has the files and columns of a simulated one (`timeseries.parquet`
included), and prints a short table.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Sequence

from ._native import TIMESERIES_COLUMNS
from .errors import EmulationError, EmulationFailed
from .frame import NativeTable
from .result import SCENARIO_FILE, SUMMARY_FILE, TIMESERIES_CSV_FILE, RunResult

PROGRAM = "multiconn-emu"


def find_program() -> str:
    """The path of `multiconn-emu`: $MULTICONN_EMU, beside this interpreter, or on PATH."""
    explicit = os.environ.get("MULTICONN_EMU")
    if explicit:
        if not Path(explicit).is_file():
            raise EmulationError(f"MULTICONN_EMU={explicit}: no such file")
        return explicit
    beside = Path(sys.executable).parent / PROGRAM
    if beside.is_file():
        return str(beside)
    found = shutil.which(PROGRAM)
    if found:
        return found
    raise EmulationError(f"{PROGRAM} is not installed: run `make setup` (it builds crates/emu and installs "
                   f"the program into the virtualenv), or set MULTICONN_EMU to its path")


def emulate(scenario: str, out: str | os.PathLike[str], overrides: Sequence[tuple[str, str]] = (),
            seed: int | None = None, time_limit: float | None = None, budget_us: float | None = None,
            max_rate_mbps: float | None = None, realtime: bool = False, quiet: bool = False,
            base_dir: str | os.PathLike[str] | None = None) -> dict:
    """Runs `scenario` in the emulator, writes its files into `out`, returns the summary.

    Raises EmulationError with the emulator's one-line reason when the scenario or this
    machine cannot be emulated (not root, no TUN, a tool missing, a link too fast),
    EmulationFailed when a run fails.
    """
    argv = [find_program(), str(scenario), "--out", str(out), "--python", sys.executable]
    for key, value in overrides:
        argv += ["--set", f"{key}={value}"]
    if seed is not None:
        argv += ["--seed", str(seed)]
    if time_limit is not None:
        argv += ["--time-limit", str(time_limit)]
    if budget_us is not None:
        argv += ["--budget-us", str(budget_us)]
    if max_rate_mbps is not None:
        argv += ["--max-rate-mbps", str(max_rate_mbps)]
    if realtime:
        argv.append("--realtime")
    if base_dir is not None:
        argv += ["--base-dir", str(base_dir)]
    if quiet:
        argv.append("-q")
    # Progress lines and warnings pass through as they come; an "error: " line is the reason
    # of a refusal or failure, raised instead.
    error = ""
    interrupted = False
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None

        def stop(signum: int, frame: object) -> None:
            # Ctrl-C or SIGTERM: the emulator stops in order and writes what it measured
            # (`stopped_by = "interrupted"`); a Ctrl-C on a terminal reaches it too, and once
            # more changes nothing. The results are then written below, as for any run.
            nonlocal interrupted
            interrupted = True
            proc.send_signal(signal.SIGINT)

        with _signals_forwarded(stop):
            for line in proc.stderr:
                if line.startswith("error: "):
                    error = line.removeprefix("error: ").strip()
                elif not quiet or line.startswith("warning: "):
                    sys.stderr.write(line)
    message = error or f"{PROGRAM} failed with exit code {proc.returncode}"
    if proc.returncode == 2:
        raise EmulationError(message)
    if proc.returncode != 0:
        raise EmulationFailed(message)
    result = read_emulated(out)
    result.write(out, csv=True)
    if interrupted:
        raise KeyboardInterrupt
    return result.summary


@contextlib.contextmanager
def _signals_forwarded(handler: Callable[[int, object], None]) -> Iterator[None]:
    """SIGINT and SIGTERM go to `handler` while the block runs (in the main thread only:
    elsewhere, as in a sweep's workers, signals stay as they are)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def read_emulated(out: str | os.PathLike[str]) -> RunResult:
    """The result the emulator left in `out`: its summary, the scenario, and the time series
    from its ``timeseries.csv`` (the simulator's columns, typed as the core declares them)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    out_dir = Path(out)
    arrow_types = {"float64": pa.float64(), "int64": pa.int64(), "str": pa.string()}
    table = pacsv.read_csv(out_dir / TIMESERIES_CSV_FILE, convert_options=pacsv.ConvertOptions(
        column_types={name: arrow_types[kind] for name, kind in TIMESERIES_COLUMNS},
        null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False))
    expected = [name for name, _ in TIMESERIES_COLUMNS]
    if table.column_names != expected:
        raise EmulationFailed(f"{out_dir / TIMESERIES_CSV_FILE}: columns {table.column_names}, expected {expected} "
                              f"(the emulator and this package are from different versions: run `make setup`)")
    summary = json.loads((out_dir / SUMMARY_FILE).read_text())
    scenario = json.loads((out_dir / SCENARIO_FILE).read_text())
    return RunResult(summary, NativeTable(table.to_pydict()), scenario)


def summary_lines(summary: dict) -> list[str]:
    """What the terminal shows after a run: per flow its stack and goodput, then timing."""
    lines = []
    for f in summary["flows"]:
        goodput = f.get("goodput_mbps")
        source = {"application": "application", "size over completion": "size / completion time"}
        measured = (f"{goodput:.2f} Mbit/s ({source.get(f.get('goodput_from'), 'application')})" if goodput is not None
                    else f"{f['ip_goodput_mbps']:.2f} Mbit/s (IP, emulator)")
        done = f"done in {f['completion_s']:.2f} s" if f.get("completion_s") is not None else "not finished"
        code = f.get("client_exit_code")
        status = "" if code in (0, None) else f", client exit code {code}"
        lines.append(f"{f['name']}: {f['stack']}, {measured}, {done}{status}")
    t = summary["timing"]
    if t["packets"]:
        lines.append(f"timing: {t['packets']} packets, late by {t['median_us']:.0f} µs median, "
                     f"{t['p99_us']:.0f} µs p99, {t['max_us']:.0f} µs max (budget {t['budget_us']:.0f} µs): "
                     f"{t['verdict']}")
    return lines
