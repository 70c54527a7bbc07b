"""``ol grade``'s terminal output: a line per graded submission, a bar on a terminal, the summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Self, TextIO

from harness.engine.results import Verdict, score_text
from harness.grade.engine import GradeEvents, GradeOutcome, shown
from harness.grade.gradebook import clean
from harness.grade.row import GradeRow
from harness.report.progress import Progress


def say(text: str, stream=None) -> None:
    """Print ``text`` as the stream can encode it (what it cannot, and control characters from a
    submission's name or message, as escapes), flushed."""
    from harness.escape import printable

    stream = stream if stream is not None else sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    text = printable(clean(text)).encode(encoding, "backslashreplace").decode(encoding, "replace")
    print(text, file=stream, flush=True)


def count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def grade_cases_line(seed: int | None, replay: str, resumed: bool) -> str:
    """``cases: hidden, seed N, recorded in the gradebook (replay one submission: ol check M
    --workspace SUBMISSIONS/NAME --seed N)``: which cases every submission is checked on, and how
    one check is replayed."""
    from harness.report.common import cases_line

    whose = "continued from the gradebook" if resumed else "recorded in the gradebook"
    return f"{cases_line(seed)}, {whose} (replay one submission: {replay})"


class GradeProgress(GradeEvents):
    """A line per graded submission on stdout; on a terminal, a bar with an ETA below them
    (``harness.report.progress``: the lines are the progress elsewhere).

    ``bar`` is the bar's stream (default stderr), ``console`` a ``rich`` console to force the
    bar on (for tests). A context manager: the bar is taken down when the run ends or fails.
    """

    def __init__(self, bar: TextIO | None = None, console: Any = None) -> None:
        self.total = self.done = 0
        self.progress = Progress("grade", "submissions", stream=bar, console=console,
                                 every_s=None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.close()

    def planned(self, module_id: str, folder: Path, names: int, unchanged: int, to_check: int,
                where: str, seed: int | None, replay: str, resumed: bool) -> None:
        say(f"ol grade {module_id}: {count(names, 'submission')} in {shown(folder)}; "
            f"{unchanged} unchanged since graded, {to_check} to check on {where}")
        say(grade_cases_line(seed, replay, resumed))
        self.total = names - unchanged
        self.progress.what = f"grade {module_id}"
        if self.total:
            self.progress.update(0, self.total)

    def skipped(self, entries: list[dict[str, str]]) -> None:
        """Each entry of the submissions folder that is no submission, on stderr: one line each."""
        for entry in entries:
            say(f"ol: skipped {entry['name']}: {entry['why']}", sys.stderr)

    def graded(self, row: GradeRow) -> None:
        self.done += 1
        width = len(str(self.total))
        if row.verdict in (Verdict.PASS, Verdict.FAIL) and row.tests:
            max_score = row.passed + row.failed if row.max_score is None else row.max_score
            score = score_text(row.score, max_score)
            what = (f"{row.passed:>3} passed, {row.failed:>3} failed  score {score:>5}  "
                    f"{row.time_s:6.1f} s")
            what += f"  {row.message[:100]}" if row.message else ""
        else:
            what = row.message[:160]
        say(f"  [{self.done:>{width}}/{self.total}] {row.submission:<20} {row.verdict:<8} "
            f"{what}".rstrip())
        self.progress.update(self.done, self.total, shown(Path(row.submission)))

    def finished(self) -> None:
        self.progress.close()


def summary(outcome: GradeOutcome) -> None:
    """The run's last lines: the verdict counts, the rate, the files; a warning for ``internal``."""
    book, rows, counts = outcome.book, outcome.rows(), outcome.counts()
    listed = ", ".join(f"{n} {v}" for v, n in counts.items() if n or v != Verdict.INTERNAL)
    say(f"{book.module}: {count(len(rows), 'submission')}: {listed}")
    if outcome.checked:
        rate = outcome.checked / outcome.seconds * 60 if outcome.seconds > 0 else 0.0
        say(f"checked {outcome.checked} in {outcome.seconds:.1f} s ({rate:.1f} submissions/minute)")
    flagged = sum(bool(r.flags) for r in rows)
    if flagged:
        say(f"{count(flagged, 'submission')} flagged identical to the reference or another "
            "(information, not a verdict: report.md)")
    say(f"wrote {shown(book.out)}/: gradebook.json, gradebook.csv, scores.csv, report.md, "
        "report.html, gradescope/ and runs/")
    partial = outcome.unconfined()
    if partial:
        missing = sorted({word for words in partial.values() for word in words})
        print(f"ol: warning: {count(len(partial), 'submission')} ran in a partial sandbox (missing: "
              f"{', '.join(missing)}); the gradebook's partial_sandbox lists them; see "
              "docs/isolation.md", file=sys.stderr)
    if counts[Verdict.INTERNAL]:
        print(f"ol: the harness could not grade {counts[Verdict.INTERNAL]} submission(s) (verdict "
              "internal); run the same command again to grade them", file=sys.stderr)
