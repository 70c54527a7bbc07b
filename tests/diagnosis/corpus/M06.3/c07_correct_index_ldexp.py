# expect: correct
# style: operator.index for seed and stream (TypeError for a float, a str, None), one range check, & masks; uniform() as math.ldexp(a, -27) + math.ldexp(b, -53)
# bug: none: a * 2**-27 and b * 2**-53 are exact and their sum (a * 2**26 + b) / 2**53 is below 2**53 units, so exact as well
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
