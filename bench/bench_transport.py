#!/usr/bin/env python3
"""Benchmark: TCP and QUIC transfers, downloads over DC and over four paths, and ns-3.

    .venv/bin/python bench/bench_transport.py [--runs 7] [--command-only]

Workload of the transfers (as examples/scenarios/bulk.toml): 40 Mbit/s, 10 ms one way,
100-packet drop-tail queue, 20 simulated seconds. Each case runs the native `run_scenario`
example in a child process (no Python in the loop) `--runs` times; the table shows medians.

* TCP and QUIC (NewReno and CUBIC): the simulation's own wall time (building the simulation
  and running it, as measured inside the process), the whole process's wall time (loading the
  scenario file included), simulated/wall, events/s, ns per link packet.
* quinn-proto and noq-proto, the real libraries (`stack = "quinn"`, `stack = "noq"`,
  docs/real-stacks.md), on the same CUBIC transfer beside the model: they encrypt and decrypt
  every datagram.
* Cost per packet vs congestion window: the QUIC transfer on a 10 ms and a 100 ms one-way path
  (10x the window); ns per link packet should stay flat.
* A 1 GB QUIC download: wall time and peak memory.
* A 100 MB download over dual connectivity (two 20 Mbit/s legs split by PDCP, the catalogue's
  `dc_throughput.toml`), with QUIC (aioquic) and with TCP.
* A 100 MB multipath QUIC download over four paths (bench/scenarios/four_paths.toml).
* ns-3 (BulkSend over PointToPoint, same parameters, bench/ns3/) when `libns3-dev` is
  installed: `Simulator::Run`'s wall time and the whole process's, each against ours; without
  ns-3 the bench says how to install it.
* The `multiconn run` command (Python included) on the UDP transfer as bulk.toml has it and on
  the TCP and QUIC NewReno transfers: the whole command's wall time (summary table printed to
  a pipe), the simulation's (summary.json's wall_time_s) and the output step's: writing the
  run folder (`RunResult.write`, pyarrow's import included, as in the command), timed in a
  fresh process after `multiconn.run`. The goal: the output step costs no more than the
  simulation. `--command-only` runs just these (no cargo build).

Results go to bench-out/transport.json (read by bench/scoreboard.py); `--command-only`
replaces only its "command" part.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
BULK = ROOT / "examples" / "scenarios" / "bulk.toml"
DC = ROOT / "python" / "multiconn" / "catalog" / "scenarios" / "dc_throughput.toml"
FOUR_PATHS = ROOT / "bench" / "scenarios" / "four_paths.toml"
RUNNER = ROOT / "target" / "release" / "examples" / "run_scenario"
NS3 = ROOT / "bench" / "ns3" / "run.sh"
NS3_BIN = ROOT / "target" / "ns3" / "bulk_send"

# (case, scenario, overrides)
CASES: list[tuple[str, Path, tuple[str, ...]]] = [
    ("tcp-newreno", BULK, ("flow.bulk.transport=tcp", "flow.bulk.cc=newreno")),
    ("tcp-cubic", BULK, ("flow.bulk.transport=tcp", "flow.bulk.cc=cubic")),
    ("quic-newreno", BULK, ("flow.bulk.transport=quic", "flow.bulk.cc=newreno")),
    ("quic-cubic", BULK, ("flow.bulk.transport=quic", "flow.bulk.cc=cubic")),
    ("quic-cubic-quinn", BULK, ("flow.bulk.transport=quic", "flow.bulk.cc=cubic", "flow.bulk.stack=quinn")),
    ("quic-cubic-noq", BULK, ("flow.bulk.transport=quic", "flow.bulk.cc=cubic", "flow.bulk.stack=noq")),
    ("quic-window-10ms", BULK, ("flow.bulk.transport=quic", "link.bottleneck.delay=10 ms",
                                "link.bottleneck.queue=2000 packets")),
    ("quic-window-100ms", BULK, ("flow.bulk.transport=quic", "link.bottleneck.delay=100 ms",
                                 "link.bottleneck.queue=2000 packets")),
    ("quic-1GB", BULK, ("flow.bulk.transport=quic", "flow.bulk.size=1 GB", "run.duration=1000 s")),
    ("dc-2leg-quic-100MB", DC, ()),
    ("dc-2leg-tcp-100MB", DC, ("flow.dc.transport=tcp", "flow.dc.profile=linux-tcp", "flow.dc.cc=cubic")),
    ("mpquic-4path-100MB", FOUR_PATHS, ()),
]
SLOW_CASES = {"quic-1GB"}
"""Run once: a single run already takes about half a second."""

# (case, overrides of bulk.toml) for the `multiconn run` command
COMMAND_CASES: list[tuple[str, tuple[str, ...]]] = [
    ("udp", ()),
    ("tcp-newreno", ("flow.bulk.transport=tcp", "flow.bulk.cc=newreno")),
    ("quic-newreno", ("flow.bulk.transport=quic", "flow.bulk.cc=newreno")),
]
OUTPUT_STEP = """\
import json, sys, time
import multiconn
result = multiconn.run(sys.argv[1], overrides=dict(s.split("=", 1) for s in sys.argv[3:]))
started = time.perf_counter()
result.write(sys.argv[2])
print(json.dumps({"output_s": time.perf_counter() - started}))
"""
"""A fresh process: the run, then its output step (the Parquet writer loads on first use)."""


def build_runner() -> None:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "multiconn-scenario", "--example", "run_scenario"],
        cwd=ROOT, check=True,
    )


def ours_once(scenario: Path, sets: tuple[str, ...]) -> dict:
    started = time.perf_counter()
    proc = subprocess.run([str(RUNNER), str(scenario), *sets], capture_output=True, text=True, check=False)
    process_s = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"run_scenario {scenario.name} {' '.join(sets)} failed: {proc.stderr.strip()}")
    result = json.loads(proc.stdout)
    result["process_s"] = process_s
    return result


def median_of(runs: list[dict]) -> dict:
    """The first run's results with the timing figures replaced by their medians."""
    out = dict(runs[0])
    for key in ("wall_s", "process_s", "events_per_s", "sim_over_wall", "ns_per_packet"):
        out[key] = statistics.median(r[key] for r in runs)
    out["peak_rss_kib"] = max(r["peak_rss_kib"] for r in runs)
    out["runs"] = len(runs)
    out["wall_s_min_max"] = [min(r["wall_s"] for r in runs), max(r["wall_s"] for r in runs)]
    return out


