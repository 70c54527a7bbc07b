"""Lab reports: the kill matrix as JSON, as a Stryker mutation report, as Markdown and as HTML.

``write_lab_reports`` builds every document first and only then writes them (atomically, through
``harness.files``), so a formatting error leaves no half set behind. ``lab_summary`` is the
terminal's one-screen view of the same result. The HTML page is ``harness.report.lab_html``, built
on the pieces every format shares, which are here (``cell_state``, the counts, problems, notes).

The Stryker report follows ``mutation-testing-report-schema`` (schema version 2, validated in
tests/report/test_lab_reports.py): each mutant's location is the span of its ``find`` text in the
reference file, its replacement what that span reads once the mutant is applied, so the report's
viewer shows exactly the edit the lab ran.

The lab runs the harness's own mutants, but every text a run carries (failure messages above
all) is shown through ``printable`` in each format all the same, as in every other reporter.
"""

from __future__ import annotations

import textwrap
from typing import Any

from harness import __version__
from harness.escape import printable
from harness.lab.engine import LabResult, MutantRow
from harness.lab.sources import mutation_span, position, reference_key
from harness.report.common import (
    json_text,
    md_cell,
    md_code,
)
from harness.report.lab_parts import (
    DESIGNATED,
    KILLED,
    MISSED,
    NOT_RUN,
    SURVIVED,
    cell_state,
    counts_line,
    first_line,
    lab_cases_line,
    lab_problems,
    note_lines,
    pitfall_line,
    reference_phrase,
    verdict_word,
)
from harness.report.quotes import Quotes

# The lab's verdict needs every mutant killed, so only 100 % is green; below 80 % is red.
THRESHOLDS = {"high": 100, "low": 80}
SUMMARY_PROBLEMS_SHOWN = 10  # the terminal summary stays one screen long
MD_MARKS = {DESIGNATED: "**X**", KILLED: "x", MISSED: "**!**", SURVIVED: "", NOT_RUN: "\u00b7"}



def lab_json(result: LabResult) -> str:
    """``lab-<m>.json``: the result as the API returns it."""
    return json_text(result.to_json())


def stryker_json(result: LabResult, quotes: Quotes) -> str:
    """``mutation-report-<m>.json``: the lab in Stryker's mutation-testing report schema."""
    return json_text(to_stryker(result, quotes))


# -- terminal -----------------------------------------------------------------------------------

def lab_summary(result: LabResult) -> str:
    """One screen for the terminal: verdict, counts, what went wrong, minimal subset, time."""
    lines = [f"ol lab {result.module}: {verdict_word(result)} ({reference_phrase(result)})",
             counts_line(result)]
    problems = lab_problems(result)
    for row, what in problems[:SUMMARY_PROBLEMS_SHOWN]:
        lines.append(_wrap(f"{row.mutant.id} {what}: {row.mutant.description}", "  ", "      "))
    if len(problems) > SUMMARY_PROBLEMS_SHOWN:
        lines.append(f"  ... and {len(problems) - SUMMARY_PROBLEMS_SHOWN} more "
                     f"(see lab-{result.module}.md)")
    subset = result.minimal_subset()
    lines.append(_wrap(f"minimal subset ({len(subset)} of {len(result.tests)} tests): "
                       + (", ".join(subset) or "none"), "", "  "))
    undesignated = [t for t, sentence in note_lines(result) if sentence.startswith("is nobody")]
    if undesignated:
        lines.append(_wrap("nobody's designated killer: " + ", ".join(undesignated), "", "  "))
    lines.append(f"time {result.duration_s:.1f} s with {result.jobs} "
                 f"job{'s' if result.jobs != 1 else ''}")
    return printable("\n".join(lines) + "\n")


def _wrap(text: str, first: str, rest: str) -> str:
    return textwrap.fill(text, 100, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False, break_long_words=False)


# -- Stryker (mutation-testing-report-schema, version 2) ----------------------------------------

def to_stryker(result: LabResult, quotes: Quotes) -> dict[str, Any]:
    """The lab as a Stryker mutation-testing report: one file entry per mutated reference file
    (its text, the catalog's test files and the pitfalls: ``quotes``)."""
    files: dict[str, dict[str, Any]] = {}
    for row in result.rows:
        key = reference_key(row.mutant.file)
        if key not in files:
            source = quotes.references[row.mutant.file]
            files[key] = {"language": "python", "source": source, "mutants": []}
        files[key]["mutants"].append(_stryker_mutant(quotes, row, files[key]["source"]))
    return {
        "schemaVersion": "2",
        "thresholds": dict(THRESHOLDS),
        "files": files,
        "testFiles": dict(quotes.test_files),
        "framework": {"name": "ol", "version": __version__},
        "config": {"module": result.module, "jobs": result.jobs,
                   "seed": result.seed, "cases": lab_cases_line(result.module, result.seed)},
    }


