"""``<workspace>/.ol/passes.json``: written by the harness's process, in a folder the student owns.

A ``.ol`` or ``passes.json`` that is a link or a special file is refused before the run (one line,
exit 2), by ``ol check`` and ``ol diff`` alike; nothing is ever written through a link or read from
a FIFO; a link that appears during the run costs the record of the pass, never the verdict.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import harness.check.engine
import harness.check.run
from harness.cli import main
from harness.paths import REFERENCE_PYTHON, REPO_ROOT


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", ws / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return ws


def run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_ol(args: list, cwd: Path) -> subprocess.CompletedProcess:
    """A separate process, so that a FIFO that blocks an open fails the test instead of hanging it."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_dot_ol_link_is_refused_before_the_run_and_nothing_lands_behind_it(tmp_path, capsys):
    ws = workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws / ".ol").symlink_to(elsewhere)
    code, out, err = run(["check", "M07.6", "--workspace", ws], capsys)
    assert code == 2 and out == ""  # before the run: no test ran, no verdict was lost
    assert err == (f"ol: {ws}/.ol is a symbolic link (ol records its passes there and follows no "
                   "link, opens no special file: remove it; the next passing ol check recreates it)\n")
    assert list(elsewhere.iterdir()) == []
    code, _, err = run(["diff", "M07.6", "--workspace", ws], capsys)
    assert code == 2 and err.count("\n") == 1 and ".ol is a symbolic link" in err


@pytest.mark.parametrize("kind,says", [
    ("link-to-file", "passes.json is a symbolic link"),
    ("link-to-fifo", "passes.json is a symbolic link"),
    ("fifo", "passes.json is a FIFO"),
    ("directory", "passes.json is a directory"),
    ("dot-ol-file", ".ol is a regular file, not a directory"),
    ("dot-ol-fifo", ".ol is a FIFO, not a directory"),
])
@pytest.mark.slow
def test_a_special_record_is_refused_by_check_and_diff_without_hanging(tmp_path, kind, says):
    ws = workspace(tmp_path)
    store = ws / ".ol"
    if kind.startswith("dot-ol"):
        store.write_text("{}") if kind == "dot-ol-file" else os.mkfifo(store)
    else:
        store.mkdir()
        target = store / "passes.json"
        if kind == "link-to-file":
            (tmp_path / "victim.json").write_text("{}")
            target.symlink_to(tmp_path / "victim.json")
        elif kind == "link-to-fifo":
            os.mkfifo(tmp_path / "fifo")
            target.symlink_to(tmp_path / "fifo")
        elif kind == "fifo":
            os.mkfifo(target)
        else:
            target.mkdir()
    for command in (["check", "M07.6", "--workspace", ws], ["diff", "M07.6", "--workspace", ws]):
        proc = run_ol(command, tmp_path)
        assert proc.returncode == 2, (proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr
        assert proc.stdout == ""
    if kind == "link-to-file":
        assert (tmp_path / "victim.json").read_text() == "{}"


def test_a_link_made_during_the_run_costs_the_record_not_the_verdict(tmp_path, capsys, monkeypatch):
    ws = workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real_run = harness.check.engine.run_check

    def student_plants_a_link(*args, **kwargs):  # what code without root could do meanwhile
        result = real_run(*args, **kwargs)
        (ws / ".ol").symlink_to(elsewhere)
        return result

    monkeypatch.setattr(harness.check.run, "run_check", student_plants_a_link)
    code, out, err = run(["check", "M07.6", "--workspace", ws, "--timeout", "30"], capsys)
    assert code == 0 and "(verdict: pass)" in out
    assert err.startswith("ol: warning: the pass was not recorded: ") and err.count("\n") == 1
    assert ".ol is a symbolic link" in err
    assert list(elsewhere.iterdir()) == []


def test_the_record_is_written_through_dot_ol_and_read_back(tmp_path, capsys):
    ws = workspace(tmp_path)
    from harness.engine.course import load_course
    from harness.engine.workspace import Workspace

    module = load_course().module("M07.6")
    w = Workspace(ws.resolve())
    assert harness.check.engine.record_pass(w, module, "source") is None
    data = json.loads((ws / ".ol/passes.json").read_text())
    assert list(data) == ["M07.6"] and harness.check.engine.has_passed(w, module, "source")
    assert sorted(p.name for p in (ws / ".ol").iterdir()) == ["passes.json"]  # no temp file left
    first = data["M07.6"]
    assert harness.check.engine.record_pass(w, module, "source") is None
    assert json.loads((ws / ".ol/passes.json").read_text())["M07.6"] == first  # kept as it was
    (ws / ".ol/passes.json").write_text("not json")
    assert harness.check.engine.load_passes(w) == {}


def test_a_nesting_bomb_in_the_record_is_no_record(tmp_path):
    """#24: .ol/passes.json is the student's file: 100000 brackets made json recurse until
    RecursionError, exit 3 in ol check (after its verdict) and ol diff."""
    ws = workspace(tmp_path)
    from harness.engine.workspace import Workspace

    (ws / ".ol").mkdir()
    (ws / ".ol/passes.json").write_text("[" * 100_000)
    assert harness.check.engine.load_passes(Workspace(ws.resolve())) == {}
