# expect: ol pitfalls 3, 6
# diagnosis-misses: the tolerance test fails first on its valid cases, where the divided CDF (pitfall 3) answers; the loose tolerance is never reached
# style: numpy one-liner-ish; "renormalise to be safe"
# bug: the sum is checked with np.isclose's loose defaults, and the CDF is divided by its total
import numpy as np


def sample_categorical(probs, u):
    p = np.asarray(probs)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty 1-D numeric array")
    p = p.astype(np.float64)
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    c = np.cumsum(p)
    if not np.isclose(c[-1], 1.0):
        raise ValueError("probs must sum to 1")
    if np.ndim(u) != 0 or np.asarray(u).dtype.kind not in "iuf" or not (0 <= float(u) < 1):
        raise ValueError("u must be in [0, 1)")
    c /= c[-1]
    i = int(np.searchsorted(c, float(u), side="right"))
    return i if i < p.size else int(np.flatnonzero(p)[-1])
