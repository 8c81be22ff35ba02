#!/usr/bin/env python3
"""Benchmark: nine cells of three sites with 30 UEs driving through them, handed over by A3.

    .venv/bin/python bench/bench_mobility.py [--duration 20] [--runs 3] [--seed 1]

The scenario is bench/scenarios/mobility_30ue.toml: a cell with a layout of three sites 500 m
apart with three sectors each (nine 10 MHz LTE cells on one carrier, TR 38.901 UMa path loss,
no fading, load-weighted interference between them, A3 handovers with their defaults) and 30
UEs crossing the area on straight routes at 50 km/h, each downloading over TCP from one
server. multiconn runs through the native `run_scenario` example in a child process (no Python
in the loop), `--runs` times; the table shows the median run's wall time, simulated/wall
against the goal (20 times real time on one core), events/s, peak memory and the total steady
goodput. Results go to bench-out/mobility.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench_cell import build_runner, run_child
from run_scenario_output import steady_goodput_and_stats

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "bench" / "scenarios" / "mobility_30ue.toml"
UES = 30
GOAL_REAL_TIME = 20.0  # simulated seconds per wall second, one core


def run_once(runner: Path, args) -> dict:
    cmd = [str(runner), str(SCENARIO), f"run.duration={args.duration:g} s", f"run.seed={args.seed}"]
    child = run_child(cmd, env={**os.environ, "MULTICONN_PRINT_FLOWS": "1"})
    if child["code"] != 0:
        raise SystemExit(f"bench_mobility: multiconn run failed ({' '.join(cmd)}):\n{child['stderr'].strip()}")
    goodput, stats = steady_goodput_and_stats(child["stdout"])
    if stats is None or len(goodput) != UES:
        raise SystemExit(f"bench_mobility: multiconn printed no summary ({' '.join(cmd)})")
    return {
        "wall_s": stats["wall_s"],
        "sim_s": stats["sim_s"],
        "sim_over_wall": stats["sim_s"] / stats["wall_s"],
        "events": stats["events"],
        "events_per_s": stats["events_per_s"],
        "peak_rss_mib": child["peak_rss_kib"] / 1024,
        "goodput_mbps_total": sum(goodput.values()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0, help="simulated seconds (20)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the median's figures are shown (3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "mobility.json")
    args = parser.parse_args()
    if args.duration <= 2.0 or args.runs < 1:
        parser.error("--duration must exceed the scenario's measure_from (2 s) and --runs be at least 1")

    console = Console(width=120)
    runner = build_runner()
    runs = sorted((run_once(runner, args) for _ in range(args.runs)), key=lambda r: r["wall_s"])
    mc = runs[len(runs) // 2]

    table = Table(title=f"three sites x three sectors, {UES} UEs at 50 km/h with saturated TCP downloads, "
                        f"{args.duration:g} s, seed {args.seed}, median of {args.runs}", title_justify="left")
    table.add_column("metric")
    table.add_column("multiconn", justify="right")
    table.add_row("wall time (s)", f"{mc['wall_s']:.3f}")
    table.add_row("simulated / wall", f"{mc['sim_over_wall']:.1f}x")
    table.add_row("events / s", f"{mc['events_per_s']:,.0f}")
    table.add_row("peak memory (MiB)", f"{mc['peak_rss_mib']:.1f}")
    table.add_row("goodput, 2 s to end, all UEs (Mbit/s)", f"{mc['goodput_mbps_total']:.1f}")
    console.print(table)
    met = mc["sim_over_wall"] >= GOAL_REAL_TIME
    console.print(f"real time goal (≥ {GOAL_REAL_TIME:g}x on one core): "
                  f"{'met' if met else 'not met'} ({mc['sim_over_wall']:.1f}x)")

    report = {
        "benchmark": "mobility",
        "scenario": str(SCENARIO.relative_to(ROOT)),
        "ues": UES,
        "duration_s": args.duration,
        "seed": args.seed,
        "runs": args.runs,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "multiconn": mc,
        "all_runs_wall_s": [r["wall_s"] for r in runs],
        "median_wall_s": statistics.median(r["wall_s"] for r in runs),
        "goals": {"sim_over_wall": GOAL_REAL_TIME},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
