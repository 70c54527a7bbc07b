"""The class report of ``ol grade`` (#26 item 3): a gradebook seen as a whole class, in Markdown
and in HTML (rendered in headless Chromium).

The gradebook is built by hand, typed (a ``Gradebook`` of ``GradeRow``s): passes, fails behaving
like pitfalls (some through the others that answer alike), a timeout, a crash, a check stopped
past its budget, a refusal, a syntax error, an internal failure, identical submissions and
skipped entries, and a hostile name and messages full of Markdown and HTML. Every count below is
worked out by hand from it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from test_lab_reports import chromium, color_counts, png_pixels, run_chromium

from harness.engine.results import Verdict
from harness.grade.gradebook import Gradebook
from harness.grade.row import GradeRow
from harness.report.class_report import (
    BAR_COLOR,
    CHAR_EM,
    FLAG_NOTE,
    PitfallInfo,
    class_html,
    class_markdown,
    class_view,
    score_bins,
)
from harness.report.common import md_cell

HOSTILE = "<script>alert(1)</script>|x"
TESTS = ["t_hand", "t_strict", "t_residual", "t_norm", "t_rate", "t_shape"]
REFUSED = "python/`tinyllm`|x is a symbolic link <b>not bold</b>"
SYNTAX = ("python/tinyllm/prob/rejection.py:3: SyntaxError: invalid syntax in `return a | b` "
          "```fenced``` and a very long tail " + "that goes on " * 12)
BUDGET = ("the check did not finish within the submission's budget of 60 s "
          "(--submission-timeout); it was stopped")
PITFALLS = {
    "pitfall 1": PitfallInfo("pitfall 1", "accepting on u <= r: a token with p_x = 0 is accepted",
                             "5. Pitfalls; 2.3 Accept, or draw from the residual"),
    "pitfall 3": PitfallInfo("pitfall 3", "residual max(0, q - p) or |p - q|",
                             "5. Pitfalls; 2.4 The residual"),
    "pitfall 4": PitfallInfo("pitfall 4", "forgetting to normalize the residual",
                             "5. Pitfalls; 2.4 The residual"),
    "ol pitfall 16": PitfallInfo("ol pitfall 16", "arithmetic in float32 or bfloat16",
                                 "ol's own (ol tests M07.6)"),
}


def entry(label: str, *also: str) -> dict[str, Any]:
    return {"kind": "pitfall", "pitfall": int(label.split()[-1]), "label": label,
            "also": [int(a.split()[-1]) for a in also], "also_labels": list(also),
            "pitfall_text": f"the gradebook's text of {label}", "text": "your code behaves like ..."}


def row(name: str, verdict: str, score: float, bad: dict[str, str] | None = None, *,
        pitfalls: list[dict[str, Any]] = (), flags: list[tuple[str, str]] = (), message: str = "",
        shape: str = "workspace", ran: bool = True, content_hash: str = "c0ffee") -> GradeRow:
    """One gradebook row; ``bad``: the tests that did not pass and their outcome (the others
    passed), when the catalog ran (``ran``)."""
    tests = {t: (bad or {}).get(t, "passed") for t in TESTS} if ran else {}
    return GradeRow(submission=name, verdict=Verdict(verdict), score=score,
                    passed=sum(o == "passed" for o in tests.values()),
                    failed=sum(o != "passed" for o in tests.values()), tests=tests,
                    message=message, time_s=1.5, content_hash=content_hash, context="ctx",
                    graded_at="2026-12-01T10:00:00+00:00", seed=1234, pitfalls=tuple(pitfalls),
                    flags=tuple({"kind": "identical", "to": to, "how": how} for to, how in flags),
                    shape=shape, max_score=10)


def gradebook(rows: list[GradeRow], tests: list[str] = TESTS, points: dict[str, float] | None = None,
              skipped: list[dict[str, str]] = (), seed: int | None = 1234) -> Gradebook:
    """A gradebook of ``rows`` (its catalog worth 10 points unless ``points`` says otherwise)."""
    return Gradebook(Path("reports/grade-M07.6-subs"), "M07.6", "subs", {"seed": seed}, "ctx",
                     list(tests), {r.submission: r for r in rows},
                     points={"t_hand": 5.0} if points is None else points, skipped=list(skipped))


def make_book() -> Gradebook:
    rows = [
        row("ann", "pass", 10, flags=[("reference", "bytes")]),
        row("jon", "pass", 10, flags=[("reference", "syntax tree")]),
        row("bob", "fail", 8, {"t_strict": "failed", "t_hand": "failed"},
            pitfalls=[entry("pitfall 1")], message="t_strict: accepted on u = r"),
        row(HOSTILE, "fail", 8, {"t_strict": "failed"}, pitfalls=[entry("pitfall 1")],
            flags=[("bob", "bytes")], message="t_strict: `code` | <i>pipe</i>"),
        row("cat", "fail", 6, {"t_residual": "failed", "t_norm": "failed"},
            pitfalls=[entry("pitfall 3", "ol pitfall 16"), entry("pitfall 4")],
            flags=[("dan", "bytes")], shape="zip"),
        row("dan", "fail", 6, {"t_residual": "failed", "t_norm": "failed"},
            pitfalls=[entry("pitfall 3", "ol pitfall 16"), entry("pitfall 4")],
            flags=[("cat", "bytes")], shape="tar.gz"),
        row("eve", "fail", 7, {"t_residual": "failed"}, pitfalls=[entry("ol pitfall 16", "pitfall 3")]),
        row("fay", "fail", 5, {"t_residual": "failed"},
            pitfalls=[entry("pitfall 3", "pitfall 3"), entry("pitfall 3")], flags=[("gus", "syntax tree")]),
        row("gus", "fail", 5, {"t_residual": "failed"}, pitfalls=[entry("pitfall 3")],
            flags=[("fay", "syntax tree")]),
        row("hal", "fail", 5, {"t_residual": "failed"}, pitfalls=[entry("pitfall 3")],
            flags=[("gus", "bytes")]),
        row("ivy", "fail", 7, {"t_rate": "timeout"}, message="t_rate: did not finish in 10 s"),
        row("kim", "fail", 9, {"t_strict": "crashed", "t_shape": "skipped"},
            message="t_strict: the worker crashed (signal 11)"),
        row("leo", "fail", 0, ran=False, message=BUDGET),
        row("oli", "fail", 9, {"t_rate": "failed", "t_hand": "error"},
            pitfalls=[{"kind": "unexplained", "pitfall": None, "label": "", "also": [],
                       "also_labels": [], "pitfall_text": "", "text": "no pitfall explains it"}]),
        row("rex", "error", 0, ran=False, message=REFUSED, content_hash="refused-0123"),
        row("ned", "error", 0, ran=False, message=SYNTAX, shape="file"),
        row("max", "internal", 0, ran=False, message="the grading process exited (status 1)"),
    ]
    return gradebook(rows, skipped=[{"name": "notes|`x`.txt", "why": "not a folder"},
                                    {"name": ".grades", "why": "the gradebook's own folder"}])


@pytest.fixture
def book() -> Gradebook:
    return make_book()


# -- Markdown -------------------------------------------------------------------------------------

def sections(text: str) -> dict[str, list[str]]:
    """The lines of each ``## `` section, blank lines left out; the title's under ``""``."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:]
            out[current] = []
        elif line.strip():
            out[current].append(line)
    return out


