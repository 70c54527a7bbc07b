"""The class report of ``ol grade``: one gradebook seen as a whole class, in Markdown and in HTML.

A pure formatter: it is given the gradebook (``Gradebook``: its ``GradeRow`` rows, typed; or its
JSON, ``Gradebook.to_json``, which it reads back as one) and the course's pitfalls
(``PitfallInfo`` by label) and returns text; it reads no file, loads no course and prints nothing.
Both formats carry the same content, computed once by ``class_view``:

1. the title: the module, the submissions folder, the cases and the counts per verdict;
2. per pitfall, most common first (the headline: what to teach again): how many submissions'
   code behaves like it (a submission counted once per label, its diagnosis's best match or one
   of the others that answer alike), the pitfall's text, its chapter section and who;
3. the score distribution (a table in Markdown, an inline SVG bar chart in HTML);
4. per test, how many submissions failed it (timed out, crashed), most failed first;
5. who timed out, crashed, was refused or could not be checked (the one-line message), and the
   rows the harness itself could not grade;
6. the submissions flagged identical, to each other or to the reference (information, not a
   verdict);
7. the entries of the submissions folder that were skipped, and why;
8. only when there are any: the submissions graded earlier that are no longer in the folder
   (their rows are kept in the gradebook as history, ``present: false``), with the verdict and
   score they had; they are in no count, chart or section above.

Every text is made valid (``valid_text``: a row's are when it is recorded, the gradebook's own
here). Everything a submission brings (its name, its message) is escaped: ``md_cell`` in Markdown,
``html.escape`` in HTML, and each page as a whole goes through ``printable``. The HTML page loads
nothing: no script, no link, no font, no image.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.engine.results import Outcome, Verdict, points_value, score_text
from harness.engine.seeding import cases_words
from harness.escape import printable, valid_text
from harness.grade.gradebook import VERDICTS, Gradebook
from harness.grade.row import GradeRow
from harness.report.common import md_cell, md_code, md_table
from harness.report.grade import count

MESSAGE_WIDTH = 120  # a message in a table is cut here, with an ellipsis
INTEGER_BINS = 20  # scores that are whole numbers up to this maximum get one bin per value
RANGE_BINS = 10  # otherwise the range 0..max is cut into this many bins
BAR_WIDTH = 40  # the longest bar of the Markdown histogram, in characters
BUDGET_WORDS = "did not finish within"  # the message of a check stopped past its budget (slots.py)
NOT_RUN = ("skipped", "not run", "not_run")  # outcomes that are no failure (of older rows)
# The outcomes a test's count tells apart; any other that ran (failed, error) is a failure.
_APART = (Outcome.PASSED, Outcome.TIMEOUT, Outcome.CRASHED)
FLAG_NOTE = ("A flag is information, not a verdict: identical code can have innocent causes (a "
             "shared starting point, a small exercise with one natural answer). Read the code "
             "before drawing any conclusion.")


@dataclass(frozen=True)
class PitfallInfo:
    """What the report says of one pitfall label (``pitfall 3``, ``ol pitfall 17``)."""

    label: str
    text: str  # the pitfall's one-line text
    section: str  # the chapter's section it belongs to


@dataclass(frozen=True)
class PitfallCount:
    label: str
    text: str
    section: str
    names: tuple[str, ...]  # the submissions whose code behaves like it, by name
    best: int  # how many of them have it as their diagnosis's best match


@dataclass(frozen=True)
class ScoreBin:
    label: str
    low: float
    high: float
    count: int


@dataclass(frozen=True)
class TestCount:
    name: str
    failed: int  # failed or error (any outcome that is no pass, no timeout, no crash, no skip)
    timeout: int
    crashed: int
    ran: int  # submissions that ran it

    @property
    def failing(self) -> int:
        return self.failed + self.timeout + self.crashed


@dataclass(frozen=True)
class Trouble:
    name: str
    what: str  # "timed out (2 tests)", "crashed (1 test)", "refused", "error", "internal"
    message: str


@dataclass(frozen=True)
class Gone:
    """A row graded earlier whose submission is no longer in the folder."""

    name: str
    verdict: str
    score: str  # "12/25", or "" for a row with no score (internal)
    graded_at: str


@dataclass(frozen=True)
class ClassView:
    """What both formats show, computed once from the gradebook."""

    module: str
    folder: str
    cases: str
    total: int
    counts: dict[str, int]
    shapes: dict[str, int]
    pitfalls: list[PitfallCount]
    unexplained: list[str]  # failing submissions whose diagnosis names no pitfall
    bins: list[ScoreBin]
    integer_bins: bool
    score_note: str  # what the score is, out of what, and how many rows have one
    score_top: float  # the highest score there is
    tests: list[TestCount]  # those some submission did not pass, most failing first
    clean_tests: list[str]  # those every submission that ran them passed
    troubles: list[Trouble]
    groups: list[tuple[str, list[str]]]  # (how, names identical to each other)
    reference: list[tuple[str, str]]  # (name, how) identical to the reference
    skipped: list[tuple[str, str]]  # (name, why)
    gone: list[Gone]  # graded earlier, no longer in the folder: in no count above


# -- the content -------------------------------------------------------------------------------

def class_view(book: Gradebook, pitfalls: dict[str, PitfallInfo]) -> ClassView:
    """What both formats show, from the typed gradebook."""
    # as ``Gradebook.to_json`` orders them; a row no longer in the folder is history, shown apart
    rows = [book.rows[name] for name in sorted(book.rows) if book.rows[name].present]
    gone = [_gone(book, book.rows[name]) for name in sorted(book.rows)
            if not book.rows[name].present]
    counts: dict[str, int] = {v.value: 0 for v in VERDICTS}
    shapes: dict[str, int] = {}
    for row in rows:
        verdict = row.verdict.value
        counts[verdict] = counts.get(verdict, 0) + 1
        if row.shape:
            shapes[_text(row.shape)] = shapes.get(_text(row.shape), 0) + 1
    bins, integer, note, top = _scores(book, rows)
    tests, clean = _tests(book, rows)
    groups, reference = _identical(rows)
    return ClassView(
        module=_text(book.module), folder=_text(book.submissions_dir),
        cases=cases_words(book.seed), total=len(rows), counts=counts, shapes=shapes,
        pitfalls=_pitfalls(rows, pitfalls), unexplained=_unexplained(rows), bins=bins,
        integer_bins=integer, score_note=note, score_top=top, tests=tests, clean_tests=clean,
        troubles=_troubles(rows), groups=groups, reference=reference,
        skipped=[(_text(s.get("name", "")), _text(s.get("why", "")))
                 for s in book.skipped if isinstance(s, dict)],
        gone=gone)


def _gone(book: Gradebook, row: GradeRow) -> Gone:
    top = book.max_score if row.max_score is None else row.max_score
    score = "" if row.verdict == Verdict.INTERNAL else score_text(row.score, top)
    return Gone(_name(row), _text(row.verdict), score, _text(row.graded_at or ""))


def _text(value: Any) -> str:
    return valid_text(value if isinstance(value, str) else str(value))


def _outcomes(row: GradeRow) -> dict[str, str]:
    return {_text(k): _text(v) for k, v in row.tests.items()}


def _name(row: GradeRow) -> str:
    return _text(row.submission)


def _labels(row: GradeRow) -> list[str]:
    """The pitfall labels a row's diagnosis names, best first, each once."""
    out: list[str] = []
    for entry in row.pitfalls:
        if not isinstance(entry, dict):
            continue
        for label in (entry.get("label"), *(entry.get("also_labels", []) or [])):
            if isinstance(label, str) and label and label not in out:
                out.append(label)
    return out


