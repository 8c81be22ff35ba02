#!/usr/bin/env python3
"""Replays Linux CUBIC's HyStart (net/ipv4/tcp_cubic.c, 6.14 and later) over a capture of a TCP
sender, and prints where it leaves slow start and the rounds before.

    .venv/bin/python bench/hystart_replay.py CAPTURE [--rounds] [--before-6.14]

CAPTURE is a pcap (tcpdump -w, at the sender) or pcapng (`multiconn run --pcap`, the sender's
file); the connection that carried the most payload is replayed. Per ACK, the RTT sample is the
one `tcp_clean_rtx_queue` hands to `cubictcp_acked`: now less the send time of the newest
newly acknowledged segment that was never retransmitted (of the newest newly SACKed one when
the ACK SACKs), none when the cumulative part acknowledges a retransmission and nothing is
newly SACKed. The window is estimated as 10 segments plus every newly acknowledged segment
(slow start, cwnd-limited), so the exit window is in segments, as `TCPHystartDelayCwnd` and
`TCPHystartTrainCwnd` count it. `--before-6.14` starts rounds only once the window is 16
segments, as Linux did before "tcp_cubic: fix incorrect HyStart round start detection".
"""

from __future__ import annotations

import argparse
import collections
import struct

LOW_WINDOW = 16          # hystart_low_window
ACK_DELTA = 0.002        # hystart_ack_delta_us
ACK_TRAIN_CUSHION = 0.001  # hystart_ack_delay below 262 MB/s
MIN_SAMPLES = 8          # HYSTART_MIN_SAMPLES


def read_packets(path: str) -> list[tuple[float, bytes]]:
    """(time in seconds, IPv4 packet) of a pcap or pcapng file."""
    data = open(path, "rb").read()
    out = []
    if struct.unpack_from("<I", data, 0)[0] == 0x0A0D0D0A:  # pcapng
        off, links, res = 0, [], []
        while off + 12 <= len(data):
            btype, blen = struct.unpack_from("<II", data, off)
            body = data[off + 8: off + blen - 4]
            if btype == 1:
                links.append(struct.unpack_from("<H", body, 0)[0])
                r, o = 1e-6, 8
                while o + 4 <= len(body):
                    code, ln = struct.unpack_from("<HH", body, o)
                    if code == 0:
                        break
                    if code == 9:
                        v = body[o + 4]
                        r = 2.0 ** -(v & 0x7F) if v & 0x80 else 10.0 ** -(v & 0x7F)
                    o += 4 + (ln + 3) // 4 * 4
                res.append(r)
            elif btype == 6:
                iface, hi, lo, caplen = struct.unpack_from("<IIII", body, 0)
                pkt = body[20:20 + caplen]
                out.append((((hi << 32) | lo) * res[iface], pkt[14:] if links[iface] == 1 else pkt))
            off += blen
        return out
    magic = struct.unpack_from("<I", data, 0)[0]
    nano = magic == 0xA1B23C4D
    link = struct.unpack_from("<I", data, 20)[0]
    off = 24
    while off + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack_from("<IIII", data, off)
        pkt = data[off + 16: off + 16 + caplen]
        off += 16 + caplen
        pkt = pkt[14:] if link == 1 else pkt[16:] if link == 113 else pkt
        out.append((sec + frac * (1e-9 if nano else 1e-6), pkt))
    return out


def parse_tcp(ip: bytes) -> dict | None:
    if len(ip) < 40 or ip[0] >> 4 != 4 or ip[9] != 6:
        return None
    ihl = (ip[0] & 15) * 4
    total = struct.unpack_from(">H", ip, 2)[0]
    t = ip[ihl:]
    sport, dport, seq, ack, off_flags, flags = struct.unpack_from(">HHIIBB", t, 0)
    doff = (off_flags >> 4) * 4
    opts, sack, i = t[20:doff], [], 0
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        if kind == 5:
            sack += [struct.unpack_from(">II", opts, j) for j in range(i + 2, i + opts[i + 1] - 7, 8)]
        i += opts[i + 1]
    return {"src": (ip[12:16], sport), "dst": (ip[16:20], dport), "seq": seq, "ack": ack, "flags": flags,
            "len": total - ihl - doff, "sack": sack}


