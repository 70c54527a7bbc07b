"""``ol grade MODULE SUBMISSIONS``: every workspace in a folder checked into a resumable gradebook.

Exit codes: 0 when every submission has a verdict (pass, fail or error: the students' results
are in the gradebook, not in the exit code), 2 for a usage or setup error of the run itself, 3
when the harness could not grade some submission (verdict ``internal``; graded again next run).
"""

from __future__ import annotations

import argparse

from harness.commands.common import seed_option
from harness.engine.course import load_course
from harness.engine.requests import GradeRequest


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.commands.reports import write_folder
    from harness.terminal.grade import GradeProgress, print_summary

    module = load_course().module(args.module)
    request = GradeRequest(module.id, args.submissions, args.out, args.jobs, args.executor,
                           args.scheduler, bool(args.ref_deps), args.timeout, args.memory_mb,
                           args.submission_timeout, seed_option(args, fresh=True),
                           getattr(args, "disk_mb", None))
    with GradeProgress() as events:
        outcome = api.grade(request, events)
    write_folder(outcome, outcome.book.out, module=module)
    print_summary(outcome)
    return outcome.exit_code
