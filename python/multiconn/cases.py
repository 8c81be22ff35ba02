"""The multi-operator study's channel-usage cases, from a per-second channel table to an
ordinary multiconn scenario.

    >>> from multiconn import cases, drive
    >>> table = cases.ChannelTable.from_analysis(drive.analyse(drive.generate("road", seed=2)))
    >>> timeline = cases.run_case(table, "2")                # path events, per-link series
    >>> made = cases.write_scenario(table, "2", "out/case2", stack="cubic", offset_s=30)
    >>> made.path                                             # out/case2/scenario.toml

A **channel table** holds, per second, each channel's capacity c_k(t) in Mbit/s (0: no
available cell), and optionally its available cell's RSRP, SINR and id. It comes from a drive
analysis (`ChannelTable.from_analysis`), from a throughput trace, or from a file
(`ChannelTable.read`: CSV or Parquet with a `time_s` column of consecutive whole seconds and
one column of Mbit/s per channel).

The cases (sp, 1, 2, 3, 4) are the radio crate's (`run_case`, reference §4.4). The scenario
follows the reference's mapping A (§4.5): a `core` link from `server` to `switch`, one access
link `ch<k>` per channel the case ever uses from `switch` to `client`, carrying the channel's
own rate and delay series and down whenever the channel is not in the active set. For
Multipath QUIC the client's path schedule opens and abandons paths with the time line's
events (path 0 is the channel that carries the handshake); for MPTCP every subflow is asked
for at the start, no path event is sent, and an always-up link `ue<k>` sits between `ch<k>`
and the client so that an outage is silent, as in the study (the client's interface stayed
up). Case sp is a single link `radio` whose rate is the best channel's, second by second.
An access link's delay follows the capacity → delay curve `delay`; its queue is 100 packets or
`queue` (`access_queue_limit`: packets, a time at the link's mean capacity, or BDPs).

The table is read from the run's start offset and loops when a run outlasts it. Bad input
raises `CaseError` (a ValueError) with one line naming the file, row, column or field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from itertools import groupby
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CaseError
from .testbeds import Testbed, testbed as _testbed

if TYPE_CHECKING:
    import pandas as pd

    from .drive import DriveAnalysis

CASES = ("sp", "1", "2", "3", "4")
STACKS: dict[str, tuple[str, str, str]] = {
    "bbr": ("quic", "picoquic-2022", "bbr"),
    "cubic": ("quic", "picoquic-2022", "cubic"),
    "fast": ("quic", "picoquic-2022", "fast"),
    "reno": ("quic", "picoquic-2022", "reno"),
    "mptcp": ("tcp", "linux-mptcp-5.15", "cubic"),
}
"""The study's stacks: name → (transport, profile, congestion controller)."""
HANDOVER_KEYS = ("preset", "n", "seamless", "quantity", "offset_db", "hysteresis_db", "ttt_s",
                 "min_dwell_s", "loss_action", "rlf_gap_s", "cell_change_is_handover",
                 "min_usable_mbps", "overlap_s")
"""The case parameters a caller may set (reference §4.4's table)."""
DEFAULT_SIZE_BYTES = 40_000_000
DEFAULT_HORIZON_S = 600
ACCESS_QUEUE_PACKETS = 100
CORE = {"rate": "1 Gbit/s", "delay": "0 ms", "queue": "1000 packets"}
"""The shared server–switch link: never the bottleneck (reference §4.1)."""
UE_LINK = {"rate": "10 Gbit/s", "delay": "0 ms", "queue": "1000 packets"}
"""The always-up client-side link of an MPTCP channel."""


def _core() -> Any:
    from ._native import core

    return core()


# -- the channel table ----------------------------------------------------------------------


