"""The M07.6 catalog's own inputs, seeds and statistics do what the catalog says (issue #14).

- Randomised cases come from the run seed (``harness.engine.seeding``): the public cases by default, fresh
  hidden ones under a seed, and code right only on the public inputs fails (that the reference passes
  and every mutant is killed under hidden seeds is tests/engine/test_hidden_cases.py, for every module).
- The chi-square never pools an id of probability 0: one draw there fails, naming the id.

File names carry the module: pytest's default import mode needs unique basenames.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from harness.catalogs import checks as support
from harness.catalogs.checks import CatalogFailure
from harness.catalogs.m07_6 import test_catalog as catalog
from harness.engine.course import load_course
from harness.engine.own_code import reference_copy
from harness.engine.runner import run_catalog
from harness.engine.seeding import case_seed, cases_from
from harness.engine.target import InProcessTarget

MODULE = load_course().module("M07.6")
HIDDEN = (3, 1_000_003, 2**40 + 7)


# -- pooling: an impossible id is never pooled --------------------------------------------------

def test_merge_small_never_pools_an_id_of_probability_zero():
    counts, expected = [100, 3, 0, 97], [100.0, 2.0, 0.0, 98.0]
    obs, exp = support.merge_small(counts, expected)
    # The expected-0 id is left out, the small one pooled.
    assert len(obs) == len(exp) == 2 and obs.sum() == 200
    assert support.impossible_draws([100, 3, 1, 96], expected) == [2]
    with pytest.raises(ValueError, match="impossible_draws"):
        support.merge_small([100, 3, 1, 96], expected)


def test_one_draw_of_an_impossible_id_fails_the_chi_square_by_name():
    p, _ = catalog.chi_square_inputs()
    zero = p.index(0.0)
    ref = reference_copy(MODULE, "ol_impossible")
    real = ref.speculative_step
    state = {"calls": 0}

    def once_impossible(*args):
        state["calls"] += 1
        return (zero, False) if state["calls"] == 1000 else real(*args)

    ref.speculative_step = once_impossible
    target = InProcessTarget("impossible", ref, MODULE.functions, load_course().returns)
    with pytest.raises(CatalogFailure, match=f"id {zero} was drawn 1 time although its probability is 0"):
        catalog.chi_square_trial(target, catalog.CHI_SQUARE_SEED)


def counting_target(name: str, wrong_at: int | None, wrong):
    """The reference's ``speculative_step``, answering ``wrong(args)`` at call ``wrong_at``, and
    counting its calls."""
    ref = reference_copy(MODULE, name)
    real = ref.speculative_step
    state = {"calls": 0}

    def step(*args):
        state["calls"] += 1
        return wrong(args) if state["calls"] == wrong_at else real(*args)

    ref.speculative_step = step
    return InProcessTarget(name, ref, MODULE.functions, load_course().returns), state


def test_a_sampled_test_stops_at_the_first_look_after_an_impossible_draw():
    """#27 item 4: drawn at call 1000, seen at the first look (draw 1250), not after 20000."""
    zero = catalog.chi_square_inputs()[0].index(0.0)
    target, state = counting_target("ol_impossible_early", 1000, lambda args: (zero, False))
    with pytest.raises(CatalogFailure, match="^the first 1250 of 20000 draws of speculative_step"):
        catalog.chi_square_trial(target, catalog.CHI_SQUARE_SEED)
    assert state["calls"] == 1250 == catalog.CHI_SQUARE_DRAWS // 16


def test_a_sampled_test_stops_at_the_first_look_after_an_error():
    def boom(args):
        raise ZeroDivisionError("float division by zero")

    target, state = counting_target("ol_error_early", 3, boom)
    with pytest.raises(CatalogFailure, match="ZeroDivisionError"):
        catalog.chi_square_trial(target, catalog.CHI_SQUARE_SEED)
    assert state["calls"] == 1250


def test_a_passing_sampled_test_takes_every_draw():
    target, state = counting_target("ol_correct", None, lambda args: None)
    counts, _, _, pvalue = catalog.chi_square_trial(target, catalog.CHI_SQUARE_SEED)
    assert state["calls"] == sum(counts) == catalog.CHI_SQUARE_DRAWS and pvalue >= catalog.CHI_SQUARE_ALPHA


