"""The M06.3 catalog on hidden cases: the seeds its tests draw words from come from the run seed.

``run_catalog(..., seed=s)`` runs the catalog on the cases of run seed ``s`` (``harness.engine.seeding``):
the public cases (the lab's, ``ol check``'s default) stay what they were. That the reference
passes whatever the seed and every mutant is still killed on other seeds is tests/engine/test_hidden_cases.py.
"""

from __future__ import annotations

import contextlib

import pytest

from harness.catalogs.m06_3 import test_catalog as catalog
from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.seeding import case_seed, cases_from

MODULE = load_course().module("M06.3")


class Spy:
    """A target that records the (seed, stream) of every generator a test makes (and draws zeros)."""

    functions = ("PCG32",)

    def __init__(self) -> None:
        self.made: list[tuple] = []

    def map(self, fn, calls, **kwargs):
        from harness.engine.target import Result

        self.made += [tuple(c) + tuple(kwargs.values()) for c in calls]
        return [Result(c, value=object()) for c in calls]

    def map_method(self, obj, name, calls):
        from harness.engine.target import Result

        return [Result(c, value=0) for c in calls]

    def method(self, obj, name, *args):
        return 0

    def PCG32(self, *args):
        return self.map("PCG32", [args])[0].value


def seeds_made(test_name: str, seed: int | None) -> list[tuple]:
    """The (seed, stream) pairs ``test_name`` makes generators of, under run seed ``seed``."""
    fn = {info.name: fn for info, fn in collect(MODULE)}[test_name]
    spy = Spy()
    # Zeros are no words: the test fails, after making its generators.
    with cases_from(seed), contextlib.suppress(AssertionError):
        fn(spy)
    return spy.made


def test_the_public_cases_are_the_catalogs_constants():
    with cases_from(None):
        cases = catalog.seeding_cases()
        assert cases[10] == (6145668007416006559, 11927552725600237933)  # pinned before issue #14
        assert cases[-1] == (8797657372026209624, 3431384217249623119)
        assert case_seed(catalog.CHI_SQUARE_SEED, "m06_3.chi-square") == catalog.CHI_SQUARE_SEED
    assert seeds_made("test_same_seed_same_sequence", None)[0] == (99, 3)
    assert (2024, 1) in seeds_made("test_uniform_granularity_is_2_to_minus_53", None)


@pytest.mark.parametrize("test_name", ["test_same_seed_same_sequence", "test_next_u32_is_a_32_bit_int",
                                       "test_uniform_is_two_words_first_word_high",
                                       "test_uniform_consumes_exactly_two_words",
                                       "test_uniform_granularity_is_2_to_minus_53"])
def test_the_drawn_seeds_differ_between_run_seeds_and_stay_in_range(test_name):
    public, first, second = (seeds_made(test_name, s) for s in (None, 1, 2))
    assert first != public and first != second and first == seeds_made(test_name, 1)
    assert all(0 <= int(s) < 2**64 for args in first + second for s in args)


def test_the_random_seeding_cases_differ_between_run_seeds():
    with cases_from(1):
        first = catalog.seeding_cases()
    with cases_from(2):
        second = catalog.seeding_cases()
    fixed = 10  # the hand-picked pairs come first, the same in every run
    assert first[:fixed] == second[:fixed] == catalog.seeding_cases()[:fixed]
    assert set(first[fixed:]).isdisjoint(second[fixed:])
    assert set(first[fixed:]).isdisjoint(catalog.seeding_cases()[fixed:])


