"""A function of a discrete input and two uniforms, as a table over rectangles of uniforms.

The sampled tests feed code under test a discrete value (a draft id, or nothing) and two uniforms
``k1 / 2**53``, ``k2 / 2**53``. Code whose decisions compare each uniform with thresholds is constant
on the rectangles of a grid of cuts. ``build_table`` starts from the contract's thresholds (each
boundary point isolated too, so ``<`` against ``<=`` shows), finds the code's own change points by
bisection along lines of the grid (a mutant that resamples from ``p`` cuts at ``p``'s CDF, not the
residual's), and finally calls the code at the four corners of every rectangle: the table is
returned only if all four agree everywhere. With the table, a sampled test's counts for a whole
seed are a few numpy lookups, and the law is an exact sum over rectangles.

A table is a claim about code, so the power audit also checks it against the catalog's own trial
on real calls before trusting it (``harness.audit.sampled``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from harness.engine.exact import SCALE

Point = tuple[int, int, int]  # (index of the discrete value, k1, k2)
Probe = Callable[[Sequence[Point]], list[Hashable]]
MAX_ROUNDS = 6
MAX_CELLS = 200_000


@dataclass(frozen=True)
class Table:
    """``answers[codes[x, i, j]]`` is the code's answer for the ``x``-th value and uniforms in
    ``[cuts1[i], cuts1[i+1]) x [cuts2[j], cuts2[j+1])`` (the last cut runs to ``2**53``)."""

    cuts1: np.ndarray
    cuts2: np.ndarray
    codes: np.ndarray
    # Hashable (told apart by equality); what each is, is the probe's: callers index theirs.
    answers: tuple[Any, ...]

    def lookup(self, x: np.ndarray, k1: np.ndarray, k2: np.ndarray) -> np.ndarray:
        i = np.searchsorted(self.cuts1, k1, side="right") - 1
        j = np.searchsorted(self.cuts2, k2, side="right") - 1
        return self.codes[x, i, j]

    def measures(self) -> np.ndarray:
        """Exact measure (a Fraction) of every rectangle, shape ``(len(cuts1), len(cuts2))``."""
        w1 = np.diff(np.append(self.cuts1, SCALE))
        w2 = np.diff(np.append(self.cuts2, SCALE))
        out = np.empty((len(w1), len(w2)), dtype=object)
        for i, a in enumerate(w1.tolist()):
            for j, b in enumerate(w2.tolist()):
                out[i, j] = Fraction(a * b, SCALE * SCALE)
        return out


class NotTabulable(Exception):
    """The code is not constant on the rectangles of any grid we found (or raised a violation)."""


def boundary_cuts(counts: Sequence[int]) -> set[int]:
    """Cuts at every ``count_below`` value and one past it (the boundary point on its own)."""
    cuts = {0}
    for c in counts:
        for k in (c, c + 1):
            if 0 < k < SCALE:
                cuts.add(int(k))
    return cuts


def build_table(probe: Probe, n_values: int, cuts1: set[int], cuts2: set[int]) -> Table:
    """Refine the grid until the code is constant on every rectangle (NotTabulable if it never is)."""
    probe = _memo(probe)
    c1, c2 = set(cuts1) | {0}, set(cuts2) | {0}
    for _ in range(MAX_ROUNDS):
        new1 = _scan(probe, n_values, sorted(c1), sorted(c2), axis=1) - c1
        new2 = _scan(probe, n_values, sorted(c2), sorted(c1), axis=2) - c2
        if not new1 and not new2:
            break
        c1 |= new1
        c2 |= new2
        if n_values * len(c1) * len(c2) > MAX_CELLS:
            raise NotTabulable(f"more than {MAX_CELLS} rectangles")
    return _verified(probe, n_values, np.array(sorted(c1)), np.array(sorted(c2)))


def _memo(probe: Probe) -> Probe:
    """Each point asked once: the scans' points are most of the final corners."""
    cache: dict[Point, Hashable] = {}

    def cached(points: Sequence[Point]) -> list[Hashable]:
        todo = [p for p in dict.fromkeys(points) if p not in cache]
        if todo:
            cache.update(zip(todo, probe(todo), strict=True))
        return [cache[p] for p in points]

    return cached


def _ends(cuts: list[int]) -> list[tuple[int, int]]:
    return [(lo, hi - 1) for lo, hi in zip(cuts, cuts[1:] + [SCALE], strict=True)]


def _point(axis: int, x: int, along: int, other: int) -> Point:
    return (x, along, other) if axis == 1 else (x, other, along)


def _scan(probe: Probe, n_values: int, cuts: list[int], other: list[int], axis: int) -> set[int]:
    """Change points along ``axis``: intervals whose two ends answer differently, bisected."""
    others = other  # one line through the first point of every interval of the other axis
    lines = [(x, o) for x in range(n_values) for o in others]
    intervals = _ends(cuts)
    points = [_point(axis, x, k, o) for x, o in lines for lo, hi in intervals for k in (lo, hi)]
    answers = probe(points)
    pending: dict[tuple[int, int], tuple[int, int, Hashable]] = {}
    for n, (x, o) in enumerate(lines):
        for m, (lo, hi) in enumerate(intervals):
            a_lo, a_hi = answers[2 * (n * len(intervals) + m)], answers[2 * (n * len(intervals) + m) + 1]
            if a_lo != a_hi and (lo, hi) not in pending:
                pending[(lo, hi)] = (x, o, a_lo)
    return _bisect(probe, axis, pending)


def _bisect(probe: Probe, axis: int, pending: dict) -> set[int]:
    """For each interval ``[lo, hi]`` whose ends differ, the first ``k`` answering unlike ``lo``."""
    active = [[lo, hi, x, o, a_lo] for (lo, hi), (x, o, a_lo) in pending.items()]
    while True:
        open_ = [t for t in active if t[1] - t[0] > 1]
        if not open_:
            return {t[1] for t in active}
        mids = [(t[0] + t[1]) // 2 for t in open_]
        answers = probe([_point(axis, t[2], mid, t[3]) for t, mid in zip(open_, mids, strict=True)])
        for t, mid, a in zip(open_, mids, answers, strict=True):
            if a == t[4]:
                t[0] = mid
            else:
                t[1] = mid


def _verified(probe: Probe, n_values: int, cuts1: np.ndarray, cuts2: np.ndarray) -> Table:
    """The table, after all four corners of every rectangle answered alike."""
    e1, e2 = _ends(cuts1.tolist()), _ends(cuts2.tolist())
    points = [(x, k1, k2) for x in range(n_values) for lo1, hi1 in e1 for lo2, hi2 in e2
              for k1, k2 in ((lo1, lo2), (hi1, hi2), (lo1, hi2), (hi1, lo2))]
    answers = probe(points)
    index: dict[Hashable, int] = {}
    codes = np.empty((n_values, len(e1), len(e2)), dtype=np.int64)
    for c in range(len(points) // 4):
        corner = answers[4 * c:4 * c + 4]
        if len(set(corner)) != 1:
            x, k1, k2 = points[4 * c]
            raise NotTabulable(f"answers {sorted(map(repr, set(corner)))} inside one rectangle "
                               f"(value {x}, k1 from {k1}, k2 from {k2})")
        codes.flat[c] = index.setdefault(corner[0], len(index))
    return Table(cuts1, cuts2, codes, tuple(index))
