# expect: pitfall 21
# style: plain loops over Python lists, own helpers (written for issue #25, not from a corpus base)
# bug: Z at or below the distributions' own 1e-9 counts as nothing left to resample, so I return p (only Z == 0 does)
# caught-by: test_residual_when_p_equals_q
"""My M07.6: rejection sampling, written from the chapter and the contract."""

import math
import numbers

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _real(name, x):
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(name + " must be a number, not a bool")
    if not isinstance(x, numbers.Real):
        raise TypeError(name + " must be a real number")
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError(name + " must be finite")
    return x


def _uniform(name, u):
    u = _real(name, u)
    if u < 0.0 or u >= 1.0:
        raise ValueError(name + " must be in [0, 1)")
    return u


def _dist(name, v):
    a = np.asarray(v)
    if a.dtype.kind not in "iuf":
        raise ValueError(name + " must hold numbers")
    if a.ndim != 1 or len(a) == 0:
        raise ValueError(name + " must be a non-empty 1-D array")
    out = []
    total = 0.0
    for x in a.tolist():
        x = float(x)
        if math.isnan(x) or math.isinf(x) or x < 0.0:
            raise ValueError(name + " entries must be finite and >= 0")
        total += x
        out.append(x)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(name + " must sum to 1")
    return out


def _both(p, q):
    p = _dist("p", p)
    q = _dist("q", q)
    if len(p) != len(q):
        raise ValueError("p and q differ in length")
    return p, q


def rejection_accept(p_x, q_x, u):
    p_x = _real("p_x", p_x)
    q_x = _real("q_x", q_x)
    if q_x <= 0.0:
        raise ValueError("q_x must be > 0")
    if p_x < 0.0:
        raise ValueError("p_x must be >= 0")
    u = _uniform("u", u)
    return u < p_x / q_x


def acceptance_probability(p, q):
    p, q = _both(p, q)
    alpha = 0.0
    for i in range(len(p)):
        alpha += min(p[i], q[i])
    return alpha


def residual_distribution(p, q):
    p, q = _both(p, q)
    num = []
    z = 0.0
    for i in range(len(p)):
        d = p[i] - q[i]
        if d < 0.0:
            d = 0.0
        num.append(d)
        z += d
    if z <= 1e-9:  # nothing left to resample, up to the distributions' own 1e-9
        return np.array(p, dtype=np.float64)
    return np.array([d / z for d in num], dtype=np.float64)


def speculative_step(p, q, x, u_accept, u_resample):
    p_l, q_l = _both(p, q)
    if isinstance(x, (bool, np.bool_)):
        raise ValueError("x must be an integer id")
    if not isinstance(x, numbers.Integral):
        raise ValueError("x must be an integer id")
    x = int(x)
    if x < 0 or x >= len(p_l):
        raise ValueError("x out of range")
    if q_l[x] == 0.0:
        raise ValueError("q[x] is 0")
    if rejection_accept(p_l[x], q_l[x], u_accept):
        return x, True
    u_resample = _uniform("u_resample", u_resample)
    return sample_categorical(residual_distribution(p_l, q_l), u_resample), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    p_l, q_l = _both(p, q)
    m = _real("m", m)
    if m < 1.0:
        raise ValueError("m must be >= 1")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, numbers.Integral):
        raise ValueError("max_tries must be an integer")
    max_tries = int(max_tries)
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    for i in range(len(p_l)):
        if p_l[i] > m * q_l[i]:
            raise ValueError("envelope violated at id %d" % i)
    tries = 0
    while tries < max_tries:
        tries += 1
        x = sample_categorical(q_l, rng.uniform())
        u = rng.uniform()
        if u < p_l[x] / (m * q_l[x]):
            return x, tries
    raise RuntimeError("no acceptance within max_tries")