def _maybe(value: Any) -> float | None:
    """A number, or None for a missing one (a capacity analysis has no RSRP or SINR)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else float(value)


@dataclass(frozen=True)
class ChannelTable:
    """Channels sampled on one one-second grid from `start_s`."""

    names: tuple[str, ...]
    capacity_mbps: tuple[tuple[float, ...], ...]
    """Per channel, one capacity per second, Mbit/s."""
    start_s: int = 0
    rsrp_dbm: tuple[tuple[float | None, ...], ...] | None = None
    sinr_db: tuple[tuple[float | None, ...], ...] | None = None
    cell_id: tuple[tuple[str | None, ...], ...] | None = None

    @property
    def seconds(self) -> int:
        return len(self.capacity_mbps[0]) if self.capacity_mbps else 0

    @classmethod
    def from_analysis(cls, analysis: DriveAnalysis) -> ChannelTable:
        """The channels of a drive analysis, with their cells' RSRP, SINR and ids."""
        seconds = analysis.capacities["time_s"].tolist()
        if not seconds:
            raise CaseError("the drive analysis has no seconds")
        start = int(seconds[0])
        names = tuple(analysis.stats["channels"])
        n = len(seconds)
        rsrp: list[list[float | None]] = [[None] * n for _ in names]
        sinr: list[list[float | None]] = [[None] * n for _ in names]
        cell: list[list[str | None]] = [[None] * n for _ in names]
        index = {name: k for k, name in enumerate(names)}
        rows = analysis.channels
        if len(rows):
            for t, ch, r, s, c in zip(rows["time_s"].tolist(), rows["channel"].tolist(),
                                      rows["rsrp_dbm"].tolist(), rows["sinr_db"].tolist(),
                                      rows["cell_id"].tolist()):
                k = index[ch]
                rsrp[k][t - start] = _maybe(r)
                sinr[k][t - start] = _maybe(s)
                cell[k][t - start] = None if c is None else str(c)
        capacity = tuple(tuple(float(x) for x in analysis.capacities[f"{name}_mbps"].tolist())
                         for name in names)
        return cls(names=names, capacity_mbps=capacity, start_s=start,
                   rsrp_dbm=tuple(map(tuple, rsrp)), sinr_db=tuple(map(tuple, sinr)),
                   cell_id=tuple(map(tuple, cell)))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str = "<table>") -> ChannelTable:
        """A wide table: `time_s` (consecutive whole seconds) and one column of Mbit/s per
        channel."""
        import pandas as pd

        if "time_s" not in frame.columns:
            raise CaseError(f"{name}: no column named time_s; the header has: "
                            f"{', '.join(map(str, frame.columns))}")
        names = tuple(str(c) for c in frame.columns if c != "time_s")
        if not names:
            raise CaseError(f"{name}: no channel column next to time_s (one column of Mbit/s "
                            "per channel)")
        if frame.empty:
            raise CaseError(f"{name}: no rows")

        def numbers(column: str) -> list[float]:
            values = pd.to_numeric(frame[column], errors="coerce").astype(float)
            for row, (raw, value) in enumerate(zip(frame[column].tolist(), values.tolist()), 1):
                if not math.isfinite(value) or (column != "time_s" and value < 0):
                    what = ("a whole number of seconds" if column == "time_s"
                            else "a capacity in Mbit/s, at least 0")
                    raise CaseError(f"{name}: row {row}, column {column}: {raw!r} is not {what}")
            return [float(v) for v in values.tolist()]

        times = numbers("time_s")
        for row, (before, t) in enumerate(zip(times, times[1:]), 2):
            if t != before + 1:
                raise CaseError(f"{name}: row {row}, column time_s: {t:g} follows {before:g}; "
                                "the seconds must be consecutive whole numbers")
        if times[0] != int(times[0]) or times[0] < 0:
            raise CaseError(f"{name}: row 1, column time_s: {times[0]:g} is not a whole number "
                            "of seconds, at least 0")
        return cls(names=names, capacity_mbps=tuple(tuple(numbers(c)) for c in names),
                   start_s=int(times[0]))

    @classmethod
    def read(cls, path: str | Path) -> ChannelTable:
        """Reads a wide channel table from CSV or Parquet (by the file's suffix)."""
        import pandas as pd

        path = Path(path)
        try:
            frame = (pd.read_parquet(path) if path.suffix == ".parquet"
                     else pd.read_csv(path, dtype=str, keep_default_na=False))
        except FileNotFoundError:
            raise CaseError(f"{path}: no such file") from None
        except (ValueError, OSError) as exc:
            raise CaseError(f"{path}: cannot be read as a channel table: "
                            f"{' '.join(str(exc).split())}") from None
        return cls.from_frame(frame, str(path))

    def to_frame(self) -> pd.DataFrame:
        """The wide table (`time_s` and one column per channel)."""
        import pandas as pd

        data: dict[str, Any] = {"time_s": list(range(self.start_s, self.start_s + self.seconds))}
        for name, values in zip(self.names, self.capacity_mbps):
            data[name] = list(values)
        return pd.DataFrame(data)

    def window(self, offset_s: int, length_s: int) -> ChannelTable:
        """`length_s` seconds from trace second `start_s + offset_s`, looping over the end;
        its seconds count from 0."""
        n = self.seconds
        if not (isinstance(offset_s, int) and offset_s >= 0):
            raise CaseError(f"offset_s = {offset_s!r}: must be a whole number of seconds, "
                            "at least 0")
        if not (isinstance(length_s, int) and length_s >= 1):
            raise CaseError(f"length_s = {length_s!r}: must be a whole number of seconds, "
                            "at least 1")
        order = [(offset_s + i) % n for i in range(length_s)]

        def pick(rows: tuple[tuple[Any, ...], ...] | None) -> Any:
            return None if rows is None else tuple(tuple(r[i] for i in order) for r in rows)

        return ChannelTable(names=self.names, capacity_mbps=pick(self.capacity_mbps),
                            start_s=0, rsrp_dbm=pick(self.rsrp_dbm), sinr_db=pick(self.sinr_db),
                            cell_id=pick(self.cell_id))

    def native(self) -> list[dict[str, Any]]:
        out = []
        for k, name in enumerate(self.names):
            item: dict[str, Any] = {"name": name, "capacity_mbps": list(self.capacity_mbps[k])}
            for key in ("rsrp_dbm", "sinr_db", "cell_id"):
                rows = getattr(self, key)
                if rows is not None:
                    item[key] = list(rows[k])
            out.append(item)
        return out


