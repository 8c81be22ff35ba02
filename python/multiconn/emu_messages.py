"""Timed messages over aioquic, for the emulator's `command` stack: the V2X traffic of seed 004
(periodic priority messages and background data, docs/applications.md) between two real
aioquic 1.7.2 endpoints, each message's send and receive time logged so that its one-way delay
can be computed as the simulator's message table gives it (docs/messages-and-owd.md).

    python -m multiconn.emu_messages send --host ADDR --port P --cert C --key K --log FILE
        [--cc reno|cubic] [--start S] [--duration S] [--priority-size B] [--interval S]
        [--background-size B] [--background-rate BIT/S] [--round-robin] [--qlog-dir DIR]
    python -m multiconn.emu_messages receive --host ADDR --port P --log FILE [--cc reno|cubic]
        [--priority-size B] [--background-size B] [--until S]

The sender is the connection's server, as a message flow's `from` node is by default: once
the handshake is complete it opens two unidirectional streams, the first for the priority
messages and the second for the background, and `--start` seconds later writes a priority
message of `--priority-size` bytes every `--interval` and a background message of
`--background-size` bytes every size × 8 / `--background-rate`, for `--duration` (messages
k = 0, 1, ... at start + k × interval while k × interval < duration), then finishes both
streams. Messages due at the same instant (every priority message has a background one beside
it) are all handed over before aioquic sends, the priority one first. Each message is logged,
one JSON object a line, as it is handed to aioquic:
``{"kind", "stream", "msg_id", "size", "sent_s"}``. aioquic has no stream priorities; it
serves its streams round-robin, a packet each. The simulated sender packs priority streams
first (seed 004 §6.3), and so does this one: its connection keeps the priority stream at the
head of aioquic's service order (`--round-robin` leaves aioquic's own order). Nothing else of
aioquic is changed: its loss recovery, congestion control, flow-control windows and 1200-byte
datagrams stay as they are.

The receiver is the client: it connects, counts each stream's bytes and logs message k of a
stream when the application has its bytes up to (k + 1) × the stream's message size:
``{"stream", "msg_id", "received_s"}``. It exits once both streams are finished, or after
`--until` seconds. The first server-initiated unidirectional stream (id 3) is the priority
stream, the next (id 7) the background.

Times are `time.monotonic()`, CLOCK_MONOTONIC, which the emulator's network namespaces share
(they have no time namespace of their own): a message's OWD is its receive time less its send
time. `message_table` joins the two logs into the table `multiconn.messages` reads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import signal
import ssl
import time
from pathlib import Path
from typing import IO, Iterable

from aioquic.asyncio import QuicConnectionProtocol, connect, serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import HandshakeCompleted, StreamDataReceived

from .emu_aioquic import _QlogFiles

ALPN = ["multiconn-messages"]
PRIORITY_STREAM = 3
BACKGROUND_STREAM = 7


class _PriorityFirst(QuicConnection):
    """A connection whose stream service order keeps the streams in `_priority_ids` first
    (in their order), the others after them in aioquic's own round-robin order. aioquic
    rebuilds `_streams_queue` after every packet; this sorts it then."""

    _priority_ids: tuple[int, ...] = ()

    @property
    def _streams_queue(self):  # type: ignore[override]
        return self.__dict__["_streams_queue"]

    @_streams_queue.setter
    def _streams_queue(self, streams) -> None:
        first = self._priority_ids
        self.__dict__["_streams_queue"] = sorted(
            streams, key=lambda s: first.index(s.stream_id) if s.stream_id in first else len(first))


def message_times(start: float, duration: float, period: float) -> list[float]:
    """The send times of a periodic source: start + k × period while k × period < duration
    (600 messages for 60 s every 100 ms)."""
    count = math.ceil(duration / period - 1e-9)
    return [start + k * period for k in range(count)]


def schedule(start: float, sources: list[tuple[float, float]]) -> list[tuple[float, list[tuple[int, int, bool]]]]:
    """When each periodic source (duration, period), in packing order, writes: a list of
    (time, [(source, message number, last of its source)]) in time order, the messages due at
    the same instant (to the microsecond) together and in the sources' order. The sender writes
    them all before it sends, as the simulated application does, so that a priority message
    due with a background one is packed first rather than queued behind the other's packets."""
    due: dict[int, tuple[float, list[tuple[int, int, bool]]]] = {}
    for i, (duration, period) in enumerate(sources):
        times = message_times(start, duration, period)
        for k, at in enumerate(times):
            key = round((at - start) * 1e6)
            due.setdefault(key, (at, []))[1].append((i, k, k == len(times) - 1))
    return [due[key] for key in sorted(due)]


class _Sender(QuicConnectionProtocol):
    args: argparse.Namespace
    log: IO[str]

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        if not self.args.round_robin:
            self._quic.__class__ = _PriorityFirst
        self._started = False

    def quic_event_received(self, event) -> None:
        if isinstance(event, HandshakeCompleted) and not self._started:
            self._started = True
            quic = self._quic
            priority = quic.get_next_available_stream_id(is_unidirectional=True)
            quic.send_stream_data(priority, b"")
            background = quic.get_next_available_stream_id(is_unidirectional=True)
            quic.send_stream_data(background, b"")
            if isinstance(quic, _PriorityFirst):
                quic._priority_ids = (priority,)
            loop = asyncio.get_running_loop()
            a = self.args
            self._sources = [("priority", priority, a.priority_size), ("background", background, a.background_size)]
            periods = [(a.duration, a.interval), (a.duration, a.background_size * 8 / a.background_rate)]
            for at, messages in schedule(loop.time() + a.start, periods):
                loop.call_at(at, self._write, messages)

    def _write(self, messages: list[tuple[int, int, bool]]) -> None:
        for i, k, last in messages:
            kind, sid, size = self._sources[i]
            self.log.write(json.dumps({"kind": kind, "stream": sid, "msg_id": k, "size": size,
                                       "sent_s": time.monotonic()}) + "\n")
            self._quic.send_stream_data(sid, bytes(size), end_stream=last)
        self.transmit()


