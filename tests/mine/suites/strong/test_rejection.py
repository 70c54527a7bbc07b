"""A strong student suite for M07.6: every function, its boundaries, its errors and its draw order.

Written against the contract only: values compared with ==, never `is`; errors as ValueError of
any kind; uniforms from a scripted source the test controls.
"""

from fractions import Fraction

import numpy as np
import pytest
from tinyllm.prob.pcg32 import PCG32
from tinyllm.prob.rejection import (
    acceptance_probability,
    rejection_accept,
    rejection_sample,
    residual_distribution,
    speculative_step,
)

P = [0.5, 0.25, 0.25, 0.0]  # the chapter's worked example
Q = [0.25, 0.5, 0.0, 0.25]
TENTHS = [0.1] * 10  # not binary fractions: sums round


class Script:
    """A uniform source that returns the values I choose, and counts them."""

    def __init__(self, values):
        self.values, self.drawn = list(values), 0

    def uniform(self):
        self.drawn += 1
        return self.values.pop(0)


def ltr(values):
    total = 0.0
    for v in values:
        total += v
    return total


# -- rejection_accept ------------------------------------------------------------------------

def test_accept_is_strict():
    assert rejection_accept(0.0, 0.25, 0.0) == False
    assert rejection_accept(0.5, 1.0, 0.5) == False
    assert rejection_accept(0.5, 1.0, 0.49999999999999994) == True


@pytest.mark.parametrize("u", [0.0, 0.5, 0.75, 0.9999999999999999])
def test_accept_always_when_target_dominates(u):
    assert rejection_accept(0.5, 0.25, u) == True
    assert rejection_accept(0.25, 0.25, u) == True


@pytest.mark.parametrize("args", [(0.5, 0.0, 0.5), (-0.25, 0.5, 0.5), (0.5, 0.5, 1.0),
                                  (0.5, 0.5, -0.25), (0.5, 0.5, float("nan")),
                                  (float("inf"), 0.5, 0.5)])
def test_accept_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        rejection_accept(*args)


@pytest.mark.parametrize("args", [(None, 0.5, 0.5), (0.5, "0.5", 0.5), (0.5, 0.5, None)])
def test_accept_rejects_non_numbers(args):
    with pytest.raises((TypeError, ValueError)):  # a non-number may raise either
        rejection_accept(*args)


def test_accept_decides_next_to_a_rounded_ratio():
    # fl(0.6 / 0.7) = 0.8571428571428572: the uniform just below it accepts, it itself rejects.
    assert rejection_accept(0.6, 0.7, 0.8571428571428571) == True
    assert rejection_accept(0.6, 0.7, 0.8571428571428572) == False


# -- acceptance_probability and residual_distribution ---------------------------------------

def test_worked_example():
    assert acceptance_probability(P, Q) == 0.5
    assert list(residual_distribution(P, Q)) == [0.5, 0.0, 0.5, 0.0]


def test_alpha_is_a_left_to_right_sum_of_min():
    assert acceptance_probability(TENTHS, TENTHS) == ltr(TENTHS)  # 0.9999999999999999, not 1.0
    gen = PCG32(5, 54)
    w = [gen.uniform() + 0.01 for _ in range(12)]
    v = [gen.uniform() + 0.01 for _ in range(12)]
    p, q = [a / ltr(w) for a in w], [b / ltr(v) for b in v]
    assert acceptance_probability(p, q) == ltr([min(a, b) for a, b in zip(p, q)])


def test_residual_is_max_p_minus_q_normalized():
    gen = PCG32(9, 54)
    for _ in range(20):
        w = [gen.uniform() + 0.01 for _ in range(6)]
        v = [gen.uniform() + 0.01 for _ in range(6)]
        p, q = [a / ltr(w) for a in w], [b / ltr(v) for b in v]
        alpha = sum(min(Fraction(a), Fraction(b)) for a, b in zip(p, q))
        got = residual_distribution(p, q)
        for g, a, b in zip(got, p, q):
            want = max(Fraction(a) - Fraction(b), Fraction(0)) / (1 - alpha)
            assert abs(Fraction(float(g)) - want) < 1e-12


def test_residual_sum_is_left_to_right():
    p = [0.1] * 10 + [0.0] * 10
    q = [0.0] * 10 + [0.1] * 10
    z = ltr([max(0.0, a - b) for a, b in zip(p, q)])
    assert list(residual_distribution(p, q)) == [max(0.0, a - b) / z for a, b in zip(p, q)]


def test_residual_of_equal_distributions_is_a_copy_of_p():
    arr = np.array([0.25, 0.25, 0.5])
    res = residual_distribution(arr, arr)
    assert list(res) == [0.25, 0.25, 0.5]
    assert res is not arr and not np.shares_memory(res, arr)
    assert list(residual_distribution(TENTHS, TENTHS)) == TENTHS


def test_residual_of_disjoint_supports_is_p():
    p, q = [0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]
    assert list(residual_distribution(p, q)) == p
    assert acceptance_probability(p, q) == 0.0


