"""Synthetic, correlated one-way-delay (OWD) series that look like LTE uplink measurements.

Seed 004 (Mogensen & Markmøller) replays drive-test OWD traces of Danish LTE operators on
each path of its variable-delay test; those traces are not public. This module generates
stand-ins with the same ingredients — a delay floor, a skewed and slowly varying random part,
and rare long excursions (handovers, scheduling stalls) — and writes them in the format the
link delay model reads: a CSV file with the header `time_s,delay_ms` (see
`crates/link/src/delay.rs`), used in a scenario as
`delay = { model = "series", file = "owd.csv" }` (linear interpolation between points).

The model, sampled every `step` for `duration` (points at 0, step, 2·step, ... ≤ duration):

    delay(t) = base + X(t) + S(t)

* `X` is log-normal with mean `mean_ms` and coefficient of variation `cv`, made from a
  stationary Gaussian AR(1) process `Z` through `X = exp(mu + sigma·Z)` (a Gaussian copula, so
  the marginal is exactly log-normal). The AR coefficient of `Z` is chosen so that the lag-one
  autocorrelation of `X` itself is `exp(-step / correlation)`; at longer lags the correlation
  of `X` decays slightly faster than `exp(-lag / correlation)` when `cv` is large.
  `correlation_ms = 0` gives independent samples.
* `S` is a spike process: a two-state (good/bad) Markov chain, Gilbert–Elliott style, on the
  sampling grid. Spikes start at `spike_rate` per second of series on average, last a
  geometrically distributed number of steps with mean `spike_duration_ms`, and add during the
  whole spike one extra delay drawn per spike from a gamma distribution with mean
  `spike_mean_ms` and coefficient of variation 0.5 (`SPIKE_CV`): a handover interruption of
  "typically 40 to 60 ms, sometimes longer" is a spike of that size.

The long-run mean of the series is `base + mean + spike_rate · spike_duration · spike_mean`.

Presets (`PRESETS`; without a preset the `lte-moderate` values are the defaults). They are
plausible values for LTE uplink OWD from a moving car to a nearby server, chosen from ranges
commonly reported in the literature, not fitted to any data set and not the seed's traces:

* the uplink grant cycle (scheduling request, grant, transmission, HARQ) puts a floor of
  roughly 10–25 ms under LTE uplink OWD, and medians of a few tens of ms are typical in good
  coverage, with heavier right tails towards the cell edge (HARQ/RLC retransmissions, load);
* seed 004 (§1.1.2, citing a Danish freeway drive test) reports handover interruptions
  "often between 40 ms to 60 ms, but can be even longer"; at motorway speed a handover every
  half minute to a minute is common, and stalls of hundreds of ms occur in poor coverage;
* delay varies on the scale of channel and load changes, i.e. 100 ms to a second.

Over an hour they give medians of about 26, 37 and 49 ms, 99.9th percentiles of about 60, 130
and 310 ms, and P(delay < 100 ms) of 99.99 %, 99.5 % and 93 % (docs/messages-and-owd.md).

| preset        | base | mean | cv  | correlation | spike rate | spike mean | spike duration |
|---------------|------|------|-----|-------------|------------|------------|----------------|
| lte-good      | 15ms | 12ms | 0.4 | 100 ms      | 0.02 /s    | 40 ms      | 60 ms          |
| lte-moderate  | 20ms | 20ms | 0.6 | 200 ms      | 0.05 /s    | 60 ms      | 100 ms         |
| lte-poor      | 25ms | 30ms | 0.8 | 500 ms      | 0.1 /s     | 120 ms     | 250 ms         |
| v2x-dk-uplink | 15ms | 12ms | 0.4 | 100 ms      | 0.0029 /s  | 1030 ms    | 1030 ms        |

`v2x-dk-uplink` is not a plausible-value preset: its spikes come from seed 004's own numbers
for its same-operator pair A1 & A2 (the traces of its Fig. 36/37), written down before any run
with it and not fitted to any result:

* the seed's variable-delay test had no loss, and SRTTF sends each message on one path, so
  SRTTF's one-way delays are those of the paths (A1 and A2: the same operator; if anything
  the paths spike more, since SRTTF leaves a path once its smoothed RTT shows it): Table 5 gives
  SRTTF 99.7 % of messages within 100 ms, Table 6 its 99.9th percentile, 1200 ms. So 0.3 % of
  the time a path's delay is above 100 ms and 0.1 % above 1200 ms;
* the rest of the time the delay is that of `lte-good` (its body, the same four values, and
  not its spikes): of the three presets the only one whose body stays below 100 ms (its 99.9th
  percentile is about 52 ms), which leaves the 0.3 % to the spikes, and whose two independent
  bodies give a best-of-two 99.9th percentile below the seed's 50 ms for SRE (Table 6);
* a spike adds one gamma draw (CV 0.5); for a third of the time in spikes to be above 1200 ms
  less the body's mean of 27 ms, its mean is 1173 ms over the gamma's 2/3 quantile (1.1384
  means): 1030 ms;
* the seed gives no spike length: a stall delays what is sent during it by up to its length,
  so a spike lasts as long as its mean extra delay, 1030 ms (the one assumption);
* 0.3 % of the time in spikes of 1.03 s: 0.0029 spikes per second, about 3 in the
  10 000 samples (1000 s at the seed's 100 ms interval; §7.2.2, §8.2.4) of its traces.

Determinism: the same parameters and seed give the same series and a byte-identical file
(numpy `Generator(PCG64)`; the AR process, the spike chain and the spike sizes each draw
from their own child stream of `SeedSequence(seed)`, so changing the spike parameters leaves
`X` unchanged). Times are written as exact multiples of the step (whole microseconds), delays
rounded to the microsecond.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _native

if TYPE_CHECKING:  # numpy and pandas load when a series is made: the CLI starts quickly
    import numpy as np
    import pandas as pd

HEADER = "time_s,delay_ms"
"""The header of a delay-series CSV file, as the simulator's delay model reads it."""

