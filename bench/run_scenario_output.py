"""Reads what the `run_scenario` example prints with MULTICONN_PRINT_FLOWS=1: one JSON line per
flow and link direction, and one line of run statistics (wall_s, sim_s, events, events_per_s).
Shared by the cell benchmark and the LENA cross-check."""

from __future__ import annotations

import json


def steady_goodput_and_stats(stdout: str) -> tuple[dict[str, float], dict | None]:
    """The flows' steady goodput (Mbit/s) by flow name, and the run's statistics line (None
    when it is missing)."""
    goodput: dict[str, float] = {}
    stats = None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if "steady_goodput_mbps" in row:
            goodput[row["name"]] = row["steady_goodput_mbps"]
        elif "wall_s" in row:
            stats = row
    return goodput, stats
