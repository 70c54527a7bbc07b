"""``ol lab MODULE``: every hand-written mutant against the catalog, the kill matrix and its reports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands.common import check_report_paths, out, seed_option
from harness.engine.course import load_course
from harness.errors import exit_code


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.report.lab import lab_summary, write_lab_reports
    from harness.report.lab_parts import lab_cases_line
    from harness.report.progress import progress_printer

    module = load_course().module(args.module)
    request = api.LabRequest(module.id, args.jobs, args.exhaustive, seed_option(args, fresh=False))
    folder = Path(args.out) if args.out else None
    if folder is not None:
        check_report_paths([("--out", str(folder / f"lab-{module.id}.json"))])
    out(f"ol lab {module.id}: the catalog against the reference and every mutant")
    out(lab_cases_line(module.id, request.seed))
    with progress_printer(f"lab {module.id}", "mutants") as progress:
        result = api.lab(request, progress)
    paths = write_lab_reports(result, folder)
    sys.stdout.write(lab_summary(result))
    for p in paths:
        out(f"wrote {p}")
    return exit_code(result.verdict)
