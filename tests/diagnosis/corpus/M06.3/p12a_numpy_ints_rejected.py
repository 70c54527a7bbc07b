# expect: ol pitfall 12
# style: plain; strict type(x) is int
# bug: I check type(seed) is int, which rejects numpy integer scalars like np.uint64(7)
MASK64 = 0xFFFFFFFFFFFFFFFF


class PCG32:
    def __init__(self, seed, stream=54):
        if type(seed) is not int or type(stream) is not int:
            raise ValueError("seed and stream must be Python ints")
        if not (0 <= seed <= MASK64 and 0 <= stream <= MASK64):
            raise ValueError("seed and stream must be in [0, 2**64)")
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
