# expect: correct
# bug: none: a frozen dataclass of tuples, itertools.count
"""Rejection sampling and the speculative verifier, as a small class plus module functions."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _left_to_right(xs):
    s = 0.0
    for v in xs:
        s += v
    return s


@dataclass(frozen=True)
class Pair:
    p: tuple
    q: tuple

    @classmethod
    def of(cls, p, q):
        ps, qs = cls._read(p, "p"), cls._read(q, "q")
        if len(ps) != len(qs):
            raise ValueError(f"p has {len(ps)} entries, q has {len(qs)}")
        return cls(ps, qs)

    @staticmethod
    def _read(v, name):
        arr = np.asarray(v, dtype=np.float64)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name} is not a non-empty vector")
        xs = tuple(arr.tolist())
        if any(not math.isfinite(e) or e < 0.0 for e in xs):
            raise ValueError(f"{name} has a negative or non-finite entry")
        if abs(_left_to_right(xs) - 1.0) > 1e-9:
            raise ValueError(f"{name} is not normalised")
        return xs

    def alpha(self):
        return _left_to_right(min(a, b) for a, b in zip(self.p, self.q))

    def residual(self):
        num = [max(0.0, a - b) for a, b in zip(self.p, self.q)]
        z = _left_to_right(num)
        if z == 0.0:
            return np.array(self.p)
        return np.array(num) / z


def _uniform(u, name):
    if isinstance(u, bool) or not isinstance(u, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} is not a number")
    if not (0.0 <= u < 1.0):  # NaN fails this too
        raise ValueError(f"{name} must lie in [0, 1)")
    return float(u)


def _finite(v, name):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} is not a number")
    if not math.isfinite(v):
        raise ValueError(f"{name} is not finite")
    return float(v)


def rejection_accept(p_x, q_x, u):
    p_x, q_x, u = _finite(p_x, "p_x"), _finite(q_x, "q_x"), _uniform(u, "u")
    if q_x <= 0.0:
        raise ValueError("q_x must be > 0")
    if p_x < 0.0:
        raise ValueError("p_x must be >= 0")
    return u < p_x / q_x


def acceptance_probability(p, q):
    return Pair.of(p, q).alpha()


def residual_distribution(p, q):
    return Pair.of(p, q).residual()


def speculative_step(p, q, x, u_accept, u_resample):
    pair = Pair.of(p, q)
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"x must be an int, got {type(x).__name__}")
    if x < 0 or x >= len(pair.p):
        raise ValueError("x outside the vocabulary")
    if pair.q[x] == 0.0:
        raise ValueError("q[x] == 0")
    if rejection_accept(pair.p[x], pair.q[x], u_accept):
        return int(x), True
    return sample_categorical(pair.residual(), _uniform(u_resample, "u_resample")), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    pair = Pair.of(p, q)
    m = _finite(m, "m")
    if m < 1.0:
        raise ValueError("m must be >= 1")
    if any(a > m * b for a, b in zip(pair.p, pair.q)):
        raise ValueError("p exceeds m q")
    if isinstance(max_tries, bool) or not isinstance(max_tries, (int, np.integer)):
        raise ValueError("max_tries must be an int")
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    q_arr = np.array(pair.q)
    for tries in itertools.count(1):
        if tries > max_tries:
            break
        x = sample_categorical(q_arr, rng.uniform())
        u = rng.uniform()
        if u < pair.p[x] / (m * pair.q[x]):
            return x, tries
    raise RuntimeError(f"no draft accepted in {max_tries} tries")
