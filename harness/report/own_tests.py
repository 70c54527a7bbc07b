"""``ol tests MODULE --mine PATH`` reports: the text the command prints, JSON and Gradescope.

The verdict and its JSON shape are ``harness.own_tests.engine.MineResult``'s; these only lay it out. None of
them shows a mutant's code or a catalog test's name: a missed bug is its description, its pitfall
and its hint. The student's test names, failure messages and problems are shown through
``printable`` (escaped before any split into lines, so a carriage return is shown, not obeyed).
"""

from __future__ import annotations

import textwrap

from harness.escape import printable
from harness.own_tests.engine import Implementation, MineResult, pitfall_table
from harness.report.common import json_text
from harness.report.gradescope import VISIBILITY

WIDTH = 100


def _wrap(text: str, indent: str, hang: str | None = None, width: int = WIDTH) -> list[str]:
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hang or indent,
                         break_on_hyphens=False) or [indent]


def format_text(result: MineResult, width: int | None = WIDTH) -> str:
    """What ``ol tests --mine`` prints: correct code first, then the bugs caught and missed;
    every line within ``width`` columns (``harness.report.text.fit``; None: lines unwrapped)."""
    from harness.report.text import fit

    return fit(_format_text(result, width or WIDTH), width)


def _format_text(result: MineResult, width: int) -> str:
    lines = [(f"{result.module}: your tests ({result.suite}), {len(result.tests)} of them, "
              f"against {len(result.correct)} correct implementations and "
              f"{len(result.mutants)} known bugs"), ""]
    if result.out_of_budget:
        lines += [budget_line(result), ""]
    lines += _correct_section(result, width)
    chapter = [(i, r) for i, r in result.mutants if not i.mutant.extended]
    extended = [(i, r) for i, r in result.mutants if i.mutant.extended]
    parts = [f"{sum(bool(result.caught_by(r)) for _, r in rows)} of {what} {len(rows)}"
             for rows, what in ((chapter, "the chapter's"), (extended, "the extended")) if rows]
    lines += ["", f"your tests catch {result.caught} of {len(result.mutants)} known bugs"
              + (f" ({', '.join(parts)})" if parts else "")]
    if result.runs_on_correct:  # else no test is trusted, and every hint would be noise
        lines += ["", "by pitfall:"]
        for number, caught, total in pitfall_table(result):
            text = result.pitfalls.get(number, "")
            head = f"  {number:>3}  {caught:>2} of {total:<2}  "
            lines += _wrap(text, head, " " * len(head), width)
        lines += _missed_section(result, width)
    lines += ["", (f"score: {result.caught} / {len(result.mutants)}"
                   f"{', partial' if result.out_of_budget else ''} "
                   f"({result.duration_s:.1f} s, {result.jobs} jobs)")]
    return printable("\n".join(lines) + "\n")


def budget_line(result: MineResult) -> str:
    """The one line that says the budget ran out (a partial report), or ""."""
    if not result.out_of_budget:
        return ""
    total = len(result.correct) + len(result.mutants)
    return (f"PARTIAL: the whole run's budget of {result.budget_s:g} s ran out; "
            f"{result.not_run} of {total} implementations not run, none of them counted as "
            "caught or as passing (--budget S allows more)")


def _missed_section(result: MineResult, width: int = WIDTH) -> list[str]:
    """The missed bugs by pitfall: each one's description and hint (a repeated hint once)."""
    missed = [(i, r) for i, r in result.mutants if not result.caught_by(r)]
    if not missed:
        return []
    lines = ["", "missed bugs, by pitfall, and what kind of input would expose each:"]
    hints: dict[str, str] = {}
    for number in sorted({i.mutant.pitfall for i, _ in missed}):
        text = result.pitfalls.get(number, "")
        lines += [""] + _wrap(f"pitfall {number}: {text}", "  ", "      ", width=width)
        for impl, run in [(i, r) for i, r in missed if i.mutant.pitfall == number]:
            m = impl.mutant
            lines += _wrap(f"{m.id}  {m.description}", "    ", "         ", width=width)
            hint = f"as for {hints[m.hint]}" if m.hint in hints else m.hint
            hints.setdefault(m.hint, m.id)
            lines += _wrap(f"hint: {hint}", "         ", width=width)
            if not run.ran and result.runs_on_correct:
                lines += _wrap(f"(no verdict on this bug: {run.problem})", "         ", width=width)
    return lines


