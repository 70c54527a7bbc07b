"""What the diagnosis compares: every batch a failing test sent to the code under test, with its answers.

The runner gives the target a ``Recorder`` for each test; the target hands it each batch before
and after the calls (``Target.map``). A passing test's record is dropped at once, so a check that
passes keeps nothing. Arguments are kept by reference (a target never changes the test's own
arguments: it calls copies), except the uniform sources, which a call advances: a batch that
passes one is copied first (one ``deepcopy`` of the batch's sources, so a source shared by several
calls stays shared; the other arguments are kept by reference, as in any batch), and its replay
starts where the code under test started.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from harness.uniforms import RecordingSource, passes_a_source


@dataclass
class Batch:
    """One ``Target.map`` call: the function, the calls as they were sent, and the answers."""

    fn: str
    calls: list[tuple]
    kwargs: dict
    sourced: bool  # a call passes a uniform source: replay in order, from the copy
    results: list = field(default_factory=list)  # harness.engine.target.Result, in call order
    violation: Any = None  # the ContractViolation that ended the batch, if one did

    @property
    def answered(self) -> int:
        return len(self.results)


class Recorder:
    """The batches of the current test; ``keep`` moves them to the failing tests' record."""

    def __init__(self, max_calls_per_test: int = 50_000) -> None:
        self.max_calls = max_calls_per_test
        self.current: list[Batch] = []
        self.kept: dict[str, list[Batch]] = {}  # test name -> its batches, for failing tests
        self._calls = 0

    def begin(self, fn: str, calls: list[tuple], kwargs: dict) -> Batch | None:
        if self._calls >= self.max_calls:
            return None  # enough to compare with; a longer test is not recorded further
        self._calls += len(calls)
        sourced = passes_a_source(calls, kwargs)
        if sourced:
            calls, kwargs = _copy_sources(calls, kwargs)
        batch = Batch(fn, calls, dict(kwargs), sourced)
        self.current.append(batch)
        return batch

    def end(self, batch: Batch | None, results: Any, violation: Any = None) -> None:
        if batch is not None:
            batch.results = list(results)
            batch.violation = violation

    def start_test(self) -> None:
        self.current, self._calls = [], 0

    def keep(self, test: str) -> None:
        """The current test failed: keep its batches for the diagnosis."""
        self.kept[test] = self.current
        self.current, self._calls = [], 0

    def drop(self) -> None:
        self.current, self._calls = [], 0


def _copy_sources(calls: list[tuple], kwargs: dict) -> tuple[list[tuple], dict]:
    """The batch with its uniform sources copied (one ``deepcopy``, so a source shared by several
    calls stays shared) and every other argument the same object: those the target never
    changes, and copying a chi-square's probability vectors cost more than the calls."""
    memo: dict[int, Any] = {}
    for value in [a for args in calls for a in args] + list(kwargs.values()):
        if not isinstance(value, RecordingSource):
            memo[id(value)] = value
    return copy.deepcopy((calls, kwargs), memo)
