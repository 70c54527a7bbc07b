# expect: ol pitfall 10
# style: plain; state kept on the class
# bug: I stored state and inc on the class (PCG32.state), so all generators share one state
import numpy as np

MASK64 = 0xFFFFFFFFFFFFFFFF


class PCG32:
    state = 0
    inc = 109

    def __init__(self, seed, stream=54):
        for v in (seed, stream):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError("seed and stream must be integers")
            if not 0 <= int(v) <= MASK64:
                raise ValueError("seed and stream must be in [0, 2**64)")
        PCG32.inc = ((int(stream) << 1) | 1) & MASK64
        PCG32.state = 0
        PCG32._step()
        PCG32.state = (PCG32.state + int(seed)) & MASK64
        PCG32._step()

    @classmethod
    def _step(cls):
        cls.state = (cls.state * 6364136223846793005 + cls.inc) & MASK64

    def next_u32(self):
        old = PCG32.state
        PCG32._step()
        xs = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xs >> rot) | (xs << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
