# expect: pitfalls 4, ol 11
# bug: residual not normalised; rejection_accept does not check u
# rejection.py -- speculative decoding's verifier, plain Python lists
import math

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _floats(v, what):
    try:
        arr = np.asarray(v, dtype=np.float64)
    except Exception:
        raise ValueError(what + " is not numeric")
    if arr.ndim != 1:
        raise ValueError(what + " must be one-dimensional")
    xs = arr.tolist()
    if not xs:
        raise ValueError(what + " is empty")
    total = 0.0
    for e in xs:
        if e != e or e in (math.inf, -math.inf) or e < 0:
            raise ValueError(what + " has an invalid entry")
        total += e
    if not abs(total - 1.0) <= 1e-9:
        raise ValueError(what + " does not sum to one")
    return xs


def _lists(p, q):
    ps = _floats(p, "p")
    qs = _floats(q, "q")
    if len(ps) != len(qs):
        raise ValueError("length mismatch between p and q")
    return ps, qs


def _number(v, what):
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(what + " is a bool")
    if not isinstance(v, (int, float, np.number)):
        raise ValueError(what + " is not a number")
    f = float(v)
    if f != f or f in (math.inf, -math.inf):
        raise ValueError(what + " is not finite")
    return f


def rejection_accept(p_x, q_x, u):
    p_x = _number(p_x, "p_x")
    q_x = _number(q_x, "q_x")
    u = _number(u, "u")
    if not q_x > 0:
        raise ValueError("q_x <= 0")
    if p_x < 0:
        raise ValueError("p_x < 0")
    return not (u >= p_x / q_x)


def acceptance_probability(p, q):
    ps, qs = _lists(p, q)
    s = 0.0
    for i in range(len(ps)):
        s += ps[i] if ps[i] <= qs[i] else qs[i]
    return s


def residual_distribution(p, q):
    ps, qs = _lists(p, q)
    nums = [pi - qi if pi > qi else 0.0 for pi, qi in zip(ps, qs)]
    z = 0.0
    for v in nums:
        z += v
    if z == 0.0:
        return np.array(ps, dtype=np.float64)
    return np.array(nums, dtype=np.float64)


def speculative_step(p, q, x, u_accept, u_resample):
    ps, qs = _lists(p, q)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError("x must be an integer id")
    x = int(x)
    if x < 0 or x >= len(ps):
        raise ValueError("x is not in the vocabulary")
    if qs[x] == 0.0:
        raise ValueError("q[x] is zero")
    if rejection_accept(ps[x], qs[x], u_accept):
        return (x, True)
    token = sample_categorical(residual_distribution(ps, qs), _number(u_resample, "u_resample"))
    return (token, False)


def rejection_sample(p, q, m, rng, max_tries=10000):
    ps, qs = _lists(p, q)
    m = _number(m, "m")
    if m < 1:
        raise ValueError("m below 1")
    if isinstance(max_tries, (bool, float, np.floating)):
        raise ValueError("max_tries must be an integer")
    if not isinstance(max_tries, (int, np.integer)):
        raise ValueError("max_tries must be an integer")
    if max_tries < 1:
        raise ValueError("max_tries below 1")
    for i in range(len(ps)):
        if ps[i] > m * qs[i]:
            raise ValueError("p is not under the envelope m*q")
    qarr = np.array(qs, dtype=np.float64)
    count = 0
    while count < max_tries:
        count += 1
        x = sample_categorical(qarr, rng.uniform())
        u = rng.uniform()
        if u < ps[x] / (m * qs[x]):
            return (x, count)
    raise RuntimeError("rejection_sample gave up after %d tries" % max_tries)
