"""Drive tests for the multi-operator study: read, generate and analyse per-second RSRP tables.

    >>> from multiconn import drive
    >>> table = drive.generate("residential", seed=1, duration_s=600)
    >>> result = drive.analyse(table, load=0.1)
    >>> result.mean_available            # the study's Table 2
    >>> result.table3                    # the study's Table 3: level x mean, median, p20, ...
    >>> result.capacities.head()         # per second: counts, levels, each channel's capacity

A drive table is the long format of the reference's §5.2, one row per visible cell per
second: `time_s` (whole seconds), `operator`, `earfcn` (the carrier), `cell_id`, `rsrp_dbm`
and optionally `x_m`, `y_m`, `speed_mps`. The estimation itself (available cells, SINR,
capacity, aggregation levels, statistics) is `multiconn-radio`'s, through the native module;
docs/multi-operator.md describes it.

Data that gives capacities directly (the 5Gophers car-driving traces: per-second throughput
of three carriers at once, no RSRP) is read into a channel table, one row per carrier per
second: `time_s`, `operator`, `earfcn`, `capacity_mbps` (`read_5gophers`), and analysed with
`analyse_capacities`: the same levels and statistics, a channel being available where its
capacity is above 0.

Bad tables raise `DriveTableError` (a ValueError) with one line naming the file, the row
(row 1 is the first row under the header, line 2 of a CSV file) and the column.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DriveTableError

if TYPE_CHECKING:
    import pandas as pd

REQUIRED_COLUMNS = ("time_s", "operator", "earfcn", "cell_id", "rsrp_dbm")
OPTIONAL_COLUMNS = ("x_m", "y_m", "speed_mps")
SUMMARY_COLUMNS = ("mean", "median", "p20", "p10", "p5", "p1", "p0.1")
"""The columns of the study's Table 3."""
INTERFERENCE = ("all_visible", "same_carrier")
GNETTRACK_HOLD_S = 2
"""Seconds a G-NetTrack cell keeps its last value (the logger skips up to 2 s at a time)."""
GNETTRACK_EARFCN = 0
"""G-NetTrack files have no EARFCN: every cell of an operator is put on this one carrier."""
GNETTRACK_NEIGHBOUR = "neighbour"
"""The cell id given to G-NetTrack's unnamed neighbour cell (`NRxRSRP`)."""
GNETTRACK_MISSING = ("", "-", "2147483647", "2147483647.0")
CHANNEL_COLUMNS = ("time_s", "operator", "earfcn", "capacity_mbps")
"""The columns of a channel table (capacities given directly, one row per carrier per second)."""
FIVEGOPHERS_COLUMNS = ("protocol", "num_tcp_conn", "seq_num")
FIVEGOPHERS_SUFFIX = "_throughput_mbps"
"""A 5Gophers mobility trace has one `<carrier>_throughput_mbps` column per carrier."""
FIVEGOPHERS_EARFCN = 0
"""5Gophers traces name no frequency channel: each carrier (operator) is one channel on this."""
MAX_SPAN_S = 1_000_000
"""The longest time span (seconds) a drive or channel table may cover (11.6 days): the
analysis keeps every second of it, about a second of work per 10^6 seconds."""
EARTH_RADIUS_M = 6_371_000.0


def _core() -> Any:
    from ._native import core

    return core()


def _native_error(exc: Exception, where: str) -> DriveTableError:
    return DriveTableError(f"{where}: {exc}" if where else str(exc))


# -- reading --------------------------------------------------------------------------------


def _whole(value: str) -> int | None:
    try:
        number = float(value)
    except ValueError:
        return None
    if not math.isfinite(number) or number != int(number) or not 0 <= number < 2**32:
        return None
    return int(number)


RSRP_RANGE_DBM = (-160.0, 0.0)
"""The RSRP a drive table may hold, in dBm. 3GPP's reports span -156 to -31 dBm (NR, TS 38.133
§10.1.6.1; LTE -140 to -44 dBm, TS 36.133 §9.1.4); the bounds leave room for simulated and
extrapolated values and refuse what is not a received power (above 0 dBm, 1 mW on one resource
element, or far below the thermal noise)."""


