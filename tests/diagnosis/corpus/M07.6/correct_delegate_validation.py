# expect: correct
# style: delegates the distribution check to M07.1 (sample_categorical(p, 0.0) raises ValueError for every non-distribution), itertools.accumulate for the sums, one decorator validates p and q
# bug: none: accumulate(xs, initial=0.0) adds left to right, and the check through sample_categorical uses the same left-to-right rule as M07.1
import functools
import math
import numbers
from itertools import accumulate

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _total(xs):
    *_, last = accumulate(xs, initial=0.0)
    return last


def _checked(fn):
    """Validate p and q (the first two arguments) once, hand float64 copies to fn."""

    @functools.wraps(fn)
    def wrapper(p, q, *args, **kwargs):
        sample_categorical(p, 0.0)  # raises ValueError unless p is a distribution
        sample_categorical(q, 0.0)
        pa = np.array(p, dtype=np.float64)
        qa = np.array(q, dtype=np.float64)
        if pa.shape != qa.shape:
            raise ValueError(f"{fn.__name__}: p has shape {pa.shape}, q has shape {qa.shape}")
        return fn(pa, qa, *args, **kwargs)

    return wrapper


def _finite(v, name):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite real number, got {v!r}")
    return float(v)


def _integer(v, name):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    return int(v)


def rejection_accept(p_x, q_x, u):
    p_x, q_x, u = _finite(p_x, "p_x"), _finite(q_x, "q_x"), _finite(u, "u")
    if q_x <= 0:
        raise ValueError("q_x must be > 0")
    if p_x < 0:
        raise ValueError("p_x must be >= 0")
    if not 0 <= u < 1:
        raise ValueError("u must be in [0, 1)")
    return u < p_x / q_x


@_checked
def acceptance_probability(p, q):
    return _total(np.minimum(p, q).tolist())


@_checked
def residual_distribution(p, q):
    num = np.maximum(p - q, 0.0)
    z = _total(num.tolist())
    return p if z == 0 else num / z  # p is already a fresh copy made by _checked


@_checked
def speculative_step(p, q, x, u_accept, u_resample):
    x = _integer(x, "x")
    if not 0 <= x < len(p):
        raise ValueError(f"x = {x} outside [0, {len(p)})")
    if q[x] == 0:
        raise ValueError(f"q[{x}] == 0")
    if rejection_accept(p[x], q[x], u_accept):
        return x, True
    return sample_categorical(residual_distribution(p, q), u_resample), False


@_checked
def rejection_sample(p, q, m, rng, max_tries=10000):
    m = _finite(m, "m")
    if m < 1:
        raise ValueError("m must be >= 1")
    bad = np.flatnonzero(p > m * q)
    if bad.size:
        raise ValueError(f"envelope fails at ids {bad.tolist()}")
    max_tries = _integer(max_tries, "max_tries")
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    for tries in range(1, max_tries + 1):
        x = sample_categorical(q, rng.uniform())
        u = rng.uniform()
        if u < p[x] / (m * q[x]):
            return x, tries
    raise RuntimeError(f"{max_tries} tries without an acceptance")
