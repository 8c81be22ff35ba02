"""The CPU time a real QUIC client spends per datagram it receives: the `read_cost` the
simulator's QUIC profiles carry (docs/profiles.md).

    sudo python bench/read_cost.py [--stack aioquic|ngtcp2|both] [--size BYTES] [--runs N]

A download over the loopback interface of a network namespace of its own (`unshare -n`: the
machine's own interfaces are not touched), the server and the client on the two cores; the
client's user + system CPU time (from `wait4`) divided by the datagrams it received. The
datagram count is the payload over what one datagram carries (aioquic: 1200-byte datagrams,
ngtcp2: 1452-byte ones, less about 40 bytes of QUIC headers, frame header and AEAD tag), so
it is good to a few per cent. The client's own work per datagram is counted whole: reading
it, decrypting it, acknowledging, and handing the data to the application. Needs root,
`openssl`, aioquic (the virtualenv) and Debian's ngtcp2-client/ngtcp2-server.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAYLOAD_PER_DATAGRAM = {"aioquic": 1200 - 40, "ngtcp2": 1452 - 40}


def certificate(folder: Path) -> None:
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"),
         "-subj", "/CN=server.test", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True)


def commands(stack: str, folder: Path, size: int) -> tuple[list[str], list[str]]:
    if stack == "aioquic":
        run = [sys.executable, "-m", "multiconn.emu_aioquic"]
        server = [*run, "server", "--host", "127.0.0.1", "--port", "4433",
                  "--cert", str(folder / "cert.pem"), "--key", str(folder / "key.pem")]
        client = [*run, "client", "--host", "127.0.0.1", "--port", "4433", "--size", str(size),
                  "--report", str(folder / "client.json")]
        return server, client
    # The example server answers GET /N with N bytes when N is within --max-dyn-length.
    server = ["gtlsserver", "127.0.0.1", "4433", str(folder / "key.pem"), str(folder / "cert.pem"), "-q",
              f"--max-dyn-length={size}"]
    client = ["gtlsclient", "127.0.0.1", "4433", f"https://127.0.0.1:4433/{size}", "-q",
              "--exit-on-all-streams-close"]
    return server, client


def inside(stack: str, size: int) -> float:
    """Runs one download in this (fresh) namespace; returns the client's CPU µs per datagram."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        certificate(folder)
        server_cmd, client_cmd = commands(stack, folder, size)
        server = subprocess.Popen(server_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1.0)
            client = subprocess.Popen(client_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            started = time.monotonic()
            _, status, usage = os.wait4(client.pid, 0)
            seconds = time.monotonic() - started
            if status != 0:
                raise SystemExit(f"read_cost: the {stack} client failed (status {status})")
            # A download of this size over loopback cannot take less than a tenth of a
            # second: a quicker exit means nothing was downloaded.
            if seconds < 0.1:
                raise SystemExit(f"read_cost: the {stack} client was done in {seconds:.3f} s: nothing downloaded?")
        finally:
            server.terminate()
            server.wait()
    datagrams = size / PAYLOAD_PER_DATAGRAM[stack]
    return (usage.ru_utime + usage.ru_stime) / datagrams * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", choices=["aioquic", "ngtcp2", "both"], default="both")
    parser.add_argument("--size", type=int, default=50_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inside:
        print(f"{inside(args.stack, args.size):.2f}")
        return 0
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("read_cost: needs root and unshare (a network namespace of its own)", file=sys.stderr)
        return 2
    stacks = ["aioquic", "ngtcp2"] if args.stack == "both" else [args.stack]
    for stack in stacks:
        costs = []
        for _ in range(args.runs):
            done = subprocess.run(
                ["unshare", "-n", sys.executable, __file__, "--inside", "--stack", stack,
                 "--size", str(args.size)], capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stderr.strip(), file=sys.stderr)
                return 1
            costs.append(float(done.stdout.strip()))
        print(f"{stack}: {statistics.median(costs):.1f} µs of client CPU per datagram received "
              f"(median of {args.runs}: {', '.join(f'{c:.1f}' for c in costs)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
