"""Exact enumeration over float64 uniforms: the law of a function of uniforms, as Fractions.

A uniform of M06.3 is ``k / 2**53`` for an integer ``k`` in ``[0, 2**53)``, each with probability
``2**-53``. A function of uniforms that is constant on intervals of ``k`` has an exactly computable
law: partition ``[0, 2**53)`` at the contract's decision points, call the code under test at both
ends of every interval (both must agree, or the code's boundaries are not the contract's), and
weigh each answer by the interval's exact measure.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

SCALE = 2**53
ULP = Fraction(1, SCALE)


def count_below(t: float | Fraction) -> int:
    """How many uniforms ``u = k / 2**53`` satisfy ``u < t``."""
    t = Fraction(t)
    if t <= 0:
        return 0
    if t >= 1:
        return SCALE
    return math.ceil(t * SCALE)


def u_of(k: int) -> float:
    """The uniform ``k / 2**53`` (exact in float64)."""
    return k / SCALE


@dataclass(frozen=True)
class Interval:
    """Uniforms ``k / 2**53`` for ``lo <= k <= hi``."""

    lo: int
    hi: int

    @property
    def measure(self) -> Fraction:
        return Fraction(self.hi - self.lo + 1, SCALE)

    @property
    def ends(self) -> tuple[float, float]:
        return u_of(self.lo), u_of(self.hi)


def split_at(thresholds: Sequence[float | Fraction]) -> list[Interval]:
    """``[0, 1)`` cut at every threshold ``t`` (``u < t`` on the left side); empty pieces dropped."""
    cuts = sorted({count_below(t) for t in thresholds} | {0, SCALE})
    return [Interval(a, b - 1) for a, b in itertools.pairwise(cuts) if b > a]


def running_sums(probs: Sequence[float]) -> list[float]:
    """Left-to-right float64 running sums ``c_i``, as the contract adds them."""
    sums, total = [], 0.0
    for p in probs:
        total += float(p)
        sums.append(total)
    return sums


def categorical_intervals(probs: Sequence[float]) -> list[tuple[int, Interval]]:
    """The contract's inverse CDF as intervals: id ``i`` for ``c_{i-1} <= u < c_i``, ``probs[i] > 0``.

    The rounding tail ``u >= c_{n-1}`` belongs to the last positive id; zero ids get nothing.
    """
    sums = running_sums(probs)
    positive = [i for i, p in enumerate(probs) if p > 0]
    pieces, start = [], 0
    for i in positive:
        end = SCALE if i == positive[-1] else count_below(sums[i])
        if end > start:
            pieces.append((i, Interval(start, end - 1)))
            start = end
    return pieces
