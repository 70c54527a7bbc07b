"""Small pieces every reporter shares: the summary line, pitfall lines, markers, durations."""

from __future__ import annotations

import json
from typing import Any

from harness.model import Outcome, RunResult, TestResult
from harness.report.escape import UNSAFE, printable

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
    """``M07.6: 17 passed, 2 failed (verdict: fail)``."""
    counts = f"{result.passed} passed, {result.failed} failed"
    return f"{result.module}: {counts} (verdict: {result.verdict})"


def pitfall_line(test: TestResult) -> str:
    """``see pitfall N: <text>``, or ``""`` when the result names no pitfall."""
    if test.pitfall is None:
        return ""
    text = test.pitfall_text or f"pitfall {test.pitfall}"
    return f"see pitfall {test.pitfall}: {text}"


def failure_text(test: TestResult) -> str:
    """The message, then the pitfall line: the whole story of one failure."""
    message = test.message.rstrip() or f"{test.outcome.value} (no message was recorded)"
    line = pitfall_line(test)
    return f"{message}\n{line}" if line else message


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


_MD_CELL = str.maketrans({"\\": "\\\\", "`": "\\`", "|": "\\|", "[": "\\[", "]": "\\]",
                         "&": "&amp;", "<": "&lt;", ">": "&gt;"})


def md_cell(text: str) -> str:
    """Text safe inside one Markdown table cell or list item: shown as written, on one line.

    Controls are escaped (``printable``), lines joined; backslashes, backticks, pipes and
    brackets are backslash-escaped (no code span, link or cell boundary can start inside it,
    and ``\\|`` cannot unescape a pipe); ``&``, ``<`` and ``>`` are entities (HTML is inert).
    """
    return " ".join(printable(text).split()).translate(_MD_CELL)


def md_code(text: str) -> str:
    """Text for a one-line code span in a table: no backticks, no pipes, no controls, one line."""
    return " ".join(printable(text).split()).replace("`", "'").replace("|", "/")
