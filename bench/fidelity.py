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

Beside the downloads (duplication and an LTE trace among them), two more kinds of point have
tables of their own. Fairness: `dc_fairness.toml`'s three flows (one over DC, one on each leg),
each flow's rate being the IP bytes its receiving PDCP entity delivered in order over the first
FAIR_WINDOW_S seconds from the run's first such byte (the same time-series bins on both sides),
compared with Jain's index over the three. V2X: seed 004's messages over one path, simulated
with `aioquic-1.7` and emulated with `multiconn.emu_messages` (real aioquic 1.7.2), compared on
the priority messages' reliability P(OWD < 100 ms) and their median and 99th-percentile OWD.
The table's first line counts the rows within 10 %: a row is when every difference in it is.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import subprocess
import sys
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
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
    "tquic minrtt BBRv3 / multipath QUIC tquic_minrtt bbr3 (rfc9002)":
        ("tquic minrtt BBRv3 / multipath QUIC minrtt bbr3 (rfc9002)", {"flow.dc.multipath.scheduler": "minrtt"}),
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



# Fairness: dc_fairness.toml's three flows at the two delay ratios of the DC study's fairness
# findings that differ most (dc-low-delay-ratio-fairness's and dc-high-delay-ratio-fairness's
# 5:1), measured over FAIR_WINDOW_S seconds instead of the study's 180.
FAIR_SCENARIO = CATALOG / "dc_fairness.toml"
FAIR_FLOWS = ("dc", "sc1", "sc2")
FAIR_FLOW_NAMES = {"dc": "DC flow", "sc1": "leg 1 flow", "sc2": "leg 2 flow"}
FAIR_WINDOW_S = 60.0
FAIR_POINTS = [
    ("DC fairness, delay ratio 5:1 of 20 ms (16.7 / 3.3 ms)",
     {"link.leg1.delay.mean": "16.667 ms", "link.leg2.delay.mean": "3.333 ms"}),
    ("DC fairness, delay ratio 5:1 of 200 ms (167 / 33 ms)",
     {"link.leg1.delay.mean": "166.667 ms", "link.leg2.delay.mean": "33.333 ms"}),
]
# The kernel's default receive buffer, 212992 bytes, which Debian's gtlsclient keeps (it sets no
# SO_RCVBUF): asking for half of it under the scenario's 25 MB rmem_max gives the same.
DEFAULT_RCVBUF_REQUEST = "106496 B"
# aioquic's clients ask for the scenario's 25 MB (the kernel grants 50 MB, as with rmem_max at
# 25 MB in the study); a namespace cannot raise rmem_max, so the client forces it.
AIOQUIC_RCVBUF = 25_000_000
# The aioquic clients of a `command` flow start this long after the run, once the servers (which
# the emulator does not wait for) listen; the window starts at the first delivered byte anyway.
COMMAND_CLIENT_DELAY_S = 2


def _per_flow(sets: dict[str, str]) -> dict[str, str]:
    return {f"flow.{f}.{k}": v for f in FAIR_FLOWS for k, v in sets.items()}


def _toml_string(text: str) -> str:
    """`text` as a TOML basic string, so that `--set` takes it whole."""
    return json.dumps(text)


def aioquic_command_sets(flow: str, cc: str, cert: Path, key: Path, rcvbuf: int) -> dict[str, str]:
    """`[flow.emulate]` of a `command` flow running the `aioquic` stack's own programs
    (multiconn.emu_aioquic, as its launcher starts them) with the client's receive buffer. The
    server writes no qlog: three aioquic connections need most of the machine's two cores
    already, and logging every packet costs a CPython sender more of it."""
    py = f"PYTHONPATH={ROOT / 'python'} exec {sys.executable} -m multiconn.emu_aioquic"
    server = f"{py} server --host {{server_addr}} --port 4433 --cc {cc} --cert {cert} --key {key}"
    client = (f"sleep {COMMAND_CLIENT_DELAY_S} && {py} client --host {{server_addr}} --port 4433 --cc {cc} "
              f"--size {{size}} --report {{out}}/client.json --rcvbuf {rcvbuf}")
    return {f"flow.{flow}.emulate.stack": "command", f"flow.{flow}.emulate.server": _toml_string(server),
            f"flow.{flow}.emulate.client": _toml_string(client)}


def window_rates(timeseries, window_s: float) -> dict[str, float]:
    """Each flow's rate in Mbit/s over `window_s` seconds from the run's first delivered byte:
    the IP bytes its receiving PDCP entity delivered in order (the time series' `bearer` rows,
    which the simulator and the emulator build with the same code) in the bins from the first
    bin in which any flow's bearer delivered something. `timeseries` is a DataFrame of the
    time-series table."""
    bearer = timeseries[timeseries["kind"] == "bearer"]
    if bearer.empty:
        raise ValueError("the time series has no bearer rows (no flow crosses a split)")
    times = sorted(set(float(t) for t in bearer["time_s"]))
    bin_s = times[1] - times[0] if len(times) > 1 else window_s
    t0 = float(bearer[bearer["bytes_delivered"] > 0]["time_s"].min())
    end = t0 + window_s
    if times[-1] + bin_s < end - 1e-9:
        raise ValueError(f"the run ends at {times[-1] + bin_s:.1f} s, before the window's end at {end:.1f} s")
    inside = bearer[(bearer["time_s"] >= t0 - 1e-9) & (bearer["time_s"] < end - 1e-9)]
    return {str(name): float(group["bytes_delivered"].sum()) * 8 / window_s / 1e6
            for name, group in inside.groupby("name")}


