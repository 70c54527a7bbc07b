"""``ol diff MODULE``: the student's module against the reference, once it has passed."""

from __future__ import annotations

import argparse
import difflib
import sys

from harness.engine.course import load_course
from harness.errors import EXIT_PASS, HarnessError
from harness.paths import REFERENCE_PYTHON


def run(args: argparse.Namespace) -> int:
    from harness.check.engine import has_passed
    from harness.engine.workspace import read_module, resolve_workspace, text_of
    from harness.escape import printable

    module = load_course().module(args.module)
    ws = resolve_workspace(args.workspace)
    # One read, through staging as ol check reads it: the bytes whose digest is looked up are
    # the bytes shown, and a recorded digest is the one of the file in the copy that passed.
    data = read_module(ws, module)
    if not has_passed(ws, module, data):
        raise HarnessError(f"{ws.relative(module)} has not passed `ol check {module.id}` as it is now",
                           f"pass `ol check {module.id}` first; the diff is the reward")
    source = text_of(data, ws.relative(module))
    reference = (REFERENCE_PYTHON / module.file).read_text(encoding="utf-8")
    diff = difflib.unified_diff(reference.splitlines(keepends=True), source.splitlines(keepends=True),
                                f"reference/{module.file}", f"yours/{module.file}")
    text = "".join(diff)
    # The student's lines as written, but a control or bidi character shown, not obeyed.
    sys.stdout.write(printable(text) if text else "your file is identical to the reference\n")
    return EXIT_PASS
