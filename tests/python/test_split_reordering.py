"""t-Reordering against a leg's drops (issue 39, item 3): each PDU a leg drops leaves a gap
that the receiving PDCP entity waits out for t-Reordering with everything behind it held. With
the 200 ms default that stalls a TCP download behind the split, and the run warns."""

from __future__ import annotations

from pathlib import Path

import multiconn
from conftest import EXAMPLES
from multiconn.result import RunResult

LONE_NR = """
name = "lone_nr"

[run]
duration = "10 s"
seed = 1

[[link]]
name = "lte"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "20 ms"
queue = "100 packets"

[[link]]
name = "nr"
between = ["server", "client"]
rate = "50 Mbit/s"
delay = "10 ms"
queue = "100 packets"

[[split]]
name = "dc"
legs = ["lte", "nr"]
uplink = "nr"
policy = { model = "ratio", share = 0.0 }

[[flow]]
name = "f"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
route = ["dc"]
profile = "linux-tcp"
cc = "cubic"
"""
"""A TCP CUBIC download whose packets all take the split's 50 Mbit/s NR leg, with tail drops
in its 100-packet queue (the field report's "lone NR leg behind the split")."""


def _run(tmp_path: Path, **overrides: str) -> RunResult:
    path = tmp_path / "lone_nr.toml"
    path.write_text(LONE_NR)
    return multiconn.run(path, overrides=overrides)


def _reordering(result: RunResult) -> list[str]:
    return [w for w in result.summary.get("warnings", []) if "t-Reordering" in w]


def test_t_reordering_expiries_from_a_legs_drops_warn(tmp_path: Path, cli) -> None:
    slow = _run(tmp_path)
    flow = slow.summary["flows"][0]
    expiries = flow["pdcp"]["dc"]["timer_expiries"]
    active = 10.0
    # Expiries × t-Reordering above a tenth of the run: the warning's threshold.
    assert expiries * 0.2 / active >= 0.1, expiries
    [line] = _reordering(slow)
    assert line.startswith(f"split dc: t-Reordering (200 ms) expired {expiries} times in flow "
                           f"f's 10 s ({expiries / active:.1f} a second), ")
    assert ("try a shorter t_reordering (NR allows 0 to 3000 ms, TS 38.331) that still covers the "
            "legs' delay difference") in line
    # A 20 ms timer waits out the same gaps in a tenth of the time: no warning, and the
    # goodput comes back.
    fast = _run(tmp_path, **{"split.dc.t_reordering": '"20 ms"'})
    assert _reordering(fast) == []
    assert fast.summary["flows"][0]["goodput_mbps"] > 1.5 * flow["goodput_mbps"]
    # Without drops on the leg nothing expires, and nothing is said.
    clean = _run(tmp_path, **{"link.nr.queue": "100000 packets"})
    assert clean.summary["flows"][0]["pdcp"]["dc"]["timer_expiries"] == 0
    assert _reordering(clean) == []
    # The terminal says it once.
    done = cli("run", str(tmp_path / "lone_nr.toml"), "--out", str(tmp_path / "r"), "-q")
    assert done.returncode == 0 and done.stderr.count(f"multiconn: warning: {line}\n") == 1, \
        done.stderr


def test_a_t_reordering_shorter_than_the_legs_delay_difference_warns_the_other_way() -> None:
    """The uplink split of examples/scenarios/uplink_dc.toml queues up to 240 ms on its LTE
    primary: at 50 ms the timer gives up gaps that were only late, and those PDUs, arriving
    later, are discarded (lost to TCP): the run says the timer is too short. At 100 ms every
    given-up gap was a real drop, and that warning is not given."""
    uplink = EXAMPLES / "uplink_dc.toml"
    short = multiconn.run(uplink, overrides={"run.duration": "10 s",
                                             "split.upload_dc.t_reordering": '"50 ms"'})
    pdcp = next(f for f in short.summary["flows"] if f["name"] == "upload")["pdcp"]["upload_dc"]
    assert pdcp["late_discards"] >= 10 and 2 * pdcp["late_discards"] >= pdcp["given_up"], pdcp
    [line] = _reordering(short)
    assert line.startswith("split upload_dc: t-Reordering (50 ms) is shorter than the legs' delay "
                           f"difference: it expired {pdcp['timer_expiries']} times in flow upload's ")
    assert f"{pdcp['late_discards']} PDUs arrived after their gap was given up" in line
    assert "try a longer t_reordering (NR allows 0 to 3000 ms, TS 38.331)" in line
    longer = multiconn.run(uplink, overrides={"run.duration": "10 s",
                                              "split.upload_dc.t_reordering": '"100 ms"'})
    assert not any("is shorter than the legs' delay difference" in w for w in _reordering(longer))
    short_mbps, longer_mbps = (next(f["goodput_mbps"] for f in r.summary["flows"] if f["name"] == "upload")
                               for r in (short, longer))
    assert longer_mbps > 2 * short_mbps, (short_mbps, longer_mbps)
