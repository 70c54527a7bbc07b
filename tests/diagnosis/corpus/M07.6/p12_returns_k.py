# expect: pitfall 12
# style: own ValueError subclasses, while-loop sums (base: correct_error_subclasses.py)
# bug: returns the loop index k instead of k + 1
import math

import numpy as np

from tinyllm.prob.categorical import sample_categorical


class RejectionError(ValueError):
    """Bad argument to a rejection-sampling function."""


class NotADistribution(RejectionError):
    pass


class EnvelopeError(RejectionError):
    pass


class NoAcceptance(RuntimeError):
    pass


def _running_total(values):
    total = 0.0
    i = 0
    while i < len(values):
        total = total + values[i]
        i += 1
    return total


def _as_float(v, what):
    if isinstance(v, (bool, np.bool_)):
        raise RejectionError(f"{what}: a bool is not a number")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise RejectionError(f"{what}: {v!r} is not a number") from None
    if isinstance(v, (str, bytes, complex)) or not math.isfinite(f):
        raise RejectionError(f"{what}: {v!r} is not a finite real number")
    return f


def _as_probs(v, what):
    arr = np.asarray(v)
    if arr.dtype.kind not in ("i", "u", "f"):
        raise NotADistribution(f"{what}: dtype {arr.dtype} is not real")
    if arr.ndim != 1:
        raise NotADistribution(f"{what}: must be 1-D, has {arr.ndim} dimensions")
    if arr.size == 0:
        raise NotADistribution(f"{what}: empty")
    vals = [float(t) for t in arr.tolist()]
    for t in vals:
        if not math.isfinite(t):
            raise NotADistribution(f"{what}: non-finite entry")
        if t < 0.0:
            raise NotADistribution(f"{what}: negative entry")
    if abs(_running_total(vals) - 1.0) > 1e-9:
        raise NotADistribution(f"{what}: total is not 1")
    return vals


def _pq(p, q):
    pv, qv = _as_probs(p, "target p"), _as_probs(q, "proposal q")
    if len(pv) != len(qv):
        raise NotADistribution("target and proposal have different vocabularies")
    return pv, qv


def _unit(u, what):
    u = _as_float(u, what)
    if u < 0.0 or u >= 1.0:
        raise RejectionError(f"{what} = {u} outside [0, 1)")
    return u


def rejection_accept(p_x, q_x, u):
    p_x = _as_float(p_x, "p_x")
    q_x = _as_float(q_x, "q_x")
    u = _unit(u, "u")
    if q_x <= 0.0:
        raise RejectionError("q_x <= 0")
    if p_x < 0.0:
        raise RejectionError("p_x < 0")
    return u < p_x / q_x


def acceptance_probability(p, q):
    pv, qv = _pq(p, q)
    return _running_total([a if a < b else b for a, b in zip(pv, qv)])


def residual_distribution(p, q):
    pv, qv = _pq(p, q)
    num = [a - b if a > b else 0.0 for a, b in zip(pv, qv)]
    z = _running_total(num)
    if z == 0.0:
        return np.asarray(pv, dtype=np.float64)
    return np.asarray([t / z for t in num], dtype=np.float64)


def speculative_step(p, q, x, u_accept, u_resample):
    pv, qv = _pq(p, q)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise RejectionError(f"draft {x!r} is not an integer id")
    if x < 0 or x >= len(pv):
        raise RejectionError(f"draft {x} is not in the vocabulary")
    x = int(x)
    if qv[x] == 0.0:
        raise RejectionError(f"draft {x} has q = 0")
    if rejection_accept(pv[x], qv[x], u_accept):
        return x, True
    return int(sample_categorical(residual_distribution(pv, qv), u_resample)), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    pv, qv = _pq(p, q)
    m = _as_float(m, "m")
    if m < 1.0:
        raise EnvelopeError(f"m = {m} < 1")
    for i, (a, b) in enumerate(zip(pv, qv)):
        if a > m * b:
            raise EnvelopeError(f"p[{i}] = {a} exceeds m * q[{i}] = {m * b}")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, (int, np.integer)):
        raise RejectionError("max_tries is not an integer")
    if max_tries < 1:
        raise RejectionError("max_tries < 1")
    for k in range(int(max_tries)):
        x = sample_categorical(qv, rng.uniform())
        u = rng.uniform()
        if u < pv[x] / (m * qv[x]):
            return int(x), k
    raise NoAcceptance(f"gave up after {max_tries} tries")
