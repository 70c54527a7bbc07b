"""Issue #24, item 5: ``ol tests --mine`` is bounded on the student's files and reports.

- Reading the suite (parse, rewrite, compile) happens in a process of its own with a memory and
  time limit: a file too large or too deep is one line and exit 2 (``HarnessError``), never a
  gigabyte in ol's process, a ``RecursionError`` traceback or exit 3.
- Failure texts are shown with the snapshot's paths as the student's by a rewrite that is linear
  in the text: the regular expression before it was quadratic on ``../../..`` and ``/a/a/a``.
- A report is refused before it is parsed when it holds more values than a report can.
- A run left without a result (in flight when the server went away, killed past its deadline)
  counts as not run, fail closed; it never ends ``ol`` with a ``KeyError``.
"""

from __future__ import annotations

import json
import random
import re
import time
import tracemalloc
from pathlib import Path

import pytest

from harness.engine.course import load_course
from harness.errors import HarnessError
from harness.own_tests import engine as mine
from harness.own_tests import stage as staging
from harness.own_tests.stage import stage
from harness.sandbox.fs import remove_tree

MODULE = load_course().module("M07.6")
SNAPSHOT = "/work/x/ol-mine-stage-1234.5678-abcd/suite"
TAIL = "ol-mine-stage-1234.5678-abcd/suite"
STUDENT = "/home/student/tests"
# The rewrite before: tried at every "/" and ".", quadratic in a run of either.
OLD = re.compile(r"(?:(?:\.\./)+|/(?:[^\s:/]+/)*)" + re.escape(TAIL))


def _old(text: str) -> str:
    return OLD.sub(lambda _: STUDENT, text)


# == the suite is read in a process of its own =======================================================

