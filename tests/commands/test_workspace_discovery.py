"""#25 item 1: without --workspace, the workspace is found by walking up from the current
directory, as git finds its repository; inside a workspace, never the bundled one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from harness.engine.workspace import resolve_workspace
from harness.paths import REFERENCE_PYTHON, REPO_ROOT, STUDENT_DIR


def _workspace(path: Path) -> Path:
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", path / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return path


def test_from_inside_a_workspace_its_root_is_found(tmp_path):
    ws = _workspace(tmp_path / "ws")
    for where in (ws, ws / "python", ws / "python" / "tinyllm" / "prob"):
        assert resolve_workspace(None, cwd=where).root == ws.resolve()


def test_the_nearest_workspace_wins_and_outside_any_the_bundled_one(tmp_path):
    outer = _workspace(tmp_path / "outer")
    inner = _workspace(outer / "projects" / "inner")
    assert resolve_workspace(None, cwd=inner / "python" / "tinyllm").root == inner.resolve()
    assert resolve_workspace(None, cwd=outer / "projects").root == outer.resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert resolve_workspace(None, cwd=elsewhere).root == STUDENT_DIR.resolve()


def test_ol_check_from_the_module_folder_checks_that_workspace(tmp_path):
    """Before: from ws/python/tinyllm/prob ol fell back to the bundled stub (20 failed, 'not
    implemented yet')."""
    ws = _workspace(tmp_path / "ws")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-m", "harness", "check", "M07.6", "-k",
                           "test_hand_example"], cwd=ws / "python" / "tinyllm" / "prob",
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    head = " ".join(line.strip() for line in done.stdout.split("\ncases:")[0].splitlines())
    assert head == f"ol check M07.6: workspace {ws.resolve()}", done.stdout  # wrapped at 100 columns
    assert done.returncode == 4, done.stdout + done.stderr  # -k: a partial run, no verdict
