"""The reference sample_categorical (M07.1): inverse CDF, boundary rules, distribution checks."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from tinyllm.prob.categorical import UniformSource, sample_categorical

MAX_U = 1.0 - 2**-53  # the largest uniform PCG32 can return


def test_uniform_source_is_a_protocol():
    assert typing.Protocol in UniformSource.__mro__
    assert callable(getattr(UniformSource, "uniform", None))


@pytest.mark.parametrize(
    ("u", "expected"),
    [(0.0, 0), (0.2, 0), (0.25 - 2**-53, 0), (0.5, 2), (0.74, 2), (0.75, 3), (MAX_U, 3)],
)
def test_inverse_cdf(u, expected):
    # CDF [0.25, 0.25, 0.75, 1.0]: id 1 has probability 0.
    assert sample_categorical([0.25, 0.0, 0.5, 0.25], u) == expected


def test_boundary_goes_to_next_positive_id_skipping_zeros():
    # u == c_0 == c_1 == 0.25 must skip id 1 (probability 0) and land on id 2.
    assert sample_categorical([0.25, 0.0, 0.5, 0.25], 0.25) == 2


def test_boundary_goes_to_next_id():
    assert sample_categorical([0.5, 0.5], 0.5) == 1


def test_leading_zero_is_never_returned_at_u_zero():
    assert sample_categorical([0.0, 0.0, 1.0], 0.0) == 2


def test_trailing_zero_is_never_returned_at_largest_u():
    assert sample_categorical([0.5, 0.5, 0.0], MAX_U) == 1


def test_rounding_fallback_returns_last_positive_id():
    # The left-to-right sum of ten 0.1 is 1 - 2**-53, so u = 1 - 2**-53 is not below c_9.
    probs = [0.1] * 10 + [0.0, 0.0]
    assert sample_categorical(probs, MAX_U) == 9


def test_single_id():
    assert sample_categorical([1.0], 0.0) == 0
    assert sample_categorical([1.0], MAX_U) == 0


def test_returns_python_int():
    assert type(sample_categorical(np.array([0.5, 0.5]), 0.7)) is int


@pytest.mark.parametrize(
    "probs",
    [[0.5, 0.5], (0.5, 0.5), np.array([0.5, 0.5]), np.array([0.5, 0.5], dtype=np.float32), [0, 1]],
    ids=["list", "tuple", "float64", "float32", "ints"],
)
def test_array_likes_are_accepted(probs):
    assert sample_categorical(probs, 0.75) == 1


@pytest.mark.parametrize(
    "u", [np.float64(0.75), np.float32(0.75), 0.75], ids=["float64", "float32", "float"]
)
def test_numpy_scalar_u_is_accepted(u):
    assert sample_categorical([0.5, 0.5], u) == 1


def test_numpy_scalar_probabilities_are_accepted():
    assert sample_categorical([np.float64(0.5), np.float32(0.5)], 0.25) == 0


def test_integer_zero_u_is_accepted():
    assert sample_categorical([0.5, 0.5], 0) == 0


@pytest.mark.parametrize("total", [1.0 + 5e-10, 1.0 - 5e-10])
def test_sum_within_tolerance_is_accepted(total):
    assert sample_categorical([0.5, total - 0.5], 0.1) == 0


def test_tolerance_sum_is_left_to_right_accepting():
    # Left to right 1.0000000009999999 (within 1e-9); numpy's pairwise sum gives 1.000000001.
    assert sample_categorical([0.1] * 10 + [9.999999717180685e-10], 0.0) == 0


def test_tolerance_sum_is_left_to_right_rejecting():
    # Left to right 0.9999999989999999 (outside 1e-9); numpy's pairwise sum gives 0.999999999.
    with pytest.raises(ValueError):
        sample_categorical([0.1] * 9 + [0.099999999], 0.0)


NOT_DISTRIBUTIONS = {
    "empty": [],
    "2-D": [[0.5, 0.5]],
    "0-D": 1.0,
    "nan": [0.5, float("nan")],
    "inf": [1.0, float("inf")],
    "neg-inf": [float("-inf"), 1.0],
    "negative": [1.5, -0.5],
    "sum-low": [0.5, 0.4],
    "sum-high": [0.5, 0.6],
    "sum-just-high": [0.5, 0.5 + 2e-9],
    "sum-just-low": [0.5, 0.5 - 2e-9],
    "all-zero": [0.0, 0.0],
    "ragged": [[0.5], [0.25, 0.25]],
}


@pytest.mark.parametrize("probs", list(NOT_DISTRIBUTIONS.values()), ids=list(NOT_DISTRIBUTIONS))
def test_not_a_distribution_raises(probs):
    with pytest.raises(ValueError):
        sample_categorical(probs, 0.5)


BAD_U = {
    "one": 1.0,
    "above-one": 1.5,
    "negative": -2**-53,
    "nan": float("nan"),
    "inf": float("inf"),
    "neg-inf": float("-inf"),
    "np-nan": np.float64("nan"),
    "np-one": np.float64(1.0),
}
# Not numbers at all: the contract allows TypeError or ValueError (the reference raises ValueError).
NOT_NUMBER_PROBS = {"strings": ["0.5", "0.5"], "complex": [0.5 + 0j, 0.5], "none": None,
                    "none-entry": [None, 1.0]}
NOT_NUMBER_U = {"string": "0.5", "none": None, "bool": True}


@pytest.mark.parametrize("probs", list(NOT_NUMBER_PROBS.values()), ids=list(NOT_NUMBER_PROBS))
def test_probs_that_are_not_numbers_raise(probs):
    with pytest.raises((TypeError, ValueError)):
        sample_categorical(probs, 0.5)


@pytest.mark.parametrize("u", list(NOT_NUMBER_U.values()), ids=list(NOT_NUMBER_U))
def test_u_that_is_not_a_number_raises(u):
    with pytest.raises((TypeError, ValueError)):
        sample_categorical([0.5, 0.5], u)


@pytest.mark.parametrize("u", list(BAD_U.values()), ids=list(BAD_U))
def test_bad_u_raises(u):
    with pytest.raises(ValueError):
        sample_categorical([0.5, 0.5], u)


def test_probs_are_not_modified():
    probs = np.array([0.25, 0.0, 0.5, 0.25])
    before = probs.copy()
    sample_categorical(probs, 0.6)
    np.testing.assert_array_equal(probs, before)


def test_list_probs_are_not_modified():
    probs = [0.25, 0.0, 0.5, 0.25]
    sample_categorical(probs, 0.6)
    assert probs == [0.25, 0.0, 0.5, 0.25]

