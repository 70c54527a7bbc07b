"""One worker process seen from the parent: spawn, framing, death, kill (for ``harness.sandbox.isolated``).

A ``WorkerProcess`` owns the process started as ``python -I harness/sandbox/worker.py``, its two protocol
pipes (length-prefixed JSON), the pipe that carries the student's stdout and stderr (drained in a
thread, capped), the shared progress page that names the call in progress, its temporary
directory and its pids cgroup. It knows nothing of targets, calls or replies: ``recv`` returns
the next message as a dict, or raises ``Hung`` at a deadline or ``Died`` when the worker is gone
(malformed or oversized data: ``codec.MalformedReply``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.sandbox import proctree
from harness.sandbox.codec import MalformedReply
from harness.course import REPO_ROOT

WORKER_SCRIPT = Path(__file__).resolve().parent / "worker.py"
MAX_MESSAGE = 32 << 20  # a chunk is flushed at 1 MiB; one reply of a 100000-element array is ~1 MiB
_HEADER = struct.Struct(">I")
_F_SETPIPE_SZ = 1031
_SIGNAL_HINTS = {
    "SIGSEGV": "a crash in native code (ctypes, a C extension) or a runaway recursion",
    "SIGBUS": "a crash in native code", "SIGILL": "a crash in native code",
    "SIGFPE": "a crash in native code", "SIGABRT": "native code aborted",
    "SIGKILL": "out of memory, or killed from outside the harness",
    "SIGXFSZ": "the code wrote a file larger than the file size limit",
}


@dataclass(frozen=True)
class Limits:
    """What one worker may use. Soft = hard, set before the student's code loads."""

    call_timeout_s: float = 10.0  # wall clock per call, enforced by the parent
    test_timeout_s: float = 120.0  # wall clock for all the calls of one catalog test, likewise
    memory_mb: int = 4096  # RLIMIT_AS: numpy imports comfortably under 4 GiB
    cpu_s: int = 600  # RLIMIT_CPU over the worker's whole life: a backstop only
    output_bytes: int = 65536  # stdout + stderr kept; the rest is counted and cut
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE
    max_processes: int = 64  # tasks of the tree: a pids cgroup as root, else RLIMIT_NPROC
    import_timeout_s: float = 30.0  # interpreter start, numpy and the student's import


class Hung(Exception):
    """No message before the deadline."""


class Died(Exception):
    """The worker's channel closed or the worker exited."""


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


class BadMessage(Exception):
    """What arrived where a length-prefixed JSON object was due; the text says what it was."""


def next_message(buf: bytearray, limit: int) -> dict | None:
    """The next length-prefixed JSON object of ``buf``, removed from it; None until one is whole.

    ``BadMessage``, saying what came instead: a frame over ``limit`` bytes, or data that is not a JSON
    object. Untrusted input (the isolated worker's, ``harness.mine``'s test server's).
    """
    if len(buf) < 4:
        return None
    size = _HEADER.unpack_from(buf)[0]
    if size > limit:
        raise BadMessage(f"a message of {size} bytes (the limit is {limit})")
    if len(buf) < 4 + size:
        return None
    body = bytes(buf[4:4 + size])
    del buf[:4 + size]
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise BadMessage(f"data that is not a message ({type(exc).__name__})") from None
    if not isinstance(message, dict):
        raise BadMessage("a message that is not an object")
    return message


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


