"""One row of a gradebook (``GradeRow``) and a grading slot's reply (``SlotReply``), typed.

A row is one submission's verdict, counts, outcome per test, first failure and mistakes, with what
the gradebook adds when it records it (its score out of the catalog's, its context, when, on which
seed, its integrity flags). One constructor per kind of row: ``graded`` (a check that ran),
``setup_error`` (it could not start), ``refused`` (staging or intake refused the submission),
``past_budget`` (stopped past ``--submission-timeout``) and ``internal`` (the harness failed: graded
again next run). Its JSON (``to_json``) is derived from its fields, in the order ``gradebook.json``
has always written them (a row without a run has no ``partial_sandbox``; ``present``, added
last, says whether its submission was in the folder at the last run); ``from_json`` reads a
row of any gradebook ol wrote (a key it lacks: its default), a key it does not know left out.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from harness.engine.results import RunResult, Verdict, missing_confinement, points_value
from harness.escape import valid_data
from harness.fields import from_fields, to_fields


def _points(value: float | None) -> int | float | None:
    return None if value is None else points_value(value)


def renamed(value: Any, root: str, name: str) -> Any:
    """``value`` (a row's or a run's plain data) with the folder it was graded in (``root``) named
    as the submission ``name`` in every string, keys too: every executor writes the same messages,
    whatever folder the check ran in."""
    if isinstance(value, str):
        return value.replace(root, name)
    if isinstance(value, dict):
        return {renamed(k, root, name): renamed(v, root, name) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [renamed(v, root, name) for v in value]
    return value


@dataclass(frozen=True)
class GradeRow:
    """One submission's row; the fields after ``time_s`` but ``partial_sandbox`` are the
    gradebook's (``Gradebook.record`` and ``flag`` set them)."""

    pitfalls: tuple[dict[str, Any], ...] = ()  # the mistakes its diagnosis names, best first
    shape: str = "workspace"  # how it came: workspace, folder, zip, tar.gz, file
    identity: dict[str, str] | None = None  # its module file's (``harness.grade.integrity``)
    score: float = 0  # its run's points (``RunResult.score``); 0 without a run
    submission: str = ""
    content_hash: str = ""  # its staged tree's digest, or its refusal's (``refusal_digest``)
    verdict: Verdict = Verdict.ERROR  # pass, fail, error or internal
    passed: int = 0
    failed: int = 0
    tests: dict[str, str] = field(default_factory=dict)  # outcome per test
    message: str = ""  # the first failure, the setup error, the refusal
    time_s: float = 0.0
    partial_sandbox: tuple[str, ...] | None = None  # a run's: what its worker's sandbox lacked
    max_score: float | None = None
    context: str | None = None
    graded_at: str | None = None
    seed: int | None = None
    flags: tuple[dict[str, Any], ...] = ()
    # In the submissions folder at the gradebook's last run; False: graded earlier, since gone
    # from the folder, kept as history and left out of the scores (``Gradebook.mark_present``).
    present: bool = True

    # -- one constructor per kind of row ---------------------------------------------------------

    @classmethod
    def graded(cls, run: RunResult, seconds: float, pitfalls: list[dict[str, Any]]) -> GradeRow:
        """The row of a check that ran: its verdict, counts, outcomes and first failure."""
        failures = run.failures()
        message = ""
        if failures:
            first = failures[0]
            headline = (first.message.strip().splitlines() or [first.outcome.value])[0]
            more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
            message = f"{first.name}: {headline[:300]}{more}"
        return cls(pitfalls=tuple(pitfalls), score=run.score, verdict=run.verdict,
                   passed=run.passed, failed=run.failed,
                   tests={t.name: t.outcome.value for t in run.tests}, message=message,
                   time_s=seconds, partial_sandbox=tuple(missing_confinement(run.confinement)))

    @classmethod
    def setup_error(cls, message: str, seconds: float = 0.0) -> GradeRow:
        """A check that could not start (``ol check`` exit 2): its one-line message."""
        return cls(verdict=Verdict.ERROR, message=message, time_s=seconds)

    @classmethod
    def refused(cls, name: str, digest: str, message: str, shape: str = "workspace") -> GradeRow:
        """A submission refused before any check (by intake or staging), keyed by the refusal."""
        return cls(shape=shape, submission=name, content_hash=digest, verdict=Verdict.ERROR,
                   message=message)

    @classmethod
    def past_budget(cls, budget: float, seconds: float) -> GradeRow:
        """A check stopped past the submission's budget: a ``fail``."""
        return cls(verdict=Verdict.FAIL, message=f"the check did not finish within the submission's "
                   f"budget of {budget:g} s (--submission-timeout); it was stopped",
                   time_s=seconds)

    @classmethod
    def internal(cls, message: str, name: str = "", shape: str = "workspace") -> GradeRow:
        """The harness could not grade it (graded again on the next run)."""
        return cls(shape=shape, submission=name, verdict=Verdict.INTERNAL, message=message)

    # -- JSON ------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        data = to_fields(self, write={"score": points_value, "max_score": _points})
        if self.partial_sandbox is None:
            del data["partial_sandbox"]
        return data

    @classmethod
    def from_json(cls, data: Any) -> GradeRow:
        """The row ``to_json`` wrote, or one of an older gradebook (a key missing: its default;
        one this ol does not know: left out); anything else is a ``FieldError`` of one line."""
        return from_fields(cls, data, extra=True)

    def renamed(self, root: str, name: str) -> GradeRow:
        """This row with the folder it was graded in named as the submission (``renamed``)."""
        return GradeRow.from_json(renamed(self.to_json(), root, name))

    def cleaned(self) -> GradeRow:
        """This row with every string made valid text (``harness.escape.valid_data``)."""
        return GradeRow.from_json(valid_data(self.to_json()))

    def with_(self, **changes: Any) -> GradeRow:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class SlotReply:
    """What a grading slot answers for one submission: its row, and its run as ``ol check
    --json`` writes it (None for a row without one)."""

    row: GradeRow
    run: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return to_fields(self)

    @classmethod
    def from_json(cls, data: Any) -> SlotReply:
        return from_fields(cls, data)

    def renamed(self, root: str, name: str) -> SlotReply:
        """The reply with the folder it was graded in (``root``) named as the submission."""
        return SlotReply(self.row.renamed(root, name),
                         None if self.run is None else renamed(self.run, root, name))

    def cleaned(self) -> SlotReply:
        """The reply with every string made valid text (``harness.escape.valid_data``)."""
        return SlotReply(self.row.cleaned(), None if self.run is None else valid_data(self.run))