def label_order(label: str) -> tuple[int, int, str]:
    """The chapter's pitfalls by number, then ol's own by number, then anything else."""
    m = re.fullmatch(r"(ol )?pitfall (\d+)", label)
    return (1 if m.group(1) else 0, int(m.group(2)), "") if m else (2, 0, label)


def _pitfalls(rows: list[GradeRow], known: dict[str, PitfallInfo]) -> list[PitfallCount]:
    names: dict[str, list[str]] = {}
    best: dict[str, int] = {}
    texts: dict[str, str] = {}
    for row in rows:
        for label in _labels(row):
            names.setdefault(label, []).append(_name(row))
        entries = [e for e in row.pitfalls if isinstance(e, dict)]
        first = next((e for e in entries if isinstance(e.get("label"), str) and e["label"]), None)
        if first is not None:
            best[first["label"]] = best.get(first["label"], 0) + 1
        for e in entries:
            if isinstance(e.get("label"), str) and e.get("pitfall_text"):
                texts.setdefault(e["label"], _text(e["pitfall_text"]))
    out = []
    for label, who in names.items():
        info = known.get(label)
        out.append(PitfallCount(label, info.text if info else texts.get(label, ""),
                                info.section if info else "", tuple(sorted(who)), best.get(label, 0)))
    return sorted(out, key=lambda p: (-len(p.names), -p.best, label_order(p.label)))


