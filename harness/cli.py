"""The ``ol`` command: parse arguments, call one engine function per command, report, exit.

Exit codes: 0 verdict pass, 1 verdict fail, 2 usage or setup error, 3 internal error. Only
``main`` turns a ``HarnessError`` into its one line; an unforeseen error prints one line and
leaves its traceback in a log file it names.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path

from harness import __version__
from harness.engine.limits import (
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


class UsageError(HarnessError):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message, f"see `{self.prog} --help`")


class _Once(argparse.Action):
    """An option that may be given once; the same option twice with different values is an error."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = getattr(namespace, f"_seen_{self.dest}", False)
        if seen and getattr(namespace, self.dest) != values:
            raise UsageError(f"{option_string} given twice ({getattr(namespace, self.dest)} and {values})",
                             "give it once")
        setattr(namespace, f"_seen_{self.dest}", True)
        setattr(namespace, self.dest, values)


# -- the ranges of the numeric options (checked as they are parsed, for every command) -----------
#
# The ranges live in ``harness.engine.limits``: a typed request built in Python is checked against
# the same ones. Here a value that does not parse, or is out of range, is a ``UsageError``.


def _in_range(check, *args):
    try:
        return check(*args)
    except HarnessError as exc:
        raise UsageError(exc.message, exc.hint) from None


def _seconds(flag: str, maximum: float, example: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"{flag} must be a number of seconds, got {text!r}",
                             f"e.g. {example}") from None
        return _in_range(check_seconds, flag, value, maximum, example, text.strip())
    return parse


def _count(flag: str, low: int, high: int, hint: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UsageError(f"{flag} must be a whole number, got {text!r}", hint) from None
        return _in_range(check_count, flag, value, low, high, hint, text.strip())
    return parse


def _timeout_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=_seconds("--timeout", TIMEOUT_MAX_S, "--timeout 10"),
                   metavar="S", action=_Once,
                   help=f"wall-clock limit per call in the worker (default 10, at most "
                   f"{TIMEOUT_MAX_S:g})")


def _memory_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory-mb", type=_count("--memory-mb", MEMORY_MB_MIN, MEMORY_MB_MAX, MEMORY_HINT),
                   metavar="MB", action=_Once,
                   help=f"memory limit of the worker (default 4096, from {MEMORY_MB_MIN} to "
                   f"{MEMORY_MB_MAX})")


def _jobs_arg(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--jobs", type=_count("--jobs", 1, JOBS_MAX, "e.g. --jobs 2"), metavar="N",
                   action=_Once, help=f"{help_text} (at most {JOBS_MAX})")


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


