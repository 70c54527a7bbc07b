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
stdin closed), imports numpy, pytest and the reference dependencies once. Per implementation it
forks a child that installs the implementation as the module from memory, runs ``pytest.main``
over a snapshot of the suite with a recording plugin (``_Recorder``), writes one JSON report to a
pipe of its own and exits. The parent keeps ``--jobs`` children busy and decodes every report as
plain data (no pickle). It enforces a wall-clock limit per run: past it, the server SIGKILLs that
run's process tree (it sees the runs' PID namespace, the parent does not), and a server that does
not confirm within seconds is killed with everything it started.

Trust. The student's tests run in the children and can do anything there, including forging the
report, which is written from inside their process. So nothing rests on a child's honesty, and a
child cannot learn which implementation it runs except by testing it: no name, kind or position
of an implementation reaches the server (a random run id and the source, in a random order), and
the implementation's frames are hidden from tracebacks. Whatever a report claims is then a
function of the implementation's behaviour: a forged "all passed" on a mutant only means
"missed", and a forged failure fails on correct code as well. Every failure to report fails
closed: a crash, a timeout, a report that does not parse or a session that did not finish means
"not caught" for a mutant and "cannot run" for a correct implementation, after which no test is
trusted to catch anything. (A test that reads the implementation's code rather than calling it
can still tell them apart; like any test of code instead of behaviour, that is outside what this
grades.)

Longer than the house 400 lines: the parent and the server speak one protocol and only make sense
read together; the verdict (with its JSON shape) follows them. Staging the suite is
``harness.own_tests.stage``; the reports (text, JSON, Gradescope) are ``harness.report.own_tests``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import gc
import json
import os
import random
import re
import secrets
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.engine.course import REFERENCE_PYTHON, REPO_ROOT, Module
from harness.errors import HarnessError, MutantDoesNotApply, VerdictFailure
from harness.own_tests.stage import resolve_suite, stage
from harness.engine.serial import reading, source_name, tagged, untag
from harness.sandbox.fs import remove_tree

RUN_LIMIT_S = 60.0  # wall clock per implementation: the whole suite once
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
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE = 1, 4
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from harness.own_tests.engine import serve; serve(sys.argv[2:])")


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
    from harness.own_tests.alternatives import load_alternatives
    from harness.lab.engine import mutant_source
    from harness.engine.mutants import find_mutant, load_mutants

    impls = [Implementation("reference", "the reference",
                            (REFERENCE_PYTHON / module.file).read_text(encoding="utf-8"))]
    impls += [Implementation(a.name, f"hidden implementation '{a.name}'", a.source(module),
                             differs=a.differs) for a in load_alternatives(module)]
    mutants = (load_mutants(module.id) if mutant_ids is None
               else [find_mutant(module.id, m) for m in mutant_ids])
    for m in mutants:
        try:
            impls.append(Implementation(m.id, f"bug {m.id}", mutant_source(m, module), mutant=m))
        except MutantDoesNotApply as exc:
            raise VerdictFailure(exc.message, exc.hint) from None
    return impls


@dataclass(frozen=True)
class Run:
    """The suite against one implementation, as the parent judged the child's report."""

    status: str  # ran | timeout | crashed | unreadable | interrupted | collection error | no tests
    outcomes: dict[str, str] = field(default_factory=dict)  # test id -> one of OUTCOMES
    messages: dict[str, str] = field(default_factory=dict)  # test id -> failure text
    problem: str = ""  # why the status is not "ran", for a student

    @property
    def ran(self) -> bool:
        return self.status == "ran"


# == the server (runs in the worker process) =======================================================

