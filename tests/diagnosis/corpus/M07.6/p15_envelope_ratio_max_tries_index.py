# expect: ol pitfall 15
# style: numpy vectorised on np.asarray views (base: p15_envelope_as_ratio.py); max_tries read with operator.index, so 2.5 raises TypeError (the contract allows it)
# bug: the envelope is checked as max(p / q) > m (as p15_envelope_as_ratio.py): a valid tight envelope p_i == m q_i is refused after rounding (and, as in its base, q_i = -0.0 < p_i gives p_i / q_i = -inf, so that envelope passes: pitfall 7, named second)
# caught-by: test_rejection_sample_checks_the_envelope
# only-known-mistakes: the TypeError for max_tries = 2.5 is allowed by the contract; it once hid the real mistake behind "matches no known mistake" (review F6, W71)
# counterexample: rejection_sample([0.30000000000000004, 0.7], [0.1, 0.9], 3, rng) with uniforms [0.0, 0.0]: the contract returns (0, 1); this file raises ValueError
"""tinyllm.prob.rejection: von Neumann's sampler and the speculative-decoding step."""

import numbers
import operator

import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _sum_ltr(values):
    acc = 0.0
    for v in values.tolist():
        acc += v
    return acc


def _real(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {v!r}")
    v = float(v)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def _int(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    return int(v)


def _as_distribution(name, probs):
    try:
        arr = np.asarray(probs)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from exc
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name}: not an array of real numbers (dtype {arr.dtype})")
    arr = np.asarray(arr, dtype=np.float64)  # a view when it already is float64
    if arr.ndim != 1 or len(arr) == 0:
        raise ValueError(f"{name}: need a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name}: entries must be finite and >= 0")
    s = _sum_ltr(arr)
    if abs(s - 1.0) > 1e-9:
        raise ValueError(f"{name}: sum is {s!r}, not 1 (tolerance 1e-9)")
    return arr


def _check_pair(p, q):
    p = _as_distribution("p", p)
    q = _as_distribution("q", q)
    if p.shape != q.shape:
        raise ValueError(f"p and q have different shapes {p.shape} and {q.shape}")
    return p, q


def rejection_accept(p_x, q_x, u):
    p_x, q_x, u = _real("p_x", p_x), _real("q_x", q_x), _real("u", u)
    if q_x <= 0:
        raise ValueError("q_x <= 0: this draft cannot have been proposed")
    if p_x < 0:
        raise ValueError("p_x < 0")
    if not (0.0 <= u < 1.0):
        raise ValueError("u must be in [0, 1)")
    return u < p_x / q_x


def acceptance_probability(p, q):
    p, q = _check_pair(p, q)
    return _sum_ltr(np.minimum(p, q))


def _residual(p, q):
    num = np.maximum(p - q, 0.0)
    z = _sum_ltr(num)
    if z == 0.0:
        return np.array(p, dtype=np.float64)
    return num / z


def residual_distribution(p, q):
    return _residual(*_check_pair(p, q))


def speculative_step(p, q, x, u_accept, u_resample):
    p, q = _check_pair(p, q)
    x = _int("x", x)
    if x < 0 or x >= len(p):
        raise ValueError(f"draft id {x} is not in [0, {len(p)})")
    if q[x] == 0:
        raise ValueError(f"q[{x}] == 0")
    if rejection_accept(p[x], q[x], u_accept):
        return x, True
    return int(sample_categorical(_residual(p, q), u_resample)), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    p, q = _check_pair(p, q)
    m = _real("m", m)
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = p / q  # inf where q == 0 < p, nan where both are 0 (nan > m is False)
    if np.any(ratio > m):
        raise ValueError("the envelope p <= m * q fails")
    max_tries = operator.index(max_tries)  # 2.5 raises TypeError, as range(2.5) does
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    for tries in range(1, max_tries + 1):
        x = sample_categorical(q, rng.uniform())
        u = rng.uniform()
        if u < p[x] / (m * q[x]):
            return int(x), tries
    raise RuntimeError(f"gave up after {max_tries} tries")
