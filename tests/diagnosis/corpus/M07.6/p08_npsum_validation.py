# expect: pitfall 8
# style: numpy vectorised (base: correct_numpy.py)
# bug: the distribution check compares np.sum(arr) with 1 +- 1e-9 (the contract's check is the left-to-right sum too); everything else is correct
# counterexample: p = q = [0.1]*9 + [0.100000001]: the left-to-right sum is 1.0000000009999999 (a distribution,
#   acceptance_probability returns it), np.sum gives 1.000000001 and this file raises ValueError
import numpy as np

from tinyllm.prob.categorical import sample_categorical

_TOL = 1e-9


def _ltr_sum(a):
    """Left-to-right float64 sum over ascending ids (the contract's order; np.sum is pairwise)."""
    total = 0.0
    for v in a.tolist():
        total += v
    return total


def _scalar(v, name):
    arr = np.asarray(v)
    if arr.ndim != 0 or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a real number, got {v!r}")
    f = float(arr)
    if not np.isfinite(f):
        raise ValueError(f"{name} must be finite, got {f}")
    return f


def _check_dist(a, name):
    arr = np.asarray(a)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name}: expected real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: NaN or infinite entries")
    if (arr < 0).any():
        raise ValueError(f"{name}: negative entries")
    if abs(np.sum(arr) - 1.0) > _TOL:
        raise ValueError(f"{name}: does not sum to 1")
    return arr


def _check_pair(p, q):
    p = _check_dist(p, "p")
    q = _check_dist(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"shape mismatch: p {p.shape} vs q {q.shape}")
    return p, q


def rejection_accept(p_x, q_x, u):
    p_x = _scalar(p_x, "p_x")
    q_x = _scalar(q_x, "q_x")
    u = _scalar(u, "u")
    if q_x <= 0:
        raise ValueError("q_x must be positive")
    if p_x < 0:
        raise ValueError("p_x must be non-negative")
    if not 0.0 <= u < 1.0:
        raise ValueError("u must lie in [0, 1)")
    return bool(u < p_x / q_x)


def acceptance_probability(p, q):
    p, q = _check_pair(p, q)
    return _ltr_sum(np.minimum(p, q))


def residual_distribution(p, q):
    p, q = _check_pair(p, q)
    num = np.maximum(p - q, 0.0)
    z = _ltr_sum(num)
    if z == 0.0:
        return p.copy()
    return num / z


def speculative_step(p, q, x, u_accept, u_resample):
    p, q = _check_pair(p, q)
    n = p.shape[0]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"x must be an integer, got {x!r}")
    if not 0 <= x < n:
        raise ValueError(f"x = {x} not in [0, {n})")
    if q[x] == 0:
        raise ValueError(f"q[{x}] is 0")
    if rejection_accept(p[x], q[x], u_accept):
        return int(x), True
    res = residual_distribution(p, q)
    return int(sample_categorical(res, u_resample)), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    p, q = _check_pair(p, q)
    m = _scalar(m, "m")
    if m < 1.0:
        raise ValueError("m must be at least 1")
    if np.any(p > m * q):
        raise ValueError("envelope violated: p_i > m * q_i for some i")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, (int, np.integer)):
        raise ValueError("max_tries must be an integer")
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    for tries in range(1, int(max_tries) + 1):
        x = sample_categorical(q, rng.uniform())
        u = rng.uniform()
        if u < p[x] / (m * q[x]):
            return int(x), tries
    raise RuntimeError(f"no proposal accepted in {max_tries} tries")
