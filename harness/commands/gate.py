"""``ol gate MILESTONE``: every module of a milestone checked for CI, its reports and the step summary."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys

from harness.commands.common import columns, out, seed_option
from harness.commands.reports import check_report_paths, write_files
from harness.engine.course import load_course
from harness.engine.events import Listener, Step
from harness.engine.requests import GateRequest
from harness.errors import exit_code
from harness.gate.engine import GateStart
from harness.report.formats import file_formats
from harness.terminal.gate import GateProgress


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.files import default_reports_dir
    from harness.report.gate import format_failures, to_gate_markdown

    course = load_course()
    course.milestone(args.milestone)  # an unknown milestone is a usage error, before anything runs
    request = GateRequest(args.milestone, args.workspace, bool(args.ref_deps),
                          seed_option(args, fresh=True))
    markdown = getattr(args, "markdown", None) or str(default_reports_dir() / f"gate-{args.milestone}.md")
    asked = {fmt.name: markdown if fmt.name == "markdown" else getattr(args, fmt.name)
             for fmt in file_formats("GateResult")}
    reports = [(f"--{name}", path) for name, path in asked.items()]
    with contextlib.ExitStack() as stack:
        lines = _Lines(reports, stack)
        result = api.gate(request, lines)
    sys.stdout.write(format_failures(result, columns()))
    if result.unconfined():
        print(f"ol: warning: the sandbox was partial here (missing: {', '.join(result.unconfined())})"
              "; every module's report says so; see docs/isolation.md", file=sys.stderr)
    for path in write_files(result, asked):
        out(f"wrote {path}")
    _append_step_summary(to_gate_markdown(result))
    return exit_code(result.verdict)


class _Lines(Listener):
    """``ol gate``'s side of the gate's events: at its start, the report paths refused inside
    the workspace found and the first lines (the workspace, the cases and their replay); then
    each module's line, with a bar below them on a terminal (taken down by ``stack``)."""

    def __init__(self, reports: list[tuple[str, str | None]], stack: contextlib.ExitStack) -> None:
        self.reports, self.stack = reports, stack
        self.progress: GateProgress | None = None

    def started(self, start: GateStart) -> None:
        from harness.report.common import cases_line

        ws, request = start.workspace, start.request
        check_report_paths(self.reports, ws.root)
        out(f"ol gate {request.milestone}: workspace {ws.root}"
            + (" with the reference dependencies" if request.ref_deps else ""))
        out(cases_line(start.seed, start.replay))
        course = load_course()
        width = max(len(m) for m in course.milestone(request.milestone))
        order = course.dependency_order(course.milestone(request.milestone))
        self.progress = self.stack.enter_context(GateProgress(request.milestone, order, width, out))

    def step(self, step: Step) -> None:
        assert self.progress is not None, "a module is gated only after the gate started"
        self.progress.step(step)


def _append_step_summary(text: str) -> None:
    """GitHub Actions shows ``$GITHUB_STEP_SUMMARY`` on the run's page; it is appended to."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:  # never blocks on a FIFO, never writes through a link or into a device
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
        with open(fd, "a", encoding="utf-8", errors="backslashreplace") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(0, "not a regular file")
            fh.write(text)
    except OSError as exc:
        print(f"ol: could not append to $GITHUB_STEP_SUMMARY ({path}): {exc.strerror}",
              file=sys.stderr)
