"""The errors that mean bad input, in one light module.

The command line maps each of them to exit code 2 with a one-line message; defining them
here (rather than beside the code that raises them) lets it catch them without importing the
sweep machinery, pandas or the plotting code.
"""

from __future__ import annotations


class SweepError(ValueError):
    """A sweep file that cannot be used; the message names the file and the field."""


class StoreError(OSError):
    """The output directory cannot hold or does not hold a results store."""


class BackendError(RuntimeError):
    """The backend cannot start (Dask not installed, scheduler unreachable, ...)."""


class RunStalled(RuntimeError):
    """The watchdog ended a run whose virtual time stopped advancing. `partial` holds the
    results up to that instant (a `RunResult` whose summary has `incomplete`)."""

    def __init__(self, message: str, partial: object) -> None:
        super().__init__(message)
        self.partial = partial


class PcapLimitWarning(UserWarning):
    """A packet capture file reached its size limit (`run.pcap_max_mb`): the packets after
    that point are not in it. The message names the file and how many packets it left out."""


class LongRunWarning(UserWarning):
    """A run's rates imply more events than a run of minutes fires (`multiconn.runner`:
    `EVENT_WARNING`): the message gives the estimate and names the flow and the link that
    fire the most. Issued before the run starts; the run goes on."""


class InvariantViolation(RuntimeError):
    """The invariant checker found a run breaking a rule every model must keep (bytes
    conserved on a link, no delivery before serialization and delay, PDCP COUNTs in order,
    stream bytes in order and once, path IDs never reused): a bug in a model. The message
    names the scenario, the seed, the entity and the virtual instant (docs/invariants.md)."""


class DriveTableError(ValueError):
    """A drive table, G-NetTrack file or drive option that cannot be used; the message names
    the file, the row and the column (or the option)."""


class CaseError(DriveTableError):
    """A channel table, handover case or download-experiment option that cannot be used; the
    message names the file and row, or the field."""


class RunFolderError(OSError):
    """A folder that does not hold the results of a run (summary.json, timeseries.parquet)."""


class PlotOptionError(ValueError):
    """A figure option that does not fit the run (a time span outside it, an empty CCDF
    range); the message names the option and what is allowed."""


__all__ = ["BackendError", "CaseError", "DriveTableError", "FindingsError", "InvariantViolation", "PlotOptionError", "RunFolderError", "RunStalled", "StoreError",
           "SweepError"]


class EmulationError(ValueError):
    """The scenario or this machine cannot be emulated (not root, no TUN, a tool missing, a
    link too fast, a flow no stack fits); the message is the emulator's one line."""


class EmulationFailed(RuntimeError):
    """An emulated run failed (a server that never listened, a device that could not be
    made); the message is the emulator's one line."""


class FindingsError(ValueError):
    """A list of a study's findings (`multiconn/studies/*.toml`) that cannot be read or run."""
