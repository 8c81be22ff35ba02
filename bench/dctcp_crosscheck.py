"""Cross-check of Prague's DCTCP-like core against ns-3's DCTCP over the same step-marking queue.

    .venv/bin/python bench/dctcp_crosscheck.py [--k 10,20,40] [--duration 60] [--warmup 20]
        [--transport quic|tcp] [--check] [--json OUT.json]

No real Prague, DCTCP or DualPI2 runs in this kernel; ns-3.37 (Debian libns3-dev) has DCTCP.
Both sides run one bulk flow over 100 Mbit/s with 20 ms each way, and a queue that marks CE
on every packet finding more than K packets ahead of it:
- ns-3: ns3::TcpDctcp over RED with MinTh = MaxTh = K, QW = 1, not gentle
  (bench/ns3/dctcp_step.cc, through bench/ns3/run.sh with NS3_PROGRAM=dctcp_step);
- multiconn: `cc = "prague"` over DualPI2 with `step_packets = K` (bench/scenarios/
  prague_step.toml; with no Classic traffic the coupled marks stay near zero, so the step
  decides), through the `run_scenario` example.
At a 40 ms RTT Prague's RTT independence (25 ms target) does not act: what is compared is the
DCTCP core, α with g = 1/16 and a cut of α/2 per round trip of marks.

Compared after the warm-up (the window's climb after the first halving differs with slow
start and pacing): the goodput, the mean queue in packets and the fraction of packets marked.
multiconn's values over the window come from two runs of the same seed, one ending at the
warm-up and one at the end (a run's first seconds do not depend on its duration: runs are
deterministic), so queue integrals and mark counts subtract. DCTCP theory for a single flow
(Alizadeh et al., SIGCOMM 2010): α ≈ √(2/W) with W = BDP + K packets.

Prints a table; --json writes the rows. --check exits 1 when a point's mean queue or marked
fraction differ by more than 25 % between the two. Exits 3 when ns-3 is not installed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NS3_RUN = ROOT / "bench" / "ns3" / "run.sh"
SCENARIO = ROOT / "bench" / "scenarios" / "prague_step.toml"
RATE_BPS = 100e6
ONE_WAY_S = 0.020


def fail(message: str, code: int = 2) -> None:
    print(f"dctcp_crosscheck: {message}", file=sys.stderr)
    sys.exit(code)


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def run_scenario_binary() -> Path:
    binary = target_dir() / "release" / "examples" / "run_scenario"
    if not binary.exists():
        print("building run_scenario (cargo build --release)", file=sys.stderr)
        subprocess.run(["cargo", "build", "--release", "-p", "multiconn-scenario", "--example", "run_scenario"], cwd=ROOT, check=True)
    return binary


def run_ns3(k: int, args) -> dict:
    env = dict(os.environ, NS3_PROGRAM="dctcp_step")
    cmd = [str(NS3_RUN), str(target_dir() / "ns3"), f"--k={k}", f"--duration={args.duration:g}", f"--warmup={args.warmup:g}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode == 3:
        print(proc.stderr, file=sys.stderr)
        sys.exit(3)
    if proc.returncode != 0:
        fail(f"ns-3 failed ({' '.join(cmd)}): {proc.stderr.strip()}", 1)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def multiconn_run(binary: Path, k: int, duration: float, args) -> tuple[dict, dict]:
    """The flow's and the forward link's summary lines of one run."""
    sets = [f"run.duration=\"{duration:g} s\"", f"link.bottleneck.aqm.step_packets={k}",
            f"flow.prague.transport=\"{args.transport}\"", "run.measure_from=\"0 s\""]
    proc = subprocess.run([str(binary), str(SCENARIO), *sets], capture_output=True, text=True,
                          env=dict(os.environ, MULTICONN_PRINT_FLOWS="1"))
    if proc.returncode != 0:
        fail(f"multiconn failed ({binary} {SCENARIO} {' '.join(sets)}): {proc.stderr.strip()}", 1)
    flow = link = None
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if row.get("name") == "prague" and "goodput_mbps" in row:
            flow = row
        elif row.get("name") == "bottleneck" and row.get("direction") == "forward":
            link = row
    if flow is None or link is None:
        fail("multiconn printed no flow or link summary (is MULTICONN_PRINT_FLOWS honoured?)", 1)
    return flow, link


def run_multiconn(binary: Path, k: int, args) -> dict:
    """The window from the warm-up to the end, from a run to the warm-up and a run to the end."""
    (f0, l0), (f1, l1) = (multiconn_run(binary, k, args.warmup, args), multiconn_run(binary, k, args.duration, args))
    window = args.duration - args.warmup
    q = (l1["mean_queue_packets"] * args.duration - l0["mean_queue_packets"] * args.warmup) / window
    d0, d1 = l0["aqm"]["dualpi2"], l1["aqm"]["dualpi2"]
    marks = (d1["native_marks"] + d1["coupled_marks"]) - (d0["native_marks"] + d0["coupled_marks"])
    packets = d1["l4s_sojourn"]["packets"] - d0["l4s_sojourn"]["packets"]
    goodput = (f1["bytes_delivered"] - f0["bytes_delivered"]) * 8 / window / 1e6
    return {"goodput_mbps": goodput, "mean_queue_packets": q, "marked_fraction": marks / packets if packets else 0.0,
            "coupled_marks": d1["coupled_marks"], "retransmissions": f1["retransmissions"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--k", default="10,20,40", help="marking steps, packets (comma-separated)")
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--warmup", type=float, default=20.0)
    p.add_argument("--transport", default="quic", choices=["quic", "tcp"], help="multiconn's transport for Prague")
    p.add_argument("--check", action="store_true", help="exit 1 when a point disagrees by more than 25 %")
    p.add_argument("--json", type=Path, help="write the rows here")
    args = p.parse_args()
    try:
        ks = [int(v) for v in args.k.split(",") if v.strip()]
    except ValueError:
        fail(f"--k {args.k!r}: expected comma-separated packet counts")
    if not ks or any(k <= 0 for k in ks):
        fail(f"--k {args.k!r}: expected positive packet counts")
    if not 0 < args.warmup < args.duration:
        fail(f"--warmup {args.warmup:g} must lie between 0 and --duration {args.duration:g}")
    binary = run_scenario_binary()
    rows = []
    bad = []
    print(f"{'K':>4} | {'ns-3 DCTCP: Mbit/s  queue  marked  α (theory)':<46} | multiconn Prague ({args.transport}): Mbit/s  queue  marked")
    for k in ks:
        ns3 = run_ns3(k, args)
        mc = run_multiconn(binary, k, args)
        bdp = RATE_BPS * 2 * ONE_WAY_S / 8 / 1500
        theory = math.sqrt(2 / (bdp + k))
        rows.append({"k": k, "ns3": ns3, "multiconn": mc, "alpha_theory": theory})
        print(f"{k:>4} | {ns3['goodput_mbps']:8.2f} {ns3['mean_queue_packets']:7.2f} {ns3['marked_fraction']:7.4f} "
              f"{ns3['mean_alpha']:.4f} ({theory:.4f})       | {mc['goodput_mbps']:8.2f} {mc['mean_queue_packets']:7.2f} {mc['marked_fraction']:7.4f}")
        for key in ("mean_queue_packets", "marked_fraction"):
            a, b = ns3[key], mc[key]
            if abs(a - b) > 0.25 * max(abs(a), abs(b)):
                bad.append(f"K={k} {key}: ns-3 {a:.4g}, multiconn {b:.4g}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if bad:
        print("disagreements beyond 25 %:\n  " + "\n  ".join(bad), file=sys.stderr)
        if args.check:
            sys.exit(1)


if __name__ == "__main__":
    main()
