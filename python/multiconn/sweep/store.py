"""The results store of an output directory: SQLite (`results.sqlite`) beside Parquet files.

Tables:

* `experiments`: each sweep registered in the directory, with its spec as JSON (reports need
  nothing but the directory);
* `plan`: one row per (experiment, point, repetition): seed, axis values, overrides, run key;
* `runs`: one row per run key — the record of a finished run (summary JSON or error), its
  wall time and, when the sweep keeps time series, `timeseries/<run_key>.parquet`. A failed
  run's `failure` says how it failed: `error` (the run raised: deterministic, it would fail
  again) or `crash` (its worker process died under it: a resumed sweep runs it again).

Beside the rows, a run with a message table (app = "messages" flows) has it in
`messages/<run_key>.parquet` (the columns of `RunResult.messages`).

Durability: the database runs in WAL mode and every finished run is committed on its own, so
killing the sweep at any moment (kill -9 included) loses no committed run; a run's Parquet
files are written (atomically) before its row, so a committed row never points to a missing
file. `run_key` is the primary key: a run is recorded once, whatever the number of resumes.
Only the process driving the sweep writes; readers may open the store at any time.

Schema 2 added `runs.failure`. A store of schema 1 is read as it is and brought to schema 2
when a sweep opens it to write: its failed runs become errors, except those whose error says
that their worker crashed (`WorkerCrashed: ...`), which become crashes.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import StoreError
from .execute import Outcome
from .plan import PlannedRun
from .spec import SweepSpec

DB_FILE = "results.sqlite"
TIMESERIES_DIR = "timeseries"
MESSAGES_DIR = "messages"
SCHEMA_VERSION = "2"
READS_SCHEMAS = ("1", "2")
"""Store schemas this multiconn reads (it writes only SCHEMA_VERSION, upgrading a store of
schema 1 when it opens it to write)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS experiments (
    name      TEXT PRIMARY KEY,
    spec_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS plan (
    experiment     TEXT NOT NULL,
    point          INTEGER NOT NULL,
    rep            INTEGER NOT NULL,
    seed           INTEGER NOT NULL,
    run_key        TEXT NOT NULL,
    values_json    TEXT NOT NULL,
    labels_json    TEXT NOT NULL,
    overrides_json TEXT NOT NULL,
    PRIMARY KEY (experiment, point, rep)
);
CREATE INDEX IF NOT EXISTS plan_by_run ON plan (run_key);
CREATE TABLE IF NOT EXISTS runs (
    run_key       TEXT PRIMARY KEY,
    ok            INTEGER NOT NULL,
    seed          INTEGER NOT NULL,
    version       TEXT NOT NULL,
    scenario_json TEXT NOT NULL,
    summary_json  TEXT,
    error         TEXT,
    timeseries    TEXT,
    wall_time_s   REAL NOT NULL,
    failure       TEXT
);
"""


class Recorded(NamedTuple):
    """What the store holds of a run, as a resumed sweep needs it."""

    ok: bool
    has_timeseries: bool
    crashed: bool
    """It failed because its worker process died, not by an error of its own."""


@dataclass(frozen=True)
class RunRecord:
    """A plan row joined with its run record (when the run has finished)."""

    experiment: str
    point: int
    rep: int
    seed: int
    run_key: str
    values: dict[str, Any]
    labels: dict[str, str]
    overrides: list[tuple[str, str]]
    ok: bool | None
    """True or False once the run finished; None while it is pending."""
    summary: dict[str, Any] | None
    error: str | None
    scenario_json: str | None
    timeseries: str | None
    wall_time_s: float | None


class Store:
    """An open results store. Use as a context manager, or call `close()`."""

    def __init__(self, folder: str | os.PathLike[str], create: bool = True) -> None:
        self.folder = Path(folder)
        path = self.folder / DB_FILE
        if not create and not path.is_file():
            raise StoreError(f"'{self.folder}' holds no results (no {DB_FILE}); run "
                             "`multiconn sweep FILE --out DIR` first")
        try:
            if create:
                self.folder.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, timeout=60)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the results store in '{self.folder}': {exc}") from exc
        self.path = path
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # durable across a killed process
            if create:
                self._db.executescript(SCHEMA)  # idempotent (IF NOT EXISTS)
                with self._transaction():
                    self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)",
                                     (SCHEMA_VERSION,))
            row = self._schema()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"'{path}' is not a results store ({exc}): move it away, or give "
                             "another results folder") from exc
        if row not in READS_SCHEMAS:
            self._db.close()
            found = "no schema" if row is None else f"store schema {row}"
            raise StoreError(f"'{path}' has {found}; this multiconn reads store schemas "
                             f"{' and '.join(READS_SCHEMAS)}")
        if create and row != SCHEMA_VERSION:
            self._upgrade()

    def _schema(self) -> str | None:
        if not self._has_table("meta"):
            return None
        row = self._db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
        return None if row is None else str(row[0])

    def _upgrade(self) -> None:
        """Brings a store of schema 1 to schema 2 (see the module header), once, whichever of
        several sweeps opening it at the same time comes first."""
        with self._transaction():
            if self._schema() != "1":
                return
            self._db.execute("ALTER TABLE runs ADD COLUMN failure TEXT")
            self._db.execute("UPDATE runs SET failure = CASE WHEN error LIKE 'WorkerCrashed:%' "
                             "THEN 'crash' ELSE 'error' END WHERE ok = 0")
            self._db.execute("UPDATE meta SET value = ? WHERE name = 'schema'",
                             (SCHEMA_VERSION,))

    def _has_table(self, name: str) -> bool:
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                                (name,)).fetchone() is not None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write, all or nothing; a write the database refuses (a full disk, a store
        damaged underneath) is a StoreError naming the store, with nothing half written."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (a full disk does).
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot write into '{self.path}': {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -----------------------------------------------------------------------

    def register(self, spec: SweepSpec, runs: Iterable[PlannedRun]) -> None:
        """Records the experiment and its plan, replacing an earlier plan of the same name."""
        rows = [
            (spec.name, r.point.index, r.rep, r.task.seed, r.task.run_key,
             json.dumps(dict(r.point.values)), json.dumps(dict(r.point.labels)),
             json.dumps(r.point.overrides))
            for r in runs
        ]
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO experiments VALUES (?, ?)",
                             (spec.name, json.dumps(spec.to_dict())))
            self._db.execute("DELETE FROM plan WHERE experiment = ?", (spec.name,))
            self._db.executemany("INSERT INTO plan VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def finished_keys(self) -> dict[str, bool]:
        """Run key -> whether that run succeeded, for every recorded run."""
        return {k: recorded.ok for k, recorded in self.recorded().items()}

    def recorded(self) -> dict[str, Recorded]:
        """Run key -> what is recorded of it, for every recorded run (of a store of schema 2,
        which a store opened to write is)."""
        return {k: Recorded(bool(ok), series is not None, failure == "crash")
                for k, ok, series, failure in
                self._db.execute("SELECT run_key, ok, timeseries, failure FROM runs")}

    def record(self, outcome: Outcome, seed: int, version: str, scenario_json: str) -> None:
        """Stores a finished run (its time series and message table first, then its row, in
        one commit)."""
        series_name = None
        if outcome.timeseries is not None:
            series_name = f"{TIMESERIES_DIR}/{outcome.run_key}.parquet"
            _atomic_write_bytes(self.folder / series_name, outcome.timeseries)
        if outcome.messages is not None:
            _atomic_write_bytes(self.folder / MESSAGES_DIR / f"{outcome.run_key}.parquet",
                                outcome.messages)
        failure = None if outcome.ok else "crash" if outcome.crashed else "error"
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO runs (run_key, ok, seed, version, scenario_json, "
                "summary_json, error, timeseries, wall_time_s, failure) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (outcome.run_key, int(outcome.ok), seed, version, scenario_json,
                 outcome.summary_json, outcome.error, series_name, outcome.wall_time_s,
                 failure))

    # --- reading -----------------------------------------------------------------------

    def experiments(self) -> list[SweepSpec]:
        """The registered experiments, by name."""
        specs = []
        for name, text in self._db.execute(
                "SELECT name, spec_json FROM experiments ORDER BY name"):
            try:
                specs.append(SweepSpec.from_dict(json.loads(text)))
            except (KeyError, TypeError, ValueError) as exc:
                raise StoreError(f"the stored spec of experiment {name!r} in '{self.folder}' "
                                 f"cannot be read by this multiconn ({type(exc).__name__}: "
                                 f"{exc}); run the sweep again into a new folder") from exc
        return specs

    def records(self, experiment: str | None = None,
                finished_only: bool = True) -> list[RunRecord]:
        """Plan rows with their run records, ordered by experiment, point and repetition."""
        join = "JOIN" if finished_only else "LEFT JOIN"
        where, args = ("WHERE p.experiment = ?", (experiment,)) if experiment else ("", ())
        query = f"""
            SELECT p.experiment, p.point, p.rep, p.seed, p.run_key, p.values_json,
                   p.labels_json, p.overrides_json, r.ok, r.summary_json, r.error,
                   r.scenario_json, r.timeseries, r.wall_time_s
            FROM plan p {join} runs r ON r.run_key = p.run_key {where}
            ORDER BY p.experiment, p.point, p.rep"""
        return [
            RunRecord(
                experiment=row[0], point=row[1], rep=row[2], seed=row[3], run_key=row[4],
                values=json.loads(row[5]), labels=json.loads(row[6]),
                overrides=[tuple(pair) for pair in json.loads(row[7])],
                ok=None if row[8] is None else bool(row[8]),
                summary=None if row[9] is None else json.loads(row[9]),
                error=row[10], scenario_json=row[11], timeseries=row[12], wall_time_s=row[13],
            )
            for row in self._db.execute(query, args)
        ]

    def counts(self, experiment: str) -> tuple[int, int, int]:
        """(planned, succeeded, failed) runs of an experiment."""
        row = self._db.execute(
            """SELECT COUNT(*), COALESCE(SUM(r.ok = 1), 0), COALESCE(SUM(r.ok = 0), 0)
               FROM plan p LEFT JOIN runs r ON r.run_key = p.run_key
               WHERE p.experiment = ?""", (experiment,)).fetchone()
        return int(row[0]), int(row[1]), int(row[2])


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    """Writes `path` whole or not at all; a write the system refuses (a full disk) is a
    StoreError naming the file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise StoreError(f"cannot write '{path}': {exc.strerror or exc}") from exc
    except BaseException:
        _remove(tmp)
        raise


def _remove(path: Path) -> None:
    """Removes a half-written file, if there is one to remove."""
    with suppress(OSError):
        path.unlink(missing_ok=True)
