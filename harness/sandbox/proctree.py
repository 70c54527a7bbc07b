"""The process tree of an isolated worker: find it, stop it, kill it, reap it (Linux ``/proc``).

The worker runs in its own session and process group, and it and the parent are child
subreapers, so every process the student's code starts is, until it is killed, either in the
worker's session or a descendant of the worker (or, once the worker died, re-parented to us).
Root is exempt from RLIMIT_NPROC, so this is what bounds forks. As root the worker also has a PID
namespace of its own, which the kernel empties when the worker dies; without one, code that leaves
the session (``setsid``), clears the worker's subreaper flag and double-forks escapes the search.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time

from harness.sandbox.rundirs import (
    cgroup_name,
    pids_parent,
    pids_parent_v2,
    remove_cgroup,
    v1_parent,
)

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Orphans of the worker's tree re-parent to us, not to init, so we can find and reap them."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _proc_table() -> dict[int, tuple[int, int, int]]:
    """Every process as ``pid -> (ppid, pgid, sid)``, zombies included."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
            fields = data[data.rindex(b")") + 2:].split()
            table[int(name)] = (int(fields[1]), int(fields[2]), int(fields[3]))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return table


def _tree(table: dict[int, tuple[int, int, int]], root: int, seed: set[int]) -> set[int]:
    """The worker (``root``), its session and process group, and every descendant of those."""
    members = set(seed) | {root}
    members.update(pid for pid, (_, pgid, sid) in table.items() if root in (pgid, sid))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    stack = list(members)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in members:
                members.add(child)
                stack.append(child)
    members.discard(os.getpid())
    return members


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def kill_tree(root: int, include_root: bool) -> set[int]:
    """SIGSTOP the tree until no new member appears (a stopped process cannot fork); SIGKILL it."""
    stopped: set[int] = set()
    for _ in range(50):
        members = _tree(_proc_table(), root, stopped)
        if not include_root:
            members.discard(root)
        new = members - stopped
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        stopped |= new
    for pid in stopped:
        _signal(pid, signal.SIGKILL)
    return stopped


def reap(pids: set[int], deadline: float) -> None:
    """Wait until the killed processes are dead; reap those that are (or become) our children.

    A zombie whose parent is a living worker is left to the worker, which reaps between requests.
    """
    me, pending = os.getpid(), set(pids)
    while pending:
        for pid in list(pending):
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    data = f.read()
                fields = data[data.rindex(b")") + 2:].split()
                state, ppid = fields[0], int(fields[1])
            except (OSError, ValueError, IndexError):
                pending.discard(pid)  # gone: reaped by its parent
                continue
            if ppid == me:
                with contextlib.suppress(ChildProcessError):
                    if os.waitpid(pid, os.WNOHANG)[0] == 0:
                        continue
                pending.discard(pid)
            elif state == b"Z" and ppid not in pids:
                pending.discard(pid)
        if pending and time.monotonic() < deadline:
            time.sleep(0.002)
        else:
            return


def _small_file(path: str) -> bytes:
    """A /proc file, whole, with the fewest system calls (``open`` adds a stat, an ioctl and seeks;
    this runs after every request)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _has_children(pid: int) -> bool:
    """Whether ``pid`` has any child (cheap: one small file per thread)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        try:
            if _small_file(f"/proc/{pid}/task/{tid}/children").strip():
                return True
        except OSError:
            return True  # cannot tell: look properly
    return False


def _adopted_from(session: int, worker: int) -> bool:
    """Whether one of our own children is an orphan of the worker's session."""
    me = os.getpid()
    for tid in os.listdir(f"/proc/{me}/task"):
        try:
            pids = [int(p) for p in _small_file(f"/proc/{me}/task/{tid}/children").split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            if pid == worker:
                continue
            try:
                data = _small_file(f"/proc/{pid}/stat")
                if int(data[data.rindex(b")") + 2:].split()[3]) == session:
                    return True
            except (OSError, ValueError, IndexError):
                continue
    return False


def has_strays(root: int, session: int, contained: bool = False) -> bool:
    """Cheaply: whether ``root`` (the student's process) has children, or one of ours comes from
    the worker's ``session`` (the pid of the process we started).

    ``contained``: ``root`` is PID 1 of a PID namespace of its own. The kernel then re-parents
    every orphan of the namespace to ``root`` (a subreaper outside a namespace never adopts from
    inside it), so none can be ours, and only ``root``'s children are looked at."""
    return _has_children(root) or (not contained and _adopted_from(session, session))


def pids_cgroup(limit: int) -> str | None:
    """Best effort, as root: a cgroup of the ``pids`` controller (v1, else v2) that caps the tasks
    of a worker's whole tree at ``limit``, so a fork bomb stops at ``limit`` instead of exhausting
    the machine's pids before the call's time-out. The worker joins it first thing; its view
    holds no ``/sys``, so it stays there. None if unavailable (the worker, then ``nobody``, caps
    its tasks with ``RLIMIT_NPROC`` instead). Named after this process (``rundirs.cgroup_name``),
    so a sweep removes it if we are killed.
    """
    parent = pids_parent()
    if parent is None:
        parent = pids_parent_v2()
        if parent is None or not _enable_pids(parent):
            return None
    return _make_cgroup(parent, {"pids.max": str(limit)})


def _make_cgroup(parent: str, settings: dict[str, str], optional: tuple[str, ...] = ()) -> str | None:
    """A worker's cgroup below ``parent`` (named after this process, ``rundirs.cgroup_name``)
    with each of ``settings`` written (one named in ``optional`` only if the controller has it,
    as ``memory.memsw.*`` without swap accounting); None, and nothing left, if it cannot be made."""
    path = os.path.join(parent, cgroup_name("worker"))
    try:
        os.mkdir(path)
    except OSError:
        return None
    try:
        for name, value in settings.items():
            if name not in optional or os.path.exists(os.path.join(path, name)):
                with open(os.path.join(path, name), "w", encoding="ascii") as f:
                    f.write(value)
    except OSError:
        remove_cgroup(path, 0.0)
        return None
    return path


def _enable_pids(folder: str) -> bool:
    """cgroup v2: the ``pids`` controller enabled for the children of ``folder`` (its
    ``cgroup.subtree_control``); whether it is."""
    control = os.path.join(folder, "cgroup.subtree_control")
    try:
        with open(control, encoding="ascii") as f:
            if "pids" in f.read().split():
                return True
        with open(control, "w", encoding="ascii") as f:
            f.write("+pids")
    except OSError:
        return False
    return True


def memory_cgroup(limit_mb: int) -> str | None:
    """Best effort, as root: a cgroup of the v1 ``memory`` controller that caps what a worker's
    whole tree uses at ``limit_mb`` MiB, the pages of its tmpfs run folder and of its memfds
    included (``RLIMIT_AS`` bounds each process only: 64 tasks could take the machine's memory
    and the kernel's OOM killer would then pick any process, ol's or another submission's). The
    worker joins it first thing; the kernel's OOM killer acts inside it. None if unavailable
    (cgroup v2: a domain controller cannot be enabled below a cgroup holding processes)."""
    parent = v1_parent("memory")
    if parent is None:
        return None
    limit = str(limit_mb << 20)
    return _make_cgroup(parent, {"memory.limit_in_bytes": limit,
                                 "memory.memsw.limit_in_bytes": limit},
                        optional=("memory.memsw.limit_in_bytes",))
