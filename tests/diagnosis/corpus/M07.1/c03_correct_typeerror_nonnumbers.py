# expect: correct
# style: plain; TypeError for non-numbers (None, strings), ValueError for bad numbers
# bug: none (the contract says ValueError; the brief allows TypeError for a non-number argument)
# fails-today: sample_categorical([0.5, 0.5], None) raising TypeError is reported as ol pitfall 5 (the harness wants ValueError)
import math

import numpy as np

_NUMBER = (int, float, np.integer, np.floating)


def sample_categorical(probs, u):
    if isinstance(u, (bool, np.bool_)):
        raise ValueError("u must be a real number, not a bool")
    if u is None or isinstance(u, (str, bytes)) or not isinstance(u, _NUMBER):
        raise TypeError(f"u must be a number, not {type(u).__name__}")
    u = float(u)
    if math.isnan(u) or u < 0 or u >= 1:
        raise ValueError(f"u={u} is not in [0, 1)")

    if isinstance(probs, np.ndarray):
        if probs.ndim != 1:
            raise ValueError(f"probs has {probs.ndim} dimensions, expected 1")
        seq = probs.tolist()
    elif isinstance(probs, (list, tuple)):
        seq = list(probs)
    else:
        raise TypeError(f"probs must be a list, tuple or array, not {type(probs).__name__}")
    if len(seq) == 0:
        raise ValueError("probs must not be empty")
    for p in seq:
        if isinstance(p, (list, tuple)):
            raise ValueError("probs must be 1-D")
        if isinstance(p, (bool, np.bool_)):
            raise ValueError("probs entries must be real numbers, not bools")
        if p is None or isinstance(p, (str, bytes)) or not isinstance(p, _NUMBER):
            raise TypeError(f"probs entries must be numbers, got {type(p).__name__}")
    seq = [float(p) for p in seq]
    s = 0.0
    for p in seq:
        if p != p or p in (math.inf, -math.inf):
            raise ValueError("probs contains NaN or inf")
        if p < 0:
            raise ValueError("probs contains a negative entry")
        s += p
    if not abs(s - 1) <= 1e-9:
        raise ValueError(f"probs sums to {s}")

    acc = 0.0
    last = None
    for i, p in enumerate(seq):
        acc += p
        if p > 0:
            last = i
            if u < acc:
                return i
    return last
