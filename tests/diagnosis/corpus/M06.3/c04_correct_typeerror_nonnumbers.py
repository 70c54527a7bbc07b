# expect: correct
# style: TypeError for non-numbers (None, str, float), ValueError for bad ranges; ldexp
# bug: none (the contract says ValueError for None/str/float; the brief allows TypeError for a non-number)
# fails-today: PCG32("42", 54) raising TypeError is reported as ol pitfall 11 (the harness wants ValueError for every non-integer)
import math

import numpy as np

MASK_64 = (1 << 64) - 1
MASK_32 = (1 << 32) - 1
PCG_MULT = 6364136223846793005


def _u64(x, label):
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{label} must be an integer, got {type(x).__name__}")
    if isinstance(x, (float, np.floating)):
        raise ValueError(f"{label} must be an integer, got the float {x!r}")
    if not isinstance(x, (int, np.integer)) or isinstance(x, bool):
        raise TypeError(f"{label} must be an integer, got {type(x).__name__}")
    x = int(x)
    if x < 0 or x > MASK_64:
        raise ValueError(f"{label} must be in [0, 2**64)")
    return x


class PCG32:
    def __init__(self, seed, stream=54):
        seed = _u64(seed, "seed")
        stream = _u64(stream, "stream")
        self._inc = ((stream << 1) & MASK_64) | 1
        self._s = 0
        self._lcg()
        self._s = (self._s + seed) & MASK_64
        self._lcg()

    def _lcg(self):
        self._s = (self._s * PCG_MULT + self._inc) & MASK_64

    def next_u32(self):
        s = self._s
        self._lcg()
        word = ((s ^ (s >> 18)) >> 27) & MASK_32
        k = s >> 59
        return ((word >> k) | (word << (-k & 31))) & MASK_32

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return math.ldexp((a << 26) | b, -53)
