"""A sweep under process faults: its driver or a worker killed with SIGKILL.

The processes of a sweep are found in /proc as descendants of the driver (Linux only). Every
wait is a poll with a generous bound that ends as soon as its condition holds; none measures
how fast anything is.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import descendants, proc_cmdline, proc_stat, spawned_workers
from multiconn import load
from multiconn.sweep.results import export

pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)"),
]

ROOT = Path(__file__).resolve().parents[2]
BULK = ROOT / "examples" / "scenarios" / "bulk.toml"
BOUND_S = 120.0
"""How long a poll may wait for what it waits for (far more than it needs)."""

# Runs of a few seconds each (QUIC at 200 Mbit/s for minutes of virtual time), so that a
# sweep is caught with runs in flight.
LONG_RUNS = '''
[set]
"run.duration" = "100 s"
"run.bin" = "1 s"
"link.bottleneck.rate" = "200 Mbit/s"
"flow.bulk.transport" = "quic"

[params]
"link.bottleneck.delay" = ["5 ms", "10 ms", "20 ms", "30 ms"]
'''

# The "failing" variant's runs raise an error of their own, the same way every time they run
# (FAILING_HOOK makes them: a run that fails by itself, not by its worker's death).
WITH_A_FAILING_POINT = LONG_RUNS + '''
[[axis]]
name = "case"
[[axis.variant]]
label = "quic"
set = {}
[[axis.variant]]
label = "failing"
set = { "flow.bulk.transport" = "udp", "link.bottleneck.loss" = "0.123 %" }
'''

FAILING_HOOK = '''
"""Test hook, loaded by every interpreter of the sweep (driver and spawned workers): a run
with the override link.bottleneck.loss = 0.123 % raises RuntimeError in the simulator's place."""
import multiconn.runner as _runner

_simulate = _runner.simulate


def _failing_simulate(source, seed, overrides, *args, **kwargs):
    if ("link.bottleneck.loss", "0.123 %") in [tuple(o) for o in overrides]:
        raise RuntimeError("a run that fails by itself")
    return _simulate(source, seed, overrides, *args, **kwargs)