# -- the time line --------------------------------------------------------------------------


@dataclass(frozen=True)
class Timeline:
    """A case's outcome over a channel table (seconds count from the table's `start_s`)."""

    case: str
    params: dict[str, Any]
    """Every case parameter as resolved (the preset with the caller's overrides)."""
    names: tuple[str, ...]
    start_s: int
    events: list[dict[str, Any]]
    """`at_s`, `slot`, `channel` (index into `names`), `action` (open, abandon), `cause`
    (fill, loss, release, a3, cell_change), in the order they happen."""
    handovers: int
    """Channel changes of a slot over the whole table."""
    slots: list[dict[str, Any]]
    """Per slot: `channel` (index or None), `rate_mbps`, `delay_ms` (None when empty), per s."""
    channels: list[dict[str, Any]]
    """Per channel: `rate_mbps`, `delay_ms`, `active` per second and `up` windows [from, to)."""
    mp_capacity_mbps: list[float]
    sp_capacity_mbps: list[float]

    @property
    def seamless(self) -> bool:
        return bool(self.params["seamless"])


def _handover_config(case: str, overrides: Mapping[str, Any]) -> str:
    if case not in CASES:
        raise CaseError(f"case = {case!r}: unknown; the cases are {', '.join(CASES)}")
    unknown = sorted(set(overrides) - set(HANDOVER_KEYS))
    if unknown:
        raise CaseError(f"handover.{unknown[0]}: unknown parameter; the parameters are "
                        f"{', '.join(HANDOVER_KEYS)}")
    return json.dumps({"case": case, **overrides})


def run_case(table: ChannelTable, case: str, *, delay: Mapping[str, Any] | None = None,
             **handover: Any) -> Timeline:
    """Runs `case` over `table`. `handover` overrides the case's parameters
    (`hysteresis_db=1`, `preset="realistic_all"`, ...); `delay` the capacity → delay curve
    (`{"form": "power2pt"}`, ...)."""
    native = _core()
    try:
        out = native.drive_case(table.native(), _handover_config(case, handover),
                                table.start_s, None if delay is None else json.dumps(dict(delay)))
    except native.DriveError as exc:
        raise CaseError(str(exc)) from None
    return Timeline(case=case, params=json.loads(out["params"]), names=table.names,
                    start_s=out["start_s"], events=out["events"], handovers=out["handovers"],
                    slots=out["slots"], channels=out["channels"],
                    mp_capacity_mbps=out["mp_capacity_mbps"],
                    sp_capacity_mbps=out["sp_capacity_mbps"])


# -- the scenario ---------------------------------------------------------------------------


def _seconds(x: float) -> str:
    return f"{x:.6g} s"


