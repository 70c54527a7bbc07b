# expect: ol pitfall 5
# style: numpy; validates probs carefully, trusts u
# bug: I never validate u, so u = 1.0, -0.1 or NaN gets an answer
import numpy as np


def sample_categorical(probs, u):
    p = np.asarray(probs)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty 1-D array of numbers")
    p = p.astype(np.float64)
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    c = np.cumsum(p)
    if abs(c[-1] - 1.0) > 1e-9:
        raise ValueError("probs must sum to 1")
    i = int(np.searchsorted(c, float(u), side="right"))
    if i >= p.size:
        i = int(np.flatnonzero(p)[-1])
    return i
