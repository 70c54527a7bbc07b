"""One function per ``ol`` command: validate, call the engine, report. ``cli`` dispatches here."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.catalogs.metadata import collect
from harness.engine.course import PACKAGE_DIR, REFERENCE_PYTHON, STUDENT_DIR, load_course
from harness.errors import HarnessError
from harness.engine.results import RunResult

EXIT_PASS, EXIT_FAIL = 0, 1


def _out(text: str = "") -> None:
    """One line of a command's own output; a path or name in it may come from a submission."""
    from harness.report.escape import printable

    print(printable(text), flush=True)


def _not_built(what: str) -> int:
    raise HarnessError(f"{what} is not built yet", "see the open issues of the ol project")


# -- ol tests ----------------------------------------------------------------------------------------

def cmd_tests(args: argparse.Namespace) -> int:
    from harness.report.text import format_catalog

    module = load_course().module(args.module)
    if args.mine:
        from harness.own_tests.engine import run_mine_command

        return run_mine_command(module, args)
    for flag in ("workspace", "json", "gradescope", "jobs"):
        if getattr(args, flag, None) is not None:
            raise HarnessError(f"--{flag} goes with --mine", f"ol tests {module.id} --mine PATH --{flag} ...")
    sys.stdout.write(format_catalog(module, collect(module), args.format))
    return EXIT_PASS


# -- ol start ----------------------------------------------------------------------------------------

def cmd_start(args: argparse.Namespace) -> int:
    from harness.engine.stubs import start

    module = load_course().module(args.module)
    root = Path(args.workspace).expanduser() if args.workspace else Path.cwd()
    actions = start(module, root, force=args.force)
    _out(f"ol start {module.id}: workspace {root.resolve()}")
    kept = False
    for a in actions:
        rel = a.path.relative_to(root) if a.path.is_relative_to(root) else a.path
        if a.action == "kept":
            kept = True
            _out(f"  kept      {rel}: it differs from the stub (your edits); --force replaces it")
        elif a.action == "replaced":
            _out(f"  replaced  {rel} (your version is in {a.backup.name})")
        else:
            _out(f"  {a.action:<9} {rel}")
    _out(f"next: `ol tests {module.id}` to read the catalog, then `ol check {module.id}`"
         + ("" if not kept else " (your edited files were left as they are)"))
    return EXIT_PASS


# -- ol check ----------------------------------------------------------------------------------------

def _limits(args: argparse.Namespace):
    """The worker's limits from ``--timeout`` and ``--memory-mb``, in the ranges ``cli`` checks
    them against when they are parsed (checked again here for a Namespace built otherwise)."""
    from harness.cli import (
        MEMORY_MB_MAX,
        MEMORY_MB_MIN,
        TIMEOUT_MAX_S,
        check_count,
        check_seconds,
    )
    from harness.sandbox.isolated import Limits

    fields = {}
    if args.timeout is not None:
        fields["call_timeout_s"] = check_seconds("--timeout", float(args.timeout), TIMEOUT_MAX_S,
                                                 "--timeout 10")
    if args.memory_mb is not None:
        fields["memory_mb"] = check_count("--memory-mb", int(args.memory_mb), MEMORY_MB_MIN,
                                          MEMORY_MB_MAX, "the default is 4096; numpy alone needs "
                                          "about 100 MB")
    return Limits(**fields)


def run_seed(args: argparse.Namespace, fresh: bool) -> int | None:
    """The run seed of a command from ``--seed``: a run seed, None for ``public``, and when it is
    not given a fresh seed (``fresh``: ``ol gate``, ``ol grade``) or the public cases (``ol check``,
    ``ol lab``). A value not parsed by ``cli`` (a Namespace built otherwise) is checked here."""
    from harness.cli import parse_seed_option
    from harness.engine.seeding import PUBLIC, fresh_seed

    given = getattr(args, "seed", None)
    if given is None:
        return fresh_seed() if fresh else None
    seed = parse_seed_option(str(given))
    return None if seed == PUBLIC else seed


