"""The M07.1 catalog on hidden cases: every randomised family draws from the run seed.

``run_catalog(..., seed=s)`` runs the catalog on the cases of run seed ``s`` (``harness.engine.seeding``):
the public cases (the lab's, ``ol check``'s default) stay what they were, a correct implementation
passes whatever the seed, and every mutant is still killed by its designated tests on cases it has
never seen.
"""

from __future__ import annotations

import pytest

from harness.catalogs.m07_1 import test_catalog as catalog
from harness.engine.course import load_course
from harness.engine.own_code import module_from_source
from harness.engine.runner import run_catalog
from harness.engine.seeding import cases_from
from harness.engine.target import InProcessTarget

MODULE = load_course().module("M07.1")


def families() -> dict[str, object]:
    """Every randomised family's cases under the run seed in force."""
    return {"property": catalog.property_inputs(), "boundary": None, "tail": catalog.tail_inputs(),
            "summation": catalog.discriminating_calls(), "edges": catalog.tolerance_edge_cases(),
            "enumeration": catalog.enumeration_inputs(), "chi-square probs": catalog.chi_square_probs(),
            "chi-square draws": catalog.chi_square_calls(catalog.CHI_SQUARE_SEED, 50)}


def test_the_public_cases_are_the_catalogs_constants():
    """Under the public cases every family is what its constant gave before run seeds existed."""
    with cases_from(None):
        assert catalog.property_inputs() == catalog._property_inputs(catalog.PROPERTY_SEED)
        assert catalog.enumeration_inputs() == catalog._enumeration_inputs(catalog.ENUMERATION_SEED)
        assert catalog.chi_square_probs() == catalog._chi_square_probs(catalog.CHI_SQUARE_SEED)
        # Values pinned from the catalog before issue #14: the lab's kill matrix depends on them.
        assert catalog.chi_square_probs()[:2] == (0.17558282494376506, 0.08510660420934885)
        assert catalog.chi_square_calls(catalog.CHI_SQUARE_SEED, 3)[0][1] == 0.08774489143728703
        assert catalog.tail_inputs()[6][:2] == [0.197753421466739, 0.18786352816167678]
        ok, bad = catalog.pairwise_edge_cases()
        assert (ok[:2], bad[:2]) == ((0.15380684642180348, 0.02128754410057017),
                                     (0.05352976794554393, 0.03095049512653632))


def test_the_cases_differ_between_seeds_and_repeat_for_one():
    with cases_from(1):
        first = families()
    with cases_from(2):
        second = families()
    with cases_from(None):
        public = families()
    with cases_from(1):
        again = families()  # the caches are keyed by the derived seed, not by the first run
    assert again == first
    for name in first:
        if first[name] is not None:
            assert first[name] != second[name] and first[name] != public[name], name


@pytest.mark.parametrize("seed", [None, 3, 2**40 + 1])
def test_the_searched_inputs_tell_every_other_sum_apart_whatever_the_seed(seed):
    with cases_from(seed):
        found = catalog.discriminating_calls()
        edges = catalog.tolerance_edge_cases()
    assert all(found[name] for name in catalog.OTHER_SUMS)
    assert set(edges) == set(catalog.OTHER_TOTALS)
    for name, (ok, bad) in edges.items():
        total = catalog.OTHER_TOTALS[name]
        assert catalog.within(catalog.ltr_sum(ok)) and not catalog.within(total(list(ok))), name
        assert not catalog.within(catalog.ltr_sum(bad)) and catalog.within(total(list(bad))), name


# A correct sample_categorical that takes what categorical.pyi lets it take: bool entries as the
# numbers they are (True is 1), Fractions as their float64 value, probs and u alike.
TAKES_BOOLS_AND_FRACTIONS = '''
import math
import numbers

import numpy as np


def _real(x):
    if isinstance(x, (list, tuple, np.ndarray)):
        raise ValueError("probs must be 1-D")
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{x!r} is not a real number")
    return float(x)


def sample_categorical(probs, u):
    if isinstance(probs, np.ndarray) and probs.ndim != 1:
        raise ValueError("probs must be 1-D")
    if probs is None or isinstance(probs, (str, bytes)):
        raise TypeError("probs must be a sequence of numbers")
    ps = [float(x) if isinstance(x, (bool, np.bool_)) else _real(x) for x in probs]
    if not ps or any(not math.isfinite(p) or p < 0 for p in ps):
        raise ValueError("probs must be a non-empty sequence of finite non-negative numbers")
    total = 0.0
    for p in ps:
        total += p
    if abs(total - 1.0) > 1e-9:
        raise ValueError("probs must sum to 1")
    u = _real(u)
    if not 0.0 <= u < 1.0:
        raise ValueError("u must be in [0, 1)")
    c, last = 0.0, -1
    for i, p in enumerate(ps):
        c += p
        if p > 0:
            last = i
            if u < c:
                return i
    return last
'''


def test_an_implementation_taking_bools_and_fractions_as_numbers_passes():
    """The relaxed rules (bool entries, Fractions): taking them is as correct as refusing them."""
    mod = module_from_source("ol_m07_1_takes_bools", TAKES_BOOLS_AND_FRACTIONS, "<takes bools>")
    assert mod.sample_categorical([True, False], 0.5) == 0
    assert mod.sample_categorical([0.25, 0.75], catalog.Fraction(1, 2)) == 1
    target = InProcessTarget("takes-bools", mod, MODULE.functions, load_course().returns)
    run = run_catalog(MODULE, target, "takes-bools")
    assert run.verdict == "pass", [(t.name, t.message.splitlines()[0]) for t in run.failures()]