def replay(packets: list[tuple[float, bytes]], before_6_14: bool = False) -> tuple[tuple | None, list[dict]]:
    segs = [(t, s) for t, b in packets if (s := parse_tcp(b))]
    payload = collections.Counter()
    for _, s in segs:
        payload[(s["src"], s["dst"])] += s["len"]
    sender, receiver = payload.most_common(1)[0][0]
    isn = None
    for _, s in segs:
        if s["src"] == sender and s["dst"] == receiver and s["flags"] & 2:
            isn = s["seq"]
    if isn is None:
        isn = next(s["seq"] for _, s in segs if s["src"] == sender and s["len"] > 0) - 1

    def rel(x: int) -> int:
        return (x - isn) % 2**32

    sent: dict[int, list] = {}  # start -> [end, send time, retransmitted, sacked]
    snd_una = snd_nxt = 1
    cwnd, delay_min, found = 10, None, None
    end_seq, round_start, last_ack, curr_rtt, sample_cnt = 1, None, None, None, 0
    rounds: list[dict] = []
    t0 = segs[0][0]
    for t, s in segs:
        if s["src"] == sender and s["dst"] == receiver:
            if s["len"] > 0:
                a = rel(s["seq"])
                if a in sent:
                    sent[a][1], sent[a][2] = t, True
                else:
                    sent[a] = [a + s["len"], t, False, False]
                snd_nxt = max(snd_nxt, a + s["len"])
                if round_start is None:
                    round_start = last_ack = t  # cubictcp_init
            continue
        if s["src"] != receiver or s["flags"] & 2 or not s["flags"] & 16:
            continue
        ack = rel(s["ack"])
        newly, last_ackt, retrans_acked, last_sackt = 0, None, False, None
        if ack > snd_una:
            for a in sorted(x for x in sent if snd_una <= x < ack):
                end, ts, retx, sacked = sent[a]
                if end > ack:
                    break
                if retx:
                    retrans_acked = True
                elif not sacked:
                    last_ackt = ts
                if not sacked:
                    newly += 1
                del sent[a]
            snd_una = ack
        for lo, hi in s["sack"]:
            lo, hi = rel(lo), rel(hi)
            if lo < snd_una:
                continue  # D-SACK
            for a in sorted(x for x in sent if lo <= x < hi):
                if sent[a][0] <= hi and not sent[a][3]:
                    sent[a][3] = True
                    newly += 1
                    if not sent[a][2]:
                        last_sackt = sent[a][1]
        rtt = None
        if last_ackt is not None and not retrans_acked:
            rtt = t - last_ackt
        if last_sackt is not None:
            rtt = t - last_sackt
        if rtt is not None:
            rtt = max(rtt, 1e-6)
            delay_min = rtt if delay_min is None else min(delay_min, rtt)
            # hystart_update: the round resets first (6.14), then the window is tested.
            if found is None and snd_una > end_seq and (not before_6_14 or cwnd >= LOW_WINDOW):
                round_start = last_ack = t
                end_seq, curr_rtt, sample_cnt = snd_nxt, None, 0
                rounds.append({"t": t - t0, "cwnd": cwnd, "delay_min": delay_min, "samples": []})
            if found is None and cwnd >= LOW_WINDOW:
                if t - last_ack <= ACK_DELTA:
                    last_ack = t
                    if t - round_start > (delay_min + ACK_TRAIN_CUSHION) / 2:
                        found = ("ack train", t - t0, cwnd)
                curr_rtt = rtt if curr_rtt is None else min(curr_rtt, rtt)
                if rounds:
                    rounds[-1]["samples"].append(rtt)
                if sample_cnt < MIN_SAMPLES:
                    sample_cnt += 1
                elif curr_rtt > delay_min + min(max(delay_min / 8, 0.004), 0.016):
                    found = found or ("delay", t - t0, cwnd, curr_rtt, delay_min)
        if found is None:
            cwnd += newly
    return found, rounds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture")
    ap.add_argument("--rounds", action="store_true", help="print every round: start, window, minimum, samples")
    ap.add_argument("--before-6.14", dest="before", action="store_true",
                    help="start rounds only from 16 segments on, as Linux before 6.14")
    args = ap.parse_args()
    found, rounds = replay(read_packets(args.capture), args.before)
    if found is None:
        print("no HyStart exit")
    elif found[0] == "delay":
        _, t, cwnd, curr, dmin = found
        print(f"delay exit at {t:.3f} s, cwnd {cwnd} segments: round minimum {curr * 1e3:.1f} ms, "
              f"delay_min {dmin * 1e3:.1f} ms")
    else:
        print(f"ACK-train exit at {found[1]:.3f} s, cwnd {found[2]} segments")
    if args.rounds:
        for r in rounds:
            sm = r["samples"]
            print(f"  round at {r['t']:7.3f} s, cwnd {r['cwnd']:4d}, delay_min {r['delay_min'] * 1e3:6.1f} ms, "
                  f"{len(sm):3d} samples, minimum {min(sm) * 1e3 if sm else 0:6.1f} ms")


if __name__ == "__main__":
    main()
