"""Issue #24, as an independent attacker: what the student's code can see, who it runs as, and
what it can fill.

The claims under test (issue #24): the student's code (``ol check``, every grading slot's worker,
and the student's own tests under ``ol tests --mine``) runs

1. in a root of its own holding only the Python installation and packages (read-only), the staged
   copy of the workspace (read-only), a private writable run folder, a ``/proc`` of its own PID
   namespace, ``/dev/null``, ``/dev/zero`` and ``/dev/urandom``: nothing of ol's checkout
   (``reference/``, ``mutants/``, ``harness/own_tests/alternatives``, ``harness/catalogs``,
   gradebooks), of other submissions, of ``/root``, ``/home``, or of ``/etc`` beyond what Python
   needs;
2. as a uid and gid that own nothing on the host (nobody, 65534) with no capabilities, also when
   ol runs as root;
3. with its disk metered by the run folder, a tmpfs capped at 64 MiB (a full disk is the
   submission's own failure; another submission graded at the same time is unaffected), and its
   tasks by a pids cgroup.

Every test builds a hostile workspace (or ``--mine`` suite) in its own temporary folder: a copy of
``reference/python`` whose ``rejection.py`` carries the attacker's toolbox
(``tests/hostile/view_attacks/olsnoop.py``, embedded compressed as the module ``_olv``, since a
check imports no other file of a workspace: the routes to ol's checkout, the ways to read a file,
the probes) and replaces one function or all of them. A ``--mine`` suite gets the toolbox as a
module beside its test file. The test runs ol end to end as a subprocess (``python -m harness``,
from the checkout, with a private ``TMPDIR``), and asserts the *secure* outcome. A probe reports
what it found by raising ``RuntimeError("OLVIEW{json}OLVIEW")``; the test reads that back from
ol's own ``--json`` report, so the only channel the student has is the one being judged. Where
the sandbox holds, a test passes; every test can fail (each asserts a fact that is false without
the claimed isolation, and fails, not passes, when its probe did not report at all).

Bounded: ``--timeout 3`` for every check, every ol command killed past ``RUN_BOUND_S``; the whole
file takes about two to three minutes on 2 cores. What needs root (a secret under ``/root``, the
host view of a process's uid, cgroups) is skipped with a reason when not root. Longer than 400
lines: the attacks are kept beside the assertions that judge them.
"""

from __future__ import annotations

import array
import base64
import contextlib
import csv
import ctypes
import fcntl
import glob
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import stat
import sys
import textwrap
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from olrun import Ol

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "view_attacks"
SNOOP = DATA / "olsnoop.py"
ROOT = os.geteuid() == 0
NOBODY = 65534
MIB = 1 << 20
RUN_FOLDER_CAP = 64 * MIB  # issue #24's default
CAP_SLACK = 2 * MIB  # a tmpfs's own metadata, rounding to pages
TIMEOUT = "3"  # --timeout of every check: a hanging call costs this much
RUN_BOUND_S = 150.0  # any one ol command here takes seconds; past this it is killed (and fails)
TESTS = 20  # M07.6's catalog

MARK = "reference/python/tinyllm/prob/rejection.py"
ALTERNATIVES = ("harness/own_tests/alternatives/m07_6/rejection_loops.py",
                "harness/own_tests/alternatives/m07_6/rejection_vectorized.py")
CATALOG = "harness/catalogs/m07_6/test_catalog.py"
SIGNATURES = {
    "rejection_accept": "p_x, q_x, u",
    "acceptance_probability": "p, q",
    "residual_distribution": "p, q",
    "speculative_step": "p, q, x, u_accept, u_resample",
    "rejection_sample": "p, q, m, rng, max_tries=10000",
}
ROUTES = ("argv", "cmdline", "proc_links", "mountinfo", "environ", "sys_path", "module_files",
          "walk_up", "guess", "fds")
OLVIEW = re.compile(r"OLVIEW(\{.*?\})OLVIEW", re.S)

pytestmark = pytest.mark.slow
needs_root = pytest.mark.skipif(not ROOT, reason="needs root: ol as root is the case of issue #24 "
                                "(its uid 0 must not reach the student), and the host's view of "
                                "another process")


# -- building hostile workspaces -----------------------------------------------------------------

def tok(prefix: str = "olv") -> str:
    """A fresh token: at most 15 characters, so it also fits a task's name (PR_SET_NAME)."""
    return prefix + secrets.token_hex(4)


def toolbox() -> str:
    """Code that makes ``_olv``, a module built from olsnoop.py's source, embedded compressed in
    rejection.py itself: a check imports no other file of the workspace (issue #24, item 4)."""
    blob = base64.b64encode(zlib.compress(SNOOP.read_bytes(), 9)).decode()
    chunks = "\n".join(f"    {line!r}," for line in textwrap.wrap(blob, 96))
    return ("\n\nimport base64 as _olv_base64\nimport types as _olv_types\nimport zlib as _olv_zlib\n\n"
            "_olv = _olv_types.ModuleType('olsnoop')\n_olv.__file__ = __file__\n"
            "exec(compile(_olv_zlib.decompress(_olv_base64.b64decode(''.join([\n"
            f"{chunks}\n]))), 'olsnoop', 'exec'), _olv.__dict__)\n")


