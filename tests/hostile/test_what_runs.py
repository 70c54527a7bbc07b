"""Issue #24, item 4: what runs is what was read; item 5: a submission's source parsed in bounds.

A check stages the workspace's ``python/`` tree once, and the worker imports a copy of only the
contract's files (the module's and those of the modules it needs) under ol's own empty package
files. So a student's ``tinyllm/prob/__init__.py`` cannot put another module in the place of the
file ol read, a helper module is not staged (an import of it is one line, exit 2), and the
digest recorded as passed (and looked up by ``ol diff``) is the one of the bytes that ran, not of
the file as it is after the run. A source Python's parser or compiler cannot handle is one line
and exit 2 in ``ol check`` and ``ol gate``, the row ``error`` in ``ol grade``, never exit 3, and
ol's memory stays bounded.

Every ``ol`` here runs as a subprocess with a ``TMPDIR`` of its own, its peak memory read from
``wait4`` by a small launcher that forks it: Linux counts into a process's ``ru_maxrss`` the
resident size of the process it was forked from (kept through ``exec``), so ``ol`` forked from
this test session, grown to over a GiB late in the suite, would report the session's size.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.errors import EXIT_PARTIAL  # -k: a partial run, none failed
from harness.paths import REFERENCE_PYTHON, REPO_ROOT

pytestmark = pytest.mark.slow
RUN_BOUND_S = 120.0  # any ol command here takes a few seconds; past this it hangs
PEAK_MIB = 300  # ol's own peak memory on a bomb (it idles at about 60 MiB)
# Forks the command from a process of a few MiB, waits for it, and writes its exit code and peak.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""
REJECTION = "python/tinyllm/prob/rejection.py"
CATEGORICAL = "python/tinyllm/prob/categorical.py"
PROB_INIT = "python/tinyllm/prob/__init__.py"
STRICT = ("return u < p_x / q_x", "return u <= p_x / q_x")  # pitfall 1: a visible bug

# Puts the reference's rejection.py (its text carried here: the worker may not see the reference)
# in sys.modules in the place of the student's: the import of tinyllm.prob.rejection then returns
# the reference, whatever the student's file holds.
SWAP = f'''
import sys as _sys
import types as _types

_reference = _types.ModuleType("tinyllm.prob.rejection")
_sys.modules["tinyllm.prob.rejection"] = _reference
exec(compile({(REFERENCE_PYTHON / "tinyllm/prob/rejection.py").read_text()!r}, "<reference>",
             "exec"), _reference.__dict__)
'''


class Run:
    """One finished ol command: exit code, output, wall time and peak memory."""

    def __init__(self, tmp_path: Path, *args: str, bound: float = RUN_BOUND_S) -> None:
        tmp = tmp_path / f"tmp-{secrets.token_hex(3)}"
        tmp.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env.update(TMPDIR=str(tmp), PYTHONDONTWRITEBYTECODE="1")
        start = time.monotonic()
        measured = tmp_path / f"peak-{secrets.token_hex(3)}"
        with open(tmp_path / "out", "w+b") as out, open(tmp_path / "err", "w+b") as err:
            proc = subprocess.Popen([sys.executable, "-I", "-c", LAUNCHER, str(measured),
                                     "-m", "harness", *args], cwd=REPO_ROOT,
                                    env=env, stdout=out, stderr=err, start_new_session=True)
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - start > bound:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                time.sleep(0.02)
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            self.out = out.read().decode(errors="replace")
            self.err = err.read().decode(errors="replace")
        if measured.exists():  # the launcher saw the command end
            rc, peak_kib = (int(v) for v in measured.read_text().split())
        else:  # killed at the bound, launcher and all: its own figures, an overestimate
            rc, peak_kib = os.waitstatus_to_exitcode(status), usage.ru_maxrss
        self.rc = rc
        self.seconds = time.monotonic() - start
        self.peak_mib = peak_kib / 1024  # Linux: kilobytes

    def __repr__(self) -> str:
        return (f"rc={self.rc} {self.seconds:.1f} s {self.peak_mib:.0f} MiB\n--- stdout ---\n"
                f"{self.out[-3000:]}\n--- stderr ---\n{self.err[-3000:]}")


def ol(tmp_path: Path, *args: str, bound: float = RUN_BOUND_S) -> Run:
    return Run(tmp_path, *args, bound=bound)


def workspace(root: Path, files: dict[str, str] | None = None) -> Path:
    """A copy of the reference workspace with ``files`` (``python/...`` paths) written over it."""
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", root / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for rel, text in (files or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def reference(rel: str) -> str:
    return (REFERENCE_PYTHON / rel.removeprefix("python/")).read_text()


def wrong_rejection() -> str:
    source = reference(REJECTION)
    assert STRICT[0] in source
    return source.replace(*STRICT)


def one_line(run: Run) -> str:
    assert run.err.count("\n") == 1 and run.err.startswith("ol: "), run
    assert "Traceback" not in run.err and "internal error" not in run.err, run
    return run.err


def passes(ws: Path) -> dict:
    path = ws / ".ol" / "passes.json"
    return json.loads(path.read_text()) if path.exists() else {}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- what runs ---------------------------------------------------------------------------------

def test_an_init_that_swaps_in_the_reference_does_not_pass_a_wrong_module(tmp_path):
    """The attack: a visibly wrong rejection.py passed, and the pass was recorded for it."""
    ws = workspace(tmp_path / "ws", {REJECTION: wrong_rejection(),
                                     PROB_INIT: reference(PROB_INIT) + SWAP})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws), "--json", str(tmp_path / "r.json"))
    assert run.rc == 1, run
    tests = {t["name"]: t["outcome"] for t in json.loads((tmp_path / "r.json").read_text())["tests"]}
    assert tests["test_accept_is_strict"] == "failed"
    assert passes(ws) == {}, "nothing is recorded as passed"
    assert f"note: {PROB_INIT} holds code that ol did not run" in run.out, run
    diff = ol(tmp_path, "diff", "M07.6", "--workspace", str(ws))
    assert diff.rc == 2 and "has not passed" in one_line(diff), diff


def test_a_student_init_is_not_run_and_only_code_in_it_is_noted(tmp_path):
    spin = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    ws = workspace(tmp_path / "ws", {"python/tinyllm/__init__.py": spin})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws), "-k", "hand_example")
    assert run.rc == EXIT_PARTIAL and run.seconds < 60, run
    assert "note: python/tinyllm/__init__.py holds code that ol did not run" in run.out, run
    quiet = workspace(tmp_path / "quiet", {PROB_INIT: '"""Only a docstring."""\n# and a comment\n'})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(quiet), "-k", "hand_example")
    assert run.rc == EXIT_PARTIAL and "note:" not in run.out, run


@pytest.mark.parametrize("how", [
    "from tinyllm.prob.utils import helper",
    "from tinyllm.prob import utils",
    "from . import utils",
    "import tinyllm.prob.utils",
    "from helpers import helper",  # python/helpers.py, beside tinyllm/
])
def test_importing_a_helper_module_of_the_workspace_is_one_line(tmp_path, how):
    helper = "def helper():\n    return 1\n"
    source = reference(REJECTION) + f"\n\ndef _uses_a_helper():\n    {how}\n"
    ws = workspace(tmp_path / "ws", {"python/tinyllm/prob/utils.py": helper,
                                     "python/helpers.py": helper, REJECTION: source})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws))
    assert run.rc == 2, run
    line = one_line(run)
    assert line.startswith(f"ol: {REJECTION}, line {source.count(chr(10))} imports "), line
    assert "which ol does not run: a check of M07.6 runs only the contract's files" in line, line
    assert f"(move that code into {REJECTION})" in line, line


def test_a_helper_module_imported_at_run_time_fails_the_import_in_one_line(tmp_path):
    code = 'import importlib\n_helper = importlib.import_module("tinyllm.prob." + "utils")\n'
    ws = workspace(tmp_path / "ws", {"python/tinyllm/prob/utils.py": "x = 1\n",
                                     REJECTION: reference(REJECTION) + code})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws))
    assert run.rc == 2, run
    line = one_line(run)
    assert "ModuleNotFoundError: No module named 'tinyllm.prob.utils'" in line, line
    assert "runs only the contract's files of M07.6" in line, line


def test_an_import_of_a_dependency_and_of_the_standard_library_is_fine(tmp_path):
    ws = workspace(tmp_path / "ws", {REJECTION: reference(REJECTION)
                                     + "import json\nfrom . import categorical\n"
                                       "from tinyllm.prob.pcg32 import PCG32\n"})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws), "-k", "hand_example")
    assert run.rc == EXIT_PARTIAL, run


def test_the_digest_recorded_and_shown_is_the_one_of_the_copy_that_ran(tmp_path):
    """The file changes while the check runs: the pass is the one of the bytes staged."""
    ws = workspace(tmp_path / "ws")
    path = ws / REJECTION
    ran = path.read_bytes()
    changed = wrong_rejection().encode()
    driver = tmp_path / "driver.py"
    driver.write_text(f'''
import sys
from pathlib import Path
sys.path.insert(0, {str(REPO_ROOT)!r})  # this checkout's harness
import harness.check.engine as check
real = check.run_catalog
def run_catalog(*args, **kwargs):  # the workspace is edited once the copy is staged
    Path({str(path)!r}).write_bytes({changed!r})
    return real(*args, **kwargs)
check.run_catalog = run_catalog
from harness.cli import main
sys.exit(main(sys.argv[1:]))
''')
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run([sys.executable, str(driver), "check", "M07.6", "--workspace", str(ws)],
                          cwd=REPO_ROOT, env=dict(env, TMPDIR=str(tmp_path)), capture_output=True,
                          text=True, timeout=RUN_BOUND_S)
    assert done.returncode == 0, done.stdout + done.stderr  # what ran is the copy read before
    assert path.read_bytes() == changed
    assert list(passes(ws)["M07.6"]) == [sha256(ran)], "the digest of the bytes that ran"
    diff = ol(tmp_path, "diff", "M07.6", "--workspace", str(ws))
    assert diff.rc == 2 and "has not passed" in one_line(diff), diff
    path.write_bytes(ran)
    diff = ol(tmp_path, "diff", "M07.6", "--workspace", str(ws))
    assert diff.rc == 0 and "identical to the reference" in diff.out, diff


def test_a_dependency_that_swaps_in_the_reference_does_not_pass_a_wrong_module(tmp_path):
    ws = workspace(tmp_path / "ws", {REJECTION: wrong_rejection(),
                                     CATEGORICAL: reference(CATEGORICAL) + SWAP})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws), "-k", "accept_is_strict")
    assert run.rc == 1, run


# -- a source too deep for Python's parser -----------------------------------------------------

BOMBS = {
    "unary-minus": "x = " + "-" * 10_000 + "1\n",  # the parser: MemoryError (stack overflowed)
    "long-sum": "x = " + "+".join(["1"] * 20_000) + "\n",  # ast/compile: RecursionError
    "attributes": "x = a" + ".b" * 20_000 + "\n",
}


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_source_too_deep_to_parse_is_one_line_in_ol_check(tmp_path, bomb):
    ws = workspace(tmp_path / "ws", {REJECTION: reference(REJECTION) + BOMBS[bomb]})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws))
    assert run.rc == 2, run
    line = one_line(run)
    assert line.startswith(f"ol: cannot parse {REJECTION}: it is nested too deeply for Python"), line
    assert run.peak_mib < PEAK_MIB, run


def test_a_source_over_the_cap_is_one_line_before_any_parsing(tmp_path):
    """An f-string of 100 000 fields: Python 3.11 takes minutes to parse it (quadratic)."""
    ws = workspace(tmp_path / "ws", {REJECTION: reference(REJECTION)
                                     + "x = f'" + "{a}" * 100_000 + "'\n"})
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws), bound=60.0)
    assert run.rc == 2 and run.seconds < 20, run
    assert one_line(run).startswith(f"ol: {REJECTION} is larger than 64 KiB"), run
    assert run.peak_mib < PEAK_MIB, run


def test_a_dependency_too_deep_to_parse_is_one_line_in_ol_gate(tmp_path):
    ws = workspace(tmp_path / "ws", {CATEGORICAL: reference(CATEGORICAL) + BOMBS["long-sum"]})
    report = tmp_path / "gate.json"
    run = ol(tmp_path, "gate", "MS-P6", "--workspace", str(ws), "--json", str(report))
    assert run.rc == 1, run
    modules = {m["module"]: m for m in json.loads(report.read_text())["modules"]}
    assert modules["M06.3"]["status"] == "pass"
    assert modules["M07.1"]["status"] == "error"
    assert modules["M07.1"]["message"].startswith(f"cannot parse {CATEGORICAL}: it is nested too")
    assert modules["M07.6"]["status"] == "blocked"
    assert run.peak_mib < PEAK_MIB, run
    check = ol(tmp_path, "check", "M07.6", "--workspace", str(ws))
    assert check.rc == 2 and one_line(check).startswith(f"ol: cannot parse {CATEGORICAL}"), check


def test_bombs_are_error_rows_in_ol_grade_and_stay_so(tmp_path):
    subs = tmp_path / "subs"
    for name, bomb in BOMBS.items():
        workspace(subs / name, {REJECTION: reference(REJECTION) + bomb})
    workspace(subs / "helper", {"python/tinyllm/prob/utils.py": "x = 1\n",
                                REJECTION: reference(REJECTION) + "from tinyllm.prob import utils\n"})
    out = tmp_path / "book"
    for attempt in range(2):  # the rerun finds every row current: none is graded again
        run = ol(tmp_path, "grade", "M07.6", str(subs), "--out", str(out), "--jobs", "2")
        assert run.rc == 0, run
        rows = {r["submission"]: r for r in json.loads((out / "gradebook.json").read_text())
                ["submissions"]}
        assert {n: r["verdict"] for n, r in rows.items()} == dict.fromkeys(
            [*BOMBS, "helper"], "error"), (attempt, rows)
        for name in BOMBS:
            assert rows[name]["message"].startswith(f"cannot parse {REJECTION}: it is nested")
        assert "imports tinyllm.prob.utils, which ol does not run" in rows["helper"]["message"]
        assert run.peak_mib < PEAK_MIB, run


def test_a_slot_grades_only_the_tree_the_gradebook_hashed(tmp_path):
    from harness.grade.slots import SlotRequest, grade_workspace
    from harness.sandbox.limits import Limits
    from harness.sandbox.staging import stage

    ws = workspace(tmp_path / "ws")
    row = grade_workspace(SlotRequest("id", "M07.6", str(ws), False, Limits(), None, "0" * 64)).row
    assert row.verdict == "error", row
    assert row.message == f"{ws}/python changed while it was being graded", row
    assert stage(ws).digest != "0" * 64
