"""M07.6 in plain Python: distributions as lists of floats, every sum and check a written-out loop.

A hidden correct implementation (see ``harness.own_tests.alternatives``). Legitimate differences from the
reference: its own argument checks (other messages, another order among them), ``p`` and ``q``
kept as Python lists, the residual built entry by entry, ``sample_categorical`` reached through
its module rather than imported by name. A bad number is a ValueError; an argument that is not a
number at all (None, a string) is a TypeError, as idiomatic Python raises it and as the contract
allows; a number of the wrong kind (a bool, a float draft id) is a ValueError.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from tinyllm.prob import categorical

TOLERANCE = 1e-9


def _real(what: str, value: object) -> float:
    if not isinstance(value, numbers.Number):
        raise TypeError(f"{what} is not a number: {value!r}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} is not a real number: {value!r}")
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{what} is {value!r}; it must be finite")
    return value


def _uniform(what: str, value: object) -> float:
    value = _real(what, value)
    if value < 0.0 or value >= 1.0:
        raise ValueError(f"{what} = {value!r} is not a uniform in [0, 1)")
    return value


def _distribution(what: str, values: object) -> list[float]:
    """``values`` as a list of floats, or ValueError if it is not a distribution."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):
        raise ValueError(f"{what} is not an array of numbers") from None
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"{what} must be a non-empty vector (shape {raw.shape})")
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{what} holds {raw.dtype} values, not real numbers")
    out, total = [], 0.0
    for v in raw.tolist():
        v = float(v)
        if not 0.0 <= v < math.inf:
            raise ValueError(f"{what} has the entry {v!r}; entries must be finite and >= 0")
        out.append(v)
        total += v
    if not abs(total - 1.0) <= TOLERANCE:
        raise ValueError(f"{what} adds up to {total!r}, not 1")
    return out


def _two(p: object, q: object) -> tuple[list[float], list[float]]:
    p_list, q_list = _distribution("p", p), _distribution("q", q)
    if len(p_list) != len(q_list):
        raise ValueError(f"p has {len(p_list)} ids but q has {len(q_list)}")
    return p_list, q_list


def rejection_accept(p_x, q_x, u):
    u = _uniform("u", u)
    q_x = _real("q_x", q_x)
    p_x = _real("p_x", p_x)
    if not q_x > 0.0:
        raise ValueError("q_x must be positive: the draft could not have been proposed")
    if p_x < 0.0:
        raise ValueError("p_x must not be negative")
    return u < p_x / q_x


def acceptance_probability(p, q):
    p_list, q_list = _two(p, q)
    alpha = 0.0
    for i in range(len(p_list)):
        alpha += min(p_list[i], q_list[i])
    return alpha


def _residual(p_list: list[float], q_list: list[float]) -> np.ndarray:
    numerators = []
    for a, b in zip(p_list, q_list, strict=True):
        numerators.append(a - b if a > b else 0.0)
    z = 0.0
    for v in numerators:
        z += v
    if z == 0.0:
        return np.array(p_list, dtype=np.float64)
    return np.array([v / z for v in numerators], dtype=np.float64)


def residual_distribution(p, q):
    return _residual(*_two(p, q))


def speculative_step(p, q, x, u_accept, u_resample):
    p_list, q_list = _two(p, q)
    if not isinstance(x, numbers.Number):
        raise TypeError(f"the draft x must be an integer id, not {x!r}")
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise ValueError(f"the draft x must be an integer id, not {x!r}")
    x = int(x)
    if x < 0 or x >= len(p_list):
        raise ValueError(f"the draft x = {x} is not one of the {len(p_list)} ids")
    if q_list[x] == 0.0:
        raise ValueError(f"q gives the draft x = {x} probability 0")
    if rejection_accept(p_list[x], q_list[x], u_accept):
        return x, True
    token = categorical.sample_categorical(_residual(p_list, q_list), u_resample)
    return token, False


def rejection_sample(p, q, m, rng, max_tries=10000):
    p_list, q_list = _two(p, q)
    if not isinstance(max_tries, numbers.Number):
        raise TypeError(f"max_tries must be an integer, not {max_tries!r}")
    if isinstance(max_tries, bool) or not isinstance(max_tries, numbers.Integral):
        raise ValueError(f"max_tries must be an integer, not {max_tries!r}")
    if max_tries < 1:
        raise ValueError("max_tries must be at least 1")
    m = _real("m", m)
    if m < 1.0:
        raise ValueError(f"the envelope m = {m!r} is below 1")
    for i in range(len(p_list)):
        if p_list[i] > m * q_list[i]:
            raise ValueError(f"m = {m!r} is not an envelope: p[{i}] > m * q[{i}]")
    tries = 0
    while tries < max_tries:
        tries += 1
        x = categorical.sample_categorical(q_list, rng.uniform())
        u = rng.uniform()
        if u < p_list[x] / (m * q_list[x]):
            return x, tries
    raise RuntimeError(f"{max_tries} tries and nothing accepted")
