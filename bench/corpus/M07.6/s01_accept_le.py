# expect: pitfall 1
# bug: rejection_accept uses u <= p_x/q_x
"""M07.6: rejection sampling and residual distributions."""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _real(name, value):
    """value as a finite float; bools and non-numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def _distribution(name, probs):
    """probs as a fresh float64 array, or ValueError."""
    try:
        arr = np.array(probs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} is not an array of numbers: {exc}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array")
    total = 0.0
    for v in arr.tolist():
        if not math.isfinite(v) or v < 0.0:
            raise ValueError(f"{name} has a bad entry {v}")
        total += v
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} sums to {total}, not 1")
    return arr


def _pair(p, q):
    p_arr = _distribution("p", p)
    q_arr = _distribution("q", q)
    if p_arr.shape != q_arr.shape:
        raise ValueError(f"p and q differ in shape: {p_arr.shape} vs {q_arr.shape}")
    return p_arr, q_arr


def rejection_accept(p_x: float, q_x: float, u: float) -> bool:
    p_x = _real("p_x", p_x)
    q_x = _real("q_x", q_x)
    u = _real("u", u)
    if q_x <= 0.0:
        raise ValueError("q_x must be positive")
    if p_x < 0.0:
        raise ValueError("p_x must be non-negative")
    if not 0.0 <= u < 1.0:
        raise ValueError("u must be in [0, 1)")
    ratio = p_x / q_x
    return u <= ratio


def acceptance_probability(p, q) -> float:
    p_arr, q_arr = _pair(p, q)
    alpha = 0.0
    for a, b in zip(p_arr.tolist(), q_arr.tolist()):
        alpha += min(a, b)
    return alpha


def residual_distribution(p, q):
    p_arr, q_arr = _pair(p, q)
    n = p_arr.size
    numer = np.zeros(n, dtype=np.float64)
    for i in range(n):
        d = p_arr[i] - q_arr[i]
        if d > 0.0:
            numer[i] = d
    z = 0.0
    for v in numer.tolist():
        z += v
    if z == 0.0:
        return p_arr.copy()
    return numer / z


def _draft_id(x, n):
    if isinstance(x, bool):
        raise ValueError("x must be an integer, not a bool")
    if not isinstance(x, (numbers.Integral, np.integer)):
        if isinstance(x, numbers.Real):
            raise ValueError(f"x must be an integer, got {x!r}")
        raise TypeError(f"x must be an integer, got {type(x).__name__}")
    x = int(x)
    if not 0 <= x < n:
        raise ValueError(f"x={x} outside [0, {n})")
    return x


def speculative_step(p, q, x: int, u_accept: float, u_resample: float) -> tuple[int, bool]:
    p_arr, q_arr = _pair(p, q)
    x = _draft_id(x, p_arr.size)
    if q_arr[x] == 0.0:
        raise ValueError(f"q[{x}] is 0: the draft cannot have been drawn")
    if rejection_accept(float(p_arr[x]), float(q_arr[x]), u_accept):
        return x, True
    residual = residual_distribution(p_arr, q_arr)
    return sample_categorical(residual, u_resample), False


def rejection_sample(p, q, m: float, rng, max_tries: int = 10000) -> tuple[int, int]:
    p_arr, q_arr = _pair(p, q)
    m = _real("m", m)
    if m < 1.0:
        raise ValueError(f"m must be at least 1, got {m}")
    tries_cap = operator.index(max_tries)
    if tries_cap < 1:
        raise ValueError("max_tries must be at least 1")
    for i in range(p_arr.size):
        if p_arr[i] > m * q_arr[i]:
            raise ValueError(f"envelope fails at {i}: p={p_arr[i]} > m*q={m * q_arr[i]}")
    for tries in range(1, tries_cap + 1):
        x = sample_categorical(q_arr, rng.uniform())
        u = rng.uniform()
        if u < p_arr[x] / (m * q_arr[x]):
            return x, tries
    raise RuntimeError(f"no acceptance in {tries_cap} tries")