def workspace(folder: Path, source: str | None = None, append: str = "") -> Path:
    """A copy of the reference workspace whose rejection.py is ``source`` (default: the
    reference's), then the toolbox (``_olv``), then ``append`` (a later ``def`` replaces the
    reference's function)."""
    shutil.copytree(REPO_ROOT / "reference" / "python", folder / "python",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    module = folder / "python" / "tinyllm" / "prob" / "rejection.py"
    text = module.read_text() if source is None else source
    module.write_text(text + toolbox() + "\n" + textwrap.dedent(append))
    return folder


def probe(name: str, config: dict, function: str = "rejection_accept", hold_s: float = 0.0) -> str:
    """Code appended to the reference: the first call of ``function`` in a worker runs
    ``olsnoop.NAME(config)`` and waits ``hold_s`` (so the test can look at the process from the
    host); every call raises what it found."""
    return f'''

import json as _olv_json
import time as _olv_time

_OLV_CONFIG = _olv_json.loads({json.dumps(config)!r})
_OLV_FOUND = []


def {function}({SIGNATURES[function]}):
    if not _OLV_FOUND:
        _olv.name_process(_OLV_CONFIG["token"])
        _OLV_FOUND.append(_olv.{name}(_OLV_CONFIG))
        _olv_time.sleep({hold_s!r})
    _olv.report(_OLV_FOUND[0])
'''


DELEGATE_DOC = '''"""Implements nothing: finds ol's checkout and forwards every call to a correct
implementation found there (tests/hostile/test_view_attacks.py)."""
'''
DELEGATE = '''
import json as _json

_FOUND, _TEXT, _TRIED = _olv.find_correct({routes!r})
_IMPL = _olv.load_source(_TEXT, "tinyllm.prob._olv_found") if _FOUND else None


def _impl():
    if _IMPL is None:
        raise RuntimeError("OLVIEW-NOT-FOUND " + _json.dumps(_TRIED, sort_keys=True))
    return _IMPL


def rejection_accept(p_x, q_x, u):
    return _impl().rejection_accept(p_x, q_x, u)


def acceptance_probability(p, q):
    return _impl().acceptance_probability(p, q)


def residual_distribution(p, q):
    return _impl().residual_distribution(p, q)


def speculative_step(p, q, x, u_accept, u_resample):
    return _impl().speculative_step(p, q, x, u_accept, u_resample)


def rejection_sample(p, q, m, rng, max_tries=10000):
    return _impl().rejection_sample(p, q, m, rng, max_tries)
'''


# -- running ol ----------------------------------------------------------------------------------

def ol(tmp: Path, *args: str, watch: Callable[[], object] | None = None,
       bound: float = RUN_BOUND_S) -> Ol:
    """``ol ARGS`` from the checkout with a TMPDIR of its own under ``tmp``; ``watch`` is called
    every 50 ms while it runs (from the host: what the sandbox cannot fake) and what it returns
    is kept (``samples``)."""
    return Ol(tmp, *args, watch=watch).wait(bound)


def check(tmp_path: Path, ws: Path, *extra: str, watch=None, bound: float = RUN_BOUND_S) -> tuple[Ol, dict]:
    """``ol check M07.6 --workspace WS --ref-deps --timeout 3 --json F``, and the report."""
    report = tmp_path / f"check-{secrets.token_hex(3)}.json"
    run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws), "--ref-deps",
             "--timeout", TIMEOUT, "--no-diagnosis", "--json", str(report), *extra, watch=watch,
             bound=bound)
    assert run.wall_s < bound, f"ol check ran past {bound} s and was killed\n{run.text[-3000:]}"
    data = json.loads(report.read_text()) if report.exists() else {}
    return run, data


def grade(tmp_path: Path, subs: Path, *extra: str, watch=None, out: Path | None = None
          ) -> tuple[Ol, Path]:
    out = out or tmp_path / f"gradebook-{secrets.token_hex(3)}"
    run = ol(tmp_path, "grade", "M07.6", str(subs), "--out", str(out), "--timeout",
             TIMEOUT, "--ref-deps", *extra, watch=watch)
    assert run.wall_s < RUN_BOUND_S, f"ol grade ran past {RUN_BOUND_S} s\n{run.text[-3000:]}"
    assert run.rc == 0, f"ol grade failed as a run (exit {run.rc})\n{run.text[-3000:]}"
    return run, out


def rows(out: Path) -> dict[str, dict]:
    book = json.loads((out / "gradebook.json").read_text())
    return {row["submission"]: row for row in book["submissions"]}


def run_file(out: Path, name: str) -> dict:
    return json.loads((out / "runs" / f"{name}.json").read_text())


def messages(report: dict) -> list[str]:
    """Every failure message and captured output of an ``ol check --json`` report (or a run file
    of a gradebook)."""
    texts = []
    for test in report.get("tests", []):
        texts += [test.get("message") or "", test.get("output") or ""]
    return texts


def found(texts: list[str], what: str) -> dict:
    """The first probe report in ``texts``; fails (never passes) when no probe reported."""
    for text in texts:
        for match in OLVIEW.findall(text or ""):
            return json.loads(match)
    raise AssertionError(f"the {what} probe never reported (did its call run?):\n"
                         + "\n".join(t[:600] for t in texts if t)[:3000])


def all_text(*paths: Path) -> str:
    """The contents of files and of every file below folders, as text."""
    chunks = []
    for path in paths:
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        chunks += [p.read_text(errors="replace") for p in files]
    return "\n".join(chunks)


def digests() -> dict[str, str]:
    """sha256 of the files of the checkout a student must not read, by path."""
    paths = [REPO_ROOT / MARK, REPO_ROOT / CATALOG, *(REPO_ROOT / a for a in ALTERNATIVES),
             *sorted((REPO_ROOT / "mutants" / "M07.6").glob("*.toml"))[:8]]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


# -- the host's view of a process ----------------------------------------------------------------

def tasks_named(name: str) -> list[tuple[int, int]]:
    """(pid, tid) of every task named ``name``, threads included, in the host's /proc."""
    found_tasks = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    if f.read().strip() == name:
                        found_tasks.append((int(pid), int(tid)))
            except OSError:
                continue
    return found_tasks


def processes_named(name: str) -> list[int]:
    return sorted({pid for pid, _ in tasks_named(name)})


def host_status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as f:
        return {line.split(":")[0]: line.split(":", 1)[1].strip() for line in f}


# -- what must not be in view --------------------------------------------------------------------

def _anchors(under: Path) -> set[str]:
    """The entries of ``under`` that hold the Python installation (they may be in view)."""
    names = set()
    for path in (sys.base_prefix, sys.prefix, os.path.realpath(sys.executable),
                 os.path.dirname(os.__file__), os.path.dirname(pytest.__file__)):
        real = Path(os.path.realpath(path))
        for p in (Path(path), real):
            with contextlib.suppress(ValueError):
                names.add(p.relative_to(under).parts[0])
    return names