class _Receiver(QuicConnectionProtocol):
    args: argparse.Namespace
    log: IO[str]

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.counted: dict[int, int] = {}
        self.next_id: dict[int, int] = {}
        self.finished: set[int] = set()
        self.done = asyncio.get_running_loop().create_future()

    def quic_event_received(self, event) -> None:
        if not isinstance(event, StreamDataReceived):
            return
        now = time.monotonic()
        sid = event.stream_id
        size = {PRIORITY_STREAM: self.args.priority_size, BACKGROUND_STREAM: self.args.background_size}.get(sid)
        total = self.counted[sid] = self.counted.get(sid, 0) + len(event.data)
        if size:
            k = self.next_id.get(sid, 0)
            while total >= (k + 1) * size:
                self.log.write(json.dumps({"stream": sid, "msg_id": k, "received_s": now}) + "\n")
                k += 1
            self.next_id[sid] = k
        if event.end_stream:
            self.finished.add(sid)
            if {PRIORITY_STREAM, BACKGROUND_STREAM} <= self.finished and not self.done.done():
                self.done.set_result(now)


async def _send(args) -> None:
    config = QuicConfiguration(is_client=False, alpn_protocols=ALPN, congestion_control_algorithm=args.cc)
    config.load_cert_chain(args.cert, args.key)
    logger = _QlogFiles(args.qlog_dir) if args.qlog_dir else None
    config.quic_logger = logger
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    with open(args.log, "w", buffering=1) as log:
        protocol = type("Sender", (_Sender,), {"args": args, "log": log})
        await serve(args.host, args.port, configuration=config, create_protocol=protocol)
        await stop.wait()
    if logger is not None:
        logger.end_open_traces()


async def _receive(args) -> None:
    config = QuicConfiguration(is_client=True, alpn_protocols=ALPN, congestion_control_algorithm=args.cc,
                               verify_mode=ssl.CERT_NONE)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    with open(args.log, "w", buffering=1) as log:
        protocol = type("Receiver", (_Receiver,), {"args": args, "log": log})
        async with connect(args.host, args.port, configuration=config, create_protocol=protocol) as client:
            waits = [asyncio.ensure_future(client.done), asyncio.ensure_future(stop.wait())]
            await asyncio.wait(waits, timeout=args.until, return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                w.cancel()


def message_table(sent_lines: Iterable[str], received_lines: Iterable[str]):
    """The message table of `multiconn.messages` (stream, kind, msg_id, size, sent_s,
    received_s; NaN for a message never received) from the sender's and the receiver's logs,
    one JSON object a line; times relative to the first message sent."""
    import pandas as pd

    sent = [json.loads(line) for line in sent_lines if line.strip()]
    got = {}
    for line in received_lines:
        if line.strip():
            r = json.loads(line)
            got[(r["stream"], r["msg_id"])] = r["received_s"]
    if not sent:
        raise ValueError("the sender logged no message")
    zero = min(m["sent_s"] for m in sent)
    rows = [{"stream": m["stream"], "kind": m["kind"], "msg_id": m["msg_id"], "size": m["size"],
             "sent_s": m["sent_s"] - zero,
             "received_s": got[(m["stream"], m["msg_id"])] - zero if (m["stream"], m["msg_id"]) in got else math.nan}
            for m in sent]
    unknown = set(got) - {(m["stream"], m["msg_id"]) for m in sent}
    if unknown:
        raise ValueError(f"received messages the sender never logged: {sorted(unknown)[:5]}")
    return pd.DataFrame(rows)


def read_table(sent: str | Path, received: str | Path):
    """`message_table` of two log files (a missing receiver log: nothing received)."""
    received_lines = Path(received).read_text().splitlines() if Path(received).exists() else []
    return message_table(Path(sent).read_text().splitlines(), received_lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m multiconn.emu_messages", description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=["send", "receive"])
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", required=True, help="where to write one JSON line per message")
    parser.add_argument("--cc", choices=["reno", "cubic"], default="reno")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--qlog-dir")
    parser.add_argument("--start", type=float, default=1.0, help="seconds from the handshake to the first message")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of messages")
    parser.add_argument("--priority-size", type=int, default=1200)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between priority messages")
    parser.add_argument("--background-size", type=int, default=12500)
    parser.add_argument("--background-rate", type=float, default=2e6, help="bit/s of background messages")
    parser.add_argument("--round-robin", action="store_true",
                        help="leave aioquic's round-robin stream order (default: the priority stream first)")
    parser.add_argument("--until", type=float, default=None, help="the receiver gives up after this many seconds")
    args = parser.parse_args(argv)
    if args.role == "send":
        if not (args.cert and args.key):
            parser.error("the sender needs --cert and --key")
        asyncio.run(_send(args))
    else:
        asyncio.run(_receive(args))


if __name__ == "__main__":
    main()
