"""A bulk download over aioquic, for the emulator's `aioquic` stack (docs/emulator.md).

    python -m multiconn.emu_aioquic server --host ADDR --port P --cert C --key K [--cc reno|cubic]
        [--qlog-dir DIR]
    python -m multiconn.emu_aioquic client --host ADDR --port P --size BYTES --report FILE
        [--cc reno|cubic]

The client opens one bidirectional stream and sends ``GET <size>``; the server answers with
that many bytes and closes the stream. The client writes ``{"bytes", "seconds",
"handshake_s"}`` (payload received, from the request to the last byte, and the handshake's
length) to its report. aioquic's own defaults stay as they are (flow-control windows,
1200-byte datagrams, initial RTT): they are what the simulator's ``aioquic`` profile models.

The server feeds the stream as its data is acknowledged rather than queueing the whole body
(aioquic keeps every unacknowledged byte in the stream's send buffer), so an unlimited
download holds at most ``_AHEAD`` bytes in memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import time
from pathlib import Path

from aioquic.asyncio import QuicConnectionProtocol, connect, serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import HandshakeCompleted, StreamDataReceived
from aioquic.quic.logger import QuicFileLogger

ALPN = ["multiconn-bulk"]
_CHUNK = 64 * 1024
_AHEAD = 4 * 1024 * 1024
_TOP_UP_S = 0.002


class _Server(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._remaining: dict[int, int] = {}
        self._request: dict[int, bytes] = {}
        self._feeder: asyncio.Task | None = None

    def quic_event_received(self, event) -> None:
        if isinstance(event, StreamDataReceived):
            self._request[event.stream_id] = self._request.get(event.stream_id, b"") + event.data
            if event.end_stream:
                words = self._request.pop(event.stream_id).split()
                size = int(words[1]) if len(words) == 2 and words[0] == b"GET" and words[1].isdigit() else 0
                self._remaining[event.stream_id] = size
                self._top_up()
                if self._feeder is None:
                    self._feeder = asyncio.ensure_future(self._feed())

    def _top_up(self) -> None:
        for sid, left in list(self._remaining.items()):
            sender = self._quic._streams[sid].sender
            while left > 0 and sender._buffer_stop - sender._buffer_start < _AHEAD:
                n = min(_CHUNK, left)
                left -= n
                self._quic.send_stream_data(sid, bytes(n), end_stream=left == 0)
            if left == 0:
                del self._remaining[sid]
            else:
                self._remaining[sid] = left
        self.transmit()

    async def _feed(self) -> None:
        while True:
            await asyncio.sleep(_TOP_UP_S)
            if self._remaining:
                self._top_up()


class _Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.received = 0
        self.done = asyncio.get_event_loop().create_future()
        self.handshake_at: float | None = None

    def quic_event_received(self, event) -> None:
        if isinstance(event, HandshakeCompleted):
            self.handshake_at = time.monotonic()
        elif isinstance(event, StreamDataReceived):
            self.received += len(event.data)
            if event.end_stream and not self.done.done():
                self.done.set_result(time.monotonic())


async def _run_server(args) -> None:
    config = QuicConfiguration(is_client=False, alpn_protocols=ALPN, congestion_control_algorithm=args.cc)
    config.load_cert_chain(args.cert, args.key)
    if args.qlog_dir:
        config.quic_logger = QuicFileLogger(args.qlog_dir)
    await serve(args.host, args.port, configuration=config, create_protocol=_Server)
    await asyncio.Future()


async def _run_client(args) -> None:
    config = QuicConfiguration(is_client=True, alpn_protocols=ALPN, congestion_control_algorithm=args.cc,
                               verify_mode=ssl.CERT_NONE)
    started = time.monotonic()
    async with connect(args.host, args.port, configuration=config, create_protocol=_Client) as client:
        handshake = (client.handshake_at or time.monotonic()) - started
        stream = client._quic.get_next_available_stream_id()
        asked = time.monotonic()
        client._quic.send_stream_data(stream, f"GET {args.size}".encode(), end_stream=True)
        client.transmit()
        finished = await client.done
        report = {"bytes": client.received, "seconds": finished - asked, "handshake_s": handshake}
    Path(args.report).write_text(json.dumps(report) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m multiconn.emu_aioquic", description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=["server", "client"])
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cc", choices=["reno", "cubic"], default="reno")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--qlog-dir")
    parser.add_argument("--size", type=int, default=0)
    parser.add_argument("--report")
    args = parser.parse_args(argv)
    if args.role == "server":
        if not (args.cert and args.key):
            parser.error("the server needs --cert and --key")
        asyncio.run(_run_server(args))
    else:
        if not args.report or args.size <= 0:
            parser.error("the client needs --size (positive) and --report")
        asyncio.run(_run_client(args))


if __name__ == "__main__":
    main()