def table(lines: list[str]) -> list[list[str]]:
    """The body cells of the Markdown table among ``lines`` (split on unescaped pipes)."""
    rows = [line for line in lines if line.startswith("| ")][2:]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in rows]


def test_the_sections_come_in_order_the_pitfalls_right_after_the_counts(book):
    text = class_markdown(book, PITFALLS)
    assert text.startswith("# Class report: M07.6\n")
    assert list(sections(text)) == ["", "What the code behaves like, per pitfall", "Score distribution",
                                    "Tests that failed", "Timed out, crashed, refused, errors",
                                    "Identical submissions", "Skipped"]


def test_the_title_names_module_folder_cases_and_counts_per_verdict(book):
    head = sections(class_markdown(book, PITFALLS))[""]
    assert head == ["# Class report: M07.6", "- submissions: `subs`", "- hidden cases of seed 1234",
                    "- 17 submissions: 2 pass, 12 fail, 2 error, 1 internal",
                    "- handed in as: 14 workspace, 1 zip, 1 tar.gz, 1 file"]


def test_each_pitfall_counts_a_submission_once_whether_best_match_or_alike(book):
    lines = sections(class_markdown(book, PITFALLS))["What the code behaves like, per pitfall"]
    hostile = md_cell(HOSTILE)
    assert table(lines) == [
        ["pitfall 3", "6", "5", "residual max(0, q - p) or \\|p - q\\|", "5\\. Pitfalls; 2.4 The residual",
         "cat, dan, eve, fay, gus, hal"],
        ["ol pitfall 16", "3", "1", "arithmetic in float32 or bfloat16", "ol's own (ol tests M07.6)",
         "cat, dan, eve"],
        ["pitfall 1", "2", "2", "accepting on u \\<= r: a token with p_x = 0 is accepted",
         "5\\. Pitfalls; 2.3 Accept, or draw from the residual", f"{hostile}, bob"],
        ["pitfall 4", "2", "0", "forgetting to normalize the residual", "5\\. Pitfalls; 2.4 The residual",
         "cat, dan"],
    ]
    assert lines[-1] == "Failing, and named by no pitfall: oli."


