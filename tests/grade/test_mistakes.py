"""Each gradebook row records the mistake its code behaves like (issue #26 item 2): the
diagnosis's entries, best first, with their pitfall labels and texts, and the CSV's ``pitfalls``
column; a pass, an error or a refusal records none."""

from __future__ import annotations

import csv

import pytest
from test_grade import CSV_NAME, book, buggy, grade, rows, submission, syntax_error

from harness.grade.gradebook import pitfalls_cell


@pytest.mark.slow
def test_each_row_names_the_mistakes_of_its_code_best_first(tmp_path):
    folder = tmp_path / "subs"
    submission(folder, "ann")
    submission(folder, "bob", buggy)  # u <= p_x / q_x: the chapter's pitfall 1
    submission(folder, "cat", lambda s: buggy(s).replace(
        "    return numerators / z\n", "    return numerators\n"))  # and pitfall 4: not normalised
    submission(folder, "dan", syntax_error)
    out = tmp_path / "book"
    # One slot (not one per core): each row's mistakes are its own check's, in any slot.
    assert grade(folder, out, "--seed", "public", "--jobs", "1") == 0
    by = rows(out)
    assert by["ann"]["pitfalls"] == [] and by["dan"]["pitfalls"] == []
    bob = by["bob"]["pitfalls"]
    assert bob[0]["label"] == "pitfall 1" and bob[0]["kind"] == "pitfall", bob
    assert "u <= r" in bob[0]["pitfall_text"] and bob[0]["text"].startswith("your code behaves like")
    assert {e["label"] for e in by["cat"]["pitfalls"]} >= {"pitfall 1", "pitfall 4"}, by["cat"]
    assert len(by["cat"]["pitfalls"]) >= 2, by["cat"]["pitfalls"]
    with open(out / CSV_NAME, newline="") as f:
        cells = {r["submission"]: r["pitfalls"] for r in csv.DictReader(f)}
    assert cells["ann"] == "" and cells["dan"] == ""
    assert cells["bob"] == "pitfall 1"
    assert set(cells["cat"].split("; ")) >= {"pitfall 1", "pitfall 4"}, cells["cat"]
    assert book(out)["submissions"][1]["pitfalls"] == bob


def test_the_pitfalls_cell_lists_each_label_once_with_the_others_that_answer_alike():
    entries = [{"label": "pitfall 3", "also_labels": ["ol pitfall 16"]},
               {"label": "", "kind": "unexplained"}, {"label": "pitfall 3"},
               {"label": "", "kind": "more", "also_labels": ["ol pitfall 11"]}]
    assert pitfalls_cell(entries) == "pitfall 3; ol pitfall 16; ol pitfall 11"
    assert pitfalls_cell("not a list") == "" and pitfalls_cell([]) == ""
