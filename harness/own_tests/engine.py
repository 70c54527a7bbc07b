"""``ol tests MODULE --mine PATH``: grade a student's own tests (rung R1).

The student's pytest suite runs against the module's correct implementations (the reference and
the hidden ones of ``harness.own_tests.alternatives``) and against every mutant of the library:

- a test that fails on a correct implementation is *wrong*: it would reject correct code;
- a mutant is *caught* when at least one test failed on it while that same test passed on every
  correct implementation (so a suite that fails everything catches nothing);
- what a student reads about a missed mutant is the library's metadata only: its description,
  its pitfall and its hint; never its code, never a catalog test's name.

How it runs. One fork server (``serve``) in a worker process, started like ``ol check``'s worker
(own session, the same rlimits, hardening and scrubbed environment, cwd a temporary directory,
stdin closed), imports numpy, pytest and the reference dependencies once and makes what of
pytest's start depends on no implementation (``harness.own_tests.pytest_start``). Per
implementation it forks a child that installs the implementation as the module from memory,
runs the rest of ``pytest.main`` over a snapshot of the suite with a recording plugin
(``_Recorder``), writes one JSON report to a pipe of its own and exits. A mutant's child runs
only the tests that reached its function on the reference, the others taking the reference's
outcome (``harness.own_tests.selection``, where why a suite cannot gain by it is argued;
``--exhaustive``: every test everywhere). The parent
keeps ``--jobs`` children busy and decodes every report as plain data (no pickle). It enforces a
wall-clock limit per run: past it, the server SIGKILLs that run's process tree (it sees the
runs' PID namespace, the parent does not), and a server that does not confirm within seconds is
killed with everything it started. The whole is bounded too (``--budget``, ``BUDGET_S``): past it
no run starts, the server is closed with the runs in flight, and what has no verdict is "not
run", a partial result (``MineResult.out_of_budget``: neither caught nor passing, exit 4).

Trust. The student's tests run in the children and can do anything there, including forging the
report, which is written from inside their process. So nothing rests on a child's honesty, and a
child cannot learn which implementation it runs except by testing it or reading its code: no
name, kind or position of an implementation reaches the server (a random run id and the source,
in a random order), and the implementation's frames are hidden from tracebacks. (Two things do
tell a little, and ``harness.own_tests.selection`` makes them count for nothing: the reference's
first run, which only says what each test reaches, and a choice of tests, given to a mutant's run
and to the reference's check run of the same choice alike.) Whatever a report claims is then a
function of the implementation's behaviour: a forged "all passed" on a mutant only means
"missed", and a forged failure fails on correct code as well. Every failure to report fails
closed: a crash, a timeout, a report that does not parse or a session that did not finish means
"not caught" for a mutant and "cannot run" for a correct implementation, after which no test is
trusted to catch anything. (A test that reads the implementation's code rather than calling it
can still tell them apart, from fingerprints an earlier run's failure messages showed it; like any
test of code instead of behaviour, that is outside what this grades: docs/isolation.md.)

This module is the parent's side (the server's handle, the runs in flight, judging each report)
and the verdict with its JSON shape, over the house 400 lines because the verdict is read with the
judging and the running it rests on. The server's side is ``harness.own_tests.server``; staging the
suite is ``harness.own_tests.stage``; the reports (text, JSON, Gradescope) are
``harness.report.own_tests``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import random
import re
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.engine.course import Module
from harness.engine.events import Listener, Step
from harness.engine.serial import reading, rerun_command, source_name, tagged, untag
from harness.errors import HarnessError, MutantDoesNotApply, VerdictFailure
from harness.own_tests.selection import PARTIAL, decode_reach, settle
from harness.own_tests.stage import stage
from harness.paths import REFERENCE_PYTHON, REPO_ROOT
from harness.sandbox.fs import remove_tree

RUN_LIMIT_S = 60.0  # wall clock per implementation: the whole suite once
# Wall clock of the whole of ``ol tests --mine`` (``--budget``): 10 times the slowest bundled
# suite (tests/own_tests/suites/strong: 48 s at --jobs 1 on a busy two-core machine), rounded up
# to ol grade's per-submission default; a suite of tests that each sleep just under RUN_LIMIT_S
# costs that, not 71 of them (70 minutes at --jobs 1). docs/isolation.md.
BUDGET_S = 600.0
SEND_LIMIT_S = 10.0  # for the server to take a request and fork
KILL_GRACE_S = 5.0  # for the server to kill and reap a run that ran out of time
REPORT_BYTES = 4 << 20  # one child's report; more is a report the harness will not read
MESSAGE_BYTES = 3 * REPORT_BYTES  # a relayed report is JSON inside JSON
MESSAGE_CHARS = 3000  # failure text kept per test
MAX_TESTS = 20000
OUTCOMES = ("passed", "failed", "skipped", "incomplete")
# MineResult's. Version 2: the tag, and what rebuilds the result: every run's "outcomes" and
# "messages", each correct implementation's "differs", each bug's "label", "pitfall_texts".
FORMAT_VERSION = 2
BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
        "from harness.own_tests.server import serve; serve(sys.argv[2:])")


# == what runs =====================================================================================

@dataclass(frozen=True)
class Implementation:
    """One version of the module the suite runs against: correct (``mutant`` None) or a mutant."""

    key: str  # "reference", an alternative's name, or a mutant id
    label: str  # how a student reads it
    # What ran, not what was found: no report carries it (a student reads them), so a result
    # rebuilt from JSON has none, and equality leaves it out.
    source: str = field(repr=False, compare=False)
    mutant: Any = None  # harness.engine.mutants.Mutant
    differs: str = ""  # for a hidden correct implementation: how it legitimately differs

    @property
    def correct(self) -> bool:
        return self.mutant is None


def implementations(module: Module, mutant_ids: list[str] | None = None) -> list[Implementation]:
    """The reference, the hidden correct implementations, then the mutants (or ``mutant_ids``)."""
    from harness.engine.mutants import apply
    from harness.own_tests.alternatives import load_alternatives

    reference = (REFERENCE_PYTHON / module.file).read_text(encoding="utf-8")
    impls = [Implementation("reference", "the reference", reference)]
    impls += [Implementation(a.name, f"hidden implementation '{a.name}'", a.source(module),
                             differs=a.differs) for a in load_alternatives(module)]
    for m in _mutants(module, mutant_ids):
        try:
            impls.append(Implementation(m.id, f"bug {m.id}", apply(m, reference), mutant=m))
        except MutantDoesNotApply as exc:
            raise VerdictFailure(exc.message, exc.hint) from None
    return impls


def _mutants(module: Module, mutant_ids: list[str] | None) -> list[Any]:
    from harness.engine.mutants import find_mutant, load_mutants

    return (load_mutants(module.id) if mutant_ids is None
            else [find_mutant(module.id, m) for m in mutant_ids])


@dataclass(frozen=True)
class Run:
    """The suite against one implementation, as the parent judged the child's report."""

    status: str  # ran | timeout | crashed | unreadable | interrupted | collection error | no tests
    outcomes: dict[str, str] = field(default_factory=dict)  # test id -> one of OUTCOMES
    messages: dict[str, str] = field(default_factory=dict)  # test id -> failure text
    problem: str = ""  # why the status is not "ran", for a student
    # What the run's report said each test reached (a claim; harness.own_tests.selection), and
    # the tests it was given if not all: how it ran, not what it found, so no report has them.
    reach: Any = field(default=None, repr=False, compare=False)
    chosen: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    @property
    def ran(self) -> bool:
        return self.status == "ran"