def _down_windows(up: Sequence[Sequence[float]], horizon_s: float) -> list[list[str]]:
    """The complement of the `up` windows within [0, horizon_s)."""
    down: list[list[str]] = []
    at = 0.0
    for start, end in up:
        if start > at:
            down.append([_seconds(at), _seconds(start)])
        at = max(at, end)
    if at < horizon_s:
        down.append([_seconds(at), _seconds(horizon_s)])
    return down


def _series_files(folder: Path, stem: str, rate: Sequence[float],
                  delay: Sequence[float | None], bed: Testbed) -> dict[str, Any]:
    """Writes the per-second rate (Mbit/s) and delay (ms) files of a link; returns its rate
    and delay values for the scenario, the delay as `bed` changes it."""
    filled: list[float] = []
    last = next((d for d in delay if d is not None), 0.0)
    for d in delay:
        last = last if d is None else d
        filled.append(last)
    rate_file = folder / f"{stem}.rate.csv"
    delay_file = folder / f"{stem}.delay.csv"
    rate_file.write_text("time,rate\n" + "".join(f"{t},{r!r}\n" for t, r in enumerate(rate)))
    delay_file.write_text("time_s,delay_ms\n"
                          + "".join(f"{t},{d!r}\n" for t, d in enumerate(filled)))
    return {"rate": {"model": "csv", "file": rate_file.name, "column": "rate",
                     "unit": "1 Mbit/s"},
            "delay": bed.series_delay(delay_file.name)}


def _event_paths(events: Sequence[Mapping[str, Any]], first_path: Mapping[int, int],
                 second_path: Mapping[int, int]) -> list[int]:
    """The path of each event. A channel's events use its first path until a cell change;
    a cell change (an opening and an abandonment with cause `cell_change`, the opening first)
    opens the channel's other path and abandons the one in use, so that the two alternate."""
    current = dict(first_path)
    paths = []
    for e in events:
        k = e["channel"]
        if e.get("cause") == "cell_change" and e["action"] == "open":
            old = current[k]
            current[k] = second_path[k] if old == first_path[k] else first_path[k]
            paths.append(current[k])
        elif e.get("cause") == "cell_change":
            paths.append(second_path[k] if current[k] == first_path[k] else first_path[k])
        else:
            paths.append(current[k])
    return paths


def _schedule(events: Sequence[Mapping[str, Any]], event_paths: Sequence[int],
              open_at_start: set[int]) -> list[dict[str, Any]]:
    """The client's path schedule from the time line's events (`event_paths`: each event's
    path). Paths open at the start need no entry; an abandonment that would leave no path
    open waits for the next opening (picoquic refuses to abandon its only path: the dead path
    stays until a new one opens), and is dropped if that opening is its own channel's (the
    path simply lives on)."""
    schedule: list[dict[str, Any]] = []
    is_open = set(open_at_start)
    waiting: list[int] = []  # open paths whose abandonment waits for another path
    indexed = list(zip(events, event_paths))
    for at_s, group in groupby(indexed, key=lambda pair: pair[0]["at_s"]):
        at = _seconds(at_s)
        for e, path in group:
            if e["action"] == "open":
                if path in waiting:  # its channel is back: the path lives on
                    waiting.remove(path)
                elif path not in is_open:  # (the paths open at the start need no entry)
                    schedule.append({"at": at, "path": path, "action": "open"})
                    is_open.add(path)
            elif path not in waiting:
                waiting.append(path)
        # Abandon what was released, as long as some other path stays open.
        for path in list(waiting):
            if len(is_open) > 1:
                schedule.append({"at": at, "path": path, "action": "abandon"})
                is_open.discard(path)
                waiting.remove(path)
    return schedule


@dataclass(frozen=True)
class CaseScenario:
    """A scenario written for one case, stack and start offset."""

    path: Path
    timeline: Timeline
    """The case over the run's window of the table (seconds from the run's start)."""
    channels: tuple[int, ...]
    """The channels the flow's paths use, in path order (path i is channel channels[i])."""


_QUEUE_SPEC = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*(packets?|ms|BDP)\s*$")


