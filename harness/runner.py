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

from harness.catalog import collect
from harness.course import Module
from harness.model import CaseInfo, Outcome, RunResult, TestResult
from harness.target import ContractViolation, Target, TargetEscape, TargetTimedOut

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
def _quiet() -> Iterator[None]:
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
    """One catalog test against ``target``, fail-closed."""
    target.begin_test()
    outcome, message, pitfall = Outcome.PASSED, "", None
    start = time.perf_counter()
    try:
        with alarm(limit), _quiet():
            fn(target)
    except TargetEscape as exc:
        outcome, message = Outcome(exc.outcome), str(exc)
    except AssertionError as exc:
        outcome, message = Outcome.FAILED, str(exc) or "assertion failed"
        pitfall = getattr(exc, "pitfall", None)
    except NotImplementedError as exc:
        outcome, message = Outcome.FAILED, f"not implemented yet: {exc}"
    except Exception as exc:  # noqa: BLE001 - the target raised something the test did not expect
        outcome, message = Outcome.ERROR, f"raised {type(exc).__name__}: {exc}"
        remote = getattr(exc, "remote", None) or getattr(exc, "ol_remote", None)
        if remote is not None:
            message = f"the code under test raised {remote}"
    duration = time.perf_counter() - start
    outcome, message, pitfall = _fail_closed(target, outcome, message, pitfall)
    stub = target.not_implemented is not None and target.escape is None
    if outcome is not Outcome.PASSED and pitfall is None and info.pitfalls and not stub:
        pitfall = info.pitfalls[0]
    return TestResult(info.name, info.kind, outcome, duration, message, pitfall,
                      module.pitfall_text(pitfall) if outcome is not Outcome.PASSED else "")


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


def run_catalog(module: Module, target: Target, workspace: str, pattern: str | None = None,
                limit: float | None = IN_PROCESS_TEST_LIMIT_S,
                on_result: Callable[[TestResult], None] | None = None) -> RunResult:
    """The catalog of ``module`` (or the ``-k`` selection) against ``target``."""
    start = time.perf_counter()
    results = []
    for info, fn in select_cases(collect(module), pattern):
        result = run_case(module, info, fn, target, limit)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return RunResult(module.id, workspace, target.label, tuple(results),
                     time.perf_counter() - start)
