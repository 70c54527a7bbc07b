"""Small pieces every reporter shares: the summary line, pitfall lines, markers, durations."""

from __future__ import annotations

import html
import json
import re
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from harness.engine.results import WRONG, Diagnosis, Outcome, RunResult, TestResult, score_text
from harness.escape import UNSAFE, printable

# Plain markers (no emoji): they read the same in a terminal, a CI log and a step summary.
MARKERS = {
    Outcome.PASSED: "PASS",
    Outcome.FAILED: "FAIL",
    Outcome.ERROR: "ERROR",
    Outcome.TIMEOUT: "TIMEOUT",
    Outcome.CRASHED: "CRASH",
}


def json_text(data: Any, *, allow_nan: bool = True) -> str:
    """A JSON report's text: indent 2, non-ASCII kept, a trailing newline.

    The data is kept exactly (a consumer decodes the very message the code produced), but the
    text holds no character ``printable`` would escape: json escapes the C0 controls itself, and
    DEL, the C1 and bidi controls and lone surrogates are written as ``\\uXXXX`` escapes, so the
    file shows safely in a terminal and always encodes as UTF-8. (They occur only inside strings.)
    """
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=allow_nan) + "\n"
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def summary_line(result: RunResult) -> str:
    """``M07.6: 17 passed, 2 failed, score 21/25 (verdict: fail)``; a partial run says how many
    tests did not run, why, and that it is partial: ``M07.6: 1 passed, 0 failed, 19 not run (-k
    chi), score 1/25 (partial run: no verdict)``, never ``verdict: pass``; a check that could not
    start says so. The score is the points of the tests that passed (course.toml's ``[points]``)
    of the whole catalog's."""
    if result.error:
        return f"{result.module}: no test ran, the check could not start (verdict: error)"
    counts = f"{result.passed} passed, {result.failed} failed"
    if result.not_run:
        by = f" ({', '.join(result.not_run_by)})" if result.not_run_by else ""
        counts += f", {result.not_run} not run{by}"
    counts += f", score {score_text(result.score, result.max_score)}"
    if result.partial:
        verdict = "partial run: no verdict" if result.verdict == "partial" else \
            f"partial run; verdict: {result.verdict}"
    else:
        verdict = f"verdict: {result.verdict}"
    return f"{result.module}: {counts} ({verdict})"


def provenance_lines(result: RunResult) -> list[str]:
    """``python: 3.12.1 (CPython)`` and ``platform: Linux-...``: what ran the check (the same
    code can pass on one Python and fail on another: builtin ``sum()`` changed in 3.12)."""
    return [f"python: {result.python}", f"platform: {result.platform}"]


# -- which cases a run used, and how to replay it -------------------------------------------------

def run_replay(result: RunResult) -> str:
    """``ol check MODULE --workspace WS [--ref-deps] [-k PAT] --seed N`` (``--target T`` for the
    reference or a mutant): the same catalog on the same cases against the same code
    (``RunResult.replay``)."""
    return result.replay


def cases_line(seed: int | None, replay: str | None = None) -> str:
    """``cases: public`` or ``cases: hidden, seed 1234 (replay: ol check M07.6 --seed 1234)``."""
    head = "cases: public" if seed is None else f"cases: hidden, seed {seed}"
    return head + (f" (replay: {replay})" if replay else "")


def run_cases_line(result: RunResult, always: bool = False) -> str:
    """The cases line of one run: the replay command when the cases were hidden ones (the
    public cases are what ``ol check`` runs by default), or ``always`` (a report read elsewhere:
    the replay names the options the run was given)."""
    return cases_line(result.seed, run_replay(result) if always or result.seed is not None
                      else None)


MAX_OUTPUT_LINES = 20


def pitfall_line(test: TestResult, module: str = "MODULE",
                 diagnosis: Sequence[Diagnosis] = ()) -> str:
    """``see pitfall N: <text>`` (``see ol pitfall N (ol's own, ...)`` for one not in the
    chapter's table), or ``""`` when the result names no pitfall.

    With the run's ``diagnosis``: a wrong answer whose check's pitfall no entry names was put
    down to another finding (a failing test no finding accounts for gets an entry of its own,
    with its check's pitfall; the last entry names the pitfalls of those not shown), so the
    line says what the check guards and sends the student to the diagnosis, not to a mistake
    the code does not make (review F4: a draw-order bug sent to the validation pitfall)."""
    if test.pitfall is None:
        return ""
    label = test.pitfall_label or f"pitfall {test.pitfall}"
    named = {p for d in diagnosis for p in d.pitfalls}
    if diagnosis and test.category == WRONG and test.pitfall not in named:
        mistakes = [d.label for d in diagnosis if d.kind in ("pitfall", "unstable") and d.label]
        which = f" ({', '.join(mistakes)})" if mistakes else ""
        return (f"this check guards {label}, but the diagnosis above finds another mistake "
                f"behind this failure{which}: start there")
    text = test.pitfall_text or label
    own = f" (ol's own, listed by `ol tests {module}`)" if label.startswith("ol ") else ""
    return f"see {label}{own}: {text}"


def category_line(test: TestResult) -> str:
    """A failure that is no wrong answer says so, instead of naming a pitfall."""
    words = {
        "raised": "your code raised an exception of its own (a bug in the code, not a pitfall)",
        "crashed": "your code crashed (no pitfall applies)",
        "exited": "your code tried to exit the interpreter (no pitfall applies)",
        "timeout": "your code did not finish in time (no pitfall applies)",
        "not_implemented": "this part of your code is not written yet",
    }
    return words.get(test.category, "") if test.category and test.category != WRONG else ""


