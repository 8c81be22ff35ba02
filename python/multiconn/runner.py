"""`run` and `validate`: the Python entry points to the simulator.

A run is advanced in chunks that end at a step of virtual time (1/200 of the time limit, at
least 10 ms) or after `EVENT_BUDGET` events, whichever comes first; each chunk runs in Rust
with the GIL released, and between two chunks the progress bar moves and a Ctrl-C is taken.
A run that fires many events per unit of virtual time thus still shows progress and stops
within one budget of events; how a run is cut never changes its results.

Before a run starts, `run` estimates its events from its rates (`Simulation.event_estimate`,
documented in the native crate's `estimate` module: a packet per event where a source sends
it and at each link direction it crosses); beyond `EVENT_WARNING` it warns
(`LongRunWarning`, and a line in the summary's `warnings`) naming the flow and the link
that fire the most.
"""

from __future__ import annotations

import json
import math
import time
import warnings as _warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._native import core
from .errors import InvariantViolation, LongRunWarning, PcapLimitWarning, RunStalled
from .frame import NativeColumn, NativeTable, native_columns
from .result import RunResult, with_wall_time
from .source import OverridesLike, ScenarioLike, normalize_overrides, resolve_source

STEPS = 200
"""Number of chunks a run with a finite time limit is split into."""
MIN_STEP_S = 0.01
"""Smallest chunk of virtual time, in seconds."""
OPEN_ENDED_STEP_S = 1.0
"""Chunk used when the run has no practical time limit (every flow stops by size)."""
UNCHUNKED_STEP_S = 3600.0
"""Chunk of an unchunked run without a finite time limit."""
OPEN_ENDED_S = 1e9
"""Time limits beyond this (about 30 years) count as no limit."""
EVENT_BUDGET = 500_000
"""The most events a chunk fires before control comes back to Python (a fraction of a second
at the simulator's few million events a second)."""
EVENT_WARNING = 1e9
"""Runs whose estimated events exceed this are warned about before they start."""
EVENTS_PER_S = 2e6
"""A rough rate of events per second of wall time, to say what an estimate means in time."""


def _check_seed(seed: int | None) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be between 0 and 2**64 - 1, not {seed}")
    return seed


def pcap_overrides(pcap: bool | str | Sequence[str] | None,
                   pcap_max_mb: float | None) -> list[tuple[str, str]]:
    """The `--set` pairs that switch packet captures on: `run.pcap` (True: every flow; a
    filter: names such as "bulk", "flow:bulk", "link:bottleneck"; a comma-separated string
    is split) and `run.pcap_max_mb`."""
    pairs: list[tuple[str, str]] = []
    if isinstance(pcap, str):
        pcap = [part.strip() for part in pcap.split(",") if part.strip()]
    if pcap is True or pcap is False:
        pairs.append(("run.pcap", "true" if pcap else "false"))
    elif pcap is not None:
        names = list(pcap)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"pcap must be True, False or a list of names, not {pcap!r}")
        pairs.append(("run.pcap", json.dumps(names)))
    if pcap_max_mb is not None:
        if isinstance(pcap_max_mb, bool) or not isinstance(pcap_max_mb, (int, float)):
            raise TypeError(f"pcap_max_mb must be a number, not {pcap_max_mb!r}")
        pairs.append(("run.pcap_max_mb", repr(float(pcap_max_mb))))
    return pairs


def _step(end_time_s: float) -> float:
    if not math.isfinite(end_time_s) or end_time_s > OPEN_ENDED_S:
        return OPEN_ENDED_STEP_S
    return max(end_time_s / STEPS, MIN_STEP_S)


