"""The files of a gradebook's folder that are views of it, rendered after every ``ol grade`` run:
the class report (``report.md``, ``report.html``: ``harness.report.class_report``) and one
Gradescope ``results.json`` per submission (``gradescope/NAME.json``:
``harness.report.gradescope``). The gradebook's own files (``gradebook.json``, ``gradebook.csv``,
``scores.csv``, ``runs/``) are written by the grading engine as submissions finish.
"""

from __future__ import annotations

from pathlib import Path

from harness.engine.course import Module
from harness.grade.engine import GradeOutcome, run_file_name
from harness.grade.gradebook import clean
from harness.report.class_report import PitfallInfo, class_html, class_markdown
from harness.report.gradescope import to_gradescope

REPORT_MD, REPORT_HTML, GRADESCOPE_DIR = "report.md", "report.html", "gradescope"


def pitfall_infos(module: Module) -> dict[str, PitfallInfo]:
    """Every pitfall of ``module`` by label: its one-line text and the chapter's section."""
    return {module.pitfall_label(n): PitfallInfo(module.pitfall_label(n), text, module.section_of(n))
            for n, text in sorted(module.pitfalls.items())}


def grade_files(outcome: GradeOutcome, module: Module) -> list[tuple[Path, str]]:
    """``(path, text)`` of every view to write: the class report of the whole gradebook, and the
    Gradescope results of each of its submissions (none for an ``internal`` row, which is not
    graded, nor for a row whose run file is gone)."""
    book = outcome.book
    data = clean(book.to_json())
    known = pitfall_infos(module)
    files = [(book.out / REPORT_MD, class_markdown(data, known)),
             (book.out / REPORT_HTML, class_html(data, known))]
    for name in sorted(book.rows):
        result = outcome.result_of(name)
        if result is not None:
            files.append((book.out / GRADESCOPE_DIR / run_file_name(name), to_gradescope(result)))
    return [(path, clean(text)) for path, text in files]