def _unexplained(rows: list[GradeRow]) -> list[str]:
    return sorted(_name(r) for r in rows if r.verdict == Verdict.FAIL and not _labels(r)
                  and not _timed_out(r) and not _crashed(r))


def _scores(book: Gradebook, rows: list[GradeRow]) -> tuple[list[ScoreBin], bool, str, float]:
    """The bins of the graded rows' scores (an ``internal`` row has none), out of the catalog's
    points, and the note that says so. Scores and points are taken as the gradebook writes them
    (``points_value``)."""
    graded = [r for r in rows if r.verdict != Verdict.INTERNAL]
    if rows:
        scores = [s for r in graded if (s := _number(points_value(r.score))) is not None]
        top = float(points_value(book.max_score))
        what = f"score out of {_num(top)}"
    else:  # the note an empty gradebook has always had (its JSON had no row with a score)
        scores, top = [], float(len(book.tests))
        what = f"score: tests passed, out of {_num(top)} (this gradebook records no scores)"
    left = len(rows) - len(scores)
    note = f"{what}; {count(len(scores), 'submission')}" + (
        f" ({left} without a score: not graded by the harness)" if left else "")
    return (*score_bins(scores, top), note, top)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _num(x: float) -> str:
    return f"{round(x, 2):g}"


def score_bins(scores: list[float], top: float) -> tuple[list[ScoreBin], bool]:
    """The histogram's bins: one per value for whole scores up to ``INTEGER_BINS``, else
    ``RANGE_BINS`` equal bins over 0..top (each holds its low end; the last its high end too).
    A score outside 0..top is counted in the nearest bin. Also whether the bins are values."""
    top = max(top, 0.0)
    if top == int(top) and top <= INTEGER_BINS and all(s == int(s) for s in scores):
        values = [min(max(int(s), 0), int(top)) for s in scores]
        return [ScoreBin(str(v), v, v, values.count(v)) for v in range(int(top) + 1)], True
    width = top / RANGE_BINS if top > 0 else 1.0
    found = [0] * RANGE_BINS
    for s in scores:
        found[min(max(int(s / width), 0), RANGE_BINS - 1)] += 1
    return [ScoreBin(f"{_num(i * width)}\u2013{_num((i + 1) * width)}", i * width, (i + 1) * width, n)
            for i, n in enumerate(found)], False


def _tests(book: Gradebook, rows: list[GradeRow]) -> tuple[list[TestCount], list[str]]:
    names = [_text(t) for t in book.tests]
    for row in rows:
        names += [t for t in _outcomes(row) if t not in names]
    out: list[TestCount] = []
    clean: list[TestCount] = []
    for test in names:
        outcomes = [o for r in rows if (o := _outcomes(r).get(test)) is not None]
        ran = [o for o in outcomes if o not in NOT_RUN]
        timeout, crashed = ran.count(Outcome.TIMEOUT), ran.count(Outcome.CRASHED)
        failed = sum(o not in _APART for o in ran)
        found = TestCount(test, failed, timeout, crashed, len(ran))
        (out if found.failing else clean).append(found)
    out.sort(key=lambda t: (-t.failing, -t.failed, t.name))
    return out, [t.name for t in clean]


