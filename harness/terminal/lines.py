"""The audits' lines as they run: ``[  12.3 s] LABEL: line`` on stderr, above a spinner on a
terminal."""

from __future__ import annotations

import time

from harness.engine.events import Listener
from harness.terminal.progress import Progress


class TimedLines(Listener):
    """Each ``line`` of the engine, with the time since this listener was made and ``label``."""

    def __init__(self, label: str, bar: Progress) -> None:
        self.label, self.bar, self.start = label, bar, time.perf_counter()

    def line(self, text: str) -> None:
        self.bar.line(f"[{time.perf_counter() - self.start:6.1f} s] {self.label}: {text}")
