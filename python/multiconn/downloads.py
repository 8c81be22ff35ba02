"""The multi-operator study's download experiments (its Tables 4 and 5): stacks × cases × start
offsets over a drive segment, summarised as the study summarised them and set beside its numbers.

    >>> from multiconn import downloads
    >>> experiment = downloads.Experiment.for_segment("residential")
    >>> runs = downloads.run(experiment, "out/residential", jobs=2)   # one row per run
    >>> table = downloads.summarise(runs)                              # the Table 4 layout
    >>> downloads.findings(table)                                      # the study's §4.7 checks

Each run is an ordinary scenario written by `multiconn.cases.write_scenario` (mapping A of the
reference's §4.5) and run by the sweep's local workers; the scenarios stay in
`OUT/scenarios/<stack>-<case>-o<offset>/` so that any run can be replayed or plotted alone.

The access links take the study's capacity → delay curve and 100-packet queues unless the
experiment says otherwise (`delay`: `delay_curve("nr")`, a curve's fields or a constant;
`queue`: `100packets`, `50ms`, `1.5BDP`). The curve speaks for the study's LTE capacities,
0–55.547 Mbit/s; `Experiment.warnings` says so when a table's capacities go beyond (a 5G
trace), and the report records it.

Per run: the completion time (from the connection's start to the last byte), goodput =
8 · size / completion, and over the download the time-averaged **MP capacity** (the sum over the
channels in use) and **SP capacity** (the best of them) — the study's definitions. A run that
does not finish within the horizon counts as incomplete and is left out of the means; its
count is reported.

**Segments.** The study's two drive segments are not public. A segment here is 300 s of a
synthetic drive (`multiconn.drive` preset and seed) estimated with the study's capacity model.
The seed is the one among 1–30 whose channel balance is closest to the study's segment: the
mean of the best 2, 3 and 4 channels' sum over the best channel's capacity (residential: 1.60,
1.80, 1.93 against the study's 1.56, 1.76, 1.88; road: 1.57, 1.65, 1.65 against 1.48, 1.67,
1.68). The capacities are then scaled so that the mean best-channel capacity equals the study's
SP capacity (Table 4: 13.41 Mbit/s, Table 5: 18.27 Mbit/s). Both are calibrations to the
study's tables, not outputs of the model (docs/multi-operator.md).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cases import (CASES, DEFAULT_HORIZON_S, DEFAULT_SIZE_BYTES, STACKS, ChannelTable,
                    mean_over, slot_changes, write_scenario)
from .errors import CaseError
from .testbeds import TESTBEDS, Testbed

if TYPE_CHECKING:
    import pandas as pd

STUDY_FILE = Path(__file__).parent / "studies" / "multi_operator_tables.csv"
"""Tables 4 and 5 of the study (Krämer et al. 2022), as printed."""
METRICS = ("goodput_mbps", "mp_capacity_mbps", "sp_capacity_mbps", "completion_s")
PICOQUIC = ("bbr", "cubic", "fast", "reno")


@dataclass(frozen=True)
class Segment:
    """A synthetic stand-in for one of the study's drive segments."""

    name: str
    preset: str
    seed: int
    duration_s: int
    load: float
    target_sp_mbps: float
    """The study's mean SP capacity over the segment's sp runs (Tables 4, 5)."""


SEGMENTS = {
    "residential": Segment("residential", "residential", 13, 300, 0.1, 13.41),
    "road": Segment("road", "road", 13, 300, 0.1, 18.27),
}


def offsets(count: int = 18, step_s: int = 10, first_s: int = 0) -> tuple[int, ...]:
    """The study's start offsets: first_s + i · step_s for i = 0 … count − 1 (the study's
    start at 0; `first_s` samples the drive from a later second)."""
    if not (isinstance(count, int) and count >= 1):
        raise CaseError(f"offsets = {count!r}: must be a whole number, at least 1")
    if not (isinstance(step_s, int) and step_s >= 0):
        raise CaseError(f"offset step = {step_s!r}: must be a whole number of seconds, at least 0")
    if not (isinstance(first_s, int) and first_s >= 0):
        raise CaseError(f"first offset = {first_s!r}: must be a whole number of seconds, "
                        "at least 0")
    return tuple(first_s + i * step_s for i in range(count))


