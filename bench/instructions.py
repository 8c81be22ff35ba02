#!/usr/bin/env python3
"""Where a packet's instructions go, and what the speed goals leave for them.

    .venv/bin/python bench/instructions.py     (needs valgrind: sudo apt-get install valgrind)

Counts the instructions of three runs with callgrind, once whole and once only inside the
TCP/QUIC endpoints (the `multiconn_transport::Endpoint` methods: `handle_packet`,
`poll_transmit`, `handle_timeout`, `poll_timeout`, ...), and divides by the packets the links
carried: the saturating UDP flow of examples/scenarios/bulk.toml as it is, its 20 s TCP NewReno
and QUIC NewReno transfers and 20 s of the dual-connectivity fairness scenario (three QUIC
flows over two split legs).
Everything outside the endpoints is the rest of the simulator: network, links, PDCP, event
queue, recorder, the hosts' plumbing.

The goals' budgets: with the transfers' medians from bench-out/transport.json (run
bench/bench_transport.py first), a run's instructions per second are its count over its wall
time; the goal's wall time (ns-3's `Simulator::Run` / 32 for TCP, 20 s / 480 for QUIC) times
that rate is the instructions the whole run may take. Not in `make bench` (valgrind is
optional); writes bench-out/instructions.json.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench_transport import CASES as TRANSFERS
from bench_transport import BULK, ROOT, RUNNER, build_runner

FAIRNESS = ROOT / "python" / "multiconn" / "catalog" / "scenarios" / "dc_fairness.toml"
ENDPOINTS = "*as multiconn_transport::Endpoint>::*"
# Everything outside the endpoints, per link packet: about htsim's whole loop (1,004 on the same
# bulk transfer, csg-htsim 841d9e7) with room for what htsim does not model.
REST_GOAL = 1_200
# The speed goals the budgets come from (bench/scoreboard.py shows them).
TCP_VS_NS3 = 32
QUIC_REAL_TIME = 480

# The bare UDP flow of bulk.toml (no endpoints: all of it is the rest of the simulator), the
# two transfers as bench_transport.py runs them (its medians give the instruction rate).
CASES = [("udp-bulk", BULK, ())]
CASES += [case for case in TRANSFERS if case[0] in ("tcp-newreno", "quic-newreno")]
CASES.append(("dc-fairness-20s", FAIRNESS, ("run.duration=20s",)))


def instructions(scenario: Path, sets: tuple[str, ...], only: str | None) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    if only:
        cmd.append(f"--toggle-collect={only}")
    proc = subprocess.run([*cmd, str(RUNNER), str(scenario), *sets], capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or not found:
        sys.exit(f"callgrind run failed: {proc.stderr[-2000:]}")
    return int(found.group(1))


def link_packets(scenario: Path, sets: tuple[str, ...]) -> int:
    proc = subprocess.run([str(RUNNER), str(scenario), *sets], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)["link_packets"]


def main() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("bench/instructions.py needs valgrind: sudo apt-get install valgrind")
    build_runner()
    transport_path = ROOT / "bench-out" / "transport.json"
    transport = json.loads(transport_path.read_text()) if transport_path.exists() else {}
    results = {}
    for name, scenario, sets in CASES:
        total = instructions(scenario, sets, None)
        endpoints = instructions(scenario, sets, ENDPOINTS)
        packets = link_packets(scenario, sets)
        r = {"instructions": total, "in_endpoints": endpoints, "link_packets": packets}
        median = (transport.get("runs") or {}).get(name)
        goal_s = None
        if name == "tcp-newreno" and (transport.get("ns3") or {}).get("newreno"):
            goal_s = transport["ns3"]["newreno"]["ns3"]["wall_seconds"] / TCP_VS_NS3
        elif name == "quic-newreno" and median:
            goal_s = median["sim_s"] / QUIC_REAL_TIME
        if median and goal_s:
            rate = total / median["wall_s"]
            r.update({"wall_s": median["wall_s"], "goal_wall_s": goal_s, "instructions_per_s": rate,
                      "budget_instructions": rate * goal_s})
        results[name] = r

    table = Table(title="Instructions per link packet (callgrind), and the goals' budgets "
                        f"(the rest of the simulator: at most {REST_GOAL:,} per packet)")
    for col in ("run", "link packets", "total / packet", "endpoints / packet", "rest / packet",
                "rest vs its goal", "goal's budget / packet", "endpoints alone vs budget"):
        table.add_column(col, justify="right" if col != "run" else "left")
    for name, r in results.items():
        n = r["link_packets"]
        budget = r.get("budget_instructions")
        table.add_row(name, f"{n:,}", f"{r['instructions'] / n:,.0f}", f"{r['in_endpoints'] / n:,.0f} "
                      f"({100 * r['in_endpoints'] / r['instructions']:.0f} %)",
                      f"{(r['instructions'] - r['in_endpoints']) / n:,.0f}",
                      f"x{(r['instructions'] - r['in_endpoints']) / n / REST_GOAL:.2f}",
                      "-" if budget is None else f"{budget / n:,.0f}",
                      "-" if budget is None else f"x{r['in_endpoints'] / budget:.1f}")
    Console(width=150).print(table)
    out = ROOT / "bench-out"
    out.mkdir(exist_ok=True)
    (out / "instructions.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
