"""One protocol for what a run tells as it goes, whichever command runs.

Every engine (a check, a gate, the lab, ``ol tests --mine``, the audits, a grading run) tells one
``Listener`` the same kinds of event, and the terminal's bar, its plain lines and any reporter
implement the hooks they need. pytest's reporting hooks are the model (``pytest_runtest_logreport``
and its kin): a listener overrides only the hooks it uses, every default does nothing, and a
``Relay`` hands each event to several listeners in order.

- ``started(start)``: the run starts; ``start`` says what was resolved (a check's ``CheckStart``,
  a gate's ``GateStart``, a grading run's ``GradePlanned``). Raising here stops the run before
  anything of it runs.
- ``running()``: what comes before the first unit is done (a worker started and reported its
  import, the catalog collected) and the units start now.
- ``step(step)``: one unit finished: a test of a check, a module of a gate, a mutant of the lab,
  an implementation of ``--mine``, a submission of a grading run (``Step.item`` is the typed
  unit: ``TestResult``, ``ModuleGate``, ``GradeRow``; None where the count is all there is).
- ``line(text)``: a line of the engine's own (the audit's steps).
- ``warned(message)``: something the caller may show that changes no verdict (a pass not
  recorded, an entry of a submissions folder that is no submission).
- ``finished()``: every unit is done.

Nothing an engine tells is printed by the engine: the API promises it prints nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Step:
    """One unit of a run finished: ``done`` of ``total`` (None: not known), the unit's ``label``
    and the typed unit itself (``item``) when there is one."""

    done: int
    total: int | None
    label: str = ""
    item: Any = None


class Listener:
    """What a run tells as it goes; every hook does nothing unless overridden."""

    def started(self, start: Any) -> None:
        """The run starts: what was resolved. Raising stops it before anything runs."""

    def running(self) -> None:
        """What comes before the first unit is done; the units start now."""

    def step(self, step: Step) -> None:
        """One unit of the run finished."""

    def line(self, text: str) -> None:
        """A line of the engine's own."""

    def warned(self, message: str) -> None:
        """Something to show that changes no verdict."""

    def finished(self) -> None:
        """Every unit of the run is done."""


class Relay(Listener):
    """Each event to every listener, in the order given (the first that raises stops it)."""

    def __init__(self, *listeners: Listener) -> None:
        self.listeners = listeners

    def started(self, start: Any) -> None:
        for listener in self.listeners:
            listener.started(start)

    def running(self) -> None:
        for listener in self.listeners:
            listener.running()

    def step(self, step: Step) -> None:
        for listener in self.listeners:
            listener.step(step)

    def line(self, text: str) -> None:
        for listener in self.listeners:
            listener.line(text)

    def warned(self, message: str) -> None:
        for listener in self.listeners:
            listener.warned(message)

    def finished(self) -> None:
        for listener in self.listeners:
            listener.finished()


QUIET = Listener()  # the listener of a run nobody watches
