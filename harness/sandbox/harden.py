"""Hardening a process that will run code under test: what it can see, who it is, what it can use.

Called first thing by the isolated worker (``harness.sandbox.worker``) and the ``--mine`` fork
server (``harness.own_tests.server``), before any student code loads and before any thread
starts (a user or mount namespace needs a single thread). Imports the standard library only. In
order, each step best effort, and what was achieved reported (``Confinement``):

1. the parent's pids cgroup (v1 or v2) and the resource limits, soft = hard;
2. a **user namespace** of its own; as root it maps the host's uid 0 and ``nobody`` (65534)
   only, as any other user that user's own uid seen as 65534;
3. a **mount, network, IPC and UTS namespace**;
4. **the view** (``_build_view``): a new root, a small tmpfs holding only the Python installation
   and the packages it imports (read-only binds), the folders the parent names (the staged
   workspace, read-only), the few harness files the serving loop imports (copied), ``/dev/null``,
   ``/dev/zero``, ``/dev/full``, ``/dev/random``, ``/dev/urandom``, the run folder as a tmpfs of its
   own capped at ``disk_mb`` (the only place it can write), and ``/proc`` of its PID namespace.
   ol's checkout, other submissions, ``/root``, ``/home``, ``/etc`` (but ``ld.so.cache``),
   ``/tmp``, ``/run``, ``/sys`` are not in it;
5. a **PID namespace** (the process the parent started stays outside as a shim that mirrors how
   PID 1 ends), then ``pivot_root`` into the view, the old root detached;
6. **an identity of its own**: as root, ``nobody``'s uid and gid (65534) and no supplementary
   group: it owns nothing on the host; every capability dropped, ``no_new_privs``, a subreaper.

Where a step is refused (no unprivileged user namespaces, say), the process runs with what it
has: the confinement sent to the parent says so, and ol's commands say it in one line.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import select
import signal
import stat
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import NoReturn

# prctl options and the capability ABI (linux/prctl.h, linux/capability.h).
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_CAP_VERSION_3 = 0x20080522
# Namespaces and mounts (linux/sched.h, linux/mount.h, fcntl.h).
_CLONE_NEWNS, _CLONE_NEWNET, _CLONE_NEWPID = 0x00020000, 0x40000000, 0x20000000
_CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWUTS = 0x08000000, 0x10000000, 0x04000000
_KEYCTL_JOIN_SESSION_KEYRING = 1
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MNT_DETACH = 2
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4

NOBODY = 65534
DEVICES = ("null", "zero", "full", "random", "urandom")
# What the dynamic loader and Python read outside the installation (the loader's cache).
ETC_FILES = ("/etc/ld.so.cache",)
SYSTEM_LIBS = ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/local/lib")
_ROOT_TMPFS = b"size=8m,nr_inodes=4096,mode=755"


@dataclass(frozen=True)
class Confinement:
    """What the hardening achieved, sent to the parent with the ready message."""

    view: bool = False  # a root of its own (pivot_root): sees only what it needs
    read_only: bool = False  # cannot write outside its run folder (the view, or a read-only remount)
    contained: bool = False  # PID namespace: sees and signals nothing outside, dies with its tree
    nobody: bool = False  # runs as a uid and gid that own nothing on the host (as root: 65534)
    no_caps: bool = False  # no capability, no_new_privs
    tasks: str = "none"  # how its tasks are capped: cgroup v1, cgroup v2, rlimit, none
    disk_mb: int = 0  # the tmpfs cap on what it writes (0: none, only the file size limit)
    memory: bool = False  # a memory cgroup caps its whole tree (tmpfs pages included)

    def to_json(self) -> dict:
        return asdict(self)


# -- 1. cgroup and limits -----------------------------------------------------------------------

def join_cgroup(path: str | None) -> str:
    """Join the parent's pids cgroup; which kind it is ("cgroup v1", "cgroup v2"), or "none"."""
    if not path:
        return "none"
    try:
        with open(f"{path}/cgroup.procs", "w", encoding="ascii") as f:
            f.write(str(os.getpid()))
    except OSError:
        return "none"
    return "cgroup v2" if os.path.exists(f"{path}/cgroup.controllers") else "cgroup v1"