def evidence_lines(test: TestResult) -> list[str]:
    """The student's own evidence: where their code raised, and what it printed (capped)."""
    lines: list[str] = []
    if test.frames:
        lines.append("where your code raised (most recent call last):")
        for f in test.frames:
            lines.append(f"  {f.file}:{f.line} in {f.function}")
            if f.source:
                lines.append(f"    {f.source}")
    if test.output:
        shown = test.output.splitlines()
        more = len(shown) - MAX_OUTPUT_LINES
        lines.append("your code printed:")
        lines += [f"  | {quoted(line)}" for line in shown[:MAX_OUTPUT_LINES]]
        if more > 0 or test.output_dropped:
            dropped = f"{more} more lines" if more > 0 else ""
            chars = f"{test.output_dropped} more characters" if test.output_dropped else ""
            lines.append(f"  ({' and '.join(x for x in (dropped, chars) if x)} not shown)")
    return lines


def quoted(line: str) -> str:
    """A line the code under test printed, as ol shows it: controls escaped by the caller, and
    the words of ol's own summary line (``(verdict: pass)``) broken with a backslash, so a
    printed line can never read as ol's verdict, even to a tool that searches the output."""
    return line.replace("verdict:", "verdict\\:")


def failure_text(test: TestResult, module: str = "MODULE",
                 diagnosis: Sequence[Diagnosis] = ()) -> str:
    """The message, the pitfall (or plain category) line, then the student's own evidence
    (``diagnosis``: the run's, which the pitfall line defers to, see ``pitfall_line``)."""
    message = test.message.rstrip() or f"{test.outcome.value} (no message was recorded)"
    lines = [message]
    line = pitfall_line(test, module, diagnosis) or category_line(test)
    if line:
        lines.append(line)
    lines += evidence_lines(test)
    return "\n".join(lines)


def diagnosis_lines(result: RunResult, width: int | None = 100,
                    shorten: Callable[[str], str] = str) -> list[str]:
    """``diagnosis:`` and one item per explanation, best first (``[]`` when there is none); each
    item wrapped to ``width`` columns under its text (None: one line each), its text and
    evidence through ``shorten`` (the terminal's long values cut, ``harness.report.text``)."""
    if not result.diagnosis:
        return []
    lines = ["diagnosis:"]
    for n, d in enumerate(result.diagnosis, 1):
        head, text = f"  {n}. ", shorten(d.text)
        if width is None:
            lines.append(head + text)
        else:
            lines += textwrap.wrap(text, width, initial_indent=head, subsequent_indent="     ",
                                   break_long_words=False, break_on_hyphens=False) or [head]
        lines += [f"     also: {shorten(e)}" for e in d.evidence[1:] if e not in d.text]  # once
    return lines



def milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# The characters Markdown (CommonMark and GitHub's tables) gives a meaning to inside a line: code
# spans, emphasis and strike-through, links, raw HTML and autolinks, entities, table cells, math.
_MD_INLINE = re.compile(r"[\\`*_~\[\]<>&|$]")
# What a line may start with to become a heading, a quote, a list item or a thematic break.
_MD_LINE_START = re.compile(r"^(\d{1,9}[.)]|[#+\-=])")


def _md_escape(match: re.Match[str]) -> str:
    char, text, at = match.group(), match.string, match.start()
    if char == "_" and 0 < at < len(text) - 1 and text[at - 1].isalnum() \
            and text[at + 1].isalnum():
        return char  # p_x: an underscore inside a word neither opens nor closes emphasis
    return "\\" + char


def md_table(head: str, align: str, rows: list[str], empty: str, intro: str = "") -> list[str]:
    """A Markdown table's lines (``head`` and ``align`` as written, one line per row), after
    ``intro`` and a blank line when given; ``[empty]`` when there is no row."""
    if not rows:
        return [empty]
    return [*([intro, ""] if intro else []), head, align, *rows]


def md_cell(text: str) -> str:
    """Text safe inside one Markdown table cell or list item: shown as written, on one line.

    Controls are escaped (``printable``), lines joined. Every character Markdown would read as
    markup is backslash-escaped, so the rendered text reads as written (``<=`` shows as ``<=``,
    not ``&lt;=``): no code span, emphasis, link, HTML tag, entity or cell boundary can start
    inside it (``\\<script>`` is the text ``<script>``; a backslash is doubled, so ``\\|``
    cannot unescape a pipe); an underscore inside a word (``p_x``) is left alone, it is no
    emphasis. A leading ``#``, ``>``, ``+``, ``-``, ``=`` or ``1.`` is escaped too, for text that
    begins a line. Not for raw HTML (``html_text``) nor inside a code span (``md_code``).
    """
    line = " ".join(printable(text).split())
    line = _MD_INLINE.sub(_md_escape, line)
    return _MD_LINE_START.sub(lambda m: f"{m.group()[:-1]}\\{m.group()[-1]}", line, count=1)


def html_text(text: str) -> str:
    """Text for raw HTML in a Markdown file (``<summary>``): one line, ``&``, ``<`` and ``>`` as
    entities (Markdown is not read inside an HTML block, so backslashes would show)."""
    return html.escape(" ".join(printable(text).split()), quote=False)


def md_code(text: str) -> str:
    """Text for a one-line code span in a table: no backticks, no pipes, no controls, one line."""
    return " ".join(printable(text).split()).replace("`", "'").replace("|", "/")
