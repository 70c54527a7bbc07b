"""``ol grade``'s lines, formatted (``harness.terminal.grade`` prints them): the cases line, a
graded submission's line, the summary."""

from __future__ import annotations

from harness.engine.results import Verdict, score_text
from harness.escape import one_line
from harness.grade.engine import GradeOutcome, shown
from harness.grade.row import GradeRow


def count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def grade_cases_line(seed: int | None, replay: str, resumed: bool) -> str:
    """``cases: hidden, seed N, recorded in the gradebook (replay one submission: ol check M
    --workspace SUBMISSIONS/NAME --seed N)``: which cases every submission is checked on, and how
    one check is replayed."""
    from harness.report.common import cases_line

    whose = "continued from the gradebook" if resumed else "recorded in the gradebook"
    return f"{cases_line(seed)}, {whose} (replay one submission: {replay})"


GONE_NAMES = 10  # names listed in the line of the submissions no longer in the folder


def gone_line(names: list[str], folder: str) -> str:
    """``ol: 1 graded earlier is no longer in SUBS: erin (kept in gradebook.json, left out of the
    scores: ...)``: rows of the gradebook whose submission this run did not find."""
    listed = ", ".join(one_line(n) for n in names[:GONE_NAMES])
    if len(names) > GONE_NAMES:
        listed += f" and {len(names) - GONE_NAMES} more"
    verb = "is" if len(names) == 1 else "are"
    return (f"ol: {len(names)} graded earlier {verb} no longer in {one_line(folder)}: {listed} "
            "(kept in gradebook.json as history, \"present\": false; left out of the scores: "
            "scores.csv, gradescope/ and the report's counts)")


def summary(outcome: GradeOutcome) -> tuple[list[str], list[str]]:
    """The run's last lines, for stdout (the verdict counts, the rate, the files) and for stderr
    (submissions graded earlier and no longer in the folder; a partial sandbox; submissions the
    harness could not grade)."""
    book, rows, counts = outcome.book, outcome.rows(), outcome.counts()
    listed = ", ".join(f"{n} {v}" for v, n in counts.items() if n or v != Verdict.INTERNAL)
    out = [f"{book.module}: {count(len(rows), 'submission')}: {listed}"]
    if outcome.checked:
        rate = outcome.checked / outcome.seconds * 60 if outcome.seconds > 0 else 0.0
        out.append(f"checked {outcome.checked} in {outcome.seconds:.1f} s ({rate:.1f} submissions/minute)")
    flagged = sum(bool(r.flags) for r in rows)
    if flagged:
        out.append(f"{count(flagged, 'submission')} flagged identical to the reference or another "
                   "(information, not a verdict: report.md)")
    out.append(f"wrote {shown(book.out)}/: gradebook.json, gradebook.csv, scores.csv, report.md, "
               "report.html, gradescope/ and runs/")
    err = []
    gone = book.absent
    if gone:
        err.append(gone_line(gone, book.submissions_dir))
    partial = outcome.unconfined()
    if partial:
        missing = sorted({word for words in partial.values() for word in words})
        err.append(f"ol: warning: {count(len(partial), 'submission')} ran in a partial sandbox "
                   f"(missing: {', '.join(missing)}); the gradebook's partial_sandbox lists them; "
                   "see docs/isolation.md")
    if counts[Verdict.INTERNAL]:
        err.append(f"ol: the harness could not grade {counts[Verdict.INTERNAL]} submission(s) "
                   "(verdict internal); run the same command again to grade them")
    return out, err


def row_line(row: GradeRow, done: int, total: int) -> str:
    """``  [3/20] alice    pass   20 passed,   0 failed  score 25/25    1.2 s``: one graded row."""
    width = len(str(total))
    if row.verdict in (Verdict.PASS, Verdict.FAIL) and row.tests:
        max_score = row.passed + row.failed if row.max_score is None else row.max_score
        score = score_text(row.score, max_score)
        what = (f"{row.passed:>3} passed, {row.failed:>3} failed  score {score:>5}  "
                f"{row.time_s:6.1f} s")
        what += f"  {one_line(row.message[:100])}" if row.message else ""
    else:
        what = one_line(row.message[:160])  # a submission's text: never a line of its own
    return f"  [{done:>{width}}/{total}] {row.submission:<20} {row.verdict:<8} {what}".rstrip()