def _timed_out(row: GradeRow) -> int:
    """The tests that timed out, or 1 for a check stopped past the submission's budget."""
    outcomes = list(_outcomes(row).values())
    return outcomes.count(Outcome.TIMEOUT) or int(BUDGET_WORDS in _text(row.message))


def _crashed(row: GradeRow) -> int:
    return list(_outcomes(row).values()).count(Outcome.CRASHED)


def _troubles(rows: list[GradeRow]) -> list[Trouble]:
    """The rows that timed out, crashed, were refused, errored or were not graded: timeouts
    first, then crashes, refusals, errors and internal failures, each by name."""
    found = []
    for row in rows:
        words, rank = [], 5
        timed_out, crashed = _timed_out(row), _crashed(row)
        if Outcome.TIMEOUT in _outcomes(row).values():
            words.append(f"timed out ({count(timed_out, 'test')})")
        elif timed_out:
            words.append("timed out (stopped past the submission's budget)")
        if crashed:
            words.append(f"crashed ({count(crashed, 'test')})")
        rank = 0 if timed_out else 1 if crashed else rank
        verdict = row.verdict
        if verdict == Verdict.ERROR:
            refused = _text(row.content_hash).startswith("refused-")  # ``refusal_digest``
            words.append("refused" if refused else "error")
            rank = min(rank, 2 if refused else 3)
        elif verdict == Verdict.INTERNAL:
            words.append("internal (the harness could not grade it; graded again next run)")
            rank = min(rank, 4)
        if words:
            found.append((rank, Trouble(_name(row), ", ".join(words), _text(row.message))))
    return [t for _, t in sorted(found, key=lambda f: (f[0], f[1].name))]


