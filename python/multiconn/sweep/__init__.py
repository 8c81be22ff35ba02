"""Experiments at scale: sweep files, a resumable results store, local and Dask backends.

    >>> import multiconn
    >>> summary = multiconn.run_sweep("sweeps/mathis.toml", out="out/mathis", jobs=2)
    >>> frame = multiconn.load("out/mathis")

The names below load their module on first use, so importing the package stays quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import SweepError

if TYPE_CHECKING:
    from .driver import Failure, SweepSummary, run_sweep
    from .results import load, load_messages, load_timeseries
    from .spec import SweepSpec, load_sweep, parse_sweep_text

_LAZY = {
    "Failure": ".driver", "SweepSummary": ".driver", "run_sweep": ".driver",
    "load": ".results", "load_messages": ".results", "load_timeseries": ".results",
    "SweepSpec": ".spec", "load_sweep": ".spec", "parse_sweep_text": ".spec",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "Failure", "SweepError", "SweepSpec", "SweepSummary", "load", "load_messages",
    "load_sweep", "load_timeseries", "parse_sweep_text", "run_sweep",
]
