"""``ol grade`` over submissions that are wrong as trees, not as code, and over bad ``--out``.

Every submission is read once, by ``harness.sandbox.staging``: the local executor and the Dask one
see the same tree and refuse the same things, so they write the same rows. One submission never
ends a batch: whatever it holds, it gets its own row and the next one is graded, on every rerun.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.grade.gradebook import CSV_NAME, JSON_NAME, Gradebook
from harness.grade.row import GradeRow
from harness.paths import REFERENCE_DIR
from harness.sandbox.fs import remove_tree
from harness.sandbox.staging import MAX_DEPTH

PROB = "python/tinyllm/prob"
REJECTION = f"{PROB}/rejection.py"


@pytest.fixture(autouse=True)
def _no_deep_tree_left(tmp_path):
    """pytest's own clean-up of old temporary folders recurses (``shutil.rmtree``) and would
    fail on the deep trees made here: they go now, through the iterative ``remove_tree``."""
    yield
    remove_tree(tmp_path)


def submission(folder: Path, name: str | bytes) -> Path:
    """A copy of the reference workspace (a correct M07.6); a bytes ``name`` is used as is."""
    folder.mkdir(parents=True, exist_ok=True)
    root = Path(os.fsdecode(os.path.join(os.fsencode(folder), os.fsencode(name))))
    shutil.copytree(REFERENCE_DIR / "python", root / "python",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def first_in(root: Path, function: str, line: str) -> None:
    """Put ``line`` first in the body of ``function`` of the submission's rejection.py."""
    path = root / REJECTION
    source = path.read_text()
    node = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == function)
    lines = source.splitlines(keepends=True)
    after = node.body[0].end_lineno  # the docstring
    path.write_text("".join(lines[:after] + [f"    {line}\n"] + lines[after:]))


def deep_tree(top: Path, depth: int) -> None:
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


def grade(folder: Path, out: Path, *extra: str) -> int:
    return main(["grade", "M07.6", str(folder), "--out", str(out), *extra])


def rows(out: Path) -> dict[str, dict]:
    found = json.loads((out / JSON_NAME).read_text(encoding="utf-8"))["submissions"]
    names = [r["submission"] for r in found]
    assert len(names) == len(set(names)), f"duplicate rows: {names}"
    return {r["submission"]: r for r in found}


# -- submissions that are wrong as trees -----------------------------------------------------------

def link_file(root: Path) -> None:
    outside = root.parent.parent / "outside-rejection.py"
    shutil.copyfile(root / REJECTION, outside)
    (root / REJECTION).unlink()
    (root / REJECTION).symlink_to(outside)  # the reference's own bytes, through a link


def link_folder(root: Path) -> None:
    outside = root.parent.parent / "outside-folder"
    outside.mkdir(exist_ok=True)
    (root / "python" / "tinyllm" / "extra").symlink_to(outside)


def fifo(root: Path) -> None:
    os.mkfifo(root / PROB / "pipe")


def deep(root: Path) -> None:
    deep_tree(root / "python" / "tinyllm", 1200)


def folder_not_utf8(root: Path) -> None:
    os.mkdir(os.fsencode(root / "python" / "tinyllm") + b"/caf\xe9")


def file_not_utf8(root: Path) -> None:
    with open(os.fsencode(root / PROB) + b"/notes\xff.txt", "wb") as fh:
        fh.write(b"notes")


def shadowing_package(root: Path) -> None:
    (root / PROB / "rejection").mkdir()
    (root / PROB / "rejection" / "__init__.py").write_text(
        "from tinyllm.prob.categorical import *  # imported instead of rejection.py\n")


def extension(root: Path) -> None:
    (root / PROB / "rejection.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF\2\1\1")


BAD_TREES = {  # name: (how, the start of its row's message)
    "link-file": (link_file, f"{REJECTION} is a symbolic link"),
    "link-folder": (link_folder, "python/tinyllm/extra is a symbolic link"),
    "fifo": (fifo, f"{PROB}/pipe is not a regular file or folder"),
    "deep": (deep, "python/tinyllm/" + "d/" * (MAX_DEPTH - 1) + "d is more than 16 folders deep"),
    "folder-not-utf8": (folder_not_utf8, r"python/tinyllm/caf\xe9 has a name that is not valid"),
    "file-not-utf8": (file_not_utf8, rf"{PROB}/notes\xff.txt has a name that is not valid UTF-8"),
    "shadowing-package": (shadowing_package, f"{PROB}/rejection/ is a folder beside rejection.py"),
    "extension": (extension, (f"{PROB}/rejection.cpython-311-x86_64-linux-gnu.so is a compiled "
                              "extension: ol imports only Python source")),
}

