# expect: ol pitfall 2
# style: numpy one-liner: searchsorted clipped to n - 1
# bug: I clip searchsorted to n - 1 for the rounding case, which lands on a trailing zero id
import numpy as np


def sample_categorical(probs, u):
    p = np.asarray(probs)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty 1-D array of numbers")
    p = p.astype(np.float64)
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("probs must be finite and >= 0")
    c = np.cumsum(p)
    if abs(c[-1] - 1.0) > 1e-9:
        raise ValueError("probs must sum to 1")
    if np.ndim(u) != 0 or np.asarray(u).dtype.kind not in "iuf" or not (0 <= float(u) < 1):
        raise ValueError("u must be a number in [0, 1)")
    return int(min(np.searchsorted(c, float(u), side="right"), p.size - 1))
