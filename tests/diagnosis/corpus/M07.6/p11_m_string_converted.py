# expect: ol pitfall 11
# style: plain loops over Python floats (base: correct_plain_isfinite.py)
# bug: m goes through float(m) so that ints and numpy scalars all work: a numeric string such as '2' is converted and sampled with, instead of raising TypeError or ValueError
# caught-by: test_rejection_sample_checks_the_envelope
# counterexample: rejection_sample([0.5, 0.5], [0.5, 0.5], '2', rng) with uniforms [0.0, 0.0] returns (0, 1); the contract raises
#   TypeError or ValueError (m is not a number) before any draw
"""M07.6 rejection sampling, residual distributions, one speculative step."""

import math
import operator

import numpy as np

from tinyllm.prob.categorical import sample_categorical

TOL = 1e-9


def _finite(v, what):
    # math.isfinite raises TypeError for None, str, complex: that is allowed for a non-number
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {v!r}")
    return float(v)


def _probs(probs, what):
    if np.ndim(probs) != 1:
        raise ValueError(f"{what} must be one-dimensional")
    vals = [_finite(v, f"{what}[{i}]") for i, v in enumerate(probs)]
    if not vals:
        raise ValueError(f"{what} is empty")
    total = 0.0
    for v in vals:
        if v < 0.0:
            raise ValueError(f"{what} has a negative entry {v!r}")
        total += v
    if abs(total - 1.0) > TOL:
        raise ValueError(f"{what} sums to {total!r}, which is not 1 within {TOL}")
    return vals


def _both(p, q):
    pv = _probs(p, "p")
    qv = _probs(q, "q")
    if len(pv) != len(qv):
        raise ValueError(f"p and q differ in length: {len(pv)} != {len(qv)}")
    return pv, qv


def _integer(v, what):
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{what} must be an integer, not a bool")
    try:
        return operator.index(v)
    except TypeError:
        raise ValueError(f"{what} must be an integer, got {v!r}") from None


def rejection_accept(p_x, q_x, u):
    p_x = _finite(p_x, "p_x")
    q_x = _finite(q_x, "q_x")
    u = _finite(u, "u")
    if q_x <= 0.0:
        raise ValueError("q_x must be positive")
    if p_x < 0.0:
        raise ValueError("p_x must be non-negative")
    if u < 0.0 or u >= 1.0:
        raise ValueError("u must lie in [0, 1)")
    return u < p_x / q_x


def acceptance_probability(p, q):
    pv, qv = _both(p, q)
    alpha = 0.0
    for i in range(len(pv)):
        alpha += pv[i] if pv[i] < qv[i] else qv[i]
    return alpha


def _residual(pv, qv):
    num = [a - b if a > b else 0.0 for a, b in zip(pv, qv)]
    z = 0.0
    for v in num:
        z += v
    if z == 0.0:
        return np.array(pv, dtype=np.float64)
    return np.array([v / z for v in num], dtype=np.float64)


def residual_distribution(p, q):
    return _residual(*_both(p, q))


def speculative_step(p, q, x, u_accept, u_resample):
    pv, qv = _both(p, q)
    x = _integer(x, "x")
    if x < 0 or x >= len(pv):
        raise ValueError(f"x = {x} is not an id of a vocabulary of {len(pv)}")
    if qv[x] == 0.0:
        raise ValueError(f"the draft has q[{x}] == 0")
    if rejection_accept(pv[x], qv[x], u_accept):
        return x, True
    return sample_categorical(_residual(pv, qv), u_resample), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    pv, qv = _both(p, q)
    if isinstance(m, (bool, np.bool_)):
        raise ValueError("m must be a number, not a bool")
    m = float(m)  # ints, numpy scalars, anything float() takes
    if not math.isfinite(m):
        raise ValueError(f"m must be finite, got {m!r}")
    if m < 1.0:
        raise ValueError("m must be at least 1")
    for i in range(len(pv)):
        if pv[i] > m * qv[i]:
            raise ValueError(f"p[{i}] > m * q[{i}]: m is not an envelope")
    max_tries = _integer(max_tries, "max_tries")
    if max_tries < 1:
        raise ValueError("max_tries must be at least 1")
    tries = 0
    while tries < max_tries:
        tries += 1
        x = sample_categorical(qv, rng.uniform())
        u = rng.uniform()
        if u < pv[x] / (m * qv[x]):
            return x, tries
    raise RuntimeError(f"rejection_sample: nothing accepted in {max_tries} tries")
