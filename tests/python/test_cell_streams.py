"""The QUIC vs TCP cell study's stream-count finding (seed 003, Table 4) against the ns-3 QUIC
module it ran: what docs/lte-cell.md says about it, pinned."""

from __future__ import annotations

from pathlib import Path

import pytest

import multiconn

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_stream_count_leaves_the_goodput_of_the_ns3_quic_module_unchanged() -> None:
    """docs/lte-cell.md, "Streams": the ns-3 QUIC module's code (bd6f528) has no mechanism
    that raises goodput with the number of streams, and neither has the model. Seed for seed
    (the same losses and fading), 8 streams deliver what 1 stream does at 100 m, within a
    few hundredths of the ~7.5 Mbit/s, with the ns3-quic-2019 profile and with rfc9002."""
    scenario = ROOT / "python/multiconn/catalog/scenarios/lte_cell_streams.toml"

    def messages(n: int) -> list[dict[str, str]]:
        return [{"name": f"s{i}", "kind": "background", "size": "512 B",
                 "interval": f"{300 * n} us", "start": f"{300 * i} us"} for i in range(n)]

    for profile in ("ns3-quic-2019", "rfc9002"):
        for seed in (1, 2, 3):
            goodput = {}
            for n in (1, 8):
                run = multiconn.run(scenario, seed=seed, overrides={
                    "cell.lte.distance_m": 100, "flow.streams.profile": profile,
                    "flow.streams.messages": messages(n)})
                goodput[n] = run.summary["flows"][0]["steady_goodput_mbps"]
            assert goodput[1] > 6.0, (profile, seed, goodput)
            assert abs(goodput[8] - goodput[1]) < 0.15, (profile, seed, goodput)
