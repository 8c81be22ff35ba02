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

Then how the cost scales, multiconn alone, 10 s each (`--scaling-duration`): the same cell
with EPA fading (`cell.lte.fading=epa`) against without, per simulated second (goal: within
2x), and with 50 UEs (the 10-UE scenario's servers, UEs and flows repeated) against 10, per
byte delivered (goal: at most 1.2x). The three run in turn `--scaling-runs` times (5) and each
is its median run, so a drift in the machine's speed reaches all three alike.
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
import tomllib
from pathlib import Path

import tomli_w

from run_scenario_output import steady_goodput_and_stats

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "bench" / "lena" / "lte_cell_10ue.toml"
LENA_RUN = ROOT / "bench" / "lena" / "run.sh"
UES = 10
GOAL_REAL_TIME = 100.0  # simulated seconds per wall second
GOAL_VS_LENA = 30.0  # LENA wall / multiconn wall
GOAL_FADING = 2.0  # EPA-faded cell wall / unfaded cell wall, per simulated second
GOAL_UES = 1.2  # 50-UE cost per byte / 10-UE cost per byte
MANY_UES = 50


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


def run_cell(runner: Path, scenario: Path, ues: int, duration: float, sets: list[str], args) -> tuple[dict, dict, dict]:
    """One multiconn run of a cell scenario with `ues` flows: the child's record, each flow's
    steady goodput and the run's statistics."""
    cmd = [str(runner), str(scenario), f"run.duration={duration:g} s", f"run.measure_from={args.measure_from:g} s",
           f"cell.lte.distance_m={args.distance:g}", f"run.seed={args.seed}", *sets]
    child = run_child(cmd, env={**os.environ, "MULTICONN_PRINT_FLOWS": "1"})
    if child["code"] != 0:
        sys.exit(f"bench_cell: multiconn run failed ({' '.join(cmd)}):\n{child['stderr'].strip()}")
    goodput, stats = steady_goodput_and_stats(child["stdout"])
    if stats is None or len(goodput) != ues:
        sys.exit(f"bench_cell: multiconn printed no summary ({' '.join(cmd)})")
    return child, goodput, stats


def run_multiconn(runner: Path, args) -> dict:
    child, goodput, stats = run_cell(runner, SCENARIO, UES, args.duration, [], args)
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


def cell_with_ues(n: int, folder: Path) -> Path:
    """The 10-UE scenario with `n` UEs: its first server link, UE and flow repeated, each
    with its own number; written into `folder`."""
    spec = tomllib.loads(SCENARIO.read_text(encoding="utf-8"))
    servers = [link for link in spec["link"] if link["name"].startswith("server")]
    others = [link for link in spec["link"] if not link["name"].startswith("server")]
    template_link, template_flow = servers[0], spec["flow"][0]
    spec["link"] = [{**template_link, "name": f"server{i}", "between": [f"server{i}", "pgw"]} for i in range(1, n + 1)] + others
    spec["cell"][0]["ues"] = [{"node": f"ue{i}"} for i in range(1, n + 1)]
    profile = str((SCENARIO.parent / template_flow["profile"]).resolve())
    spec["flow"] = [{**template_flow, "name": f"dl{i}", "from": f"server{i}", "to": f"ue{i}", "profile": profile,
                     "route": [f"server{i}", *template_flow["route"][1:]]} for i in range(1, n + 1)]
    spec["name"] = f"lena_cell_{n}ue"
    path = folder / f"lte_cell_{n}ue.toml"
    path.write_text(tomli_w.dumps(spec), encoding="utf-8")
    return path


def run_scaled(runner: Path, scenario: Path, ues: int, sets: list[str], args) -> dict:
    """One multiconn run of `scenario` for the scaling rows: wall time and all UEs' goodput."""
    _, goodput, stats = run_cell(runner, scenario, ues, args.scaling_duration, sets, args)
    total = sum(goodput.values())
    return {"ues": ues, "sets": sets, "wall_s": stats["wall_s"], "sim_s": stats["sim_s"], "goodput_mbps_total": total,
            "wall_s_per_sim_s": stats["wall_s"] / stats["sim_s"],
            "ns_per_byte": stats["wall_s"] * 1e9 / (total * 1e6 / 8 * (stats["sim_s"] - args.measure_from))}


def median_run(runs: list[dict]) -> dict:
    """The run with the median wall time (the runs are the same simulation: only the time
    differs), with how many runs it was taken from."""
    ordered = sorted(runs, key=lambda r: r["wall_s"])
    return {**ordered[len(ordered) // 2], "runs": len(runs)}


def scaling(runner: Path, args, console: Console) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        many = cell_with_ues(MANY_UES, Path(folder))
        cases = {"base": (SCENARIO, UES, []), "epa": (SCENARIO, UES, ["cell.lte.fading=epa"]),
                 "many_ues": (many, MANY_UES, [])}
        runs: dict[str, list[dict]] = {name: [] for name in cases}
        for _ in range(args.scaling_runs):
            for name, (scenario, ues, sets) in cases.items():
                runs[name].append(run_scaled(runner, scenario, ues, sets, args))
    base, faded, crowded = (median_run(runs[name]) for name in cases)
    fading_ratio = faded["wall_s_per_sim_s"] / base["wall_s_per_sim_s"]
    ues_ratio = crowded["ns_per_byte"] / base["ns_per_byte"]
    table = Table(title=f"how the cost scales, multiconn, {args.scaling_duration:g} s each, "
                        f"median of {args.scaling_runs} interleaved runs", title_justify="left")
    for col in ("cell", "wall s", "all UEs' goodput (Mbit/s)", "wall s per simulated s", "ns per byte"):
        table.add_column(col, justify="left" if col == "cell" else "right")
    for name, r in ((f"{UES} UEs, no fading", base), (f"{UES} UEs, EPA fading", faded), (f"{MANY_UES} UEs, no fading", crowded)):
        table.add_row(name, f"{r['wall_s']:.3f}", f"{r['goodput_mbps_total']:.2f}", f"{r['wall_s_per_sim_s']:.4f}", f"{r['ns_per_byte']:.2f}")
    console.print(table)
    console.print(f"EPA fading / none, per simulated second: x{fading_ratio:.2f} (goal ≤ {GOAL_FADING:g}: "
                  f"{'met' if fading_ratio <= GOAL_FADING else 'not met'})")
    console.print(f"{MANY_UES} UEs / {UES} UEs, per byte: x{ues_ratio:.2f} (goal ≤ {GOAL_UES:g}: "
                  f"{'met' if ues_ratio <= GOAL_UES else 'not met'})")
    return {"base": base, "epa": faded, "many_ues": crowded, "epa_over_none_per_sim_s": fading_ratio,
            "many_over_base_per_byte": ues_ratio, "goals": {"epa_over_none": GOAL_FADING, "many_over_base": GOAL_UES}}


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
    parser.add_argument("--scaling-duration", type=float, default=10.0, help="simulated seconds of each scaling run (10)")
    parser.add_argument("--scaling-runs", type=int, default=5, help="runs of each scaling case, interleaved; medians (5)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "cell.json")
    args = parser.parse_args()
    if not 0.5 <= args.measure_from < min(args.duration, args.scaling_duration):
        parser.error("--duration and --scaling-duration must exceed --measure-from, and --measure-from be at least 0.5 s")

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

    scaled = scaling(runner, args, console)

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
        "scaling": scaled,
        "goals": {"sim_over_wall": GOAL_REAL_TIME, "lena_wall_over_multiconn_wall": GOAL_VS_LENA},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
