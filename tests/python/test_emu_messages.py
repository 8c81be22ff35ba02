"""The timed-message programs over aioquic (multiconn.emu_messages) that the fidelity table's
V2X rows run in the emulator, and the receive buffer option of multiconn.emu_aioquic: their
logs joined into a message table, the sources' send times, the priority-first stream order, a
short exchange over the loopback interface (no root), and the granted receive buffer."""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

aioquic = pytest.importorskip("aioquic")

from multiconn import emu_messages, messages  # noqa: E402
from multiconn.emu_aioquic import set_receive_buffer  # noqa: E402


def _lines(rows: list[dict]) -> list[str]:
    return [json.dumps(r) for r in rows]


def test_the_logs_join_into_a_message_table_with_owds_and_the_lost_as_nan() -> None:
    sent = _lines([
        {"kind": "priority", "stream": 3, "msg_id": 0, "size": 1200, "sent_s": 100.0},
        {"kind": "background", "stream": 7, "msg_id": 0, "size": 12500, "sent_s": 100.001},
        {"kind": "priority", "stream": 3, "msg_id": 1, "size": 1200, "sent_s": 100.1},
        {"kind": "priority", "stream": 3, "msg_id": 2, "size": 1200, "sent_s": 100.2},
    ])
    received = _lines([
        {"stream": 3, "msg_id": 0, "received_s": 100.051},
        {"stream": 7, "msg_id": 0, "received_s": 100.080},
        {"stream": 3, "msg_id": 1, "received_s": 100.35},
    ])
    table = emu_messages.message_table(sent, received)
    assert list(table.columns) == ["stream", "kind", "msg_id", "size", "sent_s", "received_s"]
    owd = messages.owd(table)
    assert owd.iloc[0] == pytest.approx(0.051)
    assert owd.iloc[1] == pytest.approx(0.079)
    assert owd.iloc[2] == pytest.approx(0.25)
    assert math.isinf(owd.iloc[3]) and math.isnan(table["received_s"].iloc[3])
    assert table["sent_s"].iloc[0] == 0.0  # times relative to the first message
    summary = messages.summarise(table, 0.1)["priority"]
    # One of three priority messages within 100 ms: the second took 250 ms, the third never came.
    assert summary["messages"] == 3 and summary["received"] == 2
    assert summary["reliability"] == pytest.approx(1 / 3)
    assert summary["owd_median_s"] == pytest.approx((0.051 + 0.25) / 2)


def test_a_receive_log_naming_a_message_never_sent_is_refused() -> None:
    sent = _lines([{"kind": "priority", "stream": 3, "msg_id": 0, "size": 1200, "sent_s": 1.0}])
    with pytest.raises(ValueError, match="never logged"):
        emu_messages.message_table(sent, _lines([{"stream": 3, "msg_id": 5, "received_s": 2.0}]))


def test_a_periodic_source_sends_what_the_simulated_one_does() -> None:
    # The simulator's v2x source, 60 s of one message every 100 ms, writes 600 messages.
    times = emu_messages.message_times(1.0, 60.0, 0.1)
    assert len(times) == 600
    assert times[0] == 1.0 and times[-1] == pytest.approx(60.9)
    # 2 Mbit/s of 12500-byte background messages: one every 50 ms, 1200 in 60 s.
    assert len(emu_messages.message_times(0.0, 60.0, 12500 * 8 / 2e6)) == 1200


def test_messages_due_together_are_written_together_the_priority_one_first() -> None:
    # Priority every 100 ms and background every 50 ms for 0.3 s: the priority messages share
    # their instants with every other background message.
    due = emu_messages.schedule(10.0, [(0.3, 0.1), (0.3, 0.05)])
    assert [round(at - 10.0, 3) for at, _ in due] == [0.0, 0.05, 0.1, 0.15, 0.2, 0.25]
    assert [m for _, m in due] == [[(0, 0, False), (1, 0, False)], [(1, 1, False)],
                                   [(0, 1, False), (1, 2, False)], [(1, 3, False)],
                                   [(0, 2, True), (1, 4, False)], [(1, 5, True)]]
    # 60 s of the V2X sources: 600 instants shared, 1200 in all.
    due = emu_messages.schedule(0.0, [(60.0, 0.1), (60.0, 12500 * 8 / 2e6)])
    assert len(due) == 1200 and sum(len(m) == 2 for _, m in due) == 600


def test_the_priority_stream_stays_first_in_aioquics_service_order() -> None:
    from aioquic.quic.configuration import QuicConfiguration
    from aioquic.quic.connection import QuicConnection

    quic = QuicConnection(configuration=QuicConfiguration(is_client=True))
    quic.__class__ = emu_messages._PriorityFirst
    quic._priority_ids = (3,)
    streams = [SimpleNamespace(stream_id=i) for i in (7, 3, 11)]
    # aioquic puts the streams that sent at the end after each packet; the priority one comes back first.
    quic._streams_queue = streams
    assert [s.stream_id for s in quic._streams_queue] == [3, 7, 11]
    quic._streams_queue = [streams[0], streams[2], streams[1]]
    assert [s.stream_id for s in quic._streams_queue] == [3, 7, 11]


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_messages_cross_the_loopback_interface_and_every_one_is_logged(tmp_path: Path) -> None:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem"),
                    "-subj", "/CN=server.test"], check=True, capture_output=True)
    port = str(_free_udp_port())
    env = dict(os.environ, PYTHONPATH=str(Path(emu_messages.__file__).parents[1]))
    program = [sys.executable, "-m", "multiconn.emu_messages"]
    sender = subprocess.Popen(program + ["send", "--host", "127.0.0.1", "--port", port, "--cert",
                                         str(tmp_path / "cert.pem"), "--key", str(tmp_path / "key.pem"),
                                         "--log", str(tmp_path / "sent.jsonl"), "--start", "0.2",
                                         "--duration", "0.5"], env=env)
    try:
        time.sleep(1.0)
        subprocess.run(program + ["receive", "--host", "127.0.0.1", "--port", port,
                                  "--log", str(tmp_path / "received.jsonl"), "--until", "20"],
                       env=env, check=True, timeout=30)
    finally:
        sender.terminate()
        sender.wait(timeout=10)
    table = emu_messages.read_table(tmp_path / "sent.jsonl", tmp_path / "received.jsonl")
    kinds = table.groupby("kind").size().to_dict()
    assert kinds == {"priority": 5, "background": 10}, kinds
    assert table["received_s"].notna().all()
    summary = messages.summarise(table, 0.1)
    assert summary["priority"]["reliability"] == 1.0
    assert summary["priority"]["bytes_received"] == 5 * 1200
    assert summary["background"]["bytes_received"] == 10 * 12500
    # Priority messages 100 ms apart, background 50 ms apart, from the first one on; each
    # priority message written just before the background one due with it.
    prio = table[table["kind"] == "priority"]["sent_s"].to_numpy()
    assert prio[-1] - prio[0] == pytest.approx(0.4, abs=0.02)
    background = table[table["kind"] == "background"]["sent_s"].to_numpy()
    assert all(0 <= background[2 * k] - prio[k] < 0.005 for k in range(5))


def test_the_client_gets_the_receive_buffer_it_asks_for() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        default = s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        granted = set_receive_buffer(s, 3_000_000)
    if os.geteuid() == 0:
        assert granted == 6_000_000  # SO_RCVBUFFORCE: twice the request, whatever rmem_max says
    else:
        rmem_max = int(Path("/proc/sys/net/core/rmem_max").read_text())
        assert granted == 2 * min(3_000_000, rmem_max)
    assert granted != default
