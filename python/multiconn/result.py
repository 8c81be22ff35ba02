"""`RunResult`: what a run returns, and how it is written to an output folder.

Files: `summary.json`, `timeseries.parquet`, `scenario.json`, on request `timeseries.csv`,
`messages.parquet` (and on request `messages.csv`) when flows send messages (app =
"messages"), `qlog/<flow>_<client|server>.sqlog` for QUIC flows with `qlog = true`, and
`pcap/<flow>_<node>.pcapng` with `run.pcap` (docs/pcap.md). Each is written to a temporary name then renamed, so an interrupted write
never leaves a half file behind. Only `wall_time_s` in summary.json differs between two runs of
the same scenario and seed.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import RunFolderError
from .frame import NativeTable, write_csv, write_parquet

if TYPE_CHECKING:
    import pandas as pd

SUMMARY_FILE = "summary.json"
QLOG_DIR = "qlog"
PCAP_DIR = "pcap"
TIMESERIES_FILE = "timeseries.parquet"
TIMESERIES_CSV_FILE = "timeseries.csv"
SCENARIO_FILE = "scenario.json"
MESSAGES_FILE = "messages.parquet"
MESSAGES_CSV_FILE = "messages.csv"


MOBILITY_EVENTS_FILE = "mobility_events.csv"
"""The UEs' handover and radio-link events of a run with a cell layout (docs/mobility.md)."""


def mobility_events_csv(summary: Mapping[str, Any]) -> str | None:
    """One row per event of every UE of every cell with a layout (time, cell section, UE node,
    position, event, source, target, cell, interruption), in time order; `None` when the run
    has no such cell."""
    rows = []
    for cell in summary.get("cells") or []:
        if "layout_cells" not in cell:
            continue
        for ue in cell.get("ues") or []:
            for e in ue.get("events") or []:
                rows.append((e["t_s"], cell["name"], ue["node"], e["x_m"], e["y_m"], e["event"],
                             e.get("source", ""), e.get("target", ""), e.get("cell", ""),
                             e.get("interruption_ms", "")))
    if not any("layout_cells" in c for c in summary.get("cells") or []):
        return None
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    head = "t_s,cell,ue,x_m,y_m,event,source,target,serving_cell,interruption_ms\n"
    return head + "".join(",".join(str(v) for v in r) + "\n" for r in rows)


def with_wall_time(summary: dict[str, Any], wall_time_s: float) -> dict[str, Any]:
    """A copy of `summary` with `wall_time_s` right after `events` (at the end if absent)."""
    result: dict[str, Any] = {}
    for key, value in summary.items():
        if key != "wall_time_s":
            result[key] = value
        if key == "events":
            result["wall_time_s"] = wall_time_s
    result.setdefault("wall_time_s", wall_time_s)
    return result


