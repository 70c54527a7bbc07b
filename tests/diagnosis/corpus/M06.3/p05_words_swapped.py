# expect: ol pitfall 5
# style: plain, one-expression uniform
# bug: I draw b (low bits) before a (high bits), so the second word ends up high
import numpy as np

MASK64 = 0xFFFFFFFFFFFFFFFF


class PCG32:
    def __init__(self, seed, stream=54):
        for v in (seed, stream):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError("seed and stream must be ints")
            if int(v) < 0 or int(v) >= 1 << 64:
                raise ValueError("seed and stream must be < 2**64 and >= 0")
        self.state = 0
        self.inc = ((int(stream) << 1) | 1) & MASK64
        self._step()
        self.state = (self.state + int(seed)) & MASK64
        self._step()

    def _step(self):
        self.state = (self.state * 6364136223846793005 + self.inc) & MASK64

    def next_u32(self):
        old = self.state
        self._step()
        xs = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xs >> rot) | (xs << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self):
        b = self.next_u32() >> 6
        a = self.next_u32() >> 5
        return (a * 2**26 + b) / 2**53
