"""``ol grade``'s lines as it runs: the plan, a line per graded submission on stdout, the
folder's entries skipped on stderr, a bar with an ETA below them on a terminal, the summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Self, TextIO

from harness.engine.events import Listener, Step
from harness.grade.engine import GradeOutcome, GradePlanned, shown
from harness.report.grade import count, grade_cases_line, row_line, summary
from harness.terminal.progress import Progress


def say(text: str, stream: TextIO | None = None) -> None:
    """Print ``text`` as the stream can encode it (what it cannot, and control characters from a
    submission's name or message, as escapes), flushed."""
    from harness.escape import printable, valid_text

    stream = stream if stream is not None else sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    text = printable(valid_text(text)).encode(encoding, "backslashreplace").decode(encoding, "replace")
    print(text, file=stream, flush=True)


class GradeProgress(Listener):
    """A line per graded submission on stdout; on a terminal, a bar with an ETA below them
    (``harness.terminal.progress``: the lines are the progress elsewhere).

    ``bar`` is the bar's stream (default stderr), ``console`` a ``rich`` console to force the
    bar on (for tests). A context manager: the bar is taken down when the run ends or fails.
    """

    def __init__(self, bar: TextIO | None = None, console: Any = None) -> None:
        self.progress = Progress("grade", "submissions", stream=bar, console=console,
                                 every_s=None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.close()

    def started(self, start: GradePlanned) -> None:
        say(f"ol grade {start.module_id}: {count(start.names, 'submission')} in "
            f"{shown(start.folder)}; {start.unchanged} unchanged since graded, {start.to_check} "
            f"to check on {start.where}")
        say(grade_cases_line(start.seed, start.replay, start.resumed))
        total = start.names - start.unchanged
        self.progress.what = f"grade {start.module_id}"
        if total:
            self.progress.update(0, total)

    def warned(self, message: str) -> None:
        """An entry of the submissions folder that is no submission, on stderr: one line each."""
        say(f"ol: {message}", sys.stderr)

    def step(self, step: Step) -> None:
        total = step.total or 0
        say(row_line(step.item, step.done, total))
        self.progress.update(step.done, total, shown(Path(step.label)))

    def finished(self) -> None:
        self.progress.close()


def print_summary(outcome: GradeOutcome) -> None:
    """The run's last lines (``harness.report.grade.summary``): stdout, then stderr."""
    out, err = summary(outcome)
    for line in out:
        say(line)
    for line in err:
        print(line, file=sys.stderr)
