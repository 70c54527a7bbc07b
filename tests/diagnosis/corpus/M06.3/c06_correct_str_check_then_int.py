# expect: correct
# style: blacklist validation: None / str / float rejected by name, then int() for ints and numpy ints
# bug: none for real inputs (a real str, None, float, bool are all ValueError; ints and numpy ints pass)
# fails-today: the harness passes the string seed "42" as a harness.sandbox.codec.Opaque, not a str, so the str check misses it and int() raises TypeError (reported as ol pitfall 11)
import numpy as np

MASK64 = (1 << 64) - 1


def _seed_value(x, name):
    if x is None:
        raise ValueError(f"{name} is None")
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be an integer, not a string ({x!r})")
    if isinstance(x, (bool, np.bool_, float, np.floating, complex)):
        raise ValueError(f"{name} must be an integer, not {type(x).__name__}")
    v = int(x)
    if v != x:
        raise ValueError(f"{name} must be an integer")
    if v < 0 or v > MASK64:
        raise ValueError(f"{name} must be in [0, 2**64), got {v}")
    return v


class PCG32:
    def __init__(self, seed, stream=54):
        seed = _seed_value(seed, "seed")
        stream = _seed_value(stream, "stream")
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