def _check_report_paths(paths: Sequence[str | None | tuple[str, str | None]],
                        workspace: Path | str | None = None,
                        protected: Sequence[tuple[Path, str]] = ()) -> None:
    """Fail before the run, not after it, when a report cannot or must not be written.

    ``paths`` are ``(option, path)`` pairs (or bare paths), None for a report not asked for.
    Refused, each in one line and before anything is created: a path inside ``workspace``'s
    ``python/`` tree, the reference's, ol's own code, or a ``protected`` tree (a ``(path, what)``
    pair, such as the suite of ``ol tests --mine``); two options naming one file (after
    resolving links, or the same file under two names); an existing path that is not a regular
    file (``harness.report.io.refuse_special``: nothing is opened). Then each folder is probed.
    """
    from harness.report.io import ensure_writable, refuse_special

    given = [p if isinstance(p, tuple) else ("report", p) for p in paths]
    given = [(flag, str(p)) for flag, p in given if p is not None]
    trees = [*protected, (REFERENCE_PYTHON, "the reference's python/ folder"),
             (PACKAGE_DIR, "ol's own code (harness/)")]
    if workspace is not None:
        trees.insert(0, (Path(workspace) / "python", "the workspace's python/ folder, your code"))
    seen: dict[object, str] = {}
    for flag, path in given:
        where = _resolved(path)
        for tree, what in trees:
            root = _resolved(tree)
            if where == root or where.is_relative_to(root):
                raise HarnessError(f"{flag} {path} is inside {what}",
                                   "write reports outside it, e.g. in reports/")
        refuse_special(path)
        for key in _identities(path, where):
            if key in seen:
                raise HarnessError(f"{seen[key]} and {flag} name the same file {path}",
                                   "give each report a file of its own")
        for key in _identities(path, where):
            seen[key] = flag
    for _flag, path in given:
        ensure_writable(path)


def _resolved(path: Path | str) -> Path:
    """``path`` made absolute with every link resolved (as far as it exists); never fails."""
    try:
        return Path(os.path.realpath(os.path.abspath(os.fspath(path))))
    except (OSError, ValueError):
        return Path(os.path.abspath(os.fspath(path)))


def _identities(path: str, where: Path) -> list[object]:
    """What makes two report paths the same file: the resolved path, and the inode if it exists."""
    keys: list[object] = [where]
    try:
        info = os.stat(path)  # stat, not open: a FIFO never blocks here
        keys.append((info.st_dev, info.st_ino))
    except (OSError, ValueError):
        pass
    return keys


def _line_printer(module) -> callable:
    from harness.report.text import test_line

    width = max(len(info.name) for info, _ in collect(module))
    return lambda t: _out(test_line(t, width))


