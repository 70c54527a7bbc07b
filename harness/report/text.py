"""Plain-text reports: ``ol check`` (one run) and ``ol tests`` (the catalog).

Every string a submission can put in a result (messages, names, the workspace) goes to the
terminal through ``printable``: an escape sequence in a student's message is shown, never run.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Any

from harness.engine.course import Module
from harness.engine.results import CaseInfo, RunResult, TestResult
from harness.errors import HarnessError
from harness.report.common import (
    diagnosis_lines,
    failure_text,
    json_text,
    md_cell,
    milliseconds,
    run_cases_line,
    summary_line,
)
from harness.report.escape import printable

# What each rung of the course asks of the student; the chapter names the rung of every module.
RUNGS = {
    "R0": "the student writes no tests here",
}
CATALOG_FORMATS = ("text", "json", "markdown")
CATALOG_COLUMNS = ("test", "kind", "checks", "why it matters", "pitfall")
WIDTH = 100  # the text reports fit 100 columns (``ol tests --wide`` keeps one row per test)


def test_line(test: TestResult, width: int) -> str:
    """``  name  kind  outcome  time``: one line, printed as each test finishes."""
    return printable(f"  {test.name:<{width}}  {test.kind.value:<11}  {test.outcome.value:<7}  "
                     f"{milliseconds(test.duration_s):>10}")


def wrapped(text: str, head: str, indent: int | None = None, width: int = WIDTH) -> list[str]:
    """``head`` then ``text`` wrapped to ``width`` columns, the next lines indented to ``indent``
    (default: under the text); words are never broken (a long name overflows instead)."""
    return textwrap.wrap(text, width, initial_indent=head,
                         subsequent_indent=" " * (len(head) if indent is None else indent),
                         break_long_words=False, break_on_hyphens=False) or [head.rstrip()]


def checks_lines(info: CaseInfo) -> list[str]:
    """``    checks: ...`` under a test's line (``ol check -v``), wrapped to 100 columns."""
    return wrapped(info.checks, "    checks: ") if info.checks else []


def failures_and_summary(result: RunResult) -> str:
    """A block per failure, the notes, then the summary line (what follows the test lines)."""
    lines: list[str] = []
    if result.diagnosis:
        lines += ["", *diagnosis_lines(result)]
    for t in result.failures():
        lines += ["", f"{t.outcome.value.upper()}: {t.name} ({t.kind.value})"]
        # Escaped before the split: a carriage return or a form feed is shown, not a line break.
        lines += [f"    {line}".rstrip() for line in printable(failure_text(t, result.module)).splitlines()]
    if result.notes:
        lines.append("")
        lines += [f"note: {note}" for note in result.notes]
    lines += ["", summary_line(result)]
    return printable("\n".join(lines) + "\n")


def format_run(result: RunResult) -> str:
    """The run's line, its cases, one line per test, a block per failure, notes, the summary."""
    lines = [f"{result.module} against {result.target} ({result.workspace})",
             run_cases_line(result), ""]
    width = max((len(t.name) for t in result.tests), default=0)
    lines += [test_line(t, width) for t in result.tests]
    return printable("\n".join(lines) + "\n") + failures_and_summary(result)


def rung_line(module: Module) -> str:
    """``rung R0: the student writes no tests here``."""
    what = RUNGS.get(module.rung)
    return f"rung {module.rung}: {what}" if what else f"rung {module.rung}"


def format_catalog(module: Module, cases: Iterable[Any], fmt: str = "text",
                   wide: bool = False) -> str:
    """The catalog table of ``module`` for ``ol tests``, in ``fmt`` (text, json or markdown).

    ``cases`` is what ``harness.catalogs.metadata.collect`` returns ((CaseInfo, fn) pairs) or plain
    ``CaseInfo``s; only the metadata is read. The text is a block per test, at most 100 columns
    wide; ``wide`` makes it one long row per test (for grep), the other formats ignore it.
    """
    infos = [c if isinstance(c, CaseInfo) else c[0] for c in cases]
    if fmt == "text":
        return printable(_catalog_wide(module, infos) if wide else _catalog_text(module, infos))
    if fmt == "json":
        return _catalog_json(module, infos)
    if fmt == "markdown":
        return printable(_catalog_markdown(module, infos))
    known = ", ".join(CATALOG_FORMATS)
    raise HarnessError(f"unknown catalog format '{fmt}'", f"use one of: {known}")


def _row(info: CaseInfo) -> tuple[str, ...]:
    pitfalls = ", ".join(str(p) for p in info.pitfalls) or "-"
    return (info.name, info.kind.value, info.checks, info.why, pitfalls)


