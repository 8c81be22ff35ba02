"""The catalogue's regression net: every run of every catalogue experiment's quick version,
and every example scenario, gives byte-identical results to the committed snapshot.

Each run is recorded by digests of its summary (wall time removed), its time-series columns
and its message table, with each flow's goodput beside them so that a diff reads. When a
change is meant to alter results, regenerate the snapshot and say why in the commit:

    MULTICONN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/python/test_catalog_snapshot.py
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from multiconn import __version__
from multiconn.runner import simulate
from multiconn.source import ScenarioSource
from multiconn.sweep import catalog
from multiconn.sweep.plan import plan

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).parent / "snapshots" / "catalog_quick.json"
EXAMPLES = sorted((ROOT / "examples" / "scenarios").glob("*.toml"))
SHARED_TRACES = ROOT.parent / "shared" / "data" / "traces"
"""Real public traces beside the repository; examples that read them are checked only when
they are there (a clone elsewhere has none)."""


def _needs_absent_traces(path: Path) -> bool:
    return "shared/data/traces" in path.read_text() and not SHARED_TRACES.is_dir()


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain(values: Any) -> list[Any]:
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _record(finished: Any) -> dict[str, Any]:
    summary = json.loads(finished.summary_json)
    summary.pop("wall_time_s", None)
    return {
        "summary": _digest(summary),
        "series": _digest([[name, _plain(values)] for name, values in finished.columns.items()]),
        "messages": _digest([[name, _plain(values)] for name, values in finished.messages.items()]),
        "events": summary["events"],
        "goodput_mbps": [f["goodput_mbps"] for f in summary["flows"]],
    }


def _runs() -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for entry in catalog.entries():
        spec = entry.spec.quick_version()
        seen = set()
        for run in plan(spec, __version__):
            if run.task.run_key in seen:
                continue
            seen.add(run.task.run_key)
            task = run.task
            labels = ",".join(f"{k}={v}" for k, v in run.point.labels)
            finished = simulate(ScenarioSource(task.scenario_text, task.origin, task.base_dir),
                                task.seed, list(task.overrides), chunked=False)
            records[f"{entry.name} [{labels}] rep {run.rep}"] = _record(finished)
    for path in EXAMPLES:
        if not _needs_absent_traces(path):
            records[f"examples/{path.name}"] = _record(simulate(str(path), None, None, chunked=False))
    return records


@pytest.mark.slow
def test_catalogue_quick_runs_and_examples_match_the_snapshot() -> None:
    records = _runs()
    if os.environ.get("MULTICONN_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    expected = json.loads(SNAPSHOT.read_text())
    skipped = {f"examples/{p.name}" for p in EXAMPLES if _needs_absent_traces(p)}
    expected = {name: record for name, record in expected.items() if name not in skipped}
    changed = [name for name in sorted(set(records) | set(expected))
               if records.get(name) != expected.get(name)]
    detail = "\n".join(f"{n}: {expected.get(n)} -> {records.get(n)}" for n in changed[:10])
    assert not changed, f"{len(changed)} of {len(expected)} runs changed:\n{detail}"
