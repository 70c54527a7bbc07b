"""Markdown escaped for Markdown (issue #15): a cell reads as written once rendered (``<=``, not
``&lt;=``), and a submission's text still cannot become markup (no tag, link, emphasis, code
span or extra cell). Rendered with markdown-it-py (CommonMark with GitHub's tables), which
comes with rich; where it is missing only the rendering checks are skipped."""

from __future__ import annotations

import html
import re

import pytest

from harness.engine.results import Kind, Outcome, RunResult, TestResult
from harness.report.common import html_text, md_cell
from harness.report.markdown import to_markdown

HOSTILE_TEXTS = [
    "discrete uniforms make <= wrong",
    "u < r & r = 0 < 1, &amp; stays &amp;",
    "<script>alert(1)</script> <img src=x onerror=alert(1)>",
    "a \\| b | c `code` ``two`` [link](http://e) ![img](http://e/i.png)",
    "*em* **strong** _u_ __uu__ ~~gone~~ p_x q_x_ _x $m$",
    "# not a heading",
    "> not a quote",
    "- not a list",
    "12. not a list either",
    "--- not a rule",
    "back\\slash \\* stays \\",
]


def _render_cell(text: str) -> str:
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough")
    return md.render(f"| h |\n| --- |\n| {md_cell(text)} |\n")


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_a_cell_renders_as_the_text_itself_and_stays_one_cell(text):
    page = _render_cell(text)
    cells = re.findall(r"<td>(.*?)</td>", page, re.DOTALL)
    assert len(cells) == 1, page  # no pipe of the text split the cell
    assert re.findall(r"<(\w+)", cells[0]) == []  # no tag: no link, emphasis, code, HTML
    assert html.unescape(cells[0]) == " ".join(text.split())


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_a_line_that_begins_with_the_text_is_a_plain_paragraph(text):
    markdown_it = pytest.importorskip("markdown_it")
    page = markdown_it.MarkdownIt("commonmark").enable("strikethrough").render(md_cell(text))
    assert page.startswith("<p>") and re.findall(r"<(\w+)", page) == ["p"], page
    assert html.unescape(page.removeprefix("<p>").removesuffix("</p>\n")) == " ".join(text.split())


def test_the_escapes_are_markdown_backslashes_and_words_keep_their_underscores():
    assert md_cell("u <= r & p_x") == "u \\<= r \\& p_x"
    assert md_cell("<script>") == "\\<script\\>"
    assert md_cell("_x_ q_x_") == "\\_x\\_ q_x\\_"
    assert md_cell("1. a") == "1\\. a" and md_cell("# h") == "\\# h"


def test_the_summary_of_a_failure_is_raw_html_with_entities():
    """Markdown is not read inside ``<details>`` up to its blank line: the name is HTML text."""
    name = "test_<b>x</b>&`y`|z"
    assert html_text(name) == "test_&lt;b&gt;x&lt;/b&gt;&amp;`y`|z"
    run = RunResult("M07.6", "/w", "student",
                    (TestResult(name, Kind.UNIT, Outcome.FAILED, 0.0, "wrong: u <= r"),))
    text = to_markdown(run)
    assert "<summary>FAIL test_&lt;b&gt;x&lt;/b&gt;&amp;`y`|z (unit)</summary>" in text
    outside_code = [line for line in text.splitlines() if not line.startswith("| `")]
    assert "<b>" not in "\n".join(outside_code)  # in the table it is in a code span: text