def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def serve(argv: list[str]) -> None:
    """The fork server's main: limits and hardening first, then the imports, then the runs."""
    from harness.sandbox import worker

    request_fd, reply_fd, config = int(argv[0]), int(argv[1]), json.loads(argv[2])
    # As the isolated worker, before any thread starts (in a PID namespace this process is then
    # PID 1, which no run can signal). tests/mine checks that the result matches the worker's.
    sandboxed, contained = worker.harden(config)
    _prctl(_PR_SET_DUMPABLE, 0)  # inherited: no run can open another's descriptors or memory
    for fd in (request_fd, reply_fd):
        os.set_inheritable(fd, False)
    from harness.sandbox.protocol import Channel

    forks = _Forks(Channel(request_fd, reply_fd), request_fd, config)
    sys.path[:] = [p for p in sys.path if p != config["repo_root"]]
    problem = _warm_up(config)
    gc.collect()
    gc.freeze()  # the children's collections skip what the server imported: fast, no copy-on-write
    forks.channel.send_text(json.dumps({"op": "ready", "sandboxed": sandboxed,
                                        "contained": contained, "problem": problem}))
    if problem is None:
        forks.serve()
    os._exit(0)


def _warm_up(config: dict) -> str | None:
    """Import once what every child needs; the reason if something essential fails."""
    import importlib

    sys.path.insert(0, config["lib"])
    try:
        import numpy  # noqa: F401
        import pytest  # noqa: F401
        from _pytest.config import default_plugins

        for name in default_plugins:
            with contextlib.suppress(ImportError):
                importlib.import_module(f"_pytest.{name}")
        for name in config["deps"]:
            importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which stops
        return f"{type(exc).__name__}: {exc}"
    for name in config["preload"]:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    return None


