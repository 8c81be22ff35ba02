"""Handover cross-check, ns-3 LENA side: one UE driving past a line of eNBs with a TCP download.

    .venv/bin/python bench/lena_handover.py OUT_DIR [--enbs 3] [--isd 500] [--start 100]
        [--end 900] [--y 50] [--speed 20] [--algorithm a3|a2a4] [--hysteresis 3] [--ttt 256]
        [--serving-threshold 30] [--neighbour-offset 1] [--duration S] [--bin 0.1]
        [--rlc um|am] [--ctrl-errors on|off] [--rrc ideal|real] [--x2-delay 0] [--loss 0]
        [--seed 1] [--window 2]

Runs bench/lena/handover.sh (bench/lena/handover.cc) once: eNBs on a line at x = 0, isd, ...
(same carrier, X2 between all), the UE from (start, y) to (end, y) at --speed, attached to the
first eNB, LENA's A3 (or A2-A4) handover, a saturated TCP NewReno download from a server behind
the P-GW. An option left out takes the program's default (the values above; --duration: the
route's time plus 1 s). Writes OUT_DIR/lena_handover.json:

    {"options": the options passed, "config": the program's config line,
     "events": [handover, measurement-report, connection and failure events, time order],
     "rsrp": [every 200 ms: the UE's L1 RSRP/RSRQ per cell as LENA's PHY reports them, the
              L3-filtered RSRP (fc4, computed here as LENA's RRC does), the control SINR],
     "goodput": [per --bin: bytes delivered in order at the sink, Mbit/s, UE x, CQI SINR],
     "summary": the program's summary line,
     "handovers": [per UE-side handover: start/end time and x, cells, interruption, the report
                   that triggered it, the A3 trigger predicted from the L1 samples, the gaps in
                   what the UE received (IP) and the sink delivered, the mean goodput over
                   --window seconds before the 1 s around the start, over that second and over
                   --window seconds after it, and the sender's fast recoveries and RTOs from
                   the first of those windows to the last]}

and prints one line per handover. Exits 3 when ns-3 is not installed, 2 on a bad option, 1 when
the LENA run fails.

`run_lena(options) -> dict` is the LENA side alone, for a comparison with other simulators.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LENA_HANDOVER = ROOT / "bench" / "lena" / "handover.sh"

# The program's options: name, type, help. None as a value means "the program's default".
OPTIONS = [
    ("enbs", int, "number of eNBs on the line (3)"),
    ("isd", float, "distance between neighbouring eNBs, m (500)"),
    ("start", float, "the UE's x at 0 s, m (100)"),
    ("end", float, "the UE's x at the end of its route, m (900)"),
    ("y", float, "the UE's y, m (50)"),
    ("speed", float, "the UE's speed, m/s (20)"),
    ("algorithm", str, "a3 or a2a4 (a3)"),
    ("hysteresis", float, "A3 hysteresis, dB (3; LENA rounds to 0.5 dB)"),
    ("ttt", float, "A3 time to trigger, ms (256)"),
    ("serving-threshold", int, "A2-A4 ServingCellThreshold, RSRQ range (30)"),
    ("neighbour-offset", int, "A2-A4 NeighbourCellOffset, RSRQ range units (1)"),
    ("duration", float, "simulated seconds (the route's time plus 1 s)"),
    ("bin", float, "goodput bin, s (0.1)"),
    ("rlc", str, "um or am (um)"),
    ("ctrl-errors", str, "on or off: LENA's PDCCH error model (on)"),
    ("rrc", str, "ideal or real (ideal)"),
    ("x2-delay", float, "X2 one-way delay, ms (0)"),
    ("loss", float, "loss rate on the server link, both ways, 0..1 (0)"),
    ("seed", int, "RngRun (1)"),
]

L1_PERIOD_S = 0.2  # LteUePhy::UeMeasurementsFilterPeriod
FILTER_K = 4  # LteEnbRrc::RsrpFilterCoefficient (fc4): a = 1/2^(k/4)


def fail(message: str, code: int = 2) -> None:
    print(f"lena_handover: {message}", file=sys.stderr)
    sys.exit(code)


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def ns3_installed() -> bool:
    return Path("/usr/include/ns3/lte-module.h").exists()


def parse_lines(stdout: str) -> dict:
    """The program's JSON lines, sorted by type."""
    out: dict[str, Any] = {"config": None, "events": [], "rsrp": [], "goodput": [], "summary": None}
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        kind = rec.pop("type")
        if kind in ("config", "summary"):
            out[kind] = rec
        elif kind in ("rsrp", "goodput"):
            out[kind].append(rec)
        else:
            rec["event"] = kind
            out["events"].append(rec)
    if out["config"] is None or out["summary"] is None:
        raise ValueError("no config or summary line")
    return out