def scaled(table: ChannelTable, factor: float) -> ChannelTable:
    """Every capacity × `factor`."""
    if not (math.isfinite(factor) and factor > 0):
        raise CaseError(f"scale = {factor}: must be a positive number")
    return replace(table, capacity_mbps=tuple(tuple(c * factor for c in row)
                                              for row in table.capacity_mbps))


def mean_best(table: ChannelTable) -> float:
    """The mean over the seconds of the best channel's capacity, Mbit/s."""
    best = [max(row[t] for row in table.capacity_mbps) for t in range(table.seconds)]
    return sum(best) / len(best)


def segment_table(segment: Segment) -> tuple[ChannelTable, float]:
    """The segment's channel table, calibrated, and the scale factor applied."""
    from . import drive

    analysis = drive.analyse(drive.generate(segment.preset, seed=segment.seed,
                                            duration_s=segment.duration_s), load=segment.load)
    table = ChannelTable.from_analysis(analysis)
    factor = segment.target_sp_mbps / mean_best(table)
    return scaled(table, factor), factor


STUDY_CURVE_RANGE_MBPS = 55.547
"""The capacities the study's delay curve was applied to: its capacity model's cap (10 MHz ×
5.5547 bit/s/Hz; multi-operator reference §2–3). The curve goes through (50 Mbit/s, 20 ms) and
(200 Mbit/s, 100 ms) and is held at 100 ms one way above 200 Mbit/s."""
NR_DELAY_MS = 11.85
"""The `nr` curve's one-way delay: half the median first-hop RTT of 5G mmWave in 5Gophers'
ping-trace-13 (23.7 ms over 60 probes, min 19.1; its 4G trace: 27.8 ms). The data give no
capacity → delay relation, so the curve is this constant at every capacity."""
DELAY_CURVES: dict[str, dict[str, Any] | None] = {
    "lte": None,
    "nr": {"form": "constant", "constant_ms": NR_DELAY_MS},
}
"""Named capacity → delay curves: `lte` is the study's (the default), `nr` a constant."""