def long_run_warning(estimate: Sequence[tuple[float, str, str]]) -> str | None:
    """The warning for a run whose estimated events (`Simulation.event_estimate`: parts
    as (events, who, how counted), largest first) exceed `EVENT_WARNING`; None otherwise.
    Names the flow and the link direction that fire the most."""
    total = sum(events for events, _, _ in estimate)
    if total <= EVENT_WARNING:
        return None
    named = []
    for kind in ("flow", "link"):
        part = next((p for p in estimate if p[1].startswith(kind)), None)
        if part is not None:
            named.append(f"{part[1]} ~{part[0]:.1e} ({part[2]})")
    hours = total / EVENTS_PER_S / 3600
    return (f"this run implies about {total:.1e} events (~{hours:.1f} h at "
            f"{EVENTS_PER_S:.0e} events/s), from {' and '.join(named)}; a shorter "
            "run.duration, lower rates or larger packets make it shorter")


def validate(scenario: ScenarioLike, overrides: OverridesLike = None) -> dict[str, Any]:
    """Loads and checks a scenario (trace files included); returns the resolved scenario.

    Raises `ScenarioError` with a one-line message when the scenario is not valid.
    """
    source = resolve_source(scenario)
    pairs = normalize_overrides(overrides)
    resolved = core().validate(source.text, source.origin, source.base_dir, pairs)
    return json.loads(resolved)


def warnings(scenario: ScenarioLike, overrides: OverridesLike = None) -> list[str]:
    """Settings of a valid scenario that are often not what was meant, one line each (e.g. a
    link-level rate trace that also throttles the reverse direction). Raises `ScenarioError`
    when the scenario is not valid."""
    source = resolve_source(scenario)
    return list(core().warnings(source.text, source.origin, source.base_dir,
                                normalize_overrides(overrides)))


def run(
    scenario_or_path: ScenarioLike,
    seed: int | None = None,
    overrides: OverridesLike = None,
    progress: bool = False,
    stall_limit: int | None = None,
    check_invariants: bool | None = None,
    pcap: bool | str | Sequence[str] | None = None,
    pcap_max_mb: float | None = None,
) -> RunResult:
    """Runs a scenario to its end and returns its summary and time series.

    `scenario_or_path` is a path to a TOML file, a TOML string or a dict; `seed` overrides the
    scenario's seed; `overrides` maps dotted keys (`"link.bottleneck.rate"`) to values, like the
    CLI's `--set`. With `progress=True`, a progress bar appears on stderr once the run has
    lasted about a second. Raises `ScenarioError` for an invalid scenario, and `RunStalled`
    (with the results up to that instant) when virtual time stops advancing for
    `stall_limit` events (default: the core's, 20 million) at one instant. With
    `check_invariants=True` the invariant checker watches the run (docs/invariants.md) and
    raises `InvariantViolation` at the first broken rule; `None` leaves it to the environment
    variable `MULTICONN_CHECK_INVARIANTS` (on when `1`). It never changes the results.

    `pcap=True` (or a filter such as `["bulk", "link:bottleneck"]`) writes a pcapng capture
    per flow end into `result.pcap` (docs/pcap.md), like `run.pcap` in the scenario; `pcap_max_mb`
    limits each file (default 64). A file that reached its limit is named in
    `result.pcap_warnings` and in a `PcapLimitWarning`. Captures never change the results.
    """
    started = time.perf_counter()
    overrides = [*normalize_overrides(overrides), *pcap_overrides(pcap, pcap_max_mb)]
    finished = simulate(scenario_or_path, seed, overrides, progress=progress,
                        stall_limit=stall_limit, check_invariants=check_invariants,
                        warn_long=True)
    wall_time_s = time.perf_counter() - started
    summary = with_wall_time(json.loads(finished.summary_json), wall_time_s)
    if finished.long_run is not None:
        summary["warnings"] = [*summary.get("warnings", []), finished.long_run]
    if finished.stalled is not None:
        summary["incomplete"] = finished.stalled
    result = RunResult(
        summary=summary,
        timeseries=NativeTable(finished.columns),
        scenario=json.loads(finished.scenario_json),
        qlog=dict(finished.qlog),
        messages=NativeTable(finished.messages, messages=True) if finished.messages else None,
        pcap=dict(finished.pcap),
        pcap_warnings=finished.pcap_warnings,
    )
    for line in finished.pcap_warnings:
        _warnings.warn(line, PcapLimitWarning, stacklevel=2)
    if finished.stalled is not None:
        raise RunStalled(finished.stalled, result)
    return result


