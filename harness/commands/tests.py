"""``ol tests MODULE``: the catalog (what each test checks and why); ``--mine PATH``: rung R1."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands.common import check_report_paths, out, text_width, write_asked
from harness.engine.course import load_course
from harness.errors import EXIT_PASS, HarnessError, exit_code


def run(args: argparse.Namespace) -> int:
    from harness.engine.catalog import collect
    from harness.report.text import WIDTH, format_catalog

    module = load_course().module(args.module)
    if args.mine:
        return run_own_tests(args)
    for flag in ("workspace", "json", "gradescope", "jobs", "exhaustive"):
        if getattr(args, flag, None) not in (None, False):
            raise HarnessError(f"--{flag} goes with --mine", f"ol tests {module.id} --mine PATH --{flag} ...")
    if getattr(args, "wide", False) and args.format != "text":
        raise HarnessError(f"--wide goes with the text format, not --format {args.format}",
                           f"ol tests {module.id} --wide")
    sys.stdout.write(format_catalog(module, collect(module), args.format,
                                    wide=getattr(args, "wide", False),
                                    width=text_width(args) or WIDTH))
    return EXIT_PASS


def run_own_tests(args: argparse.Namespace) -> int:
    """``ol tests MODULE --mine PATH [--workspace DIR] [--json F] [--gradescope F] [--jobs N]
    [--exhaustive]``."""
    from harness import api
    from harness.own_tests.alternatives import load_alternatives
    from harness.report.own_tests import format_text, to_gradescope, to_json_text
    from harness.report.progress import progress_printer

    module = load_course().module(args.module)
    load_alternatives(module)  # a module without hidden implementations stops here, in one line
    request = api.OwnTestsRequest(module.id, args.mine, args.workspace, getattr(args, "jobs", None),
                                  exhaustive=bool(getattr(args, "exhaustive", False)))
    json_path, gradescope_path = getattr(args, "json", None), getattr(args, "gradescope", None)
    suite = api.suite_path(request)
    workspace = Path(args.workspace).expanduser() if args.workspace else Path.cwd()
    check_report_paths([("--json", json_path), ("--gradescope", gradescope_path)], workspace,
                       [(suite, f"your tests (--mine {args.mine})")])
    width = text_width(args)
    out(f"ol tests {module.id} --mine {args.mine}: your tests against the reference, the hidden "
        "correct implementations and every known bug", width)
    with progress_printer(f"tests {module.id} --mine", "implementations") as progress:
        result = api.own_tests(request, progress=progress)
    sys.stdout.write(format_text(result, width))
    write_asked([(json_path, to_json_text), (gradescope_path, to_gradescope)], result)
    return exit_code(result.verdict)
