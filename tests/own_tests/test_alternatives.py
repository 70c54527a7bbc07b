"""The hidden correct implementations: each passes the whole catalog, and each really differs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.own_code import load_reference, module_from_source
from harness.engine.runner import run_catalog
from harness.engine.target import InProcessTarget
from harness.own_tests.alternatives import load_alternatives

COURSE = load_course()
MODULE = COURSE.module("M07.6")
ALTERNATIVES = {a.name: a for a in load_alternatives(MODULE)}
P, Q = [0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.0, 0.25]


def load(name: str):
    alt = ALTERNATIVES[name]
    return module_from_source(f"ol_alternative_{name}", alt.source(MODULE), f"<alternative {name}>")


def test_there_are_at_least_two():
    assert len(ALTERNATIVES) >= 2


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
@pytest.mark.slow
def test_each_passes_the_whole_catalog(name):
    target = InProcessTarget(f"alternative {name}", load(name), MODULE.functions, COURSE.returns)
    result = run_catalog(MODULE, target, "alternative")
    assert result.verdict == "pass", [(t.name, t.message[:300]) for t in result.failures()]
    assert len(result.tests) == len(collect(MODULE))


def test_vectorized_returns_numpy_scalars_and_raises_a_value_error_subclass():
    vec = load("vectorized")
    assert type(vec.rejection_accept(0.5, 0.25, 0.9)) is np.bool_
    assert type(vec.acceptance_probability(P, Q)) is np.float64
    token, accepted = vec.speculative_step(P, Q, 1, 0.25, 0.5)
    assert (type(token), type(accepted)) == (np.int64, np.bool_)
    with pytest.raises(ValueError) as info:
        vec.rejection_accept(0.5, 0.0, 0.5)
    assert type(info.value) is not ValueError


def test_loops_has_its_own_messages_and_python_types():
    loops, ref = load("loops"), load_reference(MODULE)
    assert type(loops.rejection_accept(0.5, 0.25, 0.9)) is bool
    assert type(loops.acceptance_probability(P, Q)) is float
    for fn, args in [("rejection_accept", (0.5, 0.0, 0.5)),
                     ("residual_distribution", ([0.6], [1.0])),
                     ("rejection_sample", ([0.5, 0.5], [0.5, 0.5], math.nan, None))]:
        messages = []
        for mod in (loops, ref):
            with pytest.raises(ValueError) as info:
                getattr(mod, fn)(*args)
            messages.append(str(info.value))
        assert messages[0] != messages[1], fn


def test_loops_raises_type_error_for_non_numbers_as_the_contract_allows():
    loops = load("loops")
    for fn, args in [("rejection_accept", (None, 0.5, 0.5)), ("rejection_accept", (0.5, "0.5", 0.5)),
                     ("speculative_step", (P, Q, None, 0.5, 0.5)),
                     ("rejection_sample", ([0.5, 0.5], [0.5, 0.5], None, None))]:
        with pytest.raises(TypeError):
            getattr(loops, fn)(*args)
    with pytest.raises(ValueError):  # a number of the wrong kind stays a ValueError
        loops.speculative_step(P, Q, 1.0, 0.5, 0.5)
