"""The typed result model: what a run, a lab and an audit produce, and what reporters format.

One JSON shape per result, tagged with its type and format version (``harness.engine.serial``);
``from_json(to_json(r)) == r`` for every result (durations are written exactly, not rounded).
"""

from __future__ import annotations

import enum
import platform
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.engine.serial import reading, rerun_command, tagged, untag

FORMAT_VERSION = 1  # RunResult's; the tag was added without a change to the body


class Kind(str, enum.Enum):  # noqa: UP042 - StrEnum would change str() and format() of a member
    UNIT = "unit"
    BOUNDARY = "boundary"
    PROPERTY = "property"
    STATISTICAL = "statistical"


class Word(str, enum.Enum):  # noqa: UP042 - StrEnum would change repr; this one is text throughout
    """A string-valued enum whose members are their values wherever text is: ``str()``,
    ``format()``, ``==`` and hashing (so ``Verdict.PASS == "pass"`` and a dict keyed by ``"pass"``
    finds it), and JSON and CSV write the value."""

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]
    __hash__ = str.__hash__


class Verdict(Word):
    """A verdict: a run's (``RunResult.verdict``: pass, fail, partial, error) or a gradebook
    row's (pass, fail, error, or internal: the harness could not grade it)."""

    PASS = "pass"
    FAIL = "fail"
    PARTIAL = "partial"
    ERROR = "error"
    INTERNAL = "internal"


class Category(Word):
    """Why a test failed, in plain words. Only a wrong answer can name a pitfall; the others are
    the code's own trouble (it crashed, exited, hung, is not written yet, or raised a programming
    error). A word it shares with ``Outcome`` (crashed, timeout) is the same member name and value
    in both: one vocabulary, two questions (what happened to the test; why it failed)."""

    WRONG = "wrong"
    RAISED = "raised"
    CRASHED = "crashed"
    EXITED = "exited"
    TIMEOUT = "timeout"
    NOT_IMPLEMENTED = "not_implemented"


class Outcome(Word):
    """What happened to one test: passed, failed (an assertion, a wrong answer), error (the code
    under test raised where the test expected an answer), timeout, crashed (an escape: the call
    did not answer). A ``Word``, as ``Verdict`` and ``Category`` are."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    CRASHED = "crashed"


@dataclass(frozen=True)
class CaseInfo:
    """A catalog test's metadata, set on the test function by ``harness.engine.catalog.case``."""

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


# The categories by their names alone (``Category``).
WRONG, RAISED, CRASHED, EXITED, TIMEOUT, NOT_IMPLEMENTED = tuple(Category)
CATEGORIES = tuple(Category)


@dataclass(frozen=True)
class TraceFrame:
    """One frame of a traceback in the student's own files (pytest's ``--tb=short``)."""

    file: str  # relative to the workspace, e.g. python/tinyllm/prob/rejection.py
    line: int
    function: str
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TraceFrame:
        return cls(str(d["file"]), int(d["line"]), str(d["function"]), str(d.get("source", "")))


def points_value(points: float) -> int | float:
    """Points as a report writes them: 3, not 3.0; 2.5 as it is."""
    return int(points) if float(points).is_integer() else round(float(points), 6)


def score_text(score: float, max_score: float) -> str:
    """``21/25`` (``2.5/10`` where points are not whole): a score as every report shows it."""
    return f"{points_value(score)}/{points_value(max_score)}"


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
    category: str = ""  # one of CATEGORIES when the test did not pass
    pitfall_label: str = ""  # "pitfall 3" (the chapter's) or "ol pitfall 9" (ol's own)
    output: str = ""  # what the code under test printed during the test (capped)
    output_dropped: int = 0  # characters of output not kept
    frames: tuple[TraceFrame, ...] = ()  # where the code under test raised, in its own files

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.PASSED

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind.value,
            "outcome": self.outcome.value,
            "duration_s": self.duration_s,
            "message": self.message,
            "pitfall": self.pitfall,
            "pitfall_text": self.pitfall_text,
            "category": self.category,
            "pitfall_label": self.pitfall_label,
            "output": self.output,
            "output_dropped": self.output_dropped,
            "frames": [f.to_json() for f in self.frames],
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
            category=d.get("category", ""),
            pitfall_label=d.get("pitfall_label", ""),
            output=d.get("output", ""),
            output_dropped=int(d.get("output_dropped", 0)),
            frames=tuple(TraceFrame.from_json(f) for f in d.get("frames", ())),
        )