# == the parent's side =============================================================================

class _ServerGone(Exception):
    """The server died, hung or sent something that is not the protocol."""


class _Late(Exception):
    """No message before the deadline."""


class _ForkServer:
    """The parent's handle on the fork server: a ``Supervised`` process (its whole tree, its run
    folder and cgroup), its ``Connection`` and its output."""

    def __init__(self, config: dict, limits: Any, jobs: int) -> None:
        from harness.sandbox.supervisor import (
            Output,
            Peer,
            Supervised,
            rlimits,
            worker_env,
        )

        self.limits = limits
        self.output = Output(limits.output_bytes)

        def boot_config(process: Supervised) -> str:
            self.home = process.home
            return json.dumps({**config, "home": process.home, "repo_root": str(REPO_ROOT),
                               "memory_cgroup": process.memory_cgroup,
                               "cgroup": process.cgroup, "limits": rlimits(limits)})

        def argv(request_fd: int, reply_fd: int) -> list:
            return [sys.executable, "-I", "-c", BOOT, str(REPO_ROOT), str(request_fd),
                    str(reply_fd), boot_config]

        def env(home: str) -> dict[str, str]:
            return {**worker_env(home), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

        # Each run gets a worker's cap on its tasks.
        self.peer = Peer(argv, "mine", env, self.output, MESSAGE_BYTES, limits.max_processes * jobs,
                         cgroup_memory_mb=limits.tree_memory_mb * jobs)
        self.process, self.conn = self.peer.process, self.peer.conn

    def ready(self) -> tuple[bool, bool]:
        """Wait for the server's imports; whether it is sandboxed and in a PID namespace of its
        own. HarnessError if it does not start."""
        try:
            message = self.recv(time.monotonic() + self.limits.import_timeout_s)
            why = message.get("problem") if message.get("op") == "ready" else "no ready message"
        except (_Late, _ServerGone) as exc:
            why = str(exc) or f"no answer within {self.limits.import_timeout_s:g} s"
        if why is not None:
            last = self.output.text(clear=False).strip().splitlines()[-1:]
            raise HarnessError(f"the test server did not start: {why}"
                               + (f"; it printed: {last[0][:300]}" if last else ""),
                               "are numpy and pytest installed for this Python?")
        return message.get("sandboxed") is True, message.get("contained") is True

    def send(self, message: dict) -> None:
        """One request, written within SEND_LIMIT_S (the pipe is non-blocking: a stopped server
        cannot block the parent)."""
        from harness.sandbox.protocol import Died, Hung

        try:
            self.conn.send(message, time.monotonic() + SEND_LIMIT_S)
        except Hung:
            raise _ServerGone("the test server stopped taking requests") from None
        except (Died, OSError):
            raise _ServerGone(self._death()) from None

    def recv(self, deadline: float) -> dict:
        from harness.sandbox.protocol import BadMessage, Died, Hung

        try:
            return self.conn.recv(deadline)
        except Hung:
            raise _Late() from None
        except Died:
            raise _ServerGone(self._death()) from None
        except BadMessage as exc:
            raise _ServerGone(f"the test server sent {exc}") from None

    def _death(self) -> str:
        """How the server ended, read without reaping it: its pid stays ours until ``close``."""
        what, hint = self.process.death(self.limits, wait_s=0.5)
        return what.replace("the worker", "the test server") + (f" ({hint})" if hint else "")

    def close(self) -> None:
        """Kill and reap the server and everything it started; remove its directory."""
        self.peer.kill()


@dataclass(frozen=True)
class _Job:
    """One run to ask the server for: an implementation, with every test or only ``select``."""

    impl: Implementation
    select: frozenset[str] | None = None
    check: bool = False  # the reference with ``select``, to compare with its whole run
    first: bool = False  # the reference's first run, which says what each test reaches


@dataclass
class _Flight:
    """A run sent to the server: it must start within SEND_LIMIT_S, end within its limit, and
    once killed be reported dead within KILL_GRACE_S."""

    job: _Job
    limit_s: float
    deadline: float = field(default_factory=lambda: time.monotonic() + SEND_LIMIT_S)
    started: bool = False
    killing: bool = False


NOT_RUN = "not run: your tests already failed to run on a correct implementation"


def budget_problem(budget_s: float) -> str:
    """Why an implementation has no run when the whole run's budget ran out."""
    return (f"not run: the whole run's budget of {budget_s:g} s ran out first "
            "(ol tests --mine --budget S allows more)")


class _OutOfBudget(Exception):
    """The whole run's budget ran out: no new run starts, the runs in flight go with the server."""


def run_all(server: _ForkServer, impls: list[Implementation], jobs: int, run_limit_s: float,
            listener: Listener | None = None,
            paths: tuple[str, str] = ("", ""), exhaustive: bool = False,
            budget: tuple[float, float] | None = None) -> dict[str, Run]:
    """Every implementation once, ``jobs`` at a time, in a random order; a Run per key.

    Unless ``exhaustive``, a mutant runs only the tests that reach its function on the
    reference, learnt from a first run of the reference alone (``harness.own_tests.selection``;
    meanwhile the other jobs run implementations drawn at random, whole). Stops early once the
    suite fails to run on a correct implementation: nothing can be credited then, so the rest
    would only cost time (a suite that hangs everywhere, say). ``paths``: the snapshot's folder
    and the student's, so failure texts name the student's files. ``budget``: the whole run's
    seconds and the ``time.monotonic()`` deadline they end at; past it no run starts and the
    loop returns (the caller's ``server.close`` kills the runs in flight), and whatever has no
    verdict yet is "not run" (``budget_problem``), fail closed.
    """
    runs: dict[str, Run] = {}
    partial: dict[str, Run] = {}  # a mutant's run of some of the tests, settled at the end
    checks: dict[frozenset[str], Run] = {}
    first: list[Run] = []
    stopped = False
    deadline = budget[1] if budget is not None else float("inf")

    def record(job: _Job, run: Run) -> bool:
        nonlocal stopped
        if job.first:
            first.append(run)
            return False  # the rest is planned from it
        if job.check:
            checks[job.select or frozenset()] = run
            return not stopped
        (runs if job.select is None else partial)[job.impl.key] = run
        if listener is not None:
            listener.step(Step(len(runs) + len(partial), len(impls), job.impl.key))
        stopped = stopped or not (run.ran or not job.impl.correct)
        return not stopped

    failure, unrun = NOT_RUN, "not run"  # why the runs left have none, and their status
    try:
        flights: dict[int, _Flight] = {}
        waiting = [_Job(impl) for impl in impls]
        random.SystemRandom().shuffle(waiting)  # the order must tell a child nothing
        reference = next((i for i in impls if i.key == "reference"), None)
        if not exhaustive and reference is not None and not all(i.correct for i in impls):
            # The first run, with jobs - 1 of the others (whole) beside it.
            _execute(server, flights, waiting[:jobs - 1] + [_Job(reference, first=True)], jobs,
                     run_limit_s, paths, record, deadline)
            waiting = _plan(impls, waiting[jobs - 1:], first[0] if first else None)
        for job in waiting:
            if job.select == frozenset():  # no test reaches the mutated function: nothing to run
                record(job, Run("ran"))
        waiting = [job for job in waiting if job.select != frozenset()]
        random.SystemRandom().shuffle(waiting)
        if first and not first[0].ran:  # the reference's verdict: nothing can be credited
            record(_Job(reference or impls[0]), first[0])  # (and a hanging suite costs one limit)
        if not stopped:
            _execute(server, flights, waiting, jobs, run_limit_s, paths, record, deadline)
    except _ServerGone as exc:  # fail closed: whatever has no report did not run
        failure, unrun = str(exc), "crashed"
    except _OutOfBudget:
        failure = budget_problem(budget[0] if budget is not None else 0.0)
    out_of_budget = failure != NOT_RUN and unrun == "not run"
    reference_run = runs.get("reference")
    for impl in impls:
        if out_of_budget and impl.key in partial and partial[impl.key].chosen not in checks:
            # Its tests ran, but the reference's run of the same ones never did: no verdict.
            runs[impl.key] = Run("not run", problem=failure)
        elif impl.key in partial and reference_run is not None and reference_run.ran:
            runs[impl.key] = _settled(reference_run, partial[impl.key], checks)
        elif impl.key not in runs:  # in flight, waiting, or being killed when the server went
            runs[impl.key] = Run(unrun, problem=failure)
    return runs


def _plan(impls: list[Implementation], waiting: list[_Job], first: Run | None) -> list[_Job]:
    """The ``waiting`` runs with their tests: every correct implementation whole; each mutant
    with the tests that reached its function on the reference's ``first`` run (whole if it did
    not run or say), plus the reference's check run of each such choice."""
    if first is None or not first.ran or first.reach is None:
        return waiting
    planned, choices = [], set()
    for job in waiting:
        impl = job.impl
        chosen = None if impl.correct else first.reach.chosen(first.outcomes, impl.mutant.function)
        planned.append(_Job(impl, chosen))
        if chosen:
            choices.add(chosen)
    reference = next(i for i in impls if i.key == "reference")
    return planned + [_Job(reference, chosen, check=True) for chosen in sorted(choices, key=sorted)]


def _settled(reference: Run, run: Run, checks: dict[frozenset[str], Run]) -> Run:
    """A mutant's run of some tests (its ``select``) as a run of all of them, or PARTIAL."""
    if not run.ran:
        return run
    chosen = run.chosen
    if not chosen:  # no test reached the mutated function: nothing ran, nothing can catch it
        return Run("ran", dict(reference.outcomes), dict(reference.messages))
    check = checks.get(chosen)
    settled = settle(reference.outcomes, reference.messages, chosen,
                     check.outcomes if check is not None and check.ran else None,
                     (run.outcomes, run.messages))
    if isinstance(settled, str):
        return Run(PARTIAL, problem=settled)
    return Run("ran", *settled)


def _execute(server: _ForkServer, flights: dict[int, _Flight], waiting: list[_Job], jobs: int,
             run_limit_s: float, paths: tuple[str, str], done: Callable[[_Job, Run], Any],
             budget_deadline: float = float("inf")) -> None:
    """The ``waiting`` runs (from its end), ``jobs`` at a time, each handed to ``done`` as it
    ends; until none is left or ``done`` returns false. ``flights``: the runs the server has,
    also those an earlier call left (their ends go to ``done`` too). _ServerGone if the server
    went; _OutOfBudget once ``budget_deadline`` (``time.monotonic()``) has passed with runs
    left, the runs in flight still the server's."""
    going = True
    while going and (waiting or flights):
        if time.monotonic() >= budget_deadline:
            raise _OutOfBudget()
        while waiting and len(flights) < jobs:
            job, rid = waiting.pop(), secrets.randbits(62)
            request: dict[str, Any] = {"op": "run", "id": rid, "source": job.impl.source}
            if job.select is not None:
                request["select"] = sorted(job.select)  # sorted: the choice says no more
            server.send(request)
            flights[rid] = _Flight(job, run_limit_s)
        try:
            message = server.recv(min(budget_deadline, *(f.deadline for f in flights.values())))
        except _Late:
            if time.monotonic() >= budget_deadline:
                raise _OutOfBudget() from None
            for flight in _expire(server, flights):
                problem = f"the run did not finish within {flight.limit_s:g} s, so it was killed"
                timeout = _chose(Run("timeout", problem=problem), flight.job)
                going = done(flight.job, timeout) and going
            continue
        ended = _follow(message, flights)
        if ended is not None and not ended.killing:
            going = done(ended.job, _chose(judge_report(message, server.limits, paths), ended.job))


def _chose(run: Run, job: _Job) -> Run:
    return run if job.select is None else dataclasses.replace(run, chosen=job.select)


def _expire(server: _ForkServer, flights: dict[int, _Flight]) -> list[_Flight]:
    """Have the server kill every run past its deadline (it sees the runs' PID namespace); the
    runs newly killed. A server that did not start a run, or did not end one, is gone."""
    killed, now = [], time.monotonic()
    for rid, flight in flights.items():
        if flight.deadline > now:
            continue
        if not flight.started or flight.killing:
            raise _ServerGone("the test server stopped answering")
        server.send({"op": "kill", "id": rid})
        flight.killing, flight.deadline = True, now + KILL_GRACE_S
        killed.append(flight)
    return killed


def _follow(message: dict, flights: dict[int, _Flight]) -> _Flight | None:
    """Note a ``started`` message; the flight a ``done`` message ends."""
    rid = message.get("id")
    flight = flights.get(rid) if isinstance(rid, int) else None
    if flight is None:
        raise _ServerGone("the test server answered a run it was not given")
    if message.get("op") == "started" and not flight.started:
        flight.started, flight.deadline = True, time.monotonic() + flight.limit_s
        return None
    if message.get("op") == "done":
        return flights.pop(message["id"])
    raise _ServerGone("the test server sent a message out of the protocol")


def judge_report(message: dict, limits: Any, paths: tuple[str, str] = ("", "")) -> Run:
    """A child's ``done`` message as a Run: only a complete, well-formed report counts as ran."""
    from harness.sandbox.supervisor import describe_death

    shown = path_rewriter(*paths)
    report, status = message.get("report"), message.get("status")
    if status != 0 or type(status) is not int or not isinstance(report, str) or not report:
        what, hint = describe_death(status if type(status) is int else None, limits)
        what = what.replace("the worker", "pytest's process") + " before it could report"
        return Run("crashed", problem=what + (f" ({hint})" if hint else ""))
    try:
        exit_code, tests, errors, reach = _decode(report)
    except (ValueError, TypeError, KeyError, RecursionError):
        return Run("unreadable", problem="its report could not be read (did a test write to the "
                                         "harness's file descriptors, or fork?)")
    outcomes = {t: o for t, (o, _) in tests.items()}
    messages = {t: shown(m) for t, (o, m) in tests.items() if o == "failed"}
    if errors:
        return Run("collection error", outcomes, messages, "pytest could not collect your tests:\n"
                   + shown(errors[0]))
    if exit_code == 5 or not tests:
        return Run("no tests", outcomes, messages, "pytest collected no tests")
    if exit_code not in (0, 1):
        return Run("interrupted", outcomes, messages, f"pytest stopped early (exit status "
                   f"{exit_code}: interrupted, an internal error or a usage error)")
    return Run("ran", outcomes, messages, reach=reach)


def path_rewriter(snapshot: str, student: str) -> Callable[[str], str]:
    r"""What shows a failure text with every path of the snapshot ``snapshot`` as ``student``.

    pytest names a file by its absolute path or relative to the run's folder (``../../``): a path
    is the run of characters (no whitespace, no colon) that ends at the snapshot's last two
    folders (``ol-mine-stage-.../suite``), from its first ``/``, or from the first ``../`` of a
    relative one (a run holding the folders twice, which pytest never writes, is shown by the
    path of the last). Linear in the text, which is the student's: a test's message, up to
    ``MESSAGE_CHARS`` each, thousands per report, once per implementation. Paths are found in
    the reversed text, where each begins with the folders' names, a literal the regular
    expression engine finds at C speed, and is then read once. The forward expression,
    ``(?:(?:\.\./)+|/(?:[^\s:/]+/)*)`` and the folders, tried at every ``/`` and ``.``, was
    quadratic: 60 to 80 ms for one message of ``../../../..`` or ``/a/a/a/a``.
    """
    if not snapshot:
        return lambda text: text
    folder = Path(snapshot)
    tail = folder.relative_to(folder.parents[1]).as_posix()[::-1]
    runs, shown = re.compile(re.escape(tail) + r"[^\s:]*"), student[::-1]

    def run(match: re.Match) -> str:
        text, out, at = match.group(), [], 0  # text[at:] begins with the folders' names
        while True:
            start = at + len(tail)
            end = start + _before_folder(text, start)
            out.append(shown if end > start else text[at:start])
            at = text.find(tail, end)
            out.append(text[end:] if at < 0 else text[end:at])
            if at < 0:
                return "".join(out)

    return lambda text: runs.sub(run, text[::-1])[::-1] if tail[::-1] in text else text


_DOTDOTS = re.compile(r"(?:/\.\.)*")  # ../ steps, reversed


def _before_folder(text: str, start: int) -> int:
    """How much of the reversed run ``text[start:]`` is the path before a snapshot's folder: the
    longer of its ``../`` steps and its ``/name`` folders up to the first ``//`` (0: none)."""
    if not text.startswith("/", start):
        return 0
    double = text.find("//", start)
    folders = (double if double >= 0 else text.rfind("/", start)) + 1 - start
    steps = _DOTDOTS.match(text, start)  # always matches (maybe nothing)
    return max(folders, (steps.end() if steps else start) - start)


# A test's entry is three values and what it reached two (its id, the names as one string): a
# report's are within.
REPORT_VALUES = 6 * MAX_TESTS + 1000
REPORT_NESTING = 3  # the report, its tests, a test's entry


def _decode(text: str) -> tuple[int, dict[str, tuple[str, str]], list[str], Any]:
    """A child's report, every field checked; ValueError if anything is off (a report too large
    or too deep to be one is refused before it is parsed: ``protocol.bounded_loads``)."""
    from harness.sandbox.protocol import BadMessage, bounded_loads

    try:
        data = bounded_loads(text.encode("utf-8", "surrogatepass"), REPORT_VALUES, REPORT_NESTING)
    except BadMessage as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(data, dict) or data.get("format") != 1 or data.get("finished") is not True:
        raise ValueError("not a finished report")
    exit_code, tests, errors = data["exit"], data["tests"], data["errors"]
    if type(exit_code) is not int or not isinstance(tests, dict) or not isinstance(errors, list):
        raise ValueError("malformed report")
    if len(tests) > MAX_TESTS or not all(isinstance(e, str) for e in errors):
        raise ValueError("malformed report")
    out = {}
    for name, entry in tests.items():
        if (not isinstance(entry, dict) or entry.get("outcome") not in OUTCOMES
                or not isinstance(entry.get("message"), str) or len(name) > 2000):
            raise ValueError("malformed test entry")
        out[name] = (entry["outcome"], entry["message"][:MESSAGE_CHARS])
    return exit_code, out, [e[:MESSAGE_CHARS] for e in errors], decode_reach(data)


# == the verdict ===================================================================================

@dataclass(frozen=True)
class MineResult:
    """A suite against the correct implementations and the mutants: wrong tests and catches."""

    module: str
    suite: str
    correct: tuple[tuple[Implementation, Run], ...]
    mutants: tuple[tuple[Implementation, Run], ...]
    pitfalls: dict[int, str]
    duration_s: float = 0.0
    jobs: int = 1
    sandboxed: bool = False  # the runs saw a read-only file system and no network
    contained: bool = False  # and a PID namespace of their own
    budget_s: float = BUDGET_S  # the whole run's wall clock (--budget)
    out_of_budget: bool = False  # it ran out with implementations left: a partial result

    @property
    def runs_on_correct(self) -> bool:
        return all(run.ran for _, run in self.correct)

    @functools.cached_property
    def tests(self) -> list[str]:
        """Every test id seen on a correct implementation, in the order pytest ran them."""
        seen: dict[str, None] = {}
        for _, run in self.correct:
            seen.update(dict.fromkeys(run.outcomes))
        return list(seen)

    @functools.cached_property
    def wrong(self) -> dict[str, list[Implementation]]:
        """Tests that failed on a correct implementation -> those implementations."""
        out: dict[str, list[Implementation]] = {}
        for impl, run in self.correct:
            for test, outcome in run.outcomes.items():
                if outcome == "failed":
                    out.setdefault(test, []).append(impl)
        return out

    @functools.cached_property
    def trusted(self) -> list[str]:
        """Tests that passed on every correct implementation: only these can catch a bug."""
        if not self.runs_on_correct:
            return []
        return [t for t in self.tests
                if all(run.outcomes.get(t) == "passed" for _, run in self.correct)]

    def caught_by(self, run: Run) -> list[str]:
        return [t for t in self.trusted if run.ran and run.outcomes.get(t) == "failed"]

    def first_message(self, test: str) -> str:
        """``test``'s failure text on the first correct implementation it failed on, or ""."""
        for _, run in self.correct:
            if test in run.messages:
                return run.messages[test]
        return ""

    @property
    def caught(self) -> int:
        return sum(bool(self.caught_by(run)) for _, run in self.mutants)

    @property
    def not_run(self) -> int:
        """Implementations the budget left without a run (0 unless ``out_of_budget``)."""
        if not self.out_of_budget:
            return 0
        return sum(r.status == "not run" for _, r in (*self.correct, *self.mutants))

    @property
    def verdict(self) -> str:
        """pass; fail (a test fails on correct code, or cannot run on it); partial: the budget ran
        out before either was known, like ``ol check``'s partial run (exit 4: not a pass)."""
        if self.wrong or any(not r.ran and r.status != "not run" for _, r in self.correct):
            return "fail"
        if self.out_of_budget:
            return "partial"
        return "pass" if self.runs_on_correct else "fail"

    def to_json(self) -> dict[str, Any]:
        trusted = set(self.trusted)
        chapter = [(i, r) for i, r in self.mutants if not i.mutant.extended]
        return tagged("MineResult", FORMAT_VERSION, {
            "module": self.module, "suite": self.suite,
            "verdict": self.verdict, "score": self.caught, "max_score": len(self.mutants),
            "chapter": {"caught": sum(bool(self.caught_by(r)) for _, r in chapter),
                        "total": len(chapter)},
            "runs_on_correct": self.runs_on_correct,
            "correct": [{"name": i.key, "label": i.label, "status": r.status, "problem": r.problem,
                         "failed": [t for t, o in r.outcomes.items() if o == "failed"],
                         "differs": i.differs, "outcomes": r.outcomes, "messages": r.messages}
                        for i, r in self.correct],
            "wrong_tests": [{"test": t, "fails_on": [i.key for i in impls],
                             "message": self.first_message(t)}
                            for t, impls in self.wrong.items()],
            "tests": [{"test": t, "trusted": t in trusted,
                       "catches": [i.key for i, r in self.mutants if t in self.caught_by(r)]}
                      for t in self.tests],
            "bugs": [_bug_json(self, i, r) for i, r in self.mutants],
            "pitfalls": [{"pitfall": n, "text": self.pitfalls.get(n, ""), "caught": c, "total": t}
                         for n, c, t in pitfall_table(self)],
            "pitfall_texts": {str(n): text for n, text in self.pitfalls.items()},
            "duration_s": self.duration_s, "jobs": self.jobs,
            "sandboxed": self.sandboxed, "contained": self.contained,
            "budget_s": self.budget_s, "out_of_budget": self.out_of_budget,
            "not_run": self.not_run,
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None) -> MineResult:
        """The result ``to_json`` wrote. The JSON names each bug by its id and shows only what a
        student may read, so the mutants are the library's (HarnessError if it changed since);
        no implementation's source comes back."""
        rerun = rerun_command(d, "module", "ol tests {} --mine PATH", "ol tests MODULE --mine PATH")
        untag(d, "MineResult", (FORMAT_VERSION,), source, rerun)
        with reading("MineResult", source, rerun):
            correct = tuple((Implementation(c["name"], c["label"], "", differs=c.get("differs", "")),
                             _run_from_json(c)) for c in d["correct"])
            mutants = _library_bugs(d["module"], d["bugs"], source, rerun)
            return cls(d["module"], d["suite"], correct, mutants,
                       {int(n): text for n, text in d["pitfall_texts"].items()},
                       float(d["duration_s"]), int(d["jobs"]), bool(d["sandboxed"]),
                       bool(d["contained"]), float(d.get("budget_s", BUDGET_S)),
                       d.get("out_of_budget") is True)


def _run_from_json(d: dict[str, Any]) -> Run:
    status = d["run"] if "run" in d else d["status"]  # a bug's entry says "run", a correct one's "status"
    return Run(status, dict(d["outcomes"]), dict(d["messages"]), d.get("problem", ""))


def _library_bugs(module_id: str, bugs: list[dict[str, Any]], source: str | None,
                  rerun: str) -> tuple[tuple[Implementation, Run], ...]:
    """Each bug of a result's JSON as the library's mutant, checked to be the one that ran."""
    from harness.engine.mutants import load_mutants

    library = {m.id: m for m in load_mutants(module_id)} if bugs else {}
    out = []
    for bug in bugs:
        m = library.get(bug["id"])
        if m is None or (m.pitfall, m.description, m.extended) != (
                bug["pitfall"], bug["description"], bug["extended"]):
            what = "is no longer in" if m is None else "has changed in"
            raise HarnessError(f"{source_name(source)}: bug {bug['id']} {what} the mutant library "
                               f"of {module_id} since the result was written", f"rerun `{rerun}`")
        out.append((Implementation(m.id, bug["label"], "", mutant=m), _run_from_json(bug)))
    return tuple(out)


def _bug_json(result: MineResult, impl: Implementation, run: Run) -> dict[str, Any]:
    m, caught_by = impl.mutant, result.caught_by(run)
    doc = {"id": m.id, "pitfall": m.pitfall, "pitfall_text": result.pitfalls.get(m.pitfall, ""),
           "description": m.description, "extended": m.extended, "caught": bool(caught_by),
           "caught_by": caught_by, "run": run.status, "problem": run.problem}
    if not caught_by:
        doc["hint"] = m.hint
    doc.update(label=impl.label, outcomes=run.outcomes, messages=run.messages)
    return doc


def pitfall_table(result: MineResult) -> list[tuple[int, int, int]]:
    """(pitfall, caught, total) over the mutants, by pitfall number."""
    table: dict[int, list[int]] = {}
    for impl, run in result.mutants:
        row = table.setdefault(impl.mutant.pitfall, [0, 0])
        row[0] += bool(result.caught_by(run))
        row[1] += 1
    return [(n, c, t) for n, (c, t) in sorted(table.items())]


def run_mine(module: Module, suite: Path, jobs: int | None = None, limits: Any = None,
             run_limit_s: float = RUN_LIMIT_S, mutant_ids: list[str] | None = None,
             listener: Listener | None = None,
             exhaustive: bool = False, budget_s: float | None = None) -> MineResult:
    """The suite at ``suite`` against every implementation of ``module``: the verdict. Each
    mutant runs the tests that reach its function (``harness.own_tests.selection``), or every
    test if ``exhaustive``: the same verdict, every list the same. ``budget_s`` (default
    ``BUDGET_S``) bounds the whole, from here: past it the result is partial (``run_all``)."""
    from harness.sandbox.supervisor import Limits

    start = time.perf_counter()
    budget_s = BUDGET_S if budget_s is None else budget_s
    budget = (budget_s, time.monotonic() + budget_s)
    from harness.own_tests.alternatives import load_alternatives

    count = 1 + len(load_alternatives(module)) + len(_mutants(module, mutant_ids))
    jobs = max(1, min(jobs or os.cpu_count() or 1, count))
    root, config = stage(module, suite)
    config["import_name"] = module.import_name
    try:
        server = _ForkServer(config, limits or Limits(), jobs)
        try:
            # The mutants are applied while the server starts (its imports: the other core).
            impls = implementations(module, mutant_ids)
            sandboxed, contained = server.ready()
            runs = run_all(server, impls, jobs, run_limit_s, listener,
                           (config["snapshot"], str(suite.parent)), exhaustive, budget)
        finally:
            server.close()
    finally:
        remove_tree(root)
    if listener is not None:
        listener.finished()
    return MineResult(module.id, str(suite), tuple((i, runs[i.key]) for i in impls if i.correct),
                      tuple((i, runs[i.key]) for i in impls if not i.correct),
                      dict(module.pitfalls),
                      time.perf_counter() - start, jobs, sandboxed, contained, budget_s,
                      any(r.problem == budget_problem(budget_s) for r in runs.values()))
