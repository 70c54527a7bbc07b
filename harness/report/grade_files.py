"""The files of a gradebook's folder that are views of it, rendered after every ``ol grade`` run
(``harness.report.formats`` lists them):
the class report (``report.md``, ``report.html``: ``harness.report.class_report``) and one
Gradescope ``results.json`` per submission (``gradescope/NAME.json``:
``harness.report.gradescope``). The gradebook's own files (``gradebook.json``, ``gradebook.csv``,
``scores.csv``, ``runs/``) are written by the grading engine as submissions finish.
"""

from __future__ import annotations

from harness.engine.course import Module
from harness.escape import valid_text
from harness.grade.engine import GRADESCOPE_DIR, GradeOutcome, run_file_name
from harness.report.class_report import PitfallInfo, class_html, class_markdown
from harness.report.gradescope import to_gradescope

REPORT_MD, REPORT_HTML = "report.md", "report.html"


def pitfall_infos(module: Module) -> dict[str, PitfallInfo]:
    """Every pitfall of ``module`` by label: its one-line text and the chapter's section."""
    return {module.pitfall_label(n): PitfallInfo(module.pitfall_label(n), text, module.section_of(n))
            for n, text in sorted(module.pitfalls.items())}


def report_markdown(outcome: GradeOutcome, module: Module) -> str:
    """``report.md``: the class report of the whole gradebook."""
    return valid_text(class_markdown(outcome.book, pitfall_infos(module)))


def report_html(outcome: GradeOutcome, module: Module) -> str:
    """``report.html``: the class report of the whole gradebook, one self-contained page."""
    return valid_text(class_html(outcome.book, pitfall_infos(module)))


def gradescope_files(outcome: GradeOutcome, module: Module | None = None) -> dict[str, str]:
    """``gradescope/NAME.json`` of each submission of the gradebook in the folder, by its path
    under the gradebook's folder (none for an ``internal`` row, which is not graded, nor for a
    row whose run file is gone, nor for one no longer in the folder: the run removed its file)."""
    book = outcome.book
    files: dict[str, str] = {}
    for name in sorted(n for n, row in book.rows.items() if row.present):
        result = outcome.result_of(name)
        if result is not None:
            files[f"{GRADESCOPE_DIR}/{run_file_name(name)}"] = valid_text(to_gradescope(result))
    return files
