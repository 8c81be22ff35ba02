"""Running a sweep into an output directory, resumably.

1. Count: a sweep of more than `max_runs` runs (points × repetitions, from the axes' lengths,
   before any point is built) is refused (`MAX_RUNS` by default).
2. Plan: every point is resolved and validated, so a bad sweep fails before any run (with
   progress shown from `VALIDATION_PROGRESS_FROM` points).
3. Register the experiment and its plan in the store.
4. Skip every run whose key is already recorded (failed runs too, unless `retry_failed`),
   unless its worker process died under it (a crash, not an error of the run: nothing says it
   would fail again), it lacks what the sweep now records (its time series, when the sweep
   keeps them) or `rerun` selects it; a run key shared by several plan rows runs once.
5. Execute the rest on the chosen backend; each outcome is committed as it arrives.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .backends import BACKENDS, BackendError, default_jobs, run_dask, run_emulated, run_local
from .execute import Outcome
from .plan import PlannedRun, plan
from .progress import SweepProgress
from .spec import SweepError, SweepSpec, load_sweep
from . import noops
from .store import Store

MAX_RUNS = 100_000
"""The most runs (points × repetitions) a sweep plans unless told otherwise (`max_runs`,
`--max-runs`). The whole plan is built before the first run: every point validated (0.2 to
0.6 ms each for the example scenarios) and every run held in memory (about 2.5 kB) and written
to the store in one transaction. At 100 000 runs that is some 250 MB and up to a minute before
the first run starts, 185 times the largest catalogue experiment (540 runs); at a million, a
sweep would spend ten minutes and 2.5 GB before its first run, with nothing to show, which
is more often two long axes crossed by mistake than a plan."""
VALIDATION_PROGRESS_FROM = 1_000
"""Points from which their validation shows progress (a second's work or so)."""


@dataclass(frozen=True)
class Failure:
    """A failed run, with what is needed to reproduce it."""

    experiment: str
    point: int
    rep: int
    seed: int
    labels: dict[str, str]
    error: str
    command: str
    """A `multiconn run` command line that repeats the run."""


@dataclass
class SweepSummary:
    """What a sweep did."""

    experiment: str
    out: str
    planned: int
    """Plan rows (points × repetitions)."""
    unique_runs: int
    already_done: int
    ran: int
    succeeded: int
    failed: int
    wall_time_s: float
    backend: str
    failures: list[Failure] = field(default_factory=list)
    rerun_missing_timeseries: int = 0
    """Recorded runs run again because the sweep now keeps time series they lack."""
    rerun_asked: int = 0
    """Recorded runs run again because `rerun` selected them."""
    rerun_crashed: int = 0
    """Recorded runs run again because their worker process had died under them."""
    notes: list[str] = field(default_factory=list)
    """Silent no-ops found in the results (see `noops`): repetitions or points that were
    different in the plan and identical in what they produced, one line each in full."""
    note: str = ""
    """The same in one line ("" when there are none): what the CLI prints without
    --verbose."""

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["failures"] = [f.__dict__ for f in self.failures]
        return data


def _command(spec: SweepSpec, run: PlannedRun) -> str:
    from shlex import quote

    origin = spec.scenario.origin
    sets = " ".join(f"--set {quote(f'{k}={v}')}" for k, v in run.point.overrides)
    return f"multiconn run {quote(origin)} --seed {run.task.seed} {sets} --out OUT".replace(
        "  ", " ")


def _check_metrics(spec: SweepSpec, outcome: Outcome) -> None:
    """Stops the sweep early when a requested flow metric is not a summary field."""
    import json

    from .results import _lookup
    from .spec import suggestion

    flows = json.loads(outcome.summary_json or "{}").get("flows", [])
    if not flows:
        return
    for metric in spec.metrics:
        if all(_lookup(flow, metric) is None and metric.split(".")[0] not in flow
               for flow in flows):
            fields = sorted({k for flow in flows for k in flow})
            raise SweepError(f"{spec.path}: metrics.flow: {metric!r} is not a field of the "
                             f"flow summary{suggestion(metric, fields)} (fields: "
                             f"{', '.join(fields)})")


def run_sweep(
    sweep: SweepSpec | str | os.PathLike[str],
    out: str | os.PathLike[str],
    jobs: int | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    repetitions: int | None = None,
    quick: bool = False,
    progress: bool = False,
    retry_failed: bool = False,
    on_event: Callable[[str], None] | None = None,
    rerun: str | None = None,
    max_runs: int | None = None,
) -> SweepSummary:
    """Runs a sweep (a file or a parsed spec) into `out`; returns what it did.

    `repetitions` replaces the sweep's count; `quick` runs its smoke version ([quick]);
    `jobs` defaults to all cores; `backend` is "local", "dask" (with `scheduler` the
    address of a running Dask scheduler, otherwise a LocalCluster of `jobs` workers) or
    "emulate" (each run in the emulator, one at a time in real time; root).
    `rerun` runs recorded runs again: "all", or the runs matching `AXIS=LABEL`, `point=N`,
    `rep=N` conditions (see `parse_rerun`); nothing else in the store changes. Recorded runs
    that lack the time series the sweep now keeps, and runs whose worker process died under
    them, are run again in any case; runs that failed by an error of their own only with
    `retry_failed`. A sweep of more than `max_runs` runs (points × repetitions; default
    MAX_RUNS) is refused before any point is built.
    Raises SweepError before any run when the sweep or one of its points is invalid.
    """
    from .. import __version__

    spec = sweep if isinstance(sweep, SweepSpec) else load_sweep(sweep)
    if quick:
        spec = spec.quick_version()
    if repetitions is not None:
        spec = spec.with_repetitions(repetitions)

    if backend not in BACKENDS:
        raise SweepError(f"unknown backend {backend!r} (backends: {', '.join(BACKENDS)})")
    if scheduler and backend != "dask":
        raise SweepError("--scheduler needs --backend dask")
    if jobs is not None and jobs < 1:
        raise SweepError(f"--jobs must be at least 1, got {jobs}")
    _check_size(spec, MAX_RUNS if max_runs is None else max_runs)
    jobs = jobs or default_jobs()
    started = time.perf_counter()
    selects = parse_rerun(spec, rerun)
    # Emulated runs are other runs than simulated ones: their keys differ, so one store never
    # answers one with the other.
    version = __version__ + ("+emulation" if backend == "emulate" else "")
    points = spec.point_count
    with SweepProgress(f"{spec.name}: validating", points,
                       progress and points >= VALIDATION_PROGRESS_FROM, unit="points") as shown:
        runs = plan(spec, version, on_point=lambda done, total: shown.advance(True))
    with Store(out) as store:
        store.register(spec, runs)
        recorded = store.recorded()
        todo: dict[str, PlannedRun] = {}
        missing_series: set[str] = set()
        asked: set[str] = set()
        crashed: set[str] = set()
        for run in runs:
            key = run.task.run_key
            if key not in recorded:
                todo.setdefault(key, run)
                continue
            ok, has_series, was_crashed = recorded[key]
            if selects is not None and selects(run):
                asked.add(key)
            elif ok and spec.keep_timeseries and not has_series:
                missing_series.add(key)
            elif was_crashed:
                crashed.add(key)
            elif not (retry_failed and not ok):
                continue
            todo.setdefault(key, run)
        unique = len({r.task.run_key for r in runs})
        summary = SweepSummary(spec.name, os.fspath(out), len(runs), unique,
                               unique - len(todo), 0, 0, 0, 0.0, backend,
                               rerun_missing_timeseries=len(missing_series),
                               rerun_asked=len(asked), rerun_crashed=len(crashed))
        tasks = [r.task for r in todo.values()]
        if backend == "local":
            outcomes = run_local(tasks, jobs, on_event)
        elif backend == "emulate":
            outcomes = run_emulated(tasks, on_event)
        else:
            outcomes = run_dask(tasks, jobs, scheduler, on_event)
        checked = False
        with SweepProgress(spec.name, len(tasks), progress) as bar:
            for outcome in outcomes:
                run = todo[outcome.run_key]
                if outcome.ok and not checked:
                    _check_metrics(spec, outcome)
                    checked = True
                store.record(outcome, run.task.seed, __version__, run.scenario_json)
                summary.ran += 1
                summary.succeeded += outcome.ok
                summary.failed += not outcome.ok
                bar.advance(outcome.ok)
        records = store.records(spec.name)
        summary.notes = noops.notes(records)
        summary.note = noops.brief(records)
        for record in records:
            if record.ok is False:
                planned = next(r for r in runs if r.task.run_key == record.run_key)
                summary.failures.append(Failure(
                    spec.name, record.point, record.rep, record.seed, record.labels,
                    record.error or "", _command(spec, planned)))
    summary.wall_time_s = time.perf_counter() - started
    return summary


def _check_size(spec: SweepSpec, limit: int) -> None:
    """Refuses a sweep of more than `limit` runs, counted from its axes' lengths."""
    if limit < 1:
        raise SweepError(f"--max-runs must be at least 1, got {limit}")
    points, reps = spec.point_count, spec.repetitions
    runs = points * reps
    if runs > limit:
        raise SweepError(
            f"{spec.path}: {runs} runs ({points} point{'s' if points != 1 else ''} × {reps} "
            f"repetition{'s' if reps != 1 else ''}), more than the {limit} a sweep may plan "
            "(every point is validated and every run planned before the first starts): split "
            f"the sweep, or pass --max-runs {runs}")


def parse_rerun(spec: SweepSpec, text: str | None) -> Callable[[PlannedRun], bool] | None:
    """The runs `--rerun` selects: None for none; "all" (or "") for every run; otherwise a
    comma-separated list of `AXIS=LABEL`, `point=N` and `rep=N` conditions, all of which a run
    must meet (labels as the results table shows them, e.g. "batch=50,rep=0")."""
    if text is None:
        return None
    if text.strip() in ("", "all"):
        return lambda run: True
    axes = {axis.name: [v.label for v in axis.values] for axis in spec.axes}
    conditions: list[tuple[str, str]] = []
    for part in text.split(","):
        name, sep, label = (x.strip() for x in part.partition("="))
        if not sep or not name or not label:
            raise SweepError(f"--rerun: {part.strip()!r} is not NAME=VALUE (NAME: an axis "
                             f"({', '.join(axes) or 'none'}), point or rep; or 'all')")
        if name in ("point", "rep"):
            if not label.isdigit():
                raise SweepError(f"--rerun: {name} expects a whole number, got {label!r}")
        elif name not in axes:
            raise SweepError(f"--rerun: {name!r} is not an axis of {spec.name} (axes: "
                             f"{', '.join(axes) or 'none'}; or point, rep)")
        elif label not in axes[name]:
            raise SweepError(f"--rerun: {label!r} is not a value of axis {name} (values: "
                             f"{', '.join(axes[name])})")
        conditions.append((name, label))

    def selects(run: PlannedRun) -> bool:
        labels = dict(run.point.labels)
        for name, label in conditions:
            value = (str(run.point.index) if name == "point" else str(run.rep) if name == "rep"
                     else labels.get(name))
            if value != label:
                return False
        return True

    return selects


__all__ = ["BackendError", "Failure", "SweepSummary", "parse_rerun", "run_sweep"]
