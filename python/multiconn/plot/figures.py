"""The standard figures of one run, each drawn from its summary and time-series table.

Every builder returns the figures it applies to (none when the run has nothing of the kind):

* `throughput`: goodput per flow (top) and throughput per link direction (bottom) over time;
* `transport`: congestion window, bytes in flight and smoothed RTT of every transport flow;
* `paths-<flow>`: for a multipath flow, what each path carried (with the flow's goodput for
  comparison), and each path's congestion window and smoothed RTT; the path manager's
  actions (open, abandon, backup, available) are dotted vertical lines;
* `pdcp-<flow>`: for a flow over a PDCP split bearer, the PDUs' throughput per leg and the
  in-order throughput the receiving entity delivered, the mean reordering delay per bin and
  the reordering buffer (TS 38.323 §5.2.2);
* `queues`: the queue of every link direction that ever held a packet;
* `cell-<cell>`: for an LTE cell, per UE and direction, the mean SINR, the mean MCS, the
  resource blocks per TTI and the RLC transmission buffer's largest fill in each bin
  (docs/lte-cell.md);
* `owd-<flow>`: for a message flow, the one-way-delay CCDF of each message kind with the
  smallest deadline its sources report (see `multiconn.messages`).

Values are per time bin (the run's `[run] bin`, 100 ms by default).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..figstyle import TITLE_POINTS, legend_below, new_figure, title_text
from . import series as sr

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

KB = 1e3
PATH_ACTION_COLORS = {"open": "tab:green", "abandon": "tab:red", "backup": "tab:orange",
                      "available": "tab:blue"}


@dataclass
class Drawn:
    """A drawn figure before it is saved."""

    stem: str
    title: str
    caption: str
    figure: Figure


def slug(name: str) -> str:
    """A file-name-safe form of a flow name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "flow"


def _finish(fig: Figure, axes: list[Axes], title: str, caption: str = "") -> None:
    """Title and caption on top, time below, one legend for every axis under the figure."""
    axes[0].set_title(title_text(title, caption, fig.get_figwidth()), fontsize=TITLE_POINTS)
    axes[-1].set_xlabel("time (s)")
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    legend_below(fig, list(seen.values()), list(seen))


class Palette:
    """Colours for a figure's lines, continued across its axes so that one legend below the
    figure tells every line apart (a label keeps its colour on every axis)."""

    COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
              "tab:pink", "tab:olive", "tab:cyan", "tab:gray")

    def __init__(self) -> None:
        self.assigned: dict[str, str] = {}

    def __call__(self, label: str) -> str:
        if label not in self.assigned:
            self.assigned[label] = self.COLORS[len(self.assigned) % len(self.COLORS)]
        return self.assigned[label]


def _plot(ax: Axes, found: Iterator[sr.Line], palette: Palette, scale: float = 1.0,
          **style: Any) -> None:
    style.setdefault("linewidth", 1.1)
    for line in found:
        color = style.get("color") or palette(line.label)
        ax.plot(line.times, line.values / scale, label=line.label,
                **{**style, "color": color})


def throughput(table: pd.DataFrame, summary: Mapping[str, Any]) -> list[Drawn]:
    flows = sr.rows(table, "flow")
    links = sr.rows(table, "link")
    if flows.empty and links.empty:
        return []
    links = links[links.groupby(["name", "direction"], observed=True)["bytes_delivered"]
                  .transform("sum") > 0]
    fig, axes = new_figure(2)
    palette = Palette()
    _plot(axes[0], sr.lines(flows, "throughput_mbps", ("name",), lambda k: f"flow {k[0]}"),
          palette)
    axes[0].set_ylabel("flow goodput\n(Mbit/s)")
    _plot(axes[1], sr.lines(links, "throughput_mbps", ("name", "direction"),
                            lambda k: f"link {k[0]} {k[1]}"), palette)
    axes[1].set_ylabel("link throughput\n(Mbit/s)")
    _finish(fig, axes, "Throughput per flow and per link direction",
            f"{summary.get('scenario', '')}, seed {summary.get('seed', '?')}")
    return [Drawn("throughput", "Throughput per flow and per link direction",
                  "Goodput each flow's receiver got, and what each link direction delivered, "
                  "per time bin.", fig)]