def _correct_section(result: MineResult, width: int = WIDTH) -> list[str]:
    broken = [(i, r) for i, r in result.correct if not r.ran and r.status != "not run"]
    wrong = result.wrong
    ran = sum(r.ran for _, r in result.correct)
    if not broken and not wrong and ran < len(result.correct) and result.out_of_budget:
        seen = (f"no test failed on the {ran} of {len(result.correct)} correct implementations "
                "that ran; the others" if ran else "no correct implementation")
        return [(f"correct code: {seen} did not run before the budget ran out, so no test can "
                 "be credited with a catch")]
    if not broken and not wrong:
        return [(f"correct code: every test passes on all {len(result.correct)} correct "
                 "implementations (the reference and the hidden ones)")]
    lines = []
    problems: dict[str, list[Implementation]] = {}
    for impl, run in broken:
        problems.setdefault(printable(run.problem or run.status), []).append(impl)
    for problem, impls in problems.items():
        first, *rest = problem.splitlines()
        lines += _wrap(f"correct code: your tests cannot run on "
                       f"{', '.join(i.label for i in impls)}: {first}", "", "  ", width=width)
        lines += [f"    {line}" for line in rest[:40]]
    if broken:
        lines.append("until they run on every correct implementation, no test can be credited "
                     "with a catch")
    if wrong:
        one = len(wrong) == 1
        lines.append(f"correct code: {len(wrong)} of your tests {'fails' if one else 'fail'} on "
                     f"correct code, so {'it' if one else 'they'} would reject a correct "
                     "implementation:")
    described: list[Implementation] = []
    for test, impls in wrong.items():
        lines += ["", f"  WRONG  {test}"]
        lines += _wrap(f"fails on {', '.join(i.label for i in impls)}", "         ", width=width)
        lines += [f"         | {line}"
                  for line in printable(result.first_message(test)).splitlines()[:30]]
        described += [i for i in impls if i.differs and i not in described]
    for impl in described:
        lines += [""] + _wrap(f"{impl.label} is correct too; it differs from the reference only "
                              f"in this: {impl.differs}. Test what the contract says, not how "
                              "the reference does it.", "  ", width=width)
    return lines


def to_json_text(result: MineResult) -> str:
    return json_text(result.to_json())


def to_gradescope(result: MineResult) -> str:
    """Gradescope's ``results.json``: a point per bug caught; correct code first, 0 points."""
    correct_ok = result.verdict == "pass"
    text = format_text(result, None)
    tests = [{"name": "your tests accept correct code", "score": 0, "max_score": 0,
              "status": "passed" if correct_ok else "failed",
              "output": "" if correct_ok else printable("\n".join(_correct_section(result))),
              "visibility": VISIBILITY}]
    for impl, run in result.mutants:
        m, caught_by = impl.mutant, result.caught_by(run)
        output = (f"caught by {', '.join(caught_by)}" if caught_by else
                  f"{m.description}\npitfall {m.pitfall}: {result.pitfalls.get(m.pitfall, '')}\n"
                  f"hint: {m.hint}" + (f"\n{run.problem}" if result.out_of_budget
                                       and run.status == "not run" else ""))
        tests.append({"name": printable(f"bug {m.id} (pitfall {m.pitfall})"),
                      "score": 1 if caught_by else 0, "max_score": 1,
                      "status": "passed" if caught_by else "failed",
                      "output": printable(output), "visibility": VISIBILITY})
    doc = {"score": result.caught, "max_score": len(result.mutants), "output": text, "tests": tests}
    return json_text(doc)
