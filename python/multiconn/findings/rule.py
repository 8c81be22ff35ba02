"""The one tolerance rule: how a finding's verdict follows from the paper's number and ours.

Every verdict `multiconn studies` prints is computed here, from the finding's check and the
means of our runs; none is typed by hand. docs/studies.md states the same rule in words.

* `value`: ours is the mean of the metric over the selected runs. The tolerance is the larger
  of 10 % of the paper's value and the paper's own spread for that value (`spread`, when the
  paper prints one). `reproduces` within the tolerance, `partially` within twice it, otherwise
  `does not`.
* `ratio`: ours is mean(high) / mean(low), judged against the paper's ratio as a `value`.
* `order`: `high` above `low` (`relation = ">"`), or the two within 10 % of the larger
  (`relation = "="`), at each point the paper shows (`over`). `reproduces` when it holds at
  every point, `partially` at some but not all, `does not` at none.
* `trend`: the metric along the points (`over`, in the paper's order) `rising`, `falling` or
  `flat` (each step within 10 % of the step's first value). `reproduces` when every step goes
  that way, `partially` when not every step does but the last point against the first does,
  otherwise `does not`.
* `bound`: the metric `>=` or `<=` the paper's value at every point. `reproduces` when it
  holds everywhere, `partially` when the worst point misses by at most 10 % of the value,
  otherwise `does not`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

REPRODUCES, PARTIALLY, DOES_NOT = "reproduces", "partially", "does not"
VERDICTS = (REPRODUCES, PARTIALLY, DOES_NOT)
RELATIVE_TOLERANCE = 0.10
"""The rule's one number: 10 % (of the paper's value, of the larger of two, of a step)."""


@dataclass(frozen=True)
class Judgement:
    """A verdict and what it was computed from, in words."""

    verdict: str
    ours: str
    """Our value(s) as shown beside the paper's."""
    detail: str = ""


def _fmt(x: float) -> str:
    if x == 0 or 0.01 <= abs(x) < 10_000:
        return f"{x:.3g}" if abs(x) < 100 else f"{x:.1f}"
    return f"{x:.3g}"


def value(ours: float, paper: float, spread: float | None = None) -> Judgement:
    """`value` and `ratio`: ours against the paper's number."""
    tol = max(RELATIVE_TOLERANCE * abs(paper), spread or 0.0)
    diff = ours - paper
    if math.isnan(ours):
        return Judgement(DOES_NOT, "no value", "our runs gave no value")
    if abs(diff) <= tol:
        verdict = REPRODUCES
    elif abs(diff) <= 2 * tol:
        verdict = PARTIALLY
    else:
        verdict = DOES_NOT
    pct = f" ({diff / paper:+.0%})" if paper else ""
    return Judgement(verdict, _fmt(ours), f"{_fmt(diff)}{pct} against a tolerance of {_fmt(tol)}")


def _holds(high: float, low: float, relation: str) -> bool:
    if relation == ">":
        return high > low
    return abs(high - low) <= RELATIVE_TOLERANCE * max(abs(high), abs(low))


def order(points: Sequence[tuple[str, float, float]], relation: str) -> Judgement:
    """`order`: (point label, high, low) for each point the paper shows."""
    held = [_holds(h, lo, relation) for _, h, lo in points]
    verdict = REPRODUCES if all(held) else PARTIALLY if any(held) else DOES_NOT
    sign = ">" if relation == ">" else "≈"
    shown = "; ".join(f"{label + ': ' if label else ''}{_fmt(h)} {sign if ok else 'not ' + sign} "
                      f"{_fmt(lo)}" for (label, h, lo), ok in zip(points, held))
    return Judgement(verdict, shown, f"holds at {sum(held)} of {len(held)} points")


def _step(a: float, b: float, direction: str) -> bool:
    if direction == "rising":
        return b > a
    if direction == "falling":
        return b < a
    return abs(b - a) <= RELATIVE_TOLERANCE * abs(a)


def trend(points: Sequence[tuple[str, float]], direction: str) -> Judgement:
    """`trend`: (point label, value) in the paper's order."""
    values = [v for _, v in points]
    steps = [_step(a, b, direction) for a, b in zip(values, values[1:])]
    overall = _step(values[0], values[-1], direction)
    if all(steps):
        verdict = REPRODUCES
    elif overall:
        verdict = PARTIALLY
    else:
        verdict = DOES_NOT
    shown = " → ".join(f"{_fmt(v)}" for v in values)
    return Judgement(verdict, shown, f"{sum(steps)} of {len(steps)} steps {direction}; "
                                     f"last against first {'is' if overall else 'is not'}")


def bound(points: Sequence[tuple[str, float]], op: str, paper: float) -> Judgement:
    """`bound`: (point label, value) for each point; `op` is `>=` or `<=`."""
    misses = [(paper - v) if op == ">=" else (v - paper) for _, v in points]
    worst = max(misses)
    if worst <= 0:
        verdict = REPRODUCES
    elif worst <= RELATIVE_TOLERANCE * abs(paper):
        verdict = PARTIALLY
    else:
        verdict = DOES_NOT
    shown = "; ".join(f"{label + ': ' if label else ''}{_fmt(v)}" for label, v in points)
    return Judgement(verdict, shown, f"{op} {_fmt(paper)}: worst point "
                                     f"{'misses by ' + _fmt(worst) if worst > 0 else 'holds'}")
