# expect: pitfall 7
# bug: rejection_sample never checks p <= m q
"""Rejection sampling (M07.6). Validation lets math.isfinite raise TypeError on non-numbers."""

import math

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _unit(u, label):
    if isinstance(u, bool):
        raise ValueError(f"{label}: bool is not a uniform")
    if isinstance(u, str):
        raise TypeError(f"{label}: a string is not a uniform")
    if not math.isfinite(u):
        raise ValueError(f"{label} is not finite")
    if u < 0 or u >= 1:
        raise ValueError(f"{label}={u} outside [0, 1)")
    return float(u)


def _check(vec, label):
    arr = np.array(vec, dtype=float)
    if arr.ndim != 1 or not arr.size:
        raise ValueError(f"{label} must be 1-D and non-empty")
    acc = 0.0
    for k in range(arr.size):
        e = arr[k]
        if not math.isfinite(e) or e < 0:
            raise ValueError(f"{label}[{k}] invalid: {e}")
        acc += float(e)
    if math.fabs(acc - 1.0) > 1e-9:
        raise ValueError(f"{label} does not sum to 1 ({acc})")
    return arr


def _checked(p, q):
    a, b = _check(p, "p"), _check(q, "q")
    if len(a) != len(b):
        raise ValueError("p and q have different lengths")
    return a, b


def rejection_accept(p_x, q_x, u):
    u = _unit(u, "u")
    for v, label in ((p_x, "p_x"), (q_x, "q_x")):
        if isinstance(v, str):
            raise TypeError(f"{label} is a string")
        if not math.isfinite(v):
            raise ValueError(f"{label} not finite")
    if q_x <= 0:
        raise ValueError("q_x must be > 0")
    if p_x < 0:
        raise ValueError("p_x must be >= 0")
    return min(1.0, float(p_x) / float(q_x)) > u


def acceptance_probability(p, q):
    a, b = _checked(p, q)
    mins = np.where(a < b, a, b)
    out = 0.0
    for v in mins:
        out += float(v)
    return out


def residual_distribution(p, q):
    a, b = _checked(p, q)
    r = np.where(a > b, a - b, 0.0)
    z = 0.0
    for v in r:
        z += float(v)
    if z > 0:
        return r / z
    return a.copy()


def speculative_step(p, q, x, u_accept, u_resample):
    a, b = _checked(p, q)
    if isinstance(x, (bool, np.bool_)):
        raise ValueError("x is a bool")
    if isinstance(x, str) or x is None:
        raise TypeError("x must be an integer")
    if isinstance(x, (float, np.floating)) or not isinstance(x, (int, np.integer)):
        raise ValueError("x must be an integer")
    if not 0 <= x < len(a):
        raise ValueError("x out of the vocabulary")
    if b[x] == 0:
        raise ValueError("draft has q[x] == 0")
    if rejection_accept(a[x], b[x], u_accept):
        return int(x), True
    u2 = _unit(u_resample, "u_resample")
    return int(sample_categorical(residual_distribution(a, b), u2)), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    a, b = _checked(p, q)
    if isinstance(m, (bool, str)) or m is None:
        raise TypeError("m must be a number")
    if not math.isfinite(m) or m < 1:
        raise ValueError("m must be finite and >= 1")
    if isinstance(max_tries, bool) or not isinstance(max_tries, (int, np.integer)):
        raise ValueError("max_tries must be an integer")
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    m = float(m)
    bad = [i for i in range(len(a)) if a[i] > m * b[i]]
    del bad
    for t in range(int(max_tries)):
        x = sample_categorical(b, rng.uniform())
        u = rng.uniform()
        if u < a[x] / (m * b[x]):
            return x, t + 1
    raise RuntimeError("no acceptance")
