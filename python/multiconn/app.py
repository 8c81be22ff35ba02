"""Applications on the simulated transport: open streams with a priority, an urgency and a
redundancy flag, write messages at chosen virtual times, read what arrived with timestamps.

This is the role of seed 004's MPQUIC socket API (Mogensen & Markmøller, §7.2.1) over the
simulator: the scenario gives the network and the connection (an app = "messages" flow; with
`messages = []` the application writes everything itself, otherwise its own streams add to
the periodic sources), the Python code is the sending application:

    session = Session("v2x.toml")
    conn = session.connection("v2x")
    cam = conn.open_stream("cam", kind="priority")            # urgent, redundant, 100 ms
    video = conn.open_stream("video", kind="background")
    for k in range(600):
        session.run_until(1.0 + 0.1 * k)
        cam.write(1200)
        video.write(12_500)
    session.run_until(65.0)
    arrived = conn.read()           # messages received since the last read
    result = session.finish()       # summary, time series and message table (`RunResult`)

Messages are timestamped when written (the current virtual time) and when the receiving
application has them whole, in order. Everything is deterministic: the same scenario, seed
and writes give the same arrivals.
"""

from __future__ import annotations

import json
import math
import time
from typing import TYPE_CHECKING

from ._native import MESSAGE_KINDS, core
from .frame import NativeTable, build_messages_frame, native_columns
from .result import RunResult, with_wall_time
from .source import OverridesLike, ScenarioLike, normalize_overrides, resolve_source

if TYPE_CHECKING:
    import pandas as pd

KINDS: tuple[str, ...] = MESSAGE_KINDS
"""Message kinds; a kind sets a stream's defaults (see `Connection.open_stream`)."""


class Session:
    """One run of a scenario driven step by step by the caller's application code."""

    def __init__(self, scenario: ScenarioLike, seed: int | None = None,
                 overrides: OverridesLike = None) -> None:
        source = resolve_source(scenario)
        pairs = normalize_overrides(overrides)
        self._sim = core().Simulation(source.text, source.origin, source.base_dir, pairs, seed)
        self._started = time.perf_counter()
        self._finished = False

    @property
    def now_s(self) -> float:
        """The virtual time reached, in seconds."""
        return float(self._sim.now_s)

    @property
    def end_time_s(self) -> float:
        """The scenario's time limit (`inf` without `run.duration`)."""
        return float(self._sim.end_time_s)

    @property
    def done(self) -> bool:
        """The run is over: time limit reached, or every flow done."""
        return bool(self._sim.done)

    def run_until(self, t_s: float) -> bool:
        """Advances virtual time to `t_s` seconds (or the run's end); returns `done`."""
        t = float(t_s)
        if math.isnan(t):
            raise ValueError("run_until: the time must be a number, not NaN")
        if t < self.now_s:
            raise ValueError(f"run_until: virtual time only moves forward (now {self.now_s} s, "
                             f"asked {t} s)")
        return bool(self._sim.run_until(t))

    def connection(self, flow: str) -> Connection:
        """The sending side of message flow `flow` (checked when it is first used)."""
        return Connection(self, flow)

    def messages(self) -> pd.DataFrame:
        """Every message written so far, received or not (`received_s` NaN)."""
        return build_messages_frame(self._sim.messages())

    def finish(self) -> RunResult:
        """Ends the run; returns its `RunResult` (summary, time series, message table)."""
        summary_json, native, qlog, native_messages = self._sim.finish()
        columns, messages = native_columns(native), native_columns(native_messages)
        pcap, pcap_warnings = self._sim.take_pcap()
        self._finished = True
        summary = with_wall_time(json.loads(summary_json), time.perf_counter() - self._started)
        return RunResult(
            summary=summary,
            timeseries=NativeTable(columns),
            scenario=json.loads(self._sim.scenario_json),
            qlog=dict(qlog),
            messages=NativeTable(messages, messages=True) if messages else None,
            pcap=dict(pcap),
            pcap_warnings=list(pcap_warnings),
        )


class Connection:
    """The sending application's end of one message flow."""

    def __init__(self, session: Session, flow: str) -> None:
        self._session = session
        self.flow = flow
        self._arrived = 0

    def open_stream(self, name: str, kind: str = "background", *, priority: int | None = None,
                    urgent: bool | None = None, redundant: bool | None = None,
                    deadline_s: float | None = None) -> Stream:
        """Opens a stream. `kind` sets the defaults: "priority" streams are packed first
        (priority 0), urgent (not held back by a path's congestion window when the multipath
        option `priority_ignores_cwnd` is on), redundant (sent on every path by the selective
        redundant scheduler) and due within 100 ms; "background" streams are priority 1 and
        none of these (the simulator's defaults, `MessageKind::defaults`). `name` labels the
        stream's messages in the message table."""
        stream_id = self._session._sim.open_stream(
            self.flow, name, kind, priority,
            None if urgent is None else bool(urgent),
            None if redundant is None else bool(redundant),
            deadline_s,
        )
        return Stream(self, int(stream_id), name)

    def messages(self) -> pd.DataFrame:
        """Every message of this flow written so far, received or not."""
        frame = self._session.messages()
        return frame[frame["flow"] == self.flow].reset_index(drop=True)

    def read(self) -> pd.DataFrame:
        """The messages that arrived since the last `read`, in order of arrival, with their
        `sent_s` and `received_s` (virtual seconds)."""
        fresh = build_messages_frame(self._session._sim.messages_since(self.flow, self._arrived))
        self._arrived += len(fresh)
        out = fresh.sort_values(["received_s", "stream", "msg_id"], kind="stable")
        return out.reset_index(drop=True)


class Stream:
    """A stream the application opened; `write` hands it messages."""

    def __init__(self, connection: Connection, stream_id: int, name: str) -> None:
        self.connection = connection
        self.id = stream_id
        self.name = name

    def write(self, size: int) -> int:
        """Writes one message of `size` bytes at the current virtual time; returns its number
        on this stream (0, 1, ...)."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"a message size is a whole number of bytes ≥ 1, not {size!r}")
        sim = self.connection._session._sim
        return int(sim.write(self.connection.flow, self.id, size))

    def finish(self) -> None:
        """No more messages on this stream (its FIN follows the last one)."""
        self.connection._session._sim.finish_stream(self.connection.flow, self.id)
