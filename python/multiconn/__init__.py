"""multiconn: a deterministic packet-level simulator for transport protocols over cellular
multi-connectivity.

    >>> import multiconn
    >>> result = multiconn.run("examples/scenarios/bulk.toml", seed=1)
    >>> result.summary["flows"][0]["goodput_mbps"]
    >>> result.timeseries.head()
    >>> result.write("out/bulk")
    >>> result.plot("out/bulk/figures")        # the standard figures of the run
    >>> multiconn.run_sweep("sweeps/mathis.toml", out="out/mathis", jobs=2)
    >>> multiconn.load("out/mathis")          # one row per run and flow (pandas)
    >>> multiconn.load_messages("out/v2x", run_key)  # a run's messages (app = "messages")
    >>> session = multiconn.Session("v2x.toml")  # an application writing messages itself

The names below load their module on first use (PEP 562), so `import multiconn` and the
command line start without pandas, pyarrow, numpy, rich or matplotlib.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._native import ScenarioError, available
from .errors import SweepError

if TYPE_CHECKING:
    from .app import Session
    from .result import RunResult
    from .runner import run, validate
    from .sweep import load, load_messages, load_sweep, load_timeseries, run_sweep

    __version__: str

_LAZY = {
    "Session": ".app", "RunResult": ".result", "run": ".runner", "validate": ".runner",
    "load": ".sweep", "load_messages": ".sweep", "load_sweep": ".sweep",
    "load_timeseries": ".sweep", "run_sweep": ".sweep",
}


def _version() -> str:
    if available():
        from ._native import core

        return str(core().version())
    try:
        from importlib.metadata import version

        return version("multiconn")
    except Exception:
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "RunResult", "ScenarioError", "Session", "SweepError", "__version__", "load",
    "load_messages", "load_sweep", "load_timeseries", "run", "run_sweep", "validate",
]
