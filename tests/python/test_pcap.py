"""Packet captures (docs/pcap.md): `multiconn run --pcap` and `multiconn.run(..., pcap=...)`
write pcapng files that dpkt reads, whose TCP sequence and acknowledgment numbers match the
run's counters; the filter and the size limit; captures change no result."""

from __future__ import annotations

import json
from pathlib import Path

import multiconn
import pytest
from multiconn.errors import PcapLimitWarning

dpkt = pytest.importorskip("dpkt", reason="dpkt is not installed (requirements.lock has it)")

pytestmark = pytest.mark.native
_core = pytest.importorskip("multiconn._core", reason="multiconn._core is not built",
                            exc_type=ImportError)

SCENARIO = """
[run]
duration = "10 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "20 ms"
queue = "60 packets"
[link.forward]
loss = "1 %"

[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
size = "1 MB"

[[flow]]
name = "voice"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "200 kbit/s"
packet_size = "200 B"
stop = "1 s"
"""

SERVER = "198.18.1.1"  # nodes sorted by name: client 198.18.0.1, server 198.18.1.1


def read(data: bytes) -> list[tuple[float, int, dpkt.ip.IP]]:
    """Every packet of a pcapng file: time, original length (the IP total length) and its
    IPv4 header with the TCP or UDP header inside."""
    import io
    import socket

    reader = dpkt.pcapng.Reader(io.BytesIO(data))
    assert reader.datalink() == 228  # LINKTYPE_IPV4
    packets = []
    for ts, buf in reader:
        ip = dpkt.ip.IP(buf)
        ip.src_text = socket.inet_ntoa(ip.src)
        packets.append((float(ts), ip.len, ip))
    return packets


def flow(summary: dict, name: str) -> dict:
    return next(f for f in summary["flows"] if f["name"] == name)


def test_the_cli_writes_captures_whose_numbers_match_the_summary(cli, tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    done = cli("run", scenario, "--out", out, "--seed", "3", "--pcap", "--quiet")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (out / "pcap").iterdir()) == [
        "bulk_client.pcapng", "bulk_server.pcapng", "voice_client.pcapng", "voice_server.pcapng"]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    bulk = flow(summary, "bulk")

    server = read((out / "pcap" / "bulk_server.pcapng").read_bytes())
    sent = [(t, n, ip) for t, n, ip in server if ip.src_text == SERVER]
    assert all(isinstance(ip.data, dpkt.tcp.TCP) for _, _, ip in server)
    # Every byte the server put on the wire, as the summary counts it.
    assert sum(n for _, n, _ in sent) == bulk["bytes_sent"]
    # Retransmissions: data segments below the highest sequence number sent so far.
    highest, retransmitted, data_segments = 0, 0, 0
    for _, n, ip in sent:
        tcp = ip.data
        payload = n - 20 - 4 * tcp.off
        if payload > 0:
            data_segments += 1
            retransmitted += tcp.seq < highest
            highest = max(highest, tcp.seq + payload)
    assert bulk["retransmissions"] > 0
    assert retransmitted == bulk["retransmissions"]
    # The client's highest cumulative ACK: ISN 0, the SYN, the application's bytes and TLS's,
    # but for the last segment when its ACK still waited for the delayed-ACK timer as the
    # download completed and the run stopped.
    client = read((out / "pcap" / "bulk_client.pcapng").read_bytes())
    acks = [ip.data.ack for _, _, ip in client if ip.src_text != SERVER]
    last_start = max(ip.data.seq for _, n, ip in sent if n - 20 - 4 * ip.data.off > 0)
    assert max(acks) in (highest, last_start)
    assert 1 + bulk["bytes_delivered"] <= max(acks) < 1 + bulk["bytes_delivered"] + 10_000
    # What reached the client: every data-direction packet the network did not lose.
    arrived = sum(1 for _, _, ip in client if ip.src_text == SERVER)
    assert arrived + sum(bulk["drops_data"].values()) == len(sent)
    # Timestamps run forward, in seconds of the run.
    times = [t for t, _, _ in server]
    assert times == sorted(times) and 0 <= times[0] < times[-1] <= summary["sim_time_s"]

    voice = read((out / "pcap" / "voice_server.pcapng").read_bytes())
    assert {type(ip.data) for _, _, ip in voice} == {dpkt.udp.UDP}
    assert {n for _, n, _ in voice} == {200}
    assert len(voice) * 200 == flow(summary, "voice")["bytes_sent"] + 28 * len(voice)


def test_captures_change_no_result_and_repeat(tmp_path: Path) -> None:
    plain = multiconn.run(SCENARIO, seed=3)
    one = multiconn.run(SCENARIO, seed=3, pcap=True)
    two = multiconn.run(SCENARIO, seed=3, pcap=True)
    assert plain.pcap == {}
    drop = lambda s: {k: v for k, v in s.items() if k != "wall_time_s"}  # noqa: E731
    assert drop(plain.summary) == drop(one.summary)
    assert one.pcap == two.pcap and len(one.pcap) == 4
    written = one.write(tmp_path)
    assert (tmp_path / "pcap" / "bulk_server.pcapng").read_bytes() == one.pcap["bulk_server.pcapng"]
    assert tmp_path / "pcap" / "bulk_server.pcapng" in written


def test_the_filter_chooses_flows() -> None:
    result = multiconn.run(SCENARIO, seed=3, pcap=["voice"])
    assert sorted(result.pcap) == ["voice_client.pcapng", "voice_server.pcapng"]
    result = multiconn.run(SCENARIO, seed=3, pcap="flow:bulk, link:bottleneck")
    assert sorted(result.pcap) == ["bulk_client.pcapng", "bulk_server.pcapng"]
    with pytest.raises(multiconn.ScenarioError, match="neither a flow nor a link"):
        multiconn.run(SCENARIO, pcap=["nope"])


def test_the_size_limit_stops_a_file_and_warns(cli, tmp_path: Path) -> None:
    with pytest.warns(PcapLimitWarning) as caught:
        result = multiconn.run(SCENARIO, seed=3, pcap=["bulk"], pcap_max_mb=0.02)
    assert sorted(str(w.message).split(":")[0] for w in caught) == [
        "pcap/bulk_client.pcapng", "pcap/bulk_server.pcapng"]
    assert len(result.pcap["bulk_server.pcapng"]) <= 20_000
    assert any(w.startswith("pcap/bulk_server.pcapng") for w in result.pcap_warnings)
    assert len(read(result.pcap["bulk_server.pcapng"])) > 0
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    done = cli("run", scenario, "--out", tmp_path / "out", "--pcap-filter", "bulk",
               "--pcap-max-mb", "0.02", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "warning: pcap/bulk_server.pcapng: reached run.pcap_max_mb = 0.02" in done.stderr
    assert sorted(p.name for p in (tmp_path / "out" / "pcap").iterdir()) == [
        "bulk_client.pcapng", "bulk_server.pcapng"]
