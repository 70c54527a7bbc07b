"""Every foreseen user error: one line on stderr saying what is wrong and what to do, exit 2.

The table in docs/bad-input.md lists the same rows; ``ROWS`` is checked against it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import harness.commands.tests
from harness.cli import main
from harness.errors import EXIT_INTERRUPTED
from harness.paths import REFERENCE_PYTHON, REPO_ROOT

DOC = REPO_ROOT / "docs" / "bad-input.md"


def workspace(tmp_path: Path, rejection: str | None = None) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", ws / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if rejection is not None:
        (ws / "python/tinyllm/prob/rejection.py").write_text(rejection)
    return ws


def reference_source() -> str:
    return (REFERENCE_PYTHON / "tinyllm/prob/rejection.py").read_text()


def run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.err


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert "Traceback" not in err
    return err.strip()


# (row id, argv builder, expected pattern of the one line)
ROWS = {
    "unknown module": (lambda t: ["check", "M99"], r"unknown module 'M99' \(known modules: M06.3"),
    "unknown mutant id": (lambda t: ["check", "M07.6", "--target", "s99"],
                          r"unknown mutant id 's99' for M07.6"),
    "unknown milestone": (lambda t: ["gate", "MS-P9"], r"unknown milestone 'MS-P9'"),
    "missing workspace": (lambda t: ["check", "M07.6", "--workspace", t / "nope"],
                          r"workspace .*nope does not exist"),
    "workspace path too long": (lambda t: ["check", "M07.6", "--workspace", t / ("n" * 300)],
                                r"workspace .*nnn cannot be reached: File name too long \(check "
                                r"the path given to --workspace and its permissions\)"),
    "workspace without python/tinyllm": (lambda t: ["check", "M07.6", "--workspace", t],
                                         r"is not a workspace: it has no python/tinyllm "
                                         r"\(run `ol start M07.6 "),
    "syntax error": (lambda t: ["check", "M07.6", "--workspace",
                                workspace(t, reference_source() + "\ndef broken(:\n")],
                     r"syntax error in python/tinyllm/prob/rejection.py, line \d+"),
    "import error": (lambda t: ["check", "M07.6", "--workspace",
                                workspace(t, reference_source() + "\nimport no_such_module_here\n")],
                     r"importing tinyllm.prob.rejection failed: .*line \d+: ModuleNotFoundError"),
    "missing function": (lambda t: ["check", "M07.6", "--workspace", workspace(
        t, reference_source().replace("def speculative_step(", "def speculative_step_v2("))],
        r"python/tinyllm/prob/rejection.py has no speculative_step"),
    "wrong signature": (lambda t: ["check", "M07.6", "--workspace", workspace(
        t, reference_source().replace("def rejection_accept(p_x: float, q_x: float, u: float)",
                                      "def rejection_accept(p_x, q_x)"))],
        r"rejection_accept\(p_x, q_x\) in .* does not match the contract rejection_accept\(p_x, q_x, u\)"),
    "unreadable file": (lambda t: _directory_in_place_of_file(t),
                        r"cannot read python/tinyllm/prob/rejection.py"),
    "unwritable --json": (lambda t: ["check", "M07.6", "--target", "reference", "--json",
                                     "/proc/ol-report.json"], r"cannot write /proc/ol-report.json"),
    "unwritable --out": (lambda t: ["lab", "M07.6", "--out", "/proc/ol-reports"],
                         r"cannot write /proc/ol-reports"),
    "report inside python/": (lambda t: ["check", "M07.6", "--workspace", workspace(t), "--json",
                                         t / "ws/python/tinyllm/prob/rejection.py"],
                              (r"--json .*rejection.py is inside the workspace's python/ folder, your "
                               r"code \(write reports outside it, e.g. in reports/\)")),
    "two reports, one file": (lambda t: ["check", "M07.6", "--target", "reference", "--json",
                                         t / "r", "--junit", t / "r"],
                              r"--json and --junit name the same file .*r \(give each report a file"),
    "report path not a regular file": (lambda t: ["check", "M07.6", "--target", "reference",
                                                  "--json", _fifo(t)],
                                       (r"cannot write .*fifo: it is a FIFO \(give the path of a "
                                        r"regular file\)")),
    ".ol is a link": (lambda t: _dot_ol_link(t),
                      r"ws/.ol is a symbolic link \(ol records its passes there and follows no link"),
    "start over a FIFO": (lambda t: _start_over_a_fifo(t),
                          (r"rejection.py is a FIFO, not a regular file \(ol start reads and writes "
                           r"regular files only: move it away first\)")),
    "option given twice in conflict": (lambda t: ["check", "M07.6", "--workspace", "a",
                                                  "--workspace", "b"],
                                       r"--workspace given twice \(a and b\)"),
    "options that conflict": (lambda t: ["check", "M07.6", "--target", "reference", "--ref-deps"],
                              r"--workspace and --ref-deps only apply to --target student"),
    "-k selects nothing": (lambda t: ["check", "M07.6", "--target", "reference", "-k", "zzz"],
                           r"-k 'zzz' selects no test of M07.6"),
    "bad --timeout": (lambda t: ["check", "M07.6", "--workspace", workspace(t), "--timeout", "-1"],
                      (r"--timeout must be positive and at most 3600 seconds, got -1 "
                       r"\(e.g. --timeout 10\)")),
    "--timeout inf": (lambda t: ["check", "M07.6", "--timeout", "inf"],
                      r"--timeout must be positive and at most 3600 seconds, got inf"),
    "bad --seed": (lambda t: ["check", "M07.6", "--target", "reference", "--seed", "abc"],
                   (r"--seed takes 'public' or a non-negative integer, got 'abc' \(e.g. --seed 1234, "
                    r"or --seed public for the public cases\)")),
    "--memory-mb too large": (lambda t: ["check", "M07.6", "--memory-mb", "1000000000000"],
                              (r"--memory-mb must be at least 256 and at most 1048576 \(1 TiB\), "
                               r"got 1000000000000 \(the default is 4096")),
    "--disk-mb out of range": (lambda t: ["check", "M07.6", "--disk-mb", "0"],
                               r"--disk-mb must be at least 1 and at most 16384, got 0 \(the "
                               r"default is 64"),
    "module too large": (lambda t: ["check", "M07.6", "--workspace", workspace(
        t, reference_source() + "#" * (64 << 10))], r"rejection\.py is larger than 64 KiB"),
    "module nested too deeply": (lambda t: ["check", "M07.6", "--workspace", workspace(
        t, reference_source() + "\nx = " + "-" * 10000 + "1\n")],
        r"cannot parse .*rejection\.py: it is nested too deeply for Python"),
    "module imports another file": (lambda t: ["check", "M07.6", "--workspace", workspace(
        t, reference_source() + "\nfrom tinyllm.prob import helpers\n")],
        r"imports tinyllm\.prob\.helpers, which ol does not run"),
    "--jobs out of range": (lambda t: ["lab", "M07.6", "--jobs", "0"],
                            r"--jobs must be at least 1 and at most 256, got 0 \(e.g. --jobs 2\)"),
    "--submission-timeout out of range": (lambda t: ["grade", "M07.6", t, "--submission-timeout",
                                                     "inf"],
                                          (r"--submission-timeout must be positive and at most "
                                           r"86400 seconds, got inf")),
    "unknown option": (lambda t: ["check", "M07.6", "--frobnicate"],
                       r"ol check does not take --frobnicate \(ol check: run a module's catalog against "
                       r"your workspace; its options: `ol check --help`\)"),
    "diff before a pass": (lambda t: ["diff", "M07.6", "--workspace", workspace(t)],
                           r"has not passed `ol check M07.6`"),
}


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def _start_over_a_fifo(tmp_path: Path) -> list:
    prob = tmp_path / "ws/python/tinyllm/prob"
    prob.mkdir(parents=True)
    os.mkfifo(prob / "rejection.py")
    return ["start", "M07.6", "--workspace", tmp_path / "ws"]


def _dot_ol_link(tmp_path: Path) -> list:
    ws = workspace(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (ws / ".ol").symlink_to(tmp_path / "elsewhere")
    return ["check", "M07.6", "--workspace", ws]


def _directory_in_place_of_file(tmp_path: Path) -> list:
    ws = workspace(tmp_path)
    target = ws / "python/tinyllm/prob/rejection.py"
    target.unlink()
    target.mkdir()
    return ["check", "M07.6", "--workspace", ws]


@pytest.mark.parametrize("row", list(ROWS))
def test_bad_input_gives_one_line_and_exit_2(row, tmp_path, capsys):
    build, pattern = ROWS[row]
    code, err = run(build(tmp_path), capsys)
    line = one_line(err)
    assert code == 2, line
    assert line.startswith("ol: ") and re.search(pattern, line), line


def test_the_docs_table_lists_every_row():
    text = DOC.read_text()
    for row in ROWS:
        assert f"| {row} |" in text, f"docs/bad-input.md has no row for {row!r}"


def test_an_unforeseen_error_prints_one_line_names_a_log_and_exits_3(monkeypatch, capsys):
    def explode(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(harness.commands.tests, "run", explode)
    code, err = run(["tests", "M07.6"], capsys)
    line = one_line(err)
    assert code == 3 and "internal error: RuntimeError: boom" in line
    log = Path(re.search(r"the traceback is in (\S+)\)", line).group(1))
    assert "Traceback" in log.read_text() and "boom" in log.read_text()
    log.unlink()


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True,
                         check=False)
    kids = [int(x) for x in out.stdout.split()]
    return kids + [g for k in kids for g in _descendants(k)]


def _ctrl_c_as_a_terminal_delivers_it() -> None:
    """In the child before ol starts: SIGINT at its default. A test session started in the
    background of a non-interactive shell (``sh -c 'pytest' &``) ignores SIGINT, ol inherits that
    and rightly keeps it, and the check then runs to its end whatever the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_ctrl_c_stops_the_worker_keeps_what_it_had_and_exits_non_zero(tmp_path):
    # rejection_sample waits a minute before it answers: the check is surely still running when
    # the Ctrl-C comes, and a Ctrl-C that ol did not get would show as a failed check (exit 1),
    # not as a pass.
    slow = reference_source() + textwrap.dedent('''

        _rejection_sample = rejection_sample


        def rejection_sample(p, q, m, rng, max_tries=10000):
            import time
            time.sleep(60)
            return _rejection_sample(p, q, m, rng, max_tries)
        ''')
    ws = workspace(tmp_path, slow)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}  # this checkout's harness
    proc = subprocess.Popen([sys.executable, "-m", "harness", "check", "M07.6", "--workspace", str(ws)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=env,
                            preexec_fn=_ctrl_c_as_a_terminal_delivers_it)
    first = proc.stdout.readline()  # the workspace line (a long path wraps onto the next ones)
    cases = proc.stdout.readline()
    while cases.startswith("    "):
        cases = proc.stdout.readline()  # which cases run
    second = proc.stdout.readline()  # the first test's line: the worker is up
    assert first.startswith("ol check M07.6") and cases == "cases: public\n"
    assert "test_hand_example" in second
    workers = _descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err  # 130, as a shell reports Ctrl-C
    assert "interrupted" in err and "Traceback" not in err
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in workers):
        time.sleep(0.1)
    alive = [p for p in workers if Path(f"/proc/{p}").exists()
             and "zombie" not in Path(f"/proc/{p}/status").read_text().lower()]
    assert not alive, f"worker processes outlived the interrupted check: {alive}"
