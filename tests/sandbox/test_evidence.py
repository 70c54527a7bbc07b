"""The student's own evidence (issue #13): what their code printed during a test, and where it raised.

``target.output`` holds what the code under test wrote to ``sys.stdout`` and ``sys.stderr`` since
``begin_test`` (its first ``capture.KEPT`` characters; ``target.output_dropped`` counts the rest),
captured in the worker per request and sent inside the replies; ``RemoteError.frames`` holds the
frames of a raised exception that lie in the student's own files (relative to the staged
``python/`` dir), never the harness's, numpy's or the standard library's. Both are untrusted
data: a print cannot break the framing or forge a reply, and a malformed frame or output from a
hostile worker fails the call closed.
"""

from __future__ import annotations

import contextlib
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from harness.engine.course import load_course
from harness.engine.isolated import IsolatedTarget
from harness.engine.own_code import module_from_source, reference_target
from harness.engine.target import InProcessTarget, TargetCrashed, TargetError
from harness.sandbox.capture import KEPT, Capture, Stream
from harness.sandbox.codec import (
    MAX_FRAMES,
    Frame,
    MalformedReply,
    RemoteError,
    decode_chunk,
    decode_error,
    decode_reply,
    encode_error,
)

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


# -- what the code printed --------------------------------------------------------------------


def test_prints_and_stderr_in_a_function_are_the_tests_output(fresh: IsolatedTarget) -> None:
    assert fresh.output == "" and fresh.output_dropped == 0
    assert fresh.call("talk", 2.0) == 4.0
    assert fresh.output == "computing 2.0\non stderr 2.0\n"  # one stream, in the order written
    fresh.map("talk", [(1,), (3,)])
    assert fresh.output == "computing 2.0\non stderr 2.0\ncomputing 1\non stderr 1\n" \
                           "computing 3\non stderr 3\n"  # accumulates over the calls of the test
    fresh.begin_test()
    assert fresh.output == "" and fresh.output_dropped == 0  # a new test starts empty


def test_import_time_output_belongs_to_no_test(fresh: IsolatedTarget) -> None:
    fresh.call("talk", 1)
    assert "importing rejection" not in fresh.output
    assert fresh.import_output == "importing rejection\n"
    assert fresh.import_output_dropped == 0


def test_warnings_printed_to_stderr_are_output(fresh: IsolatedTarget) -> None:
    assert fresh.call("warn") is True
    assert "UserWarning: careful now" in fresh.output
    assert "tinyllm/prob/rejection.py" in fresh.output


def test_a_call_that_raises_keeps_what_it_printed(fresh: IsolatedTarget) -> None:
    with pytest.raises(ValueError, match="failed after printing"):
        fresh.call("print_and_raise")
    assert fresh.output == "about to fail\n"


def test_a_gigabyte_of_output_is_capped_counted_and_quick(fresh: IsolatedTarget) -> None:
    start = time.monotonic()
    assert fresh.call("loud", 1024) is True  # 1 GiB through sys.stdout.write
    assert fresh.call("chatty", 200_000) is True  # and 200000 lines through print
    elapsed = time.monotonic() - start
    printed = (1 << 30) + sum(len(f"{i}\n") for i in range(200_000))
    assert fresh.output == "x" * KEPT
    assert fresh.output_dropped == printed - KEPT
    assert elapsed < 10.0, elapsed
    # The worker kept none of it: its peak memory is far below the gigabyte it was given.
    status = Path(f"/proc/{fresh._worker.root}/status").read_text()
    peak_kib = int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1])
    assert peak_kib < 400 * 1024, peak_kib


def test_the_cap_is_per_test_across_requests_and_calls(fresh: IsolatedTarget) -> None:
    fresh.call("line", 1499)  # 1500 characters with the newline
    fresh.call("line", 1499)
    fresh.map("line", [(99,)] * 50)  # one request, 50 calls, 5000 characters
    assert fresh.output == "y" * 1499 + "\n" + "y" * (KEPT - 1500)
    assert fresh.output_dropped == 1500 + 1500 + 5000 - KEPT


def test_ansi_escapes_and_surrogates_arrive_as_valid_text(fresh: IsolatedTarget) -> None:
    assert fresh.call("escapes") is True
    out = fresh.output
    out.encode("utf-8")  # valid: a lone surrogate is shown as its escape
    assert "lone \\ud800 bidi" in out
    assert "\x1b[31mred\x1b[0m \r\x00" in out and "\u202e" in out  # the reporters escape these


def test_a_print_cannot_forge_a_reply_or_break_the_framing(fresh: IsolatedTarget) -> None:
    assert fresh.call("forge") is False
    assert '{"op":"replies","id":1' in fresh.output and "19 passed" in fresh.output
    assert fresh.call("talk", 1) == 2  # the channel is intact


def test_descriptor_writes_go_to_the_drained_pipe(fresh: IsolatedTarget) -> None:
    assert fresh.call("raw_fd") is True
    assert fresh.output == ""
    deadline = time.monotonic() + 5.0
    while "straight to the descriptor" not in fresh.worker_output() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "straight to the descriptor" in fresh.worker_output(clear=True)


def test_replacing_or_closing_stdout_loses_nothing_of_later_requests(fresh: IsolatedTarget) -> None:
    assert fresh.call("replace_stdout") is True
    assert fresh.call("talk", 5) == 10
    assert fresh.output == "computing 5\non stderr 5\n"
    assert fresh.call("close_stdout") is True
    assert fresh.call("buffer_write") is True
    assert fresh.output.endswith("still captured\nbytes \\xff\n")


def test_in_process_targets_print_nothing_into_output() -> None:
    target = reference_target(load_course().module("M07.6"))
    target.begin_test()
    assert target.call("rejection_accept", 0.5, 1.0, 0.25) is True
    assert target.output == "" and target.output_dropped == 0


def test_the_capture_is_bounded_whatever_is_written() -> None:
    capture = Capture(10)
    stream = Stream(capture, "<stdout>")

    class Sneaky(str):
        def __len__(self) -> int:
            return 0

    stream.write("abcdef")
    stream.write(Sneaky("ghijklmnop"))  # its real length counts, not what __len__ says
    with pytest.raises(TypeError):
        stream.write(b"bytes")
    with pytest.raises(TypeError):
        stream.buffer.write(10**9)  # never 10**9 zero bytes
    assert capture.take() == ("abcdefghij", 6)
    assert capture.take() is None
    stream.write("more")
    assert capture.take() == ("", 4)  # the budget is per request
    capture.begin()
    stream.write("more")
    assert capture.take() == ("more", 0)


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
    with pytest.raises(TargetError) as info:  # NameError is not rebuilt: a TargetError, with its ol_remote
        fresh.call("undefined", 1)
    remote = info.value.ol_remote
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


@pytest.mark.parametrize("kind", FORGERIES)
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
        decode_chunk({"table": [{"status": "raised", "error": data}], "index": [0]}, 1)


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


def test_the_fixture_leaves_no_stray_descriptor_output(target: IsolatedTarget) -> None:
    """Nothing the capture does writes to the descriptors: the drained pipe stays empty."""
    target.worker_output(clear=True)
    target.begin_test()
    with contextlib.suppress(ZeroDivisionError):
        target.call("divide", 1.0)
    target.call("talk", 1)
    time.sleep(0.05)
    assert target.worker_output() == ""