def add_l3_filter(rsrp: list[dict], k: int = FILTER_K) -> None:
    """Adds each cell's L3-filtered RSRP (l3_rsrp_dbm) the way LENA's UE RRC keeps it:
    F = (1 - a) F + a M per L1 sample in dBm, a = 1/2^(k/4), the first sample unfiltered."""
    a = 0.5 ** (k / 4)
    filtered: dict[int, float] = {}
    for sample in rsrp:
        for cell in sample["cells"]:
            m = cell["rsrp_dbm"]
            if m is None:
                continue
            c = cell["cell"]
            filtered[c] = m if c not in filtered else (1 - a) * filtered[c] + a * m
            cell["l3_rsrp_dbm"] = round(filtered[c], 3)


def predict_a3(rsrp: list[dict], serving: int, after: float, hysteresis: float, ttt_ms: float):
    """The first A3 trigger LENA's UE RRC would raise for `serving` after time `after`: the
    entering condition Mn - Hys > Mp (L3-filtered, Hys rounded to 0.5 dB, a3-Offset 0) is
    evaluated at every L1 sample; a pending trigger is cancelled by a sample where it is
    false and fires TTT after the sample that started it. Returns (time, neighbour) or None."""
    hys = round(hysteresis * 2) / 2
    samples = [s for s in rsrp if s["t"] > after]
    for i, s in enumerate(samples):
        def best(sample):
            cells = {c["cell"]: c.get("l3_rsrp_dbm") for c in sample["cells"]}
            mp = cells.get(serving)
            cand = [(v, c) for c, v in cells.items() if c != serving and v is not None]
            if mp is None or not cand:
                return None
            v, c = max(cand)
            return c if v - hys > mp else None

        cell = best(s)
        if cell is None:
            continue
        held = all(best(s2) is not None for s2 in samples[i + 1:]
                   if s2["t"] - s["t"] < ttt_ms / 1e3 - 1e-9)
        if held:
            return s["t"] + ttt_ms / 1e3, cell
    return None


def mean_goodput(goodput: list[dict], t0: float, t1: float):
    bins = [g["mbps"] for g in goodput if g["t"] >= t0 - 1e-9 and g["t_end"] <= t1 + 1e-9]
    return round(sum(bins) / len(bins), 3) if bins else None


def analyse(result: dict, window: float = 2.0) -> list[dict]:
    """One record per UE-side handover (see the module's docstring)."""
    events, cfg = result["events"], result["config"]
    reports = [e for e in events if e["event"] == "measurement_report"]
    # LENA's ANR asks for a periodic A4 report from connection on: its meas_id is the first one
    # seen; the handover algorithm's reports carry the others.
    anr_id = reports[0]["meas_id"] if reports else None
    enb_starts = [e for e in events if e["event"] == "handover_start" and e["side"] == "enb"]
    ue_ends = [e for e in events if e["event"] == "handover_end_ok" and e["side"] == "ue"]
    tcp = [e for e in events if e["event"] == "tcp_state"]
    out = []
    prev_t = 0.0
    for h in (e for e in events if e["event"] == "handover_start" and e["side"] == "ue"):
        end = next((e for e in ue_ends if e["t"] >= h["t"]), None)
        enb = next((e for e in enb_starts if abs(e["t"] - h["t"]) < 1.0
                    and e["source_cell"] == h["source_cell"]), None)
        decided = enb["t"] if enb else h["t"]
        report = None
        for r in reports:
            if r["t"] <= decided + 1e-9 and r["cell"] == h["source_cell"] and r["meas_id"] != anr_id:
                report = r
        rec = {
            "start_t_s": h["t"], "start_x_m": h["x"],
            "source_cell": h["source_cell"], "target_cell": h["target_cell"],
            "end_t_s": end["t"] if end else None, "end_x_m": end["x"] if end else None,
            "interruption_ms": round((end["t"] - h["t"]) * 1e3, 3) if end else None,
            "report_t_s": report["t"] if report else None,
            "report_x_m": report["x"] if report else None,
            "report_to_start_ms": round((h["t"] - report["t"]) * 1e3, 3) if report else None,
            "goodput_before_mbps": mean_goodput(result["goodput"], h["t"] - 0.5 - window, h["t"] - 0.5),
            "goodput_during_mbps": mean_goodput(result["goodput"], h["t"] - 0.5, h["t"] + 0.5),
            "goodput_after_mbps": mean_goodput(result["goodput"], h["t"] + 0.5, h["t"] + 0.5 + window),
            # The sender's fast recoveries and RTOs from --window s before the second around the
            # start to --window s after it (LENA's PDCCH errors near the edge cause some early).
            "tcp_recoveries": sum(1 for e in tcp if e["state"] == "recovery"
                                  and h["t"] - 0.5 - window <= e["t"] <= h["t"] + 0.5 + window),
            "tcp_rtos": sum(1 for e in tcp if e["state"] == "loss"
                            and h["t"] - 0.5 - window <= e["t"] <= h["t"] + 0.5 + window),
        }
        if cfg["algorithm"] == "a3":
            pred = predict_a3(result["rsrp"], h["source_cell"], prev_t, cfg["hysteresis_db"], cfg["ttt_ms"])
            rec["a3_predicted_t_s"] = round(pred[0], 6) if pred else None
            rec["a3_predicted_cell"] = pred[1] if pred else None
        out.append(rec)
        prev_t = end["t"] if end else h["t"]
    # The summary's gaps are per UE-side handover start, in the same order.
    for key in ("ip_gap_ms", "sink_gap_ms"):
        gaps = result["summary"].get(key) or []
        for n, rec in enumerate(out):
            rec[key] = gaps[n] if n < len(gaps) else None
    return out