@dataclass(frozen=True)
class Diagnosis:
    """One explanation of a failing run, best first: which mistake the code behaves like.

    ``kind`` is ``pitfall`` (a known mistake explains ``explained`` of the ``differing`` calls
    where the code's answers differ from the contract's), ``unexplained`` (differences no known
    mistake explains), ``failed`` (a check failed without a differing call to show), or one of
    the plain categories (crashed, exited, timeout, not_implemented, raised).
    """

    kind: str
    text: str
    pitfall: int | None = None
    label: str = ""
    also: tuple[int, ...] = ()  # other pitfalls whose mutants explain the same calls as well
    mutants: tuple[str, ...] = ()  # the mutants of ol's library that behave like this
    explained: int = 0
    differing: int = 0
    evidence: tuple[str, ...] = ()  # a few calls: what the code answered, what the contract gives

    @property
    def pitfalls(self) -> tuple[int, ...]:
        return ((self.pitfall,) if self.pitfall is not None else ()) + self.also

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["also"], d["mutants"], d["evidence"] = list(self.also), list(self.mutants), list(self.evidence)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Diagnosis:
        return cls(kind=d["kind"], text=d["text"], pitfall=d.get("pitfall"),
                   label=d.get("label", ""), also=tuple(d.get("also", ())),
                   mutants=tuple(d.get("mutants", ())), explained=int(d.get("explained", 0)),
                   differing=int(d.get("differing", 0)), evidence=tuple(d.get("evidence", ())))


_CONFINEMENT_WORDS = (
    ("view", "view"), ("read_only", "read-only"), ("contained", "pid namespace"),
    ("nobody", "nobody"), ("no_caps", "no capabilities"), ("tasks", "task cap"),
    ("disk_mb", "disk cap"))


def missing_confinement(confinement: dict[str, Any] | None) -> list[str]:
    """The properties an isolated worker lacked (``harden.Confinement``), in short words (the
    table of docs/isolation.md names each)."""
    if confinement is None:
        return []
    return [words for key, words in _CONFINEMENT_WORDS
            if not confinement.get(key) or confinement.get(key) == "none"]


def python_text() -> str:
    """This process's Python, as reports name it: ``3.12.1 (CPython)`` (the worker that runs the
    code under test is started with this same interpreter). Results differ across versions:
    builtin ``sum()`` of floats is compensated from 3.12 on."""
    return f"{platform.python_version()} ({platform.python_implementation()})"


def platform_text() -> str:
    """This process's platform: ``Linux-6.1.0-18-amd64-x86_64-with-glibc2.36``."""
    return platform.platform()


VERDICTS = (Verdict.PASS, Verdict.FAIL, Verdict.PARTIAL, Verdict.ERROR)  # a run's