def _rsrp(value: str) -> float | None:
    number = _number(value)
    low, high = RSRP_RANGE_DBM
    return number if number is not None and low <= number <= high else None


def _number(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


class _Columns:
    """Reads a table's columns one by one, each value checked, errors naming the table, the row
    (1 is the first row under the header) and the column."""

    def __init__(self, frame: pd.DataFrame, name: str, required: tuple[str, ...], kind: str) -> None:
        missing = [c for c in required if c not in frame.columns]
        if missing:
            raise DriveTableError(f"{name}: no column {missing[0]!r} (columns: "
                                  f"{', '.join(map(str, frame.columns)) or 'none'}; a {kind} "
                                  f"needs {', '.join(required)})")
        if len(frame) == 0:
            raise DriveTableError(f"{name}: the table has no rows")
        self.frame, self.name = frame, name

    def text(self, column: str) -> list[str]:
        return ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v).strip()
                for v in self.frame[column].tolist()]

    def parsed(self, column: str, parse: Any, what: str, minimum: float | None = None,
               empty: float | None = None) -> list[Any]:
        """Every value of `column` through `parse`; `empty` stands for an empty value when
        given, and values below `minimum` are refused."""
        values = []
        for row, value in enumerate(self.text(column), start=1):
            parsed = empty if (empty is not None and not value) else parse(value)
            if parsed is None or (minimum is not None and parsed < minimum):
                number = _number(value)
                if parse is _whole and number is not None and number < 0:
                    raise DriveTableError(f"{self.name}: row {row}: {column} = {value!r} is "
                                          f"negative; {column} is {what}, at least 0")
                raise DriveTableError(f"{self.name}: row {row}: {column} = {value!r} is not {what}")
            values.append(parsed)
        return values

    def labels(self, column: str) -> list[str]:
        labels = self.text(column)
        for row, label in enumerate(labels, start=1):
            if not label:
                raise DriveTableError(f"{self.name}: row {row}: {column} is empty")
        return labels

    def check_time_order(self, times: list[int]) -> None:
        for row in range(1, len(times)):
            if times[row] < times[row - 1]:
                raise DriveTableError(
                    f"{self.name}: row {row + 1}: time_s = {times[row]} comes after time_s = "
                    f"{times[row - 1]}; rows must be in non-decreasing time order")

    def check_span(self, times: list[int], kind: str) -> None:
        if times[-1] - times[0] >= MAX_SPAN_S:
            raise DriveTableError(f"{self.name}: time_s goes from {times[0]} to {times[-1]}; a "
                                  f"{kind} may span at most {MAX_SPAN_S} s")


def check_table(frame: pd.DataFrame, name: str = "<table>") -> pd.DataFrame:
    """`frame` (any column types) as a checked drive table: the required columns present,
    `time_s` and `earfcn` whole numbers, `rsrp_dbm` and the optional columns finite numbers
    (empty optional values are NaN; `rsrp_dbm` from -160 to 0 dBm), labels not empty, time never going backwards. Raises
    `DriveTableError` naming `name`, the row and the column."""
    import pandas as pd

    cols = _Columns(frame, name, REQUIRED_COLUMNS, "drive table")
    out: dict[str, list[Any]] = {
        "time_s": cols.parsed("time_s", _whole, "a whole number of seconds"),
        "earfcn": cols.parsed("earfcn", _whole, "a whole number"),
        "rsrp_dbm": cols.parsed("rsrp_dbm", _rsrp, "an RSRP in dBm from -160 to 0 (3GPP "
                                "reports span -156 to -31 dBm)"),
        "operator": cols.labels("operator"),
        "cell_id": cols.labels("cell_id"),
    }
    for column in OPTIONAL_COLUMNS:
        if column in frame.columns:
            speed = column == "speed_mps"
            out[column] = cols.parsed(column, _number, "a number of m/s, at least 0" if speed
                                      else "a number", minimum=0.0 if speed else None,
                                      empty=math.nan)
    cols.check_time_order(out["time_s"])
    cols.check_span(out["time_s"], "drive table")
    result = pd.DataFrame({c: out[c] for c in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS) if c in out})
    return result.astype({"time_s": "int64", "earfcn": "int64", "operator": str, "cell_id": str})


