"""``ol check MODULE``: the catalog against the workspace (or ``--target``), reports, the verdict."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from harness.commands.common import (
    check_report_paths,
    out,
    seed_option,
    worker_limits_of,
    write_asked,
)
from harness.engine.course import STUDENT_DIR, Module, load_course
from harness.engine.requests import CheckRequest
from harness.engine.results import TestResult
from harness.errors import HarnessError, exit_code


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.engine.check import check_passes_store, record_pass
    from harness.engine.workspace import check_module_file, resolve_workspace
    from harness.report.escape import printable
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
    ws = resolve_workspace(args.workspace) if target == "student" else None
    check_report_paths([("--json", args.json), ("--junit", args.junit),
                        ("--gradescope", args.gradescope)], ws.root if ws else None)
    if ws is not None and not args.pattern:
        check_passes_store(ws)  # a pass is recorded there: a .ol that is a link stops us now
    _head(module, request, ws)
    result = api.check(request, _line_printer(module, getattr(args, "verbose", 0)))
    sys.stdout.write(failures_and_summary(result))
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


def _head(module: Module, request: CheckRequest, ws) -> None:
    """The first lines: what is checked, and on which cases (with the replay of a seed)."""
    from harness.engine.seeding import replay_command
    from harness.report.common import cases_line

    if ws is not None:
        bundled = " (the bundled student workspace)" if ws.root == STUDENT_DIR.resolve() else ""
        out(f"ol check {module.id}: workspace {ws.root}{bundled}"
            + (" with the reference dependencies" if request.ref_deps else ""))
    else:
        out(f"ol check {module.id}: target {request.target}")
    if request.seed is None:
        out(cases_line(None))
        return
    where = (("--workspace", str(ws.root), *(("--ref-deps",) if request.ref_deps else ()))
             if ws is not None else ("--target", request.target))
    out(cases_line(request.seed, replay_command("check", module.id, request.seed, *where)))


def _line_printer(module: Module, verbose: int = 0) -> Callable[[TestResult], None]:
    """Each test's line as it finishes; with ``-v``, what the test checks below it."""
    from harness.catalogs.metadata import collect
    from harness.report.text import checks_lines, test_line

    infos = {info.name: info for info, _ in collect(module)}
    width = max(len(name) for name in infos)

    def show(test: TestResult) -> None:
        out(test_line(test, width))
        if verbose and test.name in infos:
            for line in checks_lines(infos[test.name]):
                out(line)

    return show


def _write(args: argparse.Namespace, result) -> None:
    from harness.report.gradescope import to_gradescope
    from harness.report.json_report import to_json_text
    from harness.report.junit import to_junit

    write_asked([(args.json, to_json_text), (args.junit, lambda r: to_junit([r])),
                   (args.gradescope, to_gradescope)], result)
