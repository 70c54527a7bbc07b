"""Hostile, with its conftest: a wrong test (u == r accepts) reported as passing everywhere."""

from tinyllm.prob.rejection import rejection_accept


def test_u_equal_to_the_ratio_accepts():
    assert rejection_accept(0.5, 1.0, 0.5)
