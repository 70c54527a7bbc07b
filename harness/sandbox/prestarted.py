"""Pre-started workers: the parent's handle on a zygote (``harness.sandbox.zygote``).

A process that will start many isolated workers (a grading slot checks one submission after
another, each in a fresh worker) calls ``start`` once, early, so the zygote's start (the
interpreter, numpy, the worker's loop) overlaps the caller's own warm-up. From then on
``WorkerProcess`` asks the zygote for each worker (``launch``), which costs a fork instead of an
interpreter and numpy; the worker is re-parented to the caller at once (``Supervised`` makes the
caller a subreaper) and is then waited for, killed and reaped like one it started itself. Without
a zygote, or if it died or fails to answer within ``SPAWN_TIMEOUT_S``, a worker is started as a
fresh ``python -I`` as before: the zygote is a saving, never a requirement.

The zygote holds nothing secret: it is a fresh interpreter started before the caller reads a
submission, with only the control socket; it imports no catalog, reference or seed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from harness.paths import REPO_ROOT
from harness.sandbox.supervisor import Output, Supervised, worker_env

ZYGOTE_SCRIPT = Path(__file__).resolve().parent / "zygote.py"
READY_TIMEOUT_S = 30.0
SPAWN_TIMEOUT_S = 10.0
OUTPUT_BYTES = 16 << 10


class Adopted:
    """A worker the zygote forked and this process adopted: what ``Supervised`` needs of a
    ``Popen`` (``pid``, ``returncode``, ``wait``)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere (a sweep of strays): gone all the same
                self.returncode = -signal.SIGKILL
                break
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0.0)
            time.sleep(0.005)
        return self.returncode


class Zygote:
    """One zygote process, supervised (its tree, run folder and cgroup go with it), and its
    control socket. ``launch`` is safe from several threads (one request at a time)."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.output = Output(OUTPUT_BYTES)
        self.lock = threading.Lock()
        self.ready = False
        try:
            self.process = Supervised(
                [sys.executable, "-I", str(ZYGOTE_SCRIPT), str(theirs.fileno()), str(REPO_ROOT)],
                "zygote", worker_env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, pass_fds=(theirs.fileno(),))
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.control = ours

    def _answer(self, timeout: float) -> dict[str, Any] | None:
        self.control.settimeout(timeout)
        try:
            data = self.control.recv(4096)
        except OSError:
            return None
        try:
            answer = json.loads(data) if data else None
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None

    def alive(self) -> bool:
        """Whether the zygote answers: it said ready (waiting for it the first time)."""
        if not self.ready and not self.process.dead:
            answer = self._answer(READY_TIMEOUT_S)
            self.ready = answer is not None and answer.get("op") == "ready"
            if not self.ready:
                self.close()
        return self.ready and not self.process.dead

    def launch(self, argv: list[Any], home: str, env: dict[str, str],
               popen: dict[str, Any]) -> Adopted | None:
        """A worker for ``argv`` (``python -I worker.py REQUEST REPLY PROGRESS CONFIG``, as
        ``WorkerProcess`` builds it), forked by the zygote; None if the zygote cannot give one
        (the caller starts the worker itself)."""
        with self.lock:
            if not self.alive():
                return None
            fds = [int(argv[3]), int(argv[4]), int(argv[5]), int(popen["stdout"])]
            request = json.dumps({"config": json.loads(argv[6]), "home": home, "env": env})
            try:
                socket.send_fds(self.control, [request.encode()], fds)
            except OSError:
                self.close()
                return None
            answer = self._answer(SPAWN_TIMEOUT_S)
            pid = answer.get("pid") if answer is not None else None
            if type(pid) is not int or pid <= 0:
                self.close()
                return None
            return Adopted(pid)

    def close(self) -> None:
        self.ready = False
        self.control.close()
        self.process.kill()


_CURRENT: list[Zygote] = []  # this process's zygote, if it started one


def start() -> None:
    """Start this process's zygote (once); its workers come from it from now on."""
    if not _CURRENT:
        _CURRENT.append(Zygote())


def current() -> Zygote | None:
    """This process's zygote, if it started one that still runs."""
    return _CURRENT[0] if _CURRENT and not _CURRENT[0].process.dead else None


def stop() -> None:
    """Kill this process's zygote (its workers are the caller's and stay)."""
    while _CURRENT:
        _CURRENT.pop().close()
