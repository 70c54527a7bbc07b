# expect: ol pitfalls 4, 5
# style: numpy; validates probs only, returns searchsorted directly
# bug: u is never validated and there is no rounding-tail fallback (searchsorted can return n)
import numpy as np


def sample_categorical(probs, u):
    p = np.asarray(probs)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty 1-D numeric array")
    p = p.astype(np.float64)
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    c = np.cumsum(p)
    if abs(c[-1] - 1.0) > 1e-9:
        raise ValueError("probs must sum to 1")
    return int(np.searchsorted(c, u, side="right"))
