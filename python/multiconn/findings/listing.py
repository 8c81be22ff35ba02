"""The studies' findings as data: reading and checking `multiconn/studies/<study>.toml`.

One file per study: a `[study]` table (its id, the paper, the seed file, the doc that discusses
it, the testbed bundle used, if any) and one `[[finding]]` table per quantitative result or
claim of the paper: where in the paper, the paper's value or claim, the catalogue experiment
(or drive-download segment) and metric that measure it, and the check the rule applies
(`multiconn.findings.rule`). docs/studies.md describes every field. A bad list is refused
naming the file, the finding and the field.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FindingsError

STUDIES_DIR = Path(__file__).resolve().parent.parent / "studies"
CHECKS = ("value", "ratio", "order", "trend", "bound")
DRIVE_SOURCES = ("drive-residential", "drive-road")
"""The multi-operator study's download experiment (`multiconn.downloads`) per segment."""

_COMMON = ("id", "where", "claim", "paper", "setup", "experiment", "metric", "check", "at",
           "reason", "doc")
_FIELDS = {
    "value": ("value", "spread"),
    "ratio": ("high", "low", "value", "spread"),
    "order": ("high", "low", "relation", "over"),
    "trend": ("over", "direction"),
    "bound": ("op", "value", "over"),
}


Selection = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Finding:
    """One result or claim of a paper and how it is checked."""

    id: str
    study: str
    where: str
    claim: str
    paper: str
    experiment: str
    metric: str
    check: str
    at: Selection = ()
    high: Selection = ()
    low: Selection = ()
    over: tuple[str, tuple[str, ...]] | None = None
    value: float | None = None
    spread: float | None = None
    relation: str = ">"
    direction: str = ""
    op: str = ""
    setup: str = ""
    reason: str = ""
    doc: str = ""

    def selections(self) -> list[Selection]:
        """Every set of column conditions the check reads (without `over`)."""
        if self.check in ("order", "ratio"):
            return [self.at + self.high, self.at + self.low]
        return [self.at]


@dataclass(frozen=True)
class Study:
    """A paper and its findings."""

    id: str
    title: str
    paper: str
    seed: str
    doc: str
    testbed: str = "ideal"
    findings: tuple[Finding, ...] = field(default_factory=tuple)