@pytest.mark.parametrize("fn", [acceptance_probability, residual_distribution])
@pytest.mark.parametrize("p, q", [([0.5, 0.5], [0.25, 0.25, 0.5]), ([0.5, 0.5], [0.6, 0.6]),
                                  ([0.5, 0.5], [1.5, -0.5]), ([0.6, 0.6], [0.5, 0.5])])
def test_shapes_and_distributions_are_checked(fn, p, q):
    with pytest.raises(ValueError):
        fn(p, q)


# -- speculative_step ------------------------------------------------------------------------

def test_speculative_concrete_draws():
    assert tuple(speculative_step(P, Q, 1, 0.75, 0.75)) == (2, False)
    assert tuple(speculative_step(P, Q, 1, 0.75, 0.6)) == (2, False)  # residual CDF [.5, .5, 1, 1]
    assert tuple(speculative_step(P, Q, 1, 0.75, 0.25)) == (0, False)
    assert tuple(speculative_step(P, Q, 1, 0.25, 0.75)) == (1, True)


def test_speculative_walks_the_residual_over_ascending_ids():
    # Residual [0, 2/7, 5/7]: u_resample = 0 gives id 1 (the first positive id), not the largest.
    assert tuple(speculative_step([0.0, 0.375, 0.625], [0.875, 0.125, 0.0], 0, 0.0, 0.0)) == (1, False)


@pytest.mark.parametrize("u_resample", [0.0, 0.75, 1.0, float("nan")])
def test_an_accepted_draft_never_reads_u_resample(u_resample):
    assert tuple(speculative_step(P, Q, 1, 0.25, u_resample)) == (1, True)


def test_speculative_output_is_p_enumerated():
    """x ~ q, both uniforms on a grid of sixteenths (every cell boundary of this example)."""
    law = {}
    grid = [Fraction(k, 16) for k in range(16)]
    for x, q_x in enumerate(Q):
        if q_x == 0:
            continue
        for u in grid:
            for v in grid:
                token, _ = speculative_step(P, Q, x, float(u), float(v))
                law[int(token)] = law.get(int(token), 0) + Fraction(q_x) / 256
    assert law == {0: Fraction(1, 2), 1: Fraction(1, 4), 2: Fraction(1, 4)}


@pytest.mark.parametrize("x", [4, -1, 2, 1.0, True])
def test_speculative_rejects_bad_drafts(x):
    with pytest.raises(ValueError):
        speculative_step(P, Q, x, 0.5, 0.5)


# -- rejection_sample ------------------------------------------------------------------------

def test_rejection_sample_uses_the_envelope():
    rng = Script([0.1, 0.75, 0.1, 0.25])  # ratio p_0 / (m q_0) = 0.5: 0.75 rejects, 0.25 accepts
    assert tuple(rejection_sample([0.5, 0.5], [0.5, 0.5], 2.0, rng)) == (0, 2)
    assert rng.drawn == 4


def test_rejection_sample_draws_the_proposal_first():
    rng = Script([0.1, 0.9])
    assert tuple(rejection_sample([0.5, 0.5, 0.0, 0.0], [0.25] * 4, 2.0, rng, 1)) == (0, 1)
    assert rng.drawn == 2


def test_rejection_sample_never_accepts_an_id_p_excludes():
    rng = Script([0.6, 0.0])  # proposes id 2 (p = 0) and accepts with u = 0 only if <=
    with pytest.raises(RuntimeError):
        rejection_sample([0.5, 0.5, 0.0, 0.0], [0.25] * 4, 2.0, rng, 1)


def test_rejection_sample_counts_tries_from_one():
    assert tuple(rejection_sample([0.25, 0.75], [0.25, 0.75], 1.0, Script([0.5, 0.5]))) == (1, 1)


def test_rejection_sample_gives_up_after_max_tries():
    rng = Script([0.75, 0.0] * 3)
    with pytest.raises(RuntimeError):
        rejection_sample([1.0, 0.0], [0.5, 0.5], 2.0, rng, 3)
    assert rng.drawn == 6


@pytest.mark.parametrize("p, q, m, tries", [([0.5, 0.5], [0.9, 0.1], 1.5, 10),
                                            ([0.5, 0.5], [0.5, 0.5], 0.5, 10),
                                            ([0.5, 0.5], [0.5, 0.5], float("nan"), 10),
                                            ([0.5, 0.5], [0.5, 0.5], 2.0, 0)])
def test_rejection_sample_checks_its_arguments(p, q, m, tries):
    with pytest.raises(ValueError):
        rejection_sample(p, q, m, Script([0.5] * 4), tries)


def test_rejection_sample_mean_tries_is_m():
    rng = PCG32(76, 54)
    tries = [rejection_sample([0.5, 0.3, 0.2, 0.0], [0.25] * 4, 3.0, rng)[1] for _ in range(2000)]
    assert abs(sum(tries) / len(tries) - 3.0) < 4 * (3.0 * 2.0 / 2000) ** 0.5
