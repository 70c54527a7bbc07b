"""Small pieces every reporter shares: the summary line, pitfall lines, markers, durations."""

from __future__ import annotations

import json
from typing import Any

from harness.model import Outcome, RunResult, TestResult

# Plain markers (no emoji): they read the same in a terminal, a CI log and a step summary.
MARKERS = {
    Outcome.PASSED: "PASS",
    Outcome.FAILED: "FAIL",
    Outcome.ERROR: "ERROR",
    Outcome.TIMEOUT: "TIMEOUT",
    Outcome.CRASHED: "CRASH",
}


def json_text(data: Any, *, allow_nan: bool = True) -> str:
    """A JSON report's text: indent 2, non-ASCII kept, a trailing newline."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=allow_nan) + "\n"


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


def md_cell(text: str) -> str:
    """Text safe inside one Markdown table cell: pipes escaped, lines joined, HTML inert."""
    text = " ".join(text.split())
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
