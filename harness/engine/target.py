"""What a catalog test calls: a target (the reference, a mutant, or a student's isolated worker).

Every call, in a student's worker or in this process (the reference, a mutant), goes through the
one call path ``harness.sandbox.invoke``; a worker's replies cross as plain data
(``codec.decode_reply``). Every reply then passes the same contract checks here: return types,
arguments changed in place, results that alias an argument. A test never learns which kind of
target it calls. Anything that looks like an
escape (exit, crash, time-out, malformed data) is recorded, and the runner fails the test
whatever the test itself concluded: verdicts fail closed. What the code printed during a test
(``output``, ``output_dropped``) and where it raised (``RemoteError.frames``, on
``ol_remote`` of a ``TargetError`` and of a rebuilt exception alike) are kept for the student's report.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NoReturn

import numpy as np

from harness.sandbox.codec import Handle, Opaque, RemoteError, Reply
from harness.sandbox.frames import Files, exactly
from harness.sandbox.invoke import RETURNED, answer, call, changed, invoke, own_copy
from harness.uniforms import RecordingSource, draw_count, passes_a_source

# Exceptions rebuilt as themselves in the test, so ``pytest.raises(ValueError)`` reads naturally.
_REBUILT = (
    "NotImplementedError", "RecursionError", "ZeroDivisionError", "OverflowError",
    "FloatingPointError", "IndexError", "KeyError", "ValueError", "TypeError", "AttributeError",
    "RuntimeError", "ArithmeticError", "LookupError", "MemoryError",
)


class ContractViolation(AssertionError):
    """A result the contract forbids whatever the test asserts (type, aliasing, in-place edit)."""

    def __init__(self, message: str, pitfall: int | None = None, kind: str = "",
                 value: Any = None) -> None:
        super().__init__(message)
        self.pitfall = pitfall
        self.kind = kind  # "mutated" | "aliased" | "type" | "narrow" (a float32 array for float64[])
        self.value = value  # what came back, for "type" and "narrow" (the diagnosis reads it)

    # The answers before the violating one, for the recorder: set by the target that raises it
    # (an annotation only, so ``getattr(exc, "results", ())`` still tells when it was not set).
    results: list[Result]


class TargetError(Exception):
    """The code under test raised an exception the harness does not rebuild by class."""

    def __init__(self, remote: RemoteError) -> None:
        super().__init__(str(remote))
        self.ol_remote = remote


class TargetEscape(BaseException):
    """The call did not return an answer (exit, crash, time-out, malformed reply).

    A BaseException so that no ``except Exception`` or ``pytest.raises`` in a test can swallow it.
    """

    outcome = "crashed"


class TargetCrashed(TargetEscape):
    outcome = "crashed"


class TargetExited(TargetCrashed):
    """The code under test called ``sys.exit``/``exit()`` (raised SystemExit) instead of answering."""


class TargetTimedOut(TargetEscape):
    outcome = "timeout"


# Never an answer of in-process code: the runner's alarm and the user's Ctrl-C stop the call.
IN_PROCESS_PASSTHROUGH = (TargetEscape, KeyboardInterrupt)


@dataclass(slots=True)
class Result:
    """One call of ``Target.map``: the arguments, and the value or the (rebuilt) exception."""

    args: tuple
    value: Any = None
    error: BaseException | None = None
    draws: tuple[int, ...] = ()  # uniforms drawn from each source argument, in argument order

    @property
    def raised(self) -> bool:
        return self.error is not None


def _class_of(obj: Any) -> str:
    return obj.cls if isinstance(obj, Handle) else type(obj).__name__


def describe_type(value: Any) -> str:
    if isinstance(value, Opaque):
        return f"an object of class {value.cls}"
    if isinstance(value, np.ndarray):
        return f"{_article(str(value.dtype))} {value.dtype} array of shape {value.shape}"
    cls = type(value)
    name = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"
    return f"{_article(name)} {name}"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeio" else "a"


def _is_bool(v: Any) -> bool:
    return type(v) in (bool, np.bool_)


def _is_int(v: Any) -> bool:
    return type(v) is int or (isinstance(v, np.integer) and type(v).__module__ == "numpy")


def _is_float(v: Any) -> bool:
    return type(v) in (float, np.float64)


@functools.lru_cache(maxsize=64)
def _checker(kind: str):
    """A predicate for one return kind of ``course.toml`` (parsed once per kind)."""
    if kind == "bool":
        return _is_bool
    if kind == "int":
        return _is_int
    if kind == "float":
        return _is_float
    if kind == "float64[]":
        return lambda v: type(v) is np.ndarray and v.dtype == np.float64 and v.ndim == 1
    if kind.startswith("handle:"):  # an instance of the module's class, in the target
        name = kind.split(":", 1)[1]
        return lambda v: (v.cls == name) if isinstance(v, Handle) else type(v).__name__ == name
    if kind.startswith("tuple["):
        parts = tuple(_checker(k) for k in kind[6:-1].split(","))
        return lambda v: (type(v) is tuple and len(v) == len(parts)
                          and all(check(x) for check, x in zip(parts, v, strict=True)))
    return lambda v: True  # "any": values the contract does not type


def misfit_kind(kind: str, value: Any) -> str:
    """The violation a value that does not fit ``kind`` is: "narrow" for a float array narrower
    than the float64 array promised (float32 arithmetic, a pitfall of its own), else "type"."""
    narrow = (kind == "float64[]" and type(value) is np.ndarray and value.dtype.kind == "f"
              and value.dtype.itemsize < 8)
    return "narrow" if narrow else "type"


def fits_contract(kind: str, value: Any) -> bool:
    """Whether ``value`` is of the return kind ``kind`` of ``course.toml`` (``float64[]``, ...)."""
    return _checker(kind)(value)


def rebuild(remote: RemoteError) -> BaseException:
    """An exception of the first rebuildable class in the remote one's bases, else TargetError."""
    for name in remote.bases:
        if name in _REBUILT:
            message = remote.message if name == remote.type else f"{remote.type}: {remote.message}"
            exc = getattr(builtins, name)(message)
            exc.ol_remote = remote
            return exc
    return TargetError(remote)


