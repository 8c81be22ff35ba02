"""Human-readable tables of a run's summary: flows, links, the paths of multipath flows and
the legs of PDCP split bearers. Each table is built once as plain text cells (`TableData`)
and shown in the terminal with rich (`print_summary`) or on the run's HTML page
(`multiconn.plot.page`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

DROPS_NOTE = ("drops q/l/d/u/p: queue overflow / random loss / link down / UDP receive buffer"
              " / PDCP (late at the reordering side, or refused by a full window)")
PLOT_HINT = "figures: multiconn plot {out}   (or an HTML page: multiconn report {out})"


@dataclass
class TableData:
    """A table as text: the first `text_columns` columns are left-aligned, the rest are
    numbers (right-aligned)."""

    title: str
    headers: tuple[str, ...]
    text_columns: int
    rows: list[tuple[str, ...]] = field(default_factory=list)
    note: str = ""


def _num(value: Any, fmt: str, missing: str = "-") -> str:
    if value is None:
        return missing
    try:
        return format(value, fmt)
    except (TypeError, ValueError):
        return str(value)


def _megabytes(value: Any) -> str:
    return _num(value / 1e6 if isinstance(value, (int, float)) else None, ".3f")


def _drops(drops: Any) -> str:
    if not isinstance(drops, Mapping):
        return "-"
    parts = (drops.get("queue", 0), drops.get("random_loss", 0), drops.get("link_down", 0),
             drops.get("udp_buffer", 0), drops.get("pdcp_late", 0) + drops.get("pdcp_window", 0))
    return "/".join(str(p) for p in parts)


def flows_data(summary: Mapping[str, Any]) -> TableData:
    """One row per flow: transport/app, MB sent and delivered, goodput, completion, drops."""
    table = TableData("Flows", ("flow", "type", "sent MB", "recv MB", "Mbit/s", "done s",
                                "drops q/l/d/u/p"), 2)
    for flow in summary.get("flows") or []:
        table.rows.append((
            str(flow.get("name", "?")),
            f"{flow.get('transport', '?')}/{flow.get('app', '?')}",
            _megabytes(flow.get("bytes_sent")),
            _megabytes(flow.get("bytes_delivered")),
            _num(flow.get("goodput_mbps"), ".3f"),
            _num(flow.get("completion_s"), ".3f"),
            _drops(flow.get("drops")),
        ))
    return table


def links_data(summary: Mapping[str, Any]) -> TableData:
    """One row per link direction: MB delivered, utilization, drops."""
    table = TableData("Links", ("link", "direction", "recv MB", "util %", "drops q/l/d/u/p"), 2)
    for link in summary.get("links") or []:
        util = link.get("utilization")
        table.rows.append((
            str(link.get("name", "?")),
            str(link.get("direction", "")),
            _megabytes(link.get("bytes_delivered")),
            _num(util * 100 if isinstance(util, (int, float)) else None, ".1f"),
            _drops(link.get("drops")),
        ))
    return table


def paths_data(summary: Mapping[str, Any]) -> TableData | None:
    """One row per path of every multipath flow: what the network delivered to the data
    receiver over it and its share, the sender's smoothed RTT and lost packets on it, and
    how many path IDs it used (more than one: it was abandoned and opened again)."""
    table = TableData("Paths", ("flow", "path", "status", "recv MB", "share %", "srtt ms",
                                "lost", "IDs"), 3,
                      note="recv MB: packet bytes the network delivered to the data receiver "
                           "over the path (share: of all paths); srtt, lost: the data sender's "
                           "view; IDs: path IDs used (more than 1: abandoned and reopened)")
    for flow in summary.get("flows") or []:
        paths = flow.get("paths") or []
        if len(paths) < 2:
            continue
        arrived = [((p.get("network") or {}).get("forward") or {}).get("bytes_arrived", 0)
                   for p in paths]
        total = sum(arrived)
        for path, got in zip(paths, arrived):
            side = path.get("server") or {}  # the server sends the flow's data
            table.rows.append((
                str(flow.get("name", "?")),
                f"{path.get('path', '?')} {'+'.join(path.get('route') or [])}".rstrip(),
                str(side.get("status", "-")),
                _megabytes(got),
                _num(100 * got / total if total else None, ".1f"),
                _num(side.get("srtt_ms"), ".1f"),
                _num(side.get("lost_packets"), "d"),
                _num(side.get("path_ids_opened"), "d"),
            ))
    return table if table.rows else None


def legs_data(summary: Mapping[str, Any]) -> TableData | None:
    """One row per leg of every PDCP split bearer (the return direction's too, marked): PDUs
    sent and arrived over it, and per bearer the mean and largest reordering delay and the
    t-Reordering expiries."""
    table = TableData("PDCP split legs", ("flow", "split leg", "PDUs sent", "arrived",
                                          "reorder ms", "expiries"), 2,
                      note="reorder ms: mean/max time PDUs waited in the receiving PDCP entity; "
                           "expiries: of t-Reordering (TS 38.323 5.2.2); both per bearer, on "
                           "its first leg")
    for flow in summary.get("flows") or []:
        # A split serving the return direction too (reverse_policy) has its bearer there.
        bearers = [(name, split, "") for name, split in (flow.get("pdcp") or {}).items()]
        bearers += [(name, split, " (return)") for name, split in (flow.get("pdcp_reverse") or {}).items()]
        for split_name, split, direction in bearers:
            legs = split.get("legs") or []
            sent = split.get("pdus_sent")
            arrived = split.get("pdus_arrived")
            for i, leg in enumerate(legs):
                first = i == 0
                delay = (f"{_num(split.get('reorder_delay_mean_ms'), '.1f')}/"
                         f"{_num(split.get('reorder_delay_max_ms'), '.1f')}")
                table.rows.append((
                    str(flow.get("name", "?")), f"{split_name} {leg}{direction}",
                    _num(sent[i] if isinstance(sent, list) and i < len(sent) else None, "d"),
                    _num(arrived[i] if isinstance(arrived, list) and i < len(arrived)
                         else None, "d"),
                    delay if first else "",
                    _num(split.get("timer_expiries"), "d") if first else "",
                ))
    return table if table.rows else None


def aqm_data(summary: Mapping[str, Any]) -> TableData | None:
    """One row per link direction with a queue discipline: its drops by kind and ECN marks."""
    table = TableData("Queue disciplines", ("link", "direction", "aqm", "early", "tail",
                                            "overflow", "ECN marks"), 3,
                      note="early: the discipline's own drops (CoDel's control law, PIE's "
                           "random drop); tail: refused at the queue limit; overflow: FQ-CoDel's "
                           "drops from the fattest flow queue; all three are 'q' drops above")
    for link in summary.get("links") or []:
        aqm = link.get("aqm")
        if not isinstance(aqm, Mapping):
            continue
        table.rows.append((
            str(link.get("name", "?")),
            str(link.get("direction", "")),
            str(aqm.get("discipline", "?")),
            _num(aqm.get("early_drops"), "d"),
            _num(aqm.get("tail_drops"), "d"),
            _num(aqm.get("overflow_drops"), "d"),
            _num(aqm.get("ecn_marks"), "d"),
        ))
    return table if table.rows else None


def summary_tables(summary: Mapping[str, Any]) -> list[TableData]:
    """Every table of the run summary, in display order (paths, legs and queue disciplines
    when present)."""
    found = [flows_data(summary), links_data(summary), aqm_data(summary), paths_data(summary),
             legs_data(summary)]
    return [t for t in found if t is not None]


def headline(summary: Mapping[str, Any]) -> str:
    """One line: scenario, seed, simulated and wall time, events, fairness."""
    events = summary.get("events")
    parts = [
        f"{summary.get('scenario', '?')} (seed {summary.get('seed', '?')}):",
        f"{_num(summary.get('sim_time_s'), '.3f')} s simulated"
        + (f" in {_num(summary['wall_time_s'], '.2f')} s," if "wall_time_s" in summary else ","),
        f"{events:,} events," if isinstance(events, int) else "",
        f"Jain {_num(summary.get('jain_fairness'), '.3f')}",
    ]
    return " ".join(p for p in parts if p).rstrip(",")


def rich_table(data: TableData) -> Table:
    """`data` as a rich table."""
    from rich import box
    from rich.table import Table

    table = Table(title=data.title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for i, header in enumerate(data.headers):
        table.add_column(header, justify="left" if i < data.text_columns else "right",
                         no_wrap=True)
    for row in data.rows:
        table.add_row(*row)
    return table


def flows_table(summary: Mapping[str, Any]) -> Table:
    """The flows table, for the terminal."""
    return rich_table(flows_data(summary))


def print_summary(summary: Mapping[str, Any], console: Console,
                  out: str | None = None) -> None:
    """Prints the headline, the tables and their notes; with `out`, a hint to the figures."""
    console.print(headline(summary), highlight=False)
    for data in summary_tables(summary):
        console.print(rich_table(data))
        if data.note:
            console.print(data.note, highlight=False, style="dim")
    console.print(DROPS_NOTE, highlight=False)
    if out is not None:
        console.print(PLOT_HINT.format(out=out), highlight=False)
