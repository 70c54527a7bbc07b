"""``ol grade --seed N|public``: one seed per gradebook (fresh by default), recorded in the JSON, in
every row, in the CSV's ``seed`` column and in each submission's run; a run that continues a
gradebook (after a kill, or for new submissions) continues on its seed; a ``--seed`` that differs
is refused in one line. The Dask executor carries the seed to its workers.
"""

from __future__ import annotations

import csv
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
from harness.engine import seeding
from harness.grade.gradebook import CSV_NAME, JSON_NAME
from harness.paths import REFERENCE_DIR

REJECTION = "python/tinyllm/prob/rejection.py"
FRESH = 271828


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


def not_a_workspace(folder: Path, name: str) -> None:
    """A row decided without a check (no slot is started): the fastest gradebook there is."""
    (folder / name).mkdir(parents=True)


def grade(folder: Path, out: Path, *extra: str) -> int:
    return main(["grade", "M07.6", str(folder), "--out", str(out), *extra])


def book(out: Path) -> dict:
    return json.loads((out / JSON_NAME).read_text())


def csv_seeds(out: Path) -> dict[str, str]:
    with open(out / CSV_NAME, newline="") as fh:
        return {r["submission"]: r["seed"] for r in csv.DictReader(fh)}


def run_seeds(out: Path) -> dict[str, object]:
    return {p.stem: json.loads(p.read_text())["seed"] for p in (out / "runs").glob("*.json")}


def assert_one_seed(out: Path, seed: int | None) -> None:
    """The gradebook, each of its rows, its CSV and each run file: all on ``seed``."""
    doc = book(out)
    assert doc["seed"] == doc["settings"]["seed"] == seed
    assert {r["submission"]: r["seed"] for r in doc["submissions"]} == {
        r["submission"]: seed for r in doc["submissions"]}
    shown = "public" if seed is None else str(seed)
    assert set(csv_seeds(out).values()) == {shown}
    assert set(run_seeds(out).values()) <= {seed}


@pytest.fixture
def fresh(monkeypatch):
    """``seeding.fresh_seed`` gives FRESH; the list counts its calls."""
    calls: list[int] = []

    def fixed() -> int:
        calls.append(FRESH)
        return FRESH

    monkeypatch.setattr(seeding, "fresh_seed", fixed)
    return calls


# -- a new gradebook -----------------------------------------------------------------------------

@pytest.mark.slow
def test_a_new_gradebook_grades_every_submission_on_one_fresh_seed(tmp_path, capsys, fresh):
    folder, out = tmp_path / "subs", tmp_path / "book"
    submission(folder, "correct")
    submission(folder, "buggy", buggy)
    not_a_workspace(folder, "empty")
    assert grade(folder, out, "--jobs", "2") == 0
    assert fresh == [FRESH]
    printed = capsys.readouterr().out.splitlines()
    replay = f"ol check M07.6 --workspace {folder}/NAME --seed {FRESH}"
    assert printed[1] == (f"cases: hidden, seed {FRESH}, recorded in the gradebook "
                          f"(replay one submission: {replay})")
    assert_one_seed(out, FRESH)
    assert run_seeds(out) == {"correct": FRESH, "buggy": FRESH}
    doc = book(out)
    assert doc["replay"] == replay and doc["cases"] == f"hidden cases of seed {FRESH}"
    assert {r["submission"]: r["verdict"] for r in doc["submissions"]} == {
        "correct": "pass", "buggy": "fail", "empty": "error"}


def test_seed_public_grades_on_the_public_cases(tmp_path, capsys, fresh):
    folder, out = tmp_path / "subs", tmp_path / "book"
    not_a_workspace(folder, "empty")
    assert grade(folder, out, "--seed", "public") == 0
    assert fresh == []
    assert capsys.readouterr().out.splitlines()[1].startswith("cases: public, recorded in the")
    assert_one_seed(out, None)


# -- continuing a gradebook ------------------------------------------------------------------------

@pytest.mark.slow
def test_a_continued_gradebook_grades_new_submissions_on_its_own_seed(tmp_path, capsys, fresh):
    folder, out = tmp_path / "subs", tmp_path / "book"
    submission(folder, "a", exit_at_import)
    assert grade(folder, out, "--seed", "5") == 0
    submission(folder, "b", exit_at_import)
    capsys.readouterr()
    assert grade(folder, out) == 0  # no --seed: the gradebook's, not a fresh one
    printed = capsys.readouterr().out
    assert fresh == []
    assert "1 unchanged since graded, 1 to check" in printed
    assert "cases: hidden, seed 5, continued from the gradebook" in printed
    assert_one_seed(out, 5)
    assert run_seeds(out) == {"a": 5, "b": 5}
    assert grade(folder, out, "--seed", "5") == 0  # the same seed, given: continued too
    assert "2 unchanged since graded, 0 to check" in capsys.readouterr().out


