"""``ol tests --mine``: a student's own tests against correct code and against the mutant library.

The suites under ``suites/`` are student-style pytest files (the project's own run skips them:
see ``conftest.py``). Each full run is a module-scoped fixture, run once.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.mutants import load_mutants
from harness.own_tests import engine as mine
from harness.own_tests.stage import resolve_suite
from harness.paths import REPO_ROOT
from harness.report.own_tests import format_text, to_gradescope, to_json_text

SUITES = Path(__file__).resolve().parent / "suites"
MODULE = load_course().module("M07.6")
ALL_BUGS = {m.id for m in load_mutants("M07.6")}
CORRECT = {"reference", "loops", "vectorized"}


def run(suite: str, **kwargs) -> mine.MineResult:
    return mine.run_mine(MODULE, SUITES / suite, jobs=2, **kwargs)


def caught(result: mine.MineResult) -> set[str]:
    return {impl.key for impl, r in result.mutants if result.caught_by(r)}


@pytest.fixture(scope="module")
def strong() -> mine.MineResult:
    return run("strong")


@pytest.fixture(scope="module")
def worked_example() -> mine.MineResult:
    return run("worked_example")


@pytest.fixture(scope="module")
def wrong() -> mine.MineResult:
    return run("wrong")


# -- the three suites of the issue ------------------------------------------------------------

@pytest.mark.slow
def test_the_strong_suite_catches_every_bug_and_passes_every_correct_implementation(strong):
    assert {impl.key for impl, _ in strong.correct} == CORRECT
    assert [r.status for _, r in strong.correct] == ["ran"] * 3
    assert strong.wrong == {}
    assert strong.verdict == "pass"
    assert caught(strong) == ALL_BUGS and len(ALL_BUGS) >= 68
    assert f"your tests catch {len(ALL_BUGS)} of {len(ALL_BUGS)} known bugs" in format_text(strong)


# The worked example exposes a bug only where section 3's numbers differ under it. It misses:
# s01/x12 (no uniform equal to a ratio), s06 (p's CDF also sends u' = 0.75 to id 2), s08/s14 (no
# p == q), s09/x18/x19/x20/x27/x28/x29 (binary fractions: every sum is exact), x14 (u_resample is
# valid), x21/x22/x23 (float32 and bfloat16 are exact on quarters, and no u near 1), x24 (its own
# generator happens to draw id 2 for u' = 0.75), x25/x26 (no rounded ratio, the residual's larger
# entry is its first), x43-x46 (lists of quarters: no float32, numpy or integer input; x44 reads
# u_accept = 0.75, which picks id 2 as u' = 0.75 does), every error rule (no bad argument) and
# every rejection_sample bug, x49-x51 (no sum above 1, no tiny Z, no -0.0).
WORKED_EXAMPLE_CATCHES = {"s02", "s03", "s04", "s05", "s07", "s10", "s11", "s12", "s13",
                          "x01", "x02"}


@pytest.mark.slow
def test_the_worked_example_suite_misses_what_its_inputs_cannot_expose(worked_example):
    assert worked_example.verdict == "pass" and worked_example.wrong == {}
    assert caught(worked_example) == WORKED_EXAMPLE_CATCHES
    text = format_text(worked_example)
    assert ("your tests catch 11 of 68 known bugs (9 of the chapter's 19, 2 of the extended 49)"
            in text)
    flat = " ".join(text.split())  # the report wraps long lines
    missed = [impl.mutant for impl, _ in worked_example.mutants
              if impl.key not in WORKED_EXAMPLE_CATCHES]
    for m in missed:
        assert " ".join(m.description.split()) in flat, m.id
        assert f"hint: {' '.join(m.hint.split())}" in flat, m.id  # a repeated hint: once


@pytest.mark.slow
def test_a_missed_bug_is_described_by_the_library_only(worked_example):
    """Hint, description and pitfall: never a mutant's code or a catalog test's name."""
    outputs = [format_text(worked_example), to_json_text(worked_example),
               to_gradescope(worked_example)]
    catalog_names = [info.name for info, _ in collect(MODULE)]
    code = [line.strip() for m in load_mutants("M07.6") for edit in m.edits
            for line in edit.replace.splitlines() if len(line.strip()) >= 12]
    for out in outputs:
        assert not [name for name in catalog_names if name in out]
        assert not [line for line in code if line in out]
    doc = json.loads(outputs[1])
    s06 = next(b for b in doc["bugs"] if b["id"] == "s06")
    mutant = next(m for m in load_mutants("M07.6") if m.id == "s06")
    assert (s06["caught"], s06["hint"], s06["pitfall"]) == (False, mutant.hint, 5)
    assert s06["pitfall_text"] == MODULE.pitfalls[5]


@pytest.mark.slow
def test_a_test_asserting_u_equal_to_r_accepts_is_reported_as_rejecting_correct_code(wrong):
    test = "wrong/test_wrong.py::test_u_equal_to_the_ratio_accepts"
    assert wrong.verdict == "fail"
    assert {t: {i.key for i in impls} for t, impls in wrong.wrong.items()} == {test: CORRECT}
    text = format_text(wrong)
    assert f"WRONG  {test}" in text and "assert False" in text
    assert str(SUITES / "wrong" / "test_wrong.py") in text  # the student's path, not the snapshot's
    # It passes on s01 (u <= r) and fails elsewhere, yet it catches nothing: it is not trusted.
    assert caught(wrong) == {"s10", "x01"}  # the other test, the worked example's alpha
    assert all(test not in wrong.caught_by(r) for _, r in wrong.mutants)


# -- hostile suites: fail closed ---------------------------------------------------------------

def test_a_test_that_exits_the_process_cannot_run_on_correct_code():
    result = run("hostile_exit", mutant_ids=["s01", "s10"])
    assert result.verdict == "fail" and not result.runs_on_correct
    assert "crashed" in {r.status for _, r in result.correct} <= {"crashed", "not run"}
    assert all("os._exit" in r.problem for _, r in result.correct if r.status == "crashed")
    assert caught(result) == set()


def test_reports_forged_as_passed_catch_nothing():
    """A conftest that turns every failure into a pass: correct code passes, no bug is caught."""
    result = run("hostile_forged_pass", mutant_ids=["s01", "s10", "x12"])
    assert result.verdict == "pass" and caught(result) == set()


def test_a_report_forged_from_inside_fails_on_correct_code_too():
    """A finished report written to every descriptor before pytest's: it cannot know which
    implementation it ran on, so its failure is a failure on correct code."""
    result = run("hostile_forged_report", mutant_ids=["s10", "x01", "x20"])
    assert result.verdict == "fail" and set(result.wrong) == {"test_forged_report.py::test_alpha"}
    assert caught(result) == set()


def test_a_run_cannot_kill_the_server_or_it_fails_closed():
    result = run("hostile_kill_server", mutant_ids=["s01"])
    assert caught(result) == set() and not _servers_alive()
    if result.contained:  # the server is PID 1 of the runs' namespace: no run can signal it
        assert result.runs_on_correct
    else:
        assert not result.runs_on_correct


def test_a_server_that_dies_fails_closed_and_leaves_no_process(monkeypatch):
    """Killed from outside mid-run (what a run can do where there is no PID namespace)."""
    import signal
    import threading

    # Only once the server said it is ready: while it hardens itself it has a child of its
    # own for a moment (the helper that maps its user namespace), which a loaded machine let
    # this test take for a run and kill the server before it started.
    started = threading.Event()
    ready = mine._ForkServer.ready

    def ready_and_tell(server):
        answer = ready(server)
        started.set()
        return answer

    monkeypatch.setattr(mine._ForkServer, "ready", ready_and_tell)
    out: list = []
    thread = threading.Thread(target=lambda: out.append(
        run("hostile_hang", mutant_ids=["s01", "s02"], run_limit_s=60.0)))
    thread.start()
    assert started.wait(60), "the server never said it was ready"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until a run is under way: the server and its forks
        pids = _servers_alive(ours=True)
        if pids and len(_descendants(pids[0])) >= 1 + _in_namespace(pids[0]):
            break
        time.sleep(0.05)
    os.kill(pids[0], signal.SIGKILL)
    thread.join(30)
    result = out[0]
    assert not result.runs_on_correct and caught(result) == set()
    assert any("test server was killed by SIGKILL" in r.problem for _, r in result.correct)
    assert not _servers_alive()


@pytest.mark.slow
def test_the_server_is_hardened_as_the_isolated_worker(strong):
    from harness.engine.isolated import IsolatedTarget
    from harness.paths import REFERENCE_PYTHON

    course = load_course()
    with IsolatedTarget("reference", REFERENCE_PYTHON, MODULE.import_name, MODULE.functions,
                        course.returns) as target:
        assert target.import_status() is None
        assert (strong.sandboxed, strong.contained) == (target.sandboxed, target.contained)


@pytest.mark.slow
def test_a_hanging_test_times_out_and_the_rest_is_not_run():
    start = time.monotonic()
    result = run("hostile_hang", mutant_ids=["s01", "s02", "s03"], run_limit_s=2.0)
    statuses = [r.status for _, r in (*result.correct, *result.mutants)]
    assert "ran" not in statuses and "timeout" in statuses
    assert set(statuses) <= {"timeout", "not run"}
    assert time.monotonic() - start < 15  # not 6 runs x 2 s: the first correct timeout stops it
    assert "did not finish within 2 s" in " ".join(format_text(result).split())
    assert caught(result) == set() and not _servers_alive()


def _descendants(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        try:
            kids = Path(f"/proc/{stack.pop()}/task").glob("*/children")
            found = [int(k) for f in kids for k in f.read_text().split()]
        except OSError:
            continue
        out += found
        stack += found
    return out


def _in_namespace(pid: int) -> bool:
    """Whether the server started as ``pid`` made a PID namespace (it is then a shim whose child
    is the namespace's PID 1)."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid_for_children") != os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return False


def _servers_alive(ours: bool = False) -> list[int]:
    """Live fork servers of this test session (any, orphans too, or only those this process
    started): their pids. A server is this session's when its configuration (an argument) names
    a path in the session's private TMPDIR (tests/conftest.py: the snapshot of the suite it runs);
    a server of another checkout's run, or of another pytest-xdist worker, is not ours to count."""
    root = str(REPO_ROOT).encode()
    session_tmp = os.path.join(tempfile.gettempdir(), "").encode()
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if (mine.BOOT.encode() in argv and root in argv and fields[0] != b"Z"
                and any(session_tmp in arg for arg in argv)
                and (not ours or int(fields[1]) == os.getpid())):
            pids.append(int(pid))
    return pids


# -- the parent's judgement of a child's report -------------------------------------------------

def _done(report, status=0) -> dict:
    text = report if isinstance(report, str) or report is None else json.dumps(report)
    return {"op": "done", "id": 1, "report": text, "status": status}


GOOD = {"format": 1, "finished": True, "exit": 1, "errors": [],
        "tests": {"t.py::a": {"outcome": "passed", "message": ""},
                  "t.py::b": {"outcome": "failed", "message": "E   assert 1 == 2"}}}


@pytest.mark.parametrize("message, status", [
    (_done(GOOD), "ran"),
    (_done(None), "crashed"),  # no report: the process ended before pytest did
    (_done(GOOD, status=-9), "crashed"),
    (_done(GOOD, status=3), "crashed"),  # a report, then something else went wrong
    (_done('{"format": 1, "finished": true'), "unreadable"),
    (_done(json.dumps(GOOD) + json.dumps(GOOD)), "unreadable"),  # two writers
    (_done({**GOOD, "finished": False}), "unreadable"),
    (_done({**GOOD, "tests": {"t.py::a": {"outcome": "caught", "message": ""}}}), "unreadable"),
    (_done({**GOOD, "exit": 2}), "interrupted"),
    (_done({**GOOD, "exit": 5, "tests": {}}), "no tests"),
    (_done({**GOOD, "errors": ["t.py: ImportError"]}), "collection error"),
])
def test_only_a_complete_well_formed_report_counts_as_ran(message, status):
    from harness.sandbox.supervisor import Limits

    assert mine.judge_report(message, Limits()).status == status


def test_a_test_that_fails_on_correct_code_is_never_credited():
    run_ = mine.judge_report(_done(GOOD), None)  # a passes, b fails: on correct code and the bug
    correct = mine.Implementation("reference", "the reference", "")
    bug = mine.Implementation("s01", "bug s01", "", mutant=load_mutants("M07.6")[0])
    result = mine.MineResult("M07.6", "t", ((correct, run_),), ((bug, run_),), {})
    assert result.trusted == ["t.py::a"] and set(result.wrong) == {"t.py::b"}
    assert result.caught == 0 and result.verdict == "fail"


# -- the command ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_command_writes_json_and_gradescope(worked_example, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(mine, "run_mine", lambda *a, **k: worked_example)
    out_json, out_gs = tmp_path / "mine.json", tmp_path / "results.json"
    code = main(["tests", "M07.6", "--mine", str(SUITES / "worked_example"), "--json",
                 str(out_json), "--gradescope", str(out_gs), "--jobs", "2"])
    assert code == 0
    assert "your tests catch 11 of 68 known bugs" in capsys.readouterr().out
    doc = json.loads(out_json.read_text())
    assert (doc["score"], doc["max_score"], doc["verdict"]) == (11, 68, "pass")
    gs = json.loads(out_gs.read_text())
    assert (gs["score"], gs["max_score"]) == (11, 68)
    assert len(gs["tests"]) == 69 and sum(t["score"] for t in gs["tests"]) == 11
    for t in gs["tests"]:
        assert set(t) == {"name", "score", "max_score", "status", "output", "visibility"}


@pytest.mark.slow
def test_the_command_exits_1_when_tests_reject_correct_code(wrong, monkeypatch, capsys):
    monkeypatch.setattr(mine, "run_mine", lambda *a, **k: wrong)
    assert main(["tests", "M07.6", "--mine", str(SUITES / "wrong")]) == 1
    assert "WRONG" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--mine", "no/such/path"], "does not exist"),
    (["--mine", str(SUITES)], None),  # a folder: fine as far as arguments go (not run here)
    (["--mine", str(Path(__file__).parent / "conftest.py"), "--jobs", "0"],
     "--jobs must be at least 1"),
    (["--mine", str(Path(__file__).parent.parent / "schemas")], "holds no test file"),
])
def test_usage_errors_are_one_line_and_exit_2(argv, message, monkeypatch, capsys):
    monkeypatch.setattr(mine, "run_mine", lambda *a, **k: pytest.fail("must not run"))
    if message is None:
        assert resolve_suite(argv[1], None) == SUITES
        return
    assert main(["tests", "M07.6", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_relative_path_is_found_in_the_workspace(tmp_path):
    (tmp_path / "python" / "tinyllm").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mine.py").write_text("def test_x():\n    pass\n")
    assert resolve_suite("tests", str(tmp_path)) == (tmp_path / "tests").resolve()
