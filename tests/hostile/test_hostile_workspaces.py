"""Issue #5: hostile workspaces, end to end through ``ol check``.

Each workspace is a copy of the reference (a correct implementation) plus one attack: in one
function of ``rejection.py`` (after the correct code ran, so its argument checks still raise), at
its import, in ``tinyllm/__init__.py``, or in the workspace's files (links to devices or to /).
A copy without an attack must still pass every test under the same limits. Attacks of two sorts:

- sabotage (exit, crash, hang, bombs, lying return values, in-place edits): the attack itself must
  make the tests that reach it fail, with the right outcome and message;
- cheating (forged reports, patched pytest or harness, writes outside, output floods): the attack
  comes with a real bug (tries counted from 0, or a hidden aliasing and in-place edit), and must
  not turn the bug's failures into passes.

Every case runs as ``ol check M07.6 --workspace WS --timeout 3 --json F --junit F --gradescope F``
in a process of its own, a few at once, against a private copy of the harness: the hashes taken
before and after cannot be disturbed by someone editing the repository meanwhile, and the real
repository is never at risk. Per case the test asserts: the affected tests' outcomes and messages,
that every other test passed (the rest of the catalog is still graded), the exit code, the three
reports (written by the parent after the run: they say fail, whatever the student forged), the
wall time. The whole catalog runs for the correct copy and an attack at import (every test is
affected); a function that exits, crashes, hangs, forks or bombs runs every test that reaches it
and one of another function graded after the worker died (``AROUND_THE_DEATH``); an attack on
what one function returns, writes or prints runs every test but speculative_step's four, which
cannot see it (``NOT_SPECULATIVE``). For the whole suite: no
process the student's code started survives (each hostile module names its processes with a
marker, found by a scan of ``/proc``), nothing of the harness copy changed (hashed before and
after), nothing was planted in the real repository, in /tmp, HOME or site-packages, no forged
file or temporary directory is left, no orphan came back to this process, and the total time is
bounded.

The cases that must not run without the sandbox (writes outside the worker's directory, killing
the parent) are skipped unless the worker runs as root in its own namespaces. Longer than 400
lines: the attacks are data (``LIBRARY`` and ``CASES``), kept beside the assertions that judge them.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import fnmatch
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.paths import REPO_ROOT
from harness.sandbox import proctree

pytestmark = pytest.mark.slow

CALL_TIMEOUT_S = 3  # --timeout: a hang costs this once per function (its later calls: not run)
HUNG = (rf"(did not return within {CALL_TIMEOUT_S} s"
        r"|not run: it timed out earlier in this check)")
CASE_BOUND_S = 60.0  # wall time of one ``ol check`` of a hostile workspace
SUITE_BOUND_S = 240.0  # all of them, a few at once (about 1.5 minutes on 2 busy cores)
JOBS = 4  # checks at once: most of a hostile check is waiting for a time-out
HARD_KILL_S = 180.0  # a check still running then is killed (and its case fails)

TESTS = tuple(info.name for info, _ in collect(load_course().module("M07.6")))
# The tests that call each function on valid arguments (an injected change shows there). Issue
# #14: the distribution checks call every function taking p and q on valid ones too, and the
# numpy-arguments test calls every function.
VALID_PAIRS = ("test_shapes_and_distributions_are_checked", "test_arguments_are_never_modified")
RS = ("test_rejection_sample_first_try_enumerated", "test_rejection_sample_tries_are_geometric",
      "test_rejection_sample_draw_order", "test_rejection_sample_checks_the_envelope", *VALID_PAIRS)
AP = ("test_hand_example", "test_acceptance_rate_matches_acceptance_probability",
      "test_residual_disjoint_supports_is_p", *VALID_PAIRS)
RD = ("test_hand_example", "test_residual_is_a_distribution", "test_residual_when_p_equals_q",
      "test_residual_disjoint_supports_is_p", "test_residual_sum_is_ascending", *VALID_PAIRS)
RA = ("test_hand_example", "test_accept_is_strict", "test_accept_always_when_target_dominates",
      "test_acceptance_rate_matches_acceptance_probability", "test_arguments_are_never_modified")
# Where the catalog is cut (``Case.k``): every test but the four of speculative_step. In every
# hostile workspace speculative_step keeps calling the correct functions (``hostile_source``
# renames its calls), so an attack on one function's answers, writes or prints, which never
# stops the worker, cannot reach those four: they would pass as in the correct copy, which runs
# them. They are 0.9 s of the catalog's 1.6 s (the chi-square and the exact output distribution),
# and without them the parent never imports scipy: about 1.2 CPU s less per such case. Every
# affected test of such a case still runs (asserted below CASES), and so does every other test
# that calls the attacked function. A partial run with a failure still exits 1, verdict fail.
NOT_SPECULATIVE = "test_?[!p]*"  # ``ol check -k``: a shell pattern, "test_" then not "sp..."
SPECULATIVE = tuple(t for t in TESTS if t.startswith("test_speculative_"))
assert len(SPECULATIVE) == 4 and [t for t in TESTS if fnmatch.fnmatch(t, NOT_SPECULATIVE)] == [
    t for t in TESTS if t not in SPECULATIVE]
# Where the catalog is cut for a sabotage of rejection_sample that stops the worker (it exits,
# crashes, hangs, forks or bombs; ``affected`` is RS): every test that reaches rejection_sample
# (RS; the first is test_shapes_and_distributions_are_checked), the tests of the other functions
# before it that share its "re" (the residual's, one of rejection_accept), and, after the first
# death, test_speculative_rejects_bad_drafts: a test of another function, graded on the worker
# started again, which must pass (what the rest of the catalog shows after a death, asserted
# below CASES). Not run: the tests before any attack ran (the correct copy runs them under the
# same limits) and three more speculative tests after the death, among them the chi-square and
# the exact output law (0.9 s of the catalog's 1.6 s): about 1.2 CPU s less per case, 7 cases.
AROUND_THE_DEATH = "*re*_*"  # ``ol check -k``: a shell pattern
assert [t for t in TESTS if fnmatch.fnmatch(t, AROUND_THE_DEATH)] == [
    "test_accept_rejects_bad_arguments", "test_residual_is_a_distribution",
    "test_residual_when_p_equals_q", "test_residual_disjoint_supports_is_p",
    "test_residual_sum_is_ascending", "test_shapes_and_distributions_are_checked",
    "test_speculative_rejects_bad_drafts", "test_rejection_sample_first_try_enumerated",
    "test_rejection_sample_tries_are_geometric", "test_rejection_sample_draw_order",
    "test_rejection_sample_checks_the_envelope", "test_arguments_are_never_modified"]
# The bug that comes with a cheating attack: tries counted from 0 (pitfall 12, as mutant s18).
TRIES_BUG = ("test_rejection_sample_tries_are_geometric", "test_rejection_sample_draw_order",
             "test_rejection_sample_checks_the_envelope")
OFF_BY_ONE = "\nresult = (result[0], result[1] - 1)"
TRIES_MESSAGE = r"tries on average; a geometric count from 1|returned \(0, [01]\)[;,] expected"

SIGNATURES = {
    "rejection_accept": "p_x, q_x, u",
    "acceptance_probability": "p, q",
    "residual_distribution": "p, q",
    "speculative_step": "p, q, x, u_accept, u_resample",
    "rejection_sample": "p, q, m, rng, max_tries=10000",
}

# -- the attacks ---------------------------------------------------------------------------------

# Appended to every hostile rejection.py. {token} names the case's processes (PR_SET_NAME), so a
# survivor can be found; {plant} is where files are planted; {forge} where reports are forged.
LIBRARY = r'''

# ---- everything below is the attack (tests/hostile/test_hostile_workspaces.py) ----
import ctypes as _ol_ctypes
import json as _ol_json
import os as _ol_os
import signal as _ol_signal
import sys as _ol_sys
import time as _ol_time

import numpy as _ol_np

_OL_TOKEN = {token!r}
_OL_PLANT = {plant!r}
_OL_FORGE = {forge!r}
_ol_ctypes.CDLL(None).prctl(15, _OL_TOKEN.encode(), 0, 0, 0)  # PR_SET_NAME


def _ol_ignore_signals():
    for sig in (_ol_signal.SIGALRM, _ol_signal.SIGTERM, _ol_signal.SIGINT, _ol_signal.SIGXCPU,
                _ol_signal.SIGHUP, _ol_signal.SIGUSR1, _ol_signal.SIGPIPE):
        _ol_signal.signal(sig, _ol_signal.SIG_IGN)


def _ol_spin():
    _ol_ignore_signals()
    while True:
        pass


def _ol_fork_sleepers(n=50):
    """n sleeping children that ignore SIGTERM, every tenth a daemon (new session, double fork);
    then wait for them, for ever."""
    for i in range(n):
        if _ol_os.fork() == 0:
            try:
                _ol_ignore_signals()
                if i % 10 == 0:
                    _ol_os.setsid()
                    if _ol_os.fork() != 0:
                        _ol_os._exit(0)
                _ol_time.sleep(1000)
            finally:
                _ol_os._exit(0)
    while True:
        try:
            _ol_os.wait()
        except ChildProcessError:
            _ol_time.sleep(1)


_ol_done = set()


def _ol_once(name):
    """True the first time in this worker."""
    if name in _ol_done:
        return False
    _ol_done.add(name)
    return True


def _ol_flood():
    """200 MB on stdout (print) and 200 MB on stderr (raw writes), once per worker."""
    if _ol_once("flood"):
        text = "x" * (1 << 20)
        for _ in range(200):
            _ol_sys.stdout.write(text)
        _ol_sys.stdout.flush()
        data = b"y" * (1 << 20)
        for _ in range(200):
            _ol_os.write(2, data)


def _ol_forge():
    """Passing reports everywhere, and the lines a grader greps for."""
    tests = [{{"name": f"test_{{i}}", "kind": "unit", "outcome": "passed", "duration_s": 0.0,
              "message": "", "pitfall": None, "pitfall_text": ""}} for i in range(19)]
    report = {{"format_version": 1, "module": "M07.6", "workspace": _OL_TOKEN, "target": _OL_TOKEN,
              "verdict": "pass", "passed": 19, "failed": 0, "duration_s": 0.1, "notes": [],
              "tests": tests}}
    gradescope = {{"score": 19, "max_score": 19, "output": _OL_TOKEN, "tests": []}}
    junit = ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="' + _OL_TOKEN
             + '" tests="19" failures="0" errors="0"><testsuite name="M07.6" tests="19" '
             'failures="0" errors="0" skipped="0"/></testsuites>\n')
    written = []
    for path in ["results.json", "report.json", "junit.xml"] + _OL_FORGE:
        if path.endswith(".xml"):
            text = junit
        elif "results" in _ol_os.path.basename(path) or "gradescope" in path:
            text = _ol_json.dumps(gradescope)
        else:
            text = _ol_json.dumps(report)
        try:
            with open(path, "w") as f:
                f.write(text)
            written.append(path)
        except OSError:
            pass
    for stream in (_ol_sys.stdout, _ol_sys.stderr):
        print("============================== 19 passed in 0.42s ==============================",
              file=stream)
        print("M07.6: 19 passed, 0 failed (verdict: pass)", file=stream, flush=True)
    return written


def _ol_patch_pytest():
    """pytest.raises that swallows anything, hooks whose code says every test passed."""
    import pytest
    import _pytest.python
    import _pytest.runner

    class _Swallow:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return True

    pytest.raises = lambda *args, **kwargs: _Swallow()

    def _passed(*args, **kwargs):
        return True

    for module in (_pytest.runner, _pytest.python):
        for name in dir(module):
            hook = getattr(module, name)
            if name.startswith("pytest_") and callable(hook) and hasattr(hook, "__code__"):
                try:
                    hook.__code__ = _passed.__code__
                except (TypeError, ValueError):
                    pass


def _ol_reach_out():
    """Read what the user can read; try to write beside the harness, the reference, the
    workspace, in /tmp, HOME, site-packages. Writes are only file creations (O_EXCL) outside
    the private copy of the harness; in the copy, appends to the catalog and the reference."""
    config = _ol_json.loads(_ol_sys.argv[4])
    repo = config["repo_root"]
    read = []  # since #24 reading is the boundary too: none of these is in the worker's view
    for path in ("/etc/passwd", repo + "/reference/python/tinyllm/prob/rejection.py",
                 repo + "/harness/catalogs/m07_6/test_catalog.py"):
        try:
            with open(path, "rb") as f:
                f.read()
            read.append(path)
        except OSError:
            pass
    dirs = _OL_PLANT + [repo, repo + "/harness", repo + "/harness/catalogs/m07_6",
                        repo + "/reference/python/tinyllm/prob", repo + "/mutants"]
    could = []
    for d in dirs:
        for name in ("ol-planted-" + _OL_TOKEN, "ol-planted-" + _OL_TOKEN + ".pth"):
            try:
                fd = _ol_os.open(_ol_os.path.join(d, name),
                                 _ol_os.O_WRONLY | _ol_os.O_CREAT | _ol_os.O_EXCL, 0o644)
                _ol_os.write(fd, b"import os  # planted by a student\n")
                _ol_os.close(fd)
                could.append(d)
            except OSError:
                pass
    for path in (repo + "/harness/catalogs/m07_6/test_catalog.py", repo + "/harness/sandbox/codec.py",
                 repo + "/reference/python/tinyllm/prob/rejection.py"):
        try:
            with open(path, "a") as f:
                f.write("\n# planted by a student " + _OL_TOKEN + "\n")
            could.append(path)
        except OSError:
            pass
    return read, could


def _ol_kill_everyone():
    """Signal every process in sight, then the parent."""
    if _ol_os.getpid() == 1:  # only inside a PID namespace: elsewhere this would be the machine
        for name in _ol_os.listdir("/proc"):
            if name.isdigit() and int(name) != 1:
                try:
                    _ol_os.kill(int(name), _ol_signal.SIGKILL)
                except OSError:
                    pass
    _ol_os.kill(_ol_os.getppid(), _ol_signal.SIGKILL)


class AlwaysEqual(float):
    """A float that equals, and is less and greater than, everything."""

    def __eq__(self, other):
        return True

    __le__ = __ge__ = __lt__ = __gt__ = __eq__

    def __ne__(self, other):
        return False

    __hash__ = float.__hash__


class AgreeableArray(_ol_np.ndarray):
    """An array that compares equal to anything."""

    def __eq__(self, other):
        return _ol_np.ones(self.shape, dtype=bool)

    def tolist(self):
        return [0.5] * self.size
'''

@dataclasses.dataclass(frozen=True)
class Case:
    """One hostile workspace: where the attack goes, and what ``ol check`` must then say."""

    name: str
    where: str  # a function, "import" (end of rejection.py), "init" or "none" (see init, links)
    code: str  # the attack; in a function it runs after the correct code, with ``result`` set
    affected: tuple[str, ...]  # the tests that must not pass; every other test must
    outcomes: tuple[str, ...]  # the outcomes allowed for an affected test
    message: str  # a regex every affected test's message must match
    at_import: str = ""  # code run at the end of rejection.py's import as well
    init: str = ""  # code for tinyllm/__init__.py as well (which ol does not run)
    limits: dict = dataclasses.field(default_factory=dict)  # beyond --timeout (via the driver)
    sandbox: bool = False  # run only where the worker is sandboxed and contained (as root)
    links: tuple[tuple[str, str], ...] = ()  # (path under python/tinyllm, where it points)
    setup_error: str = ""  # a regex for ``ol check``'s one-line error (exit 2, no report)
    k: str = ""  # ``ol check -k``: "" the whole catalog, NOT_SPECULATIVE or AROUND_THE_DEATH


CASES = [
    Case("correct", "none", "", (), (), ""),  # the reference as it is
    # -- exits and interrupts --
    Case("import-os-exit", "import", "_ol_os._exit(0)", TESTS, ("crashed",),
         r"did not import: the worker exited with code 0 while importing .*os\._exit"),
    Case("import-system-exit", "import", "raise SystemExit(0)", TESTS, ("crashed",),
         r"did not import: importing tinyllm\.prob\.rejection raised SystemExit\(0\); a module "
         "must not exit"),
    Case("function-os-exit", "rejection_sample", "_ol_os._exit(0)", RS, ("crashed",),
         r"exited with code 0 during rejection_sample\(.*did the code call os\._exit",
         k=AROUND_THE_DEATH),
    Case("function-system-exit", "rejection_sample", "raise SystemExit(0)", RS, ("crashed",),
         r"rejection_sample\(.*\) tried to exit the interpreter \(SystemExit: 0\); a function "
         "must return or raise",
         k=AROUND_THE_DEATH),
    Case("function-keyboard-interrupt", "rejection_sample",
         'raise KeyboardInterrupt("pressed by the student")', RS, ("failed", "error"),
         r"KeyboardInterrupt: pressed by the student",
         k=AROUND_THE_DEATH),
    # -- time, memory, processes, native crashes, output --
    # The first call waits out the limit; the function's later calls in the check fail at once.
    Case("function-hang-ignoring-signals", "rejection_sample", "_ol_spin()", RS, ("timeout",),
         rf"rejection_sample\(.*\) {HUNG}",
         k=AROUND_THE_DEATH),
    # (Not in tinyllm/__init__.py: ol runs its own empty one; tests/hostile/test_what_runs.py.)
    Case("import-hang-ignoring-signals", "import", "_ol_spin()", TESTS, ("timeout",),
         r"importing tinyllm\.prob\.rejection did not finish within 6 s",
         limits={"import_timeout_s": 6.0}),
    # Half a second a call, far below the call limit, on the input of the 1000-call batch only.
    Case("function-slow-calls", "rejection_sample", "if m == 3.0:\n    _ol_time.sleep(0.5)",
         ("test_rejection_sample_tries_are_geometric",), ("timeout",),
         r"the calls of this test did not finish within 20 s in all \(stopped during "
         r"rejection_sample\(", limits={"test_timeout_s": 20.0}, k=NOT_SPECULATIVE),
    Case("function-memory-bomb-100gb", "rejection_sample", "bytearray(100 * 2**30)", RS,
         ("failed", "error"), r"MemoryError",
         k=AROUND_THE_DEATH),
    Case("function-forks-50-sleepers", "rejection_sample", "_ol_fork_sleepers(50)", RS,
         ("timeout",), rf"rejection_sample\(.*\) {HUNG}",
         k=AROUND_THE_DEATH),
    Case("function-segfault", "rejection_sample", "_ol_ctypes.string_at(0)", RS, ("crashed",),
         r"killed by SIGSEGV during rejection_sample\(.*a crash in native code",
         k=AROUND_THE_DEATH),
    Case("function-floods-400mb", "rejection_sample", "_ol_flood()" + OFF_BY_ONE, TRIES_BUG,
         ("failed",), TRIES_MESSAGE, k=NOT_SPECULATIVE),
    # -- cheating: forged reports, patched pytest and harness, writes outside --
    Case("forge-reports-and-patch-pytest", "rejection_sample",
         "_ol_forge()\n_ol_patch_pytest()" + OFF_BY_ONE, TRIES_BUG, ("failed",), TRIES_MESSAGE,
         at_import="_ol_forge()\n_ol_patch_pytest()", sandbox=True, k=NOT_SPECULATIVE),
    Case("init-patches-harness-modules", "residual_distribution",
         "if isinstance(p, _ol_np.ndarray) and _ol_np.array_equal(result, p):\n    result = p",
         ("test_residual_when_p_equals_q",), ("failed",),
         r"returned an object that shares memory with an argument",
         init=textwrap.dedent('''
             import importlib
             import sys

             for name in ("harness.sandbox.codec", "harness.engine.target", "harness.engine.isolated"):
                 module = sys.modules.get(name)
                 try:
                     module = module or importlib.import_module(name)
                 except Exception:
                     continue
                 for attr in list(vars(module)):
                     if "alias" in attr or attr == "_changed":  # no sharing, nothing changed
                         setattr(module, attr, lambda *args, **kwargs: False)
                     if attr == "_fits":  # every value fits its contract
                         setattr(module, attr, lambda *args, **kwargs: True)
                     if attr == "_checker":
                         setattr(module, attr, lambda *args, **kwargs: (lambda value: True))
             '''), k=NOT_SPECULATIVE),
    Case("reach-outside-the-worker-directory", "rejection_sample",
         "read, could = _ol_reach_out()\nif read or could or _OL_AT_IMPORT[0] or _OL_AT_IMPORT[1]:\n"
         "    raise RuntimeError(f'could read {read} {_OL_AT_IMPORT[0]} or write {could} "
         "{_OL_AT_IMPORT[1]}')" + OFF_BY_ONE,
         TRIES_BUG, ("failed",), TRIES_MESSAGE, at_import="_OL_AT_IMPORT = _ol_reach_out()",
         sandbox=True, k=NOT_SPECULATIVE),
    Case("kill-the-parent", "rejection_sample", "_ol_kill_everyone()" + OFF_BY_ONE, TRIES_BUG,
         ("failed",), TRIES_MESSAGE, sandbox=True, k=NOT_SPECULATIVE),
    # -- objects that lie, arguments changed or shared --
    Case("float-subclass-always-equal", "acceptance_probability", "result = AlwaysEqual(result)",
         AP, ("failed",), r"returned an object of class tinyllm\.prob\.rejection\.AlwaysEqual "
         r"where the contract promises float", k=NOT_SPECULATIVE),
    Case("ndarray-subclass", "residual_distribution", "result = result.view(AgreeableArray)",
         RD, ("failed",), r"returned an object of class tinyllm\.prob\.rejection\.AgreeableArray "
         r"where the contract promises float64\[\]", k=NOT_SPECULATIVE),
    Case("numpy-scalar-of-the-wrong-kind", "rejection_accept", "result = _ol_np.int64(result)",
         RA, ("failed",), r"returned a numpy\.int64 where the contract promises bool",
         k=NOT_SPECULATIVE),
    Case("list-for-an-array", "residual_distribution", "result = result.tolist()", RD,
         ("failed",), r"returned a list of \(a float.*where the contract promises float64\[\]",
         k=NOT_SPECULATIVE),
    # A wrong value, not a wrong type: the tests that only compare argument kinds cannot see it.
    Case("nan-for-a-probability", "acceptance_probability", "result = float('nan')",
         tuple(t for t in AP if t not in VALID_PAIRS),
         ("failed", "error"), r"(?i)\bnan\b", k=NOT_SPECULATIVE),
    Case("modifies-its-arguments", "residual_distribution",
         "if isinstance(p, list):\n    p.reverse()\nelse:\n    p[...] = p[::-1].copy()", RD,
         ("failed",), r"residual_distribution\(.*\) modified argument 1 in place", k=NOT_SPECULATIVE),
    Case("returns-the-callers-array", "residual_distribution",
         "if isinstance(p, _ol_np.ndarray) and _ol_np.array_equal(result, p):\n    result = p",
         ("test_residual_when_p_equals_q",), ("failed",),
         r"residual_distribution\(.*\) returned an object that shares memory with an argument",
         k=NOT_SPECULATIVE),
    # -- the workspace itself: ol reads and copies it in its own process, before any isolation --
    Case("module-is-a-link-to-dev-zero", "none", "", (), (), "",
         links=(("prob/rejection.py", "/dev/zero"),),
         setup_error=r"^ol: python/tinyllm/prob/rejection\.py is a symbolic link"),
    Case("package-holds-a-link-to-dev-urandom", "none", "", (), (), "",
         links=(("prob/weights.bin", "/dev/urandom"),),
         setup_error=r"^ol: python/tinyllm/prob/weights\.bin is a symbolic link"),
    Case("package-holds-a-link-to-the-root", "none", "", (), (), "",
         links=(("everything", "/"),),
         setup_error=r"^ol: python/tinyllm/everything is a symbolic link"),
]
BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES)


def selected(case: Case) -> tuple[str, ...]:
    """The tests ``case``'s check runs, in the catalog's order."""
    return tuple(t for t in TESTS if not case.k or fnmatch.fnmatch(t, case.k))


# A cut catalog never drops what a case judges: every affected test runs; only an attack that
# leaves the worker running (no exit, crash, hang, fork, or attack at import) loses more than
# tests before its first call; after a death, a test of another function runs (and must pass).
for _case in CASES:
    assert set(_case.affected) <= set(selected(_case)), _case.name
    assert not _case.k or _case.where in SIGNATURES, _case.name
    assert (_case.k == AROUND_THE_DEATH) == (_case.where == "rejection_sample"
                                             and _case.affected == RS), _case.name
    if _case.k == AROUND_THE_DEATH:
        _ran = selected(_case)
        _first = min(_ran.index(t) for t in _case.affected)
        assert any(t not in _case.affected for t in _ran[_first:]), _case.name


def hostile_source(reference: str, case: Case, token: str, plant: list[str],
                   forge: list[str]) -> str:
    """The reference's rejection.py with ``case``'s attack."""
    source = reference + LIBRARY.format(token=token, plant=plant, forge=forge)
    source += f"\n{case.at_import}\n"
    if case.where == "import":
        return source + case.code + "\n"
    if case.where not in SIGNATURES:
        return source
    fn = case.where
    # Other functions (speculative_step) keep calling the correct code: the attack stays in one.
    renamed = re.sub(rf"(?<!def )(?<![\w.]){fn}\(", f"_ol_correct_{fn}(", reference)
    source = renamed + source[len(reference):]
    params = SIGNATURES[fn]
    args = ", ".join(p.split("=")[0] for p in params.split(", "))
    return source + (f"\n\n_ol_correct_{fn} = {fn}\n\n\ndef {fn}({params}):\n"
                     f"    result = _ol_correct_{fn}({args})\n"
                     + textwrap.indent(case.code, "    ") + "\n    return result\n")


# -- running the cases ---------------------------------------------------------------------------

DRIVER = """
import json, sys
import harness.engine.limits
from harness.cli import main
from harness.engine.isolated import Limits
limits = Limits.from_json(json.loads(sys.argv[1]))
harness.engine.limits.worker_limits = lambda timeout_s, memory_mb, disk_mb=None: limits
sys.exit(main(sys.argv[2:]))
"""


@dataclasses.dataclass
class Run:
    case: Case
    returncode: int | None
    stdout: str
    stderr: str
    wall_s: float
    reports: Path
    survivors: list[str]


def tree_hash(root: Path) -> dict[str, str]:
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def marked(token: str) -> list[str]:
    """Every process named ``token`` (zombies included), as 'pid state'."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == token:
                    stat = (entry / "stat").read_text()
                    found.append(f"{entry.name} {stat[stat.rindex(')') + 2]}")
            except OSError:
                continue
    return found


