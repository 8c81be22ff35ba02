"""The catalogue's regression net: every run of every catalogue experiment's quick version,
and every example scenario, gives byte-identical results to the committed snapshot.

Each run is recorded by digests of its summary (wall time and the event count, which measure
its cost, removed; the count is kept beside them), its time-series columns
and its message table, with each flow's goodput beside them so that a diff reads. These
digests cover the outputs as they were when the net was first committed: the time series'
flow and link rows in their first 19 columns (`BASE_COLUMNS`, `BASE_KINDS`) and the summary
without the keys added since (`ADDED_SUMMARY_KEYS`); so they also prove that later additions
left those untouched. A separate digest, `added`, covers what was added: the rows of other
kinds (path, leg, bearer), the columns after the first 19, the added summary keys and the
added message-table columns (`ADDED_MESSAGE_COLUMNS`). The
LTE cell's rows and columns (`CELL_KIND`, `CELL_COLUMNS`) came later still: runs without a
cell must leave those columns empty (checked), and runs with one get their own digest,
`cell`, so the earlier digests of every run stay as they were. When a change is meant to
alter results, regenerate the snapshot and say why in the commit. Every run has the invariant
checker on (docs/invariants.md): a broken rule fails the test, and since the snapshot holds
the digests of runs without it, matching them also shows that the checker leaves results
byte-identical. To regenerate:

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


BASE_COLUMNS = (
    "time_s", "kind", "name", "direction", "bytes_delivered", "throughput_mbps", "drops_queue",
    "drops_random_loss", "drops_link_down", "drops_udp_buffer", "drops_pdcp_late",
    "drops_pdcp_window", "queue_packets", "queue_bytes", "cwnd_bytes", "bytes_in_flight",
    "srtt_ms", "retransmissions", "spurious_retransmissions",
)
"""The time-series columns the net was first committed with, in order."""

BASE_KINDS = ("flow", "link")
"""The time-series row kinds the net was first committed with."""

CELL_KIND = "cell"
"""The time-series rows of an LTE cell's UEs."""

CELL_COLUMNS = (
    "ue", "sinr_db", "cqi", "mcs", "rbs_per_tti", "tbs", "tb_errors", "tbs_new",
    "tb_errors_first", "tbs_lost", "rlc_buffer_max_bytes", "rlc_buffer_bytes",
)
"""The time-series columns of the cell rows, empty (NaN, 0 or "") on every other row."""

ADDED_SUMMARY_KEYS = ("per_leg", "drops_data", "drops_ack", "fair_share_mbps", "normalised", "fairness",
                      "disabled_flows", "sender", "receiver", "endpoints", "warnings", "timely_efficiency",
                      "received_mbps")
"""Summary keys added since the net was first committed (removed wherever they occur)."""

ADDED_MESSAGE_COLUMNS = ("expired_s",)
"""Message-table columns added since the net was first committed (in the `added` digest)."""


def _without_added_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_added_keys(v) for k, v in value.items() if k not in ADDED_SUMMARY_KEYS}
    if isinstance(value, list):
        return [_without_added_keys(v) for v in value]
    return value


def _added_values(value: Any) -> list[Any]:
    """The values of the keys of `ADDED_SUMMARY_KEYS`, in document order."""
    if isinstance(value, dict):
        return [v for k, item in value.items()
                for v in ([item] if k in ADDED_SUMMARY_KEYS else _added_values(item))]
    if isinstance(value, list):
        return [v for item in value for v in _added_values(item)]
    return []


def _base_series(columns: dict[str, Any]) -> list[list[Any]]:
    """The flow and link rows of the first 19 columns, as the net first recorded them."""
    keep = [kind in BASE_KINDS for kind in _plain(columns["kind"])]
    return [[name, [v for v, k in zip(_plain(values), keep) if k]]
            for name, values in columns.items() if name in BASE_COLUMNS]


def _added_series(columns: dict[str, Any]) -> list[list[Any]]:
    """What `_base_series` leaves out, before the cell: the other rows (cell rows aside) of
    the first 19 columns, and those rows and the flow and link rows of the columns after
    them (the cell's columns aside)."""
    kinds = _plain(columns["kind"])
    keep = [kind != CELL_KIND for kind in kinds]
    added = [kind not in BASE_KINDS for kind in kinds]
    return [[name, [v for v, a, k in zip(_plain(values), added, keep)
                    if k and (a or name not in BASE_COLUMNS)]]
            for name, values in columns.items() if name not in CELL_COLUMNS]


def _cell_series(columns: dict[str, Any]) -> list[list[Any]] | None:
    """The cell rows in every column, or None for a run without a cell (whose cell columns
    must then be empty)."""
    cell = [kind == CELL_KIND for kind in _plain(columns["kind"])]
    if not any(cell):
        for name in CELL_COLUMNS:
            values = _plain(columns[name])
            assert all(v in ("", 0) or v != v for v in values), f"{name} has values outside cell rows"
        return None
    return [[name, [v for v, c in zip(_plain(values), cell) if c]]
            for name, values in columns.items()]


def _record(finished: Any) -> dict[str, Any]:
    summary = json.loads(finished.summary_json)
    summary.pop("wall_time_s", None)
    cell = _cell_series(finished.columns)
    return {
        **({} if cell is None else {"cell": _digest(cell)}),
        "added": _digest([_added_values(summary), _added_series(finished.columns),
                          [[name, _plain(values)] for name, values in finished.messages.items()
                           if name in ADDED_MESSAGE_COLUMNS]]),
        "summary": _digest(_without_added_keys({k: v for k, v in summary.items() if k != "events"})),
        "series": _digest(_base_series(finished.columns)),
        "messages": _digest([[name, _plain(values)] for name, values in finished.messages.items()
                             if name not in ADDED_MESSAGE_COLUMNS]),
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
                                task.seed, list(task.overrides), chunked=False,
                                check_invariants=True)
            records[f"{entry.name} [{labels}] rep {run.rep}"] = _record(finished)
    for path in EXAMPLES:
        if not _needs_absent_traces(path):
            records[f"examples/{path.name}"] = _record(simulate(str(path), None, None, chunked=False,
                                                                check_invariants=True))
    return records


def _results(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """A run's record without its event count: how many events a run takes is its cost, not
    its result (the count stays in the snapshot, where a change in cost shows in the diff)."""
    return None if record is None else {k: v for k, v in record.items() if k != "events"}


@pytest.mark.slow
def test_catalogue_quick_runs_and_examples_match_the_snapshot() -> None:
    records = _runs()
    if os.environ.get("MULTICONN_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    expected = json.loads(SNAPSHOT.read_text())
    skipped = {f"examples/{p.name}" for p in EXAMPLES if _needs_absent_traces(p)}
    expected = {name: record for name, record in expected.items() if name not in skipped}
    changed = [name for name in sorted(set(records) | set(expected))
               if _results(records.get(name)) != _results(expected.get(name))]
    detail = "\n".join(f"{n}: {expected.get(n)} -> {records.get(n)}" for n in changed[:10])
    assert not changed, f"{len(changed)} of {len(expected)} runs changed:\n{detail}"
