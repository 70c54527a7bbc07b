# expect: correct
# style: numpy: dtype-kind check, np.cumsum (sequential add.accumulate), searchsorted(side="right")
# bug: none
import numpy as np


def sample_categorical(probs, u):
    arr = np.asarray(probs)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"probs must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"probs must be a non-empty 1-D array, got shape {arr.shape}")
    p = arr.astype(np.float64)  # a copy; the caller's array is left alone
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    cdf = np.cumsum(p)  # left to right, one add at a time
    if abs(float(cdf[-1]) - 1.0) > 1e-9:
        raise ValueError(f"probs sums to {float(cdf[-1])!r}, not 1 within 1e-9")
    ua = np.asarray(u)
    if ua.ndim != 0 or ua.dtype.kind not in "iuf":
        raise ValueError("u must be a real scalar")
    u = float(ua)
    if not (np.isfinite(u) and 0.0 <= u < 1.0):
        raise ValueError(f"u must be a finite number in [0, 1), got {u!r}")
    i = int(np.searchsorted(cdf, u, side="right"))  # smallest i with u < cdf[i]
    if i == p.size:
        i = int(np.flatnonzero(p > 0)[-1])
    return i
