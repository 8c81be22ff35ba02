"""Where a sweep's runs execute: local worker processes, or a Dask cluster.

Both backends take run tasks and yield outcomes as runs finish, keeping a bounded number of
runs in flight so that a sweep of any size uses constant memory. The outcomes themselves do
not depend on the backend (runs are deterministic), so both fill the store identically.

* `local`: a process pool over `jobs` workers (default: all cores). Workers are spawned (a
  fresh interpreter each, which imports the worker code once), so the driver's threads
  (progress bar) are never forked, and each is the driver's own child: it asks the kernel to
  kill it when the driver ends (`bind_to_driver`), so a driver killed in any way, kill -9
  included, leaves no worker behind. (A fork server would stand between them: the kernel
  could not tie a worker to the driver, and the server itself lives as long as any worker.)
  multiprocessing's resource tracker, which holds the pool's semaphores, ends once the driver
  and its workers have (its pipe then closes), after removing them. A worker that dies (a
  crash in native code, a kill from outside) fails the pool; its runs are retried once in a
  fresh pool, then recorded as crashed (`Outcome.crashed`), which a resumed sweep runs again.
  A pool that finished its sweep is kept for the next sweep of the same process (a command
  that runs several sweeps, such as `multiconn studies` or `reproduce 'dc-*'`, starts its
  workers once): only while nothing a spawned worker takes from its driver has changed (the
  working directory, `sys.path`, the environment, the process itself) and for at most
  `IDLE_POOL_S` seconds (a notebook that ran one sweep does not keep idle workers, and the
  memory of their last runs, for the rest of the session); any other pool is shut down first,
  and one that broke or was left with runs in flight is never reused.
* `dask`: `dask.distributed` — a LocalCluster of `jobs` single-threaded worker processes, or
  the scheduler at `--scheduler ADDRESS` (a Slurm or Kubernetes cluster started with
  dask-jobqueue or dask-kubernetes; every worker needs multiconn installed).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ..errors import BackendError
from .execute import Outcome, execute, execute_batch
from .plan import RunTask

BACKENDS = ("local", "dask", "emulate")
IN_FLIGHT_PER_WORKER = 3
"""Batches queued per worker, so that no worker waits for the driver."""
TARGET_BATCH_S = 0.05
"""Work per batch: short runs are sent in batches, so each round trip carries ~50 ms."""
MAX_BATCH = 64
IDLE_POOL_S = 30.0
"""How long a local pool waits for the next sweep of its process before its workers end."""


class Batcher:
    """Cuts the queue into batches sized from the runs' mean duration so far.

    The first batches hold one run each; once runs are seen to be short, batches grow to
    about TARGET_BATCH_S of work, but never so large that the workers would run out of
    batches before the queue ends.
    """

    def __init__(self, tasks: Iterable[RunTask], slots: int) -> None:
        self.queue = deque(tasks)
        self.slots = max(slots, 1)
        self._runs = 0
        self._seconds = 0.0

    def observe(self, outcomes: list[Outcome]) -> None:
        self._runs += len(outcomes)
        self._seconds += sum(o.wall_time_s for o in outcomes)

    def next_batch(self) -> list[RunTask]:
        size = 1
        if self._runs:
            mean = max(self._seconds / self._runs, 1e-6)
            size = int(min(max(TARGET_BATCH_S / mean, 1), MAX_BATCH))
            size = max(1, min(size, len(self.queue) // self.slots))
        return [self.queue.popleft() for _ in range(min(size, len(self.queue)))]


def default_jobs() -> int:
    """All cores this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


def _crashed(task: RunTask, exc: BaseException) -> Outcome:
    return Outcome(task.run_key, False, None,
                   "WorkerCrashed: the worker process died during this run, in a pool and again "
                   f"alone ({exc}); running the sweep again runs it again", 0.0, crashed=True)


PR_SET_PDEATHSIG = 1
"""prctl(2): the signal the kernel sends this process when its parent ends (Linux)."""
WATCH_PARENT_S = 1.0
"""Where the kernel cannot be asked, how often a worker checks that its driver still runs."""


def bind_to_driver(driver: int) -> None:
    """Runs first in every local worker: the worker ends when the driver (its parent, pid
    `driver`) ends, however it ends. On Linux the kernel sends it SIGKILL then
    (PR_SET_PDEATHSIG), even in the middle of a run in native code; elsewhere a daemon thread
    polls the parent's pid. A driver that ended before this call is seen at once: the worker
    has been reparented."""
    if not _kill_on_parent_death():
        threading.Thread(target=_watch_parent, args=(driver,), name="multiconn-driver-watch",
                         daemon=True).start()
    if os.getppid() != driver:
        os._exit(1)


