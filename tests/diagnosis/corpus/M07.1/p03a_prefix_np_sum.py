# expect: ol pitfall 3
# style: numpy; each prefix summed with np.sum (pairwise)
# bug: I build c_i as np.sum(p[:i + 1]), which numpy adds pairwise, not left to right
import numpy as np


def sample_categorical(probs, u):
    p = np.asarray(probs)
    if p.dtype.kind not in "iuf" or p.ndim != 1 or p.size == 0:
        raise ValueError("probs must be a non-empty 1-D array of numbers")
    p = p.astype(np.float64)
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("probs must be finite and >= 0")
    total = 0.0
    for x in p.tolist():
        total += x
    if abs(total - 1.0) > 1e-9:
        raise ValueError("probs must sum to 1")
    if np.ndim(u) != 0 or np.asarray(u).dtype.kind not in "iuf" or not (0 <= float(u) < 1):
        raise ValueError("u must be a number in [0, 1)")
    u = float(u)
    last = -1
    for i in range(p.size):
        if p[i] > 0:
            last = i
            if u < float(np.sum(p[: i + 1])):
                return i
    return last
