"""``ol check MODULE``: the catalog against the workspace (or ``--target``), reports, the verdict."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from harness.check.run import CheckEvents, CheckStart
from harness.commands.common import out, seed_option, text_width, worker_limits_of
from harness.commands.reports import check_report_paths, write_files
from harness.engine.course import Module, load_course
from harness.engine.events import Step
from harness.engine.requests import CheckRequest
from harness.engine.results import RunResult, TestResult
from harness.errors import EXIT_USAGE, HarnessError, exit_code
from harness.escape import one_line, printable
from harness.paths import STUDENT_DIR
from harness.report.formats import file_formats

if TYPE_CHECKING:
    from harness.engine.workspace import Workspace


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.report.text import failures_and_summary

    module = load_course().module(args.module)
    target = args.target or "student"
    request = CheckRequest(module.id, args.workspace, target, args.ref_deps, args.pattern,
                           worker_limits_of(args) if target == "student" else None,
                           diagnose=getattr(args, "diagnose", True),
                           seed=seed_option(args, fresh=False),
                           maxfail=getattr(args, "maxfail", None))
    reports = [(fmt.flag, getattr(args, fmt.name)) for fmt in file_formats("RunResult")]
    # The paths first, against the workspace as given: a workspace that cannot be used is a
    # setup error, and its report is written to these paths.
    check_report_paths(reports, args.workspace if target == "student" else None)
    width = text_width(args)
    events = _Events(args, module, reports, width)
    with _reported_on_error(args, request, events):
        result = api.check(request, events)
    whole = bool(getattr(args, "verbose", 0) or getattr(args, "wide", False))
    sys.stdout.write(failures_and_summary(result, width, whole=whole))
    _write(args, result)
    for warning in events.warnings:
        print(printable(f"ol: warning: {warning}").replace("\n", " "), file=sys.stderr)
    return exit_code(result.verdict)


class _Events(CheckEvents):
    """``ol check``'s side of the check's events: the report paths refused inside the workspace
    found, the first lines, each test's line as it finishes (with ``-v``, what the test checks
    below it), the warnings kept until the reports are written."""

    def __init__(self, args: argparse.Namespace, module: Module,
                 reports: list[tuple[str, str | None]], width: int | None) -> None:
        self.args, self.module, self.reports, self.width = args, module, reports, width
        self.workspace: Workspace | None = None
        self.refused = False  # a report path refused: no report is written for that error
        self.warnings: list[str] = []
        self.show = _line_printer(module, getattr(args, "verbose", 0), width)

    def resolved(self, workspace: Workspace | None) -> None:
        self.workspace = workspace
        if workspace is not None:
            try:  # the workspace found: never into its python/
                check_report_paths(self.reports, workspace.root)
            except HarnessError:
                self.refused = True
                raise

    def started(self, start: CheckStart) -> None:
        _head(self.module, start, self.width)

    def running(self) -> None:
        """In ``ol`` itself (``entry``: the process ends with the check), everything built so far
        moves to the collector's permanent generation (``gc.freeze``): the modules, numpy,
        scipy.special, the catalog and the worker's target live until the exit anyway, and the
        full collections the tests' allocations trigger (two in a check of M07.6) then skip
        them. Measured: their time in the isolated check from about 0.10 s to 0.004 s, in process
        (which imports scipy.special during its tests) from about 0.07 s to 0.03 s
        (``docs/performance.md``). Not when ``main`` is called by a process that goes on running:
        a frozen object is never collected."""
        if getattr(self.args, "ends_process", False):
            gc.freeze()

    def step(self, step: Step) -> None:
        self.show(step.item)

    def warned(self, message: str) -> None:
        self.warnings.append(message)


@contextmanager
def _reported_on_error(args: argparse.Namespace, request: CheckRequest,
                       events: _Events) -> Iterator[None]:
    """A setup error (exit 2: a syntax error, a failed import, a missing dependency, a workspace
    that cannot be used) still writes every report asked for, each saying so in one line; the
    error then goes on to ``cli.main``, which prints the same line and exits 2."""
    try:
        yield
    except HarnessError as exc:
        if (exc.exit_code == EXIT_USAGE and not events.refused
                and any(path for _, path in events.reports)):
            ws = events.workspace
            root = str(ws.root) if ws is not None else _given_workspace(args, request)
            from harness import api

            line = one_line(exc.line())
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


def _head(module: Module, start: CheckStart, width: int | None = None) -> None:
    """The first lines: what is checked, and on which cases (with the replay of a seed)."""
    from harness.report.common import cases_line

    ws, request = start.workspace, start.request
    if ws is not None:
        bundled = " (the bundled student workspace)" if ws.root == STUDENT_DIR.resolve() else ""
        out(f"ol check {module.id}: workspace {ws.root}{bundled}"
            + (" with the reference dependencies" if request.ref_deps else ""), width)
    else:
        out(f"ol check {module.id}: target {request.target}", width)
    out(cases_line(start.seed, start.replay), width)


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
    """Every report asked for (``--json``, ``--junit``, ``--gradescope``: the registry's file
    formats of a run), each named on its own line."""
    asked = {fmt.name: getattr(args, fmt.name) for fmt in file_formats("RunResult")}
    for path in write_files(result, asked):
        out(f"wrote {path}")
