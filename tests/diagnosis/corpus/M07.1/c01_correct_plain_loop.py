# expect: correct
# style: plain loops, numbers.Real checks, validate everything before sampling
# bug: none
import math
import numbers

import numpy as np


def _is_real(x):
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def sample_categorical(probs, u):
    if isinstance(probs, np.ndarray):
        if probs.ndim != 1:
            raise ValueError("probs must be 1-D")
        values = probs.tolist()
    else:
        try:
            values = list(probs)
        except TypeError:
            raise ValueError("probs must be a 1-D sequence of numbers") from None
    if not values:
        raise ValueError("probs is empty")
    total = 0.0
    clean = []
    for p in values:
        if not _is_real(p):
            raise ValueError(f"probs holds a non-real entry {p!r}")
        p = float(p)
        if not math.isfinite(p) or p < 0.0:
            raise ValueError(f"probs holds {p}, not a finite non-negative number")
        clean.append(p)
        total += p
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"probs sums to {total!r}, not 1")
    if not _is_real(u):
        raise ValueError(f"u must be a real number, got {u!r}")
    u = float(u)
    if not (0.0 <= u < 1.0):  # also false for NaN
        raise ValueError(f"u must be in [0, 1), got {u!r}")

    c = 0.0
    last_positive = -1
    for i, p in enumerate(clean):
        c += p
        if p > 0.0:
            last_positive = i
            if u < c:
                return i
    return last_positive
