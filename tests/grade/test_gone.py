"""A submission removed from the folder after it was graded (journey review, finding 3).

Its row stays in ``gradebook.json`` as history, marked ``"present": false``, and in
``gradebook.csv`` (``present`` = ``no``); it is left out of ``scores.csv``, ``gradescope/`` (its
file removed), the gradebook's and the report's counts, chart and flags; the run says so on
stderr. Handed in again unchanged, it is present again and not graded again. It used to keep
its score in every file while the terminal counted only the folder's.

The runs here use submissions intake refuses (an empty folder: an ``error`` row, no grading
slot at all), but the last, which grades real code through both executors.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from test_grade import buggy, submission

from harness.cli import main
from harness.engine.results import Verdict
from harness.grade.gradebook import CSV_NAME, JSON_NAME, Gradebook
from harness.grade.integrity import identity
from harness.grade.row import GradeRow
from harness.report.class_report import class_html, class_markdown, class_view
from harness.report.common import md_cell


def grade(folder: Path, out: Path, *extra: str) -> int:
    return main(["grade", "M07.6", str(folder), "--out", str(out), "--seed", "5", *extra])


def book(out: Path) -> dict:
    return json.loads((out / JSON_NAME).read_text())


def rows(out: Path) -> dict[str, dict]:
    return {r["submission"]: r for r in book(out)["submissions"]}


def table(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow  # three runs: 3 to 4 s on a loaded machine
def test_a_removed_submission_is_kept_as_history_and_left_out_of_the_scores(tmp_path, capsys):
    folder, out = tmp_path / "class", tmp_path / "out"
    for name in ("alice", "erin"):
        (folder / name).mkdir(parents=True)  # refused by intake: an error row, no slot
    assert grade(folder, out) == 0
    assert (out / "gradescope" / "erin.json").is_file()
    graded = rows(out)["erin"]
    (out / "gradescope" / "notes.txt").write_text("the instructor's")  # not ol's: left alone
    capsys.readouterr()

    shutil.rmtree(folder / "erin")
    assert grade(folder, out) == 0
    printed = capsys.readouterr()
    assert "M07.6: 1 submission: 0 pass, 0 fail, 1 error" in printed.out
    assert (f"ol: 1 graded earlier is no longer in {folder}: erin (kept in gradebook.json as "
            "history") in printed.err
    doc = book(out)
    assert doc["counts"] == {"pass": 0, "fail": 0, "error": 1, "internal": 0}
    assert doc["absent"] == ["erin"]
    found = rows(out)
    assert (found["alice"]["present"], found["erin"]["present"]) == (True, False)
    assert {k: v for k, v in found["erin"].items() if k != "present"} == {
        k: v for k, v in graded.items() if k != "present"}  # the same row, only marked
    assert [r["submission"] for r in table(out / "scores.csv")] == ["alice"]
    assert {r["submission"]: r["present"] for r in table(out / CSV_NAME)} == {
        "alice": "yes", "erin": "no"}
    assert sorted(p.name for p in (out / "gradescope").iterdir()) == ["alice.json", "notes.txt"]
    report = (out / "report.md").read_text()
    assert "- 1 submission: 0 pass, 0 fail, 1 error\n" in report
    assert "- 1 graded earlier, no longer in the folder (not counted): erin\n" in report
    assert "## No longer in the folder" in report
    assert "| erin | error | 0/25 |" in report
    counted = report.split("(not counted): erin\n")[1].split("## No longer in the folder")[0]
    assert "erin" not in counted  # in no section of the class

    # handed in again, unchanged: present again, and not graded again
    (folder / "erin").mkdir()
    assert grade(folder, out) == 0
    printed = capsys.readouterr()
    assert "2 unchanged since graded, 0 to check" in printed.out
    assert "no longer in" not in printed.err
    found = rows(out)
    assert found["erin"] == {**graded, "present": True}
    assert book(out)["absent"] == [] and book(out)["counts"]["error"] == 2
    assert [r["submission"] for r in table(out / "scores.csv")] == ["alice", "erin"]
    assert (out / "gradescope" / "erin.json").is_file()
    assert "No longer in the folder" not in (out / "report.md").read_text()


def test_only_ols_own_gradescope_file_is_removed(tmp_path):
    """A link in ``gradescope/`` named as the gone submission's file is not ol's: left as it is,
    and nothing is removed through it."""
    folder, out = tmp_path / "class", tmp_path / "out"
    for name in ("alice", "erin"):
        (folder / name).mkdir(parents=True)
    assert grade(folder, out) == 0
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    (out / "gradescope" / "erin.json").unlink()
    (out / "gradescope" / "erin.json").symlink_to(kept)
    shutil.rmtree(folder / "erin")
    assert grade(folder, out) == 0
    assert (out / "gradescope" / "erin.json").is_symlink() and kept.read_text() == "{}"


def test_flags_and_counts_are_of_the_submissions_in_the_folder():
    """A copy no longer in the folder flags no one (a hand-in under a wrong name is no copy) and
    is counted nowhere; the class report shows it apart, escaped."""
    same = identity(b"def f():\n    return 1\n")
    gone_name = "erin|<b>\x1b[2J"
    book = Gradebook(Path("/nowhere"), "M07.6", "subs", {"seed": None}, "ctx", ["t1"],
                     points={"t1": 1.0})
    book.rows = {n: GradeRow(submission=n, verdict=Verdict.PASS, score=1, passed=1, tests={"t1": "passed"},
                             identity=same, max_score=1, graded_at="2026-12-03T19:00:00+00:00")
                 for n in ("alice", gone_name)}
    book.flag()
    assert book.rows["alice"].flags  # both in the folder: copies of each other
    book.mark_present({"alice"})
    book.flag()
    assert book.rows["alice"].flags == () == book.rows[gone_name].flags
    doc = book.to_json()
    assert doc["counts"]["pass"] == 1 and doc["absent"] == [gone_name] and doc["identical"] == []
    assert book.to_scores_csv() == "submission,score,max_score,verdict\nalice,1,1,pass\n"
    view = class_view(book, {})
    assert (view.total, [g.name for g in view.gone]) == (1, [gone_name])
    assert sum(b.count for b in view.bins) == 1
    md = class_markdown(book, {})
    shown = md_cell(gone_name)
    assert "\x1b" not in md and shown == "erin\\|\\<b\\>\\\\x1b\\[2J"
    assert f"(not counted): {shown}\n" in md
    assert f"| {shown} | pass | 1/1 | 2026-12-03T19:00:00+00:00 |" in md
    page = class_html(book, {})
    assert "\x1b" not in page and "<b>" not in page and "erin|&lt;b&gt;\\x1b[2J" in page
    assert '<h2 id="gone">No longer in the folder</h2>' in page
    # and the run's line shows the name escaped
    from harness.report.grade import gone_line

    assert gone_line([gone_name], "subs").startswith(
        "ol: 1 graded earlier is no longer in subs: erin|<b>\\x1b[2J (kept")


@pytest.mark.slow
def test_local_and_dask_mark_the_same_rows_gone(tmp_path):
    """alice and erin graded; erin removed and bob handed in: the run that grades bob, local or
    through Dask, writes the same rows, erin's kept and marked."""
    distributed = pytest.importorskip("distributed")
    folder = tmp_path / "class"
    submission(folder, "alice")
    submission(folder, "erin", buggy)
    first = tmp_path / "first"
    assert grade(folder, first, "--jobs", "2") == 0
    assert rows(first)["erin"]["score"] < 25
    shutil.rmtree(folder / "erin")
    submission(folder, "bob", buggy)
    local, dask = tmp_path / "local", tmp_path / "dask"
    shutil.copytree(first, local)
    shutil.copytree(first, dask)
    assert grade(folder, local, "--jobs", "1") == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert grade(folder, dask, "--executor", "dask", "--scheduler",
                     cluster.scheduler_address) == 0

    def comparable(out: Path) -> list[dict]:
        return [{k: v for k, v in r.items() if k not in ("time_s", "graded_at")}
                for r in book(out)["submissions"]]

    assert comparable(local) == comparable(dask)
    assert {r["submission"]: r["present"] for r in book(local)["submissions"]} == {
        "alice": True, "bob": True, "erin": False}
    for out in (local, dask):
        assert (out / "scores.csv").read_text().splitlines()[1:] == [
            "alice,25,25,pass", f"bob,{rows(out)['bob']['score']},25,fail"]
        assert sorted(p.name for p in (out / "gradescope").iterdir()) == ["alice.json", "bob.json"]
