# expect: pitfall 1
# style: math module + numbers, reduce sums (base: p01_vonneumann_le.py); max_tries read with operator.index, so 2.5 raises TypeError (the contract allows it)
# bug: rejection_sample accepts on u <= p_x / (m q_x) (as p01_vonneumann_le.py), and nothing else
# only-known-mistakes: the TypeError for max_tries = 2.5 is allowed by the contract, not a second mistake (review F6, W44)
import math
import numbers
import operator
from functools import reduce

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _number(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise ValueError(f"{name}: not a real number ({type(v).__name__})")
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        raise ValueError(f"{name}: {v} is not finite")
    return v


def _lsum(xs):
    return reduce(operator.add, xs, 0.0)


def _probs(name, seq):
    arr = np.asarray(seq)
    if arr.ndim != 1 or len(arr) == 0:
        raise ValueError(f"{name}: need a non-empty 1-D sequence")
    out = [_number(f"{name}[{i}]", v) for i, v in enumerate(arr.tolist())]
    if any(v < 0 for v in out):
        raise ValueError(f"{name}: negative probability")
    if not math.isclose(_lsum(out), 1.0, rel_tol=0.0, abs_tol=1e-9):
        raise ValueError(f"{name}: probabilities do not add up to 1")
    return out


def _both(p, q):
    p, q = _probs("p", p), _probs("q", q)
    if len(p) != len(q):
        raise ValueError("p and q must have the same length")
    return p, q


def rejection_accept(p_x, q_x, u):
    p_x, q_x, u = _number("p_x", p_x), _number("q_x", q_x), _number("u", u)
    if not q_x > 0:
        raise ValueError(f"q_x = {q_x}: a draft with zero proposal probability")
    if p_x < 0:
        raise ValueError(f"p_x = {p_x} < 0")
    if u < 0 or u >= 1:
        raise ValueError(f"u = {u} is not in [0, 1)")
    ratio = p_x / q_x
    return u < ratio


def acceptance_probability(p, q):
    p, q = _both(p, q)
    return _lsum(min(a, b) for a, b in zip(p, q))


def residual_distribution(p, q):
    p, q = _both(p, q)
    num = [max(0.0, a - b) for a, b in zip(p, q)]
    z = _lsum(num)
    if z == 0:
        return np.array(p, dtype=np.float64)
    return np.array([v / z for v in num], dtype=np.float64)


def speculative_step(p, q, x, u_accept, u_resample):
    pl, ql = _both(p, q)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise ValueError(f"draft id must be an integer, got {type(x).__name__}")
    x = int(x)
    if x < 0 or x >= len(pl):
        raise ValueError(f"draft id {x} outside the vocabulary of size {len(pl)}")
    if ql[x] == 0:
        raise ValueError(f"draft id {x} has proposal probability 0")
    if rejection_accept(pl[x], ql[x], u_accept):
        return x, True
    return sample_categorical(residual_distribution(pl, ql), u_resample), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    p, q = _both(p, q)
    m = _number("m", m)
    if m < 1:
        raise ValueError(f"envelope constant m = {m} < 1")
    if any(a > m * b for a, b in zip(p, q)):
        raise ValueError("p is not bounded by m * q")
    max_tries = operator.index(max_tries)  # 2.5 raises TypeError, as range(2.5) does
    if max_tries < 1:
        raise ValueError("max_tries must be positive")
    tries = 0
    while tries < max_tries:
        tries += 1
        x = sample_categorical(q, rng.uniform())
        u = rng.uniform()
        if u <= p[x] / (m * q[x]):
            return x, tries
    raise RuntimeError(f"rejection_sample: {max_tries} tries, none accepted")
