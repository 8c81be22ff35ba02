#!/usr/bin/env python3
"""The benchmarks' score: each speed goal, what the last benchmark run measured, and whether
it is met, as one table (the last step of `make bench`).

    .venv/bin/python bench/scoreboard.py [--out bench-out]

Reads what the benchmarks wrote into bench-out/: transport.json (bench/bench_transport.py),
dc.json (bench/bench_dc.py), make_test.json (bench/bench_make_test.py), cell.json
(bench/bench_cell.py) and nr_cell.json (bench/bench_nr_cell.py). A benchmark that has not run
(or ran without ns-3 or LENA) shows as "not measured". Exits 0 whether the goals are met or
not: the table is the report, not a test.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
# The goals (issue 40): a faithful model's cost, with htsim's 1,004 instructions per link packet
# as the bound for the network path.
TCP_VS_NS3 = 32
QUIC_REAL_TIME = 480
DC_CATALOGUE_MIN = 11
MAKE_TEST_MIN = 8


def load(folder: Path, name: str) -> dict[str, Any] | None:
    path = folder / name
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def rows(folder: Path) -> list[tuple[str, str, str, bool | None]]:
    """(goal, required, measured, met) per goal; met is None when not measured."""
    out: list[tuple[str, str, str, bool | None]] = []
    transport = load(folder, "transport.json")
    ns3 = (transport or {}).get("ns3") or {}
    for cc, label in (("newreno", "NewReno"), ("cubic", "CUBIC")):
        c = ns3.get(cc)
        goal = f"TCP {label}, 20 s at 40 Mbit/s: faster than ns-3 (simulation vs Simulator::Run)"
        if c is None:
            out.append((goal, f"{TCP_VS_NS3}x", "not measured (ns-3 not installed, or bench_transport not run)", None))
        else:
            measured = f"{c['speedup']:.0f}x ({c['multiconn_wall_s'] * 1000:.1f} ms vs {c['ns3']['wall_seconds']:.3f} s)"
            if "speedup_process" in c:
                measured += f"; whole process {c['speedup_process']:.0f}x"
            out.append((goal, f"{TCP_VS_NS3}x", measured, c["speedup"] >= TCP_VS_NS3))
    runs = (transport or {}).get("runs") or {}
    for case, label in (("quic-newreno", "NewReno"), ("quic-cubic", "CUBIC")):
        r = runs.get(case)
        goal = f"QUIC {label}, 20 s at 40 Mbit/s: times real time"
        if r is None:
            out.append((goal, f"{QUIC_REAL_TIME}x", "not measured", None))
        else:
            out.append((goal, f"{QUIC_REAL_TIME}x", f"{r['sim_over_wall']:.0f}x ({r['wall_s'] * 1000:.1f} ms)", r["sim_over_wall"] >= QUIC_REAL_TIME))
    command = (transport or {}).get("command") or {}
    for case, label in (("udp", "UDP"), ("tcp-newreno", "TCP NewReno"), ("quic-newreno", "QUIC NewReno")):
        c = command.get(case)
        goal = f"`multiconn run` bulk.toml, {label}: the output step costs no more than the simulation"
        if c is None:
            out.append((goal, "1x", "not measured", None))
        else:
            out.append((goal, "1x", f"{c['output_over_simulation']:.1f}x ({c['output_s'] * 1000:.0f} ms vs "
                        f"{c['simulation_s'] * 1000:.0f} ms; whole command {c['command_s']:.3f} s)",
                        c["output_over_simulation"] <= 1))
    gb = runs.get("quic-1GB")
    out.append(("QUIC, 1 GB download: peak memory", "(no goal)",
                "not measured" if gb is None else f"{gb['peak_rss_kib'] / 1024:.1f} MiB in {gb['wall_s']:.2f} s", None))
    dc = load(folder, "dc.json")
    goal = "the whole dc-* catalogue (Table 3), 10 repetitions, 2 cores"
    if dc is None:
        out.append((goal, f"{DC_CATALOGUE_MIN} min", "not measured", None))
    elif dc.get("measured") == "whole":
        note = "" if dc.get("catalogue_repetitions") else " (fewer repetitions than the catalogue's: indicative only)"
        met = dc["table3_s"] <= dc["goal_s"] if dc.get("catalogue_repetitions") else None
        out.append((goal, f"{DC_CATALOGUE_MIN} min", f"{dc['table3_s'] / 60:.1f} min, {dc['table3_runs']} runs on {dc['cores']} cores{note}", met))
    else:
        out.append((goal, f"{DC_CATALOGUE_MIN} min", f"about {dc['table3_estimate_s'] / 60:.1f} min (estimated from two sweeps)", None))
    make_test = load(folder, "make_test.json")
    goal = "a fresh clone's `make test`, every test, 2 cores"
    if make_test is None:
        out.append((goal, f"{MAKE_TEST_MIN} min", "not measured", None))
    else:
        phases = ", ".join(f"{target} {seconds:.0f} s" for target, seconds in make_test["phases_s"].items())
        out.append((goal, f"{MAKE_TEST_MIN} min", f"{make_test['total_s'] / 60:.1f} min ({phases})",
                    make_test["total_s"] <= MAKE_TEST_MIN * 60))
    cell = load(folder, "cell.json")
    if cell is None:
        out.append(("LTE cell, 10 saturated TCP UEs, 60 s: times real time", "100x", "not measured", None))
    else:
        sim = cell["multiconn"]["sim_over_wall"]
        out.append(("LTE cell, 10 saturated TCP UEs, 60 s: times real time", f"{cell['goals']['sim_over_wall']:.0f}x",
                    f"{sim:.0f}x", sim >= cell["goals"]["sim_over_wall"]))
        ratio = cell.get("lena_wall_over_multiconn_wall")
        need = cell["goals"]["lena_wall_over_multiconn_wall"]
        out.append(("LTE cell, same: faster than ns-3 LENA", f"{need:.0f}x",
                    "not measured (ns-3 not installed)" if ratio is None else f"{ratio:.0f}x", None if ratio is None else ratio >= need))
        scaled = cell.get("scaling")
        if scaled is not None:
            goals = scaled["goals"]
            out.append(("LTE cell, EPA fading against none, per simulated second", f"at most {goals['epa_over_none']:g}x",
                        f"{scaled['epa_over_none_per_sim_s']:.2f}x", scaled["epa_over_none_per_sim_s"] <= goals["epa_over_none"]))
            out.append(("LTE cell, 50 UEs against 10, per byte", f"at most {goals['many_over_base']:g}x",
                        f"{scaled['many_over_base_per_byte']:.2f}x", scaled["many_over_base_per_byte"] <= goals["many_over_base"]))
    nr = load(folder, "nr_cell.json")
    goal = "NR cell, 100 MHz, 30 kHz, DDDSU, 10 saturated TCP UEs: times real time, one core"
    if nr is None:
        out.append((goal, "30x", "not measured", None))
    else:
        sim = nr["multiconn"]["sim_over_wall"]
        out.append((goal, f"{nr['goals']['sim_over_wall']:.0f}x", f"{sim:.0f}x ({nr['multiconn']['us_per_slot']:.1f} µs a busy slot)",
                    sim >= nr["goals"]["sim_over_wall"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out", help="the benchmarks' output folder")
    args = parser.parse_args()
    table = Table(title="Speed goals: the last benchmark run")
    for col in ("goal", "required", "measured", "met"):
        table.add_column(col)
    for goal, required, measured, met in rows(args.out):
        mark = "-" if met is None else ("[green]yes[/]" if met else "[red]no[/]")
        table.add_row(goal, required, measured, mark)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
