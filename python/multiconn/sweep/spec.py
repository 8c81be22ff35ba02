"""Sweep files: what an experiment runs, read from TOML into `SweepSpec`.

A sweep file names a base scenario (a file or an inline table), fixed overrides, and axes of
parameters. Axes are grouped: the axes of one group are *zipped* (they advance together), and
groups are *crossed*. Every problem is reported before anything runs, as one line
`FILE: FIELD: problem`. The format is documented in docs/sweeps.md.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import tomli_w

from .. import _native
from ..errors import SweepError
from ..source import ScenarioFileError, ScenarioSource, override_value, read_scenario_file

COMBINE_MODES = ("cross", "zip")
SEED_MODES = ("per-point", "common")
PLOT_KINDS = ("line", "bar", "timeseries", "ccdf", "heatmap", "throughput-delay")
TIMESERIES_SHOW = ("flows", "links", "both")
SPREADS = ("std", "ci95", "none")
"""What error bars show over repetitions: ± one standard deviation, the mean's 95 %
confidence interval (Student's t) or nothing."""
DELAYS = ("rtt", "queueing", "owd")
"""throughput-delay: the delay on x: the smoothed RTT per time bin, that RTT above its
smallest value in the run, or the one-way delay of messages."""
DELAY_NEEDS_TIMESERIES = ("rtt", "queueing")
MESSAGE_KINDS: tuple[str, ...] = _native.MESSAGE_KINDS
"""The kinds of message an app = "messages" flow sends (a ccdf plot draws one)."""
CCDF_Y = "owd_ms"
"""The quantity a ccdf plot draws (its `y`): the one-way delay of messages."""
MAX_RANGE_VALUES = 100_000
RESERVED_COLUMNS = frozenset({
    "experiment", "parameter", "value", "point", "rep", "seed", "run_key", "status", "error",
    "flow", "transport", "cc", "profile", "app", "goodput_mbps", "bytes_delivered",
    "completion_s", "jain_fairness", "normalised_jain", "min_normalised", "time_s",
})
"""Result-table columns; an axis may not take one of these names."""
DEFAULT_FLOW_METRICS = ("goodput_mbps", "bytes_delivered", "completion_s")
"""Flow summary fields every result row carries; `[metrics] flow` adds more."""
RUN_METRICS = ("jain_fairness", "normalised_jain", "min_normalised")
"""Per-run metrics every result row carries (the summary's fairness of its covered flows):
Jain's raw index, Jain's index over each flow's goodput / max-min fair share, and the worst
such fraction (docs/summary.md)."""
TIMESERIES_COLUMNS: tuple[str, ...] = tuple(
    name for name, kind in _native.TIMESERIES_COLUMNS
    if kind != "str" and name not in ("time_s", "path"))
"""The numeric columns of a run's time series, time and the path index aside (see README,
Metrics)."""
DROP_CAUSES = ("queue", "random_loss", "link_down", "udp_buffer", "pdcp_late", "pdcp_window")
SUMMARY_NAMES: dict[str, str] = {
    "srtt_ms": "final_srtt_ms", "cwnd_bytes": "final_cwnd_bytes",
    **{f"drops_{cause}": f"drops.{cause}" for cause in DROP_CAUSES},
}
"""A time-series column -> the flow summary field that holds the same quantity for the whole
run: `[metrics] flow` and a summary plot's y read the first as the second (the sender's state
at the end of the run, the drops by cause). `throughput_mbps` is not `goodput_mbps`: on a
link's rows it is the link's throughput."""
SHARED_NAMES = ("bytes_delivered", "retransmissions", "spurious_retransmissions")
"""Names that are both a time-series column and a flow summary field (per bin, and in all)."""
TIMESERIES_NAMES: dict[str, str] = {summary: column for column, summary in SUMMARY_NAMES.items()}
"""A flow summary field -> its time-series column: a timeseries plot's y reads the first as
the second."""

# A unit starts with a letter or "%": "1:1" or "90/10" are labels, not numbers with a unit.
_NUMBER_WITH_UNIT = re.compile(
    r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*((?:[^\W\d_]|%).*?)?\s*$")
DURATION_UNITS: dict[str, float] = dict(_native.DURATION_UNITS)
"""Duration units and their length in seconds (as the simulator reads them)."""


@dataclass(frozen=True)
class AxisValue:
    """One value of an axis: its label, its plotted value and the overrides it applies."""

    label: str
    value: float | str
    """A number when the axis is numeric (in `Axis.unit`), otherwise the label."""
    overrides: tuple[tuple[str, str], ...]
    """(`--set` key, value text) pairs this value applies; empty for a label-only axis."""


@dataclass(frozen=True)
class Axis:
    """A named dimension of the sweep: a parameter path, a set of variants or a label list."""

    name: str
    values: tuple[AxisValue, ...]
    numeric: bool
    unit: str | None = None


@dataclass(frozen=True)
class Reference:
    """Published (or theoretical) values to show beside ours on a plot."""

    source: str
    x: tuple[float | str, ...]
    y: tuple[float, ...]
    series: str | None = None
    """The series label these values belong to (None: the plot has one series)."""
    flow: str | None = None


@dataclass(frozen=True)
class PlotSpec:
    """A figure of the report.

    * `line`: y against the axis x, one line per series, mean ± std over reps (a numeric
      axis at its values, any other at evenly spaced positions in the axis's order);
    * `bar`: grouped bars of y per x label (x may be "flow"), mean ± std over reps, with the
      group's mean of the metric `annotate` written above each group;
    * `timeseries`: a time-series column (y) over time for one repetition (`rep`) of the
      points selected by `where`, one line per flow (`show = "flows"`, the default), per link
      direction (`"links"`) or both, optionally averaged over a trailing window (`smooth`);
    * `ccdf`: the one-way delay CCDF P(OWD > x) of the messages of one kind (`message_kind`,
      default "priority"), one curve per series pooling every repetition's messages, on a
      log y axis with the deadline as a vertical line and optionally the "ideal" reference
      (per message the smallest path delay at its send time);
    * `heatmap`: the mean over reps of the metric `z` per cell of two axes, x and y, the
      value written in each cell (one figure per flow unless `flow` picks one);
    * `throughput-delay`: per series, the mean of y (default goodput) against the mean and
      95th percentile of a delay (`delay`), the delay axis inverted (Pantheon's plot).

    `series` is an axis name or "flow"; `where` fixes other axes (axis name -> the labels
    kept, any of them); `flow` keeps only one flow's rows.
    """

    name: str
    kind: str
    y: str
    x: str | None = None
    series: str | None = None
    flow: str | None = None
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    rep: int = 0
    title: str | None = None
    xlabel: str | None = None
    ylabel: str | None = None
    logx: bool = False
    references: tuple[Reference, ...] = ()
    show: str = "flows"
    """timeseries: draw the rows of "flows", "links" (one line per direction) or "both"."""
    annotate: str | None = None
    """bar: a metric whose mean over each x group's rows is written above the group."""
    annotate_label: str | None = None
    """bar: the annotation's label (None: the metric's name)."""
    smooth: float | None = None
    """timeseries: the trailing moving-average window in seconds (None: no smoothing)."""
    span: tuple[float, float] | None = None
    """timeseries: the time range drawn, in seconds (None: the whole run)."""
    message_kind: str = "priority"
    """ccdf: the kind of message whose one-way delay is drawn."""
    deadline: float | None = None
    """ccdf: the deadline line in seconds (None: the deadline of the runs' sources)."""
    ideal: bool = False
    """ccdf: add the ideal reference (the smallest path delay at each message's send time)."""
    z: str | None = None
    """heatmap: the metric whose mean colours each cell (x and y are then axes)."""
    logy: bool = False
    """A log y axis (line, bar, timeseries, throughput-delay)."""
    ylim: tuple[float, float] | None = None
    """The y range drawn (None: fitted to the data; rates then start at zero)."""
    zlim: tuple[float, float] | None = None
    """heatmap: the colour scale's range (None: the cells' smallest to largest mean)."""
    spread: str = "std"
    """line, bar, throughput-delay: error bars of ± std, the 95 % CI ("ci95") or none."""
    delay: str = "rtt"
    """throughput-delay: the delay drawn on x (one of DELAYS)."""


@dataclass(frozen=True)
class QuickSpec:
    """How `--quick` shrinks the experiment into a smoke version of itself."""

    repetitions: int = 1
    overrides: tuple[tuple[str, str], ...] = ()
    values: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Axis name -> the labels of the values kept."""


@dataclass(frozen=True)
class SweepSpec:
    """A parsed sweep file."""

    name: str
    path: str
    scenario: ScenarioSource
    groups: tuple[tuple[Axis, ...], ...]
    """Axes grouped: zipped within a group, crossed between groups."""
    repetitions: int = 1
    seed: int = 1
    seeds: str = "per-point"
    title: str = ""
    description: str = ""
    parameter: str | None = None
    """The axis reported in the `parameter`/`value` columns (None: the sweep has no axis)."""
    overrides: tuple[tuple[str, str], ...] = ()
    """Fixed overrides applied to every run before the axes' ones."""
    metrics: tuple[str, ...] = DEFAULT_FLOW_METRICS
    keep_timeseries: bool = False
    plots: tuple[PlotSpec, ...] = ()
    quick: QuickSpec | None = None
    is_quick: bool = False

    @property
    def axes(self) -> tuple[Axis, ...]:
        return tuple(axis for group in self.groups for axis in group)

    @property
    def point_count(self) -> int:
        return math.prod(len(group[0].values) for group in self.groups)

    def axis(self, name: str) -> Axis:
        for axis in self.axes:
            if axis.name == name:
                return axis
        raise KeyError(name)

    def with_repetitions(self, repetitions: int) -> SweepSpec:
        if repetitions < 1:
            raise SweepError(f"{self.path}: --reps: must be at least 1, got {repetitions}")
        return replace(self, repetitions=repetitions)

    def quick_version(self) -> SweepSpec:
        """The smoke version (`[quick]`): fewer repetitions, shorter runs, fewer values."""
        quick = self.quick or QuickSpec()
        keep = dict(quick.values)
        groups = []
        for group in self.groups:
            indices = range(len(group[0].values))
            for axis in group:
                if axis.name in keep:
                    labels = keep[axis.name]
                    indices = [i for i in indices if axis.values[i].label in labels]
            groups.append(tuple(replace(a, values=tuple(a.values[i] for i in indices))
                                for a in group))
        return replace(self, groups=tuple(groups), repetitions=quick.repetitions,
                       overrides=self.overrides + quick.overrides, is_quick=True)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (stored with the results so reports need only the store)."""
        return asdict(self)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> SweepSpec:
        def pairs(items: Any) -> tuple[tuple[str, str], ...]:
            return tuple((str(k), str(v)) for k, v in items)

        def axis(d: Mapping[str, Any]) -> Axis:
            values = tuple(AxisValue(v["label"], v["value"], pairs(v["overrides"]))
                           for v in d["values"])
            return Axis(d["name"], values, bool(d["numeric"]), d.get("unit"))

        def where(items: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
            # Stores written before list-valued `where` hold one label per axis.
            return tuple((str(k), (v,) if isinstance(v, str) else tuple(map(str, v)))
                         for k, v in items)

        def plot(d: Mapping[str, Any]) -> PlotSpec:
            refs = tuple(Reference(r["source"], tuple(r["x"]), tuple(r["y"]), r.get("series"),
                                   r.get("flow")) for r in d.get("references", ()))
            def pair(value: Any) -> tuple[float, float] | None:
                return None if value is None else (float(value[0]), float(value[1]))

            return PlotSpec(**{**d, "where": where(d.get("where", ())), "references": refs,
                               "span": pair(d.get("span")), "ylim": pair(d.get("ylim")),
                               "zlim": pair(d.get("zlim"))})

        quick = data.get("quick")
        return SweepSpec(
            name=data["name"], path=data["path"], scenario=ScenarioSource(**data["scenario"]),
            groups=tuple(tuple(axis(a) for a in g) for g in data["groups"]),
            repetitions=data["repetitions"], seed=data["seed"], seeds=data["seeds"],
            title=data["title"], description=data["description"],
            parameter=data.get("parameter"), overrides=pairs(data["overrides"]),
            metrics=tuple(data["metrics"]), keep_timeseries=data["keep_timeseries"],
            plots=tuple(plot(p) for p in data["plots"]),
            quick=None if quick is None else QuickSpec(
                quick["repetitions"], pairs(quick["overrides"]),
                tuple((k, tuple(v)) for k, v in quick["values"])),
            is_quick=data.get("is_quick", False),
        )


# --- parsing -----------------------------------------------------------------------------

class _Reader:
    """Reads typed fields out of TOML tables, with errors that name the file and the field."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> SweepError:
        return SweepError(f"{self.path}: {where}: {problem}" if where else f"{self.path}: {problem}")

    def table(self, data: Any, where: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(where, f"expected a table, got {_kind(data)}")
        return data

    def check_keys(self, data: Mapping[str, Any], where: str, allowed: tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                raise self.fail(f"{where}.{key}" if where else key,
                                f"unknown field, expected one of {', '.join(allowed)}")

    def string(self, data: Mapping[str, Any], key: str, where: str, default: Any = ...) -> Any:
        if key not in data:
            if default is ...:
                raise self.fail(_join(where, key), "missing (a string is required)")
            return default
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(_join(where, key), f"expected a non-empty string, got {_kind(value)}")
        return value.strip()

    def integer(self, data: Mapping[str, Any], key: str, where: str, default: int,
                minimum: int, maximum: int = 2**63 - 1) -> int:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(_join(where, key), f"expected a whole number, got {_kind(value)}")
        if not minimum <= value <= maximum:
            raise self.fail(_join(where, key),
                            f"must be between {minimum} and {maximum}, got {value}")
        return value

    def boolean(self, data: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
        value = data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(_join(where, key), f"expected true or false, got {_kind(value)}")
        return value

    def choice(self, data: Mapping[str, Any], key: str, where: str, choices: tuple[str, ...],
               default: str) -> str:
        value = data.get(key, default)
        if value not in choices:
            raise self.fail(_join(where, key),
                            f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def overrides(self, data: Any, where: str) -> tuple[tuple[str, str], ...]:
        table = self.table(data, where)
        result = []
        for key, value in table.items():
            _check_param_path(self, key, f"{where}.{key}")
            result.append((key, _override_text(self, value, f"{where}.{key}")))
        return tuple(result)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _check_param_path(r: _Reader, path: str, where: str) -> None:
    parts = path.split(".")
    if len(parts) < 2 or any(not p.strip() for p in parts):
        raise r.fail(where, f"{path!r} is not a scenario parameter path "
                            "(expected dotted keys such as link.bottleneck.rate)")


def _override_text(r: _Reader, value: Any, where: str) -> str:
    if isinstance(value, (dict, list)) and not value:
        raise r.fail(where, "an empty table or array is not a parameter value")
    try:
        return override_value(value)
    except TypeError as exc:
        raise r.fail(where, str(exc)) from None


def _format_number(number: float) -> str:
    if float(number).is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.12g}"


def _split_number(value: Any) -> tuple[float, str | None] | None:
    """(number, unit) for `5`, `2.5` or `"20 Mbit/s"`; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value), None
    if isinstance(value, str):
        match = _NUMBER_WITH_UNIT.match(value)
        if match:
            return float(match.group(1)), (match.group(2) or None)
    return None


def _range_values(r: _Reader, spec: Mapping[str, Any], where: str) -> tuple[list[Any], str | None]:
    """Numbers of a `{from, to, step | count, scale, unit}` range (ends included)."""
    r.check_keys(spec, where, ("from", "to", "step", "count", "scale", "unit"))
    for key in ("from", "to"):
        if key not in spec:
            raise r.fail(where, f"a range needs '{key}' (ranges are {{from, to, step}} or "
                                "{from, to, count})")
        if isinstance(spec[key], bool) or not isinstance(spec[key], (int, float)) \
                or not math.isfinite(spec[key]):
            raise r.fail(f"{where}.{key}", f"expected a finite number, got {_kind(spec[key])}")
    start, stop = float(spec["from"]), float(spec["to"])
    unit = spec.get("unit")
    if unit is not None and (not isinstance(unit, str) or not unit.strip()):
        raise r.fail(f"{where}.unit", f"expected a unit such as \"Mbit/s\", got {_kind(unit)}")
    scale = r.choice(spec, "scale", where, ("linear", "log"), "linear")
    if ("step" in spec) == ("count" in spec):
        raise r.fail(where, "give exactly one of 'step' and 'count'")
    if "count" in spec:
        count = r.integer(spec, "count", where, 0, 1, MAX_RANGE_VALUES)
        if scale == "log":
            if start <= 0 or stop <= 0:
                raise r.fail(where, "a log range needs from and to above zero")
            values = [start * (stop / start) ** (i / (count - 1)) if count > 1 else start
                      for i in range(count)]
        else:
            values = [start + (stop - start) * i / (count - 1) if count > 1 else start
                      for i in range(count)]
    else:
        step = spec["step"]
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not 0 < step < math.inf:
            raise r.fail(f"{where}.step", f"expected a finite number above zero, got {_kind(step)}")
        if scale == "log":
            raise r.fail(where, "a log range takes 'count', not 'step'")
        if stop < start:
            raise r.fail(where, f"empty range: 'to' ({spec['to']}) is below 'from' "
                                f"({spec['from']}); ranges count upwards")
        steps = (stop - start) / step
        if not steps < MAX_RANGE_VALUES:  # also inf, from a span or a step at the float's limits
            raise r.fail(where, f"{_format_number(steps + 1)} values; at most {MAX_RANGE_VALUES} per range")
        n = int(math.floor(steps + 1e-9)) + 1
        values = [start + i * step for i in range(n)]
    if not all(math.isfinite(v) for v in values):
        raise r.fail(where, f"the range from {spec['from']} to {spec['to']} overflows the "
                            "numbers (its values are not all finite)")
    integral = all(isinstance(spec[k], int) for k in ("from", "to")) and \
        ("step" not in spec or isinstance(spec["step"], int))
    values = [int(round(v)) if integral and scale == "linear" else round(v, 12) for v in values]
    return values, (unit.strip() if unit else None)


def _param_axis(r: _Reader, name: str, raw: Any, where: str) -> Axis:
    """An axis that sets one parameter: a non-empty array or a range table."""
    _check_param_path(r, name, where)
    if isinstance(raw, dict):
        numbers, unit = _range_values(r, raw, where)
        values = tuple(
            AxisValue(
                label=_format_number(v) + (f" {unit}" if unit else ""),
                value=float(v),
                overrides=((name, f"{_format_number(v)} {unit}" if unit else _format_number(v)),),
            )
            for v in numbers)
        return Axis(name, values, numeric=True, unit=unit)
    if not isinstance(raw, list):
        raise r.fail(where, f"expected an array of values or a range table, got {_kind(raw)}")
    if not raw:
        raise r.fail(where, "empty list of values")
    return _axis_from_list(r, name, raw, where, set_param=True)


def _axis_from_list(r: _Reader, name: str, raw: list[Any], where: str,
                    set_param: bool) -> Axis:
    parts = [_split_number(v) for v in raw]
    units = {p[1] for p in parts if p is not None}
    if all(p is not None for p in parts) and len(units) > 1:
        seen = list(dict.fromkeys(p[1] or "(none)" for p in parts if p is not None))
        first = next(i for i, p in enumerate(parts) if p is not None and p[1] != parts[0][1])
        raise r.fail(f"{where}[{first}]", f"the values mix units ({', '.join(seen)}): write "
                     "them all in one unit, so that the axis is numeric and plots in order")
    numeric = all(p is not None for p in parts) and len(units) == 1
    unit = next(iter(units)) if numeric else None
    values = []
    for i, item in enumerate(raw):
        text = _override_text(r, item, f"{where}[{i}]")
        label = text if isinstance(item, str) else _label_of(item)
        value: float | str = parts[i][0] if numeric else label  # type: ignore[index]
        values.append(AxisValue(label, value, ((name, text),) if set_param else ()))
    labels = [v.label for v in values]
    if len(set(labels)) != len(labels):
        dup = next(label for label in labels if labels.count(label) > 1)
        raise r.fail(where, f"value {dup!r} appears twice")
    return Axis(name, tuple(values), numeric=numeric, unit=unit)


def _label_of(value: Any) -> str:
    if isinstance(value, float):
        return _format_number(value)
    if isinstance(value, (dict, list)):
        return override_value(value)
    return str(value)


def _variant_axis(r: _Reader, name: str, raw: Any, where: str) -> Axis:
    if not isinstance(raw, list) or not raw:
        raise r.fail(where, "expected a non-empty array of tables [[axis.variant]]")
    values = []
    for i, item in enumerate(raw):
        w = f"{where}[{i}]"
        item = r.table(item, w)
        r.check_keys(item, w, ("label", "set"))
        label = r.string(item, "label", w)
        if "set" not in item:
            raise r.fail(w, "missing 'set' (the overrides of this variant)")
        values.append(AxisValue(label, label, r.overrides(item["set"], f"{w}.set")))
    labels = [v.label for v in values]
    if len(set(labels)) != len(labels):
        raise r.fail(where, "two variants have the same label")
    return Axis(name, tuple(values), numeric=False)


def _group_from_axis_table(r: _Reader, raw: Any, where: str) -> tuple[Axis, ...]:
    table = r.table(raw, where)
    r.check_keys(table, where, ("name", "param", "values", "variant", "zip", "labels"))
    forms = [k for k in ("param", "variant", "zip") if k in table]
    if len(forms) != 1:
        raise r.fail(where, "an axis has exactly one of 'param' (with 'values'), "
                            "'variant' or 'zip'")
    form = forms[0]
    if form == "param":
        param = r.string(table, "param", where)
        if "values" not in table:
            raise r.fail(where, "missing 'values' (an array or a range table)")
        axis = _param_axis(r, param, table["values"], f"{where}.values")
        name = r.string(table, "name", where, param)
        return (replace(axis, name=name),)
    if "values" in table:
        raise r.fail(f"{where}.values", f"only a 'param' axis takes values")
    if form == "variant":
        name = r.string(table, "name", where)
        return (_variant_axis(r, name, table["variant"], f"{where}.variant"),)
    zipped = r.table(table["zip"], f"{where}.zip")
    if not zipped:
        raise r.fail(f"{where}.zip", "empty: name at least one parameter")
    axes = [_param_axis(r, k, v, f"{where}.zip.{k}") for k, v in zipped.items()]
    if "labels" in table:
        labels = table["labels"]
        if not isinstance(labels, list) or not labels:
            raise r.fail(f"{where}.labels", "expected a non-empty array")
        name = r.string(table, "name", where)
        axes.insert(0, _axis_from_list(r, name, labels, f"{where}.labels", set_param=False))
    elif "name" in table:
        raise r.fail(f"{where}.name", "a zip axis takes a name only together with 'labels'")
    _check_same_length(r, axes, where)
    return tuple(axes)


def _check_same_length(r: _Reader, axes: list[Axis], where: str) -> None:
    lengths = {a.name: len(a.values) for a in axes}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise r.fail(where, f"zipped axes need the same number of values ({shown})")


def _references(r: _Reader, raw: Any, where: str) -> tuple[Reference, ...]:
    if not isinstance(raw, list):
        raise r.fail(where, "expected an array of tables [[plot.reference]]")
    refs = []
    for i, item in enumerate(raw):
        w = f"{where}[{i}]"
        item = r.table(item, w)
        r.check_keys(item, w, ("source", "x", "y", "series", "flow"))
        source = r.string(item, "source", w)
        xs, ys = item.get("x"), item.get("y")
        if not isinstance(xs, list) or not isinstance(ys, list) or not xs:
            raise r.fail(w, "needs arrays 'x' and 'y' of the same, non-zero length")
        if len(xs) != len(ys):
            raise r.fail(w, f"'x' has {len(xs)} values but 'y' has {len(ys)}")
        for j, y in enumerate(ys):
            if isinstance(y, bool) or not isinstance(y, (int, float)):
                raise r.fail(f"{w}.y[{j}]", f"expected a number, got {_kind(y)}")
        refs.append(Reference(source, tuple(_label_of(x) if not isinstance(x, (int, float))
                                            else x for x in xs),
                              tuple(float(y) for y in ys),
                              r.string(item, "series", w, None), r.string(item, "flow", w, None)))
    return tuple(refs)


def summary_name(name: str) -> str:
    """The flow summary field a metric name means: a time-series column with a summary
    counterpart (`SUMMARY_NAMES`, e.g. srtt_ms) is read as it (final_srtt_ms)."""
    return SUMMARY_NAMES.get(name, name)


def suggestion(name: str, known: Iterable[str]) -> str:
    """" (did you mean 'x'?)" for the known name closest to `name`, or ""."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_y(r: _Reader, kind: str, y: str, metrics: tuple[str, ...], where: str) -> str:
    """The metric `y` names for a plot of `kind`, read across the time-series and summary
    names (`SUMMARY_NAMES`); raises naming the right one when it is neither."""
    if kind == "timeseries":
        column = TIMESERIES_NAMES.get(y, y)
        if column in TIMESERIES_COLUMNS:
            return column
        raise r.fail(where, f"{y!r} is not a time-series column{suggestion(y, TIMESERIES_COLUMNS)}"
                            f"; expected one of {', '.join(TIMESERIES_COLUMNS)}")
    allowed = (*metrics, *RUN_METRICS)
    field = summary_name(y)
    if field in allowed:
        return field
    if field != y or y in SHARED_NAMES:
        hint = (f": the flow summary's {field!r} holds it for the whole run (the time series' "
                f"{y!r} per bin); add [metrics] flow = [{field!r}]")
    elif y in TIMESERIES_COLUMNS:
        hint = " but a time-series column: draw it with kind = \"timeseries\""
    else:
        hint = (f"{suggestion(y, allowed)} (add flow summary fields with [metrics] flow = "
                f"[...]); expected one of {', '.join(allowed)}")
    raise r.fail(where, f"{y!r} is not a result metric{hint}")


PLOT_KEYS = ("name", "kind", "x", "y", "z", "series", "flow", "where", "rep", "title", "xlabel",
             "ylabel", "logx", "logy", "ylim", "zlim", "spread", "reference", "show", "annotate",
             "annotate_label", "smooth", "span", "message_kind", "deadline", "ideal", "delay")
ONLY_FOR: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("show", ("timeseries",)), ("smooth", ("timeseries",)), ("span", ("timeseries",)),
    ("annotate", ("bar",)), ("message_kind", ("ccdf",)), ("deadline", ("ccdf",)),
    ("ideal", ("ccdf",)), ("z", ("heatmap",)), ("zlim", ("heatmap",)),
    ("delay", ("throughput-delay",)),
    ("spread", ("line", "bar", "throughput-delay")),
    ("logy", ("line", "bar", "timeseries", "throughput-delay")),
    ("ylim", ("line", "bar", "timeseries", "ccdf", "throughput-delay")),
)
"""Fields only some kinds of plot take."""


def _plots(r: _Reader, raw: Any, axes: tuple[Axis, ...],
           metrics: tuple[str, ...]) -> tuple[PlotSpec, ...]:
    if not isinstance(raw, list):
        raise r.fail("plot", "expected an array of tables [[plot]]")
    names = {a.name: a for a in axes}
    plots = tuple(_plot(r, item, i, names, metrics) for i, item in enumerate(raw))
    seen = [p.name for p in plots]
    for name in seen:
        if seen.count(name) > 1:
            raise r.fail("plot", f"two plots are named {name!r}")
    return plots


def _plot(r: _Reader, raw: Any, i: int, names: dict[str, Axis],
          metrics: tuple[str, ...]) -> PlotSpec:
    w = f"plot[{i}]"
    item = r.table(raw, w)
    r.check_keys(item, w, PLOT_KEYS)
    kind = r.choice(item, "kind", w, PLOT_KINDS, "line")
    name = r.string(item, "name", w, f"plot{i + 1}")
    for key, kinds in ONLY_FOR:
        if key in item and kind not in kinds:
            which = f"a {kinds[0]} plot takes" if len(kinds) == 1 else \
                f"{', '.join(kinds[:-1])} and {kinds[-1]} plots take"
            raise r.fail(f"{w}.{key}", f"only {which} '{key}' (plot {name!r} is a {kind} plot)")
    z = None
    if kind == "ccdf":
        _check_ccdf(r, item, w)
        y = CCDF_Y
    elif kind == "heatmap":
        y, z = _heatmap_axes(r, item, names, metrics, w)
    elif kind == "throughput-delay":
        _check_throughput_delay(r, item, w)
        y = _check_y(r, kind, r.string(item, "y", w, "goodput_mbps"), metrics, f"{w}.y")
    else:
        y = _check_y(r, kind, r.string(item, "y", w), metrics, f"{w}.y")
    x = _plot_x(r, item, kind, names, w)
    series = r.string(item, "series", w, None)
    if series is not None and series != "flow" and series not in names:
        raise r.fail(f"{w}.series", f"no axis named {series!r} (axes: "
                                    f"{', '.join(names) or 'none'}, or \"flow\")")
    if series is not None and series == x:
        raise r.fail(f"{w}.series", f"{series!r} is already the plot's x")
    if series is not None and kind == "heatmap":
        raise r.fail(f"{w}.series", "a heatmap has no series: its cells are the values of "
                                    "x and y (fix other axes with 'where')")
    if "annotate_label" in item and "annotate" not in item:
        raise r.fail(f"{w}.annotate_label", "labels the 'annotate' metric; give 'annotate' too")
    annotate = r.string(item, "annotate", w, None)
    if annotate is not None:
        annotate = _check_y(r, kind, annotate, metrics, f"{w}.annotate")
    logx = r.boolean(item, "logx", w, False)
    if logx and kind == "heatmap":
        raise r.fail(f"{w}.logx", "a heatmap's cells are evenly spaced; it takes no 'logx'")
    if logx and kind != "throughput-delay" and (x is None or x == "flow"
                                                or not names[x].numeric):
        raise r.fail(f"{w}.logx", "a log x needs a numeric axis as x")
    logy = r.boolean(item, "logy", w, False)
    ylim = _limits(r, item, "ylim", w, name, log=logy or kind == "ccdf")
    return PlotSpec(
        name=name, kind=kind, y=y, x=x, series=series, z=z, logy=logy, ylim=ylim,
        zlim=_limits(r, item, "zlim", w, name, log=False),
        spread=r.choice(item, "spread", w, SPREADS, "std"),
        delay=r.choice(item, "delay", w, DELAYS, "rtt"),
        flow=r.string(item, "flow", w, None),
        where=_where(r, item.get("where", {}), names, f"{w}.where"),
        rep=r.integer(item, "rep", w, 0, 0),
        title=r.string(item, "title", w, None), xlabel=r.string(item, "xlabel", w, None),
        ylabel=r.string(item, "ylabel", w, None), logx=logx,
        references=_references(r, item.get("reference", []), f"{w}.reference"),
        show=r.choice(item, "show", w, TIMESERIES_SHOW, "flows"),
        annotate=annotate, annotate_label=r.string(item, "annotate_label", w, None),
        smooth=_duration(r, item["smooth"], f"{w}.smooth") if "smooth" in item else None,
        span=_span(r, item["span"], f"{w}.span") if "span" in item else None,
        message_kind=r.choice(item, "message_kind", w, MESSAGE_KINDS, "priority"),
        deadline=_duration(r, item["deadline"], f"{w}.deadline") if "deadline" in item else None,
        ideal=r.boolean(item, "ideal", w, False),
    )


def _check_ccdf(r: _Reader, item: Mapping[str, Any], w: str) -> None:
    """The fields a ccdf plot does not take, each refused with what to do instead."""
    refused = (
        ("y", "a ccdf plot draws the one-way delay of messages; it takes no 'y' (choose the "
              "messages with 'message_kind')"),
        ("logx", "a ccdf plot takes no 'logx' (its y axis is logarithmic, its x linear)"),
        ("rep", "a ccdf plot pools every repetition; it takes no 'rep'"),
        ("reference", "a ccdf plot takes no [[plot.reference]] (ideal = true adds the ideal "
                      "reference)"),
    )
    for key, problem in refused:
        if key in item:
            raise r.fail(f"{w}.{key}", problem)


def _limits(r: _Reader, item: Mapping[str, Any], key: str, w: str, name: str,
            log: bool) -> tuple[float, float] | None:
    """An axis range [lo, hi]: two finite numbers, lo < hi, both above zero on a log axis."""
    if key not in item:
        return None
    value = item[key]
    where = f"{w}.{key}"
    numbers = value if isinstance(value, list) and len(value) == 2 else None
    if numbers is None or any(isinstance(v, bool) or not isinstance(v, (int, float))
                              or not math.isfinite(v) for v in numbers):
        raise r.fail(where, f"plot {name!r}: expected [lo, hi], two finite numbers such as "
                            f"[0.95, 1.0], got {_kind(value)}")
    lo, hi = float(numbers[0]), float(numbers[1])
    if not lo < hi:
        raise r.fail(where, f"plot {name!r}: the range [{lo:g}, {hi:g}] is empty: lo must be "
                            "below hi")
    if log and lo <= 0:
        raise r.fail(where, f"plot {name!r}: a log axis cannot reach {lo:g}: lo must be above "
                            "zero (or drop logy)")
    return (lo, hi)


def _heatmap_axes(r: _Reader, item: Mapping[str, Any], names: dict[str, Axis],
                  metrics: tuple[str, ...], w: str) -> tuple[str, str]:
    """A heatmap's y (a second axis, not zipped with x) and z (the metric coloured)."""
    if "z" not in item:
        raise r.fail(w, "a heatmap plot needs 'z' (the metric its cells show, such as "
                        "\"goodput_mbps\"); x and y name two axes")
    z = _check_y(r, "heatmap", r.string(item, "z", w), metrics, f"{w}.z")
    y = r.string(item, "y", w, None)
    if y is None:
        raise r.fail(w, "a heatmap plot needs 'y' (an axis name)")
    if y not in names:
        raise r.fail(f"{w}.y", f"a heatmap's y is an axis: no axis named {y!r} (axes: "
                               f"{', '.join(names) or 'none'})")
    return y, z


def _check_heatmap_xy(r: _Reader, plot: PlotSpec, groups: tuple[tuple[Axis, ...], ...],
                      w: str) -> None:
    """x and y are two crossed axes; `where` keeps one label of any other axis (several
    would be averaged into one cell)."""
    x, y = plot.x or "", plot.y
    if x == y:
        raise r.fail(f"{w}.y", f"x and y are both {x!r}: a heatmap needs two axes")
    cells = set()
    for group in groups:
        members = {a.name for a in group}
        if x in members and y in members:
            raise r.fail(f"{w}.y", f"{x!r} and {y!r} are zipped (they advance together): a "
                                   "heatmap needs two crossed axes")
        if x in members or y in members:
            cells |= members
    for name, labels in plot.where:
        if len(labels) > 1 and name not in cells:
            raise r.fail(f"{w}.where.{name}", f"plot {plot.name!r}: a heatmap cell holds one "
                         f"value of each other axis; keep one label of {name!r} (each other "
                         "value gets a figure of its own when 'where' leaves it out)")


def _check_throughput_delay(r: _Reader, item: Mapping[str, Any], w: str) -> None:
    for key, problem in (
            ("x", "a throughput-delay plot draws the delay on x; it takes no 'x' (choose it "
                  "with 'delay', the schemes with 'series')"),
            ("reference", "a throughput-delay plot takes no [[plot.reference]]"),
            ("rep", "a throughput-delay plot averages every repetition; it takes no 'rep'")):
        if key in item:
            raise r.fail(f"{w}.{key}", problem)


def _plot_x(r: _Reader, item: Mapping[str, Any], kind: str, names: dict[str, Axis],
            w: str) -> str | None:
    """The plot's x: an axis (a line plot, a heatmap), an axis or "flow" (a bar plot), none
    (time, a CCDF's delay, a throughput-delay plot's delay)."""
    x = r.string(item, "x", w, None)
    if kind == "timeseries":
        if x is not None:
            raise r.fail(f"{w}.x", "a timeseries plot is drawn over time; it takes no 'x'")
        return None
    if kind == "throughput-delay":
        return None
    if kind == "ccdf":
        if x is not None:
            raise r.fail(f"{w}.x", "a ccdf plot is drawn over the one-way delay; it takes no "
                                   "'x' (give the axis to compare as 'series')")
        return None
    takes = "an axis name or \"flow\"" if kind == "bar" else "an axis name"
    if x is None:
        raise r.fail(w, f"a {kind} plot needs 'x' ({takes})")
    if x not in names and (kind != "bar" or x != "flow"):
        raise r.fail(f"{w}.x", f"no axis named {x!r} (axes: {', '.join(names) or 'none'})")
    return x


def _where(r: _Reader, raw: Any, names: dict[str, Axis],
           where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`where = { axis = label | [labels] }`: the labels each named axis keeps."""
    result = []
    for key, given in r.table(raw, where).items():
        w = f"{where}.{key}"
        if key not in names:
            raise r.fail(w, "no such axis")
        items = given if isinstance(given, list) else [given]
        if not items:
            raise r.fail(w, "empty array: list at least one value of the axis")
        result.append((key, _axis_labels(r, names[key], items, w)))
    return tuple(result)


def _axis_labels(r: _Reader, axis: Axis, items: list[Any], where: str) -> tuple[str, ...]:
    """Values named by their labels (numbers allowed for numeric labels), each once."""
    known = [v.label for v in axis.values]
    labels: list[str] = []
    for item in items:
        label = item if isinstance(item, str) else _label_of(item)
        if label not in known:
            raise r.fail(where, f"axis {axis.name!r} has no value {label!r} (values: "
                                f"{', '.join(known)})")
        if label in labels:
            raise r.fail(where, f"value {label!r} appears twice")
        labels.append(label)
    return tuple(labels)


def _duration(r: _Reader, value: Any, where: str) -> float:
    """Seconds of a duration such as "1 s" or "500 ms" (above zero)."""
    parts = _split_number(value) if isinstance(value, str) else None
    if parts is None or parts[1] not in DURATION_UNITS or parts[0] <= 0:
        raise r.fail(where, f"expected a duration above zero such as \"1 s\" or \"500 ms\" "
                            f"(units: {', '.join(DURATION_UNITS)}), got {_kind(value)}")
    return parts[0] * DURATION_UNITS[parts[1]]


def _span(r: _Reader, value: Any, where: str) -> tuple[float, float]:
    """A time range ["2 s", "5 s"]: start (may be zero) before end, in seconds."""
    def seconds(v: Any) -> float | None:
        parts = _split_number(v) if isinstance(v, str) else None
        if parts is None or parts[1] not in DURATION_UNITS or parts[0] < 0:
            return None
        return parts[0] * DURATION_UNITS[parts[1]]

    bounds = [seconds(v) for v in value] if isinstance(value, list) and len(value) == 2 else None
    if bounds is None or None in bounds or not bounds[0] < bounds[1]:
        raise r.fail(where, "expected [start, end] durations with start < end, such as "
                            f"[\"2 s\", \"5 s\"], got {_kind(value)}")
    return (bounds[0], bounds[1])


def _quick(r: _Reader, raw: Any, axes: tuple[Axis, ...]) -> QuickSpec:
    table = r.table(raw, "quick")
    r.check_keys(table, "quick", ("repetitions", "set", "values"))
    names = {a.name: a for a in axes}
    values = []
    for key, labels in r.table(table.get("values", {}), "quick.values").items():
        w = f"quick.values.{key}"
        if key not in names:
            raise r.fail(w, "no such axis")
        if not isinstance(labels, list) or not labels:
            raise r.fail(w, "expected a non-empty array of values of that axis")
        values.append((key, _axis_labels(r, names[key], labels, w)))
    return QuickSpec(
        repetitions=r.integer(table, "repetitions", "quick", 1, 1, 1_000_000),
        overrides=r.overrides(table.get("set", {}), "quick.set"),
        values=tuple(values),
    )


def _scenario(r: _Reader, experiment: Mapping[str, Any], inline: Any, sweep_path: Path) -> ScenarioSource:
    has_file = "scenario" in experiment
    if has_file == (inline is not None):
        raise r.fail("experiment.scenario", "give the base scenario either as a file path "
                                            "here or as an inline [scenario] table, not both"
                     if has_file else "missing: give a scenario file path here or an inline "
                                      "[scenario] table")
    if inline is not None:
        table = r.table(inline, "scenario")
        return ScenarioSource(text=tomli_w.dumps(table), origin=f"{sweep_path} [scenario]",
                              base_dir=os.fspath(sweep_path.parent) or ".")
    rel = r.string(experiment, "scenario", "experiment")
    path = sweep_path.parent / rel
    try:
        return read_scenario_file(path)
    except ScenarioFileError as exc:
        raise r.fail("experiment.scenario", str(exc)) from None


TOP_KEYS = ("experiment", "scenario", "set", "params", "axis", "metrics", "quick", "plot")
EXPERIMENT_KEYS = ("name", "title", "description", "scenario", "repetitions", "seed", "seeds",
                   "combine", "parameter")


def parse_sweep_text(text: str, path: str | os.PathLike[str]) -> SweepSpec:
    """Parses sweep TOML; `path` names the file in errors and anchors relative paths."""
    shown = os.fspath(path)
    r = _Reader(shown)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{shown}: invalid TOML: {exc}") from None
    if "experiment" not in data and any(k in data for k in ("link", "flow", "split")):
        raise SweepError(f"{shown}: this is a scenario file (it has [[link]] or [[flow]], no "
                         f"[experiment]): run it with `multiconn run {shown} --out DIR`, or "
                         "name it in a sweep file's [experiment] scenario")
    r.check_keys(data, "", TOP_KEYS)
    experiment = r.table(data.get("experiment", {}), "experiment")
    r.check_keys(experiment, "experiment", EXPERIMENT_KEYS)
    name = r.string(experiment, "name", "experiment", Path(shown).stem)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise r.fail("experiment.name", f"{name!r}: use letters, digits, '-', '_' and '.'")
    combine = r.choice(experiment, "combine", "experiment", COMBINE_MODES, "cross")

    params = r.table(data.get("params", {}), "params")
    param_axes = [_param_axis(r, k, v, f"params.{k}") for k, v in params.items()]
    groups: list[tuple[Axis, ...]] = []
    if combine == "zip" and param_axes:
        _check_same_length(r, param_axes, "params")
        groups.append(tuple(param_axes))
    else:
        groups.extend((a,) for a in param_axes)
    raw_axes = data.get("axis", [])
    if not isinstance(raw_axes, list):
        raise r.fail("axis", "expected an array of tables [[axis]]")
    for i, raw in enumerate(raw_axes):
        groups.append(_group_from_axis_table(r, raw, f"axis[{i}]"))
    axes = tuple(a for g in groups for a in g)
    seen: set[str] = set()
    for axis in axes:
        if axis.name in RESERVED_COLUMNS:
            raise r.fail("axis", f"an axis may not be named {axis.name!r} (a result column)")
        if axis.name in seen:
            raise r.fail("axis", f"two axes are named {axis.name!r}")
        seen.add(axis.name)

    parameter = r.string(experiment, "parameter", "experiment", None)
    if parameter is not None and parameter not in seen:
        raise r.fail("experiment.parameter", f"no axis named {parameter!r}")
    if parameter is None and axes:
        parameter = next((a.name for a in axes if len(a.values) > 1), axes[0].name)

    metrics_table = r.table(data.get("metrics", {}), "metrics")
    r.check_keys(metrics_table, "metrics", ("flow", "timeseries"))
    extra = metrics_table.get("flow", [])
    if not isinstance(extra, list) or not all(isinstance(m, str) and m for m in extra):
        raise r.fail("metrics.flow", "expected an array of flow summary field names")
    # A time-series name with a summary counterpart means that field (srtt_ms: final_srtt_ms).
    metrics = tuple(dict.fromkeys([*DEFAULT_FLOW_METRICS, *map(summary_name, extra)]))

    spec = SweepSpec(
        name=name, path=shown,
        scenario=_scenario(r, experiment, data.get("scenario"), Path(shown)),
        groups=tuple(groups),
        repetitions=r.integer(experiment, "repetitions", "experiment", 1, 1, 1_000_000),
        seed=r.integer(experiment, "seed", "experiment", 1, 0, 2**63 - 1),
        seeds=r.choice(experiment, "seeds", "experiment", SEED_MODES, "per-point"),
        title=r.string(experiment, "title", "experiment", name),
        description=r.string(experiment, "description", "experiment", ""),
        parameter=parameter,
        overrides=r.overrides(data.get("set", {}), "set"),
        metrics=metrics,
        keep_timeseries=r.boolean(metrics_table, "timeseries", "metrics", False),
        plots=_plots(r, data.get("plot", []), axes, metrics),
        quick=_quick(r, data["quick"], axes) if "quick" in data else None,
    )
    if any(p.kind == "timeseries" for p in spec.plots) and not spec.keep_timeseries:
        raise r.fail("plot", "a timeseries plot needs [metrics] timeseries = true")
    for i, p in enumerate(spec.plots):
        if p.kind == "heatmap":
            _check_heatmap_xy(r, p, spec.groups, f"plot[{i}]")
        if p.kind == "throughput-delay" and p.delay in DELAY_NEEDS_TIMESERIES \
                and not spec.keep_timeseries:
            raise r.fail(f"plot[{i}].delay", f"plot {p.name!r}: delay = {p.delay!r} is read "
                         "from the runs' time series: add [metrics] timeseries = true (or use "
                         "delay = \"owd\" for message flows)")
    return spec


def load_sweep(path: str | os.PathLike[str]) -> SweepSpec:
    """Reads and parses a sweep file."""
    shown = os.fspath(path)
    try:
        text = Path(shown).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepError(f"cannot read sweep file '{shown}': no such file") from None
    except IsADirectoryError:
        raise SweepError(f"cannot read sweep file '{shown}': it is a directory") from None
    except UnicodeDecodeError as exc:
        raise SweepError(f"cannot read sweep file '{shown}': not UTF-8 text "
                         f"(byte {exc.start})") from None
    except OSError as exc:
        raise SweepError(f"cannot read sweep file '{shown}': {exc.strerror or exc}") from None
    return parse_sweep_text(text, shown)


__all__ = [
    "Axis", "AxisValue", "PlotSpec", "QuickSpec", "Reference", "SweepError", "SweepSpec",
    "load_sweep", "parse_sweep_text", "CCDF_Y", "DEFAULT_FLOW_METRICS", "DELAYS", "DURATION_UNITS",
    "MESSAGE_KINDS", "RESERVED_COLUMNS", "RUN_METRICS", "SPREADS", "TIMESERIES_COLUMNS",
]
