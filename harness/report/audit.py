"""``ol audit --mutmut`` reports: the audit as JSON, a Stryker mutation report, Markdown and HTML.

Like the lab's reports (``harness.report.lab``, whose test-file listing this reuses), every
document is built before any is written, and each write is atomic. In the Stryker report a
recorded equivalent is ``Ignored`` with its kind and reason as ``statusReason``; ``killedBy``
comes from the full kill matrix, ``coveredBy`` from mutmut's own coverage. Every text a run or
mutmut produced is shown through ``printable`` (controls escaped), as in every other reporter.
"""

from __future__ import annotations

import html
import io
import re
import tokenize
from typing import Any

from harness import __version__
from harness.audit.equivalents import Record, skeleton
from harness.audit.mutmut_result import MutmutAudit, MutmutRow
from harness.escape import printable
from harness.lab.sources import position, reference_key
from harness.report.common import json_text, md_cell
from harness.report.quotes import Quotes

THRESHOLDS = {"high": 100, "low": 80}
_COMPARE = {"<", "<=", ">", ">=", "==", "!="}
_ARITH = {"+", "-", "*", "/", "//", "%", "**"}
_FSTRING = getattr(tokenize, "FSTRING_START", -1)  # Python 3.12+ splits f-strings


def audit_json(audit: MutmutAudit) -> str:
    """``audit-mutmut-<m>.json``: the result as the API returns it."""
    return json_text(audit.to_json())


def stryker_json(audit: MutmutAudit, quotes: Quotes) -> str:
    """``mutation-report-mutmut-<m>.json``: the audit in Stryker's mutation-testing report schema."""
    return json_text(to_stryker(audit, quotes))


# -- Stryker ----------------------------------------------------------------------------------------

def to_stryker(audit: MutmutAudit, quotes: Quotes) -> dict[str, Any]:
    """The audit as a Stryker report: the reference file mutmut mutated (its text and the
    catalog's test files: ``quotes``)."""
    source = quotes.references[audit.file]
    key = reference_key(audit.file)
    return {
        "schemaVersion": "2",
        "thresholds": dict(THRESHOLDS),
        "files": {key: {"language": "python", "source": source,
                        "mutants": [_stryker_mutant(row, source) for row in audit.rows]}},
        "testFiles": dict(quotes.test_files),
        "framework": {"name": f"ol audit (mutmut {audit.mutmut_version})", "version": __version__},
        "config": {"module": audit.module, "jobs": audit.jobs, "mutmut": audit.mutmut_version},
    }


def _stryker_mutant(row: MutmutRow, source: str) -> dict[str, Any]:
    m = row.mutant
    return {
        "id": m.key,
        "mutatorName": mutator_name(m.original, m.mutated),
        "replacement": m.replacement,
        "location": _location(source, m.line, m.end_line),
        "status": row.stryker_status,
        "statusReason": printable(_reason(row)),
        "killedBy": list(row.killed_by),
        "coveredBy": list(row.covered_by),
        "testsCompleted": len(row.covered_by),
        "duration": round(row.duration_s * 1000, 3),
        "description": printable(f"{m.function}: {m.original} -> {m.mutated}"),
        "static": False,
    }


def _location(source: str, line: int | None, end_line: int | None) -> dict[str, Any]:
    """From the first non-blank character of ``line`` to the end of ``end_line`` (1-based)."""
    lines = source.splitlines(keepends=True)
    if line is None or end_line is None or not 1 <= line <= end_line <= len(lines):
        return {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}}
    start = sum(map(len, lines[:line - 1]))
    start += len(lines[line - 1]) - len(lines[line - 1].lstrip())
    end = sum(map(len, lines[:end_line])) - (1 if lines[end_line - 1].endswith("\n") else 0)
    return {"start": position(source, start), "end": position(source, end)}


def _record(row: MutmutRow) -> Record:
    """The record of a row that has one (an equivalent or a contradicted row)."""
    assert row.record is not None, "only a recorded row is asked for its record"
    return row.record


