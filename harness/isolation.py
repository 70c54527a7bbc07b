"""Untrusted code in a worker process with limits: the parent side of the trust boundary.

``IsolatedTarget`` starts ``harness/worker.py`` at construction, so the worker's start-up (an
interpreter, numpy, the student's import) overlaps with the parent's own work. Each ``map`` is one
request, written in frames while the first calls already run; the worker streams the encoded
replies back in chunks, and the parent decodes them with ``codec.decode_reply`` only (no pickle,
no eval), enforcing a per-call wall-clock limit between chunks. Anything else is a failure of the
call, never a value:

- no reply in time: the whole process tree is killed, ``TargetTimedOut``;
- the worker died or closed its channel: ``TargetCrashed`` naming the exit code or the signal;
- malformed, oversized or out-of-order data: ``TargetCrashed``.

After any of these the next call starts a fresh worker. The worker runs with resource limits,
without capabilities, without network and (as root) with a read-only view of the file system but
for its temporary directory; ``harness.proctree`` finds and kills whatever it forks, after every
request and on ``close``. Not thread-safe: one target per thread.

Longer than the house 400 lines: the worker's life cycle (spawn, framing, death, kill) and the
target that drives it only make sense read together.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import secrets
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import numpy as np

from harness import proctree
from harness.codec import MalformedReply, Reply, decode_reply, encode
from harness.course import PACKAGE_DIR, REPO_ROOT
from harness.sources import RecordingSource, ScriptedSource
from harness.target import Target, TargetCrashed, TargetTimedOut, show_args
from harness.worker import CHUNK_S

WORKER_SCRIPT = PACKAGE_DIR / "worker.py"
MAX_MESSAGE = 32 << 20  # a chunk is flushed at 1 MiB; one reply of a 100000-element array is ~1 MiB
MAX_DRAWS = 10**8  # per call; more than a worker can draw within any sane call limit
FIRST_PIECE, PIECE, FRAME_BYTES = 256, 4096, 1 << 20  # how the parent cuts a request into frames
_HEADER = struct.Struct(">I")
_JSON_SCALARS = (float, int, bool)
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
    memory_mb: int = 4096  # RLIMIT_AS: numpy imports comfortably under 4 GiB
    cpu_s: int = 600  # RLIMIT_CPU over the worker's whole life: a backstop only
    output_bytes: int = 65536  # stdout + stderr kept; the rest is counted and cut
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE
    max_processes: int = 64  # RLIMIT_NPROC, for non-root users only
    import_timeout_s: float = 30.0  # interpreter start, numpy and the student's import


@dataclass(frozen=True)
class ImportProblem:
    """Why the student's module did not import: kind is syntax, import, crash or timeout."""

    kind: str
    message: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f" ({self.file}, line {self.line})" if self.file and self.line else ""
        return f"{self.message}{where}"


class _Hung(Exception):
    """No message before the deadline."""


class _Died(Exception):
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


def _worker_env(home: str) -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    }
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # numpy needs them on some machines
        if name in os.environ:
            env[name] = os.environ[name]
    return env


class _Output:
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


def _drain(fd: int, output: _Output, stop: threading.Event) -> None:
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


class _Worker:
    """One worker process: its pipes, its progress page, its temporary directory."""

    def __init__(self, python_dir: Path, import_name: str, limits: Limits, output: _Output) -> None:
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
        self.drain = threading.Thread(target=_drain, args=(self.out_r, output, self.stop),
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
                env=_worker_env(self.tmp), pass_fds=(req_r, resp_w, progress),
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
                raise _Died() from None

    def _parse(self) -> dict | None:
        if len(self.buf) < 4:
            return None
        size = _HEADER.unpack_from(self.buf)[0]
        if size > MAX_MESSAGE:
            raise MalformedReply(f"the worker sent a message of {size} bytes "
                                 f"(the limit is {MAX_MESSAGE})")
        if len(self.buf) < 4 + size:
            return None
        body = bytes(self.buf[4:4 + size])
        del self.buf[:4 + size]
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise MalformedReply("the worker sent data that is not a message "
                                 f"({type(exc).__name__})") from None
        if not isinstance(message, dict):
            raise MalformedReply("the worker sent a message that is not an object")
        return message

    def recv(self, deadline: float) -> dict:
        """The next message; ``_Hung`` at the deadline, ``_Died`` when the worker is gone."""
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
                    raise _Died()
                self.buf += data
            elif events.get(self.pidfd) or (self.pidfd is None and self.proc.poll() is not None):
                raise _Died()
            if time.monotonic() >= deadline:  # even while bytes trickle in: a message is due
                message = self._parse()
                if message is None:
                    raise _Hung()
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
        returncode = self._status(time.monotonic() + 0.5)
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
                          time.monotonic() + 1.0)

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
        proctree.reap(members - {self.proc.pid}, time.monotonic() + 2.0)
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


def _colon(hint: str) -> str:
    return f": {hint}" if hint else ""


