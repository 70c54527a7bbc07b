"""The M07.1 catalog's own inputs do what the catalog says.

The metadata every catalog shares (its table, kills, pitfalls, plain mutants) is checked for all
modules in tests/commands/test_catalog_metadata.py.

File names carry the module: ``tests/catalogs/m07_1`` has no ``__init__.py``, and pytest's default import
mode needs every test file's basename to be unique across the suite.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from harness.catalogs.m07_1 import test_catalog as catalog
from harness.engine.exact import ULP, running_sums


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


def test_the_written_out_neumaier_sum_is_builtin_sum_from_3_12_and_is_told_apart():
    import sys

    gen = catalog.HarnessPCG32(5, 71)
    for n in (3, 10, 17, 40):
        values = catalog.arbitrary(gen, n)
        if sys.version_info >= (3, 12):
            assert catalog.neumaier(values) == sum(values)
        else:  # 3.11: builtin sum() of floats adds left to right, as the contract does
            assert sum(values) == catalog.ltr_sum(values)
    name = next(n for n in catalog.OTHER_SUMS if "Neumaier" in n)
    assert catalog.discriminating_calls()[name]  # some u where a Neumaier c_i moves the answer


def test_a_prefix_sum_by_builtin_sum_fails_on_3_12_and_says_compensated():
    """A student's ``sum(probs[: i + 1])`` as c_i: left to right on 3.11, Neumaier from 3.12."""
    import sys

    found = catalog.discriminating_calls()
    calls = sorted({(tuple(p), u) for name in catalog.OTHER_SUMS for p, u in found[name]})
    answers = [catalog.contract_id(p, u, [sum(p[: i + 1]) for i in range(len(p))]) for p, u in calls]
    hint, pitfall = catalog.diagnose(calls, answers, None)
    if sys.version_info >= (3, 12):
        assert pitfall == 3 and "Neumaier" in hint and "3.11" in hint
    else:
        assert answers == [catalog.contract_id(p, u) for p, u in calls]


def test_the_chi_square_stops_at_the_first_look_after_an_impossible_draw():
    """#27 item 4: an id of probability 0 returned at call 100 is seen at the first look."""
    import pytest

    from harness.catalogs.checks import CatalogFailure
    from harness.engine.course import load_course
    from harness.engine.own_code import reference_copy
    from harness.engine.target import InProcessTarget

    module = load_course().module("M07.1")
    probs = catalog.chi_square_probs()
    zero = next((i for i, p in enumerate(probs) if p == 0), None)
    if zero is None:
        pytest.skip("the public chi-square distribution has no id of probability 0")
    ref = reference_copy(module, "ol_m07_1_impossible")
    real, state = ref.sample_categorical, {"calls": 0}

    def sample(p, u):
        state["calls"] += 1
        return zero if state["calls"] == 100 else real(p, u)

    ref.sample_categorical = sample
    target = InProcessTarget("impossible", ref, module.functions, load_course().returns)
    with pytest.raises(CatalogFailure, match=f"^the first {catalog.CHI_SQUARE_DRAWS // 16} of "):
        catalog.chi_square_trial(target, 1)
    assert state["calls"] == catalog.CHI_SQUARE_DRAWS // 16


def test_an_interim_stop_says_where_it_stopped_and_why(monkeypatch):
    """M07.1's 4000 draws qualify no interim look (its cells expect 41 draws at most at 2000:
    too few for a p-value of 1e-8, docs/catalog-rules.md); at 40000 draws x01 (TV 0.52) is
    certain after 5000, and the failure says so, with the law so far."""
    import pytest

    from harness.catalogs.checks import CatalogFailure, interim_looks
    from harness.engine.course import load_course
    from harness.engine.mutants import find_mutant, mutant_target

    assert interim_looks(catalog.chi_square_probs(), catalog.CHI_SQUARE_DRAWS) == ()
    module = load_course().module("M07.1")
    monkeypatch.setattr(catalog, "CHI_SQUARE_DRAWS", 40_000)
    with pytest.raises(CatalogFailure) as failure:
        catalog.test_chi_square(mutant_target(find_mutant("M07.1", "x01"), module))
    message = str(failure.value)
    assert message.startswith("after the first 5000 of 40000 draws of sample_categorical(probs, u) with u "
                              "from PCG32 (seed ")
    assert "below the interim threshold 1e-08: the output is not probs (chi-square = " in message
    assert failure.value.pitfall == 8 and "id 11: observed " in message
