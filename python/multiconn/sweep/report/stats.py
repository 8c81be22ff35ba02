"""Confidence intervals over repetitions: Student's t quantiles without SciPy.

A sweep point's repetitions are n independent values; the two-sided 95 % confidence interval
of their mean is mean ± t(0.975, n − 1) · s / √n, with s the sample standard deviation
(ddof = 1). The degrees of freedom are whole numbers, so the t distribution's CDF has a
closed form (Abramowitz & Stegun 26.7.3–4: a finite sum in θ = atan(t / √ν)), inverted here
by bisection to double precision: t(0.975, 4) = 2.7764, t(0.975, 1) = 12.706, and towards
the normal 1.96 as ν grows. Above `EXPANSION_DF` degrees of freedom the Cornish–Fisher
expansion around the normal quantile (A&S 26.7.5, error below 1e-8 there) replaces the sum's
ν/2 terms. Fewer than two values have no interval (NaN).
"""

from __future__ import annotations

import math
from statistics import NormalDist

CI_LEVEL = 0.95
"""The confidence level of the `ci95` spread."""
EXPANSION_DF = 300
"""From this many degrees of freedom on, quantiles come from the Cornish–Fisher expansion."""


def t_cdf(t: float, df: int) -> float:
    """P(T ≤ t) for Student's t with `df` (≥ 1, whole) degrees of freedom."""
    if df < 1 or int(df) != df:
        raise ValueError(f"degrees of freedom must be a whole number ≥ 1, got {df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    theta = math.atan(abs(t) / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    if df % 2 == 1:  # A(t|ν) = 2/π (θ + sin θ (cos θ + 2/3 cos³θ + … ))
        total, term = 0.0, math.cos(theta)
        for k in range(1, (df - 1) // 2 + 1):
            total += term
            term *= c2 * (2 * k) / (2 * k + 1)
        inside = 2.0 / math.pi * (theta + s * total)
    else:  # A(t|ν) = sin θ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + … )
        total, term = 0.0, 1.0
        for k in range(1, df // 2 + 1):
            total += term
            term *= c2 * (2 * k - 1) / (2 * k)
        inside = s * total
    inside = min(max(inside, 0.0), 1.0)
    return 0.5 + math.copysign(inside / 2.0, t)


def t_quantile(p: float, df: int) -> float:
    """The `p` quantile (0 < p < 1) of Student's t with `df` degrees of freedom."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df >= EXPANSION_DF:
        z = NormalDist().inv_cdf(p)
        return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
                + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if mid in (low, high):
            break
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


def ci_half_width(std: float, n: int, level: float = CI_LEVEL) -> float:
    """The half-width t((1 + level) / 2, n − 1) · std / √n of the mean's confidence interval;
    NaN for fewer than two values or a NaN std."""
    if n < 2 or std is None or math.isnan(std):
        return math.nan
    return t_quantile((1.0 + level) / 2.0, n - 1) * std / math.sqrt(n)