def _entries(folder: Path) -> list[Path]:
    try:
        return [folder / n for n in sorted(os.listdir(folder))]
    except OSError:
        return []


def out_of_view(*extra: Path) -> list[str]:
    """Host paths the student's code must not see: the checkout (but the Python installation,
    and the harness's own runtime modules, which the worker may need: never its catalogs or its
    hidden implementations), ``/root`` and ``/home`` (but the Python installation), the parts of
    ``/etc`` no Python needs, the top-level folders no Python needs, and ``extra``."""
    paths = [p for p in _entries(REPO_ROOT) if p.name not in _anchors(REPO_ROOT) | {"harness"}]
    paths += [REPO_ROOT / MARK, REPO_ROOT / CATALOG, *(REPO_ROOT / a for a in ALTERNATIVES),
              REPO_ROOT / "mutants" / "M07.6" / "s01.toml", REPO_ROOT / "harness" / "catalogs",
              REPO_ROOT / "harness" / "own_tests" / "alternatives"]
    for home in (Path("/root"), Path("/home")):
        paths += [p for p in _entries(home) if p.name not in _anchors(home)]
    paths += [Path(p) for p in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh",
                                "/etc/hostname", "/etc/machine-id", "/etc/crontab", "/etc/apt",
                                "/etc/environment", "/etc/profile")]
    python = {Path(os.path.realpath(p)).parts[1] for p in (sys.base_prefix, sys.prefix)}
    paths += [Path(p) for p in ("/boot", "/media", "/mnt", "/opt", "/srv", "/var", "/sys",
                                "/snap", "/lost+found") if p.strip("/") not in python]
    paths += list(extra)
    return sorted({str(p) for p in paths if os.path.lexists(p)})


def view_config(token: str, *folders: Path) -> dict:
    """The probes' configuration; ``folders`` (the workspace, the test's and the session's
    temporary folders) each get a marker file that must be out of view (the folders themselves
    may be ancestors of what is mounted in view, as empty directories)."""
    markers = []
    for folder in folders:
        marker = folder / f"olview-marker-{token}.txt"
        marker.write_text("a file of the host\n")
        markers.append(marker)
    return {"token": token, "absent": out_of_view(*markers),
            "rels": [MARK, CATALOG, *ALTERNATIVES, "mutants/M07.6/*.toml"]}


# == 1. delegating to the reference ===============================================================

NOTHING = "".join(f"\n\ndef {name}({params}):\n    raise RuntimeError('implements nothing')\n"
                  for name, params in SIGNATURES.items())


@pytest.fixture(scope="module")
def nothing_passes(tmp_path_factory) -> set[str]:
    """The tests a workspace that implements nothing (every function raises) passes: what a
    delegating workspace may pass when it finds nothing."""
    tmp = tmp_path_factory.mktemp("nothing")
    _, data = check(tmp, workspace(tmp / "ws", '"""Implements nothing."""\n', NOTHING))
    assert data.get("verdict") == "fail", data
    return passed_tests(data)


def passed_tests(report: dict) -> set[str]:
    return {t["name"] for t in report.get("tests", []) if t["outcome"] == "passed"}


@pytest.mark.parametrize("route", ROUTES)
def test_a_workspace_that_finds_the_reference_by_one_route_does_not_pass(tmp_path, route,
                                                                          nothing_passes):
    """rejection.py implements nothing: it finds ol's checkout by one route (argv, the command
    lines in /proc, the magic links of /proc/PID, mountinfo, the environment, sys.path and the
    .pth/editable files of site-packages, ``__file__`` of anything and every frame's file,
    walking up from the folders it is in, guessed places, open descriptors) and forwards every
    call to the reference or a hidden alternative found there. It must pass no more than a
    workspace that implements nothing."""
    ws = workspace(tmp_path / f"ws-{tok()}", DELEGATE_DOC, DELEGATE.format(routes=[route]))
    # Only the two hand-example tests: the route is tried once, at the import (every call of
    # the check forwards to what it found), so the catalog only judges what was found. Any
    # correct implementation passes these two (they call every function but rejection_sample)
    # and the workspace that implements nothing fails both, so a found implementation shows
    # as extra passes here as in the whole catalog (the every-route tests below run all of it).
    run, data = check(tmp_path, ws, "-k", "hand_example")
    ran = {t["name"] for t in data.get("tests", [])}
    assert len(ran) == 2 and not ran & nothing_passes, (ran, nothing_passes)
    extra = passed_tests(data) - nothing_passes
    assert run.rc == 1 and not extra, (
        f"route {route}: the workspace that only forwards to ol's own code passed "
        f"{data.get('passed')} of the {len(ran)} tests run (exit {run.rc}): a correct "
        "implementation was readable")
    assert any("OLVIEW-NOT-FOUND" in m for m in messages(data)), run.text[-3000:]


@pytest.mark.parametrize("how", ["check", "check --seed 7", "grade"])
def test_a_workspace_that_tries_every_route_does_not_pass(tmp_path, how, nothing_passes):
    """The same workspace with every route at once, on the public cases, on hidden ones and
    graded: it must pass no more than a workspace that implements nothing."""
    ws = workspace(tmp_path / "subs" / f"ws-{tok()}", DELEGATE_DOC, DELEGATE.format(routes=list(ROUTES)))
    if how == "grade":
        _, out = grade(tmp_path, tmp_path / "subs")
        row = rows(out)[ws.name]
        extra = {name for name, outcome in row["tests"].items() if outcome == "passed"} - nothing_passes
        assert row["verdict"] == "fail" and not extra, (
            f"graded {row['verdict']} with {row['passed']} passed: ol's checkout was readable")
        return
    run, data = check(tmp_path, ws, *how.split()[1:])
    extra = passed_tests(data) - nothing_passes
    assert run.rc == 1 and not extra, (
        f"{how}: passed {data.get('passed')} of {TESTS} (exit {run.rc}): ol's checkout was "
        "readable")


# == 2. a root-owned 0600 secret ==================================================================

