# expect: ol pitfall 3
# style: plain, step first then permute
# bug: I step the state first and apply XSH-RR to the new state instead of the old one
import operator

MASK64 = 0xFFFF_FFFF_FFFF_FFFF


class PCG32:
    def __init__(self, seed, stream=54):
        try:
            if isinstance(seed, bool) or isinstance(stream, bool):
                raise TypeError
            seed = operator.index(seed)
            stream = operator.index(stream)
        except TypeError:
            raise ValueError("seed and stream must be integers") from None
        if seed < 0 or stream < 0 or seed > MASK64 or stream > MASK64:
            raise ValueError("seed and stream must be in [0, 2**64)")
        self.inc = ((stream << 1) | 1) & MASK64
        self.state = (0 * 6364136223846793005 + self.inc) & MASK64
        self.state = (self.state + seed) & MASK64
        self.state = (self.state * 6364136223846793005 + self.inc) & MASK64

    def next_u32(self):
        self.state = (self.state * 6364136223846793005 + self.inc) & MASK64
        s = self.state
        xorshifted = (((s >> 18) ^ s) >> 27) & 0xFFFF_FFFF
        rot = s >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFF_FFFF

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