def show_args(args: Sequence[Any]) -> str:
    """Arguments as a student reads them in a failure message."""
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            parts.append(np.array2string(a, separator=", ", precision=17, threshold=20))
        elif isinstance(a, RecordingSource):
            parts.append("rng")
        elif isinstance(a, float):
            parts.append(repr(a))
        else:
            parts.append(repr(a))
    return ", ".join(parts)


class Target:
    """Base of every target: contract checks and fail-closed bookkeeping."""

    kind = "target"
    replays_draws = True  # the sources a test passed were copied into another process

    def __init__(self, label: str, functions: Sequence[str], returns: dict[str, str]) -> None:
        self.label = label
        self.functions = tuple(functions)
        self.returns = returns
        self.recorder: Any = None  # harness.diagnosis.record.Recorder, while a check records calls
        # ``random`` and ``numpy.random``'s global state are seeded with it before every batch of
        # calls (a worker per request, in process per ``map``): code that draws from its own
        # generator answers the same on every run; set it between calls to replay with another.
        self.rng_seed: int = 0
        self.begin_test()

    # -- bookkeeping the runner reads -------------------------------------------------------
    def begin_test(self) -> None:
        self.escape: TargetEscape | None = None
        self.violation: ContractViolation | None = None
        self.not_implemented: str | None = None
        # What the code under test printed during this test (an isolated target's; in process:
        # nothing) and how many characters of it were not kept.
        self.output: str = ""
        self.output_dropped: int = 0

    def __getattr__(self, name: str) -> Any:
        if name in self.__dict__.get("functions", ()):
            return functools.partial(self.call, name)
        raise AttributeError(name)

    # -- what subclasses provide ------------------------------------------------------------
    def _replies(self, fn: str, calls: Sequence[tuple], kwargs: dict) -> list[Reply]:
        raise NotImplementedError

    def close(self) -> None:
        """Release the target's resources (a worker process)."""

    # -- what tests call --------------------------------------------------------------------
    def call(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``fn(*args, **kwargs)`` on the target: its checked value, or its exception raised."""
        result = self.map(fn, [args], **kwargs)[0]
        if result.error is not None:
            raise result.error
        return result.value

    def method(self, obj: Any, name: str, *args: Any) -> Any:
        """Call method ``name`` of an object the target returned (a ``Handle`` when isolated)."""
        return self.call(f"{_class_of(obj)}.{name}", obj, *args)

    def map_method(self, obj: Any, name: str, calls: Sequence[tuple]) -> list[Result]:
        """``method`` once per argument tuple, in one batch."""
        return self.map(f"{_class_of(obj)}.{name}", [(obj, *args) for args in calls])

    def map(self, fn: str, calls: Sequence[tuple], **kwargs: Any) -> list[Result]:
        """Call ``fn`` once per argument tuple in one batch: each value or exception, checked.

        With a ``recorder`` set, the batch and its answers are recorded (for the diagnosis), also
        when a contract check or an escape ends it early."""
        recorder = self.recorder
        if recorder is None:
            return self._map(fn, calls, **kwargs)
        calls = list(calls)
        batch = recorder.begin(fn, calls, kwargs)
        try:
            results = self._map(fn, calls, **kwargs)
        except ContractViolation as exc:
            recorder.end(batch, getattr(exc, "results", ()), violation=exc)
            raise
        except BaseException:
            recorder.end(batch, ())
            raise
        recorder.end(batch, results)
        return results

    def _map(self, fn: str, calls: Sequence[tuple], **kwargs: Any) -> list[Result]:
        """``map`` without recording: call, check, and collect.

        Replies are checked as they arrive (an isolated worker streams them in chunks, so this
        overlaps the calls still running); a failed check is raised once the batch is complete.
        """
        calls = list(calls)
        fits = _checker(self.returns.get(fn, "any"))
        sourced = self.replays_draws and passes_a_source(calls, kwargs)
        results: list[Result] = []
        failed: list[ContractViolation | TargetEscape] = []
        received = 0

        def take(replies: Sequence[Reply]) -> None:
            nonlocal received
            start, received = received, received + len(replies)
            if failed or received > len(calls):
                return  # the count is checked once the batch is complete
            # Per reply object of this chunk (a worker sends a repeated reply once per chunk).
            # Never across chunks: an earlier chunk's replies are freed, and a later reply may
            # reuse one's id (a float32 among floats then passed unchecked, #28).
            common: dict[int, bool] = {}
            append, known = results.append, common.get
            try:
                for args, reply in zip(calls[start:received], replies, strict=True):
                    plain = known(id(reply))
                    if plain is None:
                        plain = common[id(reply)] = (
                            not sourced and reply.status == "returned"
                            and not (reply.mutated or reply.aliased or reply.draws)
                            and fits(reply.value))
                    if plain:
                        append(Result(args, reply.value))  # the common case, checked
                    else:
                        append(self._check(fn, args, kwargs, reply))
            except (ContractViolation, TargetEscape) as exc:
                failed.append(exc)

        try:
            self._stream(fn, calls, kwargs, take)
        except TargetEscape as exc:
            self.escape = self.escape or exc
            raise
        if received != len(calls):
            self._escape(TargetCrashed(f"{fn}: the worker answered {received} of {len(calls)} calls"))
        if failed:
            first = failed[0]
            if isinstance(first, TargetEscape):
                self._escape(first)
            first.results = results  # the answers before the violating one, for the recorder
            raise first
        return results

    def _stream(self, fn: str, calls: list[tuple], kwargs: dict,
                take: Callable[[Sequence[Reply]], None]) -> None:
        """Hand ``take`` the replies of ``calls``, in order and in as many pieces as they come."""
        take(self._replies(fn, calls, kwargs))

    def _escape(self, exc: TargetEscape) -> NoReturn:
        self.escape = self.escape or exc
        raise exc

    def _violate(self, message: str, pitfall: int | None = None, kind: str = "",
                 value: Any = None) -> NoReturn:
        exc = ContractViolation(message, pitfall, kind, value)
        self.violation = self.violation or exc
        raise exc

    def _check(self, fn: str, args: tuple, kwargs: dict, reply: Reply) -> Result:
        if self.replays_draws:  # a worker's copies drew: replay that into the test's sources
            sources = [a for a in (*args, *kwargs.values()) if isinstance(a, RecordingSource)]
            self._sync_sources(sources, reply.draws)
        if reply.status == "exited":
            call = f"{fn}({show_args(args)})"
            self._escape(TargetExited(f"{call} tried to exit the interpreter ({reply.error}); "
                                       "a function must return or raise"))
        if reply.mutated:  # also when it raised: an error leaves the caller's arguments as they were
            which = ", ".join(f"argument {i + 1}" for i in reply.mutated)
            raised = (f" (and then raised {reply.error.type})"
                      if reply.status == "raised" and reply.error is not None else "")
            self._violate(f"{fn}({show_args(args)}) modified {which} in place{raised}"
                          "; no function may modify its arguments", kind="mutated")
        if reply.status == "raised":
            assert reply.error is not None, "a reply that raised has its error"
            exc = rebuild(reply.error)
            if isinstance(exc, NotImplementedError):
                self.not_implemented = self.not_implemented or fn
            return Result(args, error=exc, draws=tuple(reply.draws))
        kind = self.returns.get(fn, "any")
        fits = fits_contract(kind, reply.value)
        if not (reply.aliased or not fits):
            return Result(args, value=reply.value, draws=tuple(reply.draws))
        call = f"{fn}({show_args(args)})"
        if reply.aliased:
            self._violate(f"{call} returned an object that shares memory with an argument; "
                          "the contract promises a new array", kind="aliased")
        if not fits:
            self._violate(f"{call} returned {describe_type(reply.value)}"
                          f"{self._inner(reply.value)} where the contract promises {kind}",
                          kind=misfit_kind(kind, reply.value), value=reply.value)
        return Result(args, value=reply.value, draws=tuple(reply.draws))

    @staticmethod
    def _inner(value: Any) -> str:
        if type(value) in (tuple, list):
            return " of (" + ", ".join(describe_type(v) for v in value) + ")"
        return ""

    def _sync_sources(self, sources: list[RecordingSource], draws: list[int]) -> None:
        """Isolated targets advance the test's sources by what the worker's copies drew."""


class InProcessTarget(Target):
    """The reference or a mutant: our own code, called in this process."""

    kind = "in-process"
    replays_draws = False  # the test's own sources were drawn from directly

    def __init__(self, label: str, module: ModuleType, functions: Sequence[str],
                 returns: dict[str, str]) -> None:
        super().__init__(label, functions, returns)
        self.module = module
        self._files = _own_file(module)

    def _resolve(self, fn: str) -> Any:
        return resolve_in(self.module, fn)

    def _replies(self, fn: str, calls: Sequence[tuple], kwargs: dict) -> list[Reply]:
        func = self._resolve(fn)
        return [invoke_on_copies(func, args, kwargs, self._files) for args in calls]

    def _map(self, fn: str, calls: Sequence[tuple], **kwargs: Any) -> list[Result]:
        """The batch with ``random`` and ``numpy.random`` seeded with ``rng_seed``, as a worker
        seeds them per request; this process's own states are restored afterwards."""
        with seeded_globals(self.rng_seed):
            return self._calls(fn, calls, **kwargs)

    def _calls(self, fn: str, calls: Sequence[tuple], **kwargs: Any) -> list[Result]:
        """``Target._map`` with a lean path for the common call (immutable arguments or lists of
        numbers, a plain result of the promised kind); anything else gets every check of the general
        path. Each call is made exactly once.

        A list of numbers is passed as a copy of its own, as the general path passes it; the copy is
        compared with the caller's list afterwards (which nobody else saw), as the general path
        compares it with its snapshot: an edit in place is the same violation on both paths."""
        if kwargs:
            return super()._map(fn, calls, **kwargs)
        func = self._resolve(fn)
        fits = _checker(self.returns.get(fn, "any"))
        # A method's receiver is the module's own object: it may change (a generator's state does),
        # and the general path would not snapshot it either.
        own = getattr(self.module, fn.split(".", 1)[0]) if "." in fn else None
        results: list[Result] = []
        append = results.append
        # Whether a plain result fits its kind follows from its types alone (a number, a short
        # tuple of numbers): decided once per type signature in the batch, not once per call.
        plain_by_types: dict[Any, bool] = {}
        fitting: set[type] = set()  # the number classes among them found plain and of the kind
        # A batch whose arguments are all immutable (a method's receiver aside): told in one pass
        # over their classes, then no call is looked at again (a generator's 20000 draws).
        immutable = _immutable_batch(calls, own)
        for args in calls:
            passed, mutated = args, []
            if not immutable:
                plain_args = args[1:] if own is not None and args and type(args[0]) is own else args
                if not all(type(a) in _IMMUTABLE_ARGS for a in plain_args):
                    if not all(type(a) in _IMMUTABLE_ARGS or _numbers(a) for a in plain_args):
                        try:
                            append(super()._map(fn, [args])[0])
                        except ContractViolation as exc:
                            exc.results = results
                            raise
                        continue
                    passed = tuple(list(a) if type(a) is list else a for a in args)
            status, value = call(func, passed, {}, IN_PROCESS_PASSTHROUGH)
            if status is RETURNED and passed is args and type(value) in fitting:
                append(Result(args, value))  # the common case: a number of a class already checked
                continue
            if passed is not args:
                mutated = [i for i, a in enumerate(args) if type(a) is list and changed(passed[i], a)]
            if status == RETURNED and not mutated:
                kind = type(value)
                if kind is tuple and len(value) > 8:  # a long tuple: decided on its own
                    plain = _plain(value) and fits(value)
                else:
                    types = (kind, *map(type, value)) if kind is tuple else kind
                    plain = plain_by_types.get(types)
                    if plain is None:
                        plain = plain_by_types[types] = _plain(value) and fits(value)
                        if plain and kind is not tuple:
                            fitting.add(kind)
                if plain:
                    append(Result(args, value))
                    continue
            reply = answer(status, value, passed, self._files)
            reply.mutated = mutated
            try:
                append(self._check(fn, args, {}, reply))
            except ContractViolation as exc:
                exc.results = results
                raise
        return results


@contextlib.contextmanager
def seeded_globals(seed: int) -> Iterator[None]:
    """``random.seed(seed); np.random.seed(seed)``, and the states as they were restored after."""
    if type(seed) is not int or not 0 <= seed < 1 << 32:
        raise ValueError(f"rng_seed must be an int from 0 to 2**32 - 1, got {seed!r}")
    saved = random.getstate(), np.random.get_state(legacy=False)
    random.seed(seed)
    np.random.seed(seed)
    try:
        yield
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])


