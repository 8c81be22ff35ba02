#!/usr/bin/env python3
"""Benchmark: one NR cell (100 MHz, 30 kHz, DDDSU) with 10 saturated TCP UEs, multiconn alone.

    .venv/bin/python bench/bench_nr_cell.py [--duration 10] [--runs 3] [--seed 1]

The scenario is bench/scenarios/nr_cell_10ue.toml: one 100 MHz NR cell at 3.5 GHz (273 PRBs,
0.5 ms slots, DDDSU with a 10:2:2 special slot, the 256QAM tables, one layer, TR 38.901 UMa
path loss in line of sight, no fading) and 10 UEs at 50, 100, ..., 500 m, each downloading
over TCP from its own server. multiconn runs through the native `run_scenario` example in a
child process (no Python in the loop), `--runs` times; the table shows the median run's wall
time, simulated/wall against the goal (30 times real time on one core), events/s, peak memory,
the cell's total steady goodput and the cost of one slot (wall time over the slots simulated:
the cell runs a slot only while a UE has data or HARQ/ARQ work, so an idle cell costs
nothing). Beside it, ns-3 LENA's cost of one LTE TTI from the LTE cell benchmark
(bench-out/cell.json, bench/bench_cell.py: `Simulator::Run` over 60 000 TTIs of a 10-UE
cell), when that has run: 5G-LENA is not packaged here, so LENA's LTE cell is the nearest
peer. Results go to bench-out/nr_cell.json.
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
SCENARIO = ROOT / "bench" / "scenarios" / "nr_cell_10ue.toml"
UES = 10
SLOT_S = 0.5e-3
GOAL_REAL_TIME = 30.0  # simulated seconds per wall second, one core


def run_once(runner: Path, args) -> dict:
    cmd = [str(runner), str(SCENARIO), f"run.duration={args.duration:g} s", f"run.seed={args.seed}"]
    child = run_child(cmd, env={**os.environ, "MULTICONN_PRINT_FLOWS": "1"})
    if child["code"] != 0:
        raise SystemExit(f"bench_nr_cell: multiconn run failed ({' '.join(cmd)}):\n{child['stderr'].strip()}")
    goodput, stats = steady_goodput_and_stats(child["stdout"])
    if stats is None or len(goodput) != UES:
        raise SystemExit(f"bench_nr_cell: multiconn printed no summary ({' '.join(cmd)})")
    slots = stats["sim_s"] / SLOT_S
    return {
        "wall_s": stats["wall_s"],
        "sim_s": stats["sim_s"],
        "sim_over_wall": stats["sim_s"] / stats["wall_s"],
        "events": stats["events"],
        "events_per_s": stats["events_per_s"],
        "peak_rss_mib": child["peak_rss_kib"] / 1024,
        "goodput_mbps_total": sum(goodput.values()),
        "slots": slots,
        "us_per_slot": stats["wall_s"] / slots * 1e6,
    }


def lena_tti_us() -> float | None:
    """ns-3 LENA's wall time per LTE TTI in the last LTE cell benchmark, µs, if it ran."""
    path = ROOT / "bench-out" / "cell.json"
    if not path.exists():
        return None
    cell = json.loads(path.read_text())
    lena = cell.get("lena")
    if not lena:
        return None
    return lena["wall_s"] / (lena["sim_s"] * 1000) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds (10)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the median's figures are shown (3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "nr_cell.json")
    args = parser.parse_args()
    if args.duration <= 2.0 or args.runs < 1:
        parser.error("--duration must exceed the scenario's measure_from (2 s) and --runs be at least 1")

    console = Console(width=120)
    runner = build_runner()
    runs = sorted((run_once(runner, args) for _ in range(args.runs)), key=lambda r: r["wall_s"])
    mc = runs[len(runs) // 2]
    lena = lena_tti_us()

    table = Table(title=f"one NR cell, 100 MHz, 30 kHz, DDDSU, {UES} saturated TCP UEs at 50–500 m, "
                        f"{args.duration:g} s, seed {args.seed}, median of {args.runs}", title_justify="left")
    table.add_column("metric")
    table.add_column("multiconn", justify="right")
    table.add_row("wall time (s)", f"{mc['wall_s']:.3f}")
    table.add_row("simulated / wall", f"{mc['sim_over_wall']:.1f}x")
    table.add_row("events / s", f"{mc['events_per_s']:,.0f}")
    table.add_row("peak memory (MiB)", f"{mc['peak_rss_mib']:.1f}")
    table.add_row("goodput, 2 s to end, all UEs (Mbit/s)", f"{mc['goodput_mbps_total']:.1f}")
    table.add_row("wall time per slot, cell busy (µs)", f"{mc['us_per_slot']:.2f}")
    table.add_row("ns-3 LENA, wall time per LTE TTI, 10 UEs (µs)", "not measured" if lena is None else f"{lena:.2f}")
    console.print(table)
    met = mc["sim_over_wall"] >= GOAL_REAL_TIME
    console.print(f"real time goal (≥ {GOAL_REAL_TIME:g}x on one core): "
                  f"{'met' if met else 'not met'} ({mc['sim_over_wall']:.1f}x); an idle cell runs no slots")

    report = {
        "benchmark": "nr_cell",
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
        "lena_lte_us_per_tti": lena,
        "goals": {"sim_over_wall": GOAL_REAL_TIME},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
