"""Lab reports: the kill matrix as JSON, as a Stryker mutation report, as Markdown and as HTML.

``write_lab_reports`` builds every document first and only then writes them (atomically, through
``harness.report.io``), so a formatting error leaves no half set behind. ``lab_summary`` is the
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

import ast
import inspect
import textwrap
from pathlib import Path
from typing import Any

from harness import __version__
from harness.catalogs.metadata import collect
from harness.engine.course import REFERENCE_PYTHON, REPO_ROOT, Module, load_course
from harness.errors import HarnessError
from harness.lab.engine import NOT_RUN, LabResult, MutantRow
from harness.engine.mutants import Mutant, apply
from harness.report.common import (
    cases_line,
    json_text,
    md_cell,
    md_code,
    replay_command,
)
from harness.report.escape import printable
from harness.report.io import write_reports

# The lab's verdict needs every mutant killed, so only 100 % is green; below 80 % is red.
THRESHOLDS = {"high": 100, "low": 80}
SUMMARY_PROBLEMS_SHOWN = 10  # the terminal summary stays one screen long

# A cell of the kill matrix: (test, mutant) -> one of these states. NOT_RUN: the lab did not run
# the test on the mutant, as it never reaches the mutated code (its outcome is the reference's).
KILLED, DESIGNATED, MISSED, SURVIVED = "killed", "designated", "missed", "survived"
MD_MARKS = {DESIGNATED: "**X**", KILLED: "x", MISSED: "**!**", SURVIVED: "", NOT_RUN: "\u00b7"}
NOT_RUN_WORDS = "not run: the test never reaches the mutated code (its outcome is the reference's)"


def write_lab_reports(result: LabResult, out: Path | None = None) -> list[Path]:
    """Write ``lab-<m>.json``, ``mutation-report-<m>.json``, ``lab-<m>.md`` and ``lab-<m>.html``.

    Into ``out``, or ``reports/`` when it is None; returns the paths written, in that order.
    """
    # Imported here, not above: the HTML page builds on this module's shared pieces.
    from harness.report.lab_html import to_lab_html

    m = result.module
    documents = {
        f"lab-{m}.json": json_text(result.to_json()),
        f"mutation-report-{m}.json": json_text(to_stryker(result)),
        f"lab-{m}.md": to_lab_markdown(result),
        f"lab-{m}.html": to_lab_html(result),
    }
    return write_reports(documents, out)


# -- what every format shares -------------------------------------------------------------------

def cell_state(row: MutantRow, test: str) -> str:
    """KILLED, DESIGNATED (killed by a designated test), MISSED (designated, not killed: passed
    or not run), NOT_RUN (not run, as it never reaches the mutated code) or SURVIVED (passed)."""
    designated = test in row.mutant.designated
    if test in row.killed_by:
        return DESIGNATED if designated else KILLED
    if designated:
        return MISSED
    return NOT_RUN if test in row.not_run else SURVIVED


def _course_module(module_id: str) -> Module | None:
    try:
        return load_course().module(module_id)
    except HarnessError:
        return None


def _pitfall(result: LabResult, mutant: Mutant) -> str:
    """``pitfall 1: accepting on u <= r: ...`` (the course's text when the course knows it)."""
    module = _course_module(result.module)
    text = module.pitfall_text(mutant.pitfall) if module else ""
    return f"pitfall {mutant.pitfall}: {text}" if text else f"pitfall {mutant.pitfall}"


def _problems(result: LabResult) -> list[tuple[MutantRow, str]]:
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


def _counts(result: LabResult) -> str:
    n = len(result.rows)
    killed = sum(r.killed for r in result.rows)
    designated = sum(r.killed and r.designated_killed for r in result.rows)
    not_run = sum(len(r.not_run) for r in result.rows)
    cells = (f"; {not_run} of {n * len(result.tests)} cells not run (the test never reaches the "
             "mutated code)") if not_run else ""
    return f"{n} mutants, {killed} killed, {designated} by their designated tests{cells}"


def _note_lines(result: LabResult) -> list[tuple[str, str]]:
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


def _verdict_word(result: LabResult) -> str:
    return "PASS" if result.verdict == "pass" else "FAIL"


def _reference_phrase(result: LabResult) -> str:
    if result.reference_passed:
        return "the reference passes its catalog"
    return "the reference FAILS its own catalog"


# -- terminal -----------------------------------------------------------------------------------

def lab_summary(result: LabResult) -> str:
    """One screen for the terminal: verdict, counts, what went wrong, minimal subset, time."""
    lines = [f"ol lab {result.module}: {_verdict_word(result)} ({_reference_phrase(result)})",
             _counts(result)]
    problems = _problems(result)
    for row, what in problems[:SUMMARY_PROBLEMS_SHOWN]:
        lines.append(_wrap(f"{row.mutant.id} {what}: {row.mutant.description}", "  ", "      "))
    if len(problems) > SUMMARY_PROBLEMS_SHOWN:
        lines.append(f"  ... and {len(problems) - SUMMARY_PROBLEMS_SHOWN} more "
                     f"(see lab-{result.module}.md)")
    subset = result.minimal_subset()
    lines.append(_wrap(f"minimal subset ({len(subset)} of {len(result.tests)} tests): "
                       + (", ".join(subset) or "none"), "", "  "))
    undesignated = [t for t, sentence in _note_lines(result) if sentence.startswith("is nobody")]
    if undesignated:
        lines.append(_wrap("nobody's designated killer: " + ", ".join(undesignated), "", "  "))
    lines.append(f"time {result.duration_s:.1f} s with {result.jobs} "
                 f"job{'s' if result.jobs != 1 else ''}")
    return printable("\n".join(lines) + "\n")


def _wrap(text: str, first: str, rest: str) -> str:
    return textwrap.fill(text, 100, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False, break_long_words=False)


# -- Stryker (mutation-testing-report-schema, version 2) ----------------------------------------

def to_stryker(result: LabResult) -> dict[str, Any]:
    """The lab as a Stryker mutation-testing report: one file entry per mutated reference file."""
    files: dict[str, dict[str, Any]] = {}
    for row in result.rows:
        key = _reference_key(row.mutant.file)
        if key not in files:
            source = (REFERENCE_PYTHON / row.mutant.file).read_text(encoding="utf-8")
            files[key] = {"language": "python", "source": source, "mutants": []}
        files[key]["mutants"].append(_stryker_mutant(result, row, files[key]["source"]))
    return {
        "schemaVersion": "2",
        "thresholds": dict(THRESHOLDS),
        "files": files,
        "testFiles": _stryker_test_files(result),
        "framework": {"name": "ol", "version": __version__},
        "config": {"module": result.module, "jobs": result.jobs,
                   "seed": result.seed, "cases": lab_cases_line(result.module, result.seed)},
    }


def _reference_key(file: str) -> str:
    """``reference/python/tinyllm/prob/rejection.py``: the mutated file, relative to the repo."""
    return f"{REFERENCE_PYTHON.relative_to(REPO_ROOT).as_posix()}/{file}"


def _stryker_mutant(result: LabResult, row: MutantRow, source: str) -> dict[str, Any]:
    start, end, replacement = mutation_span(row.mutant, source)
    killers = sorted(row.killed_by, key=lambda t: t not in row.mutant.designated)  # designated first
    messages = {t.name: t.message for t in row.run.tests}
    covered = [t.name for t in row.run.tests]  # the tests that reach the mutant (or all of them)
    if row.killed:
        reason = "\n".join(f"{t}: {_first_line(messages.get(t, ''))}" for t in killers)
    elif not covered:
        reason = "no catalog test reaches the mutated code; designated: " + \
            ", ".join(row.mutant.designated)
    else:
        reason = ("every catalog test that reaches it passed" if row.not_run
                  else "every catalog test passed") + "; designated: " + \
            ", ".join(row.mutant.designated)
    return {
        "id": row.mutant.id,
        "mutatorName": printable(_pitfall(result, row.mutant)),
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


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0].strip() if lines else "failed (no message was recorded)"


def mutation_span(mutant: Mutant, source: str) -> tuple[int, int, str]:
    """(start, end, replacement): ``source[start:end]`` becomes ``replacement`` in the mutant.

    The span covers every edit's ``find`` text (searched in the mutant's function, as ``apply``
    does) and whatever the edits changed, so one span holds a multi-edit mutant too.
    """
    mutated = apply(mutant, source)
    starts, ends = [], []
    lo, hi = _function_bounds(source, mutant.function)
    body = source[lo:hi]
    for edit in mutant.edits:
        if body.count(edit.find) == 1:  # a later edit may look for text an earlier one wrote
            at = lo + body.index(edit.find)
            starts.append(at)
            ends.append(at + len(edit.find))
    prefix = _common_prefix(source, mutated)
    suffix = _common_prefix(source[prefix:][::-1], mutated[prefix:][::-1])
    start = min([prefix, *starts])
    end = max([len(source) - suffix, *ends])
    return start, end, mutated[start:len(mutated) - (len(source) - end)]


def _function_bounds(source: str, name: str) -> tuple[int, int]:
    """Character offsets of the top-level ``def name`` (the whole source when it is missing)."""
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return sum(map(len, lines[:first - 1])), sum(map(len, lines[:node.end_lineno]))
    return 0, len(source)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def position(source: str, offset: int) -> dict[str, int]:
    """The schema's position of ``offset``: 1-based line and column (columns count characters)."""
    line_start = source.rfind("\n", 0, offset) + 1
    return {"line": source.count("\n", 0, offset) + 1, "column": offset - line_start + 1}


def _stryker_test_files(result: LabResult) -> dict[str, dict[str, Any]]:
    """The catalog tests, keyed by their file, with ids equal to the names ``killedBy`` uses."""
    module = _course_module(result.module)
    found = {info.name: fn for info, fn in collect(module)} if module else {}
    files: dict[str, dict[str, Any]] = {}
    for test in result.tests:
        fn = found.get(test)
        path = Path(inspect.getsourcefile(fn)).resolve() if fn else None
        key = _test_file_key(path, result.module)
        if key not in files:
            files[key] = {"tests": []}
            if path:
                files[key]["source"] = path.read_text(encoding="utf-8")
        entry: dict[str, Any] = {"id": test, "name": test}
        if fn:
            entry["location"] = {"start": {"line": fn.__code__.co_firstlineno, "column": 1}}
        files[key]["tests"].append(entry)
    return files


def _test_file_key(path: Path | None, module_id: str) -> str:
    if path is None:  # a test the catalog no longer has: still listed, so killedBy resolves
        return f"{module_id} catalog"
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else str(path)


# -- Markdown (CI step summary) -----------------------------------------------------------------

def to_lab_markdown(result: LabResult) -> str:
    """Verdict, counts, cases, problems, the kill matrix, per-test strength, minimal subset,
    notes."""
    lines = [f"### Lab {result.module}: {_verdict_word(result)}", "",
             (f"{_counts(result)}; {_reference_phrase(result)}; {len(result.tests)} tests, "
              f"{result.duration_s:.1f} s with {result.jobs} jobs."), "",
             md_cell(lab_cases_line(result.module, result.seed)), ""]
    problems = _problems(result)
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
    notes = _note_lines(result)
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
