"""The worker's view, identity and metered resources (#24): what it reports, the disk cap, the
task cap where no cgroup can be made, and the harness files copied into the view."""

from __future__ import annotations

import ast
import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.engine.isolated import IsolatedTarget, Limits, confinement_of
from harness.engine.results import missing_confinement
from harness.paths import REPO_ROOT
from harness.sandbox import proctree, worker

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the identity of its own needs root")

PROBES = '''
import os, threading, time

def fill(mb):
    """Write ``mb`` MiB in 1 MiB files (each far below the file size limit); the errno that
    stopped it, 0 if none did, and how many MiB were written."""
    chunk = b"x" * (1 << 20)
    for i in range(mb):
        try:
            with open(f"fill-{i}", "wb") as f:
                f.write(chunk)
        except OSError as exc:
            return exc.errno, i
    return 0, mb

def fork_bomb(n):
    """Fork up to ``n`` children that sleep; how many forks succeeded before EAGAIN."""
    made = 0
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        made += 1
    return made

def who():
    return os.getresuid() + os.getresgid() + (len(os.getgroups()),)
'''
FUNCTIONS = ("fill", "fork_bomb", "who")


def _target(tmp_path: Path, limits: Limits) -> IsolatedTarget:
    prob = tmp_path / "python" / "tinyllm" / "prob"
    prob.mkdir(parents=True)
    (prob.parent / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "rejection.py").write_text(textwrap.dedent(PROBES))
    return IsolatedTarget("view", tmp_path / "python", "tinyllm.prob.rejection", FUNCTIONS, {},
                          limits)


def _require_view(t: IsolatedTarget) -> None:
    assert t.import_status() is None
    if not t.confinement.get("view"):
        pytest.skip("no view here (the kernel refuses user namespaces)")


def test_the_run_folder_is_capped_at_disk_mb(tmp_path):
    with _target(tmp_path, Limits(disk_mb=8)) as t:
        _require_view(t)
        assert t.confinement["disk_mb"] == 8
        err, written = t.call("fill", 20)
        assert err == errno.ENOSPC and 6 <= written <= 8  # its own failure, at its own cap
    assert not any(p.name.startswith("fill-") for p in tmp_path.rglob("*"))


@ROOT_ONLY
def test_as_root_the_code_is_nobody_and_the_confinement_is_complete(tmp_path):
    with _target(tmp_path, Limits()) as t:
        _require_view(t)
        assert t.call("who") == (65534, 65534, 65534, 65534, 65534, 65534, 0)
        assert missing_confinement(t.confinement) == []
        assert t.confinement["tasks"] in ("cgroup v1", "cgroup v2", "rlimit")


@ROOT_ONLY
def test_without_a_cgroup_the_tasks_of_nobody_are_capped_by_rlimit(tmp_path, monkeypatch):
    """A host where no pids cgroup can be made (cgroup v2 without delegation, say): as root the
    worker is nobody, so RLIMIT_NPROC holds where it would not for root."""
    monkeypatch.setattr(proctree, "pids_cgroup", lambda limit: None)
    with _target(tmp_path, Limits(max_processes=12)) as t:
        _require_view(t)
        assert t.confinement["tasks"] == "rlimit"
        made = t.call("fork_bomb", 200)
        assert 1 <= made <= 12


def test_a_malformed_confinement_report_means_nothing_was_achieved():
    assert missing_confinement(confinement_of({"view": "yes"})) == missing_confinement(
        confinement_of(None))
    assert len(missing_confinement(confinement_of(None))) == 7
    good = {"view": True, "read_only": True, "contained": True, "nobody": True, "no_caps": True,
            "tasks": "cgroup v1", "disk_mb": 64, "memory": True}
    assert missing_confinement(confinement_of(good)) == []
    assert "task cap" in missing_confinement(confinement_of({**good, "tasks": "none"}))


