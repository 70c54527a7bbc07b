"""The checks that run next to the student's code (in-place changes, aliasing) hold when that
code patches what they used to look up at call time (``numpy.shares_memory``, ``operator.is_not``,
``numpy.ndarray.tobytes`` through the module) or hunts for the harness's functions with ``gc``."""

from __future__ import annotations

import pytest

from harness.engine.target import ContractViolation

TAMPER = '''
import gc, operator
import numpy as np

np.shares_memory = lambda *a, **k: False
np.may_share_memory = lambda *a, **k: False
operator.is_not = lambda a, b: False
FOUND = []
for obj in gc.get_objects():
    name = getattr(obj, "__name__", "")
    if callable(obj) and name in ("aliases", "changed", "snapshot", "invoke", "encode_reply"):
        FOUND.append(name)
        try:
            obj.__code__ = (lambda *a, **k: False).__code__
        except (AttributeError, TypeError):
            pass


def found():
    return len(FOUND)


def scale(a):
    a *= 2.0
    return 1.0


def same(a):
    return a


def view(a):
    return a[:1]


def grow(xs):
    xs.append(1.0)
    return 1.0
'''
FUNCTIONS = ("found", "scale", "same", "view", "grow")


@pytest.fixture(scope="module")
def target(isolated_module):
    return isolated_module(TAMPER, FUNCTIONS, {"found": "int", "scale": "float", "grow": "float"})


def test_gc_finds_none_of_the_harness_functions(target):
    assert target.call("found") == 0


@pytest.mark.parametrize(("fn", "args", "words"), [
    ("scale", ([0.5, 0.5],), "modified argument 1 in place"),
    ("same", ([0.5, 0.5],), "shares memory with an argument"),
    ("view", ([0.5, 0.5],), "shares memory with an argument"),
])
def test_in_place_changes_and_aliases_are_still_seen(target, fn, args, words):
    import numpy as np

    target.begin_test()
    with pytest.raises(ContractViolation, match=words):
        target.call(fn, *(np.array(a) for a in args))


def test_a_list_changed_in_place_is_still_seen(target):
    target.begin_test()
    with pytest.raises(ContractViolation, match="modified argument 1 in place"):
        target.call("grow", [0.5, 0.5])
