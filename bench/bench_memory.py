#!/usr/bin/env python3
"""Benchmark: the memory a run's results cost once it is over, against the run's own.

Generates a scenario of N CBR flows (default 1000), each from its own server through its own
access link, a shared core link and its own last link to its own client (2N + 1 links), for
10 s in 100 ms bins: (N + 2 (2N + 1)) x 100 time-series rows (500 100 for N = 1000). It runs
through `multiconn run` in a child process that records its peak memory (VmHWM) and its
memory (VmRSS) just before the run is finished (the series handed to Python, the Parquet
written), and its peak at the end. The run's own peak is the first; what the results cost is
the ratio of the two peaks.

    python bench/bench_memory.py [--flows 1000] [--duration 10s] [--bin 100ms]

Prints a table and writes bench-out/memory.json. Linux only (/proc/self/status).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def many_flows_scenario(flows: int, duration: str = "10 s", bin_: str = "100 ms") -> str:
    """The scenario: `flows` CBR flows of 100 kbit/s in 1000-byte packets, flow i from
    `s<i>` over `a<i>` (10 Mbit/s), the shared `core` (1 Gbit/s) and `b<i>` (10 Mbit/s) to
    `c<i>`; 2 flows + 1 links."""
    parts = [f'name = "many{flows}"\n\n[run]\nduration = "{duration}"\nseed = 1\n'
             f'bin = "{bin_}"\n\n[[link]]\nname = "core"\nbetween = ["r1", "r2"]\n'
             'rate = "1 Gbit/s"\ndelay = "5 ms"\nqueue = "1000 packets"\n']
    for i in range(flows):
        parts.append(
            f'\n[[link]]\nname = "a{i}"\nbetween = ["s{i}", "r1"]\nrate = "10 Mbit/s"\n'
            f'delay = "1 ms"\nqueue = "100 packets"\n'
            f'\n[[link]]\nname = "b{i}"\nbetween = ["r2", "c{i}"]\nrate = "10 Mbit/s"\n'
            f'delay = "1 ms"\nqueue = "100 packets"\n'
            f'\n[[flow]]\nname = "f{i}"\nfrom = "s{i}"\nto = "c{i}"\n'
            f'route = ["a{i}", "core", "b{i}"]\ntransport = "udp"\napp = "cbr"\n'
            f'rate = "100 kbit/s"\npacket_size = "1000 B"\n')
    return "".join(parts)


CHILD = textwrap.dedent("""
    import json, sys
    import multiconn.runner as runner

    def status():
        fields = {}
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    fields[key] = int(value.split()[0]) * 1024
        return fields

    real_core = runner.core
    marks = {}

    class Simulation:
        def __init__(self, *args):
            self._sim = real_core().Simulation(*args)

        def __getattr__(self, name):
            return getattr(self._sim, name)

        def finish(self):
            marks["before"] = status()
            return self._sim.finish()

    class Core:
        Simulation = Simulation

        def __getattr__(self, name):
            return getattr(real_core(), name)

    runner.core = lambda: Core()
    from multiconn.cli import main

    code = main(sys.argv[1:])
    marks["end"] = status()
    print(json.dumps({"code": code, **marks}))
""")


def measure(scenario: Path, out: Path) -> dict[str, float]:
    """Runs `scenario` with `multiconn run` in a child; returns its memory marks in MiB."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "run", str(scenario), "--out", str(out), "-q"],
        capture_output=True, text=True, check=False,
        env={**os.environ, "MULTICONN_CHECK_INVARIANTS": "0"},
    )
    if proc.returncode != 0:
        sys.exit(f"bench: multiconn run failed:\n{proc.stderr}")
    marks = json.loads(proc.stdout.strip().splitlines()[-1])
    if marks["code"] != 0:
        sys.exit(f"bench: multiconn run exited {marks['code']}:\n{proc.stderr}")
    mib = 1024 * 1024
    return {
        "rss_before_finish_mib": marks["before"]["VmRSS"] / mib,
        "peak_before_finish_mib": marks["before"]["VmHWM"] / mib,
        "peak_at_end_mib": marks["end"]["VmHWM"] / mib,
        "parquet_bytes": (out / "timeseries.parquet").stat().st_size,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=1000)
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--bin", default="100ms")
    parser.add_argument("--keep", type=Path, help="also write the generated scenario here")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "memory.json")
    args = parser.parse_args()

    from rich.console import Console
    from rich.table import Table

    work = Path(tempfile.mkdtemp(prefix="multiconn-bench-memory-"))
    try:
        scenario = work / f"many{args.flows}.toml"
        scenario.write_text(many_flows_scenario(args.flows, args.duration, args.bin))
        if args.keep:
            shutil.copy(scenario, args.keep)
        result = measure(scenario, work / "out")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratio = result["peak_at_end_mib"] / result["peak_before_finish_mib"]
    rows = (args.flows + 2 * (2 * args.flows + 1)) * 100
    report = {
        "benchmark": "memory",
        "flows": args.flows,
        "links": 2 * args.flows + 1,
        "duration": args.duration,
        "bin": args.bin,
        "python": platform.python_version(),
        "machine": platform.machine(),
        **result,
        "peak_ratio": ratio,
    }
    table = Table(title=f"{args.flows} flows, {2 * args.flows + 1} links, {args.duration} in "
                  f"{args.bin} bins", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    if args.duration == "10s" and args.bin == "100ms":
        table.add_row("time-series rows", f"{rows:,}")
    table.add_row("RSS before finishing", f"{result['rss_before_finish_mib']:.1f} MiB")
    table.add_row("peak before finishing (the run's own)",
                  f"{result['peak_before_finish_mib']:.1f} MiB")
    table.add_row("peak at the end", f"{result['peak_at_end_mib']:.1f} MiB")
    table.add_row("end / run", f"{ratio:.2f} x")
    table.add_row("timeseries.parquet", f"{result['parquet_bytes'] / 1e6:.1f} MB")
    Console().print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