def parse_queue(spec: str) -> tuple[float, str]:
    """An access queue as `N packets` (a whole number), `N ms` (what the link's capacity sends
    in that time) or `X BDP` (X bandwidth-delay products); the space is optional."""
    m = _QUEUE_SPEC.match(spec) if isinstance(spec, str) else None
    if m is None:
        raise CaseError(f"queue = {spec!r}: give N packets, N ms or X BDP, e.g. 100packets, "
                        "50ms or 1.5BDP")
    value, unit = float(m.group(1)), m.group(2)
    unit = "packets" if unit.startswith("packet") else unit
    if value <= 0 or (unit == "packets" and value != int(value)):
        raise CaseError(f"queue = {spec!r}: must be above 0"
                        + (", a whole number of packets" if unit == "packets" else ""))
    return value, unit


def access_queue_limit(spec: str, rate_mbps: Sequence[float],
                       delay_ms: Sequence[float | None]) -> str:
    """The queue limit of an access link with these per-second rates (Mbit/s) and one-way
    delays (ms): `N packets` as given; `N ms` the bytes the link's mean capacity over its
    seconds with capacity sends in N ms; `X BDP` X × that capacity × twice the mean one-way
    delay of those seconds. A queue in time or BDP holds at least one 1500-byte packet (a
    rate trace's link takes no BDP queue of its own: its rate is not fixed)."""
    value, unit = parse_queue(spec)
    if unit == "packets":
        return f"{int(value)} packets"
    seconds = [(r, d) for r, d in zip(rate_mbps, delay_ms) if r > 0]
    if not seconds:
        return f"{ACCESS_QUEUE_PACKETS} packets"
    rate = sum(r for r, _ in seconds) / len(seconds)
    if unit == "ms":
        held_s = value / 1000
    else:
        delays = [d for _, d in seconds if d is not None]
        held_s = value * 2 * (sum(delays) / len(delays) if delays else 0.0) / 1000
    return f"{max(round(rate * 1e6 / 8 * held_s), 1500)} B"


