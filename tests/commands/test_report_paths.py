"""Report paths are checked before anything runs: never into the student's code, never two
options onto one file, never over something that is not a regular file (which is never opened).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest

from harness.cli import main
from harness.paths import REFERENCE_PYTHON

SOURCE = "python/tinyllm/prob/rejection.py"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", ws / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return ws


def tree_state(root: Path) -> dict[str, str]:
    """Every entry under ``root`` with its kind and content hash: what must not change."""
    out = {}
    for p in sorted(root.rglob("*")):
        info = p.lstat()
        kind = stat.S_IFMT(info.st_mode)
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(info.st_mode) else ""
        out[str(p.relative_to(root))] = f"{kind}:{digest}"
    return out


def run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(argv, capsys, pattern: str) -> str:
    code, out, err = run(argv, capsys)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("ol: ") and "Traceback" not in err, err
    assert pattern in err, err
    assert out == "", "nothing may run before the report paths are checked"
    return err


@pytest.mark.parametrize("flag", ["--json", "--junit", "--gradescope"])
def test_check_refuses_a_report_over_the_students_source(tmp_path, capsys, flag):
    ws = workspace(tmp_path)
    before = tree_state(tmp_path)
    refused(["check", "M07.6", "--workspace", ws, flag, ws / SOURCE], capsys,
            f"{flag} {ws / SOURCE} is inside the workspace's python/ folder")
    refused(["check", "M07.6", "--workspace", ws, flag, ws / "python/new/report.json"], capsys,
            "is inside the workspace's python/ folder")
    assert tree_state(tmp_path) == before


def test_a_link_into_the_python_tree_is_refused_too(tmp_path, capsys):
    ws = workspace(tmp_path)
    (tmp_path / "innocent.json").symlink_to(ws / SOURCE)
    (tmp_path / "dir-link").symlink_to(ws / "python/tinyllm")
    before = tree_state(tmp_path)
    refused(["check", "M07.6", "--workspace", ws, "--json", tmp_path / "innocent.json"], capsys,
            "is inside the workspace's python/ folder")
    refused(["check", "M07.6", "--workspace", ws, "--json", tmp_path / "dir-link/r.json"], capsys,
            "is inside the workspace's python/ folder")
    assert tree_state(tmp_path) == before


def test_the_reference_and_ols_own_code_are_never_report_paths(tmp_path, capsys, monkeypatch):
    # Stand-ins for reference/python and harness/: a regression must not overwrite the real ones.
    import harness.commands.reports

    fake_reference, fake_package = tmp_path / "reference/python", tmp_path / "harness"
    for folder in (fake_reference, fake_package):
        folder.mkdir(parents=True)
        (folder / "code.py").write_text("x = 1\n")
    monkeypatch.setattr(harness.commands.reports, "REFERENCE_PYTHON", fake_reference)
    monkeypatch.setattr(harness.commands.reports, "PACKAGE_DIR", fake_package)
    refused(["check", "M07.6", "--target", "reference", "--json", fake_reference / "code.py"],
            capsys, "is inside the reference's python/ folder")
    refused(["check", "M07.6", "--target", "reference", "--junit", fake_package / "code.py"],
            capsys, "is inside ol's own code")
    assert (fake_reference / "code.py").read_text() == (fake_package / "code.py").read_text() == "x = 1\n"


def test_two_options_naming_one_file_are_refused(tmp_path, capsys):
    same = tmp_path / "same.x"
    refused(["check", "M07.6", "--target", "reference", "--json", same, "--junit", same], capsys,
            f"--json and --junit name the same file {same}")
    assert not same.exists()
    refused(["check", "M07.6", "--target", "reference", "--json", same, "--gradescope",
             tmp_path / "sub/../same.x"], capsys, "--json and --gradescope name the same file")
    (tmp_path / "alias.x").symlink_to(same)  # a dangling link to it: the same file once written
    refused(["check", "M07.6", "--target", "reference", "--junit", tmp_path / "alias.x",
             "--gradescope", same], capsys, "--junit and --gradescope name the same file")
    same.write_text("old")
    os.link(same, tmp_path / "hard.x")
    refused(["check", "M07.6", "--target", "reference", "--json", same, "--junit",
             tmp_path / "hard.x"], capsys, "--json and --junit name the same file")
    assert same.read_text() == "old"


@pytest.mark.parametrize("kind,says", [
    ("fifo", "it is a FIFO"), ("directory", "it is a directory"), ("device", "it is a character device"),
    ("link-to-fifo", "it is a symbolic link to a FIFO"),
    ("link-to-directory", "it is a symbolic link to a directory"),
])
def test_a_report_path_that_is_not_a_regular_file_is_refused_unopened(tmp_path, capsys, kind, says,
                                                                       special_file):
    path = special_file(tmp_path / "special", kind)
    before = tree_state(tmp_path)
    refused(["check", "M07.6", "--target", "reference", "--json", path], capsys,
            f"cannot write {path}: {says}")
    assert tree_state(tmp_path) == before  # still the FIFO, the device, the folder


def test_write_atomic_never_replaces_a_special_file(tmp_path, special_file):
    from harness.errors import HarnessError
    from harness.files import write_atomic

    fifo = special_file(tmp_path / "special", "fifo")
    with pytest.raises(HarnessError, match="it is a FIFO"):
        write_atomic(fifo, "x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_gate_checks_its_report_paths_against_the_workspace(tmp_path, capsys, special_file):
    ws = workspace(tmp_path)
    fifo = special_file(tmp_path / "special", "fifo")
    before = tree_state(tmp_path)
    refused(["gate", "MS-P6", "--workspace", ws, "--junit", ws / SOURCE], capsys,
            "--junit " + str(ws / SOURCE) + " is inside the workspace's python/ folder")
    md = tmp_path / "gate.md"
    refused(["gate", "MS-P6", "--workspace", ws, "--json", md, "--markdown", md], capsys,
            "--json and --markdown name the same file")
    refused(["gate", "MS-P6", "--workspace", ws, "--markdown", fifo], capsys, "it is a FIFO")
    assert tree_state(tmp_path) == before


def test_tests_mine_checks_its_report_paths(tmp_path, capsys):
    ws = workspace(tmp_path)
    suite = ws / "tests"
    suite.mkdir()
    (suite / "test_mine.py").write_text("def test_x():\n    assert True\n")
    before = tree_state(tmp_path)
    base = ["tests", "M07.6", "--mine", "tests", "--workspace", ws]
    refused([*base, "--json", ws / SOURCE], capsys, "is inside the workspace's python/ folder")
    refused([*base, "--gradescope", suite / "test_mine.py"], capsys,
            "is inside your tests (--mine tests)")
    refused([*base, "--json", tmp_path / "r.json", "--gradescope", tmp_path / "r.json"], capsys,
            "--json and --gradescope name the same file")
    assert tree_state(tmp_path) == before


def test_ordinary_report_paths_still_work(tmp_path, capsys):
    ws = workspace(tmp_path)
    code, _out, _ = run(["check", "M07.6", "--workspace", ws, "-k", "hand_example",
                        "--json", ws / "report.json", "--junit", tmp_path / "out/r.xml"], capsys)
    assert code == 4 and (ws / "report.json").is_file() and (tmp_path / "out/r.xml").is_file()
