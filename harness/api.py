"""The Python face of ol: one typed request and one function per command, no printing.

The CLI (``harness.commands``) maps each command onto one call here, as coverage.py's
``cmdline`` maps each command onto one method of its ``Coverage`` object. A request is checked
when it is built (the same ranges and one-line ``HarnessError`` messages as the options), so a
request made in code fails as the command line would. Every result has ``to_json`` and a
``from_json`` that checks its type tag and format version::

    from harness import api

    result = api.check(api.CheckRequest("M07.6", workspace="student"))
    print(result.verdict, result.passed, result.failed)

    lab = api.lab(api.LabRequest("M06.3", jobs=2))
    print(lab.verdict, lab.to_json()["mutants"][0])

Every long call takes one ``Listener`` (``harness.engine.events``: ``started``, a ``step`` per
test, module, mutant, implementation or submission, ``line``, ``warned``, ``finished``; override
the hooks you need); ``None`` runs silently::

    class Dots(api.Listener):
        def step(self, step):
            print(step.done, "of", step.total, step.label)

    api.lab(api.LabRequest("M06.3"), Dots())
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.engine.events import Listener, Relay, Step
from harness.engine.requests import (
    AuditRequest,
    CheckRequest,
    DiffRequest,
    GateRequest,
    GradeRequest,
    LabRequest,
    OwnTestsRequest,
    StartRequest,
)
from harness.engine.seeding import FRESH, Seed

if TYPE_CHECKING:
    from harness.audit.mutmut_result import MutmutAudit
    from harness.audit.power_result import PowerAudit
    from harness.check.diff import ModuleDiff
    from harness.check.run import CheckEvents, CheckStart
    from harness.check.stubs import Started
    from harness.engine.results import RunResult
    from harness.gate.engine import GateResult, GateStart
    from harness.grade.engine import GradeOutcome, GradePlanned
    from harness.lab.engine import LabResult
    from harness.own_tests.engine import MineResult

__all__ = [
    "FRESH", "AuditRequest", "CheckEvents", "CheckRequest", "CheckStart", "DiffRequest",
    "GateRequest", "GateStart", "GradePlanned", "GradeRequest", "LabRequest", "Listener",
    "OwnTestsRequest", "Relay", "Seed", "StartRequest", "Step", "audit_mutmut", "audit_power",
    "check", "check_error", "diff", "gate", "grade", "lab", "own_tests", "start", "with_request",
]


def __getattr__(name: str) -> object:
    """The event types, imported when first asked for (as the engines are): ``import
    harness.api`` stays light."""
    if name in ("CheckEvents", "CheckStart"):
        from harness.check import run

        return getattr(run, name)
    if name == "GateStart":
        from harness.gate import engine

        return engine.GateStart
    if name == "GradePlanned":
        from harness.grade import engine as grade_engine

        return grade_engine.GradePlanned
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def start(request: StartRequest) -> Started:
    """Write the module's stubs and the package ``__init__`` files into the workspace (the
    current directory unless given), never overwriting an edited file (``force``: replaced, a
    timestamped backup kept first); what was done, and the needs not written there yet."""
    from harness.check.stubs import start_workspace

    return start_workspace(request)


def diff(request: DiffRequest) -> ModuleDiff:
    """The workspace's module against the reference (found as ``check`` finds it), once exactly
    its bytes have passed ``check``; a one-line ``HarnessError`` until then."""
    from harness.check.diff import module_diff

    return module_diff(request)


def check(request: CheckRequest, events: CheckEvents | None = None) -> RunResult:
    """Run the catalog against the request's target; ``events.step`` sees each test as it ends.

    As ``ol check`` runs it: the workspace resolved (``--workspace``, else the nearest holding
    ``python/tinyllm``, else the bundled one), and a pass recorded for ``ol diff`` when every
    test of the catalog ran on the workspace and passed. ``events`` (``CheckEvents``, a
    ``Listener``) is told what was resolved before the run (``resolved``, ``started``: the
    workspace, the request as it runs, its replay), each test (``step``) and a pass that could
    not be recorded (``warned``: the verdict stands).

    The result records what the request changed in the cases and the code checked (``ref_deps``,
    ``pattern``: its ``replay``) and how many tests of the catalog did not run, and why (``-k``,
    ``--maxfail``): such a run is ``partial``, never a pass."""
    from harness.check.run import check as run

    return run(request, events)


def with_request(request: CheckRequest, result: RunResult) -> RunResult:
    """``result`` with the options of ``request`` its replay needs (``ref_deps``, ``pattern``)
    and the count of the catalog's tests it did not run, with the options that left them unrun
    (``-k``, ``--maxfail``): such a run is ``partial``."""
    from harness.check.run import as_requested

    return as_requested(request, result)


def check_error(request: CheckRequest, workspace: str | None, message: str) -> RunResult:
    """The result of a check that could not start (a syntax error, a failed import, a missing
    dependency): no test, every test of the catalog not run, the one-line ``message``; what
    ``ol check`` writes into each report asked for, so a report says what went wrong."""
    from harness.check.run import error_result

    return error_result(request, workspace, message)


def lab(request: LabRequest, listener: Listener | None = None) -> LabResult:
    """The kill matrix of the request's module. ``request.cache`` says whether its cells come
    from the lab's cache where their key is found (off unless asked: ``ol lab`` asks), and
    ``result.reuse`` how many did; the matrix is the same either way."""
    from harness.lab.engine import run_lab

    return run_lab(request, listener)


def audit_mutmut(request: AuditRequest, listener: Listener | None = None) -> MutmutAudit:
    """mutmut over the reference file; with ``compare_lab``, the lab timed beside it."""
    from harness.audit.mutmut_run import run_mutmut_audit

    return run_mutmut_audit(request.module_id, log_dir=request.log_dir, listener=listener,
                            run_lab_too=request.compare_lab)


def audit_power(request: AuditRequest, listener: Listener | None = None) -> PowerAudit:
    """False-alarm rate and power of every sampled test."""
    from harness.audit.power import DEFAULT_SEEDS, run_power_audit

    return run_power_audit(request.module_id, request.seeds or DEFAULT_SEEDS, listener=listener)


def gate(request: GateRequest, listener: Listener | None = None) -> GateResult:
    """Every module of the milestone; ``listener.step`` sees each as it is decided.

    As ``ol gate`` runs it: the workspace resolved and the seed drawn (``FRESH``) once, before
    any module runs; ``listener.started`` is told both (``GateStart``: the request as it runs,
    with the seed drawn, the workspace, the replay); raising there stops the gate before it
    runs."""
    from harness.gate.engine import gate as run

    return run(request, listener)


def grade(request: GradeRequest, listener: Listener | None = None) -> GradeOutcome:
    """Grade every submission into the gradebook (resumed where it stopped); ``listener`` is
    told the plan (``started``: ``GradePlanned``), each submission's row (``step``) and each
    entry of the folder that is no submission (``warned``)."""
    from harness.grade.engine import run_grade

    return run_grade(request, listener)


def own_tests(request: OwnTestsRequest, listener: Listener | None = None) -> MineResult:
    """The student's suite against every correct and every buggy implementation."""
    from harness.engine.course import load_course
    from harness.own_tests.alternatives import load_alternatives
    from harness.own_tests.engine import run_mine

    module = load_course().module(request.module_id)
    load_alternatives(module)  # a module without hidden implementations stops here, in one line
    ids = list(request.mutant_ids) if request.mutant_ids is not None else None
    return run_mine(module, suite_path(request), request.jobs, mutant_ids=ids,
                    listener=listener, exhaustive=request.exhaustive,
                    budget_s=request.budget_s)


def suite_path(request: OwnTestsRequest) -> Path:
    """The request's suite as a path (relative to its workspace if given); a HarnessError if
    it is not a file or folder of tests."""
    from harness.own_tests.stage import resolve_suite

    return resolve_suite(request.suite, request.workspace)

