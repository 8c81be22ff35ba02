"""Human-readable tables of a run's summary (flows and links), printed with rich."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table


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


def _table(title: str, headers: tuple[str, ...], text_columns: int) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    for i, header in enumerate(headers):
        table.add_column(header, justify="left" if i < text_columns else "right", no_wrap=True)
    return table


def flows_table(summary: Mapping[str, Any]) -> Table:
    """One row per flow: transport/app, MB sent and delivered, goodput, completion, drops."""
    table = _table("Flows", ("flow", "type", "sent MB", "recv MB", "Mbit/s", "done s",
                             "drops q/l/d/u/p"), 2)
    for flow in summary.get("flows") or []:
        table.add_row(
            str(flow.get("name", "?")),
            f"{flow.get('transport', '?')}/{flow.get('app', '?')}",
            _megabytes(flow.get("bytes_sent")),
            _megabytes(flow.get("bytes_delivered")),
            _num(flow.get("goodput_mbps"), ".3f"),
            _num(flow.get("completion_s"), ".3f"),
            _drops(flow.get("drops")),
        )
    return table


def links_table(summary: Mapping[str, Any]) -> Table:
    """One row per link direction: MB delivered, utilization, drops."""
    table = _table("Links", ("link", "direction", "recv MB", "util %",
                             "drops q/l/d/u/p"), 2)
    for link in summary.get("links") or []:
        util = link.get("utilization")
        table.add_row(
            str(link.get("name", "?")),
            str(link.get("direction", "")),
            _megabytes(link.get("bytes_delivered")),
            _num(util * 100 if isinstance(util, (int, float)) else None, ".1f"),
            _drops(link.get("drops")),
        )
    return table


def headline(summary: Mapping[str, Any]) -> str:
    """One line: scenario, seed, simulated and wall time, events, fairness."""
    events = summary.get("events")
    parts = [
        f"{summary.get('scenario', '?')} (seed {summary.get('seed', '?')}):",
        f"{_num(summary.get('sim_time_s'), '.3f')} s simulated in "
        f"{_num(summary.get('wall_time_s'), '.2f')} s,",
        f"{events:,} events," if isinstance(events, int) else "",
        f"Jain {_num(summary.get('jain_fairness'), '.3f')}",
    ]
    return " ".join(p for p in parts if p).rstrip(",")


def print_summary(summary: Mapping[str, Any], console: Console) -> None:
    """Prints the headline and the flows and links tables."""
    console.print(headline(summary), highlight=False)
    console.print(flows_table(summary))
    console.print(links_table(summary))
    console.print("drops q/l/d/u/p: queue overflow / random loss / link down / UDP receive buffer"
                  " / PDCP (late at the reordering side, or refused by a full window)", highlight=False)
