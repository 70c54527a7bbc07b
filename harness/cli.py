"""The ``ol`` command: parse arguments, call one engine function per command, report, exit.

Exit codes: 0 verdict pass, 1 verdict fail, 2 usage or setup error, 3 internal error, 4 a
partial run (``ol check -k``, ``--maxfail``) with no failure: no verdict; 130 Ctrl-C, 143
SIGTERM, 129 SIGHUP (128 + the signal, as a shell reports it), each after the same clean-up. Only
``main`` turns a ``HarnessError`` into its one line; an unforeseen error prints one line and
leaves its traceback in a log file it names.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import signal
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path

from harness import __version__
from harness.engine.limits import (
    DISK_HINT,
    DISK_MB_MAX,
    DISK_MB_MIN,
    JOBS_MAX,
    MEMORY_HINT,
    MEMORY_MB_MAX,
    MEMORY_MB_MIN,
    SUBMISSION_TIMEOUT_MAX_S,
    TIMEOUT_MAX_S,
    check_count,
    check_seconds,
)
from harness.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, HarnessError
from harness.report.formats import file_formats


class UsageError(HarnessError):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message, f"see `{self.prog} --help`")

    def parse_args(self, args=None, namespace=None):
        """argparse's, but an argument the command does not take is named with that command, what
        it does and its usage (argparse leaves it to ``ol`` itself: 'see `ol --help`', which
        lists no command's options)."""
        namespace, extras = self.parse_known_args(args, namespace)
        sub = self._command_parser(getattr(namespace, "command", None))
        if extras and sub is not None:
            what = (sub.description or "").rstrip(".")
            usage = " ".join(sub.format_usage().split()).removeprefix("usage: ").replace("[-h] ", "")
            shown = f"usage: {usage}" if len(usage) <= 60 else f"its options: `{sub.prog} --help`"
            raise UsageError(f"{sub.prog} does not take {' '.join(extras)}",
                             f"{sub.prog}: {what[:1].lower() + what[1:]}; {shown}")
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace

    def _command_parser(self, command: str | None) -> argparse.ArgumentParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and command in action.choices:
                return action.choices[command]
        return None


class _Once(argparse.Action):
    """An option that may be given once; the same option twice with different values is an error."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = getattr(namespace, f"_seen_{self.dest}", None)
        if seen and getattr(namespace, self.dest) != values:
            before = getattr(namespace, self.dest)
            if seen != option_string:  # two options of one setting: -x and --maxfail 3
                def shown(flag: str, value: object) -> str:
                    flagged = parser._option_string_actions.get(flag)
                    return flag if flagged is not None and flagged.nargs == 0 else f"{flag} {value}"
                raise UsageError(f"{shown(seen, before)} and {shown(option_string, values)} "
                                 "disagree", "give one of them")
            raise UsageError(f"{option_string} given twice ({before} and {values})",
                             "give it once")
        setattr(namespace, f"_seen_{self.dest}", option_string or True)
        setattr(namespace, self.dest, values)


# -- the ranges of the numeric options (checked as they are parsed, for every command) -----------
#
# The ranges live in ``harness.engine.limits``: a typed request built in Python is checked against
# the same ones, raising the same one-line ``HarnessError``; a value that does not parse is a
# ``UsageError`` here.


def _seconds(flag: str, maximum: float, example: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"{flag} must be a number of seconds, got {text!r}",
                             f"e.g. {example}") from None
        return check_seconds(flag, value, maximum, example, text.strip())
    return parse


def _count(flag: str, low: int, high: int, hint: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UsageError(f"{flag} must be a whole number, got {text!r}", hint) from None
        return check_count(flag, value, low, high, hint, text.strip())
    return parse


def _timeout_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=_seconds("--timeout", TIMEOUT_MAX_S, "--timeout 10"),
                   metavar="S", action=_Once,
                   help=f"wall-clock limit per call in the worker (default 10, at most "
                   f"{TIMEOUT_MAX_S:g}); a function that misses it is not called again in the "
                   "check (its later calls: 'not run: it timed out earlier')")


def _memory_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory-mb", type=_count("--memory-mb", MEMORY_MB_MIN, MEMORY_MB_MAX, MEMORY_HINT),
                   metavar="MB", action=_Once,
                   help=f"memory limit of the worker (default 4096, from {MEMORY_MB_MIN} to "
                   f"{MEMORY_MB_MAX})")


def _disk_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--disk-mb", type=_count("--disk-mb", DISK_MB_MIN, DISK_MB_MAX, DISK_HINT),
                   metavar="MB", action=_Once,
                   help=f"what the code under test may write, in its run folder (a tmpfs; default "
                   f"64, from {DISK_MB_MIN} to {DISK_MB_MAX})")


def _jobs_arg(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--jobs", type=_count("--jobs", 1, JOBS_MAX, "e.g. --jobs 2"), metavar="N",
                   action=_Once, help=f"{help_text} (default: all cores; at most {JOBS_MAX})")


def parse_seed_option(text: str) -> int | str:
    """``--seed``'s value as parsed: a run seed, or ``"public"`` (the public cases); anything
    else is one line and exit 2. (Not given at all is None: each command has its default.)"""
    from harness.engine.seeding import HINT, PUBLIC, parse_seed

    try:
        seed = parse_seed(text)
    except ValueError as exc:
        raise UsageError(str(exc), HINT) from None
    return PUBLIC if seed is None else seed


def _seed_arg(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--seed", type=parse_seed_option, metavar="N|public", action=_Once,
                   help=f"the randomised cases: hidden ones drawn from seed N, or the public ones "
                   f"(default: {default}); the reports record the seed and how to replay it")


class _ExitFirst(_Once):
    """``-x``: ``--maxfail 1`` (pytest's exit-first), given without a value."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, 1, option_string)


def _at_least_one(flag: str, hint: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UsageError(f"{flag} must be a whole number, got {text!r}", hint) from None
        if value < 1:
            raise UsageError(f"{flag} must be at least 1, got {text.strip()}", hint)
        return value
    return parse


def _workspace_arg(p: argparse.ArgumentParser, help_text: str | None = None) -> None:
    p.add_argument("--workspace", metavar="DIR", action=_Once,
                   help=help_text or "the student workspace (default: the current directory if it "
                   "holds python/tinyllm, else the bundled student/)")


# -- what the course offers, in the help ----------------------------------------------------------

def _course_help() -> tuple[list[tuple[str, str]], list[tuple[str, str, tuple[str, ...]]]]:
    """The modules ``(id, title)`` and milestones ``(name, title, modules)`` of the course, for
    the help texts; empty when ``course.toml`` cannot be read (``--help`` still works then, and
    a command names the problem when it runs)."""
    from harness.engine.course import load_course

    try:
        course = load_course()
    except Exception:  # noqa: BLE001 - the help must show whatever the course file holds
        return [], []
    modules = [(m.id, m.title) for m in course.modules.values()]
    milestones = [(name, course.milestone_titles.get(name, name), ids)
                  for name, ids in course.milestones.items()]
    return modules, milestones


def _epilog(modules: list[tuple[str, str]],
            milestones: list[tuple[str, str, tuple[str, ...]]] | None = None) -> str:
    """``modules:`` and (for ``ol --help`` and ``ol gate``) ``milestones:``, one per line."""
    width = max((len(name) for name, *_ in [*modules, *(milestones or [])]), default=0)
    lines = ["modules:", *(f"  {mid:<{width}}  {title}" for mid, title in modules)]
    if milestones:
        lines += ["milestones:", *(f"  {name:<{width}}  {title} ({', '.join(ids)})"
                                   for name, title, ids in milestones)]
    return "\n".join(lines) if modules else "modules: see harness/course.toml"


def _ids(modules: list[tuple[str, str]]) -> str:
    names = [mid for mid, _ in modules]
    return (", ".join(names[:-1]) + " or " + names[-1]) if len(names) > 1 else "".join(names)


def _module_arg(p: argparse.ArgumentParser, modules: list[tuple[str, str]]) -> None:
    known = _ids(modules)
    p.add_argument("module", help="the course module" + (f": {known}" if known else "")
                   + " (listed below)")


def _add(sub, name: str, help_text: str, epilog: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:]
                          + ".", epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


CHECK_EXIT_CODES = f"""\
exit codes:
  0  pass: every test of the catalog ran and passed
  1  fail: a test failed (also in a partial run)
  2  usage or setup error (a syntax error, a failed import, a missing dependency): one line on
     stderr; every report asked for ({", ".join(f.flag for f in file_formats("RunResult"))}) still says so
  3  internal error: one line names the log with the traceback
  4  partial run: -k or --maxfail left tests unrun and none of those run failed; no verdict
     (the summary line says "partial run: no verdict"; a partial run never records a pass)"""


def build_parser() -> argparse.ArgumentParser:
    modules, milestones = _course_help()
    listing, with_milestones = _epilog(modules), _epilog(modules, milestones)
    parser = _Parser(prog="ol", description="A statistical test harness and mutation lab for the "
                     "tinyllm course modules.", epilog=with_milestones,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ol {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                help="one of these (`ol COMMAND --help` shows its options)")
    _tests_parser(_add(sub, "tests", "the test catalog of a module (what it checks and why)",
                       listing), modules)
    _start_parser(_add(sub, "start", "write the stubs of a module into your workspace", listing),
                  modules)
    _check_parser(_add(sub, "check", "run a module's catalog against your workspace",
                       CHECK_EXIT_CODES + "\n\n" + listing), modules)
    p = _add(sub, "diff", "your module against the reference, once it passes", listing)
    _module_arg(p, modules)
    _workspace_arg(p)
    _lab_parser(_add(sub, "lab", "every hand-written mutant against the catalog: the kill matrix",
                     listing), modules)
    _audit_parser(_add(sub, "audit", "mutmut mutants and the power of the sampled tests",
                       listing), modules)
    _gate_parser(_add(sub, "gate", "check every module of a milestone (CI)", with_milestones),
                 milestones)
    _grade_parser(_add(sub, "grade", "check every workspace in a folder (a gradebook)", listing),
                  modules)
    return parser


def _tests_parser(p: argparse.ArgumentParser, modules: list[tuple[str, str]]) -> None:
    _module_arg(p, modules)
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text", action=_Once,
                   help="text (default: a block per test, at most 100 columns), json, or a "
                   "markdown table")
    p.add_argument("--wide", action="store_true",
                   help="text: one long row per test, for grep (the lines are not wrapped; they "
                   "fit COLUMNS, default 100, otherwise); with --mine, no line wrapped")
    p.add_argument("--mine", metavar="PATH", action=_Once,
                   help="grade your own tests against correct and buggy implementations (rung R1)")
    _workspace_arg(p, "with --mine: where a relative PATH is found (default: the current "
                   "directory)")
    _report_args(p, "MineResult")
    _jobs_arg(p, "with --mine: processes")
    p.add_argument("--exhaustive", action="store_true",
                   help="with --mine: run every test on every bug, also those that never reach "
                   "the changed function on the reference (the same report, slower)")
    p.add_argument("--budget", metavar="S", action=_Once,
                   type=_seconds("--budget", SUBMISSION_TIMEOUT_MAX_S, "--budget 1800"),
                   help="with --mine: wall-clock budget of the whole run (default 600, at most "
                   f"{SUBMISSION_TIMEOUT_MAX_S:g}); past it no run starts, the runs going are "
                   "killed, and the report is partial (exit 4 unless a test failed on correct "
                   "code)")


def _report_args(p: argparse.ArgumentParser, result_type: str) -> None:
    """A ``--FORMAT FILE`` option per file format of ``result_type`` (``harness.report.formats``)."""
    for fmt in file_formats(result_type):
        p.add_argument(fmt.flag, metavar="FILE", action=_Once, help=fmt.help)


def _start_parser(p: argparse.ArgumentParser, modules: list[tuple[str, str]]) -> None:
    _module_arg(p, modules)
    _workspace_arg(p, "where to write (default: the workspace the current directory is in, else "
                      "the current directory)")
    p.add_argument("--force", action="store_true",
                   help="replace an edited file with the stub (a timestamped backup is kept)")


def _check_parser(p: argparse.ArgumentParser, modules: list[tuple[str, str]]) -> None:
    _module_arg(p, modules)
    _workspace_arg(p)
    p.add_argument("--ref-deps", action="store_true",
                   help="use the reference for the modules this one needs")
    p.add_argument("--target", default=None, action=_Once,
                   help="student (default), reference, or a mutant id such as s07")
    p.add_argument("--no-diagnosis", dest="diagnose", action="store_false",
                   help="after a failure, do not name the known mistake the code behaves like "
                        "(the diagnosis costs a failing check about 0.02 to 0.5 s)")
    p.add_argument("-k", dest="pattern", metavar="PATTERN", action=_Once,
                   help="only tests whose name contains PATTERN")
    p.add_argument("-x", "--exitfirst", dest="maxfail", action=_ExitFirst, default=None,
                   help="stop after the first failed test (the same as --maxfail 1)")
    p.add_argument("--maxfail", type=_at_least_one("--maxfail", "e.g. --maxfail 3, or -x for 1"),
                   metavar="N", action=_Once, help="stop after N failed tests (N at least 1)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="after each test's line, what the test checks; long values whole (a list "
                   "of more than 8 numbers is cut otherwise)")
    p.add_argument("--wide", action="store_true",
                   help="long values whole and no line wrapped (the lines fit COLUMNS, default "
                   "100, otherwise)")
    _report_args(p, "RunResult")
    _seed_arg(p, "public, the cases you can read and reproduce")
    _timeout_arg(p)
    _memory_arg(p)
    _disk_arg(p)


def _lab_parser(p: argparse.ArgumentParser, modules: list[tuple[str, str]]) -> None:
    _module_arg(p, modules)
    _jobs_arg(p, "processes")
    p.add_argument("--out", metavar="DIR", action=_Once, help="report folder (default: reports/)")
    p.add_argument("--exhaustive", action="store_true",
                   help="run every cell of the matrix, also tests that never reach the mutated "
                   "function on the reference (same matrix, slower)")
    _seed_arg(p, "public; a seed checks that the kills do not depend on the public inputs")
    p.add_argument("--fresh", action="store_true",
                   help="run every cell again, ignoring the lab's cache (and refresh it); by "
                   "default a cell whose test, mutant, reference, seed and ol are unchanged is "
                   "taken from the cache (OL_CACHE_DIR, else ~/.cache/ol; see "
                   "docs/performance.md)")
    p.add_argument("--executor", choices=("local", "dask"), default="local", action=_Once,
                   help="local processes (default) or a dask cluster (with --scheduler)")
    p.add_argument("--scheduler", metavar="ADDRESS", action=_Once,
                   help="with --executor dask: the scheduler's address (default: a local cluster)")


def _audit_parser(p: argparse.ArgumentParser, modules: list[tuple[str, str]]) -> None:
    _module_arg(p, modules)
    p.add_argument("--mutmut", action="store_true",
                   help="mutmut's automatic mutants of the reference against the catalog "
                   "(with neither --mutmut nor --power, both run)")
    p.add_argument("--power", action="store_true",
                   help="the power of every sampled test against its mutants, and its false-alarm "
                   "rate on correct code")
    p.add_argument("--seeds", type=int, metavar="N", action=_Once,
                   help="with --power: seeds per mutant (default 200; the false-alarm rate uses "
                   "ten times as many)")
    p.add_argument("--compare-lab", action="store_true",
                   help="with --mutmut: also run `ol lab` on the same machine and compare its cost "
                   "per mutant with mutmut's (off by default: it is a whole lab run)")
    p.add_argument("--out", metavar="DIR", action=_Once, help="report folder (default: reports/)")


def _gate_parser(p: argparse.ArgumentParser,
                 milestones: list[tuple[str, str, tuple[str, ...]]]) -> None:
    known = _ids([(name, title) for name, title, _ in milestones])
    p.add_argument("milestone", help="the milestone" + (f": {known}" if known else "")
                   + " (listed below)")
    _workspace_arg(p)
    p.add_argument("--ref-deps", action="store_true",
                   help="check each module with the reference for the modules it needs, instead "
                   "of blocking it when one of yours fails")
    _report_args(p, "GateResult")
    _seed_arg(p, "a fresh seed, one for every module of the gate")


def _grade_parser(p: argparse.ArgumentParser, modules: list[tuple[str, str]]) -> None:
    _module_arg(p, modules)
    p.add_argument("submissions", help="the folder that holds one workspace per submission")
    _jobs_arg(p, "submissions checked at once")
    p.add_argument("--executor", choices=("local", "dask"), default="local", action=_Once,
                   help="local processes (default) or a dask cluster (with --scheduler)")
    p.add_argument("--scheduler", metavar="ADDRESS", action=_Once,
                   help="with --executor dask: the scheduler's address (default: a local cluster)")
    p.add_argument("--out", metavar="DIR", action=_Once,
                   help="where the gradebook is written and continued (default: "
                   "reports/grade-MODULE-FOLDER)")
    p.add_argument("--ref-deps", action="store_true",
                   help="use the reference for the modules this one needs")
    _timeout_arg(p)
    _memory_arg(p)
    _disk_arg(p)
    p.add_argument("--submission-timeout", metavar="S", action=_Once,
                   type=_seconds("--submission-timeout", SUBMISSION_TIMEOUT_MAX_S,
                                 "--submission-timeout 600"),
                   help="wall-clock budget of one submission's whole check (default 600, at most "
                   f"{SUBMISSION_TIMEOUT_MAX_S:g})")
    _seed_arg(p, "a fresh seed for a new gradebook, the same for every submission; a gradebook "
              "continued after a kill keeps the seed it records")


# What `timeout`, systemd, a CI runner's cancel (SIGTERM) and a closed terminal (SIGHUP) send.
TERMINATING = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the main thread is, as Ctrl-C raises ``KeyboardInterrupt``:
    every clean-up that Ctrl-C runs (the ``finally`` blocks, the supervised processes killed,
    their folders and cgroups removed, no report half-written) runs for it too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def main(argv: Sequence[str] | None = None, *, ends_process: bool = False) -> int:
    """Run one command; its exit code. ``ends_process`` (``entry`` only): the process ends with
    the command, which may then leave its objects to the exit (``args.ends_process``); a caller
    of ``main`` that goes on running leaves it false."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        args.ends_process = ends_process
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        from harness.commands import run

        return run(args.command, args)
    except HarnessError as exc:
        print(_one_line(exc.line()), file=sys.stderr)
        return exc.exit_code
    except Terminated as exc:  # SIGTERM, SIGHUP: cleaned up as at Ctrl-C, the shell's exit code
        print(f"ol: interrupted ({signal.Signals(exc.signum).name})", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("ol: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAIL
    except Exception as exc:  # noqa: BLE001 - the one place an unforeseen error is caught
        log = _write_crash_log()
        print(_one_line(f"ol: internal error: {type(exc).__name__}: {exc} (the traceback is in {log})"),
              file=sys.stderr)
        return EXIT_INTERNAL


_stopping: list[int] = []  # the signal that is stopping this process, once one came


def stop_on_termination() -> None:
    """SIGTERM and SIGHUP stop the command as Ctrl-C does (``Terminated``); one left ignored by
    whoever started ol (``nohup``) stays ignored. Only the first one raises: one that comes while
    ol cleans up is let pass, so the clean-up (bounded: every wait in it has a deadline) ends.
    A process forked from ol (a worker of ``ol lab``'s process pool, which ``Pool.terminate`` ends
    with SIGTERM) dies of it as it would have without this handler."""
    owner = os.getpid()

    def on_signal(signum: int, frame: object) -> None:
        if os.getpid() != owner:
            _die_of(signum)
        elif not _stopping:
            _stopping.append(signum)
            raise Terminated(signum)

    for sig in TERMINATING:
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, on_signal)


def _after_the_command() -> None:
    """Once ``main`` returned, everything is cleaned up: a SIGTERM or SIGHUP no longer raises (a
    traceback from the interpreter's exit). After a stopped command further ones are ignored (the
    interpreter's exit would put back the default, death, and the exit code is told); after any
    other, the default is back."""
    for sig in TERMINATING:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, signal.SIG_IGN if _stopping else signal.SIG_DFL)


def _die_of(signum: int) -> None:
    """End this process as ``signum``'s default would have ended it."""
    try:
        signal.signal(signum, signal.SIG_DFL)
    except ValueError:  # not the main thread (cannot happen in a forked child; all the same)
        os._exit(128 + signum)
    os.kill(os.getpid(), signum)


def entry() -> int:
    """The ``ol`` command (and ``python -m harness``): ``main``, then the exit without the
    collector's last passes over everything the run built (about 70 ms of each command, measured:
    ``docs/performance.md``). Every object is still freed and every ``atexit`` handler still runs;
    what a command must clean up it has cleaned up inside ``main``. Not for callers of ``main``
    that go on running: a frozen object is never collected.

    Before anything imports numpy, its BLAS gets one thread (unless the caller chose a number):
    ol's own arithmetic is on vectors of a few dozen numbers, where a pool of BLAS threads only
    costs its start and its memory (``docs/performance.md``); the workers run with one already.

    ``ends_process`` tells the command that the process ends with it: ``ol check`` then freezes the
    collector's heap when its tests start (``commands.check``)."""
    single_threaded_blas()
    stop_on_termination()
    code = main(ends_process=True)
    _after_the_command()
    gc.freeze()
    return code


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_blas() -> None:
    """One BLAS thread for this process and its children, where the environment names none; of
    effect only before numpy is imported (OpenBLAS reads it once, at load)."""
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")


def _one_line(text: str) -> str:
    """The error line as shown: it can quote a submission (an import error's message), so its
    controls are escaped and a line feed is shown as ``\\n``: one line, always."""
    from harness.escape import one_line

    return one_line(text)


def _write_crash_log() -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    fd, name = tempfile.mkstemp(prefix=f"ol-crash-{stamp}-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"ol {__version__} {' '.join(sys.argv)}\n")
        traceback.print_exc(file=fh)
    return Path(name)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
