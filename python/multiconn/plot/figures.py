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
* `queues`: the queues that held data: each link direction's mean queue per bin and each LTE
  UE's RLC transmission buffer (its largest fill per bin); a link direction whose mean
  queue stays below one packet in every bin and an RLC buffer that never holds more than one
  full-size packet (1500 B) are left out, and the caption names them;
* `cell-<cell>`: for an LTE or NR cell, per UE and direction, the mean SINR, the mean MCS,
  the resource blocks per TTI (NR: per slot) and the RLC transmission buffer's largest fill
  in each bin (docs/lte-cell.md, docs/nr-cell.md);
* `owd-<flow>`: for a message flow, the one-way-delay CCDF of each message kind with the
  smallest deadline its sources report (see `multiconn.messages`), on a log delay axis by
  default.

Values are per time bin (the run's `[run] bin`, 100 ms by default). A `View` narrows every
figure to a time span (the bins that start in it; the CCDF: the messages sent in it) and
says so under the title. An axis with more than `figstyle.MAX_SERIES` series draws the
`figstyle.TOP_SERIES` that carry most and the others as one line, their mean, with their
range shaded (see `figstyle`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..figstyle import (AGGREGATE_COLOR, TITLE_POINTS, legend_below,
                        new_figure, series_style, title_text, top_series)
from . import series as sr

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

KB = 1e3
QUEUE_SHOWN_PACKETS = 1.0
"""A link direction's queue is drawn when its mean over some bin reaches this many packets."""
RLC_SHOWN_BYTES = 1500.0
"""An RLC buffer is drawn when its largest fill in some bin exceeds this (one full packet)."""
MAX_UES = 6
"""The most UEs a cell figure draws one by one (two lines each); above, `TOP_UES`."""
TOP_UES = 4
"""How many UEs (those that carried most) a cell figure with more than `MAX_UES` draws."""
LEFT_OUT_NAMED = 4
"""How many left-out series a caption names before it counts the rest."""
PATH_ACTION_COLORS = {"open": "tab:green", "abandon": "tab:red", "backup": "tab:orange",
                      "available": "tab:blue"}


@dataclass(frozen=True)
class View:
    """What the figures show: the time span (seconds; `end_s` None: to the run's end) and the
    CCDF's delay axis (`ccdf_x` "log" or "linear", `ccdf_xlim` in seconds or None)."""

    start_s: float = 0.0
    end_s: float | None = None
    span_given: bool = False
    """Whether the span was asked for (the figures then say which span they show)."""
    ccdf_x: str = "log"
    ccdf_xlim: tuple[float, float] | None = None

    def note(self) -> str:
        """What the captions add: the span shown, or nothing for the whole run."""
        if not self.span_given:
            return ""
        end = "the end" if self.end_s is None else f"{self.end_s:g} s"
        return f"shown: {self.start_s:g} s to {end}"

    def limit(self, axes: list[Axes]) -> None:
        """Narrows the shared time axis to the span."""
        if self.span_given:
            axes[0].set_xlim(self.start_s, self.end_s)

    def within(self, frame: pd.DataFrame, column: str) -> pd.DataFrame:
        """The rows of `frame` whose `column` (seconds) lies in the span: all without one."""
        if not self.span_given:
            return frame
        times = frame[column].astype(float)
        inside = times >= self.start_s
        if self.end_s is not None:
            inside &= times < self.end_s
        return frame[inside]


WHOLE_RUN = View()


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


def _finish(fig: Figure, axes: list[Axes], title: str, caption: str = "",
            view: View = WHOLE_RUN, aggregated: bool = False) -> None:
    """Title and caption (with the span shown, and what a grey aggregate line is) on top,
    time below, one legend for every axis under the figure."""
    caption = "; ".join(c for c in (caption, AGGREGATE_NOTE if aggregated else "",
                                    view.note()) if c)
    view.limit(axes)
    axes[0].set_title(title_text(title, caption, fig.get_figwidth()), fontsize=TITLE_POINTS)
    axes[-1].set_xlabel("time (s)")
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    legend_below(fig, list(seen.values()), list(seen))


class Palette:
    """A colour and line style for each of a figure's lines (`figstyle.series_style`),
    continued across its axes so that one legend below the figure tells every line apart (a
    label keeps its style on every axis)."""

    def __init__(self) -> None:
        self.assigned: dict[str, dict[str, str]] = {}

    def __call__(self, label: str) -> dict[str, str]:
        if label not in self.assigned:
            self.assigned[label] = series_style(len(self.assigned))
        return self.assigned[label]


def _plot(ax: Axes, found: Iterator[sr.Line], palette: Palette, scale: float = 1.0,
          keep: list[str] | None = None, noun: str = "series", **style: Any) -> bool:
    """Draws the lines; of more than `MAX_SERIES`, those in `keep` (default: the
    `TOP_SERIES` with the largest sums) one by one and the others as one aggregate. Returns
    whether it drew an aggregate."""
    style.setdefault("linewidth", 1.1)
    lines = list(found)
    if keep is None:
        keep = top_series({line.label: _total(line) for line in lines})
    chosen = set(keep)
    for line in lines:
        if line.label in chosen:
            own = {} if "color" in style else palette(line.label)
            ax.plot(line.times, line.values / scale, label=line.label, **{**own, **style})
    rest = [line for line in lines if line.label not in chosen]
    if rest:
        _aggregate(ax, rest, scale, f"other {len(rest)} {noun}",
                   style.get("linestyle", "-"))
    return bool(rest)


def _total(line: sr.Line) -> float:
    import numpy as np

    values = line.values[np.isfinite(line.values)]
    return float(values.sum()) if values.size else float("nan")


def _aggregate(ax: Axes, lines: list[sr.Line], scale: float, what: str,
               linestyle: str = "-") -> None:
    """One line for many: their mean per bin, with the range from the least to the most
    shaded."""
    import warnings

    import numpy as np

    times = np.unique(np.concatenate([line.times for line in lines]))
    grid = np.full((len(lines), times.size), np.nan)
    for row, line in zip(grid, lines):
        row[np.searchsorted(times, line.times)] = line.values / scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a bin where none has a value
        mean, low, high = np.nanmean(grid, 0), np.nanmin(grid, 0), np.nanmax(grid, 0)
    ax.fill_between(times, low, high, color=AGGREGATE_COLOR, alpha=0.18, linewidth=0)
    ax.plot(times, mean, color=AGGREGATE_COLOR, linewidth=1.6, linestyle=linestyle,
            label=f"{what} (mean)")


AGGREGATE_NOTE = "grey: the mean of the series not drawn one by one, shaded from least to most"


def _top_flows(table: pd.DataFrame, label: Callable[[tuple[Any, ...]], str]) -> list[str]:
    """The labels of the flows drawn one by one: those delivering most (see `_plot`)."""
    return top_series({line.label: _total(line) for line in
                       sr.lines(sr.rows(table, "flow"), "bytes_delivered", ("name",), label)})


def throughput(table: pd.DataFrame, summary: Mapping[str, Any],
               view: View = WHOLE_RUN) -> list[Drawn]:
    flows = sr.rows(table, "flow")
    links = sr.rows(table, "link")
    if flows.empty and links.empty:
        return []
    links = links[links.groupby(["name", "direction"], observed=True)["bytes_delivered"]
                  .transform("sum") > 0]
    fig, axes = new_figure(2)
    palette = Palette()
    aggregated = _plot(axes[0], sr.lines(flows, "throughput_mbps", ("name",),
                                         lambda k: f"flow {k[0]}"), palette, noun="flows")
    axes[0].set_ylabel("flow goodput\n(Mbit/s)")
    aggregated |= _plot(axes[1], sr.lines(links, "throughput_mbps", ("name", "direction"),
                                          lambda k: f"link {k[0]} {k[1]}"), palette,
                        noun="link directions")
    axes[1].set_ylabel("link throughput\n(Mbit/s)")
    _finish(fig, axes, "Throughput per flow and per link direction",
            f"{summary.get('scenario', '')}, seed {summary.get('seed', '?')}", view, aggregated)
    return [Drawn("throughput", "Throughput per flow and per link direction",
                  "Goodput each flow's receiver got, and what each link direction delivered, "
                  "per time bin.", fig)]


def transport(table: pd.DataFrame, summary: Mapping[str, Any],
              view: View = WHOLE_RUN) -> list[Drawn]:
    flows = sr.rows(table, "flow")
    if not sr.has_values(flows, "cwnd_bytes"):
        return []
    fig, axes = new_figure(3)
    label: Callable[[tuple[Any, ...]], str] = lambda k: f"flow {k[0]}"
    palette = Palette()
    # The same flows one by one on every axis: those that delivered most.
    keep = _top_flows(flows[flows["cwnd_bytes"].notna()], label)
    aggregated = False
    for ax, column, scale, ylabel in ((axes[0], "cwnd_bytes", KB, "cwnd (kB)"),
                                      (axes[1], "bytes_in_flight", KB, "in flight (kB)"),
                                      (axes[2], "srtt_ms", 1.0, "smoothed RTT (ms)")):
        found = sr.lines(flows, column, ("name",), label)
        if column == "srtt_ms":  # 0 before the first sample: no RTT yet
            found = (sr.Line(ln.label, ln.times, _zero_as_gap(ln.values), ln.key)
                     for ln in found)
        aggregated |= _plot(ax, found, palette, scale, keep=keep, noun="flows")
        ax.set_ylabel(ylabel)
    _finish(fig, axes, "Sender state per transport flow",
            "at the last event of each bin; a multipath flow's window and bytes in flight "
            "are its paths' sums (each path: the paths figure)", view, aggregated)
    return [Drawn("transport", "Sender state per transport flow",
                  "Congestion window, bytes in flight and smoothed RTT of each transport "
                  "flow's sender.", fig)]


def _zero_as_gap(values: Any) -> Any:
    import numpy as np

    return np.where(values == 0, np.nan, values)


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


def _path_actions(axes: list[Axes], flow: Mapping[str, Any], view: View) -> None:
    for action in flow.get("path_manager") or []:
        at = float(action["at_s"])
        if at < view.start_s or (view.end_s is not None and at > view.end_s):
            continue
        color = PATH_ACTION_COLORS.get(str(action.get("action")), "grey")
        for ax in axes:
            ax.axvline(float(action["at_s"]), color=color, linestyle=":", linewidth=1)
        axes[0].annotate(f"{action.get('action')} {action.get('path')}",
                         (float(action["at_s"]), 1.0), xycoords=("data", "axes fraction"),
                         xytext=(2, -2), textcoords="offset points", fontsize="x-small",
                         color=color, va="top", rotation=90)


def paths(table: pd.DataFrame, summary: Mapping[str, Any],
          view: View = WHOLE_RUN) -> list[Drawn]:
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
        _path_actions(axes, flow, view)
        title = f"Paths of multipath flow {name}"
        _finish(fig, axes, title, "what each path carried towards the receiver; dotted: "
                "path manager actions; no window or RTT while a path is closed", view)
        drawn.append(Drawn(f"paths-{slug(name)}", title,
                           "Throughput each path carried, with the flow's goodput, and each "
                           "path's congestion window and smoothed RTT.", fig))
    return drawn


def pdcp(table: pd.DataFrame, summary: Mapping[str, Any],
         view: View = WHOLE_RUN) -> list[Drawn]:
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
        _finish(fig, axes, title, "receiving PDCP entity; delay and buffer are per-bin means",
                view)
        drawn.append(Drawn(f"pdcp-{slug(name)}{'-reverse' if reverse else ''}", title,
                           "PDUs arriving over each leg and delivered in order, the mean "
                           "time PDUs waited for reordering, and the reordering buffer.", fig))
    return drawn


def _bearer_directions(bearers: pd.DataFrame) -> list[tuple[str, str]]:
    """Each flow's bearer rows by direction: the data direction ("") first, then "reverse"."""
    pairs = {(str(n), str(d)) for n, d in zip(bearers["name"], bearers["direction"])}
    return [(n, d) for n in sr.names(bearers) for d in ("", "reverse") if (n, d) in pairs]


def _left_out(names: list[str]) -> str:
    """The left-out series: named when there are at most `LEFT_OUT_NAMED`, else counted by
    kind (the figure's caption on the report page names them all)."""
    if len(names) <= LEFT_OUT_NAMED:
        return ", ".join(names)
    links = sum(name.startswith("link ") for name in names)
    counts = [f"{links} link directions" if links else "",
              f"{len(names) - links} RLC buffers" if len(names) > links else ""]
    return " and ".join(c for c in counts if c) + " (the report page names them)"


def queues(table: pd.DataFrame, summary: Mapping[str, Any],
           view: View = WHOLE_RUN) -> list[Drawn]:
    """Link queues (packets) and RLC buffers (kB), each axis only when something queued
    there; idle ones are left out and named in the caption."""
    links = sr.rows(table, "link")
    cells = sr.rows(table, "cell")
    link_lines = list(sr.lines(links, "queue_packets", ("name", "direction"),
                               lambda k: f"link {k[0]} {k[1]}"))
    rlc_lines = list(sr.lines(cells, "rlc_buffer_max_bytes", ("name", "ue", "direction"),
                              lambda k: f"{k[1]} {k[2]} RLC"))
    busy_links = [ln for ln in link_lines if _peak(ln) >= QUEUE_SHOWN_PACKETS]
    busy_rlc = [ln for ln in rlc_lines if _peak(ln) > RLC_SHOWN_BYTES]
    idle = [ln.label for ln in link_lines if _peak(ln) < QUEUE_SHOWN_PACKETS] + \
        [ln.label for ln in rlc_lines if _peak(ln) <= RLC_SHOWN_BYTES]
    panels = [(found, scale, ylabel, noun) for found, scale, ylabel, noun in (
        (busy_links, 1.0, "link queue\n(packets)", "link directions"),
        (busy_rlc, KB, "RLC buffer,\nlargest (kB)", "RLC buffers")) if found]
    if not panels:
        return []
    fig, axes = new_figure(len(panels))
    palette = Palette()
    aggregated = False
    for ax, (found, scale, ylabel, noun) in zip(axes, panels):
        aggregated |= _plot(ax, iter(found), palette, scale, noun=noun)
        ax.set_ylabel(ylabel)
    parts = ["link queues: time-weighted mean per bin" if busy_links else "",
             "RLC buffers: largest fill per bin" if busy_rlc else "",
             f"left out as idle (a link queue below {QUEUE_SHOWN_PACKETS:g} packet in every "
             f"bin, an RLC buffer never above {RLC_SHOWN_BYTES:g} B): {_left_out(idle)}"
             if idle else ""]
    _finish(fig, axes, "Queues", "; ".join(p for p in parts if p), view, aggregated)
    left_out = f" Left out as idle: {', '.join(idle)}." if idle else ""
    return [Drawn("queues", "Queues", "Packets waiting in each busy link direction's queue "
                  f"and bytes in each busy RLC transmission buffer.{left_out}", fig)]


def _peak(line: sr.Line) -> float:
    import numpy as np

    values = line.values[np.isfinite(line.values)]
    return float(values.max()) if values.size else 0.0


def cell(table: pd.DataFrame, summary: Mapping[str, Any],
         view: View = WHOLE_RUN) -> list[Drawn]:
    drawn = []
    cells = sr.rows(table, "cell")
    rats = {str(c.get("name")): str(c.get("rat", "lte")) for c in summary.get("cells") or []}
    for name in sr.names(cells):
        own = cells[cells["name"].astype(str) == name]
        # An NR cell schedules per slot; an LTE cell per 1 ms TTI.
        nr = rats.get(name) == "nr"
        unit = "slot" if nr else "TTI"
        fig, axes = new_figure(4)
        palette = Palette()
        label: Callable[[tuple[Any, ...]], str] = lambda k: f"{k[0]} {k[1]}"
        # One colour per UE (its two directions told apart by the line style); of many UEs
        # those that received and sent most, the others as one line per direction.
        carried = {ue: float(part["bytes_delivered"].sum())
                   for ue, part in own.groupby(own["ue"].astype(str), sort=False)}
        keep = set(top_series(carried, MAX_UES, TOP_UES))
        aggregated = len(keep) < len(carried)
        for ax, column, scale, ylabel in ((axes[0], "sinr_db", 1.0, "mean SINR (dB)"),
                                          (axes[1], "mcs", 1.0, "mean MCS"),
                                          (axes[2], "rbs_per_tti", 1.0, f"RBs per {unit}"),
                                          (axes[3], "rlc_buffer_max_bytes", KB,
                                           "RLC buffer,\nlargest (kB)")):
            for direction, style in (("downlink", "-"), ("uplink", ":")):
                rows = own[own["direction"].astype(str) == direction]
                found = list(sr.lines(rows, column, ("ue", "direction"), label))
                for line in found:
                    if str(line.key[0]) in keep:
                        ax.plot(line.times, line.values / scale, label=line.label,
                                linewidth=1.1, linestyle=style,
                                color=palette(str(line.key[0]))["color"])
                rest = [line for line in found if str(line.key[0]) not in keep]
                if rest:
                    _aggregate(ax, rest, scale, f"other {len(rest)} UEs {direction}", style)
            ax.set_ylabel(ylabel)
        title = f"{'NR' if nr else 'LTE'} cell {name}: radio and RLC per UE"
        _finish(fig, axes, title, "solid: downlink, dotted: uplink; SINR and MCS are means "
                f"over the {unit}s a UE had data (a gap: no data in that bin)", view, aggregated)
        drawn.append(Drawn(f"cell-{slug(name)}", title,
                           f"Mean SINR and MCS, resource blocks per {unit} and the largest RLC "
                           "buffer fill, per UE and direction and time bin.", fig))
    return drawn


MOBILITY_UES = 4
"""UEs of a cell layout that get a mobility figure each (those that received most first)."""


def mobility(table: pd.DataFrame, summary: Mapping[str, Any],
             view: View = WHOLE_RUN) -> list[Drawn]:
    """Per UE of a cell with a layout: its serving cell over time (handovers marked), the
    layer-3-filtered RSRP of the cells that were ever its best, and the goodput of the flows it
    receives."""
    drawn = []
    flows = sr.rows(table, "flow")
    receivers = {str(f.get("name")): str(f.get("receiver")) for f in summary.get("flows") or []}
    for cell in summary.get("cells") or []:
        if "layout_cells" not in cell:
            continue
        ues = list(cell.get("ues") or [])
        got = {str(u["node"]): float(flows[flows["name"].astype(str).map(lambda n, node=str(u["node"]): receivers.get(n) == node)]
                                     ["bytes_delivered"].sum()) if not flows.empty else 0.0 for u in ues}
        keep = top_series(got, MOBILITY_UES, MOBILITY_UES)
        for ue in (u for u in ues if str(u["node"]) in keep):
            node = str(ue["node"])
            fig, axes = new_figure(3)
            palette = Palette()
            end = float(summary.get("duration_s") or (ue["rsrp"]["t_s"][-1] if ue["rsrp"]["t_s"] else 1.0))
            # Serving cell: a step from the initial cell, none between a command and the UE
            # entering the target (or between a failure and re-establishment).
            times, cells = [0.0], [float(ue["initial_cell"])]
            for e in ue["events"]:
                if e["event"] == "handover_end":
                    times.append(float(e["t_s"]) - float(e["interruption_ms"]) / 1000.0)
                    cells.append(float("nan"))
                    times.append(float(e["t_s"]))
                    cells.append(float(e["target"]))
                elif e["event"] in ("radio_link_failure", "scg_released"):
                    times.append(float(e["t_s"]))
                    cells.append(float("nan"))
                elif e["event"] in ("reestablished", "scg_added"):
                    times.append(float(e["t_s"]))
                    cells.append(float(e["cell"]))
            times.append(end)
            cells.append(cells[-1])
            axes[0].step(times, cells, where="post", linewidth=1.4, color="black", label="serving cell")
            for e in ue["events"]:
                if e["event"] == "handover_end":
                    for ax in axes:
                        ax.axvline(float(e["t_s"]), color="grey", linewidth=0.6, linestyle=":")
            axes[0].set_ylabel("serving cell")
            axes[0].yaxis.get_major_locator().set_params(integer=True)
            # RSRP of the cells that were ever the best (at most 4).
            t = [float(x) for x in ue["rsrp"]["t_s"]]
            dbm = ue["rsrp"]["dbm"]
            best = []
            for row in dbm:
                values = [(v, i) for i, v in enumerate(row) if v is not None]
                if values:
                    i = max(values)[1]
                    if i not in best:
                        best.append(i)
            for i in best[:4]:
                values = [float("nan") if row[i] is None else float(row[i]) for row in dbm]
                axes[1].plot(t, values, label=f"RSRP cell {i}", linewidth=1.1,
                             color=palette(f"cell {i}")["color"])
            axes[1].set_ylabel("filtered RSRP\n(dBm)")
            mine = flows[flows["name"].astype(str).map(lambda n: receivers.get(n) == node)] if not flows.empty else flows
            _plot(axes[2], sr.lines(mine, "throughput_mbps", ("name",), lambda k: f"flow {k[0]}"), palette, noun="flows")
            axes[2].set_ylabel("goodput\n(Mbit/s)")
            title = f"{cell['name']}: UE {node}'s cells, handovers and goodput"
            releases = f", {ue['scg_releases']} SCG release(s)" if "scg_releases" in ue else ""
            _finish(fig, axes, title, f"{ue['handovers']} handover(s), "
                    f"{ue['radio_link_failures']} radio link failure(s){releases}; dotted: a handover ends",
                    view)
            drawn.append(Drawn(f"mobility-{slug(str(cell['name']))}-{slug(node)}", title,
                               "The UE's serving cell (a gap: in no cell), the layer-3-filtered "
                               "RSRP of the cells that were its best, and its flows' goodput.",
                               fig))
    return drawn


def _smallest_deadline(flow: Mapping[str, Any]) -> float | None:
    found = [float(s["deadline_ms"]) / 1e3 for s in (flow.get("messages") or {}).values()
             if isinstance(s, Mapping) and s.get("deadline_ms")]
    return min(found) if found else None


def owd(messages: pd.DataFrame | None, summary: Mapping[str, Any],
        view: View = WHOLE_RUN) -> list[Drawn]:
    from .. import messages as msg

    if messages is None or messages.empty:
        return []
    messages = view.within(messages, "sent_s")
    drawn = []
    for name in dict.fromkeys(messages["flow"].astype(str)):
        own = messages[messages["flow"].astype(str) == name]
        curves = {kind: own[own["kind"].astype(str) == kind]
                  for kind in dict.fromkeys(own["kind"].astype(str))}
        deadline = _smallest_deadline(_flow_summary(summary, name))
        fig, axes = new_figure(1)
        msg.plot_ccdf(axes[0], curves, deadline, xscale=view.ccdf_x, xlim=view.ccdf_xlim)
        legend = axes[0].get_legend()
        if legend is not None:
            legend.remove()
        title = f"One-way delay of the messages of flow {name}"
        sent = "" if not view.span_given else "; messages sent " + view.note().removeprefix(
            "shown: ")
        caption = ("P(OWD > x) over every message sent; lost messages keep the curve above "
                   f"zero{sent}")
        axes[0].set_title(title_text(title, caption, fig.get_figwidth()), fontsize=TITLE_POINTS)
        axes[0].set_xlabel("one-way delay (ms)" + (", log scale" if view.ccdf_x == "log" else ""))
        seen: dict[str, Any] = {}
        for handle, text in zip(*axes[0].get_legend_handles_labels()):
            seen.setdefault(text, handle)
        legend_below(fig, list(seen.values()), list(seen))
        drawn.append(Drawn(f"owd-{slug(name)}", title,
                           "Complementary CDF of the messages' one-way delay per kind, with "
                           "the deadline.", fig))
    return drawn


TABLE_FIGURES: tuple[Callable[[pd.DataFrame, Mapping[str, Any]], list[Drawn]], ...] = (
    throughput, transport, paths, pdcp, queues, cell, mobility)
"""The builders drawn from the time-series table, in the order they are shown."""