def _identical(rows: list[GradeRow]) -> tuple[list[tuple[str, list[str]]], list[tuple[str, str]]]:
    """Groups of submissions identical to each other (joined through any flag: a group is
    ``bytes`` when every flag joining it is, else ``syntax tree``), and those identical to the
    reference, with how."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    links: list[tuple[str, str, str]] = []
    reference: dict[str, str] = {}
    for row in rows:
        for flag in row.flags:
            if not isinstance(flag, dict) or flag.get("kind", "identical") != "identical":
                continue
            how, to = _text(flag.get("how", "")), _text(flag.get("to", ""))
            if to == "reference":
                old = reference.get(_name(row))
                reference[_name(row)] = "bytes" if "bytes" in (how, old) else how
            elif to:
                links.append((_name(row), to, how))
                parent[root(_name(row))] = root(to)
    members: dict[str, list[str]] = {}
    for x in parent:
        members.setdefault(root(x), []).append(x)
    groups = []
    for names in members.values():
        if len(names) > 1:
            hows = {how for a, _, how in links if root(a) == root(names[0])}
            groups.append(("bytes" if hows == {"bytes"} else "syntax tree", sorted(names)))
    groups.sort(key=lambda g: (g[0] != "bytes", -len(g[1]), g[1]))
    return groups, sorted(reference.items())


def clip(text: str, width: int = MESSAGE_WIDTH) -> str:
    """One line of at most ``width`` characters, cut with an ellipsis."""
    line = " ".join(printable(text).split())
    return line if len(line) <= width else line[:width - 1].rstrip() + "\u2026"


def counts_words(view: ClassView) -> str:
    """``12 submissions: 5 pass, 4 fail, 2 error, 1 internal``."""
    listed = ", ".join(f"{n} {v}" for v, n in view.counts.items() if n or v in VERDICTS[:3])
    return f"{count(view.total, 'submission')}: {listed}"


def _names(names: Iterable[str]) -> str:
    return ", ".join(names)


HOW = {"bytes": "the same bytes", "syntax tree": "the same syntax tree"}
GONE_NOTE = ("Graded by an earlier run, not found in the submissions folder by the last one: kept "
             "in gradebook.json as history (\"present\": false), left out of every count, chart "
             "and section above, of scores.csv and of gradescope/. Handed in again, it is counted again "
             "(graded again only if it changed).")


def gone_words(view: ClassView) -> str:
    """``1 graded earlier, no longer in the folder (not counted)``."""
    return f"{len(view.gone)} graded earlier, no longer in the folder (not counted)"


# -- Markdown ----------------------------------------------------------------------------------

def class_markdown(book: Gradebook, pitfalls: dict[str, PitfallInfo]) -> str:
    """The class report as Markdown (GitHub's tables); every section, empty ones saying so."""
    v = class_view(book, pitfalls)
    lines = [f"# Class report: {md_cell(v.module)}", "",
             f"- submissions: `{md_code(v.folder)}`",
             f"- {md_cell(v.cases)}",
             f"- {counts_words(v)}"]
    if v.shapes:
        lines.append("- handed in as: " + ", ".join(f"{n} {md_cell(s)}" for s, n in v.shapes.items()))
    if v.gone:
        lines.append(f"- {gone_words(v)}: " + _names(md_cell(g.name) for g in v.gone))
    lines += ["", "## What the code behaves like, per pitfall", ""]
    lines += md_table(
        "| pitfall | submissions | best match | what it is | chapter section | who |",
        "| --- | ---: | ---: | --- | --- | --- |",
        [f"| {md_cell(p.label)} | {len(p.names)} | {p.best} | {md_cell(p.text)} | "
         f"{md_cell(p.section)} | {_names(md_cell(n) for n in p.names)} |" for p in v.pitfalls],
        "No submission's code behaves like a pitfall.",
        "Each submission is counted once per pitfall its code behaves like (the diagnosis's best "
        "match, or another that answers alike); most common first.")
    if v.unexplained:
        lines += ["", f"Failing, and named by no pitfall: {_names(md_cell(n) for n in v.unexplained)}."]
    lines += ["", "## Score distribution", "", md_cell(v.score_note) + ".", "",
              "| score | submissions | |", "| --- | ---: | --- |"]
    most = max([b.count for b in v.bins] + [1])
    for b in v.bins:
        bar = "#" * math.ceil(BAR_WIDTH * b.count / most) if b.count else ""
        lines.append(f"| {b.label} | {b.count} | {bar} |")
    lines += ["", "## Tests that failed", ""]
    lines += md_table(
        "| test | failing | failed | timed out | crashed | ran |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        [f"| `{md_code(t.name)}` | {t.failing} | {t.failed} | {t.timeout} | {t.crashed} | {t.ran} |"
         for t in v.tests],
        "No test failed.", "Most failed first; failing counts those that failed, timed out or crashed.")
    if v.clean_tests:
        lines += ["", "Passed by every submission that ran them: "
                  + _names(f"`{md_code(t)}`" for t in v.clean_tests) + "."]
    lines += ["", "## Timed out, crashed, refused, errors", ""]
    lines += md_table("| submission | what | message |", "| --- | --- | --- |",
                      [f"| {md_cell(t.name)} | {md_cell(t.what)} | {md_cell(clip(t.message))} |"
                       for t in v.troubles], "None.")
    lines += ["", "## Identical submissions", "", f"> {md_cell(FLAG_NOTE)}", ""]
    if v.groups or v.reference:
        lines += [f"- identical to each other ({HOW.get(how, md_cell(how))}): "
                  f"{_names(md_cell(n) for n in names)}" for how, names in v.groups]
        if v.reference:
            lines.append("- identical to the reference: " + _names(
                f"{md_cell(n)} ({HOW.get(how, md_cell(how))})" for n, how in v.reference))
    else:
        lines.append("No submission is flagged identical.")
    lines += ["", "## Skipped", ""]
    lines += md_table("| entry | why |", "| --- | --- |",
                      [f"| {md_cell(n)} | {md_cell(clip(why))} |" for n, why in v.skipped],
                      "Nothing in the submissions folder was skipped.")
    if v.gone:
        lines += ["", "## No longer in the folder", "", md_cell(GONE_NOTE), ""]
        lines += md_table("| submission | verdict then | score then | graded at |",
                          "| --- | --- | ---: | --- |",
                          [f"| {md_cell(g.name)} | {md_cell(g.verdict)} | {g.score} | "
                           f"{md_cell(g.graded_at)} |" for g in v.gone], "")
    return printable("\n".join(lines) + "\n")