def command_once(sets: tuple[str, ...], out: Path) -> dict:
    """One `multiconn run` of bulk.toml (whole command), then the output step on its own."""
    overrides = [arg for s in sets for arg in ("--set", s)]
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "multiconn", "run", str(BULK), "--out", str(out / "run"),
                           *overrides], capture_output=True, text=True, check=False)
    command_s = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"multiconn run {' '.join(sets)} failed: {proc.stderr.strip()}")
    simulation_s = json.loads((out / "run" / "summary.json").read_text())["wall_time_s"]
    proc = subprocess.run([sys.executable, "-c", OUTPUT_STEP, str(BULK), str(out / "output"), *sets],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"output step {' '.join(sets)} failed: {proc.stderr.strip()}")
    return {"command_s": command_s, "simulation_s": simulation_s, **json.loads(proc.stdout)}


def command_cases(runs: int, console: Console) -> dict[str, dict]:
    """Medians of `runs` runs of each command case (after one unmeasured run: a cold file
    cache or bytecode is no part of the command's cost)."""
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-command-") as tmp:
        for name, sets in COMMAND_CASES:
            command_once(sets, Path(tmp))
            measured = [command_once(sets, Path(tmp)) for _ in range(runs)]
            r = {key: statistics.median(m[key] for m in measured) for key in measured[0]}
            r["output_over_simulation"] = r["output_s"] / r["simulation_s"]
            r["runs"] = runs
            results[name] = r
    table = Table(title=f"multiconn run examples/scenarios/bulk.toml (the command), medians of {runs} runs")
    for col in ("case", "command s", "simulation s", "output step s", "output / simulation"):
        table.add_column(col, justify="right" if col != "case" else "left")
    for name, r in results.items():
        table.add_row(name, f"{r['command_s']:.3f}", f"{r['simulation_s']:.3f}", f"{r['output_s']:.3f}",
                      f"{r['output_over_simulation']:.1f}x")
    console.print(table)
    return results


def ns3_available() -> bool:
    """Builds the ns-3 program if needed; False (with a note) when ns-3 is not installed."""
    proc = subprocess.run(["bash", str(NS3), str(ROOT / "target" / "ns3"), "--duration=0.1"],
                          capture_output=True, text=True, check=False)
    if proc.returncode == 3:
        Console(stderr=True).print(f"[yellow]ns-3 comparison skipped:[/] {proc.stdout.strip() or proc.stderr.strip()}")
        return False
    if proc.returncode != 0:
        sys.exit(f"ns-3 build failed: {proc.stderr.strip()}")
    return True