def test_a_pitfall_the_course_does_not_describe_keeps_the_gradebooks_text(book):
    view = class_view(book, {})
    assert [(p.label, p.text, p.section) for p in view.pitfalls][:2] == [
        ("pitfall 3", "the gradebook's text of pitfall 3", ""),
        ("ol pitfall 16", "the gradebook's text of ol pitfall 16", "")]


def test_the_score_histogram_has_a_bin_per_score(book):
    lines = sections(class_markdown(book, PITFALLS))["Score distribution"]
    assert lines[0] == ("score out of 10; 16 submissions (1 without a score: not graded by the "
                        "harness).")
    bins = {cells[0]: int(cells[1]) for cells in table(lines)}
    assert bins == {"0": 3, "1": 0, "2": 0, "3": 0, "4": 0, "5": 3, "6": 2, "7": 2, "8": 2, "9": 2,
                    "10": 2}
    bars = {cells[0]: cells[2] for cells in table(lines)}
    assert bars["0"] == "#" * 40 and bars["6"] == "#" * 27 and bars["1"] == ""


def test_range_bins_for_scores_that_are_not_whole_numbers():
    bins, values = score_bins([0.0, 2.4, 2.5, 37.5, 40.0, 41.0, -1.0], 40.0)
    assert not values
    assert [b.label for b in bins][:3] == ["0\u20134", "4\u20138", "8\u201312"]
    # each bin holds its low end, the last its high end too; -1 and 41 are counted at the ends
    assert [b.count for b in bins] == [4, 0, 0, 0, 0, 0, 0, 0, 0, 3]
    bins, values = score_bins([0.5, 1.0], 1.0)
    assert not values and bins[5].count == 1 and bins[9].count == 1


