"""From a sweep spec to the runs it stands for: points, seeds, resolved scenarios, run keys.

* Points are the cross product of the axis groups (the first group varies slowest); within a
  group the axes advance together.
* Seeds are derived with BLAKE2b from the sweep's seed and name, the point's axis labels and
  the repetition (`seeds = "per-point"`), or without the point (`"common"`: common random
  numbers, the same seeds at every point). A seed never depends on how many points or
  repetitions the sweep has, so adding repetitions keeps the earlier ones.
* A run's key is the SHA-256 of the resolved scenario (canonical JSON), the content of every
  file it reads (traces, profiles), the seed and the multiconn version: equal keys mean equal
  results, in any output directory.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._native import ScenarioError, core
from .spec import AxisValue, SweepError, SweepSpec

FILE_KEYS = frozenset({"file", "profile", "trace", "series", "path"})
"""Scenario fields whose string values may name a file the run reads."""
SEED_MASK = 2**63 - 1
"""Seeds stay below 2^63 so that every store and format holds them as signed 64-bit."""


@dataclass(frozen=True)
class Point:
    """One combination of axis values."""

    index: int
    values: tuple[tuple[str, float | str], ...]
    """(axis name, value) pairs: a number on numeric axes, the label otherwise."""
    labels: tuple[tuple[str, str], ...]
    overrides: tuple[tuple[str, str], ...]
    """The sweep's fixed overrides, then each axis value's, in axis order."""


@dataclass(frozen=True)
class RunTask:
    """Everything a worker needs to perform one run; small and picklable."""

    run_key: str
    experiment: str
    point: int
    rep: int
    seed: int
    scenario_text: str
    origin: str
    base_dir: str
    overrides: tuple[tuple[str, str], ...]
    keep_timeseries: bool


@dataclass(frozen=True)
class PlannedRun:
    """A run of the plan: where it sits in the sweep, and its task."""

    point: Point
    rep: int
    task: RunTask
    scenario_json: str
    """The resolved scenario, canonical JSON (sorted keys)."""


def points(spec: SweepSpec) -> list[Point]:
    """The sweep's points, in order."""
    ranges = [range(len(group[0].values)) for group in spec.groups]
    result = []
    for index, combo in enumerate(itertools.product(*ranges)):
        values: list[tuple[str, float | str]] = []
        labels: list[tuple[str, str]] = []
        overrides = list(spec.overrides)
        for group, i in zip(spec.groups, combo):
            for axis in group:
                chosen: AxisValue = axis.values[i]
                values.append((axis.name, chosen.value))
                labels.append((axis.name, chosen.label))
                overrides.extend(chosen.overrides)
        result.append(Point(index, tuple(values), tuple(labels), tuple(overrides)))
    return result


def derive_seed(spec: SweepSpec, point: Point, rep: int) -> int:
    """The seed of repetition `rep` at `point` (see the module header)."""
    identity: list[Any] = [spec.seed, spec.name, rep]
    if spec.seeds == "per-point":
        identity.append([list(pair) for pair in point.labels])
    digest = hashlib.blake2b(_canonical(identity).encode(), digest_size=8,
                             person=b"multiconn-seed").digest()
    return int.from_bytes(digest, "big") & SEED_MASK


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=True)


def _file_digests(resolved: Any, base_dir: str) -> dict[str, str]:
    """SHA-256 of every existing file the resolved scenario names under a FILE_KEYS field."""
    found: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in FILE_KEYS and isinstance(value, str):
                    path = Path(base_dir, value)
                    if path.is_file():
                        found[value] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(resolved)
    return found


def run_key(scenario_json: str, files: dict[str, str], seed: int, version: str) -> str:
    """The key of a run's record (32 hex digits of SHA-256)."""
    text = _canonical({"scenario": json.loads(scenario_json), "files": files, "seed": seed,
                       "version": version})
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def plan(spec: SweepSpec, version: str,
         on_point: Callable[[int, int], None] | None = None) -> list[PlannedRun]:
    """Resolves every point (raising SweepError at the first invalid one) and lists the runs.

    Nothing runs here: each point's scenario is validated by the native loader, which checks
    parameter paths, units and trace files.
    """
    pts = points(spec)
    source = spec.scenario
    runs: list[PlannedRun] = []
    digest_cache: dict[str, dict[str, str]] = {}
    for n, point in enumerate(pts):
        try:
            resolved = core().validate(source.text, source.origin, source.base_dir,
                                       list(point.overrides))
        except ScenarioError as exc:
            shown = ", ".join(f"{k}={v}" for k, v in point.labels) or "the base scenario"
            raise SweepError(f"{spec.path}: point {point.index} ({shown}): {exc}") from None
        scenario_json = _canonical(json.loads(resolved))
        if scenario_json not in digest_cache:
            digest_cache[scenario_json] = _file_digests(json.loads(scenario_json),
                                                        source.base_dir)
        files = digest_cache[scenario_json]
        for rep in range(spec.repetitions):
            seed = derive_seed(spec, point, rep)
            key = run_key(scenario_json, files, seed, version)
            task = RunTask(key, spec.name, point.index, rep, seed, source.text, source.origin,
                           source.base_dir, point.overrides, spec.keep_timeseries)
            runs.append(PlannedRun(point, rep, task, scenario_json))
        if on_point is not None:
            on_point(n + 1, len(pts))
    return runs


__all__ = ["PlannedRun", "Point", "RunTask", "derive_seed", "plan", "points", "run_key"]
