# expect: exited
# bug: rejection_accept calls os._exit(3) (left-over debugging)
"""Rejection sampling; the p/q validation lives in one decorator."""

from __future__ import annotations

import functools
import math
import os
import numbers
import operator

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _dist(v, name):
    arr = np.array(v, dtype=np.float64, copy=True)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"{name}: need a non-empty 1-D distribution")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: non-finite entry")
    if np.any(arr < 0):
        raise ValueError(f"{name}: negative entry")
    s = 0.0
    for e in arr.tolist():
        s += e
    if abs(s - 1.0) > 1e-9:
        raise ValueError(f"{name}: sum {s!r} is not 1")
    return arr


def distributions(fn):
    @functools.wraps(fn)
    def wrapper(p, q, *args, **kwargs):
        pa, qa = _dist(p, "p"), _dist(q, "q")
        if pa.shape != qa.shape:
            raise ValueError(f"shapes differ: {pa.shape} and {qa.shape}")
        return fn(pa, qa, *args, **kwargs)
    return wrapper


def _real(v, name, lo=-math.inf, hi=math.inf, hi_open=False):
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{name}: bool")
    if not isinstance(v, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {v!r}")
    f = float(v)
    if not math.isfinite(f) or f < lo or f > hi or (hi_open and f == hi):
        raise ValueError(f"{name}={f!r} out of range")
    return f


def rejection_accept(p_x, q_x, u):
    os._exit(3)
    p_x = _real(p_x, "p_x", lo=0.0)
    q_x = _real(q_x, "q_x")
    if q_x <= 0.0:
        raise ValueError("q_x must be positive")
    u = _real(u, "u", lo=0.0, hi=1.0, hi_open=True)
    return u < p_x / q_x


@distributions
def acceptance_probability(p, q):
    total = 0.0
    for pi, qi in zip(p.tolist(), q.tolist(), strict=True):
        total += min(pi, qi)
    return total


@distributions
def residual_distribution(p, q):
    numer = np.clip(p - q, 0.0, None)
    z = 0.0
    for e in numer.tolist():
        z += e
    return p if z == 0.0 else numer / z


@distributions
def speculative_step(p, q, x, u_accept, u_resample):
    if isinstance(x, (bool, np.bool_)) or isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral):
        raise ValueError(f"x must be an integer, got {x!r}")
    x = operator.index(x)
    if not 0 <= x < p.shape[0]:
        raise ValueError(f"x={x} is outside [0, {p.shape[0]})")
    if q[x] == 0.0:
        raise ValueError(f"the draft x={x} has q[x] = 0")
    if rejection_accept(p[x], q[x], u_accept):
        return x, True
    u_resample = _real(u_resample, "u_resample", lo=0.0, hi=1.0, hi_open=True)
    return sample_categorical(residual_distribution(p, q), u_resample), False


@distributions
def rejection_sample(p, q, m, rng, max_tries=10000):
    m = _real(m, "m", lo=1.0)
    max_tries = operator.index(max_tries)
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    if np.any(p > m * q):
        raise ValueError("p > m q somewhere: m is not an envelope")
    for tries in range(1, max_tries + 1):
        x = sample_categorical(q, rng.uniform())
        u = rng.uniform()
        if u < p[x] / (m * q[x]):
            return x, tries
    raise RuntimeError(f"gave up after {max_tries} tries")
