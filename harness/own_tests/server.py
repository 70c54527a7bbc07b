"""The own-tests fork server: the side of ``ol tests --mine`` that runs inside a sandbox worker.

``harness.own_tests.engine`` starts it in a worker (``BOOT``) and speaks to it; here it hardens
itself, imports numpy, pytest and the reference dependencies once, makes the half of pytest's
start that depends on no implementation (``harness.own_tests.pytest_start``), then forks one child
per implementation, which installs the implementation from memory, runs the rest of
``pytest.main`` over the suite with a recording plugin (``_Recorder``) and writes one JSON report
to a pipe of its own.
Read with the engine's docstring: the two sides speak one protocol.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import importlib.abc
import json
import os
import select
import signal
import sys
import tempfile
import types
from typing import Any

import pytest

from harness.own_tests.engine import MESSAGE_CHARS, REPORT_BYTES
from harness.own_tests.pytest_start import PytestStart
from harness.sandbox.harden import confine_run

_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE = 1, 4
# What every run of pytest imported on its own (pytest's debugging and faulthandler plugins, its
# argument completion, importlib.metadata's email parser) or a suite reaches through numpy
# without naming it (``np.random``): about 12 ms a run, imported once here instead.
WARM = ("pdb", "faulthandler", "_pytest._argcomplete", "email.parser", "numpy.random")


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def serve(argv: list[str]) -> None:
    """The fork server's main: limits and hardening first, then the imports, then the runs."""
    from harness.sandbox.harden import harden
    from harness.sandbox.proctree import kill_tree
    from harness.sandbox.protocol import Channel

    request_fd, reply_fd, config = int(argv[0]), int(argv[1]), json.loads(argv[2])
    # Everything of the harness this process needs is imported above: its view holds none of
    # ol's checkout, only the Python installation and the staged suite (config["view"]).
    sys.path[:] = [p for p in sys.path if p != config["repo_root"]]
    stage = os.path.dirname(config["snapshot"])  # the staged suite, its pytest.ini, the deps
    config.setdefault("view", {"read": [config["snapshot"], config["lib"],
                                        os.path.join(stage, "pytest.ini")],
                               "hide": [config["repo_root"]],
                               "disk_mb": config["limits"].get("disk_mb", 64), "code": None})
    # As the isolated worker, before any thread starts (in a PID namespace this process is then
    # PID 1, which no run can signal). tests/mine checks that the result matches the worker's.
    # Each run lowers itself (harness.sandbox.harden.confine_run) once it has a run folder and
    # IPC of its own: runs share nothing, files or shared memory (a suite could compare notes).
    confinement = harden(config, keep_privileges=True)
    sandboxed, contained = confinement.read_only, confinement.contained
    _prctl(_PR_SET_DUMPABLE, 0)  # inherited: no run can open another's descriptors or memory
    for fd in (request_fd, reply_fd):
        os.set_inheritable(fd, False)
    forks = _Forks(Channel(request_fd, reply_fd), request_fd, config, kill_tree)
    problem = _warm_up(config)
    if problem is None:
        try:
            forks.start_of_pytest = PytestStart([*config["targets"], *config["pytest_args"]],
                                                _Recorder(), config["home"])
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which stops
            problem = f"pytest's start: {type(exc).__name__}: {exc}"
    gc.collect()
    gc.freeze()  # the children's collections skip what the server imported: fast, no copy-on-write
    forks.channel.send_text(json.dumps({"op": "ready", "sandboxed": sandboxed,
                                        "contained": contained, "problem": problem,
                                        "confinement": confinement.to_json()}))
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
        for name in WARM:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
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

    def __init__(self, channel: Any, request_fd: int, config: dict, kill_tree: Any) -> None:
        self.channel, self.request_fd, self.config = channel, request_fd, config
        self.kill_tree = kill_tree  # held before any run: a run cannot swap it
        self.poller = select.poll()
        self.poller.register(request_fd, select.POLLIN)
        self.start_of_pytest: PytestStart | None = None  # set once warm, before any run
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
                        self.start(request["id"], request["source"], request.get("select"))
                elif fd in self.by_fd:
                    self.read(self.by_fd[fd])
            self.reap()

    def start(self, rid: int, source: str, chosen: list[str] | None) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child; its exit status is what the parent sees
            try:
                os.close(read_fd)
                assert self.start_of_pytest is not None, "serve starts no run without it"
                _child(write_fd, source, self.config, self.start_of_pytest, chosen)
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


def _child(write_fd: int, source: str, config: dict, start: PytestStart,
           chosen: list[str] | None) -> None:  # pragma: no cover - forked
    """One run: this implementation as the module, the suite through pytest (its start made
    before the fork, ``start``; only the tests ``chosen`` names, if given), the report out,
    with what each test reached of the module."""
    os.setpgid(0, 0)  # the parent kills this run's process group and descendants
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, write_fd)  # nothing of the server's: its pipes, other runs' reports
    os.closerange(write_fd + 1, os.sysconf("SC_OPEN_MAX"))
    work = config["home"]  # a fresh tmpfs of this run's own, over the server's run folder
    if not confine_run(work, config["limits"].get("disk_mb", 64)):
        os._exit(72)  # not confined as the others: no report, so the run counts for nothing
    os.chdir(work)
    os.environ.update(TMPDIR=work, HOME=work)
    tempfile.tempdir = None
    module = _install(config["import_name"], source)
    recorder = start.recorder  # this run's copy, as it was made: no run had used it
    _record_reach(module, recorder)  # in every run alike: it tells a run nothing
    code = start.main(None if chosen is None else _Select(chosen))
    view = memoryview(json.dumps(recorder.report(int(code))).encode("utf-8"))
    while view:
        view = view[os.write(write_fd, view):]
    os._exit(0)


