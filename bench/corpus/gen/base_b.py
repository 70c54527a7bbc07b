"""Rejection sampling, vectorised with numpy where the contract allows it."""

from __future__ import annotations

import functools
import math
import operator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tinyllm.prob.categorical import UniformSource, sample_categorical

TOL = 1e-9


def ltr_sum(values) -> float:
    return functools.reduce(operator.add, np.asarray(values, dtype=np.float64).tolist(), 0.0)


def as_dist(x: ArrayLike) -> NDArray[np.float64]:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or len(a) == 0:
        raise ValueError("expected a non-empty vector")
    if not np.isfinite(a).all() or (a < 0).any():
        raise ValueError("entries must be finite and >= 0")
    if abs(ltr_sum(a) - 1.0) > TOL:
        raise ValueError("not normalised")
    return a


def both(p: ArrayLike, q: ArrayLike):
    p, q = as_dist(p), as_dist(q)
    if p.shape != q.shape:
        raise ValueError("shape mismatch")
    return p, q


def check_number(v, what: str) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what}: not a number")
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        raise ValueError(f"{what}: not finite")
    return v


def check_u(u, what: str = "u") -> float:
    u = check_number(u, what)
    if u < 0.0 or u >= 1.0:
        raise ValueError(f"{what} out of [0, 1)")
    return u


def rejection_accept(p_x: float, q_x: float, u: float) -> bool:
    u = check_u(u)
    p_x, q_x = check_number(p_x, "p_x"), check_number(q_x, "q_x")
    if q_x <= 0:
        raise ValueError("q_x <= 0")
    if p_x < 0:
        raise ValueError("p_x < 0")
    return bool(u < p_x / q_x)


def acceptance_probability(p: ArrayLike, q: ArrayLike) -> float:
    p, q = both(p, q)
    return ltr_sum(np.minimum(p, q))


def residual_distribution(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64]:
    p, q = both(p, q)
    r = np.maximum(p - q, 0.0)
    z = ltr_sum(r)
    if z == 0:
        return np.array(p, dtype=np.float64, copy=True)
    return r / z


def speculative_step(p: ArrayLike, q: ArrayLike, x: int, u_accept: float,
                     u_resample: float) -> tuple[int, bool]:
    p, q = both(p, q)
    if isinstance(x, (bool, np.bool_)):
        raise ValueError("x is a bool")
    if isinstance(x, (float, np.floating)):
        raise ValueError("x must be an int")
    if not isinstance(x, (int, np.integer)):
        raise TypeError("x must be an int")
    if x < 0 or x >= len(p):
        raise ValueError("x out of range")
    if q[x] == 0:
        raise ValueError("q[x] == 0")
    if rejection_accept(p[x], q[x], u_accept):
        return int(x), True
    return sample_categorical(residual_distribution(p, q), check_u(u_resample, "u_resample")), False


def rejection_sample(p: ArrayLike, q: ArrayLike, m: float, rng: UniformSource,
                     max_tries: int = 10000) -> tuple[int, int]:
    p, q = both(p, q)
    m = check_number(m, "m")
    if m < 1:
        raise ValueError("m < 1")
    if (p > m * q).any():
        raise ValueError("envelope violated")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, (int, np.integer)):
        raise TypeError("max_tries must be an int")
    if max_tries < 1:
        raise ValueError("max_tries < 1")
    for k in range(1, int(max_tries) + 1):
        x = sample_categorical(q, rng.uniform())
        if rng.uniform() < p[x] / (m * q[x]):
            return x, k
    raise RuntimeError("rejection_sample: max_tries exhausted")
