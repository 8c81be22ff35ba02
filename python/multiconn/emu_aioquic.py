"""A bulk download or upload over aioquic, for the emulator's `aioquic` stack (docs/emulator.md).

    python -m multiconn.emu_aioquic server --host ADDR --port P --cert C --key K [--cc reno|cubic]
        [--qlog-dir DIR]
    python -m multiconn.emu_aioquic client --host ADDR --port P --size BYTES --report FILE
        [--cc reno|cubic] [--upload] [--rcvbuf BYTES]

A download: the client opens one bidirectional stream and sends ``GET <size>``; the server
answers with that many bytes and closes the stream. An upload (``--upload``): the client sends
``PUT <size>`` and a newline, then that many bytes, and closes its side; the server reads them
and answers with a bare FIN once it has them all (an HTTP PUT with no body). The client writes
``{"bytes", "seconds", "handshake_s"}`` (payload moved, from the request to the last byte
received or the server's FIN, and the handshake's length) to its report. aioquic's own defaults
stay as they are (flow-control windows, 1200-byte datagrams, initial RTT): they are what the
simulator's ``aioquic`` profile models. ``--rcvbuf`` asks for that receive buffer on the
client's socket (SO_RCVBUFFORCE as root, else SO_RCVBUF; the kernel grants twice it), as an
application does after raising ``net.core.rmem_max``, which a network namespace cannot: the
scenario's ``receiver.udp_rcvbuf`` with ``rmem_max`` at least as large.

The sending side feeds its stream as its data is acknowledged rather than queueing the whole
body (aioquic keeps every unacknowledged byte in the stream's send buffer), so an unlimited
transfer holds at most ``_AHEAD`` bytes in memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import ssl
import time
from pathlib import Path

from aioquic.asyncio import QuicConnectionProtocol, connect, serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import HandshakeCompleted, StreamDataReceived
from aioquic.quic.logger import QLOG_VERSION, QuicFileLogger

ALPN = ["multiconn-bulk"]
_CHUNK = 64 * 1024
_AHEAD = 4 * 1024 * 1024
_TOP_UP_S = 0.002


def _top_up(quic, remaining: dict[int, int]) -> None:
    """Queues more of each stream's body in `remaining` (stream id → bytes left to queue) while
    its send buffer holds less than ``_AHEAD`` unacknowledged bytes, finishing the stream with
    its last byte."""
    for sid, left in list(remaining.items()):
        sender = quic._streams[sid].sender
        while left > 0 and sender._buffer_stop - sender._buffer_start < _AHEAD:
            n = min(_CHUNK, left)
            left -= n
            quic.send_stream_data(sid, bytes(n), end_stream=left == 0)
        if left == 0:
            del remaining[sid]
        else:
            remaining[sid] = left


class _Server(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._remaining: dict[int, int] = {}
        self._request: dict[int, bytes] = {}
        # Uploads under way: stream id → bytes still expected.
        self._expected: dict[int, int] = {}
        self._feeder: asyncio.Task | None = None

    def quic_event_received(self, event) -> None:
        if not isinstance(event, StreamDataReceived):
            return
        sid = event.stream_id
        if sid in self._expected:
            self._expected[sid] -= len(event.data)
        else:
            self._request[sid] = self._request.get(sid, b"") + event.data
            head, newline, body = self._request[sid].partition(b"\n")
            words = head.split()
            if newline and len(words) == 2 and words[0] == b"PUT" and words[1].isdigit():
                del self._request[sid]
                self._expected[sid] = int(words[1]) - len(body)
            elif not event.end_stream:
                return
        if sid in self._expected:
            if event.end_stream:
                # The whole upload arrived: a bare FIN answers it.
                del self._expected[sid]
                self._quic.send_stream_data(sid, b"", end_stream=True)
                self.transmit()
            return
        words = self._request.pop(sid).split()
        size = int(words[1]) if len(words) == 2 and words[0] == b"GET" and words[1].isdigit() else 0
        self._remaining[sid] = size
        self._top_up()
        if self._feeder is None:
            self._feeder = asyncio.ensure_future(self._feed())

    def _top_up(self) -> None:
        _top_up(self._quic, self._remaining)
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


class _QlogFiles(QuicFileLogger):
    """aioquic's one-file-per-trace logger, writing each file in one piece (the C encoder,
    one write) so that a large trace is on disk well within the emulator's grace period."""

    def end_trace(self, trace) -> None:
        trace_dict = trace.to_dict()
        text = json.dumps({"qlog_format": "JSON", "qlog_version": QLOG_VERSION, "traces": [trace_dict]})
        Path(self.path, trace_dict["common_fields"]["ODCID"] + ".qlog").write_text(text)
        self._traces.remove(trace)

    def end_open_traces(self) -> None:
        """Writes the traces of connections still open (still draining, or never closed)."""
        for trace in list(self._traces):
            self.end_trace(trace)


async def _run_server(args) -> None:
    config = QuicConfiguration(is_client=False, alpn_protocols=ALPN, congestion_control_algorithm=args.cc)
    config.load_cert_chain(args.cert, args.key)
    logger = _QlogFiles(args.qlog_dir) if args.qlog_dir else None
    config.quic_logger = logger
    # The emulator stops its programs with SIGTERM (then, 2 s later, SIGKILL). Handled by the
    # event loop, the signal waits for a trace being written to finish, and the traces of
    # connections still open are written before the server exits: no qlog is cut short.
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await serve(args.host, args.port, configuration=config, create_protocol=_Server)
    await stop.wait()
    if logger is not None:
        logger.end_open_traces()


async def _run_client(args) -> None:
    config = QuicConfiguration(is_client=True, alpn_protocols=ALPN, congestion_control_algorithm=args.cc,
                               verify_mode=ssl.CERT_NONE)
    started = time.monotonic()
    async with connect(args.host, args.port, configuration=config, create_protocol=_Client) as client:
        handshake = (client.handshake_at or time.monotonic()) - started
        if args.rcvbuf:
            set_receive_buffer(client._transport.get_extra_info("socket"), args.rcvbuf)
        stream = client._quic.get_next_available_stream_id()
        asked = time.monotonic()
        if args.upload:
            client._quic.send_stream_data(stream, f"PUT {args.size}\n".encode())
            remaining = {stream: args.size}
            _top_up(client._quic, remaining)
            client.transmit()
            while remaining and not client.done.done():
                await asyncio.sleep(_TOP_UP_S)
                _top_up(client._quic, remaining)
                client.transmit()
            finished = await client.done
            moved = args.size
        else:
            client._quic.send_stream_data(stream, f"GET {args.size}".encode(), end_stream=True)
            client.transmit()
            finished = await client.done
            moved = client.received
        report = {"bytes": moved, "seconds": finished - asked, "handshake_s": handshake}
    Path(args.report).write_text(json.dumps(report) + "\n")


def set_receive_buffer(sock, size: int) -> int:
    """Asks for a `size`-byte receive buffer on `sock` (SO_RCVBUFFORCE, which needs
    CAP_NET_ADMIN and ignores net.core.rmem_max; else SO_RCVBUF, capped by it) and returns what
    the kernel granted (twice the request when it is not capped)."""
    force = getattr(socket, "SO_RCVBUFFORCE", 33)
    try:
        sock.setsockopt(socket.SOL_SOCKET, force, size)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)


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
    parser.add_argument("--upload", action="store_true", help="the client sends --size bytes (default: it asks for them)")
    parser.add_argument("--rcvbuf", type=int, default=0,
                        help="the client's socket asks for this receive buffer in bytes (default: the kernel's)")
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
