# expect: ol pitfall 6
# style: plain; seeding shortcut
# bug: I set state = seed and step once, skipping the first step from state 0
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
        self.state = int(seed) & MASK64
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
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
