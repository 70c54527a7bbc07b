"""The isolated worker: imports a student's module and answers call requests from the parent.

Started only by ``harness.engine.isolated`` as
``python -I harness/sandbox/worker.py REQUEST_FD REPLY_FD PROGRESS_FD CONFIG_JSON``.

Order matters, because the student's code runs in this process:

1. before anything else loads: the parent's pids cgroup, resource limits, a read-only view of
   the file system (but for the worker's temporary directory), no network, a PID namespace of
   its own (this process stays outside as a shim that mirrors how PID 1 ends), dropped
   capabilities and ``no_new_privs`` (cgroup and namespaces need root; without them the worker
   runs with the limits only, and says so in its ``ready`` message);
2. the harness functions this loop needs are captured (``harness.sandbox.codec``, ``invoke``,
   ``frames`` and ``capture``, ``harness.uniforms``)
   with only the repository root on ``sys.path``, then the harness's modules are dropped from
   ``sys.modules``, so a student package named ``harness`` or a monkey-patch of what
   ``sys.modules`` holds cannot replace what the loop already holds (``_forget_harness``);
3. the student's module is imported with its ``python/`` directory first on ``sys.path``,
   and the outcome is reported (``{"op": "ready", "problem": ...}``, with what the import
   printed);
4. requests are served until the request pipe closes, each with ``random`` and ``numpy.random``
   seeded first (the request's ``seed``, default 0).

Messages are length-prefixed JSON (4 bytes, big-endian) on two pipes of their own. What the
student's code writes to ``sys.stdout`` and ``sys.stderr`` is captured per request (bounded,
``harness.sandbox.capture``) and sent inside the chunks of replies (``out``, ``dropped``); what
it writes to the descriptors 1 and 2 goes to a third pipe the parent drains and caps. An
exception's reply carries its frames in the student's files (``harness.sandbox.frames``). A
request arrives in frames (the calls, piece by piece, in rows or by column: ``codec.calls_of``);
replies stream back in chunks (every ``CHUNK_CALLS`` calls or ``CHUNK_S`` seconds, repeated small
replies sent once: ``codec.chunk_texts``), and the index of the call in progress is kept in a
shared page so the parent can name a call that hangs; what was printed since the last chunk is
mirrored on that page (``capture.Mirror``), so the parent shows it also when a call hangs or the
worker dies.
Nothing here is trusted by the parent: it decodes every reply as plain data and fails closed.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import json
import mmap
import os
import sys
import time
import traceback
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.sandbox.protocol import Channel

CHUNK_CALLS = 256
CHUNK_S = 0.05

# The harness modules the serving loop imports after the hardening (``Server``): the only files
# of ol's checkout copied into the worker's view (``harden._build_view``).
CODE = ("harness/__init__.py", "harness/escape.py", "harness/uniforms.py",
        "harness/sandbox/__init__.py", "harness/sandbox/capture.py", "harness/sandbox/codec.py",
        "harness/sandbox/frames.py", "harness/sandbox/invoke.py", "harness/sandbox/protocol.py")


def _text(exc: BaseException) -> str:
    """An exception's message; a hostile ``__str__`` must not break the report."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001
        text = "<unprintable>"
    return text[:2000] if isinstance(text, str) else "<unprintable>"


def _import(import_name: str, python_dir: str):
    """Import the student's module: ``(module, None)`` or ``(None, problem)``.

    The module served is the one executed from the staged file, whatever ``sys.modules`` holds
    afterwards: a module it imports (a dependency of the student's) cannot put another in its
    place (``importlib.import_module`` returns the ``sys.modules`` entry)."""
    try:
        return _load_staged(import_name, python_dir), None
    except SyntaxError as exc:  # also IndentationError, TabError
        return None, {"kind": "syntax", "message": f"{type(exc).__name__}: {exc.msg}",
                      "file": exc.filename, "line": exc.lineno}
    except (SystemExit, KeyboardInterrupt) as exc:
        return None, {"kind": "crash", "file": None, "line": None,
                      "message": f"importing {import_name} raised {type(exc).__name__}"
                                 f"({_text(exc)}); a module must not exit the interpreter"}
    except BaseException as exc:  # noqa: BLE001 - any failure of the import is reported, not raised
        file = line = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename.startswith(python_dir):
                file, line = frame.filename, frame.lineno
        return None, {"kind": "import", "message": f"{type(exc).__name__}: {_text(exc)}",
                      "file": file, "line": line}