def _reason(row: MutmutRow) -> str:
    if row.equivalent:
        return f"{_record(row).kind}: {_record(row).reason}"
    if row.killed_by:
        return "\n".join(f"{t}: {row.messages.get(t, '')}" for t in row.killed_by)
    if row.detected:
        return f"mutmut: {row.mutmut_status}"
    return f"no catalog test fails on it (mutmut: {row.mutmut_status})"


def mutator_name(original: str, mutated: str) -> str:
    """A Stryker-style operator name for a mutmut edit, from its first differing token."""
    a, b = _tokens(original), _tokens(mutated)
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    x, y = (a[n] if n < len(a) else None), (b[n] if n < len(b) else None)
    if "not" in (x and x[1], y and y[1]):
        return "BooleanNegation"
    if x is None or y is None or len(b) < len(a):
        return "ArgumentRemoval"
    if y[1] == "None" and x[1] != "None":
        return "NoneReplacement"
    kinds = {x[0], y[0]}
    if tokenize.STRING in kinds or _FSTRING in kinds:
        return "StringLiteral"
    if tokenize.NUMBER in kinds:
        return "NumberLiteral"
    pair = {x[1], y[1]}
    for name, ops in (("EqualityOperator", _COMPARE), ("ArithmeticOperator", _ARITH),
                      ("LogicalOperator", {"and", "or"}), ("BooleanLiteral", {"True", "False"}),
                      ("AssignmentOperator", {"=", "+=", "-=", "*=", "/="})):
        if pair <= ops:
            return name
    return "mutmut"


