"""Run a module's catalog against one target and build the ``RunResult``.

The verdict of each test is decided here, in the harness's process, from what the test raised
and from what the target recorded (escapes, contract violations, stubs), in that order: a test
that caught something it should not have still fails.
"""

from __future__ import annotations

import contextlib
import fnmatch
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from harness.engine.catalog import collect
from harness.engine.course import Module
from harness.engine.outcome import PROGRAMMING_ERRORS, error_bases, error_name, remote_of
from harness.engine.results import (
    CRASHED,
    EXITED,
    NOT_IMPLEMENTED,
    RAISED,
    TIMEOUT,
    WRONG,
    CaseInfo,
    Outcome,
    RunResult,
    TestResult,
    TraceFrame,
)
from harness.engine.seeding import cases_from
from harness.engine.target import (
    ContractViolation,
    Target,
    TargetEscape,
    TargetExited,
    TargetTimedOut,
)


class CatalogError(Exception):
    """A catalog test raised an exception of its own (not an answer of the code under test): a bug
    of ol's, reported as an internal error (exit 3, the traceback in a log), never as a failure."""


# In-process targets are ours, but a mutant may still loop: a per-test alarm bounds it.
IN_PROCESS_TEST_LIMIT_S = 60.0


@contextlib.contextmanager
def alarm(seconds: float | None, what: str = "the test") -> Iterator[None]:
    """Raise ``TargetTimedOut`` in the main thread if the block runs longer than ``seconds``."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise TargetTimedOut(f"{what} did not finish within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """numpy's floating-point warnings from code under test are not the harness's output."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def select_cases(cases: list[tuple[CaseInfo, Callable[..., Any]]], pattern: str | None):
    """``-k`` selection: a substring or a shell pattern of the test name."""
    if not pattern:
        return cases
    return [c for c in cases if pattern in c[0].name or fnmatch.fnmatch(c[0].name, pattern)]


def run_case(module: Module, info: CaseInfo, fn: Callable[..., Any], target: Target,
             limit: float | None = None) -> TestResult:
    """One catalog test against ``target``, fail-closed.

    A failure names a pitfall only when the failing check names one (the check's own, never the
    test's first): a crash, an exit, a time-out, a stub or a programming error (NameError, ...)
    in the code under test is its own category and names none.
    """
    target.begin_test()
    outcome, message, pitfall = Outcome.PASSED, "", None
    raised: BaseException | None = None
    start = time.perf_counter()
    try:
        with alarm(limit), quiet():
            fn(target)
    except TargetEscape as exc:
        outcome, message = Outcome(exc.outcome), str(exc)
    except AssertionError as exc:
        outcome, message = Outcome.FAILED, str(exc) or "assertion failed"
        pitfall = getattr(exc, "pitfall", None)
    except NotImplementedError as exc:
        outcome, message = Outcome.FAILED, f"not implemented yet: {exc}"
    except Exception as exc:
        remote = remote_of(exc)
        if remote is None:  # every answer of the code under test arrives rebuilt, with its remote
            raise CatalogError(f"{info.name} itself raised {type(exc).__name__}: {exc}; this is a "
                               "bug of ol's catalog, not of the code under test") from exc
        outcome, message, raised = Outcome.ERROR, f"the code under test raised {remote}", exc
    duration = time.perf_counter() - start
    outcome, message, pitfall = _fail_closed(target, outcome, message, pitfall)
    if target.violation is not None and pitfall is None and target.escape is None:
        pitfall = module.violation_pitfalls.get(target.violation.kind)
    if outcome is Outcome.PASSED:
        return TestResult(info.name, info.kind, outcome, duration)
    category = _category(target, outcome, raised)
    bug = _programming_error(target) if category == WRONG else None
    if bug is not None:  # a NameError inside a call the test expected to answer or raise
        category = RAISED
        message += f"\n(the code under test raised {error_name(bug)}: {bug})"
    if category != WRONG:
        pitfall = None
    frames = _frames(raised if raised is not None else bug)
    return TestResult(info.name, info.kind, outcome, duration, message, pitfall,
                      module.pitfall_text(pitfall), category, module.pitfall_label(pitfall),
                      *_output(target), frames)


def run_named(module: Module, name: str, target: Target, seed: int | None,
              limit: float | None = IN_PROCESS_TEST_LIMIT_S) -> TestResult | None:
    """The catalog test ``name`` of ``module`` alone against ``target``, on the cases of ``seed``
    (None when the catalog has no such test)."""
    case = next(((info, fn) for info, fn in collect(module) if info.name == name), None)
    if case is None:
        return None
    with cases_from(seed):
        return run_case(module, case[0], case[1], target, limit)


