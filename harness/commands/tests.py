"""``ol tests MODULE``: the catalog (what each test checks and why); ``--mine PATH``: rung R1."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands.common import out, text_width
from harness.commands.reports import check_report_paths, write_files
from harness.engine.course import load_course
from harness.errors import EXIT_PASS, HarnessError, exit_code
from harness.report.formats import file_formats


def run(args: argparse.Namespace) -> int:
    from harness.engine.catalog import collect
    from harness.report.text import WIDTH, format_catalog

    module = load_course().module(args.module)
    if args.mine:
        return run_own_tests(args)
    for flag in ("workspace", *(f.name for f in file_formats("MineResult")), "jobs", "exhaustive",
                 "budget"):
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
    [--exhaustive] [--budget S]``."""
    from harness import api
    from harness.own_tests.alternatives import load_alternatives
    from harness.report.own_tests import format_text
    from harness.terminal.progress import Progress

    module = load_course().module(args.module)
    load_alternatives(module)  # a module without hidden implementations stops here, in one line
    request = api.OwnTestsRequest(module.id, args.mine, args.workspace, getattr(args, "jobs", None),
                                  exhaustive=bool(getattr(args, "exhaustive", False)),
                                  budget_s=getattr(args, "budget", None))
    asked = {fmt.name: getattr(args, fmt.name, None) for fmt in file_formats("MineResult")}
    suite = api.suite_path(request)
    workspace = Path(args.workspace).expanduser() if args.workspace else Path.cwd()
    check_report_paths([(f"--{name}", path) for name, path in asked.items()], workspace,
                       [(suite, f"your tests (--mine {args.mine})")])
    width = text_width(args)
    out(f"ol tests {module.id} --mine {args.mine}: your tests against the reference, the hidden "
        "correct implementations and every known bug", width)
    with Progress(f"tests {module.id} --mine", "implementations") as progress:
        result = api.own_tests(request, progress)
    sys.stdout.write(format_text(result, width))
    for path in write_files(result, asked):
        out(f"wrote {path}")
    return exit_code(result.verdict)