def json_text(value: Any) -> str:
    """Indented UTF-8 JSON with a final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=True) + "\n"


def _write_text(text: str) -> Callable[[Path], None]:
    return lambda p: p.write_text(text, encoding="utf-8", newline="\n")


def _write_bytes(data: bytes) -> Callable[[Path], None]:
    return lambda p: p.write_bytes(data)


class RunResult:
    """The outcome of one run.

    * `summary`: the run's summary (flows, links, fairness, seed, `wall_time_s`, ...);
    * `timeseries`: one row per (time bin, flow or link direction);
    * `scenario`: the resolved scenario, after overrides;
    * `qlog`: for QUIC flows with `qlog = true`, file name -> qlog text (JSON-SEQ), written
      into the `qlog/` folder;
    * `pcap`: with `run.pcap`, file name -> pcapng bytes, one per captured flow end, written
      into the `pcap/` folder; `pcap_warnings`: one line per file that reached
      `run.pcap_max_mb` (its later packets are not in it);
    * `messages`: with app = "messages" flows, one row per message (flow, source, kind,
      stream, msg_id, size, sent_s, received_s: NaN if it never arrived), the input of
      `multiconn.messages`; else `None`.

    The tables may be given as DataFrames or as the core's columns (`NativeTable`); the
    DataFrames are then built on first access, so writing a result never needs pandas.
    """

    __slots__ = ("_messages", "_timeseries", "pcap", "pcap_warnings", "qlog", "scenario",
                 "summary")

    def __init__(self, summary: dict[str, Any], timeseries: pd.DataFrame | NativeTable,
                 scenario: dict[str, Any], qlog: dict[str, str] | None = None,
                 messages: pd.DataFrame | NativeTable | None = None,
                 pcap: dict[str, bytes] | None = None,
                 pcap_warnings: list[str] | None = None) -> None:
        self.summary = summary
        self.scenario = scenario
        self.qlog = dict(qlog or {})
        self.pcap = dict(pcap or {})
        self.pcap_warnings = list(pcap_warnings or [])
        self._timeseries = timeseries
        self._messages = messages

    @property
    def timeseries(self) -> pd.DataFrame:
        """One row per (time bin, entity): see docs/cli.md for the columns."""
        if isinstance(self._timeseries, NativeTable):
            self._timeseries = self._timeseries.frame()
        return self._timeseries

    @property
    def messages(self) -> pd.DataFrame | None:
        """One row per message of the message flows, or None without such flows."""
        if isinstance(self._messages, NativeTable):
            self._messages = self._messages.frame()
        return self._messages

    def __repr__(self) -> str:
        return (f"RunResult(scenario={self.summary.get('scenario')!r}, "
                f"seed={self.summary.get('seed')!r}, flows={len(self.summary.get('flows', []))})")

    def write(self, out_dir: str | os.PathLike[str], csv: bool = False) -> list[Path]:
        """Writes the result files into `out_dir` (created if missing); returns their paths.

        All or nothing: the files are first written into a staging folder inside `out_dir`,
        and only once every one of them is complete are they renamed into place (a rename
        needs no space). A write that fails (a full disk) leaves `out_dir` as it was, never a
        new summary beside an older run's scenario."""
        if not str(out_dir).strip():
            raise ValueError("the results folder is empty: give a folder, e.g. --out out/run1")
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".writing-", dir=folder))
        staged: list[str] = []
        try:
            self._write_files(staging, csv, staged)
            for name in staged:
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / name, folder / name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return [folder / name for name in staged]

    def _write_files(self, folder: Path, csv: bool, written: list[str]) -> None:
        """Writes every result file into `folder`, appending each name to `written`."""

        def put(name: str, write: Callable[[Path], None]) -> None:
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path)
            os.chmod(path, 0o644)
            written.append(name)

        put(SUMMARY_FILE, _write_text(json_text(self.summary)))
        put(TIMESERIES_FILE, lambda p: write_parquet(self._timeseries, p))
        if csv:
            put(TIMESERIES_CSV_FILE, lambda p: write_csv(self._timeseries, p))
        put(SCENARIO_FILE, _write_text(json_text(self.scenario)))
        if self._messages is not None:
            messages = self._messages
            put(MESSAGES_FILE, lambda p: write_parquet(messages, p))
            if csv:
                put(MESSAGES_CSV_FILE, lambda p: write_csv(messages, p))
        events = mobility_events_csv(self.summary)
        if events is not None:
            put(MOBILITY_EVENTS_FILE, _write_text(events))
        if self.qlog:
            for name, text in self.qlog.items():
                put(f"{QLOG_DIR}/{name}", _write_text(text))
        if self.pcap:
            for name, data in self.pcap.items():
                put(f"{PCAP_DIR}/{name}", _write_bytes(data))

    @classmethod
    def read(cls, run_dir: str | os.PathLike[str]) -> RunResult:
        """The result a run wrote into `run_dir` (by `multiconn run` or `write`): its
        summary, time series, scenario, messages and qlog files.

        Raises RunFolderError naming the file that is missing or unreadable."""
        return read_run(run_dir)

    def plot(self, out_dir: str | os.PathLike[str],
             formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:
        """Draws the run's standard figures into `out_dir` (see `multiconn.plot`); returns
        the files written."""
        from .plot import plot_run

        return [path for figure in plot_run(self, out_dir, formats) for path in figure.files]


def read_run(run_dir: str | os.PathLike[str]) -> RunResult:
    """See `RunResult.read`."""
    import pandas as pd

    folder = Path(run_dir)
    if not folder.is_dir():
        raise RunFolderError(f"{folder}: not a folder (expected the --out folder of "
                             "`multiconn run`)")
    summary = _read_json(folder / SUMMARY_FILE)
    scenario_path = folder / SCENARIO_FILE
    scenario = _read_json(scenario_path) if scenario_path.exists() else {}
    timeseries = _read_parquet(folder / TIMESERIES_FILE, pd)
    messages_path = folder / MESSAGES_FILE
    messages = _read_parquet(messages_path, pd) if messages_path.exists() else None
    qlog_dir = folder / QLOG_DIR
    qlog = ({p.name: p.read_text(encoding="utf-8") for p in sorted(qlog_dir.iterdir())}
            if qlog_dir.is_dir() else {})
    return RunResult(summary=summary, timeseries=timeseries, scenario=scenario, qlog=qlog,
                     messages=messages)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFolderError(f"{path}: missing (a run folder holds summary.json, "
                             "timeseries.parquet and scenario.json)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunFolderError(f"{path}: unreadable: {exc}") from None
    if not isinstance(value, dict):
        raise RunFolderError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


def _read_parquet(path: Path, pd: Any) -> pd.DataFrame:
    if not path.exists():
        raise RunFolderError(f"{path}: missing (a run folder holds summary.json, "
                             "timeseries.parquet and scenario.json)")
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise RunFolderError(f"{path}: not a readable Parquet file: {exc}") from None