SPIKE_CV = 0.5
"""Coefficient of variation of the extra delay of one spike (gamma distributed, shape 4)."""

MAX_POINTS = 10_000_000
"""The most points one series may have (duration / step + 1)."""

DURATION_UNITS = dict(_native.DURATION_UNITS)
"""Units accepted for --duration and --step, with their length in seconds: the simulator's
(a scenario's durations), so `ns` too; the series' grid is whole microseconds."""

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)(?:[eE]([-+]?\d+))?\s*([^\W\d_]+)\s*$")


class OwdSeriesError(ValueError):
    """A parameter of the generator that cannot be used: `field` names it, `message` says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    @property
    def option(self) -> str:
        """The command-line option of the field (`--spike-rate` for `spike_rate`)."""
        return OPTIONS.get(self.field, self.field)


@dataclass(frozen=True)
class OwdSeriesParams:
    """Parameters of a generated series (see the module documentation for the model)."""

    duration_s: float = 60.0
    """Length of the series; points at 0, step, ..., up to and including duration."""
    step_s: float = 0.010
    """Sampling interval; a whole number of microseconds."""
    base_ms: float = 20.0
    """Constant floor of the delay."""
    mean_ms: float = 20.0
    """Mean of the log-normal part (outside spikes); 0 turns it off."""
    cv: float = 0.6
    """Coefficient of variation (std / mean) of the log-normal part."""
    correlation_ms: float = 200.0
    """Correlation time: the lag-one autocorrelation is exp(-step / correlation); 0: none."""
    spike_rate: float = 0.05
    """Mean number of spikes starting per second of series; 0 turns spikes off."""
    spike_mean_ms: float = 60.0
    """Mean extra delay during a spike (one gamma draw per spike, CV 0.5)."""
    spike_duration_ms: float = 100.0
    """Mean length of a spike (geometric on the grid); at least one step."""

    @property
    def points(self) -> int:
        return _step_count(self.duration_s, self.step_s) + 1


OPTIONS = {
    "duration_s": "--duration", "step_s": "--step", "base_ms": "--base-ms",
    "mean_ms": "--mean-ms", "cv": "--cv", "correlation_ms": "--correlation-ms",
    "spike_rate": "--spike-rate", "spike_mean_ms": "--spike-mean-ms",
    "spike_duration_ms": "--spike-duration-ms", "seed": "--seed", "preset": "--preset",
}
"""Command-line option of each parameter."""

PRESETS: dict[str, dict[str, float]] = {
    "lte-good": dict(base_ms=15.0, mean_ms=12.0, cv=0.4, correlation_ms=100.0,
                     spike_rate=0.02, spike_mean_ms=40.0, spike_duration_ms=60.0),
    "lte-moderate": dict(base_ms=20.0, mean_ms=20.0, cv=0.6, correlation_ms=200.0,
                         spike_rate=0.05, spike_mean_ms=60.0, spike_duration_ms=100.0),
    "lte-poor": dict(base_ms=25.0, mean_ms=30.0, cv=0.8, correlation_ms=500.0,
                     spike_rate=0.1, spike_mean_ms=120.0, spike_duration_ms=250.0),
    # Seed 004's A1 & A2 (Tables 5 and 6, SRTTF): see the module documentation.
    "v2x-dk-uplink": dict(base_ms=15.0, mean_ms=12.0, cv=0.4, correlation_ms=100.0,
                          spike_rate=0.0029, spike_mean_ms=1030.0, spike_duration_ms=1030.0),
}
"""Named parameter sets (see the module documentation for what they are based on)."""

DEFAULT_PRESET = "lte-moderate"


def parse_duration(text: str) -> float:
    """Seconds of a duration with a unit ("60 s", "10ms", "1.5 min"); a bare number is refused."""
    match = _DURATION.match(text)
    unit = match.group(3) if match else None
    if match is None or unit not in DURATION_UNITS:
        raise ValueError(f"expected a duration with a unit such as \"60 s\" or \"10 ms\" "
                         f"(units: {', '.join(DURATION_UNITS)}), got '{text}'")
    number = float(match.group(1) + (f"e{match.group(2)}" if match.group(2) else ""))
    return number * DURATION_UNITS[unit]


def make_params(preset: str | None = None, **values: Any) -> OwdSeriesParams:
    """Parameters from a preset (default `lte-moderate`) with `values` (fields, None = keep)
    replacing its values; checked, raising `OwdSeriesError` naming the offending field."""
    name = DEFAULT_PRESET if preset is None else preset
    if name not in PRESETS:
        raise OwdSeriesError("preset", f"unknown preset '{name}' (presets: "
                                       f"{', '.join(PRESETS)})")
    known = {f.name for f in fields(OwdSeriesParams)}
    for key in values:
        if key not in known:
            raise OwdSeriesError(key, f"not a parameter (parameters: {', '.join(sorted(known))})")
    chosen = {k: v for k, v in values.items() if v is not None}
    params = replace(OwdSeriesParams(), **{**PRESETS[name], **chosen})
    check(params)
    return params


def _finite(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise OwdSeriesError(field, f"must be a finite number, got {value!r}")
    return float(value)


def _step_count(duration_s: float, step_s: float) -> int:
    """Whole steps in the duration (a step count within 1e-9 of an integer counts as it)."""
    ratio = duration_s / step_s
    return int(math.floor(ratio + 1e-9))


def _step_us(step_s: float) -> int:
    return int(round(step_s * 1e6))


def check(params: OwdSeriesParams) -> None:
    """Raises `OwdSeriesError` (naming the field and what is allowed) for unusable values."""
    values = {f.name: _finite(f.name, getattr(params, f.name)) for f in fields(params)}
    for name, value in values.items():
        if value < 0:
            raise OwdSeriesError(name, f"must be zero or more, got {value:g}")
    duration, step = values["duration_s"], values["step_s"]
    if duration <= 0:
        raise OwdSeriesError("duration_s", "must be above zero")
    if step <= 0:
        raise OwdSeriesError("step_s", "must be above zero")
    if _step_us(step) < 1 or abs(step * 1e6 - _step_us(step)) > 1e-6:
        raise OwdSeriesError("step_s", f"must be a whole number of microseconds, got "
                                       f"{step * 1e3:g} ms")
    if step > duration:
        raise OwdSeriesError("step_s", f"must not exceed the duration ({duration:g} s), got "
                                       f"{step:g} s")
    if _step_count(duration, step) + 1 > MAX_POINTS:
        raise OwdSeriesError("step_s", f"{duration:g} s every {step * 1e3:g} ms would be more "
                                       f"than {MAX_POINTS} points; use a longer step")
    rate, length_s = values["spike_rate"], values["spike_duration_ms"] / 1e3
    if rate > 0:
        if length_s < step:
            raise OwdSeriesError("spike_duration_ms", f"must be at least one step "
                                                      f"({step * 1e3:g} ms) when spikes are on, "
                                                      f"got {length_s * 1e3:g} ms")
        if rate * (length_s + step) >= 1:
            most = 1 / (length_s + step)
            raise OwdSeriesError(
                "spike_rate", f"{rate:g} spikes per second of {length_s * 1e3:g} ms each (plus "
                f"a {step * 1e3:g} ms step between two) do not fit into a second; use less "
                f"than {most:.4g} or shorter spikes")


def _ar_coefficient(rho: float, sigma2: float) -> float:
    """AR(1) coefficient of the Gaussian Z such that exp(sigma·Z) has lag-one correlation rho."""
    if rho <= 0 or sigma2 == 0:
        return rho
    return math.log1p(rho * math.expm1(sigma2)) / sigma2


def _lognormal_part(params: OwdSeriesParams, n: int, rng: np.random.Generator) -> np.ndarray:
    import numpy as np

    if params.mean_ms == 0:
        return np.zeros(n)
    sigma2 = math.log1p(params.cv**2)
    sigma = math.sqrt(sigma2)
    mu = math.log(params.mean_ms) - sigma2 / 2
    rho = math.exp(-params.step_s * 1e3 / params.correlation_ms) if params.correlation_ms else 0.0
    phi = _ar_coefficient(rho, sigma2)
    innovation = math.sqrt(max(0.0, 1.0 - phi * phi))
    noise = rng.standard_normal(n).tolist()
    z = np.empty(n)
    state = noise[0]  # stationary start: Z_0 ~ N(0, 1)
    z[0] = state
    for k in range(1, n):
        state = phi * state + innovation * noise[k]
        z[k] = state
    return np.exp(mu + sigma * z)


def _spike_part(params: OwdSeriesParams, n: int, chain: np.random.Generator,
                sizes: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Extra delay (ms) and the in-spike flag per point."""
    import numpy as np

    if params.spike_rate == 0:
        return np.zeros(n), np.zeros(n, dtype=bool)
    step = params.step_s
    leave = min(1.0, step / (params.spike_duration_ms / 1e3))   # bad -> good, per step
    onset = params.spike_rate * step                            # spike starts per step
    enter = onset * leave / (leave - onset)                     # good -> bad, per step
    draws = chain.random(n).tolist()
    bad = np.empty(n, dtype=bool)
    state = draws[0] < enter / (enter + leave)                  # stationary start
    bad[0] = state
    for k in range(1, n):
        state = draws[k] >= leave if state else draws[k] < enter
        bad[k] = state
    starts = bad & ~np.concatenate(([False], bad[:-1]))
    spike_index = np.cumsum(starts) - 1
    count = int(starts.sum())
    extra = np.zeros(n)
    if count and params.spike_mean_ms > 0:
        shape = 1 / SPIKE_CV**2
        magnitude = sizes.gamma(shape, params.spike_mean_ms / shape, count)
        extra[bad] = magnitude[spike_index[bad]]
    return extra, bad


