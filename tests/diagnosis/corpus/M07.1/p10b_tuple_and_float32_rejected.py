# expect: ol pitfall 10
# style: numpy; strict input types
# bug: I only accept a list or a float64 ndarray, so tuples and float32 arrays are rejected
import numpy as np


def sample_categorical(probs, u):
    if isinstance(probs, np.ndarray):
        if probs.dtype != np.float64:
            raise ValueError(f"probs must be float64, got {probs.dtype}")
    elif not isinstance(probs, list):
        raise ValueError(f"probs must be a list or an ndarray, got {type(probs).__name__}")
    p = np.array(probs)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty 1-D array of numbers")
    p = p.astype(np.float64)
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    c = np.cumsum(p)
    if abs(c[-1] - 1.0) > 1e-9:
        raise ValueError("probs must sum to 1")
    if np.ndim(u) != 0 or np.asarray(u).dtype.kind not in "iuf" or not (0 <= float(u) < 1):
        raise ValueError("u must be in [0, 1)")
    i = int(np.searchsorted(c, float(u), side="right"))
    if i == p.size:
        i = int(np.flatnonzero(p)[-1])
    return i