def _output(target: Target) -> tuple[str, int]:
    """What the code under test printed during the test (a worker captures it; "" in process)."""
    text, dropped = getattr(target, "output", ""), getattr(target, "output_dropped", 0)
    if not isinstance(text, str) or not isinstance(dropped, int):
        return "", 0
    return text, dropped


def _category(target: Target, outcome: Outcome, raised: BaseException | None) -> str:
    escape = target.escape
    if escape is not None:
        if isinstance(escape, TargetExited):
            return EXITED
        return TIMEOUT if isinstance(escape, TargetTimedOut) else CRASHED
    if outcome is Outcome.TIMEOUT:
        return TIMEOUT
    if outcome is Outcome.CRASHED:
        return CRASHED
    if target.not_implemented is not None:
        return NOT_IMPLEMENTED
    if outcome is Outcome.ERROR and raised is not None and _is_programming_error(raised):
        return RAISED
    return WRONG  # a wrong answer, or an exception where the contract gives an answer


def _is_programming_error(error: BaseException) -> bool:
    return bool(PROGRAMMING_ERRORS.intersection(error_bases(error)))


def _programming_error(target: Target) -> BaseException | None:
    """The first NameError-like exception the code under test raised during this test, if any."""
    recorder = getattr(target, "recorder", None)
    for batch in (recorder.current if recorder is not None else ()):
        for r in batch.results:
            if r.error is not None and _is_programming_error(r.error):
                return r.error
    return None


def _frames(error: BaseException | None) -> tuple[TraceFrame, ...]:
    """The frames of ``error`` in the student's own files, as the worker reported them."""
    if error is None:
        return ()
    remote = remote_of(error)
    frames = getattr(remote, "frames", ()) or ()
    return tuple(TraceFrame(f"python/{f.file}", int(f.line), str(f.function), str(f.source))
                 for f in frames)


def _fail_closed(target: Target, outcome: Outcome, message: str, pitfall: int | None):
    """What the target recorded overrides what the test concluded."""
    if target.escape is not None:
        return Outcome(target.escape.outcome), str(target.escape), None
    if target.not_implemented is not None:
        return (Outcome.FAILED,
                f"not implemented yet: {target.not_implemented} raises NotImplementedError", None)
    if target.violation is not None and outcome is Outcome.PASSED:
        violation: ContractViolation = target.violation
        return Outcome.FAILED, str(violation), violation.pitfall
    return outcome, message, pitfall


def catalog_points(module: Module, cases: list | None = None) -> dict[str, float]:
    """Points per test of ``module``'s whole catalog (``cases``: collected already), as
    course.toml's ``[points]`` gives them: what every run's score is counted in."""
    return {info.name: module.points_of(info.name) for info, _ in (cases or collect(module))}


def run_catalog(module: Module, target: Target, workspace: str, pattern: str | None = None,
                limit: float | None = IN_PROCESS_TEST_LIMIT_S,
                on_result: Callable[[TestResult], None] | None = None,
                recorder: Any = None, seed: int | None = None,
                maxfail: int | None = None) -> RunResult:
    """The catalog of ``module`` (or the ``-k`` selection) against ``target``, on the randomised
    cases of ``seed`` (``harness.engine.seeding``; None: the public cases).

    With a ``recorder`` (``harness.diagnosis.record.Recorder``), the calls of every failing test
    are kept in it for the diagnosis. With ``maxfail``, the run stops after that many failed
    tests (pytest's ``-x``/``--maxfail``) and a note says how many were not run."""
    start = time.perf_counter()
    results: list[TestResult] = []
    target.recorder = recorder
    every = collect(module)
    selected = select_cases(every, pattern)
    notes: tuple[str, ...] = ()
    for index, (info, fn) in enumerate(selected):
        if maxfail is not None and sum(not r.ok for r in results) >= maxfail:
            left = len(selected) - index
            notes = (f"stopped after {maxfail} failed test{'s' if maxfail != 1 else ''} "
                     f"(--maxfail {maxfail}): {left} test{'s' if left != 1 else ''} not run",)
            break
        if recorder is not None:
            recorder.start_test()
        with cases_from(seed):
            result = run_case(module, info, fn, target, limit)
        if recorder is not None:
            if result.ok:
                recorder.drop()
            else:
                recorder.keep(info.name)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return RunResult(module.id, workspace, target.label, tuple(results),
                     time.perf_counter() - start, seed=seed, notes=notes,
                     points=catalog_points(module, every))
