"""The worker's lean path for calls on immutable arguments: the same answers as the general one.

``invoke.invoke_immutable`` shares one reply between calls with equal plain results; ``plain_key``
must therefore never call two different encodings equal (-0.0 and 0.0, True and 1, 1 and 1.0,
numpy and Python scalars), and the parent must see exactly what an in-process call returns.
"""

from __future__ import annotations

import math
import textwrap
import types

import numpy as np
import pytest

from harness.engine.target import ContractViolation, InProcessTarget, Target, TargetCrashed
from harness.sandbox.codec import Reply, decode, encode, plain_key
from harness.sandbox.invoke import invoke_encoded as invoke
from harness.sandbox.invoke import invoke_immutable

SOURCE = '''
import numpy as np

COUNT = [0]


def echo(x):
    return x


def pair(p, q, i):
    return (p[i], q[i] > 0)


def zeros(x):
    return -0.0 if x < 0 else 0.0


def kinds(k):
    return [True, 1, 1.0, np.float64(1.0), np.int64(1), np.bool_(True), float("nan"), None][k]


def counted(x):
    COUNT[0] += 1
    return COUNT[0]


def fails(x):
    if x > 1:
        raise ValueError(f"x = {x} is too large")
    return x


def odd_one(i):
    return np.float32(0.5) if i == 300 else 0.5


def odd_at(i, k):
    return np.float32(0.5) if i == k else 0.5
'''
FUNCTIONS = ("echo", "pair", "zeros", "kinds", "counted", "fails", "odd_one", "odd_at")
RETURNS = {"zeros": "float", "odd_one": "float", "odd_at": "float"}


def test_plain_key_tells_apart_what_encodes_apart():
    values = [0.0, -0.0, 1.0, 1, True, np.float64(1.0), np.int64(1), np.bool_(True),
              (1, True), (1, 1), (1.0, True), (True, 1)]
    keys = [plain_key(v) for v in values]
    assert None not in keys
    for v, k in zip(values, keys, strict=True):
        for w, j in zip(values, keys, strict=True):
            assert (k == j) == (encode(v) == encode(w)), (v, w)


def test_plain_key_refuses_what_it_cannot_key():
    for value in (math.nan, (1.0, math.nan), (1, 2, 3, 4, 5), [1], np.float32(1.0), None,
                  np.array([1.0]), "a", (1, [2])):
        assert plain_key(value) is None, value


def test_equal_results_share_one_reply_and_errors_are_answers():
    replies: dict = {}
    first = invoke_immutable(lambda x: (x > 0, 3), (1.0,), {}, None, replies)
    second = invoke_immutable(lambda x: (x > 0, 3), (2.0,), {}, None, replies)
    assert first is second and first == invoke(lambda x: (x > 0, 3), (1.0,))
    raised = invoke_immutable(lambda x: 1 / x, (0.0,), {}, None, replies)
    assert raised["status"] == "raised" and raised["error"]["type"] == "ZeroDivisionError"
    assert raised["mutated"] == [] and raised["draws"] == []
    def leave():
        raise SystemExit(3)

    exited = invoke_immutable(leave, (), {}, None, replies)
    assert exited["status"] == "exited"


def test_a_result_it_does_not_key_gets_the_general_reply():
    array = np.array([0.5, 0.5])
    reply = invoke_immutable(lambda: array, (), {}, None, {})
    assert reply == invoke(lambda: array, ())
    assert decode(reply["value"]).tolist() == [0.5, 0.5]


@pytest.fixture(scope="module")
def targets(isolated_module):
    isolated = isolated_module(SOURCE, FUNCTIONS, RETURNS)
    module = types.ModuleType("fast_path_reference")
    exec(compile(textwrap.dedent(SOURCE), "rejection.py", "exec"), module.__dict__)  # noqa: S102
    return isolated, InProcessTarget("in-process", module, FUNCTIONS, RETURNS)


def _answers(target, fn, calls):
    out = []
    for r in target.map(fn, calls):
        if r.error is not None:
            out.append(("raised", type(r.error).__name__, str(r.error)))
        else:
            value = r.value
            out.append((type(value).__name__, repr(value),
                        tuple(type(v).__name__ for v in value) if type(value) is tuple else ()))
    return out


