"""The M07.1 catalog's metadata is one truth, and its own inputs do what the catalog says.

File names carry the module: ``tests/m07_1`` has no ``__init__.py``, and pytest's default import
mode needs every test file's basename to be unique across the suite.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from harness.catalog import collect
from harness.catalogs.m07_1 import test_catalog as catalog
from harness.course import load_course
from harness.exact import ULP, running_sums
from harness.mutants import load_mutants

MODULE = load_course().module("M07.1")

# The catalog table: name -> kind, in file order.
TABLE = {
    "test_hand_example": "unit",
    "test_boundary_goes_to_next_positive_id": "boundary",
    "test_zero_probability_ids_never_returned": "property",
    "test_rounding_tail_returns_last_positive_id": "boundary",
    "test_running_sums_are_left_to_right": "unit",
    "test_output_law_enumerated_exactly": "statistical",
    "test_chi_square": "statistical",
    "test_invalid_distributions_raise": "boundary",
    "test_invalid_u_raises": "boundary",
    "test_sum_tolerance_edge": "boundary",
    "test_inputs_accepted_and_not_modified": "property",
}


def test_the_catalog_is_the_table_in_its_order():
    assert [(c.name, c.kind.value) for c, _ in collect(MODULE)] == list(TABLE.items())


def test_every_test_names_what_it_checks_why_and_a_known_pitfall():
    for info, _ in collect(MODULE):
        assert info.checks and info.why and info.pitfalls, info.name
        assert all(p in MODULE.pitfalls for p in info.pitfalls), info.name


def test_kills_on_each_test_are_exactly_the_mutants_designating_it():
    mutants = load_mutants("M07.1")
    for info, _ in collect(MODULE):
        designating = sorted(m.id for m in mutants if info.name in m.designated)
        assert list(info.kills) == designating, info.name


def test_pitfalls_are_numbered_from_1_and_every_one_has_a_mutant():
    assert sorted(MODULE.pitfalls) == list(range(1, len(MODULE.pitfalls) + 1))
    assert {m.pitfall for m in load_mutants("M07.1")} == set(MODULE.pitfalls)


def test_the_plain_mutants_are_the_issues_classic_bugs():
    plain = {m.id: m.pitfall for m in load_mutants("M07.1") if not m.extended}
    assert plain == {"s01": 1, "s02": 2, "s03": 3, "s04": 4, "s05": 5, "s06": 6}


def test_the_chi_square_trial_is_seeded_and_reusable():
    """``chi_square_trial(target, seed)``: the same draws for the same seed, other draws otherwise."""
    assert catalog.chi_square_calls(1, 50) == catalog.chi_square_calls(1, 50)
    assert catalog.chi_square_calls(1, 50) != catalog.chi_square_calls(2, 50)
    probs = catalog.chi_square_probs()
    expected = [catalog.CHI_SQUARE_DRAWS * p for p in probs]
    assert min(expected) < 5  # the pooling rule is exercised, not only written down
    obs, exp = catalog.merge_small([round(e) for e in expected], expected)
    assert min(exp) >= 5 and obs.sum() == sum(round(e) for e in expected)


def test_dyadic_inputs_are_exact_and_others_get_the_2n_ulp_bound():
    assert catalog.arithmetic_is_exact(catalog.HAND)
    assert not catalog.arithmetic_is_exact(catalog.TENTHS)
    assert catalog.error_bound(10) == 20 * ULP
    exact = [p for p in catalog.enumeration_inputs() if catalog.arithmetic_is_exact(p)]
    assert 30 <= len(exact) < len(catalog.enumeration_inputs())


def test_the_bound_covers_the_reference_law_with_room():
    """The contract's own partition sits within the bound of the exact law (and is not always 0)."""
    gaps = []
    for probs in catalog.enumeration_inputs():
        law = {i: piece.measure for i, piece in catalog.categorical_intervals(probs)}
        expected = catalog.expected_law(probs)
        gap = max(abs(law.get(i, 0) - expected.get(i, 0)) for i in set(law) | set(expected))
        assert gap <= catalog.error_bound(len(probs)), probs
        gaps.append(gap)
    assert max(gaps) > 0


def test_the_summation_inputs_discriminate():
    found = catalog.discriminating_calls()
    assert all(found[name] for name in catalog.OTHER_SUMS)
    probs = catalog.TENTHS
    assert running_sums(probs)[7] != float(np.sum(np.array(probs[:8])))


def test_the_tolerance_edges_are_one_float_apart_and_straddle_1e_9():
    edges = catalog.tolerance_edges()
    tol = Fraction(1, 10**9)
    assert Fraction(edges["ok_above"]) - 1 <= tol < Fraction(edges["bad_above"]) - 1
    assert 1 - Fraction(edges["ok_under"]) <= tol < 1 - Fraction(edges["bad_under"])
    assert np.nextafter(edges["ok_above"], 2) == edges["bad_above"]
    assert np.nextafter(edges["ok_under"], 0) == edges["bad_under"]
    ok, bad = catalog.pairwise_edge_cases()
    assert catalog.within(catalog.ltr_sum(ok)) and not catalog.within(catalog._pairwise(ok))
    assert not catalog.within(catalog.ltr_sum(bad)) and catalog.within(catalog._pairwise(bad))
