"""Message-level metrics: one-way delay, reliability, OWD percentiles, CCDFs, efficiency.

These follow the definitions of seed 004 (Mogensen & Markmøller, MPQUIC with a selective
redundant scheduler for V2X messages, §1.2 and §8):

* one-way delay of a message: `OWD = time received − time sent`, both taken at the
  application (the receiver's arrival of the whole message minus the sender's hand-over);
* reliability: `Pr(OWD < deadline)`, e.g. 100 ms for periodic V2X messages; a message that
  never arrives counts as a failure (its OWD is +inf);
* "achievable OWD at 99.9 %": the 0.999 quantile of the OWD over all messages sent, lost ones
  included as +inf (so it is infinite once more than 0.1 % are lost);
* goodput = application bytes / duration, throughput = all bytes on the wire / duration, and
  bandwidth efficiency = goodput / throughput (the seed prints it ×100 as a percentage);
* the "ideal" reference: per message the smallest one-way delay over the paths at its send
  time — what a scheduler that always picked the best path, or sent on all of them, would get;
* OWD CCDF plots: P(OWD > x) on a logarithmic axis against x in ms (a log axis too, unless
  asked for a linear one), with the deadline marked and labelled.

Input is a table of messages, a pandas DataFrame or a pyarrow Table, with the columns

| column | type | meaning |
|---|---|---|
| `stream` | int | stream the message was sent on |
| `kind` | str | `"priority"` (deadline traffic) or `"background"` |
| `msg_id` | int | message number (unique within a stream) |
| `size` | int | application bytes of the message |
| `sent_s` | float | when the sender's application handed it over (s) |
| `received_s` | float | when the receiver's application had all of it (s); NaN: never |
| `path_owd_min_s` | float | optional: smallest path OWD at `sent_s` (s); NaN: no path delivered |
| `expired_s` | float | optional: when the sender abandoned a message that never arrived whole (its lifetime ran out or the next message superseded it, seed 004's C1); NaN otherwise |

Analysis only: nothing here imports the simulator, so it works on any table with these
columns (a simulator run, an emulator log, a measurement).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes

REQUIRED_COLUMNS = ("stream", "kind", "msg_id", "size", "sent_s", "received_s")
"""Columns every message table must have."""

IDEAL_COLUMN = "path_owd_min_s"
"""Optional column: per message the smallest one-way delay over the paths (s)."""

EXPIRED_COLUMN = "expired_s"
"""Optional column: when the sender abandoned the message (s); NaN if it did not."""

KIND_ORDER = ("priority", "background")
"""Order of the kinds in `summarise` (other kinds follow, sorted)."""


class MessagesError(ValueError):
    """A message table that cannot be used (a missing column, a message received before it
    was sent, ...); the message says which."""


def messages_frame(table: Any) -> pd.DataFrame:
    """The message table as a DataFrame, checked: the required columns exist, `sent_s` is
    finite, and no message is received before it was sent."""
    if isinstance(table, pd.DataFrame):
        df = table
    elif hasattr(table, "to_pandas") and hasattr(table, "column_names"):
        df = table.to_pandas()
    else:
        raise TypeError(f"expected a pandas DataFrame or a pyarrow Table of messages, got "
                        f"{type(table).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise MessagesError(f"the message table lacks the column(s) {', '.join(missing)} "
                            f"(required: {', '.join(REQUIRED_COLUMNS)})")
    sent = df["sent_s"].to_numpy(dtype=float)
    received = df["received_s"].to_numpy(dtype=float)
    if not np.isfinite(sent).all():
        row = int(np.flatnonzero(~np.isfinite(sent))[0])
        raise MessagesError(f"message {_describe(df, row)} has no finite sent_s "
                            f"({float(sent[row])})")
    early = received < sent  # NaN compares False: never received is fine
    if early.any():
        row = int(np.flatnonzero(early)[0])
        raise MessagesError(f"message {_describe(df, row)} is received at "
                            f"{float(received[row]):g} s, before it was sent at "
                            f"{float(sent[row]):g} s")
    if np.isinf(received).any():
        raise MessagesError("received_s must be a time or NaN (never received), not infinite")
    return df


def _describe(df: pd.DataFrame, row: int) -> str:
    def plain(value: Any) -> Any:
        return value.item() if isinstance(value, np.generic) else value

    return f"{plain(df['msg_id'].iloc[row])} of stream {plain(df['stream'].iloc[row])}"


def owd(df: Any) -> pd.Series:
    """One-way delay of every message in seconds, `received_s − sent_s` (seed 004: OWD =
    timeReceived − timeSent at the application), +inf for a message never received.
    Rounded to the nanosecond (the simulator's clock resolution), so that the rounding error
    of the subtraction cannot move a message across a deadline. Indexed like the table."""
    frame = messages_frame(df)
    delay = (frame["received_s"].astype(float) - frame["sent_s"].astype(float)).round(9)
    return delay.fillna(math.inf).rename("owd_s")


def _owd_array(df: Any) -> np.ndarray:
    delay = owd(df).to_numpy(dtype=float)
    if delay.size == 0:
        raise MessagesError("the message table is empty")
    return delay


def reliability(df: Any, deadline_s: float) -> float:
    """Reliability `Pr(OWD < deadline)` over all messages sent (seed 004, §1.2): the share of
    messages received strictly within `deadline_s` seconds; never-received messages count as
    failures."""
    deadline = _deadline(deadline_s)
    return float(np.mean(_owd_array(df) < deadline))


def _deadline(deadline_s: float) -> float:
    value = float(deadline_s)
    if not (math.isfinite(value) and value > 0):
        raise MessagesError(f"the deadline must be a finite number of seconds above zero, got "
                            f"{deadline_s!r}")
    return value


def owd_quantile(df: Any, q: float) -> float:
    """The `q` quantile of the OWD over all messages sent, in seconds: the smallest x such that
    at least a share `q` of the messages have OWD ≤ x (the inverse of the empirical CDF, no
    interpolation). Never-received messages are +inf, so the 0.999 quantile — seed 004's
    "achievable OWD at 99.9 %" — is infinite once more than 0.1 % of the messages are lost."""
    share = float(q)
    if not 0 <= share <= 1:
        raise MessagesError(f"the quantile must be between 0 and 1 (e.g. 0.999), got {q!r}")
    delay = np.sort(_owd_array(df))
    # ceil(q·n) with a guard against q·n landing just above a whole number (0.999·1000).
    rank = max(1, math.ceil(round(share * delay.size, 9)))
    return float(delay[rank - 1])


def ccdf(df: Any) -> tuple[np.ndarray, np.ndarray]:
    """The empirical complementary CDF of the OWD: `x` (seconds, the distinct finite OWDs in
    increasing order) and `p[i] = P(OWD > x[i])` over all messages sent. Lost messages are in
    every `P(OWD > x)`, so with losses the curve levels off at the loss ratio instead of
    reaching zero. Both arrays are empty when no message arrived."""
    delay = _owd_array(df)
    x, counts = np.unique(delay[np.isfinite(delay)], return_counts=True)
    at_or_below = np.cumsum(counts)
    p = (delay.size - at_or_below) / delay.size
    return x, p


def ideal(df: Any) -> pd.DataFrame:
    """The "ideal" reference of seed 004: the same messages, each received after the smallest
    one-way delay over the paths at its send time (`received_s = sent_s + path_owd_min_s`;
    NaN stays never received). Every metric of this module applies to the result."""
    frame = messages_frame(df)
    if IDEAL_COLUMN not in frame.columns:
        raise MessagesError(f"the ideal reference needs the column {IDEAL_COLUMN} (per message "
                            f"the smallest one-way delay over the paths)")
    best = frame[IDEAL_COLUMN].astype(float)
    if (best < 0).any() or np.isinf(best).any():
        raise MessagesError(f"{IDEAL_COLUMN} must be a delay ≥ 0 s or NaN")
    out = frame.copy()
    out["received_s"] = frame["sent_s"].astype(float) + best
    return out


def bandwidth_efficiency(goodput_bytes: float, throughput_bytes: float) -> float:
    """Bandwidth efficiency = goodput / throughput (seed 004, §1.2): the share of the bytes
    sent that are unique application data, between 0 and 1 (the seed multiplies by 100 and
    writes a percentage; e.g. 0.96 for its selective redundant scheduler, about 0.47 for the
    fully redundant one). Both may be totals or rates over the same duration; NaN when
    nothing was sent."""
    good, total = float(goodput_bytes), float(throughput_bytes)
    for name, value in (("goodput", good), ("throughput", total)):
        if not (math.isfinite(value) and value >= 0):
            raise MessagesError(f"{name} must be a finite number ≥ 0, got {value!r}")
    if total == 0:
        if good > 0:
            raise MessagesError("goodput is above zero but throughput is zero")
        return math.nan
    if good > total:
        raise MessagesError(f"goodput ({good:g}) exceeds throughput ({total:g}): throughput "
                            f"counts every byte sent, application bytes included")
    return good / total


def _kinds(frame: pd.DataFrame) -> list[str]:
    present = [str(k) for k in pd.unique(frame["kind"])]
    known = [k for k in KIND_ORDER if k in present]
    return known + sorted(k for k in present if k not in KIND_ORDER)


def summarise(df: Any, deadline_s: float, duration_s: float | None = None) -> dict[str, dict]:
    """Per kind of message (`priority`, `background`, others), a dict of:

    `messages`, `received`, `lost`, `expired` (abandoned by the sender, column `expired_s`;
    not counted in `lost`), `loss_ratio` (lost and expired), `reliability` (P(OWD < deadline), lost
    messages failing), `deadline_s`, `owd_mean_s`, `owd_median_s`, `owd_max_s` (over the
    messages received; NaN if none), `owd_p99_s`, `owd_p999_s` (over all messages, lost =
    +inf), `bytes_sent`, `bytes_received`; with `duration_s`, `goodput_mbps` (application
    bytes received × 8 / duration, seed 004's goodput); with the column `path_owd_min_s`,
    `ideal_reliability` and `ideal_owd_p999_s` (the same metrics for the ideal reference).
    """
    frame = messages_frame(df)
    deadline = _deadline(deadline_s)
    if duration_s is not None and not (math.isfinite(duration_s) and duration_s > 0):
        raise MessagesError(f"the duration must be a finite number of seconds above zero, got "
                            f"{duration_s!r}")
    reference = ideal(frame) if IDEAL_COLUMN in frame.columns else None
    result: dict[str, dict] = {}
    for kind in _kinds(frame):
        rows = frame["kind"].astype(str) == kind
        part = frame[rows]
        delay = owd(part).to_numpy(dtype=float)
        arrived = delay[np.isfinite(delay)]
        sizes = part["size"].to_numpy(dtype=float)
        received_bytes = float(sizes[np.isfinite(delay)].sum())
        expired = 0
        if EXPIRED_COLUMN in part.columns:
            expired = int((~np.isfinite(delay) & np.isfinite(part[EXPIRED_COLUMN].to_numpy(dtype=float))).sum())
        entry: dict[str, Any] = {
            "messages": int(delay.size),
            "received": int(arrived.size),
            "lost": int(delay.size - arrived.size) - expired,
            "expired": expired,
            "loss_ratio": (delay.size - arrived.size) / delay.size,
            "deadline_s": deadline,
            "reliability": reliability(part, deadline),
            "owd_mean_s": float(arrived.mean()) if arrived.size else math.nan,
            "owd_median_s": float(np.median(arrived)) if arrived.size else math.nan,
            "owd_max_s": float(arrived.max()) if arrived.size else math.nan,
            "owd_p99_s": owd_quantile(part, 0.99),
            "owd_p999_s": owd_quantile(part, 0.999),
            "bytes_sent": float(sizes.sum()),
            "bytes_received": received_bytes,
        }
        if duration_s is not None:
            entry["goodput_mbps"] = received_bytes * 8 / duration_s / 1e6
        if reference is not None:
            best = reference[rows]
            entry["ideal_reliability"] = reliability(best, deadline)
            entry["ideal_owd_p999_s"] = owd_quantile(best, 0.999)
        result[kind] = entry
    return result


def plot_ccdf(ax: Axes, curves: Mapping[str, Any], deadline_s: float | None = None, *,
              kind: str | None = None, ideal_from: Any = None, xscale: str = "log",
              xlim: tuple[float, float] | None = None) -> Axes:
    """Draws the OWD CCDF of each message table in `curves` (label → table) on `ax`, like
    seed 004's figures: x the one-way delay in ms, y P(OWD > x) on a logarithmic axis, a
    dotted vertical line at the deadline, labelled on the axis. `kind` keeps only messages of
    that kind (e.g. "priority"). `ideal_from` (a table with `path_owd_min_s`) adds the ideal
    reference as a dashed black line labelled "ideal". A curve with lost messages stays at
    its loss ratio up to the right edge instead of dropping to zero.

    The delay axis is logarithmic by default (`xscale = "log"`, ticks as plain numbers): a
    few late messages of seconds would otherwise squeeze the region around a deadline of
    tens of milliseconds into a pixel; `"linear"` draws it linearly. `xlim` (seconds, lo < hi)
    fixes the range drawn. Returns `ax`."""
    if xscale not in ("log", "linear"):
        raise MessagesError(f"the CCDF's x scale must be log or linear, got {xscale!r}")
    if xlim is not None and not (0 <= xlim[0] < xlim[1] and (xscale == "linear" or xlim[0] > 0)):
        raise MessagesError(f"the CCDF's x range must be lo < hi, lo above 0 on a log axis, "
                            f"got {xlim[0]:g} s to {xlim[1]:g} s")
    deadline = None if deadline_s is None else _deadline(deadline_s)
    tables = dict(curves)
    if ideal_from is not None:
        tables["ideal"] = ideal(ideal_from)
    points: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    lowest = 1.0
    for label, table in tables.items():
        frame = messages_frame(table)
        if kind is not None:
            frame = frame[frame["kind"].astype(str) == kind]
        if frame.empty:
            raise MessagesError(f"curve {label!r} has no messages"
                                + (f" of kind {kind!r}" if kind else ""))
        points[label] = ccdf(frame)
        positive = points[label][1][points[label][1] > 0]
        lowest = min(lowest, float(positive.min()) if positive.size else 1 / len(frame))
    right = max([float(x[-1]) for x, _ in points.values() if x.size]
                + ([deadline] if deadline is not None else []), default=0.0)
    # A log axis starts a little left of the smallest delay above zero (or the deadline).
    smallest = [float(x[x > 0][0]) for x, _ in points.values() if (x > 0).any()]
    left = min(smallest + ([deadline] if deadline is not None else []), default=1e-3) / 1.25
    if xscale == "log":
        right = max(right, left * 2.0)
    for label, (x, p) in points.items():
        is_ideal = ideal_from is not None and label == "ideal"
        style = {"color": "black", "linestyle": "--"} if is_ideal else {}
        if x.size == 0:  # nothing arrived: P(OWD > x) = 1 everywhere
            x, p = np.array([left if xscale == "log" else 0.0]), np.array([1.0])
        # Start at 1 just before the smallest OWD; a curve left above zero by lost messages
        # continues at its loss ratio to the right edge.
        xs, ps = np.r_[x[0], x], np.r_[1.0, p]
        if ps[-1] > 0 and right > xs[-1]:
            xs, ps = np.r_[xs, right], np.r_[ps, ps[-1]]
        if xscale == "log":
            xs = np.maximum(xs, left)  # a delay of 0 s has no place on a log axis
        ax.step(xs * 1e3, ps, where="post", label=label, **style)
    if deadline is not None:
        ax.axvline(deadline * 1e3, color="0.3", linestyle=":", linewidth=1.3,
                   label=f"deadline {deadline * 1e3:g} ms")
        ax.annotate(f"deadline {deadline * 1e3:g} ms", (deadline * 1e3, 1.0),
                    xycoords=("data", "axes fraction"), xytext=(3, -3),
                    textcoords="offset points", fontsize="small", color="0.3", va="top",
                    rotation=90)
    ax.set_yscale("log")
    ax.set_ylim(10 ** math.floor(math.log10(lowest)) / 2, 1.5)
    if xscale == "log":
        _log_delay_axis(ax, left * 1e3, right * 1.25e3)
    if xlim is not None:
        ax.set_xlim(xlim[0] * 1e3, xlim[1] * 1e3)
    ax.set_xlabel("one-way delay [ms]")
    ax.set_ylabel("P(OWD > x)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return ax


def _log_delay_axis(ax: Axes, left_ms: float, right_ms: float) -> None:
    """A log delay axis from `left_ms` to `right_ms`, ticked at 1, 2 and 5 of each decade and
    written as plain numbers (20, 50, 100 ms rather than 2×10¹)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_xlim(left_ms, right_ms)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
