"""A Markdown summary of one run, fit for a CI step summary (``$GITHUB_STEP_SUMMARY``).

A submission's text cannot leave its place: names sit in code spans without backticks or pipes
(``md_code``), other cells and notes are ``md_cell``s (Markdown's own characters backslash-escaped),
the name in a failure's ``<summary>`` is ``html_text`` (raw HTML: entities), and a failure's
message is a fenced block longer than any run of backticks in it; all of it has its controls
escaped (``printable``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.engine.results import Diagnosis, RunResult, TestResult
from harness.escape import printable
from harness.report.common import (
    MARKERS,
    evidence_lines,
    html_text,
    md_cell,
    md_code,
    milliseconds,
    pitfall_line,
    run_cases_line,
    summary_line,
)


def to_markdown(result: RunResult) -> str:
    """A heading with the verdict, the counts, the cases, a table of tests, then each failure in
    ``<details>``."""
    verdict = {"pass": "PASS", "partial": "PARTIAL RUN (no verdict)", "error": "ERROR"}.get(
        result.verdict, "FAIL")
    lines = [
        f"### {md_cell(result.module)} against `{md_code(result.target)}`: {verdict}",
        "",
        md_cell(summary_line(result)),
        "",
        md_cell(run_cases_line(result)),
        "",
        *([md_cell(result.error), ""] if result.error else []),
        "| test | kind | result | time | pitfall |",
        "| --- | --- | --- | ---: | --- |",
    ]
    for t in result.tests:
        pitfall = (t.pitfall_label or str(t.pitfall)) if t.pitfall is not None and not t.ok else ""
        lines.append(f"| `{md_code(t.name)}` | {t.kind.value} | {MARKERS[t.outcome]} | "
                     f"{milliseconds(t.duration_s)} | {pitfall} |")
    if result.diagnosis:
        lines += ["", "**Diagnosis**", ""]
        lines += [f"- {md_cell(d.text)}" for d in result.diagnosis]
    for t in result.failures():
        lines += ["", *_details(t, result.module, result.diagnosis)]
    if result.notes:
        lines += ["", *(f"> note: {md_cell(n)}" for n in result.notes)]
    return "\n".join(lines) + "\n"


def _details(test: TestResult, module: str, diagnosis: Sequence[Diagnosis]) -> list[str]:
    message = printable(test.message.rstrip() or f"{test.outcome.value} (no message was recorded)")
    fence = "`" * max(3, _longest_backtick_run(message) + 1)
    out = [
        "<details>",
        f"<summary>{MARKERS[test.outcome]} {html_text(test.name)} ({test.kind.value})</summary>",
        "",  # GitHub renders Markdown inside <details> only after a blank line
        f"{fence}text",
        message,
        fence,
    ]
    line = pitfall_line(test, module, diagnosis)
    if line:
        out += ["", md_cell(line)]
    evidence = printable("\n".join(evidence_lines(test)))
    if evidence:
        fence = "`" * max(3, _longest_backtick_run(evidence) + 1)
        out += ["", f"{fence}text", evidence, fence]
    return out + ["", "</details>"]


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)

