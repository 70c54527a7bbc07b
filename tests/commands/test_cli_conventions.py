"""The conventions a user of the command line expects (issue #15): help for every option, the
course's modules in the help, ``ol tests`` within 100 columns (``--wide`` for grep), and
``ol check -x/--maxfail N/-v`` as pytest has them."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.errors import EXIT_PARTIAL

COURSE = load_course()
MODULES = list(COURSE.modules)
ROOT = Path(__file__).resolve().parents[2]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("ol has no subcommands")


# -- help ---------------------------------------------------------------------------------------

def test_every_option_of_every_command_has_help():
    parser = build_parser()
    missing = [f"ol {name} {action.option_strings or action.dest}"
               for name, sub in [("", parser), *_subparsers(parser).items()]
               for action in sub._actions
               if not (action.help or "").strip() or action.help == argparse.SUPPRESS]
    assert missing == []


def _readme_row_flags(command: str) -> set[str]:
    """The options in the first cell of ``ol COMMAND``'s row of the README's "The CLI at a glance"
    table (``| `ol lab M07.6 [--jobs N] ...` | ...``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("## The CLI at a glance", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith(f"| `ol {command} ")]
    assert rows, f"the README's table has no row for ol {command}"
    cells = [row.split("` |", 1)[0] for row in rows]
    return {flag for cell in cells for flag in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", cell)}


@pytest.mark.parametrize("command", ["lab"])
def test_the_readme_table_lists_every_option_of_the_command(command):
    """Every option of ``ol lab`` (its argparse parser) is in its README row, and nothing else:
    ``--exhaustive`` was missing once."""
    sub = _subparsers(build_parser())[command]
    options = {flag for action in sub._actions for flag in action.option_strings
               if flag not in ("-h", "--help")}
    assert _readme_row_flags(command) == options


def test_no_help_text_runs_two_parentheses_together():
    """'(default: all cores) (at most 256)' read badly: one parenthesis, its parts by ';'."""
    parser = build_parser()
    doubled = [f"ol {name} {action.option_strings}: {action.help}"
               for name, sub in [("", parser), *_subparsers(parser).items()]
               for action in sub._actions if ") (" in (action.help or "")]
    assert doubled == []
    jobs = {name: next(a.help for a in sub._actions if "--jobs" in a.option_strings)
            for name, sub in _subparsers(parser).items()
            if any("--jobs" in a.option_strings for a in sub._actions)}
    assert set(jobs) == {"tests", "lab", "grade"}
    assert all(text.endswith("(default: all cores; at most 256)") for text in jobs.values())


def test_an_option_a_command_does_not_take_is_named_with_the_command_and_what_it_does(capsys):
    """``ol diff M07.6 --ref-deps`` said 'unrecognized arguments: --ref-deps (see `ol --help`)',
    and ``ol --help`` lists no command's options: the line says which command, what it does and
    how it is called, in place."""
    assert main(["diff", "M07.6", "--ref-deps"]) == 2
    assert capsys.readouterr().err == (
        "ol: ol diff does not take --ref-deps (ol diff: your module against the reference, once it "
        "passes; usage: ol diff [--workspace DIR] module)\n")
    assert main(["check", "M07.6", "-k", "chi", "--frobnicate", "1"]) == 2
    assert capsys.readouterr().err == (
        "ol: ol check does not take --frobnicate 1 (ol check: run a module's catalog against your "
        "workspace; its options: `ol check --help`)\n")
    assert main(["--frobnicate"]) == 2  # no command: ol's own help is the one to read
    assert capsys.readouterr().err == "ol: unrecognized arguments: --frobnicate (see `ol --help`)\n"


def test_ol_help_lists_the_modules_with_their_titles_and_the_milestones(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    for module in COURSE.modules.values():
        assert any(module.id in line and module.title in line for line in text.splitlines())
    for name, ids in COURSE.milestones.items():
        line = next(line for line in text.splitlines() if name in line)
        assert COURSE.milestone_titles[name] in line and all(i in line for i in ids)


@pytest.mark.parametrize("command", ["tests", "start", "check", "diff", "lab", "audit", "grade"])
def test_each_command_that_takes_a_module_lists_the_modules(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # the help's lines joined
    actions = _subparsers(build_parser())[command]._actions
    positional = next(a for a in actions if a.dest == "module")
    assert all(m in positional.help for m in MODULES) and " ".join(positional.help.split()) in text
    assert all(f"{m.id} {m.title}" in text for m in COURSE.modules.values())


def test_gate_help_lists_the_milestones(capsys):
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    text = capsys.readouterr().out
    assert all(name in text and COURSE.milestone_titles[name] in text for name in COURSE.milestones)


def test_the_help_imports_no_engine_and_no_rich():
    """``ol --help`` reads course.toml only: no numpy, no catalog, no rich."""
    code = ("import sys, contextlib, io\nfrom harness.cli import main\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['--help'])\n"
            "print(sorted(m for m in ('numpy', 'rich', 'harness.catalogs', 'harness.engine.runner')"
            " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- ol tests: 100 columns, --wide ---------------------------------------------------------------

@pytest.mark.parametrize("module_id", MODULES)
def test_the_catalog_fits_100_columns(module_id, capsys):
    assert main(["tests", module_id]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    for info, _ in collect(COURSE.module(module_id)):
        assert f"{info.name} ({info.kind.value})" in lines


@pytest.mark.parametrize("module_id", MODULES)
def test_wide_keeps_one_row_per_test_for_grep(module_id, capsys):
    assert main(["tests", module_id, "--wide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for info, _ in collect(COURSE.module(module_id)):
        row = next(line for line in lines if line.startswith(info.name + " "))
        assert info.kind.value in row and info.checks in row and info.why in row


def test_json_is_the_same_and_wide_goes_with_text_only(capsys):
    assert main(["tests", "M07.6", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in doc["tests"]] == [i.name for i, _ in collect(COURSE.module("M07.6"))]
    assert main(["tests", "M07.6", "--format", "json", "--wide"]) == 2
    err = capsys.readouterr().err
    assert "--wide goes with the text format" in err and err.count("\n") == 1


def test_the_markdown_catalog_uses_markdown_escapes_not_html_entities(capsys):
    assert main(["tests", "M07.6", "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "&lt;" not in text and "&gt;" not in text and "&amp;" not in text
    assert "\\<=" in text  # rendered: <=


# -- ol check -x, --maxfail N, -v ------------------------------------------------------------------

def _test_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("  test_")]


def test_x_stops_at_the_first_failure_and_says_how_many_were_not_run(capsys):
    """Mutant s03 fails 8 of the catalog's tests; -x runs until the first of them."""
    size = len(collect(COURSE.module("M07.6")))
    assert main(["check", "M07.6", "--target", "s03", "--no-diagnosis"]) == 1
    full = _test_lines(capsys.readouterr().out)
    first = next(i for i, line in enumerate(full) if " failed " in line)
    assert sum(" failed " in line for line in full) > 1
    assert main(["check", "M07.6", "--target", "s03", "-x", "--no-diagnosis"]) == 1
    out = capsys.readouterr().out
    assert [line.split()[0] for line in _test_lines(out)] == [line.split()[0]
                                                           for line in full[:first + 1]]
    left = size - (first + 1)
    assert (f"note: stopped after 1 failed test (--maxfail 1): {left} tests not run" in out)
    assert re.fullmatch(rf"M07\.6: {first} passed, 1 failed, {left} not run \(--maxfail 1\), "
                        r"score \d+/25 \(partial run; verdict: fail\)", out.splitlines()[-1])


def test_maxfail_n_stops_after_n_failures(capsys):
    assert main(["check", "M07.6", "--target", "s03", "--maxfail", "2", "--no-diagnosis"]) == 1
    out = capsys.readouterr().out
    assert sum(" failed " in line for line in _test_lines(out)) == 2
    assert "note: stopped after 2 failed tests (--maxfail 2)" in out


@pytest.mark.parametrize("argv,message", [
    (["--maxfail", "0"], "--maxfail must be at least 1, got 0"),
    (["--maxfail", "-3"], "--maxfail must be at least 1, got -3"),
    (["--maxfail", "abc"], "--maxfail must be a whole number, got 'abc'"),
    (["--maxfail", "1.5"], "--maxfail must be a whole number, got '1.5'"),
    (["-x", "--maxfail", "3"], "-x and --maxfail 3 disagree"),
])
def test_bad_maxfail_values_are_one_line_and_exit_2(argv, message, capsys):
    assert main(["check", "M07.6", "--target", "reference", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.err.count("\n") == 1 and captured.out == ""


def test_verbose_shows_what_each_test_checks_within_100_columns(capsys):
    infos = {info.name: info for info, _ in collect(COURSE.module("M07.6"))}
    assert main(["check", "M07.6", "--target", "reference", "-k", "accept"]) == EXIT_PARTIAL
    plain = capsys.readouterr().out
    assert "    checks: " not in plain
    assert main(["check", "M07.6", "--target", "reference", "-k", "accept", "-v"]) == EXIT_PARTIAL
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100
    shown = [line.split()[0] for line in _test_lines("\n".join(lines))]
    assert shown and all("accept" in name for name in shown)
    for name in shown:
        at = next(i for i, line in enumerate(lines) if line.startswith(f"  {name} "))
        block = []
        for line in lines[at + 1:]:
            if not line.startswith("    "):
                break
            block.append(line.strip())
        assert block[0].startswith("checks: ")
        assert " ".join(block).removeprefix("checks: ") == " ".join(infos[name].checks.split())
    # Only the checks lines were added: the rest is as without -v (but for the durations, whose
    # width moves the column's padding: "passed     8 ms", "passed   120 ms").
    def without_times(text_lines: list[str]) -> list[str]:
        return [re.sub(r"\s+\S+ ms$", "", line) for line in text_lines
                if not line.startswith("    checks: ") and not line.startswith("            ")]

    assert without_times(lines) == without_times(plain.splitlines())


# -- the entry point --------------------------------------------------------------------------

def test_the_ol_command_is_entry_which_returns_mains_exit_code_and_skips_the_last_collection():
    """``ol`` (the console script) and ``python -m harness`` run ``cli.entry``: ``main``'s exit
    code, then the collector frozen for the exit (what is left is freed, not traversed)."""
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"ol": "harness.cli:entry"}
    code = ("import gc, sys\nfrom harness.cli import entry\nsys.argv = ['ol'] + sys.argv[1:]\n"
            "import harness.cli\n"
            "harness.cli.main = lambda **kw: int(sys.argv[1]) if kw == {'ends_process': True} else 9\n"
            "got = entry()\nprint(got, gc.get_freeze_count() > 0)")
    for wanted in ("0", "2"):
        done = subprocess.run([sys.executable, "-c", code, wanted], capture_output=True, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
                              check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [wanted, "True"]
    done = subprocess.run([sys.executable, "-m", "harness", "check", "M99.9"], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=60, check=False)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("ends_process", [False, True])
def test_a_check_freezes_the_collector_only_in_a_process_that_ends_with_it(ends_process,
                                                                            monkeypatch, capsys):
    """``ol`` itself (``entry``) freezes the heap when the tests start; a caller of ``main`` that
    goes on running (this test, a notebook) must keep its objects collectable."""
    import harness.commands.check as check_command
    from harness import cli

    frozen = []
    monkeypatch.setattr(check_command.gc, "freeze", lambda: frozen.append(True))
    assert cli.main(["check", "M07.6", "--target", "reference", "-k", "accept_is_strict"],
                    ends_process=ends_process) in (0, 4)
    assert frozen == ([True] if ends_process else [])
    capsys.readouterr()


# -- one BLAS thread in ol's own process (#27 item 6) ----------------------------------------------

def _threads_after_numpy(prelude: str, env: dict[str, str]) -> tuple[int, str]:
    code = (prelude + "import os, numpy\n"
            "status = open('/proc/self/status').read().split('Threads:')[1].split()[0]\n"
            "print(status, os.environ.get('OPENBLAS_NUM_THREADS'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=60, check=True).stdout.split()
    return int(out[0]), out[1]


def test_ol_gives_numpy_one_blas_thread_unless_told_otherwise():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                          "MKL_NUM_THREADS")}
    prelude = "from harness.cli import single_threaded_blas\nsingle_threaded_blas()\n"
    assert _threads_after_numpy(prelude, env) == (1, "1")  # no BLAS pool beside the main thread
    assert _threads_after_numpy(prelude, {**env, "OPENBLAS_NUM_THREADS": "2"})[1] == "2"  # the caller's


def test_the_entry_point_sets_it_before_main(monkeypatch):
    from harness import cli

    seen = {}
    for name in cli.BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "main", lambda **_: seen.update(
        {n: os.environ.get(n) for n in cli.BLAS_THREADS}) or 0)
    monkeypatch.setattr(cli.gc, "freeze", lambda: None)
    assert cli.entry() == 0
    assert seen == dict.fromkeys(cli.BLAS_THREADS, "1")
