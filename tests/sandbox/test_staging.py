"""``harness.sandbox.staging``: the one reader of a submission's ``python/`` tree.

Each refusal is one line (``HarnessError``), found without following a link, without opening a
FIFO, and without walking a deep tree further than the depth cap.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.paths import REFERENCE_DIR
from harness.sandbox import staging
from harness.sandbox.fs import remove_tree
from harness.sandbox.staging import MAX_DEPTH, digest, materialize, stage, text_of_name

PROB = Path("python/tinyllm/prob")


@pytest.fixture(autouse=True)
def _no_deep_tree_left(tmp_path):
    """pytest's own clean-up of old temporary folders recurses (``shutil.rmtree``) and would
    fail on the deep trees made here: they go now, through the iterative ``remove_tree``."""
    yield
    remove_tree(tmp_path)


def workspace(tmp_path: Path, name: str = "ws") -> Path:
    root = tmp_path / name
    shutil.copytree(REFERENCE_DIR / "python", root / "python",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def refusal(root: Path) -> str:
    with pytest.raises(HarnessError) as caught:
        stage(root)
    line = caught.value.line()
    assert "\n" not in line and line.isprintable(), line
    return caught.value.message


def deep_tree(top: Path, depth: int, name: str = "d") -> None:
    """``depth`` nested folders below ``top``, made through descriptors (no path gets long)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


# -- what is staged ------------------------------------------------------------------------------

def test_only_python_source_is_staged_with_its_paths_and_digest(tmp_path):
    root = workspace(tmp_path)
    staged = stage(root)
    expected = sorted(p.relative_to(root).as_posix() for p in (root / "python").rglob("*.py"))
    assert list(staged.files) == expected and "python/tinyllm/prob/rejection.py" in expected
    assert staged.files[f"{PROB}/rejection.py"] == (root / PROB / "rejection.py").read_bytes()
    assert staged.digest == digest(staged.files) == stage(root).digest
    (root / PROB / "weights.bin").write_bytes(b"\0" * 100)  # data, a .pth, a stray .pyc: not
    (root / "python" / "evil.pth").write_text("import os\n")  # read, not staged, not hashed
    (root / PROB / "orphan.pyc").write_bytes(b"\0")
    assert stage(root) == staged
    with open(root / PROB / "rejection.py", "a") as fh:
        fh.write("# an edit\n")
    assert stage(root).digest != staged.digest


def test_caches_and_hidden_folders_are_skipped_not_refused(tmp_path):
    root = workspace(tmp_path)
    before = stage(root)
    cache = root / PROB / "__pycache__"
    cache.mkdir()
    (cache / "rejection.cpython-311.pyc").write_bytes(b"stale")
    (cache / "odd.so").write_bytes(b"\0")  # never walked: Python never imports from here
    hidden = root / "python" / ".mypy_cache"
    hidden.mkdir()
    (hidden / "x.py").write_text("x = 1\n")
    deep_tree(hidden, 40)
    assert stage(root) == before


def test_no_python_folder_stages_nothing(tmp_path):
    (tmp_path / "ws").mkdir()
    assert stage(tmp_path / "ws").files == {}
    (tmp_path / "ws" / "python").write_text("a file")
    assert refusal(tmp_path / "ws") == "python is not a folder"


# -- what is refused -------------------------------------------------------------------------------

