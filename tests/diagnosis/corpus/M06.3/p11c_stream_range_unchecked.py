# expect: ol pitfall 11
# style: plain ints and & masks, ldexp uniform (base: c07_correct_index_ldexp.py)
# bug: only the seed gets the range check; the stream is only made an integer, so stream = -1 or 2**64 + 54 is silently wrapped by the & M64 of the increment instead of raising ValueError
# caught-by: test_bad_seed_or_stream_raises
"""PCG32 (XSH-RR 64/32) and its float64 uniforms."""

import math
import operator

MULT = 6364136223846793005
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def _u64(v, what):
    v = operator.index(v)  # TypeError for floats, strings, None; numpy integers are fine
    if v < 0 or v > M64:
        raise ValueError(f"{what} = {v} is outside [0, 2**64)")
    return int(v)


class PCG32:
    def __init__(self, seed, stream=54):
        seed = _u64(seed, "seed")
        stream = operator.index(stream)  # the increment is masked anyway
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