@pytest.fixture
def secret_files(tmp_path):
    """A 0600 file with a random token in a 0700 folder of the test's TMPDIR and, as root, one
    under /root (removed afterwards); with what a handle-forging attack would need (ext4 inode
    and generation)."""
    token = "OLVSECRET" + secrets.token_hex(8)
    folders = [tmp_path / f"vault-{secrets.token_hex(3)}"]
    if ROOT:
        folders.append(Path("/root") / f"olview-secret-{secrets.token_hex(4)}")
    paths, handles = [], {}
    try:
        for folder in folders:
            folder.mkdir(mode=0o700)
            path = folder / "secret.txt"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, f"{token}\n".encode())
            os.close(fd)
            paths.append(str(path))
            with contextlib.suppress(OSError), open(path, "rb") as f:
                generation = array.array("l", [0])
                fcntl.ioctl(f.fileno(), 0x80087601, generation, True)  # FS_IOC_GETVERSION
                handles[str(path)] = [os.stat(path).st_ino, generation[0] & 0xFFFFFFFF]
        before = {p: (os.stat(p).st_mode, os.stat(p).st_uid, Path(p).read_text()) for p in paths}
        yield token, paths, handles
        after = {p: (os.stat(p).st_mode, os.stat(p).st_uid, Path(p).read_text()) for p in paths}
        assert after == before, "the student's code changed the secret file's mode, owner or text"
    finally:
        for folder in folders[1:]:
            shutil.rmtree(folder, ignore_errors=True)


SECRET = '''

_OLV_GOT = _olv.read_secret({paths!r}, {handles!r})


def rejection_accept(p_x, q_x, u):
    _olv.report(_OLV_GOT)
'''


def test_a_secret_file_cannot_be_read_in_a_check(tmp_path, secret_files):
    token, paths, handles = secret_files
    ws = workspace(tmp_path / f"ws-{tok()}", append=SECRET.format(paths=paths, handles=handles))
    junit = tmp_path / "check.xml"
    run, data = check(tmp_path, ws, "-k", "test_hand_example", "--junit", str(junit))
    got = found(messages(data), "secret")
    everything = run.text + json.dumps(data) + junit.read_text()
    assert token not in everything, f"the secret was read, by: {sorted(got['read'])}"
    assert got["read"] == {}, f"read something from the secret's path: {got['read']}"


def test_a_secret_file_cannot_be_read_in_a_grade(tmp_path, secret_files):
    token, paths, handles = secret_files
    workspace(tmp_path / "subs" / "mallory", append=SECRET.format(paths=paths, handles=handles))
    run, out = grade(tmp_path, tmp_path / "subs")
    got = found(messages(run_file(out, "mallory")), "secret")
    assert token not in run.text + all_text(out), f"the secret was read, by: {sorted(got['read'])}"


# == 3. what is in view ===========================================================================

@pytest.fixture(scope="module")
def check_view(tmp_path_factory) -> dict:
    """The view probe under ``ol check``, once for the module."""
    tmp = tmp_path_factory.mktemp("view-check")
    token = tok()
    ws = workspace(tmp / f"ws-{token}")
    config = view_config(token, ws, tmp, Path(os.environ.get("TMPDIR", "/tmp")))
    rejection = ws / "python" / "tinyllm" / "prob" / "rejection.py"
    rejection.write_text(rejection.read_text() + probe("view", config))
    _, data = check(tmp, ws, "-k", "test_hand_example")
    return found(messages(data), "view")


def view_of(request, where: str) -> dict:
    if where == "check":
        return request.getfixturevalue("check_view")
    return request.getfixturevalue("mine_probes")["view"]


WHERE = ["check", "mine"]


@pytest.mark.parametrize("where", WHERE)
def test_nothing_of_the_checkout_root_home_or_etc_is_in_view(request, where):
    report = view_of(request, where)
    assert report["visible_count"] == 0, (
        f"{report['visible_count']} host paths in view, e.g. {report['visible']}")


HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full")


@pytest.mark.parametrize("where", WHERE)
def test_no_device_but_null_zero_and_random_is_in_view(request, where):
    """Issue #24 names /dev/null, /dev/zero and /dev/urandom; /dev/random and /dev/full are as
    harmless. Nothing that reaches hardware or the kernel (a disk, a tty, kmsg, kvm, fuse, loop)."""
    report = view_of(request, where)
    extra = [d for d in report["devices"] if d not in HARMLESS_DEVICES]
    assert report["device_count"] <= len(HARMLESS_DEVICES) and extra == [], (
        f"{report['device_count']} devices: {extra}")


@pytest.mark.parametrize("where", WHERE)
def test_nothing_is_writable_but_the_run_folder(request, where):
    report = view_of(request, where)
    assert report["writable"] == [], f"writable outside the run folder: {report['writable']}"
    run_folder = report["run_folder"]
    assert run_folder["writable"] and run_folder["tempfile"], (
        f"the run folder must stay writable (tempfile works for honest code): {run_folder}")


@pytest.mark.parametrize("where", WHERE)
def test_the_run_folder_is_a_capped_tmpfs(request, where):
    run_folder = view_of(request, where)["run_folder"]
    assert run_folder["fstype"] == "tmpfs", f"the run folder is on {run_folder}"
    assert run_folder["size"] <= RUN_FOLDER_CAP + CAP_SLACK, (
        f"the run folder's file system holds {run_folder['size'] / MIB:.0f} MiB: {run_folder}")


@pytest.mark.parametrize("where", WHERE)
def test_proc_is_of_its_own_pid_namespace(request, where):
    report = view_of(request, where)
    assert report["proc"]["pid_ns"] != os.readlink("/proc/self/ns/pid"), "the host's PID namespace"
    assert report["proc"]["ol_visible"] == [], f"ol's own processes in view: {report['proc']}"


# == 4. ol tests --mine ===========================================================================

def mine(tmp: Path, suite_files: dict[str, str]) -> tuple[Ol, dict]:
    suite = tmp / f"suite-{tok()}"
    suite.mkdir()
    for name, text in suite_files.items():
        (suite / name).write_text(text)
    report = tmp / f"mine-{secrets.token_hex(3)}.json"
    run = ol(tmp, "tests", "M07.6", "--mine", str(suite), "--json", str(report),
             "--jobs", "2")
    assert run.wall_s < RUN_BOUND_S, f"ol tests --mine ran past {RUN_BOUND_S} s"
    assert report.exists(), f"no --mine report (exit {run.rc})\n{run.text[-3000:]}"
    return run, json.loads(report.read_text())