def test_each_test_counts_its_failures_timeouts_and_crashes_most_failed_first(book):
    lines = sections(class_markdown(book, PITFALLS))["Tests that failed"]
    assert table(lines) == [
        ["`t_residual`", "6", "6", "0", "0", "13"],
        ["`t_strict`", "3", "2", "0", "1", "13"],
        ["`t_hand`", "2", "2", "0", "0", "13"],
        ["`t_norm`", "2", "2", "0", "0", "13"],
        ["`t_rate`", "2", "1", "1", "0", "13"],
    ]
    assert lines[-1] == "Passed by every submission that ran them: `t_shape`."
    assert class_view(book, PITFALLS).clean_tests == ["t_shape"]


def test_who_timed_out_crashed_was_refused_errored_or_not_graded(book):
    lines = sections(class_markdown(book, PITFALLS))["Timed out, crashed, refused, errors"]
    cells = table(lines)
    assert [c[:2] for c in cells] == [
        ["ivy", "timed out (1 test)"],
        ["leo", "timed out (stopped past the submission's budget)"],
        ["kim", "crashed (1 test)"],
        ["rex", "refused"],
        ["ned", "error"],
        ["max", "internal (the harness could not grade it; graded again next run)"],
    ]
    assert cells[3][2] == "python/\\`tinyllm\\`\\|x is a symbolic link \\<b\\>not bold\\</b\\>"
    ned = cells[4][2]
    assert ned.endswith("\u2026") and len(ned.replace("\\", "")) == 120
    assert ned.startswith("python/tinyllm/prob/rejection.py:3: SyntaxError: invalid syntax in "
                          "\\`return a \\| b\\` \\`\\`\\`fenced\\`\\`\\`")


def test_identical_submissions_are_grouped_and_a_flag_is_no_verdict(book):
    lines = sections(class_markdown(book, PITFALLS))["Identical submissions"]
    assert lines == [f"> {md_cell(FLAG_NOTE)}",
                     f"- identical to each other (the same bytes): {md_cell(HOSTILE)}, bob",
                     "- identical to each other (the same bytes): cat, dan",
                     "- identical to each other (the same syntax tree): fay, gus, hal",
                     "- identical to the reference: ann (the same bytes), jon (the same syntax tree)"]
    assert "information, not a verdict" in FLAG_NOTE


def test_skipped_entries_and_why(book):
    lines = sections(class_markdown(book, PITFALLS))["Skipped"]
    assert table(lines) == [["notes\\|\\`x\\`.txt", "not a folder"],
                            [".grades", "the gradebook's own folder"]]


def test_markdown_escapes_every_name_and_message(book):
    text = class_markdown(book, PITFALLS)
    assert "<script>" not in text and "<b>" not in text and "<i>" not in text
    assert md_cell(HOSTILE) == "\\<script\\>alert(1)\\</script\\>\\|x" and md_cell(HOSTILE) in text
    # every row of every table has as many cells as its header: no pipe of a submission's split one
    for block in re.findall(r"(?:^\|.*\n)+", text, flags=re.M):
        widths = {len(re.split(r"(?<!\\)\|", line)) for line in block.splitlines()}
        assert len(widths) == 1, block


def test_a_gradebook_without_flags_or_skipped_entries_says_so(book):
    rows = [r.with_(flags=(), shape="") for r in book.rows.values()]
    s = sections(class_markdown(gradebook(rows), PITFALLS))
    assert s["Identical submissions"][1:] == ["No submission is flagged identical."]
    assert s["Skipped"] == ["Nothing in the submissions folder was skipped."]
    assert "handed in as" not in class_markdown(gradebook(rows), PITFALLS)
    assert "No submission is flagged identical." in class_html(gradebook(rows), PITFALLS)


def test_an_empty_gradebook_says_so_in_every_section():
    book = gradebook([], seed=None)
    s = sections(class_markdown(book, {}))
    assert s[""][2:4] == ["- the public cases", "- 0 submissions: 0 pass, 0 fail, 0 error"]
    assert s["What the code behaves like, per pitfall"] == [
        "No submission's code behaves like a pitfall."]
    assert s["Timed out, crashed, refused, errors"] == ["None."]
    # the note an empty gradebook has always had (kept byte for byte)
    assert s["Score distribution"][0] == ("score: tests passed, out of 6 (this gradebook records no "
                                          "scores); 0 submissions.")
    page = Page()
    page.feed(class_html(book, {}))
    assert "svg" in page.tags


