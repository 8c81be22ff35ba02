#!/usr/bin/env python3
"""Benchmark: TCP and QUIC bulk transfers, a 1 GB download, and the same TCP workload in ns-3.

Workload (as examples/scenarios/bulk.toml): 40 Mbit/s, 10 ms one way, 100-packet drop-tail
queue, 20 simulated seconds. Each case runs the native `run_scenario` example in a child
process (no Python in the loop), so wall time and peak memory are those of one run.

* TCP and QUIC (NewReno and CUBIC): wall time, simulated/wall ratio, events/s.
* Cost per packet vs congestion window: the QUIC transfer on a 10 ms and a 100 ms one-way path
  (10x the window); ns per link packet should stay flat.
* A 1 GB QUIC download: completion time, wall time, peak memory.
* ns-3 (BulkSend over PointToPoint, same parameters) when `libns3-dev` is installed; the
  ratio of wall times is printed. Without ns-3 the bench says how to install it.

Results go to bench-out/transport.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "examples" / "scenarios" / "bulk.toml"
RUNNER = ROOT / "target" / "release" / "examples" / "run_scenario"
NS3 = ROOT / "bench" / "ns3" / "run.sh"


def build_runner() -> None:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "multiconn-scenario", "--example", "run_scenario"],
        cwd=ROOT, check=True,
    )


def ours(*sets: str) -> dict:
    proc = subprocess.run([str(RUNNER), str(SCENARIO), *sets], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"run_scenario {' '.join(sets)} failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def ns3(*args: str) -> dict | None:
    proc = subprocess.run(["bash", str(NS3), str(ROOT / "target" / "ns3"), *args],
                          capture_output=True, text=True, check=False)
    if proc.returncode == 3:
        Console(stderr=True).print(f"[yellow]ns-3 comparison skipped:[/] {proc.stdout.strip() or proc.stderr.strip()}")
        return None
    if proc.returncode != 0:
        sys.exit(f"ns-3 run failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    build_runner()
    console = Console(width=130)
    results: dict[str, dict] = {}
    for transport in ("tcp", "quic"):
        for cc in ("newreno", "cubic"):
            results[f"{transport}-{cc}"] = ours(f"flow.bulk.transport={transport}", f"flow.bulk.cc={cc}")
    for delay in ("10 ms", "100 ms"):
        results[f"quic-window-{delay.replace(' ', '')}"] = ours(
            "flow.bulk.transport=quic", f"link.bottleneck.delay={delay}", "link.bottleneck.queue=2000 packets")
    results["quic-1GB"] = ours("flow.bulk.transport=quic", "flow.bulk.size=1 GB", "run.duration=1000 s")

    table = Table(title="multiconn transports (40 Mbit/s, 10 ms one way, 100-packet queue)")
    for col in ("case", "sim s", "wall s", "sim/wall", "Mevents/s", "ns/packet", "goodput Mbit/s", "peak RSS MiB"):
        table.add_column(col, justify="right" if col != "case" else "left")
    for name, r in results.items():
        table.add_row(name, f"{r['sim_s']:.1f}", f"{r['wall_s']:.3f}", f"{r['sim_over_wall']:.0f}",
                      f"{r['events_per_s'] / 1e6:.1f}", f"{r['ns_per_packet']:.0f}",
                      f"{r['goodput_mbps']:.2f}", f"{r['peak_rss_kib'] / 1024:.1f}")
    console.print(table)
    flat = results["quic-window-100ms"]["ns_per_packet"] / results["quic-window-10ms"]["ns_per_packet"]
    console.print(f"cost per packet, 10x larger window: x{flat:.2f}")

    comparison = {}
    for cc in ("newreno", "cubic"):
        theirs = ns3("--duration=20", f"--cc={cc}")
        if theirs is None:
            break
        mine = results[f"tcp-{cc}"]
        ratio = theirs["wall_seconds"] / mine["wall_s"]
        comparison[cc] = {"ns3": theirs, "multiconn_wall_s": mine["wall_s"], "speedup": ratio}
        console.print(f"TCP {cc}: ns-3 {theirs['wall_seconds']:.3f} s ({theirs['goodput_mbps']:.2f} Mbit/s), "
                      f"multiconn {mine['wall_s']:.3f} s ({mine['goodput_mbps']:.2f} Mbit/s): "
                      f"[bold]{ratio:.0f}x[/] faster")
    out = ROOT / "bench-out"
    out.mkdir(exist_ok=True)
    (out / "transport.json").write_text(json.dumps({"runs": results, "ns3": comparison}, indent=2) + "\n")


if __name__ == "__main__":
    main()
