"""Tables of a function of a discrete value and two uniforms: found cuts, refusals, laws."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from harness.audit.tabulate import NotTabulable, boundary_cuts, build_table
from harness.engine.exact import SCALE


def _probe(fn, calls=None):
    def probe(points):
        if calls is not None:
            calls.extend(points)
        return [fn(*p) for p in points]

    return probe


def test_bisection_finds_thresholds_the_contract_does_not_know():
    t1, t2 = 3 * SCALE // 7, SCALE // 3 + 12345  # unknown to the initial grid
    table = build_table(_probe(lambda x, a, b: (x, a < t1, b < t2)), 2, {0}, {0})
    assert t1 in table.cuts1.tolist() and t2 in table.cuts2.tolist()
    ks = np.array([0, t1 - 1, t1, SCALE - 1])
    got = [table.answers[c] for c in table.lookup(np.ones(4, dtype=int), ks, ks[::-1].copy())]
    assert got == [(1, a < t1, b < t2) for a, b in zip(ks.tolist(), ks[::-1].tolist(), strict=True)]


def test_a_boundary_point_of_its_own_shows_less_against_less_or_equal():
    t = SCALE // 2
    table = build_table(_probe(lambda x, a, b: a <= t), 1, boundary_cuts([t]), {0})
    assert {t, t + 1} <= set(table.cuts1.tolist())
    measures = table.measures()
    true_mass = sum(measures[i, j] for (i, j), c in np.ndenumerate(table.codes[0])
                    if table.answers[c])
    assert true_mass == Fraction(t + 1, SCALE)


def test_code_that_is_not_constant_on_rectangles_is_refused():
    with pytest.raises(NotTabulable):
        build_table(_probe(lambda x, a, b: a < b), 1, {0}, {0})


def test_each_point_is_asked_once():
    calls = []
    build_table(_probe(lambda x, a, b: a < SCALE // 4, calls), 1, boundary_cuts([SCALE // 4]), {0})
    assert len(calls) == len(set(calls))
