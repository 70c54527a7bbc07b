# expect: ol pitfall 5
# style: plain; checks shape, types, finiteness and the sum, but not the sign
# bug: I forgot to reject negative entries, so [1.5, -0.5] sums to 1 and is sampled silently
import math

import numpy as np


def sample_categorical(probs, u):
    if isinstance(probs, np.ndarray) and probs.ndim != 1:
        raise ValueError("probs must be one-dimensional")
    vals = []
    for p in probs:
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer, np.floating)):
            raise ValueError(f"not a real number: {p!r}")
        vals.append(float(p))
    if len(vals) == 0:
        raise ValueError("empty distribution")
    if any(math.isnan(p) or math.isinf(p) for p in vals):
        raise ValueError("probabilities must be finite")
    total = 0.0
    for p in vals:
        total += p
    if abs(total - 1.0) > 1e-9:
        raise ValueError("probabilities must sum to 1")
    if isinstance(u, (bool, np.bool_)) or not isinstance(u, (int, float, np.integer, np.floating)):
        raise ValueError("u must be a real number")
    u = float(u)
    if not 0.0 <= u < 1.0:
        raise ValueError("u must be in [0, 1)")
    c = 0.0
    last = -1
    for i, p in enumerate(vals):
        c += p
        if p > 0:
            last = i
            if u < c:
                return i
    return last
