#!/usr/bin/env python3
"""Benchmark: the multi-operator study's download experiments (its Tables 4 and 5).

Runs `multiconn drive download` for the residential and the road segment in full: five stacks
(picoquic bbr, cubic, fast, reno; MPTCP) x five cases x 18 start offsets of a 40 MB download,
450 runs each, on every local core, report included. Reports the wall time, runs per second,
and the ratio to the time the study's Mininet testbed needed, which runs in real time: at least
the sum of the downloads' completion times. Writes the numbers as JSON to
bench-out/downloads.json.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).parent / "multiconn"


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-downloads-"))
    results = {}
    try:
        for segment in ("residential", "road"):
            out = work / segment
            start = time.perf_counter()
            subprocess.run([str(CLI), "drive", "download", "--segment", segment, "--out",
                            str(out), "--quiet", "--json"], check=True, stdout=subprocess.DEVNULL)
            wall = time.perf_counter() - start
            runs = pd.read_csv(out / "runs.csv")
            real_time = float(runs["completion_s"].fillna(600).sum())
            results[segment] = {"runs": len(runs), "wall_s": round(wall, 2),
                                "runs_per_s": round(len(runs) / wall, 1),
                                "testbed_real_time_s": round(real_time, 1),
                                "speed_up": round(real_time / wall, 1)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = Table(title="Tables 4 and 5: 5 stacks x 5 cases x 18 offsets, 40 MB each")
    for column in ("segment", "runs", "wall s", "runs/s", "testbed real time s", "speed-up"):
        table.add_column(column, justify="right")
    for segment, r in results.items():
        table.add_row(segment, str(r["runs"]), f"{r['wall_s']:.1f}", f"{r['runs_per_s']:.1f}",
                      f"{r['testbed_real_time_s']:.0f}", f"{r['speed_up']:.0f}x")
    Console().print(table)
    out_dir = ROOT / "bench-out"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "downloads.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