class WorkerProcess:
    """One worker process: its pipes, its progress page, its temporary directory."""

    def __init__(self, python_dir: Path, import_name: str, limits: Limits, output: Output) -> None:
        self.tmp = tempfile.mkdtemp(prefix="ol-worker-")
        self.buf = bytearray()
        self.ready = self.dead = False
        self.frames: Iterator[bytes] | None = None
        self.out = memoryview(b"")
        try:
            self._launch(python_dir, import_name, limits)
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.started = time.monotonic()
        self.root = self.proc.pid  # until ``find_root`` knows better
        self.pidfd = os.pidfd_open(self.proc.pid) if hasattr(os, "pidfd_open") else None
        os.set_blocking(self.req_w, False)
        self.poller, self.write_poller = select.poll(), select.poll()
        for poller in (self.poller, self.write_poller):
            poller.register(self.resp_r, select.POLLIN)
            if self.pidfd is not None:
                poller.register(self.pidfd, select.POLLIN)
        self.write_poller.register(self.req_w, select.POLLOUT)
        self.stop = threading.Event()
        self.drain = threading.Thread(target=drain_output, args=(self.out_r, output, self.stop),
                                      name=f"ol-drain-{self.proc.pid}", daemon=True)
        self.drain.start()

    def _launch(self, python_dir: Path, import_name: str, limits: Limits) -> None:
        """The pipes, the progress page and the process; on failure nothing stays open."""
        self.cgroup = proctree.pids_cgroup(limits.max_processes)
        config = json.dumps({
            "repo_root": str(REPO_ROOT), "python_dir": str(python_dir), "import_name": import_name,
            "cgroup": self.cgroup,
            "limits": {"memory_bytes": limits.memory_mb << 20, "cpu_s": int(limits.cpu_s),
                       "file_bytes": int(limits.file_bytes), "max_processes": limits.max_processes},
        })
        req_r, self.req_w = os.pipe()
        self.resp_r, resp_w = os.pipe()
        self.out_r, out_w = os.pipe()
        progress = os.memfd_create("ol-progress")
        child_ends = (req_r, resp_w, out_w, progress)
        try:
            os.ftruncate(progress, 16)
            for fd in (self.req_w, resp_w, out_w):  # fewer wake-ups for big messages and floods
                with contextlib.suppress(OSError):
                    fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
            self._map = mmap.mmap(progress, 16)
            self.proc = subprocess.Popen(
                [sys.executable, "-I", str(WORKER_SCRIPT), str(req_r), str(resp_w), str(progress),
                 config],
                stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, cwd=self.tmp,
                env=worker_env(self.tmp), pass_fds=(req_r, resp_w, progress),
                start_new_session=True)
        except BaseException:
            if hasattr(self, "_map"):
                self._map.close()
            for fd in (*child_ends, self.req_w, self.resp_r, self.out_r):
                os.close(fd)
            proctree.remove_cgroup(self.cgroup, 0.0)
            raise
        for fd in child_ends:
            os.close(fd)
        self._view = memoryview(self._map)
        self.progress = self._view.cast("q")

    def feed(self, frames: Iterator[bytes]) -> None:
        """Frames to write while waiting for replies (encoded lazily, in the parent's idle time)."""
        self.frames, self.out = frames, memoryview(b"")

    def _write_some(self) -> bool:
        """Write what the request pipe takes now; whether anything is left to write."""
        while True:
            if not self.out:
                frame = next(self.frames, None) if self.frames is not None else None
                if frame is None:
                    self.frames = None
                    return False
                self.out = memoryview(frame)
            try:
                self.out = self.out[os.write(self.req_w, self.out):]
            except BlockingIOError:
                return True
            except BrokenPipeError:
                raise Died() from None

    def _parse(self) -> dict | None:
        try:
            return next_message(self.buf, MAX_MESSAGE)
        except BadMessage as exc:
            raise MalformedReply(f"the worker sent {exc}") from None

    def recv(self, deadline: float) -> dict:
        """The next message; ``Hung`` at the deadline, ``Died`` when the worker is gone."""
        while True:
            message = self._parse()
            if message is not None:
                return message
            writing = self._write_some()
            wait = deadline - time.monotonic()
            if self.pidfd is None:
                wait = min(wait, 0.1)
            poller = self.write_poller if writing else self.poller
            events = dict(poller.poll(max(0, int(wait * 1000 + 1))))  # 0: past the deadline
            if events.get(self.resp_r):
                data = os.read(self.resp_r, 1 << 20)
                if not data:
                    raise Died()
                self.buf += data
            elif events.get(self.pidfd) or (self.pidfd is None and self.proc.poll() is not None):
                raise Died()
            if time.monotonic() >= deadline:  # even while bytes trickle in: a message is due
                message = self._parse()
                if message is None:
                    raise Hung()
                return message

    def current_call(self, rid: int, count: int, fallback: int) -> int:
        """The index of the call in progress, from the worker's progress page if it is sane."""
        index = self.progress[1]
        return index if self.progress[0] == rid and fallback <= index < count else fallback

    def _status(self, deadline: float) -> int | None:
        """The exit status (negative: the signal) without reaping, so the pid stays ours until
        ``kill`` has swept its session; None if the worker is still alive at ``deadline``."""
        while True:
            try:
                info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
            except ChildProcessError:
                return self.proc.returncode
            if info is not None and info.si_pid:
                return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)

    def death(self, limits: Limits) -> tuple[str, str]:
        """What ended the worker's channel, and the likely cause (see ``describe_death``)."""
        returncode = self._status(time.monotonic() + 2.0)
        try:  # a zombie's CPU time (with its reaped children's: a shim's) is final
            data = Path(f"/proc/{self.proc.pid}/stat").read_bytes()
            fields = data[data.rindex(b")") + 2:].split()
            cpu_s = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            cpu_s = 0.0
        if returncode == -signal.SIGKILL and cpu_s >= limits.cpu_s - 1:
            return "the worker was killed by SIGKILL", f"the CPU time limit of {limits.cpu_s} s"
        return describe_death(returncode, limits)

    def find_root(self, contained: bool) -> None:
        """The process that runs the student's code: in a PID namespace, the shim's only child."""
        if contained:
            with contextlib.suppress(OSError, ValueError, IndexError):
                pid = self.proc.pid
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
                self.root = int(children[0])

    def sweep(self) -> None:
        """Kill what the calls left running below the worker; the worker itself stays."""
        if proctree.has_strays(self.root, self.proc.pid):
            proctree.reap(proctree.kill_tree(self.root, include_root=False),
                          time.monotonic() + 5.0)

    def kill(self) -> None:
        """Kill the whole tree, reap it, release every resource. Idempotent."""
        if self.dead:
            return
        self.dead = True
        members = proctree.kill_tree(self.proc.pid, include_root=True)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)  # after this every orphan has been re-parented to us
        proctree.reap(members - {self.proc.pid}, time.monotonic() + 5.0)
        proctree.remove_cgroup(self.cgroup, time.monotonic() + 1.0)
        self.stop.set()
        self.drain.join(timeout=2.0)
        for fd in (self.req_w, self.resp_r, self.pidfd):
            if fd is not None:
                os.close(fd)
        if not self.drain.is_alive():
            os.close(self.out_r)
        self.progress.release()
        self._view.release()
        self._map.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
