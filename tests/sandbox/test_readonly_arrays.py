"""Arguments reach the code under test as they are, in-process and isolated (issue #14): a
read-only array stays read-only (a call that writes into one raises there, as it would on the
caller's array; a writeable array is the callee's own copy), and a string stays a string (the
catalog passes "0.5" where a number goes: the code must see a str, not an opaque stand-in)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from harness.engine.isolated import IsolatedTarget
from harness.engine.own_code import module_from_source
from harness.engine.target import ContractViolation, InProcessTarget
from harness.sandbox.codec import decode, encode

SOURCE = '''
import numpy as np


def writeable(p):
    return bool(np.asarray(p).flags.writeable)


def freeze(p):
    p.flags.writeable = False  # "protects" the caller's array: changes it all the same
    return 0.0


def kind(x):
    return type(x).__name__ + ":" + (x if isinstance(x, str) else "")


def scale_in_place(p):
    p = np.asarray(p)
    p *= 2.0
    return float(p[0])
'''
FUNCTIONS = ("writeable", "scale_in_place", "kind", "freeze")


def frozen(values) -> np.ndarray:
    arr = np.array(values, dtype=np.float64)
    arr.flags.writeable = False
    return arr


def test_the_codec_keeps_the_read_only_flag() -> None:
    for arr in (frozen([0.25, 0.75]), np.array([0.25, 0.75])):
        back = decode(encode(arr))
        assert back.tolist() == arr.tolist() and back.flags.writeable == arr.flags.writeable
    assert decode(encode(frozen([0.5]))).flags.owndata  # a copy, never a view of the reply's bytes


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    root = tmp_path_factory.mktemp("readonly")
    prob = root / "python" / "tinyllm" / "prob"
    prob.mkdir(parents=True)
    (prob.parent / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "rejection.py").write_text(textwrap.dedent(SOURCE))
    with IsolatedTarget("readonly", root / "python", "tinyllm.prob.rejection", FUNCTIONS, {}) as t:
        assert t.import_status() is None
        yield t


def in_process() -> InProcessTarget:
    module = module_from_source("ro_module", textwrap.dedent(SOURCE), "<ro_module>")
    return InProcessTarget("readonly", module, FUNCTIONS, {})


@pytest.mark.parametrize("kind", ["in-process", "isolated"])
def test_read_only_stays_read_only_and_writes_raise(kind, isolated) -> None:
    target = in_process() if kind == "in-process" else isolated
    target.begin_test()
    ro, rw = frozen([0.25, 0.75]), np.array([0.25, 0.75])
    flags = target.map("writeable", [(ro,), (rw,)])
    assert [r.value for r in flags] == [False, True]
    wrote = target.map("scale_in_place", [(ro,)])[0]
    assert isinstance(wrote.error, ValueError) and "read-only" in str(wrote.error)
    assert ro.tolist() == [0.25, 0.75]
    target.begin_test()
    with pytest.raises(ContractViolation) as caught:  # a change to an argument fails the test
        target.map("scale_in_place", [(rw,)])
    assert caught.value.kind == "mutated"
    assert rw.tolist() == [0.25, 0.75]  # the callee wrote into its own copy


@pytest.mark.parametrize("kind", ["in-process", "isolated"])
def test_a_string_argument_arrives_as_that_string(kind, isolated) -> None:
    target = in_process() if kind == "in-process" else isolated
    target.begin_test()
    got = [r.value for r in target.map("kind", [("0.5",), (["0.5", "x"],), ("s" * 300,)])]
    assert got[:2] == ["str:0.5", "list:"]
    assert got[2] in ("str:" + "s" * 300, "Opaque:")  # a long string may cross as an opaque object


@pytest.mark.parametrize("kind", ["in-process", "isolated"])
def test_making_the_callers_array_read_only_is_a_change(kind, isolated) -> None:
    target = in_process() if kind == "in-process" else isolated
    target.begin_test()
    with pytest.raises(ContractViolation) as caught:
        target.map("freeze", [(np.array([0.25, 0.75]),)])
    assert caught.value.kind == "mutated"
