"""Untrusted code in a worker process with limits: the parent side of the trust boundary.

``IsolatedTarget`` starts ``harness/sandbox/worker.py`` at construction, so the worker's start-up (an
interpreter, numpy, the student's import) overlaps with the parent's own work. Each ``map`` is one
request, written in frames (``codec.request_frames``) while the first calls already run; the
worker streams the encoded replies back in chunks, and the parent decodes them with
``codec.decode_chunk`` only (no pickle, no eval; the wire format, both ways, is
``harness.sandbox.codec``), enforcing a per-call wall-clock limit between chunks. Anything else is
a failure of the call, never a value:

- no reply in time: the whole process tree is killed, ``TargetTimedOut``; so too when the calls
  of one catalog test (from the runner's ``begin_test``) together exceed ``test_timeout_s``, so
  that a call just under the per-call limit, repeated by a test a thousand times, is bounded too
  (a worker started again in the middle of a test is ol's time, not the test's: its start is
  added to the budget, up to one ``import_timeout_s`` per test, ``_forgive_start``);
  a function whose call missed the per-call limit is not called again by this target: its later
  calls raise ``TargetTimedOut`` at once ("not run: it timed out earlier in this check"), so a
  looping function costs one time-out per check, not one per test (``timed_out``);
- the worker died or closed its channel: ``TargetCrashed`` naming the exit code or the signal;
- malformed, oversized or out-of-order data: ``TargetCrashed``.

What the calls print (``sys.stdout``, ``sys.stderr``) comes back with their replies (or, from a
call that hangs or a worker that dies, from the shared page's mirror: ``capture.Mirror``) and is
kept as ``target.output``: the first ``capture.KEPT`` characters printed since ``begin_test``, the
rest counted in ``target.output_dropped``; what the import printed is ``import_output`` (it
belongs to no test: it runs again after every restart). A frame of a student's exception
(``RemoteError.frames``) is checked as it is decoded, like every other field. Each request carries
``rng_seed``: the worker seeds ``random`` and ``numpy.random`` with it before the request's calls.

After any of these the next call starts a fresh worker. The worker runs with resource limits,
without capabilities, in namespaces of its own (user, mount, network, IPC, UTS, PID; for any user
where the kernel allows them) and, as root, a pids cgroup, with a read-only view of the file
system but for its run folder (``worker.harden``); whatever it forks is killed after every
request and on ``close`` (``harness.sandbox.proctree``). The process itself, its pipes and its
death are ``harness.sandbox.supervisor``. Not thread-safe: one target per thread.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from harness.engine.target import Target, TargetCrashed, TargetTimedOut, show_args
from harness.sandbox import prestarted
from harness.sandbox.capture import KEPT
from harness.sandbox.codec import (
    MalformedReply,
    Reply,
    clean_text,
    decode_chunk,
    printed_of,
    request_frames,
)
from harness.sandbox.protocol import Died, Hung
from harness.sandbox.supervisor import Limits, Output, WorkerProcess, describe_death
from harness.sandbox.worker import CHUNK_S
from harness.uniforms import RecordingSource, ScriptedSource

__all__ = ["ImportProblem", "IsolatedTarget", "Limits", "describe_death"]

MAX_DRAWS = 10**8  # per call; more than a worker can draw within any sane call limit


_CONFINEMENT = {"view": bool, "read_only": bool, "contained": bool, "nobody": bool,
                "no_caps": bool, "tasks": str, "disk_mb": int, "memory": bool}


def confinement_of(data: object) -> dict[str, object]:
    """A worker's report of its confinement (``harden.Confinement``), checked as plain data: every
    field of its type, nothing else (the worker is trusted until the student's import, but its
    reply is decoded like any other). Missing or malformed: every property False."""
    if not isinstance(data, dict) or set(data) != set(_CONFINEMENT):
        return {key: kind() for key, kind in _CONFINEMENT.items()}
    if not all(type(data[key]) is kind for key, kind in _CONFINEMENT.items()):
        return {key: kind() for key, kind in _CONFINEMENT.items()}
    return {key: data[key] if key != "tasks" else str(data[key])[:20] for key in _CONFINEMENT}


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


def _colon(hint: str) -> str:
    return f": {hint}" if hint else ""


def _short(fn: str, args: tuple, width: int = 200) -> str:
    shown = show_args(args)
    return f"{fn}({shown if len(shown) <= width else shown[:width] + '...'})"


class IsolatedTarget(Target):
    """A student's module, called in a worker process with limits; see the module docstring."""

    kind = "isolated"

    def __init__(self, label: str, python_dir: Path, import_name: str, functions: Sequence[str],
                 returns: dict[str, str], limits: Limits | None = None) -> None:
        self.python_dir = Path(python_dir).resolve()
        self.import_name = import_name
        self.limits = limits or Limits()
        self._output = Output(self.limits.output_bytes)
        self._problem: ImportProblem | None = None
        self._worker: WorkerProcess | None = None
        self._closed = False
        self._received = 0  # replies of the current request so far: names the call that failed
        self.sandboxed = False  # whether the last worker runs with a read-only file system
        self.contained = False  # and in a PID namespace of its own
        self.confinement: dict[str, object] = {}  # the last worker's (``harden.Confinement``)
        self.import_output, self.import_output_dropped = "", 0  # what the last import printed
        # Per function, the call that did not return within the per-call limit: its later calls
        # in this check fail at once (``_stream``), so a loop costs one time-out, not one a test.
        self.timed_out: dict[str, str] = {}
        super().__init__(label, functions, returns)
        self._deadline: float | None = None  # armed per test by ``begin_test``, not at creation
        self._forgiven = 0.0
        self._worker = self._spawn()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def begin_test(self) -> None:
        """A new catalog test: from now on its calls share ``limits.test_timeout_s``."""
        super().begin_test()
        self._output_kept = 0  # characters of ``output`` as printed (escapes make it longer)
        self._deadline = time.monotonic() + max(self.limits.test_timeout_s,
                                                self.limits.call_timeout_s)
        self._forgiven = 0.0  # seconds of worker restarts added to this test's budget

    def _spawn(self) -> WorkerProcess:
        zygote = prestarted.current()
        return WorkerProcess(self.python_dir, self.import_name, self.limits, self._output,
                             zygote.launch if zygote is not None else None)

    # -- life cycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Kill and reap the worker and everything it started; remove its directory."""
        self._closed = True
        self._discard()

    def _discard(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.kill()  # Ctrl-C and the runner's alarm held off meanwhile: no half-killed tree

    def worker_output(self, clear: bool = False) -> str:
        """What the worker wrote to its descriptors 1 and 2 (``os.write``, native code, the
        interpreter's own last words), capped at ``limits.output_bytes``, with a note; what the
        code printed through ``sys.stdout`` and ``sys.stderr`` is ``output``."""
        return self._output.text(clear)

    def _keep_output(self, message: dict) -> None:
        """Add to ``output`` what a chunk of replies says the calls printed (``MalformedReply``
        if it is not text and a count): the first ``KEPT`` characters of the test, the rest
        counted."""
        printed = printed_of(message)
        if printed is not None:
            self._keep_printed(*printed)

    def _keep_printed(self, text: str, dropped: int) -> None:
        room = KEPT - self._output_kept
        kept = text[:room] if room > 0 else ""
        self._output_kept += len(kept)
        if kept:
            self.output += clean_text(kept, KEPT)
        self.output_dropped += dropped + len(text) - len(kept)

    # -- the import ---------------------------------------------------------------------------
    def import_status(self) -> ImportProblem | None:
        """None if the module imported; else why not. Blocks until the worker reported."""
        if self._problem is None and not self._closed:
            if self._worker is None:
                self._worker = self._spawn()
            if not self._worker.ready:
                self._await_ready(self._worker)
        return self._problem

    def _await_ready(self, worker: WorkerProcess) -> None:
        name, limit = self.import_name, self.limits.import_timeout_s
        try:
            message = worker.recv(worker.started + limit)
            if message.get("op") != "ready":
                raise MalformedReply(f"expected the import report, got op {message.get('op')!r}")
            worker.ready = message.get("problem") is None
            printed = printed_of(message) or ("", 0)
            self.import_output = clean_text(printed[0][:KEPT], KEPT)
            self.import_output_dropped = printed[1] + max(0, len(printed[0]) - KEPT)
            self.sandboxed = message.get("sandboxed") is True
            self.contained = message.get("contained") is True
            self.confinement = confinement_of(message.get("confinement"))
            worker.find_root(self.contained)
            if not worker.ready:
                self._problem = _problem(message["problem"])
        except Hung:
            self._keep_import_output(worker)
            self._problem = ImportProblem(
                "timeout", f"importing {name} did not finish within {limit:g} s")
        except Died:
            self._keep_import_output(worker)
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

    def _keep_import_output(self, worker: WorkerProcess) -> None:
        """What an import that hung or died printed: the page's mirror, as the report would."""
        text, dropped = worker.unsent_output()
        self.import_output = clean_text(text[:KEPT], KEPT)
        self.import_output_dropped = dropped + max(0, len(text) - KEPT)

    def _live_worker(self) -> WorkerProcess:
        if self._closed:
            raise RuntimeError(f"the isolated target {self.label!r} is closed")
        starting = time.monotonic()
        if self._problem is None and self._worker is None:
            self._worker = self._spawn()
        if self._problem is None and self._worker is not None and not self._worker.ready:
            self._await_ready(self._worker)
            self._forgive_start(time.monotonic() - starting)
        problem = self._problem
        if problem is None and self._worker is not None:
            return self._worker
        if problem is not None and problem.kind == "timeout":
            raise TargetTimedOut(str(problem))
        raise TargetCrashed(f"{self.import_name} did not import: {problem}")

    # -- calls ----------------------------------------------------------------------------------
    def _stream(self, fn: str, calls: list[tuple], kwargs: dict,
                take: Callable[[Sequence[Reply]], None]) -> None:
        if not calls:
            return
        if fn in self.timed_out:
            raise TargetTimedOut(f"{_short(fn, calls[0], 60)} not run: it timed out earlier in this "
                                 f"check (no answer within {self.timed_out[fn]})")
        if self._over_budget():
            raise TargetTimedOut(self._budget_message(f"before {_short(fn, calls[0])}"))
        seed = self.rng_seed
        if type(seed) is not int or not 0 <= seed < 1 << 32:
            raise ValueError(f"rng_seed must be an int from 0 to 2**32 - 1, got {seed!r}")
        worker = self._live_worker()
        rid = secrets.randbits(62)
        try:
            self._exchange(worker, rid, fn, calls, kwargs, take, seed)
            worker.sweep()
        except Hung:
            index = worker.current_call(rid, len(calls), self._received)
            self._keep_printed(*worker.unsent_output())
            self._discard()
            if self._over_budget():
                raise TargetTimedOut(self._budget_message(f"during {_short(fn, calls[index])}")
                                     ) from None
            limit = self.limits.call_timeout_s
            self.timed_out[fn] = f"{limit:g} s"
            raise TargetTimedOut(f"{_short(fn, calls[index])} did not return within {limit:g} s"
                                 ) from None
        except Died:
            index = worker.current_call(rid, len(calls), self._received)
            self._keep_printed(*worker.unsent_output())
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

    def _exchange(self, worker: WorkerProcess, rid: int, fn: str, calls: Sequence[tuple],
                  kwargs: dict, take: Callable[[Sequence[Reply]], None], seed: int = 0) -> None:
        """Send the request; hand each chunk of replies to ``take`` as it arrives (in order)."""
        limit = self.limits.call_timeout_s + CHUNK_S  # a chunk may hold CHUNK_S of earlier calls
        self._received = 0
        worker.feed(request_frames(rid, fn, calls, kwargs, seed))
        last = time.monotonic()
        while self._received < len(calls):
            due = last + limit if self._deadline is None else min(last + limit, self._deadline)
            message = worker.recv(due)
            if (message.get("op") != "replies" or message.get("id") != rid
                    or message.get("start") != self._received):
                raise MalformedReply("the worker sent a reply out of order")
            chunk = decode_chunk(message, len(calls) - self._received)
            self._keep_output(message)
            self._received += len(chunk)
            take(chunk)  # checked while the worker goes on
            last = time.monotonic()
        if not worker.conn.idle:
            raise MalformedReply("the worker answered calls it was not sent, or sent more")

    def _forgive_start(self, seconds: float) -> None:
        """A worker started again in the middle of a test (after a crash or a time-out) is ol's
        time, not the test's calls': its start is added to the test's budget, up to one import's
        limit per test (so a test whose calls kill the worker again and again stays bounded).
        Without it a loaded machine (a grading batch, CI) could charge a slow restart to the
        next call and fail it as too slow."""
        if self._deadline is not None and self._forgiven < self.limits.import_timeout_s:
            extra = min(seconds, self.limits.import_timeout_s - self._forgiven)
            self._forgiven += extra
            self._deadline += extra

    def _over_budget(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _budget_message(self, where: str) -> str:
        budget = max(self.limits.test_timeout_s, self.limits.call_timeout_s)
        return (f"the calls of this test did not finish within {budget:g} s in all (stopped "
                f"{where}); a call may take up to {self.limits.call_timeout_s:g} s, the calls of "
                f"one test {budget:g} s together: is the code far slower than it needs to be?")

    def _sync_sources(self, sources: list[RecordingSource], draws: list[int]) -> None:
        """Replay into the test's sources what the worker's copies drew, once per object."""
        if len(draws) != len(sources):
            self._escape(TargetCrashed(f"the worker reported draws for {len(draws)} of "
                                       f"{len(sources)} sources"))
        seen: set[int] = set()
        for source, count in zip(sources, draws, strict=True):
            if id(source) in seen:
                continue
            seen.add(id(source))
            most = (len(source.values) - len(source.drawn) if isinstance(source, ScriptedSource)
                    else MAX_DRAWS)
            if not 0 <= count <= most:
                self._escape(TargetCrashed(f"the worker reported {count} draws from a source "
                                           f"that allows at most {most}"))
            source.replay(count)


def _problem(data: Any) -> ImportProblem:
    kind = data["kind"]
    if kind not in ("syntax", "import", "crash", "timeout"):
        raise ValueError(f"unknown kind {kind!r}")
    line = data.get("line")
    return ImportProblem(kind, str(data["message"])[:2000],
                         str(data["file"])[:1000] if data.get("file") else None,
                         line if type(line) is int else None)