def jain(xs: list[float]) -> float:
    """Jain's fairness index, (Σx)² / (n Σx²): 1 when all are equal, 1/n when one takes all."""
    if not xs or not any(xs):
        raise ValueError("Jain's index needs at least one positive rate")
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def fairness_values(rates: dict[str, float]) -> dict[str, float]:
    """The compared quantities of a fairness run: JFI over the three flows, then each flow's rate."""
    return {"jfi": jain([rates[f] for f in FAIR_FLOWS]), **{f: rates[f] for f in FAIR_FLOWS}}


# V2X: seed 004's priority messages and background data (v2x-loss's set-up: 50 ms one way,
# Bernoulli loss both ways, 1200 B every 100 ms and 2 Mbit/s of 12500 B for 60 s from 1 s after
# the sender can send) over one of its two 20 Mbit/s paths, with aioquic.
V2X_ONE_PATH = """
name = "v2x_one_path"
[run]
duration = "66 s"
seed = 1
[[link]]
name = "op_a"
between = ["vehicle", "server"]
rate = "20 Mbit/s"
delay = "50 ms"
queue = "200 packets"
loss = "1 %"
[[flow]]
name = "v2x"
from = "vehicle"
to = "server"
transport = "quic"
app = "messages"
profile = "aioquic-1.7"
route = ["op_a"]
[[flow.messages]]
name = "priority"
kind = "priority"
start = "1 s"
duration = "60 s"
[[flow.messages]]
name = "background"
kind = "background"
rate = "2 Mbit/s"
start = "1 s"
duration = "60 s"
"""
V2X_POINTS = [
    ("V2X one path, no loss", {"link.op_a.loss": "0 %"}),
    ("V2X one path, 1 % loss each way", {"link.op_a.loss": "1 %"}),
]
V2X_DEADLINE_S = 0.1
# The receiver gives up this long after it starts: about 5 s after the last message, where the
# simulated run ends (66 s).
V2X_RECEIVER_UNTIL_S = 66


def v2x_command_sets(cert: Path, key: Path) -> dict[str, str]:
    """`[flow.emulate]` of the V2X flow: multiconn.emu_messages's sender on the vehicle (the
    connection's server, as in the simulated flow) and its receiver on the server node. The
    sender writes no qlog: aioquic keeps a connection's trace in memory until it ends, and with
    it the sender stalled for tens of ms at the same instants of every run (docs/fidelity.md)."""
    py = f"PYTHONPATH={ROOT / 'python'} exec {sys.executable} -m multiconn.emu_messages"
    server = (f"{py} send --host {{server_addr}} --port 4433 --cc reno --cert {cert} --key {key} "
              f"--log {{out}}/sent.jsonl --start 1 --duration 60")
    client = (f"sleep 1 && {py} receive --host {{server_addr}} --port 4433 --cc reno "
              f"--log {{out}}/received.jsonl --until {V2X_RECEIVER_UNTIL_S}")
    return {"flow.v2x.emulate.stack": "command", "flow.v2x.emulate.server": _toml_string(server),
            "flow.v2x.emulate.client": _toml_string(client), "run.duration": "90 s"}


def v2x_values(table) -> dict[str, float]:
    """The compared quantities of a V2X run from its message table: the priority messages'
    reliability P(OWD < 100 ms) in %, median OWD (received messages) and 99th-percentile OWD
    (lost ones infinite) in ms, as multiconn.messages computes them."""
    from multiconn import messages

    p = messages.summarise(table, V2X_DEADLINE_S)["priority"]
    return {"reliability": p["reliability"] * 100, "owd_median": p["owd_median_s"] * 1e3,
            "owd_p99": p["owd_p99_s"] * 1e3}


