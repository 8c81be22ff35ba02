"""Handover cross-check against ns-3 LENA's X2 handover: the same route in both simulators.

    .venv/bin/python bench/handover_crosscheck.py OUT_DIR [--speed 20] [--hysteresis 3]
        [--ttt 256] [--isd 500] [--enbs 3] [--y 50] [--ctrl-errors on|off] [--window 2]

eNBs on a line at x = 0, isd, ... (one 20 MHz LTE carrier, 46 dBm, ns-3's log-distance path
loss, no fading or shadowing), one UE from (100, y) to ((enbs − 1)·isd − 100, y) at --speed
with a saturated TCP NewReno download from a server 10 ms behind the gateway (multiconn: the
ns-3 TCP profile bench/lena/ns3-newreno.toml); LENA's
A3-RSRP handover (hysteresis, time-to-trigger; no offset) and multiconn's A3 with the same
hysteresis, time-to-trigger and offset 0, RSRP sampled every 200 ms through the fc4 layer-3
filter as LENA's RRC does, LENA's instant X2 and preparation, 4.213 ms from the command to the
UE in the target (LENA's random access, measured) and LENA's loss of the source's RLC buffer
(no forwarding of what it held).

LENA runs through bench/lena_handover.py (bench/lena/handover.sh), multiconn through the
`multiconn` command next to this Python on a scenario written to OUT_DIR/multiconn.toml.
Prints, per handover, where each simulator started it (x, m), the interruption, and the TCP
goodput in --window seconds before the second around the start, in that second and in
--window seconds after it; the handover positions differ by the given share of the
inter-site distance. Writes OUT_DIR/handover_crosscheck.json. Exits 3 when ns-3 is not
installed, 2 on a bad option.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lena_handover  # noqa: E402

SCENARIO = """# Written by bench/handover_crosscheck.py: the LENA handover route in multiconn.
name = "handover_crosscheck"

[run]
duration = "{duration} s"
seed = 1

[[link]]
name = "core"
between = ["server", "gw"]
rate = "100 Gbit/s"
delay = "10 ms"
queue = "100000 packets"

[[cell]]
name = "ran"
enb = "gw"
bandwidth_rb = 100
carrier_mhz = 2120
fading = "none"
layout = {{ sites = [{sites}], height_m = 30 }}
handover = {{ a3_offset_db = 0, hysteresis_db = {hysteresis}, time_to_trigger = "{ttt} ms", preparation = "0 ms", interruption = "4.213 ms", x2_delay = "0 ms", path_switch = "0 ms", forwarding = false }}
measurement = {{ period = "200 ms", filter_coefficient = 4, nominal_period = "200 ms" }}
rlf = false
ues = [{{ node = "ue", initial_cell = 0, route = [{{ x_m = {start}, y_m = {y} }}, {{ x_m = {end}, y_m = {y}, speed = "{speed} m/s" }}] }}]

