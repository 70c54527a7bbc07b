"""``ol start``: stubs from the contract, and a student's edits are never lost."""

from __future__ import annotations

import ast

import pytest

from harness.cli import main
from harness.course import STUDENT_DIR, load_course
from harness.start import start, stub_source

MODULES = ("M06.3", "M07.1", "M07.6")


@pytest.mark.parametrize("module_id", MODULES)
def test_stub_parses_and_raises_not_implemented_everywhere(module_id):
    module = load_course().module(module_id)
    tree = ast.parse(stub_source(module))
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert set(module.functions) <= names
    assert stub_source(module).count("raise NotImplementedError") >= len(module.functions)


def test_start_writes_the_package_and_the_stub(tmp_path):
    actions = start(load_course().module("M07.6"), tmp_path)
    assert [a.action for a in actions] == ["written"] * 3
    assert (tmp_path / "python/tinyllm/prob/rejection.py").read_text() == stub_source(
        load_course().module("M07.6"))


def test_second_start_keeps_an_edited_file(tmp_path, capsys):
    assert main(["start", "M07.6", "--workspace", str(tmp_path)]) == 0
    mine = tmp_path / "python/tinyllm/prob/rejection.py"
    mine.write_text("# my work\n")
    assert main(["start", "M07.6", "--workspace", str(tmp_path)]) == 0
    assert mine.read_text() == "# my work\n"
    assert "kept" in capsys.readouterr().out


def test_force_keeps_a_timestamped_backup(tmp_path):
    module = load_course().module("M07.6")
    start(module, tmp_path)
    mine = tmp_path / "python/tinyllm/prob/rejection.py"
    mine.write_text("# my work\n")
    actions = start(module, tmp_path, force=True)
    replaced = [a for a in actions if a.action == "replaced"]
    assert len(replaced) == 1 and replaced[0].backup.read_text() == "# my work\n"
    assert mine.read_text() == stub_source(module)
    # Twice with --force: a second backup, the first one untouched.
    mine.write_text("# more work\n")
    second = next(a for a in start(module, tmp_path, force=True) if a.action == "replaced")
    assert second.backup != replaced[0].backup
    assert replaced[0].backup.read_text() == "# my work\n"
    assert second.backup.read_text() == "# more work\n"


def test_force_never_touches_the_package_inits(tmp_path):
    module = load_course().module("M07.6")
    start(module, tmp_path)
    init = tmp_path / "python/tinyllm/__init__.py"
    init.write_text("VERSION = 'mine'\n")
    start(module, tmp_path, force=True)
    assert init.read_text() == "VERSION = 'mine'\n"


def test_the_bundled_student_workspace_is_what_start_writes(tmp_path):
    for module_id in MODULES:
        start(load_course().module(module_id), tmp_path)
    for path in sorted((tmp_path / "python").rglob("*.py")):
        rel = path.relative_to(tmp_path)
        assert (STUDENT_DIR / rel).read_text() == path.read_text(), f"student/{rel} is stale"


def test_start_into_a_file_is_a_usage_error(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x")
    assert main(["start", "M07.6", "--workspace", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a directory" in err