def _load_staged(import_name: str, python_dir: str) -> Any:
    """Execute ``python_dir``'s file of ``import_name`` as that module (its packages first: ol's
    own empty ``__init__.py`` files) and return the module object that ran."""
    parent, _, leaf = import_name.rpartition(".")
    package = importlib.import_module(parent) if parent else None
    path = os.path.join(python_dir, *import_name.split(".")) + ".py"
    spec = importlib.util.spec_from_file_location(import_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {import_name!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[import_name] = module
    spec.loader.exec_module(module)
    if package is not None:
        setattr(package, leaf, module)
    return module


def _reap_children() -> None:
    """Collect children the parent killed after the previous request."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


_GONE = object()  # stands for a handle this worker never issued
_NUMBERS = (float, int, bool)  # what a request's JSON numbers decode to


class Server:
    """Answers ``call`` requests with the harness functions captured before the student's import."""

    def __init__(self, channel: Channel, progress_fd: int, python_dir: str) -> None:
        import random

        import numpy.random

        from harness import uniforms as sources
        from harness.sandbox import capture, codec, frames, invoke

        self.channel = channel
        page = memoryview(mmap.mmap(progress_fd, capture.PAGE_BYTES))
        self.progress = page[:16].cast("q")
        self.capture = capture.Capture(capture.KEPT, capture.Mirror(page))
        self.streams = (capture.Stream(self.capture, "<stdout>"),
                        capture.Stream(self.capture, "<stderr>"))
        self.files = frames.under(python_dir)  # the staged copy the student's module runs from
        self.decode, self.encode_error = codec.decode, codec.encode_error
        self.calls_of, self.lean_piece, self.chunk_texts = (
            codec.calls_of, codec.lean_piece, codec.chunk_texts)
        self.invoke, self.invoke_immutable = invoke.invoke_encoded, invoke.invoke_immutable
        self.own_copy = invoke.own_copy
        self.source_from_spec, self.draw_count = sources.source_from_spec, sources.draw_count
        self.recording = sources.RecordingSource
        self.dumps, self.monotonic = json.JSONEncoder(separators=(",", ":")).encode, time.monotonic
        self.seeds = (random.seed, numpy.random.seed)  # the global generators, seeded per request
        self.module: Any = None  # the student's module: requests are served only once it imported
        self.objects: dict[object, object] = {}  # by handle number; a request may name any id
        self.ctor: type | None = None
        self.values: list = []
        self.frozen: list[bool] = []  # per value: a tuple of numbers, which no call can change

    def _arg(self, data: object, shared: list) -> object:
        if type(data) is list:  # [i]: a value sent once per request; each call gets its own copy
            return self.own_copy(self.values[data[0]])
        if type(data) is not dict:  # a plain float, int or bool, sent as a JSON number
            return data
        if data.get("t") == "sref":  # a source shared by every call of the request, as in-process
            return shared[data["i"]]
        if data.get("t") == "handle":  # an object an earlier call of this worker returned
            return self.objects.get(data.get("id"), _GONE)
        return self.decode(data)

    def _immutable_args(self, encoded: list) -> tuple | None:
        """The call's arguments if each is a number or a tuple of numbers sent once (``[i]``),
        which every call may share as in-process; else None."""
        out = []
        for a in encoded:
            if type(a) is list:
                if not self.frozen[a[0]]:
                    return None
                a = self.values[a[0]]
            elif type(a) is dict:
                return None
            out.append(a)
        return tuple(out)

    def register(self, obj: object) -> int | None:
        """Keep what a contract class's constructor returned; its number crosses instead."""
        if self.ctor is None or type(obj) is not self.ctor:
            return None
        self.objects[len(self.objects) + 1] = obj
        return len(self.objects)

    def resolve(self, name: str) -> object:
        """A module function, or for ``Class.method`` a caller of that method on its first argument."""
        if "." not in name:
            return getattr(self.module, name, None)
        cls, method = name.split(".", 1)
        if getattr(self.module, cls, None) is None:
            return None

        def call_method(obj: object, *args: object, **kwargs: object) -> object:
            if obj is _GONE:
                raise LookupError("the object no longer exists (its worker was restarted)")
            if type(obj).__name__ != cls:
                raise TypeError(f"{name} called on a {type(obj).__name__}")
            return getattr(obj, method)(*args, **kwargs)

        return call_method

    def capture_output(self) -> None:
        """``sys.stdout`` and ``sys.stderr`` are the capture's again (whatever the code under test
        made of them), with a fresh budget: what is printed from now on belongs to the request."""
        sys.stdout, sys.stderr = self.streams
        self.capture.begin()

    def printed(self) -> str:
        """What was printed since the last chunk, as the JSON members of a message (or "")."""
        taken = self.capture.take()
        if taken is None:
            return ""
        return f',"out":{self.dumps(taken[0])},"dropped":{taken[1]}'

    def _call(self, func: object, name: str, args: tuple, kwargs: dict) -> dict:
        sources = [a for a in (*args, *kwargs.values()) if isinstance(a, self.recording)]
        if func is None:
            missing = AttributeError(f"module {self.module.__name__!r} has no attribute {name!r}")
            return {"status": "raised", "error": self.encode_error(missing), "mutated": [],
                    "draws": [0 for _ in sources]}
        before = [self.draw_count(s) for s in sources]
        reply = self.invoke(func, args, kwargs, self.register, self.files)
        # Counts per call, not cumulative: the parent replays them into its own objects in order.
        reply["draws"] = [self.draw_count(s) - b for s, b in zip(sources, before, strict=True)]
        return reply

    def _send(self, rid: int, start: int, replies: list[dict]) -> None:
        """One chunk of replies (``codec.chunk_texts``), with what the calls printed."""
        for text in self.chunk_texts(rid, start, replies, self.printed()):
            self.channel.send_text(text)

    def _pieces(self, request: dict, shared: list) -> Iterator[tuple[list, bool]]:
        """The request's calls as they arrive, piece by piece, each with whether it is lean: its
        calls are then the arguments themselves, each a number or a tuple of numbers sent once
        (``lean``), which every call may share as in-process; else each call is its encoded
        arguments."""
        piece = request
        while True:
            shared.extend(self.source_from_spec(spec) for spec in piece["sources"])
            for v in piece.get("values", ()):
                value = self.decode(v)
                self.values.append(value)
                self.frozen.append(type(value) is tuple and all(type(x) in _NUMBERS for x in value))
            lean = self.lean_piece(piece, self.values, self.frozen)
            yield self.calls_of(piece if lean is None else lean), lean is not None
            more = self.channel.recv()
            if more is None or more.get("op") != "more" or more.get("id") != request["id"]:
                raise SystemExit(3)  # the parent never sends this: end, and it sees a crash
            piece = more

    def seed(self, seed: object) -> None:
        """``random`` and ``numpy.random``'s global state from the request's seed: code that draws
        from its own generator answers the same on every run (and differently for another seed)."""
        if type(seed) is not int or not 0 <= seed < 1 << 32:
            raise SystemExit(3)  # the parent never sends this: end, and it sees a crash
        for seed_with in self.seeds:
            seed_with(seed)

    def handle(self, request: dict) -> None:
        rid, name, total = request["id"], request["fn"], request["count"]
        self.capture_output()
        self.seed(request.get("seed", 0))
        self.values, self.frozen = [], []
        shared: list = []
        pieces = self._pieces(request, shared)
        piece: tuple[list, bool] | None = next(pieces)  # its sources and values first: kwargs name them
        kwargs = {k: self._arg(v, shared) for k, v in request["kwargs"].items()}
        func = self.resolve(name)
        # Only a call of one of the module's classes (a constructor, e.g. PCG32) makes a handle.
        self.ctor = func if isinstance(func, type) and func.__module__ == self.module.__name__ else None
        progress, monotonic, arg, call, invoke, immutable_args, invoke_immutable, files = (
            self.progress, self.monotonic, self._arg, self._call, self.invoke,
            self._immutable_args, self.invoke_immutable, self.files)
        kw_sources = any(isinstance(v, self.recording) for v in kwargs.values())
        kw_frozen = all(type(v) in _NUMBERS or (type(v) is tuple and all(type(x) in _NUMBERS for x in v))
                        for v in kwargs.values())
        answers: dict = {}  # invoke_immutable's replies of this request, one per distinct result
        register, chunk_s = self.register, CHUNK_S
        progress[0] = rid
        pending: list[dict] = []
        start, last, i = 0, monotonic(), 0
        while i < total:
            calls, lean = piece if piece is not None else next(pieces)
            piece = None
            if len(calls) > total - i:
                calls = calls[:total - i]
            if lean and kw_frozen and func is not None:
                # The common case, kept lean: this loop is the cost of a cheap call.
                for args in calls:
                    progress[1] = i
                    pending.append(invoke_immutable(func, args, kwargs, register, answers, files))
                    i += 1
                    now = monotonic()
                    if len(pending) >= CHUNK_CALLS or now - last >= chunk_s or i == total:
                        start, pending, last = self._flush(rid, start, pending, now)
                continue
            plain = all(type(a) is not dict and type(a) is not list
                        for encoded in calls for a in encoded)
            for encoded in calls:
                progress[1] = i
                frozen = immutable_args(encoded) if kw_frozen and func is not None else None
                if frozen is not None:
                    pending.append(invoke_immutable(func, frozen, kwargs, register, answers, files))
                elif plain and not kw_sources and func is not None:
                    pending.append(invoke(func, tuple(encoded), kwargs, register, files))
                else:
                    pending.append(call(func, name, tuple([arg(a, shared) for a in encoded]), kwargs))
                i += 1
                now = monotonic()
                if len(pending) >= CHUNK_CALLS or now - last >= chunk_s or i == total:
                    start, pending, last = self._flush(rid, start, pending, now)

    def _flush(self, rid: int, start: int, pending: list[dict],
               now: float) -> tuple[int, list[dict], float]:
        """Send the replies ``pending`` (from call ``start`` on); the next chunk's start, its
        empty list and the time it began."""
        self._send(rid, start, pending)
        return start + len(pending), [], now

    def serve(self) -> None:
        while True:
            request = self.channel.recv()
            if request is None:
                return
            _reap_children()  # what the parent killed after the previous request, dead by now
            self.handle(request)


def _forget_harness() -> None:
    """Drop the harness's modules from ``sys.modules`` once the server holds what it needs.

    The captured functions keep their own module dictionaries; without this, code that patched
    ``sys.modules["harness.sandbox.codec"]`` (its aliasing or in-place checks, say) would change what the
    loop calls. Importing ``harness`` again now gives a fresh copy that nothing here uses. (A
    determined student can still walk the stack to the live ones: see docs/isolation.md.)
    """
    for name in [n for n in sys.modules if n == "harness" or n.startswith("harness.")]:
        del sys.modules[name]


def main(argv: list[str]) -> int:
    request_fd, reply_fd, progress_fd = (int(a) for a in argv[1:4])
    return run(request_fd, reply_fd, progress_fd, json.loads(argv[4]))


def run(request_fd: int, reply_fd: int, progress_fd: int, config: dict) -> int:
    """Everything after the interpreter's start, in order (the module docstring): in a fresh
    ``python -I`` (``main``) or in a child of the zygote (``harness.sandbox.zygote``), which has
    imported numpy and the modules of step 2 already and runs no code before this."""
    sys.path.insert(0, config["repo_root"])
    from harness.sandbox.harden import harden  # the standard library only

    sys.path.remove(config["repo_root"])  # not a folder of the view: only CODE is copied in
    confinement = harden(config)
    sys.path.insert(0, config["repo_root"])
    for fd in (request_fd, reply_fd, progress_fd):
        os.set_inheritable(fd, False)  # a program the student's code execs gets none of them
    from harness.sandbox.protocol import Channel

    server = Server(Channel(request_fd, reply_fd), progress_fd, config["python_dir"])
    sys.path.remove(config["repo_root"])
    _forget_harness()
    # What the server holds (its functions, their globals, the captured checks) moves to the
    # permanent generation: gc.get_objects() and gc.get_referrers() no longer list it.
    gc.freeze()
    sys.path.insert(0, config["python_dir"])
    server.capture_output()  # what the import prints is reported with it, apart from any test's
    server.module, problem = _import(config["import_name"], config["python_dir"])
    ready = {"op": "ready", "problem": problem, "sandboxed": confinement.read_only,
             "contained": confinement.contained, "confinement": confinement.to_json()}
    server.channel.send_text(json.dumps(ready)[:-1] + server.printed() + "}")
    try:
        if problem is None:
            server.serve()
    finally:  # a failure of the loop itself goes to the drained pipe, as the interpreter's own
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