@dataclass(frozen=True)
class RunResult:
    """One catalog run against one target.

    A **partial** run is one that left ``not_run`` tests of the catalog unrun (``-k``, or
    ``--maxfail`` / ``-x`` stopping it); ``not_run_by`` names the options that did. With no
    failure it has no verdict (``partial``), never ``pass``. A run that could not start (a syntax
    error, a failed import, a missing dependency: exit 2) is a result too, with no test and its
    one-line ``error``, so every report asked for is still written. ``python`` and ``platform``
    are those of the process that made the result (the worker runs the same interpreter).
    """

    module: str
    workspace: str
    target: str
    tests: tuple[TestResult, ...]
    duration_s: float = 0.0
    notes: tuple[str, ...] = field(default=())
    diagnosis: tuple[Diagnosis, ...] = field(default=())
    seed: int | None = None  # the run seed of the randomised cases; None: the public cases
    # How the isolated worker was confined (``harden.Confinement`` as plain data); None in process.
    confinement: dict[str, Any] | None = None
    ref_deps: bool = False  # --ref-deps: the reference stood in for the modules this one needs
    pattern: str | None = None  # -k: the selection the run was given
    not_run: int = 0  # tests of the catalog this run did not run (-k, --maxfail, a setup error)
    not_run_by: tuple[str, ...] = ()  # the options that left them unrun: "-k chi", "--maxfail 1"
    error: str = ""  # the one-line message of a setup error: the check could not run
    python: str = field(default_factory=python_text)
    platform: str = field(default_factory=platform_text)
    # Points per test of the whole catalog (run or not; course.toml's ``[points.MODULE]``).
    # Empty (a result read from a report written before scores): every test is worth 1.
    points: dict[str, float] = field(default_factory=dict)

    @property
    def score(self) -> float:
        """The points of the tests that passed."""
        return float(sum(self.points.get(t.name, 1.0) for t in self.tests if t.ok))

    @property
    def max_score(self) -> float:
        """The points of the whole catalog: a test a partial run did not run counts too, and a
        check that could not start scores 0 of them."""
        if self.points:
            return float(sum(self.points.values()))
        return float(len(self.tests) + self.not_run)

    @property
    def replay(self) -> str:
        """The command that runs this check again, on the same cases against the same code
        (``harness.engine.seeding.check_replay``)."""
        from harness.engine.seeding import check_replay

        return check_replay(self.module, self.target, self.workspace, self.seed, self.ref_deps,
                            self.pattern)

    @property
    def partial(self) -> bool:
        """Whether tests of the catalog were left unrun by an option (``-k``, ``--maxfail``)."""
        return not self.error and self.not_run > 0

    @property
    def passed(self) -> int:
        return sum(t.ok for t in self.tests)

    def unconfined(self) -> list[str]:
        """What a complete confinement has and this run's worker lacked, in words (empty in
        process, where the code is ol's own)."""
        return missing_confinement(self.confinement)

    @property
    def failed(self) -> int:
        return len(self.tests) - self.passed

    @property
    def verdict(self) -> Verdict:
        """``error`` (the check could not run), ``fail`` (a test failed, also in a partial run),
        ``partial`` (a partial run with no failure: no verdict), or ``pass`` (every test of the
        catalog ran and passed)."""
        if self.error:
            return Verdict.ERROR
        if self.failed or not self.tests:
            return Verdict.FAIL
        return Verdict.PARTIAL if self.partial else Verdict.PASS

    def failures(self) -> list[TestResult]:
        return [t for t in self.tests if not t.ok]

    def to_json(self) -> dict[str, Any]:
        return tagged("RunResult", FORMAT_VERSION, {
            "diagnosis": [d.to_json() for d in self.diagnosis],
            "module": self.module,
            "workspace": self.workspace,
            "target": self.target,
            "seed": self.seed,
            "replay": self.replay,
            "verdict": self.verdict,
            "error": self.error,
            "passed": self.passed,
            "failed": self.failed,
            "score": points_value(self.score),
            "max_score": points_value(self.max_score),
            "points": {name: points_value(p) for name, p in self.points.items()},
            "partial": self.partial,
            "not_run": self.not_run,
            "not_run_by": list(self.not_run_by),
            "ref_deps": self.ref_deps,
            "pattern": self.pattern,
            "python": self.python,
            "platform": self.platform,
            "duration_s": self.duration_s,
            "notes": list(self.notes),
            "tests": [t.to_json() for t in self.tests],
            "confinement": self.confinement,
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None) -> RunResult:
        """The run ``to_json`` wrote; ``source`` names where ``d`` came from, for the message."""
        rerun = rerun_command(d, "module", "ol check {}", "ol check")
        untag(d, "RunResult", (FORMAT_VERSION,), source, rerun)
        with reading("RunResult", source, rerun):
            return cls(
                module=d["module"],
                workspace=d["workspace"],
                target=d["target"],
                tests=tuple(TestResult.from_json(t) for t in d["tests"]),
                duration_s=float(d.get("duration_s", 0.0)),
                notes=tuple(d.get("notes", ())),
                diagnosis=tuple(Diagnosis.from_json(x) for x in d.get("diagnosis", ())),
                seed=d.get("seed"),
                confinement=d.get("confinement"),
                ref_deps=bool(d.get("ref_deps", False)),
                pattern=d.get("pattern"),
                not_run=int(d.get("not_run", 0)),
                not_run_by=tuple(d.get("not_run_by", ())),
                error=str(d.get("error", "")),
                python=str(d.get("python", "")),
                platform=str(d.get("platform", "")),
                points={str(k): float(v) for k, v in d.get("points", {}).items()},
            )
