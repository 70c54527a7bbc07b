"""Verdicts, categories and outcomes are string-valued enums with one home
(``harness.engine.results``): each member is its value wherever text is (``==``, a dict's key,
``str``, ``format``, JSON, CSV), and a word two of them share is spelled once."""

from __future__ import annotations

import csv
import io
import json
import pickle

import pytest

from harness.engine.results import (
    CATEGORIES,
    VERDICTS,
    WRONG,
    Category,
    Outcome,
    RunResult,
    Verdict,
)
from harness.errors import exit_code
from harness.fields import FieldError
from harness.grade.gradebook import VERDICTS as ROW_VERDICTS
from harness.grade.row import GradeRow


@pytest.mark.parametrize("member", [*Verdict, *Category, *Outcome])
def test_a_member_is_its_value_wherever_text_is(member):
    value = member.value
    assert member == value and hash(member) == hash(value) and {value: 1}[member] == 1
    assert (str(member), f"{member}", f"{member:>3}", "%s" % (member,)) == (  # noqa: UP031 - the old way too
        value, value, format(value, ">3"), value)
    assert json.dumps({member: member}) == json.dumps({value: value})
    out = io.StringIO()
    csv.writer(out).writerow([member])
    assert out.getvalue().strip() == value
    assert pickle.loads(pickle.dumps(member)) is member
    assert type(member)(value) is member


def test_one_home_for_each_set():
    assert VERDICTS == ("pass", "fail", "partial", "error")
    assert ROW_VERDICTS == ("pass", "fail", "error", "internal")
    assert set(VERDICTS) | set(ROW_VERDICTS) == set(Verdict)
    assert CATEGORIES == tuple(Category) == ("wrong", "raised", "crashed", "exited", "timeout",
                                             "not_implemented")
    assert WRONG is Category.WRONG


def test_a_word_outcome_and_category_share_has_one_member_name():
    """crashed and timeout are both an outcome (what happened) and a category (why it failed):
    the same name and value in both, so ``Outcome.TIMEOUT == Category.TIMEOUT``."""
    shared = {m.value for m in Outcome} & {m.value for m in Category}
    assert shared == {"crashed", "timeout"}
    for value in shared:
        assert Outcome(value).name == Category(value).name
        assert Outcome(value) == Category(value)
    assert tuple(Outcome) == ("passed", "failed", "error", "timeout", "crashed")


def test_a_run_s_verdict_is_a_verdict_and_its_exit_code_is_unchanged():
    run = RunResult("M07.6", "ws", "student", ())
    assert run.verdict is Verdict.FAIL and run.to_json()["verdict"] == "fail"
    assert [exit_code(v) for v in (Verdict.PASS, Verdict.PARTIAL, Verdict.FAIL)] == [
        exit_code("pass"), exit_code("partial"), exit_code("fail")]


def test_a_row_s_verdict_is_read_as_a_verdict():
    assert GradeRow.from_json({"verdict": "internal"}).verdict is Verdict.INTERNAL
    with pytest.raises(FieldError, match="^GradeRow.verdict: must be one of 'pass', 'fail', "
                                         "'partial', 'error', 'internal', got \"maybe\"$"):
        GradeRow.from_json({"verdict": "maybe"})
