"""Each sampled test run two ways: the catalog's own trial and the fast table agree exactly."""

from __future__ import annotations

import pytest

from harness.audit.power import REGISTRY, reachable, sampled_tests
from harness.audit.sampled import Spy, same_trial
from harness.catalogs.m07_6 import test_catalog as catalog
from harness.engine.course import load_course
from harness.engine.mutants import find_mutant, mutant_target
from harness.engine.own_code import reference_target
from harness.paths import REFERENCE_PYTHON

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


# -- the interim looks (#27 item 4): the fast path stops where the catalog's trial stops ---------

@pytest.mark.parametrize("key,stop", [("reference", 20000), ("s06", 2500), ("x44", 2500), ("s12", 20000),
                                      ("s07", None), ("s02", None)])
@pytest.mark.slow
def test_the_fast_path_is_the_real_trial_stop_point_included(tests, key, stop):
    """At the test's full size, where interim looks qualify: the same Trial (counts, draws made,
    statistic, verdict; or both raised) from the catalog's trial and from the table. ``stop``:
    the draws the trial made at the fixed seed (None: it raised, an impossible draw or an error)."""
    test = tests["chi"]
    target = reference_target(MODULE) if key == "reference" else mutant_target(find_mutant("M07.6", key),
                                                                               MODULE)
    table = test.table(target)
    for seed in (catalog.CHI_SQUARE_SEED, 11):
        real, fast = test.real(target, seed), test.fast(table, seed)
        assert same_trial(real, fast), (seed, real, fast)
        assert real.draws == fast.draws and real.pvalue == fast.pvalue
        if seed == catalog.CHI_SQUARE_SEED:
            assert (real.draws if not real.raised else None) == stop
            assert real.killed == (key != "reference")


def test_an_interim_stop_is_a_kill_at_its_prefix(tests):
    test = tests["chi"]
    trial = test.fast(test.table(mutant_target(find_mutant("M07.6", "s06"), MODULE)), 5)
    assert trial.killed and not trial.raised and trial.draws == 2500 and sum(trial.detail) == 2500
    assert trial.pvalue < catalog.INTERIM_ALPHA
    fixed = {**test.detectable()}
    assert fixed["interim_looks"] == [2500, 5000, 10000] and fixed["interim_alpha"] == 1e-8
    assert fixed["spent"] == pytest.approx(catalog.CHI_SQUARE_ALPHA, rel=1e-12)


@pytest.mark.slow
def test_a_correct_sampler_never_stops_early_in_the_fast_path(tests):
    """The reference's table over 2000 seeds: every trial makes all 20000 draws, none fails."""
    test = tests["chi"]
    table = test.table(reference_target(MODULE))
    trials = [test.fast(table, seed) for seed in range(1, 2001)]
    assert all(t.draws == test.size and not t.killed for t in trials)


def test_the_m07_1_fast_path_is_its_real_trial_with_interim_looks():
    """M07.1's public looks do not qualify at 4000 draws; at 40000 they do (its cells expect 100
    and more from 5000 draws on): x01 stops at the first, the reference never."""
    from harness.catalogs.checks import interim_looks
    from harness.catalogs.m07_1 import test_catalog as m07_1

    module = load_course().module("M07.1")
    test = next(t for t in sampled_tests(module) if t.kind == "chi-square")
    assert interim_looks(test.p, test.size) == () and test.final_alpha == test.alpha
    looked = interim_looks(test.p, 40000)
    assert looked and looked[0] == 5000
    for key, stop in (("reference", 40000), ("x01", 5000)):
        target = reference_target(module) if key == "reference" else mutant_target(
            find_mutant("M07.1", key), module)
        real, fast = test.real(target, m07_1.CHI_SQUARE_SEED, 40000), test.fast(
            test.table(target), m07_1.CHI_SQUARE_SEED, 40000)
        assert same_trial(real, fast) and real.draws == fast.draws == stop