def cpu_jiffies() -> tuple[int, int]:
    """The machine's (busy, total) CPU time from /proc/stat, in jiffies over every core."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


# The emulator's helpers in the hosts, which are not the stacks.
HELPERS = {"multiconn-emu", "unshare", "nsenter", "sleep", "sh"}


class StackWatch(threading.Thread):
    """Samples, twice a second, /proc/PID/schedstat of every process descending from this one
    but the emulator and its helpers (the real stacks' servers and clients): how long each ran
    and how long it waited, ready, for a core. Each process starts during the run, so its last
    sample is its whole run (less at most half a second before it exited)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.last: dict[int, tuple[int, int]] = {}
        self.done = threading.Event()

    @staticmethod
    def _descendants() -> list[int]:
        parent, comm = {}, {}
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                text = (d / "stat").read_text()
            except OSError:
                continue
            name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
            parent[int(d.name)], comm[int(d.name)] = int(rest[1]), name
        mine, frontier = set(), {os.getpid()}
        while frontier:
            frontier = {pid for pid, pp in parent.items() if pp in frontier and pid not in mine}
            mine |= frontier
        return [pid for pid in mine if comm[pid] not in HELPERS]

    def run(self) -> None:
        while not self.done.wait(0.5):
            for pid in self._descendants():
                try:
                    ran, waited, _ = (int(x) for x in Path(f"/proc/{pid}/schedstat").read_text().split())
                except (OSError, ValueError):
                    continue
                self.last[pid] = (ran, waited)

    def totals(self) -> tuple[float, float]:
        """(seconds run, seconds waiting for a core) over the stacks' processes."""
        self.done.set()
        self.join()
        return (sum(r for r, _ in self.last.values()) / 1e9, sum(w for _, w in self.last.values()) / 1e9)


def emulate_watched(scenario: Path, out: Path, sets: dict[str, str], seed: int, realtime: bool,
                    machine: list[dict]) -> dict:
    """`emulate`, noting in `machine` the 1-minute load average before the run, the share of the
    machine's CPU time that was busy during it (this run's programs and any other work), and how
    long the real stacks' processes ran and waited for a core: they are programs like any other,
    and a stack kept from its core is not in the emulator's lateness."""
    load = os.getloadavg()[0]
    busy0, total0 = cpu_jiffies()
    watch = StackWatch()
    watch.start()
    try:
        s = emulate(str(scenario), out, overrides=list(sets.items()), seed=seed, quiet=True, realtime=realtime)
    finally:
        ran, waited = watch.totals()
    busy1, total1 = cpu_jiffies()
    machine.append({"load_before": load, "busy": (busy1 - busy0) / max(total1 - total0, 1),
                    "stacks_cpu_s": ran, "stacks_wait_s": waited, "run_s": s.get("emulated_time_s")})
    return s


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
                             "docs/fidelity.md for the same point and real stack (after a profile changed; no root; "
                             "download points only)")
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
    points = build_points(work)
    if args.only:
        points = [p for p in points if any(t in p.point or t in p.label or any(t in a[0] for a in p.also)
                                           for t in args.only)]
    if args.stack:
        points = [p for p in points if any(t in p.label or any(t in a[0] for a in p.also) for t in args.stack)]
    if args.resimulate:
        for p in [p for p in points if p.kind != "goodput"]:
            print(f"{p.point}: {p.label}: skipped (--resimulate reads the downloads' table only)")
        points = [p for p in points if p.kind == "goodput"]
    if not args.simulate_only and any(p.kind != "goodput" for p in points):
        make_certificate(work)

    rows = []
    seeds = range(1, args.reps + 1)
    for i, pt in enumerate(points):
        if not args.simulate_only and shutil.which("tquic_server") is None and pt.label.startswith("tquic") and not (
                Path(sys.executable).parent / "tquic_server").exists():
            print(f"{pt.point}: {pt.label}: skipped (tquic_tools is not installed)")
            continue
        if pt.kind != "goodput":
            rows += measure_compared(pt, work / f"emu-{i}", seeds, args)
            continue
        point, label, scenario, sim_sets, emu_sets = pt.point, pt.label, pt.scenario, pt.sim_sets, pt.emu_sets
        size = pt.size
        sims = [g for seed in seeds if (g := goodput(simulate(scenario, sim_sets, seed), size)) is not None]
        emus, p99s = [], []
        reused = table.get((point, label.split(" / ")[0]))
        if args.resimulate and reused is None:
            sys.exit(f"fidelity: --resimulate: docs/fidelity.md has no emulated row for {point}: {label.split(' / ')[0]}")
        machine: list[dict] = []
        for seed in ([] if args.simulate_only or args.resimulate else seeds):
            s = emulate_watched(scenario, work / f"emu-{i}-{seed}", emu_sets, seed, args.realtime, machine)
            if (g := goodput(s, size)) is not None:
                emus.append(g)
            p99s.append(s["timing"]["p99_us"] or 0.0)
        emu, emu_sd = mean_std(emus)
        if reused is not None:
            emu, emu_sd, p99s = reused[0], reused[1], [reused[2]]
        for row_label, sims in [(label, sims)] + [
                (l, [g for seed in seeds if (g := goodput(simulate(scenario, {**sim_sets, **o}, seed), size)) is not None])
                for l, o in pt.also]:
            sim, sim_sd = mean_std(sims)
            diff = None if not (sim and emu) else (emu - sim) / sim
            p99 = max(p99s, default=0.0)
            rows.append({"kind": "goodput", "point": point, "stack": row_label, "sim_mbps": sim, "sim_sd": sim_sd,
                         "emu_mbps": emu, "emu_sd": emu_sd, "runs": [len(sims), len(emus)], "difference": diff,
                         "p99_us": p99, "machine": machine})
            if reused is not None:
                rows[-1]["runs"] = [len(sims), args.reps]
            emu_part = "" if args.simulate_only else (
                f"  emu {emu or 0:7.2f} ± {emu_sd or 0:5.2f}  {'' if diff is None else f'{diff:+.0%}'}  p99 ≤ {p99:.0f} µs"
                f"{machine_text(machine)}")
            print(f"{point:28s} {row_label:34s} sim {sim or 0:7.2f} ± {sim_sd or 0:5.2f}{emu_part}", flush=True)
    (work / "fidelity.json").write_text(json.dumps(rows, indent=1) + "\n")
    if args.simulate_only:
        return
    write_doc(rows, args.realtime, args.reps, partial=bool(args.only or args.stack))


