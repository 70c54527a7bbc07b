# expect: ol pitfall 1
# style: plain loops, hex masks
# bug: I copied 1442695040888963407 from the PCG header as the multiplier (it is the default increment)
MULT = 1442695040888963407
MASK64 = 0xFFFFFFFFFFFFFFFF
MASK32 = 0xFFFFFFFF


class PCG32:
    def __init__(self, seed, stream=54):
        for v in (seed, stream):
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise ValueError("seed/stream must be integers")
            if not 0 <= int(v) <= MASK64:
                raise ValueError("seed/stream out of range")
        seed, stream = int(seed), int(stream)
        self.state = 0
        self.inc = ((stream << 1) | 1) & MASK64
        self.state = (self.state * MULT + self.inc) & MASK64
        self.state = (self.state + seed) & MASK64
        self.state = (self.state * MULT + self.inc) & MASK64

    def next_u32(self):
        old = self.state
        self.state = (old * MULT + self.inc) & MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & MASK32
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & MASK32

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
