"""The registry of report formats: for each type of result, the documents ol can write of it.

A result type is named as its JSON's ``$type`` tag names it (``RunResult``, ``GateResult``, ...;
``GradeOutcome`` for a grading run). Its formats are of two kinds:

- a *file* format is asked for with a flag and written where the user says (``ol check --junit
  FILE``): the CLI generates those flags from this table (``file_formats``), with their help;
- a *folder* format is written into the command's report folder under a name of its own
  (``lab-M07.6.html``; ``{module}`` is the result's module); a renderer may also return several
  files at once, ``{relative path: content}`` (a grading run's one Gradescope file per
  submission).

Every renderer takes the typed result (and, where the format says so, the ``Quotes`` its caller
gathered: ``harness.report.quotes``) and returns its text (or bytes: a PNG); none writes,
prints, reads a file or loads the course. One writer (``harness.commands.reports``) renders
every document asked for, then writes each atomically. The renderers are named, not imported:
``ol --help`` imports none of them (they pull in numpy and the engines' results).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.report.quotes import NO_QUOTES, Quotes

Rendered = str | bytes | Mapping[str, str | bytes]


@dataclass(frozen=True)
class Format:
    """One format of one result type: ``renderer`` is ``"module:function"`` under
    ``harness.report``; ``help`` a file format's flag help; ``file`` a folder format's file name;
    ``needs`` a package without which the format is left out, ``missing`` the note that says so;
    ``quotes``: the renderer also takes the result's ``Quotes``."""

    name: str
    renderer: str
    help: str = ""
    file: str = ""
    needs: str = ""
    missing: str = ""
    quotes: bool = False

    @property
    def flag(self) -> str:
        """The option that asks for a file format: ``--json``."""
        return f"--{self.name}"

    def render(self, result: Any, quotes: Quotes = NO_QUOTES, **context: Any) -> Rendered:
        """The document of ``result`` in this format; ``quotes`` is handed to a renderer that
        quotes (``self.quotes``), ``context`` to every one (a grading run's course module)."""
        module, _, function = self.renderer.partition(":")
        renderer = getattr(importlib.import_module(f"harness.report.{module}"), function)
        return renderer(result, quotes, **context) if self.quotes else renderer(result, **context)

    def file_name(self, module: str) -> str:
        return self.file.format(module=module)


def _file(name: str, renderer: str, what: str) -> Format:
    return Format(name, renderer, help=f"also write {what}")


FORMATS: dict[str, tuple[Format, ...]] = {
    "RunResult": (
        _file("json", "json_report:to_json_text", "the JSON report (the result, as the API returns it)"),
        _file("junit", "junit:run_junit", "a JUnit XML report (one test case per catalog test)"),
        _file("gradescope", "gradescope:to_gradescope", "a Gradescope results.json"),
    ),
    "MineResult": (
        _file("json", "own_tests:to_json_text", "the JSON report (with --mine)"),
        _file("gradescope", "own_tests:to_gradescope", "a Gradescope results.json (with --mine)"),
    ),
    "GateResult": (
        _file("json", "gate:to_gate_json", "the JSON report (every module's check)"),
        Format("junit", "gate:to_gate_junit", help="also write a JUnit XML report (one suite per "
               "module)", quotes=True),
        Format("markdown", "gate:to_gate_markdown",
               help="the Markdown summary (default: reports/gate-MILESTONE.md; it is also "
               "appended to $GITHUB_STEP_SUMMARY when that is set)"),
    ),
    "LabResult": (
        Format("json", "lab:lab_json", file="lab-{module}.json"),
        Format("stryker", "lab:stryker_json", file="mutation-report-{module}.json", quotes=True),
        Format("markdown", "lab:to_lab_markdown", file="lab-{module}.md"),
        Format("html", "lab_html:to_lab_html", file="lab-{module}.html", quotes=True),
    ),
    "MutmutAudit": (
        Format("json", "audit:audit_json", file="audit-mutmut-{module}.json"),
        Format("stryker", "audit:stryker_json", file="mutation-report-mutmut-{module}.json",
               quotes=True),
        Format("markdown", "audit:to_markdown", file="audit-mutmut-{module}.md"),
        Format("html", "audit:to_html", file="audit-mutmut-{module}.html"),
    ),
    "PowerAudit": (
        Format("json", "power:power_json", file="audit-power-{module}.json"),
        Format("markdown", "power:to_markdown", file="audit-power-{module}.md"),
        Format("png", "power:to_png", file="audit-power-{module}.png",
               needs="matplotlib", missing="no PNG: matplotlib is not installed "
               "(python3 -m pip install -e '.[plot]')"),
    ),
    "GradeOutcome": (
        Format("markdown", "grade_files:report_markdown", file="report.md"),
        Format("html", "grade_files:report_html", file="report.html"),
        Format("gradescope", "grade_files:gradescope_files", file="gradescope/"),
    ),
}


def file_formats(type_name: str) -> tuple[Format, ...]:
    """The formats of ``type_name`` asked for with a flag and a file (the CLI's report flags)."""
    return tuple(f for f in FORMATS[type_name] if not f.file)


def folder_formats(type_name: str) -> tuple[Format, ...]:
    """The formats of ``type_name`` written into a report folder under their own names."""
    return tuple(f for f in FORMATS[type_name] if f.file)


def format_named(type_name: str, name: str) -> Format:
    for fmt in FORMATS[type_name]:
        if fmt.name == name:
            return fmt
    raise KeyError(f"{type_name} has no format {name!r}")
