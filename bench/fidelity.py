#!/usr/bin/env python3
"""The fidelity table: the same scenarios simulated with a stack profile and emulated with the
real stack, side by side. Regenerates docs/fidelity.md (run as root: the emulator needs it).

    sudo .venv/bin/python bench/fidelity.py [--out DIR] [--realtime] [--only TEXT ...] [--stack TEXT ...]
    .venv/bin/python bench/fidelity.py --simulate-only [--only TEXT ...] [--stack TEXT ...]
    .venv/bin/python bench/fidelity.py --resimulate --stack TEXT ... [--only TEXT ...]

Every point is a sized download; both sides are compared on the download goodput, size × 8 /
completion time (from the flow's start to its last byte in the simulator, to the client's exit
in the emulator, so process start and handshake count on both sides). Differences beyond 10 %
are flagged; docs/fidelity.md says what is known of each. With --only, only the points whose
point or stack label contains one of the texts run, and only their rows of the table change;
--stack narrows them to the stacks whose label contains one of its texts. --simulate-only runs
the simulated side alone and prints it (no root, no emulator, docs/fidelity.md left as it is).
--resimulate runs the simulated side alone too, after a profile changed, and writes its rows
against the emulated columns the table already has for the same point and real stack.

The emulator's ngtcp2 is Debian 12's ngtcp2 0.12.1: its points are simulated with the profile
of that version, `ngtcp2-0.12`, and also with `ngtcp2` (ngtcp2 1.x), both against the same
emulated runs (two rows). Likewise the emulator's aioquic is 1.7.2 (PyPI): its points are
simulated with `aioquic-1.7` and also with `aioquic` (1.0 to 1.3). tquic's redundant scheduler is simulated with the simulator's model
of its rule, `tquic_redundant`, and also with the simulator's RE, `redundant`, against the same
emulated runs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from multiconn.emulate import emulate  # noqa: E402

CATALOG = ROOT / "python" / "multiconn" / "catalog" / "scenarios"
SIZE_MB = 20

# (label, simulator overrides, emulator overrides) of the DC flow "dc" of dc_throughput.toml.
DC_STACKS = [
    ("kernel TCP CUBIC / linux-tcp", {"flow.dc.transport": "tcp", "flow.dc.profile": "linux-tcp", "flow.dc.cc": "cubic"}),
    ("ngtcp2 CUBIC / ngtcp2-0.12", {"flow.dc.profile": "ngtcp2-0.12", "flow.dc.cc": "cubic", "flow.dc.receiver.read_cost": "10 us"}),
    ("aioquic NewReno / aioquic-1.7", {"flow.dc.profile": "aioquic-1.7", "flow.dc.cc": "newreno", "flow.dc.receiver.read_cost": "100 us"}),
]
RECEIVER_ONLY = ("flow.dc.receiver.read_cost",)
# Further simulated rows against the same emulated runs: (stack label, its simulator
# overrides) for a stack label. The emulator's stack does not depend on the profile.
ALSO_SIMULATED = {
    "ngtcp2 CUBIC / ngtcp2-0.12": ("ngtcp2 CUBIC / ngtcp2 (1.x)", {"flow.dc.profile": "ngtcp2"}),
    "aioquic NewReno / aioquic-1.7": ("aioquic NewReno / aioquic (1.0-1.3)", {"flow.dc.profile": "aioquic"}),
    "tquic redundant CUBIC / multipath QUIC tquic_redundant (rfc9002)":
        ("tquic redundant CUBIC / multipath QUIC redundant (rfc9002)", {"flow.dc.multipath.scheduler": "redundant"}),
}

# The two-path point; crates/scenario/tests/it/tquic_redundant.rs runs the same file.
TWO_PATHS = ROOT / "bench" / "scenarios" / "two_paths.toml"


# An LTE/NR dual-connectivity split (examples/scenarios/emu_tcp_quic.toml's flow dl_dc alone):
# a 20 Mbit/s, 30 ms LTE leg and a 60 Mbit/s, 10 ms NR leg, batches of 50 with a quarter on LTE,
# ACKs over LTE.
LTE_NR = """
name = "lte_nr"
[run]
duration = "60 s"
seed = 1
[[link]]
name = "lte"
between = ["server", "phone"]
rate = "20 Mbit/s"
delay = "30 ms"
queue = "100 packets"
[[link]]
name = "nr"
between = ["server", "phone"]
rate = "60 Mbit/s"
delay = "10 ms"
queue = "200 packets"
[[split]]
name = "dc"
legs = ["lte", "nr"]
uplink = "lte"
policy = { model = "batch", size = 50, share = 0.25 }
t_reordering = "100 ms"
[[flow]]
name = "dc"
from = "server"
to = "phone"
transport = "quic"
app = "bulk"
size = "20 MB"
cc = "cubic"
profile = "ngtcp2-0.12"
route = ["dc"]
"""


def simulate(scenario: Path, sets: dict[str, str], seed: int) -> dict:
    from multiconn import run

    result = run(str(scenario), overrides=sets, seed=seed)
    return result.summary


def mean_std(xs: list[float]) -> tuple[float | None, float | None]:
    if not xs:
        return None, None
    mean = sum(xs) / len(xs)
    std = (sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0
    return mean, std


def goodput(summary: dict, size_bytes: int) -> float | None:
    """Size over the flow's time from its first packet to its last byte: the simulator's
    completion time, the emulator's transfer time on the wire (not the client's process
    lifetime, which adds its start-up and exit; docs/emulator.md)."""
    f = summary["flows"][0]
    if summary.get("mode") == "emulation":
        t = (f.get("transfer") or {}).get("seconds") if f.get("client_exit_code") == 0 else None
    else:
        t = f.get("completion_s")
    return None if not t else size_bytes * 8 / t / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="folder for the runs (default: a temporary one)")
    parser.add_argument("--realtime", action="store_true", help="run the emulator's loop under SCHED_FIFO")
    parser.add_argument("--reps", type=int, default=3, help="runs per point on each side, seeds 1..N (default 3)")
    parser.add_argument("--only", nargs="+", metavar="TEXT", default=None,
                        help="run only the points whose point or stack label contains one of these texts; "
                             "the other rows of docs/fidelity.md stay as they are")
    parser.add_argument("--stack", nargs="+", metavar="TEXT", default=None,
                        help="of those, run only the stacks whose label contains one of these texts; "
                             "the other rows of docs/fidelity.md stay as they are")
    parser.add_argument("--resimulate", action="store_true",
                        help="run only the simulated side and compare it with the emulated columns already in "
                             "docs/fidelity.md for the same point and real stack (after a profile changed; no root)")
    parser.add_argument("--simulate-only", action="store_true",
                        help="run and print only the simulated side (no root, no emulator; docs/fidelity.md "
                             "is left as it is)")
    args = parser.parse_args()
    if args.resimulate and not (args.only or args.stack):
        sys.exit("fidelity: --resimulate rewrites rows: name them with --only or --stack")
    table = emulated_rows(ROOT / "docs" / "fidelity.md") if args.resimulate else {}
    if os.geteuid() != 0 and not (args.simulate_only or args.resimulate):
        sys.exit("fidelity: the emulator needs root (sudo .venv/bin/python bench/fidelity.py)")
    work = Path(args.out or tempfile.mkdtemp(prefix="fidelity-"))
    work.mkdir(parents=True, exist_ok=True)
    size = SIZE_MB * 1_000_000
    points = []
    dc = CATALOG / "dc_throughput.toml"
    families = [(f"DC batch {b}", {"split.dc.policy.size": str(b)}) for b in (10, 100, 500)]
    # The batch split sweep (batch 100: 50 % on leg 1) and the loss sweep, as the DC study's.
    families += [("DC split 70 % on leg 1", {"split.dc.policy.share": "0.7"})]
    families += [
        ("DC split 90 % on leg 1", {"split.dc.policy.share": "0.9"}),
        ("DC loss 0.08 % on both legs", {"link.leg1.forward.loss": "0.08 %", "link.leg2.forward.loss": "0.08 %"}),
        ("DC loss 0.32 % on both legs", {"link.leg1.forward.loss": "0.32 %", "link.leg2.forward.loss": "0.32 %"}),
        ("DC loss 0.64 % on both legs", {"link.leg1.forward.loss": "0.64 %", "link.leg2.forward.loss": "0.64 %"}),
        ("DC delay ratio 5:1 (167 / 33 ms)", {"link.leg1.delay.mean": "166.667 ms", "link.leg2.delay.mean": "33.333 ms"}),
    ]
    for point, family_sets in families:
        for label, sets in DC_STACKS:
            common = {**family_sets, "flow.dc.size": f"{SIZE_MB} MB", "run.duration": "120 s"}
            points.append((point, label, dc, {**common, **sets},
                           {**common, **{k: v for k, v in sets.items() if k not in RECEIVER_ONLY}}))
    two = TWO_PATHS
    points.append(("two paths 20 + 10 Mbit/s", "kernel MPTCP / linux-mptcp-5.15", two, {}, {}))
    quic = {"flow.dc.transport": "quic", "flow.dc.profile": "rfc9002"}
    # tquic's REDUNDANT against the simulator's model of its rule (the emulator runs tquic's
    # REDUNDANT for `tquic_redundant` as for `redundant`).
    for label, scheduler in (("tquic minrtt CUBIC / multipath QUIC (rfc9002)", "minrtt"),
                             ("tquic redundant CUBIC / multipath QUIC tquic_redundant (rfc9002)", "tquic_redundant")):
        sets = {**quic, "flow.dc.multipath.scheduler": scheduler}
        points.append(("two paths 20 + 10 Mbit/s", label, two, sets, sets))

    lte_nr = work / "lte_nr.toml"
    lte_nr.write_text(LTE_NR)
    points.append(("LTE/NR split 20 + 60 Mbit/s", "ngtcp2 CUBIC / ngtcp2-0.12", lte_nr, {}, {}))
    if args.only:
        points = [p for p in points if any(t in p[0] or t in p[1] or t in ALSO_SIMULATED.get(p[1], ("",))[0]
                                           for t in args.only)]
    if args.stack:
        points = [p for p in points if any(t in p[1] or t in ALSO_SIMULATED.get(p[1], ("",))[0]
                                           for t in args.stack)]

    rows = []
    seeds = range(1, args.reps + 1)
    for i, (point, label, scenario, sim_sets, emu_sets) in enumerate(points):
        if not args.simulate_only and shutil.which("tquic_server") is None and label.startswith("tquic") and not (
                Path(sys.executable).parent / "tquic_server").exists():
            print(f"{point}: {label}: skipped (tquic_tools is not installed)")
            continue
        sims = [g for seed in seeds if (g := goodput(simulate(scenario, sim_sets, seed), size)) is not None]
        emus, p99s = [], []
        reused = table.get((point, label.split(" / ")[0]))
        if args.resimulate and reused is None:
            sys.exit(f"fidelity: --resimulate: docs/fidelity.md has no emulated row for {point}: {label.split(' / ')[0]}")
        for seed in ([] if args.simulate_only or args.resimulate else seeds):
            s = emulate(str(scenario), work / f"emu-{i}-{seed}", overrides=list(emu_sets.items()), seed=seed,
                        quiet=True, realtime=args.realtime)
            if (g := goodput(s, size)) is not None:
                emus.append(g)
            p99s.append(s["timing"]["p99_us"] or 0.0)
        emu, emu_sd = mean_std(emus)
        if reused is not None:
            emu, emu_sd, p99s = reused[0], reused[1], [reused[2]]
        also = [ALSO_SIMULATED[label]] if label in ALSO_SIMULATED else []
        for row_label, sims in [(label, sims)] + [
                (l, [g for seed in seeds if (g := goodput(simulate(scenario, {**sim_sets, **o}, seed), size)) is not None])
                for l, o in also]:
            sim, sim_sd = mean_std(sims)
            diff = None if not (sim and emu) else (emu - sim) / sim
            p99 = max(p99s, default=0.0)
            rows.append({"point": point, "stack": row_label, "sim_mbps": sim, "sim_sd": sim_sd, "emu_mbps": emu,
                         "emu_sd": emu_sd, "runs": [len(sims), len(emus)], "difference": diff,
                         "p99_us": p99})
            if reused is not None:
                rows[-1]["runs"] = [len(sims), args.reps]
            emu_part = "" if args.simulate_only else (
                f"  emu {emu or 0:7.2f} ± {emu_sd or 0:5.2f}  {'' if diff is None else f'{diff:+.0%}'}  p99 ≤ {p99:.0f} µs")
            print(f"{point:28s} {row_label:34s} sim {sim or 0:7.2f} ± {sim_sd or 0:5.2f}{emu_part}", flush=True)
    (work / "fidelity.json").write_text(json.dumps(rows, indent=1) + "\n")
    if args.simulate_only:
        return
    write_doc(rows, args.realtime, args.reps, partial=bool(args.only or args.stack))


def emulated_rows(doc: Path) -> dict[tuple[str, str], tuple[float, float, float]]:
    """The emulated columns of docs/fidelity.md's table: (point, real stack) -> (mean, standard
    deviation, p99 lateness µs)."""
    out = {}
    for line in doc.read_text().split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not line.startswith("| ") or " ± " not in cells[3]:
            continue
        mean, sd = (float(x) for x in cells[3].split(" ± "))
        out[(cells[0], cells[1].split(" / ")[0])] = (mean, sd, float(cells[5]))
    return out


def row_line(r: dict) -> str:
    diff = "—" if r["difference"] is None else f"{r['difference']:+.0%}"
    if r["difference"] is not None and abs(r["difference"]) > 0.10:
        diff = f"**{diff}**"
    sim = "—" if r["sim_mbps"] is None else f"{r['sim_mbps']:.2f} ± {r['sim_sd']:.2f}"
    emu = "—" if r["emu_mbps"] is None else f"{r['emu_mbps']:.2f} ± {r['emu_sd']:.2f}"
    return f"| {r['point']} | {r['stack']} | {sim} | {emu} | {diff} | {r['p99_us']:.0f} |"


def update_rows(doc: Path, rows: list[dict]) -> None:
    """Replaces the table rows of the points in `rows`, keeps the rest. A new row goes before the
    first row of its point with the same real stack, else after the last row of its point (new
    points at the end)."""
    lines = doc.read_text().split("\n")
    new = {(r["point"], r["stack"]): row_line(r) for r in rows}
    cells_of = lambda line: [c.strip() for c in line.strip("|").split("|")]  # noqa: E731
    is_row = lambda line: line.startswith("| ") and not line.startswith("| point")  # noqa: E731
    for i, line in enumerate(lines):
        if is_row(line) and tuple(cells_of(line)[:2]) in new:
            lines[i] = new.pop(tuple(cells_of(line)[:2]))
    for (point, stack), row in new.items():
        table = [i for i, line in enumerate(lines) if is_row(line)]
        of_point = [i for i in table if cells_of(lines[i])[0] == point]
        same_stack = [i for i in of_point if cells_of(lines[i])[1].split(" / ")[0] == stack.split(" / ")[0]]
        at = same_stack[0] if same_stack else (of_point or table)[-1] + 1
        lines[at:at] = [row]
    doc.write_text("\n".join(lines))
    print(f"updated {len(rows)} rows of {doc}")


def write_doc(rows: list[dict], realtime: bool, reps: int, partial: bool = False) -> None:
    doc = ROOT / "docs" / "fidelity.md"
    if partial and doc.exists():
        return update_rows(doc, rows)
    lines = [
        "# Fidelity: the simulator's stack profiles against the real stacks",
        "",
        "Regenerated by `sudo .venv/bin/python bench/fidelity.py` "
        f"({datetime.date.today().isoformat()}, emulator loop {'SCHED_FIFO' if realtime else 'normal'}). "
        f"Every point is a {SIZE_MB} MB download, simulated with the profile and emulated with the real "
        f"stack through the same scenario ([docs/emulator.md](emulator.md)), {reps} runs on each side "
        f"(seeds 1 to {reps}: the models' random streams; the real stacks add their own variation); "
        "goodput is size × 8 / the time from the flow's first packet to its last byte (the simulator's completion time; the emulator's transfer time on the wire, not the client's process lifetime), mean ± standard deviation. DC points use the catalogue's `dc_throughput.toml` (two 20 Mbit/s legs, "
        "normal delay 10 ms ± 10 %, batches of 100 split 1:1, t-Reordering 200 ms, 1 ms per PDCP proxy) "
        "with one change each, as the DC study's sweeps; the two-path points are a 20 Mbit/s, 10 ms "
        "and a 10 Mbit/s, 30 ms path. "
        "**Bold**: the two differ by more than 10 %.",
        "",
        "| point | real stack / profile | simulated Mbit/s | emulated Mbit/s | difference | emulator p99 lateness µs (worst run) |",
        "|---|---|---|---|---|---|",
    ]
    lines += [row_line(r) for r in rows]
    notes = doc.read_text().split("<!-- notes -->", 1)[1] if doc.exists() and "<!-- notes -->" in doc.read_text() else (
        "\n\n## What is known of the differences\n\n(to be written)\n")
    doc.write_text("\n".join(lines) + "\n\n<!-- notes -->" + notes)
    print(f"wrote {doc}")


if __name__ == "__main__":
    main()
