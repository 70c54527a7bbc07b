"""Each sampled test run two ways: the catalog's own trial and the fast table agree exactly."""

from __future__ import annotations

import pytest

from harness.audit.power import REGISTRY, reachable, sampled_tests
from harness.audit.sampled import Spy, same_trial
from harness.catalogs.m07_6 import test_catalog as catalog
from harness.engine.course import REFERENCE_PYTHON, load_course
from harness.engine.mutants import find_mutant
from harness.engine.own_code import reference_target
from harness.lab.engine import mutant_target

MODULE = load_course().module("M07.6")


@pytest.fixture(scope="module")
def tests():
    chi, tries = sampled_tests(MODULE)
    return {"chi": chi, "tries": tries}


def test_the_registry_covers_every_trial_of_the_catalog(tests):
    assert {t.test for t in tests.values()} == {kw["test"] for _, kw in REGISTRY["m07_6"]}
    assert tests["chi"].size == catalog.CHI_SQUARE_DRAWS and tests["chi"].alpha == catalog.CHI_SQUARE_ALPHA


def test_the_spy_reads_what_the_trial_feeds_the_code(tests):
    p, q = catalog.chi_square_inputs()
    assert (tests["chi"].p, tests["chi"].q) == (p, q)
    spy = Spy("rejection_sample", (0, 1))
    catalog.geometric_trial(spy, 1, 5)
    assert len(spy.calls) == 5 and tests["tries"].m == spy.calls[0][2]


def test_the_fast_draws_are_the_catalogs(tests):
    assert tests["chi"].calls_match(catalog.CHI_SQUARE_SEED)


@pytest.mark.parametrize("which,seed", [("chi", 3), ("tries", 3), ("tries", catalog.GEOMETRIC_SEED)])
def test_the_reference_table_gives_the_catalogs_trial(tests, which, seed):
    test, target = tests[which], reference_target(MODULE)
    table = test.table(target)
    assert not test.law(table)["changed"]
    assert same_trial(test.real(target, seed, test.check_size), test.fast(table, seed, test.check_size))


def test_a_designated_chi_square_mutant_has_a_changed_law_and_the_same_trial(tests):
    test, target = tests["chi"], mutant_target(find_mutant("M07.6", "s06"), MODULE)
    table = test.table(target)
    law = test.law(table)
    assert law["changed"] and law["tv"] > 0.05 and law["analytic_power"] > 0.999
    assert same_trial(test.real(target, 5, 2000), test.fast(table, 5, 2000))


def test_tries_counted_from_zero_shift_the_mean_by_one(tests):
    test = tests["tries"]
    law = test.law(test.table(mutant_target(find_mutant("M07.6", "s18"), MODULE)))
    assert law["offset"] == -1 and law["mean_tries"] == pytest.approx(2.0)


def test_only_functions_the_trial_runs_are_reachable():
    source = (REFERENCE_PYTHON / MODULE.file).read_text(encoding="utf-8")
    assert reachable(source, "rejection_sample") == {"rejection_sample", "_pair", "_finite"}
    assert "rejection_sample" not in reachable(source, "speculative_step")