def transport(table: pd.DataFrame, summary: Mapping[str, Any]) -> list[Drawn]:
    flows = sr.rows(table, "flow")
    if not sr.has_values(flows, "cwnd_bytes"):
        return []
    fig, axes = new_figure(3)
    label: Callable[[tuple[Any, ...]], str] = lambda k: f"flow {k[0]}"
    palette = Palette()
    for ax, column, scale, ylabel in ((axes[0], "cwnd_bytes", KB, "cwnd (kB)"),
                                      (axes[1], "bytes_in_flight", KB, "in flight (kB)"),
                                      (axes[2], "srtt_ms", 1.0, "smoothed RTT (ms)")):
        _plot(ax, sr.lines(flows, column, ("name",), label), palette, scale)
        ax.set_ylabel(ylabel)
    _finish(fig, axes, "Sender state per transport flow",
            "at the last event of each bin; a multipath flow's window and bytes in flight "
            "are its paths' sums (each path: the paths figure)")
    return [Drawn("transport", "Sender state per transport flow",
                  "Congestion window, bytes in flight and smoothed RTT of each transport "
                  "flow's sender.", fig)]


def _flow_summary(summary: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return next((f for f in summary.get("flows") or [] if f.get("name") == name), {})


def _path_label(flow: Mapping[str, Any], index: int) -> str:
    paths = flow.get("paths") or []
    route = paths[index].get("route") if index < len(paths) else None
    return f"path {index} ({' + '.join(route)})" if route else f"path {index}"


def _closed_spans(flow: Mapping[str, Any], path: int, end_s: float) -> list[tuple[float, float]]:
    """When `path` had no path ID open: from each abandonment to the next open (or the end)."""
    spans, closed_at = [], None
    for action in flow.get("path_manager") or []:
        if action.get("path") != path:
            continue
        if action.get("action") == "abandon" and closed_at is None:
            closed_at = float(action["at_s"])
        elif action.get("action") == "open" and closed_at is not None:
            spans.append((closed_at, float(action["at_s"])))
            closed_at = None
    if closed_at is not None:
        spans.append((closed_at, end_s))
    return spans


def _sender_state(line: sr.Line, spans: list[tuple[float, float]], column: str) -> sr.Line:
    """A path's sender state with gaps where it means nothing: while the path is closed (the
    table carries the last value over) and, for the RTT, before its first sample (0)."""
    import numpy as np

    values = line.values.copy()
    for start, end in spans:
        values[(line.times >= start) & (line.times < end)] = np.nan
    if column == "srtt_ms":
        values[values == 0] = np.nan
    return sr.Line(line.label, line.times, values, line.key)


def _path_actions(axes: list[Axes], flow: Mapping[str, Any]) -> None:
    for action in flow.get("path_manager") or []:
        color = PATH_ACTION_COLORS.get(str(action.get("action")), "grey")
        for ax in axes:
            ax.axvline(float(action["at_s"]), color=color, linestyle=":", linewidth=1)
        axes[0].annotate(f"{action.get('action')} {action.get('path')}",
                         (float(action["at_s"]), 1.0), xycoords=("data", "axes fraction"),
                         xytext=(2, -2), textcoords="offset points", fontsize="x-small",
                         color=color, va="top", rotation=90)


def paths(table: pd.DataFrame, summary: Mapping[str, Any]) -> list[Drawn]:
    drawn = []
    all_paths = sr.rows(table, "path")
    for name in sr.names(all_paths):
        own = all_paths[all_paths["name"].astype(str) == name]
        flow = _flow_summary(summary, name)
        label: Callable[[tuple[Any, ...]], str] = lambda k, f=flow: _path_label(f, int(k[0]))
        fig, axes = new_figure(3)
        palette = Palette()
        _plot(axes[0], sr.lines(own, "throughput_mbps", ("path",), label), palette)
        _plot(axes[0], sr.lines(sr.rows(table, "flow", name), "throughput_mbps", ("name",),
                                lambda k: "flow goodput"), palette, color="black",
              linestyle="--")
        axes[0].set_ylabel("carried\n(Mbit/s)")
        end_s = float(summary.get("sim_time_s") or own["time_s"].max() + 1)
        for ax, column, scale in ((axes[1], "cwnd_bytes", KB), (axes[2], "srtt_ms", 1.0)):
            found = [_sender_state(line, _closed_spans(flow, int(line.key[0]), end_s), column)
                     for line in sr.lines(own, column, ("path",), label)]
            _plot(ax, iter(found), palette, scale)
        axes[1].set_ylabel("cwnd (kB)")
        axes[2].set_ylabel("smoothed RTT (ms)")
        _path_actions(axes, flow)
        title = f"Paths of multipath flow {name}"
        _finish(fig, axes, title, "what each path carried towards the receiver; dotted: "
                "path manager actions; no window or RTT while a path is closed")
        drawn.append(Drawn(f"paths-{slug(name)}", title,
                           "Throughput each path carried, with the flow's goodput, and each "
                           "path's congestion window and smoothed RTT.", fig))
    return drawn


def pdcp(table: pd.DataFrame, summary: Mapping[str, Any]) -> list[Drawn]:
    drawn = []
    bearers = sr.rows(table, "bearer")
    legs = sr.rows(table, "leg")
    # A split with a reverse_policy serves the return direction too: its rows have
    # direction "reverse" and get a figure of their own.
    for name, direction in _bearer_directions(bearers):
        own = bearers[(bearers["name"].astype(str) == name) & (bearers["direction"].astype(str) == direction)]
        own_legs = legs[(legs["name"].astype(str) == name) & (legs["direction"].astype(str) == direction)]
        reverse = direction == "reverse"
        several = own["path"].nunique() > 1
        at = (lambda p: f" (path {p})") if several else (lambda p: "")
        fig, axes = new_figure(3)
        palette = Palette()
        _plot(axes[0], sr.lines(own_legs, "throughput_mbps", ("path", "leg"),
                                lambda k: f"leg {k[1]}{at(k[0])}"), palette)
        _plot(axes[0], sr.lines(own, "throughput_mbps", ("path",),
                                lambda k: f"delivered in order{at(k[0])}"), palette,
              color="black", linestyle="--")
        axes[0].set_ylabel("throughput\n(Mbit/s)")
        _plot(axes[1], sr.lines(own, "reorder_delay_ms", ("path",),
                                lambda k: f"reordering delay{at(k[0])}"), palette,
              marker=".", markersize=3)
        axes[1].set_ylabel("mean reordering\ndelay (ms)")
        _plot(axes[2], sr.lines(own, "reorder_buffer_pdus", ("path",),
                                lambda k: f"reordering buffer{at(k[0])}"), palette)
        axes[2].set_ylabel("reordering\nbuffer (PDUs)")
        title = f"PDCP split bearer of flow {name}{' (return direction)' if reverse else ''}: legs and reordering"
        _finish(fig, axes, title, "receiving PDCP entity; delay and buffer are per-bin means")
        drawn.append(Drawn(f"pdcp-{slug(name)}{'-reverse' if reverse else ''}", title,
                           "PDUs arriving over each leg and delivered in order, the mean "
                           "time PDUs waited for reordering, and the reordering buffer.", fig))
    return drawn


def _bearer_directions(bearers: pd.DataFrame) -> list[tuple[str, str]]:
    """Each flow's bearer rows by direction: the data direction ("") first, then "reverse"."""
    pairs = {(str(n), str(d)) for n, d in zip(bearers["name"], bearers["direction"])}
    return [(n, d) for n in sr.names(bearers) for d in ("", "reverse") if (n, d) in pairs]


def queues(table: pd.DataFrame, summary: Mapping[str, Any]) -> list[Drawn]:
    links = sr.rows(table, "link")
    if not sr.has_values(links, "queue_packets"):
        return []
    busy = links.groupby(["name", "direction"], observed=True)["queue_packets"].transform("max")
    links = links[busy > 0]
    if links.empty:
        return []
    fig, axes = new_figure(1)
    _plot(axes[0], sr.lines(links, "queue_packets", ("name", "direction"),
                            lambda k: f"link {k[0]} {k[1]}"), Palette())
    axes[0].set_ylabel("queue (packets)")
    _finish(fig, axes, "Link queues", "time-weighted mean per bin")
    return [Drawn("queues", "Link queues", "Packets waiting in each link direction's queue.",
                  fig)]


def cell(table: pd.DataFrame, summary: Mapping[str, Any]) -> list[Drawn]:
    drawn = []
    cells = sr.rows(table, "cell")
    for name in sr.names(cells):
        own = cells[cells["name"].astype(str) == name]
        fig, axes = new_figure(4)
        palette = Palette()
        label: Callable[[tuple[Any, ...]], str] = lambda k: f"{k[0]} {k[1]}"
        for ax, column, scale, ylabel in ((axes[0], "sinr_db", 1.0, "mean SINR (dB)"),
                                          (axes[1], "mcs", 1.0, "mean MCS"),
                                          (axes[2], "rbs_per_tti", 1.0, "RBs per TTI"),
                                          (axes[3], "rlc_buffer_max_bytes", KB,
                                           "RLC buffer,\nlargest (kB)")):
            for direction, style in (("downlink", "-"), ("uplink", ":")):
                rows = own[own["direction"].astype(str) == direction]
                for line in sr.lines(rows, column, ("ue", "direction"), label):
                    # One colour per UE, its two directions told apart by the line style.
                    ax.plot(line.times, line.values / scale, label=line.label, linewidth=1.1,
                            linestyle=style, color=palette(str(line.key[0])))
            ax.set_ylabel(ylabel)
        title = f"LTE cell {name}: radio and RLC per UE"
        _finish(fig, axes, title, "solid: downlink, dotted: uplink; SINR and MCS are means "
                "over the TTIs a UE had data (a gap: no data in that bin)")
        drawn.append(Drawn(f"cell-{slug(name)}", title,
                           "Mean SINR and MCS, resource blocks per TTI and the largest RLC "
                           "buffer fill, per UE and direction and time bin.", fig))
    return drawn


def _smallest_deadline(flow: Mapping[str, Any]) -> float | None:
    found = [float(s["deadline_ms"]) / 1e3 for s in (flow.get("messages") or {}).values()
             if isinstance(s, Mapping) and s.get("deadline_ms")]
    return min(found) if found else None


def owd(messages: pd.DataFrame | None, summary: Mapping[str, Any]) -> list[Drawn]:
    from .. import messages as msg

    if messages is None or messages.empty:
        return []
    drawn = []
    for name in dict.fromkeys(messages["flow"].astype(str)):
        own = messages[messages["flow"].astype(str) == name]
        curves = {kind: own[own["kind"].astype(str) == kind]
                  for kind in dict.fromkeys(own["kind"].astype(str))}
        deadline = _smallest_deadline(_flow_summary(summary, name))
        fig, axes = new_figure(1)
        msg.plot_ccdf(axes[0], curves, deadline)
        legend = axes[0].get_legend()
        if legend is not None:
            legend.remove()
        title = f"One-way delay of the messages of flow {name}"
        _finish(fig, axes, title, "P(OWD > x) over every message sent; lost messages keep "
                "the curve above zero")
        axes[0].set_xlabel("one-way delay (ms)")
        drawn.append(Drawn(f"owd-{slug(name)}", title,
                           "Complementary CDF of the messages' one-way delay per kind, with "
                           "the deadline.", fig))
    return drawn


TABLE_FIGURES: tuple[Callable[[pd.DataFrame, Mapping[str, Any]], list[Drawn]], ...] = (
    throughput, transport, paths, pdcp, queues, cell)
"""The builders drawn from the time-series table, in the order they are shown."""