def _generator(seq: np.random.SeedSequence) -> np.random.Generator:
    import numpy as np

    return np.random.Generator(np.random.PCG64(seq))


def generate(params: OwdSeriesParams, seed: int = 1) -> pd.DataFrame:
    """The series as a DataFrame: `time_s`, `delay_ms` (as written, rounded to the
    microsecond) and `spike` (True inside a spike; not written to the CSV file)."""
    import numpy as np
    import pandas as pd

    check(params)
    if not (isinstance(seed, int) and 0 <= seed < 2**64):
        raise OwdSeriesError("seed", f"must be a whole number between 0 and 2^64-1, got {seed!r}")
    n = params.points
    ar_seq, chain_seq, size_seq = np.random.SeedSequence(seed).spawn(3)
    variable = _lognormal_part(params, n, _generator(ar_seq))
    extra, spike = _spike_part(params, n, _generator(chain_seq), _generator(size_seq))
    delay = np.round(params.base_ms + variable + extra, 3)
    time_us = np.arange(n, dtype=np.int64) * _step_us(params.step_s)
    return pd.DataFrame({"time_s": time_us / 1e6, "delay_ms": delay, "spike": spike})


def _time_text(us: int) -> str:
    seconds, fraction = divmod(us, 1_000_000)
    return f"{seconds}.{fraction:06d}".rstrip("0").rstrip(".")


