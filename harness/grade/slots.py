"""Grading slots: long-lived harness processes that each check many submissions, one at a time.

Why not one ``ol check`` process per submission: a cold check of a correct M07.6 spends 42% of
its CPU on start-up (the interpreter, numpy, scipy, the catalog and its seeded inputs; measured in
docs/grading.md); a slot pays that once and then runs ``run_check`` per submission, exactly as
``ol check`` does (the student's
code still runs in a fresh isolated worker with limits for every submission). Why not threads in
the grading process: the catalog's own work (exact enumeration, chi-square) is Python on the
harness side, so threads would share one core.

A slot is still a process of its own, so the parent can bound a whole submission: past its budget
(``--submission-timeout``) the slot and everything below it are killed and a fresh slot takes its
place. A slot is retired after ``RECYCLE_AFTER`` submissions, which bounds its memory. It exits by
itself when the process that started it dies. A slot is a ``harness.sandbox.supervisor.Supervised``
process (its tree, run folder and cgroup killed and removed with it), and requests and replies are
messages of ``harness.sandbox.protocol`` on two pipes of their own (its stdout and stderr are
drained and capped, so a stray print is harmless).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.engine.results import RunResult
from harness.fields import from_fields, to_fields
from harness.grade.row import GradeRow, SlotReply
from harness.paths import REPO_ROOT
from harness.sandbox.limits import Limits

RECYCLE_AFTER = 100  # submissions per slot process, then a fresh one
START_TIMEOUT_S = 120.0  # interpreter, numpy, scipy, the catalog: a few seconds on a quiet machine
MAX_REPLY = 64 << 20
OUTPUT_BYTES = 64 << 10  # what a slot printed, kept for the message of its death


@dataclass(frozen=True)
class SlotRequest:
    """One submission for a slot: checked as ``ol check MODULE --workspace WORKSPACE [--ref-deps]
    --seed SEED`` checks it, under ``limits``. ``id`` names it (the reply carries it back);
    ``seed`` None: the public cases; ``digest``: the content hash the gradebook records for it,
    which the tree staged for the check must still have (else the row is an ``error``: what ran
    is what was hashed). Its JSON (``to_json``) is the message a slot reads."""

    id: str
    module: str
    workspace: str
    ref_deps: bool
    limits: Limits
    seed: int | None = None
    digest: str | None = None

    def to_json(self) -> dict[str, Any]:
        return to_fields(self)

    @classmethod
    def from_json(cls, data: Any) -> SlotRequest:
        """The request ``to_json`` wrote; anything else is a ``harness.fields.FieldError`` of one
        line."""
        return from_fields(cls, data)


# -- inside a slot ---------------------------------------------------------------------------------

def grade_workspace(request: SlotRequest) -> SlotReply:
    """One submission checked as ``request`` says (``SlotRequest``); the run in the row records
    the seed.

    A setup error (``ol check`` exit 2) is the verdict ``error`` with its one-line message.
    """
    from harness.check.engine import CheckRequest, run_check
    from harness.engine.seeding import Seed
    from harness.engine.workspace import resolve_workspace
    from harness.errors import HarnessError, HostError

    start = time.perf_counter()
    try:
        ws = resolve_workspace(request.workspace)
        check = CheckRequest(request.module, request.workspace, "student", request.ref_deps, None,
                             request.limits, seed=Seed(request.seed))
        run = run_check(check, ws, tree_digest=request.digest)
    except HostError as exc:  # the grading machine's failure: graded again next run
        return SlotReply(GradeRow.internal(exc.message))
    except HarnessError as exc:
        return SlotReply(GradeRow.setup_error(exc.message, time.perf_counter() - start))
    return reply_of_run(run, time.perf_counter() - start)


def reply_of_run(run: RunResult, seconds: float) -> SlotReply:
    """The gradebook row of one run (verdict, counts, outcome per test, first failure, mistakes,
    what of the sandbox its worker lacked), and the run itself."""
    return SlotReply(GradeRow.graded(run, seconds, mistakes_of(run)), run.to_json())


def mistakes_of(run: RunResult) -> list[dict[str, Any]]:
    """The mistakes a failing run's diagnosis names, best first: per entry its kind, its pitfall
    and label (and the others that answer alike), what the pitfall is in a line, and the
    diagnosis's own sentence. What the instructor's class view counts (#26 item 2)."""
    from harness.engine.course import load_course

    module = load_course().module(run.module)
    out = []
    for d in run.diagnosis:
        pitfall = d.pitfall
        also = [p for p in d.also if isinstance(p, int)]
        out.append({"kind": d.kind, "pitfall": pitfall,
                    "label": module.pitfall_label(pitfall) if pitfall is not None else "",
                    "also": also, "also_labels": [module.pitfall_label(p) for p in also],
                    "pitfall_text": module.pitfall_text(pitfall) if pitfall is not None else "",
                    "text": d.text})
    return out


def _watch_parent(parent: int) -> None:
    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(70)  # our isolated workers notice and die with us

    threading.Thread(target=watch, name="ol-slot-watch", daemon=True).start()


def slot_main(module_id: str, parent: int, request_fd: int, reply_fd: int) -> None:
    """The slot's loop: warm up, say ready, then one reply message per request message."""
    from harness.engine.catalog import collect
    from harness.engine.course import load_course
    from harness.sandbox import prestarted
    from harness.sandbox.protocol import Channel

    _watch_parent(parent)
    # The zygote starts first, before this slot reads anything of a submission or a seed, and
    # warms up beside the catalog's import below: every worker after that is a fork.
    prestarted.start()
    channel = Channel(request_fd, reply_fd)
    collect(load_course().module(module_id))  # the catalog, scipy and numpy, once
    channel.send({"op": "ready"})
    try:
        _serve(channel)
    finally:
        prestarted.stop()


def _serve(channel: Any) -> None:
    while (message := channel.recv()) is not None:
        request = SlotRequest.from_json(message)  # the parent's own: a bad one ends the slot
        try:
            reply = grade_workspace(request)
        except Exception as exc:  # noqa: BLE001 - a harness bug: reported, the slot carries on
            reply = SlotReply(GradeRow.internal(f"the harness failed: {type(exc).__name__}: {exc}"))
        channel.send_text(json.dumps({"op": "graded", "id": request.id, "reply": reply.to_json()},
                                     allow_nan=False))


# -- the parent's side -----------------------------------------------------------------------------

class SlotFailed(Exception):
    """The slot died, hung past its budget, or answered nonsense."""


def _slot_env(home: str) -> dict[str, str]:
    return dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")


class Slot:
    """One slot process, driven synchronously: ``grade`` sends one request and waits for it."""

    def __init__(self, module_id: str) -> None:
        from harness.sandbox.supervisor import Output, Peer

        self.output = Output(OUTPUT_BYTES)

        def argv(request_fd: int, reply_fd: int) -> list[str]:
            # This checkout's harness, whatever an installed copy on the path would give.
            code = (f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r}); "
                    f"from harness.grade.slots import slot_main; "
                    f"slot_main({module_id!r}, {os.getpid()}, {request_fd}, {reply_fd})")
            return [sys.executable, "-c", code]

        self.peer = Peer(argv, "slot", _slot_env, self.output, MAX_REPLY, makes_run_folders=True)
        self.process, self.conn = self.peer.process, self.peer.conn
        self.used = 0
        self.started = self.process.started
        self.ready = False

    @property
    def dead(self) -> bool:
        return self.process.dead

    def _message(self, deadline: float) -> dict[str, Any]:
        from harness.sandbox.protocol import BadMessage, Died, Hung

        try:
            return self.conn.recv(deadline)
        except Hung:
            raise TimeoutError from None
        except Died:
            raise SlotFailed(self._death()) from None
        except BadMessage as exc:
            raise SlotFailed(f"the grading process sent {exc}") from None

    def _death(self) -> str:
        code = self.process.status(time.monotonic() + 2.0)
        lines = self.output.text(clear=False).strip().splitlines()
        tail = f": {lines[-1][:300]}" if lines else ""
        return f"the grading process exited (status {code}){tail}"

    def grade(self, request: SlotRequest, budget: float) -> SlotReply:
        """The gradebook row of one request; a submission past ``budget`` seconds is a ``fail``."""
        from harness.sandbox.protocol import Died, Hung

        start = time.monotonic()
        try:
            if not self.ready:
                if self._message(self.started + START_TIMEOUT_S).get("op") != "ready":
                    raise SlotFailed("the grading process did not start properly")
                self.ready = True
            start = time.monotonic()
            try:
                self.conn.send(request.to_json(), start + budget)
            except (Hung, Died):
                raise SlotFailed("the grading process stopped taking requests") from None
            self.used += 1
            reply = self._message(start + budget)
            if reply.get("op") != "graded" or reply.get("id") != request.id:
                raise SlotFailed("the grading process answered another request")
            return SlotReply.from_json(reply["reply"])
        except TimeoutError:
            self.kill()
            if not self.ready:
                return SlotReply(GradeRow.internal(
                    f"the grading process did not start within {START_TIMEOUT_S:g} s"))
            return SlotReply(GradeRow.past_budget(budget, time.monotonic() - start))
        except (SlotFailed, OSError, KeyError, TypeError, ValueError) as exc:
            self.kill()
            return SlotReply(GradeRow.internal(str(exc) or type(exc).__name__))

    def kill(self, release: bool = True) -> None:
        """The slot, its isolated workers and whatever they started: killed, reaped, removed
        (``Peer.kill``; ``release=False`` from a thread other than the one waiting on it)."""
        self.peer.kill(release)

    def close(self) -> None:
        """End the slot politely (end of its requests: it exits), then make sure."""
        if not self.process.dead:
            self.conn.send_eof()
            self.process.status(time.monotonic() + 2.0)
        self.kill()


class SlotPool:
    """Idle slots shared by threads: each ``grade`` takes one (or starts one) and gives it back."""

    def __init__(self, module_id: str, recycle_after: int = RECYCLE_AFTER) -> None:
        self.module_id = module_id
        self.recycle_after = recycle_after
        self._lock = threading.Lock()
        self._idle: list[Slot] = []
        self._live: set[Slot] = set()
        self._closed = False

    def grade(self, request: SlotRequest, budget: float) -> SlotReply:
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
