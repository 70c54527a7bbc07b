# expect: ol pitfall 4
# style: numpy one-liner, no fallback
# bug: I return searchsorted as is, which gives n (out of range) when u >= c_(n-1)
import numpy as np


def sample_categorical(probs, u):
    p = np.asarray(probs)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise ValueError("need a non-empty 1-D array of real numbers")
    p = p.astype(np.float64)
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probabilities must be finite and non-negative")
    c = np.cumsum(p)
    if abs(c[-1] - 1) > 1e-9:
        raise ValueError("probabilities must sum to 1")
    if np.ndim(u) != 0 or np.asarray(u).dtype.kind not in "iuf" or not (0 <= float(u) < 1):
        raise ValueError("u must be in [0, 1)")
    return int(np.searchsorted(c, float(u), side="right"))
