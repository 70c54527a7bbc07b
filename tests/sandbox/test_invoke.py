"""The one call path: returned / raised / exited decided in one place, and never an answer made
of the harness's own time-out or of the user's Ctrl-C (in process), so a looping mutant fails at
its limit instead of running forever."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
import types

import numpy as np
import pytest

from harness.engine.course import load_course
from harness.engine.results import CaseInfo, Kind, Outcome
from harness.engine.runner import run_case
from harness.engine.target import InProcessTarget, Target, TargetTimedOut
from harness.paths import REPO_ROOT
from harness.sandbox.invoke import (
    EXITED,
    RAISED,
    RETURNED,
    call,
    invoke,
    invoke_encoded,
)

LOOPING = '''
import numpy as np

def spin(x):
    while True:
        pass

def interrupted(x):
    raise KeyboardInterrupt("from the code")
'''


def _target() -> InProcessTarget:
    module = types.ModuleType("looping")
    exec(compile(textwrap.dedent(LOOPING), "looping.py", "exec"), module.__dict__)  # noqa: S102
    return InProcessTarget("looping", module, ("spin", "interrupted"), {})


def test_call_decides_returned_raised_exited_and_passes_through_what_it_is_told():
    assert call(lambda: 3, (), {}) == (RETURNED, 3)
    status, exc = call(lambda: 1 / 0, (), {})
    assert status == RAISED and isinstance(exc, ZeroDivisionError)
    status, exc = call(sys.exit, (4,), {})
    assert status == EXITED and exc.code == 4

    def interrupt():
        raise KeyboardInterrupt

    assert call(interrupt, (), {})[0] == RAISED  # in the worker: an answer of the code
    with pytest.raises(KeyboardInterrupt):
        call(interrupt, (), {}, (KeyboardInterrupt,))


def test_invoke_sees_in_place_changes_and_aliases_and_encodes_the_same_reply():
    def scale(a):
        a *= 2
        return a

    a = np.array([1.0, 2.0])
    reply = invoke(scale, (a,))
    assert reply.status == RETURNED and reply.mutated == [0] and reply.aliased
    encoded = invoke_encoded(scale, (np.array([1.0, 2.0]),))
    assert encoded["mutated"] == [0] and encoded["aliased"] is True
    assert invoke(lambda: "\ud800", ()).value == "\ud800"  # values stay as they are in process
    raised = invoke_encoded(lambda: (_ for _ in ()).throw(ValueError("bad \ud800 text")), ())
    assert raised["error"]["message"] == "bad \\ud800 text"  # encodable: no writer fails on it


@pytest.mark.parametrize("batch", [1, 3])
def test_the_runners_timeout_is_not_an_answer_of_in_process_code(batch):
    """``map`` over immutable arguments (the lean path) and over arrays (the general one)."""
    target = _target()
    module = load_course().module("M07.6")

    def lean(t):
        t.map("spin", [(0.5,)] * batch)

    def general(t):
        t.map("spin", [(np.array([0.5]),)] * batch)

    for fn in (lean, general):
        start = time.monotonic()
        result = run_case(module, CaseInfo("test_spin", Kind.UNIT, "", ""), fn, target, 0.5)
        assert result.outcome is Outcome.TIMEOUT, result
        assert time.monotonic() - start < 5


def test_keyboard_interrupt_of_in_process_code_stops_the_run():
    with pytest.raises(KeyboardInterrupt):
        _target().map("interrupted", [(1.0,), (2.0,)])


def test_a_looping_map_finishes_in_a_fresh_process():
    """End to end, in a process of its own so that a regression hangs that process, not the suite."""
    code = textwrap.dedent(f'''
        import sys, types, textwrap
        sys.path.insert(0, {str(REPO_ROOT)!r})
        from harness.engine.course import load_course
        from harness.engine.results import CaseInfo, Kind
        from harness.engine.runner import run_case
        from harness.engine.target import InProcessTarget
        module = types.ModuleType("looping")
        exec({LOOPING!r}, module.__dict__)
        target = InProcessTarget("looping", module, ("spin",), {{}})
        case = CaseInfo("test_spin", Kind.UNIT, "", "")
        result = run_case(load_course().module("M07.6"), case,
                          lambda t: t.map("spin", [(0.5,), (0.6,), (0.7,)]), target, 0.5)
        print(result.outcome.value)
    ''')
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "timeout", done.stderr


def test_timeout_error_class_is_what_the_alarm_raises():
    from harness.engine.runner import alarm

    with pytest.raises(TargetTimedOut), alarm(0.2):
        while True:
            pass


def test_the_lean_path_checks_each_return_type_in_a_batch_not_only_the_first():
    """The lean in-process path decides "plain and of the promised kind" once per type signature
    in a batch: a later call that returns other types is still checked (and violates)."""
    from harness.engine.target import ContractViolation

    module = types.ModuleType("mixed_returns")
    source = textwrap.dedent("""
        import numpy as np
        def step(i):
            return [(1, True), (2, False), (3, np.float64(1.0)), (4, True)][i]
    """)
    exec(compile(source, "mixed_returns.py", "exec"), module.__dict__)  # noqa: S102
    target = InProcessTarget("mixed", module, ("step",), {"step": "tuple[int,bool]"})
    ok = target.map("step", [(0,), (1,)])
    assert [r.value for r in ok] == [(1, True), (2, False)]
    with pytest.raises(ContractViolation, match="where the contract promises tuple"):
        target.map("step", [(0,), (1,), (2,), (3,)])


LIST_CALLS = '''
def bump(xs):
    xs[0] = 9.0
    return 1

def grow(xs):
    xs.append(0.0)
    return 1

def same(xs):
    return xs

def total(xs):
    return sum(xs)

def bump_then_raise(xs):
    xs[0] = 9.0
    raise ValueError("no")
'''


@pytest.mark.parametrize("lean", [True, False], ids=["lean path", "general path"])
def test_a_list_of_numbers_gets_a_copy_and_an_edit_in_place_is_the_same_violation_on_both_paths(lean):
    from harness.engine.target import ContractViolation

    module = types.ModuleType("list_calls")
    exec(compile(LIST_CALLS, "list_calls.py", "exec"), module.__dict__)  # noqa: S102
    target = InProcessTarget("lists", module, ("bump", "grow", "same", "total", "bump_then_raise"),
                             {"bump": "int", "grow": "int", "same": "any", "total": "float",
                              "bump_then_raise": "int"})
    xs = [1.0, 2.0]

    def run(fn: str) -> list:
        if lean:
            return target.map(fn, [(xs,)])
        return Target._map(target, fn, [(xs,)])  # the general path: snapshots and copies

    assert [r.value for r in run("total")] == [3.0]
    for fn, words in (("bump", "modified argument 1 in place"), ("grow", "modified argument 1 in place"),
                      ("same", "shares memory with an argument"),
                      ("bump_then_raise", "modified argument 1 in place (and then raised ValueError)")):
        with pytest.raises(ContractViolation, match=re.escape(words)):
            run(fn)
        assert xs == [1.0, 2.0], "the caller's list is never the one the call gets"


BATCH_CALLS = '''
import numpy as np

class Acc:
    def add(self, x):
        if type(x) is list:
            x[0] = 9.0
        return 1

def maybe_bump(x):
    if type(x) is list:
        x[0] = 9.0
    return 1

def count(i):
    return [1, 2, 3, 4.0, np.int64(5)][i]
'''


def test_a_batch_is_lean_only_if_every_call_is_and_every_result_is_checked():
    """The lean path tells a batch of immutable arguments in one pass over their classes, and
    keeps the number classes it found of the promised kind: one list among many numbers, or one
    result of another class late in a batch, is still the violation it is on its own."""
    from harness.engine.target import ContractViolation

    module = types.ModuleType("batch_calls")
    exec(compile(BATCH_CALLS, "batch_calls.py", "exec"), module.__dict__)  # noqa: S102
    target = InProcessTarget("batch", module, ("maybe_bump", "count", "Acc.add"),
                             {"maybe_bump": "int", "count": "int", "Acc.add": "int"})
    xs = [1.0, 2.0]
    assert [r.value for r in target.map("maybe_bump", [(1.0,)] * 50)] == [1] * 50
    with pytest.raises(ContractViolation, match=r"maybe_bump\(\[1.0, 2.0\]\) modified argument 1"):
        target.map("maybe_bump", [*[(1.0,)] * 50, (xs,)])
    acc = module.Acc()
    assert [r.value for r in target.map("Acc.add", [(acc, 1.0)] * 50)] == [1] * 50
    with pytest.raises(ContractViolation, match="modified argument 2 in place"):
        target.map("Acc.add", [*[(acc, 1.0)] * 50, (acc, xs)])
    assert xs == [1.0, 2.0]
    assert [r.value for r in target.map("count", [(0,), (1,), (2,)])] == [1, 2, 3]
    with pytest.raises(ContractViolation, match="where the contract promises int"):
        target.map("count", [(0,), (1,), (2,), (3,)])  # a float after three ints
    late = target.map("count", [(0,), (4,)])[1].value  # a numpy integer is an int of the contract
    assert type(late) is np.int64 and late == 5
