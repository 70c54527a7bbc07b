# expect: correct
# style: numpy uint64 scalars with wrap-around arithmetic (errstate), int() at the boundary
# bug: none
import numbers

import numpy as np

_MUL = np.uint64(6364136223846793005)
_ONE = np.uint64(1)


class PCG32:
    def __init__(self, seed, stream=54):
        for name, v in (("seed", seed), ("stream", stream)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)):
                raise ValueError(f"PCG32: {name} must be an integer in [0, 2**64)")
            if int(v) < 0 or int(v) >= 2**64:
                raise ValueError(f"PCG32: {name}={int(v)} is outside [0, 2**64)")
        with np.errstate(over="ignore"):
            self.inc = (np.uint64(int(stream) % 2**63) << _ONE) | _ONE
            self.state = np.uint64(0)
            self._step()
            self.state = self.state + np.uint64(int(seed))
            self._step()

    def _step(self):
        with np.errstate(over="ignore"):
            self.state = self.state * _MUL + self.inc

    def next_u32(self):
        old = int(self.state)
        self._step()
        xs = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return int(((xs >> rot) | (xs << ((32 - rot) & 31))) & 0xFFFFFFFF)

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return float(np.float64(a * (1 << 26) + b) / np.float64(1 << 53))
