# expect: ol pitfall 4
# style: plain; builds a 64-bit word then >> 11
# bug: I glue the two words into a u64 and take its top 53 bits (next_u64() >> 11)
import numpy as np

MASK64 = 0xFFFFFFFFFFFFFFFF


class PCG32:
    def __init__(self, seed, stream=54):
        for v in (seed, stream):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) <= MASK64:
                raise ValueError(f"invalid seed/stream {v!r}")
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

    def next_u64(self):
        hi = self.next_u32()
        lo = self.next_u32()
        return (hi << 32) | lo

    def uniform(self):
        return (self.next_u64() >> 11) / 2**53
