"""``ol check MODULE``: the catalog against the workspace (or ``--target``), reports, the verdict."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from harness.commands.common import (
    check_report_paths,
    out,
    seed_option,
    text_width,
    worker_limits_of,
    write_asked,
)
from harness.engine.course import Module, load_course
from harness.engine.requests import CheckRequest
from harness.engine.results import RunResult, TestResult
from harness.errors import EXIT_USAGE, HarnessError, exit_code
from harness.paths import STUDENT_DIR

if TYPE_CHECKING:
    from harness.engine.workspace import Workspace


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.check.engine import check_passes_store, record_pass
    from harness.engine.workspace import check_module_file, resolve_workspace
    from harness.escape import printable
    from harness.report.text import failures_and_summary

    module = load_course().module(args.module)
    target = args.target or "student"
    request = CheckRequest(module.id, args.workspace, target, args.ref_deps, args.pattern,
                           worker_limits_of(args) if target == "student" else None,
                           diagnose=getattr(args, "diagnose", True),
                           seed=seed_option(args, fresh=False),
                           maxfail=getattr(args, "maxfail", None))
    if target not in ("student", "reference"):
        from harness.engine.mutants import find_mutant

        find_mutant(module.id, target)
    reports = [("--json", args.json), ("--junit", args.junit), ("--gradescope", args.gradescope)]
    # The paths first, against the workspace as given: a workspace that cannot be used is a
    # setup error, and its report is written to these paths.
    check_report_paths(reports, args.workspace if target == "student" else None)
    width = text_width(args)
    with _reported_on_error(args, request, None):
        ws = resolve_workspace(args.workspace) if target == "student" else None
    if ws is not None:
        check_report_paths(reports, ws.root)  # the workspace found: never into its python/
    with _reported_on_error(args, request, ws):
        if ws is not None and not args.pattern:
            check_passes_store(ws)  # a pass is recorded there: a .ol that is a link stops us now
        _head(module, request, ws, width)
        result = api.check(request, _line_printer(module, getattr(args, "verbose", 0), width))
    whole = bool(getattr(args, "verbose", 0) or getattr(args, "wide", False))
    sys.stdout.write(failures_and_summary(result, width, whole=whole))
    _write(args, result)
    if ws is not None and result.verdict == "pass" and not args.pattern:
        try:
            problem = record_pass(ws, module, check_module_file(ws, module))
        except HarnessError as exc:  # the file changed during the run: the verdict still stands
            problem = exc.message
        if problem:
            print(printable(f"ol: warning: the pass was not recorded: {problem} "
                            f"(ol diff {module.id} will ask for a pass again)").replace("\n", " "),
                  file=sys.stderr)
    return exit_code(result.verdict)


@contextmanager
def _reported_on_error(args: argparse.Namespace, request: CheckRequest,
                       ws: Workspace | None) -> Iterator[None]:
    """A setup error (exit 2: a syntax error, a failed import, a missing dependency, a workspace
    that cannot be used) still writes every report asked for, each saying so in one line; the
    error then goes on to ``cli.main``, which prints the same line and exits 2."""
    try:
        yield
    except HarnessError as exc:
        if exc.exit_code == EXIT_USAGE and (args.json or args.junit or args.gradescope):
            root = str(ws.root) if ws is not None else _given_workspace(args, request)
            from harness import api
            from harness.escape import printable

            line = printable(exc.line()).replace("\n", "\\n")
            try:
                _write(args, api.check_error(request, root, line))
            except HarnessError as failed:  # the error stays the one the check met
                print(f"ol: warning: {printable(failed.message)}", file=sys.stderr)
        raise


def _given_workspace(args: argparse.Namespace, request: CheckRequest) -> str | None:
    """The workspace as given (made absolute), when it could not be resolved."""
    import os

    if request.target != "student":
        return None
    return os.path.abspath(os.path.expanduser(args.workspace)) if args.workspace else os.getcwd()


def _head(module: Module, request: CheckRequest, ws: Workspace | None, width: int | None = None) -> None:
    """The first lines: what is checked, and on which cases (with the replay of a seed)."""
    from harness.engine.seeding import check_replay
    from harness.report.common import cases_line

    if ws is not None:
        bundled = " (the bundled student workspace)" if ws.root == STUDENT_DIR.resolve() else ""
        out(f"ol check {module.id}: workspace {ws.root}{bundled}"
            + (" with the reference dependencies" if request.ref_deps else ""), width)
    else:
        out(f"ol check {module.id}: target {request.target}", width)
    if request.seed is None:
        out(cases_line(None), width)
        return
    target = {"student": f"workspace {ws.root if ws is not None else ''}",
              "reference": "reference"}.get(request.target, f"mutant {request.target}")
    replay = check_replay(module.id, target, str(ws.root) if ws is not None else None,
                          request.seed, request.ref_deps, request.pattern)
    out(cases_line(request.seed, replay), width)


def _line_printer(module: Module, verbose: int = 0,
                  columns: int | None = None) -> Callable[[TestResult], None]:
    """Each test's line as it finishes; with ``-v``, what the test checks below it."""
    from harness.engine.catalog import collect
    from harness.report.text import checks_lines, test_line

    infos = {info.name: info for info, _ in collect(module)}
    width = max(len(name) for name in infos)

    def show(test: TestResult) -> None:
        out(test_line(test, width, columns))
        if verbose and test.name in infos:
            for line in checks_lines(infos[test.name], columns):
                out(line)

    return show


def _write(args: argparse.Namespace, result: RunResult) -> None:
    from harness.report.gradescope import to_gradescope
    from harness.report.json_report import to_json_text
    from harness.report.junit import to_junit

    write_asked([(args.json, to_json_text), (args.junit, lambda r: to_junit([r])),
                 (args.gradescope, to_gradescope)], result)