def _catalog_head(module: Module, infos: list[CaseInfo]) -> list[str]:
    return [f"{module.id} {module.title}: {len(infos)} tests", rung_line(module), ""]


def _catalog_text(module: Module, infos: list[CaseInfo]) -> str:
    """A block per test: its name and kind, then what it checks, why, and its pitfalls."""
    lines = _catalog_head(module, infos)
    for n, info in enumerate(infos):
        lines += [""] if n else []
        lines.append(f"{info.name} ({info.kind.value})")
        pitfalls = ", ".join(str(p) for p in info.pitfalls)
        for label, text in (("checks", info.checks), ("why", info.why), ("pitfalls", pitfalls)):
            if text:
                lines += wrapped(text, f"    {label + ':':<10}")
    for title, numbers in pitfall_groups(module):
        lines += ["", *wrapped(f"{title}:", "")]
        for p in numbers:
            lines += wrapped(module.pitfall_text(p), f"  {p}. ")
    if module.pitfalls:
        lines += ["", *wrapped(DIAGNOSIS_NOTE, "")]
    return "\n".join(lines) + "\n"


def _catalog_wide(module: Module, infos: list[CaseInfo]) -> str:
    """One row per test, as wide as its longest cell (``ol tests --wide``: for grep)."""
    rows = [CATALOG_COLUMNS] + [_row(i) for i in infos]
    widths = [max(len(r[c]) for r in rows) for c in range(len(CATALOG_COLUMNS))]
    table = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    table.insert(1, "  ".join("-" * w for w in widths))
    lines = [*_catalog_head(module, infos), *table, *_pitfall_legend(module, infos)]
    return "\n".join(lines) + "\n"


DIAGNOSIS_NOTE = (
    "When a test fails, `ol check` prints a diagnosis first: it replays the calls where your code "
    "answered differently from the contract on ol's own copies of the mistakes below (its mutant "
    "library), and names the mistake that answers exactly as your code did, with an example call. "
    "A crash, an exit, a time-out or an unwritten function names no pitfall.")


def pitfall_groups(module: Module) -> list[tuple[str, list[int]]]:
    """The module's pitfalls: the chapter's section 5 table, then ol's own."""
    numbers = sorted(module.pitfalls)
    chapter = [p for p in numbers if module.is_chapter_pitfall(p)]
    own = [p for p in numbers if not module.is_chapter_pitfall(p)]
    groups = []
    if chapter:
        groups.append(("the chapter's pitfalls (its section 5)", chapter))
    if own:
        groups.append(("ol's own pitfalls (not in the chapter's table; shown as \"ol pitfall N\")",
                       own))
    return groups


def _pitfall_legend(module: Module, infos: list[CaseInfo]) -> list[str]:
    lines: list[str] = []
    for title, numbers in pitfall_groups(module):
        lines += ["", f"{title}:"] + [f"  {p}. {module.pitfall_text(p)}" for p in numbers]
    return lines + ["", DIAGNOSIS_NOTE] if lines else lines


def _catalog_json(module: Module, infos: list[CaseInfo]) -> str:
    doc = {
        "module": module.id,
        "title": module.title,
        "rung": module.rung,
        "rung_text": RUNGS.get(module.rung, ""),
        "tests": [i.to_json() for i in infos],
        "pitfalls": {str(p): module.pitfall_text(p) for p in sorted(module.pitfalls)},
        "pitfall_labels": {str(p): module.pitfall_label(p) for p in sorted(module.pitfalls)},
        "chapter_pitfalls": module.chapter_pitfalls,
        "diagnosis": DIAGNOSIS_NOTE,
    }
    return json_text(doc)


def _catalog_markdown(module: Module, infos: list[CaseInfo]) -> str:
    lines = [f"## {module.id} {module.title}", "", rung_line(module), "",
             "| " + " | ".join(CATALOG_COLUMNS) + " |", "|" + " --- |" * len(CATALOG_COLUMNS)]
    for info in infos:
        name, kind, checks, why, pitfalls = _row(info)
        lines.append(f"| `{name}` | {kind} | {md_cell(checks)} | {md_cell(why)} | {pitfalls} |")
    for title, numbers in pitfall_groups(module):
        lines += ["", f"{md_cell(title[0].upper() + title[1:])}:", ""]
        lines += [f"- {module.pitfall_label(p)}: {md_cell(module.pitfall_text(p))}" for p in numbers]
    if module.pitfalls:
        lines += ["", md_cell(DIAGNOSIS_NOTE)]
    return "\n".join(lines) + "\n"
