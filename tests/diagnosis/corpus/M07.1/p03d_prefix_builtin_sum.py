# expect: ol pitfall 3 (python >= 3.12)
# style: plain; builtin sum() of each prefix
# bug: I take c_i = sum(vals[:i + 1]); builtin sum of floats is compensated (Neumaier) from Python 3.12 on
import math

import numpy as np


def _check(probs, u):
    if isinstance(probs, np.ndarray) and probs.ndim != 1:
        raise ValueError("probs must be 1-D")
    vals = []
    for p in list(probs):
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer, np.floating)):
            raise ValueError("probs must contain real numbers")
        p = float(p)
        if not math.isfinite(p) or p < 0:
            raise ValueError("probs must be finite and non-negative")
        vals.append(p)
    if not vals:
        raise ValueError("probs is empty")
    total = 0.0
    for p in vals:
        total += p
    if abs(total - 1.0) > 1e-9:
        raise ValueError("probs does not sum to 1")
    if isinstance(u, (bool, np.bool_)) or not isinstance(u, (int, float, np.integer, np.floating)):
        raise ValueError("u must be a real number")
    u = float(u)
    if not (0.0 <= u < 1.0):
        raise ValueError("u must be in [0, 1)")
    return vals, u



def sample_categorical(probs, u):
    vals, u = _check(probs, u)
    last = -1
    for i, p in enumerate(vals):
        if p > 0:
            last = i
            if u < sum(vals[: i + 1]):
                return i
    return last