def write_scenario(table: ChannelTable, case: str, folder: str | Path, *, stack: str = "bbr",
                   offset_s: int = 0, size_bytes: int = DEFAULT_SIZE_BYTES,
                   horizon_s: int = DEFAULT_HORIZON_S,
                   queue_packets: int = ACCESS_QUEUE_PACKETS, seed: int = 1,
                   delay: Mapping[str, Any] | None = None,
                   handover: Mapping[str, Any] | None = None,
                   testbed: str | Testbed = "ideal", queue: str | None = None) -> CaseScenario:
    """Writes `folder/scenario.toml` and its series files: a download of `size_bytes` from
    `server` to `client` with `stack` (see STACKS) under `case`, over `table` read from trace
    second `start_s + offset_s` for at most `horizon_s` seconds, its links as `testbed`
    (`multiconn.testbeds`) shapes them. `delay` is the capacity → delay curve (default the
    study's); `queue` each access link's queue (`access_queue_limit`: `100packets`, `50ms`,
    `1.5BDP`), else `queue_packets` packets."""
    import tomli_w

    bed = _testbed(testbed)
    if queue is not None:
        parse_queue(queue)

    if stack not in STACKS:
        raise CaseError(f"stack = {stack!r}: unknown; the stacks are {', '.join(STACKS)}")
    if not (isinstance(size_bytes, int) and size_bytes >= 1):
        raise CaseError(f"size_bytes = {size_bytes!r}: must be a whole number of bytes, "
                        "at least 1")
    if not (isinstance(queue_packets, int) and queue_packets >= 1):
        raise CaseError(f"queue_packets = {queue_packets!r}: must be a whole number, at least 1")
    handover = bed.handover(dict(handover or {}), knows_cells=table.cell_id is not None)
    window = table.window(offset_s, horizon_s)
    timeline = run_case(window, case, delay=delay, **handover)
    transport, profile, cc = STACKS[stack]
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    spec = queue if queue is not None else f"{queue_packets} packets"

    def access_queue(rate: Sequence[float], delay_ms: Sequence[float | None]) -> str:
        return bed.access_queue(list(rate), list(delay_ms),
                                access_queue_limit(spec, rate, delay_ms))
    links: list[dict[str, Any]] = [{"name": "core", "between": ["server", "switch"], **CORE}]
    flow: dict[str, Any] = {"name": "dl", "from": "server", "to": "client",
                            "transport": transport, "profile": profile, "cc": cc,
                            "app": "bulk", "size": f"{size_bytes} B"}
    if timeline.seamless:
        slot = timeline.slots[0]
        links.append({"name": "radio", "between": ["switch", "client"],
                      **_series_files(folder, "radio", slot["rate_mbps"], slot["delay_ms"], bed),
                      "queue": access_queue(slot["rate_mbps"], slot["delay_ms"]),
                      **bed.replacements()})
        flow["route"] = ["core", "radio"]
        used: list[int] = []
    else:
        used = []
        for e in timeline.events:
            if e["action"] == "open" and e["channel"] not in used:
                used.append(e["channel"])
        if not used:
            raise CaseError(f"case {case}: no channel is ever available from offset "
                            f"{offset_s} s; nothing can be downloaded")
        path_of = {k: i for i, k in enumerate(used)}
        # A channel whose cell changes (cell_change_is_handover) gets a second path on the
        # same link, after the first paths, for Multipath QUIC; MPTCP's subflows stay (its
        # links neither go down nor change address at a cell change).
        changing = [k for k in used if transport == "quic" and any(
            e["channel"] == k and e.get("cause") == "cell_change" for e in timeline.events)]
        second_of = {k: len(used) + i for i, k in enumerate(changing)}
        event_paths = _event_paths(timeline.events, path_of,
                                   {k: second_of.get(k, path_of[k]) for k in used})
        at_start = {path for e, path in zip(timeline.events, event_paths)
                    if e["action"] == "open" and e["at_s"] == 0}
        at_start.add(0)
        paths = []
        for k in used:
            ch = timeline.channels[k]
            access = {**_series_files(folder, f"ch{k}", ch["rate_mbps"], ch["delay_ms"], bed),
                      "queue": access_queue(ch["rate_mbps"], ch["delay_ms"]),
                      "down": _down_windows(ch["up"], horizon_s), **bed.replacements()}
            if not access["down"]:
                del access["down"]
            if transport == "tcp" or k in changing:
                # The client's side of the channel: one always-up link per address it has
                # there (two when cell changes alternate the channel's paths).
                links.append({"name": f"ch{k}", "between": ["switch", f"ue_r{k}"], **access})
                links.append({"name": f"ue{k}", "between": [f"ue_r{k}", "client"], **UE_LINK})
                paths.append(["core", f"ch{k}", f"ue{k}"])
            else:
                links.append({"name": f"ch{k}", "between": ["switch", "client"], **access})
                paths.append(["core", f"ch{k}"])
        for k in changing:
            links.append({"name": f"ue{k}b", "between": [f"ue_r{k}", "client"], **UE_LINK})
            paths.append(["core", f"ch{k}", f"ue{k}b"])
        if len(paths) > 1:
            flow["paths"] = paths
        else:
            flow["route"] = paths[0]
        if transport == "quic" and len(paths) > 1:
            schedule = _schedule(timeline.events, event_paths, at_start)
            if schedule:
                flow["multipath"] = {"schedule": schedule}
    scenario = {
        "name": f"case-{case}-{stack}-o{offset_s}",
        "run": {"duration": _seconds(horizon_s), "seed": seed},
        "link": links,
        "flow": [flow],
    }
    path = folder / "scenario.toml"
    header = (f"# A {size_bytes} B download with {stack} in case {case}, from trace second "
              f"{table.start_s + offset_s}"
              + ("" if not bed.mechanisms else f", on the {bed.name} testbed") + ".\n"
              + "".join(f"# ch{k}: channel {timeline.names[k]}\n" for k in used))
    path.write_text(header + tomli_w.dumps(scenario))
    return CaseScenario(path=path, timeline=timeline, channels=tuple(used))


# -- per-run capacity -----------------------------------------------------------------------


def mean_over(values: Sequence[float], until_s: float) -> float:
    """The time average over [0, until_s) of a per-second step series (looping past its end
    is not needed: the series covers the run's horizon)."""
    if until_s <= 0:
        return float(values[0]) if values else 0.0
    total = 0.0
    whole = int(until_s)
    for t in range(min(whole, len(values))):
        total += values[t]
    if whole < len(values):
        total += values[whole] * (until_s - whole)
    return total / until_s


def slot_changes(timeline: Timeline, until_s: float) -> int:
    """Channel changes of any slot in (0, until_s): the run's handovers."""
    count = 0
    for slot in timeline.slots:
        channels = slot["channel"]
        for t in range(1, min(len(channels), math.ceil(until_s))):
            if channels[t] is not None and channels[t - 1] is not None and \
                    channels[t] != channels[t - 1]:
                count += 1
    return count
