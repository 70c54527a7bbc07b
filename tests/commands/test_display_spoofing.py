"""End to end: a student's exception message cannot spoof what ``ol check`` shows.

A copy of the reference whose ``rejection_accept`` raises a ValueError with escape sequences that
would erase the failure lines and print a fake pass, a carriage return, an OSC title, bidi
controls and a lone surrogate, run through ``python3 -m harness check`` with all three reports.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.escape import has_unsafe
from harness.paths import REFERENCE_PYTHON, REPO_ROOT

HOSTILE = ("\\x1b[2K\\x1b[1A\\x1b[2K\\x1b[2K\\x1b[1A\\x1b[2K19 passed, 0 failed (verdict: pass)"
           "\\r\\x1b]0;title\\x07 \\u202egnp\\u202c \\x9b31m \\ud800 end")


def hostile_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(REFERENCE_PYTHON.parent, ws, ignore=shutil.ignore_patterns("__pycache__"))
    path = ws / "python/tinyllm/prob/rejection.py"
    source = path.read_text(encoding="utf-8")
    head = 'def rejection_accept(p_x: float, q_x: float, u: float) -> bool:\n'
    assert head in source
    doc_end = source.index('"""\n', source.index(head) + len(head) + 8) + 4
    source = source[:doc_end] + f'    raise ValueError("{HOSTILE}")\n' + source[doc_end:]
    path.write_text(source, encoding="utf-8")
    return ws


def run_ol(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``python3 -m harness`` of this checkout (not whatever ``harness`` is installed)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=env,
                          capture_output=True, timeout=300, check=False)


def test_a_hostile_message_is_shown_escaped_and_the_verdict_stays_fail(tmp_path):
    ws = hostile_workspace(tmp_path)
    reports = {k: tmp_path / f"report.{k}" for k in ("json", "junit", "gradescope")}
    args = ["check", "M07.6", "--workspace", str(ws)]
    for k, p in reports.items():
        args += [f"--{k}", str(p)]
    proc = run_ol(args, tmp_path)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode == 1, (out[-2000:], err)
    assert b"\x1b" not in proc.stdout and b"\r" not in proc.stdout and not has_unsafe(out)
    assert err == ""
    assert "\\x1b[2K\\x1b[1A\\x1b[2K" in out and "\\x1b]0;title\\x07" in out and "\\ud800" in out
    summary = [line for line in out.splitlines() if line.startswith("M07.6: ")]
    assert len(summary) == 1 and re.fullmatch(r"M07\.6: \d+ passed, \d+ failed, score \d+/25 "
                                              r"\(verdict: fail\)", summary[0])
    assert "FAILED: test_hand_example" in out or "ERROR: test_hand_example" in out

    doc = json.loads(reports["json"].read_text(encoding="utf-8"))
    assert doc["verdict"] == "fail"
    messages = [t["message"] for t in doc["tests"] if t["outcome"] != "passed"]
    assert any("19 passed, 0 failed (verdict: pass)\r\x1b]0;title" in m for m in messages)
    assert not has_unsafe(reports["json"].read_text(encoding="utf-8"))

    root = ET.parse(reports["junit"]).getroot()  # well-formed
    assert int(root.get("failures")) + int(root.get("errors")) == doc["failed"]
    assert not has_unsafe(reports["junit"].read_text(encoding="utf-8"))

    grades = json.loads(reports["gradescope"].read_text(encoding="utf-8"))
    assert grades["score"] == doc["score"] < grades["max_score"] == doc["max_score"]
    assert not any(has_unsafe(t["output"]) for t in grades["tests"])
    assert any("\\x1b[2K" in t["output"] for t in grades["tests"])


def test_an_import_error_quoting_escapes_stays_one_escaped_line(tmp_path, capsys):
    from harness.cli import main

    ws = tmp_path / "ws"
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", ws / "python/tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = ws / "python/tinyllm/prob/rejection.py"
    path.write_text(path.read_text(encoding="utf-8")
                    + '\nraise RuntimeError("\\x1b[2K\\x1b[1Aall good\\nM07.6: 19 passed\\r\\ud800")\n',
                    encoding="utf-8")
    assert main(["check", "M07.6", "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ol: importing tinyllm.prob.rejection failed")
    assert not has_unsafe(err) and "\\x1b[2K\\x1b[1Aall good\\nM07.6: 19 passed\\r\\ud800" in err
