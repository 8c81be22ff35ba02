"""Access to the compiled extension `multiconn._core`, with a clear error when it is missing.

The pure-Python parts of the package (argument parsing, sweep files, output writing) import
without the extension, so a broken build shows up as one readable message instead of an
import traceback.

The scenario schema the Python side relies on is defined once, in Rust, and exported by the
extension: the time-series and message-table columns with their types, the message kinds and
the duration units. `TIMESERIES_COLUMNS`, `MESSAGE_COLUMNS`, `MESSAGE_KINDS` and
`DURATION_UNITS` here are the extension's; only when it is not built are they the copies
below, which the tests check against the extension's.
"""

from __future__ import annotations

from types import ModuleType

try:
    from . import _core as _loaded
except ImportError as exc:  # the extension was not built or does not match this Python
    _loaded = None
    IMPORT_ERROR: ImportError | None = exc
else:
    IMPORT_ERROR = None

HINT = (
    "the native extension multiconn._core is not available ({err}); build it with "
    "`make setup` (development) or `pip install .`"
)


def available() -> bool:
    """Whether the compiled extension could be imported."""
    return _loaded is not None


def core() -> ModuleType:
    """The extension module, or an ImportError that says how to build it."""
    if _loaded is None:
        raise ImportError(HINT.format(err=IMPORT_ERROR))
    return _loaded


# Without the extension: copies of its constants (tests/python/test_api.py checks them).
FALLBACK_TIMESERIES_COLUMNS: tuple[tuple[str, str], ...] = (
    ("time_s", "float64"), ("kind", "str"), ("name", "str"), ("direction", "str"),
    ("bytes_delivered", "int64"), ("throughput_mbps", "float64"), ("drops_queue", "int64"),
    ("drops_random_loss", "int64"), ("drops_link_down", "int64"), ("drops_udp_buffer", "int64"),
    ("drops_pdcp_late", "int64"), ("drops_pdcp_window", "int64"), ("queue_packets", "float64"),
    ("queue_bytes", "float64"), ("cwnd_bytes", "float64"), ("bytes_in_flight", "float64"),
    ("srtt_ms", "float64"), ("retransmissions", "float64"),
    ("spurious_retransmissions", "float64"), ("path", "int64"), ("leg", "str"),
    ("reorder_delay_ms", "float64"), ("reorder_buffer_pdus", "float64"), ("drops_ack", "int64"),
    ("ue", "str"), ("sinr_db", "float64"), ("cqi", "float64"), ("mcs", "float64"),
    ("rbs_per_tti", "float64"), ("tbs", "int64"), ("tb_errors", "int64"), ("tbs_new", "int64"),
    ("tb_errors_first", "int64"), ("tbs_lost", "int64"), ("rlc_buffer_max_bytes", "float64"),
    ("rlc_buffer_bytes", "float64"),
)
FALLBACK_MESSAGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("flow", "str"), ("source", "str"), ("kind", "str"), ("stream", "int64"),
    ("msg_id", "int64"), ("size", "int64"), ("sent_s", "float64"), ("received_s", "float64"),
    ("path_owd_min_s", "float64"), ("expired_s", "float64"),
)
FALLBACK_MESSAGE_KINDS: tuple[str, ...] = ("priority", "background")
FALLBACK_DURATION_UNITS: tuple[tuple[str, float], ...] = (
    ("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0), ("sec", 1.0),
    ("min", 60.0), ("h", 3600.0),
)

if available():
    ScenarioError: type[ValueError] = core().ScenarioError
    TIMESERIES_COLUMNS: tuple[tuple[str, str], ...] = core().TIMESERIES_COLUMNS
    """The time-series table's columns in order, as (name, type) pairs; the types are
    "float64", "int64" and "str"."""
    MESSAGE_COLUMNS: tuple[tuple[str, str], ...] = core().MESSAGE_COLUMNS
    """The message table's columns in order, as (name, type) pairs."""
    MESSAGE_KINDS: tuple[str, ...] = core().MESSAGE_KINDS
    """The kinds of message source and stream; a kind sets a stream's defaults."""
    DURATION_UNITS: tuple[tuple[str, float], ...] = core().DURATION_UNITS
    """Every unit the simulator reads durations in, with its length in seconds."""
else:

    class ScenarioError(ValueError):  # type: ignore[no-redef]
        """Stand-in raised for bad input when the extension is not built."""

        file: str | None = None
        line: int | None = None
        set: str | None = None
        path: str | None = None

    TIMESERIES_COLUMNS = FALLBACK_TIMESERIES_COLUMNS
    MESSAGE_COLUMNS = FALLBACK_MESSAGE_COLUMNS
    MESSAGE_KINDS = FALLBACK_MESSAGE_KINDS
    DURATION_UNITS = FALLBACK_DURATION_UNITS

__all__ = [
    "DURATION_UNITS", "IMPORT_ERROR", "MESSAGE_COLUMNS", "MESSAGE_KINDS", "ScenarioError",
    "TIMESERIES_COLUMNS", "available", "core",
]
