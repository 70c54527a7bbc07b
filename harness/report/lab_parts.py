"""What every format of the lab's reports shares: the cell states, counts, problems and notes."""

from __future__ import annotations

from harness.engine.mutants import Mutant
from harness.engine.seeding import replay_command
from harness.lab.engine import NOT_RUN, LabResult, MutantRow
from harness.report.common import cases_line
from harness.report.quotes import Quotes

# A cell of the kill matrix: (test, mutant) -> one of these states. NOT_RUN: the lab did not run
# the test on the mutant, as it never reaches the mutated code (its outcome is the reference's).
KILLED, DESIGNATED, MISSED, SURVIVED = "killed", "designated", "missed", "survived"
NOT_RUN_WORDS = "not run: the test never reaches the mutated code (its outcome is the reference's)"


def cell_state(row: MutantRow, test: str) -> str:
    """KILLED, DESIGNATED (killed by a designated test), MISSED (designated, not killed: passed
    or not run), NOT_RUN (not run, as it never reaches the mutated code) or SURVIVED (passed)."""
    designated = test in row.mutant.designated
    if test in row.killed_by:
        return DESIGNATED if designated else KILLED
    if designated:
        return MISSED
    return NOT_RUN if test in row.not_run else SURVIVED


def pitfall_line(quotes: Quotes, mutant: Mutant) -> str:
    """``pitfall 1: accepting on u <= r: ...`` (the course's text when the course knows it)."""
    known, number = quotes.pitfalls, mutant.pitfall
    text = (known.get(number, f"pitfall {number}") if number is not None else "") if known else ""
    return f"pitfall {mutant.pitfall}: {text}" if text else f"pitfall {mutant.pitfall}"


def lab_problems(result: LabResult) -> list[tuple[MutantRow, str]]:
    """Each mutant the lab fails on, with what went wrong, in library order."""
    out = []
    for row in result.rows:
        missed = [t for t in row.mutant.designated if t not in row.killed_by]
        if not row.killed:
            out.append((row, f"not killed (designated: {', '.join(row.mutant.designated)})"))
        elif missed:
            out.append((row, (f"not killed by its designated {', '.join(missed)} "
                              f"(killed by {', '.join(row.killed_by)})")))
    return out


def counts_line(result: LabResult) -> str:
    n = len(result.rows)
    killed = sum(r.killed for r in result.rows)
    designated = sum(r.killed and r.designated_killed for r in result.rows)
    not_run = sum(len(r.not_run) for r in result.rows)
    cells = (f"; {not_run} of {n * len(result.tests)} cells not run (the test never reaches the "
             "mutated code)") if not_run else ""
    return f"{n} mutants, {killed} killed, {designated} by their designated tests{cells}"


def note_lines(result: LabResult) -> list[tuple[str, str]]:
    """(test, sentence) for every test with a note, and every test nobody designates."""
    out = []
    for test in result.tests:
        designated_for = [r.mutant.id for r in result.rows if test in r.mutant.designated]
        note = result.notes.get(test, "").strip()
        if not designated_for:
            why = note or f"no reason recorded (add one to mutants/{result.module}/notes.json)"
            out.append((test, f"is nobody's designated killer: {why}"))
        elif note:
            out.append((test, note))
    return out


def lab_cases_line(module_id: str, seed: int | None) -> str:
    """``cases: public``, or ``cases: hidden, seed N (replay: ol lab M07.6 --seed N)``."""
    return cases_line(seed, replay_command("lab", module_id, seed) if seed is not None else None)


def verdict_word(result: LabResult) -> str:
    return "PASS" if result.verdict == "pass" else "FAIL"


def reference_phrase(result: LabResult) -> str:
    if result.reference_passed:
        return "the reference passes its catalog"
    return "the reference FAILS its own catalog"


def first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0].strip() if lines else "failed (no message was recorded)"
