"""Experiments at scale: sweep files, a resumable results store, local and Dask backends.

    >>> import multiconn
    >>> summary = multiconn.run_sweep("sweeps/mathis.toml", out="out/mathis", jobs=2)
    >>> frame = multiconn.load("out/mathis")
"""

from __future__ import annotations

from .driver import Failure, SweepSummary, run_sweep
from .results import load, load_messages, load_timeseries
from .spec import SweepError, SweepSpec, load_sweep, parse_sweep_text

__all__ = [
    "Failure", "SweepError", "SweepSpec", "SweepSummary", "load", "load_messages",
    "load_sweep", "load_timeseries", "parse_sweep_text", "run_sweep",
]
