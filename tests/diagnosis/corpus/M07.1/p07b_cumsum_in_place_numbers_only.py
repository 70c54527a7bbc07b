# expect: ol pitfall 7
# note: p07_cumsum_in_place.py with non-number probs refused (that file also answers ['0.5', '0.5'], a second bug)
# style: numpy; saves memory with cumsum(out=...)
# bug: I run np.cumsum(p, out=p) on np.asarray(probs), which is the caller's own float64 array
import numpy as np


def sample_categorical(probs, u):
    p = np.asarray(probs)
    if p.dtype.kind not in "iuf":
        raise ValueError("probs must hold real numbers")
    p = p.astype(np.float64, copy=False)
    if p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty 1-D array")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    positive = np.flatnonzero(p > 0)
    np.cumsum(p, out=p)
    if abs(p[-1] - 1.0) > 1e-9:
        raise ValueError("probs must sum to 1")
    if np.ndim(u) != 0 or np.asarray(u).dtype.kind not in "iuf" or not (0 <= float(u) < 1):
        raise ValueError("u must be in [0, 1)")
    i = int(np.searchsorted(p, float(u), side="right"))
    if i == p.size:
        i = int(positive[-1])
    return i