@dataclass
class Point:
    """One point of the table and one real stack: its scenario and overrides on each side."""
    point: str
    label: str
    scenario: Path
    sim_sets: dict[str, str]
    emu_sets: dict[str, str]
    kind: str = "goodput"
    size: int = SIZE_MB * 1_000_000
    # Further simulated rows against the same emulated runs: (row label, simulator overrides).
    also: list[tuple[str, dict[str, str]]] = field(default_factory=list)


def build_points(work: Path) -> list[Point]:
    """Every point of the table, in its order; scenarios written into `work` where needed."""
    points: list[Point] = []
    dc = CATALOG / "dc_throughput.toml"

    def also(label: str) -> list[tuple[str, dict[str, str]]]:
        return [ALSO_SIMULATED[label]] if label in ALSO_SIMULATED else []

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
    stacks = {label: sets for label, sets in DC_STACKS}
    # dc-duplication's set-up (every packet on both legs) without and with 2 and 5 % loss per leg, and
    # dc-trace-batch-size's (both legs following the LTE trace) at the study's batch of 100.
    duplicate = {"split.dc.policy": '{ model = "duplicate" }'}
    trace = '{ model = "mahimahi", file = "../traces/ATT-LTE-driving-2016.down" }'
    later = [
        ("DC duplication, no loss", {**duplicate, "link.leg1.forward.loss": "0 %", "link.leg2.forward.loss": "0 %"},
         ("ngtcp2", "aioquic")),
        ("DC duplication, 2 % loss on both legs",
         {**duplicate, "link.leg1.forward.loss": "2 %", "link.leg2.forward.loss": "2 %"}, ("ngtcp2", "aioquic")),
        ("DC duplication, 5 % loss on both legs",
         {**duplicate, "link.leg1.forward.loss": "5 %", "link.leg2.forward.loss": "5 %"}, ("ngtcp2", "aioquic")),
        ("DC LTE trace on both legs, batch 100", {"link.leg1.rate": trace, "link.leg2.rate": trace,
                                                  "split.dc.policy.size": "100"}, ("kernel TCP", "ngtcp2")),
    ]
    for point, family_sets, names in [(p, s, None) for p, s in families] + later:
        for label, sets in stacks.items():
            if names is not None and not label.startswith(names):
                continue
            common = {**family_sets, "flow.dc.size": f"{SIZE_MB} MB", "run.duration": "120 s"}
            points.append(Point(point, label, dc, {**common, **sets},
                                {**common, **{k: v for k, v in sets.items() if k not in RECEIVER_ONLY}},
                                also=also(label)))
    two = TWO_PATHS
    points.append(Point("two paths 20 + 10 Mbit/s", "kernel MPTCP / linux-mptcp-5.15", two, {}, {}))
    quic = {"flow.dc.transport": "quic", "flow.dc.profile": "rfc9002"}
    # tquic's REDUNDANT against the simulator's model of its rule (the emulator runs tquic's
    # REDUNDANT for `tquic_redundant` as for `redundant`).
    for label, scheduler in (("tquic minrtt CUBIC / multipath QUIC (rfc9002)", "minrtt"),
                             ("tquic redundant CUBIC / multipath QUIC tquic_redundant (rfc9002)", "tquic_redundant")):
        sets = {**quic, "flow.dc.multipath.scheduler": scheduler}
        points.append(Point("two paths 20 + 10 Mbit/s", label, two, sets, sets, also=also(label)))
    # tquic 1.6's own BBRv3 against the model's `bbr3` (draft-ietf-ccwg-bbr), with the model of
    # tquic's min-RTT (it passes over paths their pacers hold) and the generic min-RTT.
    label = "tquic minrtt BBRv3 / multipath QUIC tquic_minrtt bbr3 (rfc9002)"
    sets = {**quic, "flow.dc.multipath.scheduler": "tquic_minrtt", "flow.dc.cc": "bbr3"}
    points.append(Point("two paths 20 + 10 Mbit/s", label, two, sets, {**sets, "flow.dc.multipath.scheduler": "minrtt"},
                        also=also(label)))

    lte_nr = work / "lte_nr.toml"
    lte_nr.write_text(LTE_NR)
    label = "ngtcp2 CUBIC / ngtcp2-0.12"
    points.append(Point("LTE/NR split 20 + 60 Mbit/s", label, lte_nr, {}, {}, also=also(label)))

    # Fairness: every flow with the stack; the simulated side measured over the window plus 1 s,
    # the emulated side long enough for the aioquic clients' later start.
    cert, key = work / "cert.pem", work / "key.pem"
    sim_run = {"run.duration": f"{FAIR_WINDOW_S + 1:g} s"}
    emu_run = {"run.duration": f"{FAIR_WINDOW_S + COMMAND_CLIENT_DELAY_S + 6:g} s"}
    aioquic = _per_flow({"profile": "aioquic-1.7", "cc": "newreno"})
    ngtcp2 = _per_flow({"profile": "ngtcp2-0.12", "cc": "cubic"})
    ngtcp2_receiver = _per_flow({"receiver.read_cost": "10 us", "receiver.udp_rcvbuf": DEFAULT_RCVBUF_REQUEST})
    for point, delays in FAIR_POINTS:
        commands = {k: v for f in FAIR_FLOWS for k, v in aioquic_command_sets(f, "reno", cert, key, AIOQUIC_RCVBUF).items()}
        points.append(Point(point, "aioquic NewReno, 25 MB buffers / aioquic-1.7", FAIR_SCENARIO,
                            {**delays, **sim_run, **aioquic}, {**delays, **emu_run, **aioquic, **commands},
                            kind="fairness",
                            also=[("aioquic NewReno, 25 MB buffers / aioquic (1.0-1.3)", _per_flow({"profile": "aioquic"}))]))
        points.append(Point(point, "ngtcp2 CUBIC, default buffers / ngtcp2-0.12", FAIR_SCENARIO,
                            {**delays, **sim_run, **ngtcp2, **ngtcp2_receiver}, {**delays, **emu_run, **ngtcp2},
                            kind="fairness",
                            also=[("ngtcp2 CUBIC, default buffers / ngtcp2 (1.x)", _per_flow({"profile": "ngtcp2"}))]))

    v2x = work / "v2x_one_path.toml"
    v2x.write_text(V2X_ONE_PATH)
    for point, loss in V2X_POINTS:
        points.append(Point(point, "aioquic NewReno / aioquic-1.7", v2x, dict(loss),
                            {**loss, **v2x_command_sets(cert, key)}, kind="v2x"))
    return points


