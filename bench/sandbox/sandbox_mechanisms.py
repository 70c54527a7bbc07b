"""The in-process sandboxes the sandbox benchmarks compare, then a target run inside them.

    python -I bench/sandbox/sandbox_mechanisms.py MODE WRITABLE TARGET [CONFIG_JSON]

MODE:
  ``none``    nothing (the process as started: bwrap's, or no sandbox at all);
  ``keyring`` only a fresh session keyring (one ``keyctl``): what the worker must add under bwrap;
  ``harden``  the worker's own set-up: ``harness.sandbox.harden.harden`` (since issue #12: user,
              mount, net, IPC, UTS and PID namespaces for root and non-root, a read-only ``/``
              but WRITABLE and an empty ``/run``, no nested user namespace, a fresh session
              keyring, no capabilities, ``no_new_privs``; before it, as root only, mount + net +
              PID and, as any other user, only the limits);
  ``userns``  a hand-written user namespace (``userns_sandbox``), for root and non-root alike:
              user + mount + net + IPC + PID + UTS + cgroup namespaces in one ``unshare``, the
              same read-only file system and shim as ``harden``, nesting of user namespaces
              forbidden, a fresh session keyring, no capabilities, ``no_new_privs``.
TARGET: ``numpy`` (``import numpy``, for the start-up benchmark) or ``probe`` (the checks of
``bench/sandbox_properties.py``, with its CONFIG_JSON).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x02000000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWNS = 0x10000000, 0x20000000, 0x40000000, 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 16384, 1 << 18
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1
_PR_SET_PDEATHSIG = 1
_KEYCTL_JOIN_SESSION_KEYRING = 1
_SYS_KEYCTL = 250  # x86_64


def _fail(libc_errno: int, what: str) -> None:
    raise OSError(libc_errno, f"{what}: {os.strerror(libc_errno)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def userns_sandbox(writable: str) -> None:
    """The hand-written user-namespace sandbox; returns in the namespace's PID 1, whose parent
    stays outside as the shim of ``harness.sandbox.worker``. Raises OSError if the kernel refuses."""
    from harness.sandbox import harden as hardening

    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    flags = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWPID
             | CLONE_NEWUTS | CLONE_NEWCGROUP)
    if libc.unshare(flags) != 0:
        _fail(ctypes.get_errno(), "unshare")
    # One id inside, the same as outside: all an unprivileged user may map (root too, from here).
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    # No nested user namespace (it would give the code a full capability set again, within
    # locked mounts, but a larger kernel surface). Per namespace: this one's own limit.
    _write("/proc/sys/user/max_user_namespaces", "0")
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        _fail(ctypes.get_errno(), "mount --make-rprivate /")
    path = writable.encode()
    read_only = (ctypes.c_uint64 * 4)(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    read_write = (ctypes.c_uint64 * 4)(0, _MOUNT_ATTR_RDONLY, 0, 0)
    if libc.mount_setattr(_AT_FDCWD, b"/", _AT_RECURSIVE, read_only, 32) != 0:
        _fail(ctypes.get_errno(), "mount_setattr / read-only")
    if libc.mount(path, path, None, _MS_BIND, None) != 0:
        _fail(ctypes.get_errno(), "bind the writable directory")
    if libc.mount_setattr(_AT_FDCWD, path, 0, read_write, 32) != 0:
        _fail(ctypes.get_errno(), "mount_setattr writable")
    os.chdir(writable)
    parent = os.getppid()
    child = os.fork()
    if child != 0:
        hardening._shim(child, parent)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.setpgid(0, 0)
    if libc.mount(b"proc", b"/proc", b"proc", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
                  None) != 0:
        _fail(ctypes.get_errno(), "mount /proc")
    join_session_keyring()
    hardening._drop_privileges(libc)


def join_session_keyring() -> None:
    """A session keyring of this sandbox's own (anonymous): a key added to the one inherited
    from ``ol`` (a login's) would outlive the sandbox, readable by the next worker."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(ctypes.c_long(_SYS_KEYCTL), ctypes.c_long(_KEYCTL_JOIN_SESSION_KEYRING),
                    None) < 0:
        _fail(ctypes.get_errno(), "keyctl(KEYCTL_JOIN_SESSION_KEYRING)")


def _limits_config() -> dict:
    return {"limits": {"memory_bytes": 4096 << 20, "cpu_s": 600, "file_bytes": 64 << 20,
                       "max_processes": int(os.environ.get("OL_BENCH_MAX_PIDS", "64"))},
            "cgroup": os.environ.get("OL_BENCH_CGROUP") or None,
            # The worker's view since #24 (OL_BENCH_VIEW=0: the read-only file system before it).
            "view": ({"read": [], "hide": [str(REPO)], "disk_mb": 64, "code": None}
                     if os.environ.get("OL_BENCH_VIEW", "1") != "0" else {})}


def main(argv: list[str]) -> int:
    mode, writable, target = argv[1], argv[2], argv[3]
    sys.path.insert(0, str(REPO))
    os.chdir(writable)
    if mode == "harden":
        from harness.sandbox.harden import harden

        harden(_limits_config())
    elif mode == "userns":
        userns_sandbox(writable)
    elif mode == "keyring":
        join_session_keyring()
    elif mode == "none":
        from harness.sandbox import (
            worker,  # noqa: F401 - what the worker imports anyway (ctypes, json...)
        )
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    sys.path.remove(str(REPO))
    if target == "numpy":
        import numpy  # noqa: F401
        return 0
    sys.path.insert(0, str(HERE))
    import sandbox_properties

    return sandbox_properties.probe(argv[4])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
