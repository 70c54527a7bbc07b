# expect: ol pitfalls 1, 5
# style: plain; constants at the top
# bug: wrong multiplier (1442695040888963407) and the two words of uniform() drawn low-first
MULT = 1442695040888963407
INC_DEFAULT = 54
M64 = (1 << 64) - 1


class PCG32:
    def __init__(self, seed, stream=INC_DEFAULT):
        import numpy as np
        ok = lambda v: not isinstance(v, bool) and isinstance(v, (int, np.integer)) and 0 <= int(v) <= M64
        if not (ok(seed) and ok(stream)):
            raise ValueError("bad seed or stream")
        self.inc = ((int(stream) << 1) | 1) & M64
        self.state = 0
        self.state = (self.state * MULT + self.inc) & M64
        self.state = (self.state + int(seed)) & M64
        self.state = (self.state * MULT + self.inc) & M64

    def next_u32(self):
        old = self.state
        self.state = (old * MULT + self.inc) & M64
        xs = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xs >> rot) | (xs << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self):
        lo = self.next_u32() >> 6
        hi = self.next_u32() >> 5
        return (hi * 2**26 + lo) / 2**53