[[flow]]
name = "dl"
from = "server"
to = "ue"
transport = "tcp"
profile = "{profile}"
cc = "newreno"
app = "bulk"
route = ["core", "ran"]
"""


def multiconn_command() -> list[str]:
    here = Path(sys.executable).parent / "multiconn"
    return [str(here)] if here.exists() else ["multiconn"]


def mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def run_multiconn(out: Path, o: dict, window: float) -> dict:
    """Runs the route in multiconn; its handovers with the goodput around each."""
    start, end = 100.0, (o["enbs"] - 1) * o["isd"] - 100.0
    duration = (end - start) / o["speed"] + 1.0
    sites = ", ".join(f"[{i * o['isd']:g}, 0]" for i in range(o["enbs"]))
    text = SCENARIO.format(duration=f"{duration:g}", sites=sites, hysteresis=f"{o['hysteresis']:g}", ttt=f"{o['ttt']:g}",
                           start=f"{start:g}", end=f"{end:g}", y=f"{o['y']:g}", speed=f"{o['speed']:g}",
                           profile=Path(__file__).resolve().parent / "lena" / "ns3-newreno.toml")
    out.mkdir(parents=True, exist_ok=True)
    scenario = out / "multiconn.toml"
    scenario.write_text(text)
    run_dir = out / "multiconn"
    proc = subprocess.run([*multiconn_command(), "run", str(scenario), "--out", str(run_dir)], capture_output=True, text=True)
    if proc.returncode != 0:
        lena_handover.fail(f"multiconn run failed: {proc.stderr.strip()}", 1)
    summary = json.loads((run_dir / "summary.json").read_text())
    table = pq.read_table(run_dir / "timeseries.parquet", columns=["time_s", "kind", "name", "throughput_mbps"]).to_pydict()
    bins = [(t, m) for t, k, n, m in zip(table["time_s"], table["kind"], table["name"], table["throughput_mbps"]) if k == "flow" and n == "dl"]
    width = bins[1][0] - bins[0][0] if len(bins) > 1 else 0.1

    def goodput(t0: float, t1: float) -> float | None:
        return mean([m for t, m in bins if t >= t0 - 1e-9 and t + width <= t1 + 1e-9])

    ue = summary["cells"][0]["ues"][0]
    handovers = []
    for e in ue["events"]:
        if e["event"] != "handover_start":
            continue
        t = e["t_s"]
        done = next(x for x in ue["events"] if x["event"] == "handover_end" and x["t_s"] >= t)
        handovers.append({
            "start_t_s": t, "start_x_m": e["x_m"], "source_cell": e["source"], "target_cell": e["target"],
            "interruption_ms": done["interruption_ms"],
            "goodput_before_mbps": goodput(t - 0.5 - window, t - 0.5),
            "goodput_during_mbps": goodput(t - 0.5, t + 0.5),
            "goodput_after_mbps": goodput(t + 0.5, t + 0.5 + window),
        })
    return {"summary_goodput_mbps": summary["flows"][0]["goodput_mbps"], "handovers": handovers}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--speed", type=float, default=20.0, help="m/s (20)")
    p.add_argument("--hysteresis", type=float, default=3.0, help="dB (3)")
    p.add_argument("--ttt", type=float, default=256.0, help="ms, one of TS 38.331's (256)")
    p.add_argument("--isd", type=float, default=500.0, help="m (500)")
    p.add_argument("--enbs", type=int, default=3, help="(3)")
    p.add_argument("--y", type=float, default=50.0, help="the route's distance from the line, m (50)")
    p.add_argument("--ctrl-errors", default="on", choices=("on", "off"), help="LENA's PDCCH error model (on)")
    p.add_argument("--window", type=float, default=2.0)
    a = p.parse_args()
    if not (a.speed > 0 and a.isd > 200 and a.enbs >= 2 and a.window > 0):
        lena_handover.fail("--speed and --window must be positive, --isd above 200 m, --enbs at least 2")
    o = {"speed": a.speed, "hysteresis": a.hysteresis, "ttt": a.ttt, "isd": a.isd, "enbs": a.enbs, "y": a.y}
    end = (a.enbs - 1) * a.isd - 100.0
    lena = lena_handover.run_lena({"enbs": a.enbs, "isd": a.isd, "start": 100.0, "end": end, "y": a.y, "speed": a.speed,
                                   "hysteresis": a.hysteresis, "ttt": a.ttt, "ctrl-errors": a.ctrl_errors})
    lena["handovers"] = lena_handover.analyse(lena, a.window)
    ours = run_multiconn(a.out, o, a.window)
    rows = []
    print(f"{'handover':>9} | {'x m LENA':>8} {'multiconn':>9} {'diff/ISD':>8} | {'intr ms L':>9} {'m':>6} | "
          f"{'Mbit/s before L/m':>17} {'during L/m':>13} {'after L/m':>13}")
    for n, (l, m) in enumerate(zip(lena["handovers"], ours["handovers"])):
        share = abs(l["start_x_m"] - m["start_x_m"]) / a.isd
        rows.append({"lena": l, "multiconn": m, "position_difference_isd": round(share, 4)})
        f = lena_handover.fmt
        print(f"{m['source_cell']:>4}->{m['target_cell']:<4} | {l['start_x_m']:>8.1f} {m['start_x_m']:>9.1f} {share:>8.3f} | "
              f"{f(l['interruption_ms'], '9.2f')} {m['interruption_ms']:>6.2f} | "
              f"{f(l['goodput_before_mbps'], '8.1f')}/{f(m['goodput_before_mbps'], '<8.1f')} "
              f"{f(l['goodput_during_mbps'], '6.1f')}/{f(m['goodput_during_mbps'], '<6.1f')} "
              f"{f(l['goodput_after_mbps'], '6.1f')}/{f(m['goodput_after_mbps'], '<6.1f')}")
    counts = (len(lena["handovers"]), len(ours["handovers"]))
    print(f"handovers: LENA {counts[0]}, multiconn {counts[1]}; mean goodput LENA {lena['summary']['goodput_mbps']:.1f}, "
          f"multiconn {ours['summary_goodput_mbps']:.1f} Mbit/s")
    result = {"options": vars(a) | {"out": str(a.out)}, "handovers": rows, "counts": counts,
              "lena_goodput_mbps": lena["summary"]["goodput_mbps"], "multiconn_goodput_mbps": ours["summary_goodput_mbps"]}
    (a.out / "handover_crosscheck.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {a.out / 'handover_crosscheck.json'}")


if __name__ == "__main__":
    main()
