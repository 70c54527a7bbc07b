"""``ol grade``: a gradebook over a folder of workspaces, kept across kills, also through Dask.

Every run here grades M07.6, the module whose catalog is in the tree. Submissions are copies of
the reference workspace, some broken on purpose: a buggy one (pitfall 1: ``u <= r``), hostile ones
(``os._exit`` at import, an endless loop in one function, a function slow enough to exhaust the
submission's budget), setup errors (a syntax error, a folder that is not a workspace).
"""

from __future__ import annotations

import ast
import csv
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.engine.course import load_course
from harness.grade.gradebook import CSV_NAME, JSON_NAME, _cell
from harness.paths import REFERENCE_DIR
from harness.sandbox.staging import stage

REJECTION = "python/tinyllm/prob/rejection.py"


def submission(folder: Path, name: str, edit=None) -> Path:
    root = folder / name
    shutil.copytree(REFERENCE_DIR / "python", root / "python")
    if edit is not None:
        path = root / REJECTION
        path.write_text(edit(path.read_text()))
    return root


def buggy(source: str) -> str:
    assert "return u < p_x / q_x" in source
    return source.replace("return u < p_x / q_x", "return u <= p_x / q_x")


def exit_at_import(source: str) -> str:
    return source + "\nimport os\nos._exit(3)\n"


def in_function(name: str, line: str):
    """An edit that puts ``line`` first in the body of function ``name`` (after its docstring)."""

    def edit(source: str) -> str:
        node = next(n for n in ast.parse(source).body
                    if isinstance(n, ast.FunctionDef) and n.name == name)
        lines = source.splitlines(keepends=True)
        after = node.body[0].end_lineno  # the docstring
        return "".join(lines[:after] + [f"    {line}\n"] + lines[after:])

    return edit


def syntax_error(source: str) -> str:
    return source + "\ndef broken(:\n"


def book(out: Path) -> dict:
    return json.loads((out / JSON_NAME).read_text())


def rows(out: Path) -> dict[str, dict]:
    found = book(out)["submissions"]
    names = [r["submission"] for r in found]
    assert len(names) == len(set(names)), f"duplicate rows: {names}"
    return {r["submission"]: r for r in found}


def csv_rows(out: Path) -> list[dict]:
    with open(out / CSV_NAME, newline="") as fh:
        return list(csv.DictReader(fh))


def grade(folder: Path, out: Path, *extra: str) -> int:
    return main(["grade", "M07.6", str(folder), "--out", str(out), *extra])


def grade_process(folder: Path, out: Path, *extra: str, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "harness", "grade", "M07.6", str(folder),
                             "--out", str(out), *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kwargs)


# -- verdicts ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_mixed_folder_gets_the_right_verdict_for_each(tmp_path, capsys):
    folder = tmp_path / "subs"
    submission(folder, "correct")
    submission(folder, "buggy", buggy)
    submission(folder, "exits", exit_at_import)
    submission(folder, "loops", in_function("acceptance_probability", "while True: pass"))
    submission(folder, "syntax", syntax_error)
    (folder / "empty").mkdir()
    (folder / "notes.txt").write_text("not a submission")
    out = tmp_path / "book"
    assert grade(folder, out, "--jobs", "2", "--timeout", "2") == 0
    found = rows(out)
    assert set(found) == {"correct", "buggy", "exits", "loops", "syntax", "empty"}
    verdicts = {name: row["verdict"] for name, row in found.items()}
    assert verdicts == {"correct": "pass", "buggy": "fail", "exits": "fail", "loops": "fail",
                        "syntax": "error", "empty": "error"}
    assert found["correct"]["passed"] == len(book(out)["tests"]) >= 19
    assert found["buggy"]["tests"]["test_accept_is_strict"] == "failed"
    assert found["buggy"]["tests"]["test_residual_is_a_distribution"] == "passed"
    assert set(found["exits"]["tests"].values()) == {"crashed"}
    assert found["loops"]["tests"]["test_hand_example"] == "timeout"
    assert "did not return within 2 s" in found["loops"]["message"]
    assert found["loops"]["tests"]["test_residual_is_a_distribution"] == "passed"
    assert "syntax error in python/tinyllm/prob/rejection.py" in found["syntax"]["message"]
    assert "empty holds no python/tinyllm and 0 Python files" in found["empty"]["message"]
    assert [r["submission"] for r in csv_rows(out)] == sorted(found)
    assert json.loads((out / "runs" / "buggy.json").read_text())["verdict"] == "fail"
    printed = capsys.readouterr().out
    assert "M07.6: 6 submissions: 1 pass, 3 fail, 2 error" in printed
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_a_submission_past_its_budget_is_stopped_and_fails(tmp_path):
    folder = tmp_path / "subs"
    submission(folder, "slow", in_function("rejection_accept", "import time; time.sleep(0.6)"))
    out = tmp_path / "book"
    start = time.monotonic()
    assert grade(folder, out, "--timeout", "1", "--submission-timeout", "2") == 0
    assert time.monotonic() - start < 60  # the slot start-up, 2 s of checking, the kill
    row = rows(out)["slow"]
    assert row["verdict"] == "fail" and "budget of 2 s" in row["message"]


