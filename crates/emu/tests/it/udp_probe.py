"""UDP probe for the emulator's tests: an echo/sequence server and a client.

server HOST PORT: answers each datagram it receives by echoing it (ping) or, for a datagram
"seq N", by sending N numbered datagrams back at once.
client ping HOST PORT COUNT OUT: COUNT echo round trips, writes {"rtts_ms": [...]} to OUT.
client seq HOST PORT N OUT: asks for N numbered datagrams, writes {"received", "out_of_order"}
(a datagram whose number is below the highest seen so far) to OUT.
"""
import json
import socket
import sys
import time


def server(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, int(port)))
    while True:
        data, peer = s.recvfrom(2048)
        if data.startswith(b"seq "):
            n = int(data.split()[1])
            for i in range(n):
                s.sendto(i.to_bytes(4, "big") + b"x" * 1000, peer)
                if i % 20 == 19:
                    time.sleep(0.002)
        else:
            s.sendto(data, peer)


def client(mode, host, port, count, out):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2.0)
    addr = (host, int(port))
    if mode == "ping":
        rtts = []
        for i in range(int(count)):
            t = time.monotonic()
            s.sendto(str(i).encode(), addr)
            try:
                s.recvfrom(2048)
            except socket.timeout:
                continue
            rtts.append((time.monotonic() - t) * 1e3)
            time.sleep(0.01)
        result = {"rtts_ms": rtts}
    else:
        s.sendto(f"seq {count}".encode(), addr)
        highest, received, ooo = -1, 0, 0
        try:
            while received < int(count):
                data, _ = s.recvfrom(2048)
                i = int.from_bytes(data[:4], "big")
                received += 1
                if i < highest:
                    ooo += 1
                highest = max(highest, i)
        except socket.timeout:
            pass
        result = {"received": received, "out_of_order": ooo}
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(*sys.argv[2:4])
    else:
        client(*sys.argv[2:7])
