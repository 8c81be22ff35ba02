"""TCP and QUIC flows through the CLI and the API: the example runs unchanged with another
transport, congestion control and profile; QUIC writes qlog files that qvis can read."""

from __future__ import annotations

import json
from pathlib import Path

import multiconn
import pytest

pytestmark = pytest.mark.native

RS = "\x1e"


def _records(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith(RS)
    return [json.loads(r) for r in text.split(RS) if r.strip()]


@pytest.mark.parametrize(
    ("transport", "cc", "profile"),
    [("tcp", "cubic", "linux-tcp"), ("quic", "newreno", "aioquic"), ("quic", "cubic", "ngtcp2")],
)
def test_bulk_example_runs_with_each_transport(examples: Path, transport: str, cc: str, profile: str) -> None:
    result = multiconn.run(
        examples / "bulk.toml",
        overrides={
            "run.duration": "5 s",
            "flow.bulk.transport": transport,
            "flow.bulk.cc": cc,
            "flow.bulk.profile": profile,
        },
    )
    flow = result.summary["flows"][0]
    assert (flow["transport"], flow["cc"], flow["profile"]) == (transport, cc, profile)
    # A 40 Mbit/s bottleneck: after the handshake and slow start the flow is well above half of it.
    assert 20 < flow["goodput_mbps"] < 40
    rows = result.timeseries[result.timeseries["kind"] == "flow"]
    assert rows["cwnd_bytes"].iloc[5:].notna().all()
    assert (rows["srtt_ms"].iloc[5:] >= 20).all()


def test_quic_qlog_files_are_json_seq_with_the_main_events(cli, examples: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = cli(
        "run", examples / "bulk.toml", "--out", out, "--quiet",
        "--set", "run.duration=2s", "--set", "flow.bulk.transport=quic",
        "--set", "flow.bulk.qlog=true", "--set", "link.bottleneck.loss=1%",
    )
    assert proc.returncode == 0, proc.stderr
    server = _records(out / "qlog" / "bulk_server.sqlog")
    client = _records(out / "qlog" / "bulk_client.sqlog")
    assert server[0]["qlog_format"] == "JSON-SEQ"
    assert server[0]["trace"]["vantage_point"]["type"] == "server"
    assert client[0]["trace"]["vantage_point"]["type"] == "client"
    names = {r["name"] for r in server[1:]}
    for expected in ("transport:packet_sent", "transport:packet_received", "recovery:packet_lost",
                     "recovery:metrics_updated", "recovery:congestion_state_updated"):
        assert expected in names, expected
    times = [r["time"] for r in server[1:]]
    assert times == sorted(times)


def test_tcp_flow_refuses_quic_only_settings(cli, examples: Path) -> None:
    proc = cli("validate", examples / "bulk.toml", "--set", "flow.bulk.transport=tcp",
               "--set", "flow.bulk.resume=true")
    assert proc.returncode == 2
    assert "flow.bulk.resume" in proc.stderr and "0-RTT" in proc.stderr
    proc = cli("validate", examples / "bulk.toml", "--set", "flow.bulk.transport=tcp",
               "--set", "flow.bulk.address_token=true")
    assert proc.returncode == 2
    assert "flow.bulk.address_token" in proc.stderr and "amplification" in proc.stderr
