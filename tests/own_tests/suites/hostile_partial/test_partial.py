"""A suite that fails whenever some of its tests are left out, that is on a bug given a choice of
tests (or the reference's check run of it): it must catch nothing it would not catch run whole."""

import os

from tinyllm.prob.rejection import residual_distribution, speculative_step


def test_residual():
    residual_distribution([0.5, 0.5], [0.25, 0.75])
    assert "LEFT_OUT" not in os.environ


def test_speculative():
    speculative_step([0.5, 0.5], [0.5, 0.5], 0, 0.25, 0.5)
    assert "LEFT_OUT" not in os.environ


def test_nothing():
    pass
