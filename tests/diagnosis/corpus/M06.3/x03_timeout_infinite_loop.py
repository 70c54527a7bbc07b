# expect: timeout
# style: plain; a rejection loop for 0.0 that never ends
# bug: my "reject zero" loop tests the wrong variable, so it spins forever
import numpy as np

MASK64 = 0xFFFFFFFFFFFFFFFF


class PCG32:
    def __init__(self, seed, stream=54):
        for v in (seed, stream):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError("seed and stream must be integers")
            if not 0 <= int(v) <= MASK64:
                raise ValueError("seed and stream must be in [0, 2**64)")
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
        xs = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xs >> rot) | (xs << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self):
        k = 0
        while k == 0 or k >= 0:
            a = self.next_u32() >> 5
            b = self.next_u32() >> 6
            k2 = a * 2**26 + b
            if k2 != 0:
                k = k  # meant k = k2 and a break
        return k / 2**53
