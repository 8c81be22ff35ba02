#!/usr/bin/env python3
"""Benchmark: `multiconn reproduce` of the dual-connectivity study's whole Table 3.

    .venv/bin/python bench/bench_dc.py [--estimate] [--reps N]

By default runs every `dc-*` catalogue entry (22 entries, 7,200 runs at the catalogue's 10
repetitions) into one folder with all local cores, report included, and times it: about a
quarter of an hour on a 2-core machine. With `--estimate` it times only the throughput sweep
(dc-batch-size: 9 batch sizes x 6 stacks x 10 repetitions of a 100 MB download) and the
fairness sweep (dc-batch-size-fairness: 9 x 3 x 10 runs of three flows over 180 s), and
extrapolates to the whole Table 3 from the cost per run of each kind, weighted by each entry's
run count. Writes the numbers as JSON to bench-out/dc.json (read by bench/scoreboard.py).
The goal: the whole Table 3, 10 repetitions each, in at most 11 minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from multiconn.sweep.catalog import entries
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).parent / "multiconn"


def timed_reproduce(name: str, out: Path, reps: int | None) -> float:
    cmd = [str(CLI), "reproduce", name, "--out", str(out), "--quiet"]
    if reps is not None:
        cmd += ["--reps", str(reps)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=None,
                        help="repetitions per point (default: the catalogue's, 10)")
    parser.add_argument("--estimate", action="store_true",
                        help="time two sweeps and extrapolate instead of running the whole Table 3")
    args = parser.parse_args()
    if not args.estimate:
        whole_table3(args.reps)
        return
    work = Path(tempfile.mkdtemp(prefix="bench-dc-"))
    try:
        timings = {}
        for name in ("dc-batch-size", "dc-batch-size-fairness"):
            entry = next(e for e in entries() if e.name == name)
            runs = entry.points * (args.reps or entry.spec.repetitions)
            seconds = timed_reproduce(name, work / name, args.reps)
            timings[name] = {"runs": runs, "seconds": round(seconds, 2),
                             "seconds_per_run": round(seconds / runs, 4)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # Table 3: every dc-* entry; fairness entries cost like the fairness sweep, the others
    # (100 MB downloads, fixed rate or trace) like the throughput sweep.
    table3 = [e for e in entries() if e.name.startswith("dc-")]
    per_run = {kind: timings[name]["seconds_per_run"]
               for kind, name in (("fairness", "dc-batch-size-fairness"), ("throughput", "dc-batch-size"))}
    runs = {"fairness": 0, "throughput": 0}
    for e in table3:
        kind = "fairness" if e.name.endswith("-fairness") else "throughput"
        runs[kind] += e.points * e.spec.repetitions
    estimate = sum(runs[k] * per_run[k] for k in runs)
    result = {
        "cores": os.cpu_count(),
        "measured": "estimate",
        "catalogue_repetitions": args.reps is None,
        "batch_size": timings,
        "table3_entries": len(table3),
        "table3_runs": runs,
        "table3_estimate_s": round(estimate, 1),
        "goal_s": 11 * 60,
    }
    table = Table(title=f"multiconn reproduce, dual connectivity ({os.cpu_count()} cores)")
    for col in ("sweep", "runs", "wall time", "per run"):
        table.add_column(col)
    for name, t in timings.items():
        table.add_row(name, str(t["runs"]), f"{t['seconds']:.1f} s", f"{1000 * t['seconds_per_run']:.0f} ms")
    table.add_row("Table 3 (estimate)", str(sum(runs.values())), f"{estimate / 60:.1f} min", "")
    Console().print(table)
    out = ROOT / "bench-out"
    out.mkdir(exist_ok=True)
    (out / "dc.json").write_text(json.dumps(result, indent=2) + "\n")


def whole_table3(reps: int | None) -> None:
    """Runs every dc-* entry into one folder (report included) and times it."""
    table3 = [e for e in entries() if e.name.startswith("dc-")]
    runs = sum(e.points * (reps or e.spec.repetitions) for e in table3)
    print(f"bench_dc: the whole Table 3, {len(table3)} entries, {runs} runs on {os.cpu_count()} cores")
    work = Path(tempfile.mkdtemp(prefix="bench-dc-"))
    try:
        seconds = timed_reproduce("dc-*", work / "table3", reps)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "cores": os.cpu_count(),
        "measured": "whole",
        # The goal is for the catalogue's repetitions; with --reps the run is only indicative.
        "catalogue_repetitions": reps is None,
        "table3_entries": len(table3),
        "table3_runs": runs,
        "table3_s": round(seconds, 1),
        "goal_s": 11 * 60,
    }
    table = Table(title=f"multiconn reproduce 'dc-*', report included ({os.cpu_count()} cores)")
    for col in ("entries", "runs", "wall time", "per run", "goal"):
        table.add_column(col)
    table.add_row(str(len(table3)), str(runs), f"{seconds / 60:.1f} min", f"{1000 * seconds / runs:.0f} ms",
                  f"{result['goal_s'] / 60:.0f} min")
    Console().print(table)
    out = ROOT / "bench-out"
    out.mkdir(exist_ok=True)
    (out / "dc.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
