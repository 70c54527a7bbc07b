# expect: ol pitfall 3
# style: plain, helper functions
# bug: my rotate helper rotates left instead of right
import numpy as np

MASK64 = (1 << 64) - 1


def rotl32(x, r):
    return ((x << r) | (x >> ((32 - r) & 31))) & 0xFFFFFFFF


def _valid(x):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        return False
    return 0 <= int(x) <= MASK64


class PCG32:
    def __init__(self, seed, stream=54):
        if not _valid(seed) or not _valid(stream):
            raise ValueError("PCG32 wants seed and stream as integers in [0, 2**64)")
        self.inc = ((int(stream) << 1) | 1) & MASK64
        self.state = 0
        self._step()
        self.state = (self.state + int(seed)) & MASK64
        self._step()

    def _step(self):
        self.state = (self.state * 6364136223846793005 + self.inc) & MASK64

    def next_u32(self):
        old = self.state
        self._step()
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        return rotl32(xorshifted, old >> 59)

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
