"""Type stubs for the native extension `multiconn._core` (crates/py)."""

from collections.abc import Mapping, Sequence
from typing import Any, final

__all__ = [
    "DURATION_UNITS",
    "DriveError",
    "MESSAGE_COLUMNS",
    "MESSAGE_KINDS",
    "ScenarioError",
    "Simulation",
    "TIMESERIES_COLUMNS",
    "drive_aggregate",
    "drive_case",
    "drive_estimate",
    "drive_generate",
    "drive_presets",
    "emu_main",
    "validate",
    "version",
    "warnings",
]

TIMESERIES_COLUMNS: tuple[tuple[str, str], ...]
"""The time-series table's columns in order, as (name, type); types "float64", "int64", "str"."""
MESSAGE_COLUMNS: tuple[tuple[str, str], ...]
"""The message table's columns in order, as (name, type)."""
MESSAGE_KINDS: tuple[str, ...]
"""The kinds of message source and stream ("priority", "background")."""
DURATION_UNITS: tuple[tuple[str, float], ...]
"""Every unit a duration may be written in, with its length in seconds."""

class ScenarioError(ValueError):
    """A scenario could not be parsed, overridden, validated or its trace files loaded."""

    file: str | None
    """The scenario's name in messages (its path as given, `<string>`, `<dict>`)."""
    line: int | None
    """The 1-based line of the error, where it lies in the file's text."""
    set: str | None
    """The override `KEY=VALUE` that set the field, given instead of a line."""
    path: str | None
    """The field as a dotted path (`link.bottleneck.rate`)."""
    message: str
    """What is wrong and what is allowed (the one-line text without file, line and field)."""

def version() -> str:
    """The version of the native crate."""

def emu_main(args: Sequence[str]) -> int:
    """The emulator's command line (multiconn-emu), without the program's name; its exit code."""

def validate(text: str, origin: str, base_dir: str, overrides: Sequence[tuple[str, str]]) -> str:
    """Loads and validates a scenario; returns the resolved scenario as JSON."""

def warnings(text: str, origin: str, base_dir: str, overrides: Sequence[tuple[str, str]]) -> list[str]:
    """Loads and validates a scenario; returns its warnings, one line each."""

@final
class Simulation:
    """A run in progress, advanced in bounded steps of virtual time."""

    def __new__(
        cls,
        text: str,
        origin: str,
        base_dir: str,
        overrides: Sequence[tuple[str, str]],
        seed: int | None = None,
    ) -> Simulation: ...
    @property
    def end_time_s(self) -> float:
        """The time limit of the run, in seconds of virtual time."""
    @property
    def now_s(self) -> float:
        """Virtual time reached so far, in seconds."""
    @property
    def events(self) -> int:
        """Events processed so far."""
    @property
    def done(self) -> bool:
        """Whether the run is over."""
    @property
    def scenario_json(self) -> str:
        """The resolved scenario (after overrides) as JSON."""
    @property
    def stalled(self) -> str | None:
        """Why the watchdog stopped the run (virtual time stood still), or None."""
    def set_stall_limit(self, events: int) -> None:
        """Events allowed at one instant before the run is declared stalled."""
    def set_check_invariants(self, on: bool) -> None:
        """Turns the invariant checker on or off (only before the run starts)."""
    @property
    def checks_invariants(self) -> bool:
        """Whether the invariant checker is on (default: MULTICONN_CHECK_INVARIANTS=1)."""
    @property
    def violation(self) -> str | None:
        """The first invariant violation (it ended the run), as one line, or None."""
    @property
    def event_estimate(self) -> list[tuple[float, str, str]]:
        """A rough count of the run's events by part: (events, who, how), largest first."""
    def run_until(self, t_s: float, max_events: int | None = None) -> bool:
        """Runs (GIL released) until virtual time `t_s`, the limit, all flows done, or
        `max_events` events fired; returns done."""
    def finish(
        self,
    ) -> tuple[
        str,
        list[tuple[str, str, bytes | None, bytes | None, int, Any]],
        list[tuple[str, str]],
        list[tuple[str, str, bytes | None, bytes | None, int, Any]],
    ]:
        """Ends the run: summary JSON, time-series columns as typed buffers (name, type,
        data, validity, null count, extra), qlog files and the message table's columns in
        the same form (empty without message flows). May be called once."""
    def take_pcap(self) -> tuple[list[tuple[str, bytes]], list[str]]:
        """After `finish`: the packet captures (file name, bytes) and one line per file that
        reached its size limit; empty on later calls."""
    def open_stream(
        self,
        flow: str,
        name: str,
        kind: str,
        priority: int | None = None,
        urgent: bool | None = None,
        redundant: bool | None = None,
        deadline_s: float | None = None,
    ) -> int:
        """Message flow `flow`'s sender opens a stream; returns its id. None: the kind's default."""
    def write(self, flow: str, stream: int, size: int) -> int:
        """Writes one message of `size` bytes now; returns its number on the stream."""
    def finish_stream(self, flow: str, stream: int) -> None:
        """Ends the stream (a FIN follows its last message)."""
    def messages(self) -> dict[str, list[float] | list[int] | list[str]]:
        """The message table so far."""
    def messages_since(self, flow: str, n: int) -> dict[str, list[float] | list[int] | list[str]]:
        """The rows of flow `flow`'s messages that arrived after its first `n` arrivals, in order."""

class DriveError(ValueError):
    """A drive table, drive preset or estimation parameters that cannot be used; one line
    naming the field, or the row (1 is the first row under the header) and the column."""

def drive_case(
    channels: Sequence[Mapping[str, Any]],
    config_json: str,
    start_s: int = 0,
    delay_json: str | None = None,
) -> dict[str, Any]:
    """Runs a handover case (`{"case": "2", ...}`) over per-second channels (dicts with `name`,
    `capacity_mbps` and optionally `rsrp_dbm`, `sinr_db`, `cell_id`); returns the time line:
    `params` (JSON), `start_s`, `handovers`, `events`, `slots`, `channels`,
    `mp_capacity_mbps`, `sp_capacity_mbps`."""

def drive_generate(preset: str, seed: int, duration_s: int | None = None) -> str:
    """The synthetic drive of `preset` with `seed` as CSV text (the §5.2 long format)."""

def drive_presets() -> list[str]:
    """The preset names `drive_generate` accepts."""

def drive_estimate(
    table: str | Mapping[str, Sequence[Any]],
    params_json: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Estimates a drive table (CSV text or a dict of columns): the (second, channel) rows as
    columns, the per-second counts and levels as columns, and the Table 2/3 statistics."""

def drive_aggregate(
    start_s: int,
    operators: Sequence[str],
    earfcns: Sequence[int],
    capacities: Sequence[Sequence[float]],
    min_capacity_mbps: float = 0.0,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Levels and statistics of a table of capacities (no RSRP): `capacities[k]` is channel
    k's capacity (Mbit/s, one value per second from `start_s`) on carrier (`operators[k]`,
    `earfcns[k]`); returns what `drive_estimate` returns."""
