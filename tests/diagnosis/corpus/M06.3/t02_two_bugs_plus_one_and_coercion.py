# expect: ol pitfalls 9, 11
# style: plain; "+1 to avoid log(0)" and int() coercion
# bug: uniform() adds 1 to the numerator so 0.0 never comes out (and 1.0 can); seeds are coerced with int() instead of validated
MASK64 = 0xFFFFFFFFFFFFFFFF


class PCG32:
    def __init__(self, seed, stream=54):
        seed = int(seed)
        stream = int(stream)
        if seed < 0 or stream < 0 or seed > MASK64 or stream > MASK64:
            raise ValueError("seed/stream out of range")
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
        return (a * 2**26 + b + 1) / 2**53