def read_drive_table(path: str | Path) -> pd.DataFrame:
    """A drive table in the §5.2 long format from a CSV or Parquet (`.parquet`) file, checked
    as `check_table` does (errors name the file, the row and the column)."""
    import pandas as pd

    path = Path(path)
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except FileNotFoundError:
        raise DriveTableError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise DriveTableError(f"{path}: cannot be read as a drive table: "
                              f"{' '.join(str(exc).split())}") from None
    return check_table(frame, str(path))


def read_gnettrack(path: str | Path) -> pd.DataFrame:
    """A G-NetTrack Pro CSV (the UCC 5G/4G data sets) as a drive table in the long format.

    * `time_s`: seconds since the file's first `Timestamp` (`YYYY.MM.DD_HH.MM.SS`);
    * the serving cell: `RSRP` with its `CellID`; the neighbour cell: `NRxRSRP`, whose id the
      file does not give (cell id `neighbour`); `-`, an empty field and Android's
      "unavailable" 2147483647 mean no sample;
    * `operator` from `Operatorname`; the file has no EARFCN, so every cell is on carrier 0
      (one carrier per operator: one available cell a second at most);
    * `x_m`, `y_m` east and north of the first fix (equirectangular), `speed_mps` from the
      `Speed` column (km/h).

    Duplicate seconds (the logger writes some seconds twice) are kept as separate samples;
    the estimation merges them (mean of the dBm values). Missing seconds (steps of 2 or 3 s)
    are not filled in: `analyse(..., hold_s=GNETTRACK_HOLD_S)` lets each cell keep its last
    value across them, as `multiconn drive analyse --format gnettrack` does. A timestamp
    earlier than the previous one is an error.
    """
    import pandas as pd

    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise DriveTableError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise DriveTableError(f"{path}: cannot be read as a G-NetTrack file: "
                              f"{' '.join(str(exc).split())}") from None
    needed = ("Timestamp", "Operatorname", "CellID", "RSRP", "NRxRSRP")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise DriveTableError(f"{path}: no column {missing[0]!r}; a G-NetTrack file has "
                              f"{', '.join(needed)}")
    if len(frame) == 0:
        raise DriveTableError(f"{path}: the file has no rows")

    def present(value: str) -> bool:
        return value.strip() not in GNETTRACK_MISSING

    def number(row: int, column: str, value: str) -> float:
        parsed = _number(value)
        if parsed is None:
            raise DriveTableError(f"{path}: row {row}: {column} = {value!r} is not a number")
        return parsed

    rows: list[dict[str, Any]] = []
    start: datetime | None = None
    previous = -1
    origin: tuple[float, float] | None = None
    has_position = "Longitude" in frame.columns and "Latitude" in frame.columns
    for row, record in enumerate(frame.to_dict("records"), start=1):
        stamp = record["Timestamp"].strip()
        try:
            when = datetime.strptime(stamp, "%Y.%m.%d_%H.%M.%S")
        except ValueError:
            raise DriveTableError(f"{path}: row {row}: Timestamp = {stamp!r} is not "
                                  "YYYY.MM.DD_HH.MM.SS") from None
        start = when if start is None else start
        time_s = int((when - start).total_seconds())
        if time_s < previous:
            raise DriveTableError(f"{path}: row {row}: Timestamp = {stamp!r} is earlier than "
                                  "the row before; rows must be in time order")
        previous = time_s
        x = y = math.nan
        if has_position and present(record["Longitude"]) and present(record["Latitude"]):
            lon = number(row, "Longitude", record["Longitude"])
            lat = number(row, "Latitude", record["Latitude"])
            origin = (lon, lat) if origin is None else origin
            x = math.radians(lon - origin[0]) * EARTH_RADIUS_M * math.cos(math.radians(origin[1]))
            y = math.radians(lat - origin[1]) * EARTH_RADIUS_M
        speed = math.nan
        if "Speed" in frame.columns and present(record["Speed"]):
            speed = max(number(row, "Speed", record["Speed"]), 0.0) / 3.6
        operator = record["Operatorname"].strip() or "?"
        cells = []
        if present(record["RSRP"]) and present(record["CellID"]):
            cells.append((record["CellID"].strip(), number(row, "RSRP", record["RSRP"])))
        if present(record["NRxRSRP"]):
            cells.append((GNETTRACK_NEIGHBOUR, number(row, "NRxRSRP", record["NRxRSRP"])))
        for cell_id, rsrp in cells:
            rows.append({"time_s": time_s, "operator": operator, "earfcn": GNETTRACK_EARFCN,
                         "cell_id": cell_id, "rsrp_dbm": rsrp, "x_m": x, "y_m": y,
                         "speed_mps": speed})
    if not rows:
        raise DriveTableError(f"{path}: no row has an RSRP value")
    return check_table(pd.DataFrame(rows), str(path))