def set_limits(limits: dict, nproc_uid: int | None) -> None:
    """Soft = hard, so the student's code cannot raise them back. ``nproc_uid``: cap the tasks of
    that uid with ``RLIMIT_NPROC`` (its current count plus ``max_processes``); None: no such cap
    (a cgroup caps them, or root, which is exempt)."""
    pairs = [
        (resource.RLIMIT_AS, limits["memory_bytes"]),
        (resource.RLIMIT_CPU, limits["cpu_s"]),
        (resource.RLIMIT_FSIZE, limits["file_bytes"]),
        (resource.RLIMIT_CORE, 0),
    ]
    if nproc_uid is not None:
        pairs.append((resource.RLIMIT_NPROC, _user_tasks(nproc_uid) + limits["max_processes"]))
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


def _user_tasks(uid: int) -> int:
    """Processes and threads of ``uid`` now: RLIMIT_NPROC counts them all, so the worker gets
    ``max_processes`` more than a developer's desktop already runs, not 64 in total."""
    count = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if fields["Uid"].split()[0] == str(uid):
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return count


# -- 2, 3. namespaces ---------------------------------------------------------------------------

def _write(path: str, text: str) -> bool:
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write(text)
        return True
    except OSError:
        return False


def _user_namespace(libc: ctypes.CDLL) -> bool:
    """A user namespace of its own. As root, uid and gid 0 and 65534 mapped to themselves (so the
    worker can become ``nobody`` once its view is built, and keeps nothing of root's over the
    host); as any other user, that user's uid and gid seen as 65534 inside (unprivileged user
    namespaces). Keys the student's code adds to the user keyrings die with the namespace; it also
    gets a session keyring of its own. No user namespace can be made inside this one."""
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:  # two ranges need CAP_SETUID over the parent namespace: written from outside
        maps = (("uid_map", f"0 0 1\n{NOBODY} {NOBODY} 1\n"),
                ("gid_map", f"0 0 1\n{NOBODY} {NOBODY} 1\n"))
        if not _unshare_mapped_from_outside(libc, maps):
            return False
    else:
        if libc.unshare(_CLONE_NEWUSER) != 0:
            return False
        for name, text in (("setgroups", "deny"), ("uid_map", f"{NOBODY} {uid} 1"),
                           ("gid_map", f"{NOBODY} {gid} 1")):
            if not _write(f"/proc/self/{name}", text):
                return True  # unmapped: still no host capability; the mounts below may then fail
    if _SYS_KEYCTL is not None:
        libc.syscall(_SYS_KEYCTL, _KEYCTL_JOIN_SESSION_KEYRING, None)
    _write("/proc/sys/user/max_user_namespaces", "0")
    return True


def _unshare_mapped_from_outside(libc: ctypes.CDLL, maps: tuple[tuple[str, str], ...]) -> bool:
    """``unshare`` a user namespace whose maps a child left outside writes (the kernel lets only
    a process with CAP_SETUID over the parent namespace write more than one range, and once this
    process is inside it has none there). False if the namespace could not be made or mapped."""
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    me = os.getpid()
    helper = os.fork()
    if helper == 0:  # pragma: no cover - the helper: wait for the namespace, write, exit
        ok = 0
        try:
            os.close(go_w)
            os.close(done_r)
            if os.read(go_r, 1) == b"1":
                ok = all(_write(f"/proc/{me}/{name}", text) for name, text in maps)
            os.write(done_w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(go_r)
    os.close(done_w)
    made = libc.unshare(_CLONE_NEWUSER) == 0
    os.write(go_w, b"1" if made else b"0")
    mapped = os.read(done_r, 1) == b"1"
    for fd in (go_w, done_r):
        os.close(fd)
    os.waitpid(helper, 0)
    if made and not mapped:
        os._exit(71)  # inside a namespace without its identities: the parent sees a crash at start
    return made


def _mount_namespace(libc: ctypes.CDLL) -> bool:
    """A mount namespace whose changes never propagate to the host, a network namespace with no
    interface, an IPC namespace (SysV and POSIX IPC die with the worker) and a UTS namespace."""
    if (libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS) != 0
            and libc.unshare(_CLONE_NEWNS) != 0):
        return False
    return libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) == 0


