"""M06.3: the PCG32 generator (XSH-RR 64/32) and its float64 uniforms.

Seeding follows the PCG reference ``pcg32_srandom_r(seed, stream)``. ``uniform()`` builds a double
from two 32-bit words, the first word drawn first, as numpy does: a multiple of 2**-53 in [0, 1).
"""

from __future__ import annotations

import numbers

_MASK64 = (1 << 64) - 1
_MULTIPLIER = 6364136223846793005


def _check_u64(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an int in [0, 2**64), got {type(value).__name__}")
    value = int(value)
    if not 0 <= value <= _MASK64:
        raise ValueError(f"{name} must be an int in [0, 2**64), got {value}")
    return value


class PCG32:
    """A PCG32 generator: 64-bit LCG state, XSH-RR output permutation."""

    def __init__(self, seed: int, stream: int = 54) -> None:
        seed = _check_u64("seed", seed)
        stream = _check_u64("stream", stream)
        self._state = 0
        self._inc = ((stream << 1) | 1) & _MASK64
        self._step()
        self._state = (self._state + seed) & _MASK64
        self._step()

    def _step(self) -> None:
        self._state = (self._state * _MULTIPLIER + self._inc) & _MASK64

    def next_u32(self) -> int:
        """The next 32-bit output: XSH-RR of the old state, then one LCG step."""
        old = self._state
        self._step()
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self) -> float:
        """A float64 in [0, 1), a multiple of 2**-53: ``(a * 2**26 + b) / 2**53``, ``a`` drawn first."""
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 67108864 + b) / 9007199254740992.0