def delay_curve(name: str) -> dict[str, Any] | None:
    """A named curve (`lte`, `nr`) or a TOML file of the curve's fields (`form` = exp2pt,
    power2pt or constant; `c1_mbps`, `d1_ms`, `c2_mbps`, `d2_ms`, `constant_ms`, `hold_above`;
    docs/multi-operator.md): the `delay` of `Experiment`, None for the study's."""
    import tomllib

    if name in DELAY_CURVES:
        curve = DELAY_CURVES[name]
        return None if curve is None else dict(curve)
    path = Path(name)
    if path.suffix != ".toml":
        raise CaseError(f"delay curve {name!r}: give lte, nr or a .toml file of the curve's "
                        "fields (form, c1_mbps, d1_ms, c2_mbps, d2_ms, constant_ms, hold_above)")
    try:
        return tomllib.loads(path.read_text())
    except OSError as exc:
        raise CaseError(f"delay curve {name}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(f"delay curve {name}: {exc}") from None


def curve_range_mbps(delay: Mapping[str, Any] | None) -> float | None:
    """The largest capacity the curve `delay` speaks for: the study's capacities for its curve,
    the larger point of a two-point curve given otherwise; None for a constant (every
    capacity)."""
    if delay is None:
        return STUDY_CURVE_RANGE_MBPS
    if delay.get("form") == "constant":
        return None
    return float(max(delay.get("c1_mbps", 50.0), delay.get("c2_mbps", 200.0)))


def capacity_warnings(table: ChannelTable, name: str, delay: Mapping[str, Any] | None,
                      queue: str) -> list[str]:
    """One line when the table's capacities leave the delay curve's range: the trace, the
    capacity seen, the range and what to give instead."""
    top = curve_range_mbps(delay)
    seen = [c for row in table.capacity_mbps for c in row if c > 0]
    if top is None or not seen or max(seen) <= top:
        return []
    above = sum(c > top for c in seen) / len(seen)
    curve = ("the study's LTE curve, held at 100 ms one way above 200 Mbit/s" if delay is None
             else "the given curve's points")
    return [f"{name}: capacities up to {max(seen):.1f} Mbit/s ({above:.0%} of the "
            f"channel-seconds above {top:g}) leave the delay curve's range, 0–{top:g} Mbit/s "
            f"({curve}), as are queues of {queue}; give the links a delay and queue that fit, "
            f"e.g. --delay-curve nr ({NR_DELAY_MS:g} ms one way) or --delay 10ms, and "
            "--queue 50ms"]


@dataclass(frozen=True)
class Experiment:
    """Stacks × cases × start offsets over one channel table."""

    name: str
    table: ChannelTable
    cases: tuple[str, ...] = CASES
    stacks: tuple[str, ...] = tuple(STACKS)
    offsets_s: tuple[int, ...] = offsets()
    size_bytes: int = DEFAULT_SIZE_BYTES
    horizon_s: int = DEFAULT_HORIZON_S
    queue_packets: int = 100
    seed: int = 1
    handover: Mapping[str, Any] = field(default_factory=dict)
    delay: Mapping[str, Any] | None = None
    testbed: Testbed = TESTBEDS["ideal"]
    """What the emulation does to the links (`multiconn.testbeds`); `ideal` by default."""
    scale: float = 1.0
    """The factor the table's capacities were scaled by (reported, already applied)."""
    queue: str | None = None
    """Each access link's queue (`100packets`, `50ms`, `1.5BDP`: `cases.access_queue_limit`);
    None: `queue_packets` packets."""
    source: str | None = None
    """What the table was read from, for warnings (default: the experiment's name)."""

    def queue_text(self) -> str:
        """The access queues as given (`100 packets` by default)."""
        return self.queue if self.queue is not None else f"{self.queue_packets} packets"

    def delay_text(self) -> str:
        """The capacity → delay curve, in words."""
        if self.delay is None:
            return "lte (the study's curve: 20 ms at 50 Mbit/s, 100 ms at 200 Mbit/s and above)"
        if self.delay == DELAY_CURVES["nr"]:
            return f"nr ({NR_DELAY_MS:g} ms one way at every capacity)"
        if self.delay.get("form") == "constant":
            return f"{self.delay.get('constant_ms', 20)} ms one way at every capacity"
        return ", ".join(f"{k} = {v}" for k, v in self.delay.items())

    def warnings(self) -> list[str]:
        """What may make the runs unlike the trace's network (`capacity_warnings`)."""
        return capacity_warnings(self.table, self.source or self.name, self.delay,
                                 self.queue_text())

    @classmethod
    def for_segment(cls, segment: str, **options: Any) -> Experiment:
        """The experiment over a named segment (`residential`, `road`)."""
        if segment not in SEGMENTS:
            raise CaseError(f"segment = {segment!r}: unknown; the segments are "
                            f"{', '.join(SEGMENTS)}")
        table, factor = segment_table(SEGMENTS[segment])
        return cls(name=segment, table=table, scale=factor, **options)

    def check(self) -> None:
        for case in self.cases:
            if case not in CASES:
                raise CaseError(f"case = {case!r}: unknown; the cases are {', '.join(CASES)}")
        for stack in self.stacks:
            if stack not in STACKS:
                raise CaseError(f"stack = {stack!r}: unknown; the stacks are "
                                f"{', '.join(STACKS)}")
        if not self.offsets_s:
            raise CaseError("offsets: at least one start offset is needed")
        if self.queue is not None:
            from .cases import parse_queue

            parse_queue(self.queue)


@dataclass(frozen=True)
class _Planned:
    stack: str
    case: str
    offset_s: int
    folder: Path
    mp_capacity: list[float]
    sp_capacity: list[float]
    timeline: Any


def _plan(experiment: Experiment, out: Path) -> list[_Planned]:
    planned = []
    for stack in experiment.stacks:
        for case in experiment.cases:
            for offset in experiment.offsets_s:
                folder = out / "scenarios" / f"{stack}-{case}-o{offset}"
                made = write_scenario(experiment.table, case, folder, stack=stack,
                                      offset_s=offset, size_bytes=experiment.size_bytes,
                                      horizon_s=experiment.horizon_s,
                                      queue_packets=experiment.queue_packets,
                                      seed=experiment.seed, delay=experiment.delay,
                                      handover=experiment.handover,
                                      testbed=experiment.testbed, queue=experiment.queue)
                planned.append(_Planned(stack, case, offset, folder,
                                        made.timeline.mp_capacity_mbps,
                                        made.timeline.sp_capacity_mbps, made.timeline))
    return planned


def run(experiment: Experiment, out: str | Path, jobs: int | None = None,
        progress: bool = False) -> pd.DataFrame:
    """Writes every run's scenario under `out/scenarios/`, runs them on `jobs` local
    processes (default: every core) and returns one row per run (also written to
    `out/runs.csv`): stack, case, offset_s, completed, completion_s, goodput_mbps,
    mp_capacity_mbps, sp_capacity_mbps, handovers, error."""
    import pandas as pd

    from .sweep.backends import default_jobs, run_local
    from .sweep.plan import RunTask
    from .sweep.progress import SweepProgress

    experiment.check()
    out = Path(out)
    planned = _plan(experiment, out)
    tasks = []
    for i, p in enumerate(planned):
        path = p.folder / "scenario.toml"
        tasks.append(RunTask(run_key=str(i), experiment=experiment.name, point=i, rep=0,
                             seed=experiment.seed, scenario_text=path.read_text(),
                             origin=str(path), base_dir=str(p.folder), overrides=(),
                             keep_timeseries=False))
    summaries: dict[int, Any] = {}
    with SweepProgress(f"{experiment.name} downloads", len(tasks), progress) as bar:
        for outcome in run_local(tasks, jobs or default_jobs()):
            summaries[int(outcome.run_key)] = (json.loads(outcome.summary_json) if outcome.ok
                                               else outcome.error)
            bar.advance(outcome.ok)
    rows = []
    for i, p in enumerate(planned):
        summary = summaries[i]
        row: dict[str, Any] = {"stack": p.stack, "case": p.case, "offset_s": p.offset_s}
        if isinstance(summary, str):
            rows.append({**row, "completed": False, "error": summary})
            continue
        flow = summary["flows"][0]
        done = flow.get("completion_s")
        until = done if done is not None else float(experiment.horizon_s)
        row.update(completed=done is not None, completion_s=done,
                   goodput_mbps=(8 * experiment.size_bytes / done / 1e6 if done else None),
                   mp_capacity_mbps=mean_over(p.mp_capacity, until),
                   sp_capacity_mbps=mean_over(p.sp_capacity, until),
                   handovers=slot_changes(p.timeline, until), error=None)
        rows.append(row)
    runs = pd.DataFrame(rows, columns=["stack", "case", "offset_s", "completed", "completion_s",
                                       "goodput_mbps", "mp_capacity_mbps", "sp_capacity_mbps",
                                       "handovers", "error"])
    out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(out / "runs.csv", index=False, float_format="%.6g")
    return runs


def _mean_sd(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    mean = statistics.fmean(values)
    return mean, (statistics.stdev(values) if len(values) > 1 else 0.0)


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """The study's table layout: one row per (stack, case) — the picoquic controllers case by
    case, then MPTCP — with the mean and sample SD (n − 1) of every metric over the completed
    runs, their count and the incomplete ones."""
    import pandas as pd

    rows = []
    stacks = [s for s in STACKS if s in set(runs["stack"])]
    quic = [s for s in stacks if s != "mptcp"]
    order = [(s, c) for c in CASES for s in quic] + [("mptcp", c) for c in CASES
                                                     if "mptcp" in stacks]
    for stack, case in order:
        mine = runs[(runs["stack"] == stack) & (runs["case"] == case)]
        if mine.empty:
            continue
        done = mine[mine["completed"] == True]  # noqa: E712 (pandas)
        row: dict[str, Any] = {"stack": stack, "case": case, "runs": len(mine),
                               "incomplete": len(mine) - len(done)}
        for metric in (*METRICS, "handovers"):
            mean, sd = _mean_sd([float(x) for x in done[metric].tolist()])
            row[metric] = mean
            row[f"{metric.rsplit('_', 1)[0]}_sd"] = sd  # goodput_sd, ..., handovers_sd
        rows.append(row)
    return pd.DataFrame(rows)


def study_table(segment: str) -> pd.DataFrame:
    """The study's Table 4 (`residential`) or 5 (`road`)."""
    import pandas as pd

    table = pd.read_csv(STUDY_FILE, dtype={"case": str})
    if segment not in set(table["segment"]):
        raise CaseError(f"segment = {segment!r}: the study has residential and road")
    return table[table["segment"] == segment].drop(columns=["segment"]).reset_index(drop=True)


# -- the study's findings (reference §4.7) --------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One of the study's findings and whether a table shows it."""

    key: str
    text: str
    holds: bool | None
    """None when the table lacks the rows the finding needs."""
    detail: str


def _value(table: pd.DataFrame, stack: str, case: str, metric: str = "goodput_mbps") -> float | None:
    row = table[(table["stack"] == stack) & (table["case"] == case)]
    if row.empty or row[metric].isna().all():
        return None
    return float(row[metric].iloc[0])


def _all(pairs: Iterable[tuple[str, float | None, float | None]],
         test: Any) -> tuple[bool | None, str]:
    shown, verdicts = [], []
    for label, a, b in pairs:
        if a is None or b is None:
            continue
        verdicts.append(bool(test(a, b)))
        shown.append(f"{label} {a:.2f} vs {b:.2f}")
    if not verdicts:
        return None, "no rows"
    return all(verdicts), "; ".join(shown)


def findings(table: pd.DataFrame) -> list[Finding]:
    """The study's findings (reference §4.7, items 1, 2, 4, 6 and 7) checked on `table` (ours
    or the study's, in the layout `summarise` gives)."""
    out = []
    quic = [s for s in PICOQUIC if s in set(table["stack"])]
    core = [s for s in ("bbr", "cubic") if s in quic]
    holds, detail = _all(((s, _value(table, s, "2"), _value(table, s, "sp")) for s in core),
                         lambda a, b: a >= b)
    out.append(Finding("case2_ge_sp", "bbr and cubic: case 2 goodput ≥ sp", holds, detail))
    holds, detail = _all(((s, _value(table, s, "2"), _value(table, s, "1")) for s in core),
                         lambda a, b: a > b)
    out.append(Finding("case2_gt_case1", "bbr and cubic: case 2 goodput > case 1", holds, detail))
    holds, detail = _all(((s, _value(table, s, "1"), _value(table, s, "sp")) for s in quic),
                         lambda a, b: a < b)
    out.append(Finding("case1_lt_sp", "every picoquic controller: case 1 goodput < sp", holds,
                       detail))
    holds, detail = _all(((s, _value(table, s, "4"), _value(table, s, "3")) for s in core),
                         lambda a, b: a <= b)
    out.append(Finding("case4_le_case3", "bbr and cubic: case 4 goodput ≤ case 3", holds, detail))
    holds, detail = _all(((f"{s} case {c}", _value(table, s, c),
                           _value(table, s, c, "mp_capacity_mbps"))
                          for s in [*quic, "mptcp"] for c in ("2", "3", "4")),
                         lambda a, b: a < b)
    out.append(Finding("below_mp_capacity", "cases 2–4: goodput < MP capacity", holds, detail))
    holds, detail = _all(((f"{s} case {c}", _value(table, s, c), _value(table, "mptcp", c))
                          for s in quic for c in ("2", "3", "4")),
                         lambda a, b: a > b)
    out.append(Finding("quic_beats_mptcp", "cases 2–4: every picoquic controller ahead of MPTCP",
                       holds, detail))
    return out
