"""One ``ol check`` as the command and the Python API run it alike: resolve, run, record.

``check`` resolves the request's workspace, refuses a record of passes it could not use safely,
tells the caller what it resolved (``CheckEvents``), runs the catalog, and records a pass for
``ol diff`` exactly when ``ol check`` always has: the student's workspace, every test of the
catalog run (no ``-k``) and the verdict pass. A record that cannot be written is a warning
(``CheckEvents.warned``), never a lost verdict.

Why events and not a resolved request handed back first: the caller learns what was resolved
in the one call that runs the check, so nothing is resolved twice, and ``ol check``'s order of
refusals stays what it was: the workspace found (where the command refuses a report path inside
its ``python/``), then the record of passes, then the first line, then the run.
"""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass

from harness.check.engine import check_passes_store, record_pass, run_check
from harness.engine.course import load_course
from harness.engine.events import Listener
from harness.engine.requests import CheckRequest
from harness.engine.results import RunResult
from harness.engine.seeding import check_replay
from harness.engine.workspace import Workspace, check_module_file, resolve_workspace
from harness.errors import HarnessError


@dataclass(frozen=True)
class CheckStart:
    """What a check resolved before its run: the request as it runs, its workspace (None for
    the reference or a mutant) and whether a pass will be recorded."""

    request: CheckRequest
    workspace: Workspace | None
    records_pass: bool

    @property
    def target(self) -> str:
        """The target as results name it: ``workspace ROOT``, ``reference`` or ``mutant ID``."""
        return target_label(self.request, str(self.workspace.root) if self.workspace else None)

    @property
    def seed(self) -> int | None:
        """The run seed of the cases; None: the public cases."""
        return self.request.seed.number

    @property
    def replay(self) -> str | None:
        """The ``ol check`` that runs the same cases again; None on the public cases."""
        if self.seed is None:
            return None
        root = str(self.workspace.root) if self.workspace is not None else None
        return check_replay(self.request.module_id, self.target, root, self.seed,
                            self.request.ref_deps, self.request.pattern)


class CheckEvents(Listener):
    """What a check tells its caller as it goes (``harness.engine.events``: ``started`` with a
    ``CheckStart``, ``running`` once the target is ready (an isolated worker has reported its
    import), a ``step`` per test with its ``TestResult``, ``warned``, ``finished``) and, before
    them, the workspace resolved; the default tells nothing. Raising in ``resolved`` or
    ``started`` stops the check there: nothing runs."""

    def resolved(self, workspace: Workspace | None) -> None:
        """The workspace the check runs on (None: the reference or a mutant), before anything
        of it is read."""


def target_label(request: CheckRequest, workspace: str | None) -> str:
    """``workspace ROOT``, ``reference`` or ``mutant ID``: the target as results name it."""
    return {"student": f"workspace {workspace or ''}", "reference": "reference"}.get(
        request.target, f"mutant {request.target}")


def check(request: CheckRequest, events: CheckEvents | None = None) -> RunResult:
    """Resolve, run and record one check (see the module's docstring)."""
    events = events or CheckEvents()
    ws = (resolve_workspace(request.workspace, module_id=request.module_id)
          if request.target == "student" else None)
    events.resolved(ws)
    records = ws is not None and not request.pattern
    if ws is not None and records:
        check_passes_store(ws)  # a pass is recorded there: a .ol that is a link stops us now
    events.started(CheckStart(request, ws, records))
    result = as_requested(request, run_check(request, ws, events))
    if ws is not None and records and result.verdict == "pass":
        problem = record(ws, request.module_id)
        if problem:
            events.warned(f"the pass was not recorded: {problem} "
                          f"(ol diff {request.module_id} will ask for a pass again)")
    events.finished()
    return result


def record(ws: Workspace, module_id: str) -> str | None:
    """Record the pass of ``module_id`` in ``ws``; why it was not, if it was not."""
    module = load_course().module(module_id)
    try:
        return record_pass(ws, module, check_module_file(ws, module))
    except HarnessError as exc:  # the file changed during the run: the verdict still stands
        return exc.message


def catalog_names(module_id: str) -> list:
    """The catalog's tests, as the runner collects them."""
    from harness.engine import runner

    return list(runner.collect(load_course().module(module_id)))


def as_requested(request: CheckRequest, result: RunResult) -> RunResult:
    """``result`` with the options of ``request`` its replay needs (``ref_deps``, ``pattern``)
    and the count of the catalog's tests it did not run, with the options that left them unrun
    (``-k``, ``--maxfail``): such a run is ``partial``."""
    from harness.engine.runner import select_cases

    cases = catalog_names(request.module_id)
    selected = len(select_cases(cases, request.pattern))
    by = []
    if request.pattern and selected < len(cases):
        by.append(f"-k {shlex.quote(request.pattern)}")
    if len(result.tests) < selected and request.maxfail is not None:
        by.append(f"--maxfail {request.maxfail}")
    return dataclasses.replace(result, ref_deps=request.ref_deps, pattern=request.pattern,
                               not_run=max(len(cases) - len(result.tests), 0),
                               not_run_by=tuple(by))


def error_result(request: CheckRequest, workspace: str | None, message: str) -> RunResult:
    """The result of a check that could not start (a syntax error, a failed import, a missing
    dependency): no test, every test of the catalog not run, the one-line ``message``."""
    from harness.engine.runner import catalog_points

    try:
        points = catalog_points(load_course().module(request.module_id))
    except Exception:  # noqa: BLE001 - a catalog that cannot load is itself the error reported
        points = {}
    target = {"student": f"workspace {workspace}", "reference": "reference"}.get(
        request.target, f"mutant {request.target}")
    return RunResult(request.module_id, workspace or "", target, (),
                     seed=request.seed.number, ref_deps=request.ref_deps, pattern=request.pattern,
                     not_run=len(points), error=message, points=points)
