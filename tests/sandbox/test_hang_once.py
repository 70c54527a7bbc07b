"""A function that hung once in a check is not called again (issue #25, item 8), and what the code
printed before a hang or a crash is shown like any other output.

Before: each looping call waited out the per-call limit, so a submission with one looping function
took a time-out per test that called it (124 s for ``ol check M07.6``, 40 s with ``--timeout 3``),
and what it printed before the loop was lost with the worker. Now the first time-out of a function
marks it: its later calls in the same check fail at once (category timeout, "not run: it timed out
earlier in this check"), other functions are checked as before, and the worker's progress page
mirrors what was printed since the last chunk of replies, so the parent reads it after a hang.
"""

from __future__ import annotations

import json
import mmap
import shutil
import textwrap
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.engine.isolated import IsolatedTarget, Limits
from harness.engine.target import TargetCrashed, TargetTimedOut
from harness.paths import REFERENCE_PYTHON
from harness.sandbox.capture import KEPT

SOURCE = '''
import os
import sys


def spin(x):
    print("spin: starting with", x)
    sys.stderr.write("and on stderr\\n")
    while True:
        pass


def spin_quietly(x):
    while True:
        pass


def ok(x):
    return x + 1


def die(x):
    print("about to die", x)
    os._exit(3)
'''
FUNCTIONS = ("spin", "spin_quietly", "ok", "die")
LIMIT_S = 1.0


def _workspace(root: Path, source: str) -> Path:
    prob = root / "python" / "tinyllm" / "prob"
    prob.mkdir(parents=True)
    (prob.parent / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "rejection.py").write_text(textwrap.dedent(source))
    return root / "python"


@pytest.fixture
def target(tmp_path):
    with IsolatedTarget("hang", _workspace(tmp_path, SOURCE), "tinyllm.prob.rejection", FUNCTIONS,
                        {}, Limits(call_timeout_s=LIMIT_S)) as t:
        assert t.import_status() is None
        yield t


def _timed(fn, *args):
    start = time.monotonic()
    with pytest.raises(TargetTimedOut) as caught:
        fn(*args)
    return str(caught.value), time.monotonic() - start


def test_a_function_that_hung_is_not_called_again_in_the_check(target):
    target.begin_test()
    first, waited = _timed(target.call, "spin", 1)
    assert "spin(1) did not return within 1 s" in first and waited >= LIMIT_S
    for x in (2, 3):
        target.begin_test()
        message, took = _timed(target.call, "spin", x)
        assert message.startswith(f"spin({x}) not run: it timed out earlier in this check")
        assert took < LIMIT_S / 4
        assert isinstance(target.escape, TargetTimedOut)  # the runner's category: timeout
    target.begin_test()
    message, took = _timed(target.map, "spin", [(4,), (5,)])
    assert "not run" in message and took < LIMIT_S / 4


@pytest.mark.slow
def test_other_functions_are_checked_as_before(target):
    target.begin_test()
    _timed(target.call, "spin", 1)
    target.begin_test()
    assert target.call("ok", 1) == 2 and target.escape is None  # a fresh worker answers
    _, waited = _timed(target.call, "spin_quietly", 1)  # its own first time-out, in full
    assert waited >= LIMIT_S
    target.begin_test()
    assert target.map("ok", [(1,), (2,)])[1].value == 3
    assert set(target.timed_out) == {"spin", "spin_quietly"}


def test_a_test_budget_overrun_does_not_mark_the_function(tmp_path):
    """Calls that together exceed the test's budget are slow, not hung: called again later."""
    slow = SOURCE + '''

def nap(x):
    import time
    time.sleep(x)
    return x
'''
    with IsolatedTarget("budget", _workspace(tmp_path, slow), "tinyllm.prob.rejection",
                        ("nap",), {}, Limits(call_timeout_s=1.0, test_timeout_s=1.0)) as t:
        assert t.import_status() is None
        t.begin_test()
        message, _ = _timed(t.map, "nap", [(0.6,), (0.6,)])
        assert "did not finish within 1 s in all" in message
        assert t.timed_out == {}
        t.begin_test()
        assert t.call("nap", 0.01) == 0.01


SLOW_IMPORT = SOURCE + '''

import time
time.sleep(0.9)  # a slow import: every start of the worker costs it


def nap(x):
    time.sleep(x)
    return x
'''


def test_a_worker_started_again_mid_test_is_not_charged_to_the_tests_budget(tmp_path):
    """A crash kills the worker; the next call of the same test starts one again (0.9 s here, far
    more on a loaded grading machine). That start is ol's time: the call still has its budget."""
    with IsolatedTarget("restart", _workspace(tmp_path, SLOW_IMPORT), "tinyllm.prob.rejection",
                        ("die", "nap"), {}, Limits(call_timeout_s=1.0, test_timeout_s=1.0)) as t:
        assert t.import_status() is None
        t.begin_test()
        with pytest.raises(TargetCrashed):
            t.call("die", 1)
        assert t.call("nap", 0.4) == 0.4  # 0.9 s start + 0.4 s: over 1 s if the start counted


