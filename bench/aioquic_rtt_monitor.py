#!/usr/bin/env python3
"""The fidelity table's aioquic points simulated with and without aioquic's slow-start exit.

The `aioquic` profile leaves `hystart = false`; `hystart_rule = "aioquic"` models aioquic's
`QuicRttMonitor` (docs/profiles.md). This writes a diagnostic copy of the built-in profile
with the monitor switched on (to a temporary folder) and prints, per point of
docs/fidelity.md, the mean ± standard deviation over seeds 1-3 of both, 20 MB downloads of
`dc_throughput.toml` as bench/fidelity.py simulates them.

    .venv/bin/python bench/aioquic_rtt_monitor.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from multiconn import run  # noqa: E402

SCENARIO = ROOT / "python" / "multiconn" / "catalog" / "scenarios" / "dc_throughput.toml"
POINTS = [
    ("DC batch 10", {"split.dc.policy.size": "10"}),
    ("DC batch 100", {}),
    ("DC batch 500", {"split.dc.policy.size": "500"}),
    ("DC split 70 % on leg 1", {"split.dc.policy.share": "0.7"}),
    ("DC split 90 % on leg 1", {"split.dc.policy.share": "0.9"}),
    ("DC loss 0.08 % on both legs", {"link.leg1.forward.loss": "0.08 %", "link.leg2.forward.loss": "0.08 %"}),
    ("DC loss 0.32 % on both legs", {"link.leg1.forward.loss": "0.32 %", "link.leg2.forward.loss": "0.32 %"}),
    ("DC loss 0.64 % on both legs", {"link.leg1.forward.loss": "0.64 %", "link.leg2.forward.loss": "0.64 %"}),
    ("DC delay ratio 5:1 (167 / 33 ms)", {"link.leg1.delay.mean": "166.667 ms", "link.leg2.delay.mean": "33.333 ms"}),
]


def with_monitor(folder: Path) -> Path:
    """The built-in aioquic profile with `hystart = true` and `hystart_rule = "aioquic"`."""
    text = (ROOT / "crates" / "transport" / "profiles" / "aioquic.toml").read_text()
    if "\nhystart = false\n" not in text or 'name = "aioquic"' not in text:
        sys.exit("aioquic_rtt_monitor: crates/transport/profiles/aioquic.toml no longer has `hystart = false`")
    text = text.replace('name = "aioquic"', 'name = "aioquic-rtt-monitor"', 1)
    text = text.replace("\nhystart = false\n", '\nhystart = true\nhystart_rule = "aioquic"\n', 1)
    path = folder / "aioquic-rtt-monitor.toml"
    path.write_text(text)
    return path


def goodput(sets: dict[str, str], seed: int) -> float:
    flow = run(str(SCENARIO), overrides=sets, seed=seed).summary["flows"][0]
    return 20e6 * 8 / flow["completion_s"] / 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        profiles = {"aioquic": "aioquic", "with the monitor": str(with_monitor(Path(tmp)))}
        print(f"{'point':34s} " + "  ".join(f"{k:>18s}" for k in profiles))
        for point, sets in POINTS:
            cells = []
            for profile in profiles.values():
                common = {**sets, "flow.dc.size": "20 MB", "run.duration": "120 s", "flow.dc.profile": profile,
                          "flow.dc.cc": "newreno", "flow.dc.receiver.read_cost": "100 us"}
                g = [goodput(common, seed) for seed in (1, 2, 3)]
                mean = sum(g) / len(g)
                sd = (sum((x - mean) ** 2 for x in g) / (len(g) - 1)) ** 0.5
                cells.append(f"{mean:8.2f} ± {sd:5.2f}")
            print(f"{point:34s} " + "  ".join(f"{c:>18s}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
