"""The supervisor: the one way ol starts, limits, watches, kills and cleans up a process that runs
code under test (or runs harness code that starts such processes).

``Supervised`` is one such process: started in a session of its own, in a private run folder
named after its owner (``rundirs``), optionally in a pids cgroup; its death read without reaping
it (so its pid stays ours until its tree is swept); killed with its whole tree, reaped, and its
folder and cgroup removed, exactly once, with Ctrl-C and the runner's alarm held off meanwhile.
Its messages go through ``protocol.Connection``. Three kinds are built on it: the isolated worker
(``WorkerProcess``, below), the ``--mine`` fork server (``harness.own_tests.engine``) and the grading slots
(``harness.grade.slots``). ``Output`` drains a process's stdout and stderr, capped.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.paths import REPO_ROOT
from harness.sandbox import proctree
from harness.sandbox.capture import PAGE_BYTES, read_mirror
from harness.sandbox.codec import MalformedReply
from harness.sandbox.fs import remove_tree
from harness.sandbox.limits import Limits
from harness.sandbox.protocol import BadMessage, Connection, Died, Hung
from harness.sandbox.rundirs import (
    remove_cgroup,
    run_dir,
    sweep_folders,
    sweep_once,
    sweep_owned_cgroups,
    tag_of,
)
from harness.sandbox.worker import CODE as WORKER_CODE

# Starts a supervised process another way than ``Popen`` (see ``Supervised``).
Launch = Callable[[list, str, dict, dict], Any]

__all__ = ["Died", "Hung", "Limits", "Output", "Peer", "Supervised", "WorkerProcess",
           "describe_death"]

WORKER_SCRIPT = Path(__file__).resolve().parent / "worker.py"
MAX_MESSAGE = 32 << 20  # a chunk is flushed at 1 MiB; one reply of a 100000-element array is ~1 MiB
_F_SETPIPE_SZ = 1031
_SIGNAL_HINTS = {
    "SIGSEGV": "a crash in native code (ctypes, a C extension) or a runaway recursion",
    "SIGBUS": "a crash in native code", "SIGILL": "a crash in native code",
    "SIGFPE": "a crash in native code", "SIGABRT": "native code aborted",
    "SIGKILL": "out of memory, or killed from outside the harness",
    "SIGXFSZ": "the code wrote a file larger than the file size limit",
}


def describe_death(returncode: int | None, limits: Limits) -> tuple[str, str]:
    """What happened to a worker, and the likely cause (may be empty)."""
    if returncode is None:
        return ("the worker closed its reply channel",
                "did the code close or write to file descriptors?")
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = _SIGNAL_HINTS.get(name, "")
        if name == "SIGXCPU":
            hint = f"the CPU time limit of {limits.cpu_s} s"
        return f"the worker was killed by {name}", hint
    if returncode == 0:
        return "the worker exited with code 0", "did the code call os._exit?"
    return (f"the worker exited with code {returncode}",
            "did the code call os._exit, or break the worker?")


def worker_env(home: str) -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    }
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # numpy needs them on some machines
        if name in os.environ:
            env[name] = os.environ[name]
    return env


class Output:
    """The worker's stdout and stderr: the first ``cap`` bytes kept, the rest only counted."""

    def __init__(self, cap: int) -> None:
        self.cap, self.lock, self.data, self.cut = cap, threading.Lock(), bytearray(), 0

    def add(self, chunk: bytes) -> None:
        with self.lock:
            room = max(0, self.cap - len(self.data))
            self.data += chunk[:room]
            self.cut += max(0, len(chunk) - room)

    def text(self, clear: bool) -> str:
        with self.lock:
            text = self.data.decode("utf-8", errors="replace")
            if self.cut:
                text += f"\n[ol: {self.cut} more bytes of output were cut]"
            if clear:
                self.data, self.cut = bytearray(), 0
            return text


def drain_output(fd: int, output: Output, stop: threading.Event) -> None:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while not stop.is_set():
        if not poller.poll(100):
            continue
        try:
            data = os.read(fd, 1 << 20)
        except OSError:
            return
        if not data:
            return
        output.add(data)


def view_config(read: list[str], limits: Limits, code: tuple[str, ...] = ()) -> dict:
    """What a hardened process sees (``harden.harden``'s ``view``): the folders ``read`` read-only,
    ol's checkout hidden, the harness files ``code`` copied in, the run folder capped."""
    return {"read": read, "hide": [str(REPO_ROOT)], "disk_mb": limits.disk_mb,
            "code": {"root": str(REPO_ROOT), "files": list(code)} if code else None}


