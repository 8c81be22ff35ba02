"""The `ccdf` plot: the one-way delay CCDF of one kind of message, pooled over repetitions.

* Messages: each series pools the message tables (`messages/<run_key>.parquet`) of its runs,
  keeping the messages of the row's flow and of the plot's `message_kind`. The curve is
  `multiconn.messages.ccdf` of the pool: P(OWD > x) over every message sent, so a curve with
  lost messages levels off at the loss ratio instead of reaching zero.
* Deadline: the plot's `deadline`, else the deadline the runs' sources of that kind report in
  the summary (the smallest one when they differ); no line when neither gives one.
* Ideal reference (`ideal = true`): every message of the pool received after the smallest
  one-way delay over its flow's paths at its send time, each path's delay being the sum of
  its links' delays in the data direction (constant or `series` delays; propagation only,
  no queueing or serialisation). This is seed 004's "ideal" curve, the best a scheduler
  sending every message on every path could do.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ... import messages as msg
from ..results import load_messages
from ..spec import DURATION_UNITS, PlotSpec, SweepSpec, _split_number
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
        if plot.ideal:
            scenario = json.loads(records[key].scenario_json or "{}")
            sent = own["sent_s"].to_numpy("float64")
            own = own.assign(**{msg.IDEAL_COLUMN: best_path_delay(
                scenario, spec.scenario.base_dir, flow, sent)})
        curves.setdefault(str(row["_series"]), []).append(own)
    if not curves:
        raise Unavailable(f"the selected runs sent no {plot.message_kind} messages")
    pooled = {label: pd.concat(parts, ignore_index=True) for label, parts in curves.items()}
    ideal_from = pd.concat(list(pooled.values()), ignore_index=True) if plot.ideal else None
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


def best_path_delay(scenario: dict[str, Any], base_dir: str, flow_name: str,
                    times: np.ndarray) -> np.ndarray:
    """Per time in `times` (s), the smallest one-way delay (s) over the flow's paths in its
    data direction (`from` to `to`): the sum of each path's link delays at that time.

    Raises Unavailable for a path through a split bearer or a link whose delay is drawn at
    random (normal, empirical): no per-message ideal exists then."""
    flow = next((f for f in scenario.get("flow", []) if f.get("name") == flow_name), None)
    if flow is None:
        raise Unavailable(f"the scenario has no flow {flow_name!r}")
    links = {link["name"]: link for link in scenario.get("link", [])}
    routes = flow.get("paths") or ([flow["route"]] if flow.get("route") else None)
    if routes is None:
        joining = [name for name, link in links.items()
                   if set(link.get("between", ())) == {flow["from"], flow["to"]}]
        if len(joining) != 1:
            raise Unavailable(f"flow {flow_name!r} has no route the ideal reference can follow")
        routes = [joining]
    best = np.full(len(times), math.inf)
    for route in routes:
        total = np.zeros(len(times))
        node = flow["from"]
        for name in route:
            link = links.get(name)
            if link is None:
                raise Unavailable(f"the ideal reference follows links only; {name!r} on flow "
                                  f"{flow_name!r}'s path is a split bearer")
            first, second = link["between"]
            direction, node = ("forward", second) if node == first else ("reverse", first)
            table = link.get(direction) or {}
            delay = table["delay"] if "delay" in table else link.get("delay")
            total += _delay_at(delay, base_dir, times, f"{name} {direction}")
        best = np.minimum(best, total)
    return best


def _delay_at(delay: Any, base_dir: str, times: np.ndarray, where: str) -> np.ndarray:
    """A link direction's delay (s) at `times`: constant, or a `series` file interpolated
    linearly and held outside its span, as the link applies it."""
    if delay is None:
        return np.zeros(len(times))
    parts = _split_number(delay) if isinstance(delay, str) else None
    if parts is not None and parts[1] in DURATION_UNITS:
        return np.full(len(times), parts[0] * DURATION_UNITS[parts[1]])
    if isinstance(delay, dict) and delay.get("model") == "series":
        series = pd.read_csv(Path(base_dir, os.fspath(delay["file"])))
        return np.interp(times, series["time_s"].to_numpy("float64"),
                         series["delay_ms"].to_numpy("float64")) / 1e3
    model = delay.get("model") if isinstance(delay, dict) else delay
    raise Unavailable(f"the ideal reference needs constant or series delays; link {where} "
                      f"has delay {model!r}")