def make_certificate(work: Path) -> None:
    """A self-signed certificate for the `command` flows' aioquic servers (their clients do not
    verify it), as the emulator makes one for its own QUIC stacks."""
    if (work / "cert.pem").exists() and (work / "key.pem").exists():
        return
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "30", "-keyout", str(work / "key.pem"), "-out", str(work / "cert.pem"),
                    "-subj", "/CN=server.test"], check=True, capture_output=True)


def measure_compared(pt: Point, out: Path, seeds: range, args: argparse.Namespace) -> list[dict]:
    """The rows of a fairness or V2X point: its quantities per run on each side, then their
    means, standard deviations and differences (one row, and one per `also` profile)."""
    from multiconn import run
    from multiconn.emu_messages import read_table
    from multiconn.result import read_run

    def values_of(result_timeseries=None, messages_table=None) -> dict[str, float]:
        if pt.kind == "fairness":
            return fairness_values(window_rates(result_timeseries, FAIR_WINDOW_S))
        return v2x_values(messages_table)

    def simulated(sets: dict[str, str], seed: int) -> dict[str, float]:
        r = run(str(pt.scenario), overrides=sets, seed=seed)
        return values_of(r.timeseries, r.messages)

    emus, p99s, machine = [], [], []
    for seed in ([] if args.simulate_only else seeds):
        folder = out.with_name(f"{out.name}-{seed}")
        s = emulate_watched(pt.scenario, folder, pt.emu_sets, seed, args.realtime, machine)
        p99s.append(s["timing"]["p99_us"] or 0.0)
        if pt.kind == "fairness":
            emus.append(values_of(read_run(folder).timeseries))
        else:
            f = folder / "flows" / "v2x"
            code = s["flows"][0].get("client_exit_code")
            if code != 0:
                print(f"{pt.point}: {pt.label}: seed {seed}: the receiver exited with {code} (see {f})")
                continue
            emus.append(values_of(messages_table=read_table(f / "sent.jsonl", f / "received.jsonl")))
    rows = []
    for label, extra in [(pt.label, {})] + pt.also:
        sims = [simulated({**pt.sim_sets, **extra}, seed) for seed in seeds]
        rows.append(compared_row(pt.kind, pt.point, label, sims, emus, max(p99s, default=0.0)))
        rows[-1]["machine"] = machine
        print(compared_text(rows[-1], with_emulated=not args.simulate_only), flush=True)
    return rows


def compared_row(kind: str, point: str, stack: str, sims: list[dict[str, float]], emus: list[dict[str, float]],
                 p99_us: float) -> dict:
    """A fairness or V2X row: per quantity of the kind's table, the mean and standard deviation
    of each side's runs and the difference (emulated − simulated) / simulated; None where a side
    has no finite mean."""
    values = {}
    for key, _, _ in TABLES[kind]["quantities"]:
        sim, sim_sd = mean_std([v[key] for v in sims])
        emu, emu_sd = mean_std([v[key] for v in emus])
        finite = sim is not None and emu is not None and math.isfinite(sim) and math.isfinite(emu) and sim != 0
        values[key] = {"sim": sim, "sim_sd": sim_sd, "emu": emu, "emu_sd": emu_sd,
                       "difference": (emu - sim) / sim if finite else None}
    return {"kind": kind, "point": point, "stack": stack, "values": values, "runs": [len(sims), len(emus)],
            "p99_us": p99_us}


