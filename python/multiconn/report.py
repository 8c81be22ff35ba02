"""Human-readable tables of a run's summary (flows and links), printed with rich."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    parts = (drops.get("queue", 0), drops.get("random_loss", 0), drops.get("link_down", 0))
    return " / ".join(str(p) for p in parts)


def flows_table(summary: Mapping[str, Any]) -> Table:
    table = Table(title="Flows", title_justify="left")
    for header in ("flow", "transport", "app", "sent MB", "delivered MB", "goodput Mbit/s",
                   "done at s", "drops q/loss/down"):
        table.add_column(header, justify="left" if header in ("flow", "transport", "app") else "right")
    for flow in summary.get("flows") or []:
        table.add_row(
            str(flow.get("name", "?")),
            str(flow.get("transport", "")),
            str(flow.get("app", "")),
            _megabytes(flow.get("bytes_sent")),
            _megabytes(flow.get("bytes_delivered")),
            _num(flow.get("goodput_mbps"), ".3f"),
            _num(flow.get("completion_s"), ".3f"),
            _drops(flow.get("drops")),
        )
    return table


def links_table(summary: Mapping[str, Any]) -> Table:
    table = Table(title="Links", title_justify="left")
    for header in ("link", "direction", "delivered MB", "utilization %", "drops q/loss/down"):
        table.add_column(header, justify="left" if header in ("link", "direction") else "right")
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
        f"scenario {summary.get('scenario', '?')}",
        f"seed {summary.get('seed', '?')}",
        f"{_num(summary.get('sim_time_s'), '.3f')} s simulated in "
        f"{_num(summary.get('wall_time_s'), '.2f')} s",
        f"{events:,} events" if isinstance(events, int) else "",
        f"Jain fairness {_num(summary.get('jain_fairness'), '.3f')}"
        if summary.get("jain_fairness") is not None else "",
    ]
    return ", ".join(p for p in parts if p)


def print_summary(summary: Mapping[str, Any], console: Console) -> None:
    """Prints the headline and the flows and links tables."""
    console.print(headline(summary), highlight=False)
    console.print(flows_table(summary))
    console.print(links_table(summary))
