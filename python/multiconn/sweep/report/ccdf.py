"""The `ccdf` plot: the one-way delay CCDF of one kind of message, pooled over repetitions.

* Messages: each series pools the message tables (`messages/<run_key>.parquet`) of its runs,
  keeping the messages of the row's flow and of the plot's `message_kind`. The curve is
  `multiconn.messages.ccdf` of the pool: P(OWD > x) over every message sent, so a curve with
  lost messages levels off at the loss ratio instead of reaching zero.
* Deadline: the plot's `deadline`, else the deadline the runs' sources of that kind report in
  the summary (the smallest one when they differ); no line when neither gives one.
* Ideal reference (`ideal = true`): every message of the pool received after the smallest
  one-way delay the network alone gives over its flow's paths at its send time (the message
  table's `path_owd_min_s`, see docs/applications.md): seed 004's "ideal" curve, the best a
  scheduler sending every message on every path could do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.axes import Axes

from ... import messages as msg
from ..results import load_messages
from ..spec import PlotSpec, SweepSpec
from ..store import Store


class Unavailable(Exception):
    """What the plot needs is not there (the message says what)."""


def draw_ccdf(ax: Axes, runs: pd.DataFrame, spec: SweepSpec, plot: PlotSpec,
              folder: Path) -> None:
    """Draws the panel's curves on `ax` from `runs` (flow rows with a `_series` label).

    Raises Unavailable when no selected flow has messages of the plot's kind."""
    runs = runs[runs["app"].astype(str) == "messages"]
    if runs.empty:
        raise Unavailable("no selected flow sends messages (app = \"messages\")")
    records = _records(folder, spec.name, set(runs["run_key"]))
    tables: dict[str, pd.DataFrame] = {}
    curves: dict[str, list[pd.DataFrame]] = {}
    for _, row in runs.iterrows():
        key, flow = str(row["run_key"]), str(row["flow"])
        if key not in tables:
            tables[key] = load_messages(folder, key)
        table = tables[key]
        own = table[(table["flow"].astype(str) == flow)
                    & (table["kind"].astype(str) == plot.message_kind)]
        if own.empty:
            continue
        curves.setdefault(str(row["_series"]), []).append(own)
    if not curves:
        raise Unavailable(f"the selected runs sent no {plot.message_kind} messages")
    pooled = {label: pd.concat(parts, ignore_index=True) for label, parts in curves.items()}
    ideal_from = _ideal_source(pooled) if plot.ideal else None
    deadline = plot.deadline if plot.deadline is not None else _summary_deadline(
        records, runs, plot.message_kind)
    msg.plot_ccdf(ax, pooled, deadline, ideal_from=ideal_from)
    legend = ax.get_legend()
    if legend is not None:
        legend.remove()  # the report puts its legend below the axes


def _records(folder: Path, experiment: str, keys: set[str]) -> dict[str, Any]:
    with Store(folder, create=False) as store:
        return {r.run_key: r for r in store.records(experiment) if r.run_key in keys}


def _summary_deadline(records: dict[str, Any], runs: pd.DataFrame, kind: str) -> float | None:
    """The smallest deadline (s) the runs' sources of `kind` report, None if none does."""
    found = []
    for _, row in runs.iterrows():
        summary = records[str(row["run_key"])].summary or {}
        for flow in summary.get("flows", []):
            if flow.get("name") != row["flow"]:
                continue
            for source in (flow.get("messages") or {}).values():
                if source.get("kind") == kind and source.get("deadline_ms"):
                    found.append(float(source["deadline_ms"]) / 1e3)
    return min(found) if found else None


def _ideal_source(pooled: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every pooled message with its smallest path delay (the message tables' own column)."""
    every = pd.concat(list(pooled.values()), ignore_index=True)
    if msg.IDEAL_COLUMN not in every.columns:
        raise Unavailable(f"the stored message tables have no {msg.IDEAL_COLUMN} column "
                          "(written by an older multiconn: run the sweep again into a new "
                          "folder for the ideal reference)")
    if every[msg.IDEAL_COLUMN].isna().all():
        raise Unavailable("no message has a path delay for the ideal reference (flows over "
                          "split bearers have none)")
    return every
