# expect: timeout
# style: while loop
# bug: my while loop never increments i when p_i is zero... or at all
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
    if np.ndim(u) != 0 or np.asarray(u).dtype.kind not in "iuf" or not (0 <= float(u) < 1):
        raise ValueError("u must be in [0, 1)")
    i = 0
    last = int(np.flatnonzero(p)[-1])
    while i < p.size:
        if p[i] > 0 and float(u) < c[i]:
            return i
    return last
