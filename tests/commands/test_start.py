"""``ol start``: stubs from the contract, and a student's edits are never lost."""

from __future__ import annotations

import ast

import pytest

from harness.check.stubs import start, stub_source
from harness.cli import main
from harness.engine.course import load_course
from harness.paths import STUDENT_DIR

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


# -- what ol start must neither open nor replace -------------------------------------------------

def _run_start(workspace):
    """In a separate process: a FIFO that blocks an open fails the test instead of hanging it."""
    import os
    import subprocess
    import sys

    from harness.paths import REPO_ROOT

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "harness", "start", "M07.6", "--workspace",
                           str(workspace)], cwd=workspace, env=env, capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.mark.parametrize("rel,kind,says", [
    ("python/tinyllm/prob/rejection.py", "fifo", "rejection.py is a FIFO, not a regular file"),
    ("python/tinyllm/prob/rejection.py", "socket", "rejection.py is a socket, not a regular file"),
    ("python/tinyllm/prob/rejection.py", "device", "rejection.py is a character device, not a regular file"),
    ("python/tinyllm/prob/rejection.py", "link-to-fifo", "rejection.py is a symbolic link"),
    ("python/tinyllm/prob/rejection.py", "link-to-file", "rejection.py is a symbolic link"),
    ("python/tinyllm/prob/rejection.py", "directory", "rejection.py is a directory where a file belongs"),
    ("python/tinyllm/__init__.py", "link-to-zero", "__init__.py is a symbolic link"),
    ("python/tinyllm/prob", "fifo", "prob is a FIFO where a folder belongs"),
    ("python", "link-to-fifo", "python is a FIFO where a folder belongs"),
])
def test_start_refuses_what_is_not_a_regular_file_without_opening_it(tmp_path, rel, kind, says, special_file):
    ws = tmp_path / "ws"
    special_file(ws / rel, kind)
    before = sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))
    proc = _run_start(ws)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("ol: ") and says in proc.stderr
    assert proc.stdout == ""
    assert sorted(str(p.relative_to(ws)) for p in ws.rglob("*")) == before  # nothing written


def test_start_follows_a_link_to_a_folder(tmp_path):
    real = tmp_path / "real-python"
    real.mkdir()
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws/python").symlink_to(real)
    actions = start(load_course().module("M07.6"), tmp_path / "ws")
    assert [a.action for a in actions] == ["written"] * 3
    assert (real / "tinyllm/prob/rejection.py").is_file()


# -- what to run next (issue #25, item 10) --------------------------------------------------------

def _next_lines(out: str) -> list[str]:
    lines = out.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("next: ")):]


def test_next_offers_ref_deps_in_a_fresh_workspace_and_that_command_checks(tmp_path, capsys,
                                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["start", "M07.6"]) == 0
    lines = _next_lines(capsys.readouterr().out)
    assert lines[0] == "next: `ol tests M07.6` to read the catalog, then `ol check M07.6 --ref-deps`"
    assert lines[1] == ("  (--ref-deps: M07.6 needs M07.1 and M06.3, not written here yet: the "
                        "check uses the reference's)")
    assert all(len(line) <= 100 for line in lines)
    # The command it names runs the catalog (the stub fails it) instead of stopping at once.
    assert main(["check", "M07.6", "--ref-deps", "--no-diagnosis", "-x"]) == 1
    assert "needs M07.1" not in capsys.readouterr().err


def test_next_drops_ref_deps_once_the_needed_modules_are_written(tmp_path, capsys, monkeypatch):
    from harness.paths import REFERENCE_PYTHON

    monkeypatch.chdir(tmp_path)
    for dep in ("categorical.py", "pcg32.py"):
        (tmp_path / "python/tinyllm/prob").mkdir(parents=True, exist_ok=True)
        (tmp_path / "python/tinyllm/prob" / dep).write_text(
            (REFERENCE_PYTHON / "tinyllm/prob" / dep).read_text())
    assert main(["start", "M07.6"]) == 0
    lines = _next_lines(capsys.readouterr().out)
    assert lines == ["next: `ol tests M07.6` to read the catalog, then `ol check M07.6`"]


def test_next_names_the_workspace_when_check_would_not_find_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["start", "M06.3", "--workspace", "ws"]) == 0  # below the current directory
    assert _next_lines(capsys.readouterr().out) == [
        f"next: `ol tests M06.3` to read the catalog, then `ol check M06.3 --workspace {tmp_path / 'ws'}`"]
    monkeypatch.chdir(tmp_path / "ws" / "python")  # inside it: ol check finds it
    assert main(["start", "M06.3", "--workspace", str(tmp_path / "ws")]) == 0
    assert _next_lines(capsys.readouterr().out) == [
        "next: `ol tests M06.3` to read the catalog, then `ol check M06.3`"]


def test_start_from_inside_a_workspace_writes_into_it_not_a_second_one(tmp_path, capsys,
                                                                          monkeypatch):
    assert main(["start", "M07.6", "--workspace", str(tmp_path / "ws")]) == 0
    mine = tmp_path / "ws/python/tinyllm/prob/rejection.py"
    mine.write_text("# my work\n")
    monkeypatch.chdir(tmp_path / "ws/python/tinyllm/prob")  # where the student edits
    assert main(["start", "M07.1"]) == 0  # the next module, as ol check would find the workspace
    assert (tmp_path / "ws/python/tinyllm/prob/categorical.py").is_file()
    assert not (tmp_path / "ws/python/tinyllm/prob/python").exists()
    assert mine.read_text() == "# my work\n"
    assert f"workspace {tmp_path / 'ws'}" in capsys.readouterr().out.splitlines()[0]


def test_force_whose_backup_cannot_be_written_is_one_line_and_keeps_the_file(tmp_path, capsys,
                                                                             monkeypatch):
    assert main(["start", "M07.6", "--workspace", str(tmp_path)]) == 0
    mine = tmp_path / "python/tinyllm/prob/rejection.py"
    mine.write_text("# my work\n")

    def read_only(*args, **kwargs):  # as in a folder mounted read-only (root writes elsewhere)
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("shutil.copy2", read_only)
    capsys.readouterr()
    assert main(["start", "M07.6", "--workspace", str(tmp_path), "--force"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ol: cannot keep a backup of ") and (
        "Read-only file system (make the folder writable" in err), err
    assert mine.read_text() == "# my work\n"


def test_the_needs_error_names_the_command_with_ref_deps(tmp_path, capsys):
    start(load_course().module("M07.6"), tmp_path)
    assert main(["check", "M07.6", "--workspace", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ol: M07.6 needs M07.1 (") and err.count("\n") == 1
    assert "`ol check M07.6 --ref-deps` uses the reference M07.1" in err
