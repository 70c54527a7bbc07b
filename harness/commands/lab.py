"""``ol lab MODULE``: every hand-written mutant against the catalog, the kill matrix and its reports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands.common import out, seed_option
from harness.commands.reports import check_report_paths, write_folder
from harness.engine.course import load_course
from harness.errors import exit_code
from harness.escape import printable


def run(args: argparse.Namespace) -> int:
    from harness import api
    from harness.report.lab import lab_summary
    from harness.report.lab_parts import lab_cases_line
    from harness.terminal.progress import Progress

    module = load_course().module(args.module)
    request = api.LabRequest(module.id, args.jobs, args.exhaustive, seed_option(args, fresh=False),
                             cache="fresh" if args.fresh else "use", executor=args.executor,
                             scheduler=args.scheduler)
    folder = Path(args.out) if args.out else None
    if folder is not None:
        check_report_paths([("--out", str(folder / f"lab-{module.id}.json"))])
    out(f"ol lab {module.id}: the catalog against the reference and every mutant")
    out(lab_cases_line(module.id, request.seed.number))
    with Progress(f"lab {module.id}", "mutants") as progress:
        result = api.lab(request, progress)
    written = write_folder(result, folder)
    out(cache_line(result.reuse))
    sys.stdout.write(lab_summary(result))
    for p in written.paths:
        out(f"wrote {p}")
    return exit_code(result.verdict)


def cache_line(reuse: dict) -> str:
    """How many cells this run took from the lab's cache, and where it is."""
    cached, ran = reuse.get("cells_cached", 0), reuse.get("cells_run", 0)
    ref_cached = reuse.get("reference_cached", 0)
    ref_all = ref_cached + reuse.get("reference_run", 0)
    if not reuse.get("folder"):
        return f"cache: off ({ran} cells run; OL_NO_CACHE set or no writable cache folder)"
    where = printable(reuse["folder"])
    if reuse.get("mode") == "fresh":
        return f"cache: --fresh: every cell run ({ran}) and stored in {where}"
    return (f"cache: {cached} of {cached + ran} cells from the cache, {ran} run; the reference "
            f"{ref_cached} of {ref_all} ({where}; --fresh runs every cell)")
