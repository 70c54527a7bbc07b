# expect: ol pitfall 11
# style: plain ints and & masks, ldexp uniform (base: c07_correct_index_ldexp.py)
# bug: floats are refused by isinstance(v, float), then int(v) takes the rest: a numeric string '42' is converted, and np.float32(42.5) (not a float subclass) is truncated to 42, instead of raising
# caught-by: test_bad_seed_or_stream_raises
# counterexample: PCG32('42', 54) and PCG32(np.float32(42.5), 54) give PCG32(42, 54)'s words (first 0xa15c02b7); the contract
#   raises TypeError or ValueError (not an integer at all, or a float)
"""PCG32 (XSH-RR 64/32) and its float64 uniforms."""

import math
import operator

MULT = 6364136223846793005
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def _u64(v, what):
    if isinstance(v, float) or v is None:
        raise TypeError(f"{what} must be an integer, got {v!r}")
    v = int(v)  # Python and numpy integers
    if v < 0 or v > M64:
        raise ValueError(f"{what} = {v} is outside [0, 2**64)")
    return int(v)


class PCG32:
    def __init__(self, seed, stream=54):
        seed = _u64(seed, "seed")
        stream = _u64(stream, "stream")
        self.inc = ((stream << 1) | 1) & M64
        self.state = 0
        self._step()
        self.state = (self.state + seed) & M64
        self._step()

    def _step(self):
        self.state = (self.state * MULT + self.inc) & M64

    def next_u32(self):
        old = self.state
        self._step()
        xorshifted = (((old >> 18) ^ old) >> 27) & M32
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & M32

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return math.ldexp(a, -27) + math.ldexp(b, -53)
