"""Nothing of a run outlives it: IPC objects, keyring keys, deep trees in the worker's folder,
and, after ``ol check`` or ``ol grade`` is killed with SIGKILL, its folders, cgroups and
processes (removed by the next run's sweep). Each test runs ol with a TMPDIR of its own."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import shutil
import signal
import time
from pathlib import Path

import pytest
from olrun import Ol

from harness.errors import EXIT_PARTIAL  # -k: a partial run, none failed
from harness.paths import REPO_ROOT
from harness.sandbox.rundirs import pids_parent

pytestmark = pytest.mark.slow
ROOT = os.geteuid() == 0
_libc = ctypes.CDLL(None, use_errno=True)
_SYS_ADD_KEY = {"x86_64": 248, "aarch64": 217}.get(os.uname().machine)

LEAVE = '''
import ctypes as _c, os as _o
def _ol_leave(key):
    libc = _c.CDLL(None, use_errno=True)
    libc.shmget(key, 512 << 20, 0o1000 | 0o600)
    libc.msgget(key, 0o1000 | 0o600)
    libc.semget(key, 1, 0o1000 | 0o600)
    try:
        rt = _c.CDLL("librt.so.1", use_errno=True)
        rt.mq_open(f"/ol-leak-{key}".encode(), _o.O_CREAT | _o.O_RDWR, 0o600, None)
    except OSError:
        pass
    if {sys_add_key}:
        for ring in (-4, -3, -5):  # the user, session and user-session keyrings
            libc.syscall({sys_add_key}, b"user", f"ol-leak-{key}-{{ring}}".encode(), b"x", 1,
                         _c.c_int(ring))
    # A tree 3000 levels deep in the worker's folder, and a big file.
    fd = _o.open(".", _o.O_RDONLY)
    for _ in range(3000):
        _o.mkdir("d" * 40, dir_fd=fd)
        nxt = _o.open("d" * 40, _o.O_RDONLY, dir_fd=fd)
        _o.close(fd)
        fd = nxt
    with open(_o.open("big", _o.O_WRONLY | _o.O_CREAT, dir_fd=fd), "wb") as f:
        f.write(b"\\0" * (8 << 20))
    _o.close(fd)
_ol_leave({key})
'''

HANG = '''
import signal as _s, time as _t
for _sig in (_s.SIGTERM, _s.SIGINT, _s.SIGALRM):
    _s.signal(_sig, _s.SIG_IGN)
_real_accept = rejection_accept
def rejection_accept(p_x, q_x, u):
    open("ol-hanging", "w").close()
    while True:
        _t.sleep(0.1)
'''


def workspace(root: Path, extra: str) -> Path:
    shutil.copytree(REPO_ROOT / "reference" / "python" / "tinyllm", root / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    module = root / "python" / "tinyllm" / "prob" / "rejection.py"
    module.write_text(module.read_text() + "\n" + extra)
    return root


def ol(*args: str, tmp: Path) -> Ol:
    """``ol ARGS`` started (not waited for) with ``tmp`` as its TMPDIR, shared between runs."""
    return Ol(tmp, *args, shared_tmp=True)


def ipc_keys(kind: str) -> set[int]:
    lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
    return {int(line.split()[0]) for line in lines if line.split()}


def mq_exists(name: str) -> bool:
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    fd = rt.mq_open(name.encode(), os.O_RDONLY)
    if fd >= 0:
        rt.mq_close(fd)
        rt.mq_unlink(name.encode())
        return True
    return ctypes.get_errno() != errno.ENOENT


def keys_named(prefix: str) -> list[str]:
    return [line for line in Path("/proc/keys").read_text().splitlines() if prefix in line]


def ol_entries(tmp: Path) -> list[str]:
    return sorted(e.name for e in os.scandir(tmp) if e.name.startswith("ol-"))


def ol_cgroups() -> set[str]:
    parent = pids_parent()
    if parent is None:
        return set()
    return {e.name for e in os.scandir(parent) if e.name.startswith("ol-")}


@pytest.mark.skipif(not ROOT, reason="IPC and keyring namespaces need root or user namespaces")
def test_ipc_objects_keys_and_a_deep_tree_are_gone_after_the_check(tmp_path):
    key = 0x01000000 + secrets.randbelow(1 << 24)
    ws = workspace(tmp_path / "ws", LEAVE.format(key=key, sys_add_key=_SYS_ADD_KEY or 0))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = ol("check", "M07.6", "--workspace", str(ws), "-k", "test_hand_example", tmp=tmp)
    assert done.wait(120).rc == EXIT_PARTIAL, done.text
    for kind in ("shm", "msg", "sem"):
        assert key not in ipc_keys(kind), kind
    assert not mq_exists(f"/ol-leak-{key}")
    deadline = time.monotonic() + 10  # keys of a namespace gone are collected asynchronously
    while keys_named(f"ol-leak-{key}") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert keys_named(f"ol-leak-{key}") == []
    assert ol_entries(tmp) == []


def _wait_for(path_glob: str, tmp: Path, timeout: float = 60.0) -> None:
    """Until ``path_glob`` exists below ``tmp``, on the host or in a worker's view (its run folder
    is a tmpfs of its own there, seen from here through ``/proc/PID/root``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if list(tmp.glob(path_glob)):
            return
        for name in os.listdir("/proc"):
            if name.isdigit():
                with contextlib.suppress(OSError):
                    if list(Path(f"/proc/{name}/root{tmp}").glob(path_glob)):
                        return
        time.sleep(0.1)
    raise AssertionError(f"nothing matched {path_glob} in {timeout} s")


def _pids_in(tmp: Path) -> set[int]:
    """Processes whose working directory is below ``tmp`` (the runs' workers and slots)."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/cwd").startswith(str(tmp)):
                    found.add(int(name))
            except OSError:
                continue
    return found


def _settle(tmp: Path, timeout: float = 10.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while (left := _pids_in(tmp)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.mark.parametrize("command", ["check", "grade"])
def test_after_sigkill_the_next_run_leaves_nothing_of_the_killed_one(tmp_path, command):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    hanging = workspace(tmp_path / "subs" / "hanging", HANG)
    cgroups_before = ol_cgroups()
    if command == "check":
        args = ["check", "M07.6", "--workspace", str(hanging), "--timeout", "60"]
    else:
        workspace(tmp_path / "subs" / "other", "")
        args = ["grade", "M07.6", str(tmp_path / "subs"), "--out", str(tmp_path / "out"),
                "--jobs", "2", "--timeout", "60"]
    victim = ol(*args, tmp=tmp)
    _wait_for("ol-worker-*/ol-hanging", tmp)
    victim.proc.send_signal(signal.SIGKILL)
    victim.wait(30)
    assert _settle(tmp) == set(), "the killed run's processes die with it"
    assert ol_entries(tmp), "the killed run left its folders (the sweep has work to do)"
    # The next run of ol sweeps what the dead one left: folders, cgroups.
    again = ol("check", "M07.6", "--workspace", str(REPO_ROOT / "reference"), "-k",
               "test_hand_example", tmp=tmp)
    assert again.wait(120).rc == EXIT_PARTIAL, again.text
    assert ol_entries(tmp) == []
    # (Other ol processes on the machine may have cgroups of their own meanwhile.)
    assert {c for c in ol_cgroups() - cgroups_before if f"-{victim.proc.pid}." in c} == set()