def mine_probe(tmp: Path, token: str) -> dict:
    """The probe suite under ``ol tests --mine``: each probe's report from the first run on a
    correct implementation (``view``, ``exfiltrate``, ``identity``, ``cross_run``), those of every
    such run (``NAME_all``), and the run itself (``run``, ``data``).

    The cheating suite's test (``mine_cheat.py``) is a second file of the same suite: a run of
    ``--mine`` costs about 0.3 CPU s per implementation (71) whatever its suite holds, and both
    tests fail on correct code, so each runs on every implementation either way; one run instead
    of two saves about 22 CPU s. ol judges each test on its own (a mutant is caught only by a test
    that passed on every correct implementation), and the cheating test is judged by its own entry
    of the report (``test_a_mine_suite_that_only_compares_with_ol_s_files_catches_nothing``)."""
    config = view_config(token, tmp, Path(os.environ.get("TMPDIR", "/tmp")))
    run, data = mine(tmp, {"test_probe.py": (DATA / "mine_probe.py").read_text(),
                           "test_cheat.py": (DATA / "mine_cheat.py").read_text(),
                           "olsnoop.py": SNOOP.read_text(),
                           "olv_config.py": f"import json\nCONFIG = json.loads({json.dumps(config)!r})\n"})
    by_test: dict[str, list[str]] = {}
    for correct in data.get("correct", []):
        for test_id, text in (correct.get("messages") or {}).items():
            by_test.setdefault(test_id.rsplit("::", 1)[-1], []).append(text)
    probes = [json.loads(m) for t in by_test.get("test_probe", []) for m in OLVIEW.findall(t)]
    assert probes, f"the --mine probes never reported:\n{json.dumps(by_test)[:3000]}"
    reports = {"run": run, "data": data}
    for name in ("view", "exfiltrate", "identity", "cross_run"):
        assert name in probes[0], f"the --mine report was cut: {probes[0]}"
        reports[name] = probes[0][name]
        reports[name + "_all"] = [p[name] for p in probes if name in p]
    return reports


@pytest.fixture(scope="module")
def mine_probes(tmp_path_factory) -> dict:
    token = tok()
    reports = mine_probe(tmp_path_factory.mktemp("mine-probe"), token)
    reports["left"] = leftovers(token, reports["run"].tmp)
    return reports


CHEAT = "test_cheat.py::test_the_implementation_is_one_ol_knows_to_be_correct"


def test_a_mine_suite_that_only_compares_with_ol_s_files_catches_nothing(mine_probes):
    """The suite's test reads the reference and the hidden alternatives from ol's checkout
    (any route) and passes exactly when the implementation under test has their bytecode: with
    the checkout in reach it "catches" every mutant; without, it fails on correct code.

    It runs in the probe suite's ``--mine`` run (``mine_probe``), beside the probe test, which
    fails everywhere and so is never trusted and catches nothing: the score is this test's alone,
    and WRONG is asked of this test by name."""
    run, data = mine_probes["run"], mine_probes["data"]
    assert data["score"] == 0, (
        f"a suite that reads ol's checkout instead of testing behaviour scored {data['score']} of "
        f"{data['max_score']}\n{run.out[:1500]}")
    cheat = [t for t in data["tests"] if t["test"].endswith(CHEAT)]
    assert len(cheat) == 1 and not cheat[0]["trusted"] and cheat[0]["catches"] == [], cheat
    wrong = [t["test"] for t in data.get("wrong_tests", [])]
    assert data["verdict"] != "pass" and (any(t.endswith(CHEAT) for t in wrong)
                                          or not data["runs_on_correct"]), (
        f"the cheating test must be WRONG (it fails on correct code without ol's files): {wrong}")
    assert run.rc == 1


def test_a_mine_suite_whose_runs_compare_notes_catches_nothing(tmp_path):
    """The suite reads nothing of ol and tests no behaviour: each run writes the bytecode of the
    implementation under test wherever it can write, reads the notes of earlier runs, and fails
    when its implementation is one or two functions away from the majority (a mutant of the
    reference). With a folder, or IPC, shared between the runs, this "catches" most mutants;
    with private run folders it sees no note and never fails."""
    run, data = mine(tmp_path, {"test_notes.py": (DATA / "mine_notes.py").read_text()})
    left = [p for folder in ("/tmp", "/var/tmp", "/dev/shm") for p in glob.glob(f"{folder}/olview-note-*")]
    for path in left:
        with contextlib.suppress(OSError):
            os.unlink(path)
    assert left == [], f"notes left on the host: {left[:4]}"
    assert data["score"] == 0, (
        f"a suite whose runs compare notes scored {data['score']} of {data['max_score']}: the "
        f"runs on different implementations share somewhere to write\n{run.out[:800]}")


def test_a_mine_suite_cannot_exfiltrate_ol_s_files(mine_probes):
    report = mine_probes["exfiltrate"]
    run, data = mine_probes["run"], mine_probes["data"]
    failures = [t for c in data.get("correct", []) for t in (c.get("messages") or {}).values()]
    text = "\n".join([run.text, json.dumps(data), *failures])
    leaked = [path for path, digest in digests().items() if digest in text]
    for rel in (MARK, *ALTERNATIVES):  # their first lines, raw or as the probe quotes them
        head = (REPO_ROOT / rel).read_text()[:36]  # what survives the probe's compaction
        leaked += [rel] if json.dumps(head)[1:-1] in text or head in text else []
    assert report.get("root") is None and leaked == [], (
        f"ol's checkout found at {report.get('root')} by {report.get('route')}; read: "
        f"{leaked or list(report.get('files', {}))}")


def test_a_mine_suite_runs_as_nobody_without_capabilities(mine_probes):
    assert_no_privilege(mine_probes["identity"])


