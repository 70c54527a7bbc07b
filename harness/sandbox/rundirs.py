"""Folders and cgroups of a run, named by the process that owns them, and the sweep of the dead.

Every temporary folder ol makes for code under test (a worker's home, a workspace's copy, a
grading or ``--mine`` directory) and every pids cgroup is named ``ol-KIND-PID.START-RANDOM``: the
owner's pid and its start time (clock ticks since boot, field 22 of ``/proc/PID/stat``), so a
reused pid is never taken for the owner. An owner killed with SIGKILL cleans nothing up; the next
ol process that starts code under test calls ``sweep`` once, which removes the folders and
cgroups of every owner that is gone (killing what still runs in such a cgroup first).

The temporary directory may be shared (``/tmp``): anyone can plant an ``ol-*`` folder there, and
rearrange it while a sweep removes it. So the sweep lists and opens every candidate relative to
a descriptor of the temporary directory, removes only a real folder (never a link) that this
user (the effective uid) owns with exactly the mode of a run folder (``RUN_DIR_MODE``, which no
one else can write into), checked on the opened folder itself, and empties it through
``remove_at`` (directory descriptors, never ``..``): nothing outside it is ever reached.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import signal
import stat
import tempfile
import time
from pathlib import Path

from harness.sandbox.fs import remove_at

_NAME = re.compile(r"^ol-[a-z]+(?:-[a-z]+)*-(\d+)\.(\d+)-[0-9a-z_]+$")

# The mode of every run folder, whatever the umask or a set-group-ID temporary directory gives.
RUN_DIR_MODE = 0o700
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def start_time(pid: int, zombie: bool = True) -> int | None:
    """The start time of ``pid`` in clock ticks since boot; None if there is no such process (or,
    unless ``zombie``, if it is a zombie: dead, only not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        fields = data[data.rindex(b")") + 2:].split()
        return None if fields[0] == b"Z" and not zombie else int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


@functools.cache
def _owner_tag() -> str:
    return f"{os.getpid()}.{start_time(os.getpid()) or 0}"


def owner_tag() -> str:
    """``PID.START`` of this process (computed again in a forked child)."""
    if _owner_tag().split(".", 1)[0] != str(os.getpid()):
        _owner_tag.cache_clear()
    return _owner_tag()


def run_dir(kind: str, parent: str | Path | None = None) -> Path:
    """A new private folder ``ol-KIND-PID.START-RANDOM`` (mode 0700) in ``parent`` (default: the
    temporary directory); ``sweep`` removes it once this process is gone."""
    path = tempfile.mkdtemp(prefix=f"ol-{kind}-{owner_tag()}-", dir=parent)
    fd = os.open(path, _DIR_FLAGS)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != RUN_DIR_MODE:
            os.fchmod(fd, RUN_DIR_MODE)
    finally:
        os.close(fd)
    return Path(path)


def cgroup_name(kind: str) -> str:
    return f"ol-{kind}-{owner_tag()}-{secrets.token_hex(6)}"


def owner_alive(name: str) -> bool:
    """Whether the owner named in ``name`` still runs (a name of another form: True, kept)."""
    match = _NAME.match(name)
    if match is None:
        return True
    pid, start = int(match.group(1)), int(match.group(2))
    return start_time(pid, zombie=False) == start


def tag_of(pid: int) -> str | None:
    """``PID.START`` of a process that still exists (a zombie included)."""
    start = start_time(pid)
    return None if start is None else f"{pid}.{start}"


def is_run_folder(st: os.stat_result) -> bool:
    """Whether ``st`` (of an opened folder) is what ``run_dir`` makes: a folder of this user's
    (the effective uid) of mode ``RUN_DIR_MODE`` exactly."""
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and stat.S_IMODE(st.st_mode) == RUN_DIR_MODE)


