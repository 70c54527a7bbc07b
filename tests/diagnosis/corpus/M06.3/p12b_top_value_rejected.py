# expect: ol pitfall 12
# style: plain; off-by-one range check
# bug: my range check uses < 2**64 - 1, so the largest seed/stream 2**64 - 1 is rejected
import numpy as np


class PCG32:
    def __init__(self, seed, stream=54):
        for name, v in (("seed", seed), ("stream", stream)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{name} must be an integer")
            if not 0 <= int(v) < 2**64 - 1:
                raise ValueError(f"{name} out of range")
        self.inc = ((int(stream) << 1) | 1) % 2**64
        self.state = 0
        self._step()
        self.state = (self.state + int(seed)) % 2**64
        self._step()

    def _step(self):
        self.state = (self.state * 6364136223846793005 + self.inc) % 2**64

    def next_u32(self):
        old = self.state
        self._step()
        xs = (((old >> 18) ^ old) >> 27) % 2**32
        rot = old >> 59
        return ((xs >> rot) | (xs << ((-rot) % 32))) % 2**32

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