# -- HTML --------------------------------------------------------------------------------------

VERDICT_COLORS = {"pass": "#1b5e20", "fail": "#b71c1c", "error": "#e65100", "internal": "#4a148c"}
BAR_COLOR = "#1565c0"  # the score chart's bars (the screenshot test looks for it)

_CSS = """
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2125;
       margin: 16px 24px; background: #fff; max-width: 1200px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 22px 0 8px; }
.meta { margin: 0 0 6px; color: #444; }
.chip { display: inline-block; padding: 1px 10px; margin-right: 6px; border-radius: 4px;
        color: #fff; font-weight: 600; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; } td.label { font-weight: 600; white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.who, td.msg { max-width: 520px; } td.msg { color: #333; } td.what { max-width: 440px; }
td.section { min-width: 170px; }
.bar { display: inline-block; height: 10px; background: #b71c1c; vertical-align: middle; }
.note { color: #555; } .flagnote { border-left: 4px solid #90a4ae; padding: 4px 10px;
        background: #f5f7f8; color: #37474f; }
code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg text.axis { font-size: 12px; fill: #111; }
"""


def class_html(book: Gradebook, pitfalls: dict[str, PitfallInfo]) -> str:
    """The class report as one self-contained page: inline CSS and SVG, no script, nothing
    loaded from anywhere."""
    v = class_view(book, pitfalls)
    e = html.escape
    chips = "".join(f"<span class=\"chip {e(k)}\" style=\"background:{VERDICT_COLORS.get(k, '#455a64')}\">"
                    f"{n} {e(k)}</span>" for k, n in v.counts.items() if n or k in VERDICTS[:3])
    body = [f"<h1>Class report: {e(v.module)}</h1>",
            f"<p class=\"meta\">submissions: <code>{e(v.folder)}</code>; {e(v.cases)}</p>",
            f"<p class=\"meta counts\">{count(v.total, 'submission')}: {chips}</p>"]
    if v.shapes:
        body.append("<p class=\"meta\">handed in as: "
                    + ", ".join(f"{n} {e(s)}" for s, n in v.shapes.items()) + "</p>")
    if v.gone:
        body.append(f"<p class=\"meta gone\">{e(gone_words(v))}: "
                    f"{e(_names(g.name for g in v.gone))}</p>")
    body += ["<h2 id=\"pitfalls\">What the code behaves like, per pitfall</h2>", _html_pitfalls(v),
             "<h2 id=\"scores\">Score distribution</h2>",
             f"<p class=\"note\">{e(v.score_note)}.</p>",
             score_svg(v.bins, v.integer_bins, v.score_top, v.score_note),
             "<h2 id=\"tests\">Tests that failed</h2>", _html_tests(v),
             "<h2 id=\"troubles\">Timed out, crashed, refused, errors</h2>", _html_troubles(v),
             "<h2 id=\"identical\">Identical submissions</h2>", _html_identical(v),
             "<h2 id=\"skipped\">Skipped</h2>", _html_skipped(v)]
    if v.gone:
        body += ["<h2 id=\"gone\">No longer in the folder</h2>", _html_gone(v)]
    return printable("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     f"<title>ol class report {e(v.module)}</title>\n"
                     f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body)
                     + "\n</body>\n</html>\n")