def test_a_mine_run_leaves_nothing_for_the_next(mine_probes):
    """Each run (one per implementation) first looks for what earlier runs left (files in every
    writable folder and its siblings' run folders, SysV shared memory, POSIX queues, abstract
    sockets), then leaves its own: a later run must find nothing, or a suite could tell the
    correct implementations apart from the bugs by comparing notes."""
    seen = [f for report in mine_probes["cross_run_all"] for f in report["found"]]
    assert seen == [], f"a run found what an earlier run left: {seen[:6]}"
    assert mine_probes["left"] == [], f"left after ol tests --mine: {mine_probes['left'][:6]}"


# == 5. uid and capabilities ======================================================================

def assert_no_privilege(report: dict) -> None:
    """The probe's own view: its ids map to nobody on the host, no capability, nothing
    privileged succeeded."""
    status = report["status"]
    uid_map = report["uid_map"].split()
    inside = report["resuid"][0]
    host_uid = None
    for i in range(0, len(uid_map) - 2, 3):
        start, outside, count = map(int, uid_map[i:i + 3])
        if start <= inside < start + count:
            host_uid = outside + inside - start
    assert host_uid == NOBODY, f"uid {inside} inside is uid {host_uid} on the host (uid_map {uid_map})"
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status.get(cap, "1"), 16) == 0, f"{cap} = {status.get(cap)}"
    assert report["did"] == {}, f"privileged acts that succeeded: {sorted(report['did'])}"


@needs_root
def test_the_code_runs_as_nobody_with_no_capability_when_ol_runs_as_root(tmp_path):
    """ol runs as root. From the host, the code's process has uid and gid 65534 (real, effective,
    saved, fs), no supplementary group and no capability, and a file it makes belongs to nobody;
    from inside, its uid maps to 65534 and every privileged act fails (setuid/setgid/setgroups
    to 0, chown, mount, a nested user or mount namespace, chroot, mknod, nice, raising a hard
    limit, a port below 1024, sethostname, tracing a process outside)."""
    token = tok()
    ws = workspace(tmp_path / f"ws-{token}", append=probe("identity", {"token": token},
                                                          hold_s=1.5))

    def look():
        for pid in processes_named(token):
            status = host_status(pid)
            owner = None
            with contextlib.suppress(OSError):
                st = os.stat(f"/proc/{pid}/cwd/olview-owned-{token}")
                owner = (st.st_uid, st.st_gid)
            return {"status": status, "owner": owner}
        return None

    run, data = check(tmp_path, ws, "-k", "test_hand_example", watch=look)
    assert run.samples, "the probe was never seen from the host"
    host = run.samples[-1]
    uids = [int(x) for x in host["status"]["Uid"].split()]
    gids = [int(x) for x in host["status"]["Gid"].split()]
    assert uids == [NOBODY] * 4 and gids == [NOBODY] * 4, (
        f"as seen from the host the code runs as uid {uids}, gid {gids}")
    assert host["status"].get("Groups", "") in ("", str(NOBODY)), host["status"].get("Groups")
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(host["status"][cap], 16) == 0, f"{cap} = {host['status'][cap]} (host view)"
    owners = [s["owner"] for s in run.samples if s["owner"]]
    assert owners and owners[-1] == (NOBODY, NOBODY), f"a file it makes is owned by {owners[-1:]}"
    assert_no_privilege(found(messages(data), "identity"))


# == 6. tasks ==================================================================================

