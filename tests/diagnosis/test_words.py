"""The diagnosis's words where an outside review found them misleading (session 37).

- F6: an exception class the contract allows (``TypeError`` for ``max_tries = 2.5``, as
  ``range(2.5)`` raises) is no difference from the contract; the catalog decides which class is
  accepted where (``harness.diagnosis.accepted``), so one it refuses still counts.
- attack 8: an answer that changes when asked again is told with each answer's own verb
  ("raised ValueError: ..., and returned (1, False) when asked again").
- F4: a failing test's pitfall line does not send the student to a pitfall the diagnosis has
  put the failure down to another mistake instead of.
"""

from __future__ import annotations

import pytest

from harness.catalogs.m07_6.test_catalog import P_HAND, Q_HAND
from harness.diagnosis.accepted import accepted, other_class
from harness.diagnosis.determinism import Unstable
from harness.diagnosis.engine import unstable_words
from harness.diagnosis.record import Batch
from harness.engine.course import load_course
from harness.engine.own_code import load_reference
from harness.engine.results import WRONG, Diagnosis, Kind, Outcome, TestResult
from harness.engine.target import Result
from harness.report.common import failure_text, pitfall_line

M076 = load_course().module("M07.6")
ENVELOPE = ([1.0, 0.0], [0.5, 0.5], 2.0, object(), 2.5)  # the catalog's call; the source: any object


def test_the_catalog_accepts_a_typeerror_for_a_non_integer_max_tries():
    reference = load_reference(M076)
    batch = Batch("rejection_sample", [ENVELOPE], {}, True)
    assert accepted(M076, reference, "test_rejection_sample_checks_the_envelope", None,
                    [(batch, 0, "TypeError")])


def test_the_catalog_refuses_a_typeerror_for_a_float_draft_id():
    # The contract: a float where an integer id goes raises ValueError (only max_tries may vary).
    reference = load_reference(M076)
    test = "test_speculative_rejects_bad_drafts"
    batch = Batch("speculative_step", [(P_HAND, Q_HAND, 1.0, 0.5, 0.5)], {}, False)
    assert not accepted(M076, reference, test, None, [(batch, 0, "TypeError")])
    assert accepted(M076, reference, test, None, [])  # the reference itself passes it
    elsewhere = Batch("speculative_step", [(P_HAND, Q_HAND, 7.5, 0.5, 0.5)], {}, False)
    assert accepted(M076, reference, test, None, [(elsewhere, 0, "TypeError")])  # not its call


def test_only_typeerror_against_valueerror_after_the_same_draws_is_asked():
    args = ENVELOPE
    type_error, value_error = Result(args, error=TypeError("x")), Result(args, error=ValueError("y"))
    assert other_class(type_error, value_error) == "TypeError"
    assert other_class(value_error, type_error) == "ValueError"
    assert other_class(value_error, value_error) is None
    assert other_class(Result(args, error=RuntimeError("z")), value_error) is None
    assert other_class(Result(args, value=(1, 1)), value_error) is None
    assert other_class(Result(args, error=TypeError("x"), draws=(2,)), value_error) is None


ARGS = ([0.5, 0.5], [0.5, 0.5], 0, 0.9, 0.3)
RAISED = Result(ARGS, error=ValueError("probs must sum to 1"))
RETURNED = Result(ARGS, value=(1, False))


@pytest.mark.parametrize(("first", "again", "said"), [
    (RAISED, RETURNED, "raised ValueError: probs must sum to 1, and returned (1, False) when asked"),
    (RETURNED, RAISED, "returned (1, False), and raised ValueError: probs must sum to 1 when asked"),
    (RETURNED, Result(ARGS, value=(0, False)), "returned (1, False), and (0, False) when asked"),
])
def test_an_answer_that_changes_is_told_with_each_answers_own_verb(first, again, said):
    batch = Batch("speculative_step", [ARGS], {}, False, [first])
    words = unstable_words(Unstable("test_x", batch, 0, again), first)
    assert words.startswith("speculative_step([0.5, 0.5], [0.5, 0.5], 0, 0.9, 0.3) "), words
    assert said in words, words
    assert "returned raised" not in words


def failing(pitfall: int, label: str, category: str = WRONG) -> TestResult:
    return TestResult("test_shapes", Kind.BOUNDARY, Outcome.FAILED, 0.1, "it failed", pitfall,
                      "the text of the pitfall", category, label)


DRAW_ORDER = Diagnosis("pitfall", "your code behaves like ol pitfall 10 ...", pitfall=10,
                       label="ol pitfall 10")


def test_a_failure_the_diagnosis_puts_down_to_another_mistake_sends_the_student_there():
    line = pitfall_line(failing(13, "ol pitfall 13"), "M07.6", (DRAW_ORDER,))
    assert line == ("this check guards ol pitfall 13, but the diagnosis above finds another "
                    "mistake behind this failure (ol pitfall 10): start there")
    assert "see ol pitfall 13" not in failure_text(failing(13, "ol pitfall 13"), "M07.6",
                                                   (DRAW_ORDER,))


def test_the_checks_own_pitfall_stays_where_the_diagnosis_agrees_or_says_nothing():
    test = failing(13, "ol pitfall 13")
    see = "see ol pitfall 13 (ol's own, listed by `ol tests M07.6`): the text of the pitfall"
    assert pitfall_line(test, "M07.6") == see  # no diagnosis (--no-diagnosis, or it failed)
    told = Diagnosis("failed", "test_shapes fails the check for ol pitfall 13", pitfall=13,
                     label="ol pitfall 13")
    assert pitfall_line(test, "M07.6", (DRAW_ORDER, told)) == see
    more = Diagnosis("more", "and 2 more: ol pitfall 13; pitfall 4", also=(13, 4))
    assert pitfall_line(test, "M07.6", (DRAW_ORDER, more)) == see
    raised = failing(13, "ol pitfall 13", category="raised")  # not a wrong answer: as it was
    assert pitfall_line(raised, "M07.6", (DRAW_ORDER,)) == see


def test_structure_names_no_pitfall_and_the_line_still_defers_to_it():
    structure = Diagnosis("structure", "your code returns the right values in the wrong places")
    line = pitfall_line(failing(1, "pitfall 1"), "M07.6", (structure,))
    assert line == ("this check guards pitfall 1, but the diagnosis above finds another mistake "
                    "behind this failure: start there")
