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

The physical model instead glides the delay linearly between the per-second points and never
reorders (`delay = { model = "series" }`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import CaseError

MECHANISMS: dict[str, str] = {
    "netem_steps": "per-second delay steps through netem's time-ordered queue (tc change)",
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

    def series_delay(self, file_name: str) -> dict[str, object]:
        """The `delay` table of an access link whose per-second delay is in `file_name`."""
        delay: dict[str, object] = {"model": "series", "file": file_name}
        if self.netem_steps:
            delay.update(interpolation="step", reorder=True)
        return delay


TESTBEDS: dict[str, Testbed] = {
    "ideal": Testbed("ideal", frozenset()),
    "study": Testbed("study", frozenset({"netem_steps"})),
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
