# expect: correct
# style: numpy arrays in and out: np.array(..., dtype=float64) makes the function's own copy, then in-place ufuncs (out=, /=) on that copy only; vectorised residual; the two reductions are loops over .tolist()
# bug: none: every write goes to a copy made here, so a caller's array (read-only or not) is never written, and the p == q result is that copy, never the caller's object
"""Rejection sampling and residual distributions (M07.6)."""

import numbers
import operator

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _ascending_sum(arr):
    total = 0.0
    for v in arr.tolist():
        total += v
    return total


def _scalar(name, v):
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{name}: a bool is not accepted here")
    if not isinstance(v, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name}: expected a real number, got {type(v).__name__}")
    v = float(v)
    if not np.isfinite(v):
        raise ValueError(f"{name}: {v} is not finite")
    return v


def _distribution(name, probs):
    try:
        raw = np.asarray(probs)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: not an array of numbers") from exc
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name}: entries must be real numbers, got dtype {raw.dtype}")
    arr = np.array(raw, dtype=np.float64)  # always a fresh copy
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: NaN or infinite entry")
    if (arr < 0).any():
        raise ValueError(f"{name}: negative entry")
    total = _ascending_sum(arr)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name}: sums to {total!r}, not 1")
    return arr


def _pair(p, q):
    p = _distribution("p", p)
    q = _distribution("q", q)
    if p.shape != q.shape:
        raise ValueError(f"shapes differ: p {p.shape}, q {q.shape}")
    return p, q


def _residual(p, q):
    num = np.subtract(p, q)
    np.maximum(num, 0.0, out=num)
    z = _ascending_sum(num)
    if z == 0.0:
        return p  # our own copy, not the caller's
    num /= z
    return num


def rejection_accept(p_x, q_x, u):
    p_x = _scalar("p_x", p_x)
    q_x = _scalar("q_x", q_x)
    u = _scalar("u", u)
    if q_x <= 0.0:
        raise ValueError(f"q_x = {q_x}: a draft with proposal probability 0 cannot be drawn")
    if p_x < 0.0:
        raise ValueError(f"p_x = {p_x} is negative")
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u = {u} is not in [0, 1)")
    return u < p_x / q_x


def acceptance_probability(p, q):
    p, q = _pair(p, q)
    return _ascending_sum(np.minimum(p, q))


def residual_distribution(p, q):
    p, q = _pair(p, q)
    return _residual(p, q)


def speculative_step(p, q, x, u_accept, u_resample):
    p, q = _pair(p, q)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        if not isinstance(x, (numbers.Number, np.generic)):
            raise TypeError(f"x: expected an integer id, got {type(x).__name__}")
        raise ValueError(f"x: expected an integer id, got {x!r}")
    x = operator.index(x)
    if not 0 <= x < p.size:
        raise ValueError(f"x = {x} is outside [0, {p.size})")
    if q[x] == 0.0:
        raise ValueError(f"q[{x}] == 0: the draft cannot have proposed it")
    if rejection_accept(p[x], q[x], u_accept):
        return x, True
    return int(sample_categorical(_residual(p, q), u_resample)), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    p, q = _pair(p, q)
    m = _scalar("m", m)
    if m < 1.0:
        raise ValueError(f"m = {m} < 1")
    bad = np.flatnonzero(p > m * q)
    if bad.size:
        raise ValueError(f"envelope fails: p[{bad[0]}] > m * q[{bad[0]}]")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, (numbers.Integral, np.integer)):
        raise ValueError(f"max_tries must be an integer, got {max_tries!r}")
    max_tries = operator.index(max_tries)
    if max_tries < 1:
        raise ValueError(f"max_tries = {max_tries} < 1")
    for tries in range(1, max_tries + 1):
        x = sample_categorical(q, rng.uniform())
        u = rng.uniform()
        if u < p[x] / (m * q[x]):
            return int(x), tries
    raise RuntimeError(f"no try accepted in {max_tries} tries")
