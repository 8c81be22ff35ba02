"""Our value for each finding, read from the runs, and its verdict by the rule.

A selection is a set of `column = label` conditions; our value at a selection is the mean of
the finding's metric over the matching rows (every repetition; a run-level metric such as
`jain_fairness` once per run; a drive share as 100 · mean goodput / mean capacity). With
`over`, each point adds `column = label` to every selection that does not name that column
itself, so `high = { case = "sp" }` stays at sp while `low` walks the points.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ..errors import FindingsError
from . import rule
from .listing import Finding, Selection, Study
from .sources import RUN_LEVEL, SHARES

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Row:
    """One finding checked: the table row `multiconn studies` prints."""

    id: str
    study: str
    where: str
    claim: str
    paper: str
    ours: str
    verdict: str
    detail: str
    experiment: str
    metric: str
    check: str
    testbed: str
    setup: str = ""
    reason: str = ""
    doc: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def _matches(frame: pd.DataFrame, column: str, item: str) -> pd.Series:
    values = frame[column].astype(str)
    hit = values == item
    try:
        number = float(item)
    except ValueError:
        return hit
    import pandas as pd

    numeric = pd.to_numeric(frame[column], errors="coerce")
    return hit | (numeric == number)


def mean(frame: pd.DataFrame, selection: Selection, metric: str, where: str) -> float:
    """The metric's mean over the rows that match `selection`."""
    rows = frame
    for column, item in selection:
        if column not in rows.columns:
            raise FindingsError(f"{where}: the results have no column {column!r}")
        rows = rows[_matches(rows, column, item)]
    if rows.empty:
        shown = ", ".join(f"{c} = {v}" for c, v in selection) or "no condition"
        raise FindingsError(f"{where}: no run matches {shown}")
    if metric in SHARES:
        return 100 * float(rows["goodput_mbps"].mean()) / float(rows[SHARES[metric]].mean())
    if metric in RUN_LEVEL and "run_key" in rows.columns:
        rows = rows.drop_duplicates("run_key")
    values = rows[metric].astype(float).dropna()
    return float(values.mean()) if len(values) else math.nan


def _with(selection: Selection, column: str, item: str) -> Selection:
    if any(c == column for c, _ in selection):
        return selection
    return selection + ((column, item),)


def judge(finding: Finding, frame: pd.DataFrame) -> rule.Judgement:
    """The verdict of one finding over its experiment's results."""
    f = finding
    where = f"{f.study} finding {f.id}"

    def at(selection: Selection) -> float:
        return mean(frame, selection, f.metric, where)

    points = [("", None)] if f.over is None else [(item, item) for item in f.over[1]]
    column = f.over[0] if f.over is not None else ""

    def point(selection: Selection, item: str | None) -> Selection:
        return selection if item is None else _with(selection, column, item)

    if f.check == "value":
        assert f.value is not None
        return rule.value(at(f.at), f.value, f.spread)
    if f.check == "ratio":
        assert f.value is not None
        low = at(f.at + f.low)
        ours = at(f.at + f.high) / low if low else math.nan
        return rule.value(ours, f.value, f.spread)
    if f.check == "order":
        return rule.order([(label, at(point(f.at + f.high, item)), at(point(f.at + f.low, item)))
                           for label, item in points], f.relation)
    if f.check == "trend":
        return rule.trend([(label, at(point(f.at, item))) for label, item in points], f.direction)
    assert f.value is not None
    return rule.bound([(label, at(point(f.at, item))) for label, item in points], f.op, f.value)


def evaluate(studies: list[Study], frames: Mapping[str, pd.DataFrame]) -> list[Row]:
    """Every finding of `studies` judged over `frames` (experiment name → results)."""
    rows = []
    for study in studies:
        for f in study.findings:
            if f.experiment not in frames:
                raise FindingsError(f"{study.id} finding {f.id}: {f.experiment} was not run")
            j = judge(f, frames[f.experiment])
            rows.append(Row(id=f.id, study=study.id, where=f.where, claim=f.claim, paper=f.paper,
                            ours=j.ours, verdict=j.verdict, detail=j.detail,
                            experiment=f.experiment, metric=f.metric, check=f.check,
                            testbed=study.testbed, setup=f.setup, reason=f.reason, doc=f.doc))
    return rows


def counts(rows: list[Row]) -> dict[str, dict[str, int]]:
    """Per study, then `all`, how many findings got each verdict."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        out.setdefault(row.study, {v: 0 for v in rule.VERDICTS})[row.verdict] += 1
    out["all"] = {v: sum(c[v] for c in out.values()) for v in rule.VERDICTS}
    return out
