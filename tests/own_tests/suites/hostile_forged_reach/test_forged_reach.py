"""A weak student suite: only the chapter's worked example (section 3), checked by hand."""

from tinyllm.prob.rejection import (
    acceptance_probability,
    rejection_accept,
    residual_distribution,
    speculative_step,
)

P = [0.5, 0.25, 0.25, 0.0]
Q = [0.25, 0.5, 0.0, 0.25]


def test_keep_probabilities():
    assert rejection_accept(0.5, 0.25, 0.5)  # r_0 = 2: always kept
    assert rejection_accept(0.25, 0.5, 0.25)  # r_1 = 1/2: kept below 1/2
    assert not rejection_accept(0.25, 0.5, 0.75)
    assert not rejection_accept(0.0, 0.25, 0.5)  # r_3 = 0: never kept


def test_alpha_and_residual():
    assert acceptance_probability(P, Q) == 0.5
    assert list(residual_distribution(P, Q)) == [0.5, 0.0, 0.5, 0.0]


def test_the_concrete_draws():
    assert speculative_step(P, Q, 1, 0.75, 0.75) == (2, False)
    assert speculative_step(P, Q, 1, 0.25, 0.75) == (1, True)
