"""M07.6: rejection sampling, the acceptance test and the residual distribution.

Every function taking ``p`` and ``q`` checks that both are distributions of the same shape; no
function modifies its arguments. Sums are left-to-right float64 loops over ascending ids, so the
Rust port (L10.8) makes the same decisions bit for bit.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tinyllm.prob.categorical import (
    UniformSource,
    as_distribution,
    check_unit_interval,
    left_to_right_sum,
    sample_categorical,
)


def _finite(name: str, value: object) -> float:
    if type(value) is float or type(value) is np.float64:  # the common case, without ABC checks
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


def _pair(p: ArrayLike, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    p_arr = as_distribution(p, "p")
    q_arr = as_distribution(q, "q")
    if p_arr.shape != q_arr.shape:
        raise ValueError(f"p and q must have the same shape, got {p_arr.shape} and {q_arr.shape}")
    return p_arr, q_arr


def rejection_accept(p_x: float, q_x: float, u: float) -> bool:
    """Accept a draft when ``u < p_x / q_x``, strictly (probability exactly ``min(1, p_x/q_x)``)."""
    p_x = _finite("p_x", p_x)
    q_x = _finite("q_x", q_x)
    if q_x <= 0.0:
        raise ValueError(f"q_x must be > 0 (the draft was proposed), got {q_x!r}")
    if p_x < 0.0:
        raise ValueError(f"p_x must be >= 0, got {p_x!r}")
    u = check_unit_interval("u", u)
    return u < p_x / q_x


def acceptance_probability(p: ArrayLike, q: ArrayLike) -> float:
    """``sum_i min(p_i, q_i)`` as a left-to-right float64 loop: ``1 - TV(p, q)``."""
    p_arr, q_arr = _pair(p, q)
    total = 0.0
    for p_i, q_i in zip(p_arr.tolist(), q_arr.tolist()):
        total += min(p_i, q_i)
    return total


def residual_distribution(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64]:
    """``max(0, p_i - q_i) / Z``, ``Z`` the left-to-right sum; a new copy of ``p`` when ``Z == 0``."""
    p_arr, q_arr = _pair(p, q)
    numerators = np.maximum(p_arr - q_arr, 0.0)
    z = left_to_right_sum(numerators)
    if z == 0.0:
        return p_arr.copy()
    return numerators / z


def speculative_step(
    p: ArrayLike, q: ArrayLike, x: int, u_accept: float, u_resample: float
) -> tuple[int, bool]:
    """Keep the draft ``x ~ q`` with probability ``min(1, p_x/q_x)``, else resample the residual.

    Returns ``(x, True)`` when accepted, without reading ``u_resample``; otherwise
    ``(sample_categorical(residual_distribution(p, q), u_resample), False)``.
    """
    p_arr, q_arr = _pair(p, q)
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise ValueError(f"x must be an integer id, got {type(x).__name__}")
    x = int(x)
    if not 0 <= x < p_arr.size:
        raise ValueError(f"x must be an id in [0, {p_arr.size}), got {x}")
    if q_arr[x] == 0.0:
        raise ValueError(f"q[{x}] is 0: the draft cannot have proposed id {x}")
    if rejection_accept(p_arr[x], q_arr[x], u_accept):
        return x, True
    return sample_categorical(residual_distribution(p_arr, q_arr), u_resample), False


def rejection_sample(
    p: ArrayLike, q: ArrayLike, m: float, rng: UniformSource, max_tries: int = 10000
) -> tuple[int, int]:
    """Von Neumann's sampler: propose ``x ~ q``, accept when ``u < p_x / (m q_x)``.

    Each try draws exactly two uniforms, the proposal first. Returns ``(x, tries)``, tries
    counted from 1; RuntimeError when no try accepts within ``max_tries``.
    """
    p_arr, q_arr = _pair(p, q)
    m = _finite("m", m)
    if m < 1.0:
        raise ValueError(f"m must be >= 1, got {m!r}")
    if isinstance(max_tries, bool) or not isinstance(max_tries, numbers.Integral):
        raise ValueError(f"max_tries must be an integer, got {type(max_tries).__name__}")
    if max_tries < 1:
        raise ValueError(f"max_tries must be >= 1, got {max_tries}")
    for i, (p_i, q_i) in enumerate(zip(p_arr.tolist(), q_arr.tolist())):
        if p_i > m * q_i:
            raise ValueError(f"envelope violated at id {i}: p = {p_i!r} > m * q = {m * q_i!r}")
    for tries in range(1, int(max_tries) + 1):
        x = sample_categorical(q_arr, rng.uniform())
        u = rng.uniform()
        if u < p_arr[x] / (m * q_arr[x]):
            return x, tries
    raise RuntimeError(f"no proposal accepted within max_tries = {max_tries}")
