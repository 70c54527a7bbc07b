"""Gradescope autograder ``results.json``: each catalog test worth its points (course.toml).

Field names follow Gradescope's autograder specification (top level: ``score``, ``output``,
``tests``; per test: ``name``, ``score``, ``max_score``, ``status``, ``output``, ``visibility``).
``max_score`` at the top level is ours: it makes the file self-describing for ``ol grade``.
Gradescope shows ``name`` and ``output`` as they are, so each goes through ``printable``.
"""

from __future__ import annotations

from harness.engine.results import RunResult, TestResult, points_value
from harness.escape import printable
from harness.report.common import (
    MARKERS,
    diagnosis_lines,
    failure_text,
    json_text,
    provenance_lines,
    run_cases_line,
    summary_line,
)

VISIBILITY = "visible"  # students see every test: the catalog is published (``ol tests``)


def to_gradescope(result: RunResult) -> str:
    """The ``results.json`` text (indent 2, trailing newline). Every catalog test is worth its
    points (``[points.MODULE]`` of course.toml, 1 where it names none): ``max_score`` counts the
    tests a partial run did not run too. A check that could not start (``result.error``) scores
    0, its one-line message the output and its one test's."""
    tests = ([_setup_error(result)] if result.error
             else [_test(t, result) for t in result.tests])
    doc = {
        "score": points_value(result.score),
        "max_score": points_value(result.max_score),
        "output": printable(result.error) if result.error else _overall(result),
        "visibility": VISIBILITY,
        "tests": tests,
    }
    return json_text(doc)


def _overall(result: RunResult) -> str:
    lines = [f"{result.module} against {result.target}", run_cases_line(result),
             *provenance_lines(result), *diagnosis_lines(result),
             *(f"note: {n}" for n in result.notes), summary_line(result)]
    return printable("\n".join(lines))


def _setup_error(result: RunResult) -> dict[str, object]:
    """The one test of a check that could not start: 0 of every point, the message and what ran
    (for a student who opens it: what to fix, and the command that checks again)."""
    lines = [result.error, "", f"{result.module} against {result.target}",
             run_cases_line(result), *provenance_lines(result), summary_line(result)]
    return {
        "name": "the check could not start",
        "score": 0,
        "max_score": points_value(result.max_score),
        "status": "failed",
        "output": printable("\n".join(lines)),
        "visibility": VISIBILITY,
    }


def _test(test: TestResult, result: RunResult) -> dict[str, object]:
    points = points_value(result.points.get(test.name, 1.0))
    return {
        "name": printable(f"{test.name} ({test.kind.value})"),
        "score": points if test.ok else 0,
        "max_score": points,
        "status": "passed" if test.ok else "failed",
        "output": "" if test.ok else printable(
            f"{MARKERS[test.outcome]}: {failure_text(test, result.module, result.diagnosis)}"),
        "visibility": VISIBILITY,
    }
