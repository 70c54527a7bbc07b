"""A whole class graded end to end (#26, "Done means"): fourteen submissions in every shape a
learning platform delivers (workspaces, a zip, a tar.gz, a loose file, a folder holding only
rejection.py), correct ones in several styles, single bugs of different pitfalls, copies, a
syntax error, an endless loop and a bad archive, plus a file that is no submission. Graded
through the local executor and through a Dask cluster: the same rows, scores, mistakes, flags and
skipped list; the class report names what the class got wrong.

The code is the independent corpus of ``bench/corpus/M07.6`` (written from the chapter alone,
not from ol's mutants), so the mistakes named are found on code ol did not derive.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from harness.cli import main
from harness.paths import REFERENCE_DIR, REPO_ROOT

CORPUS = REPO_ROOT / "bench" / "corpus" / "M07.6"
REJECTION = "python/tinyllm/prob/rejection.py"

# submission -> (shape, verdict, the best-matching pitfall's label or None)
EXPECTED = {
    "ana": ("workspace", "pass", None),      # plain loops and math
    "ben": ("workspace", "pass", None),      # ana's file, byte for byte
    "cara": ("workspace", "pass", None),     # ana's code re-laid out, comments gone
    "dan": ("zip", "pass", None),            # numpy reductions, a zipped workspace
    "eve_rejection": ("file", "pass", None),  # plain lists, a loose file
    "refcopy": ("workspace", "pass", None),  # the reference itself
    "fay": ("folder", "fail", "pitfall 1"),  # u <= r, rejection.py deep in a folder
    "gus": ("tar.gz", "fail", "pitfall 3"),  # residual max(0, q - p)
    "hal": ("workspace", "fail", "pitfall 5"),  # resamples from p
    "ivy": ("workspace", "fail", "pitfall 8"),  # np.sum for the residual's normalizer
    "jon": ("workspace", "fail", "ol pitfall 17"),  # random.random instead of u'
    "kim": ("workspace", "error", None),     # a syntax error
    "leo": ("workspace", "fail", None),      # rejection_sample never returns
    "mia": ("zip", "error", None),           # a zip whose member climbs out (../)
}


def corpus(name: str) -> bytes:
    return (CORPUS / f"{name}.py").read_bytes()


def workspace(root: Path, source: bytes | None = None) -> Path:
    shutil.copytree(REFERENCE_DIR / "python", root / "python")
    if source is not None:
        (root / REJECTION).write_bytes(source)
    return root


def build_class(folder: Path, scratch: Path) -> None:
    folder.mkdir(parents=True)
    ana = corpus("c01_loops_math")
    workspace(folder / "ana", ana)
    workspace(folder / "ben", ana)
    workspace(folder / "cara", ast.unparse(ast.parse(ana)).encode())
    dan = workspace(scratch / "dan", corpus("c02_numpy_reduce"))
    with zipfile.ZipFile(folder / "dan.zip", "w") as z:
        for path in sorted(dan.rglob("*.py")):
            z.write(path, f"dan/{path.relative_to(dan).as_posix()}")
    (folder / "eve_rejection.py").write_bytes(corpus("c05_plain_lists"))
    workspace(folder / "refcopy")
    hw = folder / "fay" / "Downloads" / "hw"
    hw.mkdir(parents=True)
    (hw / "rejection.py").write_bytes(corpus("s01_accept_le"))
    with tarfile.open(folder / "gus.tar.gz", "w:gz") as tar:
        data = corpus("s05_residual_q_minus_p")
        info = tarfile.TarInfo("rejection.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    workspace(folder / "hal", corpus("s08_resample_from_p"))
    workspace(folder / "ivy", corpus("s16_np_sum_residual"))
    workspace(folder / "jon", corpus("s33_random_random"))
    workspace(folder / "kim", b"def rejection_accept(p_x, q_x, u)\n    return u < p_x / q_x\n")
    workspace(folder / "leo", corpus("x01_hang_rejection_sample"))
    with zipfile.ZipFile(folder / "mia.zip", "w") as z:
        z.writestr("../../escaped.py", "print('out')\n")
    (folder / "notes.txt").write_text("grading notes\n")


def grade(folder: Path, out: Path, *extra: str) -> int:
    return main(["grade", "M07.6", str(folder), "--out", str(out), "--ref-deps", "--timeout", "2",
                 "--seed", "20261202", *extra])


def book(out: Path) -> dict:
    return json.loads((out / "gradebook.json").read_text())


def comparable(row: dict) -> dict:
    """A row without what depends on when and how fast it was graded."""
    return {k: v for k, v in row.items() if k not in ("time_s", "graded_at")}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, graded once by the local executor: its folder and gradebooks by executor.
    Both named relative to the current folder, as an instructor types them (a relative
    gradebook once graded every archive and loose file as "does not exist")."""
    base = tmp_path_factory.mktemp("class")
    folder = base / "subs"
    build_class(folder, base / "scratch")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(base)
        assert grade(Path("subs"), Path("local"), "--jobs", "2") == 0
    return folder, {"local": base / "local"}


