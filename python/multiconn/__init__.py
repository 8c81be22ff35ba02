"""multiconn: a deterministic packet-level simulator for transport protocols over cellular
multi-connectivity.

    >>> import multiconn
    >>> result = multiconn.run("examples/scenarios/bulk.toml", seed=1)
    >>> result.summary["flows"][0]["goodput_mbps"]
    >>> result.timeseries.head()
    >>> result.write("out/bulk")
    >>> multiconn.run_sweep("sweeps/mathis.toml", out="out/mathis", jobs=2)
    >>> multiconn.load("out/mathis")          # one row per run and flow (pandas)
    >>> multiconn.load_messages("out/v2x", run_key)  # a run's messages (app = "messages")
    >>> session = multiconn.Session("v2x.toml")  # an application writing messages itself
"""

from __future__ import annotations

from ._native import ScenarioError, available
from .app import Session
from .result import RunResult
from .runner import run, validate
from .sweep import SweepError, load, load_messages, load_sweep, load_timeseries, run_sweep


def _version() -> str:
    if available():
        from ._native import core

        return str(core().version())
    try:
        from importlib.metadata import version

        return version("multiconn")
    except Exception:
        return "0+unknown"


__version__ = _version()

__all__ = [
    "RunResult", "ScenarioError", "Session", "SweepError", "__version__", "load",
    "load_messages", "load_sweep", "load_timeseries", "run", "run_sweep", "validate",
]
