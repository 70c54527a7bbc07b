"""Every mutant of every module, checked as a student would check it, is told its own pitfall first.

``ol check --target sNN`` runs the catalog on ol's mutant in this process and then diagnoses the
failing run like any other: the top diagnosis must name the mutant's pitfall (among the pitfalls
of mutants that answer exactly alike, when two do). This is the easy half of the promise: the
other half, implementations written independently of the mutants, is test_corpus.py.
"""

from __future__ import annotations

import pytest

from harness.check.engine import CheckRequest, run_check
from harness.engine.course import load_course
from harness.engine.mutants import load_mutants

# One check a mutant, 0.4-7 s each: the fast tier (-m "not slow", #28) keeps M07.1's.
CASES = [pytest.param(mid, m, id=f"{mid}-{m.id}", marks=[] if mid == "M07.1" else [pytest.mark.slow])
         for mid in load_course().modules for m in load_mutants(mid)]


@pytest.mark.parametrize(("module_id", "mutant"), CASES)
def test_the_top_diagnosis_names_the_mutants_own_pitfall(module_id, mutant):
    run = run_check(CheckRequest(module_id, target=mutant.id), None)
    assert run.verdict == "fail"
    assert run.diagnosis, f"{mutant.id}: no diagnosis"
    top = run.diagnosis[0]
    assert mutant.pitfall in top.pitfalls, f"{mutant.id} (pitfall {mutant.pitfall}): {top.text}"
    assert top.kind in ("pitfall", "failed", "unexplained")  # unexplained: no replay matches call for call
    assert top.text and top.evidence
    label = load_course().module(module_id).pitfall_label(top.pitfall)
    assert label in top.text


def test_a_passing_run_has_no_diagnosis():
    run = run_check(CheckRequest("M07.6", target="reference"), None)
    assert run.verdict == "pass" and run.diagnosis == ()
