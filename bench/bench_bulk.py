#!/usr/bin/env python3
"""Benchmark: run examples/scenarios/bulk.toml for 60 s of virtual time and report speed.

Prints events/s, simulated time / wall time and peak memory (ru_maxrss) as a table, and writes
the same numbers as JSON to bench-out/bulk.json. The run goes through the `multiconn` command
in a child process, so the peak memory is that of one run.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "examples" / "scenarios" / "bulk.toml"


def run_once(duration: str, seed: int) -> dict[str, float]:
    """One run in a child process; returns its summary numbers and peak memory."""
    out = Path(tempfile.mkdtemp(prefix="multiconn-bench-"))
    try:
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "multiconn", "run", str(SCENARIO), "--out", str(out),
             "--seed", str(seed), "--set", f"run.duration={duration}", "--quiet", "--json"],
            capture_output=True, text=True, check=False,
        )
        process_s = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(f"bench: multiconn run failed:\n{proc.stderr}")
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        summary = json.loads(proc.stdout)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    wall = summary["wall_time_s"]
    return {
        "sim_time_s": summary["sim_time_s"],
        "events": summary["events"],
        "wall_time_s": wall,
        "process_time_s": process_s,
        "events_per_s": summary["events"] / wall if wall > 0 else float("inf"),
        "speedup": summary["sim_time_s"] / wall if wall > 0 else float("inf"),
        # Peak of the largest child waited for so far (the only one); Linux reports KiB.
        "peak_rss_mib": peak_kib / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", default="60s", help="virtual time to simulate (60s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "bulk.json")
    args = parser.parse_args()

    result = run_once(args.duration, args.seed)
    report = {
        "benchmark": "bulk",
        "scenario": str(SCENARIO.relative_to(ROOT)),
        "duration": args.duration,
        "seed": args.seed,
        "python": platform.python_version(),
        "machine": platform.machine(),
        **result,
    }
    table = Table(title=f"bulk.toml, run.duration={args.duration}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("simulated time", f"{result['sim_time_s']:.1f} s")
    table.add_row("events", f"{result['events']:,}")
    table.add_row("wall time (run)", f"{result['wall_time_s']:.3f} s")
    table.add_row("wall time (process)", f"{result['process_time_s']:.3f} s")
    table.add_row("events / s", f"{result['events_per_s']:,.0f}")
    table.add_row("simulated / wall", f"{result['speedup']:,.1f} x")
    table.add_row("peak memory (ru_maxrss)", f"{result['peak_rss_mib']:.1f} MiB")
    Console().print(table)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
