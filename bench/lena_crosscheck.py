"""Cross-check of multiconn's LTE cell against ns-3 LENA: the same set-up run in both.

    .venv/bin/python bench/lena_crosscheck.py OUT_DIR [--distances 50,250,500,750,1000]
        [--ues 1,2] [--fading none,fading] [--timing ideal,lena,lena-mcs] [--duration 40]
        [--measure-from 5] [--seeds 1] [--tcp large|ns329] [--loss 0.5]

Runs the QUIC vs TCP cell study's set-up with TCP downloads only (docs/lte-cell.md, "Cross-check
against ns-3 LENA"): LENA through bench/lena/run.sh (bench/lena/lte_cell.cc), multiconn through
the `run_scenario` example on bench/lena/lte_cell_{1,2}ue.toml, for every distance, number of
UEs, fading setting and seed. "fading" is LENA's EPA 3 km/h trace on the LENA side and
multiconn's `epa` tapped delay line at 3 km/h on the other; "none" turns fading off in both.
multiconn runs once per cell variant of --timing: `ideal` (no control delays), `lena` (LENA's
control delays: downlink TBs on air 2 TTIs after scheduling, the uplink through buffer status
reports and grants) and `lena-mcs` (those and LENA's uplink MCS: the worst RB of the last SRS
through the Shannon gap).
--tcp picks the TCP of both sides: `large` (the default; MSS 1448, 4 MiB buffers, IW 10,
bench/lena/ns3-newreno.toml) or `ns329` (ns-3.29's defaults as the study ran them: MSS 536,
128 KiB buffers, IW 1; multiconn's `ns3-tcp-3.29` profile). --loss is the loss rate on both
directions of every server link, in per cent (0.5, the study's).
multiconn runs through the `run_scenario` example when it is built (target/release/examples),
otherwise through the `multiconn` command next to this Python (`multiconn run --json`).
Prints a table of the steady goodput per UE (Mbit/s, from --measure-from to the end) side by
side with each run's wall time, and writes OUT_DIR/lena_crosscheck.csv (one row per simulator,
point, seed and UE) and OUT_DIR/lena_crosscheck.png (goodput vs distance, one panel per number
of UEs and fading setting).

The LENA fading trace (fading_trace_EPA_3kmph.fad) is only in Debian's ns-3 source package; give
its path with --trace or $LENA_FADING_TRACE, or put it in target/lena/. Exits 3 when ns-3 is not
installed, 2 on a bad option or a missing trace.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from run_scenario_output import steady_goodput_and_stats

ROOT = Path(__file__).resolve().parent.parent
LENA_RUN = ROOT / "bench" / "lena" / "run.sh"
SCENARIOS = {1: ROOT / "bench" / "lena" / "lte_cell_1ue.toml", 2: ROOT / "bench" / "lena" / "lte_cell_2ue.toml"}
FADING = {"none": ("none", "none"), "fading": ("trace", "epa")}  # name: (LENA, multiconn)


def fail(message: str, code: int = 2) -> None:
    print(f"lena_crosscheck: {message}", file=sys.stderr)
    sys.exit(code)


def number_list(text: str, kind, name: str) -> list:
    try:
        values = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        fail(f"--{name} {text!r}: expected comma-separated numbers")
    if not values or any(v <= 0 for v in values):
        fail(f"--{name} {text!r}: expected positive numbers")
    return values


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def run_scenario_binary() -> Path:
    """The `run_scenario` example if it is built, else the `multiconn` command of this Python's
    environment (the wheel `make setup` installs); cargo builds the example only when neither
    is there."""
    binary = target_dir() / "release" / "examples" / "run_scenario"
    if binary.exists():
        return binary
    cli = Path(sys.executable).parent / "multiconn"
    if cli.exists():
        return cli
    print("building run_scenario (cargo build --release)", file=sys.stderr)
    subprocess.run(
        ["cargo", "build", "--release", "-p", "multiconn-scenario", "--example", "run_scenario"],
        cwd=ROOT, check=True)
    return binary


def run_lena(distance: float, ues: int, fading: str, args, seed: int) -> dict:
    cmd = [str(LENA_RUN), str(target_dir() / "lena"), f"--distance={distance:g}", f"--ues={ues}",
           f"--fading={FADING[fading][0]}", f"--duration={args.duration:g}",
           f"--measure-from={args.measure_from:g}", f"--seed={seed}", f"--tcp={args.tcp}",
           f"--loss={args.loss / 100:g}"]
    if fading != "none":
        cmd.append(f"--trace={args.trace}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 3:
        sys.stderr.write(proc.stderr)
        sys.exit(3)
    if proc.returncode != 0:
        fail(f"LENA run failed ({' '.join(cmd)}): {proc.stderr.strip()}", 1)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"goodput": out["goodput_mbps"], "wall_s": out["wall_seconds"], "sim_s": out["sim_seconds"]}


# Each cell variant: its overrides and its label in the figure.
TIMINGS = {
    "ideal": ([], "multiconn, ideal timing"),
    "lena": (['cell.lte.timing="lena"'], "multiconn, LENA's control delays"),
    "lena-mcs": (['cell.lte.timing="lena"', 'cell.lte.uplink_mcs="lena"'], "multiconn, LENA's delays and uplink MCS"),
}


# --tcp: LENA's option and multiconn's profile (None: the scenario's ns3-newreno.toml).
TCPS = {"large": None, "ns329": "ns3-tcp-3.29"}


def run_multiconn(binary: Path, distance: float, ues: int, fading: str, timing: str, args, seed: int) -> dict:
    sets = [f"cell.lte.distance_m={distance:g}", f"cell.lte.fading={FADING[fading][1]}", *TIMINGS[timing][0],
            f"run.duration={args.duration:g} s", f"run.measure_from={args.measure_from:g} s", f"run.seed={seed}"]
    for i in range(1, ues + 1):
        sets.append(f"link.server{i}.loss={args.loss:g} %")
        if TCPS[args.tcp]:
            sets.append(f'flow.dl{i}.profile="{TCPS[args.tcp]}"')
    if binary.name == "multiconn":
        with tempfile.TemporaryDirectory() as out:
            cmd = [str(binary), "run", str(SCENARIOS[ues]), "--out", out, "--json", "-q",
                   *(a for kv in sets for a in ("--set", kv))]
            proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            fail(f"multiconn run failed ({' '.join(cmd)}): {proc.stderr.strip()}", 1)
        summary = json.loads(proc.stdout)
        goodput = {f["name"]: f["steady_goodput_mbps"] for f in summary["flows"]}
        stats = {"wall_s": summary["wall_time_s"], "sim_s": summary["sim_time_s"]}
    else:
        cmd = [str(binary), str(SCENARIOS[ues]), *sets]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "MULTICONN_PRINT_FLOWS": "1"})
        if proc.returncode != 0:
            fail(f"multiconn run failed ({' '.join(cmd)}): {proc.stderr.strip()}", 1)
        goodput, stats = steady_goodput_and_stats(proc.stdout)
    if stats is None or len(goodput) != ues:
        fail(f"multiconn run printed no summary ({' '.join(cmd)})", 1)
    return {"goodput": [goodput[f"dl{i}"] for i in range(1, ues + 1)], "wall_s": stats["wall_s"],
            "sim_s": stats["sim_s"]}


def mean(values) -> float:
    return sum(values) / len(values)


def plot(rows: list[dict], args, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(args.ues), len(args.fading), figsize=(5 * len(args.fading), 3.6 * len(args.ues)),
                             squeeze=False, sharex=True, sharey=True)
    for r, ues in enumerate(args.ues):
        for c, fading in enumerate(args.fading):
            ax = axes[r][c]
            styles = [("lena", "o-", "ns-3 LENA")] + [
                (f"multiconn {t}", style, TIMINGS[t][1]) for t, style in zip(args.timing, ("s--", "^:", "d-."))]
            for sim, style, label in styles:
                pts = [(row["distance_m"], row["goodput_mbps"]) for row in rows
                       if row["sim"] == sim and row["ues"] == ues and row["fading"] == fading]
                xs = sorted({d for d, _ in pts})
                ys = [mean([g for d, g in pts if d == x]) for x in xs]
                ax.plot(xs, ys, style, label=label)
            label = "no fading" if fading == "none" else "fading (LENA EPA trace / multiconn EPA)"
            ax.set_title(f"{ues} UE{'s' if ues > 1 else ''}, {label}", fontsize=9)
            ax.grid(True, alpha=0.3)
            if r == len(args.ues) - 1:
                ax.set_xlabel("distance (m)")
            if c == 0:
                ax.set_ylabel("goodput per UE (Mbit/s)")
            # Room above the curves for the legend.
            ax.set_ylim(0, 1.45 * max([row["goodput_mbps"] for row in rows] + [1.0]))
            ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(f"TCP NewReno ({args.tcp}, {args.loss:g} % loss) goodput per UE\n"
                 f"{args.measure_from:g}-{args.duration:g} s, mean over UEs and {len(args.seeds)} seed(s)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="output directory for the CSV and the figure")
    p.add_argument("--distances", default="50,250,500,750,1000", help="metres, comma-separated")
    p.add_argument("--ues", default="1,2", help="numbers of UEs: 1, 2 or both")
    p.add_argument("--fading", default="none,fading", help="none, fading or both")
    p.add_argument("--timing", default="ideal,lena,lena-mcs", help="multiconn's cell variants: ideal, lena, lena-mcs")
    p.add_argument("--duration", type=float, default=40.0, help="simulated seconds per run")
    p.add_argument("--measure-from", type=float, default=5.0, help="goodput counted from this second")
    p.add_argument("--seeds", default="1", help="seeds (RngRun in LENA, run.seed in multiconn)")
    p.add_argument("--trace", default=None, help="path of LENA's fading_trace_EPA_3kmph.fad")
    p.add_argument("--tcp", default="large", choices=tuple(TCPS),
                   help="large (MSS 1448, 4 MiB, IW 10) or ns329 (ns-3.29's defaults: 536, 128 KiB, IW 1)")
    p.add_argument("--loss", type=float, default=0.5, help="loss on the server links, per cent, both ways")
    args = p.parse_args()

    ues_text, fading_text = args.ues, args.fading
    args.distances = number_list(args.distances, float, "distances")
    args.ues = number_list(args.ues, int, "ues")
    args.seeds = number_list(args.seeds, int, "seeds")
    if any(u not in SCENARIOS for u in args.ues):
        fail(f"--ues {ues_text!r}: each must be 1 or 2")
    args.fading = [f.strip() for f in args.fading.split(",") if f.strip()]
    if not args.fading or any(f not in FADING for f in args.fading):
        fail(f"--fading {fading_text!r}: each must be none or fading")
    timing_text = args.timing
    args.timing = [t.strip() for t in args.timing.split(",") if t.strip()]
    if not args.timing or any(t not in TIMINGS for t in args.timing):
        fail(f"--timing {timing_text!r}: each must be one of {', '.join(TIMINGS)}")
    if not (0.0 <= args.loss < 100.0):
        fail(f"--loss {args.loss:g}: must be in [0, 100) per cent")
    if not (0.5 <= args.measure_from < args.duration):
        fail("--duration must exceed --measure-from, and --measure-from be at least 0.5 s")
    if not Path("/usr/include/ns3/lte-module.h").exists():
        fail("ns-3 with its LTE module is not installed (sudo apt-get install libns3-dev)", 3)
    if "fading" in args.fading:
        trace = args.trace or os.environ.get("LENA_FADING_TRACE") or str(target_dir() / "lena" / "fading_trace_EPA_3kmph.fad")
        if not Path(trace).is_file():
            fail(f"LENA's fading trace {trace} is missing: it is in Debian's ns-3 source package "
                 "(apt-get source ns3: src/lte/model/fading-traces/fading_trace_EPA_3kmph.fad); "
                 "give it with --trace, or run with --fading none")
        args.trace = str(Path(trace).resolve())

    args.out.mkdir(parents=True, exist_ok=True)
    binary = run_scenario_binary()
    rows = []
    sims_run = ["lena"] + [f"multiconn {t}" for t in args.timing]
    walls = {sim: 0.0 for sim in sims_run}
    sims = {sim: 0.0 for sim in sims_run}
    header = (f"{'ues':>3} {'fading':>6} {'dist m':>6} {'seed':>4} | {'LENA Mbit/s per UE':>20} {'wall s':>6} | "
              + " | ".join(f"{'multiconn ' + t + ' Mbit/s per UE':>29} {'wall s':>6}" for t in args.timing)
              + f" | {'speed':>6}")
    print(header)
    print("-" * len(header))
    for ues in args.ues:
        for fading in args.fading:
            for distance in args.distances:
                for seed in args.seeds:
                    results = {"lena": run_lena(distance, ues, fading, args, seed)}
                    for t in args.timing:
                        results[f"multiconn {t}"] = run_multiconn(binary, distance, ues, fading, t, args, seed)
                    for sim, res in results.items():
                        walls[sim] += res["wall_s"]
                        sims[sim] += res["sim_s"]
                        for i, g in enumerate(res["goodput"]):
                            rows.append({"sim": sim, "tcp": args.tcp, "loss_pct": args.loss, "ues": ues,
                                         "fading": fading, "distance_m": distance,
                                         "seed": seed, "ue": i + 1, "goodput_mbps": g,
                                         "wall_s": res["wall_s"], "sim_s": res["sim_s"]})
                    fmt = lambda gs: " / ".join(f"{g:.2f}" for g in gs)  # noqa: E731
                    lena, first = results["lena"], results[f"multiconn {args.timing[0]}"]
                    ours = " | ".join(f"{fmt(results[f'multiconn {t}']['goodput']):>29} {results[f'multiconn {t}']['wall_s']:>6.2f}"
                                      for t in args.timing)
                    print(f"{ues:>3} {fading:>6} {distance:>6g} {seed:>4} | {fmt(lena['goodput']):>20} "
                          f"{lena['wall_s']:>6.2f} | {ours} | {lena['wall_s'] / first['wall_s']:>5.1f}x", flush=True)

    with open(args.out / "lena_crosscheck.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, args, args.out / "lena_crosscheck.png")
    for t in args.timing:
        m = f"multiconn {t}"
        print(f"\nwall time over all runs: LENA {walls['lena']:.1f} s ({sims['lena'] / walls['lena']:.1f}x real time), "
              f"multiconn ({t}) {walls[m]:.1f} s ({sims[m] / walls[m]:.1f}x real time); "
              f"multiconn is {walls['lena'] / walls[m]:.1f} times faster")
    print(f"wrote {args.out / 'lena_crosscheck.csv'} and {args.out / 'lena_crosscheck.png'}")


if __name__ == "__main__":
    main()
