"""``ol audit MODULE``: mutmut over the reference (``--mutmut``), the power of the sampled tests
(``--power``).

With neither flag both run. ``--seeds N`` sets the seeds per mutant of the power audit (the
false-alarm rate uses ten times as many); ``--compare-lab`` also runs ``ol lab`` beside mutmut, for
its cost per mutant (off by default: a whole lab run); ``--out DIR`` the report folder (default
``reports/``).
Exit 0 when every audit run passes, 1 when one finds a problem (an unexplained mutmut survivor,
a sampled test below its required power or above its alpha), 2 for a usage or setup error.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from harness.engine.course import load_course
from harness.engine.requests import AuditRequest
from harness.errors import EXIT_FAIL, EXIT_PASS, HarnessError
from harness.terminal.lines import TimedLines
from harness.terminal.progress import Progress


def run(args: argparse.Namespace) -> int:
    """Validate, run the audits asked for (both when neither flag is given), report, exit."""
    module = load_course().module(args.module)
    do_mutmut = args.mutmut or not args.power
    do_power = args.power or not args.mutmut
    if args.seeds is not None and not do_power:
        raise HarnessError("--seeds goes with --power", "e.g. --power --seeds 200")
    if args.compare_lab and not do_mutmut:
        raise HarnessError("--compare-lab goes with --mutmut", "e.g. --mutmut --compare-lab")
    folder = Path(args.out) if args.out else None
    request = AuditRequest(module.id, args.seeds, folder, compare_lab=args.compare_lab)
    _check_writable(folder)
    verdicts = []
    if do_mutmut:
        verdicts.append(_mutmut(request, folder))
    if do_power:
        verdicts.append(_power(request, folder))
    return EXIT_PASS if all(v == "pass" for v in verdicts) else EXIT_FAIL


def _check_writable(folder: Path | None) -> None:
    """Fail before a long run, not after it, when the report folder cannot be written."""
    from harness.files import default_reports_dir

    folder = folder if folder is not None else default_reports_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".ol-probe-"):
            pass
    except OSError as exc:
        raise HarnessError(f"cannot write reports to {folder}: {exc.strerror or exc}",
                           "choose a writable --out folder") from None


def _mutmut(request: AuditRequest, folder: Path | None) -> str:
    from harness import api
    from harness.commands.reports import write_folder
    from harness.files import default_reports_dir
    from harness.report.audit import mutmut_summary

    logs = folder or default_reports_dir()
    label = f"audit {request.module_id} --mutmut"
    with Progress(label) as bar:
        audit = api.audit_mutmut(AuditRequest(request.module_id, request.seeds, logs,
                                              compare_lab=request.compare_lab),
                                 TimedLines(label, bar))
    written = write_folder(audit, folder)
    sys.stdout.write(mutmut_summary(audit))
    for p in [*written.paths, logs / f"mutmut-{request.module_id}.log"]:
        print(f"wrote {p}")
    return audit.verdict


def _power(request: AuditRequest, folder: Path | None) -> str:
    from harness import api
    from harness.commands.reports import write_folder
    from harness.report.power import summary

    label = f"audit {request.module_id} --power"
    with Progress(label) as bar:
        audit = api.audit_power(request, TimedLines(label, bar))
    written = write_folder(audit, folder)
    sys.stdout.write(summary(audit))
    for p in written.paths:
        print(f"wrote {p}")
    for note in written.notes:
        print(note)
    return audit.verdict