def read_5gophers(path: str | Path, protocol: str | None = None,
                  num_tcp_conn: int | None = None) -> pd.DataFrame:
    """A 5Gophers mobility trace (`All-Carriers/03-User-Mobility/car-driving-trace-*.csv`:
    `protocol,num_tcp_conn,seq_num` and one `<carrier>_throughput_mbps` column per carrier,
    the carriers measured at the same time) as a channel table: one row per carrier and
    sample, `time_s` = `seq_num`, `operator` = the carrier (`Sprint`, `TMobile`, `Verizon`),
    `earfcn` = 0 (the file names no frequency channel: one channel per carrier), and
    `capacity_mbps` = the measured throughput, taken as the channel's capacity.

    Missing data, as the reference's §5.2 and §1.4 treat a cell without a sample: an empty
    value gives no row (the carrier has no sample that second); a `seq_num` absent from the
    file (the traces skip some) gives no row for any carrier. `analyse_capacities` then counts
    such a carrier-second as capacity 0, not available, unless `hold_s` lets the carrier keep
    its last value. A `seq_num` written twice gives two rows, which `analyse_capacities`
    averages. A `seq_num` smaller than the row before's is an error.

    `protocol` and `num_tcp_conn` choose the rows of one measurement set (the published traces
    have one: TCP with 8 connections); a file with several sets and no choice is an error that
    lists them, as is a choice that matches no row.
    """
    import pandas as pd

    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise DriveTableError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise DriveTableError(f"{path}: cannot be read as a 5Gophers trace: "
                              f"{' '.join(str(exc).split())}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    needs = (f"a 5Gophers trace needs {', '.join(FIVEGOPHERS_COLUMNS)} and one "
             f"<carrier>{FIVEGOPHERS_SUFFIX} column per carrier")
    missing = [c for c in FIVEGOPHERS_COLUMNS if c not in frame.columns]
    carriers = [c for c in frame.columns
                if c.endswith(FIVEGOPHERS_SUFFIX) and len(c) > len(FIVEGOPHERS_SUFFIX)]
    if missing or not carriers:
        what = repr(missing[0]) if missing else f"'<carrier>{FIVEGOPHERS_SUFFIX}'"
        raise DriveTableError(f"{path}: no column {what} (columns: "
                              f"{', '.join(frame.columns) or 'none'}; {needs})")
    if len(frame) == 0:
        raise DriveTableError(f"{path}: the file has no rows")

    records = frame.to_dict("records")
    sets: list[tuple[str, int]] = []
    chosen: list[tuple[int, dict[str, str]]] = []
    for row, record in enumerate(records, start=1):
        proto = record["protocol"].strip()
        conns = _whole(record["num_tcp_conn"].strip())
        if conns is None:
            raise DriveTableError(f"{path}: row {row}: num_tcp_conn = "
                                  f"{record['num_tcp_conn']!r} is not a whole number")
        if (proto, conns) not in sets:
            sets.append((proto, conns))
        if (protocol is None or proto == protocol) and (num_tcp_conn is None
                                                        or conns == num_tcp_conn):
            chosen.append((row, record))
    listed = ", ".join(f"protocol {p} with {n} connections" for p, n in sets)
    if not chosen:
        raise DriveTableError(f"{path}: no row has protocol = {protocol!r} and num_tcp_conn = "
                              f"{num_tcp_conn}; the file has {listed}")
    kept = {(r["protocol"].strip(), _whole(r["num_tcp_conn"].strip())) for _, r in chosen}
    if len(kept) > 1:
        raise DriveTableError(f"{path}: the file has several measurement sets ({listed}); "
                              "choose one with protocol and num_tcp_conn")

    rows: list[dict[str, Any]] = []
    previous: int | None = None
    for row, record in chosen:
        seq = _whole(record["seq_num"].strip())
        if seq is None:
            raise DriveTableError(f"{path}: row {row}: seq_num = {record['seq_num']!r} is not "
                                  "a whole number")
        if previous is not None and seq < previous:
            raise DriveTableError(f"{path}: row {row}: seq_num = {seq} comes after seq_num = "
                                  f"{previous}; rows must be in non-decreasing seq_num order")
        previous = seq
        for column in carriers:
            text = record[column].strip()
            if not text:
                continue
            value = _number(text)
            if value is None or value < 0:
                raise DriveTableError(f"{path}: row {row}: {column} = {record[column]!r} is "
                                      "not a number of Mbit/s, at least 0")
            rows.append({"time_s": seq, "operator": column[:-len(FIVEGOPHERS_SUFFIX)],
                         "earfcn": FIVEGOPHERS_EARFCN, "capacity_mbps": value})
    if not rows:
        raise DriveTableError(f"{path}: no row has a throughput value")
    return check_channel_table(pd.DataFrame(rows), str(path))