def _html_pitfalls(v: ClassView) -> str:
    e = html.escape
    if not v.pitfalls:
        out = "<p>No submission's code behaves like a pitfall.</p>"
    else:
        most = max(len(p.names) for p in v.pitfalls)
        rows = "".join(
            f"<tr><td class=\"label\">{e(p.label)}</td><td class=\"n\">{len(p.names)}</td>"
            f"<td><span class=\"bar\" style=\"width:{max(2, 120 * len(p.names) // most)}px\"></span></td>"
            f"<td class=\"n\">{p.best}</td><td class=\"what\">{e(p.text)}</td>"
            f"<td class=\"section\">{e(p.section)}</td>"
            f"<td class=\"who\">{e(_names(p.names))}</td></tr>" for p in v.pitfalls)
        out = ("<p class=\"note\">Each submission is counted once per pitfall its code behaves like "
               "(the diagnosis's best match, or another that answers alike); most common first.</p>"
               "<table class=\"pitfalls\"><thead><tr><th>pitfall</th><th>submissions</th><th></th>"
               "<th>best match</th><th>what it is</th><th>chapter section</th><th>who</th></tr>"
               f"</thead><tbody>{rows}</tbody></table>")
    if v.unexplained:
        out += f"<p>Failing, and named by no pitfall: {e(_names(v.unexplained))}.</p>"
    return out


def _html_tests(v: ClassView) -> str:
    e = html.escape
    out = "<p>No test failed.</p>"
    if v.tests:
        rows = "".join(f"<tr><td><code>{e(t.name)}</code></td><td class=\"n\">{t.failing}</td>"
                       f"<td class=\"n\">{t.failed}</td><td class=\"n\">{t.timeout}</td>"
                       f"<td class=\"n\">{t.crashed}</td><td class=\"n\">{t.ran}</td></tr>"
                       for t in v.tests)
        out = ("<p class=\"note\">Most failed first; failing counts those that failed, timed out "
               "or crashed.</p><table class=\"tests\"><thead><tr><th>test</th><th>failing</th>"
               "<th>failed</th><th>timed out</th><th>crashed</th><th>ran</th></tr></thead>"
               f"<tbody>{rows}</tbody></table>")
    if v.clean_tests:
        out += ("<p>Passed by every submission that ran them: "
                + ", ".join(f"<code>{e(t)}</code>" for t in v.clean_tests) + ".</p>")
    return out


def _html_troubles(v: ClassView) -> str:
    e = html.escape
    if not v.troubles:
        return "<p>None.</p>"
    rows = "".join(f"<tr><td>{e(t.name)}</td><td>{e(t.what)}</td>"
                   f"<td class=\"msg\" title=\"{e(' '.join(printable(t.message).split()))}\">"
                   f"{e(clip(t.message))}</td></tr>" for t in v.troubles)
    return ("<table class=\"troubles\"><thead><tr><th>submission</th><th>what</th><th>message</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>")


def _html_identical(v: ClassView) -> str:
    e = html.escape
    out = f"<p class=\"flagnote\">{e(FLAG_NOTE)}</p>"
    if not (v.groups or v.reference):
        return out + "<p>No submission is flagged identical.</p>"
    items = [f"<li>identical to each other ({e(HOW.get(how, how))}): {e(_names(names))}</li>"
             for how, names in v.groups]
    if v.reference:
        items.append("<li>identical to the reference: " + e(_names(
            f"{n} ({HOW.get(how, how)})" for n, how in v.reference)) + "</li>")
    return out + "<ul class=\"identical\">" + "".join(items) + "</ul>"