def test_restarts_are_forgiven_up_to_one_imports_limit_per_test(tmp_path):
    with IsolatedTarget("forgive", _workspace(tmp_path, SOURCE), "tinyllm.prob.rejection",
                        FUNCTIONS, {}, Limits(call_timeout_s=1.0, test_timeout_s=1.0,
                                              import_timeout_s=5.0)) as t:
        t.begin_test()
        deadline = t._deadline
        t._forgive_start(3.0)
        t._forgive_start(3.0)  # only 2 s more: 5 s in all for this test
        assert t._deadline == pytest.approx(deadline + 5.0)
        t.begin_test()  # a new test: a new allowance
        deadline = t._deadline
        t._forgive_start(1.5)
        assert t._deadline == pytest.approx(deadline + 1.5)


def test_what_was_printed_before_a_hang_is_the_tests_output(target):
    target.begin_test()
    _timed(target.call, "spin", 7)
    assert target.output == "spin: starting with 7\nand on stderr\n"
    assert target.output_dropped == 0
    target.begin_test()  # a later test's call is not run: nothing printed
    _timed(target.call, "spin", 8)
    assert target.output == ""


def test_what_was_printed_before_the_worker_died_is_the_tests_output(target):
    target.begin_test()
    with pytest.raises(TargetCrashed):
        target.call("die", 1)
    assert target.output == "about to die 1\n"
    target.begin_test()
    with pytest.raises(TargetCrashed):  # a crash does not mark the function: it runs again
        target.call("die", 2)
    assert target.output == "about to die 2\n"


def test_a_flood_before_a_hang_is_cut_like_any_output(tmp_path):
    flood = '''
def flood(n):
    print("\\u00e9" * n, end="")
    while True:
        pass
'''
    with IsolatedTarget("flood", _workspace(tmp_path, flood), "tinyllm.prob.rejection",
                        ("flood",), {}, Limits(call_timeout_s=LIMIT_S)) as t:
        t.begin_test()
        _timed(t.call, "flood", KEPT + 500)
        assert t.output == "\u00e9" * KEPT and t.output_dropped == 500


@pytest.mark.slow
def test_what_an_import_printed_before_it_hung_is_kept(tmp_path):
    hangs = '''
print("importing, then a loop")
while True:
    pass
'''
    with IsolatedTarget("import", _workspace(tmp_path, hangs), "tinyllm.prob.rejection",
                        ("ok",), {}, Limits(import_timeout_s=3.0)) as t:
        problem = t.import_status()
        assert problem is not None and problem.kind == "timeout"
        assert t.import_output == "importing, then a loop\n"


def test_the_mirror_is_read_as_untrusted_data():
    from harness.sandbox.capture import MIRROR_BYTES, PAGE_BYTES, PAGE_HEAD, Capture, Mirror, read_mirror

    page = memoryview(mmap.mmap(-1, PAGE_BYTES))
    capture = Capture(10, Mirror(page))
    capture.add("h\u00e9llo \ud800")  # a lone surrogate crosses escaped
    assert read_mirror(page) == ("h\u00e9llo \\ud800", 0)
    capture.add("0123456789")  # 3 characters of room left: the rest counted
    assert read_mirror(page) == ("h\u00e9llo \\ud800012", 7)
    capture.take()
    assert read_mirror(page) == ("", 0)  # sent with a chunk: the mirror starts again
    counts = page[16:PAGE_HEAD].cast("q")
    counts[0], counts[1] = -5, -1  # what a hostile worker may write
    assert read_mirror(page) == ("", 0)
    page[PAGE_HEAD:PAGE_HEAD + 4] = b"\xff\xfeok"
    counts[0], counts[1] = 1 << 40, 1 << 62
    text, dropped = read_mirror(page)
    assert text.startswith("\ufffd\ufffdok") and len(text) <= MIRROR_BYTES
    assert dropped == 1 << 50
    del counts


# -- the whole check ------------------------------------------------------------------------------


def _looping_workspace(root: Path, before: str = "") -> Path:
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", root / "python" / "tinyllm")
    path = root / "python" / "tinyllm" / "prob" / "rejection.py"
    text = path.read_text()
    doc = '    """``max(0, p_i - q_i) / Z``'
    start = text.index(doc)
    end = text.index("\n", start) + 1
    path.write_text(text[:end] + before + "    while True:\n        pass\n" + text[end:])
    return root


@pytest.mark.slow
def test_a_looping_submission_costs_one_time_out_per_function(tmp_path):
    ws = _looping_workspace(tmp_path / "ws", '    print("residual: starting")\n')
    report = tmp_path / "report.json"
    start = time.monotonic()
    code = main(["check", "M07.6", "--workspace", str(ws), "--timeout", "2", "--json", str(report),
                 "--no-diagnosis"])
    took = time.monotonic() - start
    assert code == 1
    tests = json.loads(report.read_text())["tests"]
    timed_out = [t for t in tests if t["outcome"] == "timeout"]
    waited = [t for t in timed_out if "did not return within 2 s" in t["message"]]
    skipped = [t for t in timed_out if "not run: it timed out earlier in this check" in t["message"]]
    # residual_distribution waits once, speculative_step (which calls it) once; the rest at once
    assert len(waited) == 2 and len(skipped) == len(timed_out) - 2 >= 8
    assert all(t["category"] == "timeout" and t["duration_s"] < 1.0 for t in skipped)
    assert all("residual: starting" in t["output"] for t in waited)
    assert any(t["outcome"] == "passed" and "rejection_sample" in t["name"] for t in tests)
    assert took < 2 * 2 + 20  # before: 12 time-outs of 2 s and a worker start after each
