"""Testbeds: what the multi-operator study's emulation did to packets, as named options.

The study (Krämer et al. 2022, §4) replayed its drive segments in Minitopo on Mininet,
changing every access link's rate and delay once a second with `tc`. A `Testbed` is a bundle of
such mechanisms, each a knob of its own; `ideal` (the default) has none of them, so a case
runs over the physical model alone. `multiconn drive download --testbed study` applies the
study's bundle; `--mechanism NAME` (repeatable) applies chosen ones alone, to measure each.

Each mechanism, its parameters and the source it comes from (docs/multi-operator.md, "The
study's testbed", has the table and the measurements):

- `netem_steps`: the per-second delay is set by `tc qdisc change … netem delay` (Minitopo
  7faea31 `core/topo.py` `configure_changing_bottleneck`, one command per second and link
  direction). Linux's netem (`sch_netem.c` `netem_enqueue`, `tfifo_enqueue`, `netem_change`)
  stamps each packet with `now + delay` at enqueue, keeps its queue ordered by that time and
  leaves packets already queued untouched when the delay changes: the delay is a step function
  of the second, and when it falls the packets enqueued after the change overtake the ones
  before it. Link option: `delay = { model = "series", interpolation = "step",
  reorder = true }`.

- `minitopo_queue`: each access link's queue is tbf's byte limit as Minitopo 7faea31 computes
  it once, from the link's first rate and delay (`core/topo.py`
  `LinkCharacteristics.buffer_size`, `extract_queuing_delay`, with the default queue size, the
  bandwidth-delay product in packets, `get_bandwidth_delay_product_divided_by_mtu`), and never
  recomputes it at a rate change: L = 1500·⌈bw·125 000·2d/1000/1500⌉ + bw·1000·qd/8 bytes,
  qd = max(⌊queue·1500·8·1000/(bw·1024·1024)⌋, 1) ms, bw in Mbit/s, d the one-way delay in ms.
  A link down at the start takes its first second with a rate (7faea31 cannot configure a zero
  rate; the study's own extension, which sets the rates, is not public).

- `cell_handover`: a change of serving cell within a carrier is a handover: the client opens a
  new path on the channel and abandons the old one, as with a change of channel. The study
  gives the terminal "a separate IP address … for every accessible cell" (§1) and replays the
  drive with its scripted picoquic client; case parameter `cell_change_is_handover` (the
  channel's two addresses are two always-up client links behind its access link). MPTCP's
  subflows are left as they are: the study changed only its links' state.

- `minitopo_swap` (not in `study`: the sources leave it open): Minitopo 7faea31 sends its
  changes with `tc qdisc replace` under another handle than the qdisc's, so its first change on
  a link destroys netem and tbf and every packet in them (`core/topo.py`; Linux `sch_api.c`
  `tc_modify_qdisc` → `create_n_graft`), and every later change is an in-place change. The
  study's own extension, which changed the rates, is not public and may not have done this.
  Link option `replaced = ["1 s"]` on every access link: the first per-second change.

The physical model instead glides the delay linearly between the per-second points, never
reorders (`delay = { model = "series" }`) and gives every access link 100 packets of queue.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import CaseError

MECHANISMS: dict[str, str] = {
    "netem_steps": "per-second delay steps through netem's time-ordered queue (tc change)",
    "minitopo_queue": "each access link's queue is Minitopo's tbf byte limit from its first "
                      "rate and delay",
    "cell_handover": "a change of serving cell within a carrier is a handover (a new path)",
    "minitopo_swap": "the first per-second change replaces the access links' qdiscs, dropping "
                     "every packet on them",
}
"""Every mechanism a testbed may apply: name → one line saying what it does."""


@dataclass(frozen=True)
class Testbed:
    """A named bundle of mechanisms (each a name of `MECHANISMS`)."""

    name: str
    mechanisms: frozenset[str]

    @property
    def netem_steps(self) -> bool:
        return "netem_steps" in self.mechanisms

    def handover(self, given: dict[str, object], knows_cells: bool) -> dict[str, object]:
        """The case parameters `given`, with `cell_change_is_handover` on under
        `cell_handover` unless `given` sets it, for a channel table that `knows_cells` (one
        without cell ids, such as measured capacities, has no cell change to hand over)."""
        if "cell_handover" in self.mechanisms and knows_cells:
            return {"cell_change_is_handover": True, **given}
        return given

    def access_queue(self, rate_mbps: list[float], delay_ms: list[float | None],
                     default: str) -> str:
        """The queue of an access link with these per-second rates and delays: `default`, or
        Minitopo's byte limit from the first second with a rate (`minitopo_queue`)."""
        if "minitopo_queue" not in self.mechanisms:
            return default
        first = next(((r, d) for r, d in zip(rate_mbps, delay_ms) if r > 0 and d is not None),
                     None)
        if first is None:
            return default
        return f"{minitopo_queue_bytes(*first)} B"

    def replacements(self) -> dict[str, object]:
        """The `replaced` instants of an access link: the first per-second change under
        `minitopo_swap`, none otherwise."""
        return {"replaced": ["1 s"]} if "minitopo_swap" in self.mechanisms else {}

    def series_delay(self, file_name: str) -> dict[str, object]:
        """The `delay` table of an access link whose per-second delay is in `file_name`."""
        delay: dict[str, object] = {"model": "series", "file": file_name}
        if self.netem_steps:
            delay.update(interpolation="step", reorder=True)
        return delay


