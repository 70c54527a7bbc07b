"""Plain-text reports: ``ol check`` (one run) and ``ol tests`` (the catalog).

Every string a submission can put in a result (messages, names, the workspace) goes to the
terminal through ``printable``: an escape sequence in a student's message is shown, never run.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections.abc import Iterable
from typing import Any

from harness.engine.course import Module
from harness.engine.results import CaseInfo, RunResult, TestResult
from harness.errors import HarnessError
from harness.escape import printable
from harness.report.common import (
    diagnosis_lines,
    failure_text,
    json_text,
    md_cell,
    milliseconds,
    run_cases_line,
    summary_line,
)

# What each rung of the course asks of the student; the chapter names the rung of every module.
RUNGS = {
    "R0": "the student writes no tests here",
}
CATALOG_FORMATS = ("text", "json", "markdown")
CATALOG_COLUMNS = ("test", "kind", "checks", "why it matters", "pitfall")
WIDTH = 100  # the text reports fit 100 columns (``ol tests --wide`` keeps one row per test)
MIN_WIDTH = 40  # a narrower COLUMNS is taken as this: below it no line reads well


# -- fitting lines to the width -------------------------------------------------------------------

_ITEM = re.compile(r"(\d{1,3}\. |\| |[-*] )")  # a numbered item, a quoted line, a bullet


def fit_line(line: str, width: int | None) -> list[str]:
    """``line`` within ``width`` columns (None: as it is): wrapped at spaces, each continuation
    line indented (under the text of a numbered item or after a quoted line's ``|``, else four
    columns deeper than the line); a word longer than the room is broken, so no line is wider."""
    if width is None or len(line) <= width:
        return [line]
    body = line.lstrip(" ")
    lead = " " * (len(line) - len(body))
    item = _ITEM.match(body)
    if item and item.group().startswith("|"):
        hang = lead + "|   "
    elif item:
        hang = lead + " " * len(item.group())
    else:
        hang = lead + "    "
    if len(hang) > width // 2:
        hang = " " * (width // 2)
    return textwrap.wrap(body, width, initial_indent=lead, subsequent_indent=hang,
                         break_long_words=True, break_on_hyphens=False,
                         replace_whitespace=False) or [line[:width]]


def fit(text: str, width: int | None) -> str:
    """Every line of ``text`` within ``width`` columns (``fit_line``); None: ``text`` as it is."""
    if width is None:
        return text
    return "\n".join(part for line in text.split("\n") for part in fit_line(line, width))


# -- long values, shortened in the terminal ---------------------------------------------------

MAX_ENTRIES = 8  # a list or tuple of numbers with more entries is cut in the terminal
SHOWN_HEAD, SHOWN_TAIL = 3, 1
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?(?:nan|inf)|True|False",
                     re.IGNORECASE)
_GROUP = re.compile(r"\[[^\[\]()]*\]|\([^\[\]()]*\)")  # an innermost list or tuple
SHORTENED_NOTE = (f"lists of more than {MAX_ENTRIES} numbers are cut here (... N more ...); "
                  "-v or --wide shows them whole, as the --json report has them")


def shorten_values(text: str) -> str:
    """``text`` with every list or tuple of more than ``MAX_ENTRIES`` numbers cut to its first
    three entries, ``... N more ...`` and its last (a reader needs the shape of an array of 1000
    probabilities, not each one); a list with anything else in it is left whole."""
    def cut(match: re.Match[str]) -> str:
        group = match.group()
        inner = group[1:-1]
        sep = ", " if "," in inner else " "
        entries = [e.strip() for e in (inner.split(",") if "," in inner else inner.split())]
        if entries and entries[-1] == "":  # a tuple's trailing comma
            entries.pop()
        if len(entries) <= MAX_ENTRIES or not all(_NUMBER.fullmatch(e) for e in entries):
            return group
        more = len(entries) - SHOWN_HEAD - SHOWN_TAIL
        shown = [*entries[:SHOWN_HEAD], f"... {more} more ...", *entries[-SHOWN_TAIL:]]
        return group[0] + sep.join(shown) + group[-1]

    return _GROUP.sub(cut, text)


def test_line(test: TestResult, width: int, columns: int | None = None) -> str:
    """``  name  kind  outcome  time``: one line, printed as each test finishes. Where that is
    wider than ``columns``, without the kind (its failure block names it), then wrapped."""
    name, outcome = f"  {test.name:<{width}}  ", f"{test.outcome.value:<7}  "
    time = f"{milliseconds(test.duration_s):>10}"
    line = printable(f"{name}{test.kind.value:<11}  {outcome}{time}")
    if columns is not None and len(line) > columns:
        line = printable(f"{name}{outcome}{time}")
        if len(line) > columns:
            return "\n".join(fit_line(line, columns))
    return line


def wrapped(text: str, head: str, indent: int | None = None, width: int = WIDTH) -> list[str]:
    """``head`` then ``text`` wrapped to ``width`` columns, the next lines indented to ``indent``
    (default: under the text); words are never broken (a long name overflows instead)."""
    return textwrap.wrap(text, width, initial_indent=head,
                         subsequent_indent=" " * (len(head) if indent is None else indent),
                         break_long_words=False, break_on_hyphens=False) or [head.rstrip()]


def checks_lines(info: CaseInfo, width: int | None = WIDTH) -> list[str]:
    """``    checks: ...`` under a test's line (``ol check -v``), wrapped to ``width`` columns
    (None: one line)."""
    if not info.checks:
        return []
    return [f"    checks: {info.checks}"] if width is None else \
        wrapped(info.checks, "    checks: ", width=width)


def failures_and_summary(result: RunResult, width: int | None = None, whole: bool = True) -> str:
    """A block per failure, the notes, then the summary line (what follows the test lines).

    ``width``: every line within it, long ones wrapped with their continuation lines indented
    (``fit``; None: only the diagnosis is wrapped, to 100 columns). Unless ``whole``, a long list
    of numbers in a message or the diagnosis is cut (``shorten_values``) and a note says so."""
    cut = str if whole else shorten_values
    lines: list[str] = []
    if result.diagnosis:
        lines += ["", *diagnosis_lines(result, width or WIDTH, cut)]
    shortened = any(cut(d.text) != d.text for d in result.diagnosis)
    for t in result.failures():
        lines += ["", f"{t.outcome.value.upper()}: {t.name} ({t.kind.value})"]
        message = cut(t.message)
        shortened = shortened or message != t.message
        shown = dataclasses.replace(t, message=message)
        # Escaped before the split: a carriage return or a form feed is shown, not a line break.
        lines += [f"    {line}".rstrip()
                  for line in printable(failure_text(shown, result.module, result.diagnosis)).splitlines()]
    notes = [*result.notes, *([SHORTENED_NOTE] if shortened else [])]
    if notes:
        lines.append("")
        lines += [f"note: {note}" for note in notes]
    lines.append("")
    return fit(printable("\n".join(lines) + "\n"), width) + "\n".join(
        summary_lines(result, width)) + "\n"


def summary_lines(result: RunResult, width: int | None) -> list[str]:
    """The summary line; where it is wider than ``width``, its verdict (``(verdict: fail)``,
    ``(partial run: no verdict)``) goes whole onto the next line, so a search for it finds it."""
    line = printable(summary_line(result))
    if width is None or len(line) <= width:
        return [line]
    head, verdict = line.rsplit(" (", 1)
    return [*fit_line(head, width), *fit_line(f"    ({verdict}", width)]


def format_run(result: RunResult) -> str:
    """The run's line, its cases, one line per test, a block per failure, notes, the summary."""
    lines = [f"{result.module} against {result.target} ({result.workspace})",
             run_cases_line(result), *([result.error] if result.error else []), ""]
    width = max((len(t.name) for t in result.tests), default=0)
    lines += [test_line(t, width) for t in result.tests]
    return printable("\n".join(lines) + "\n") + failures_and_summary(result)