def label(value: Any) -> str:
    """A TOML value as an axis label (`100`, `0.5`, `TCP NewReno`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> FindingsError:
        return FindingsError(f"{self.path}: {where}: {problem}")

    def text(self, table: Mapping[str, Any], key: str, where: str, required: bool = True) -> str:
        value = table.get(key)
        if value is None:
            if required:
                raise self.fail(where, f"'{key}' is missing")
            return ""
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{where}.{key}", f"must be non-empty text, got {value!r}")
        return value

    def number(self, table: Mapping[str, Any], key: str, where: str,
               required: bool = True) -> float | None:
        value = table.get(key)
        if value is None:
            if required:
                raise self.fail(where, f"'{key}' is missing (a number)")
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"{where}.{key}", f"must be a number, got {value!r}")
        return float(value)

    def selection(self, table: Mapping[str, Any], key: str, where: str,
                  required: bool = False) -> Selection:
        value = table.get(key)
        if value is None:
            if required:
                raise self.fail(where, f"'{key}' is missing (a table of column = label)")
            return ()
        if not isinstance(value, dict) or (not value and not required):
            raise self.fail(f"{where}.{key}", f"must be a table of column = label, got {value!r}")
        out = []
        for column, item in value.items():
            if isinstance(item, (list, dict)):
                raise self.fail(f"{where}.{key}.{column}", "must be one label, not a list")
            out.append((column, label(item)))
        return tuple(out)

    def over(self, table: Mapping[str, Any], where: str,
             required: bool) -> tuple[str, tuple[str, ...]] | None:
        value = table.get("over")
        if value is None:
            if required:
                raise self.fail(where, "'over' is missing (one column = [labels in order])")
            return None
        if not isinstance(value, dict) or len(value) != 1:
            raise self.fail(f"{where}.over", "must name one column: over = { COLUMN = [labels] }")
        ((column, labels),) = value.items()
        if not isinstance(labels, list) or len(labels) < (2 if required else 1):
            raise self.fail(f"{where}.over.{column}",
                            f"must be a list of at least {2 if required else 1} labels")
        return column, tuple(label(v) for v in labels)

    def choice(self, table: Mapping[str, Any], key: str, where: str, choices: tuple[str, ...],
               default: str | None = None) -> str:
        value = table.get(key, default)
        if value not in choices:
            raise self.fail(f"{where}.{key}" if key in table else where,
                            f"'{key}' must be one of {', '.join(choices)}, got {value!r}")
        return str(value)


def _finding(r: _Reader, raw: Any, i: int, study: str) -> Finding:
    where = f"finding[{i}]"
    if not isinstance(raw, dict):
        raise r.fail(where, "must be a table")
    fid = r.text(raw, "id", where)
    where = f"finding {fid}"
    check = r.choice(raw, "check", where, CHECKS)
    allowed = set(_COMMON) | set(_FIELDS[check])
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise r.fail(where, f"unknown field {unknown[0]!r} for check = {check!r} (allowed: "
                            f"{', '.join(sorted(allowed))})")
    kwargs: dict[str, Any] = dict(
        id=fid, study=study, check=check,
        where=r.text(raw, "where", where), claim=r.text(raw, "claim", where),
        paper=r.text(raw, "paper", where), experiment=r.text(raw, "experiment", where),
        metric=r.text(raw, "metric", where), at=r.selection(raw, "at", where),
        setup=r.text(raw, "setup", where, required=False),
        reason=r.text(raw, "reason", where, required=False),
        doc=r.text(raw, "doc", where, required=False))
    if check in ("value", "ratio", "bound"):
        kwargs["value"] = r.number(raw, "value", where)
    if check in ("value", "ratio"):
        spread = r.number(raw, "spread", where, required=False)
        if spread is not None and spread < 0:
            raise r.fail(f"{where}.spread", f"must be at least 0, got {spread:g}")
        kwargs["spread"] = spread
    if check in ("order", "ratio"):
        kwargs["high"] = r.selection(raw, "high", where, required=True)
        kwargs["low"] = r.selection(raw, "low", where, required=True)
    if check == "order":
        kwargs["relation"] = r.choice(raw, "relation", where, (">", "="), default=">")
    if check in ("order", "bound"):
        kwargs["over"] = r.over(raw, where, required=False)
    if check == "trend":
        kwargs["over"] = r.over(raw, where, required=True)
        kwargs["direction"] = r.choice(raw, "direction", where, ("rising", "falling", "flat"))
    if check == "bound":
        kwargs["op"] = r.choice(raw, "op", where, (">=", "<="))
    return Finding(**kwargs)


def read_study(path: Path) -> Study:
    """One study's list, checked field by field."""
    r = _Reader(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise FindingsError(f"{path}: {exc}") from None
    unknown = sorted(set(data) - {"study", "finding"})
    if unknown:
        raise r.fail("top level", f"unknown table {unknown[0]!r} (allowed: study, finding)")
    head = data.get("study")
    if not isinstance(head, dict):
        raise r.fail("study", "a [study] table is missing")
    sid = r.text(head, "id", "study")
    findings = data.get("finding", [])
    if not isinstance(findings, list) or not findings:
        raise r.fail("finding", "at least one [[finding]] is needed")
    items = tuple(_finding(r, raw, i, sid) for i, raw in enumerate(findings))
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise r.fail(f"finding {item.id}", "the id is used twice")
        seen.add(item.id)
    return Study(id=sid, title=r.text(head, "title", "study"), paper=r.text(head, "paper", "study"),
                 seed=r.text(head, "seed", "study"), doc=r.text(head, "doc", "study"),
                 testbed=head.get("testbed", "ideal"), findings=items)


def read_studies(folder: Path = STUDIES_DIR) -> list[Study]:
    """Every study list in `folder` (`*.toml`), in file-name order."""
    studies = [read_study(p) for p in sorted(folder.glob("*.toml"))]
    ids = [s.id for s in studies]
    for sid in ids:
        if ids.count(sid) > 1:
            raise FindingsError(f"{folder}: study id {sid!r} is used by two files")
    return studies
