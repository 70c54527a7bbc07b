"""The reference rejection module (M07.6): worked example, boundaries, errors, draw order."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from tinyllm.prob.categorical import sample_categorical
from tinyllm.prob.pcg32 import PCG32
from tinyllm.prob.rejection import (
    acceptance_probability,
    rejection_accept,
    rejection_sample,
    residual_distribution,
    speculative_step,
)

GRID = 2**53  # PCG32 uniforms are k / GRID, k in [0, GRID)
MAX_U = 1.0 - 2**-53

# Chapter section 3.
P = [0.5, 0.25, 0.25, 0.0]
Q = [0.25, 0.5, 0.0, 0.25]


class Script:
    """A UniformSource returning fixed values in order; drawing past the end is an error."""

    def __init__(self, values):
        self.values = list(values)
        self.calls = 0

    def uniform(self) -> float:
        if self.calls >= len(self.values):
            raise AssertionError(f"drew uniform #{self.calls + 1}; {len(self.values)} scripted")
        self.calls += 1
        return self.values[self.calls - 1]


class Poison:
    """Any attribute access (even ``isinstance``'s ``__class__`` lookup) fails the test."""

    def __getattribute__(self, name):
        raise AssertionError(f"u_resample was read ({name})")


def running_sums(values) -> list[float]:
    total, out = 0.0, []
    for v in values:
        total += v
        out.append(total)
    return out


def grid_cells(breaks):
    """Split the uniform grid [0, GRID) at ``breaks`` into (k_lo, k_hi) cells of constant answer."""
    ks = {0, GRID}
    for b in breaks:
        if 0.0 < b < 1.0:
            ks.add(math.ceil(Fraction(b) * GRID))
    ks = sorted(ks)
    return list(itertools.pairwise(ks))


def constant_on_cell(fn, k_lo, k_hi):
    """``fn(u)`` on the cell, checked equal at both ends of the cell."""
    first, last = fn(k_lo / GRID), fn((k_hi - 1) / GRID)
    assert first == last, f"answer not constant on [{k_lo}, {k_hi}) / 2**53: {first} vs {last}"
    return first


def enumerate_speculative(p, q) -> dict[int, Fraction]:
    """The exact output law of speculative_step with x ~ q and grid uniforms."""
    law: dict[int, Fraction] = {}
    res_breaks = running_sums(residual_distribution(p, q).tolist())
    for x, q_x in enumerate(q):
        if q_x == 0:
            continue
        for a_lo, a_hi in grid_cells([p[x] / q_x]):
            u_acc = a_lo / GRID
            _, accepted = speculative_step(p, q, x, u_acc, 0.0)
            cells = [(0, GRID)] if accepted else grid_cells(res_breaks)
            for r_lo, r_hi in cells:
                out = constant_on_cell(lambda u, x=x, u_acc=u_acc: speculative_step(p, q, x, u_acc, u),
                                       r_lo, r_hi)
                weight = Fraction(q_x) * Fraction(a_hi - a_lo, GRID) * Fraction(r_hi - r_lo, GRID)
                law[out[0]] = law.get(out[0], Fraction(0)) + weight
    return law


# --- the worked example, number by number -------------------------------------------------


@pytest.mark.parametrize(
    ("x", "largest_accepted", "smallest_rejected"),
    [(0, MAX_U, None), (1, 0.5 - 2**-53, 0.5), (3, None, 0.0)],
    ids=["r0=2", "r1=1/2", "r3=0"],
)
def test_hand_example_ratios(x, largest_accepted, smallest_rejected):
    if largest_accepted is not None:
        assert rejection_accept(P[x], Q[x], largest_accepted) is True
    if smallest_rejected is not None:
        assert rejection_accept(P[x], Q[x], smallest_rejected) is False


def test_hand_example_alpha_is_one_half():
    assert acceptance_probability(P, Q) == 0.5


def test_hand_example_residual():
    res = residual_distribution(P, Q)
    assert res.dtype == np.float64
    assert res.tolist() == [0.5, 0.0, 0.5, 0.0]


def test_hand_example_residual_cdf():
    assert running_sums(residual_distribution(P, Q).tolist()) == [0.5, 0.5, 1.0, 1.0]


@pytest.mark.parametrize(
    ("u_resample", "expected"), [(0.0, 0), (0.5 - 2**-53, 0), (0.5, 2), (0.75, 2), (MAX_U, 2)]
)
def test_hand_example_residual_walk(u_resample, expected):
    assert sample_categorical(residual_distribution(P, Q), u_resample) == expected


def test_hand_example_rejected_draw_resamples_id_2():
    assert speculative_step(P, Q, 1, 0.75, 0.75) == (2, False)


def test_hand_example_kept_draw():
    assert speculative_step(P, Q, 1, 0.25, 0.75) == (1, True)


def test_hand_example_id_3_is_always_rejected():
    assert speculative_step(P, Q, 3, 0.0, 0.0) == (0, False)


def test_hand_example_output_is_p_exactly():
    law = enumerate_speculative(P, Q)
    assert law == {0: Fraction(1, 2), 1: Fraction(1, 4), 2: Fraction(1, 4)}


@pytest.mark.parametrize("seed", range(6))
def test_speculative_output_is_p_on_eighths(seed):
    rng = np.random.default_rng(seed)
    p = (rng.multinomial(8, [0.25] * 4) / 8).tolist()
    q = (rng.multinomial(8, [0.25] * 4) / 8).tolist()
    law = enumerate_speculative(p, q)
    for t in range(4):
        # Ratios like 3/5 are not dyadic: the grid measure of {u < r} is r rounded up to 2**-53.
        assert abs(law.get(t, Fraction(0)) - Fraction(p[t])) <= Fraction(4, GRID), (p, q, t)


# --- rejection_accept ---------------------------------------------------------------------


def test_accept_is_strict_at_the_ratio():
    assert rejection_accept(0.25, 0.5, 0.5) is False


def test_accept_just_below_the_ratio():
    assert rejection_accept(0.25, 0.5, 0.5 - 2**-53) is True


def test_zero_target_never_accepts_even_at_u_zero():
    assert rejection_accept(0.0, 0.5, 0.0) is False


@pytest.mark.parametrize("u", [0.0, 0.5, MAX_U])
@pytest.mark.parametrize(("p_x", "q_x"), [(0.5, 0.5), (0.5, 0.25), (1.0, 1e-300)])
def test_ratio_at_least_one_accepts_every_u(p_x, q_x, u):
    assert rejection_accept(p_x, q_x, u) is True


def test_accept_ratio_overflow_still_accepts():
    # 1.0 / 1e-320 overflows to inf: still accepts.
    assert rejection_accept(1.0, 1e-320, MAX_U) is True


NAN, INF = float("nan"), float("inf")
BAD_ACCEPT_ARGS = {
    "q=0": (0.5, 0.0, 0.1),
    "q=-0": (0.5, -0.0, 0.1),
    "q<0": (0.5, -0.25, 0.1),
    "p<0": (-0.25, 0.5, 0.1),
    "p<0,q=0": (-0.25, 0.0, 0.1),
    "u=1": (0.25, 0.5, 1.0),
    "u>1": (0.25, 0.5, 1.5),
    "u<0": (0.25, 0.5, -2**-53),
    "p=nan": (NAN, 0.5, 0.1),
    "q=nan": (0.5, NAN, 0.1),
    "u=nan": (0.5, 0.5, NAN),
    "p=inf": (INF, 0.5, 0.1),
    "q=inf": (0.5, INF, 0.1),
    "u=inf": (0.5, 0.5, INF),
    "u=-inf": (0.5, 0.5, -INF),
    "p=-inf": (-INF, 0.5, 0.1),
    "np-nan": (np.float64("nan"), 0.5, 0.1),
}


@pytest.mark.parametrize("args", list(BAD_ACCEPT_ARGS.values()), ids=list(BAD_ACCEPT_ARGS))
def test_accept_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        rejection_accept(*args)


def test_accept_takes_numpy_scalars():
    assert rejection_accept(np.float64(0.25), np.float32(0.5), np.float64(0.4)) is True


def test_accept_takes_python_ints():
    assert rejection_accept(1, 2, 0) is True


# --- acceptance_probability and residual_distribution ------------------------------------


def test_acceptance_probability_identical_is_one():
    assert acceptance_probability([0.5, 0.25, 0.25], [0.5, 0.25, 0.25]) == 1.0


def test_acceptance_probability_disjoint_is_zero():
    assert acceptance_probability([0.5, 0.5, 0.0], [0.0, 0.0, 1.0]) == 0.0


def test_acceptance_probability_sum_is_left_to_right():
    # Left to right: 0.9999999999999999; numpy's pairwise np.sum gives 1.0 (spec/sampling.md).
    assert acceptance_probability([0.1] * 10, [0.1] * 10) == 0.9999999999999999


def test_acceptance_probability_returns_python_float():
    assert type(acceptance_probability(np.array(P), np.array(Q))) is float


def test_residual_normalizer_is_left_to_right():
    p = [0.1] * 10 + [0.0] * 10
    q = [0.0] * 10 + [0.1] * 10
    res = residual_distribution(p, q)
    assert res[0] == 0.1 / 0.9999999999999999 == 0.10000000000000002


def test_residual_order_decides_the_token():
    # The ulp on c_4 (spec/sampling.md): u' = 0.5 lands on id 4, not id 5.
    p = [0.1] * 10 + [0.0] * 10
    q = [0.0] * 10 + [0.1] * 10
    assert speculative_step(p, q, 10, 0.0, 0.5) == (4, False)


@pytest.mark.parametrize("seed", range(5))
def test_residual_is_a_distribution_with_mass_one_minus_alpha(seed):
    rng = np.random.default_rng(100 + seed)
    p, q = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
    res = residual_distribution(p, q)
    z = sum(max(0.0, a - b) for a, b in zip(p.tolist(), q.tolist(), strict=True))
    assert np.all(res >= 0)
    assert abs(sum(res.tolist()) - 1.0) <= 1e-12
    assert abs(z - (1.0 - acceptance_probability(p, q))) <= 1e-12
    np.testing.assert_allclose(res * z, np.maximum(p - q, 0.0), rtol=1e-12, atol=0)


def test_residual_zero_where_q_dominates():
    res = residual_distribution(P, Q)
    assert res[1] == 0.0 and res[3] == 0.0


def test_residual_disjoint_supports_is_p():
    p = [0.5, 0.25, 0.25, 0.0, 0.0]
    assert residual_distribution(p, [0.0, 0.0, 0.0, 0.5, 0.5]).tolist() == p


def test_residual_when_p_equals_q_is_p():
    p = np.array([0.5, 0.25, 0.25])
    res = residual_distribution(p, p.copy())
    assert res.dtype == np.float64
    np.testing.assert_array_equal(res, p)


def test_residual_when_p_equals_q_is_a_new_object():
    p = np.array([0.5, 0.25, 0.25])
    assert residual_distribution(p, p) is not p


def test_residual_when_p_equals_q_shares_no_memory():
    p = np.array([0.5, 0.25, 0.25])
    res = residual_distribution(p, p)
    assert not np.shares_memory(res, p)
    res[0] = 99.0
    assert p[0] == 0.5


def test_residual_zero_z_returns_p_not_q():
    # p <= q everywhere but p != q (sums within the 1e-9 tolerance): Z == 0, the answer is p.
    p = [0.5, 0.5 - 1e-10]
    res = residual_distribution(p, [0.5, 0.5])
    assert res.tolist() == p


def test_residual_zero_z_from_a_list_is_an_array():
    res = residual_distribution([0.5, 0.5], [0.5, 0.5])
    assert isinstance(res, np.ndarray) and res.dtype == np.float64
    assert res.tolist() == [0.5, 0.5]


def test_residual_from_float32_input_is_float64():
    p = np.array([0.5, 0.5], dtype=np.float32)
    assert residual_distribution(p, p).dtype == np.float64


# --- speculative_step ---------------------------------------------------------------------


UNREAD = {"poison": Poison, "nan": lambda: NAN, "5.0": lambda: 5.0, "-1.0": lambda: -1.0,
          "None": lambda: None}


@pytest.mark.parametrize("make", list(UNREAD.values()), ids=list(UNREAD))
def test_accepted_draft_does_not_read_u_resample(make):
    # Built inside the test: pytest itself inspects parameters while collecting.
    assert speculative_step(P, Q, 1, 0.25, make()) == (1, True)


@pytest.mark.parametrize("u_resample", [NAN, 1.0, -0.5, INF])
def test_rejected_draft_checks_u_resample(u_resample):
    with pytest.raises(ValueError):
        speculative_step(P, Q, 1, 0.75, u_resample)


def test_speculative_accept_boundary_is_strict():
    # r_1 = 1/2: u_accept = 1/2 rejects.
    assert speculative_step(P, Q, 1, 0.5, 0.0) == (0, False)


def test_speculative_returns_python_types():
    out = speculative_step(np.array(P), np.array(Q), np.int64(1), 0.25, 0.0)
    assert type(out) is tuple and type(out[0]) is int and type(out[1]) is bool


def test_speculative_takes_numpy_scalars():
    out = speculative_step(P, Q, np.int64(1), np.float64(0.75), np.float32(0.75))
    assert out == (2, False)


BAD_X = {
    "neg": -1,
    "n": 4,
    "big": 10**20,
    "float": 1.0,
    "np-float": np.float64(1.0),
    "str": "1",
    "none": None,
    "True": True,
    "False": False,
    "np-bool": np.bool_(True),
    "q[x]=0": 2,
}


@pytest.mark.parametrize("x", list(BAD_X.values()), ids=list(BAD_X))
def test_speculative_rejects_bad_drafts(x):
    with pytest.raises(ValueError):
        speculative_step(P, Q, x, 0.1, 0.1)


@pytest.mark.parametrize("u_accept", [NAN, 1.0, -0.25, INF])
def test_speculative_checks_u_accept(u_accept):
    with pytest.raises(ValueError):
        speculative_step(P, Q, 0, u_accept, 0.1)


# --- rejection_sample ---------------------------------------------------------------------

RS_P = [0.5, 0.5]
RS_Q = [0.25, 0.75]  # with m = 2: acceptance ratios 1 (id 0) and 1/3 (id 1)


def test_rejection_sample_draw_order_proposal_first():
    # Proposal u = 0.9 -> id 1, acceptance u = 0.2 < 1/3. Acceptance-first would give (0, 1).
    rng = Script([0.9, 0.2])
    assert rejection_sample(RS_P, RS_Q, 2.0, rng) == (1, 1)


def test_rejection_sample_two_uniforms_per_try():
    # Try 1: id 1 proposed, 0.5 >= 1/3 rejects. Try 2: id 0 proposed, 0.99 < 1 accepts.
    rng = Script([0.5, 0.5, 0.1, 0.99, 0.3])
    assert rejection_sample(RS_P, RS_Q, 2.0, rng) == (0, 2)
    assert rng.calls == 4


def test_rejection_sample_acceptance_is_strict():
    # p = q, m = 2: ratio 1/2 exactly; u = 1/2 rejects, the next try's u just below accepts.
    rng = Script([0.0, 0.5, 0.0, 0.5 - 2**-53])
    assert rejection_sample([0.5, 0.5], [0.5, 0.5], 2.0, rng) == (0, 2)


def test_rejection_sample_runtime_error_after_max_tries():
    rng = Script([0.0, 0.75] * 3)
    with pytest.raises(RuntimeError):
        rejection_sample([0.5, 0.5], [0.5, 0.5], 2.0, rng, max_tries=3)
    assert rng.calls == 6


def test_rejection_sample_max_tries_one_can_succeed():
    assert rejection_sample([0.5, 0.5], [0.5, 0.5], 2.0, Script([0.6, 0.1]), max_tries=1) == (1, 1)


def test_rejection_sample_m_one_with_equal_p_q_accepts_first_try():
    assert rejection_sample([0.5, 0.5], [0.5, 0.5], 1.0, Script([0.7, MAX_U])) == (1, 1)


def test_rejection_sample_envelope_equality_is_allowed():
    # p_1 = 0.5 == 2 * 0.25.
    assert rejection_sample([0.5, 0.5], [0.75, 0.25], 2.0, Script([0.8, MAX_U])) == (1, 1)


def test_rejection_sample_matches_the_contract_loop_with_pcg32():
    p, q, m = [0.5, 0.25, 0.25, 0.0], [0.25] * 4, 2.0
    g, h = PCG32(42, 54), PCG32(42, 54)
    for _ in range(30):
        tries = 0
        while True:
            tries += 1
            x = sample_categorical(q, h.uniform())
            if h.uniform() < p[x] / (m * q[x]):
                break
        assert rejection_sample(p, q, m, g) == (x, tries)
    assert g.next_u32() == h.next_u32()  # same number of words consumed


def test_rejection_sample_k_tries_use_4k_words():
    g = PCG32(7)
    _, tries = rejection_sample([0.5, 0.25, 0.25, 0.0], [0.25] * 4, 4.0, g)
    h = PCG32(7)
    for _ in range(4 * tries):
        h.next_u32()
    assert g.next_u32() == h.next_u32()


def test_rejection_sample_first_try_law_is_p_over_m():
    p, q, m = [0.5, 0.25, 0.25, 0.0], [0.25] * 4, 2.0
    law: dict[object, Fraction] = {}
    for k_lo, k_hi in grid_cells(running_sums(q)):
        u_prop = k_lo / GRID
        x = sample_categorical(q, u_prop)
        for a_lo, a_hi in grid_cells([p[x] / (m * q[x])]):
            try:
                out = rejection_sample(p, q, m, Script([u_prop, a_lo / GRID]), max_tries=1)[0]
            except RuntimeError:
                out = "reject"
            w = Fraction(k_hi - k_lo, GRID) * Fraction(a_hi - a_lo, GRID)
            law[out] = law.get(out, Fraction(0)) + w
    expected = {0: Fraction(1, 4), 1: Fraction(1, 8), 2: Fraction(1, 8), "reject": Fraction(1, 2)}
    assert law == expected  # p_x / m for each id, 1 - 1/m rejected


def test_rejection_sample_takes_numpy_scalars():
    out = rejection_sample(RS_P, RS_Q, np.float64(2.0), Script([0.9, 0.2]), max_tries=np.int64(1))
    assert out == (1, 1)


BAD_SAMPLE_ARGS = {
    "m<1": ([0.5, 0.5], [0.5, 0.5], 0.5, 10),
    "m-just-below-1": ([0.5, 0.5], [0.5, 0.5], 1.0 - 2**-53, 10),
    "m<1-envelope-ok": ([0.5 - 5e-11, 0.5 - 5e-11], [0.5, 0.5], 1.0 - 1e-10, 10),
    "m=0": ([0.5, 0.5], [0.5, 0.5], 0.0, 10),
    "m<0": ([0.5, 0.5], [0.5, 0.5], -2.0, 10),
    "m=nan": ([0.5, 0.5], [0.5, 0.5], NAN, 10),
    "m=inf": ([0.5, 0.5], [0.5, 0.5], INF, 10),
    "envelope": ([0.5, 0.5], [0.75, 0.25], 1.5, 10),
    "envelope-q0": ([0.5, 0.5], [1.0, 0.0], 1e6, 10),
    "envelope-m1": ([0.5, 0.5], [0.25, 0.75], 1.0, 10),
    "max_tries=0": ([0.5, 0.5], [0.5, 0.5], 2.0, 0),
    "max_tries<0": ([0.5, 0.5], [0.5, 0.5], 2.0, -3),
}


@pytest.mark.parametrize("args", list(BAD_SAMPLE_ARGS.values()), ids=list(BAD_SAMPLE_ARGS))
def test_rejection_sample_rejects_bad_arguments_before_drawing(args):
    p, q, m, max_tries = args
    rng = Script([])  # any draw fails the test: the checks come first (spec/sampling.md)
    with pytest.raises(ValueError):
        rejection_sample(p, q, m, rng, max_tries=max_tries)


# --- shared rules: distributions, shapes, no mutation ----------------------------------------

CALLS = {
    "acceptance_probability": lambda p, q: acceptance_probability(p, q),
    "residual_distribution": lambda p, q: residual_distribution(p, q),
    "speculative_step": lambda p, q: speculative_step(p, q, 0, 0.9, 0.3),
    "rejection_sample": lambda p, q: rejection_sample(p, q, 4.0, PCG32(1)),
}

BAD_PAIRS = {
    "shapes": ([0.5, 0.5], [0.25, 0.25, 0.5]),
    "p-sum": ([0.5, 0.4], [0.5, 0.5]),
    "q-sum": ([0.5, 0.5], [0.5, 0.6]),
    "p-neg": ([1.5, -0.5], [0.5, 0.5]),
    "q-nan": ([0.5, 0.5], [NAN, 0.5]),
    "p-inf": ([INF, 0.5], [0.5, 0.5]),
    "p-2d": ([[0.5, 0.5]], [[0.5, 0.5]]),
    "empty": ([], []),
    "q-str": ([0.5, 0.5], ["0.5", "0.5"]),
}


@pytest.mark.parametrize("pair", list(BAD_PAIRS.values()), ids=list(BAD_PAIRS))
@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_shapes_and_distributions_are_checked(call, pair):
    with pytest.raises(ValueError):
        call(*pair)


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_arguments_are_not_modified(call):
    p = np.array([0.5, 0.25, 0.25, 0.0])
    q = np.array([0.25, 0.25, 0.25, 0.25])
    p_list, q_list = p.tolist(), q.tolist()
    call(p, q)
    call(p_list, q_list)
    assert p.tolist() == [0.5, 0.25, 0.25, 0.0] and q.tolist() == [0.25] * 4
    assert p_list == [0.5, 0.25, 0.25, 0.0] and q_list == [0.25] * 4


def test_residual_does_not_alias_p_when_z_positive():
    p = np.array([0.5, 0.25, 0.25, 0.0])
    res = residual_distribution(p, np.array([0.25] * 4))
    assert not np.shares_memory(res, p)
