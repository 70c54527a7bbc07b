"""Reporters: each turns a result into a string; ``harness.files`` owns every file written.

``render(fmt, results)`` is the one entry point commands need: ``fmt`` is one of ``FORMATS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness.engine.results import RunResult
from harness.errors import HarnessError
from harness.report.common import json_text
from harness.report.gradescope import to_gradescope
from harness.report.json_report import to_json_text
from harness.report.junit import to_junit
from harness.report.markdown import to_markdown
from harness.report.text import format_catalog, format_run


def _each(one: Callable[[RunResult], str], sep: str) -> Callable[[Sequence[RunResult]], str]:
    return lambda results: sep.join(one(r) for r in results)


def _json(results: Sequence[RunResult]) -> str:
    """One run: its object; several: an array of them (still one JSON document)."""
    if len(results) == 1:
        return to_json_text(results[0])
    return json_text([r.to_json() for r in results])


def _one(one: Callable[[RunResult], str], fmt: str) -> Callable[[Sequence[RunResult]], str]:
    def render_one(results: Sequence[RunResult]) -> str:
        if len(results) != 1:
            raise HarnessError(f"a {fmt} report holds exactly one run, not {len(results)}",
                               "write one report per workspace")
        return one(results[0])

    return render_one


FORMATS: dict[str, Callable[[Sequence[RunResult]], str]] = {
    "text": _each(format_run, "\n"),
    "json": _json,
    "junit": to_junit,
    "markdown": _each(to_markdown, "\n"),
    "gradescope": _one(to_gradescope, "gradescope"),
}


def render(fmt: str, results: Sequence[RunResult]) -> str:
    """The report of ``results`` in format ``fmt``."""
    try:
        reporter = FORMATS[fmt]
    except KeyError:
        known = ", ".join(FORMATS)
        raise HarnessError(f"unknown report format '{fmt}'", f"use one of: {known}") from None
    return reporter(results)


__all__ = ["FORMATS", "format_catalog", "format_run", "render", "to_gradescope", "to_json_text",
           "to_junit", "to_markdown"]
