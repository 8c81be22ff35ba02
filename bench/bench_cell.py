#!/usr/bin/env python3
"""Benchmark: one LTE cell with 10 saturated TCP UEs for 60 simulated seconds, multiconn and LENA.

    .venv/bin/python bench/bench_cell.py [--duration 60] [--distance 250] [--seed 1]

The set-up is the LENA cross-check's (docs/lte-cell.md) with 10 UEs at one distance, each
downloading over TCP NewReno from its own server, without fading:
bench/lena/lte_cell_10ue.toml in multiconn, bench/lena/lte_cell.cc (`run.sh --ues=10`) in
ns-3 LENA. 250 m is the study's distance and one at which both simulators carry traffic
(LENA's uplink stops between 300 and 350 m); fading stays off because LENA's EPA trace already
ends its uplink at 250 m, and a cell that carries nothing is cheap to simulate.

multiconn runs through the native `run_scenario` example in a child process (no Python in the
loop): wall time (building the simulation and running it), simulated/wall, events/s, peak
memory and the total steady goodput. LENA then runs the same once through bench/lena/run.sh;
its wall time is its program's own (`Simulator::Run` alone). When ns-3 is not installed
(run.sh exits 3) the LENA column is skipped with a note. Peak memory is each child process's
ru_maxrss. The table shows both sides and the ratio LENA wall / multiconn wall from this one
run, against the goals (100 times real time, 30 times faster than LENA). Results go to
bench-out/cell.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_scenario_output import steady_goodput_and_stats

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "bench" / "lena" / "lte_cell_10ue.toml"
LENA_RUN = ROOT / "bench" / "lena" / "run.sh"
UES = 10
GOAL_REAL_TIME = 100.0  # simulated seconds per wall second
GOAL_VS_LENA = 30.0  # LENA wall / multiconn wall


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def build_runner() -> Path:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "multiconn-scenario", "--example", "run_scenario"],
        cwd=ROOT, check=True,
    )
    return target_dir() / "release" / "examples" / "run_scenario"


def run_child(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    """Runs cmd to the end; returns its exit code, output, wall time and peak memory (KiB)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
        # wait4 rather than wait: its rusage is this child's alone.
        _, status, usage = os.wait4(proc.pid, 0)
        process_s = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {"code": proc.returncode, "stdout": out.read(), "stderr": err.read(),
                "process_s": process_s, "peak_rss_kib": usage.ru_maxrss}


def run_multiconn(runner: Path, args) -> dict:
    cmd = [str(runner), str(SCENARIO), f"run.duration={args.duration:g} s", f"run.measure_from={args.measure_from:g} s",
           f"cell.lte.distance_m={args.distance:g}", f"run.seed={args.seed}"]
    child = run_child(cmd, env={**os.environ, "MULTICONN_PRINT_FLOWS": "1"})
    if child["code"] != 0:
        sys.exit(f"bench_cell: multiconn run failed ({' '.join(cmd)}):\n{child['stderr'].strip()}")
    goodput, stats = steady_goodput_and_stats(child["stdout"])
    if stats is None or len(goodput) != UES:
        sys.exit(f"bench_cell: multiconn printed no summary ({' '.join(cmd)})")
    per_ue = [goodput[f"dl{i}"] for i in range(1, UES + 1)]
    return {
        "wall_s": stats["wall_s"],
        "process_s": child["process_s"],
        "sim_s": stats["sim_s"],
        "sim_over_wall": stats["sim_s"] / stats["wall_s"],
        "events": stats["events"],
        "events_per_s": stats["events_per_s"],
        "peak_rss_mib": child["peak_rss_kib"] / 1024,
        "goodput_mbps_per_ue": per_ue,
        "goodput_mbps_total": sum(per_ue),
    }


