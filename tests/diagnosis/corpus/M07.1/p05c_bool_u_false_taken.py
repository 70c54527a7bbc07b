# expect: ol pitfall 5
# style: plain loops, numbers.Real checks, math.isclose defaults (base: c07_correct_math_isclose_defaults.py)
# bug: u is checked with isinstance(u, numbers.Real) only, and a bool is a Real: u = True fails the range check (1 >= 1) by luck, but u = False is taken as 0.0 and answered
# caught-by: test_invalid_u_raises
# counterexample: sample_categorical([0.5, 0.5], False) returns 0; the contract raises TypeError or ValueError (a bool is not a
#   real number for u; u = True is refused here only by the range check)
"""M07.1: inverse-CDF sampling of a categorical distribution."""

import math
import numbers

import numpy as np


def _real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def sample_categorical(probs, u):
    if not isinstance(u, numbers.Real):
        raise TypeError(f"u must be a real number, got {type(u).__name__}")
    u = float(u)
    if not 0.0 <= u < 1.0:  # NaN fails this too
        raise ValueError(f"u = {u!r} is not in [0, 1)")
    if isinstance(probs, (str, bytes)) or np.ndim(probs) != 1:
        raise ValueError("probs must be a one-dimensional sequence of numbers")
    vals = []
    for i, v in enumerate(probs):
        if not _real(v):
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