@needs_root
def test_a_fork_and_thread_bomb_is_bounded_and_nothing_survives(tmp_path):
    """A bounded bomb (16 children, each 16 more, 8 threads each; SIGTERM ignored, some in new
    sessions) seen from the host: never more than 64 tasks at once (the pids cgroup), the check
    ends within its time-out, no process of it survives."""
    token = tok()
    ws = workspace(tmp_path / f"ws-{token}", append=f'''

def rejection_accept(p_x, q_x, u):
    _olv.bomb({token!r})
''')
    run, data = check(tmp_path, ws, "-k", "test_hand_example",
                      watch=lambda: len(tasks_named(token)), bound=90)
    peak = max(run.samples, default=0)
    assert peak > 0, "the bomb was never seen from the host"
    assert peak <= 64, f"{peak} tasks of the bomb at once: the pids cgroup caps the tree at 64"
    assert run.wall_s < 45 and run.rc == 1, f"exit {run.rc} after {run.wall_s:.0f} s"
    outcome = {t["name"]: t["outcome"] for t in data["tests"]}
    assert outcome["test_hand_example"] in ("timeout", "crashed"), outcome
    deadline = time.monotonic() + 3
    while (alive := processes_named(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in alive:
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    assert alive == [], f"{len(alive)} processes of the bomb outlived the check"
    assert [e for e in os.listdir(run.tmp) if e.startswith("ol-")] == []


# == 7. the disk ==================================================================================

FILLER = '''

import json as _olv_json
import time as _olv_time

_OLV_FILLED = _olv.fill({token!r})
_OLV_SLEPT = set()


def _olv_hold(name):
    if name not in _OLV_SLEPT:  # the first call of each function: the disk stays full meanwhile
        _OLV_SLEPT.add(name)
        _olv_time.sleep(1.0)
    _olv.report(_OLV_FILLED)


def rejection_accept(p_x, q_x, u):
    _olv_hold("rejection_accept")


def acceptance_probability(p, q):
    _olv_hold("acceptance_probability")


def residual_distribution(p, q):
    _olv_hold("residual_distribution")
'''

HONEST = '''

import time as _olv_time

# {needle}
_olv_time.sleep({sleep_s!r})  # graded while the other submission does its worst
'''


def honest(folder: Path, needle: str, sleep_s: float = 1.5) -> Path:
    return workspace(folder, append=HONEST.format(needle=needle, sleep_s=sleep_s))


def test_filling_the_disk_fails_only_the_filler(tmp_path):
    """One submission writes files everywhere it can until the disk is full, and keeps them
    while it runs; the honest one graded beside it (``--jobs 2``) must pass, the filler's files
    must have gone to a capped file system of its own, and nothing may be left afterwards."""
    token = tok()
    subs = tmp_path / "subs"
    honest(subs / "alice", tok("olvalice"))
    workspace(subs / "filler", append=FILLER.format(token=token))
    tmp_dev = os.stat(tmp_path).st_dev
    run, out = grade(tmp_path, subs, "--jobs", "2")
    book = rows(out)
    assert (book["alice"]["verdict"], book["alice"]["passed"]) == ("pass", TESTS), (
        f"the honest submission beside the filler: {book['alice']['verdict']}, "
        f"{book['alice'].get('message', '')[:500]}")
    filled = found(messages(run_file(out, "filler")), "filler")
    assert filled["total"] <= RUN_FOLDER_CAP + CAP_SLACK, (
        f"the filler wrote {filled['total'] / MIB:.0f} MiB in all: {filled['folders']}")
    stops = [stop for _, stop in filled["folders"].values()]
    assert any(s in ("ENOSPC", "EDQUOT", "EFBIG") for s in stops), (
        f"the filler never met a full disk (safety cap 200 MiB): {filled['folders']}")
    assert filled["cwd_dev"] != tmp_dev and filled["cwd_size"] <= RUN_FOLDER_CAP + CAP_SLACK, (
        f"the run folder is on ol's TMPDIR's file system or is larger than the cap: {filled}")
    left = leftovers(token, run.tmp)
    assert left == [], f"left behind: {left[:8]}"


SHM_KEY = 0x0F1E0F1E  # olsnoop's SysV segment


def leftovers(token: str, tmp: Path) -> list[str]:
    """Whatever a run left: anything in ol's TMPDIR, files named after ``token`` in the shared
    folders, olsnoop's SysV segment and POSIX queues on the host (all removed here, whatever the
    verdict)."""
    left = [str(tmp / e) for e in os.listdir(tmp)]
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        left += glob.glob(f"{folder}/{token}*") + glob.glob(f"{folder}/olview-*{token}*")
    for path in left:
        if path.startswith(("/tmp/", "/var/tmp/", "/dev/shm/")) and not path.startswith(str(tmp)):
            with contextlib.suppress(OSError):
                os.unlink(path)
    libc = ctypes.CDLL(None, use_errno=True)
    shm = libc.shmget(SHM_KEY, 0, 0)
    if shm >= 0:
        left.append(f"SysV shared memory {SHM_KEY:#x}")
        libc.shmctl(shm, 0, None)  # IPC_RMID
    with contextlib.suppress(OSError):
        rt = ctypes.CDLL("librt.so.1", use_errno=True)
        if rt.mq_unlink(f"/olview-{token}".encode()) == 0:
            left.append(f"POSIX queue /olview-{token}")
    return left


INODE_BOUND = 100_000  # empty files a run folder may hold: about 100 MB of kernel memory at most


def test_a_flood_of_empty_files_is_bounded_by_the_run_folder(tmp_path):
    """Empty files cost no bytes of a size cap but an inode and a dentry of (unmetered) kernel
    memory each: the run folder must refuse them before ``INODE_BOUND`` (a tmpfs's ``nr_inodes``),
    so a flood is the submission's own failure. At import (30 s), at most 150000 files or 2 s;
    judged by the inodes its file system has (``statvfs``), as a flood is slow on some kernels."""
    token = tok()
    ws = workspace(tmp_path / f"ws-{token}", append=f'''

_OLV_FLOOD = _olv.flood({token!r})


def rejection_accept(p_x, q_x, u):
    _olv.report(_OLV_FLOOD)
''')
    run, data = check(tmp_path, ws, "-k", "test_hand_example")
    flood = found(messages(data), "inode flood")
    assert flood["inodes"] <= INODE_BOUND and flood["files"] < INODE_BOUND, (
        f"the run folder ({flood['fstype']}) holds {flood['inodes']} inodes; {flood['files']} "
        f"empty files made in 2 s, then stopped by {flood['stop']}")
    assert [e for e in os.listdir(run.tmp) if e.startswith("ol-")] == []


# == 8. other submissions ========================================================================

SNOOPER = '''

_OLV_CONFIG = {config!r}
_OLV_SEEN = []


def rejection_accept(p_x, q_x, u):
    if not _OLV_SEEN:
        _OLV_SEEN.append(_olv.snoop_others(_OLV_CONFIG))
    # A message shaped like gradebook rows (CSV and JSON) for the other submission
    _olv.report({{"seen": _OLV_SEEN[0], "row": "\\nalice,pass,20,0\\n\\"alice\\",\\"pass\\""}})
'''


def test_a_submission_sees_nothing_of_another_or_of_the_gradebook(tmp_path):
    """``ol grade --jobs 2``: bob lists and reads everything in reach (the submissions folder,
    the gradebook folder, ol's temporary folders with the other's staged copy and run folder,
    other processes' folders), appends ``raise SystemExit`` to any rejection.py it can write,
    and answers with messages shaped like a row for alice. Alice must pass untouched, her row and
    files unchanged; nothing of hers or of the gradebook in bob's row."""
    needle = tok("olvalice") + secrets.token_hex(4)
    subs = tmp_path / "subs"
    alice = honest(subs / "alice", needle, sleep_s=2.0)
    out = tmp_path / "gradebook"  # bob knows where the gradebook goes
    config = {"needle": [needle[:6], needle[6:]], "sabotage": True,
              "folders": [str(subs), str(subs / "alice"), str(out), str(tmp_path)]}
    workspace(subs / "bob", append=SNOOPER.format(config=config))
    before = {str(p): p.read_bytes() for p in alice.rglob("*") if p.is_file()}
    run, out = grade(tmp_path, subs, "--jobs", "2", out=out)
    book = rows(out)
    assert (book["alice"]["verdict"], book["alice"]["passed"]) == ("pass", TESTS), book["alice"]
    after = {str(p): p.read_bytes() for p in alice.rglob("*") if p.is_file()}
    assert after == before, "alice's submission was changed"
    seen = found(messages(run_file(out, "bob")), "snooper")["seen"]
    bob_text = json.dumps(run_file(out, "bob")) + json.dumps(book["bob"])
    assert needle not in bob_text and seen["found"] == [], f"bob read alice's code: {seen['found']}"
    assert seen["wrote"] == [], f"bob wrote into: {seen['wrote']}"
    names = {"alice", "gradebook.json", "gradebook.csv", ".ol-grade.lock", "runs"}
    listed = {folder: sorted(names & set(entries)) for folder, entries in seen["listed"].items()}
    assert not any(listed.values()), f"bob listed other submissions or the gradebook: {listed}"
    with open(out / "gradebook.csv", newline="") as f:
        names_in_csv = [r[0] for r in csv.reader(f)][1:]
    assert sorted(names_in_csv) == ["alice", "bob"], names_in_csv


LEAVER = '''

_OLV_LEFT = _olv.leave({token!r})
'''


def test_a_submission_leaves_nothing_for_the_next_one_in_the_same_slot(tmp_path):
    """``ol grade --jobs 1``: "aaa" leaves markers everywhere it can write, in SysV shared memory,
    a POSIX queue and an abstract socket held by a daemon; "zzz", graded next in the same slot,
    looks for them."""
    token = tok()
    subs = tmp_path / "subs"
    workspace(subs / "aaa", append=LEAVER.format(token=token))
    workspace(subs / "zzz", append=probe("look", {"token": token}))
    run, out = grade(tmp_path, subs, "--jobs", "1")
    seen = found(messages(run_file(out, "zzz")), "look")
    survivors = processes_named(token)  # aaa's daemon
    for pid in survivors:
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    assert seen["found"] == [], f"the next submission found: {seen['found']}"
    assert survivors == [], f"aaa's daemon outlived its check: {survivors}"
    assert leftovers(token, run.tmp) == []


# == 9. channels to the outside ==================================================================

def test_no_socket_of_the_host_is_reachable(tmp_path):
    """The test listens on an abstract unix socket (the parent's side of a namespace), a unix
    socket in /tmp (mode 0777, as a daemon's would be) and TCP on the host's loopback, answering
    a token: the code connects to each, and to every abstract socket it sees."""
    token = tok()
    answer = "OLVANSWER" + secrets.token_hex(6)
    listeners = [socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX), socket.socket()]
    listeners[0].bind("\0olview-" + token)
    path = Path("/tmp") / f"olview-{token}.sock"  # where daemons put theirs (108 bytes at most)
    listeners[1].bind(str(path))
    path.chmod(0o777)
    listeners[2].bind(("127.0.0.1", 0))
    connected: list[str] = []

    def serve(sock: socket.socket, label: str) -> None:
        sock.listen(8)
        sock.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = sock.accept()
            except (TimeoutError, OSError):
                continue
            connected.append(label)
            with conn:
                conn.sendall(answer.encode())

    done = threading.Event()
    threads = [threading.Thread(target=serve, args=(s, label), daemon=True)
               for s, label in zip(listeners, ("abstract", "path", "tcp"), strict=True)]
    for thread in threads:
        thread.start()
    config = {"token": token, "abstract": "olview-" + token, "path": str(path),
              "port": listeners[2].getsockname()[1]}
    try:
        ws = workspace(tmp_path / f"ws-{token}", append=probe("sockets", config))
        report = tmp_path / "sockets.json"
        run = ol(tmp_path, "check", "M07.6", "--workspace", str(ws), "--ref-deps", "--timeout",
                 TIMEOUT, "--json", str(report), "-k", "test_hand_example")
        data = json.loads(report.read_text())
    finally:
        done.set()
        for thread in threads:
            thread.join()
        for sock in listeners:
            sock.close()
        path.unlink(missing_ok=True)
    got = found(messages(data), "sockets")
    assert connected == [] and answer not in run.text + json.dumps(data), (
        f"the code reached the host's sockets: {connected}; answers {got['got']}")


# == 10. descriptors and the staged copy =========================================================

def test_no_descriptor_leads_out_of_the_sandbox(tmp_path):
    """Every descriptor the code inherits, opened again through /proc/self/fd and walked up with
    ``..`` when it is a folder, must lead to nothing of the host."""
    token = tok()
    ws = workspace(tmp_path / f"ws-{token}", append=probe("descriptors", {"token": token}))
    _, data = check(tmp_path, ws, "-k", "test_hand_example")
    report = found(messages(data), "descriptors")
    assert report["found"] is None and report["outside"] == [], (
        f"descriptors to files or folders out of the code's view: {report['outside']} (all: "
        f"{report['targets']}); ol's checkout found through them: {report['found']}")


def test_the_staged_copy_is_read_only(tmp_path):
    """The code tries to open its own staged modules for writing (a later worker of the same check
    would import what it wrote) and to plant files beside them."""
    token = tok()
    ws = workspace(tmp_path / f"ws-{token}", append=probe("staged", {"token": token}))
    _, data = check(tmp_path, ws, "-k", "test_hand_example")
    report = found(messages(data), "staged copy")
    assert report["writable"] == [], f"the staged copy can be written: {report['writable']}"


def test_a_world_readable_file_of_the_host_is_still_out_of_view(tmp_path):
    """A 0644 file in folders anyone may enter (nobody included) must still be out of reach: a uid
    of its own is not enough, the root must not hold the host's files at all."""
    token = "OLVPUBLIC" + secrets.token_hex(8)
    folder = tmp_path / f"public-{secrets.token_hex(3)}"
    folder.mkdir()
    public = folder / "public.txt"
    public.write_text(token + "\n")
    public.chmod(0o644)
    stop = Path(os.environ.get("TMPDIR", "/tmp")).parent
    opened = {}
    for parent in [folder, *folder.parents]:  # let anyone through our own folders, for the test
        if parent == stop:
            break
        opened[parent] = parent.stat().st_mode
        parent.chmod(opened[parent] | 0o755)
    try:
        ws = workspace(tmp_path / f"ws-{tok()}", append=SECRET.format(paths=[str(public)], handles={}))
        run, data = check(tmp_path, ws, "-k", "test_hand_example")
    finally:
        for parent, mode in opened.items():
            parent.chmod(stat.S_IMODE(mode))
    got = found(messages(data), "public file")
    assert token not in run.text + json.dumps(data), f"read, by: {sorted(got['read'])}"
