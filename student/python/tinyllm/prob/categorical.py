"""M07.1 contract: inverse-CDF sampling of a categorical distribution from one uniform.

A *distribution* is a non-empty 1-D array-like of finite, non-negative real numbers whose
left-to-right float64 sum (added one by one over ascending ids, not numpy's pairwise ``np.sum``)
is within 1e-9 of 1. numpy scalars are accepted wherever a Python number is.
"""

# Written by `ol start M07.1`. Replace each `raise NotImplementedError` with
# your implementation; the rules are in the docstrings (the contract).

from __future__ import annotations

from typing import Protocol

from numpy.typing import ArrayLike

class UniformSource(Protocol):
    """Anything with ``uniform() -> float`` (``PCG32`` is one)."""

    def uniform(self) -> float:
        """The next uniform, a float in [0, 1). Each call consumes one uniform from the source."""

def sample_categorical(probs: ArrayLike, u: float) -> int:
    """The inverse CDF of ``probs`` at ``u``: an id in [0, n). Draws nothing; ``u`` is the draw.

    ``c_i`` is the running float64 sum of ``probs[0..i]``, added left to right. The result is the
    smallest id ``i`` with ``probs[i] > 0`` and ``u < c_i``.

    Boundary rules:
        - an id with probability 0 is never returned;
        - ``u`` exactly on a boundary ``c_i`` goes to the next id with positive probability;
        - if rounding leaves ``u >= c_{n-1}``, the last id with positive probability is returned.

    Raises:
        ValueError: ``probs`` is not a distribution (empty, not 1-D, NaN or infinite, negative,
            or a left-to-right sum more than 1e-9 away from 1).
        ValueError: ``u`` is a real number outside [0, 1) (NaN, infinite, < 0, >= 1).
        TypeError or ValueError: ``probs`` or one of its entries, or ``u``, is not a real number
            at all (None, a string such as "0.5", a complex number; ``u`` a bool). Either is
            accepted: Python raises TypeError for a wrong type (``math.isfinite(None)`` does), and
            a string must never be converted (``float("0.5")`` would hide it).

    Either way, as numpy's conversion of an array-like goes: an entry of ``probs`` that is a bool
    may be taken as the number it is (``True`` is 1, as ``np.asarray([True, 0.0])`` makes it) or
    refused with TypeError or ValueError. So may a real number of another type than int, float and
    numpy's (a ``fractions.Fraction``), as an entry of ``probs`` or as ``u``. Taken, it counts as
    its float64 value.

    ``probs`` is not modified.
    """
    raise NotImplementedError("sample_categorical is not implemented yet")
