# expect: correct
# style: plain Python ints, hex masks, isinstance(int / np.integer) validation
# bug: none
"""PCG32 (XSH-RR 64/32), seeded like pcg32_srandom_r, with numpy's two-word doubles."""

import numpy as np

MULT = 6364136223846793005
MASK64 = 0xFFFFFFFFFFFFFFFF
MASK32 = 0xFFFFFFFF


def _check_u64(name, x):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {type(x).__name__}")
    x = int(x)
    if x < 0 or x > MASK64:
        raise ValueError(f"{name} must be in [0, 2**64), got {x}")
    return x


class PCG32:
    def __init__(self, seed, stream=54):
        seed = _check_u64("seed", seed)
        stream = _check_u64("stream", stream)
        self.state = 0
        self.inc = ((stream << 1) | 1) & MASK64
        self._step()
        self.state = (self.state + seed) & MASK64
        self._step()

    def _step(self):
        self.state = (self.state * MULT + self.inc) & MASK64

    def next_u32(self):
        old = self.state
        self._step()
        xorshifted = (((old >> 18) ^ old) >> 27) & MASK32
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & MASK32

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 67108864 + b) / 9007199254740992.0