_runner.simulate = _failing_simulate
'''


def failing_env(folder: Path) -> dict[str, str]:
    """The environment of a sweep whose "failing" runs raise (FAILING_HOOK as sitecustomize)."""
    hooks = folder / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(FAILING_HOOK)
    paths = [str(hooks), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def write_sweep(folder: Path, body: str) -> Path:
    path = folder / "faults.toml"
    path.write_text(f'[experiment]\nname = "faults"\nscenario = "{BULK}"\nrepetitions = 1\n'
                    + body)
    return path


def sweep_command(path: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "multiconn", "sweep", str(path), "--out", str(out),
            "--jobs", "2", *extra]


# --- processes, from /proc ------------------------------------------------------------------

def alive(pid: int, started: int) -> bool:
    """Whether that process still runs (a zombie has ended: it waits only to be reaped)."""
    stat = proc_stat(pid)
    return stat is not None and stat[2] == started and stat[0] not in ("Z", "X")


def wait_for(condition, what: str):
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        if (value := condition()):
            return value
        time.sleep(0.005)
    raise AssertionError(f"waited {BOUND_S:.0f} s for {what}")


def end_all(processes: dict[int, int]) -> None:
    """Kills what is left of the processes this test started (an orphan the code under test
    left behind must not outlive the test). A resource tracker goes last, given time to end by
    itself once the others have, so that it removes the semaphores it holds."""
    trackers = {p: s for p, s in processes.items() if "resource_tracker" in proc_cmdline(p)}
    for pid, started in processes.items():
        if pid not in trackers and alive(pid, started):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(alive(p, s) for p, s in trackers.items()) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid, started in trackers.items():
        if alive(pid, started):
            os.kill(pid, signal.SIGKILL)


# --- the tests ------------------------------------------------------------------------------

def test_kill_9_of_the_driver_ends_every_process_of_the_sweep(tmp_path):
    driver = subprocess.Popen(sweep_command(write_sweep(tmp_path, LONG_RUNS), tmp_path / "out",
                                            "--quiet"), start_new_session=True)
    seen: dict[int, int] = {}
    try:
        wait_for(lambda: len(spawned_workers(driver.pid)) >= 2 or driver.poll() is not None,
                 "two workers")
        seen = descendants(driver.pid)
        assert driver.poll() is None, "the sweep ended before it could be killed"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + BOUND_S
        while any(alive(p, s) for p, s in seen.items()) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = {pid: proc_cmdline(pid) for pid, started in seen.items() if alive(pid, started)}
        assert not left, f"{len(left)} of the sweep's {len(seen)} processes outlived its " \
                         f"driver: {left}"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        end_all(seen)


def _runs(out: Path) -> list[tuple]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute("SELECT run_key, ok, seed, scenario_json, summary_json, error, "
                          "failure FROM runs ORDER BY run_key").fetchall()


@pytest.mark.slow
def test_a_run_whose_worker_was_killed_runs_again_on_a_plain_resume(tmp_path):
    path = write_sweep(tmp_path, WITH_A_FAILING_POINT)
    out, whole = tmp_path / "killed", tmp_path / "whole"
    env = failing_env(tmp_path)
    seen: dict[int, int] = {}
    with subprocess.Popen(sweep_command(path, out, "--json"), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True,
                          env=env) as sweep:
        try:
            # Kill a worker once the pool has both: the pool breaks, and the driver runs each
            # run it had in flight alone in a fresh worker; kill the first of those too (as
            # the OOM killer would, twice), so that its run is recorded as crashed.
            first = wait_for(lambda: len(found := spawned_workers(sweep.pid)) >= 2 and found,
                             "the pool's two workers")
            seen |= descendants(sweep.pid)
            os.kill(min(first), signal.SIGKILL)
            second = wait_for(lambda: spawned_workers(sweep.pid) - set(seen), "a worker of a fresh pool")
            seen |= descendants(sweep.pid)
            os.kill(min(second), signal.SIGKILL)
            stdout, stderr = sweep.communicate(timeout=600)
        finally:
            if sweep.poll() is None:
                sweep.kill()
            end_all(seen)
    assert sweep.returncode == 3, stderr
    first_summary = json.loads(stdout)
    errors = [f["error"].split(":")[0] for f in first_summary["failures"]]
    assert errors.count("WorkerCrashed") == 1, errors
    assert errors.count("RuntimeError") in (3, 4), errors  # the crash may be a "lost" run
    assert all("running the sweep again runs it again" in f["error"]
               for f in first_summary["failures"] if f["error"].startswith("WorkerCrashed"))

    resumed = subprocess.run(sweep_command(path, out, "--json"), capture_output=True, text=True,
                             env=env)
    assert resumed.returncode == 3, resumed.stderr  # the deterministic failures stay
    summary = json.loads(resumed.stdout)
    assert (summary["ran"], summary["rerun_crashed"], summary["already_done"]) == (1, 1, 7)
    assert sorted(f["error"].split(":")[0] for f in summary["failures"]) == ["RuntimeError"] * 4

    subprocess.run(sweep_command(path, whole, "--quiet"), capture_output=True, check=False, env=env)
    assert _runs(out) == _runs(whole)
    assert export(load(out), "csv", None) == export(load(whole), "csv", None)

    # A failure the run raised itself is deterministic: a plain resume leaves it, a resume
    # with --retry-failed runs it (and it fails again, the same way).
    again = json.loads(subprocess.run(sweep_command(path, out, "--json"), capture_output=True,
                                      text=True, env=env).stdout)
    assert (again["ran"], again["already_done"]) == (0, 8)
    retried = json.loads(subprocess.run(sweep_command(path, out, "--json", "--retry-failed"),
                                        capture_output=True, text=True, env=env).stdout)
    assert (retried["ran"], retried["failed"]) == (4, 4)
    assert _runs(out) == _runs(whole)


def test_where_the_kernel_cannot_be_asked_a_worker_ends_by_watching_its_parent(tmp_path):
    # A "driver" starts a "worker" that binds itself to it with the kernel's help switched
    # off, then the driver is killed: the worker's watch thread must end it.
    worker = ("import os, sys, time\n"
              "from multiconn.sweep import backends\n"
              "backends._kill_on_parent_death = lambda: False\n"
              "backends.bind_to_driver(os.getppid())\n"
              "print('bound', flush=True)\n"
              "time.sleep(600)\n")
    driver_code = ("import subprocess, sys, time\n"
                   f"child = subprocess.Popen([sys.executable, '-c', {worker!r}])\n"
                   "print(child.pid, flush=True)\n"
                   "time.sleep(600)\n")
    driver = subprocess.Popen([sys.executable, "-c", driver_code], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    seen: dict[int, int] = {}
    try:
        assert driver.stdout is not None
        pid = int(driver.stdout.readline())
        wait_for(lambda: pid in descendants(driver.pid), "the worker")
        seen = descendants(driver.pid)
        assert driver.stdout.readline().strip() == "bound"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        wait_for(lambda: not alive(pid, seen[pid]), "the worker to end")
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        driver.stdout.close()
        end_all(seen)
