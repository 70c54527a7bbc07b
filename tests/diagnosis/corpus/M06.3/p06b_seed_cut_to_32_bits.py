# expect: ol pitfall 6
# style: plain; masks named by width
# bug: I add the seed masked to 32 bits (copied a uint32 seed from another generator)
import numpy as np

U64 = 0xFFFFFFFFFFFFFFFF
U32 = 0xFFFFFFFF


class PCG32:
    def __init__(self, seed, stream=54):
        for v in (seed, stream):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError("seed and stream must be integers")
            if not 0 <= int(v) <= U64:
                raise ValueError("seed and stream must be in [0, 2**64)")
        self.inc = ((int(stream) << 1) | 1) & U64
        self.state = 0
        self._step()
        self.state = (self.state + (int(seed) & U32)) & U64
        self._step()

    def _step(self):
        self.state = (self.state * 6364136223846793005 + self.inc) & U64

    def next_u32(self):
        old = self.state
        self._step()
        xs = (((old >> 18) ^ old) >> 27) & U32
        rot = old >> 59
        return ((xs >> rot) | (xs << ((-rot) & 31))) & U32

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
