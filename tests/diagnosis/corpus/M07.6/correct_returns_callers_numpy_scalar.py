# expect: correct
# style: numpy scalars out, the caller's np.int32 draft id returned as given (bench/corpus c07: ol took it for an alias before #25)
"""M07.6 -- numpy scalars in, numpy scalars out."""

import math

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _probs(v):
    a = np.asarray(v, dtype=np.float64)
    if a.ndim != 1 or a.size < 1:
        raise ValueError("bad shape")
    if np.isnan(a).any() or np.isinf(a).any() or (a < 0.0).any():
        raise ValueError("bad entries")
    s = np.float64(0.0)
    for e in a:
        s = s + e
    if abs(s - 1.0) > 1e-9:
        raise ValueError("does not sum to 1")
    return a


def _two(p, q):
    a, b = _probs(p), _probs(q)
    if a.size != b.size:
        raise ValueError("sizes differ")
    return a, b


def _scalar(v):
    if isinstance(v, (bool, np.bool_, str, bytes)) or v is None:
        raise TypeError("not a number")
    v = np.float64(v)
    if not np.isfinite(v):
        raise ValueError("not finite")
    return v


def rejection_accept(p_x, q_x, u):
    p_x, q_x, u = _scalar(p_x), _scalar(q_x), _scalar(u)
    if q_x <= 0 or p_x < 0:
        raise ValueError("need q_x > 0 and p_x >= 0")
    if not (0 <= u < 1):
        raise ValueError("u outside [0, 1)")
    return u < p_x / q_x


def acceptance_probability(p, q):
    a, b = _two(p, q)
    acc = np.float64(0.0)
    for e in np.minimum(a, b):
        acc = acc + e
    return acc


def residual_distribution(p, q):
    a, b = _two(p, q)
    num = np.maximum(a - b, 0.0)
    z = np.float64(0.0)
    for e in num:
        z = z + e
    if z == 0.0:
        return a.copy()
    return num / z


def speculative_step(p, q, x, u_accept, u_resample):
    a, b = _two(p, q)
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (float, np.floating)):
        raise ValueError("x must be an integer")
    if not isinstance(x, (int, np.integer)):
        raise TypeError("x must be an integer")
    if x < 0 or x >= a.size:
        raise ValueError("x out of range")
    if b[x] == 0:
        raise ValueError("q[x] is 0")
    if rejection_accept(a[x], b[x], u_accept):
        return x, True
    u2 = _scalar(u_resample)
    if not (0 <= u2 < 1):
        raise ValueError("u_resample outside [0, 1)")
    return sample_categorical(residual_distribution(a, b), u2), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    a, b = _two(p, q)
    m = _scalar(m)
    if m < 1:
        raise ValueError("m < 1")
    if np.any(a > m * b):
        raise ValueError("envelope fails")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, (int, np.integer)):
        raise ValueError("max_tries must be a positive integer")
    if max_tries < 1:
        raise ValueError("max_tries must be a positive integer")
    tries = 0
    while True:
        if tries == max_tries:
            raise RuntimeError("out of tries")
        tries += 1
        x = sample_categorical(b, rng.uniform())
        if rng.uniform() < a[x] / (m * b[x]):
            return x, tries
