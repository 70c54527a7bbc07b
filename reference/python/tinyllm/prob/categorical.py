"""M07.1: inverse-CDF sampling of a categorical distribution from one uniform."""

from __future__ import annotations

import math
import numbers
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

SUM_TOLERANCE = 1e-9


class UniformSource(Protocol):
    """Anything with ``uniform() -> float`` returning a value in [0, 1)."""

    def uniform(self) -> float: ...


def left_to_right_sum(values: NDArray[np.float64]) -> float:
    """The float64 sum of ``values`` added one by one over ascending ids (not numpy's pairwise sum)."""
    total = 0.0
    for v in values.tolist():
        total += v
    return total


def as_distribution(probs: ArrayLike, name: str = "probs") -> NDArray[np.float64]:
    """``probs`` as a new float64 array, or ValueError if it is not a distribution.

    A distribution is a non-empty 1-D array-like of finite, non-negative numbers whose
    left-to-right float64 sum is within 1e-9 of 1.
    """
    try:
        raw = np.asarray(probs)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 1-D array of numbers: {exc}") from None
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {raw.dtype}")
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {raw.shape}")
    arr = np.array(raw, dtype=np.float64)
    total = 0.0
    for v in arr.tolist():  # one left-to-right pass: finiteness, sign and the sum
        if not 0.0 <= v < math.inf:
            raise ValueError(f"{name} must hold finite, non-negative numbers, got {v!r}")
        total += v
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise ValueError(f"{name} must sum to 1 (within 1e-9), sums to {total!r}")
    return arr


def check_unit_interval(name: str, u: object) -> float:
    """``u`` as a float, or ValueError unless it is a finite real number in [0, 1)."""
    if isinstance(u, bool) or not isinstance(u, numbers.Real):
        raise ValueError(f"{name} must be a real number in [0, 1), got {type(u).__name__}")
    value = float(u)
    if not math.isfinite(value) or not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return value


def sample_categorical(probs: ArrayLike, u: float) -> int:
    """The inverse CDF at ``u``: the smallest id i with ``probs[i] > 0`` and ``u < c_i``.

    ``c_i`` is the running left-to-right float64 sum of ``probs[0..i]``. A ``u`` exactly on a
    boundary goes to the next positive id; if rounding leaves ``u >= c_{n-1}``, the last id with
    positive probability is returned. An id with probability 0 is never returned.
    """
    arr = as_distribution(probs)
    u = check_unit_interval("u", u)
    running = 0.0
    last_positive = -1
    for i, p_i in enumerate(arr.tolist()):
        running += p_i
        if p_i > 0.0:
            last_positive = i
            if u < running:
                return i
    return last_positive
