# expect: correct
# style: operator.index validation, % (1 << 64) instead of masks, a ValueError subclass
# bug: none
import operator

_M = 1 << 64
_MULTIPLIER = 6364136223846793005


class SeedError(ValueError):
    """Bad seed or stream for PCG32."""


def _as_u64(value, what):
    if isinstance(value, bool):
        raise SeedError(f"{what}: bool is not a seed")
    try:
        v = operator.index(value)  # int, np.int64, np.uint64 ... but not float / str / None
    except TypeError:
        raise SeedError(f"{what} must be an integer, not {value!r}") from None
    if not 0 <= v < _M:
        raise SeedError(f"{what} out of range [0, 2**64): {v}")
    return v


class PCG32:
    def __init__(self, seed, stream=54):
        seed = _as_u64(seed, "seed")
        stream = _as_u64(stream, "stream")
        self._inc = (stream * 2 + 1) % _M
        self._state = 0
        self._advance()
        self._state = (self._state + seed) % _M
        self._advance()

    def _advance(self):
        self._state = (self._state * _MULTIPLIER + self._inc) % _M

    def next_u32(self):
        s = self._state
        self._advance()
        x = ((s ^ (s >> 18)) >> 27) % (1 << 32)
        r = s >> 59
        if r == 0:
            return x
        return ((x >> r) | (x << (32 - r))) % (1 << 32)

    def uniform(self):
        hi = self.next_u32() >> 5
        lo = self.next_u32() >> 6
        return (hi * 2**26 + lo) / 2**53
