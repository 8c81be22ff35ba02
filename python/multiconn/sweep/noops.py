"""Silent no-ops in a finished sweep: runs that were different in the plan and the same in
what they produced.

* **Repetitions that repeat themselves**: every repetition of a point gave identical results,
  so the scenario draws nothing random and the extra repetitions only cost time (their
  spread of zero is not a confidence).
* **Points that are one run**: two points gave identical results in their first repetition
  and both have nothing random, so the values the axis gave them changed nothing the model
  does (two DC shares that put the same number of packets of a batch on each leg, a queue
  longer than the window can fill, a controller on an application-limited flow).

"Identical" compares what a run measured (flows, links, paths, messages, fairness, the
simulated time and the event count), not what it echoes of its configuration (names,
controllers, capacities) nor its seed or wall time. Points are compared only where their
repetitions show nothing random: each point has its own seeds, so two points with random
draws differ even when their models are the same.

`notes` gives one line per no-op with its explanation and every point named; `brief` one
line for all of them, which is what a sweep prints (the notes themselves with --verbose and
in --json).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .store import RunRecord

ECHOED = frozenset({
    "seed", "wall_time_s", "multiconn_version", "scenario", "disabled_flows", "name",
    "transport", "cc", "profile", "app", "coupled", "udp_socket", "direction", "from", "to",
    "capacity_mbps",
})
"""Summary keys that echo the run's configuration or identity rather than measure it."""


def _measured(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _measured(v) for k, v in value.items() if k not in ECHOED}
    if isinstance(value, list):
        return [_measured(v) for v in value]
    return value


def outcome(summary: dict[str, Any]) -> str:
    """A digest of what a run measured (see the module's documentation)."""
    text = json.dumps(_measured(summary), sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _where(record: RunRecord) -> str:
    return ", ".join(f"{k}={v}" for k, v in record.labels.items()) or "the base scenario"


@dataclass
class Found:
    """The no-ops of one experiment's successful runs."""

    reps: int = 0
    """Repetitions per point of the points whose repetitions were identical (0: none)."""
    repeating: list[int] = field(default_factory=list)
    """The points whose repetitions were identical."""
    points: int = 0
    """Points with a successful run."""
    example: str = ""
    """One of the repeating points, by its labels."""
    groups: list[list[str]] = field(default_factory=list)
    """Groups of points (by their labels) that gave identical results."""


def find(records: list[RunRecord]) -> Found:
    """The no-ops among the successful runs of one experiment."""
    by_point: dict[int, list[RunRecord]] = {}
    for r in records:
        if r.ok and r.summary is not None:
            by_point.setdefault(r.point, []).append(r)
    digests = {p: [outcome(r.summary) for r in rs if r.summary is not None] for p, rs in by_point.items()}
    found = Found(points=len(digests))
    found.repeating = [p for p, d in digests.items() if len(d) >= 2 and len(set(d)) == 1]
    if found.repeating:
        found.reps = len(digests[found.repeating[0]])
        found.example = _where(by_point[found.repeating[0]][0])
    # Points with nothing random (or a single repetition) that gave the same results.
    single_or_fixed = [p for p, d in digests.items() if d and len(set(d)) == 1]
    groups: dict[str, list[int]] = {}
    for p in sorted(single_or_fixed):
        groups.setdefault(digests[p][0], []).append(p)
    found.groups = [[_where(by_point[p][0]) for p in points] for points in groups.values()
                    if len(points) >= 2]
    return found


def notes(records: list[RunRecord]) -> list[str]:
    """One line per no-op found among the successful runs of one experiment."""
    found = find(records)
    lines = []
    if found.repeating:
        which = "every point" if len(found.repeating) == found.points else \
            f"{len(found.repeating)} of {found.points} points (e.g. {found.example})"
        lines.append(
            f"the {found.reps} repetitions of {which} gave identical results: the scenario draws "
            f"nothing random there, so repetitions add nothing (set repetitions = 1, or add a "
            f"random element such as loss or a random delay)")
    for group in found.groups:
        lines.append(
            f"points {'; '.join(group)} gave identical results: what the axis changed between "
            f"them made no difference to the model (e.g. two values that resolve to the same "
            f"split or queue), so they are one run reported {len(group)} times")
    return lines


def brief(records: list[RunRecord]) -> str:
    """The no-ops in one line ("" when there are none): what repeated itself, how often."""
    found = find(records)
    parts = []
    if found.repeating:
        which = "every point's" if len(found.repeating) == found.points else \
            f"{len(found.repeating)} of {found.points} points'"
        parts.append(f"{which} {found.reps} repetitions were identical")
    if found.groups:
        points = sum(len(group) for group in found.groups)
        parts.append(f"{points} points gave the results of {len(found.groups)}")
    return f"identical results: {'; '.join(parts)} (--verbose: where and why)" if parts else ""
