"""Grading slots: long-lived harness processes that each check many submissions, one at a time.

Why not one ``ol check`` process per submission: a cold check of a correct M07.6 spends 42% of
its CPU on start-up (the interpreter, numpy, scipy, the catalog and its seeded inputs; measured in
docs/grading.md); a slot pays that once and then runs ``run_check`` per submission, exactly as ``ol check`` does (the student's
code still runs in a fresh isolated worker with limits for every submission). Why not threads in
the grading process: the catalog's own work (exact enumeration, chi-square) is Python on the
harness side, so threads would share one core.

A slot is still a process of its own, so the parent can bound a whole submission: past its budget
(``--submission-timeout``) the slot and everything below it are killed and a fresh slot takes its
place. A slot is retired after ``RECYCLE_AFTER`` submissions, which bounds its memory. It exits by
itself when the process that started it dies. Requests and replies are JSON lines on its stdin
and on a private copy of its stdout (the real stdout is /dev/null, so a stray print is harmless).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from harness import proctree

RECYCLE_AFTER = 100  # submissions per slot process, then a fresh one
START_TIMEOUT_S = 120.0  # interpreter, numpy, scipy, the catalog: a few seconds on a quiet machine
MAX_REPLY = 64 << 20
INTERNAL = "internal"


# -- inside a slot ---------------------------------------------------------------------------------

def grade_workspace(module_id: str, root: str, ref_deps: bool, limits: dict[str, Any]) -> dict:
    """One submission checked as ``ol check MODULE --workspace ROOT [--ref-deps]`` checks it.

    A setup error (``ol check`` exit 2) is the verdict ``error`` with its one-line message.
    """
    from harness.check import CheckRequest, run_check
    from harness.errors import HarnessError
    from harness.isolation import Limits
    from harness.workspace import resolve_workspace

    start = time.perf_counter()
    try:
        ws = resolve_workspace(root)
        request = CheckRequest(module_id, root, "student", ref_deps, None, Limits(**limits))
        run = run_check(request, ws)
    except HarnessError as exc:
        return {"verdict": "error", "passed": 0, "failed": 0, "tests": {},
                "message": exc.message, "time_s": time.perf_counter() - start}
    return row_of_run(run.to_json(), time.perf_counter() - start)


def row_of_run(run: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The gradebook fields of one run: verdict, counts, outcome per test, first failure."""
    failures = [t for t in run["tests"] if t["outcome"] != "passed"]
    message = ""
    if failures:
        first = failures[0]
        headline = (first["message"].strip().splitlines() or [first["outcome"]])[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        message = f"{first['name']}: {headline[:300]}{more}"
    return {"verdict": run["verdict"], "passed": run["passed"], "failed": run["failed"],
            "tests": {t["name"]: t["outcome"] for t in run["tests"]}, "message": message,
            "time_s": seconds, "run": run}


def _watch_parent(parent: int) -> None:
    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(70)  # our isolated workers notice and die with us

    threading.Thread(target=watch, name="ol-slot-watch", daemon=True).start()


def slot_main(module_id: str, parent: int) -> None:
    """The slot's loop: warm up, say ready, then one JSON reply line per request line."""
    _watch_parent(parent)
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process's life
    from harness.catalog import collect
    from harness.course import load_course

    collect(load_course().module(module_id))  # the catalog, scipy and numpy, once
    replies.write(json.dumps({"op": "ready"}) + "\n")
    for line in sys.stdin.buffer:
        request = json.loads(line)
        try:
            row = grade_workspace(request["module"], request["workspace"], request["ref_deps"],
                                  request["limits"])
        except Exception as exc:  # noqa: BLE001 - a harness bug: reported, the slot carries on
            row = {"verdict": INTERNAL, "passed": 0, "failed": 0, "tests": {},
                   "message": f"the harness failed: {type(exc).__name__}: {exc}", "time_s": 0.0}
        replies.write(json.dumps({"op": "graded", "id": request["id"], "row": row},
                                 allow_nan=False) + "\n")


# -- the parent's side -----------------------------------------------------------------------------

class SlotFailed(Exception):
    """The slot died, hung past its budget, or answered nonsense."""


class Slot:
    """One slot process, driven synchronously: ``grade`` sends one request and waits for it."""

    def __init__(self, module_id: str) -> None:
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        code = f"from harness.grade_slots import slot_main; slot_main({module_id!r}, {os.getpid()})"
        self.err = tempfile.TemporaryFile()  # noqa: SIM115 - kept for the slot's life
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, env=env,
                                     start_new_session=True)
        self.fd = self.proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buf = bytearray()
        self.used = 0
        self.dead = False
        self.started = time.monotonic()
        self.ready = False

    def _line(self, deadline: float) -> dict[str, Any]:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not poller.poll(min(left, 1.0) * 1000):
                continue
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                continue
            if not data:
                raise SlotFailed(self._death())
            self.buf += data
            if len(self.buf) > MAX_REPLY:
                raise SlotFailed("the grading process sent an oversized reply")
        line, _, rest = self.buf.partition(b"\n")
        self.buf = bytearray(rest)
        try:
            return json.loads(line)
        except ValueError:
            raise SlotFailed("the grading process sent a malformed reply") from None

    def _death(self) -> str:
        code = self.proc.poll()
        if code is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(timeout=2)
        tail = ""
        with contextlib.suppress(OSError, ValueError):
            self.err.seek(0, os.SEEK_END)
            self.err.seek(max(0, self.err.tell() - 300))
            lines = self.err.read().decode("utf-8", "replace").strip().splitlines()
            tail = f": {lines[-1]}" if lines else ""
        return f"the grading process exited (status {code}){tail}"

    def grade(self, request: dict[str, Any], budget: float) -> dict[str, Any]:
        """The gradebook row of one request; a submission past ``budget`` seconds is a ``fail``."""
        start = time.monotonic()
        try:
            if not self.ready:
                if self._line(self.started + START_TIMEOUT_S).get("op") != "ready":
                    raise SlotFailed("the grading process did not start properly")
                self.ready = True
            start = time.monotonic()
            self.proc.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
            self.proc.stdin.flush()
            self.used += 1
            reply = self._line(start + budget)
            if reply.get("op") != "graded" or reply.get("id") != request["id"]:
                raise SlotFailed("the grading process answered another request")
            return reply["row"]
        except TimeoutError:
            self.kill()
            if not self.ready:
                return _internal(f"the grading process did not start within {START_TIMEOUT_S:g} s")
            return {"verdict": "fail", "passed": 0, "failed": 0, "tests": {},
                    "message": f"the check did not finish within the submission's budget of "
                               f"{budget:g} s (--submission-timeout); it was stopped",
                    "time_s": time.monotonic() - start}
        except (SlotFailed, OSError, KeyError, TypeError) as exc:
            self.kill()
            return _internal(str(exc) or type(exc).__name__)

    def kill(self, release: bool = True) -> None:
        """The slot, its isolated workers and whatever they started: killed and reaped.

        ``release=False`` leaves the pipes open, for a kill from another thread than the one
        waiting on them (it sees the end of the stream and returns)."""
        if self.dead:
            return
        self.dead = True
        members = proctree.kill_tree(self.proc.pid, include_root=True)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, 9)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        proctree.reap(members - {self.proc.pid}, time.monotonic() + 2.0)
        if not release:
            return
        for stream in (self.proc.stdin, self.proc.stdout, self.err):
            with contextlib.suppress(OSError):
                stream.close()

    def close(self) -> None:
        """End the slot politely (EOF on its stdin), then make sure."""
        if self.dead:
            return
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        self.kill()