# -- the gradebook across runs -------------------------------------------------------------------

@pytest.mark.slow
def test_unchanged_submissions_are_not_graded_again(tmp_path, capsys):
    folder = tmp_path / "subs"
    for name in ("a", "b"):
        submission(folder, name, syntax_error)
    out = tmp_path / "book"
    # One slot per run (not one per core): what is graded again is decided before any slot.
    assert grade(folder, out, "--jobs", "1") == 0
    first = rows(out)
    assert grade(folder, out, "--jobs", "1") == 0
    assert "2 unchanged since graded, 0 to check" in capsys.readouterr().out
    assert rows(out) == first
    with open(folder / "b" / REJECTION, "a") as fh:
        fh.write("# an edit\n")
    assert grade(folder, out, "--jobs", "1") == 0
    assert "1 unchanged since graded, 1 to check" in capsys.readouterr().out
    again = rows(out)
    # a is not graded again; only its flags follow the gradebook (b no longer has its bytes)
    assert first["a"].pop("flags") == [{"kind": "identical", "to": "b", "how": "bytes"}]
    assert again["a"].pop("flags") == []
    assert again["a"] == first["a"]
    assert again["b"]["content_hash"] != first["b"]["content_hash"]
    assert grade(folder, out, "--ref-deps", "--jobs", "1") == 0  # another context: every row is stale
    assert "0 unchanged since graded, 2 to check" in capsys.readouterr().out


@pytest.mark.slow
def test_a_run_killed_mid_way_continues_where_it_stopped(tmp_path):
    folder = tmp_path / "subs"
    names = [f"s{i}" for i in range(4)]
    for name in names:
        submission(folder, name, exit_at_import)  # about a second each
    out = tmp_path / "book"
    proc = grade_process(folder, out, "--jobs", "1", start_new_session=True)
    deadline = time.monotonic() + 120
    while not (out / JSON_NAME).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    before = rows(out)
    assert 1 <= len(before) < len(names), "kill it while there is work left"
    again = grade_process(folder, out, "--jobs", "2")
    printed, _ = again.communicate(timeout=300)
    assert again.returncode == 0, printed
    assert f"{len(before)} unchanged since graded, {len(names) - len(before)} to check" in printed
    after = rows(out)
    assert sorted(after) == names and {r["verdict"] for r in after.values()} == {"fail"}
    for name, row in before.items():
        assert after[name]["graded_at"] == row["graded_at"], f"{name} was graded twice"
    assert sorted(r["submission"] for r in csv_rows(out)) == names


