"""The reference pages name every output: each time-series column in docs/cli.md, each field a
run's summary can hold in docs/summary.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, ROOT

CATALOG_SCENARIOS = ROOT / "python" / "multiconn" / "catalog" / "scenarios"
DYNAMIC_PARENTS = {"pdcp": "<split>", "messages": "<source>"}
"""Objects whose keys are names from the scenario, not fields."""

RUNS = [
    (EXAMPLES / "bulk.toml", {"run.duration": "1 s"}),
    (EXAMPLES / "cbr_lossy.toml", {}),
    (EXAMPLES / "mpquic_handover.toml", {"run.duration": "16 s"}),
    (EXAMPLES / "tcp_quic_share.toml", {}),
    (EXAMPLES / "quic_slow_reader.toml", {}),
    (CATALOG_SCENARIOS / "dc_throughput.toml", {"run.duration": "2 s"}),
    (CATALOG_SCENARIOS / "v2x_two_paths.toml", {"run.duration": "2 s"}),
    (CATALOG_SCENARIOS / "v2x_datagram.toml", {"run.duration": "2 s",
                                               "flow.single.messages.priority.datagram": "true"}),
    (CATALOG_SCENARIOS / "download.toml", {}),
    (EXAMPLES / "mpquic_handover.toml", {"run.duration": "2 s",
                                          "flow.download.multipath.coupled": "lia"}),
    (CATALOG_SCENARIOS / "two_operators.toml", {"run.duration": "2 s"}),
    (EXAMPLES / "real_quinn.toml", {"flow.download.size": "1 MB"}),
]


def _fields(node: Any, where: str, out: dict[str, str], parent: str = "") -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if parent in DYNAMIC_PARENTS:
                _fields(value, f"{where}.{DYNAMIC_PARENTS[parent]}", out)
                continue
            out.setdefault(key, f"{where}.{key}")
            _fields(value, f"{where}.{key}", out, key)
    elif isinstance(node, list):
        for item in node:
            _fields(item, f"{where}[]", out, parent)


def _named(page: Path) -> set[str]:
    return set(re.findall(r"`([a-z_0-9]+)`", page.read_text(encoding="utf-8")))


def test_every_time_series_column_is_documented() -> None:
    from multiconn._native import TIMESERIES_COLUMNS

    named = _named(ROOT / "docs" / "cli.md")
    missing = [name for name, _ in TIMESERIES_COLUMNS if name not in named]
    assert not missing, f"docs/cli.md does not name the time-series columns {missing}"


@pytest.mark.native
def test_every_summary_field_is_documented() -> None:
    import multiconn

    fields: dict[str, str] = {}
    for scenario, overrides in RUNS:
        _fields(multiconn.run(scenario, overrides=overrides).summary, "", fields)
    assert {"coupled", "per_leg", "path_manager", "responses", "messages"} <= set(fields)
    named = _named(ROOT / "docs" / "summary.md")
    missing = {key: where for key, where in fields.items() if key not in named}
    assert not missing, f"docs/summary.md does not name the summary fields {missing}"


@pytest.mark.native
def test_the_readmes_queue_size_example_reproduces() -> None:
    """The four goodputs the README quotes for examples/scenarios/split_queues.toml are what
    the four runs give (to the two decimals quoted), and they show what the text says: the
    larger queue lifts TCP above QUIC from well below it."""
    import multiconn

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    quoted = re.search(r"got ([\d.]+) Mbit/s with TCP \(`linux-tcp`, CUBIC\) and ([\d.]+) with QUIC "
                       r"\(`ngtcp2`, CUBIC\) behind 50-packet queues, but ([\d.]+) and ([\d.]+) behind "
                       r"500-packet ones", text)
    assert quoted, "README: the queue-size example's sentence changed; update this test with it"
    measured = []
    for queue in ("50 packets", "500 packets"):
        for transport, profile in (("tcp", "linux-tcp"), ("quic", "ngtcp2")):
            result = multiconn.run(EXAMPLES / "split_queues.toml", overrides={
                "link.lte.queue": queue, "link.nr.queue": queue,
                "flow.f.transport": transport, "flow.f.profile": profile})
            measured.append(round(result.summary["flows"][0]["goodput_mbps"], 2))
    assert measured == [float(v) for v in quoted.groups()]
    tcp_50, quic_50, tcp_500, quic_500 = measured
    assert tcp_50 < quic_50 - 3 and tcp_500 > quic_500
