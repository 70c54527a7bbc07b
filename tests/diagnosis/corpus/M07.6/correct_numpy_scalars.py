# expect: correct
# style: numpy throughout, returns numpy scalars (np.bool_, np.float64, np.int64); sums via a float64 accumulator loop
# bug: none: np.bool_ / np.float64 / np.int64 compare equal to bool / float / int (contract: numpy scalars are numbers)
import numpy as np

from tinyllm.prob.categorical import sample_categorical


def _acc(a):
    s = np.float64(0.0)
    for i in range(a.shape[0]):
        s = s + a[i]
    return s


def _real(v, what):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ValueError(f"{what} is not a real number: {v!r}")
    v = np.float64(v)
    if not np.isfinite(v):
        raise ValueError(f"{what} is not finite")
    return v


def _dist(a, what):
    arr = np.asarray(a)
    if arr.dtype.kind not in "iuf" or arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{what} is not a non-empty 1-D array of real numbers")
    arr = np.array(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{what} has negative or non-finite entries")
    if np.abs(_acc(arr) - 1.0) > 1e-9:
        raise ValueError(f"{what} does not sum to one")
    return arr


def _dists(p, q):
    p, q = _dist(p, "p"), _dist(q, "q")
    if p.shape != q.shape:
        raise ValueError("p and q differ in shape")
    return p, q


def rejection_accept(p_x, q_x, u):
    p_x, q_x, u = _real(p_x, "p_x"), _real(q_x, "q_x"), _real(u, "u")
    if q_x <= 0:
        raise ValueError("q_x <= 0")
    if p_x < 0:
        raise ValueError("p_x < 0")
    if u < 0 or u >= 1:
        raise ValueError("u not in [0, 1)")
    return np.less(u, np.divide(p_x, q_x))


def acceptance_probability(p, q):
    p, q = _dists(p, q)
    return _acc(np.minimum(p, q))


def residual_distribution(p, q):
    p, q = _dists(p, q)
    r = np.maximum(p - q, 0.0)
    z = _acc(r)
    if z == 0:
        return p
    return r / z


def speculative_step(p, q, x, u_accept, u_resample):
    p, q = _dists(p, q)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError("x is not an integer")
    if x < 0 or x >= p.shape[0]:
        raise ValueError("x outside the vocabulary")
    if q[x] == 0:
        raise ValueError("q[x] == 0")
    ok = rejection_accept(p[x], q[x], u_accept)
    if ok:
        return np.int64(x), ok
    return np.int64(sample_categorical(residual_distribution(p, q), u_resample)), ok


def rejection_sample(p, q, m, rng, max_tries=10000):
    p, q = _dists(p, q)
    m = _real(m, "m")
    if m < 1:
        raise ValueError("m < 1")
    if np.any(p > m * q):
        raise ValueError("p > m q somewhere")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, (int, np.integer)):
        raise ValueError("max_tries not an integer")
    if max_tries < 1:
        raise ValueError("max_tries < 1")
    for t in np.arange(1, max_tries + 1):
        x = sample_categorical(q, rng.uniform())
        u = np.float64(rng.uniform())
        if u < p[x] / (m * q[x]):
            return np.int64(x), t
    raise RuntimeError("no acceptance")
