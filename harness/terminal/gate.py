"""``ol gate``'s lines as it runs: each module's line, and on a terminal a bar below them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self

from harness.engine.events import Listener, Step
from harness.terminal.progress import Progress


class GateProgress(Listener):
    """Each module's line as it is gated (``say``), and on a terminal a bar below them naming
    the module being checked; elsewhere the module lines are the progress.

    The gate's listener for its modules (a ``step`` per ``ModuleGate``), and a context manager
    that takes the bar down.
    """

    def __init__(self, milestone: str, order: list[str], width: int,
                 say: Callable[[str], None], console: Any = None) -> None:
        self.order, self.width, self.say, self.done = order, width, say, 0
        self.bar = Progress(f"gate {milestone}", "modules", console=console, every_s=None)

    def __enter__(self) -> Self:
        self.bar.update(0, len(self.order), self.order[0] if self.order else "")
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()

    def step(self, step: Step) -> None:
        self.say(step.item.line(self.width))
        self.done += 1
        following = self.order[self.done] if self.done < len(self.order) else ""
        self.bar.update(self.done, len(self.order), following)

    def finished(self) -> None:
        self.bar.close()