def run_lena(args, console: Console) -> dict | None:
    build_dir = str(target_dir() / "lena")
    # A 1 s, 1-UE run first builds the program if needed, so that neither the compiler's time
    # nor its memory is counted below.
    warm = run_child(["bash", str(LENA_RUN), build_dir, "--ues=1", "--duration=1", "--measure-from=0.5",
                      "--fading=none"])
    if warm["code"] == 3:
        console.print("[yellow]LENA skipped:[/] ns-3 with its LTE module is not installed "
                      "(sudo apt-get install libns3-dev); only multiconn was measured.")
        return None
    if warm["code"] != 0:
        sys.exit(f"bench_cell: LENA build or warm-up run failed:\n{warm['stderr'].strip()}")
    cmd = ["bash", str(LENA_RUN), build_dir, f"--distance={args.distance:g}", f"--ues={UES}", "--fading=none",
           f"--duration={args.duration:g}", f"--measure-from={args.measure_from:g}", f"--seed={args.seed}"]
    child = run_child(cmd)
    if child["code"] != 0:
        sys.exit(f"bench_cell: LENA run failed ({' '.join(cmd)}):\n{child['stderr'].strip()}")
    out = json.loads(child["stdout"].strip().splitlines()[-1])
    return {
        "wall_s": out["wall_seconds"],
        "process_s": child["process_s"],
        "sim_s": out["sim_seconds"],
        "sim_over_wall": out["sim_seconds"] / out["wall_seconds"],
        "events": out["events"],
        "events_per_s": out["events"] / out["wall_seconds"],
        "peak_rss_mib": child["peak_rss_kib"] / 1024,
        "goodput_mbps_per_ue": out["goodput_mbps"],
        "goodput_mbps_total": sum(out["goodput_mbps"]),
    }


def verdict(value: float, goal: float) -> str:
    return f"met ({value:.1f} ≥ {goal:g})" if value >= goal else f"not met ({value:.1f} < {goal:g}, {goal / value:.1f}x short)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="simulated seconds (60)")
    parser.add_argument("--measure-from", type=float, default=5.0, help="goodput counted from this second (5)")
    parser.add_argument("--distance", type=float, default=250.0, help="distance of every UE from the eNB, m (250)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "cell.json")
    args = parser.parse_args()
    if not 0.5 <= args.measure_from < args.duration:
        parser.error("--duration must exceed --measure-from, and --measure-from be at least 0.5 s")

    console = Console(width=120)
    runner = build_runner()
    mc = run_multiconn(runner, args)
    lena = run_lena(args, console)

    title = f"one cell, {UES} saturated TCP UEs at {args.distance:g} m, no fading, {args.duration:g} s, seed {args.seed}"
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("multiconn", justify="right")
    table.add_column("ns-3 LENA", justify="right")
    na = "skipped" if lena is None else None

    def row(label: str, key: str, fmt: str) -> None:
        table.add_row(label, fmt.format(mc[key]) if key in mc else "", na or (fmt.format(lena[key]) if key in lena else ""))

    row("simulated time (s)", "sim_s", "{:.1f}")
    row("wall time (s)", "wall_s", "{:.3f}")
    row("wall time, whole process (s)", "process_s", "{:.3f}")
    row("simulated / wall", "sim_over_wall", "{:.1f}x")
    row("events", "events", "{:,}")
    row("events / s", "events_per_s", "{:,.0f}")
    row("peak memory (MiB)", "peak_rss_mib", "{:.1f}")
    row(f"goodput, {args.measure_from:g} s to end, all UEs (Mbit/s)", "goodput_mbps_total", "{:.2f}")
    console.print(table)
    console.print("wall time: multiconn's builds the simulation and runs it; LENA's is Simulator::Run alone")

    ratio = lena["wall_s"] / mc["wall_s"] if lena else None
    console.print(f"real time goal (≥ {GOAL_REAL_TIME:g}x): {verdict(mc['sim_over_wall'], GOAL_REAL_TIME)}")
    if ratio is not None:
        console.print(f"LENA wall / multiconn wall = {ratio:.1f}; goal (≥ {GOAL_VS_LENA:g}x): {verdict(ratio, GOAL_VS_LENA)}")

    report = {
        "benchmark": "cell",
        "scenario": str(SCENARIO.relative_to(ROOT)),
        "ues": UES,
        "distance_m": args.distance,
        "fading": "none",
        "duration_s": args.duration,
        "measure_from_s": args.measure_from,
        "seed": args.seed,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "multiconn": mc,
        "lena": lena,
        "lena_wall_over_multiconn_wall": ratio,
        "goals": {"sim_over_wall": GOAL_REAL_TIME, "lena_wall_over_multiconn_wall": GOAL_VS_LENA},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