class _Forks:
    """The server's loop: fork a child per request, collect its report, say when it is done."""

    def __init__(self, channel: Any, request_fd: int, config: dict) -> None:
        from harness.sandbox.proctree import kill_tree

        self.channel, self.request_fd, self.config = channel, request_fd, config
        self.kill_tree = kill_tree  # held before any run: a run cannot swap it
        self.poller = select.poll()
        self.poller.register(request_fd, select.POLLIN)
        self.children: dict[int, dict] = {}  # pid -> {"id", "fd", "data", "cut"}
        self.by_fd: dict[int, dict] = {}

    def serve(self) -> None:
        while True:
            for fd, _ in self.poller.poll(50):
                if fd == self.request_fd:
                    request = self.channel.recv()
                    if request is None:
                        return  # the parent is done; it kills whatever is left
                    if request["op"] == "kill":
                        self.kill(request["id"])
                    else:
                        self.start(request["id"], request["source"])
                elif fd in self.by_fd:
                    self.read(self.by_fd[fd])
            self.reap()

    def start(self, rid: int, source: str) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child; its exit status is what the parent sees
            try:
                os.close(read_fd)
                _child(write_fd, source, self.config)
            finally:
                os._exit(70)
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        child = {"id": rid, "fd": read_fd, "data": bytearray(), "cut": False}
        self.children[pid], self.by_fd[read_fd] = child, child
        self.poller.register(read_fd, select.POLLIN)
        self.channel.send_text(json.dumps({"op": "started", "id": rid, "pid": pid}))

    def kill(self, rid: int) -> None:
        """The parent's wall-clock limit passed: SIGKILL that run's whole tree (seen from here, so
        in the PID namespace's numbering). Its ``done`` follows when it is reaped."""
        for pid, child in self.children.items():
            if child["id"] == rid:
                self.kill_tree(pid, include_root=True)

    def read(self, child: dict) -> None:
        while child["fd"] is not None:
            try:
                data = os.read(child["fd"], 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            room = REPORT_BYTES - len(child["data"])
            child["data"] += data[:room]
            child["cut"] = child["cut"] or len(data) > room
            if not data or child["cut"]:
                self.close(child)

    def close(self, child: dict) -> None:
        if child["fd"] is not None:
            self.poller.unregister(child["fd"])
            del self.by_fd[child["fd"]]
            os.close(child["fd"])
            child["fd"] = None

    def reap(self) -> None:
        """Collect exited children (and orphans re-parented here); report each child's run."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self.children.pop(pid, None)
            if child is None:
                continue
            self.read(child)  # what is still in the pipe; a grandchild may hold it open
            self.close(child)
            report = None if child["cut"] else child["data"].decode("utf-8", "replace")
            self.channel.send_text(json.dumps({"op": "done", "id": child["id"], "report": report,
                                               "status": os.waitstatus_to_exitcode(status)}))


def _child(write_fd: int, source: str, config: dict) -> None:  # pragma: no cover - forked
    """One run: this implementation as the module, the suite through pytest, the report out."""
    os.setpgid(0, 0)  # the parent kills this run's process group and descendants
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, write_fd)  # nothing of the server's: its pipes, other runs' reports
    os.closerange(write_fd + 1, os.sysconf("SC_OPEN_MAX"))
    work = tempfile.mkdtemp(prefix="run-", dir=config["home"])
    os.chdir(work)
    os.environ.update(TMPDIR=work, HOME=work)
    tempfile.tempdir = None
    _install(config["import_name"], source)
    import pytest

    recorder = _Recorder()
    code = pytest.main([*config["targets"], *config["pytest_args"]], plugins=[recorder])
    view = memoryview(json.dumps(recorder.report(int(code))).encode("utf-8"))
    while view:
        view = view[os.write(write_fd, view):]
    os._exit(0)


class _Loader:
    """Executes the implementation from its code object: no file, no source for ``inspect``."""

    def __init__(self, code: Any) -> None:
        self.code = code

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        exec(self.code, module.__dict__)  # noqa: S102 - our own implementation, as harness.engine.own_code


def _install(import_name: str, source: str) -> None:  # pragma: no cover - forked
    """``import_name`` is this source, from memory. Its file name is in angle brackets, which
    pytest treats as generated code and leaves out of tracebacks: no line of it is shown."""
    import importlib
    import importlib.util

    package, _, leaf = import_name.rpartition(".")
    parent = importlib.import_module(package)
    loader = _Loader(compile(source, f"<{import_name.replace('.', '/')}.py>", "exec"))
    spec = importlib.util.spec_from_loader(import_name, loader, origin="ol")
    module = importlib.util.module_from_spec(spec)
    sys.modules[import_name] = module
    loader.exec_module(module)
    setattr(parent, leaf, module)


class _Recorder:
    """The children's pytest plugin: each test's outcome and failure text, and how pytest ended."""

    def __init__(self) -> None:
        self.tests: dict[str, dict[str, str]] = {}
        self.errors: list[str] = []
        self.exit: int | None = None

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.errors.append(f"{report.nodeid or 'collection'}: {report.longreprtext}"
                               [:MESSAGE_CHARS])

    def pytest_runtest_logreport(self, report: Any) -> None:
        entry = self.tests.setdefault(report.nodeid, {"outcome": "incomplete", "message": ""})
        if report.failed:
            if entry["outcome"] != "failed":
                phase = "" if report.when == "call" else f"error in {report.when}: "
                text = phase + report.longreprtext
                entry.update(outcome="failed", message=text[:MESSAGE_CHARS])
        elif report.skipped:
            if entry["outcome"] != "failed":
                entry["outcome"] = "skipped"
        elif report.when == "call" and entry["outcome"] == "incomplete":
            entry["outcome"] = "passed"

    def pytest_sessionfinish(self, session: Any, exitstatus: int) -> None:
        self.exit = int(exitstatus)

    def report(self, code: int) -> dict:
        return {"format": 1, "finished": self.exit is not None, "exit": code,
                "tests": self.tests, "errors": self.errors[:20]}


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
                               "cgroup": process.cgroup, "limits": rlimits(limits)})

        def argv(request_fd: int, reply_fd: int) -> list:
            return [sys.executable, "-I", "-c", _BOOT, str(REPO_ROOT), str(request_fd),
                    str(reply_fd), boot_config]

        def env(home: str) -> dict[str, str]:
            return {**worker_env(home), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

        # Each run gets a worker's cap on its tasks.
        self.peer = Peer(argv, "mine", env, self.output, MESSAGE_BYTES, limits.max_processes * jobs)
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


@dataclass
class _Flight:
    """A run sent to the server: it must start within SEND_LIMIT_S, end within its limit, and
    once killed be reported dead within KILL_GRACE_S."""

    impl: Implementation
    limit_s: float
    deadline: float = field(default_factory=lambda: time.monotonic() + SEND_LIMIT_S)
    started: bool = False
    killing: bool = False


NOT_RUN = "not run: your tests already failed to run on a correct implementation"


def run_all(server: _ForkServer, impls: list[Implementation], jobs: int, run_limit_s: float,
            progress: Callable[[int, int, str], None] | None = None,
            paths: tuple[str, str] = ("", "")) -> dict[str, Run]:
    """Every implementation once, ``jobs`` at a time, in a random order; a Run per key.

    Stops early once the suite fails to run on a correct implementation: nothing can be credited
    then, so the rest would only cost time (a suite that hangs everywhere, say). ``paths``: the
    snapshot's folder and the student's, so failure texts name the student's files.
    """
    waiting = list(impls)
    random.SystemRandom().shuffle(waiting)  # the order must tell a child nothing
    flights: dict[int, _Flight] = {}
    runs: dict[str, Run] = {}

    def record(impl: Implementation, run: Run) -> bool:
        runs[impl.key] = run
        if progress is not None:
            progress(len(runs), len(impls), impl.key)
        return run.ran or not impl.correct

    failure, going = NOT_RUN, True
    try:
        while going and (waiting or flights):
            while waiting and len(flights) < jobs:
                impl, rid = waiting.pop(), secrets.randbits(62)
                server.send({"op": "run", "id": rid, "source": impl.source})
                flights[rid] = _Flight(impl, run_limit_s)
            try:
                message = server.recv(min(f.deadline for f in flights.values()))
            except _Late:
                for flight in _expire(server, flights):
                    problem = (f"the run did not finish within {flight.limit_s:g} s, so it was "
                               "killed")
                    going = record(flight.impl, Run("timeout", problem=problem)) and going
                continue
            flight = _follow(message, flights)
            if flight is not None and not flight.killing:
                going = record(flight.impl, judge_report(message, server.limits, paths))
    except _ServerGone as exc:  # fail closed: whatever has no report did not run
        failure = str(exc)
    for impl in [f.impl for f in flights.values() if not f.killing] + waiting:
        runs[impl.key] = Run("crashed" if failure != NOT_RUN else "not run", problem=failure)
    return runs


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
    flight = flights.get(message.get("id"))
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

    # pytest names a file by its absolute path or relative to the run's folder ("../../..."):
    # either form of the snapshot's path is shown as the student's own.
    snapshot = Path(paths[0]) if paths[0] else None
    tail = snapshot.relative_to(snapshot.parents[1]).as_posix() if snapshot else ""
    pattern = re.compile(r"(?:(?:\.\./)+|/(?:[^\s:/]+/)*)" + re.escape(tail)) if tail else None

    def shown(text: str) -> str:
        return pattern.sub(lambda _: paths[1], text) if pattern else text

    report, status = message.get("report"), message.get("status")
    if status != 0 or type(status) is not int or not isinstance(report, str) or not report:
        what, hint = describe_death(status if type(status) is int else None, limits)
        what = what.replace("the worker", "pytest's process") + " before it could report"
        return Run("crashed", problem=what + (f" ({hint})" if hint else ""))
    try:
        exit_code, tests, errors = _decode(report)
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
    return Run("ran", outcomes, messages)


def _decode(text: str) -> tuple[int, dict[str, tuple[str, str]], list[str]]:
    """A child's report, every field checked; ValueError if anything is off."""
    data = json.loads(text)
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
    return exit_code, out, [e[:MESSAGE_CHARS] for e in errors]


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
    def verdict(self) -> str:
        return "pass" if self.runs_on_correct and not self.wrong else "fail"

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
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None) -> MineResult:
        """The result ``to_json`` wrote. The JSON names each bug by its id and shows only what a
        student may read, so the mutants are the library's (HarnessError if it changed since);
        no implementation's source comes back."""
        module = d.get("module") if isinstance(d, dict) else None
        rerun = (f"ol tests {module} --mine PATH" if isinstance(module, str)
                 else "ol tests MODULE --mine PATH")
        untag(d, "MineResult", (FORMAT_VERSION,), source, rerun)
        with reading("MineResult", source, rerun):
            correct = tuple((Implementation(c["name"], c["label"], "", differs=c.get("differs", "")),
                             _run_from_json(c)) for c in d["correct"])
            mutants = _library_bugs(d["module"], d["bugs"], source, rerun)
            return cls(d["module"], d["suite"], correct, mutants,
                       {int(n): text for n, text in d["pitfall_texts"].items()},
                       float(d["duration_s"]), int(d["jobs"]), bool(d["sandboxed"]),
                       bool(d["contained"]))


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
             progress: Callable[[int, int, str], None] | None = None) -> MineResult:
    """The suite at ``suite`` against every implementation of ``module``: the verdict."""
    from harness.sandbox.supervisor import Limits

    start = time.perf_counter()
    impls = implementations(module, mutant_ids)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(impls)))
    root, config = stage(module, suite)
    config["import_name"] = module.import_name
    try:
        server = _ForkServer(config, limits or Limits(), jobs)
        try:
            sandboxed, contained = server.ready()
            runs = run_all(server, impls, jobs, run_limit_s, progress,
                           (config["snapshot"], str(suite.parent)))
        finally:
            server.close()
    finally:
        remove_tree(root)
    return MineResult(module.id, str(suite), tuple((i, runs[i.key]) for i in impls if i.correct),
                      tuple((i, runs[i.key]) for i in impls if not i.correct),
                      dict(module.pitfalls),
                      time.perf_counter() - start, jobs, sandboxed, contained)