def ns3_once(*args: str) -> dict:
    started = time.perf_counter()
    proc = subprocess.run([str(NS3_BIN), *args], capture_output=True, text=True, check=False)
    process_s = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"ns-3 run failed: {proc.stderr.strip()}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_s"] = process_s
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per case; medians are reported (7)")
    parser.add_argument("--ns3-runs", type=int, default=3, help="runs of the ns-3 program per controller (3)")
    parser.add_argument("--command-only", action="store_true",
                        help="only the `multiconn run` cases (no cargo build, no native runner, no ns-3)")
    args = parser.parse_args()
    console = Console(width=150)
    out = ROOT / "bench-out"
    out.mkdir(exist_ok=True)
    if args.command_only:
        path = out / "transport.json"
        previous = json.loads(path.read_text()) if path.exists() else {}
        previous["command"] = command_cases(args.runs, console)
        path.write_text(json.dumps(previous, indent=2) + "\n")
        return
    build_runner()
    results: dict[str, dict] = {}
    for name, scenario, sets in CASES:
        n = 1 if name in SLOW_CASES else args.runs
        results[name] = median_of([ours_once(scenario, sets) for _ in range(n)])

    table = Table(title=f"multiconn transports, medians of {args.runs} runs (40 Mbit/s, 10 ms one way, "
                        "100-packet queue unless the case says otherwise)")
    for col in ("case", "sim s", "simulation s", "process s", "sim/wall", "Mevents/s", "ns/packet",
                "goodput Mbit/s", "peak RSS MiB"):
        table.add_column(col, justify="right" if col != "case" else "left")
    for name, r in results.items():
        table.add_row(name, f"{r['sim_s']:.1f}", f"{r['wall_s']:.3f}", f"{r['process_s']:.3f}",
                      f"{r['sim_over_wall']:.0f}", f"{r['events_per_s'] / 1e6:.1f}", f"{r['ns_per_packet']:.0f}",
                      f"{r['goodput_mbps']:.2f}", f"{r['peak_rss_kib'] / 1024:.1f}")
    console.print(table)
    flat = results["quic-window-100ms"]["ns_per_packet"] / results["quic-window-10ms"]["ns_per_packet"]
    console.print(f"cost per packet, 10x larger window: x{flat:.2f}")

    comparison = {}
    if ns3_available():
        ns3_table = Table(title=f"TCP, 20 s at 40 Mbit/s: ns-3 (medians of {args.ns3_runs} runs) against multiconn")
        for col in ("controller", "ns-3 Simulator::Run s", "multiconn simulation s", "ratio",
                    "ns-3 process s", "multiconn process s", "ratio", "goodput ns-3 / multiconn"):
            ns3_table.add_column(col, justify="right" if col != "controller" else "left")
        for cc in ("newreno", "cubic"):
            runs = [ns3_once("--duration=20", f"--cc={cc}") for _ in range(args.ns3_runs)]
            theirs = dict(runs[0])
            theirs["wall_seconds"] = statistics.median(r["wall_seconds"] for r in runs)
            theirs["process_s"] = statistics.median(r["process_s"] for r in runs)
            mine = results[f"tcp-{cc}"]
            comparison[cc] = {
                "ns3": theirs,
                "multiconn_wall_s": mine["wall_s"],
                "multiconn_process_s": mine["process_s"],
                "speedup": theirs["wall_seconds"] / mine["wall_s"],
                "speedup_process": theirs["process_s"] / mine["process_s"],
            }
            c = comparison[cc]
            ns3_table.add_row(cc, f"{theirs['wall_seconds']:.3f}", f"{mine['wall_s']:.4f}", f"[bold]{c['speedup']:.0f}x[/]",
                              f"{theirs['process_s']:.3f}", f"{mine['process_s']:.4f}", f"{c['speedup_process']:.0f}x",
                              f"{theirs['goodput_mbps']:.2f} / {mine['goodput_mbps']:.2f}")
        console.print(ns3_table)
    command = command_cases(args.runs, console)
    (out / "transport.json").write_text(json.dumps({"runs": results, "ns3": comparison, "command": command},
                                                   indent=2) + "\n")


if __name__ == "__main__":
    main()
