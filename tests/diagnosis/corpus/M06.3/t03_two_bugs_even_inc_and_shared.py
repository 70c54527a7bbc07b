# expect: ol pitfalls 2, 10
# diagnosis-misses: the even increment changes every word, so the shared state's own failures are explained by pitfall 2 too
# style: plain; module-level globals
# bug: the state lives in a module global shared by every generator, and inc = stream << 1 is even
import numpy as np

_MASK = 0xFFFFFFFFFFFFFFFF
_state = 0
_inc = 0


class PCG32:
    def __init__(self, seed, stream=54):
        global _state, _inc
        for v in (seed, stream):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) <= _MASK:
                raise ValueError("seed and stream must be integers in [0, 2**64)")
        _inc = (int(stream) << 1) & _MASK
        _state = 0
        _state = (_state * 6364136223846793005 + _inc) & _MASK
        _state = (_state + int(seed)) & _MASK
        _state = (_state * 6364136223846793005 + _inc) & _MASK

    def next_u32(self):
        global _state
        old = _state
        _state = (old * 6364136223846793005 + _inc) & _MASK
        xs = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xs >> rot) | (xs << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