def children_of_this_process() -> set[int]:
    pids = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        with contextlib.suppress(OSError, ValueError):
            pids.update(int(p) for p in (task / "children").read_text().split())
    return pids


def sandbox_state(tmp: Path) -> tuple[bool, bool]:
    """Whether a worker here is sandboxed (read-only file system) and contained (PID namespace)."""
    from harness.engine.isolated import IsolatedTarget

    prob = tmp / "python" / "probe" / "prob"
    prob.mkdir(parents=True)
    (tmp / "python" / "probe" / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "m.py").write_text("def f():\n    return 1\n")
    with IsolatedTarget("probe", tmp / "python", "probe.prob.m", ["f"], {}) as target:
        assert target.call("f") == 1
        return target.sandboxed, target.contained


class Suite:
    """Every selected case, run a few at once, and what the whole run left behind."""

    def __init__(self, root: Path, names: list[str]) -> None:
        self.root, self.token = root, secrets.token_hex(3)
        self.repo = root / "repo"
        for part in ("harness", "reference", "mutants"):
            shutil.copytree(REPO_ROOT / part, self.repo / part,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self.sandboxed, self.contained = sandbox_state(root / "probe")
        self.before = tree_hash(self.repo)
        self.real_tree = [REPO_ROOT / "harness", REPO_ROOT / "reference", REPO_ROOT / "mutants"]
        self.plant = [str(REPO_ROOT), *map(str, self.real_tree), str(REPO_ROOT / "tests"),
                      str(root), "/tmp", "/var/tmp", "/dev/shm", str(Path.home()),
                      sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"]]
        self.forged = [Path("/tmp/results.json"), Path("/tmp/report.json"),
                       Path("/tmp/junit.xml"), REPO_ROOT / "reports" / "results.json"]
        self.forged_before = {p: _content(p) for p in self.forged}
        self.children_before = children_of_this_process()
        self.cases = [BY_NAME[n] for n in names]
        self.runs: dict[str, Run] = {}
        self.skipped: dict[str, str] = {}
        start = time.monotonic()
        runnable = []
        for case in self.cases:
            if case.sandbox and not (self.sandboxed and self.contained):
                self.skipped[case.name] = "the worker is not sandboxed here (run as root)"
            else:
                runnable.append(case)
        with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
            for run in pool.map(self.run, runnable):
                self.runs[run.case.name] = run
        self.total_s = time.monotonic() - start
        self.after = tree_hash(self.repo)
        self.children_after = children_of_this_process() - self.children_before

    def token_of(self, case: Case) -> str:
        return f"olhx{self.token}{CASES.index(case):02d}"

    def workspace(self, case: Case) -> Path:
        ws = self.root / "ws" / case.name
        shutil.copytree(REPO_ROOT / "reference" / "python" / "tinyllm", ws / "python" / "tinyllm",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for path, target in case.links:
            link = ws / "python" / "tinyllm" / path
            link.unlink(missing_ok=True)
            link.symlink_to(target)
        if case.where == "none":
            return ws
        reports = self.root / "reports" / case.name
        plant = [*self.plant, str(ws), str(ws / "python"), str(reports)]
        forge = [str(reports / n) for n in ("check.json", "check.xml", "results.json")]
        forge += [str(ws / "results.json"), str(ws.parent / "results.json"),
                  *map(str, self.forged)]
        rejection = ws / "python" / "tinyllm" / "prob" / "rejection.py"
        token = self.token_of(case)
        rejection.write_text(hostile_source(rejection.read_text(), case, token, plant, forge))
        if case.init:
            init = ws / "python" / "tinyllm" / "__init__.py"
            code = case.init.replace("$TOKEN", repr(token.encode()))
            init.write_text(init.read_text() + "\n" + code)
        return ws

    def run(self, case: Case) -> Run:
        ws = self.workspace(case)
        reports = self.root / "reports" / case.name
        reports.mkdir(parents=True, exist_ok=True)
        if not case.setup_error:  # passing reports, as a student could have left them there
            for name, text in forged_reports(self.token_of(case)).items():
                (reports / name).write_text(text)
        args = ["check", "M07.6", "--workspace", str(ws), "--timeout", str(CALL_TIMEOUT_S),
                "--json", str(reports / "check.json"), "--junit", str(reports / "check.xml"),
                "--gradescope", str(reports / "results.json")]
        if case.k:
            args += ["-k", case.k]
        if case.limits:
            limits = {"call_timeout_s": CALL_TIMEOUT_S, **case.limits}
            command = [sys.executable, "-c", DRIVER, json.dumps(limits), *args]
        else:
            command = [sys.executable, "-m", "harness", *args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        start = time.monotonic()
        proc = subprocess.Popen(command, cwd=self.repo, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=HARD_KILL_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            out, err = proc.communicate()
        wall = time.monotonic() - start
        token = self.token_of(case)
        # Anything alive now outlived the check; after a hard kill of the check, a worker's shim
        # notices within a second that its parent is gone.
        deadline = time.monotonic() + (0.2 if wall < HARD_KILL_S else 5.0)
        while (survivors := marked(token)) and time.monotonic() < deadline:
            time.sleep(0.1)
        for entry in survivors:  # leave nothing behind, whatever the verdict of this test
            with contextlib.suppress(OSError):
                os.kill(int(entry.split()[0]), 9)
        return Run(case, proc.returncode, out, err, wall, reports, survivors)


def forged_reports(token: str) -> dict[str, str]:
    """What the library's ``_ol_forge`` writes, by report file name."""
    report = {"format_version": 1, "module": "M07.6", "workspace": token, "target": token,
              "verdict": "pass", "passed": 19, "failed": 0, "duration_s": 0.1, "notes": [],
              "tests": []}
    return {"check.json": json.dumps(report),
            "check.xml": f'<testsuites name="{token}" tests="19" failures="0" errors="0"/>\n',
            "results.json": json.dumps({"score": 19, "max_score": 19, "output": token})}


def _content(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


@pytest.fixture(scope="module")
def suite(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Suite:
    """Runs the selected cases once, together (selected: by ``-k`` or a test id)."""
    proctree.become_subreaper()  # orphans of a check come to us, where the scan sees them
    names = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.module is request.module:
            names.update([callspec.params["case"]] if callspec and "case" in callspec.params
                         else BY_NAME)
    return Suite(tmp_path_factory.mktemp("hostile"), [c.name for c in CASES if c.name in names])


def outcomes(run: Run) -> dict[str, dict]:
    data = json.loads((run.reports / "check.json").read_text())
    return {t["name"]: t for t in data["tests"]}


# -- per case --------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_the_check_ends_with_the_right_outcomes(suite: Suite, case: str) -> None:
    if case in suite.skipped:
        pytest.skip(suite.skipped[case])
    run = suite.runs[case]
    spec = BY_NAME[case]
    context = f"\n--- stdout ---\n{run.stdout[-4000:]}\n--- stderr ---\n{run.stderr[-4000:]}"
    assert run.wall_s < CASE_BOUND_S, f"{case}: {run.wall_s:.1f} s"
    if spec.setup_error:  # refused before any code ran: one line, exit 2, a report of the error
        assert run.returncode == 2, context
        assert re.search(spec.setup_error, run.stderr) and run.stderr.count("\n") == 1, context
        assert sorted(p.name for p in run.reports.iterdir()) == ["check.json", "check.xml",
                                                                  "results.json"], context
        return
    assert run.returncode == (0 if case == "correct" else 1), context
    tests = outcomes(run)
    assert tuple(tests) == selected(spec), "the catalog (or all of NOT_SPECULATIVE) is graded, in order"
    for name, test in tests.items():
        if name in spec.affected:
            assert test["outcome"] in spec.outcomes, (name, test)
            assert re.search(spec.message, test["message"]), (name, test["message"])
        else:
            assert test["outcome"] == "passed", (name, test)
        if test["outcome"] in ("crashed", "timeout"):  # the code's own trouble: never a pitfall
            assert test["pitfall"] is None and test["category"] in ("crashed", "exited",
                                                                     "timeout"), (name, test)
    diagnosis = json.loads((run.reports / "check.json").read_text())["diagnosis"]
    if any(t["outcome"] in ("crashed", "timeout") for t in tests.values()):
        top = diagnosis[0]  # said first, in plain words
        assert top["kind"] in ("crashed", "exited", "timeout") and top["pitfall"] is None, top


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_the_reports_are_the_parents(suite: Suite, case: str) -> None:
    """JSON, JUnit and Gradescope say what the run said, whatever the student wrote."""
    if case in suite.skipped:
        pytest.skip(suite.skipped[case])
    run = suite.runs[case]
    token = suite.token_of(BY_NAME[case])
    if BY_NAME[case].setup_error:  # refused before the run: each report says so, and only that
        data = json.loads((run.reports / "check.json").read_text())
        assert data["verdict"] == "error" and data["tests"] == [] and data["error"], data
        gradescope = json.loads((run.reports / "results.json").read_text())
        assert gradescope["score"] == 0 and gradescope["output"], gradescope
        assert ET.parse(run.reports / "check.xml").getroot().find(".//error") is not None
        for path in run.reports.iterdir():
            assert token not in path.read_text(errors="replace"), path
        return
    spec = BY_NAME[case]
    ran = len(selected(spec))  # the whole catalog, or all but speculative_step's (NOT_SPECULATIVE)
    failing = sum(1 for t in outcomes(run).values() if t["outcome"] != "passed")
    data = json.loads((run.reports / "check.json").read_text())
    verdict = "pass" if case == "correct" else "fail"
    assert (data["verdict"], data["failed"], data["passed"] + data["failed"]) == (
        verdict, failing, ran)
    assert data["not_run"] == len(TESTS) - ran
    junit = ET.parse(run.reports / "check.xml").getroot()
    assert int(junit.get("failures")) + int(junit.get("errors")) == failing
    assert int(junit.get("tests")) == ran
    gradescope = json.loads((run.reports / "results.json").read_text())
    passing = [t for t in gradescope["tests"] if t["status"] == "passed"]
    assert len(passing) == ran - failing and len(gradescope["tests"]) == ran
    assert gradescope["score"] == sum(t["score"] for t in passing) == sum(t["max_score"] for t in passing)
    if spec.k:  # a partial run: out of the module's whole score, its tests' points sum to less
        assert sum(t["max_score"] for t in gradescope["tests"]) == sum(
            data["points"][t] for t in selected(spec))
        assert gradescope["max_score"] == sum(data["points"].values())
    else:
        assert gradescope["max_score"] == sum(t["max_score"] for t in gradescope["tests"])
    for path in run.reports.iterdir():
        assert token not in path.read_text(errors="replace"), path
    if spec.k:  # (a line that long is wrapped: compared with its whitespace joined)
        summary = (f"M07.6: {ran - failing} passed, {failing} failed, {len(TESTS) - ran} not run "
                   f"(-k {shlex.quote(spec.k)}), score {gradescope['score']}/"
                   f"{gradescope['max_score']} (partial run; verdict: {verdict})")
        assert summary in " ".join(run.stdout.split()), run.stdout[-2000:]
    else:
        summary = (f"M07.6: {len(TESTS) - failing} passed, {failing} failed, score "
                   f"{gradescope['score']}/{gradescope['max_score']} (verdict: {verdict})")
        assert summary in run.stdout
    assert "(verdict: pass)" not in run.stdout or case == "correct"
    # What the student printed is shown under its failure, quoted ("| ...", escaped), never as a
    # line of ol's own: a forged pytest summary appears only there.
    own_lines = [line for line in run.stdout.splitlines() if not line.lstrip().startswith("| ")]
    assert not any("19 passed in" in line for line in own_lines), run.stdout
    assert "19 passed in" not in run.stderr


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_no_process_outlives_the_check(suite: Suite, case: str) -> None:
    if case in suite.skipped:
        pytest.skip(suite.skipped[case])
    assert suite.runs[case].survivors == []


# -- the whole suite -------------------------------------------------------------------------------

def test_the_survivor_scan_finds_a_marked_process() -> None:
    """The scan the other tests rely on can fail: it sees a process named like a hostile one."""
    token = f"olhx{secrets.token_hex(3)}zz"
    code = (f"import ctypes, time; ctypes.CDLL(None).prctl(15, {token.encode()!r}, 0, 0, 0); "
            "print(flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        proc.stdout.readline()
        assert [entry.split()[0] for entry in marked(token)] == [str(proc.pid)]
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert marked(token) == []


def test_nothing_of_the_harness_changed(suite: Suite) -> None:
    changed = sorted(k for k in set(suite.before) | set(suite.after)
                     if suite.before.get(k) != suite.after.get(k))
    assert changed == []
    dirs = [*suite.plant, *(str(suite.root / "ws" / c) for c in suite.runs),
            *(str(suite.root / "ws" / c / "python") for c in suite.runs),
            *(str(suite.root / "reports" / c) for c in suite.runs)]
    planted = sorted({p for d in dirs for p in Path(d).glob(f"ol-planted-olhx{suite.token}*")})
    for path in planted:
        path.unlink()
    assert planted == []


def test_no_forged_file_anywhere(suite: Suite) -> None:
    for path in suite.forged:
        assert _content(path) == suite.forged_before[path], path
    for case in suite.runs.values():
        ws = suite.root / "ws" / case.case.name
        assert not (ws / "results.json").exists()
        assert not (ws.parent / "results.json").exists()
        assert not (ws / ".ol").exists() or case.case.name == "correct"


def test_no_temporary_directory_is_left(suite: Suite) -> None:
    """The workers' directories (where the forged results.json went) and the copies of the
    workspaces are gone. The session's own temporary directory (tests/conftest.py), listed, never
    walked: a hostile tree may be thousands of levels deep."""
    left = [e.name for e in os.scandir(tempfile.gettempdir())
            if e.name.startswith(("ol-worker-", "ol-ws-"))]
    assert left == []


def test_no_orphan_came_back_to_this_process(suite: Suite) -> None:
    assert suite.children_after == set()


def test_the_suite_is_bounded_in_time(suite: Suite) -> None:
    print(f"\n{len(suite.runs)} hostile checks in {suite.total_s:.1f} s, {JOBS} at once:")
    for run in suite.runs.values():
        print(f"  {run.case.name:<38} {run.wall_s:6.1f} s")
    assert suite.total_s < SUITE_BOUND_S