@pytest.mark.parametrize("given, says", [
    ("6", "holds grades on hidden cases of seed 5, not on hidden cases of seed 6"),
    ("public", "holds grades on hidden cases of seed 5, not on the public cases"),
])
def test_a_different_seed_for_a_gradebook_is_refused_in_one_line(tmp_path, capsys, given, says):
    folder, out = tmp_path / "subs", tmp_path / "book"
    not_a_workspace(folder, "empty")
    assert grade(folder, out, "--seed", "5") == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    not_a_workspace(folder, "late")  # would be graded, if the run went on
    capsys.readouterr()
    assert grade(folder, out, "--seed", given) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith(f"ol: {out / JSON_NAME} {says}: a gradebook never mixes seeds")
    assert "drop --seed to continue it on its own, or give another --out" in captured.err
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_gradebook_written_before_seeds_continues_on_the_public_cases(tmp_path, capsys, fresh):
    folder, out = tmp_path / "subs", tmp_path / "book"
    not_a_workspace(folder, "empty")
    assert grade(folder, out, "--seed", "public") == 0
    doc = book(out)
    del doc["seed"]  # as ol wrote it before issue #14
    (out / JSON_NAME).write_text(json.dumps(doc))
    assert grade(folder, out, "--seed", "3") == 2
    assert "holds grades on the public cases, not on hidden cases of seed 3" in capsys.readouterr().err
    not_a_workspace(folder, "late")
    assert grade(folder, out) == 0 and fresh == []
    assert_one_seed(out, None)  # rewritten with its row: the seed is recorded now


def test_a_gradebook_whose_seed_is_not_a_seed_is_refused(tmp_path, capsys):
    folder, out = tmp_path / "subs", tmp_path / "book"
    not_a_workspace(folder, "empty")
    assert grade(folder, out) == 0
    doc = book(out)
    doc["seed"] = "12"
    (out / JSON_NAME).write_text(json.dumps(doc))
    capsys.readouterr()
    assert grade(folder, out) == 2
    err = capsys.readouterr().err
    assert "is not a gradebook ol can continue: its seed '12' is not a run seed" in err


@pytest.mark.slow
def test_a_run_killed_mid_way_continues_on_the_seed_it_recorded(tmp_path):
    """A fresh seed is drawn by the first run only: the run after the kill reads it back."""
    folder, out = tmp_path / "subs", tmp_path / "book"
    names = [f"s{i}" for i in range(4)]
    for name in names:
        submission(folder, name, exit_at_import)  # about a second each
    proc = subprocess.Popen([sys.executable, "-m", "harness", "grade", "M07.6", str(folder),
                             "--out", str(out), "--jobs", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (out / JSON_NAME).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    before = book(out)
    seed = before["seed"]
    assert isinstance(seed, int) and 1 <= len(before["submissions"]) < len(names)
    again = subprocess.run([sys.executable, "-m", "harness", "grade", "M07.6", str(folder),
                            "--out", str(out), "--jobs", "2"], capture_output=True, text=True,
                           timeout=300, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"cases: hidden, seed {seed}, continued from the gradebook" in again.stdout
    assert sorted(r["submission"] for r in book(out)["submissions"]) == names
    assert_one_seed(out, seed)
    assert run_seeds(out) == dict.fromkeys(names, seed)


@pytest.mark.slow
def test_the_same_seed_twice_gives_the_same_grades(tmp_path, capsys):
    folder = tmp_path / "subs"
    submission(folder, "correct")
    submission(folder, "buggy", buggy)
    graded = []
    for name in ("one", "two"):
        out = tmp_path / name
        # One slot per run (not one per core): the seed, not the slot, decides the cases.
        assert grade(folder, out, "--seed", "99", "--jobs", "1") == 0
        rows = {r["submission"]: {k: r[k] for k in ("verdict", "passed", "failed", "tests",
                                                    "message", "seed")}
                for r in book(out)["submissions"]}
        runs = {}
        for path in sorted((out / "runs").glob("*.json")):
            run = json.loads(path.read_text())
            run.pop("duration_s")
            for test in run["tests"]:
                test.pop("duration_s")
            runs[path.stem] = run
        graded.append((rows, runs))
    assert graded[0] == graded[1]
    assert graded[0][0]["buggy"]["verdict"] == "fail" and graded[0][1]["buggy"]["seed"] == 99


# -- Dask ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_dask_workers_grade_on_the_gradebooks_seed(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    folder, out = tmp_path / "subs", tmp_path / "book"
    submission(folder, "correct")
    submission(folder, "buggy", buggy)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        code = grade(folder, out, "--executor", "dask", "--scheduler", cluster.scheduler_address,
                     "--seed", "11")
    assert code == 0, capsys.readouterr()
    assert_one_seed(out, 11)
    assert run_seeds(out) == {"correct": 11, "buggy": 11}
    assert {r["submission"]: r["verdict"] for r in book(out)["submissions"]} == {
        "correct": "pass", "buggy": "fail"}