def _internal(message: str) -> dict[str, Any]:
    return {"verdict": INTERNAL, "passed": 0, "failed": 0, "tests": {}, "message": message,
            "time_s": 0.0}


class SlotPool:
    """Idle slots shared by threads: each ``grade`` takes one (or starts one) and gives it back."""

    def __init__(self, module_id: str, recycle_after: int = RECYCLE_AFTER) -> None:
        self.module_id = module_id
        self.recycle_after = recycle_after
        self._lock = threading.Lock()
        self._idle: list[Slot] = []
        self._live: set[Slot] = set()
        self._closed = False

    def grade(self, request: dict[str, Any], budget: float) -> dict[str, Any]:
        slot = self._take()
        try:
            return slot.grade(request, budget)
        finally:
            self._give_back(slot)

    def _take(self) -> Slot:
        with self._lock:
            if self._closed:
                raise SlotFailed("the grading pool is closed")
            if self._idle:
                return self._idle.pop()
            slot = Slot(self.module_id)
            self._live.add(slot)
            return slot

    def _give_back(self, slot: Slot) -> None:
        with self._lock:
            if slot.dead or slot.used >= self.recycle_after or self._closed:
                self._live.discard(slot)
                retire = True
            else:
                self._idle.append(slot)
                retire = False
        if retire:
            slot.close()

    def close(self) -> None:
        """Kill every slot, busy or idle (a thread waiting on one sees it die and returns)."""
        with self._lock:
            self._closed = True
            slots = list(self._live)
            self._live.clear()
            self._idle.clear()
        for slot in slots:
            slot.kill(release=False)


def materialize(files: dict[str, bytes], root: Path) -> None:
    """Write a staged ``python/`` tree (``harness.sandbox.staging.stage``) under ``root``."""
    from harness.sandbox.staging import materialize as write_tree

    for rel in files:
        if rel.split("/", 1)[0] != "python":
            raise ValueError(f"refusing to write {rel!r} outside the workspace's python/")
    write_tree(files, root)
