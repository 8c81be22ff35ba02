"""Picking lines out of a run's time-series table for the single-run figures.

The table (`RunResult.timeseries`, docs/cli.md) has one row per time bin and entity; `kind`
says which: `flow`, `link` (one per direction), and for the multi-connectivity views `path`
(a multipath flow's path, `path` its index), `leg` (a PDCP split bearer's leg, `leg` the
link's name), `bearer` (a split bearer's receiving PDCP entity) and `cell` (an LTE cell's UE,
`ue` its node, per direction). Tables written before
the per-path columns existed simply have no such rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


@dataclass(frozen=True)
class Line:
    """One entity's values of one column over time."""

    label: str
    times: np.ndarray
    values: np.ndarray
    key: tuple[Any, ...] = ()
    """The values of the grouping columns this line was picked by."""


def rows(table: pd.DataFrame, kind: str, name: str | None = None) -> pd.DataFrame:
    """The rows of one kind (and one flow or link name), in time order."""
    if "kind" not in table.columns:
        return table.iloc[0:0]
    keep = table["kind"].astype(str) == kind
    if name is not None:
        keep &= table["name"].astype(str) == name
    return table[keep].sort_values("time_s", kind="stable")


def has_values(table: pd.DataFrame, column: str) -> bool:
    """Whether `column` exists and holds at least one value that is not NaN."""
    return column in table.columns and bool(table[column].notna().any())


def names(table: pd.DataFrame) -> list[str]:
    """Entity names in order of first appearance."""
    return list(dict.fromkeys(table["name"].astype(str)))


def lines(table: pd.DataFrame, column: str, keys: tuple[str, ...],
          label: Any) -> Iterator[Line]:
    """One line per group of `keys` (in order of appearance) whose `column` has values;
    `label(group_key_tuple)` names it."""
    if column not in table.columns or table.empty:
        return
    for key, group in table.groupby(list(keys), sort=False, observed=True):
        group = group[group[column].notna()]
        if group.empty:
            continue
        key_tuple = key if isinstance(key, tuple) else (key,)
        yield Line(str(label(key_tuple)), group["time_s"].to_numpy("float64"),
                   group[column].to_numpy("float64"), key_tuple)

