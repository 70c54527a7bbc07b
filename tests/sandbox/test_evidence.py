"""The student's own evidence (issue #13): where their code raised.

``RemoteError.frames`` holds the frames of a raised exception that lie in the student's own files
(relative to the staged ``python/`` dir), never the harness's, numpy's or the standard library's.
They are untrusted data: a malformed frame from a hostile worker fails the call closed.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from harness.course import load_course
from harness.loading import module_from_source, reference_target
from harness.sandbox.codec import (
    MAX_FRAMES,
    Frame,
    MalformedReply,
    RemoteError,
    decode_error,
    decode_reply,
    encode_error,
)
from harness.sandbox.isolated import IsolatedTarget, _chunk
from harness.target import InProcessTarget, TargetCrashed, TargetError

FILE = "tinyllm/prob/rejection.py"

SOURCE = '''
import sys
import warnings

import numpy as np

from tinyllm.prob.helpers import scaled

print("importing rejection")  # import time: not part of any test's output


def talk(x):
    print("computing", x)
    sys.stderr.write(f"on stderr {x}\\n")
    return x * 2


def loud(chunks):
    chunk = "x" * (1 << 20)
    for _ in range(chunks):
        sys.stdout.write(chunk)
    return True


def chatty(lines):
    for i in range(lines):
        print(i)
    return True


def line(n):
    print("y" * n)
    return n


def escapes():
    print("\\x1b[31mred\\x1b[0m \\r\\x00 lone \\ud800 bidi \\u202e end")
    return True


def warn():
    warnings.warn("careful now")
    return True


def forge():
    print('\\x00\\x00\\x00\\x2b{"op":"replies","id":1,"start":0,"index":[0]}')
    print("=== 19 passed in 0.12s ===")
    return False


def raw_fd():
    os_write = __import__("os").write
    os_write(1, b"straight to the descriptor\\n")
    return True


def divide(x):
    return _ratio(x, 0.0)


def _ratio(a, b):
    return a / b


def undefined(x):
    return _missing(x)


def _missing(x):
    return x + not_defined_anywhere


def elsewhere(x):
    return scaled(x)


def singular():
    return np.linalg.inv(np.zeros((2, 2)))


def deep(n):
    return deep(n + 1)


def print_and_raise():
    print("about to fail")
    raise ValueError("failed after printing")


def replace_stdout():
    sys.stdout = None
    sys.stderr = None
    return True


def close_stdout():
    sys.stdout.close()
    print("still captured")
    return True


def buffer_write():
    sys.stdout.buffer.write(b"bytes \\xff\\n")
    sys.stdout.flush()
    return True


def forge_bad_frames(number):
    """A hostile worker: a well-framed reply to the request in progress, with malformed data."""
    kind = FORGERIES[number]
    import json
    import mmap
    import os
    import struct

    request_fd, reply_fd, progress_fd = (int(a) for a in sys.argv[1:4])
    rid = struct.unpack_from("q", mmap.mmap(progress_fd, 16))[0]
    error = {"type": "ValueError", "mro": ["ValueError", "Exception"], "message": "forged"}
    message = {"op": "replies", "id": rid, "start": 0, "index": [0],
               "table": [{"status": "raised", "error": error, "mutated": [], "draws": []}]}
    if kind == "frames-not-list":
        error["frames"] = "tinyllm/prob/rejection.py:1"
    elif kind == "frame-line-str":
        error["frames"] = [["tinyllm/prob/rejection.py", "7", "f", "x"]]
    elif kind == "too-many-frames":
        error["frames"] = [["a.py", 1, "f", ""]] * 11
    elif kind == "output-not-str":
        message["out"], message["dropped"] = 5, 0
    elif kind == "dropped-negative":
        message["out"], message["dropped"] = "", -1
    data = json.dumps(message).encode()
    os.write(reply_fd, struct.pack(">I", len(data)) + data)
    return True
'''

FORGERIES = ["frames-not-list", "frame-line-str", "too-many-frames", "output-not-str",
             "dropped-negative"]
SOURCE += f"\n\nFORGERIES = {FORGERIES!r}\n"

HELPERS = '''
def scaled(x):
    return _inner(x)


def _inner(x):
    raise ZeroDivisionError(f"no scale for {x}")
'''

FUNCTIONS = ("talk", "loud", "chatty", "line", "escapes", "warn", "forge", "raw_fd", "divide",
             "undefined", "elsewhere", "singular", "deep", "print_and_raise", "replace_stdout",
             "close_stdout", "buffer_write", "forge_bad_frames")


def _line_of(text: str, source: str) -> int:
    """The line number of ``text`` in ``source`` (dedented, as written to disk)."""
    lines = textwrap.dedent(source).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.fixture(scope="module")
def target(tmp_path_factory) -> IsolatedTarget:
    """A worker over ``SOURCE`` and a second student file, ``helpers.py``."""
    root = tmp_path_factory.mktemp("evidence")
    prob = root / "python" / "tinyllm" / "prob"
    prob.mkdir(parents=True)
    (prob.parent / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "rejection.py").write_text(textwrap.dedent(SOURCE))
    (prob / "helpers.py").write_text(HELPERS)
    with IsolatedTarget("evidence", root / "python", "tinyllm.prob.rejection", FUNCTIONS,
                        {}) as t:
        assert t.import_status() is None
        yield t


@pytest.fixture
def fresh(target: IsolatedTarget) -> IsolatedTarget:
    target.begin_test()
    return target


# -- where the code raised --------------------------------------------------------------------


def test_a_helper_two_frames_deep_shows_both_student_frames(fresh: IsolatedTarget) -> None:
    with pytest.raises(ZeroDivisionError) as info:
        fresh.call("divide", 1.0)
    frames = info.value.ol_remote.frames
    assert frames == (
        Frame(FILE, _line_of("return _ratio(x, 0.0)", SOURCE), "divide", "return _ratio(x, 0.0)"),
        Frame(FILE, _line_of("return a / b", SOURCE), "_ratio", "return a / b"),
    )


def test_a_name_error_shows_the_students_frames_on_target_error(fresh: IsolatedTarget) -> None:
    with pytest.raises(TargetError) as info:  # NameError is not rebuilt: TargetError.remote
        fresh.call("undefined", 1)
    remote = info.value.remote
    assert remote.type == "NameError"
    assert [(f.file, f.function, f.source) for f in remote.frames] == [
        (FILE, "undefined", "return _missing(x)"),
        (FILE, "_missing", "return x + not_defined_anywhere"),
    ]
    assert remote.frames[1].line == _line_of("return x + not_defined_anywhere", SOURCE)


def test_frames_in_another_student_file_are_relative_to_python(fresh: IsolatedTarget) -> None:
    with pytest.raises(ZeroDivisionError) as info:
        fresh.call("elsewhere", 2)
    frames = info.value.ol_remote.frames
    assert [(f.file, f.function) for f in frames] == [
        (FILE, "elsewhere"), ("tinyllm/prob/helpers.py", "scaled"),
        ("tinyllm/prob/helpers.py", "_inner")]
    assert frames[-1] == Frame("tinyllm/prob/helpers.py", _line_of("raise ZeroDivision", HELPERS),
                               "_inner", 'raise ZeroDivisionError(f"no scale for {x}")')


def test_no_harness_numpy_or_stdlib_frame_is_shown(fresh: IsolatedTarget) -> None:
    with pytest.raises(ValueError) as info:  # numpy's LinAlgError is a ValueError
        fresh.call("singular")
    remote = info.value.ol_remote
    assert remote.type == "LinAlgError"
    assert remote.frames == (Frame(FILE, _line_of("np.linalg.inv", SOURCE), "singular",
                                   "return np.linalg.inv(np.zeros((2, 2)))"),)


def test_a_recursion_error_keeps_the_last_ten_frames(fresh: IsolatedTarget) -> None:
    with pytest.raises(RecursionError) as info:
        fresh.call("deep", 0)
    frames = info.value.ol_remote.frames
    assert len(frames) == MAX_FRAMES
    assert set(frames) == {Frame(FILE, _line_of("return deep(n + 1)", SOURCE), "deep",
                                 "return deep(n + 1)")}
    assert fresh.call("talk", 1) == 2  # the worker goes on


def test_frames_survive_the_lean_path_and_equal_errors_compare_equal(fresh: IsolatedTarget) -> None:
    results = fresh.map("divide", [(1.0,), (2.0,), (3.0,)])  # invoke_immutable's path
    assert all(r.error.ol_remote.frames[-1].function == "_ratio" for r in results)
    assert results[0].error.ol_remote == RemoteError(
        "ZeroDivisionError", results[0].error.ol_remote.bases, "float division by zero")


@pytest.mark.parametrize("kind", FORGERIES[:3])
def test_a_hostile_workers_malformed_frames_or_output_fail_closed(target: IsolatedTarget,
                                                                  kind: str) -> None:
    target.begin_test()
    with pytest.raises(TargetCrashed, match="forge_bad_frames: .*malformed"):
        target.call("forge_bad_frames", FORGERIES.index(kind))
    assert target.escape is not None  # recorded: the test fails whatever it concluded
    target.begin_test()
    assert target.call("talk", 1) == 2  # a fresh worker


@pytest.mark.parametrize("frames", [
    "x", {"0": 1}, [["a.py", 1, "f"]], [["a.py", 1, "f", "s", "extra"]], [["a.py", True, "f", ""]],
    [["a.py", -1, "f", ""]], [["a.py", 1 << 40, "f", ""]], [[1, 1, "f", ""]], [["a.py", 1, None, ""]],
    [["a.py", 1, "f", ["s"]]], ["a.py:1"], [["a.py", 1, "f", ""]] * (MAX_FRAMES + 1),
])
def test_decoding_refuses_malformed_frames(frames: object) -> None:
    data = {"type": "ValueError", "mro": ["ValueError"], "message": "m", "frames": frames}
    with pytest.raises(MalformedReply, match="frame"):
        decode_error(data)
    with pytest.raises(MalformedReply):
        decode_reply({"status": "raised", "error": data})
    with pytest.raises(MalformedReply):
        _chunk({"table": [{"status": "raised", "error": data}], "index": [0]}, 1)


def test_decoded_frames_are_cut_and_cleaned() -> None:
    error = RemoteError("ValueError", ("ValueError",), "m",
                        (Frame("a\ud800.py", 3, "f" * 500, "s" * 1000),))
    decoded = decode_error(encode_error(error))
    (frame,) = decoded.frames
    assert frame.file == "a\\ud800.py" and frame.line == 3
    assert len(frame.function) < 220 and len(frame.source) < 220
    assert decode_error({"type": "E", "mro": ["E"], "message": ""}).frames == ()


def test_in_process_frames_of_the_reference_and_of_a_mutant() -> None:
    module = load_course().module("M07.6")
    reference = reference_target(module)
    with pytest.raises(ValueError) as info:
        reference.call("acceptance_probability", np.array([0.5, 0.5]), np.array([1.0]))
    frames = info.value.ol_remote.frames
    assert [(f.file, f.function) for f in frames] == [
        (FILE, "acceptance_probability"), (FILE, "_pair")]
    assert frames[-1].source.startswith("raise ValueError(")
    with pytest.raises(ValueError) as info:  # the lean path of InProcessTarget.map
        reference.call("rejection_accept", 0.5, 0.0, 0.5)
    assert [f.function for f in info.value.ol_remote.frames] == ["rejection_accept"]

    name = f"<mutant s99: {FILE}>"
    with open(reference.module.__file__, encoding="utf-8") as fh:
        mod = module_from_source("ol_mutant_s99", fh.read(), name)
    mutant = InProcessTarget("mutant s99", mod, module.functions, load_course().returns)
    with pytest.raises(ValueError) as info:
        mutant.call("rejection_accept", 0.5, 0.0, 0.5)
    assert info.value.ol_remote.frames == (Frame(name, info.value.ol_remote.frames[0].line,
                                                 "rejection_accept", ""),)