def _short(fn: str, args: tuple) -> str:
    shown = show_args(args)
    return f"{fn}({shown if len(shown) <= 200 else shown[:200] + '...'})"


class IsolatedTarget(Target):
    """A student's module, called in a worker process with limits; see the module docstring."""

    kind = "isolated"

    def __init__(self, label: str, python_dir: Path, import_name: str, functions: Sequence[str],
                 returns: dict[str, str], limits: Limits | None = None) -> None:
        self.python_dir = Path(python_dir).resolve()
        self.import_name = import_name
        self.limits = limits or Limits()
        self._output = _Output(self.limits.output_bytes)
        self._problem: ImportProblem | None = None
        self._worker: _Worker | None = None
        self._closed = False
        self._received = 0  # replies of the current request so far: names the call that failed
        self.sandboxed = False  # whether the last worker runs with a read-only file system
        self.contained = False  # and in a PID namespace of its own
        super().__init__(label, functions, returns)
        proctree.become_subreaper()
        self._worker = self._spawn()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _spawn(self) -> _Worker:
        return _Worker(self.python_dir, self.import_name, self.limits, self._output)

    # -- life cycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Kill and reap the worker and everything it started; remove its directory."""
        self._closed = True
        self._discard()

    def _discard(self) -> None:
        worker, self._worker = self._worker, None
        if worker is None:
            return
        # Block SIGINT (Ctrl-C) and SIGALRM (the runner's alarm) while killing: no half-killed tree.
        main = threading.current_thread() is threading.main_thread()
        blocked = {signal.SIGINT, signal.SIGALRM}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked) if main else None
        try:
            worker.kill()
        finally:
            if old is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def output(self, clear: bool = False) -> str:
        """What the student's code printed (capped at ``limits.output_bytes``, with a note)."""
        return self._output.text(clear)

    # -- the import ---------------------------------------------------------------------------
    def import_status(self) -> ImportProblem | None:
        """None if the module imported; else why not. Blocks until the worker reported."""
        if self._problem is None and not self._closed:
            if self._worker is None:
                self._worker = self._spawn()
            if not self._worker.ready:
                self._await_ready(self._worker)
        return self._problem

    def _await_ready(self, worker: _Worker) -> None:
        name, limit = self.import_name, self.limits.import_timeout_s
        try:
            message = worker.recv(worker.started + limit)
            if message.get("op") != "ready":
                raise MalformedReply(f"expected the import report, got op {message.get('op')!r}")
            worker.ready = message.get("problem") is None
            self.sandboxed = message.get("sandboxed") is True
            self.contained = message.get("contained") is True
            worker.find_root(self.contained)
            if not worker.ready:
                self._problem = _problem(message["problem"])
        except _Hung:
            self._problem = ImportProblem(
                "timeout", f"importing {name} did not finish within {limit:g} s")
        except _Died:
            what, hint = worker.death(self.limits)
            self._problem = ImportProblem("crash", f"{what} while importing {name}{_colon(hint)}")
        except (MalformedReply, KeyError, TypeError, ValueError) as exc:
            self._problem = ImportProblem(
                "crash", f"the worker sent an invalid import report: {exc}")
        except BaseException:
            self._discard()
            raise
        if self._problem is not None:
            self._discard()
        else:
            worker.sweep()  # anything the import started

    def _live_worker(self) -> _Worker:
        if self._closed:
            raise RuntimeError(f"the isolated target {self.label!r} is closed")
        if self._problem is None and self._worker is None:
            self._worker = self._spawn()
        if self._problem is None and not self._worker.ready:
            self._await_ready(self._worker)
        if self._problem is None:
            return self._worker
        if self._problem.kind == "timeout":
            raise TargetTimedOut(str(self._problem))
        raise TargetCrashed(f"{self.import_name} did not import: {self._problem}")

    # -- calls ----------------------------------------------------------------------------------
    def _replies(self, fn: str, calls: Sequence[tuple], kwargs: dict) -> list[Reply]:
        if not calls:
            return []
        worker = self._live_worker()
        rid = secrets.randbits(62)
        try:
            replies = self._exchange(worker, rid, fn, calls, kwargs)
            worker.sweep()
            return replies
        except _Hung:
            index = worker.current_call(rid, len(calls), self._received)
            self._discard()
            raise TargetTimedOut(f"{_short(fn, calls[index])} did not return within "
                                 f"{self.limits.call_timeout_s:g} s") from None
        except _Died:
            index = worker.current_call(rid, len(calls), self._received)
            what, hint = worker.death(self.limits)
            self._discard()
            raise TargetCrashed(f"{what} during {_short(fn, calls[index])}{_colon(hint)}") from None
        except MalformedReply as exc:
            self._discard()
            raise TargetCrashed(f"{fn}: {exc}; an answer must come back as a return value"
                                ) from None
        except BaseException:  # KeyboardInterrupt included: never leave a worker mid-request
            self._discard()
            raise

    def _exchange(self, worker: _Worker, rid: int, fn: str, calls: Sequence[tuple],
                  kwargs: dict) -> list[Reply]:
        limit = self.limits.call_timeout_s + CHUNK_S  # a chunk may hold CHUNK_S of earlier calls
        self._received = 0
        worker.feed(_frames(rid, fn, calls, kwargs))
        replies: list[Reply] = []
        last = time.monotonic()
        while len(replies) < len(calls):
            message = worker.recv(last + limit)
            last = time.monotonic()
            if (message.get("op") != "replies" or message.get("id") != rid
                    or message.get("start") != len(replies)):
                raise MalformedReply("the worker sent a reply out of order")
            replies.extend(_chunk(message, len(calls) - len(replies)))
            self._received = len(replies)
        if worker.buf or worker.frames is not None or worker.out:
            raise MalformedReply("the worker answered calls it was not sent, or sent more")
        return replies

    def _sync_sources(self, sources: list[RecordingSource], draws: list[int]) -> None:
        """Replay into the test's sources what the worker's copies drew, once per object."""
        if len(draws) != len(sources):
            self._escape(TargetCrashed(f"the worker reported draws for {len(draws)} of "
                                       f"{len(sources)} sources"))
        seen: set[int] = set()
        for source, count in zip(sources, draws):
            if id(source) in seen:
                continue
            seen.add(id(source))
            most = (len(source.values) - len(source.drawn) if isinstance(source, ScriptedSource)
                    else MAX_DRAWS)
            if not 0 <= count <= most:
                self._escape(TargetCrashed(f"the worker reported {count} draws from a source "
                                           f"that allows at most {most}"))
            source.replay(count)


