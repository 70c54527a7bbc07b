"""Reporters: each turns a typed result into text; none writes, prints or reads a file.

``formats.py`` is the registry of the formats of each result type (the CLI's report flags come
from it; ``harness.commands.reports`` writes them). ``render(fmt, results)`` renders runs of
``ol check`` in one of ``RUN_FORMATS``, several runs in one document where the format allows.
Nothing is imported here at import time: ``ol --help`` imports the registry, not the reporters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.engine.results import RunResult

RUN_FORMATS = ("text", "json", "junit", "markdown", "gradescope")


def render(fmt: str, results: Sequence[RunResult]) -> str:
    """The report of ``results`` in format ``fmt`` (one of ``RUN_FORMATS``)."""
    from harness.report.common import json_text
    from harness.report.gradescope import to_gradescope
    from harness.report.json_report import to_json_text
    from harness.report.junit import to_junit
    from harness.report.markdown import to_markdown
    from harness.report.text import format_run

    if fmt not in RUN_FORMATS:
        raise HarnessError(f"unknown report format '{fmt}'", f"use one of: {', '.join(RUN_FORMATS)}")
    if fmt == "text":
        return "\n".join(format_run(r) for r in results)
    if fmt == "markdown":
        return "\n".join(to_markdown(r) for r in results)
    if fmt == "junit":
        return to_junit(results)
    if fmt == "json":  # one run: its object; several: an array of them (one JSON document)
        return to_json_text(results[0]) if len(results) == 1 else \
            json_text([r.to_json() for r in results])
    if len(results) != 1:
        raise HarnessError(f"a {fmt} report holds exactly one run, not {len(results)}",
                           "write one report per workspace")
    return to_gradescope(results[0])


__all__ = ["RUN_FORMATS", "render"]
