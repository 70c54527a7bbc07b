# expect: pitfall 7
# style: plain loops and helpers (written at stop 37 by an outside writer, from the chapter and the stubs only)
# bug: I check the envelope with a little slack, p_i > m * q_i + 1e-12, so a tiny p_i where q_i == 0 slips through
# caught-by: test_rejection_sample_checks_the_envelope
"""My M07.6: rejection sampling and residual distributions, from the chapter and the stubs."""
from __future__ import annotations

import math
import operator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tinyllm.prob.categorical import UniformSource, sample_categorical


def _number(v, name):
    if v is None or isinstance(v, (str, bytes)):
        raise TypeError(f"{name} must be a number, got {v!r}")
    try:
        f = float(v)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be a number, got {v!r}") from e
    if not math.isfinite(f):
        raise ValueError(f"{name} must be finite, got {v!r}")
    return f


def _ltr_sum(values):
    total = 0.0
    for v in values:
        total += float(v)
    return total


def _distribution(p, name):
    a = np.array(p, dtype=np.float64)  # a copy
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has a NaN or infinite entry")
    if np.any(a < 0):
        raise ValueError(f"{name} has a negative entry")
    total = _ltr_sum(a)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} sums to {total!r}, not 1")
    return a


def _pair(p, q):
    pa = _distribution(p, "p")
    qa = _distribution(q, "q")
    if pa.shape != qa.shape:
        raise ValueError(f"p and q have different shapes {pa.shape} and {qa.shape}")
    return pa, qa


def _uniform(u, name):
    f = _number(u, name)
    if not (0.0 <= f < 1.0):
        raise ValueError(f"{name} must be in [0, 1), got {u!r}")
    return f


def rejection_accept(p_x: float, q_x: float, u: float) -> bool:
    p_x = _number(p_x, "p_x")
    q_x = _number(q_x, "q_x")
    u = _uniform(u, "u")
    if q_x <= 0:
        raise ValueError("q_x must be > 0")
    if p_x < 0:
        raise ValueError("p_x must be >= 0")
    ratio = p_x / q_x
    return bool(u < ratio)


def acceptance_probability(p: ArrayLike, q: ArrayLike) -> float:
    pa, qa = _pair(p, q)
    total = 0.0
    for i in range(pa.size):
        total += min(float(pa[i]), float(qa[i]))
    return float(total)


def residual_distribution(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64]:
    pa, qa = _pair(p, q)
    num = np.array([max(0.0, float(pa[i]) - float(qa[i])) for i in range(pa.size)], dtype=np.float64)
    z = _ltr_sum(num)
    if z == 0.0:
        return pa.copy()
    return num / z


def _index(x, n):
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"x must be an integer, got {x!r}")
    if isinstance(x, (bool, np.bool_)):
        raise ValueError("x must be an integer, not a bool")
    if not isinstance(x, (int, np.integer)):
        raise ValueError(f"x must be an integer, got {x!r}")
    x = int(x)
    if not (0 <= x < n):
        raise ValueError(f"x={x} outside [0, {n})")
    return x


def speculative_step(
    p: ArrayLike, q: ArrayLike, x: int, u_accept: float, u_resample: float
) -> tuple[int, bool]:
    pa, qa = _pair(p, q)
    x = _index(x, pa.size)
    if qa[x] == 0:
        raise ValueError(f"q[{x}] is 0: the draft cannot have proposed it")
    if rejection_accept(float(pa[x]), float(qa[x]), u_accept):
        return (x, True)
    u2 = _uniform(u_resample, "u_resample")
    return (int(sample_categorical(residual_distribution(pa, qa), u2)), False)


def rejection_sample(
    p: ArrayLike, q: ArrayLike, m: float, rng: UniformSource, max_tries: int = 10000
) -> tuple[int, int]:
    pa, qa = _pair(p, q)
    m = _number(m, "m")
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m!r}")
    if max_tries is None or isinstance(max_tries, (str, bytes)):
        raise TypeError("max_tries must be an integer")
    max_tries = operator.index(max_tries)
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    for i in range(pa.size):
        if pa[i] > m * qa[i] + 1e-12:
            raise ValueError(f"envelope fails at {i}: p={pa[i]!r} > m*q={m * qa[i]!r}")
    for tries in range(1, max_tries + 1):
        x = int(sample_categorical(qa, rng.uniform()))
        u = rng.uniform()
        if u < pa[x] / (m * qa[x]):
            return (x, tries)
    raise RuntimeError(f"no acceptance in {max_tries} tries")