def compared_text(r: dict, with_emulated: bool = True) -> str:
    parts = []
    for key, name, digits in TABLES[r["kind"]]["quantities"]:
        v = r["values"][key]
        text = f"{name} sim {_mean_sd(v['sim'], v['sim_sd'], digits)}"
        if with_emulated:
            text += f" emu {_mean_sd(v['emu'], v['emu_sd'], digits)} {_difference(v['difference'])}"
        parts.append(text)
    tail = f"  p99 ≤ {r['p99_us']:.0f} µs{machine_text(r.get('machine', []))}" if with_emulated else ""
    return f"{r['point']}: {r['stack']}: " + "; ".join(parts) + tail


def machine_text(machine: list[dict]) -> str:
    if not machine:
        return ""
    text = (f"  load before {max(m['load_before'] for m in machine):.1f}, "
            f"CPU busy {min(m['busy'] for m in machine):.0%}-{max(m['busy'] for m in machine):.0%}")
    if all("stacks_wait_s" in m for m in machine):
        text += (", stacks ran " + "/".join(f"{m['stacks_cpu_s']:.1f}" for m in machine) + " s and waited "
                 + "/".join(f"{m['stacks_wait_s']:.1f}" for m in machine) + " s for a core")
    return text


def emulated_rows(doc: Path) -> dict[tuple[str, str], tuple[float, float, float]]:
    """The emulated columns of docs/fidelity.md's downloads table: (point, real stack) -> (mean,
    standard deviation, p99 lateness µs)."""
    out = {}
    for line in doc.read_text().split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not line.startswith("| ") or " ± " not in cells[3]:
            continue
        mean, sd = (float(x) for x in cells[3].split(" ± "))
        out[(cells[0], cells[1].split(" / ")[0])] = (mean, sd, float(cells[5]))
    return out


# The tables after the downloads' one: their section heading, the paragraph written with them
# the first time, and their compared quantities (key, name in the header, decimals).
TABLES = {
    "fairness": {
        "heading": "## Fairness: a DC flow beside one flow on each leg",
        "quantities": [("jfi", "JFI", 4), ("dc", "DC flow Mbit/s", 2), ("sc1", "leg 1 flow Mbit/s", 2),
                       ("sc2", "leg 2 flow Mbit/s", 2)],
        "text": (
            "`dc_fairness.toml` (the DC study's fairness testbed: a flow over DC and one single-connectivity "
            "flow on each leg, each pair with its own PDCP proxies, all three downloading 1 GB) at the 5:1 delay "
            "ratio of a 20 ms and of a 200 ms sum (the most skewed points of `dc-low-delay-ratio-fairness` and "
            "`dc-high-delay-ratio-fairness`), {reps} runs a side. The study measured 180 s; here each flow's "
            "rate is the IP bytes its receiving PDCP entity delivered in order over the first {window:g} s from "
            "the run's first delivered byte, from the same time-series bins on both sides (`bearer` rows), and "
            "JFI is Jain's index over the three rates. aioquic: every client asks for a 25 MB receive buffer "
            "(the kernel grants 50 MB, as with the study's 25 MB `rmem_max`), as in the catalogue, with "
            "`multiconn.emu_aioquic --rcvbuf` in a `command` flow whose clients start {delay} s after their "
            "servers (the window starts at the first delivered byte on both sides) and whose servers write no "
            "qlog (to spare the CPU three CPython senders need). ngtcp2: Debian's "
            "`gtlsclient` keeps the kernel's 212992-byte buffer (a network namespace cannot raise `rmem_max`), "
            "and so does the simulated side (`udp_rcvbuf = \"106496 B\"`, 10 µs read cost). The second row of "
            "each stack compares the catalogue's profile (`aioquic` 1.0 to 1.3, `ngtcp2` 1.x) with the same "
            "emulated runs."),
    },
    "v2x": {
        "heading": "## V2X messages over one path",
        "quantities": [("reliability", "reliability %", 2), ("owd_median", "median OWD ms", 1),
                       ("owd_p99", "p99 OWD ms", 1)],
        "text": (
            "Seed 004's V2X traffic as `v2x-loss` sends it (priority messages of 1200 B every 100 ms on one "
            "stream, 2 Mbit/s of 12500-byte background messages on another, for 60 s from 1 s after the "
            "sender can send; 50 ms one way, Bernoulli loss in both directions) over one of its two 20 Mbit/s "
            "paths, the vehicle's aioquic the connection's server, {reps} runs a side (seeds 1 to {reps}). "
            "Simulated with `aioquic-1.7` (NewReno); emulated with `python -m multiconn.emu_messages` over "
            "aioquic 1.7.2 in a `command` flow, which packs the priority stream first as the simulated sender "
            "does ([emulator.md](emulator.md)). Reliability is P(OWD < 100 ms) over a run's 600 priority "
            "messages, one never received failing; the median OWD is over those received, the 99th percentile "
            "over all (a lost one infinite); OWDs are taken at the applications, the real ones with "
            "`time.monotonic()`, which the namespaces share ([messages-and-owd.md](messages-and-owd.md)). "
            "tquic's tools fetch files (`tquic_client` requests, `tquic_server` answers with a whole file) and "
            "cannot carry timed messages, so the min-RTT and redundant schedulers have no V2X row."),
    },
}
GOODPUT_HEADER = ("| point | real stack / profile | simulated Mbit/s | emulated Mbit/s | difference | "
                  "emulator p99 lateness µs (worst run) |")