def cmd_check(args: argparse.Namespace) -> int:
    from harness.engine.check import CheckRequest, check_passes_store, record_pass, run_check
    from harness.report.common import cases_line, replay_command
    from harness.report.escape import printable
    from harness.report.text import failures_and_summary
    from harness.engine.workspace import check_module_file, resolve_workspace

    course = load_course()
    module = course.module(args.module)
    target = args.target or "student"
    if target != "student":
        if args.workspace or args.ref_deps:
            raise HarnessError(f"--workspace and --ref-deps only apply to --target student, not {target}",
                               "drop one of them")
        if target != "reference":
            from harness.engine.mutants import find_mutant

            find_mutant(module.id, target)
    ws = resolve_workspace(args.workspace) if target == "student" else None
    _check_report_paths([("--json", args.json), ("--junit", args.junit),
                         ("--gradescope", args.gradescope)], ws.root if ws else None)
    limits = _limits(args) if target == "student" else None
    seed = run_seed(args, fresh=False)
    if ws is not None and not args.pattern:
        check_passes_store(ws)  # a pass is recorded there: a .ol that is a link stops us now
    if ws is not None:
        bundled = " (the bundled student workspace)" if ws.root == STUDENT_DIR.resolve() else ""
        _out(f"ol check {module.id}: workspace {ws.root}{bundled}"
             + (" with the reference dependencies" if args.ref_deps else ""))
    else:
        _out(f"ol check {module.id}: target {target}")
    if seed is not None:
        where = (("--workspace", str(ws.root), *(("--ref-deps",) if args.ref_deps else ()))
                 if ws is not None else ("--target", target))
        _out(cases_line(seed, replay_command("check", module.id, seed, *where)))
    else:
        _out(cases_line(None))
    request = CheckRequest(module.id, args.workspace, target, args.ref_deps, args.pattern, limits,
                           diagnose=getattr(args, "diagnose", True), seed=seed)
    result = run_check(request, ws, _line_printer(module))
    sys.stdout.write(failures_and_summary(result))
    _write_check_reports(args, result)
    if ws is not None and result.verdict == "pass" and not args.pattern:
        try:
            problem = record_pass(ws, module, check_module_file(ws, module))
        except HarnessError as exc:  # the file changed during the run: the verdict still stands
            problem = exc.message
        if problem:
            print(printable(f"ol: warning: the pass was not recorded: {problem} "
                            f"(ol diff {module.id} will ask for a pass again)").replace("\n", " "),
                  file=sys.stderr)
    return EXIT_PASS if result.verdict == "pass" else EXIT_FAIL


def _write_check_reports(args: argparse.Namespace, result: RunResult) -> None:
    from harness.report.gradescope import to_gradescope
    from harness.report.io import write_atomic
    from harness.report.json_report import to_json_text
    from harness.report.junit import to_junit

    for path, render in ((args.json, to_json_text), (args.junit, lambda r: to_junit([r])),
                         (args.gradescope, to_gradescope)):
        if path:
            write_atomic(Path(path), render(result))
            _out(f"wrote {path}")


# -- ol diff -----------------------------------------------------------------------------------------

def cmd_diff(args: argparse.Namespace) -> int:
    from harness.engine.check import has_passed
    from harness.report.escape import printable
    from harness.engine.workspace import check_module_file, resolve_workspace

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


# -- ol lab ------------------------------------------------------------------------------------------

def cmd_lab(args: argparse.Namespace) -> int:
    from harness.lab.engine import progress_printer, run_lab
    from harness.report.lab import lab_cases_line, lab_summary, write_lab_reports

    module = load_course().module(args.module)
    if args.jobs is not None:
        from harness.cli import JOBS_MAX, check_count

        check_count("--jobs", args.jobs, 1, JOBS_MAX, "e.g. --jobs 2")
    out = Path(args.out) if args.out else None
    if out is not None:
        _check_report_paths([("--out", str(out / f"lab-{module.id}.json"))])
    seed = run_seed(args, fresh=False)
    _out(f"ol lab {module.id}: the catalog against the reference and every mutant")
    _out(lab_cases_line(module.id, seed))
    result = run_lab(module.id, args.jobs, progress_printer(), exhaustive=args.exhaustive,
                     seed=seed)
    paths = write_lab_reports(result, out)
    sys.stdout.write(lab_summary(result))
    for p in paths:
        _out(f"wrote {p}")
    return EXIT_PASS if result.verdict == "pass" else EXIT_FAIL


# -- instructor and CI commands: each lives in its own module ---------------------------------------

def cmd_audit(args: argparse.Namespace) -> int:
    from harness.audit import cmd_audit as run

    return run(args)


def cmd_gate(args: argparse.Namespace) -> int:
    from harness.gate.engine import cmd_gate as run

    return run(args)


def cmd_grade(args: argparse.Namespace) -> int:
    from harness.grade.engine import cmd_grade as run

    return run(args)
