"""M07.6 contract: rejection sampling, the acceptance test and the residual distribution.

Rules shared by every function taking ``p`` and ``q``:
    - ValueError if ``p`` or ``q`` is not a distribution or if their shapes differ. A
      distribution (as ``categorical.pyi`` defines it) is a non-empty 1-D array-like of finite,
      non-negative numbers whose left-to-right float64 sum is within 1e-9 of 1:
      ``abs(total - 1) <= 1e-9``, on both sides, ``total`` added one by one over ascending ids.
      Exactly 1.0 is not required (``[0.1] * 10`` sums to 0.9999999999999999 and is valid), and
      ``np.isclose``'s default tolerances (relative 1e-5) are far too loose;
    - ``-0.0`` is zero, not a negative number (``-0.0 < 0`` is False): a valid entry of ``p`` or
      ``q``, a valid ``p_x`` and a valid uniform (``u``, ``u_accept``, ``u_resample``), answered
      exactly as ``0.0`` is. A sign-bit test (``math.copysign``, ``np.signbit``) is not a
      negativity test;
    - no function modifies its arguments;
    - sums are left-to-right float64 loops over ascending ids: not numpy's pairwise ``np.sum``,
      not ``math.fsum``, not builtin ``sum()`` on Python 3.12+ (which is compensated); bit parity
      with the Rust port L10.8, see ``spec/sampling.md``;
    - arithmetic is float64 throughout: no float32 or bfloat16 ratio, residual or sum;
    - numpy scalars are accepted wherever a Python number is;
    - an argument that is not a number at all (None, a string, any other object) raises
      TypeError or ValueError, either one (``math.isfinite(None)`` raises TypeError, and that is
      fine); a number that breaks a rule (NaN, infinite, out of range, a bool or a float where
      an integer is required) raises ValueError. Where a probability or a uniform goes, a bool
      may be taken as the number it is (``True`` is 1) or refused with ValueError or TypeError;
      a bool ``max_tries`` likewise (``operator.index(True)`` is 1). A non-integer ``max_tries``
      (2.5, 2.0) may raise TypeError (as ``range(2.5)`` does) or ValueError;
    - entries of ``p`` and ``q`` given as strings that numpy reads as numbers may be converted
      (``np.asarray(p, dtype=np.float64)`` reads ``"0.5"`` as 0.5, and every answer is then the
      number's) or refused with TypeError or ValueError: either is right. A string where a single
      number goes (``u``, ``m``, ``x``) is never converted: TypeError or ValueError.
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tinyllm.prob.categorical import UniformSource

def rejection_accept(p_x: float, q_x: float, u: float) -> bool:
    """Whether ``u < p_x / q_x``, strictly: probability exactly ``min(1, p_x / q_x)``.

    Boundary rules:
        - ``u == p_x / q_x`` rejects (so ``p_x == 0`` never accepts, not even at ``u == 0``);
        - ``p_x >= q_x`` (ratio >= 1) accepts every ``u`` in [0, 1).

    Raises:
        ValueError: ``q_x <= 0`` (a draft with proposal probability 0 cannot have been drawn).
        ValueError: ``p_x < 0`` (``-0.0`` is not below 0: it is a valid ``p_x``, as ``u = -0.0`` is
            a valid uniform).
        ValueError: ``u`` outside [0, 1).
        ValueError: any argument is NaN or infinite.
        TypeError or ValueError: any argument is not a number (None, a string).
    """

def acceptance_probability(p: ArrayLike, q: ArrayLike) -> float:
    """``alpha = sum_i min(p_i, q_i)`` as a left-to-right float64 loop; ``alpha = 1 - TV(p, q)``.

    1 (up to rounding) when ``p == q``; 0 when the supports are disjoint. The sum is returned as
    it is, never clipped: where its rounding takes it above 1 the result is above 1
    (``p == q == [1/9] * 9`` gives 1.0000000000000002, not 1.0), so that the Rust port, which
    adds the same way, reports the same bits.

    Raises:
        ValueError: ``p`` or ``q`` is not a distribution, or their shapes differ.
    """

def residual_distribution(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64]:
    """``max(0, p_i - q_i) / Z``, ``Z`` the left-to-right float64 sum of the numerators.

    ``Z == 1 - alpha`` up to rounding. When ``Z == 0`` (for example ``p == q``) the result is a
    new float64 array equal to ``p``: never the caller's object, never sharing its memory. Only
    ``Z == 0`` exactly: any ``Z > 0``, however small (``p`` and ``q`` one ULP apart), is
    divided out, with no tolerance that returns ``p`` instead. With disjoint supports the
    residual is ``p`` (normalized by its own sum).

    Raises:
        ValueError: ``p`` or ``q`` is not a distribution, or their shapes differ.
    """

def speculative_step(
    p: ArrayLike, q: ArrayLike, x: int, u_accept: float, u_resample: float
) -> tuple[int, bool]:
    """Verify one draft token ``x ~ q`` against the target ``p``. Draws nothing.

    If ``rejection_accept(p[x], q[x], u_accept)``: ``(x, True)``, and ``u_resample`` is not read
    at all (not even validated). Otherwise
    ``(sample_categorical(residual_distribution(p, q), u_resample), False)``.
    The output id is distributed exactly as ``p`` when ``x ~ q`` and the uniforms are independent.

    Raises:
        ValueError: ``p`` or ``q`` is not a distribution, or their shapes differ.
        ValueError: ``x`` is not an integer (a bool is not; numpy integers are) in [0, n).
        TypeError or ValueError: ``x`` is not a number at all (None, a string).
        ValueError: ``q[x] == 0``.
        ValueError: ``u_accept`` is not in [0, 1) or not finite (as ``rejection_accept``).
        ValueError: on rejection only, ``u_resample`` is not in [0, 1) or not finite.
    """

def rejection_sample(
    p: ArrayLike, q: ArrayLike, m: float, rng: UniformSource, max_tries: int = 10000
) -> tuple[int, int]:
    """Von Neumann's sampler: returns ``(x, tries)``, ``x ~ p``, ``tries`` counted from 1.

    Each try draws exactly two uniforms from ``rng``, the proposal first:
    ``x = sample_categorical(q, rng.uniform())``, then ``u = rng.uniform()``; accept when
    ``u < p_x / (m * q_x)`` (strictly). ``k`` tries consume ``2k`` uniforms. The number of tries
    is geometric with mean ``m``.

    Boundary rules:
        - ``p_i == m * q_i`` satisfies the envelope;
        - ``m == 1`` is allowed (the envelope then demands ``p_i <= q_i`` for every ``i``).

    Raises:
        ValueError: ``p`` or ``q`` is not a distribution, or their shapes differ.
        ValueError: ``m < 1``, or ``m`` is NaN or infinite.
        ValueError: ``p_i > m * q_i`` for some ``i`` (the envelope fails; this includes
            ``q_i == 0 < p_i``).
        ValueError: ``max_tries < 1`` (or not an integer).
        TypeError or ValueError: ``m`` or ``max_tries`` is not a number at all (None, a string).
        RuntimeError: no try accepts within ``max_tries`` tries (after ``2 * max_tries`` draws).

    The argument checks happen before the first draw: a ValueError consumes no uniform.
    """
