"""Uniform sources the harness hands to code under test (``UniformSource`` of M07.1).

They are the harness's own: a student's PCG32 is never used to make a test's uniforms. Each
source records how many uniforms were drawn; an isolated worker rebuilds the same source from its
``spec()`` and sends back only that count, which the parent replays into the test's object.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

_MASK64 = (1 << 64) - 1


class SourceExhausted(Exception):
    """A scripted source was asked for more uniforms than the test scripted."""


class HarnessPCG32:
    """PCG32 XSH-RR with ``pcg32_srandom_r`` seeding: the harness's private copy for seeds."""

    def __init__(self, seed: int, stream: int = 54) -> None:
        self._inc = ((stream << 1) | 1) & _MASK64
        self._state = 0
        self._state = (self._state * 6364136223846793005 + self._inc) & _MASK64
        self._state = (self._state + seed) & _MASK64
        self._state = (self._state * 6364136223846793005 + self._inc) & _MASK64

    @classmethod
    def at_state(cls, state: int, inc: int) -> HarnessPCG32:
        gen = cls.__new__(cls)
        gen._state, gen._inc = state & _MASK64, inc & _MASK64
        return gen

    def advance(self, steps: int) -> None:
        """Jump ``steps`` LCG steps ahead in O(log steps) (Brown's algorithm, as pcg32_advance_r)."""
        cur_mult, cur_plus = 6364136223846793005, self._inc
        acc_mult, acc_plus = 1, 0
        while steps > 0:
            if steps & 1:
                acc_mult = (acc_mult * cur_mult) & _MASK64
                acc_plus = (acc_plus * cur_mult + cur_plus) & _MASK64
            cur_plus = ((cur_mult + 1) * cur_plus) & _MASK64
            cur_mult = (cur_mult * cur_mult) & _MASK64
            steps >>= 1
        self._state = (acc_mult * self._state + acc_plus) & _MASK64

    def next_u32(self) -> int:
        old = self._state
        self._state = (old * 6364136223846793005 + self._inc) & _MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self) -> float:
        a = self.next_u32() >> 5
        b = self.next_u32() >> 6
        return (a * 67108864 + b) / 9007199254740992.0


def passes_a_source(calls: Iterable[Iterable[Any]], kwargs: dict) -> bool:
    """Whether any call of a batch (or its keyword arguments) passes a ``RecordingSource``: one
    pass over the arguments' classes, which a chi-square's 100000 arguments make worth keeping
    cheap."""
    kinds = {type(a) for args in calls for a in args}
    kinds.update(map(type, kwargs.values()))
    return any(issubclass(kind, RecordingSource) for kind in kinds)


class RecordingSource:
    """Base: counts every ``uniform()`` call and keeps the values handed out, in order."""

    def __init__(self) -> None:
        self.drawn: list[float] = []

    def uniform(self) -> float:
        value = self._next()
        self.drawn.append(value)
        return value

    def _next(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def spec(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def replay(self, count: int) -> None:
        """Advance a fresh copy by ``count`` draws, as the isolated worker's copy was."""
        for _ in range(count):
            self.uniform()


class ScriptedSource(RecordingSource):
    """Returns the scripted values in order; asking for one more raises ``SourceExhausted``."""

    def __init__(self, values: Sequence[float]) -> None:
        super().__init__()
        self.values = [float(v) for v in values]

    def _next(self) -> float:
        if len(self.drawn) >= len(self.values):
            raise SourceExhausted(f"the test scripted {len(self.values)} uniforms; one more was drawn")
        return self.values[len(self.drawn)]

    def replay(self, count: int) -> None:
        start = len(self.drawn)
        if count > len(self.values) - start:
            raise SourceExhausted(f"the test scripted {len(self.values)} uniforms; "
                                  f"{start + count} were drawn")
        self.drawn.extend(self.values[start:start + count])

    def spec(self) -> dict:
        """The values not drawn yet: a worker's copy starts where this one stands."""
        return {"kind": "script", "values": [v.hex() for v in self.values[len(self.drawn):]]}


class PCGSource(RecordingSource):
    """Uniforms from the harness's PCG32 at a fixed seed and stream."""

    def __init__(self, seed: int, stream: int = 54, keep: bool = False) -> None:
        super().__init__()
        self.seed, self.stream, self.keep = seed, stream, keep
        self._gen = HarnessPCG32(seed, stream)
        self.count = 0

    def uniform(self) -> float:
        self.count += 1
        value = self._gen.uniform()
        if self.keep:
            self.drawn.append(value)
        return value

    def replay(self, count: int) -> None:
        if self.keep:
            super().replay(count)
            return
        self._gen.advance(2 * count)
        self.count += count

    def spec(self) -> dict:
        """The generator's current state: a worker's copy continues the same stream."""
        return {"kind": "pcg32", "state": self._gen._state, "inc": self._gen._inc}

    @property
    def draws(self) -> int:
        return self.count


def source_from_spec(spec: dict) -> RecordingSource:
    """Rebuild a source from ``spec()``; ValueError for anything else."""
    kind = spec.get("kind")
    if kind == "script":
        return ScriptedSource([float.fromhex(v) for v in spec["values"]])
    if kind == "pcg32":
        source = PCGSource(0)
        source._gen = HarnessPCG32.at_state(int(spec["state"]), int(spec["inc"]))
        return source
    raise ValueError(f"unknown source kind {kind!r}")


def draw_count(source: RecordingSource) -> int:
    return source.count if isinstance(source, PCGSource) else len(source.drawn)
