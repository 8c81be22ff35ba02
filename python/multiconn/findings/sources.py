"""Where our values come from: catalogue experiments and the multi-operator downloads.

A finding names an `experiment`: a catalogue entry (run through the sweep machinery into
`OUT/catalogue`, one store for all of them) or `drive-residential` / `drive-road` (the
multi-operator study's download experiment, `multiconn.downloads`, into `OUT/<segment>`).
Each gives a DataFrame with one row per run (and flow), whose columns the findings select on.
`check` verifies, before anything runs, that every experiment, column, label and metric a
list names exists. `--quick` keeps only the points the findings read and takes each entry's
`[quick]` repetitions and settings, and 6 start offsets for the downloads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import FindingsError
from .listing import DRIVE_SOURCES, Finding, Study

if TYPE_CHECKING:
    import pandas as pd

    from ..sweep.spec import SweepSpec

DRIVE_COLUMNS = {"stack": ("bbr", "cubic", "fast", "reno", "mptcp"),
                 "case": ("sp", "1", "2", "3", "4")}
DRIVE_METRICS = ("goodput_mbps", "mp_capacity_mbps", "sp_capacity_mbps", "mp_share_pct",
                 "sp_share_pct", "completion_s", "handovers")
SHARES = {"mp_share_pct": "mp_capacity_mbps", "sp_share_pct": "sp_capacity_mbps"}
"""Shares of a capacity: 100 · mean goodput / mean capacity over the selected runs, as the
study's tables divide."""
QUICK_OFFSETS = 6
RUN_LEVEL = ("jain_fairness", "normalised_jain", "min_normalised")


def _spec(name: str, where: str = "") -> SweepSpec:
    from ..sweep.catalog import find
    from ..sweep.spec import SweepError

    try:
        return find(name).spec
    except SweepError as exc:
        raise FindingsError(f"{where}: experiment: {exc}" if where else str(exc)) from None


def _columns(finding: Finding) -> Iterable[tuple[str, str]]:
    for selection in finding.selections():
        yield from selection
    if finding.over is not None:
        column, labels = finding.over
        for item in labels:
            yield column, item


def check(studies: Iterable[Study]) -> None:
    """Refuses, naming the finding and the field, any experiment, column, label or metric
    that does not exist."""
    from ..sweep.spec import DEFAULT_FLOW_METRICS, RUN_METRICS

    for study in studies:
        for f in study.findings:
            where = f"{study.id} finding {f.id}"
            if f.experiment in DRIVE_SOURCES:
                known = {k: set(v) for k, v in DRIVE_COLUMNS.items()}
                metrics = set(DRIVE_METRICS)
            else:
                spec = _spec(f.experiment, where)
                known = {a.name: {v.label for v in a.values} for a in spec.axes}
                known["flow"] = set()          # any flow name: checked when the rows come
                metrics = {*spec.metrics, *DEFAULT_FLOW_METRICS, *RUN_METRICS}
            if f.metric not in metrics:
                raise FindingsError(f"{where}: metric {f.metric!r} is not a result of "
                                    f"{f.experiment} (its metrics: {', '.join(sorted(metrics))})")
            for column, item in _columns(f):
                if column not in known:
                    raise FindingsError(f"{where}: column {column!r} is not an axis of "
                                        f"{f.experiment} (its columns: {', '.join(sorted(known))})")
                if known[column] and item not in known[column]:
                    raise FindingsError(f"{where}: {column} = {item!r} is not a value of "
                                        f"{f.experiment} (its values: "
                                        f"{', '.join(sorted(known[column]))})")


def needed_labels(findings: Iterable[Finding]) -> dict[str, dict[str, set[str]]]:
    """Per catalogue experiment, per axis, the labels the findings read."""
    out: dict[str, dict[str, set[str]]] = {}
    for f in findings:
        if f.experiment in DRIVE_SOURCES:
            continue
        axes = out.setdefault(f.experiment, {})
        for column, item in _columns(f):
            if column != "flow":
                axes.setdefault(column, set()).add(item)
    return out


def quick_spec(spec: SweepSpec, keep: dict[str, set[str]]) -> SweepSpec:
    """The entry's `[quick]` repetitions and settings over the points the findings read: an
    axis a finding names keeps those labels (the axes zipped with it follow), others keep the
    entry's quick values."""
    full = spec.quick_version()
    quick_keep = dict(spec.quick.values) if spec.quick else {}
    groups = []
    for group in spec.groups:
        indices = list(range(len(group[0].values)))
        for axis in group:
            labels = keep.get(axis.name)
            if labels is None and axis.name in quick_keep:
                labels = set(quick_keep[axis.name])
            if labels is not None:
                indices = [i for i in indices if axis.values[i].label in labels]
        groups.append(tuple(replace(a, values=tuple(a.values[i] for i in indices)) for a in group))
    return replace(full, groups=tuple(groups))


def catalogue_frames(findings: list[Finding], out: Path, quick: bool, jobs: int | None,
                     say: Callable[[str], None]) -> dict[str, pd.DataFrame]:
    """Runs every catalogue experiment the findings name (resuming what `out` holds) and
    returns each one's results."""
    from ..sweep.driver import run_sweep
    from ..sweep.results import load

    frames = {}
    store = out / ("catalogue-quick" if quick else "catalogue")
    for name, keep in sorted(needed_labels(findings).items()):
        spec = _spec(name)
        if quick:
            spec = quick_spec(spec, keep)
        runs = spec.point_count * spec.repetitions
        say(f"{name}: {runs} runs")
        summary = run_sweep(spec, store, jobs=jobs, progress=sys.stderr.isatty())
        if summary.failed:
            say(f"{name}: {summary.failed} runs failed; their points are left out")
        frame = load(store, name)
        frames[name] = _labelled(frame[frame["status"] == "ok"].copy(), spec)
    return frames


def _labelled(frame: pd.DataFrame, spec: SweepSpec) -> pd.DataFrame:
    """The axis columns as the labels findings name (`1 %`, not 1.0)."""
    for axis in spec.axes:
        if axis.numeric and axis.name in frame.columns:
            labels = {float(v.value): v.label for v in axis.values}
            frame[axis.name] = [labels.get(float(x), str(x)) for x in frame[axis.name]]
    return frame


def drive_frames(findings: list[Finding], out: Path, quick: bool, jobs: int | None,
                 testbed: str, say: Callable[[str], None]) -> dict[str, pd.DataFrame]:
    """Runs the download experiment of each segment the findings name."""
    from .. import downloads
    from ..testbeds import testbed as bundle

    frames = {}
    for source in sorted({f.experiment for f in findings if f.experiment in DRIVE_SOURCES}):
        segment = source.removeprefix("drive-")
        options = {"testbed": bundle(testbed)}
        if quick:
            options["offsets_s"] = downloads.offsets(QUICK_OFFSETS)
        experiment = downloads.Experiment.for_segment(segment, **options)
        say(f"{source}: {len(experiment.stacks) * len(experiment.cases) * len(experiment.offsets_s)}"
            f" downloads")
        runs = downloads.run(experiment, out / (segment + ("-quick" if quick else "")), jobs=jobs,
                             progress=sys.stderr.isatty())
        runs = runs[runs["completed"]].copy()
        for share, capacity in SHARES.items():
            runs[share] = 100 * runs["goodput_mbps"] / runs[capacity]
        runs["case"] = runs["case"].astype(str)
        frames[source] = runs
    return frames