def _tokens(text: str) -> list[tuple[int, str]]:
    try:
        toks = tokenize.generate_tokens(io.StringIO(text).readline)
        return [(t.type, t.string) for t in toks if t.type not in (
            tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return [(tokenize.OP, ch) for ch in text.split()]


# -- Markdown ---------------------------------------------------------------------------------------

def _counts_line(a: MutmutAudit) -> str:
    """The counts and the score, saying which mutants the score leaves out: the recorded
    survivors (equivalent, or out of contract), which no test may kill."""
    kinds = [_record(r).kind for r in a.rows if r.equivalent]
    equivalent, out = kinds.count("equivalent"), kinds.count("out-of-contract")
    counted = len(a.rows) - a.count("equivalent")
    left_out = [f"{out} out of contract" if out else "", f"{equivalent} equivalent" if equivalent else ""]
    return (f"{len(a.rows)} mutants: {a.count('detected')} killed, {a.count('equivalent')} recorded "
            f"({equivalent} equivalent, {out} out of contract), {a.count('unexplained')} "
            f"unexplained. Score {a.count('detected')}/{counted} = {100 * a.score:.1f} %: killed of "
            f"the {counted} in-contract, non-equivalent mutants; not counted: "
            f"{', '.join(w for w in left_out if w) or 'none'} (the recorded survivors).")


def _speed_lines(a: MutmutAudit) -> list[str]:
    s, t = a.speed(), a.timings
    lines = [(f"- mutmut run: {t.get('mutmut_s', 0):.1f} s for {len(a.rows)} mutants = "
              f"{_num(s['mutmut_per_s'])} mutants/s, {_num(s['mutmut_s_per_mutant'])} s and "
              f"{_num(s['mutmut_cpu_s_per_mutant'])} CPU-s per mutant (mutmut's own figure for its "
              f"mutation phase: {_num(s['mutmut_reported_per_s'])} /s; it stops each mutant at the "
              "first failing test)"),
             (f"- full kill matrix of those mutants: {t.get('matrix_s', 0):.1f} s = "
              f"{_num(s['matrix_per_s'])} mutants/s, {_num(s['matrix_cpu_s_per_mutant'])} CPU-s per mutant"),
             (f"- `ol audit --mutmut` as a whole (mutmut, then the full matrix): "
              f"{_num(s['audit_per_s'])} mutants/s, {_num(s['audit_cpu_s_per_mutant'])} CPU-s per mutant")]
    if a.lab.get("mutants"):
        lab = s["lab_cpu_s_per_mutant"] or 0
        lines += [(f"- `ol lab {a.module}` in the same run: {a.lab['mutants']} hand-written mutants, "
                   f"full matrix, {a.lab['duration_s']:.1f} s = {_num(s['lab_per_s'])} mutants/s, "
                   f"{_num(s['lab_s_per_mutant'])} s and {_num(s['lab_cpu_s_per_mutant'])} CPU-s per "
                   f"mutant: {_cmp(lab, s['audit_cpu_s_per_mutant'])} the audit's CPU cost per mutant "
                   f"for the same full matrix, {_cmp(lab, s['mutmut_cpu_s_per_mutant'])} mutmut's "
                   "alone (which stops at each mutant's first failing test)")]
    elif a.lab.get("error"):
        lines.append(f"- `ol lab {a.module}` could not run: {a.lab['error']}")
    else:
        lines.append(f"- `ol lab {a.module}` not run beside it for the cost per mutant "
                     "(`--compare-lab` runs it)")
    return lines


def _cmp(mine: float, theirs: float | None) -> str:
    return "no higher than" if theirs is not None and mine <= theirs else "HIGHER than"


def _num(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def to_markdown(a: MutmutAudit) -> str:
    word = "PASS" if a.verdict == "pass" else "FAIL"
    lines = [f"### mutmut audit {a.module}: {word}", "",
             (f"mutmut {a.mutmut_version} over `reference/python/{a.file}`, the {a.module} catalog "
              f"({len(a.tests)} tests) as its test suite, {a.jobs} jobs. {_counts_line(a)}"), ""]
    if a.clean_failures:
        lines += [f"**The trampolined original fails**: {', '.join(a.clean_failures)}", ""]
    lines += ["#### Time and speed", ""] + _speed_lines(a) + [""]
    unexplained = [r for r in a.rows if r.unexplained]
    lines += [f"#### Unexplained survivors ({len(unexplained)})", ""]
    for r in unexplained:
        fence = _fence(r.mutant.diff)
        lines += [f"- `{r.mutant.key}` (`{r.mutant.function}`, line {r.mutant.line})", "",
                  f"{fence}diff", r.mutant.diff, fence, ""]
    if unexplained:
        lines += [("Kill each with a catalog test, or record it in "
                   f"`{a.equivalents_file}` (fill in the reasons):"), "", "```toml",
                  skeleton([r.mutant for r in unexplained], [r.mutant for r in a.rows]), "```", ""]
    lines += _problem_lines(a)
    lines += ["#### Recorded survivors", "", "| function | line | change | kind | reason |",
              "| --- | ---: | --- | --- | --- |"]
    for r in (r for r in a.rows if r.equivalent):
        change = f"`{md_cell(r.mutant.original)}` → `{md_cell(r.mutant.mutated)}`"
        lines.append(f"| `{r.mutant.function}` | {r.mutant.line} | {change} | {_record(r).kind} | "
                     f"{md_cell(_record(r).reason)} |")
    lines += ["", "#### Per function", "", "| function | mutants | killed | recorded | unexplained |",
              "| --- | ---: | ---: | ---: | ---: |"]
    for fn in dict.fromkeys(r.mutant.function for r in a.rows):
        rs = [r for r in a.rows if r.mutant.function == fn]
        lines.append(f"| `{fn}` | {len(rs)} | {sum(r.detected for r in rs)} | "
                     f"{sum(r.equivalent for r in rs)} | {sum(r.unexplained for r in rs)} |")
    return printable("\n".join(lines) + "\n")


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``, so it cannot be closed early."""
    return "`" * max(3, max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)


def _problem_lines(a: MutmutAudit) -> list[str]:
    out = []
    if a.stale:
        out += [f"#### Stale records ({len(a.stale)}): they match no mutant of this run", ""]
        out += [f"- {md_cell(r.label())}" for r in a.stale] + [""]
    contradicted = [r for r in a.rows if r.contradicted]
    if contradicted:
        out += [f"#### Contradicted records ({len(contradicted)}): the catalog kills these", ""]
        out += [f"- `{r.mutant.key}` killed by {', '.join(r.killed_by) or r.mutmut_status}: "
                f"{md_cell(_record(r).label())}" for r in contradicted] + [""]
    differing = [r for r in a.rows if r.disagreement]
    if differing:
        out += [f"#### mutmut and the full matrix disagree ({len(differing)})", ""]
        out += [f"- `{r.mutant.key}`: {r.disagreement}" for r in differing] + [""]
    return out


# -- HTML -------------------------------------------------------------------------------------------

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:16px 24px;color:#1d2125}
h1{font-size:21px}h2{font-size:16px;margin-top:22px}.pass{background:#1b5e20}.fail{background:#b71c1c}
.v{color:#fff;padding:1px 9px;border-radius:4px}table{border-collapse:collapse}
td,th{border-bottom:1px solid #ddd;padding:3px 9px;text-align:left;vertical-align:top}
pre{background:#f6f8fa;padding:8px;overflow:auto}.add{color:#1b5e20}.del{color:#b71c1c}
code{font:12px ui-monospace,monospace}"""


def to_html(a: MutmutAudit) -> str:
    e = html.escape
    body = [f"<h1>mutmut audit {e(a.module)} <span class=\"v {a.verdict}\">{a.verdict.upper()}</span></h1>",
            (f"<p>mutmut {e(a.mutmut_version)} over <code>reference/python/{e(a.file)}</code>. "
             f"{e(_counts_line(a))}</p>"),
            "<h2>Time and speed</h2><ul>" + "".join(
                f"<li>{e(line[2:]).replace('`', '')}</li>" for line in _speed_lines(a)) + "</ul>"]
    unexplained = [r for r in a.rows if r.unexplained]
    body.append(f"<h2>Unexplained survivors ({len(unexplained)})</h2>")
    for r in unexplained:
        body.append(f"<p><code>{e(r.mutant.key)}</code> ({e(r.mutant.function)}, line {r.mutant.line})</p>"
                    f"<pre>{_html_diff(r.mutant.diff)}</pre>")
    problems = _problem_lines(a)
    if problems:
        body.append("<pre>" + e("\n".join(problems)) + "</pre>")
    rows = "".join(f"<tr><td><code>{e(r.mutant.function)}</code></td><td>{r.mutant.line}</td>"
                   f"<td><code>{e(r.mutant.original)}</code> → <code>{e(r.mutant.mutated)}</code></td>"
                   f"<td>{e(_record(r).kind)}</td><td>{e(_record(r).reason)}</td></tr>"
                   for r in a.rows if r.equivalent)
    body.append("<h2>Recorded survivors</h2><table><tr><th>function</th><th>line</th><th>change</th>"
                f"<th>kind</th><th>reason</th></tr>{rows}</table>")
    return printable("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     f"<title>ol audit --mutmut {e(a.module)}</title><style>{_CSS}</style></head>"
                     f"<body>\n{''.join(body)}\n</body></html>\n")


def _html_diff(diff: str) -> str:
    out = []
    for line in diff.splitlines():
        cls = "add" if line.startswith("+") and not line.startswith("+++") else \
              "del" if line.startswith("-") and not line.startswith("---") else ""
        text = html.escape(line)
        out.append(f"<span class=\"{cls}\">{text}</span>" if cls else text)
    return "\n".join(out)


def mutmut_summary(a: MutmutAudit) -> str:
    """A few lines for the terminal: verdict, counts, score, time, what to do next."""
    lines = [f"ol audit {a.module} --mutmut: {a.verdict.upper()} (mutmut {a.mutmut_version})",
             "  " + _counts_line(a)]
    lines += ["  " + line[2:].replace("`", "") for line in _speed_lines(a)]
    for r in [r for r in a.rows if r.unexplained][:10]:
        lines.append(f"  unexplained: {r.mutant.function}: {r.mutant.original} -> {r.mutant.mutated}")
    if a.stale:
        lines.append(f"  {len(a.stale)} stale record(s) in {a.equivalents_file}")
    if any(r.contradicted for r in a.rows):
        lines.append(f"  {a.count('contradicted')} contradicted record(s): the catalog kills them")
    if a.clean_failures:
        lines.append(f"  the trampolined original fails: {', '.join(a.clean_failures)}")
    return printable("\n".join(lines) + "\n")
