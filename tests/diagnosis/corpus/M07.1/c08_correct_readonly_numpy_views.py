# expect: correct
# style: numpy: np.asarray view of the caller's array (read-only ones too), dtype-kind check, float64 values by astype (a new array), the CDF filled by a left-to-right loop, searchsorted(side="right") on it
# bug: none: nothing is written into the caller's array; a list is screened entry by entry first, because np.asarray([0.5, True]) would turn the bool into 1.0
"""Categorical sampling by the inverse CDF (M07.1)."""

import numbers

import numpy as np


def sample_categorical(probs, u):
    if isinstance(u, (bool, np.bool_)) or not isinstance(u, numbers.Real):
        raise ValueError(f"u must be a real number, got {u!r}")
    u = float(u)
    if not (0.0 <= u < 1.0):
        raise ValueError(f"u must be in [0, 1), got {u!r}")
    if not isinstance(probs, np.ndarray):
        if isinstance(probs, (str, bytes)):
            raise ValueError("probs must be an array of numbers, not a string")
        try:
            items = list(probs)
        except TypeError:
            raise ValueError(f"probs must be a 1-D array-like, got {probs!r}") from None
        for v in items:
            if isinstance(v, (bool, np.bool_, str, bytes)) or v is None:
                raise ValueError(f"probs holds {v!r}, which is not a real number")
    try:
        arr = np.asarray(probs)
    except ValueError as exc:
        raise ValueError(f"probs is not a 1-D array of numbers: {exc}") from exc
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"probs must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"probs must be a non-empty 1-D array, got shape {arr.shape}")
    vals = arr.astype(np.float64)  # a new array: the caller's stays untouched
    if not np.isfinite(vals).all() or (vals < 0).any():
        raise ValueError("probs must be finite and non-negative")
    cdf = np.empty_like(vals)
    running = 0.0
    for i, v in enumerate(vals.tolist()):
        running += v
        cdf[i] = running
    if abs(running - 1.0) > 1e-9:
        raise ValueError(f"probs sums to {running!r}, not 1")
    i = int(np.searchsorted(cdf, u, side="right"))  # smallest i with u < c_i: probs[i] > 0
    if i == len(cdf):
        i = int(np.flatnonzero(vals > 0)[-1])  # rounding tail: last positive id
    return i