def test_a_second_grade_on_the_same_gradebook_is_refused(tmp_path, capsys):
    folder, out = tmp_path / "subs", tmp_path / "book"
    folder.mkdir()
    out.mkdir()
    with open(out / ".ol-grade.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert grade(folder, out) == 2
    assert "another ol grade is writing the gradebook" in capsys.readouterr().err


def test_a_gradebook_of_another_module_is_refused(tmp_path, capsys):
    folder, out = tmp_path / "subs", tmp_path / "book"
    folder.mkdir()
    out.mkdir()
    (out / JSON_NAME).write_text(json.dumps({"kind": "ol-gradebook", "module": "M07.1",
                                             "submissions": []}))
    assert grade(folder, out) == 2
    assert "is the gradebook of M07.1, not M07.6" in capsys.readouterr().err


# -- what a submission's content is --------------------------------------------------------------

def test_the_content_hash_is_the_python_source_of_the_python_tree(tmp_path):
    root = submission(tmp_path, "ws")
    digest = stage(root).digest
    (root / "python" / "tinyllm" / "__pycache__").mkdir(exist_ok=True)
    (root / "python" / "tinyllm" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (root / ".ol").mkdir()
    (root / ".ol" / "passes.json").write_text("{}")
    (root / "python" / "tinyllm" / "notes.txt").write_text("x")  # not copied for the worker
    assert stage(root).digest == digest
    (root / "python" / "tinyllm" / "extra.py").write_text("x = 1\n")
    assert stage(root).digest != digest


def test_csv_cells_cannot_be_formulas():
    assert _cell("=HYPERLINK(1)") == "'=HYPERLINK(1)" and _cell("a\nb") == "a b"
    assert _cell("a\x1b[2Jb\u202e") == "a\\x1b[2Jb\\u202e"  # `cat gradebook.csv` stays inert


# -- usage ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("extra, message", [
    (["--jobs", "0"], "--jobs must be at least 1"),
    (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler goes with --executor dask"),
    (["--executor", "dask", "--scheduler", "tcp://x:1", "--jobs", "2"], "--jobs does not apply"),
    (["--submission-timeout", "0"], "--submission-timeout must be positive"),
])
def test_usage_errors(tmp_path, capsys, extra, message):
    (tmp_path / "subs").mkdir()
    assert grade(tmp_path / "subs", tmp_path / "book", *extra) == 2
    assert message in capsys.readouterr().err


def test_a_module_without_a_catalog_cannot_be_graded(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, load_course().module("M06.3").catalog_module, None)
    (tmp_path / "subs").mkdir()
    assert main(["grade", "M06.3", str(tmp_path / "subs"), "--out", str(tmp_path / "b")]) == 2
    assert "M06.3 has no catalog yet" in capsys.readouterr().err


@pytest.mark.slow
def test_identities_are_recomputed_on_every_run(tmp_path, capsys):
    """A syntax tree's digest is of one Python (``ast.dump`` changes between versions): rows not
    graded again still get this run's, so copies graded under two Pythons are still found."""
    folder, out = tmp_path / "subs", tmp_path / "book"
    for name in ("a", "b"):
        submission(folder, name, syntax_error)
    # One slot (not one per core): identities are computed by ol's process, not by the slots.
    assert grade(folder, out, "--jobs", "1") == 0
    doc = book(out)
    for row in doc["submissions"]:
        row["identity"] = {"bytes": f"other-{row['submission']}", "tree": ""}  # as if elsewhere
    (out / JSON_NAME).write_text(json.dumps(doc))
    capsys.readouterr()
    assert grade(folder, out, "--jobs", "1") == 0
    assert "2 unchanged since graded, 0 to check" in capsys.readouterr().out
    found = rows(out)
    assert found["a"]["flags"] == [{"kind": "identical", "to": "b", "how": "bytes"}]
    assert found["a"]["identity"] == found["b"]["identity"] != {"bytes": "other-a", "tree": ""}


# -- Dask ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_grading_through_a_dask_cluster(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    folder = tmp_path / "subs"
    submission(folder, "correct")
    submission(folder, "buggy", buggy)
    submission(folder, "syntax", syntax_error)
    out = tmp_path / "book"
    # One worker process (a second cost its start and its grading slot's, ~3 s): the rows come
    # back from another process all the same. tests/grade/test_class.py grades on two workers.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        code = grade(folder, out, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert code == 0, capsys.readouterr()
    found = rows(out)
    assert {n: r["verdict"] for n, r in found.items()} == {
        "correct": "pass", "buggy": "fail", "syntax": "error"}
    assert found["buggy"]["tests"]["test_accept_is_strict"] == "failed"
    assert str(tmp_path) not in found["syntax"]["message"]  # no worker's temporary path
    assert "syntax error in python/tinyllm/prob/rejection.py" in found["syntax"]["message"]


@pytest.mark.slow
def test_the_local_dask_cluster_leaves_nothing_in_the_temporary_directory(tmp_path, monkeypatch):
    """``--executor dask`` without ``--scheduler`` starts a LocalCluster; its workers' scratch
    space (``dask-scratch-space`` and its lock files) lives in a run folder of ol's, removed
    afterwards, not in the machine's temporary directory, where it used to stay."""
    pytest.importorskip("distributed")
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    folder = tmp_path / "subs"
    submission(folder, "correct")
    assert grade(folder, tmp_path / "book", "--executor", "dask", "--jobs", "1",
                 "--seed", "public") == 0
    assert rows(tmp_path / "book")["correct"]["verdict"] == "pass"
    assert sorted(os.listdir(scratch)) == []