def check_channel_table(frame: pd.DataFrame, name: str = "<table>") -> pd.DataFrame:
    """`frame` as a checked channel table (capacities given directly): the columns `time_s`
    and `earfcn` (whole numbers), `operator` (not empty) and `capacity_mbps` (a finite number,
    at least 0), time never going backwards. Raises `DriveTableError` naming `name`, the row
    and the column."""
    import pandas as pd

    cols = _Columns(frame, name, CHANNEL_COLUMNS, "channel table")
    out: dict[str, list[Any]] = {
        "time_s": cols.parsed("time_s", _whole, "a whole number of seconds", minimum=0),
        "earfcn": cols.parsed("earfcn", _whole, "a whole number", minimum=0),
        "capacity_mbps": cols.parsed("capacity_mbps", _number, "a number of Mbit/s, at least 0",
                                     minimum=0.0),
        "operator": cols.labels("operator"),
    }
    cols.check_time_order(out["time_s"])
    cols.check_span(out["time_s"], "channel table")
    result = pd.DataFrame({c: out[c] for c in CHANNEL_COLUMNS})
    return result.astype({"time_s": "int64", "earfcn": "int64", "operator": str,
                          "capacity_mbps": "float64"})


# -- generating -----------------------------------------------------------------------------


def presets() -> list[str]:
    """The names of the synthetic drive presets."""
    return list(_core().drive_presets())


def generate_csv(preset: str = "residential", seed: int = 1, duration_s: int | None = None) -> str:
    """The synthetic drive of `preset` as CSV text; the same arguments always give the same
    text. `duration_s` (whole seconds) replaces the preset's length."""
    native = _core()
    try:
        return str(native.drive_generate(preset, seed, duration_s))
    except native.DriveError as exc:
        raise _native_error(exc, "") from None
    except OverflowError:
        raise DriveTableError(f"seed = {seed}, duration_s = {duration_s}: out of range") from None


def generate(preset: str = "residential", seed: int = 1,
             duration_s: int | None = None) -> pd.DataFrame:
    """The synthetic drive of `preset` (see `presets()`) as a drive table."""
    import pandas as pd

    text = generate_csv(preset, seed, duration_s)
    return pd.read_csv(io.StringIO(text), dtype={"operator": str, "cell_id": str})


# -- analysing ------------------------------------------------------------------------------


