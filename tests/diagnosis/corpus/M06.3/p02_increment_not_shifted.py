# expect: ol pitfall 2
# style: plain, % 2**64
# bug: I made the increment stream | 1 (odd), forgetting the shift left by one
import numpy as np

M64 = 2**64


class PCG32:
    def __init__(self, seed, stream=54):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError("seed must be an int")
        if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)):
            raise ValueError("stream must be an int")
        seed, stream = int(seed), int(stream)
        if not (0 <= seed < M64 and 0 <= stream < M64):
            raise ValueError("seed and stream must be in [0, 2**64)")
        self.inc = stream | 1
        self.state = 0
        self.step()
        self.state = (self.state + seed) % M64
        self.step()

    def step(self):
        self.state = (self.state * 6364136223846793005 + self.inc) % M64

    def next_u32(self):
        old = self.state
        self.step()
        x = (((old >> 18) ^ old) >> 27) % 2**32
        r = old >> 59
        return ((x >> r) | (x << ((32 - r) % 32))) % 2**32

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
