"""The typed result model: what a run, a lab and an audit produce, and what reporters format.

One JSON shape per result, with a format version; ``to_json``/``from_json`` round-trip.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

FORMAT_VERSION = 1


class Kind(str, enum.Enum):
    UNIT = "unit"
    BOUNDARY = "boundary"
    PROPERTY = "property"
    STATISTICAL = "statistical"


class Outcome(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    CRASHED = "crashed"


@dataclass(frozen=True)
class CaseInfo:
    """A catalog test's metadata, set on the test function by ``harness.catalog.case``."""

    name: str
    kind: Kind
    checks: str
    why: str
    pitfalls: tuple[int, ...] = ()
    kills: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = self.kind.value
        d["pitfalls"], d["kills"] = list(self.pitfalls), list(self.kills)
        return d


@dataclass(frozen=True)
class TestResult:
    __test__ = False  # not a pytest test class

    name: str
    kind: Kind
    outcome: Outcome
    duration_s: float
    message: str = ""
    pitfall: int | None = None
    pitfall_text: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.PASSED

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind.value,
            "outcome": self.outcome.value,
            "duration_s": round(self.duration_s, 6),
            "message": self.message,
            "pitfall": self.pitfall,
            "pitfall_text": self.pitfall_text,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TestResult:
        return cls(
            name=d["name"],
            kind=Kind(d["kind"]),
            outcome=Outcome(d["outcome"]),
            duration_s=float(d["duration_s"]),
            message=d.get("message", ""),
            pitfall=d.get("pitfall"),
            pitfall_text=d.get("pitfall_text", ""),
        )


@dataclass(frozen=True)
class RunResult:
    """One catalog run against one target."""

    module: str
    workspace: str
    target: str
    tests: tuple[TestResult, ...]
    duration_s: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> int:
        return sum(t.ok for t in self.tests)

    @property
    def failed(self) -> int:
        return len(self.tests) - self.passed

    @property
    def verdict(self) -> str:
        return "pass" if self.tests and self.failed == 0 else "fail"

    def failures(self) -> list[TestResult]:
        return [t for t in self.tests if not t.ok]

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "module": self.module,
            "workspace": self.workspace,
            "target": self.target,
            "verdict": self.verdict,
            "passed": self.passed,
            "failed": self.failed,
            "duration_s": round(self.duration_s, 6),
            "notes": list(self.notes),
            "tests": [t.to_json() for t in self.tests],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunResult:
        return cls(
            module=d["module"],
            workspace=d["workspace"],
            target=d["target"],
            tests=tuple(TestResult.from_json(t) for t in d["tests"]),
            duration_s=float(d.get("duration_s", 0.0)),
            notes=tuple(d.get("notes", ())),
        )