@dataclass
class DriveAnalysis:
    """The estimation of one drive table."""

    capacities: pd.DataFrame
    """Per second: `time_s`, `visible`, `available`, `<operator>_sp_mbps` for each operator,
    `best_single_path_mbps`, `multipath_mbps`, and `<operator>/<earfcn>_mbps` for each
    channel (its available cell's capacity, 0 without one)."""
    channels: pd.DataFrame
    """One row per (second, channel with an available cell): `time_s`, `channel`, `operator`,
    `earfcn`, `cell_id`, `n_visible`, `rsrp_dbm`, `sinr_db`, `capacity_mbps` (from
    `analyse_capacities`: `cell_id` is the channel's label, `n_visible` 1, no RSRP or SINR)."""
    mean_available: float
    """Average number of available cells per second (the study's Table 2)."""
    mean_visible: float
    available_cdf: pd.DataFrame
    """`cells` n = 0, 1, …, `share` of the seconds with exactly n available cells, `cdf`
    P(available ≤ n)."""
    table3: pd.DataFrame
    """The study's Table 3: one row per level (`<operator> SP`, `best single path`,
    `multipath`), columns mean, median, p20, p10, p5, p1, p0.1 (Mbit/s)."""
    stats: dict[str, Any]
    """Everything above as plain values (what `stats.json` holds)."""
    params: dict[str, Any] = field(default_factory=dict)
    """The estimation parameters given to the radio model."""


def analyse(table: pd.DataFrame, load: float = 0.1, interference: str = "all_visible",
            hold_s: int = 0, params: dict[str, Any] | None = None,
            name: str = "<table>") -> DriveAnalysis:
    """Estimates `table` (a drive table) with the study's capacity model at network load
    `load` and the interferer set `interference` (`all_visible` or `same_carrier`); a cell
    keeps its last value for `hold_s` seconds without a sample. `params` sets any other
    estimation parameter (`{"capacity": {...}, "availability": {...}}`, as in
    docs/multi-operator.md); `load`, `interference` and `hold_s` take precedence."""
    if interference not in INTERFERENCE:
        raise DriveTableError(f"interference = {interference!r}: must be one of "
                              f"{', '.join(INTERFERENCE)}")
    if not (isinstance(load, (int, float)) and math.isfinite(load) and 0 <= load <= 1):
        raise DriveTableError(f"load = {load}: must be in [0, 1]")
    if not (isinstance(hold_s, int) and 0 <= hold_s < 2**32):
        raise DriveTableError(f"hold_s = {hold_s}: must be a whole number of seconds, at least 0")
    chosen: dict[str, Any] = {k: dict(v) for k, v in (params or {}).items()}
    chosen.setdefault("capacity", {}).update(load=float(load), interference=interference)
    chosen.setdefault("availability", {})["hold_s"] = hold_s
    table = check_table(table, name)
    columns = {c: table[c].tolist() for c in table.columns if c in (*REQUIRED_COLUMNS,
                                                                     *OPTIONAL_COLUMNS)}
    native = _core()
    try:
        rows, seconds, stats = native.drive_estimate(columns, json.dumps(chosen))
    except native.DriveError as exc:
        raise _native_error(exc, name) from None

    return _analysis(rows, seconds, stats, chosen)


