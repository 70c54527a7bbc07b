"""Every way a test reaches the module that ``ol tests --mine`` must follow to choose the tests a
bug runs (``harness.own_tests.selection``): its report must be what running every test gives."""

import pytest
from tinyllm.prob import rejection
from tinyllm.prob.rejection import (
    acceptance_probability,
    rejection_accept,
    rejection_sample,
    speculative_step,
)

P = [0.5, 0.25, 0.25, 0.0]
Q = [0.25, 0.5, 0.0, 0.25]
AT_IMPORT = acceptance_probability(P, Q)  # at collection: every test may depend on it


class Script:
    def __init__(self, values):
        self.values = list(values)

    def uniform(self):
        return self.values.pop(0)


def test_only_speculative_step():  # residual_distribution only from inside speculative_step
    assert speculative_step(P, Q, 1, 0.75, 0.6) == (2, False)
    assert speculative_step(P, Q, 1, 0.75, 0.25) == (0, False)


def test_through_the_module():
    assert list(rejection.residual_distribution(P, Q)) == [0.5, 0.0, 0.5, 0.0]


def test_a_value_computed_at_import():
    assert AT_IMPORT == 0.5


@pytest.fixture(scope="module")
def shared():  # made in the first test's setup, used by both
    return rejection_sample([0.5, 0.5], [0.5, 0.5], 2.0, Script([0.1, 0.75, 0.1, 0.25]))


def test_shared_fixture_first(shared):
    assert tuple(shared) == (0, 2)


def test_shared_fixture_second(shared):  # calls nothing itself
    assert shared[1] == 2


@pytest.fixture
def own():
    return rejection_accept(0.5, 1.0, 0.25)


def test_own_fixture(own):
    assert own == True


@pytest.mark.parametrize("u, kept", [(0.25, True), (0.5, False), (0.75, False)],
                         ids=["--help", "-p no:python", "a b::c[d]"])
def test_parametrised(u, kept):
    assert rejection_accept(0.25, 0.5, u) == kept


class TestAClass:
    def test_alpha(self):
        assert acceptance_probability([0.5, 0.5], [0.5, 0.5]) == 1.0

    def test_accept(self):
        assert rejection_accept(0.0, 0.25, 0.0) == False


def test_fails_on_the_reference():
    assert rejection_accept(0.25, 0.5, 0.5) == True  # wrong: 0.5 is not below 1/2


def test_reaches_nothing():
    assert P[0] == 0.5
