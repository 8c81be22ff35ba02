"""Where a sweep's runs execute: local worker processes, or a Dask cluster.

Both backends take run tasks and yield outcomes as runs finish, keeping a bounded number of
runs in flight so that a sweep of any size uses constant memory. The outcomes themselves do
not depend on the backend (runs are deterministic), so both fill the store identically.

* `local`: a process pool over `jobs` workers (default: all cores). Workers start by
  forkserver, so the driver's threads (progress bar) are never forked. A worker that dies
  (a crash in native code) fails the pool; its runs are retried once in a fresh pool, then
  recorded as failed.
* `dask`: `dask.distributed` — a LocalCluster of `jobs` single-threaded worker processes, or
  the scheduler at `--scheduler ADDRESS` (a Slurm or Kubernetes cluster started with
  dask-jobqueue or dask-kubernetes; every worker needs multiconn installed).
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .execute import Outcome, execute
from .plan import RunTask

BACKENDS = ("local", "dask")
IN_FLIGHT_PER_WORKER = 4


class BackendError(RuntimeError):
    """The backend cannot start (Dask not installed, scheduler unreachable, ...)."""


def default_jobs() -> int:
    """All cores this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


def _crashed(task: RunTask, exc: BaseException) -> Outcome:
    return Outcome(task.run_key, False, None,
                   f"WorkerCrashed: the worker process died during this run ({exc})", 0.0)


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers,
                               mp_context=multiprocessing.get_context("forkserver"))


def run_local(tasks: Iterable[RunTask], jobs: int,
              on_start: Callable[[str], None] | None = None) -> Iterator[Outcome]:
    """Runs tasks on `jobs` local processes; yields outcomes in completion order."""
    queue = deque(tasks)
    if on_start is not None:
        on_start(f"{jobs} local worker process{'es' if jobs != 1 else ''}")
    while queue:
        suspects = yield from _drain(queue, jobs)
        for task in suspects:  # the pool broke: find the culprit by running each alone
            yield _run_alone(task)


def _drain(queue: deque[RunTask], workers: int) -> Generator[Outcome, None, list[RunTask]]:
    """Feeds a pool from `queue` until it is empty; returns the runs in flight if the pool
    broke."""
    pool = _pool(workers)
    in_flight: dict[Future[Outcome], RunTask] = {}
    try:
        while queue or in_flight:
            while queue and len(in_flight) < workers * IN_FLIGHT_PER_WORKER:
                task = queue.popleft()
                in_flight[pool.submit(execute, task)] = task
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    return list(in_flight.values())
                del in_flight[future]
                yield outcome
        return []
    finally:
        pool.shutdown(wait=not in_flight, cancel_futures=True)


def _run_alone(task: RunTask) -> Outcome:
    with _pool(1) as pool:
        try:
            return pool.submit(execute, task).result()
        except BrokenProcessPool as exc:
            return _crashed(task, exc)


def run_dask(tasks: Iterable[RunTask], jobs: int, scheduler: str | None,
             on_start: Callable[[str], None] | None = None) -> Iterator[Outcome]:
    """Runs tasks on a Dask cluster; yields outcomes in completion order."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise BackendError("the dask backend needs dask.distributed: "
                           "pip install 'multiconn[dask]'") from exc
    cluster: Any = None
    try:
        if scheduler:
            client = Client(scheduler, timeout="20s")
            where = f"Dask scheduler {scheduler}"
        else:
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40)
            client = Client(cluster)
            where = f"Dask LocalCluster of {jobs} worker{'s' if jobs != 1 else ''}"
    except (OSError, TimeoutError) as exc:
        if cluster is not None:
            cluster.close()
        raise BackendError(f"cannot reach the Dask scheduler {scheduler!r}: {exc}") from exc
    try:
        if on_start is not None:
            on_start(where)
        slots = max(sum(client.nthreads().values()), 1) * IN_FLIGHT_PER_WORKER
        queue = list(tasks)
        queue.reverse()
        stream = as_completed()
        for _ in range(min(slots, len(queue))):
            stream.add(client.submit(execute, queue.pop(), pure=False))
        for future in stream:
            yield future.result()
            future.release()
            if queue:
                stream.add(client.submit(execute, queue.pop(), pure=False))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