def rung_line(module: Module) -> str:
    """``rung R0: the student writes no tests here``."""
    what = RUNGS.get(module.rung)
    return f"rung {module.rung}: {what}" if what else f"rung {module.rung}"


def format_catalog(module: Module, cases: Iterable[Any], fmt: str = "text",
                   wide: bool = False, width: int = WIDTH) -> str:
    """The catalog table of ``module`` for ``ol tests``, in ``fmt`` (text, json or markdown).

    ``cases`` is what ``harness.engine.catalog.collect`` returns ((CaseInfo, fn) pairs) or plain
    ``CaseInfo``s; only the metadata is read. The text is a block per test, at most ``width``
    columns wide (100; ``COLUMNS`` in ``ol tests``); ``wide`` makes it one long row per test (for
    grep), the other formats ignore it.
    """
    infos = [c if isinstance(c, CaseInfo) else c[0] for c in cases]
    if fmt == "text":
        if wide:
            return printable(_catalog_wide(module, infos))
        return fit(printable(_catalog_text(module, infos, width)), width)
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


def _catalog_text(module: Module, infos: list[CaseInfo], width: int = WIDTH) -> str:
    """A block per test: its name and kind, then what it checks, why, and its pitfalls."""
    lines = _catalog_head(module, infos)
    for n, info in enumerate(infos):
        lines += [""] if n else []
        lines.append(f"{info.name} ({info.kind.value})")
        pitfalls = ", ".join(str(p) for p in info.pitfalls)
        for label, text in (("checks", info.checks), ("why", info.why), ("pitfalls", pitfalls)):
            if text:
                lines += wrapped(text, f"    {label + ':':<10}", width=width)
    for title, numbers in pitfall_groups(module):
        lines += ["", *wrapped(f"{title}:", "", width=width)]
        for p in numbers:
            lines += wrapped(module.pitfall_text(p), f"  {p}. ", width=width)
    if module.pitfalls:
        lines += ["", *wrapped(DIAGNOSIS_NOTE, "", width=width)]
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