# == the command ===================================================================================

def run_mine_command(module: Module, args: argparse.Namespace) -> int:
    """``ol tests MODULE --mine PATH [--workspace DIR] [--json F] [--gradescope F] [--jobs N]``."""
    from harness.own_tests.alternatives import load_alternatives
    from harness.commands import _check_report_paths
    from harness.lab.engine import progress_printer
    from harness.report.io import write_atomic
    from harness.report.own_tests import format_text, to_gradescope, to_json_text

    load_alternatives(module)  # a module without hidden implementations stops here, in one line

    json_path, gradescope_path = getattr(args, "json", None), getattr(args, "gradescope", None)
    jobs = getattr(args, "jobs", None)
    if jobs is not None:
        from harness.cli import JOBS_MAX, check_count

        check_count("--jobs", jobs, 1, JOBS_MAX, "e.g. --jobs 2")
    suite = resolve_suite(args.mine, args.workspace)
    workspace = Path(args.workspace).expanduser() if args.workspace else Path.cwd()
    _check_report_paths([("--json", json_path), ("--gradescope", gradescope_path)], workspace,
                        [(suite, f"your tests (--mine {args.mine})")])
    print(f"ol tests {module.id} --mine {args.mine}: your tests against the reference, the hidden "
          "correct implementations and every known bug", flush=True)
    result = run_mine(module, suite, jobs, progress=progress_printer())
    sys.stdout.write(format_text(result))
    for path, render in ((json_path, to_json_text), (gradescope_path, to_gradescope)):
        if path:
            write_atomic(Path(path), render(result))
            print(f"wrote {path}", flush=True)
    return 0 if result.verdict == "pass" else 1