@dataclass(frozen=True)
class Finished:
    """A finished run as the native side hands it over (no DataFrame built yet)."""

    summary_json: str
    columns: dict[str, NativeColumn]
    """The time series: typed buffers, one `NativeColumn` per column, in order."""
    scenario_json: str
    qlog: list[tuple[str, str]]
    messages: dict[str, NativeColumn]
    """The message table's columns as `columns` (empty without message flows)."""
    stalled: str | None = None
    """Why the watchdog stopped the run early, if it did (the results are then partial)."""
    pcap: list[tuple[str, bytes]] = field(default_factory=list)
    """Packet captures (`run.pcap`): file name and bytes."""
    pcap_warnings: list[str] = field(default_factory=list)
    """One line per capture file that reached its size limit."""
    long_run: str | None = None
    """The warning of `long_run_warning`, when it was asked for and applies."""


def simulate(
    scenario_or_path: ScenarioLike,
    seed: int | None = None,
    overrides: OverridesLike = None,
    progress: bool = False,
    chunked: bool = True,
    stall_limit: int | None = None,
    check_invariants: bool | None = None,
    event_budget: int | None = None,
    warn_long: bool = False,
) -> Finished:
    """Runs a scenario and returns the native results. `chunked=False` runs it in one call
    (no progress bar, no Ctrl-C until it ends): the cheapest way, used by sweep workers.
    A chunked run returns to Python after at most `event_budget` events (default
    `EVENT_BUDGET`), or at its next step of virtual time. With `warn_long`, a run whose
    estimated events exceed `EVENT_WARNING` issues a `LongRunWarning` before it starts.
    Raises `InvariantViolation` when the invariant checker (see `run`) finds a broken rule."""
    from .progress import RunProgress  # rich loads only when the bar appears

    source = resolve_source(scenario_or_path)
    pairs = normalize_overrides(overrides)
    seed = _check_seed(seed)
    sim = core().Simulation(source.text, source.origin, source.base_dir, pairs, seed)
    if stall_limit is not None:
        sim.set_stall_limit(stall_limit)
    if check_invariants is not None:
        sim.set_check_invariants(check_invariants)
    long_run = long_run_warning(sim.event_estimate) if warn_long else None
    if long_run is not None:
        _warnings.warn(long_run, LongRunWarning, stacklevel=3)
    if event_budget is not None and (isinstance(event_budget, bool)
                                     or not isinstance(event_budget, int) or event_budget < 1):
        raise ValueError(f"event_budget must be a whole number ≥ 1, not {event_budget!r}")
    budget = (event_budget or EVENT_BUDGET) if chunked else None
    end = sim.end_time_s
    step = _step(end) if chunked else (end if math.isfinite(end) else UNCHUNKED_STEP_S)
    total = end if step != OPEN_ENDED_STEP_S else None
    with RunProgress(total, enabled=progress and chunked) as bar:
        target = 0.0
        done = sim.done
        while not done:
            target = min(target + step, end)
            while True:
                # Up to the target, in calls of at most `budget` events: a call that fired
                # fewer reached it.
                before = sim.events
                done = sim.run_until(target, budget)
                bar.update(sim.now_s, sim.events)
                if done or budget is None or sim.events - before < budget:
                    break
            if target >= end:
                break
    violation = sim.violation
    if violation is not None:
        raise InvariantViolation(violation)
    stalled = sim.stalled
    summary_json, columns, qlog, messages = sim.finish()
    pcap, pcap_warnings = sim.take_pcap()
    return Finished(summary_json, native_columns(columns), sim.scenario_json, list(qlog),
                    native_columns(messages), stalled, list(pcap), list(pcap_warnings),
                    long_run)
