#!/usr/bin/env python3
"""Benchmark: the emulator's timing error (issue "the emulator").

Kernel TCP (iperf3, CUBIC) downloads for 7 s through one emulated link, and through a DC split
of two legs of half the rate each, at 20, 100, 200, 500 and 1000 Mbit/s; the one link with the emulator's loop under the
normal scheduler and under SCHED_FIFO (`--realtime`), the split under SCHED_FIFO. For every run: how
late packets were written into the receiving namespace after the model released them (median,
p99, max), the goodput iperf3 measured against the rate, and the TUN write failures. Reports
the highest rate at which p99 stays under 1 ms. Needs root (the emulator does); without it,
says so and exits 0. Writes the numbers as JSON to bench-out/emu.json.

For comparison, Mahimahi releases packets on whole-millisecond ticks (its timestamps are
truncated to ms) and its users report trouble from 500-650 Mbit/s (mahimahi #144, pantheon #72).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from multiconn.emulate import emulate  # noqa: E402
from multiconn.errors import EmulationError  # noqa: E402

RATES = [20, 100, 200, 500, 1000]

ONE_LINK = """
name = "bench-link"
[run]
duration = "8 s"
bin = "1 s"
[[link]]
name = "l"
between = ["server", "client"]
rate = "{rate} Mbit/s"
delay = "10 ms"
queue = "1.5 BDP"
[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "cubic"
"""

DC_SPLIT = """
name = "bench-dc"
[run]
duration = "8 s"
bin = "1 s"
[[link]]
name = "lte"
between = ["server", "client"]
rate = "{half} Mbit/s"
delay = "20 ms"
queue = "1.5 BDP"
[[link]]
name = "nr"
between = ["server", "client"]
rate = "{half} Mbit/s"
delay = "10 ms"
queue = "1.5 BDP"
[[split]]
name = "dc"
legs = ["lte", "nr"]
policy = {{ model = "batch", size = 10, share = 0.5 }}
t_reordering = "100 ms"
[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "cubic"
route = ["dc"]
"""


def main() -> None:
    if os.geteuid() != 0:
        print("bench_emu: skipped (the emulator needs root)")
        return
    work = Path(tempfile.mkdtemp(prefix="bench-emu-"))
    rows = []
    for kind, template, realtime in (("one link", ONE_LINK, False), ("one link", ONE_LINK, True),
                                     ("DC split", DC_SPLIT, True)):
        for rate in RATES:
            path = work / f"{kind.replace(' ', '-')}-{rate}-{realtime}.toml"
            path.write_text(template.format(rate=rate, half=rate / 2))
            try:
                s = emulate(str(path), work / path.stem, quiet=True, max_rate_mbps=2000, realtime=realtime)
            except EmulationError as exc:
                print(f"bench_emu: {exc}")
                return
            f = s["flows"][0]
            t = s["timing"]
            goodput = (f.get("app_report") or {}).get("goodput_mbps")
            rows.append({"path": kind, "realtime": realtime, "rate_mbps": rate, "goodput_mbps": goodput,
                         "median_us": t["median_us"], "p99_us": t["p99_us"], "max_us": t["max_us"],
                         "packets": t["packets"],
                         "tun_write_failures": s["outside_models"]["tun_write_failures"]})
    table = Table(title="emulator timing: kernel TCP (iperf3), 7 s, lateness of each packet's write after its model release")
    for col in ("path", "loop", "rate Mbit/s", "goodput Mbit/s", "median µs", "p99 µs", "max µs", "packets", "TUN write failures"):
        table.add_column(col, justify="right")
    for r in rows:
        g = r["goodput_mbps"]
        table.add_row(r["path"], "SCHED_FIFO" if r["realtime"] else "normal", str(r["rate_mbps"]), "-" if g is None else f"{g:.1f}", f"{r['median_us']:.0f}",
                      f"{r['p99_us']:.0f}", f"{r['max_us']:.0f}", str(r["packets"]), str(r["tun_write_failures"]))
    Console().print(table)
    for kind, realtime in (("one link", False), ("one link", True), ("DC split", True)):
        ok = [r["rate_mbps"] for r in rows if r["path"] == kind and r["realtime"] == realtime
              and r["p99_us"] is not None and r["p99_us"] < 1000]
        loop = "SCHED_FIFO" if realtime else "normal"
        print(f"{kind}, {loop} loop: highest rate with p99 under 1 ms: {max(ok) if ok else 'none'} Mbit/s")
    out = ROOT / "bench-out"
    out.mkdir(exist_ok=True)
    (out / "emu.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
