"""The harness's PCG32 uniforms for a whole seed at once, as the integers ``k`` of ``u = k / 2**53``.

``HarnessPCG32`` steps an LCG ``s -> A s + c (mod 2**64)``; step ``i`` from the seeded state ``s0`` is
``A**i s0 + c (A**(i-1) + ... + 1)``, so with the two coefficient arrays (one Python loop per stream,
cached) every state of a seed is one numpy multiply-add (uint64 arithmetic wraps mod 2**64 as the
generator does). ``tests/audit`` checks the output against ``HarnessPCG32`` value for value.
"""

from __future__ import annotations

import functools

import numpy as np

from harness.uniforms import HarnessPCG32

_MULT = 6364136223846793005
_MASK64 = (1 << 64) - 1


@functools.lru_cache(maxsize=8)
def _coefficients(inc: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``(A**i, c (A**(i-1) + ... + 1))`` mod 2**64 for ``i < count``."""
    mult = np.empty(count, dtype=np.uint64)
    plus = np.empty(count, dtype=np.uint64)
    a, c = 1, 0
    for i in range(count):
        mult[i], plus[i] = a, c
        a = (a * _MULT) & _MASK64
        c = (c * _MULT + inc) & _MASK64
    return mult, plus


def u32_stream(seed: int, stream: int, count: int) -> np.ndarray:
    """The first ``count`` outputs of ``HarnessPCG32(seed, stream).next_u32()``."""
    gen = HarnessPCG32(seed, stream)
    mult, plus = _coefficients(gen._inc, count)
    with np.errstate(over="ignore"):
        old = mult * np.uint64(gen._state) + plus
    xorshifted = (((old >> np.uint64(18)) ^ old) >> np.uint64(27)) & np.uint64(0xFFFFFFFF)
    rot = old >> np.uint64(59)
    left = (np.uint64(32) - rot) & np.uint64(31)
    return ((xorshifted >> rot) | (xorshifted << left)) & np.uint64(0xFFFFFFFF)


def uniform_ks(seed: int, stream: int, count: int) -> np.ndarray:
    """The first ``count`` uniforms of ``HarnessPCG32(seed, stream).uniform()``, as ``k`` (int64)."""
    words = u32_stream(seed, stream, 2 * count).reshape(count, 2)
    high = (words[:, 0] >> np.uint64(5)).astype(np.int64)
    low = (words[:, 1] >> np.uint64(6)).astype(np.int64)
    return high * (1 << 26) + low