# -- and the batch killers: each once ended a whole run with exit 3 (or 2), on every rerun -------

def surrogate_message(folder: Path) -> str:
    root = submission(folder, "surrogate-message")
    first_in(root, "rejection_accept", r'raise ValueError("\ud800")')  # a lone surrogate
    return "surrogate-message"


def name_not_utf8(folder: Path) -> str:
    submission(folder, b"name-\xff")  # a correct workspace with a folder name that is not text
    return r"name-\xff"


def long_name(folder: Path) -> str:
    name = "n" * 250  # its runs/NAME.json (and write_atomic's temporary) would pass 255 bytes
    submission(folder, name)
    return name


def deep_tree_killer(folder: Path) -> str:
    deep(submission(folder, "deep-tree"))
    return "deep-tree"


KILLERS = {"surrogate-message": surrogate_message, "name-not-utf8": name_not_utf8,
           "long-name": long_name, "deep-tree": deep_tree_killer}


def assert_text(value) -> None:
    """Every string in a row is valid text (it encodes as UTF-8 without an error)."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, dict):
        for k, v in value.items():
            assert_text(k)
            assert_text(v)
    elif isinstance(value, list):
        for v in value:
            assert_text(v)


@pytest.mark.parametrize("killer", list(KILLERS))
@pytest.mark.slow
def test_one_submission_never_ends_the_batch(tmp_path, capsys, killer):
    folder, out = tmp_path / "subs", tmp_path / "book"
    name = KILLERS[killer](folder)
    later = submission(folder, "zz-later")  # graded after it; a syntax error is quick
    (later / REJECTION).write_text("def broken(:\n")
    # One slot (not one per core): zz-later is graded after the killer, by the slot that graded
    # it (or the one started in its place): the batch goes on past it. A second slot cost ~1.5 s.
    assert grade(folder, out, "--jobs", "1") == 0, capsys.readouterr()
    found = rows(out)
    assert sorted(found) == sorted([name, "zz-later"])
    assert found["zz-later"]["verdict"] == "error"
    row = found[name]
    assert_text(row)
    expected = {"surrogate-message": "fail", "name-not-utf8": "pass", "long-name": "pass",
                "deep-tree": "error"}[killer]
    assert row["verdict"] == expected, row["message"]
    if killer == "deep-tree":
        assert "is more than 16 folders deep below python/" in row["message"]
    if expected != "error":
        run_files = list((out / "runs").iterdir())
        assert len(run_files) == 1 and json.loads(run_files[0].read_text(encoding="utf-8"))
        assert str(folder) not in run_files[0].read_text(encoding="utf-8")
    (out / CSV_NAME).read_text(encoding="utf-8")
    capsys.readouterr()
    assert grade(folder, out) == 0  # and the rerun: nothing graded again
    assert "2 unchanged since graded, 0 to check" in capsys.readouterr().out
    assert rows(out) == found


@pytest.mark.slow
def test_correct_submissions_mixed_with_every_batch_killer(tmp_path, capsys):
    folder, out = tmp_path / "subs", tmp_path / "book"
    correct = ["correct-a", "correct-b"]
    for name in correct:
        submission(folder, name)
    bad = [make(folder) for make in KILLERS.values()]
    assert grade(folder, out, "--jobs", "2") == 0, capsys.readouterr()
    found = rows(out)
    assert sorted(found) == sorted(correct + bad)
    assert all(found[n]["verdict"] == "pass" for n in correct)
    capsys.readouterr()
    assert grade(folder, out, "--jobs", "2") == 0
    assert f"{len(found)} unchanged since graded, 0 to check" in capsys.readouterr().out
    assert rows(out) == found


@pytest.mark.slow
def test_both_executors_write_the_same_rows(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    folder = tmp_path / "subs"
    expected = {}
    for name, (how, message) in BAD_TREES.items():
        how(submission(folder, name))
        expected[name] = ("error", message)
    for name in ("correct-a", "correct-b"):
        submission(folder, name)
        expected[name] = ("pass", "")
    expected[surrogate_message(folder)] = ("fail", "")
    expected[name_not_utf8(folder)] = ("pass", "")
    books = {"local": tmp_path / "local", "dask": tmp_path / "dask"}
    # One seed for both runs: a grading run draws fresh hidden cases otherwise (issue #14).
    # One slot locally and one worker process for Dask (each more cost ~1.5-3 s): every tree is
    # staged by ol's process before either executor grades it, and a row does not depend on
    # which slot or worker graded it (tests/grade/test_class.py grades with two of each).
    assert grade(folder, books["local"], "--jobs", "1", "--seed", "1414") == 0, capsys.readouterr()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        code = grade(folder, books["dask"], "--executor", "dask", "--seed", "1414",
                     "--scheduler", cluster.scheduler_address)
    assert code == 0, capsys.readouterr()
    fields = ("verdict", "message", "passed", "failed", "tests", "content_hash")
    by = {how: {n: {f: r[f] for f in fields} for n, r in rows(out).items()}
          for how, out in books.items()}
    assert by["local"] == by["dask"]
    for name, (verdict, message) in expected.items():
        row = by["local"][name]
        assert row["verdict"] == verdict, (name, row["message"])
        assert row["message"].startswith(message), (name, row["message"])
    runs = {how: {p.name: json.loads(p.read_text(encoding="utf-8"))
                  for p in (out / "runs").iterdir()} for how, out in books.items()}
    assert runs["local"].keys() == runs["dask"].keys()
    for name, run in runs["local"].items():  # the same runs, the times aside
        other = runs["dask"][name]
        assert run["target"] == other["target"] and run["verdict"] == other["verdict"]
        assert [t["message"] for t in run["tests"]] == [t["message"] for t in other["tests"]]


# -- the gradebook's writers ---------------------------------------------------------------------

def test_the_gradebook_writes_any_text(tmp_path):
    book = Gradebook(tmp_path / "book", "M07.6", os.fsdecode(b"/subs-\xff"), {}, "ctx", ["t"])
    book.record(GradeRow(submission=os.fsdecode(b"sub-\xfe"), verdict="fail", passed=0,
                         failed=1, tests={"t": "failed"}, message="raised ValueError: \ud800",
                         time_s=1.0, content_hash="x"))
    saved = json.loads(book.json_path.read_text(encoding="utf-8"))
    assert_text(saved)
    row = saved["submissions"][0]
    assert row["submission"] == r"sub-\xfe" and row["message"] == r"raised ValueError: \ud800"
    assert r"raised ValueError: \ud800" in book.csv_path.read_text(encoding="utf-8")


def test_two_folders_with_one_name_as_text(tmp_path, capsys):
    folder, out = tmp_path / "subs", tmp_path / "book"
    for name in (b"x\\xff", b"x\xff"):  # a backslash, x, f, f; and the byte 0xff
        (submission(folder, name) / REJECTION).write_text("def broken(:\n")
    assert grade(folder, out) == 0
    assert sorted(rows(out)) == [r"x\xff"]
    assert "ol: skipped x\\xff: another submission is named x\\xff" in capsys.readouterr().err


# -- --out ---------------------------------------------------------------------------------------

def quick_submission(folder: Path, name: str) -> Path:
    root = submission(folder, name)
    (root / REJECTION).write_text("def broken(:\n")  # graded at once: a syntax error
    return root


@pytest.mark.parametrize("where, message", [
    ("a-file", "is a file, not a folder"),
    ("subs/alice/out", "is inside the submission alice"),
    ("subs/alice/python/out", "is inside the submission alice"),
    ("subs/alice", "is the submission alice"),
    ("subs", "is the submissions folder itself"),
    ("a-file/book", "cannot write the gradebook in"),
])
def test_an_out_that_cannot_hold_the_gradebook_is_refused(tmp_path, capsys, where, message):
    folder = tmp_path / "subs"
    alice = quick_submission(folder, "alice")
    (tmp_path / "a-file").write_text("not a folder")
    before = sorted(p.relative_to(alice) for p in alice.rglob("*"))
    assert grade(folder, tmp_path / where) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ol: ") and message in err, err
    assert sorted(p.relative_to(alice) for p in alice.rglob("*")) == before  # nothing written


@pytest.mark.parametrize("where", ["book", ".book", ".hidden/book"])
@pytest.mark.slow
def test_an_out_among_the_submissions_is_skipped_as_its_own_folder(tmp_path, capsys, where):
    folder = tmp_path / "subs"
    quick_submission(folder, "alice")
    assert grade(folder, folder / where) == 0
    assert sorted(rows(folder / where)) == ["alice"]
    capsys.readouterr()
    assert grade(folder, folder / where) == 0
    assert "1 submission in" in capsys.readouterr().out
    assert sorted(rows(folder / where)) == ["alice"]