def to_csv_text(series: pd.DataFrame) -> str:
    """The CSV text of a generated series: header `time_s,delay_ms`, one row per point."""
    import numpy as np

    time_us = np.round(series["time_s"].to_numpy() * 1e6).astype(np.int64).tolist()
    delays = series["delay_ms"].to_numpy().tolist()
    rows = [f"{_time_text(t)},{d:.3f}" for t, d in zip(time_us, delays)]
    return "\n".join([HEADER, *rows]) + "\n"


def write_series(path: str | Path, params: OwdSeriesParams, seed: int = 1) -> pd.DataFrame:
    """Generates the series and writes it as CSV to `path`; returns the series."""
    series = generate(params, seed)
    Path(path).write_bytes(to_csv_text(series).encode("ascii"))
    return series


def describe(series: pd.DataFrame) -> dict[str, float]:
    """Summary statistics of a series: points, duration, mean, median, 99th and 99.9th
    percentile, maximum of the delay (ms), P(delay < 100 ms), spikes and time in spikes."""
    import numpy as np

    delay = series["delay_ms"].to_numpy()
    spike = series["spike"].to_numpy()
    starts = int((spike & ~np.concatenate(([False], spike[:-1]))).sum())
    return {
        "points": float(len(delay)),
        "duration_s": float(series["time_s"].iloc[-1]),
        "mean_ms": float(delay.mean()),
        "median_ms": float(np.median(delay)),
        "p99_ms": float(np.quantile(delay, 0.99, method="inverted_cdf")),
        "p999_ms": float(np.quantile(delay, 0.999, method="inverted_cdf")),
        "max_ms": float(delay.max()),
        "below_100ms": float((delay < 100).mean()),
        "spikes": float(starts),
        "spike_fraction": float(spike.mean()),
    }


def params_dict(params: OwdSeriesParams) -> dict[str, float]:
    """The parameters as a plain dict (for logs and reports)."""
    return asdict(params)
