#!/usr/bin/env python3
"""Run-to-run spread: the real stacks' against the simulator's with the host model
(`[flow.host]`, docs/fidelity.md "Run-to-run spread").

    sudo .venv/bin/python bench/spread.py emulate bench/spread.json [--reps 10] [--realtime] [--only TEXT ...]
    .venv/bin/python bench/spread.py calibrate bench/spread.json   # no root
    .venv/bin/python bench/spread.py check bench/spread.json       # no root

`emulate` runs every point `--reps` times in the emulator, a round of every point at a time,
and records each run's goodput (the transfer time on the wire, as bench/fidelity.py counts
it), the emulator's own p99 lateness, so that its timing error is not taken for the stacks',
and the machine's load average before the run. `calibrate` searches the host
model's grid (the mean CPU time per packet near the stack's own, its variation and the timers'
lateness free) for the values whose coefficient of variation of goodput over seeds 1..reps (and
whose mean, weighted ten times as much in log ratio: the noise must not slow the stack) is
closest (in log ratio) to the real runs' at the calibration point of each real stack (kernel
TCP, ngtcp2, aioquic: the model is switched on per profile), and writes them into OUT.json. `check` runs
the other points, which took no part in the calibration, with those values, and prints both
CVs and their ratio; the table in docs/fidelity.md is its output.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

from fidelity import goodput, mean_std  # noqa: E402

BOTTLENECK = ROOT / "bench" / "scenarios" / "bottleneck.toml"
DC = ROOT / "python" / "multiconn" / "catalog" / "scenarios" / "dc_throughput.toml"
NGTCP2 = {"flow.dl.transport": "quic", "flow.dl.profile": "ngtcp2-0.12"}
AIOQUIC = {"flow.dl.transport": "quic", "flow.dl.profile": "aioquic-1.7", "flow.dl.cc": "newreno",
           "flow.dl.receiver.read_cost": "100 us"}

# (label, stack kind, scenario, overrides, size in bytes, calibration point?)
POINTS = [
    ("20 Mbit/s, 20 ms, 50 packets", "kernel", BOTTLENECK, {}, 10_000_000, True),
    ("20 Mbit/s, 20 ms, 50 packets", "quic", BOTTLENECK, NGTCP2, 10_000_000, True),
    ("20 Mbit/s, 20 ms, 50 packets", "aioquic", BOTTLENECK, AIOQUIC, 10_000_000, True),
    ("40 Mbit/s, 10 ms, 100 packets", "kernel", BOTTLENECK,
     {"link.path.rate": "40 Mbit/s", "link.path.delay": "10 ms", "link.path.queue": "100 packets"}, 10_000_000, False),
    ("40 Mbit/s, 10 ms, 100 packets", "quic", BOTTLENECK,
     {**NGTCP2, "link.path.rate": "40 Mbit/s", "link.path.delay": "10 ms", "link.path.queue": "100 packets"},
     10_000_000, False),
    ("DC batch 100 (dc_throughput)", "quic", DC,
     {"flow.dc.profile": "ngtcp2-0.12", "flow.dc.cc": "cubic", "flow.dc.size": "20 MB", "run.duration": "120 s"},
     20_000_000, False),
    ("40 Mbit/s, 10 ms, 100 packets", "aioquic", BOTTLENECK,
     {**AIOQUIC, "link.path.rate": "40 Mbit/s", "link.path.delay": "10 ms", "link.path.queue": "100 packets"},
     10_000_000, False),
    ("DC batch 100 (dc_throughput)", "aioquic", DC,
     {"flow.dc.profile": "aioquic-1.7", "flow.dc.cc": "newreno", "flow.dc.receiver.read_cost": "100 us",
      "flow.dc.size": "20 MB", "run.duration": "120 s"},
     20_000_000, False),
]
STACK_OF = {"kernel": "kernel TCP CUBIC / linux-tcp", "quic": "ngtcp2 CUBIC / ngtcp2-0.12",
            "aioquic": "aioquic NewReno / aioquic-1.7"}
# One calibration per real stack (the host model is switched on per profile): each stack's
# process spends its own time per packet, with its own variation (C for ngtcp2, CPython for
# aioquic, softirq for the kernel's TCP).
KIND = {"kernel": "kernel", "quic": "ngtcp2", "aioquic": "aioquic"}
# The mean CPU time per packet stays near each stack's own (`read_cost`: ngtcp2 4 µs in its
# profile and 10 µs in the DC catalogue, aioquic 50 and 100 µs; the kernel's TCP a few µs): the
# grid tries a few values around it. Only its variation and the timers' lateness are free.
PER_PACKET = {"kernel": ["1 us", "2 us", "5 us"], "ngtcp2": ["5 us", "10 us", "20 us"],
              "aioquic": ["50 us", "100 us", "200 us"]}
GRID = {
    "per_packet_cv": ["0.5", "1", "2", "5", "10"],
    "timer_lateness": ["0 us", "20 us", "100 us", "500 us"],
}


def key(i: int) -> str:
    label, stack, *_ = POINTS[i]
    return f"{label} | {STACK_OF[stack]}"


def flow_of(overrides: dict[str, str]) -> str:
    return "dc" if any(k.startswith("flow.dc.") for k in overrides) else "dl"


def host_sets(flow: str, host: dict[str, str]) -> dict[str, str]:
    return {f"flow.{flow}.host.{k}": v for k, v in host.items()}


def cv(xs: list[float]) -> float:
    mean, sd = mean_std(xs)
    return (sd or 0.0) / mean if mean else math.nan


def percent(x: float) -> str:
    """A coefficient of variation in per cent, to two decimals below 1 %."""
    return f"{100 * x:.2f} %" if x < 0.01 else f"{100 * x:.1f} %"


def simulate(i: int, host: dict[str, str] | None, reps: int) -> list[float]:
    from multiconn import run

    _, _, scenario, sets, size, _ = POINTS[i]
    extra = host_sets(flow_of(sets), host) if host else {}
    out = []
    for seed in range(1, reps + 1):
        g = goodput(run(str(scenario), overrides={**sets, **extra}, seed=seed).summary, size)
        if g is not None:
            out.append(g)
    return out


def cmd_emulate(args: argparse.Namespace) -> None:
    from multiconn.emulate import emulate

    if os.geteuid() != 0:
        sys.exit("spread: the emulator needs root (sudo .venv/bin/python bench/spread.py emulate ...)")
    data = json.loads(Path(args.file).read_text()) if Path(args.file).exists() else {}
    real = data.setdefault("real", {})
    work = Path(tempfile.mkdtemp(prefix="spread-"))
    chosen = [i for i in range(len(POINTS)) if not args.only or any(t in key(i) for t in args.only)]
    for i in chosen:
        real[key(i)] = {"goodput": [], "p99_us": [], "load": []}
    # Round by round, every point once a round: a machine whose speed drifts over the session
    # (another process, the CPU's clock) then spreads its drift over every point alike instead
    # of showing it as one point's spread. The one-minute load average before each run is kept.
    for seed in range(1, args.reps + 1):
        for i in chosen:
            _, _, scenario, sets, size, _ = POINTS[i]
            load = os.getloadavg()[0]
            s = emulate(str(scenario), work / f"{i}-{seed}", overrides=list(sets.items()), seed=seed,
                        quiet=True, realtime=args.realtime)
            entry = real[key(i)]
            if (g := goodput(s, size)) is not None:
                entry["goodput"].append(g)
            entry["p99_us"].append(s["timing"]["p99_us"] or 0.0)
            entry["load"].append(round(load, 2))
        print(f"round {seed} of {args.reps} done", flush=True)
        Path(args.file).write_text(json.dumps(data, indent=1) + "\n")
    for i in chosen:
        runs, p99 = real[key(i)]["goodput"], real[key(i)]["p99_us"]
        print(f"{key(i)}: real CV {cv(runs):.3f} over {len(runs)} runs, p99 lateness ≤ {max(p99):.0f} µs, "
              f"load before a run ≤ {max(real[key(i)]['load']):.2f}", flush=True)


def cmd_calibrate(args: argparse.Namespace) -> None:
    data = json.loads(Path(args.file).read_text())
    chosen = {}
    for kind in sorted(set(KIND.values())):
        points = [i for i, p in enumerate(POINTS) if p[5] and KIND[p[1]] == kind]
        best = None
        for per_packet, *values in itertools.product(PER_PACKET[kind], *GRID.values()):
            host = {"per_packet": per_packet, **dict(zip(GRID, values))}
            err = 0.0
            for i in points:
                runs = data["real"][key(i)]["goodput"]
                sims = simulate(i, host, args.reps)
                # The spread's log ratio, and the mean's: noise that matched the spread by
                # slowing the stack down would not be the real stack's.
                err += math.log(max(cv(sims), 1e-4) / max(cv(runs), 1e-4)) ** 2
                err += (10 * math.log(mean_std(sims)[0] / mean_std(runs)[0])) ** 2
            if best is None or err < best[0]:
                best = (err, host)
            print(f"{kind}: {host} error {err:.3f}", flush=True)
        assert best is not None
        chosen[kind] = best[1]
        print(f"{kind}: chosen {best[1]}")
    data["host"] = chosen
    Path(args.file).write_text(json.dumps(data, indent=1) + "\n")


def cmd_check(args: argparse.Namespace) -> None:
    data = json.loads(Path(args.file).read_text())
    rows = []
    for i, (label, stack, _, _, _, calibration) in enumerate(POINTS):
        real = data["real"][key(i)]
        off = simulate(i, None, args.reps)
        on = simulate(i, data["host"][KIND[stack]], args.reps)
        rows.append({"point": label, "stack": STACK_OF[stack], "calibration": calibration,
                     "real_cv": cv(real["goodput"]), "real_mean": mean_std(real["goodput"])[0],
                     "p99_us": max(real["p99_us"]), "off_cv": cv(off), "on_cv": cv(on),
                     "on_mean": mean_std(on)[0], "runs": [len(real["goodput"]), len(on)]})
        r = rows[-1]
        ratio = r["on_cv"] / r["real_cv"] if r["real_cv"] else math.nan
        mark = "" if calibration or 0.5 <= ratio <= 2 else "**"
        print(f"| {label} | {r['stack']} | {'yes' if calibration else 'no'} | {r['real_mean']:.2f} | "
              f"{percent(r['real_cv'])} | {r['p99_us']:.0f} | {percent(r['off_cv'])} | {r['on_mean']:.2f} | "
              f"{percent(r['on_cv'])} | {mark}{ratio:.2f}{mark} |", flush=True)
    checked = [r for r in rows if not r["calibration"]]
    within = [r for r in checked if r["real_cv"] and 0.5 <= r["on_cv"] / r["real_cv"] <= 2]
    print(f"\n{len(within)} of {len(checked)} points not used for calibration within a factor of 2 of the real spread")
    data["check"] = rows
    Path(args.file).write_text(json.dumps(data, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("emulate", "calibrate", "check"):
        p = sub.add_parser(name)
        p.add_argument("file", help="the JSON file the runs and the calibration are kept in")
        p.add_argument("--reps", type=int, default=10, help="runs per point on each side (default 10)")
        if name == "emulate":
            p.add_argument("--realtime", action="store_true", help="the emulator's loop under SCHED_FIFO")
            p.add_argument("--only", nargs="+", metavar="TEXT",
                           help="only the points whose label contains one of these texts")
    args = parser.parse_args()
    {"emulate": cmd_emulate, "calibrate": cmd_calibrate, "check": cmd_check}[args.command](args)


if __name__ == "__main__":
    main()
