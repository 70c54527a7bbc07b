# expect: correct
# style: bit tricks: rotation via a doubled 64-bit word, 2**-53 multiply, rejection via try/int()
# bug: none
import numpy as np

K = 0x5851F42D4C957F2D  # 6364136223846793005
W = (1 << 64) - 1


class PCG32:
    __slots__ = ("s", "c")

    def __init__(self, seed, stream=54):
        checked = []
        for v in (seed, stream):
            if type(v) is bool or not (isinstance(v, int) or isinstance(v, np.integer)):
                raise ValueError("seed and stream must be integers")
            v = int(v)
            if v >> 64 or v < 0:
                raise ValueError("seed and stream must fit in 64 unsigned bits")
            checked.append(v)
        seed, stream = checked
        self.c = (stream << 1 | 1) & W
        self.s = self.c              # 0 * K + c: the first step from state 0
        self.s = (self.s + seed) & W
        self.s = (self.s * K + self.c) & W

    def next_u32(self):
        s = self.s
        self.s = (s * K + self.c) & W
        x = ((s >> 18 ^ s) >> 27) & 0xFFFFFFFF
        # rotate right by s >> 59: shift the doubled word and keep the low 32 bits
        return ((x | x << 32) >> (s >> 59)) & 0xFFFFFFFF

    def uniform(self):
        k = (self.next_u32() >> 5) << 26
        k |= self.next_u32() >> 6
        return k * 2.0**-53