# The rows that compare another version or rule than the real stack's on purpose.
OTHER_VERSION_ROWS = {a[0] for a in ALSO_SIMULATED.values()} | {
    "aioquic NewReno, 25 MB buffers / aioquic (1.0-1.3)", "ngtcp2 CUBIC, default buffers / ngtcp2 (1.x)"}
SUMMARY_PATTERN = re.compile(r"^\*\*\d+ of \d+ rows within 10 %\*\*")


def table_header(kind: str) -> str:
    if kind == "goodput":
        return GOODPUT_HEADER
    cells = ["point", "real stack / profile"]
    for _, name, _ in TABLES[kind]["quantities"]:
        cells += [f"simulated {name}", f"emulated {name}", "difference"]
    cells.append("emulator p99 lateness µs (worst run)")
    return "| " + " | ".join(cells) + " |"


def header_kind(line: str) -> str | None:
    """The kind of table whose header `line` is (by its first three columns), or None."""
    if not line.startswith("| point |"):
        return None
    cells = _cells(line)
    for kind in ["goodput", *TABLES]:
        if cells[:3] == _cells(table_header(kind))[:3]:
            return kind
    return None


def _mean_sd(mean: float | None, sd: float | None, digits: int) -> str:
    if mean is None:
        return "—"
    if not math.isfinite(mean):
        return "∞"
    return f"{mean:.{digits}f} ± {sd or 0:.{digits}f}"


def _difference(diff: float | None) -> str:
    if diff is None:
        return "—"
    text = f"{diff:+.0%}"
    return f"**{text}**" if abs(diff) > 0.10 else text


