"""A student suite with one wrong test: it believes u <= r accepts (pitfall 1, the other way)."""

from tinyllm.prob.rejection import acceptance_probability, rejection_accept


def test_u_equal_to_the_ratio_accepts():
    assert rejection_accept(0.5, 1.0, 0.5)  # wrong: u < r, strictly, so u == r rejects


def test_alpha_of_the_worked_example():
    assert acceptance_probability([0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.0, 0.25]) == 0.5