def run_lena(options: dict) -> dict:
    """Runs bench/lena/handover.sh with `options` (program option name -> value; None or a
    missing name: the program's default) and returns {"options", "config", "events", "rsrp",
    "goodput", "summary", "wall_s"} with the L3-filtered RSRP added to "rsrp". Exits 3 when
    ns-3 is not installed, 1 when the run fails."""
    if not ns3_installed():
        fail("ns-3 with its LTE module is not installed (sudo apt-get install libns3-dev)", 3)
    args = [f"--{name}={value:g}" if isinstance(value, float) else f"--{name}={value}"
            for name, value in options.items() if value is not None]
    cmd = [str(LENA_HANDOVER), str(target_dir() / "lena"), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 3:
        sys.stderr.write(proc.stderr)
        sys.exit(3)
    if proc.returncode != 0:
        fail(f"LENA run failed ({' '.join(cmd)}): {proc.stderr.strip()}", 1)
    try:
        result = parse_lines(proc.stdout)
    except ValueError as err:
        fail(f"LENA run printed no result ({' '.join(cmd)}): {err}", 1)
    add_l3_filter(result["rsrp"])
    result["options"] = {k: v for k, v in options.items() if v is not None}
    result["wall_s"] = result["summary"]["wall_seconds"]
    return result


def fmt(value, spec: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="output directory for lena_handover.json")
    for name, kind, text in OPTIONS:
        p.add_argument(f"--{name}", type=kind, default=None, help=text)
    p.add_argument("--window", type=float, default=2.0,
                   help="seconds of goodput averaged before and after the 1 s around a handover")
    args = p.parse_args()
    options = {name: getattr(args, name.replace("-", "_")) for name, _, _ in OPTIONS}
    for name, allowed in (("algorithm", ("a3", "a2a4")), ("rlc", ("um", "am")),
                          ("ctrl-errors", ("on", "off")), ("rrc", ("ideal", "real"))):
        if options[name] is not None and options[name] not in allowed:
            fail(f"--{name} {options[name]!r}: must be one of {', '.join(allowed)}")
    if not args.window > 0:
        fail("--window must be positive")

    result = run_lena(options)
    result["handovers"] = analyse(result, args.window)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "lena_handover.json"
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")

    s = result["summary"]
    print(f"{'cells':>6} {'report s':>9} {'start s':>8} {'x m':>7} {'A3 pred s':>9} {'intr ms':>7} "
          f"{'IP gap ms':>9} {'sink gap ms':>11} | {'goodput Mbit/s before':>21} {'during':>7} {'after':>7} | "
          f"{'TCP rec/RTO':>11}")
    for h in result["handovers"]:
        print(f"{h['source_cell']:>2}->{h['target_cell']:<3} {fmt(h['report_t_s'], '9.3f')} "
              f"{h['start_t_s']:>8.3f} {h['start_x_m']:>7.1f} {fmt(h.get('a3_predicted_t_s'), '9.3f')} "
              f"{fmt(h['interruption_ms'], '7.2f')} {fmt(h['ip_gap_ms'], '9.1f')} "
              f"{fmt(h['sink_gap_ms'], '11.1f')} | {fmt(h['goodput_before_mbps'], '21.2f')} "
              f"{fmt(h['goodput_during_mbps'], '7.2f')} {fmt(h['goodput_after_mbps'], '7.2f')} | "
              f"{h['tcp_recoveries']:>7}/{h['tcp_rtos']:<3}")
    print(f"{s['handovers']} handover(s), {s['radio_link_failures']} radio link failure(s), "
          f"{s['handover_failures']} handover failure(s); {s['total_bytes']} bytes, "
          f"{s['goodput_mbps']:.2f} Mbit/s from 0.5 s; LENA wall time {s['wall_seconds']:.1f} s")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
