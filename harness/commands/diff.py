"""``ol diff MODULE``: the student's module against the reference, once it has passed."""

from __future__ import annotations

import argparse
import difflib
import sys

from harness.engine.course import REFERENCE_PYTHON, load_course
from harness.errors import EXIT_PASS, HarnessError


def run(args: argparse.Namespace) -> int:
    from harness.engine.check import has_passed
    from harness.engine.workspace import check_module_file, resolve_workspace
    from harness.report.escape import printable

    module = load_course().module(args.module)
    ws = resolve_workspace(args.workspace)
    source = check_module_file(ws, module)
    if not has_passed(ws, module, source):
        raise HarnessError(f"{ws.relative(module)} has not passed `ol check {module.id}` as it is now",
                           f"pass `ol check {module.id}` first; the diff is the reward")
    reference = (REFERENCE_PYTHON / module.file).read_text(encoding="utf-8")
    diff = difflib.unified_diff(reference.splitlines(keepends=True), source.splitlines(keepends=True),
                                f"reference/{module.file}", f"yours/{module.file}")
    text = "".join(diff)
    # The student's lines as written, but a control or bidi character shown, not obeyed.
    sys.stdout.write(printable(text) if text else "your file is identical to the reference\n")
    return EXIT_PASS
