"""M06.3's sampled tests in the power audit: the generator check, the fast copy, the rules."""

from __future__ import annotations

import math

import pytest

from harness.audit.power import REGISTRY, reachable, run_power_audit, sampled_tests
from harness.audit.sampled import same_trial
from harness.audit.sampled_pcg import SameGenerator, sidak
from harness.audit.tabulate import NotTabulable
from harness.catalogs.m06_3 import test_catalog as catalog
from harness.engine.course import load_course
from harness.engine.mutants import find_mutant, mutant_target
from harness.engine.own_code import reference_target
from harness.paths import REFERENCE_PYTHON

MODULE = load_course().module("M06.3")


@pytest.fixture(scope="module")
def tests():
    chi, streams = sampled_tests(MODULE)
    return {"chi": chi, "streams": streams}


def mutant(mutant_id: str):
    return mutant_target(find_mutant("M06.3", mutant_id), MODULE)


def test_the_registry_covers_both_sampled_tests_with_the_catalogs_constants(tests):
    assert {t.test for t in tests.values()} == {kw["test"] for _, kw in REGISTRY["m06_3"]}
    chi, streams = tests["chi"], tests["streams"]
    assert (chi.size, chi.alpha, chi.fixed_seed) == (
        catalog.CHI_SQUARE_DRAWS, catalog.CHI_SQUARE_ALPHA, catalog.CHI_SQUARE_SEED)
    assert chi.p == [1 / catalog.CHI_SQUARE_BINS] * catalog.CHI_SQUARE_BINS
    assert (streams.size, streams.rule_alpha, streams.fixed_seed) == (
        catalog.STREAMS_WORDS, catalog.STREAMS_ALPHA, catalog.STREAMS_SEED)
    assert streams.alpha == pytest.approx(len(catalog.STREAM_PAIRS) * catalog.STREAMS_ALPHA, rel=1e-5)


@pytest.mark.parametrize("which", ["chi", "streams"])
def test_the_fast_copy_is_the_harness_generator(tests, which):
    assert tests[which].calls_match(11)


@pytest.mark.parametrize("which,seed", [("chi", 3), ("chi", catalog.CHI_SQUARE_SEED),
                                        ("streams", 3), ("streams", catalog.STREAMS_SEED)])
def test_the_reference_is_pcg32_and_its_trial_is_the_fast_one(tests, which, seed):
    test, target = tests[which], reference_target(MODULE)
    table = test.table(target)
    assert isinstance(table, SameGenerator) and not test.law(table)["changed"]
    real, fast = test.real(target, seed), test.fast(table, seed)
    assert same_trial(real, fast) and not real.killed and real.pvalue == fast.pvalue


def test_a_changed_generator_is_measured_by_real_trials_and_killed(tests):
    with pytest.raises(NotTabulable, match="differs from PCG32's"):
        tests["chi"].table(mutant("x14"))  # every uniform in [0, 1/2)
    trial = tests["chi"].real(mutant("x14"), 5)
    assert trial.killed and trial.pvalue < 1e-100
    for mutant_id in ("s02", "x02", "x03"):  # streams that collide
        trial = tests["streams"].real(mutant(mutant_id), 5)
        assert trial.killed and any(runs for runs, _, _ in trial.detail), mutant_id


def test_an_edit_the_trial_cannot_see_keeps_pcg32s_output(tests):
    target = mutant("x16")  # seeds out of range wrap instead of raising: valid seeds unchanged
    table = tests["streams"].table(target)
    assert same_trial(tests["streams"].real(target, 7), tests["streams"].fast(table, 7))
    with pytest.raises(NotTabulable, match="raised ValueError"):
        tests["chi"].table(mutant("x19"))  # 2**64 - 1 refused: the check seeds include it


def test_a_raising_generator_is_a_kill(tests):
    trial = tests["streams"].real(mutant("x19"), 2**64 - 1)
    assert trial.killed and trial.raised.startswith("ValueError: seed must be an int")


def test_sidak_combines_the_smallest_p_value_of_the_pairs():
    assert sidak(1e-6, 4) == pytest.approx(4e-6 - 6e-12, rel=1e-9)
    assert sidak(1.0, 4) == 1.0 and sidak(0.0, 4) == 0.0
    assert sidak(0.5, 2) == pytest.approx(0.75)


def test_a_class_runs_all_its_methods_and_what_they_call():
    source = (REFERENCE_PYTHON / MODULE.file).read_text(encoding="utf-8")
    seen = reachable(source, "PCG32")
    assert {"PCG32", "PCG32.__init__", "PCG32._step", "PCG32.next_u32", "PCG32.uniform",
            "_check_u64"} <= seen


@pytest.mark.slow
def test_a_small_m06_3_power_audit_passes_and_kills_the_designated_mutants():
    audit = run_power_audit("M06.3", seeds=2, jobs=2)
    assert audit.verdict == "pass" and audit.false_alarm_seeds == 20
    designated = {(t.test, m.mutant): m for t in audit.tests for m in t.mutants if m.designated}
    assert set(designated) == {("test_uniform_chi_square", "x14"), ("test_stream_independence", "s02"),
                               ("test_stream_independence", "x02"), ("test_stream_independence", "x03")}
    assert all(m.power.k == 2 and m.fixed_seed_killed for m in designated.values())
    chi = audit.tests[0]
    assert chi.detectable["df"] == 32 and not math.isnan(chi.uniformity_pvalue)
    assert {m.mutant for m in chi.mutants if m.method == "none"} >= {"x09", "x15", "x16"}