def _analysis(rows: dict[str, Any], seconds: dict[str, Any], stats: dict[str, Any],
              chosen: dict[str, Any]) -> DriveAnalysis:
    """A `DriveAnalysis` from what the native `drive_estimate` or `drive_aggregate` returns."""
    import pandas as pd

    per_second: dict[str, Any] = {k: seconds[k] for k in ("time_s", "visible", "available")}
    for op, values in seconds["operator_sp_mbps"].items():
        per_second[f"{op}_sp_mbps"] = values
    per_second["best_single_path_mbps"] = seconds["best_single_path_mbps"]
    per_second["multipath_mbps"] = seconds["multipath_mbps"]
    channels = pd.DataFrame(rows)
    start = seconds["time_s"][0] if seconds["time_s"] else 0
    for label in stats["channels"]:
        capacity = [0.0] * len(seconds["time_s"])
        mine = channels[channels["channel"] == label] if len(channels) else channels
        for t, c in zip(mine["time_s"].tolist(), mine["capacity_mbps"].tolist()):
            capacity[t - start] = c
        per_second[f"{label}_mbps"] = capacity
    capacities = pd.DataFrame(per_second)

    share = stats["available_share"]
    cdf = pd.DataFrame({"cells": range(len(share)), "share": share,
                        "cdf": stats["available_cdf"]})
    levels = {f"{op} SP": s for op, s in stats["operators"].items()}
    levels["best single path"] = stats["best_single_path"]
    levels["multipath"] = stats["multipath"]
    table3 = pd.DataFrame.from_dict(levels, orient="index", columns=list(SUMMARY_COLUMNS))
    table3.index.name = "level"
    plain = {
        "seconds": stats["seconds"],
        "mean_available": stats["mean_available"],
        "mean_visible": stats["mean_visible"],
        "available_share": share,
        "available_cdf": stats["available_cdf"],
        "channels": stats["channels"],
        "levels_mbps": levels,
        "params": chosen,
    }
    return DriveAnalysis(capacities=capacities, channels=channels,
                         mean_available=float(stats["mean_available"]),
                         mean_visible=float(stats["mean_visible"]), available_cdf=cdf,
                         table3=table3, stats=plain, params=chosen)


def analyse_capacities(table: pd.DataFrame, min_capacity_mbps: float = 0.0, hold_s: int = 0,
                       name: str = "<table>") -> DriveAnalysis:
    """The levels and statistics of a channel table that gives capacities directly (see
    `read_5gophers`), computed by the radio model like those of `analyse`.

    Every second from the table's first to its last counts. A carrier's capacity in a second
    is the mean of its rows in that second; without a row it is 0, unless the carrier had one
    at most `hold_s` seconds earlier (then that last value). A carrier is visible where its
    capacity is above 0, and available where it is also at least `min_capacity_mbps`; each
    operator alone is the max over its available carriers, best single path the max over all,
    multipath the sum (at most one channel per (operator, EARFCN)). Visible and available
    counts are of carriers, there being no cells; the rows' `rsrp_dbm` and `sinr_db` are
    empty."""
    if not (isinstance(min_capacity_mbps, (int, float)) and math.isfinite(min_capacity_mbps)
            and min_capacity_mbps >= 0):
        raise DriveTableError(f"min_capacity_mbps = {min_capacity_mbps}: must be a number of "
                              "Mbit/s, at least 0")
    if not (isinstance(hold_s, int) and 0 <= hold_s < 2**32):
        raise DriveTableError(f"hold_s = {hold_s}: must be a whole number of seconds, at least 0")
    import numpy as np

    table = check_channel_table(table, name)
    start = int(table["time_s"].iloc[0])
    length = int(table["time_s"].iloc[-1]) - start + 1
    samples: dict[tuple[str, int], dict[int, list[float]]] = {}
    for t, op, earfcn, c in zip(table["time_s"].tolist(), table["operator"].tolist(),
                                table["earfcn"].tolist(), table["capacity_mbps"].tolist()):
        samples.setdefault((op, earfcn), {}).setdefault(t - start, []).append(c)
    carriers = sorted(samples)
    capacities = []
    every_second = np.arange(length)
    for carrier in carriers:
        # Each second takes the mean of the carrier's last second with samples, if that is at
        # most hold_s seconds before, else 0 (vectorized: a table may span 10^6 seconds).
        per_second = samples[carrier]
        seconds = np.array(sorted(per_second), dtype=np.int64)
        means = np.array([math.fsum(per_second[i]) / len(per_second[i]) for i in seconds.tolist()])
        last = np.searchsorted(seconds, every_second, side="right") - 1
        held = (last >= 0) & (every_second - seconds[np.maximum(last, 0)] <= hold_s)
        capacities.append(np.where(held, means[np.maximum(last, 0)], 0.0).tolist())
    chosen = {"source": "capacities", "min_capacity_mbps": float(min_capacity_mbps),
              "hold_s": hold_s}
    native = _core()
    try:
        rows, seconds, stats = native.drive_aggregate(
            start, [c[0] for c in carriers], [c[1] for c in carriers], capacities,
            float(min_capacity_mbps))
    except native.DriveError as exc:
        raise _native_error(exc, name) from None
    return _analysis(rows, seconds, stats, chosen)


