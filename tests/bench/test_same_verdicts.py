"""``bench/same_verdicts.py``: the check that a speed-up changed no verdict of the lab (issue #16)
finds a changed cell, a changed message and a missing mutant, and ignores timings."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import api
from harness.paths import REPO_ROOT

ROOT = REPO_ROOT
TOOL = ROOT / "bench" / "same_verdicts.py"


@pytest.fixture(scope="module")
def lab_json() -> dict:
    return api.lab(api.LabRequest("M06.3", jobs=1)).to_json()


def _compare(tmp_path: Path, before: dict, after: dict) -> subprocess.CompletedProcess:
    a, b = tmp_path / "before.json", tmp_path / "after.json"
    a.write_text(json.dumps(before), encoding="utf-8")
    b.write_text(json.dumps(after), encoding="utf-8")
    return subprocess.run([sys.executable, str(TOOL), str(a), str(b)], capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.mark.slow
def test_timings_and_jobs_are_not_verdicts(tmp_path, lab_json):
    after = copy.deepcopy(lab_json)
    after["duration_s"], after["jobs"] = 99.0, 7
    for row in after["mutants"]:
        row["duration_s"] = 1.0
    done = _compare(tmp_path, lab_json, after)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "same verdicts" in done.stdout


@pytest.mark.slow
def test_a_changed_cell_message_or_mutant_is_found(tmp_path, lab_json):
    killed = next(r for r in lab_json["mutants"] if r["killed_by"])
    test = killed["killed_by"][0]
    cell = copy.deepcopy(lab_json)
    row = next(r for r in cell["mutants"] if r["id"] == killed["id"])
    row["outcomes"][test] = "passed"
    message = copy.deepcopy(lab_json)
    next(r for r in message["mutants"] if r["id"] == killed["id"])["messages"][test] += " (reworded)"
    missing = copy.deepcopy(lab_json)
    missing["mutants"] = [r for r in missing["mutants"] if r["id"] != killed["id"]]
    for after, words in ((cell, f"/mutants/{killed['id']}/outcomes/{test}"),
                         (message, f"/mutants/{killed['id']}/messages/{test}"),
                         (missing, f"/mutants/{killed['id']}: only in before")):
        done = _compare(tmp_path, lab_json, after)
        assert done.returncode == 1, done.stdout
        assert words in done.stdout


def test_what_is_not_a_lab_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "x.json").write_text("not json", encoding="utf-8")
    done = subprocess.run([sys.executable, str(TOOL), str(tmp_path / "x.json"), str(tmp_path / "y")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    done = subprocess.run([sys.executable, str(TOOL), "only-one"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2 and done.stderr.startswith("usage:")
