"""M07.6 with numpy wherever the contract allows it, and numpy scalar results.

A hidden correct implementation (see ``harness.own_tests.alternatives``). Legitimate differences from the
reference: elementwise work in numpy (checks, minimum, residual numerators, the envelope and the
acceptance thresholds), results as numpy scalars (``numpy.bool_``, ``numpy.float64``,
``numpy.int64``), errors as ``ContractError``, a subclass of ValueError, with other messages,
and ``sample_categorical`` reached through its module. The two sums the contract fixes (alpha
and Z) are still left-to-right float64 folds over ascending ids, never ``np.sum``.
"""

from __future__ import annotations

import functools
import numbers
import operator

import numpy as np
from tinyllm.prob import categorical


class ContractError(ValueError):
    """An argument the contract rejects."""


def _fold(values: np.ndarray) -> float:
    """The left-to-right float64 sum over ascending ids (the contract's order)."""
    return functools.reduce(operator.add, values.tolist(), 0.0)


def _scalar(what: str, value: object) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ContractError(f"{what}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ContractError(f"{what}: expected a finite number, got {value!r}")
    return value


def _unit(what: str, value: object) -> float:
    value = _scalar(what, value)
    if not 0.0 <= value < 1.0:
        raise ContractError(f"{what}: expected a value in [0, 1), got {value!r}")
    return value


def _vector(what: str, values: object) -> np.ndarray:
    """A new float64 array, or ContractError if ``values`` is not a distribution."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise ContractError(f"{what}: not an array of numbers ({exc})") from None
    if raw.dtype.kind not in "iuf" or raw.ndim != 1 or raw.size == 0:
        raise ContractError(f"{what}: expected a non-empty 1-D array of real numbers, got "
                            f"dtype {raw.dtype} and shape {raw.shape}")
    arr = raw.astype(np.float64)  # a copy: never the caller's memory
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr >= 0.0)))
    if bad.size:
        raise ContractError(f"{what}[{bad[0]}] = {arr[bad[0]]!r} is not a probability")
    total = _fold(arr)
    if not abs(total - 1.0) <= 1e-9:
        raise ContractError(f"{what}: the entries sum to {total!r}, not 1")
    return arr


def _pair(p: object, q: object) -> tuple[np.ndarray, np.ndarray]:
    p_arr, q_arr = _vector("p", p), _vector("q", q)
    if p_arr.shape != q_arr.shape:
        raise ContractError(f"p and q differ in shape: {p_arr.shape} vs {q_arr.shape}")
    return p_arr, q_arr


def rejection_accept(p_x, q_x, u):
    p_x, q_x = _scalar("p_x", p_x), _scalar("q_x", q_x)
    if q_x <= 0.0:
        raise ContractError(f"q_x: a proposed draft has q_x > 0, got {q_x!r}")
    if p_x < 0.0:
        raise ContractError(f"p_x: a probability is >= 0, got {p_x!r}")
    return np.less(_unit("u", u), p_x / q_x)


def acceptance_probability(p, q):
    p_arr, q_arr = _pair(p, q)
    return np.float64(_fold(np.minimum(p_arr, q_arr)))


def _residual(p_arr: np.ndarray, q_arr: np.ndarray) -> np.ndarray:
    numerators = np.where(p_arr > q_arr, p_arr - q_arr, 0.0)
    z = _fold(numerators)
    if z == 0.0:
        return p_arr  # our own copy, made by _vector
    return numerators / z


def residual_distribution(p, q):
    return _residual(*_pair(p, q))


def speculative_step(p, q, x, u_accept, u_resample):
    p_arr, q_arr = _pair(p, q)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise ContractError(f"x: expected an integer id, got {type(x).__name__}")
    x = int(x)
    if not 0 <= x < p_arr.size:
        raise ContractError(f"x: expected an id in [0, {p_arr.size}), got {x}")
    if not q_arr[x] > 0.0:
        raise ContractError(f"x: q[{x}] = 0, so the draft cannot have proposed it")
    if rejection_accept(p_arr[x], q_arr[x], u_accept):
        return np.int64(x), np.bool_(True)
    token = categorical.sample_categorical(_residual(p_arr, q_arr), u_resample)
    return np.int64(token), np.bool_(False)


def rejection_sample(p, q, m, rng, max_tries=10000):
    p_arr, q_arr = _pair(p, q)
    m = _scalar("m", m)
    if m < 1.0:
        raise ContractError(f"m: an envelope is >= 1, got {m!r}")
    if isinstance(max_tries, (bool, np.bool_)) or not isinstance(max_tries, numbers.Integral):
        raise ContractError(f"max_tries: expected an integer, got {type(max_tries).__name__}")
    if max_tries < 1:
        raise ContractError(f"max_tries: expected at least 1, got {max_tries}")
    scaled = m * q_arr
    broken = np.flatnonzero(p_arr > scaled)
    if broken.size:
        raise ContractError(f"m = {m!r} is no envelope: p[{broken[0]}] > m * q[{broken[0]}]")
    # The acceptance threshold of every id that can be proposed, p_x / (m q_x), at once.
    thresholds = np.divide(p_arr, scaled, out=np.zeros_like(p_arr), where=scaled > 0.0)
    for tries in range(1, int(max_tries) + 1):
        x = categorical.sample_categorical(q_arr, rng.uniform())
        if rng.uniform() < thresholds[x]:
            return np.int64(x), tries
    raise RuntimeError(f"no acceptance within max_tries = {max_tries}")