class _Loader(importlib.abc.Loader):
    """Executes the implementation from its code object: no file, no source for ``inspect``."""

    def __init__(self, code: Any) -> None:
        self.code = code

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        exec(self.code, module.__dict__)  # noqa: S102 - our own implementation, as harness.engine.own_code


def _install(import_name: str, source: str) -> Any:  # pragma: no cover - forked
    """``import_name`` is this source, from memory. Its file name is in angle brackets, which
    pytest treats as generated code and leaves out of tracebacks: no line of it is shown."""
    import importlib
    import importlib.util

    package, _, leaf = import_name.rpartition(".")
    parent = importlib.import_module(package)
    loader = _Loader(compile(source, f"<{import_name.replace('.', '/')}.py>", "exec"))
    spec = importlib.util.spec_from_loader(import_name, loader, origin="ol")
    assert spec is not None, "a loader always gives a spec"
    module = importlib.util.module_from_spec(spec)
    sys.modules[import_name] = module
    loader.exec_module(module)
    setattr(parent, leaf, module)
    return module


def _record_reach(module: Any, recorder: _Recorder) -> None:  # pragma: no cover - forked
    """Every call of the module's own functions and methods (``f``, ``Class.method``), through
    its attributes, noted by ``recorder`` against the test running: done before any test module
    imports a name from it, so ``from ... import f`` at a test module's top is the wrapper too,
    and so is a call from inside the module (its globals are these attributes). As
    ``harness.lab.reach`` does for the catalog; the wrappers only note, the results are the
    implementation's own."""
    for name, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            setattr(module, name, _noting(value, name, recorder))
        elif isinstance(value, type) and value.__module__ == module.__name__:
            for attr, member in list(vars(value).items()):
                if isinstance(member, types.FunctionType):
                    setattr(value, attr, _noting(member, f"{name}.{attr}", recorder))


def _noting(fn: Any, name: str, recorder: _Recorder) -> Any:  # pragma: no cover - forked
    last: list[object] = [None]  # the recorder's epoch when this wrapper last noted its call

    @functools.wraps(fn)
    def noted(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # read by pytest: no failure text shows this wrapper
        if last[0] is not recorder.epoch:  # once per test and phase: a loop's calls cost little
            last[0] = recorder.epoch
            recorder.reach(name)
        return fn(*args, **kwargs)

    return noted


class _Select:
    """The children's pytest plugin that keeps only the tests named (by node id: a student's
    parametrised ids and classes included). Given as an object, never as arguments, so no id
    can be read by pytest as an option; last of the hooks that reorder or deselect."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = frozenset(ids)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        dropped = [item for item in items if item.nodeid not in self.ids]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if item.nodeid in self.ids]


class _Recorder:
    """The children's pytest plugin: each test's outcome and failure text, how pytest ended, and
    which of the module's functions each test called (``reached``).

    A call counts for the test running (its setup, its fixtures of its own, its body). A call
    anywhere else can decide other tests' outcomes, so it counts for every test
    (``everywhere``): at collection (a test module's top, a parametrisation), in the setup of a
    fixture wider than a test (its value is shared), in a teardown (a wider fixture's ends with
    whichever test is last)."""

    def __init__(self) -> None:
        self.tests: dict[str, dict[str, str]] = {}
        self.errors: list[str] = []
        self.exit: int | None = None
        self.current: str | None = None  # the test running, outside its teardown
        self.wide = 0  # inside the setup of a fixture wider than one test
        self.reached: dict[str, set[str]] = {}
        self.everywhere: set[str] = set()
        self.epoch = object()  # new whenever where a call counts changes

    def reach(self, name: str) -> None:
        if self.current is None or self.wide:
            self.everywhere.add(name)
        else:
            self.reached.setdefault(self.current, set()).add(name)

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.current, self.epoch = nodeid, object()

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.current, self.epoch = None, object()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: Any, nextitem: Any) -> Any:
        current, self.current, self.epoch = self.current, None, object()
        try:
            return (yield)
        finally:
            self.current, self.epoch = current, object()

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any, request: Any) -> Any:
        wide = fixturedef.scope != "function"
        self.wide, self.epoch = self.wide + wide, object()
        try:
            return (yield)
        finally:
            self.wide, self.epoch = self.wide - wide, object()

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
                "tests": self.tests, "errors": self.errors[:20],
                "reached": {t: " ".join(sorted(names)) for t, names in self.reached.items()},
                "everywhere": " ".join(sorted(self.everywhere))}