def test_the_code_copied_into_the_view_is_what_the_serving_loop_imports():
    """``worker.CODE`` lists every harness module the worker imports after its hardening, and no
    other: a fresh interpreter that imports them finds exactly these files."""
    script = ("import sys; sys.path.insert(0, sys.argv[1]);"
              "from harness import uniforms;"
              "from harness.sandbox import capture, codec, frames, invoke, protocol;"
              "print('\\n'.join(sorted(m.__file__ for n, m in sys.modules.items()"
              " if n == 'harness' or n.startswith('harness.'))))")
    done = subprocess.run([sys.executable, "-I", "-c", script, str(REPO_ROOT)],
                          capture_output=True, text=True, check=True, timeout=60)
    files = {str(Path(f).relative_to(REPO_ROOT)) for f in done.stdout.split()}
    assert files == set(worker.CODE)
    # ...and the Server imports exactly those modules after the hardening.
    tree = ast.parse(Path(worker.__file__).read_text())
    server = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Server")
    init = next(n for n in server.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    imported = {f"{n.module}.{a.name}" for n in ast.walk(init) if isinstance(n, ast.ImportFrom)
                for a in n.names}
    assert imported == {"harness.uniforms", "harness.sandbox.capture",
                        "harness.sandbox.codec", "harness.sandbox.frames",
                        "harness.sandbox.invoke"}


@ROOT_ONLY
@pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare(1)")
def test_where_the_kernel_refuses_user_namespaces_the_check_says_so(tmp_path):
    """A host (or a container) where no user namespace can be made: ol check still checks, and
    says in one line, in the terminal and in its report, what confinement it lacked."""
    ws = tmp_path / "ws"
    shutil.copytree(REPO_ROOT / "reference" / "python", ws / "python",
                    ignore=shutil.ignore_patterns("__pycache__"))
    report = tmp_path / "report.json"
    inner = shlex.join([sys.executable, "-m", "harness", "check", "M07.6", "--workspace", str(ws),
                        "--json", str(report), "-k", "test_hand_example"])
    done = subprocess.run(["unshare", "-U", "-r", "sh", "-c",
                           f"echo 0 > /proc/sys/user/max_user_namespaces && cd {REPO_ROOT} && "
                           f"exec {inner}"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 4, done.stdout + done.stderr  # -k: a partial run, none failed
    unwrapped = done.stdout.replace("\n    ", " ")  # a note wraps at 100 columns
    lines = [line for line in unwrapped.splitlines() if "sandbox is partial" in line]
    assert len(lines) == 1 and "view" in lines[0] and "pid namespace" in lines[0]
    data = json.loads(report.read_text())
    assert data["confinement"]["view"] is False
    assert any("sandbox is partial" in note for note in data["notes"])


def _without_user_namespaces(argv: list[str]) -> subprocess.CompletedProcess:
    """``python -m harness ARGV`` where the kernel refuses user namespaces (one of its own, with
    max_user_namespaces 0), as in a container without CLONE_NEWUSER."""
    inner = shlex.join([sys.executable, "-m", "harness", *argv])
    return subprocess.run(["unshare", "-U", "-r", "sh", "-c",
                           f"echo 0 > /proc/sys/user/max_user_namespaces && cd {REPO_ROOT} && "
                           f"exec {inner}"], capture_output=True, text=True, timeout=300,
                          check=False)


@ROOT_ONLY
@pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare(1)")
@pytest.mark.slow
def test_grade_and_gate_record_and_warn_of_a_partial_sandbox(tmp_path):
    ws = tmp_path / "subs" / "kate"
    shutil.copytree(REPO_ROOT / "reference" / "python", ws / "python",
                    ignore=shutil.ignore_patterns("__pycache__"))
    # M07.1: what is judged is the gradebook's record of the sandbox, not a catalog's verdicts,
    # and its catalog is the cheapest (about 0.3 s against M07.6's 1.7 s; the gate below runs
    # M07.6 anyway)
    done = _without_user_namespaces(["grade", "M07.1", str(tmp_path / "subs"), "--out",
                                     str(tmp_path / "book"), "--seed", "public", "--jobs", "1"])
    assert done.returncode == 0, done.stderr
    assert "ran in a partial sandbox" in done.stderr
    book = json.loads((tmp_path / "book" / "gradebook.json").read_text())
    assert "view" in book["partial_sandbox"]["kate"]
    assert book["submissions"][0]["partial_sandbox"] == book["partial_sandbox"]["kate"]
    done = _without_user_namespaces(["gate", "MS-P6", "--workspace", str(ws), "--json",
                                     str(tmp_path / "gate.json"), "--markdown",
                                     str(tmp_path / "gate.md")])
    assert done.returncode == 0, done.stderr
    assert "the sandbox was partial here" in done.stderr
    assert "sandbox was partial" in (tmp_path / "gate.md").read_text()
    gate = json.loads((tmp_path / "gate.json").read_text())
    assert all(m["run"]["confinement"]["view"] is False for m in gate["modules"])


MEMORY_PROBE = '''
import os, time

def hog(children, mb):
    """``children`` processes that each touch ``mb`` MiB (each far below RLIMIT_AS), waiting
    until all are up; True if every one of them held its memory and is still alive (the OOM
    killer may take a child that had already touched its memory, to make room for the next)."""
    r, w = os.pipe()
    pids = []
    for _ in range(children):
        pid = os.fork()
        if pid:
            pids.append(pid)
        else:
            block = bytearray(mb << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(w, b"x")
            time.sleep(30)
            os._exit(0)
    os.set_blocking(r, False)
    got, dead = 0, set()
    deadline = time.monotonic() + 10
    while got < children and not dead and time.monotonic() < deadline:  # a dead one: answered
        try:
            got += len(os.read(r, 64))
        except BlockingIOError:
            dead = {pid for pid in pids if os.waitpid(pid, os.WNOHANG) != (0, 0)}
            time.sleep(0.05)
    time.sleep(0.5)
    alive = sum(pid not in dead and os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in pids)
    return got == children and alive == children
'''


@ROOT_ONLY
@pytest.mark.slow
def test_the_whole_tree_is_capped_by_a_memory_cgroup(tmp_path):
    """#24: RLIMIT_AS bounds each process; many children together could take the machine's memory
    and the kernel would kill any process (a grading run was killed so). A memory cgroup caps the
    tree: past it the kernel's OOM killer acts inside the worker's tree only."""
    prob = tmp_path / "python" / "tinyllm" / "prob"
    prob.mkdir(parents=True)
    (prob.parent / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "rejection.py").write_text(textwrap.dedent(MEMORY_PROBE))
    with IsolatedTarget("mem", tmp_path / "python", "tinyllm.prob.rejection", ("hog",), {},
                        Limits(tree_memory_mb=256, call_timeout_s=30)) as t:
        assert t.import_status() is None
        if not t.confinement.get("memory"):
            pytest.skip("no v1 memory cgroup here")
        assert t.call("hog", 2, 32) is True  # 64 MiB: within the cap
        try:
            held = t.call("hog", 8, 64)  # 512 MiB: over it
        except Exception:  # noqa: BLE001 - the worker itself may be the one the OOM killer took
            held = False
        assert held is False