def test_a_link_anywhere_is_refused_never_followed(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    cases = {
        f"{PROB}/rejection.py": outside,  # to a regular file
        f"{PROB}/zero.py": Path("/dev/zero"),  # never opened
        "python/tinyllm/everything": Path("/"),  # to a folder
        "python/tinyllm/prob/__pycache__": tmp_path,  # even where a cache would be skipped
        f"{PROB}/dangling": tmp_path / "nothing",
    }
    for i, (rel, target) in enumerate(cases.items()):
        root = workspace(tmp_path, f"ws{i}")
        (root / rel).unlink(missing_ok=True)
        (root / rel).symlink_to(target)
        assert refusal(root) == f"{rel} is a symbolic link"
    root = workspace(tmp_path, "python-link")
    shutil.move(root / "python", tmp_path / "real-python")
    (root / "python").symlink_to(tmp_path / "real-python")
    assert refusal(root) == "python is a symbolic link"


def test_a_fifo_or_a_socket_is_refused_without_being_opened(tmp_path):
    root = workspace(tmp_path)
    os.mkfifo(root / PROB / "pipe")  # opening it for reading would block
    start = time.monotonic()
    assert refusal(root).startswith(f"{PROB}/pipe is not a regular file or folder")
    assert time.monotonic() - start < 5
    root = workspace(tmp_path, "sock")
    with socket.socket(socket.AF_UNIX) as sock:
        here = os.getcwd()
        os.chdir(root / PROB)  # a relative name: a socket's path is capped at 108 bytes
        try:
            sock.bind("s.py")
        finally:
            os.chdir(here)
        assert refusal(root).startswith(f"{PROB}/s.py is not a regular file or folder")


def test_a_deep_tree_is_refused_at_the_cap_without_walking_it(tmp_path, monkeypatch):
    root = workspace(tmp_path)
    deep_tree(root / "python" / "tinyllm", 3000)
    listed = []
    scandir = os.scandir
    monkeypatch.setattr(staging.os, "scandir", lambda fd: listed.append(fd) or scandir(fd))
    message = refusal(root)
    monkeypatch.undo()
    assert message.startswith("python/tinyllm/" + "d/" * (MAX_DEPTH - 1) + "d is more than "
                              f"{MAX_DEPTH} folders deep")
    assert len(listed) <= MAX_DEPTH + 2  # python/, tinyllm/prob, and one folder per level
    ok = workspace(tmp_path, "at-the-cap")
    deep_tree(ok / "python" / "tinyllm", MAX_DEPTH - 1)
    assert stage(ok).files.keys() == stage(workspace(tmp_path, "plain")).files.keys()


def test_a_deep_tree_needs_no_recursion(tmp_path):
    root = workspace(tmp_path)
    deep_tree(root / "python" / "tinyllm", MAX_DEPTH - 1)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(60)  # a recursive walk of 16 levels plus pytest's frames would fail
    try:
        staged = stage(root)
    finally:
        sys.setrecursionlimit(limit)
    assert f"{PROB}/rejection.py" in staged.files


def test_names_that_are_not_utf8_are_refused_and_shown_escaped(tmp_path):
    root = workspace(tmp_path)
    os.mkdir(os.fsencode(root / "python" / "tinyllm") + b"/caf\xe9")
    assert refusal(root) == r"python/tinyllm/caf\xe9 has a name that is not valid UTF-8"
    root = workspace(tmp_path, "file")
    with open(os.fsencode(root / PROB) + b"/notes\xff.txt", "wb"):
        pass
    assert refusal(root) == rf"{PROB}/notes\xff.txt has a name that is not valid UTF-8"


def test_what_python_would_import_instead_of_the_source_is_refused(tmp_path):
    cases = {
        "rejection": "python/tinyllm/prob/rejection/ is a folder beside rejection.py: Python "
                     "would import the folder instead of the rejection.py ol reads",
        "rejection.cpython-311-x86_64-linux-gnu.so":
            f"{PROB}/rejection.cpython-311-x86_64-linux-gnu.so is a compiled extension: ol "
            "imports only Python source (.py files); Python would import it instead of "
            "rejection.py",
        "rejection.abi3.so": f"{PROB}/rejection.abi3.so is a compiled extension",
        "rejection.pyd": f"{PROB}/rejection.pyd is a compiled extension",
        "helper.so": f"{PROB}/helper.so is a compiled extension: ol imports only Python source "
                     "(.py files)",
        "rejection.pyc": f"{PROB}/rejection.pyc is bytecode beside rejection.py",
    }
    for i, (name, message) in enumerate(cases.items()):
        root = workspace(tmp_path, f"ws{i}")
        if "." in name:
            (root / PROB / name).write_bytes(b"\x7fELF")
        else:
            (root / PROB / name).mkdir()
            (root / PROB / name / "__init__.py").write_text("")
        assert refusal(root).startswith(message)
    root = workspace(tmp_path, "deeper")  # anywhere in the tree
    (root / "python" / "lib" / "x").mkdir(parents=True)
    (root / "python" / "lib" / "x" / "_speedups.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    assert "is a compiled extension" in refusal(root)


def test_the_caps(tmp_path, monkeypatch):
    root = workspace(tmp_path)
    monkeypatch.setattr(staging, "MAX_ENTRIES", 5)
    assert refusal(root) == "python/ holds more than 5 files and folders"
    monkeypatch.undo()
    many = workspace(tmp_path, "many")
    for i in range(staging.MAX_ENTRIES):
        (many / "python" / f"f{i}.txt").touch()
    assert refusal(many) == f"python/ holds more than {staging.MAX_ENTRIES} files and folders"
    monkeypatch.setattr(staging, "MAX_BYTES", 1000)
    assert refusal(root) == "the Python files of python/ hold more than 0 MiB"


def test_text_of_name():
    assert text_of_name(os.fsdecode(b"sub\xff")) == r"sub\xff"
    assert text_of_name(b"a\nb\x1b") == r"a\nb\x1b"
    assert text_of_name("\ud800") == r"\ud800"
    assert text_of_name("héllo") == "héllo"


# -- materialize -----------------------------------------------------------------------------------

def test_materialize_writes_a_staged_tree_that_stages_the_same(tmp_path):
    staged = stage(workspace(tmp_path))
    materialize(staged.files, tmp_path / "copy")
    assert stage(tmp_path / "copy") == staged


@pytest.mark.parametrize("rel", ["/etc/passwd", "python/../../x", "python//x", "./x", "", "a/."])
def test_materialize_refuses_paths_outside_its_folder(tmp_path, rel):
    with pytest.raises(ValueError):
        materialize({rel: b""}, tmp_path / "dest")
    assert not (tmp_path / "x").exists()


# -- what a check runs of the staged tree (harness.engine.workspace.read_submission) --------------

def submission(root: Path, module_id: str = "M07.6", ref_deps: bool = False):
    from harness.engine.course import load_course
    from harness.engine.workspace import Workspace, read_submission

    course = load_course()
    return read_submission(Workspace(root.resolve()), course.module(module_id), course, ref_deps)


def test_a_check_runs_only_the_contracts_files_under_ols_own_package_files(tmp_path):
    import hashlib

    root = workspace(tmp_path)
    (root / PROB / "__init__.py").write_text("import os\nos.environ['X'] = '1'\n")
    (root / PROB / "utils.py").write_text("x = 1\n")
    (root / "python" / "helpers.py").write_text("x = 1\n")
    staged = stage(root)
    sub = submission(root)
    contract = [f"{PROB}/{n}.py" for n in ("categorical", "pcg32", "rejection")]
    inits = ["python/tinyllm/__init__.py", f"{PROB}/__init__.py"]
    assert list(sub.files) == sorted(contract + inits)
    assert all(sub.files[rel] == b"" for rel in inits), "ol's own, empty"
    assert all(sub.files[rel] == staged.files[rel] for rel in contract), "the bytes read"
    rejection = staged.files[f"{PROB}/rejection.py"]
    assert sub.module_digest == hashlib.sha256(rejection).hexdigest()
    assert sub.digest == digest(sub.files) and sub.tree_digest == staged.digest
    assert sub.notes == (f"{PROB}/__init__.py holds code that ol did not run: a check runs only "
                         "the contract's files under ol's own empty package files",)
    assert list(submission(root, "M06.3").files) == sorted([f"{PROB}/pcg32.py", *inits])


def test_under_ref_deps_the_dependencies_are_the_references(tmp_path):
    root = workspace(tmp_path)
    (root / PROB / "categorical.py").write_text("def sample_categorical(p, u):\n"
                                                "    raise NotImplementedError\n")
    with pytest.raises(HarnessError, match="^M07.6 needs M07.1$"):
        submission(root)
    sub = submission(root, ref_deps=True)
    assert sub.files[f"{PROB}/categorical.py"] == (REFERENCE_DIR / PROB
                                                   / "categorical.py").read_bytes()