def minitopo_queue_bytes(rate_mbps: float, delay_ms: float,
                         queue_packets: int | None = None) -> int:
    """Minitopo 7faea31's tbf limit in bytes for a link of `rate_mbps` and one-way `delay_ms`
    with `queue_packets` of queue (default, as Minitopo's: the bandwidth-delay product in
    packets)."""
    if not (rate_mbps > 0 and delay_ms >= 0):
        raise CaseError(f"minitopo_queue: rate {rate_mbps} Mbit/s, delay {delay_ms} ms: the "
                        "rate must be positive and the delay at least 0")
    bdp_packets = math.ceil(rate_mbps * 125_000 * (2 * delay_ms / 1000) / 1500)
    if queue_packets is None:
        queue_packets = bdp_packets
    queuing_delay_ms = max(math.floor(queue_packets * 1500 * 8 * 1000
                                      / (rate_mbps * 1024 * 1024)), 1)
    return int(1500 * bdp_packets + rate_mbps * 1000 * queuing_delay_ms / 8)


TESTBEDS: dict[str, Testbed] = {
    "ideal": Testbed("ideal", frozenset()),
    "study": Testbed("study", frozenset({"netem_steps", "minitopo_queue", "cell_handover"})),
}
"""The named testbeds: `ideal` (the physical model) and `study` (the study's emulation)."""


def testbed(name: str | Testbed = "ideal", mechanisms: Iterable[str] = ()) -> Testbed:
    """The testbed `name` with `mechanisms` added; a `CaseError` names what is unknown."""
    if isinstance(name, Testbed):
        base = name
    elif name in TESTBEDS:
        base = TESTBEDS[name]
    else:
        raise CaseError(f"testbed = {name!r}: unknown; the testbeds are {', '.join(TESTBEDS)}")
    extra = frozenset(mechanisms)
    unknown = sorted(extra - MECHANISMS.keys())
    if unknown:
        raise CaseError(f"mechanism = {unknown[0]!r}: unknown; the mechanisms are "
                        f"{', '.join(MECHANISMS)}")
    if not extra or extra <= base.mechanisms:
        return base
    names = "+".join(sorted(extra - base.mechanisms))
    label = names if base.name == "ideal" else f"{base.name}+{names}"
    return Testbed(label, base.mechanisms | extra)