@pytest.mark.parametrize("fn,calls", [
    ("zeros", [(x,) for x in (-1.0, 1.0, -2.0, 2.0, -1.0)]),
    ("kinds", [(k,) for k in range(8)] * 2),
    ("echo", [(v,) for v in (0.0, -0.0, 1, True, 2.5, 1.0, (1, 2), (1.0, -0.0))]),
    ("pair", [((0.5, 0.0), (0.25, 0.75), i) for i in (0, 1, 0, 1)]),
    ("fails", [(x,) for x in (0.5, 2.0, 0.5, 3.0)]),
])
def test_the_isolated_answers_are_the_in_process_ones(targets, fn, calls):
    isolated, in_process = targets
    assert _answers(isolated, fn, calls) == _answers(in_process, fn, calls)


def test_every_call_runs_once_even_when_answers_repeat(targets):
    isolated, _ = targets
    before = isolated.call("counted", 0.0)
    answers = [r.value for r in isolated.map("counted", [(0.0,)] * 300)]
    assert answers == list(range(before + 1, before + 301))


def test_a_shared_tuple_argument_is_the_same_for_every_call(targets):
    isolated, _ = targets
    p = (0.5, 0.5)
    assert [r.value for r in isolated.map("echo", [(p,)] * 3)] == [p] * 3


def test_a_wrong_type_mid_batch_fails_after_the_batch_and_the_worker_lives_on(targets):
    isolated, _ = targets
    isolated.import_status()
    pid = isolated._worker.process.pid
    with pytest.raises(ContractViolation, match=r"odd_one\(300\) returned a numpy.float32"):
        isolated.map("odd_one", [(i,) for i in range(600)])  # 600 replies: three chunks of 256
    assert isolated._worker.process.pid == pid and isolated.call("odd_one", 1) == 0.5


@pytest.mark.parametrize("k", [256, 512, 4723])
def test_a_wrong_type_first_in_a_later_chunk_is_caught(targets, k):
    """The first reply of a later chunk (256 replies a chunk, or 0.05 s) is checked. When replies
    were told plain by ``id`` across chunks, 4723 was missed once (one of 822 positions tried):
    whether a freed reply's id is reused depends on the allocator, so this cannot show that bug
    on demand; ``test_a_reply_is_checked_in_every_chunk_whatever_its_id`` does."""
    isolated, _ = targets
    with pytest.raises(ContractViolation, match=rf"odd_at\({k}, {k}\) returned a numpy.float32"):
        isolated.map("odd_at", [(i, k) for i in range(6000)])


class Reusing(Target):
    """A transport whose second chunk hands over an object that has the id of one in the first
    (as a freed reply's id is reused): a float reply, then the same object holding a float32."""

    kind = "test"

    def __init__(self) -> None:
        super().__init__("reusing", ("f",), {"f": "float"})

    def _stream(self, fn, calls, kwargs, take):
        reply = Reply("returned", value=0.5)
        take([reply] * 2)
        reply.value = np.float32(0.5)
        take([reply] * (len(calls) - 2))


def test_a_reply_is_checked_in_every_chunk_whatever_its_id():
    with pytest.raises(ContractViolation, match=r"f\(2\) returned a numpy.float32"):
        Reusing().map("f", [(i,) for i in range(4)])


class Miscounting(Target):
    """A target whose transport answers ``extra`` calls more (or fewer) than it was sent."""

    kind = "test"

    def __init__(self, extra: int) -> None:
        super().__init__("miscounting", ("f",), {})
        self.extra = extra

    def _replies(self, fn, calls, kwargs):
        return [Reply("returned", value=1.0)] * (len(calls) + self.extra)


@pytest.mark.parametrize("extra,said", [(1, "answered 4 of 3 calls"), (-1, "answered 2 of 3 calls")])
def test_a_transport_that_miscounts_is_a_crash(extra, said):
    target = Miscounting(extra)
    with pytest.raises(TargetCrashed, match=said):
        target.map("f", [(1,), (2,), (3,)])
    assert isinstance(target.escape, TargetCrashed)