def _stryker_mutant(quotes: Quotes, row: MutantRow, source: str) -> dict[str, Any]:
    start, end, replacement = mutation_span(row.mutant, source)
    killers = sorted(row.killed_by, key=lambda t: t not in row.mutant.designated)  # designated first
    messages = {t.name: t.message for t in row.run.tests}
    covered = [t.name for t in row.run.tests]  # the tests that reach the mutant (or all of them)
    if row.killed:
        reason = "\n".join(f"{t}: {first_line(messages.get(t, ''))}" for t in killers)
    elif not covered:
        reason = "no catalog test reaches the mutated code; designated: " + \
            ", ".join(row.mutant.designated)
    else:
        reason = ("every catalog test that reaches it passed" if row.not_run
                  else "every catalog test passed") + "; designated: " + \
            ", ".join(row.mutant.designated)
    return {
        "id": row.mutant.id,
        "mutatorName": printable(pitfall_line(quotes, row.mutant)),
        "replacement": replacement,
        "location": {"start": position(source, start), "end": position(source, end)},
        "status": "Killed" if row.killed else "Survived" if covered else "NoCoverage",
        "statusReason": printable(reason),
        "killedBy": killers,
        "coveredBy": covered,
        "testsCompleted": len(row.run.tests),
        "duration": round(row.run.duration_s * 1000, 3),
        "description": printable(f"{row.mutant.id}: {row.mutant.description}"),
        "static": False,
    }


# -- Markdown (CI step summary) -----------------------------------------------------------------

def to_lab_markdown(result: LabResult) -> str:
    """Verdict, counts, cases, problems, the kill matrix, per-test strength, minimal subset,
    notes."""
    lines = [f"### Lab {result.module}: {verdict_word(result)}", "",
             (f"{counts_line(result)}; {reference_phrase(result)}; {len(result.tests)} tests, "
              f"{result.duration_s:.1f} s with {result.jobs} jobs."), "",
             md_cell(lab_cases_line(result.module, result.seed)), ""]
    problems = lab_problems(result)
    if problems:
        lines += ["**Problems**", ""]
        lines += [f"- `{md_code(row.mutant.id)}` {md_cell(what)}: {md_cell(row.mutant.description)}"
                  for row, what in problems]
        lines.append("")
    lines += _md_matrix(result)
    lines += ["", "#### Test strength", "",
              "| # | test | kills | unique kills | designated for | minimal subset |",
              "| ---: | --- | ---: | ---: | --- | :---: |"]
    subset = set(result.minimal_subset())
    for i, test in enumerate(result.tests, start=1):
        designated_for = [r.mutant.id for r in result.rows if test in r.mutant.designated]
        lines.append(f"| {i} | `{md_code(test)}` | {len(result.kills(test))} | "
                     f"{len(result.unique_kills(test))} | {', '.join(designated_for)} | "
                     f"{'yes' if test in subset else ''} |")
    ordered = [t for t in result.tests if t in subset]
    lines += ["", "#### Minimal subset", "",
              f"{len(ordered)} of {len(result.tests)} tests kill every mutant the catalog kills: "
              + (", ".join(f"`{md_code(t)}`" for t in ordered) or "none") + "."]
    notes = note_lines(result)
    if notes:
        lines += ["", "#### Notes", ""] + [f"- `{md_code(t)}` {md_cell(s)}" for t, s in notes]
    return printable("\n".join(lines) + "\n")


def _md_matrix(result: LabResult) -> list[str]:
    """Mutants as rows, tests as numbered columns (the strength table names them)."""
    numbers = range(1, len(result.tests) + 1)
    lines = ["#### Kill matrix", "",
             ("**X** killed by a designated test, x killed by another test, **!** a designated "
              "test that did not kill it, blank: the test passed, \u00b7 not run (the test never "
              "reaches the mutated code, so its outcome is the reference's). Columns are the "
              "tests numbered as in the strength table."), "",
             "| mutant | pitfall | " + " | ".join(str(n) for n in numbers) + " | result |",
             "| --- | ---: | " + " | ".join(":---:" for _ in numbers) + " | --- |"]
    for row in result.rows:
        marks = " | ".join(MD_MARKS[cell_state(row, t)] for t in result.tests)
        outcome = ("killed" if row.designated_killed else "killed, not by its designated test") \
            if row.killed else "**SURVIVED**"
        lines.append(f"| `{md_code(row.mutant.id)}` | {row.mutant.pitfall} | {marks} | {outcome} |")
    return lines