# The class the Dask cluster grades: every shape (workspace, zip, tar.gz, loose file, folder),
# every kind of row (pass, fail with a pitfall, fail by a timeout, a syntax error, a bad archive),
# every kind of flag (bytes, syntax tree, the reference) and the skipped file. hal, ivy and jon
# (workspaces failing on three more pitfalls, flagged with nothing) add no kind of row, shape or
# flag to what the executors must agree on: 3 fewer Dask gradings.
DASK_CLASS = sorted(set(EXPECTED) - {"hal", "ivy", "jon"})


@pytest.fixture(scope="module")
def dasked(graded):
    """The class but hal, ivy and jon graded again through a Dask cluster, into a gradebook of
    its own: a copy of the class folder without them."""
    distributed = pytest.importorskip("distributed")
    folder, books = graded
    fewer = folder.parent / "dask-subs"
    shutil.copytree(folder, fewer, symlinks=True)
    for name in ("hal", "ivy", "jon"):
        shutil.rmtree(fewer / name)
    out = folder.parent / "dask"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert grade(fewer, out, "--executor", "dask", "--scheduler", cluster.scheduler_address) == 0
    return folder, {**books, "dask": out}


@pytest.mark.slow
def test_every_submission_gets_its_verdict_shape_and_mistake(graded):
    _, books = graded
    doc = book(books["local"])
    rows = {r["submission"]: r for r in doc["submissions"]}
    assert set(rows) == set(EXPECTED)
    for name, (shape, verdict, pitfall) in EXPECTED.items():
        row = rows[name]
        assert (row["shape"], row["verdict"]) == (shape, verdict), (name, row["message"])
        labels = [p["label"] for p in row["pitfalls"]]
        if pitfall is not None:
            assert labels[:1] == [pitfall], (name, row["pitfalls"])
        if verdict == "pass":
            assert row["score"] == row["max_score"] == doc["max_score"] == 25
        else:
            assert 0 <= row["score"] < row["max_score"] == 25
    assert "timeout" in rows["leo"]["tests"].values()
    assert rows["kim"]["message"].startswith("syntax error in python/tinyllm/prob/rejection.py")
    assert "mia.zip" in rows["mia"]["message"] and ".." in rows["mia"]["message"]
    assert doc["skipped"] == [{"name": "notes.txt", "why": doc["skipped"][0]["why"]}]
    assert "not a submission" in doc["skipped"][0]["why"]
    assert not (graded[0].parent / "escaped.py").exists()


@pytest.mark.slow
def test_copies_are_flagged_and_nothing_else(graded):
    _, books = graded
    rows = {r["submission"]: r for r in book(books["local"])["submissions"]}
    flags = {n: [(f["to"], f["how"]) for f in r["flags"]] for n, r in rows.items() if r["flags"]}
    assert flags == {
        "ana": [("ben", "bytes"), ("cara", "syntax tree")],
        "ben": [("ana", "bytes"), ("cara", "syntax tree")],
        "cara": [("ana", "syntax tree"), ("ben", "syntax tree")],
        "refcopy": [("reference", "bytes")],
    }
    assert book(books["local"])["identical"] == [
        {"how": "syntax tree", "submissions": ["ana", "ben", "cara"]}]


@pytest.mark.slow
def test_local_and_dask_write_the_same_rows(dasked):
    _, books = dasked
    local, dask = book(books["local"]), book(books["dask"])
    # The local rows of the submissions Dask graded (hal, ivy and jon are no one's copies: the
    # others' rows, flags included, are the same with or without them).
    mine = [comparable(r) for r in local["submissions"] if r["submission"] in DASK_CLASS]
    assert [r["submission"] for r in mine] == DASK_CLASS
    assert [comparable(r) for r in dask["submissions"]] == mine
    assert dask["skipped"] == local["skipped"] and dask["identical"] == local["identical"]
    local_scores = (books["local"] / "scores.csv").read_text().splitlines(keepends=True)
    assert (books["dask"] / "scores.csv").read_text() == "".join(
        line for line in local_scores if line.split(",")[0] not in ("hal", "ivy", "jon"))


@pytest.mark.slow
def test_the_gradebook_folder_holds_every_view(graded):
    _, books = graded
    out = books["local"]
    scores = list(csv.DictReader((out / "scores.csv").open()))
    assert [r["submission"] for r in scores] == sorted(EXPECTED)
    assert {r["submission"]: r["verdict"] for r in scores} == {n: e[1] for n, e in EXPECTED.items()}
    assert all(r["max_score"] == "25" for r in scores)
    for name in EXPECTED:
        results = json.loads((out / "gradescope" / f"{name}.json").read_text())
        row = next(r for r in scores if r["submission"] == name)
        assert (results["score"], results["max_score"]) == (float(row["score"]), 25)
        assert sum(t["score"] for t in results["tests"]) == results["score"]
    table = list(csv.DictReader((out / "gradebook.csv").open()))
    first = {r["submission"]: r["pitfalls"].split("; ")[0] for r in table if r["pitfalls"]}
    assert first.items() >= {n: e[2] for n, e in EXPECTED.items() if e[2]}.items()
    report = (out / "report.md").read_text()
    for _, _, pitfall in EXPECTED.values():
        if pitfall:
            assert f"| {pitfall} |" in report, pitfall
    assert "2\\.2 The acceptance test, exactly" in report  # pitfall 1's chapter section (escaped)
    assert "notes.txt" in report and "leo" in report
    html = (out / "report.html").read_text()
    assert "<svg" in html and "http://" not in html.replace("http://www.w3.org", "")
