# expect: correct
# style: numpy array, np.float64 running sum in an explicit loop, np.nonzero for the tail
# bug: none
import numpy as np


def sample_categorical(probs, u):
    try:
        p = np.array(probs, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as e:
        raise ValueError(f"probs is not an array of real numbers: {e}") from None
    src = np.asarray(probs)
    if src.dtype.kind not in "biuf" or src.dtype.kind == "b":
        raise ValueError("probs must contain real numbers")
    if p.ndim != 1 or len(p) == 0:
        raise ValueError("probs must be a non-empty vector")
    if np.isnan(p).any() or np.isinf(p).any() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    running = np.float64(0.0)
    cdf = np.empty_like(p)
    for k in range(len(p)):
        running = running + p[k]
        cdf[k] = running
    if not abs(running - 1.0) <= 1e-9:
        raise ValueError("probs must sum to 1 (within 1e-9)")
    if isinstance(u, (bool, np.bool_)) or not isinstance(u, (int, float, np.integer, np.floating)):
        raise ValueError("u must be a real number")
    u = np.float64(u)
    if not np.isfinite(u) or u < 0 or u >= 1:
        raise ValueError("u must be in [0, 1)")
    (positive,) = np.nonzero(p > 0)
    for k in positive:
        if u < cdf[k]:
            return int(k)
    return int(positive[-1])
