"""Progress of the long commands (lab, audit, gate, grade, tests --mine), shown on stderr.

On a terminal, a live ``rich`` bar: what runs, done/total, the current label, the time spent and
an estimate of the time left, with the command's own lines printed above it. Elsewhere (stderr
not a terminal, ``CI`` set, ``TERM=dumb``, or ``rich`` not installed: students install only
numpy, scipy and pytest) plain lines: a counter line every ``every_s`` seconds and one at the end
of a run that printed one, or none at all (``every_s=None``, for a command whose own lines say
enough). ``rich`` is imported only when a terminal gets the bar.

A ``Progress`` is a ``Listener`` of the engines' events (``harness.engine.events``: a ``step``
moves the counter, a ``line`` is printed above the bar, ``finished`` takes it down), and a
context manager that always takes the live bar down, also when the run fails.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self, TextIO

from harness.engine.events import Listener, Step
from harness.escape import printable

PLAIN_EVERY_S = 10.0  # a CI log gets a counter line this often, not one per step


def interactive(stream: TextIO) -> bool:
    """Whether ``stream`` gets the live bar: a terminal, ``CI`` unset or empty, ``TERM`` not
    ``dumb``."""
    isatty = getattr(stream, "isatty", None)
    try:
        tty = bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed stream
        tty = False
    return tty and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


def _terminal_console(stream: TextIO) -> Any | None:
    """A ``rich`` console on ``stream``, or None when ``rich`` cannot be imported."""
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=stream)


class Progress(Listener):
    """A counter with a total, the current label and an ETA: ``rich`` on a terminal, else lines.

    ``console`` (a ``rich.console.Console``) forces the live form on it, for tests; ``clock``
    is the time source of the plain lines.
    """

    def __init__(self, what: str, unit: str = "", *, stream: TextIO | None = None,
                 console: Any = None, every_s: float | None = PLAIN_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what, self.unit, self.every_s, self.clock = printable(what), unit, every_s, clock
        self.stream = stream if stream is not None else sys.stderr
        self.start_s = self.last_s = clock()
        self.printed = False
        self._closed = False
        injected = console is not None
        if console is None and interactive(self.stream):
            console = _terminal_console(self.stream)
        self._bar: Any = _rich_bar(console, unit, injected) if console else None
        self._task: Any = None

    @property
    def live(self) -> bool:
        """Whether the ``rich`` bar is used (else the plain lines)."""
        return self._bar is not None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def step(self, step: Step) -> None:
        self.update(step.done, step.total, step.label)

    def finished(self) -> None:
        self.close()

    def update(self, done: int, total: int | None, label: str = "") -> None:
        """``done`` of ``total`` steps so far (None: not known), ``label`` the current one."""
        label = printable(label)
        if self._bar is not None:
            self._show(done, total, label)
        elif self.every_s is not None:
            now = self.clock()
            finished = total is not None and done >= total
            if (finished and self.printed) or now - self.last_s >= self.every_s:
                self._plain(self.counter(done, total, label, now - self.start_s))
                self.last_s = now
        if total is not None and done >= total and self._bar is not None:
            self.close()

    def line(self, text: str) -> None:
        """One line of the command's own, above the bar on a terminal (as it is, else); the
        first one shows the bar (a spinner and the time spent, for a run without a count)."""
        if self._bar is not None and not self._closed:
            if self._task is None:
                self._show(0, None, "")
            self._bar.console.print(printable(text), markup=False, highlight=False,
                                    soft_wrap=True)
        else:
            self._plain(text)

    def counter(self, done: int, total: int | None, label: str, elapsed: float) -> str:
        """``lab M07.6: 12/48 mutants (s12), 9 s, about 27 s left`` (a plain line)."""
        unit = f" {self.unit}" if self.unit else ""
        if total is not None and done >= total:
            return f"{self.what}: {done}/{total}{unit} in {elapsed:.0f} s"
        of = f"{done}/{total}" if total is not None else f"{done}"
        eta = (f", about {elapsed / done * (total - done):.0f} s left"
               if done and total is not None else "")
        return f"{self.what}: {of}{unit}" + (f" ({label})" if label else "") + \
            f", {elapsed:.0f} s{eta}"

    def close(self) -> None:
        """Take the live bar down (its last state is not kept: the command's lines follow)."""
        if self._bar is not None and not self._closed:
            self._bar.stop()
        self._closed = True

    def _show(self, done: int, total: int | None, label: str) -> None:
        if self._closed:
            return
        if self._task is None:
            self._bar.start()
            self._task = self._bar.add_task(self.what, total=total, completed=done, label=label)
        self._bar.update(self._task, completed=done, total=total, label=label, refresh=True)

    def _plain(self, text: str) -> None:
        print(printable(text), file=self.stream, flush=True)
        self.printed = True


def _rich_bar(console: Any, unit: str, injected: bool) -> Any:
    """``rich.progress.Progress`` on ``console``: spinner, what, bar, done/total, the unit, the
    time spent, the time left and the label (without a unit: spinner, what, time, label). The
    command's stdout lines are printed above it when stdout is the terminal too (not for an
    injected console: a test's capture stays)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as RichProgress

    stdout_tty = not injected and bool(getattr(sys.stdout, "isatty", lambda: False)())
    counted = [BarColumn(), MofNCompleteColumn(), TextColumn(unit, markup=False)] if unit else []
    timed = [TimeElapsedColumn(), *([TextColumn("eta", markup=False), TimeRemainingColumn()]
                                   if unit else [])]
    return RichProgress(
        SpinnerColumn(), TextColumn("{task.description}", markup=False), *counted, *timed,
        TextColumn("{task.fields[label]}", markup=False),
        console=console, transient=True, redirect_stdout=stdout_tty,
        redirect_stderr=not injected)


def progress_printer(what: str, unit: str, stream: TextIO | None = None,
                     console: Any = None) -> Progress:
    """The ``(done, total, label)`` callback of ``ol lab`` and ``ol tests --mine``: a bar on a
    terminal, a counter line every few seconds elsewhere."""
    return Progress(what, unit, stream=stream, console=console)