def _html_skipped(v: ClassView) -> str:
    e = html.escape
    if not v.skipped:
        return "<p>Nothing in the submissions folder was skipped.</p>"
    rows = "".join(f"<tr><td>{e(n)}</td><td class=\"msg\">{e(clip(why))}</td></tr>" for n, why in v.skipped)
    return (f"<table class=\"skipped\"><thead><tr><th>entry</th><th>why</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _html_gone(v: ClassView) -> str:
    e = html.escape
    rows = "".join(f"<tr><td>{e(g.name)}</td><td>{e(g.verdict)}</td><td class=\"n\">{e(g.score)}</td>"
                   f"<td>{e(g.graded_at)}</td></tr>" for g in v.gone)
    return (f"<p class=\"note\">{e(GONE_NOTE)}</p><table class=\"gone\"><thead><tr>"
            "<th>submission</th><th>verdict then</th><th>score then</th><th>graded at</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")


# The chart's geometry, in px. A bin is at least as wide as its longest label (CHAR_EM: a digit's
# width in a sans-serif font, in ems, generously), so no label reaches its neighbour's.
SLOT, LEFT, RIGHT, TOP, PLOT, BOTTOM, TICK_FONT, CHAR_EM = 44, 52, 24, 22, 170, 52, 11, 0.65


def score_svg(bins: list[ScoreBin], integer_bins: bool, top_score: float, caption: str) -> str:
    """The score distribution as an inline SVG bar chart: a bar per bin with its count above it,
    the counts' axis on the left, the scores below (under each bar for values, at the bins'
    edges for ranges), and both axes titled."""
    e = html.escape
    n = max(len(bins), 1)
    # (position in bins, label): a value under its bar, a range's edges at the bins' edges
    ticks = ([(i + 0.5, b.label) for i, b in enumerate(bins)] if integer_bins
             else [(float(i), _num(b.low)) for i, b in enumerate(bins)]
             + [(float(len(bins)), _num(bins[-1].high))] if bins else [])
    longest = max([len(t) for _, t in ticks] + [1])
    slot = max(SLOT, 600 // n, math.ceil(longest * TICK_FONT * CHAR_EM) + 8)
    right = max(RIGHT, math.ceil(longest * TICK_FONT * CHAR_EM / 2) + 4)  # the last edge's label
    width, height = LEFT + n * slot + right, TOP + PLOT + BOTTOM
    most = max([b.count for b in bins] + [1])
    step = max(1, math.ceil(most / 4))
    top = step * math.ceil(most / step)
    base = TOP + PLOT
    parts = [f"<svg class=\"scores\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" "
             f"role=\"img\" aria-label=\"{e(caption)}\"><title>{e(caption)}</title>"]
    for tick in range(0, top + 1, step):
        y = base - PLOT * tick / top
        parts.append(f"<line x1=\"{LEFT - 4}\" y1=\"{y:.1f}\" x2=\"{width - right}\" y2=\"{y:.1f}\" "
                     f"stroke=\"{'#555' if tick == 0 else '#e3e6e8'}\" stroke-width=\"1\"/>"
                     f"<text class=\"ytick\" x=\"{LEFT - 8}\" y=\"{y + 4:.1f}\" text-anchor=\"end\">"
                     f"{tick}</text>")
    for i, b in enumerate(bins):
        x, h = LEFT + i * slot, PLOT * b.count / top
        if b.count:
            parts.append(f"<rect class=\"bin\" x=\"{x + 5}\" y=\"{base - h:.1f}\" width=\"{slot - 10}\" "
                         f"height=\"{h:.1f}\" fill=\"{BAR_COLOR}\"><title>{e(b.label)}: "
                         f"{count(b.count, 'submission')}</title></rect>"
                         f"<text class=\"count\" x=\"{x + slot / 2:.1f}\" y=\"{base - h - 4:.1f}\" "
                         f"text-anchor=\"middle\">{b.count}</text>")
    for at, text in ticks:
        parts.append(f"<text class=\"xtick\" x=\"{LEFT + at * slot:.1f}\" y=\"{base + 16}\" "
                     f"text-anchor=\"middle\">{e(text)}</text>")
    parts.append(f"<text class=\"axis\" x=\"{LEFT + n * slot / 2:.1f}\" y=\"{height - 10}\" "
                 f"text-anchor=\"middle\">score (out of {_num(top_score)})</text>"
                 f"<text class=\"axis\" x=\"14\" y=\"{TOP + PLOT / 2:.1f}\" text-anchor=\"middle\" "
                 f"transform=\"rotate(-90 14 {TOP + PLOT / 2:.1f})\">submissions</text></svg>")
    return "".join(parts)
