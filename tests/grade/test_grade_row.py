"""A gradebook's row (``GradeRow``) and a slot's reply (``SlotReply``) round-trip JSON; each kind
of row has its constructor; a bad row is one line; an older gradebook's row is still read."""

from __future__ import annotations

import json

import pytest

from harness.fields import FieldError
from harness.grade.row import GradeRow, SlotReply

PITFALL = {"kind": "pitfall", "pitfall": 1, "label": "pitfall 1", "also": [], "also_labels": [],
           "pitfall_text": "u <= r", "text": "behaves like u <= r"}
ROWS = [
    GradeRow(),
    GradeRow.refused("ana", "refused-00", "ana.zip: member ../x has a .. in its path", "zip"),
    GradeRow.internal("the grading process exited (status 70)", "ben"),
    GradeRow.setup_error("syntax error in python/x.py, line 1", 0.25),
    GradeRow.past_budget(600, 600.5),
    GradeRow(pitfalls=(PITFALL,), identity={"bytes": "b", "tree": "t"}, score=17.5,
             submission="fay \u2603", content_hash="abc", verdict="fail", passed=15, failed=5,
             tests={"t1": "passed", "t2": "failed"}, message="t2: wrong", time_s=6.4,
             partial_sandbox=("view",), max_score=25, context="ctx",
             graded_at="2026-12-03T06:00:00+00:00", seed=20261202,
             flags=({"kind": "identical", "to": "reference", "how": "bytes"},)),
]


@pytest.mark.parametrize("row", ROWS)
def test_a_row_round_trips_through_json_text(row):
    assert GradeRow.from_json(json.loads(json.dumps(row.to_json()))) == row
    reply = SlotReply(row, {"module": "M07.6", "tests": []})
    assert SlotReply.from_json(json.loads(json.dumps(reply.to_json()))) == reply


def test_its_keys_are_in_the_order_gradebook_json_has_always_had():
    row = ROWS[-1].to_json()
    assert list(row) == ["pitfalls", "shape", "identity", "score", "submission", "content_hash",
                         "verdict", "passed", "failed", "tests", "message", "time_s",
                         "partial_sandbox", "max_score", "context", "graded_at", "seed", "flags",
                         "present"]  # the last added: a reader of an older gradebook's rows skips it
    assert (row["score"], row["max_score"]) == (17.5, 25) and type(row["max_score"]) is int
    assert "partial_sandbox" not in ROWS[1].to_json()  # a row without a run has none


def test_the_kinds_of_row():
    assert (ROWS[1].verdict, ROWS[1].submission, ROWS[1].content_hash, ROWS[1].shape) == (
        "error", "ana", "refused-00", "zip")
    assert (ROWS[2].verdict, ROWS[3].verdict, ROWS[4].verdict) == ("internal", "error", "fail")
    assert ROWS[4].message == ("the check did not finish within the submission's budget of 600 s "
                               "(--submission-timeout); it was stopped")


def test_an_older_row_is_read_its_unknown_keys_left_out():
    old = {"submission": "old", "verdict": "error", "passed": 0, "failed": 0, "tests": {},
           "message": "m", "time_s": 0.0, "refused": True}
    row = GradeRow.from_json(old)
    assert (row.submission, row.verdict, row.score, row.seed, row.shape, row.present) == (
        "old", "error", 0, None, "workspace", True)


@pytest.mark.parametrize(("change", "message"), [
    ({"passed": "1"}, 'GradeRow.passed: must be an integer, got "1"'),
    ({"tests": {"t": 1}}, "GradeRow.tests: must be a string, got 1"),
    ({"pitfalls": {}}, "GradeRow.pitfalls: must be a JSON array, got {}"),
])
def test_a_bad_row_is_one_line(change, message):
    with pytest.raises(FieldError) as info:
        GradeRow.from_json({**ROWS[0].to_json(), **change})
    assert str(info.value) == message


def test_renamed_names_the_folder_as_the_submission():
    row = GradeRow.setup_error("/tmp/x/w/python changed while it was being graded")
    reply = SlotReply(row, {"workspace": "/tmp/x/w", "tests": [{"message": "in /tmp/x/w/a.py"}]})
    assert reply.renamed("/tmp/x/w", "ana").to_json() == {
        "row": GradeRow.setup_error("ana/python changed while it was being graded").to_json(),
        "run": {"workspace": "ana", "tests": [{"message": "in ana/a.py"}]}}


def test_cleaned_makes_every_string_valid_text():
    row = GradeRow(submission="sub-\udcfe", message="raised: \ud800").cleaned()
    assert (row.submission, row.message) == ("sub-\\xfe", "raised: \\ud800")