def _chunk(message: dict, room: int) -> list[Reply]:
    """The replies of one chunk: each distinct reply decoded once, then one per call, in order."""
    table, index = message.get("table"), message.get("index")
    if not isinstance(table, list) or not isinstance(index, list) or not 0 < len(index) <= room:
        raise MalformedReply("the worker sent a malformed chunk of replies")
    decoded = [decode_reply(item) for item in table]
    if not all(type(i) is int for i in index) or min(index) < 0 or max(index) >= len(decoded):
        raise MalformedReply("the worker sent a malformed chunk of replies")
    if len(index) > len(decoded):  # one Reply for several calls: only an immutable value
        for i, uses in Counter(index).items():
            if uses > 1 and not _immutable(decoded[i].value):
                raise MalformedReply("the worker shared a mutable reply between calls")
    return [decoded[i] for i in index]


def _immutable(value: Any) -> bool:
    if type(value) is tuple:
        return all(_immutable(v) for v in value)
    return value is None or type(value) in (bool, int, float) or isinstance(value, np.generic)


def _problem(data: Any) -> ImportProblem:
    kind = data["kind"]
    if kind not in ("syntax", "import", "crash", "timeout"):
        raise ValueError(f"unknown kind {kind!r}")
    line = data.get("line")
    return ImportProblem(kind, str(data["message"])[:2000],
                         str(data["file"])[:1000] if data.get("file") else None,
                         line if type(line) is int else None)


def _frames(rid: int, fn: str, calls: Sequence[tuple], kwargs: dict) -> Iterator[bytes]:
    """The request as frames: a small first piece so the worker starts at once, then larger ones.

    A frame ends after ``PIECE`` calls or about ``FRAME_BYTES`` of arrays. A source passed several
    times is sent once and shared by the calls, as in-process; plain floats, ints and bools travel
    as JSON numbers (exact: ``repr`` round-trips).
    """
    shared: list[RecordingSource] = []
    index: dict[int, int] = {}
    size = 0

    def arg(value: Any) -> Any:
        nonlocal size
        if type(value) in _JSON_SCALARS:
            return value
        if isinstance(value, RecordingSource):
            if id(value) not in index:
                index[id(value)] = len(shared)
                shared.append(value)
            return {"t": "sref", "i": index[id(value)]}
        encoded = encode(value)
        size += len(encoded.get("data", "")) + 64
        return encoded

    def frame(message: dict, piece: list) -> bytes:
        message["calls"], message["sources"] = piece, [s.spec() for s in shared[known:]]
        data = json.dumps(message, separators=(",", ":")).encode("utf-8")
        return _HEADER.pack(len(data)) + data

    message: dict[str, Any] = {"op": "call", "id": rid, "fn": fn, "count": len(calls),
                               "kwargs": {str(k): arg(v) for k, v in kwargs.items()}}
    known, step, piece = 0, FIRST_PIECE, []
    for args in calls:
        piece.append([arg(a) for a in args])
        if len(piece) >= step or size >= FRAME_BYTES:
            yield frame(message, piece)
            known, step, piece, size = len(shared), PIECE, [], 0
            message = {"op": "more", "id": rid}
    if piece:
        yield frame(message, piece)
