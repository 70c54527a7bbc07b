# expect: correct
# style: plain loops, numbers.Real checks, math.isclose defaults (base: c07_correct_math_isclose_defaults.py)
# bug: each entry is checked with isinstance(v, numbers.Real), which a Python bool passes: probs = [True, False] (or [0.5, False, 0.5]) is sampled as [1.0, 0.0] instead of raising
# relaxed (issue #14): categorical.pyi now lets a bool entry be taken as its number or refused
#   (np.asarray([True, 0.0]) is a float64 array the reference itself accepts), so this file is correct
"""M07.1: inverse-CDF sampling of a categorical distribution."""

import math
import numbers

import numpy as np


def _real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def sample_categorical(probs, u):
    if not _real(u):
        raise TypeError(f"u must be a real number, got {type(u).__name__}")
    u = float(u)
    if not 0.0 <= u < 1.0:  # NaN fails this too
        raise ValueError(f"u = {u!r} is not in [0, 1)")
    if isinstance(probs, (str, bytes)) or np.ndim(probs) != 1:
        raise ValueError("probs must be a one-dimensional sequence of numbers")
    vals = []
    for i, v in enumerate(probs):
        if not isinstance(v, numbers.Real):
            raise TypeError(f"probs[{i}] = {v!r} is not a real number")
        v = float(v)
        if not math.isfinite(v) or v < 0.0:
            raise ValueError(f"probs[{i}] = {v!r} is negative or not finite")
        vals.append(v)
    if not vals:
        raise ValueError("probs is empty")
    total = 0.0
    for v in vals:
        total += v
    if not math.isclose(total, 1.0):
        raise ValueError(f"probs sums to {total!r}, not 1")
    c = 0.0
    last = -1
    for i, v in enumerate(vals):
        c += v
        if v > 0.0:
            last = i
            if u < c:
                return i
    return last
