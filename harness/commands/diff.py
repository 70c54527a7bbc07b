"""``ol diff MODULE``: the student's module against the reference, once it has passed."""

from __future__ import annotations

import argparse
import sys

from harness.engine.course import load_course
from harness.engine.requests import DiffRequest
from harness.errors import EXIT_PASS


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.escape import printable

    module = load_course().module(args.module)
    text = api.diff(DiffRequest(module.id, args.workspace)).diff
    # The student's lines as written, but a control or bidi character shown, not obeyed.
    sys.stdout.write(printable(text) if text else "your file is identical to the reference\n")
    return EXIT_PASS