def test_text_the_gradebook_holds_is_made_valid_as_its_json_would_be(book):
    """A folder name that is not UTF-8 (``os.fsdecode``'s surrogate) reads as its byte, ``\\xff``,
    whether the report is given the book or the book its JSON made valid (``valid_data``) holds."""
    from harness.escape import valid_data
    from harness.grade.gradebook import Gradebook

    book.submissions_dir = "subs\udcff"
    assert class_view(book, PITFALLS).folder == "subs\\xff"
    again = Gradebook.from_json(valid_data(book.to_json()))
    assert class_markdown(book, PITFALLS) == class_markdown(again, PITFALLS)


# -- HTML ------------------------------------------------------------------------------------------

class Page(HTMLParser):
    """The tags, and the text of each table's body cells by table class."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.texts: list[tuple[dict[str, str], str]] = []  # the SVG's <text>s
        self.rects: list[dict[str, str]] = []
        self._table = ""
        self._cell: list[str] | None = None
        self._text: dict[str, str] | None = None
        self._in_body = False

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "table":
            self._table = a.get("class", "")
            self.tables[self._table] = []
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.tables[self._table].append([])
        elif tag == "td" and self._in_body:
            self._cell = []
        elif tag == "text":
            self._text = a
        elif tag == "rect":
            self.rects.append(a)

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_body = False
        elif tag == "td" and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "text":
            self._text = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._text is not None:
            self.texts.append((self._text, data))


def test_html_is_one_self_contained_page_that_loads_nothing(book):
    text = class_html(book, PITFALLS)
    assert text.startswith("<!DOCTYPE html>")
    page = Page()
    page.feed(text)
    page.close()
    assert not {"script", "link", "img", "iframe", "object", "embed", "image", "use"} & set(page.tags)
    assert not re.search(r"\b(src|href|xlink:href)\s*=|url\(|@import|https?://|@font-face", text)
    assert {"svg", "rect", "table", "style"} <= set(page.tags)


def test_html_escapes_every_name_and_message(book):
    text = class_html(book, PITFALLS)
    assert "<script>" not in text and "<b>" not in text and "<i>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;|x" in text
    assert "&lt;i&gt;pipe&lt;/i&gt;" not in text  # the hostile row's message is no trouble: not shown
    page = Page()
    page.feed(text)
    assert page.tables["troubles"][3] == ["rex", "refused", REFUSED]
    assert page.tables["skipped"][0] == ["notes|`x`.txt", "not a folder"]


def test_html_carries_the_same_content_as_the_markdown(book):
    page = Page()
    page.feed(class_html(book, PITFALLS))
    assert [r[0] for r in page.tables["pitfalls"]] == ["pitfall 3", "ol pitfall 16", "pitfall 1",
                                                       "pitfall 4"]
    assert page.tables["pitfalls"][2][1:] == [
        "2", "", "2", "accepting on u <= r: a token with p_x = 0 is accepted",
        "5. Pitfalls; 2.3 Accept, or draw from the residual", f"{HOSTILE}, bob"]
    assert page.tables["tests"] == [["t_residual", "6", "6", "0", "0", "13"],
                                    ["t_strict", "3", "2", "0", "1", "13"],
                                    ["t_hand", "2", "2", "0", "0", "13"],
                                    ["t_norm", "2", "2", "0", "0", "13"],
                                    ["t_rate", "2", "1", "1", "0", "13"]]
    assert [r[:2] for r in page.tables["troubles"]] == [
        ["ivy", "timed out (1 test)"], ["leo", "timed out (stopped past the submission's budget)"],
        ["kim", "crashed (1 test)"], ["rex", "refused"], ["ned", "error"],
        ["max", "internal (the harness could not grade it; graded again next run)"]]
    text = class_html(book, PITFALLS)
    assert "17 submissions: " in text and ">12 fail</span>" in text and ">1 internal</span>" in text
    assert "identical to each other (the same syntax tree): fay, gus, hal" in text
    assert "identical to the reference: ann (the same bytes), jon (the same syntax tree)" in text
    assert "information, not a verdict" in text


def test_the_score_chart_has_a_bar_per_scored_bin_and_labels_that_do_not_overlap(book):
    page = Page()
    page.feed(class_html(book, PITFALLS))
    bars = [r for r in page.rects if r.get("class") == "bin"]
    assert len(bars) == 7  # 0, 5, 6, 7, 8, 9, 10
    # 3 and 2 submissions, on an axis up to 3 that is 170 px tall
    assert sorted({float(r["height"]) for r in bars}) == [113.3, 170.0]
    counts = [d for a, d in page.texts if a.get("class") == "count"]
    assert counts == ["3", "3", "2", "2", "2", "2", "2"]
    for cls in ("xtick", "ytick"):
        assert [d for a, d in page.texts if a.get("class") == cls], cls
    assert [d for a, d in page.texts if a.get("class") == "xtick"] == [str(i) for i in range(11)]
    assert not overlapping(page)
    axes = [d for a, d in page.texts if a.get("class") == "axis"]
    assert axes == ["score (out of 10)", "submissions"]


def overlapping(page: Page) -> list[tuple[str, str]]:
    """Neighbouring x labels whose estimated extents touch (11 px, CHAR_EM per character)."""
    spans = sorted((float(a["x"]) - len(d) * 11 * CHAR_EM / 2, float(a["x"]) + len(d) * 11 * CHAR_EM / 2, d)
                   for a, d in page.texts if a.get("class") == "xtick")
    return [(a[2], b[2]) for a, b in zip(spans, spans[1:], strict=False) if a[1] + 2 > b[0]]


def test_range_labels_with_long_numbers_do_not_overlap_either():
    rows = [GradeRow(submission=f"s{i}", verdict=Verdict.FAIL, score=i * 1234.567) for i in range(12)]
    page = Page()
    page.feed(class_html(gradebook(rows, tests=["t"], points={"t": 123456.7}), {}))
    labels = [d for a, d in page.texts if a.get("class") == "xtick"]
    assert len(labels) == 11 and labels[-1] == "123457" and not overlapping(page)


# -- HTML in headless Chromium -------------------------------------------------------------------

@pytest.mark.slow
def test_html_renders_in_headless_chromium(book, tmp_path):
    chromium()
    page = tmp_path / "class.html"
    page.write_text(class_html(book, PITFALLS), encoding="utf-8")
    shot = tmp_path / "class.png"
    run_chromium(page, tmp_path, "--virtual-time-budget=3000", "--hide-scrollbars",
                 f"--screenshot={shot}", height=1600)
    assert shot.is_file() and shot.stat().st_size > 20_000, "the screenshot is missing or blank"
    pixels = png_pixels(shot)
    assert pixels.shape[:2] == (1600, 1400)
    colors = color_counts(pixels)
    assert len(colors) > 50, f"only {len(colors)} colours: the page looks blank"
    bar = tuple(int(BAR_COLOR[i:i + 2], 16) for i in (1, 3, 5))
    assert colors.get(bar, 0) > 2000, "the score chart's bars are not visible"
    white = colors.get((255, 255, 255), 0)
    assert white < 0.97 * 1600 * 1400, "the page is almost all white"
    dom = run_chromium(page, tmp_path, "--virtual-time-budget=3000", "--dump-dom", height=1600)
    assert '<table class="pitfalls">' in dom and dom.count('class="bin"') == 7
    assert "<script>alert(1)" not in dom
