"""``ol gate MILESTONE``: every module of a milestone checked for CI, its reports and the step summary."""

from __future__ import annotations

import argparse
import dataclasses
import os
import stat
import sys

from harness.commands.common import check_report_paths, out, seed_option, write_asked
from harness.engine.course import load_course
from harness.engine.requests import GateRequest
from harness.errors import exit_code


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.engine.seeding import resolve_seed
    from harness.engine.workspace import resolve_workspace
    from harness.files import default_reports_dir
    from harness.gate.engine import gate_replay
    from harness.report.common import cases_line
    from harness.report.gate import (
        GateProgress,
        format_failures,
        to_gate_json,
        to_gate_junit,
        to_gate_markdown,
    )

    course = load_course()
    course.milestone(args.milestone)  # an unknown milestone is a usage error, before anything runs
    request = GateRequest(args.milestone, args.workspace, bool(args.ref_deps),
                          seed_option(args, fresh=True))
    markdown = getattr(args, "markdown", None) or str(default_reports_dir() / f"gate-{args.milestone}.md")
    ws = resolve_workspace(request.workspace)
    check_report_paths([("--json", args.json), ("--junit", args.junit), ("--markdown", markdown)],
                       ws.root)
    seed = resolve_seed(request.seed)  # one seed for every module of this gate, drawn now
    request = dataclasses.replace(request, seed=seed)
    out(f"ol gate {request.milestone}: workspace {ws.root}"
        + (" with the reference dependencies" if request.ref_deps else ""))
    out(cases_line(seed, gate_replay(request.milestone, str(ws.root), request.ref_deps, seed)))
    width = max(len(m) for m in course.milestone(request.milestone))
    order = course.dependency_order(course.milestone(request.milestone))
    with GateProgress(request.milestone, order, width, out) as lines:
        result = api.gate(request, on_module=lines)
    sys.stdout.write(format_failures(result))
    if result.unconfined():
        print(f"ol: warning: the sandbox was partial here (missing: {', '.join(result.unconfined())})"
              "; every module's report says so; see docs/isolation.md", file=sys.stderr)
    write_asked([(args.json, to_gate_json), (args.junit, to_gate_junit),
                   (markdown, to_gate_markdown)], result)
    _append_step_summary(to_gate_markdown(result))
    return exit_code(result.verdict)


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