def _suite(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / "tests"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(source)
    (folder / "test_fine.py").write_text("import scipy.stats\n\ndef test_ok():\n    assert True\n")
    return folder


def _stage(suite: Path) -> dict:
    root, config = stage(MODULE, suite)
    remove_tree(root)
    return config


def test_a_normal_suite_is_read_rewritten_and_its_imports_found(tmp_path):
    config = _stage(_suite(tmp_path, "test_a.py", "import hypothesis\n\ndef test_a():\n"
                                                  "    assert 1 + 1 == 2\n"))
    assert config["preload"] == ["scipy.stats", "hypothesis"]


def test_a_helper_that_does_not_parse_is_left_for_pytest(tmp_path):
    """Only a test file or conftest.py is refused (tests/own_tests/test_mine_syntax.py): pytest
    imports a helper only if a test does."""
    assert _stage(_suite(tmp_path, "helpers.py", "def x(:\n"))["preload"] == ["scipy.stats"]


def test_a_list_literal_of_two_mib_is_refused_in_one_line(tmp_path):
    """1 million constants: a syntax tree of a gigabyte, which ol built in its own process (and
    then ran the suite); now the reading process runs out of its 512 MiB and ol says so."""
    suite = _suite(tmp_path, "test_big.py", "X = [" + "0," * (1 << 20) + "]\n\n"
                                            "def test_x():\n    assert X\n")
    tracemalloc.start()
    try:
        with pytest.raises(HarnessError) as caught:
            _stage(suite)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.line().startswith(f"ol: --mine: ol cannot read {suite / 'test_big.py'}: "
                                          "its syntax tree needs more than 512 MiB")
    assert "\n" not in caught.value.line()
    assert peak < 64 << 20, f"{peak >> 20} MiB in ol's own process"


def test_a_chain_too_deep_to_compile_is_refused_in_one_line(tmp_path):
    """It parses, then compiling it raises RecursionError: before, a traceback and exit 3."""
    source = "X = " + "1 + " * 5000 + "1\n\n" "def test_x():\n    assert X\n"
    suite = _suite(tmp_path, "test_deep.py", source)
    try:
        compile(source, "<deep>", "exec")
    except RecursionError:
        pass
    else:  # Python 3.13's compiler takes the chain: read as any other suite
        _stage(suite)
        return
    with pytest.raises(HarnessError, match="test_deep.py: it is nested too deep to parse"):
        _stage(suite)


def test_a_suite_that_takes_too_long_to_read_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(staging, "READ_LIMIT_S", 0.01)
    with pytest.raises(HarnessError, match=r"reading it took more than 0.01 s or 512 MiB"):
        _stage(_suite(tmp_path, "test_a.py", "def test_a():\n    assert True\n"))


def test_a_reading_process_killed_mid_line_is_refused_by_its_last_file(tmp_path, monkeypatch):
    """Killed while it wrote (its time or memory ran out): the line cut short is no message."""
    monkeypatch.setattr(staging, "READ", "import sys; sys.stdout.write("
                        "'{\"file\": \"tests/test_a.py\"}\\n{\"fi'); sys.exit(-9)")
    suite = _suite(tmp_path, "test_a.py", "def test_a():\n    assert True\n")
    with pytest.raises(HarnessError, match=f"ol cannot read {suite / 'test_a.py'}: reading it took"):
        _stage(suite)


# == paths in failure texts ==========================================================================

@pytest.mark.parametrize("text, shown", [
    (f"../../{TAIL}/test_a.py:12: in test_x", f"{STUDENT}/test_a.py:12: in test_x"),
    (f"{SNAPSHOT}/test_a.py:3: AssertionError", f"{STUDENT}/test_a.py:3: AssertionError"),
    (f"ImportError while importing test module '{SNAPSHOT}/sub/test_b.py'.",
     f"ImportError while importing test module '{STUDENT}/sub/test_b.py'."),
    (f"x{SNAPSHOT}", f"x{STUDENT}"),
    (f"{TAIL}/test_a.py", f"{TAIL}/test_a.py"),  # no path before the folders: not a path of ours
    ("E   assert 1 == 2", "E   assert 1 == 2"),
])
def test_the_snapshot_is_shown_as_the_students_folder(text, shown):
    assert mine.path_rewriter(SNAPSHOT, STUDENT)(text) == shown == _old(text)


def test_the_rewrite_agrees_with_the_regular_expression_it_replaces():
    """On random texts of path pieces holding the folders at most once per run of non-blank
    characters (a run holding them twice, which pytest never writes, is shown by its last)."""
    shown = mine.path_rewriter(SNAPSHOT, STUDENT)
    pieces = ["/", "../", "..", ".", "a", "b/", " ", ":", "\n", TAIL, "//", "é", "\u2003", "'"]
    rng = random.Random(24)
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        if all(run.count(TAIL) <= 1 for run in re.split(r"[\s:]", text)):
            assert shown(text) == _old(text), text


def _report(messages: list[str]) -> dict:
    """A child's ``done`` message: one failing test per message."""
    tests = {f"test_a.py::test_{i}": {"outcome": "failed", "message": m}
             for i, m in enumerate(messages)}
    return {"op": "done", "id": 1, "status": 0, "report": json.dumps(
        {"format": 1, "finished": True, "exit": 1, "tests": tests, "errors": []})}


def test_judged_failure_texts_show_the_students_folder():
    run = mine.judge_report(_report([f"../../{TAIL}/test_a.py:12: in test_x",
                                     f"{SNAPSHOT}/test_a.py:3: AssertionError"]),
                            None, (SNAPSHOT, STUDENT))
    assert list(run.messages.values()) == [f"{STUDENT}/test_a.py:12: in test_x",
                                           f"{STUDENT}/test_a.py:3: AssertionError"]


@pytest.mark.parametrize("text", ["../" * 1000, "/a" * 1500, "/a/../" * 500, "../" * 990 + TAIL,
                                  ("//" + TAIL) * 90, ("/" + TAIL) * 90 + ":x"],
                         ids=["dotdots", "folders", "mixed", "long relative", "doubled", "many"])
def test_the_rewrite_is_linear(text):
    """A report of 200 failures of 3000 characters each: 60 to 80 ms a message before for the
    first three (quadratic), and a report holds thousands, once per implementation. Now the
    whole report is judged well within a second."""
    message = _report([text] * 200)
    start = time.process_time()  # this process's CPU: other work on the machine does not count
    run = mine.judge_report(message, None, (SNAPSHOT, STUDENT))
    assert time.process_time() - start < 1.0
    assert len(run.messages) == 200


# == a report is bounded before it is parsed ======================================================

def test_a_report_of_empty_lists_is_unreadable_at_once():
    """4 MiB (a report's cap) of ``[[],[],...]``: 1.4 million lists parsed before (about 100 MB
    and a second, once per implementation); now refused unparsed."""
    report = "[" + "[]," * ((4 << 20) // 3 - 2) + "[]]"
    message = {"op": "done", "id": 1, "report": report, "status": 0}
    mine.judge_report({**message, "report": "[]"}, None)  # its imports, before the clock
    tracemalloc.start()
    start = time.perf_counter()
    try:
        run = mine.judge_report(message, None)
        elapsed, peak = time.perf_counter() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert run.status == "unreadable"
    assert elapsed < 1.0 and peak < 4 * len(report), (elapsed, peak >> 20)


def test_the_largest_report_is_read():
    tests = {f"test_a.py::test_{i}[{i}]": {"outcome": "failed", "message": "E   assert 1, 2"}
             for i in range(mine.MAX_TESTS)}
    report = json.dumps({"format": 1, "finished": True, "exit": 1, "tests": tests,
                         "errors": []})
    run = mine.judge_report({"op": "done", "id": 1, "report": report, "status": 0}, None)
    assert run.status == "ran" and len(run.outcomes) == mine.MAX_TESTS


# == runs without a result =========================================================================

class _Server:
    """Starts the first run, then answers nothing: the second run never starts."""

    limits = None

    def __init__(self) -> None:
        self.sent: list[dict] = []

    def send(self, message: dict) -> None:
        self.sent.append(message)

    def recv(self, deadline: float) -> dict:
        runs = [m for m in self.sent if m["op"] == "run"]
        if len(runs) == 2 and not any(m["op"] == "started" for m in self.sent):
            self.sent.append({"op": "started"})
            return {"op": "started", "id": runs[0]["id"]}
        time.sleep(max(0.0, deadline - time.monotonic()) + 0.2)
        raise mine._Late()


def test_a_run_killed_when_the_server_stops_answering_has_a_result(monkeypatch):
    """Both runs past their deadline at once: the started one is killed, then the one that never
    started means the server stopped answering. The killed one had no result, and ``run_mine``
    ended with ``KeyError`` (exit 3); now every run has one, and none of them ran."""
    monkeypatch.setattr(mine, "SEND_LIMIT_S", 0.01)
    impls = [mine.Implementation("reference", "the reference", ""),
             mine.Implementation("s11", "bug s11", "", mutant=object())]
    runs = mine.run_all(_Server(), impls, 2, 0.05)
    assert set(runs) == {"reference", "s11"}
    assert not any(run.ran for run in runs.values())
    assert all("stopped answering" in run.problem for run in runs.values()), runs