def row_line(r: dict) -> str:
    if r.get("kind", "goodput") != "goodput":
        cells = [r["point"], r["stack"]]
        for key, _, digits in TABLES[r["kind"]]["quantities"]:
            v = r["values"][key]
            cells += [_mean_sd(v["sim"], v["sim_sd"], digits), _mean_sd(v["emu"], v["emu_sd"], digits),
                      _difference(v["difference"])]
        cells.append(f"{r['p99_us']:.0f}")
        return "| " + " | ".join(cells) + " |"
    sim = "—" if r["sim_mbps"] is None else f"{r['sim_mbps']:.2f} ± {r['sim_sd']:.2f}"
    emu = "—" if r["emu_mbps"] is None else f"{r['emu_mbps']:.2f} ± {r['emu_sd']:.2f}"
    return f"| {r['point']} | {r['stack']} | {sim} | {emu} | {_difference(r['difference'])} | {r['p99_us']:.0f} |"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables_of(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Each table of the doc by kind: (index of its header line, index after its last row)."""
    out = {}
    for i, line in enumerate(lines):
        kind = header_kind(line)
        if kind is None or kind in out:
            continue
        end = i + 2
        while end < len(lines) and lines[end].startswith("| "):
            end += 1
        out[kind] = (i, end)
    return out


def summary_text(lines: list[str]) -> str:
    """The line above the first table: how many rows of all the tables have every difference
    within 10 % (none bold, none missing), in all and by table, and of those against the profile
    of the version the emulator runs."""
    names = {"goodput": "downloads", "fairness": "fairness", "v2x": "V2X"}
    counts: dict[str, list[int]] = {}
    own = [0, 0]
    for kind, (start, end) in tables_of(lines).items():
        header = _cells(lines[start])
        columns = [i for i, c in enumerate(header) if c == "difference"]
        within = total = 0
        for line in lines[start + 2:end]:
            cells = _cells(line)
            ok = all(i < len(cells) and cells[i] not in ("—", "") and not cells[i].startswith("**") for i in columns)
            within += ok
            total += 1
            if len(cells) > 1 and cells[1] not in OTHER_VERSION_ROWS:
                own[0] += ok
                own[1] += 1
        counts[kind] = [within, total]
    n = sum(c[0] for c in counts.values())
    m = sum(c[1] for c in counts.values())
    parts = ", ".join(f"{names[k]} {c[0]} of {c[1]}" for k, c in counts.items())
    return (f"**{n} of {m} rows within 10 %** ({parts}; against the profile of the version the emulator runs "
            f"{own[0]} of {own[1]}): a row counts when every difference in it is at most 10 %.")


def with_summary(lines: list[str]) -> list[str]:
    """`lines` with the summary line, computed from the tables, just above the first table."""
    lines = [line for line in lines if not SUMMARY_PATTERN.match(line)]
    tables = tables_of(lines)
    if not tables:
        return lines
    first = min(start for start, _ in tables.values())
    # The line before a table is blank; the summary goes before that table with a blank line after it.
    at = first - 1 if first > 0 and lines[first - 1] == "" else first
    if at > 0 and lines[at - 1] == "":
        del lines[at - 1]
        at -= 1
    return lines[:at] + ["", summary_text(lines), ""] + lines[at + (1 if lines[at] == "" else 0):]


def section(kind: str, rows: list[str], reps: int) -> list[str]:
    t = TABLES[kind]
    text = t["text"].format(reps=reps, window=FAIR_WINDOW_S, delay=COMMAND_CLIENT_DELAY_S)
    return [t["heading"], "", text, "", table_header(kind), "|" + "---|" * (header_kind_columns(kind)), *rows, ""]


def header_kind_columns(kind: str) -> int:
    return len(_cells(table_header(kind)))


def update_rows(doc: Path, rows: list[dict], reps: int = 3) -> None:
    """Replaces the rows of the points in `rows` in their kind's table, keeps the rest. A new row
    goes after the last row of its point with the same real stack, else after the last row of its
    point, else after the last row of a point beginning with the same word ("DC"), else at the
    end of the table; a table not yet in the doc comes with its section before the notes. Then
    the summary line is computed again."""
    lines = doc.read_text().split("\n")
    for kind in dict.fromkeys(r.get("kind", "goodput") for r in rows):
        new = {(r["point"], r["stack"]): row_line(r) for r in rows if r.get("kind", "goodput") == kind}
        tables = tables_of(lines)
        if kind not in tables:
            notes = lines.index("<!-- notes -->") if "<!-- notes -->" in lines else len(lines)
            lines[notes:notes] = section(kind, list(new.values()), reps)
            continue
        start, end = tables[kind]
        for i in range(start + 2, end):
            key = tuple(_cells(lines[i])[:2])
            if key in new:
                lines[i] = new.pop(key)
        for (point, stack), row in new.items():
            start, end = tables_of(lines)[kind]
            table = list(range(start + 2, end))
            of_point = [i for i in table if _cells(lines[i])[0] == point]
            same_stack = [i for i in of_point if _cells(lines[i])[1].split(" / ")[0] == stack.split(" / ")[0]]
            # A new point goes after the last row whose point begins with the same word ("DC"), else last.
            family = [i for i in table if _cells(lines[i])[0].split()[0] == point.split()[0]]
            at = (same_stack or of_point or family or [end - 1])[-1] + 1
            lines[at:at] = [row]
    doc.write_text("\n".join(with_summary(lines)))
    print(f"updated {len(rows)} rows of {doc}")


def write_doc(rows: list[dict], realtime: bool, reps: int, partial: bool = False) -> None:
    doc = ROOT / "docs" / "fidelity.md"
    if partial and doc.exists():
        return update_rows(doc, rows, reps)
    lines = [
        "# Fidelity: the simulator's stack profiles against the real stacks",
        "",
        "Regenerated by `sudo .venv/bin/python bench/fidelity.py` "
        f"({datetime.date.today().isoformat()}, emulator loop {'SCHED_FIFO' if realtime else 'normal'}). "
        f"Every point of the first table is a {SIZE_MB} MB download, simulated with the profile and emulated with the real "
        f"stack through the same scenario ([docs/emulator.md](emulator.md)), {reps} runs on each side "
        f"(seeds 1 to {reps}: the models' random streams; the real stacks add their own variation); "
        "goodput is size × 8 / the time from the flow's first packet to its last byte (the simulator's completion time; the emulator's transfer time on the wire, not the client's process lifetime), mean ± standard deviation. DC points use the catalogue's `dc_throughput.toml` (two 20 Mbit/s legs, "
        "normal delay 10 ms ± 10 %, batches of 100 split 1:1, t-Reordering 200 ms, 1 ms per PDCP proxy) "
        "with one change each, as the DC study's sweeps, its duplication (every packet on both legs) and "
        "its LTE trace on both legs; the two-path points are a 20 Mbit/s, 10 ms "
        "and a 10 Mbit/s, 30 ms path. The fairness and V2X tables follow. "
        "**Bold**: the two differ by more than 10 %.",
        "",
        GOODPUT_HEADER,
        "|---|---|---|---|---|---|",
    ]
    lines += [row_line(r) for r in rows if r.get("kind", "goodput") == "goodput"]
    lines.append("")
    for kind in TABLES:
        kind_rows = [row_line(r) for r in rows if r.get("kind") == kind]
        if kind_rows:
            lines += section(kind, kind_rows, reps)
    notes = doc.read_text().split("<!-- notes -->", 1)[1] if doc.exists() and "<!-- notes -->" in doc.read_text() else (
        "\n\n## What is known of the differences\n\n(to be written)\n")
    doc.write_text("\n".join(with_summary(lines)) + "\n<!-- notes -->" + notes)
    print(f"wrote {doc}")


if __name__ == "__main__":
    main()
