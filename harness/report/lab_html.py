"""The lab's HTML report: one self-contained page with the kill matrix as a heatmap.

No scripts and no external assets; every cell's title says its state and the test's failure, every
row's title the mutant's description and pitfall. The cell states, counts, problems and notes are
``harness.report.lab_parts``'s, shared with the other formats; ``write_lab_reports`` writes this page.
Every text is ``html.escape``d, and the page as a whole goes through ``printable`` (html.escape
leaves control characters alone; the template has none, so only a run's text can hold them).
"""

from __future__ import annotations

import html
import string

from harness.escape import printable
from harness.lab.engine import LabResult, MutantRow
from harness.report.lab_parts import (
    DESIGNATED,
    KILLED,
    MISSED,
    NOT_RUN,
    NOT_RUN_WORDS,
    SURVIVED,
    cell_state,
    counts_line,
    first_line,
    lab_cases_line,
    lab_problems,
    note_lines,
    pitfall_line,
    reference_phrase,
    verdict_word,
)
from harness.report.quotes import Quotes

# U+25C6 black diamond; U+2013 en dash ("no result"). A passed cell is plain light grey without a
# mark; a not-run cell is white, hatched, dash-bordered and marked: the two differ in their glyph,
# pattern and border, not in colour alone (a reader who cannot tell the greys apart still can).
HTML_MARKS = {DESIGNATED: "\u25c6", KILLED: "", MISSED: "!", SURVIVED: "", NOT_RUN: "\u2013"}
SUBSET_MARK = "\u25cf"  # U+25CF black circle
# Cell colours (the HTML test looks for them in a screenshot).
COLORS = {KILLED: "#4caf50", DESIGNATED: "#1b5e20", MISSED: "#ff9800", SURVIVED: "#eef0f2",
          NOT_RUN: "#fbfbfc"}


_CSS = string.Template("""
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2125;
       margin: 16px 24px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 22px 0 8px; }
.verdict { padding: 1px 10px; border-radius: 4px; color: #fff; font-size: 16px; }
.verdict.pass { background: #1b5e20; } .verdict.fail { background: #b71c1c; }
.counts, .cases { margin: 0 0 8px; color: #444; }
.problems li { margin: 2px 0; } .problems .id { font-weight: 600; }
.legend { display: flex; gap: 18px; flex-wrap: wrap; align-items: center; margin: 6px 0 10px; }
.legend span.sw { display: inline-block; width: 18px; height: 18px; vertical-align: middle;
                  margin-right: 5px; text-align: center; line-height: 18px; font-size: 12px;
                  color: #fff; }
.legend span.sw.missed { color: #000; } .legend span.sw.not_run { color: #374151; }
.scroll { overflow: auto; max-width: 100%; }
table.matrix { border-collapse: separate; border-spacing: 2px; }
table.matrix th { font-weight: normal; }
th.test { vertical-align: bottom; padding: 0 0 4px; }
th.test div { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
              font: 12px/1 ui-monospace, "DejaVu Sans Mono", monospace; margin: 0 auto; }
th.test.subset div { font-weight: 700; }
th.mutant { text-align: left; white-space: nowrap; padding: 0 8px 0 0; position: sticky; left: 0;
            background: #fff; max-width: 360px; overflow: hidden; text-overflow: ellipsis; }
th.mutant .id { font: 600 13px ui-monospace, "DejaVu Sans Mono", monospace; }
th.mutant .desc { color: #555; font-size: 12px; }
tr.survived th.mutant .id, tr.survived th.mutant .desc { color: #b71c1c; font-weight: 700; }
td.cell { width: 22px; height: 22px; min-width: 22px; text-align: center; font-size: 13px;
          color: #fff; box-sizing: border-box; }
.cell.killed { background: $killed; }
.cell.designated { background: $designated; outline: 2px solid #000; outline-offset: -2px; }
.cell.missed { background: $missed; color: #000; font-weight: 700;
            outline: 2px dashed #000; outline-offset: -2px; }
.cell.survived { background: $survived; }
.cell.not_run { background-color: $not_run; color: #374151; font-weight: 700;
               background-image: repeating-linear-gradient(135deg, transparent 0 4px,
                                                           #aab0b8 4px 6px);
               outline: 1px dashed #4b5563; outline-offset: -1px; }
td.count, tfoot td { text-align: center; font-size: 12px; color: #333; }
tfoot th { text-align: right; padding-right: 8px; font-size: 12px; color: #333; }
table.strength { border-collapse: collapse; }
table.strength th, table.strength td { border-bottom: 1px solid #ddd; padding: 3px 10px;
                                       text-align: left; }
table.strength td.n { text-align: right; }
.bar { display: inline-block; height: 10px; background: $killed; vertical-align: middle; }
code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; }
""").substitute(COLORS)


