"""A gradebook knows when its grades are stale (issue #26 item 6).

A row's context covers everything that decides its verdict besides the submission: the catalog
and every module of ol it imports (inside functions too), the check's own machinery (runner,
worker, diagnosis), the contracts, the reference, the mutant library, the course data and ol's
version. Each of those is edited in a copy of ol and the fingerprint, or the grade, follows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.engine.course import load_course
from harness.grade import gradebook
from harness.paths import REPO_ROOT

MODULE = load_course().module("M07.6")
EDITED = [  # one file of each part of the context, as a path in the checkout
    "harness/catalogs/m07_6/test_catalog.py",
    "harness/catalogs/checks.py",  # imported by the catalog (before #26: not fingerprinted)
    "harness/catalogs/m07_1/test_catalog.py",  # M07.1's catalog, imported by M07.6's
    "harness/engine/exact.py",  # imported by the catalog inside the engine
    "harness/engine/runner.py",  # the verdict of each test
    "harness/diagnosis/engine.py",  # the diagnosis each row records
    "harness/course.toml",
    "reference/contracts/py/tinyllm/prob/rejection.pyi",
    "reference/python/tinyllm/prob/rejection.py",
    "reference/python/tinyllm/prob/categorical.py",
    "mutants/M07.6/s01.toml",
]


def copy_of_ol(root: Path) -> Path:
    for part in ("harness", "reference", "mutants", "student"):
        shutil.copytree(REPO_ROOT / part, root / part,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def fingerprint(root: Path, monkeypatch) -> str:
    monkeypatch.setattr(gradebook, "PACKAGE_DIR", root / "harness")
    monkeypatch.setattr(gradebook, "REPO_ROOT", root)
    monkeypatch.setattr(gradebook, "REFERENCE_DIR", root / "reference")
    monkeypatch.setattr(gradebook, "MUTANTS_DIR", root / "mutants")
    return gradebook.context_of(MODULE, {"ref_deps": False, "seed": 1})


@pytest.fixture(scope="module")
def one_copy_of_ol(tmp_path_factory):
    """One copy of ol and its fingerprint for every edit below (a fingerprint costs ~0.35 s):
    each test edits one file of it and puts the file's bytes back."""
    root = copy_of_ol(tmp_path_factory.mktemp("ol") / "ol")
    with pytest.MonkeyPatch.context() as monkeypatch:
        return root, fingerprint(root, monkeypatch)


@pytest.mark.parametrize("edited", EDITED)
@pytest.mark.slow
def test_an_edit_to_any_part_of_the_context_changes_the_fingerprint(edited, one_copy_of_ol,
                                                                    monkeypatch):
    root, before = one_copy_of_ol
    # A function of the files alone (and the copy is as it was: the last edit was put back).
    assert fingerprint(root, monkeypatch) == before
    path = root / edited
    original = path.read_bytes()
    path.write_bytes(original + b"\n# edited\n")
    try:
        assert fingerprint(root, monkeypatch) != before, edited
    finally:
        path.write_bytes(original)


@pytest.mark.slow
def test_what_decides_no_verdict_is_not_part_of_it(tmp_path, monkeypatch):
    root = copy_of_ol(tmp_path / "ol")
    (root / "docs").mkdir()
    before = fingerprint(root, monkeypatch)
    (root / "docs" / "grading.md").write_text("notes\n")
    (root / "mutants" / "M07.1" / "s01.toml").write_bytes(
        (root / "mutants" / "M07.1" / "s01.toml").read_bytes() + b"\n# another module's\n")
    assert fingerprint(root, monkeypatch) == before


def _grade(root: Path, folder: Path, out: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-m", "harness", "grade", "M07.6", str(folder), "--out",
                           str(out), "--seed", "public", "--jobs", "1"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.slow
def test_a_resumed_gradebook_grades_again_after_a_catalog_helper_changed(tmp_path):
    """The review's case: ``catalogs/checks.py`` edited, the rows were "unchanged since graded"."""
    root = copy_of_ol(tmp_path / "ol")
    folder = tmp_path / "subs"
    shutil.copytree(REPO_ROOT / "reference" / "python", folder / "ann" / "python",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "book"
    _grade(root, folder, out)
    assert "1 unchanged since graded, 0 to check" in _grade(root, folder, out)
    checks = root / "harness" / "catalogs" / "checks.py"
    checks.write_text(checks.read_text() + "\n# a helper of the catalog changed\n")
    assert "0 unchanged since graded, 1 to check" in _grade(root, folder, out)
    book = json.loads((out / gradebook.JSON_NAME).read_text())
    (row,) = [r for r in book["submissions"] if r["submission"] == "ann"]
    assert row["verdict"] == "pass" and row["context"] == book["context"]


BLOCK_DASK = """
import sys
class _NoDask:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('dask', 'distributed'):
            raise ModuleNotFoundError(name)
        return None
sys.meta_path.insert(0, _NoDask())
import importlib.util
_find = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name.split('.')[0] in ('dask', 'distributed') \\
    else _find(name, *a)
from harness.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_dask_asked_for_but_not_installed_is_one_line_and_exit_2_before_anything_is_written(
        tmp_path):
    """#26 item 7: it was exit 3 after the seed was written."""
    folder = tmp_path / "subs"
    shutil.copytree(REPO_ROOT / "reference" / "python", folder / "ann" / "python",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "book"
    done = subprocess.run([sys.executable, "-c", BLOCK_DASK, "grade", "M07.6", str(folder), "--out",
                           str(out), "--executor", "dask"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "--executor dask needs dask" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists() or not any(out.iterdir())  # no seed, no gradebook begun
