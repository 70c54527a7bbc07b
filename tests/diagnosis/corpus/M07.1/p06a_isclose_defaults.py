# expect: ol pitfall 6
# style: numpy cumsum + searchsorted; np.isclose for the sum check
# bug: I check the sum with np.isclose(total, 1.0), whose default tolerances are far looser than 1e-9
import numpy as np


def sample_categorical(probs, u):
    p = np.asarray(probs)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty 1-D array of numbers")
    p = p.astype(np.float64)
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    c = np.cumsum(p)
    if not np.isclose(c[-1], 1.0):
        raise ValueError("probs must sum to 1")
    if np.ndim(u) != 0 or np.asarray(u).dtype.kind not in "iuf" or not (0 <= float(u) < 1):
        raise ValueError("u must be in [0, 1)")
    i = int(np.searchsorted(c, float(u), side="right"))
    if i == p.size:
        i = int(np.flatnonzero(p)[-1])
    return i
