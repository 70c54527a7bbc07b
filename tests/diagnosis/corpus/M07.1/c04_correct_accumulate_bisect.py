# expect: correct
# style: itertools.accumulate + bisect_right, a ValueError subclass, tuples and numpy scalars accepted
# bug: none
import bisect
import itertools
import math
import operator

import numpy as np


class DistributionError(ValueError):
    pass


def _to_float(x, what):
    if isinstance(x, (bool, np.bool_)):
        raise DistributionError(f"{what}: booleans are not probabilities")
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    raise DistributionError(f"{what}: {x!r} is not a real number")


def sample_categorical(probs, u):
    if isinstance(probs, np.ndarray) and probs.ndim != 1:
        raise DistributionError("probs must be one-dimensional")
    try:
        items = list(probs)
    except TypeError as exc:
        raise DistributionError("probs must be a sequence") from exc
    ps = [_to_float(x, "probs") for x in items]
    if not ps:
        raise DistributionError("empty distribution")
    if any(not math.isfinite(x) or x < 0 for x in ps):
        raise DistributionError("probabilities must be finite and >= 0")
    cdf = list(itertools.accumulate(ps, operator.add))  # ((p0 + p1) + p2) + ...
    if math.fabs(cdf[-1] - 1.0) > 1e-9:
        raise DistributionError(f"probabilities add up to {cdf[-1]}")
    u = _to_float(u, "u")
    if not (math.isfinite(u) and 0.0 <= u < 1.0):
        raise DistributionError(f"u must lie in [0, 1), got {u}")

    i = bisect.bisect_right(cdf, u)  # first i with u < cdf[i]; p_i > 0 there by construction
    if i < len(ps):
        return i
    return max(j for j, x in enumerate(ps) if x > 0)
