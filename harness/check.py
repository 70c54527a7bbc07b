"""``ol check``: one catalog against one target, and the record of passes that ``ol diff`` reads."""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.course import Course, Module, load_course
from harness.errors import HarnessError
from harness.model import RunResult, TestResult
from harness.runner import IN_PROCESS_TEST_LIMIT_S, run_catalog
from harness.sandbox.fs import remove_tree
from harness.target import Target
from harness.workspace import (
    Workspace,
    check_dependencies,
    check_module_file,
    content_hash,
    prepare_overlay,
)

PASSES_FILE = ".ol/passes.json"


@dataclass(frozen=True)
class CheckRequest:
    module_id: str
    workspace: str | None = None  # --workspace, or None for the default
    target: str = "student"  # "student" | "reference" | a mutant id
    ref_deps: bool = False
    pattern: str | None = None
    limits: object | None = None  # harness.sandbox.isolated.Limits


def import_lazily_used(module: Module) -> None:
    """The catalog and what its tests import only when they run (its ``LAZY_IMPORTS``)."""
    with contextlib.suppress(Exception):  # the test that needs it imports it again, and reports
        catalog = importlib.import_module(module.catalog_module)
        for name in getattr(catalog, "LAZY_IMPORTS", ()):
            importlib.import_module(name)


@contextlib.contextmanager
def isolated_target(ws: Workspace, module: Module, course: Course, ref_deps: bool,
                    limits: object | None, whole_catalog: bool = False) -> Iterator[Target]:
    """A worker for the student's code, with its overlay removed afterwards.

    The worker starts at once (an interpreter, numpy, the student's import: about 0.2 s); when the
    whole catalog is about to run, the parent meanwhile imports what its tests will need anyway
    (scipy.stats for the chi-square: about 1 s), instead of waiting idle for the worker first.
    """
    from harness.sandbox.isolated import IsolatedTarget

    overlay = prepare_overlay(ws, module, course, ref_deps)
    target = None
    try:
        target = IsolatedTarget(f"workspace {ws.root}", overlay, module.import_name,
                                module.functions, course.returns, limits)
        if whole_catalog:
            import_lazily_used(module)
        status = target.import_status()
        if status is not None and status.kind in ("syntax", "import"):
            where = f"{ws.relative(module)}, line {status.line}: " if status.line else ""
            raise HarnessError(f"importing {module.import_name} failed: {where}{status.message}",
                               "fix the import, then run ol check again")
        yield target
    finally:
        if target is not None:
            target.close()
        remove_tree(overlay.parent)


@contextlib.contextmanager
def open_target(request: CheckRequest, ws: Workspace | None) -> Iterator[Target]:
    """The target a check runs against: the reference, a mutant (in-process), or the workspace."""
    course = load_course()
    module = course.module(request.module_id)
    if request.target == "reference":
        from harness.loading import reference_target

        yield reference_target(module)
    elif request.target == "student":
        assert ws is not None
        check_module_file(ws, module)
        check_dependencies(ws, module, course, request.ref_deps)
        with isolated_target(ws, module, course, request.ref_deps, request.limits,
                             whole_catalog=request.pattern is None) as target:
            yield target
    else:
        from harness.lab import mutant_target
        from harness.mutants import find_mutant

        yield mutant_target(find_mutant(module.id, request.target), module)


def run_check(request: CheckRequest, ws: Workspace | None,
              on_result: Callable[[TestResult], None] | None = None) -> RunResult:
    course = load_course()
    module = course.module(request.module_id)
    label = str(ws.root) if ws is not None else request.target
    with open_target(request, ws) as target:
        # The worker enforces its own limits; in process, the runner's alarm bounds each test.
        limit = None if request.target == "student" else getattr(
            request.limits, "test_timeout_s", IN_PROCESS_TEST_LIMIT_S)
        result = run_catalog(module, target, label, request.pattern, limit, on_result)
    if not result.tests:
        raise HarnessError(f"-k {request.pattern!r} selects no test of {module.id}",
                           f"`ol tests {module.id}` lists the test names")
    return result


# -- the record of passes, for ``ol diff`` -------------------------------------------------------

def _passes_path(ws: Workspace) -> Path:
    return ws.root / PASSES_FILE


def load_passes(ws: Workspace) -> dict:
    try:
        data = json.loads(_passes_path(ws).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def record_pass(ws: Workspace, module: Module, source: str) -> None:
    """Remember that exactly this content of the module passed its whole catalog."""
    from harness.report.io import write_atomic

    passes = load_passes(ws)
    entry = passes.setdefault(module.id, {})
    entry[content_hash(source)] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    try:
        write_atomic(_passes_path(ws), json.dumps(passes, indent=2) + "\n")
    except HarnessError:
        pass  # a read-only workspace still gets its verdict; ol diff will ask for a pass again


def has_passed(ws: Workspace, module: Module, source: str) -> bool:
    return content_hash(source) in load_passes(ws).get(module.id, {})