# -- figures --------------------------------------------------------------------------------


def plot_capacity(analysis: DriveAnalysis, folder: Path,
                  formats: tuple[str, ...] = ("png",)) -> list[Path]:
    """The study's Figure 1: the capacity of each channel's strongest (available) cell over
    time, per second and as 5 s means, with the multipath sum when there are several."""
    from . import figstyle
    import matplotlib as mpl

    frame = analysis.capacities
    labels = [c.removesuffix("_mbps") for c in frame.columns
              if "/" in c and c.endswith("_mbps")]
    with mpl.rc_context(figstyle.RC):  # type: ignore[arg-type]
        fig, axes = figstyle.new_figure(rows=2, height_in=6.2)
        handles: list[Any] = []
        names: list[str] = []
        for ax, window in zip(axes, (1, 5)):
            for label in labels:
                series = frame[f"{label}_mbps"]
                if window > 1:
                    series = series.rolling(window, min_periods=1).mean()
                (line,) = ax.plot(frame["time_s"], series, linewidth=0.8)
                if window == 1:
                    handles.append(line)
                    names.append(f"channel {label}")
            if len(labels) > 1:  # with one channel the sum would hide it
                mp = frame["multipath_mbps"]
                if window > 1:
                    mp = mp.rolling(window, min_periods=1).mean()
                (line,) = ax.plot(frame["time_s"], mp, color="black", linewidth=1.0,
                                  linestyle="--")
                if window == 1:
                    handles.append(line)
                    names.append("multipath (sum)")
            ax.set_ylabel("capacity (Mbit/s)")
            ax.set_title(f"{'per second' if window == 1 else '5 s means'}", fontsize=9)
            ax.set_ylim(bottom=0)
        axes[-1].set_xlabel("time (s)")
        capacity = analysis.params.get("capacity")
        if capacity is not None:
            title = "Capacity of the strongest cell of each channel"
            detail = (f"load {capacity['load']:g}, interference "
                      f"{capacity['interference'].replace('_', ' ')}")
        else:
            title = "Capacity of each channel"
            detail = "measured throughput taken as capacity"
        fig.suptitle(figstyle.title_text(title, detail), fontsize=figstyle.TITLE_POINTS)
        figstyle.legend_below(fig, handles, names)
        return figstyle.save_figure(fig, folder, "capacity", formats)


def plot_available(analysis: DriveAnalysis, folder: Path,
                   formats: tuple[str, ...] = ("png",)) -> list[Path]:
    """The study's Figure 2: the CDF of the number of available cells per second."""
    from . import figstyle
    import matplotlib as mpl

    cdf = analysis.available_cdf
    with mpl.rc_context(figstyle.RC):  # type: ignore[arg-type]
        fig, (ax,) = figstyle.new_figure(rows=1)
        ax.bar(cdf["cells"], cdf["share"], width=0.6, alpha=0.35, label="share of seconds")
        ax.step(cdf["cells"], cdf["cdf"], where="post", color="C0", marker="o",
                label="P(available ≤ n)")
        ax.set_xticks(list(cdf["cells"]))
        ax.set_xlim(-0.5, max(len(cdf) - 0.5, 1.5))
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("available cells n")
        ax.set_ylabel("fraction of seconds")
        ax.axvline(analysis.mean_available, color="C3", linestyle=":", linewidth=1.2,
                   label=f"mean {analysis.mean_available:.2f}")
        ax.set_title(figstyle.title_text(
            "Available cells per second",
            f"{analysis.stats['seconds']} s; visible cells {analysis.mean_visible:.2f} on "
            "average"), fontsize=figstyle.TITLE_POINTS)
        ax.legend(loc="upper left", fontsize="small")
        return figstyle.save_figure(fig, folder, "available_cells", formats)


__all__ = [
    "DriveAnalysis", "DriveTableError", "analyse", "analyse_capacities", "check_channel_table",
    "check_table", "generate", "generate_csv", "plot_available", "plot_capacity", "presets",
    "read_5gophers", "read_drive_table", "read_gnettrack",
]