def resolve_in(module: ModuleType, fn: str) -> Any:
    """The callable ``fn`` names in our own ``module``: a function, or ``Class.method`` as a function
    of the object (AttributeError, as for a missing function, when the class is missing)."""
    if "." not in fn:
        return getattr(module, fn)
    cls, method = fn.split(".", 1)
    getattr(module, cls)

    def call_method(obj: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(obj, method)(*args, **kwargs)

    return call_method


def invoke_on_copies(func: Any, args: tuple, kwargs: dict, files: Any = None) -> Reply:
    """One in-process call on fresh copies of the arguments (as an isolated worker gets them: the
    caller's data stays untouched), with the uniforms it drew from each source argument."""
    args = tuple(own_copy(a) for a in args)
    sources = [a for a in (*args, *kwargs.values()) if isinstance(a, RecordingSource)]
    before = [draw_count(s) for s in sources]
    reply = invoke(func, args, kwargs, IN_PROCESS_PASSTHROUGH, files=files)
    reply.draws = [draw_count(s) - b for s, b in zip(sources, before, strict=True)]
    return reply


def _own_file(module: ModuleType) -> Files | None:
    """The frames of the module's own file: a mutant's compiled name (``<mutant s01: ...>``) as it
    is, a file on disk by its path below ``sys.path`` (``tinyllm/prob/rejection.py``)."""
    filename = getattr(module, "__file__", None)
    if not isinstance(filename, str):
        return None
    if filename.startswith("<"):
        return exactly(filename, filename)
    depth = len(getattr(module, "__name__", "").split("."))
    return exactly(filename, "/".join(filename.split("/")[-depth:]))


# Arguments a call cannot change in place (a tuple of numbers cannot be edited), and results
# that cannot share memory with anything: ``InProcessTarget.map`` checks only these on its lean path.
_IMMUTABLE_ARGS = frozenset({float, int, bool, tuple, str, type(None), np.float64, np.int64})
_PLAIN_SCALARS = frozenset({float, int, bool, np.float64, np.int64, np.bool_})


def _immutable_batch(calls: Sequence[tuple], own: type | None) -> bool:
    """Whether every argument of every call is of an immutable class, a receiver of the module's
    own class ``own`` (first, for a method) aside: the lean path's test, for a whole batch at once."""
    if own is None:
        return {type(a) for args in calls for a in args} <= _IMMUTABLE_ARGS
    firsts = {type(args[0]) for args in calls if args}
    firsts.discard(own)
    return firsts <= _IMMUTABLE_ARGS and {type(a) for args in calls for a in args[1:]} <= _IMMUTABLE_ARGS


def _numbers(value: Any) -> bool:
    """A list of plain numbers: a shallow copy is all a call needs of its own."""
    return type(value) is list and all(type(v) in _PLAIN_SCALARS for v in value)


def _plain(value: Any) -> bool:
    if type(value) in _PLAIN_SCALARS:
        return True
    return type(value) is tuple and all(type(v) in _PLAIN_SCALARS for v in value)