def _workspace_arg(p: argparse.ArgumentParser, help_text: str | None = None) -> None:
    p.add_argument("--workspace", metavar="DIR", action=_Once,
                   help=help_text or "the student workspace (default: the current directory if it "
                   "holds python/tinyllm, else the bundled student/)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ol", description="A statistical test harness and mutation lab for the "
                     "tinyllm course modules (M06.3, M07.1, M07.6).")
    parser.add_argument("--version", action="version", version=f"ol {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("tests", help="the test catalog of a module (what it checks and why)")
    p.add_argument("module")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text", action=_Once)
    p.add_argument("--mine", metavar="PATH", action=_Once,
                   help="grade your own tests against correct and buggy implementations (rung R1)")
    _workspace_arg(p, "with --mine: where a relative PATH is found (default: the current directory)")
    for flag in ("json", "gradescope"):
        p.add_argument(f"--{flag}", metavar="FILE", action=_Once,
                       help=f"with --mine: also write a {flag} report")
    _jobs_arg(p, "with --mine: processes (default: all cores)")

    p = sub.add_parser("start", help="write the stubs of a module into your workspace")
    p.add_argument("module")
    _workspace_arg(p, "where to write (default: the current directory)")
    p.add_argument("--force", action="store_true",
                   help="replace an edited file with the stub (a timestamped backup is kept)")

    p = sub.add_parser("check", help="run a module's catalog against your workspace")
    p.add_argument("module")
    _workspace_arg(p)
    p.add_argument("--ref-deps", action="store_true",
                   help="use the reference for the modules this one needs")
    p.add_argument("--target", default=None, action=_Once,
                   help="student (default), reference, or a mutant id such as s07")
    p.add_argument("--no-diagnosis", dest="diagnose", action="store_false",
                   help="after a failure, do not name the known mistake the code behaves like "
                        "(the diagnosis costs a failing check about 0.1 to 0.5 s)")
    p.add_argument("-k", dest="pattern", metavar="PATTERN", action=_Once,
                   help="only tests whose name contains PATTERN")
    for flag in ("json", "junit", "gradescope"):
        p.add_argument(f"--{flag}", metavar="FILE", action=_Once, help=f"also write a {flag} report")
    _seed_arg(p, "public, the cases you can read and reproduce")
    _timeout_arg(p)
    _memory_arg(p)

    p = sub.add_parser("diff", help="your module against the reference, once it passes")
    p.add_argument("module")
    _workspace_arg(p)

    p = sub.add_parser("lab", help="every hand-written mutant against the catalog: the kill matrix")
    p.add_argument("module")
    _jobs_arg(p, "processes (default: all cores)")
    p.add_argument("--out", metavar="DIR", action=_Once, help="report folder (default: reports/)")
    p.add_argument("--exhaustive", action="store_true",
                   help="run every cell of the matrix, also tests that never reach the mutated "
                   "function on the reference (same matrix, slower)")
    _seed_arg(p, "public; a seed checks that the kills do not depend on the public inputs")

    p = sub.add_parser("audit", help="mutmut mutants and the power of the sampled tests")
    p.add_argument("module")
    p.add_argument("--mutmut", action="store_true")
    p.add_argument("--power", action="store_true")
    p.add_argument("--seeds", type=int, metavar="N", action=_Once)
    p.add_argument("--out", metavar="DIR", action=_Once)

    p = sub.add_parser("gate", help="check every module of a milestone (CI)")
    p.add_argument("milestone")
    _workspace_arg(p)
    p.add_argument("--ref-deps", action="store_true")
    p.add_argument("--junit", metavar="FILE", action=_Once)
    p.add_argument("--json", metavar="FILE", action=_Once)
    p.add_argument("--markdown", metavar="FILE", action=_Once,
                   help="the Markdown summary (default: reports/gate-MILESTONE.md; it is also "
                   "appended to $GITHUB_STEP_SUMMARY when that is set)")
    _seed_arg(p, "a fresh seed, one for every module of the gate")

    p = sub.add_parser("grade", help="check every workspace in a folder (a gradebook)")
    p.add_argument("module")
    p.add_argument("submissions")
    _jobs_arg(p, "submissions checked at once (default: all cores)")
    p.add_argument("--executor", choices=("local", "dask"), default="local", action=_Once)
    p.add_argument("--scheduler", metavar="ADDRESS", action=_Once)
    p.add_argument("--out", metavar="DIR", action=_Once)
    p.add_argument("--ref-deps", action="store_true")
    _timeout_arg(p)
    _memory_arg(p)
    p.add_argument("--submission-timeout", metavar="S", action=_Once,
                   type=_seconds("--submission-timeout", SUBMISSION_TIMEOUT_MAX_S,
                                 "--submission-timeout 600"),
                   help="wall-clock budget of one submission's whole check (default 600, at most "
                   f"{SUBMISSION_TIMEOUT_MAX_S:g})")
    _seed_arg(p, "a fresh seed for a new gradebook, the same for every submission; a gradebook "
              "continued after a kill keeps the seed it records")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        from harness.commands import run

        return run(args.command, args)
    except HarnessError as exc:
        print(_one_line(exc.line()), file=sys.stderr)
        return exc.exit_code
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


def _one_line(text: str) -> str:
    """The error line as shown: it can quote a submission (an import error's message), so its
    controls are escaped (``printable``) and a line feed is shown as ``\\n``: one line, always."""
    from harness.report.escape import printable

    return printable(text).replace("\n", "\\n")


def _write_crash_log() -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    fd, name = tempfile.mkstemp(prefix=f"ol-crash-{stamp}-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"ol {__version__} {' '.join(sys.argv)}\n")
        traceback.print_exc(file=fh)
    return Path(name)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