# -- 4. the view --------------------------------------------------------------------------------

def python_paths() -> list[str]:
    """The Python installation this process runs and every folder on its ``sys.path`` (real
    paths), and the system's shared libraries: what the interpreter and its packages load."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(sys.executable), *sys.path, *SYSTEM_LIBS}
    out = set()
    for path in paths:
        if path and os.path.isabs(path):
            real = os.path.realpath(path)
            if os.path.isdir(real) or (os.path.isfile(real) and real.endswith(".zip")):
                out.add(real)
    return sorted(out)


def _outermost(paths: list[str]) -> list[str]:
    """The paths that no other one contains (binding a folder binds what is inside)."""
    out: list[str] = []
    for path in sorted(set(paths)):
        if not any(path == p or path.startswith(p.rstrip("/") + "/") for p in out):
            out.append(path)
    return out


def _mount_point(root: str, path: str, is_dir: bool) -> str:
    target = root + path
    if is_dir:
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    return target


def _bind(libc: ctypes.CDLL, source: str, target: str, attrs: int) -> None:
    """Bind ``source`` (and what is mounted below it) at ``target`` with ``attrs``; OSError if
    the kernel refuses."""
    if libc.mount(source.encode(), target.encode(), None, _MS_BIND | _MS_REC, None) != 0:
        raise OSError(ctypes.get_errno(), f"bind {source}")
    flags = (ctypes.c_uint64 * 4)(attrs, 0, 0, 0)
    if libc.mount_setattr(_AT_FDCWD, target.encode(), _AT_RECURSIVE, flags, 32) != 0:
        raise OSError(ctypes.get_errno(), f"mount_setattr {target}")


def _tmpfs(libc: ctypes.CDLL, target: str, options: bytes, flags: int = 0) -> None:
    if libc.mount(b"tmpfs", target.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV | flags,
                  options) != 0:
        raise OSError(ctypes.get_errno(), f"tmpfs {target}")


def _build_view(libc: ctypes.CDLL, view: dict, home: str) -> str:
    """The new root, ready for ``pivot_root`` (see the module docstring). OSError if any part
    of it cannot be made: the caller then stops, and the parent sees a crash at start.

    ol's checkout (``hide``) and any ``harness`` package on ``sys.path`` are hidden under an
    empty tmpfs even where a shown folder contains them (an installation whose ``.pth`` names the
    checkout, a checkout under ``/usr``); what must be shown inside them (a virtual environment
    in the checkout) is bound again on top."""
    root = f"{home}/.ol-root"
    os.mkdir(root, 0o755)
    _tmpfs(libc, root, _ROOT_TMPFS)
    ro = _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV
    shown = python_paths() + [os.path.realpath(p) for p in view.get("read", [])
                              if os.path.exists(p)]
    hidden = [os.path.realpath(p) for p in view.get("hide", [])]
    hidden += [os.path.join(p, "harness") for p in shown if os.path.isdir(os.path.join(p, "harness"))]
    binds = _outermost(shown)
    for path in binds:
        _bind(libc, path, _mount_point(root, path, os.path.isdir(path)), ro)
    masks = []
    for path in _outermost(hidden):
        if any(_within(path, b) for b in binds):
            target = _mount_point(root, path, True)
            _tmpfs(libc, target, b"size=64k,nr_inodes=256,mode=755")
            masks.append(target)
            for inner in _outermost([p for p in shown if _within(p, path) and p != path]):
                _bind(libc, inner, _mount_point(root, inner, os.path.isdir(inner)), ro)
    for path in ETC_FILES:
        if os.path.isfile(path):
            _bind(libc, path, _mount_point(root, path, False), ro)
    for name in DEVICES:
        _bind(libc, f"/dev/{name}", _mount_point(root, f"/dev/{name}", False),
              _MOUNT_ATTR_NOSUID)
    code = view.get("code")
    if code:  # the harness files the serving loop imports: copies, nothing else of the checkout
        for rel in code["files"]:
            _copy_module(os.path.join(code["root"], rel), root)
    for target in masks:
        if libc.mount(b"none", target.encode(), None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID
                      | _MS_NODEV, None) != 0:
            raise OSError(ctypes.get_errno(), f"remount {target}")
    run = _mount_point(root, home, True)
    _tmpfs(libc, run, f"size={int(view['disk_mb'])}m,nr_inodes=16384,mode=700".encode())
    os.makedirs(f"{root}/proc", mode=0o555, exist_ok=True)
    os.makedirs(f"{root}/.old", mode=0o700, exist_ok=True)
    return root


def make_readable(paths: list[str]) -> None:
    """Let the view's identity read what it is shown of ol's own staging (copies this process's
    user made, whatever its umask): folders 0755, files 0644, only entries this user owns, no link
    followed. Their run folder above stays 0700, so nobody else on the host reaches them."""
    me = os.geteuid()
    for top in paths:
        stack = [top]
        while stack and len(stack) < 10000:
            path = stack.pop()
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if info.st_uid != me:
                continue
            if stat.S_ISDIR(info.st_mode):
                os.chmod(path, 0o755)
                with contextlib.suppress(OSError):
                    stack.extend(os.path.join(path, name) for name in os.listdir(path))
            elif stat.S_ISREG(info.st_mode):
                os.chmod(path, 0o644)


def _within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _copy_module(source: str, root: str) -> None:
    """A harness module into the view, with its compiled form where it is current (the same
    modification time, so the interpreter uses it instead of compiling again)."""
    import importlib.util

    for path in (source, importlib.util.cache_from_source(source)):
        try:
            with open(path, "rb") as f:
                data = f.read()
                info = os.fstat(f.fileno())
        except OSError:
            if path == source:
                raise
            continue
        target = _mount_point(root, path, False)
        with open(target, "wb") as f:
            f.write(data)
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))


def _enter_view(libc: ctypes.CDLL, root: str, home: str, owner: int, proc: bool) -> bool:
    """``pivot_root`` into ``root`` (with a ``/proc`` of this PID namespace when ``proc``), the
    old root detached, the root tmpfs read-only, the run folder owned by ``owner``."""
    if proc and libc.mount(b"proc", f"{root}/proc".encode(), b"proc",
                           _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None) != 0:
        return False
    if _SYS_PIVOT_ROOT is None:
        return False
    os.chdir(root)
    if libc.syscall(_SYS_PIVOT_ROOT, b".", b".old") != 0:
        return False
    os.chdir("/")
    if libc.umount2(b"/.old", _MNT_DETACH) != 0:
        return False
    os.rmdir("/.old")
    os.chown(home, owner, owner)
    if libc.mount(b"none", b"/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID
                  | _MS_NODEV, None) != 0:
        return False
    os.chdir(home)
    return True


def _read_only(libc: ctypes.CDLL, writable: str) -> bool:
    """The fallback where no view can be made: the whole file system read-only but ``writable``,
    and an empty ``/run`` (no daemon's socket to connect to)."""
    path = writable.encode()
    read_only = (ctypes.c_uint64 * 4)(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    read_write = (ctypes.c_uint64 * 4)(0, _MOUNT_ATTR_RDONLY, 0, 0)
    if not hasattr(libc, "mount_setattr"):
        return False
    if os.path.isdir("/run") and not os.path.realpath(writable).startswith("/run/"):
        libc.mount(b"tmpfs", b"/run", b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
                   b"size=4k,mode=755")
    if (libc.mount_setattr(_AT_FDCWD, b"/", _AT_RECURSIVE, read_only, 32) != 0
            or libc.mount(path, path, None, _MS_BIND, None) != 0
            or libc.mount_setattr(_AT_FDCWD, path, 0, read_write, 32) != 0):
        return False
    os.chdir(writable)  # the working directory still refers to the read-only mount below
    return True


# -- 5. PID namespace ---------------------------------------------------------------------------

def _contain(libc: ctypes.CDLL) -> bool:
    """A PID namespace, so the student's code can neither see nor signal any process outside it,
    and everything it forks dies with it, whatever ``setsid`` or double forks it tries.

    The process the parent started stays outside as a shim (``_shim``) that mirrors how its only
    child, PID 1 of the namespace, ends. Returns True in that child, False if there is no namespace.
    """
    parent = os.getppid()
    if libc.unshare(_CLONE_NEWPID) != 0:
        return False
    child = os.fork()
    if child != 0:
        _shim(child, parent)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the shim is killed: so are we
    # A process group without the shim: here getppid() is 0, and kill(0, ...), the student's
    # "kill my parent", would signal the whole group; now it reaches this side only (and PID 1
    # ignores its own signals), so nothing of the harness is in reach.
    os.setpgid(0, 0)
    return True


def _shim(child: int, parent: int) -> NoReturn:
    """Wait for the namespace's PID 1 and end as it ended (the same exit code or signal); kill it
    if the harness dies. Holds no descriptor, so the parent sees the protocol close with the child.
    """
    os.closerange(0, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    watch = select.poll()
    watch.register(os.pidfd_open(child), select.POLLIN)
    while not watch.poll(1000):
        if os.getppid() != parent:
            os.kill(child, signal.SIGKILL)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 1)


# -- 6. identity and privileges -----------------------------------------------------------------

def _become_nobody() -> bool:
    """As root in its user namespace: uid and gid 65534 (the host's nobody), no supplementary
    group; every capability goes with the uid. False if any step is refused."""
    try:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    except OSError:
        return False
    return os.getresuid() == (NOBODY,) * 3 and os.getresgid() == (NOBODY,) * 3


def _drop_bounding_set(libc: ctypes.CDLL) -> None:
    """Empty the capability bounding set (needs CAP_SETPCAP: before the uid changes)."""
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break  # EINVAL past the last capability, or EPERM without CAP_SETPCAP


def _drop_privileges(libc: ctypes.CDLL) -> bool:
    """Become a subreaper, drop every capability, forbid gaining privileges; whether no
    capability is left.

    As a subreaper, processes the student's code orphans stay below this worker, where the
    parent finds them. Without capabilities a root worker cannot undo the sandbox, raise its
    hard limits, ptrace the parent or write its memory.
    """
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _drop_bounding_set(libc)
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable for two 32-bit words
    if hasattr(libc, "capset"):
        libc.capset(header, data)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    return _no_capabilities()


def _no_capabilities() -> bool:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            caps = {k: v.strip() for k, _, v in (line.partition(":") for line in f)
                    if k in ("CapEff", "CapPrm")}
    except OSError:  # no /proc in the view: capget says the same
        return _capget_empty()
    return bool(caps) and all(int(v, 16) == 0 for v in caps.values())


def _capget_empty() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if not hasattr(libc, "capget") or libc.capget(header, data) != 0:
        return False
    return all(word == 0 for word in data)


def watch_parent() -> None:
    """Without a shim: exit when the parent dies, even while a call hangs (PDEATHSIG is per
    thread of the parent, so it could fire while the harness lives)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(70)

    threading.Thread(target=watch, name="ol-watch-parent", daemon=True).start()


def harden(config: dict, keep_privileges: bool = False) -> Confinement:
    """Steps 1 to 6 of the module docstring for this process and all it starts; what was achieved.

    ``config``: ``limits`` (``supervisor.rlimits``), ``cgroup`` (the parent's pids cgroup or
    None), ``view`` (``read``: folders to show read-only; ``hide``: ol's checkout, hidden even
    where an installation inside it is shown; ``code``: harness files to copy in, ``{"root",
    "files"}``; ``disk_mb``: the run folder's cap). Must run before any thread starts.

    ``keep_privileges``: step 6 is left to each child that will run code under test
    (``confine_run``), which first gets a run folder and an IPC namespace of its own: the ``--mine``
    fork server, whose runs must share nothing. The process itself then keeps its capabilities
    over its own namespaces (none over the host) and runs no student code; the confinement
    returned is the one each run gets.
    """
    home = os.getcwd()
    tasks = join_cgroup(config.get("cgroup"))
    memory = join_cgroup(config.get("memory_cgroup")) != "none"
    root_user = os.geteuid() == 0
    nproc = None if tasks != "none" else (os.geteuid() if not root_user else NOBODY)
    set_limits(config["limits"], nproc if not root_user else None)
    libc = ctypes.CDLL(None, use_errno=True)
    view = config.get("view") or {}
    if view and root_user:
        make_readable(view.get("read", []))
    user = _user_namespace(libc)
    mounts = user and _mount_namespace(libc)
    root = None
    if mounts and view:
        try:
            root = _build_view(libc, view, home)
        except OSError:
            root = None
    read_only = root is not None or (mounts and _read_only(libc, home))
    contained = read_only and _contain(libc)
    in_view = root is not None and _enter_view(libc, root, home, NOBODY if root_user else
                                               os.geteuid(), contained)
    if root is not None and not in_view:
        os._exit(71)  # half a view is no view: the parent sees a crash at start, never less
    _STATE.update(root_user=root_user, in_view=in_view, contained=contained, tasks=tasks,
                  max_processes=config["limits"]["max_processes"])
    if keep_privileges:
        nobody, no_caps = in_view, True  # what each run gets (``confine_run``)
    else:
        nobody, tasks, no_caps = _lower(libc)
    if not contained:
        watch_parent()
    sys.dont_write_bytecode = True
    return Confinement(view=in_view, read_only=bool(read_only), contained=contained,
                       nobody=bool(nobody), no_caps=no_caps, tasks=tasks,
                       disk_mb=int(view.get("disk_mb", 0)) if in_view else 0, memory=memory)


_STATE: dict = {}  # what ``harden`` achieved, for ``_lower`` in this process or a forked run


def _lower(libc: ctypes.CDLL) -> tuple[bool, str, bool]:
    """Step 6: as root (inside a view) the host's nobody; every capability dropped. Returns
    (nobody, how tasks are capped, no capabilities)."""
    root_user, in_view, tasks = _STATE["root_user"], _STATE["in_view"], _STATE["tasks"]
    _drop_bounding_set(libc)
    # As root: the host's nobody. As any other user the kernel keeps that user's uid (seen as
    # 65534 inside), which owns nothing the view shows but the run folder.
    # Only inside the view: outside it nobody may not reach the interpreter (a pyenv under /root).
    nobody = _become_nobody() if root_user and in_view else (not root_user and in_view)
    if root_user and nobody and tasks == "none":  # no cgroup: cap nobody's tasks instead
        with contextlib.suppress(OSError, ValueError):
            value = _user_tasks(NOBODY) + _STATE["max_processes"]
            resource.setrlimit(resource.RLIMIT_NPROC, (value, value))
            tasks = "rlimit"
    elif tasks == "none" and not root_user:
        tasks = "rlimit"
    if _STATE["contained"]:  # the uid change cleared it
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return bool(nobody), tasks, _drop_privileges(libc)


def confine_run(home: str, disk_mb: int) -> bool:
    """In a child forked by a process hardened with ``keep_privileges``, before it runs any code
    under test: mount, IPC, network and PID namespaces of its own (the child stays outside as a
    shim that mirrors how the run ends; the run is PID 1 with a ``/proc`` of its own, and whatever
    it leaves running dies with it), ``home`` a fresh tmpfs capped at ``disk_mb``, then step 6.
    So no run sees what another wrote, in files, SysV or POSIX IPC, abstract sockets or the names
    of processes left behind. False if any part is refused: the caller must not run the code."""
    libc = ctypes.CDLL(None, use_errno=True)
    if _STATE.get("in_view"):
        if libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWNET) != 0:
            return False
        if _STATE.get("contained"):
            if not _contain(libc):  # returns in the run, PID 1 of its namespace
                return False
            if libc.mount(b"proc", b"/proc", b"proc",
                          _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None) != 0:
                return False
        try:
            _tmpfs(libc, home, f"size={int(disk_mb)}m,nr_inodes=16384,mode=700".encode())
            if _STATE["root_user"]:
                os.chown(home, NOBODY, NOBODY)
        except OSError:
            return False
    os.chdir(home)
    nobody, _, no_caps = _lower(libc)
    return no_caps and (nobody or not _STATE.get("in_view"))