def _kill_on_parent_death() -> bool:
    """Asks the kernel for SIGKILL when the parent ends; False where it cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):  # no libc to load, or no prctl in it
        return False


def _watch_parent(driver: int) -> None:
    while os.getppid() == driver:
        time.sleep(WATCH_PARENT_S)
    os._exit(1)


def _pool(workers: int) -> ProcessPoolExecutor:
    # Spawned, not forked: the workers are the driver's children, with no thread of its own.
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=bind_to_driver, initargs=(os.getpid(),))


_PoolKey = tuple[int, int, str, tuple[str, ...], tuple[tuple[str, str], ...]]
_idle_pools: dict[_PoolKey, tuple[ProcessPoolExecutor, threading.Timer]] = {}
_idle_lock = threading.Lock()


def _pool_key(workers: int) -> _PoolKey:
    """What a spawned worker takes from its driver when it starts: a pool is reused only
    where all of it is unchanged (and never in a forked child, whose pools are its parent's)."""
    return (os.getpid(), workers, os.getcwd(), tuple(sys.path), tuple(sorted(os.environ.items())))


def _take_pool(workers: int) -> tuple[ProcessPoolExecutor, _PoolKey]:
    """The idle pool a finished sweep of this process left for these workers, or a new one
    (any other idle pool of this process is shut down: at most one waits)."""
    key = _pool_key(workers)
    with _idle_lock:
        if any(k[0] != key[0] for k in _idle_pools):  # inherited through fork: not ours
            _idle_pools.clear()
        kept = _idle_pools.pop(key, None)
        for other, timer in _idle_pools.values():
            timer.cancel()
            other.shutdown(wait=False)
        _idle_pools.clear()
    if kept is None:
        return _pool(workers), key
    pool, timer = kept
    timer.cancel()
    return pool, key


def _give_back(pool: ProcessPoolExecutor, key: _PoolKey) -> None:
    """Keeps a pool whose sweep ended with nothing in flight for the next sweep, for
    `IDLE_POOL_S` seconds."""
    timer = threading.Timer(IDLE_POOL_S, _retire, args=(key, pool))
    timer.daemon = True
    with _idle_lock:
        previous = _idle_pools.pop(key, None)
        _idle_pools[key] = (pool, timer)
    timer.start()
    if previous is not None:  # another thread's sweep gave one back first
        previous[1].cancel()
        previous[0].shutdown(wait=False)


def _retire(key: _PoolKey, pool: ProcessPoolExecutor) -> None:
    """Ends an idle pool that no sweep took in time."""
    with _idle_lock:
        kept = _idle_pools.get(key)
        if kept is None or kept[0] is not pool:
            return
        del _idle_pools[key]
    pool.shutdown(wait=False)


def run_emulated(tasks: Iterable[RunTask],
                 on_start: Callable[[str], None] | None = None) -> Iterator[Outcome]:
    """Runs tasks in the emulator, one at a time (each in real time, with the machine to
    itself); yields outcomes in order."""
    from .execute import execute_emulated

    if on_start is not None:
        on_start("the emulator, one run at a time in real time")
    for task in tasks:
        yield execute_emulated(task)


def run_local(tasks: Iterable[RunTask], jobs: int,
              on_start: Callable[[str], None] | None = None) -> Iterator[Outcome]:
    """Runs tasks on `jobs` local processes; yields outcomes in completion order."""
    batcher = Batcher(tasks, jobs * IN_FLIGHT_PER_WORKER)
    if on_start is not None:
        on_start(f"{jobs} local worker process{'es' if jobs != 1 else ''}")
    while batcher.queue:
        suspects = yield from _drain(batcher, jobs)
        for task in suspects:  # the pool broke: find the culprit by running each alone
            yield _run_alone(task)


def _drain(batcher: Batcher, workers: int) -> Generator[Outcome, None, list[RunTask]]:
    """Feeds a pool until the queue is empty; returns the runs in flight if the pool broke.
    A pool left with nothing in flight is given back for the next sweep; one that broke, or
    whose sweep stopped with runs in flight, is shut down."""
    pool, key = _take_pool(workers)
    in_flight: dict[Future[list[Outcome]], list[RunTask]] = {}
    broken = False
    try:
        while batcher.queue or in_flight:
            while batcher.queue and len(in_flight) < workers * IN_FLIGHT_PER_WORKER:
                batch = batcher.next_batch()
                try:
                    in_flight[pool.submit(execute_batch, batch)] = batch
                except BrokenProcessPool:  # a worker of a kept pool died while it waited
                    broken = True
                    batcher.queue.extendleft(reversed(batch))  # never started: not suspects
                    return [task for queued in in_flight.values() for task in queued]
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    outcomes = future.result()
                except BrokenProcessPool:
                    broken = True
                    return [task for batch in in_flight.values() for task in batch]
                del in_flight[future]
                batcher.observe(outcomes)
                yield from outcomes
        return []
    finally:
        if in_flight or broken:
            pool.shutdown(wait=not in_flight, cancel_futures=True)
        else:
            _give_back(pool, key)


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
        batcher = Batcher(tasks, slots)
        stream = as_completed()
        for _ in range(slots):
            if batcher.queue:
                stream.add(client.submit(execute_batch, batcher.next_batch(), pure=False))
        for future in stream:
            outcomes = future.result()
            future.release()
            batcher.observe(outcomes)
            yield from outcomes
            if batcher.queue:
                stream.add(client.submit(execute_batch, batcher.next_batch(), pure=False))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
