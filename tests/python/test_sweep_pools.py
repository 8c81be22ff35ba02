"""The local backend keeps its worker pool between the sweeps of one process
(multiconn.sweep.backends): a second sweep runs on the first one's workers, a changed
environment gets new workers and never leaves the old ones behind, a worker that died
between two sweeps costs no run, and workers that no sweep takes in time end.

Workers are found in /proc as this process's spawned children (Linux only). Every wait is a
poll with a generous bound that ends as soon as its condition holds.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, spawned_workers
from multiconn.sweep import backends
from multiconn.sweep.backends import run_local
from multiconn.sweep.plan import RunTask

pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)"),
]

BULK = EXAMPLES / "bulk.toml"
BOUND_S = 60.0


def tasks(count: int) -> list[RunTask]:
    """`count` one-second TCP transfers over bulk.toml, each with its own seed."""
    return [RunTask(run_key=f"run{i}", experiment="pools", point=i, rep=0, seed=i + 1,
                    scenario_text=BULK.read_text(), origin=str(BULK), base_dir=str(BULK.parent),
                    overrides=(("run.duration", "1 s"), ("flow.bulk.transport", "tcp")),
                    keep_timeseries=False)
            for i in range(count)]


def sweep(count: int = 8) -> list[tuple[str, bool, bool, str | None]]:
    """The outcomes of a sweep on two local workers, in run order (wall times left out)."""
    return sorted((o.run_key, o.ok, o.crashed, o.summary_json) for o in run_local(tasks(count), 2))


def workers() -> set[int]:
    """This process's living spawned worker processes."""
    return spawned_workers(os.getpid())


def settled_workers(count: int) -> set[int]:
    """The workers once exactly `count` are left (shut-down pools' workers take a moment to
    end)."""
    deadline = time.monotonic() + BOUND_S
    while (found := workers()) and len(found) != count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(found) == count, f"{len(found)} workers, expected {count}: {sorted(found)}"
    return found


def test_a_second_sweep_runs_on_the_workers_of_the_first() -> None:
    first = sweep()
    assert all(ok and not crashed for _, ok, crashed, _ in first)
    before = settled_workers(2)
    second = sweep()
    assert workers() == before
    assert second == first


def test_a_changed_environment_gets_new_workers_and_ends_the_old(monkeypatch) -> None:
    first = sweep()
    before = settled_workers(2)
    # A worker takes its environment when it starts: a pool started before the change must
    # not run the next sweep.
    monkeypatch.setenv("MULTICONN_TEST_POOL_GENERATION", "2")
    second = sweep()
    after = settled_workers(2)
    assert not after & before
    assert second == first


def test_a_worker_killed_between_sweeps_costs_no_run() -> None:
    first = sweep()
    before = settled_workers(2)
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + BOUND_S
    while victim in workers() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = sweep()
    assert second == first  # every run ran, none recorded as crashed
    assert not settled_workers(2) & before


def test_workers_that_no_sweep_takes_in_time_end(monkeypatch) -> None:
    monkeypatch.setattr(backends, "IDLE_POOL_S", 0.5)
    first = sweep()
    settled_workers(0)  # kept for the next sweep, which does not come in time
    assert sweep() == first
