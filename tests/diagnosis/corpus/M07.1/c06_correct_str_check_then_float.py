# expect: correct
# style: blacklist validation: None / str / bool / complex rejected by name, then float()
# bug: none for real inputs (a real str or None is ValueError; ints, floats and numpy scalars pass)
import math

import numpy as np


def _real(x, what):
    if x is None or isinstance(x, (str, bytes, bool, np.bool_, complex, np.complexfloating)):
        raise ValueError(f"{what}: {x!r} is not a real number")
    if isinstance(x, (list, tuple, np.ndarray)):
        raise ValueError(f"{what}: nested sequences are not allowed (probs must be 1-D)")
    return float(x)


def sample_categorical(probs, u):
    if isinstance(probs, (str, bytes)) or probs is None:
        raise ValueError("probs must be a 1-D array-like of numbers")
    if isinstance(probs, np.ndarray) and probs.ndim != 1:
        raise ValueError("probs must be 1-D")
    ps = [_real(x, "probs") for x in probs]
    if not ps:
        raise ValueError("probs is empty")
    total = 0.0
    for x in ps:
        if not math.isfinite(x) or x < 0:
            raise ValueError("probs must be finite and non-negative")
        total += x
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"probs sums to {total}")
    u = _real(u, "u")
    if not (math.isfinite(u) and 0.0 <= u < 1.0):
        raise ValueError(f"u = {u} is not in [0, 1)")
    c = 0.0
    last = -1
    for i, x in enumerate(ps):
        c += x
        if x > 0:
            last = i
            if u < c:
                return i
    return last