def test_the_looks_cover_every_call_once():
    for n in (1, 2, 3, 15, 16, 17, 1000, 20000):
        chunks = support.looks(list(range(n)))
        assert [c for _, chunk in chunks for c in chunk] == list(range(n))
        assert [end for end, _ in chunks] == sorted({max(1, n // d) for d in support.LOOKS} | {n})


# -- interim looks: Haybittle-Peto (#27 item 4) -----------------------------------------------------

class Counting:
    """A target that counts the calls it is asked to answer (through ``map``), delegating the rest."""

    def __init__(self, target) -> None:
        self.target, self.calls = target, 0

    def map(self, fn, calls, **kwargs):
        self.calls += len(calls)
        return self.target.map(fn, calls, **kwargs)

    def __getattr__(self, name):
        return getattr(self.target, name)


def mutant(mutant_id: str) -> Counting:
    from harness.engine.mutants import find_mutant, mutant_target

    return Counting(mutant_target(find_mutant("M07.6", mutant_id), MODULE))


def test_the_interim_looks_spend_at_most_the_named_alpha():
    """Each qualifying look is charged INTERIM_SPEND (at least its threshold: the exact
    multinomial's rate at p < 1e-8 is up to 1.8 times the chi-square's), and the last look gets
    what is left, so the charges and the last threshold add up to the named alpha exactly."""
    p, _ = catalog.chi_square_inputs()
    draws, alpha = catalog.CHI_SQUARE_DRAWS, catalog.CHI_SQUARE_ALPHA
    looked = support.interim_looks(p, draws)
    assert looked == (2500, 5000, 10000)  # 1250 draws expect 51.6 of id 1: too few for 1e-8
    assert support.INTERIM_SPEND >= support.INTERIM_ALPHA
    last = support.final_alpha(alpha, p, draws)
    assert len(looked) * support.INTERIM_SPEND + last == pytest.approx(alpha, rel=1e-12)
    assert 0 < last <= alpha - len(looked) * support.INTERIM_SPEND + 1e-22
    assert support.chi_square_threshold(2500, draws, alpha, p) == support.INTERIM_ALPHA
    assert support.chi_square_threshold(draws, draws, alpha, p) == last
    for end in looked:  # a look qualifies on its pooled expectations alone
        expected = [end * a for a in p]
        _, exp = support.merge_small(expected, expected)
        assert min(exp) >= support.INTERIM_MIN_EXPECTED and len(exp) - 1 >= support.INTERIM_MIN_DF
    assert support.interim_looks([0.5, 0.5], 10**6) == ()  # df 1: its tail is no chi-square's
    assert support.final_alpha(alpha, [0.5, 0.5], 10**6) == alpha  # nothing charged, nothing spent


def test_a_law_far_from_p_stops_at_the_first_interim_look_with_the_message():
    """s06 resamples from p (TV 0.10): certain after 2500 draws, told so, ids named."""
    target = mutant("s06")
    first = support.interim_looks(catalog.chi_square_inputs()[0], catalog.CHI_SQUARE_DRAWS)[0]
    with pytest.raises(CatalogFailure) as failure:
        catalog.test_speculative_chi_square(target)
    message = str(failure.value)
    assert target.calls == first == 2500
    assert message.startswith("after the first 2500 of 20000 draws of speculative_step (x ~ q, seed ")
    assert "the chi-square's p-value is " in message and "below the interim threshold 1e-08: the " \
        "output is not p (chi-square = " in message
    assert "over-represented: id 3 (" in message and "under-represented: id 0 (" in message
    # the table is the 2500 draws' (id 7: p = 0.2075), not the 20000's
    assert failure.value.pitfall == 5 and message.endswith("id 7: observed 476, expected 518.7")


def test_a_generator_of_its_own_stopped_early_still_names_pitfall_17():
    """x24 (its own generator on rejection) stops at an interim look; the diagnosis reads the
    answers so far and names ol pitfall 17 as the whole run did."""
    target = mutant("x24")
    with pytest.raises(CatalogFailure, match="^after the first 2500 of 20000 draws") as failure:
        catalog.test_speculative_chi_square(target)
    assert failure.value.pitfall == 17 and "whatever u_resample" in str(failure.value)


def test_a_law_slightly_off_is_decided_only_at_the_end():
    """s12 (TV 0.018): its p-value at 20000 draws (7.8e-8) lies between INTERIM_ALPHA and the
    last threshold; no interim look is certain, the last one fails it."""
    target = mutant("s12")
    seed = case_seed(catalog.CHI_SQUARE_SEED, "m07_6.chi_square.draws")  # the public cases': the constant
    counts, _, _, pvalue = catalog.chi_square_trial(target, seed)
    p = catalog.chi_square_inputs()[0]
    assert support.INTERIM_ALPHA < pvalue < support.final_alpha(catalog.CHI_SQUARE_ALPHA, p, 20000)
    assert target.calls == sum(counts) == catalog.CHI_SQUARE_DRAWS
    with pytest.raises(CatalogFailure, match=r"^20000 draws of speculative_step .* < 9\.4e-07 \(alpha "
                       r"1e-06 less 3 interim looks at 2e-08\); over-represented: id 0 "):
        catalog.test_speculative_chi_square(mutant("s12"))


@pytest.mark.slow
def test_a_correct_sampler_never_stops_early():
    """The reference over seeds, and 200000 exact multinomial prefixes of p (numpy), at every
    qualifying look: no stop (one is expected with probability about 1e-2 over all of them)."""
    p, _ = catalog.chi_square_inputs()
    draws = catalog.CHI_SQUARE_DRAWS
    ref = Counting(InProcessTarget("reference", reference_copy(MODULE, "ol_looks"), MODULE.functions,
                                   load_course().returns))
    for seed in (1, 2, 3):
        ref.calls = 0
        counts, _, _, pvalue = catalog.chi_square_trial(ref, seed)
        assert ref.calls == sum(counts) == draws and pvalue >= support.final_alpha(1e-6, p, draws)
    from scipy.special import chdtrc

    rng = np.random.default_rng(20261202)
    probs = np.array([a for a in p if a > 0])
    looked = support.interim_looks(p, draws)
    n = 200_000
    counts = np.zeros((n, len(probs)), dtype=np.int64)
    made, stops = 0, 0
    for end in looked:
        counts += rng.multinomial(end - made, probs, size=n)
        made = end
        expected = end * probs
        stat = ((counts - expected) ** 2 / expected).sum(axis=1)
        pvalues = chdtrc(len(probs) - 1, stat)
        stops += int((pvalues < support.INTERIM_ALPHA).sum())
        row = [int(c) for c in counts[0]]  # the vectorised p-value is the catalog's own
        full = row[:5] + [0] + row[5:]
        assert support.look_chi_square(full, p, end)[2] == pytest.approx(pvalues[0], rel=1e-9)
    assert stops == 0


# -- the run seed: public cases, hidden ones, and replays ----------------------------------------

def families() -> dict[str, object]:
    return {"eighths": catalog.eighths_cases(), "floats": catalog.float_cases(),
            "chi-square inputs": catalog.chi_square_inputs(),
            "thresholds": catalog.threshold_cases(), "edges": catalog.pairwise_edge_cases(),
            "alpha pair": catalog.discriminating_alpha_pair(),
            "residual pair": catalog.discriminating_pair()}


def test_public_cases_are_the_catalogs_constants_and_hidden_ones_differ():
    assert case_seed(8, "m07_6.eighths") == 8  # no run seed: the public constant itself
    public = families()
    with cases_from(None):
        assert families() == public
    with cases_from(HIDDEN[0]):
        first = families()
        assert families() == first  # a seed replays its cases exactly
    with cases_from(HIDDEN[1]):
        second = families()
    for name in public:
        assert first[name] != public[name] and second[name] != first[name], name


def memoriser() -> types.ModuleType:
    """The reference wherever the public catalog calls it, a wrong resampler everywhere else: code
    right on every public input pair and wrong on all others."""
    ref = reference_copy(MODULE, "ol_memoriser")
    seen: set[tuple] = set()
    real = ref.speculative_step

    def key(p, q) -> tuple | None:
        try:
            key = tuple(np.asarray(p, dtype=float).tolist()), tuple(np.asarray(q, dtype=float).tolist())
            hash(key)
            return key
        except (TypeError, ValueError):  # not 1-D distributions: the reference's own error follows
            return None

    def recording(p, q, x, u_accept, u_resample):
        seen.add(key(p, q))
        return real(p, q, x, u_accept, u_resample)

    ref.speculative_step = recording
    run = run_catalog(MODULE, InProcessTarget("record", ref, MODULE.functions, load_course().returns),
                      "record")
    assert run.verdict == "pass", [(t.name, t.message[:300]) for t in run.failures()]

    def memorised(p, q, x, u_accept, u_resample):
        token, accepted = real(p, q, x, u_accept, u_resample)
        if key(p, q) in seen or accepted:
            return token, accepted
        return ref.sample_categorical(np.asarray(p, dtype=float), u_resample), False  # p, not the residual

    ref.speculative_step = memorised
    return ref


@pytest.mark.slow
def test_code_right_only_on_the_public_inputs_passes_them_and_fails_hidden_ones():
    module = memoriser()
    target = InProcessTarget("memoriser", module, MODULE.functions, load_course().returns)
    public = run_catalog(MODULE, target, "memoriser")
    assert public.verdict == "pass", [(t.name, t.message[:300]) for t in public.failures()]
    hidden = run_catalog(MODULE, target, "memoriser", seed=HIDDEN[0])
    assert hidden.verdict == "fail" and hidden.seed == HIDDEN[0]
    assert "test_speculative_output_is_exactly_p" in {t.name for t in hidden.failures()}


def test_numpy_scalars_for_array_inputs_only_are_still_correct():
    """Correct code may answer numpy scalars for numpy inputs and Python numbers for lists: the
    argument-kinds test compares the numbers, not their Python types."""
    ref = reference_copy(MODULE, "ol_mixed_scalars")
    real_alpha, real_step = ref.acceptance_probability, ref.speculative_step

    def alpha(p, q):
        return np.float64(real_alpha(p, q)) if isinstance(p, np.ndarray) else real_alpha(p, q)

    def step(p, q, x, u_accept, u_resample):
        token, accepted = real_step(p, q, x, u_accept, u_resample)
        return (np.int64(token), np.bool_(accepted)) if isinstance(p, np.ndarray) else (token, accepted)

    ref.acceptance_probability, ref.speculative_step = alpha, step
    target = InProcessTarget("mixed", ref, MODULE.functions, load_course().returns)
    run = run_catalog(MODULE, target, "mixed", pattern="test_arguments_are_never_modified")
    assert run.verdict == "pass", [t.message[:300] for t in run.failures()]


# -- issue #25: three contract rules, each checked against code written otherwise than its mutant ---

def failing(module: types.ModuleType) -> dict[str, int | None]:
    """The catalog on ``module`` in process: each failing test with the pitfall it names."""
    target = InProcessTarget("variant", module, MODULE.functions, load_course().returns)
    run = run_catalog(MODULE, target, "variant")
    return {t.name: t.pitfall for t in run.failures()}


def test_alpha_clipped_by_np_clip_fails_with_pitfall_20():
    """np.clip, not the mutant's min(1, alpha): [1/9] * 9 sums to 1.0000000000000002 left to right."""
    ref = reference_copy(MODULE, "ol_clipped_alpha")
    real = ref.acceptance_probability
    ref.acceptance_probability = lambda p, q: float(np.clip(real(p, q), 0.0, 1.0))
    assert failing(ref) == {"test_acceptance_rate_matches_acceptance_probability": 20}


def test_alpha_that_rounds_above_1_is_in_the_catalog():
    assert all(catalog.ltr_sum(p) > 1.0 and abs(catalog.ltr_sum(p) - 1.0) <= 1e-9
               for p in catalog.ABOVE_ONE)


@pytest.mark.parametrize("tolerance", [1e-15, 1e-9, 1e-8])
@pytest.mark.slow
def test_a_tolerance_on_z_fails_with_pitfall_21(tolerance):
    """Z below an epsilon taken for 0 (the mutant's 1e-12, the sum rule's 1e-9, np.isclose's 1e-8)."""
    ref = reference_copy(MODULE, "ol_tolerant_z")
    real = ref.residual_distribution

    def residual(p, q):
        res = real(p, q)  # the checks
        p_arr, q_arr = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
        z = ref.left_to_right_sum(np.maximum(p_arr - q_arr, 0.0))
        return p_arr.copy() if z < tolerance else res

    ref.residual_distribution = residual
    assert failing(ref) == {"test_residual_when_p_equals_q": 21}


def test_negative_zero_refused_in_distributions_fails_with_pitfall_22():
    """np.signbit in the distribution check (the mutant's copysign is in rejection_accept)."""
    ref = reference_copy(MODULE, "ol_signbit_entries")
    real_pair = ref._pair

    def pair(p, q):
        if np.signbit(np.asarray(p, dtype=float)).any() or np.signbit(np.asarray(q, dtype=float)).any():
            raise ValueError("p and q must be non-negative")
        return real_pair(p, q)

    ref._pair = pair
    assert failing(ref) == {"test_arguments_are_never_modified": 22}


def test_negative_zero_answers_are_the_same_answer():
    """A correct sum that starts from its first term answers -0.0 where the loop from 0.0 answers
    0.0 (disjoint supports with -0.0 entries): one number, so the -0.0 check passes it."""
    ref = reference_copy(MODULE, "ol_signed_zero_sum")
    real = ref.acceptance_probability

    def alpha(p, q):
        real(p, q)  # the checks
        mins = [min(a, b) for a, b in zip(np.asarray(p, dtype=float).tolist(),
                                          np.asarray(q, dtype=float).tolist(), strict=True)]
        total = mins[0]
        for v in mins[1:]:
            total += v
        return total

    ref.acceptance_probability = alpha
    assert alpha([1.0, -0.0], [-0.0, 1.0]) == 0.0
    assert failing(ref) == {}


def test_nan_answers_are_one_answer_to_the_negative_zero_check():
    """A residual that is NaN for p = q (0/0: pitfall 6) answers NaN with -0.0 and with 0.0 in
    the same place: the same answer, so only the p = q test fails, not the -0.0 check with a
    sign-bit story (NaN != NaN once made it fail there, found by an outside writer)."""
    ref = reference_copy(MODULE, "ol_nan_residual")
    real = ref.residual_distribution

    def residual(p, q):
        real(p, q)  # the checks
        p_arr, q_arr = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
        nums = np.maximum(p_arr - q_arr, 0.0)
        z = 0.0
        for v in nums.tolist():  # left to right, as the contract sums
            z += v
        with np.errstate(invalid="ignore"):
            return nums / z

    ref.residual_distribution = residual
    assert failing(ref).keys() == {"test_residual_when_p_equals_q"}


def test_an_accept_test_on_the_exact_ratio_is_told_as_such_with_pitfall_18():
    """u < p_x / q_x on Fractions (the ratio not rounded): its few differing decisions once read
    "done in float32" or "u_accept and u_resample swapped" (an outside writer's correct-looking
    code); the enumerated law test now says what it is."""
    from fractions import Fraction

    ref = reference_copy(MODULE, "ol_exact_ratio")
    real = ref.rejection_accept

    def accept(p_x, q_x, u):
        real(p_x, q_x, u)  # the checks
        return Fraction(u) < Fraction(p_x) / Fraction(q_x)

    ref.rejection_accept = accept
    found = failing(ref)
    assert found["test_speculative_output_is_exactly_p"] == 18, found


def test_the_geometric_tests_named_alpha_is_its_exact_false_alarm_rate():
    """GEOMETRIC_ALPHA (in the test's checks text and docs/catalog-rules.md) is the exact rate at
    GEOMETRIC_SIGMAS; the chapter's 4 standard errors would be 7.5e-5."""
    from harness.audit.analytic import geometric_alarm

    _, m, _ = catalog.geometric_trial(
        InProcessTarget("reference", reference_copy(MODULE, "ol_alpha"), MODULE.functions,
                        load_course().returns), catalog.GEOMETRIC_SEED, samples=1)

    def alarm(sigmas):
        return geometric_alarm(1 / m, 0, m, catalog.GEOMETRIC_SAMPLES, sigmas)

    assert alarm(catalog.GEOMETRIC_SIGMAS) == pytest.approx(catalog.GEOMETRIC_ALPHA, rel=0.01)
    assert alarm(4.0) == pytest.approx(7.5e-5, rel=0.01)
    assert "alpha 1e-6; 4 would be 7.5e-5" in catalog.test_rejection_sample_tries_are_geometric.ol_case.checks
