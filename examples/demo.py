"""`make demo`: two ways of using two radio links at once, in a few seconds.

Runs examples/scenarios/demo.toml (QUIC over an LTE/NR dual-connectivity split next to
Multipath QUIC over two operators, one of which loses coverage for four seconds), writes the
run's files, its figures and an HTML page into the output folder, and prints what the run
shows, every number read from the results.

    python examples/demo.py --out out/demo [--seed N] [--duration 20s]
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

import multiconn
from multiconn.plot.page import write_run_page
from multiconn.source import parse_set_option

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "demo.toml"
GAP = (8.0, 12.0)
"""Operator B's coverage gap in the scenario (its `down` window), seconds."""


def _flow(summary: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in summary["flows"] if f["name"] == name)


def _link(summary: dict[str, Any], name: str) -> dict[str, Any]:
    return next(link for link in summary["links"]
                if link["name"] == name and link["direction"] == "forward")


def _mean_throughput(result: multiconn.RunResult, flow: str, start: float, end: float) -> float:
    ts = result.timeseries
    rows = ts[(ts["kind"].astype(str) == "flow") & (ts["name"].astype(str) == flow)
              & (ts["time_s"] >= start) & (ts["time_s"] < end)]
    return float(rows["throughput_mbps"].mean()) if len(rows) else float("nan")


def notes(result: multiconn.RunResult) -> list[str]:
    """What a newcomer should notice in this run, as sentences."""
    summary = result.summary
    dc = _flow(summary, "phone_dc")
    split = dc["pdcp"]["dc"]
    lte, nr = _link(summary, "lte"), _link(summary, "nr")
    lines = [
        f"Dual connectivity: phone_dc gets {dc['goodput_mbps']:.1f} Mbit/s from legs of "
        f"{lte['capacity_mbps']:.0f} + {nr['capacity_mbps']:.0f} Mbit/s. The 50/50 batch split "
        f"sends as much over LTE ({lte['utilization'] * 100:.0f} % busy) as over NR "
        f"({nr['utilization'] * 100:.0f} % busy), so the slower leg sets the pace. PDUs waited "
        f"{split['reorder_delay_mean_ms']:.1f} ms on average (at most "
        f"{split['reorder_delay_max_ms']:.0f} ms) in the phone's PDCP entity to be put back in "
        f"order; t-Reordering expired {split['timer_expiries']} times.",
        "  Try: make demo DEMO_SET=split.dc.policy.share=0.25  (a quarter of the batches on "
        "LTE)",
    ]
    mp = _flow(summary, "vehicle_mp")
    before = _mean_throughput(result, "vehicle_mp", 2.0, GAP[0])
    during = _mean_throughput(result, "vehicle_mp", GAP[0] + 0.5, GAP[1])
    after = _mean_throughput(result, "vehicle_mp", GAP[1] + 2.0, summary["sim_time_s"])
    paths = mp.get("paths") or []
    reopened = [p["path"] for p in paths if (p.get("client") or {}).get("path_ids_opened", 0) > 1]
    lines.append(
        f"Multipath: vehicle_mp averages {mp['goodput_mbps']:.1f} Mbit/s. While operator B "
        f"has no coverage ({GAP[0]:g}-{GAP[1]:g} s) it falls from {before:.1f} to "
        f"{during:.1f} Mbit/s on operator A alone, and comes back to {after:.1f} Mbit/s once "
        + (f"path {reopened[0]} is reopened with a new path ID."
           if reopened else "operator B returns."))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="out/demo", help="output folder (default out/demo)")
    parser.add_argument("--seed", type=int, help="master seed (default: the scenario's, 1)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a scenario value (repeatable)")
    args = parser.parse_args(argv)
    try:
        overrides = [parse_set_option(item) for item in args.overrides]
        result = multiconn.run(SCENARIO, seed=args.seed, overrides=overrides, progress=False)
    except (multiconn.ScenarioError, ValueError) as exc:
        print(f"demo: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    result.write(out)
    page = write_run_page(out, out)
    print(f"{SCENARIO.name}: {result.summary['sim_time_s']:g} s simulated in "
          f"{result.summary['wall_time_s']:.2f} s ({result.summary['events']:,} events)\n")
    for line in notes(result):
        indent = " " * (len(line) - len(line.lstrip()))
        print(textwrap.fill(line.strip(), 92, initial_indent=indent,
                            subsequent_indent=indent + "  "))
    print(f"\nFigures: {out / 'figures'}   Page: {page}")
    print(f"Tables: multiconn report {out}   Any run: multiconn run SCENARIO --out DIR, "
          "then multiconn plot DIR")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
