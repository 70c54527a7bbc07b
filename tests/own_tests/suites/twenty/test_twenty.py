"""Twenty tests of the strong suite (``../strong``), none parametrised: the size of suite issue #27's
``ol tests --mine`` goal is stated for (a 20-test suite, 68 implementations). Every function, its
boundaries, its errors and its draw order.

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
    assert acceptance_probability(p, q) == ltr([min(a, b) for a, b in zip(p, q, strict=True)])


def test_residual_is_max_p_minus_q_normalized():
    gen = PCG32(9, 54)
    for _ in range(20):
        w = [gen.uniform() + 0.01 for _ in range(6)]
        v = [gen.uniform() + 0.01 for _ in range(6)]
        p, q = [a / ltr(w) for a in w], [b / ltr(v) for b in v]
        alpha = sum(min(Fraction(a), Fraction(b)) for a, b in zip(p, q, strict=True))
        got = residual_distribution(p, q)
        for g, a, b in zip(got, p, q, strict=True):
            want = max(Fraction(a) - Fraction(b), Fraction(0)) / (1 - alpha)
            assert abs(Fraction(float(g)) - want) < 1e-12


def test_residual_of_equal_distributions_is_a_copy_of_p():
    arr = np.array([0.25, 0.25, 0.5])
    res = residual_distribution(arr, arr)
    assert list(res) == [0.25, 0.25, 0.5]
    assert res is not arr and not np.shares_memory(res, arr)
    assert list(residual_distribution(TENTHS, TENTHS)) == TENTHS


# -- speculative_step ------------------------------------------------------------------------

def test_speculative_concrete_draws():
    assert tuple(speculative_step(P, Q, 1, 0.75, 0.75)) == (2, False)
    assert tuple(speculative_step(P, Q, 1, 0.75, 0.6)) == (2, False)  # residual CDF [.5, .5, 1, 1]
    assert tuple(speculative_step(P, Q, 1, 0.75, 0.25)) == (0, False)
    assert tuple(speculative_step(P, Q, 1, 0.25, 0.75)) == (1, True)


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


def test_rejection_sample_gives_up_after_max_tries():
    rng = Script([0.75, 0.0] * 3)
    with pytest.raises(RuntimeError):
        rejection_sample([1.0, 0.0], [0.5, 0.5], 2.0, rng, 3)
    assert rng.drawn == 6


def test_rejection_sample_mean_tries_is_m():
    rng = PCG32(76, 54)
    tries = [rejection_sample([0.5, 0.3, 0.2, 0.0], [0.25] * 4, 3.0, rng)[1] for _ in range(2000)]
    assert abs(sum(tries) / len(tries) - 3.0) < 4 * (3.0 * 2.0 / 2000) ** 0.5


# -- rules of the contract the tests above left alone (issue #14) ------------------------------

GRID = 2.0**53  # uniforms are multiples of 2**-53


def below_and_at(t):
    """The largest uniform below t and the smallest one at or above it."""
    k = int(np.ceil(t * GRID))
    return (k - 1) / GRID, k / GRID


def random_pairs(count, n, seed):
    gen = np.random.default_rng(seed)
    for _ in range(count):
        w, v = gen.random(n) + 0.05, gen.random(n) + 0.05
        yield (w / ltr(w.tolist())).tolist(), (v / ltr(v.tolist())).tolist()


def test_von_neumann_threshold_is_decided_to_the_bit():
    for p, q in random_pairs(300, 3, 1):
        m = max(a / b for a, b in zip(p, q, strict=True)) * 1.7
        start = 0.0
        for x in range(3):
            t = p[x] / (m * q[x])
            for u in below_and_at(t):
                rng = Script([start, u])
                if u < t:
                    assert rejection_sample(p, q, m, rng, max_tries=1) == (x, 1)
                else:
                    with pytest.raises(RuntimeError):
                        rejection_sample(p, q, m, rng, max_tries=1)
            start += q[x]  # the next id's proposals start at the running sum of q


def test_a_value_error_draws_nothing():
    rng = Script([0.5, 0.5])
    with pytest.raises(ValueError):
        rejection_sample([0.5, 0.5], [0.9, 0.1], 1.5, rng)  # 0.5 > 1.5 * 0.1
    assert rng.drawn == 0


def read_only(values, dtype=np.float64):
    arr = np.array(values, dtype=dtype)
    arr.flags.writeable = False
    return arr


def test_numpy_arguments_are_left_alone_and_read_only_ones_work():
    p, q = np.array(P), np.array(Q)
    assert acceptance_probability(p, q) == 0.5
    assert rejection_sample(np.array([0.5, 0.5]), np.array([0.75, 0.25]), 2.0, Script([0.1, 0.1])) == (0, 1)
    residual_distribution(p, q)
    assert p.tolist() == P and q.tolist() == Q
    q2 = np.array([0.75, 0.25])
    rejection_sample([0.5, 0.5], q2, 2.0, Script([0.1, 0.1]))
    assert q2.tolist() == [0.75, 0.25]
    assert residual_distribution(read_only(P), read_only(Q)).tolist() == [0.5, 0.0, 0.5, 0.0]
    assert acceptance_probability(read_only(P), read_only(Q)) == 0.5


def test_float32_inputs_are_computed_in_float64():
    p32, q32 = np.array([0.375, 0.25, 0.375], np.float32), np.array([0.125, 0.625, 0.25], np.float32)
    got = residual_distribution(p32, q32)
    assert got.dtype == np.float64
    assert got.tolist() == residual_distribution([0.375, 0.25, 0.375], [0.125, 0.625, 0.25]).tolist()
    assert residual_distribution([1, 0], [1, 0]).dtype == np.float64  # integers too


def test_speculative_accept_boundary_is_float64_on_arbitrary_inputs():
    for p, q in random_pairs(100, 4, 3):
        for x in range(4):
            r = p[x] / q[x]
            if r >= 1:
                continue
            for u in below_and_at(r):
                assert speculative_step(p, q, x, u, 0.0)[1] == (u < r)


def test_acceptance_probability_is_the_sum_as_it_is_even_above_one():
    ninth = [1 / 9] * 9  # the left-to-right sum of min(p, q) rounds to 1.0000000000000002
    total = 0.0
    for v in ninth:
        total += v
    assert total > 1.0
    assert acceptance_probability(ninth, ninth) == total


def test_any_positive_normalizer_is_divided_out():
    q = [0.25, 0.25, 0.5]
    p = [0.25 + 2**-54, 0.25 + 2**-54, 0.5 - 2**-53]  # Z = 2**-53, tiny but not 0
    assert residual_distribution(p, q).tolist() == [0.5, 0.5, 0.0]


def test_negative_zero_is_zero():
    assert rejection_accept(-0.0, 0.5, 0.25) == False
    assert rejection_accept(0.25, 0.5, -0.0) == True
    assert speculative_step([0.5, 0.25, 0.25, -0.0], Q, 1, 0.75, 0.25) == (0, False)