def to_lab_html(result: LabResult, quotes: Quotes) -> str:
    """One page, no scripts or external assets; titles carry each mutant's description and
    pitfall (``quotes``) on hover."""
    e = html.escape
    body = [(f"<h1>Lab {e(result.module)} <span class=\"verdict {result.verdict}\">"
             f"{verdict_word(result)}</span></h1>"),
            (f"<p class=\"counts\">{e(counts_line(result))}; {e(reference_phrase(result))}; "
             f"{len(result.tests)} tests; {result.duration_s:.1f} s with {result.jobs} jobs</p>"),
            f"<p class=\"cases\">{e(lab_cases_line(result.module, result.seed))}</p>"]
    problems = lab_problems(result)
    if problems:
        body.append("<ul class=\"problems\">" + "".join(
            f"<li><span class=\"id\">{e(row.mutant.id)}</span> {e(what)}: "
            f"{e(row.mutant.description)}</li>" for row, what in problems) + "</ul>")
    body += ["<h2>Kill matrix</h2>", _html_legend(), _html_matrix(result, quotes),
             "<h2>Test strength</h2>", _html_strength(result)]
    notes = note_lines(result)
    if notes:
        body += ["<h2>Notes</h2>", "<ul>" + "".join(
            f"<li><code>{e(t)}</code> {e(s)}</li>" for t, s in notes) + "</ul>"]
    return printable("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     f"<title>ol lab {e(result.module)}: {result.verdict}</title>\n"
                     f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body)
                     + "\n</body>\n</html>\n")


def _html_legend() -> str:
    items = [(KILLED, "killed by this test"), (DESIGNATED, "killed by a designated test"),
             (MISSED, "designated test did not kill it"),
             (SURVIVED, "test passed (the mutant survived it)"),
             (NOT_RUN, "not run: the test never reaches the mutated code")]
    return "<div class=\"legend\">" + "".join(
        f"<span><span class=\"sw cell {state}\">{HTML_MARKS[state]}</span>{text}</span>"
        for state, text in items) + "<span><b>bold</b> test name: in the minimal subset</span></div>"


def _html_matrix(result: LabResult, quotes: Quotes) -> str:
    e = html.escape
    subset = set(result.minimal_subset())
    head = "".join(
        f"<th class=\"test{' subset' if t in subset else ''}\" scope=\"col\" title=\"{e(t)}: "
        f"kills {len(result.kills(t))}, unique {len(result.unique_kills(t))}\"><div>{e(t)}</div></th>"
        for t in result.tests)
    rows = []
    for row in result.rows:
        m = row.mutant
        hover = e(f"{m.id}: {m.description}\n{pitfall_line(quotes, m)}\n"
                  f"designated: {', '.join(m.designated)}\n"
                  f"killed by: {', '.join(row.killed_by) or 'no test'}", quote=True)
        cells = "".join(_html_cell(row, t) for t in result.tests)
        rows.append(f"<tr class=\"{'killed' if row.killed else 'survived'}\" data-mutant=\"{e(m.id)}\">"
                    f"<th class=\"mutant\" scope=\"row\" title=\"{hover}\"><span class=\"id\">"
                    f"{e(m.id)}</span> <span class=\"desc\">{e(_clip(m.description, 48))}</span></th>"
                    f"{cells}<td class=\"count\">{len(row.killed_by)}</td></tr>")
    foot = ("<tr><th>kills</th>" + "".join(f"<td>{len(result.kills(t))}</td>" for t in result.tests)
            + "<td></td></tr><tr><th>unique kills</th>"
            + "".join(f"<td>{len(result.unique_kills(t))}</td>" for t in result.tests)
            + "<td></td></tr><tr><th>minimal subset</th>"
            + "".join(f"<td>{SUBSET_MARK if t in subset else ''}</td>" for t in result.tests)
            + "<td></td></tr>")
    return (f"<div class=\"scroll\"><table class=\"matrix\"><thead><tr><th></th>{head}"
            f"<th class=\"test\"><div>killed by</div></th></tr></thead><tbody>{''.join(rows)}"
            f"</tbody><tfoot>{foot}</tfoot></table></div>")


def _html_cell(row: MutantRow, test: str) -> str:
    state = cell_state(row, test)
    words = {KILLED: "killed", DESIGNATED: "killed (designated test)",
             MISSED: "NOT killed by this designated test", SURVIVED: "passed (not killed)",
             NOT_RUN: NOT_RUN_WORDS}
    why = next((t.message for t in row.run.tests if t.name == test and not t.ok), "")
    title = f"{row.mutant.id} \u00d7 {test}: {words[state]}" + (f"\n{first_line(why)}" if why else "")
    title = html.escape(title, quote=True)
    return (f"<td class=\"cell {state}\" data-test=\"{html.escape(test)}\" title=\"{title}\">"
            f"{HTML_MARKS[state]}</td>")


def _html_strength(result: LabResult) -> str:
    e = html.escape
    subset = result.minimal_subset()
    most = max([len(result.kills(t)) for t in result.tests] + [1])
    rows = []
    for t in result.tests:
        kills, unique = result.kills(t), result.unique_kills(t)
        designated_for = [r.mutant.id for r in result.rows if t in r.mutant.designated]
        rows.append(f"<tr><td><code>{e(t)}</code></td><td class=\"n\">{len(kills)}</td>"
                    f"<td><span class=\"bar\" style=\"width:{120 * len(kills) // most}px\"></span>"
                    f"</td><td class=\"n\">{len(unique)}</td><td>{e(', '.join(unique))}</td>"
                    f"<td>{e(', '.join(designated_for))}</td>"
                    f"<td>{'yes' if t in subset else ''}</td></tr>")
    ordered = [t for t in result.tests if t in subset]
    return ("<table class=\"strength\"><thead><tr><th>test</th><th>kills</th><th></th>"
            "<th>unique kills</th><th>mutants only it kills</th><th>designated for</th>"
            "<th>minimal subset</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f"<h2>Minimal subset</h2><p>{len(ordered)} of {len(result.tests)} tests kill every "
            "mutant the catalog kills: " + (", ".join(f"<code>{e(t)}</code>" for t in ordered)
                                            or "none") + "</p>")


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1].rstrip() + "\u2026"
