# expect: pitfall 19 (python >= 3.12)
# style: plain loops, Python floats (base: correct_loops.py)
# bug: residual normalizer z = sum(num): builtin sum of floats is compensated from Python 3.12 on (left to right on 3.11, so correct there)
# note: correct on 3.11 (sum() adds left to right there); from 3.12 on sum() is compensated: pitfall 19
"""M07.6: rejection sampling and residual distributions."""

import math
import numbers

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _real(v, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {v!r}")
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v!r}")
    return v


def _distribution(probs, name):
    try:
        a = np.array(probs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} is not an array of real numbers") from exc
    raw = np.asarray(probs)
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, not {raw.dtype}")
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array")
    values = a.tolist()
    total = 0.0
    for v in values:
        if not math.isfinite(v) or v < 0.0:
            raise ValueError(f"{name} has an entry that is negative or not finite: {v!r}")
        total += v
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} sums to {total!r}, not 1")
    return values


def _pair(p, q):
    pv = _distribution(p, "p")
    qv = _distribution(q, "q")
    if len(pv) != len(qv):
        raise ValueError(f"p has {len(pv)} ids but q has {len(qv)}")
    return pv, qv


def rejection_accept(p_x, q_x, u):
    p_x = _real(p_x, "p_x")
    q_x = _real(q_x, "q_x")
    u = _real(u, "u")
    if q_x <= 0.0:
        raise ValueError("q_x must be > 0: the draft could not have been proposed")
    if p_x < 0.0:
        raise ValueError("p_x must be >= 0")
    if not (0.0 <= u < 1.0):
        raise ValueError("u must be in [0, 1)")
    return u < p_x / q_x


def acceptance_probability(p, q):
    pv, qv = _pair(p, q)
    alpha = 0.0
    for a, b in zip(pv, qv):
        alpha += min(a, b)
    return alpha


def residual_distribution(p, q):
    pv, qv = _pair(p, q)
    num = []
    for a, b in zip(pv, qv):
        d = a - b
        num.append(d if d > 0.0 else 0.0)
    z = sum(num)
    if z == 0.0:
        return np.array(pv, dtype=np.float64)
    return np.array([v / z for v in num], dtype=np.float64)


def speculative_step(p, q, x, u_accept, u_resample):
    pv, qv = _pair(p, q)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"x must be an integer id, got {x!r}")
    x = int(x)
    if not 0 <= x < len(pv):
        raise ValueError(f"x = {x} is outside the vocabulary [0, {len(pv)})")
    if qv[x] == 0.0:
        raise ValueError(f"q[{x}] == 0: the draft could not have proposed it")
    if rejection_accept(pv[x], qv[x], u_accept):
        return x, True
    return int(sample_categorical(residual_distribution(p, q), u_resample)), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    pv, qv = _pair(p, q)
    m = _real(m, "m")
    if m < 1.0:
        raise ValueError("m must be >= 1")
    for i in range(len(pv)):
        if pv[i] > m * qv[i]:
            raise ValueError(f"envelope fails at id {i}: p = {pv[i]} > m * q = {m * qv[i]}")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, (int, np.integer)):
        raise ValueError("max_tries must be an integer")
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    for tries in range(1, int(max_tries) + 1):
        x = sample_categorical(qv, rng.uniform())
        u = rng.uniform()
        if u < pv[x] / (m * qv[x]):
            return int(x), tries
    raise RuntimeError(f"no acceptance within {max_tries} tries")