def rlimits(limits: Limits) -> dict[str, int]:
    """The resource limits a supervised process sets on itself (``worker.harden``)."""
    return {"memory_bytes": limits.memory_mb << 20, "cpu_s": int(limits.cpu_s),
            "file_bytes": int(limits.file_bytes), "max_processes": limits.max_processes,
            "disk_mb": int(limits.disk_mb)}


_HELD = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM}


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT (Ctrl-C), SIGTERM and SIGHUP (which stop ol as Ctrl-C does: ``harness.cli``) and
    SIGALRM (the runner's alarm) wait while a tree is killed: never a half-killed tree.

    Blocking them in the main thread is not enough: the kernel then gives a signal sent to the
    process to another thread (a ``Drained`` pipe's, a grading thread), and Python still runs its
    handler in the main thread, inside the kill. So their handlers are also swapped for one that
    notes the signal, and each one noted is raised again once the tree is dead."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers are the main thread's alone
        return
    noted: list[int] = []

    def later(signum: int, frame: object) -> None:
        noted.append(signum)

    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    handlers: dict[int, Any] = {}
    try:
        for sig in _HELD:
            if callable(signal.getsignal(sig)):
                handlers[sig] = signal.signal(sig, later)
        yield
    finally:
        for held, handler in handlers.items():
            signal.signal(held, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        for signum in dict.fromkeys(noted):
            signal.raise_signal(signum)


class Supervised:
    """One supervised process; see the module docstring. ``Popen`` arguments are passed through,
    but the session, the working directory (its run folder) and the pidfd are the supervisor's.
    ``env(home)`` gives the environment; ``cgroup_tasks`` caps the tasks of its whole tree;
    ``makes_run_folders``: a harness process whose own run folders its kill removes.
    ``launch(argv, home, env, popen)``: another way to start it (a zygote's fork,
    ``harness.sandbox.prestarted``), giving a child of this process with ``pid``, ``returncode``
    and ``wait`` as ``Popen`` has them, or None to start it with ``Popen`` after all."""

    def __init__(self, argv: list[str], kind: str, env: Callable[[str], dict[str, str]],
                 cgroup_tasks: int | None = None, makes_run_folders: bool = False,
                 cgroup_memory_mb: int | None = None, launch: Launch | None = None,
                 **popen: Any) -> None:
        sweep_once()  # what killed runs of earlier ol processes left behind
        proctree.become_subreaper()  # orphans of its tree come back to us: found, killed, reaped
        self.dead = False
        self.home = str(run_dir(kind))
        self.cgroup = self.memory_cgroup = None
        try:
            self.cgroup = proctree.pids_cgroup(cgroup_tasks) if cgroup_tasks else None
            self.memory_cgroup = (proctree.memory_cgroup(cgroup_memory_mb) if cgroup_memory_mb
                                  else None)
            self.argv = [a(self) if callable(a) else a for a in argv]
            launched = launch(self.argv, self.home, env(self.home), popen) if launch else None
            self.proc = launched or subprocess.Popen(self.argv, cwd=self.home, env=env(self.home),
                                                     start_new_session=True, **popen)
        except BaseException:
            remove_cgroup(self.cgroup, 0.0)
            remove_cgroup(self.memory_cgroup, 0.0)
            remove_tree(self.home)
            raise
        self.pid = self.proc.pid
        # A harness process (a grading slot) makes run folders of its own: killed, it cleans
        # nothing up, so its kill sweeps them. The code under test cannot write any (read-only).
        self.tag = tag_of(self.pid) if makes_run_folders else None
        self.pidfd = os.pidfd_open(self.pid) if hasattr(os, "pidfd_open") else None
        self.started = time.monotonic()

    def status(self, deadline: float) -> int | None:
        """The exit status (negative: the signal) without reaping, so the pid stays ours until
        ``kill`` has swept its session; None if it is still alive at ``deadline``."""
        while True:
            try:
                info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
            except ChildProcessError:
                return self.proc.returncode
            if info is not None and info.si_pid:
                return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)

    def cpu_s(self) -> float:
        """CPU time so far (a zombie's is final, with its reaped children's)."""
        try:
            data = Path(f"/proc/{self.pid}/stat").read_bytes()
            fields = data[data.rindex(b")") + 2:].split()
            return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def death(self, limits: Limits, wait_s: float = 2.0) -> tuple[str, str]:
        """What ended the process, and the likely cause (see ``describe_death``)."""
        returncode = self.status(time.monotonic() + wait_s)
        if returncode == -signal.SIGKILL and self.cpu_s() >= limits.cpu_s - 1:
            return "the worker was killed by SIGKILL", f"the CPU time limit of {limits.cpu_s} s"
        return describe_death(returncode, limits)

    def sweep(self, root: int | None = None, contained: bool = False) -> None:
        """Kill what runs below ``root`` (default: the process); the process itself stays.
        ``contained``: ``root`` is PID 1 of a PID namespace (``proctree.has_strays``)."""
        root = self.pid if root is None else root
        if proctree.has_strays(root, self.pid, contained):
            proctree.reap(proctree.kill_tree(root, include_root=False), time.monotonic() + 5.0)

    def kill(self) -> None:
        """Kill the whole tree, reap it, remove its cgroup and run folder. Idempotent."""
        if self.dead:
            return
        self.dead = True
        with _signals_held():
            members = proctree.kill_tree(self.pid, include_root=True)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)  # after this every orphan has been re-parented to us
            proctree.reap(members - {self.pid}, time.monotonic() + 5.0)
            remove_cgroup(self.cgroup, time.monotonic() + 1.0)
            remove_cgroup(self.memory_cgroup, time.monotonic() + 1.0)
            if self.pidfd is not None:
                os.close(self.pidfd)
            remove_tree(self.home)
            if self.tag is not None:  # a harness process (a slot) killed before its own clean-up
                sweep_folders(owner=self.tag)
                sweep_owned_cgroups(owner=self.tag)  # its workers' cgroups (their tasks killed)


class Drained:
    """A pipe for a supervised process's stdout and stderr, drained into ``output`` by a thread."""

    def __init__(self, output: Output, name: str) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.output, self.stop = output, threading.Event()
        self.thread = threading.Thread(target=drain_output, args=(self.read_fd, output, self.stop),
                                       name=name, daemon=True)
        self.started = False

    def start(self) -> None:
        """Once the process holds the write end: close ours and start draining."""
        os.close(self.write_fd)
        self.started = True
        self.thread.start()

    def close(self) -> None:
        if not self.started:
            os.close(self.write_fd)
        self.stop.set()
        if self.started:
            self.thread.join(timeout=2.0)
        if not self.thread.is_alive():  # else the thread still reads it: it ends with the pipe
            os.close(self.read_fd)


class Peer:
    """A supervised process that speaks ``protocol`` both ways and whose output is drained: the
    shape of the worker, the ``--mine`` fork server and a grading slot alike.

    ``argv(request_fd, reply_fd)`` gives the command line (an item may be a callable of the
    ``Supervised`` process, for what is known only once its run folder and cgroup exist);
    ``extra_fds`` are passed to the process too (and stay the caller's to close).
    """

    def __init__(self, argv: Callable[[int, int], list], kind: str,
                 env: Callable[[str], dict[str, str]], output: Output, message_limit: int,
                 cgroup_tasks: int | None = None, extra_fds: tuple[int, ...] = (),
                 cgroup_memory_mb: int | None = None,
                 pipe_bytes: int = 0, makes_run_folders: bool = False,
                 launch: Launch | None = None) -> None:
        self.drained = Drained(output, f"ol-drain-{kind}")
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        try:
            if pipe_bytes:  # fewer wake-ups for big messages and floods of output
                for fd in (req_w, resp_w, self.drained.write_fd):
                    with contextlib.suppress(OSError):
                        fcntl.fcntl(fd, _F_SETPIPE_SZ, pipe_bytes)
            self.process = Supervised(
                argv(req_r, resp_w), kind, env, cgroup_tasks, makes_run_folders, cgroup_memory_mb,
                launch, stdin=subprocess.DEVNULL,
                stdout=self.drained.write_fd, stderr=self.drained.write_fd,
                pass_fds=(req_r, resp_w, *extra_fds))
        except BaseException:
            for fd in (req_w, resp_r):
                os.close(fd)
            self.drained.close()
            raise
        finally:
            for fd in (req_r, resp_w):
                os.close(fd)
        self.drained.start()
        self.conn = Connection(resp_r, req_w, self.process.pidfd, message_limit)
        self.released = False

    def kill(self, release: bool = True) -> None:
        """Kill the process's tree (``Supervised.kill``) and, with ``release``, close the pipes:
        without, for a kill from a thread other than the one waiting on them (it sees the
        process die, returns, and releases them). Idempotent."""
        self.process.kill()
        if release and not self.released:
            self.released = True
            self.drained.close()
            for fd in (self.conn.read_fd, self.conn.write_fd):
                if fd is not None:  # always: the supervisor's connection has both ends
                    os.close(fd)


class WorkerProcess:
    """One isolated worker (``python -I harness/sandbox/worker.py``): a ``Supervised`` process,
    its two protocol pipes, its output and the shared progress page that names the call in
    progress. It knows nothing of targets, calls or replies: ``recv`` returns the next message as a
    dict, or raises ``Hung`` at a deadline or ``Died`` when the worker is gone (malformed or
    oversized data: ``codec.MalformedReply``)."""

    def __init__(self, python_dir: Path, import_name: str, limits: Limits, output: Output,
                 launch: Launch | None = None) -> None:
        self.ready = False
        progress = os.memfd_create("ol-progress", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(progress, PAGE_BYTES)
            # Sealed at its size: the worker may write the page, never shrink it under the
            # parent's mapping (a read past the end would kill the parent with SIGBUS).
            fcntl.fcntl(progress, fcntl.F_ADD_SEALS,
                        fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
            self._map = mmap.mmap(progress, PAGE_BYTES)

            def config(process: Supervised) -> str:
                return json.dumps({
                    "repo_root": str(REPO_ROOT), "python_dir": str(python_dir),
                    "import_name": import_name, "cgroup": process.cgroup,
                    "memory_cgroup": process.memory_cgroup,
                    "limits": rlimits(limits),
                    "view": view_config([str(python_dir)], limits, WORKER_CODE)})

            def argv(request_fd: int, reply_fd: int) -> list:
                return [sys.executable, "-I", str(WORKER_SCRIPT), str(request_fd), str(reply_fd),
                        str(progress), config]

            self.peer = Peer(argv, "worker", worker_env, output, MAX_MESSAGE,
                             limits.max_processes, (progress,), pipe_bytes=1 << 20,
                             cgroup_memory_mb=min(limits.tree_memory_mb,
                                                  limits.memory_mb + limits.disk_mb),
                             launch=launch)
        except BaseException:
            if hasattr(self, "_map"):
                self._map.close()
            raise
        finally:
            os.close(progress)
        self.process, self.conn = self.peer.process, self.peer.conn
        self.started = self.process.started
        self.root = self.process.pid  # until ``find_root`` knows better
        self.contained = False  # whether ``root`` is PID 1 of a PID namespace of its own
        self._view = memoryview(self._map)
        self.progress = self._view[:16].cast("q")

    @property
    def dead(self) -> bool:
        return self.process.dead

    def feed(self, frames: Iterator[bytes]) -> None:
        """Frames to write while waiting for replies (encoded lazily, in the parent's idle time)."""
        self.conn.feed(frames)

    def recv(self, deadline: float) -> dict:
        """The next message; ``Hung`` at the deadline, ``Died`` when the worker is gone."""
        try:
            return self.conn.recv(deadline)
        except BadMessage as exc:
            raise MalformedReply(f"the worker sent {exc}") from None

    def current_call(self, rid: int, count: int, fallback: int) -> int:
        """The index of the call in progress, from the worker's progress page if it is sane."""
        index = self.progress[1]
        return index if self.progress[0] == rid and fallback <= index < count else fallback

    def unsent_output(self) -> tuple[str, int]:
        """What the code printed since the worker's last message (a call that hangs, a worker that
        died): the page's mirror (``capture.Mirror``), untrusted, and the characters dropped."""
        if self._map.closed:
            return "", 0
        return read_mirror(self._view)

    def death(self, limits: Limits) -> tuple[str, str]:
        """What ended the worker's channel, and the likely cause (see ``describe_death``)."""
        return self.process.death(limits)

    def find_root(self, contained: bool) -> None:
        """The process that runs the student's code: in a PID namespace, the shim's only child."""
        if contained:
            with contextlib.suppress(OSError, ValueError, IndexError):
                pid = self.process.pid
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
                self.root = int(children[0])
                self.contained = True

    def sweep(self) -> None:
        """Kill what the calls left running below the worker; the worker itself stays."""
        self.process.sweep(self.root, self.contained)

    def kill(self) -> None:
        """Kill the whole tree, reap it, release every resource. Idempotent."""
        if self.process.dead:
            return
        self.peer.kill()
        self.progress.release()
        self._view.release()
        self._map.close()
