# expect: ol pitfall 11
# style: plain; coerces with int() and a mask "to be safe"
# bug: I do int(seed) & MASK64, so floats get truncated and negatives wrap instead of raising
MASK64 = 0xFFFFFFFFFFFFFFFF


class PCG32:
    def __init__(self, seed, stream=54):
        if seed is None or stream is None:
            raise ValueError("seed and stream are required")
        seed = int(seed) & MASK64
        stream = int(stream) & MASK64
        self.inc = ((stream << 1) | 1) & MASK64
        self.state = 0
        self._step()
        self.state = (self.state + seed) & MASK64
        self._step()

    def _step(self):
        self.state = (self.state * 6364136223846793005 + self.inc) & MASK64

    def next_u32(self):
        old = self.state
        self._step()
        xs = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xs >> rot) | (xs << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self):
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 2**26 + b) / 2**53
