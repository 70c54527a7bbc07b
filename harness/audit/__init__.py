"""`ol audit`: not built yet."""

from __future__ import annotations

import argparse

from harness.course import load_course
from harness.errors import HarnessError


def cmd_audit(args: argparse.Namespace) -> int:
    """Validate the arguments, then say plainly that the command is not built yet (exit 2)."""
    course = load_course()
    if hasattr(args, "milestone"):
        course.milestone(args.milestone)
    else:
        course.module(args.module)
    raise HarnessError("ol audit is not built yet", "see the open issues of the ol project")
