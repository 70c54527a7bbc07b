"""What a sampled test can see, worked out analytically: intervals, noncentral chi-square, NegBin.

Everything here is closed-form or a one-dimensional root; the power audit states these numbers
beside the measured ones so a reader sees *why* a sample size is enough (or not).

Chi-square goodness of fit with ``k`` categories after pooling, ``df = k - 1``, ``N`` draws and level
``alpha``: under an alternative law ``p'`` the statistic is approximately noncentral chi-square with
``lambda = N * D``, ``D = sum (p'_i - p_i)**2 / p_i`` (Pearson's chi-square divergence). The smallest
``lambda`` detected with probability ``power`` is ``lambda_min``. Cauchy-Schwarz gives
``(sum |p'_i - p_i|)**2 <= D * sum p_i = D``, so ``TV(p', p) <= sqrt(D) / 2``: every alternative with
``TV >= sqrt(lambda_min / N) / 2`` has ``D >= lambda_min / N`` and is detected with at least that
power. The bound is tight (a change proportional to ``p`` on two halves of its mass attains it).

Geometric tries test: ``n`` calls, mean tries compared with ``m`` within ``s`` standard errors
``se = sqrt(m (m - 1) / n)``. The total of ``n`` geometric counts with success probability ``a`` is
``n`` plus a negative binomial (failures before ``n`` successes), so the pass region is a range
of integers and every probability below is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.engine.serial import float_from_json

CONFIDENCE = 0.95
TARGET_POWER = 0.999


@dataclass(frozen=True)
class Rate:
    """``k`` events in ``n`` trials, with a Clopper-Pearson (exact) interval."""

    k: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else math.nan

    def to_json(self) -> dict[str, float | int]:
        return {"k": self.k, "n": self.n, "rate": self.value, "ci_low": self.low,
                "ci_high": self.high, "confidence": CONFIDENCE}

    @classmethod
    def from_json(cls, d: dict[str, float | int]) -> Rate:
        """What ``to_json`` wrote (its NaN as a string too, as the audits write it)."""
        return cls(int(d["k"]), int(d["n"]), float_from_json(d["ci_low"]),
                   float_from_json(d["ci_high"]))


def rate(k: int, n: int, confidence: float = CONFIDENCE) -> Rate:
    """``k / n`` with its exact (Clopper-Pearson) interval; ``[nan, nan]`` when ``n == 0``."""
    if n == 0:
        return Rate(0, 0, math.nan, math.nan)
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    return Rate(k, n, float(ci.low), float(ci.high))


# -- chi-square -----------------------------------------------------------------------------------

def chi_square_critical(df: int, alpha: float) -> float:
    from scipy.stats import chi2

    return float(chi2.isf(alpha, df))


def chi_square_power(df: int, alpha: float, noncentrality: float) -> float:
    """P(noncentral chi-square(df, lambda) > critical value at alpha): the asymptotic power."""
    from scipy.stats import chi2, ncx2

    if noncentrality <= 0:
        return float(alpha)
    return float(ncx2.sf(chi2.isf(alpha, df), df, noncentrality))


def min_noncentrality(df: int, alpha: float, power: float = TARGET_POWER) -> float:
    """The smallest ``lambda`` whose asymptotic power reaches ``power``."""
    from scipy.optimize import brentq

    return float(brentq(lambda lam: chi_square_power(df, alpha, lam) - power, 1e-9, 1e6,
                        xtol=1e-10, rtol=1e-12))


def min_detectable_tv(df: int, alpha: float, draws: int, power: float = TARGET_POWER) -> float:
    """TV above which every alternative law is detected with at least ``power`` (see module doc)."""
    return math.sqrt(min_noncentrality(df, alpha, power) / draws) / 2


def chi_square_detectable(df: int, alpha: float, draws: int) -> dict[str, float]:
    """What a chi-square with ``df`` degrees of freedom at ``alpha`` over ``draws`` can see."""
    lam = min_noncentrality(df, alpha)
    return {"df": df, "critical_value": chi_square_critical(df, alpha), "target_power": TARGET_POWER,
            "min_noncentrality": lam, "min_divergence": lam / draws,
            "min_tv": min_detectable_tv(df, alpha, draws), "nominal_alpha": alpha}


def chi_square_divergence(law: list[float], p: list[float]) -> float:
    """``sum (law_i - p_i)**2 / p_i`` over ids with ``p_i > 0`` (mass off the support: inf)."""
    total = 0.0
    for a, b in zip(law, p, strict=True):
        if b > 0:
            total += (a - b) ** 2 / b
        elif a > 0:
            return math.inf
    return total


def total_variation(law: list[float], p: list[float]) -> float:
    return 0.5 * sum(abs(a - b) for a, b in zip(law, p, strict=True))


# -- geometric tries ------------------------------------------------------------------------------

def pass_region(m: float, n: int, sigmas: float) -> tuple[int, int]:
    """Totals ``S`` of tries that pass: ``|S/n - m| <= sigmas * se``, as an inclusive integer range."""
    half = sigmas * math.sqrt(m * (m - 1) / n)
    return math.ceil(n * (m - half) - 1e-9), math.floor(n * (m + half) + 1e-9)


def geometric_alarm(accept: float, offset: int, m: float, n: int, sigmas: float) -> float:
    """P(the test fails) when each try accepts with probability ``accept`` and every reported
    count is shifted by ``offset`` (``-1`` for tries counted from 0): exact, via NegBin."""
    from scipy.stats import nbinom

    if accept >= 1.0:
        total = n * (1 + offset)
        lo, hi = pass_region(m, n, sigmas)
        return 0.0 if lo <= total <= hi else 1.0
    lo, hi = pass_region(m, n, sigmas)
    # S = n * (1 + offset) + F, F ~ NegBin(n, accept) failures.
    base = n * (1 + offset)
    inside = nbinom.cdf(hi - base, n, accept) - nbinom.cdf(lo - base - 1, n, accept)
    return float(1.0 - inside)


def geometric_detectable_means(m: float, n: int, sigmas: float,
                               power: float = TARGET_POWER) -> tuple[float, float]:
    """Mean tries ``(below, above)`` beyond which the test fails with at least ``power``
    (alternatives that are themselves geometric, from 1, with another acceptance probability)."""
    from scipy.optimize import brentq

    def excess(a: float) -> float:
        return geometric_alarm(a, 0, m, n, sigmas) - power

    a0 = 1.0 / m
    above = brentq(excess, 1e-6, a0 * (1 - 1e-12), xtol=1e-14)  # fewer accepts: more tries
    below = brentq(excess, a0 * (1 + 1e-12), 1 - 1e-12, xtol=1e-14)
    return 1.0 / below, 1.0 / above


def geometric_shift_normal(m: float, n: int, sigmas: float, power: float = TARGET_POWER) -> float:
    """The mean shift detected with ``power`` when the spread stays that of the reference:
    ``(sigmas + z_power) * se`` (the normal approximation, one side)."""
    from scipy.stats import norm

    return (sigmas + float(norm.isf(1 - power))) * math.sqrt(m * (m - 1) / n)


def two_sided_normal_alpha(sigmas: float) -> float:
    from scipy.stats import norm

    return float(2 * norm.sf(sigmas))