def sweep_folders(parent: str | Path | None = None, owner: str | None = None) -> list[str]:
    """Remove the run folders in ``parent`` (default: the temporary directory) whose owner is
    gone, or (``owner``, a ``PID.START`` tag) that one dead owner's; the names removed. Only
    folders that ``is_run_folder`` are touched (see the module docstring)."""
    removed: list[str] = []
    try:
        fd = os.open(os.fspath(parent or tempfile.gettempdir()),
                     os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return removed
    try:
        with os.scandir(fd) as entries:
            names = [e.name for e in entries if e.name.startswith("ol-")]
        for name in names:
            if owner is not None and f"-{owner}-" not in name:
                continue
            if (owner is not None or not owner_alive(name)) and remove_at(fd, name, is_run_folder):
                removed.append(name)
    except OSError:
        pass
    finally:
        os.close(fd)
    return removed


def sweep_cgroups(parent: str | None, owner: str | None = None) -> list[str]:
    """Remove the cgroups below ``parent`` whose owner is gone, or (``owner``, a ``PID.START``
    tag) that one dead owner's, killing their tasks first."""
    removed: list[str] = []
    if parent is None:
        return removed
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith("ol-")]
    except OSError:
        return removed
    for entry in entries:
        if owner is not None and f"-{owner}-" not in entry.name:
            continue
        if (owner is None and owner_alive(entry.name)) or not entry.is_dir(follow_symlinks=False):
            continue
        if remove_cgroup(entry.path, time.monotonic() + 1.0, kill=True):
            removed.append(entry.name)
    return removed


def remove_cgroup(path: str | None, deadline: float, kill: bool = False) -> bool:
    """Remove a cgroup once its last task is gone (EBUSY until then); ``kill``: SIGKILL what still
    runs in it first. Whether it is gone."""
    if path is None:
        return True
    while True:
        if kill:
            with contextlib.suppress(OSError, ValueError):
                for pid in Path(path, "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(int(pid), signal.SIGKILL)
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)


def pids_parent() -> str | None:
    """The folder of this process's cgroup in the v1 ``pids`` hierarchy, where workers' cgroups
    are made; None if there is none."""
    return v1_parent("pids")


def v1_parent(controller: str) -> str | None:
    """The folder of this process's cgroup in the v1 hierarchy of ``controller`` (``pids``,
    ``memory``); None if there is none."""
    mount = relative = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                fields = line.split()
                tail = fields[fields.index("-") + 1:]
                if tail[0] == "cgroup" and controller in tail[2].split(","):
                    mount = fields[4]
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controller in controllers.split(","):
                    relative = path
    if mount is None or relative is None:
        return None
    return mount + relative.rstrip("/")


@functools.cache
def sweep_once() -> None:
    """The sweep, once per process: the temporary directory and the pids cgroups."""
    sweep_folders()
    sweep_owned_cgroups()


def sweep_owned_cgroups(owner: str | None = None) -> None:
    """``sweep_cgroups`` in each hierarchy ol makes cgroups in (pids v1 and v2, memory)."""
    sweep_cgroups(pids_parent(), owner)
    sweep_cgroups(pids_parent_v2(), owner)
    sweep_cgroups(v1_parent("memory"), owner)


def pids_parent_v2(mountinfo: str = "/proc/self/mountinfo",
                   cgroup: str = "/proc/self/cgroup") -> str | None:
    """The folder of this process's cgroup in a cgroup v2 (unified) hierarchy whose ``pids``
    controller is available there, where workers' cgroups are made on a host without the v1
    ``pids`` hierarchy (today's Debian, Ubuntu, Fedora); None if there is none. ``pids`` is a
    threaded controller: it may be enabled below a cgroup that holds processes (ol's own)."""
    mount = root = relative = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open(mountinfo, encoding="utf-8") as f:
            for line in f:
                fields = line.split()
                if fields[fields.index("-") + 1] == "cgroup2":
                    root, mount = fields[3], fields[4]
        with open(cgroup, encoding="utf-8") as f:
            for line in f:
                hierarchy, controllers, path = line.rstrip("\n").split(":", 2)
                if hierarchy == "0" and controllers == "":
                    relative = path
    if mount is None or root is None or relative is None:
        return None
    if root != "/" and not relative.startswith(root.rstrip("/") + "/") and relative != root:
        return None  # our cgroup is outside what this mount shows
    inside = relative[len(root.rstrip("/")):] if root != "/" else relative
    folder = mount.rstrip("/") + inside.rstrip("/")
    try:
        with open(os.path.join(folder, "cgroup.controllers"), encoding="ascii") as f:
            if "pids" not in f.read().split():
                return None
    except OSError:
        return None
    return folder
